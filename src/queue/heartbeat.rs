//! When the handheld's heartbeat is due, sans-IO (docs/design.md §4, §5):
//! at the device's period, and after each drain run that sent something;
//! after a failure, on the drain's 2/4/8/16/30 s schedule ([`Backoff`]).
//! One beat is out at a time, and none is queued: a beat that is due is
//! sent with the figures of the moment it goes out.

use crate::backoff::Backoff;
use crate::time::{Millis, UnixMs};
use crate::wire::Heartbeat;

use super::view::Counts;

/// The period until the site has told the device its own: the handheld
/// profile's (`mc3390xr`, 15 minutes).
pub const HEARTBEAT_PERIOD_DEFAULT: Millis = Millis::from_secs(900);
/// The shortest period a site's answer may set (the fixed gate's, 60 s):
/// a smaller or absent figure keeps the one in force.
pub const HEARTBEAT_PERIOD_MIN: Millis = Millis::from_secs(60);

/// How a beat went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeatOutcome {
    /// The site took it; `period` is the one its answer carried, if any.
    Acknowledged { period: Option<Millis> },
    /// No answer, or not a 2xx.
    Failed,
}

/// The heartbeat's schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeats {
    period: Millis,
    /// When the last acknowledged beat was sent.
    last_acknowledged: Option<UnixMs>,
    /// A drain run sent something since the last beat went out.
    drained: bool,
    backoff: Backoff,
    in_flight: bool,
}

impl Default for Heartbeats {
    fn default() -> Heartbeats {
        Heartbeats {
            period: HEARTBEAT_PERIOD_DEFAULT,
            last_acknowledged: None,
            drained: false,
            backoff: Backoff::default(),
            in_flight: false,
        }
    }
}

impl Heartbeats {
    pub fn period(&self) -> Millis {
        self.period
    }

    /// A drain run that sent requests has ended: beat once it may.
    pub fn handle_drained(&mut self) {
        self.drained = true;
    }

    /// When the next beat is due (maybe already): none while one is out.
    pub fn poll_timeout(&self) -> Option<UnixMs> {
        if self.in_flight {
            return None;
        }
        let by_period = match self.last_acknowledged {
            Some(at) if !self.drained => at.plus(self.period),
            _ => UnixMs(i64::MIN),
        };
        Some(by_period.max(self.backoff.next_attempt_at.unwrap_or(UnixMs(i64::MIN))))
    }

    /// Whether a beat should go out at `now`; if so it is marked sent.
    pub fn poll_transmit(&mut self, now: UnixMs) -> bool {
        let due = self.poll_timeout().is_some_and(|at| now >= at);
        if due {
            self.in_flight = true;
            self.drained = false;
        }
        due
    }

    /// The beat sent at `sent_at` was answered (or failed) at `now`.
    pub fn handle_outcome(&mut self, sent_at: UnixMs, now: UnixMs, outcome: BeatOutcome) {
        self.in_flight = false;
        match outcome {
            BeatOutcome::Acknowledged { period } => {
                self.backoff.on_success();
                self.last_acknowledged = Some(sent_at);
                if let Some(period) = period.filter(|p| *p >= HEARTBEAT_PERIOD_MIN) {
                    self.period = period;
                }
            }
            BeatOutcome::Failed => {
                self.backoff.on_failure(now);
            }
        }
    }
}

