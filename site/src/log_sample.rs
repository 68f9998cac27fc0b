//! Sampled warnings: a warning any client can cause over and over (an
//! unreadable upload, a refused terminal, a failed `accept()`) is written
//! once per [`LOG_SAMPLE_INTERVAL`] per kind, carrying how many were left
//! out since, so a flood costs the log a line per interval, not a line per
//! request.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::limits::LOG_SAMPLE_INTERVAL;

/// One kind of repetitive warning.
pub struct Sampled {
    interval: Duration,
    state: Mutex<State>,
}

struct State {
    last: Option<Instant>,
    suppressed: u64,
}

impl Sampled {
    pub const fn new() -> Sampled {
        Sampled::every(LOG_SAMPLE_INTERVAL)
    }

    pub const fn every(interval: Duration) -> Sampled {
        Sampled {
            interval,
            state: Mutex::new(State {
                last: None,
                suppressed: 0,
            }),
        }
    }

    /// `Some(n)` when this occurrence is to be written, `n` being how many
    /// were left out before it; `None` when it is left out.
    pub fn sample(&self, now: Instant) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let due = state
            .last
            .is_none_or(|last| now.duration_since(last) >= self.interval);
        if due {
            state.last = Some(now);
            Some(std::mem::take(&mut state.suppressed))
        } else {
            state.suppressed += 1;
            None
        }
    }

    /// [`Sampled::sample`] at the current instant.
    pub fn now(&self) -> Option<u64> {
        self.sample(Instant::now())
    }
}

impl Default for Sampled {
    fn default() -> Sampled {
        Sampled::new()
    }
}

/// `tracing::warn!` through a static [`Sampled`] of this call site, with a
/// `suppressed` field counting what was left out since the last line.
#[macro_export]
macro_rules! warn_sampled {
    ($($arg:tt)+) => {{
        static SAMPLED: $crate::log_sample::Sampled = $crate::log_sample::Sampled::new();
        if let Some(suppressed) = SAMPLED.now() {
            tracing::warn!(suppressed, $($arg)+);
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_one_line_per_interval_with_the_count_left_out() {
        let sampled = Sampled::every(Duration::from_secs(10));
        let start = Instant::now();
        assert_eq!(sampled.sample(start), Some(0));
        for ms in 1..=1000 {
            assert_eq!(sampled.sample(start + Duration::from_millis(ms)), None);
        }
        assert_eq!(sampled.sample(start + Duration::from_secs(10)), Some(1000));
        assert_eq!(sampled.sample(start + Duration::from_secs(11)), None);
    }
}
