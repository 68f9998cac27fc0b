//! Group commit: captures share strict IndexedDB transactions and are
//! acknowledged together after each commits.
//!
//! The window is the commit itself: the first capture after a quiet spell
//! is written at once (no timer, so a single scan is acknowledged as fast
//! as the disk allows), and every capture that arrives while a transaction
//! is committing (a few milliseconds; an RFID sled's burst) waits for it
//! and goes in the next one, at most [`GROUP_COMMIT_MAX_ITEMS`] at a time.
//! Under load the groups grow by themselves; when idle they shrink to one.
//! The runtime is the single writer and calls [`Group::take`] whenever it
//! is free.

use crate::time::{Millis, UnixMs};

/// How far ahead of the worker's clock a page's capture instant may be.
/// The page and its service worker read the same device clock, so an
/// instant ahead of the worker's is a page's bug, not skew; a minute covers
/// rounding and a busy worker's late read, and refuses an instant whose
/// undo window (120 s from capture) would still be open long after the scan.
pub const CAPTURE_AHEAD_MAX: Millis = Millis::from_secs(60);

/// Why a page's capture instant was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstantError {
    /// Not a finite number from 0 to 2^53 (the number itself is not
    /// echoed: printing a float would link a float formatter into the
    /// module for this one message).
    #[error("occurred_at must be a finite, non-negative number of Unix milliseconds")]
    NotAnInstant,
    #[error("occurred_at is {ahead_ms} ms ahead of the device clock (at most {max_ms} ms)")]
    Ahead { ahead_ms: i64, max_ms: u64 },
}

/// The capture instant of a scan: the page's input-event instant (Unix
/// ms; fractions dropped) when it gives one, else `now`. Refused when it is
/// not a finite non-negative number or more than [`CAPTURE_AHEAD_MAX`]
/// ahead of `now`.
pub fn capture_instant(given: Option<f64>, now: UnixMs) -> Result<UnixMs, InstantError> {
    let Some(ms) = given else {
        return Ok(now);
    };
    // Beyond 2^53 an f64 no longer holds whole milliseconds exactly.
    if !ms.is_finite() || !(0.0..=9_007_199_254_740_991.0).contains(&ms) {
        return Err(InstantError::NotAnInstant);
    }
    let at = UnixMs(ms.floor() as i64);
    let ahead = at.since(now);
    if ahead > CAPTURE_AHEAD_MAX.0 as i64 {
        return Err(InstantError::Ahead {
            ahead_ms: ahead,
            max_ms: CAPTURE_AHEAD_MAX.0,
        });
    }
    Ok(at)
}

/// Most captures in one transaction: an RFID sled reads a few hundred tags
/// a second, so one group holds about a second of the fastest reads and a
/// transaction stays short.
pub const GROUP_COMMIT_MAX_ITEMS: usize = 256;

/// Captures waiting for the writer, in arrival order.
#[derive(Debug)]
pub struct Group<T> {
    members: Vec<T>,
}

impl<T> Default for Group<T> {
    fn default() -> Group<T> {
        Group {
            members: Vec::new(),
        }
    }
}

impl<T> Group<T> {
    /// A capture arrived.
    pub fn push(&mut self, member: T) {
        self.members.push(member);
    }

    /// The writer is free: the next transaction's captures, oldest first,
    /// at most [`GROUP_COMMIT_MAX_ITEMS`]; `None` when nothing waits.
    pub fn take(&mut self) -> Option<Vec<T>> {
        if self.members.is_empty() {
            return None;
        }
        let take = self.members.len().min(GROUP_COMMIT_MAX_ITEMS);
        Some(self.members.drain(..take).collect())
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: UnixMs = UnixMs(1_795_940_000_000);

    #[test]
    fn a_capture_happened_when_the_page_saw_it_or_else_now() {
        assert_eq!(capture_instant(None, NOW), Ok(NOW));
        let earlier = (NOW.0 - 37) as f64 + 0.6;
        assert_eq!(capture_instant(Some(earlier), NOW), Ok(UnixMs(NOW.0 - 37)));
        let a_day_ago = (NOW.0 - 86_400_000) as f64;
        assert_eq!(
            capture_instant(Some(a_day_ago), NOW),
            Ok(UnixMs(NOW.0 - 86_400_000)),
            "a scan held by a stopped worker keeps its instant"
        );
        let at_bound = (NOW.0 + CAPTURE_AHEAD_MAX.0 as i64) as f64;
        assert!(capture_instant(Some(at_bound), NOW).is_ok());
    }

    #[test]
    fn an_instant_that_is_no_number_or_far_ahead_is_refused_naming_the_field() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 1e300] {
            let err = capture_instant(Some(bad), NOW).unwrap_err();
            assert!(err.to_string().starts_with("occurred_at"), "{err}");
        }
        let ahead = (NOW.0 + CAPTURE_AHEAD_MAX.0 as i64 + 1) as f64;
        let err = capture_instant(Some(ahead), NOW).unwrap_err();
        assert_eq!(
            err,
            InstantError::Ahead {
                ahead_ms: CAPTURE_AHEAD_MAX.0 as i64 + 1,
                max_ms: CAPTURE_AHEAD_MAX.0
            }
        );
        assert!(err.to_string().starts_with("occurred_at"), "{err}");
    }
}