/// The beat for the queue as `counts` sees it: its depth is every item
/// still to go out (queued, sending or blocked).
pub fn beat(counts: &Counts, sent_at: UnixMs, app_version: &str) -> Heartbeat {
    Heartbeat {
        sent_at,
        queue_depth: counts.queued + counts.sending + counts.blocked,
        oldest_queued_at: counts.oldest_queued_at,
        app_version: app_version.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: UnixMs = UnixMs(1_800_000_000_000);

    fn at(secs: i64) -> UnixMs {
        UnixMs(T0.0 + secs * 1000)
    }

    fn acked(period: Option<u64>) -> BeatOutcome {
        BeatOutcome::Acknowledged {
            period: period.map(Millis::from_secs),
        }
    }

    #[test]
    fn the_first_beat_is_due_at_once_then_one_period_after_the_last_acknowledged() {
        let mut beats = Heartbeats::default();
        assert!(beats.poll_transmit(T0));
        assert_eq!(beats.poll_timeout(), None, "one beat out at a time");
        assert!(!beats.poll_transmit(at(1)));
        beats.handle_outcome(T0, at(1), acked(None));
        assert_eq!(beats.period(), HEARTBEAT_PERIOD_DEFAULT);
        assert_eq!(beats.poll_timeout(), Some(at(900)));
        assert!(!beats.poll_transmit(at(899)));
        assert!(beats.poll_transmit(at(900)));
    }

    #[test]
    fn the_sites_answer_sets_the_period_of_the_devices_profile() {
        let mut beats = Heartbeats::default();
        assert!(beats.poll_transmit(T0));
        beats.handle_outcome(T0, at(1), acked(Some(1800)));
        assert_eq!(beats.poll_timeout(), Some(at(1800)));
        assert!(beats.poll_transmit(at(1800)));
        // A period below the shortest profile's is not taken.
        beats.handle_outcome(at(1800), at(1801), acked(Some(1)));
        assert_eq!(beats.period(), Millis::from_secs(1800));
        assert!(beats.poll_transmit(at(3600)));
        beats.handle_outcome(at(3600), at(3601), acked(Some(60)));
        assert_eq!(beats.poll_timeout(), Some(at(3660)));
    }

    #[test]
    fn a_drain_run_makes_a_beat_due_before_the_period_is_up() {
        let mut beats = Heartbeats::default();
        assert!(beats.poll_transmit(T0));
        beats.handle_outcome(T0, at(1), acked(None));
        beats.handle_drained();
        assert!(beats.poll_transmit(at(5)));
        beats.handle_outcome(at(5), at(6), acked(None));
        assert_eq!(beats.poll_timeout(), Some(at(905)));
    }

    #[test]
    fn a_drain_run_while_a_beat_is_out_is_beaten_for_after_it() {
        let mut beats = Heartbeats::default();
        assert!(beats.poll_transmit(T0));
        beats.handle_drained();
        beats.handle_outcome(T0, at(1), acked(None));
        assert!(beats.poll_transmit(at(1)));
    }

    #[test]
    fn failed_beats_retry_on_the_drains_schedule_and_never_give_up() {
        let mut beats = Heartbeats::default();
        let mut now = T0;
        let mut waits = Vec::new();
        for _ in 0..7 {
            assert!(beats.poll_transmit(now));
            beats.handle_outcome(now, now, BeatOutcome::Failed);
            let next = beats.poll_timeout().unwrap();
            assert!(!beats.poll_transmit(UnixMs(next.0 - 1)));
            waits.push(next.since(now) / 1000);
            now = next;
        }
        assert_eq!(waits, [2, 4, 8, 16, 30, 30, 30]);
        // A drain run does not skip the wait of a failing site.
        beats.handle_drained();
        assert_eq!(beats.poll_timeout(), Some(now));
        // Once through, the schedule starts over and the period counts.
        assert!(beats.poll_transmit(now));
        beats.handle_outcome(now, now, acked(Some(300)));
        assert_eq!(beats.poll_timeout(), Some(now.plus(Millis::from_secs(300))));
    }

    #[test]
    fn a_beat_carries_every_item_still_to_go_out_and_the_oldest() {
        let counts = Counts {
            queued: 3,
            sending: 2,
            blocked: 1,
            done: 40,
            rejected: 5,
            voided: 1,
            ..Counts::default()
        }
        .with_oldest(Some(at(-60)), T0);
        let beat = beat(&counts, T0, "1.2.3");
        assert_eq!(beat.queue_depth, 6);
        assert_eq!(beat.oldest_queued_at, Some(at(-60)));
        assert_eq!(beat.sent_at, T0);
        assert_eq!(beat.app_version, "1.2.3");
    }
}
