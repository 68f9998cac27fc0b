//! Requests the listener does not handle, counted so the site's view can
//! show them: a terminal whose firmware speaks a part of its protocol the
//! listener lacks shows up here (and in the log, with its serial and path)
//! instead of looping on a silent 404.
//!
//! The counts live in memory, per listener run: a total and a count per
//! path, bounded so that a scanner walking random paths cannot grow it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Entries kept: distinct paths counted one by one, and one more,
/// [`OTHER_PATHS`], for the rest. A site's terminals use a handful of paths.
pub const PATHS_MAX: usize = 64;
/// Where paths beyond [`PATHS_MAX`] are counted.
pub const OTHER_PATHS: &str = "(other paths)";
/// The longest path kept as a key: longer ones are cut.
pub const PATH_CHARS_MAX: usize = 128;

/// The counter the HTTP port feeds.
#[derive(Debug, Default)]
pub struct UnknownRequests {
    total: AtomicU64,
    by_path: Mutex<BTreeMap<String, u64>>,
}

/// What has been counted so far.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnknownCounts {
    pub total: u64,
    pub by_path: BTreeMap<String, u64>,
}

impl UnknownRequests {
    /// Counts one request for `path`.
    pub fn count(&self, path: &str) {
        self.total.fetch_add(1, Ordering::Relaxed);
        let path: String = path.chars().take(PATH_CHARS_MAX).collect();
        let mut by_path = self.by_path.lock().unwrap_or_else(|p| p.into_inner());
        let key = if by_path.contains_key(&path) || by_path.len() < PATHS_MAX - 1 {
            path
        } else {
            OTHER_PATHS.to_owned()
        };
        *by_path.entry(key).or_default() += 1;
    }

    pub fn counts(&self) -> UnknownCounts {
        UnknownCounts {
            total: self.total.load(Ordering::Relaxed),
            by_path: self
                .by_path
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_past_the_bound_are_counted_together() {
        let unknown = UnknownRequests::default();
        for i in 0..PATHS_MAX + 10 {
            unknown.count(&format!("/probe/{i}"));
        }
        unknown.count("/probe/0");
        let counts = unknown.counts();
        assert_eq!(counts.total, PATHS_MAX as u64 + 11);
        assert_eq!(counts.by_path.len(), PATHS_MAX);
        assert_eq!(counts.by_path["/probe/0"], 2);
        assert_eq!(counts.by_path[OTHER_PATHS], 11);
    }
}
