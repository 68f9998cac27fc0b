//! The drain's retry schedule: 2, 4, 8, 16 s, then 30 s steady, forever.
//!
//! The handheld never gives up on a scan, so there is no attempt cap here
//! on purpose. A new capture skips the wait ([`Backoff::on_capture`]) but
//! keeps the failure count, so a flapping network is not hammered.

use serde::{Deserialize, Serialize};

use crate::time::{Millis, UnixMs};

/// The growing delays after the 1st, 2nd, 3rd and 4th failure in a row.
pub const BACKOFF_STEPS: [Millis; 4] = [
    Millis::from_secs(2),
    Millis::from_secs(4),
    Millis::from_secs(8),
    Millis::from_secs(16),
];
/// The steady delay from the 5th failure on: long enough to spare a
/// handheld's battery, short enough that an outage ends within a minute.
pub const BACKOFF_STEADY: Millis = Millis::from_secs(30);

/// The delay after `failures` failures in a row (`failures` ≥ 1; 0 means no wait).
pub fn delay_after(failures: u32) -> Millis {
    match failures {
        0 => Millis(0),
        n => BACKOFF_STEPS
            .get(n as usize - 1)
            .copied()
            .unwrap_or(BACKOFF_STEADY),
    }
}

/// When the next attempt is due after the `failures`-th failure in a row at `now`.
pub fn next_attempt_at(failures: u32, now: UnixMs) -> UnixMs {
    now.plus(delay_after(failures))
}

/// The schedule's state: failures in a row and when the next attempt is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Backoff {
    pub failures: u32,
    #[serde(default)]
    pub next_attempt_at: Option<UnixMs>,
}

impl Backoff {
    /// An attempt failed at `now`: wait the next step.
    pub fn on_failure(&mut self, now: UnixMs) -> UnixMs {
        self.failures = self.failures.saturating_add(1);
        let at = next_attempt_at(self.failures, now);
        self.next_attempt_at = Some(at);
        at
    }

    /// An attempt got through: the schedule starts over.
    pub fn on_success(&mut self) {
        *self = Backoff::default();
    }

    /// A new capture: drain at once, keeping the failure count.
    pub fn on_capture(&mut self) {
        self.next_attempt_at = None;
    }

    /// Whether an attempt may start at `now`.
    pub fn is_due(&self, now: UnixMs) -> bool {
        self.next_attempt_at.is_none_or(|at| now >= at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_follow_the_schedule_and_never_give_up() {
        let secs: Vec<u64> = (0..=8).map(|n| delay_after(n).0 / 1000).collect();
        assert_eq!(secs, [0, 2, 4, 8, 16, 30, 30, 30, 30]);
        assert_eq!(delay_after(u32::MAX), BACKOFF_STEADY);
    }

    #[test]
    fn a_capture_skips_the_wait_but_keeps_the_count() {
        let mut backoff = Backoff::default();
        let t0 = UnixMs(1_000_000);
        assert!(backoff.is_due(t0));
        assert_eq!(backoff.on_failure(t0), UnixMs(1_002_000));
        assert!(!backoff.is_due(UnixMs(1_001_999)));
        assert!(backoff.is_due(UnixMs(1_002_000)));
        assert_eq!(backoff.on_failure(UnixMs(1_002_000)), UnixMs(1_006_000));
        backoff.on_capture();
        assert!(backoff.is_due(UnixMs(1_002_001)));
        assert_eq!(backoff.on_failure(UnixMs(1_002_001)), UnixMs(1_010_001));
        backoff.on_success();
        assert_eq!(backoff, Backoff::default());
    }
}
