//! The listener's time rules (docs/design.md §6), sans-IO: stale, clock skew,
//! rate limit and duplicate, judged on capture and queue-write time only,
//! never on delivery time, so an outage drains as a normal backlog.
//!
//! Judging a write is two-phase. [`Rules::judge`] reads the windows and
//! returns a [`Judgement`] without changing them; only after the write has
//! committed does [`Rules::commit`] fold it in. A failed write therefore
//! leaves no trace here either: no rate budget spent, no duplicate planted.
//!
//! Order, stale first with an early return: a stale record is acknowledged
//! and recorded as rejected, and touches neither window.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use stockhop::time::{Millis, UnixMs};

use crate::terminal_wire::RuleOutcome;

/// A record is stale when its queue write is this long after its capture:
/// a terminal replaying an old log must not re-post it as new.
pub const STALE_AFTER: Millis = Millis::from_secs(3 * 60);
/// A capture further than this in the future of its queue write is a
/// terminal with a wrong clock.
pub const CLOCK_SKEW_MAX: Millis = Millis::from_secs(5 * 60);
/// Records taken per device in any [`RATE_WINDOW`] of capture instants:
/// twice a busy attendance terminal's peak, far under a stuck reader's flood.
pub const RATE_LIMIT_PER_WINDOW: usize = 120;
pub const RATE_WINDOW: Millis = Millis::from_secs(60);
/// Two reads of the same person or tag by the same device closer than this
/// are one event (a gate sees a tag many times a second).
pub const DUPLICATE_WINDOW: Millis = Millis::from_secs(5);
/// Entries the in-memory duplicate window holds; the oldest capture goes
/// first. 50,000 covers every tag a busy site sees in far more than 5 s.
pub const DUPLICATE_ENTRIES_MAX: usize = 50_000;

/// The facts the rules read about one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub device: String,
    /// The person or tag read.
    pub subject: String,
    /// The terminal's identity of this record: a retry carries the same one.
    pub event_id: String,
    pub occurred_at: UnixMs,
}

type DupKey = (String, String);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    occurred_at: UnixMs,
    event_id: String,
}

/// The windows the rules keep between writes.
#[derive(Debug, Default)]
pub struct Rules {
    /// Per device: capture instant → records taken at that instant.
    rate: HashMap<String, BTreeMap<UnixMs, usize>>,
    /// Per device + subject: the last accepted capture and its event id.
    seen: HashMap<DupKey, Seen>,
    /// The same entries ordered by capture, to evict the oldest.
    seen_by_age: BTreeSet<(UnixMs, DupKey)>,
}

/// The verdicts for one write, to be committed once the write is durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub outcomes: Vec<RuleOutcome>,
    queued_at: UnixMs,
    /// Records that spent rate budget: (device, capture).
    spent: Vec<(String, UnixMs)>,
    /// Records accepted: they become the previous capture of their key.
    accepted: Vec<Capture>,
}

impl Rules {
    pub fn new() -> Rules {
        Rules::default()
    }

    /// Judges `captures`, written together at `queued_at`, in order; a
    /// record sees the records before it in the same write.
    pub fn judge(&self, queued_at: UnixMs, captures: &[Capture]) -> Judgement {
        let mut pending_rate: HashMap<&str, Vec<UnixMs>> = HashMap::new();
        let mut pending_seen: HashMap<(&str, &str), (UnixMs, &str)> = HashMap::new();
        let mut judgement = Judgement {
            outcomes: Vec::with_capacity(captures.len()),
            queued_at,
            spent: Vec::new(),
            accepted: Vec::new(),
        };
        for capture in captures {
            let age_ms = queued_at.since(capture.occurred_at);
            if age_ms >= millis_i64(STALE_AFTER) {
                judgement.outcomes.push(RuleOutcome::Stale);
                continue;
            }
            if -age_ms > millis_i64(CLOCK_SKEW_MAX) {
                judgement.outcomes.push(RuleOutcome::ClockSkew);
                continue;
            }
            let key = (capture.device.as_str(), capture.subject.as_str());
            let previous = pending_seen.get(&key).copied().or_else(|| {
                self.seen
                    .get(&(capture.device.clone(), capture.subject.clone()))
                    .map(|s| (s.occurred_at, s.event_id.as_str()))
            });
            if previous.is_some_and(|(_, event_id)| event_id == capture.event_id) {
                // The same record again (the terminal never saw its ack):
                // its first verdict stands and it spends nothing twice.
                judgement.outcomes.push(RuleOutcome::Accepted);
                continue;
            }
            let window_start = capture.occurred_at.0 - millis_i64(RATE_WINDOW);
            let in_window = |at: &UnixMs| at.0 > window_start && *at <= capture.occurred_at;
            let taken = self.rate.get(&capture.device).map_or(0, |times| {
                times
                    .range(UnixMs(window_start + 1)..=capture.occurred_at)
                    .map(|(_, n)| n)
                    .sum()
            }) + pending_rate
                .get(capture.device.as_str())
                .map_or(0, |times| times.iter().filter(|at| in_window(at)).count());
            if taken >= RATE_LIMIT_PER_WINDOW {
                judgement.outcomes.push(RuleOutcome::RateLimited);
                continue;
            }
            pending_rate
                .entry(capture.device.as_str())
                .or_default()
                .push(capture.occurred_at);
            judgement
                .spent
                .push((capture.device.clone(), capture.occurred_at));
            let duplicate = previous.is_some_and(|(at, _)| {
                capture.occurred_at.since(at).abs() < millis_i64(DUPLICATE_WINDOW)
            });
            if duplicate {
                judgement.outcomes.push(RuleOutcome::Duplicate);
                continue;
            }
            let newer = previous.is_none_or(|(at, _)| capture.occurred_at > at);
            if newer {
                pending_seen.insert(key, (capture.occurred_at, capture.event_id.as_str()));
            }
            judgement.accepted.push(capture.clone());
            judgement.outcomes.push(RuleOutcome::Accepted);
        }
        judgement
    }

    /// Folds in a judgement whose write has committed.
    pub fn commit(&mut self, judgement: Judgement) {
        for (device, at) in judgement.spent {
            *self.rate.entry(device).or_default().entry(at).or_default() += 1;
        }
        for capture in judgement.accepted {
            self.remember(capture);
        }
        self.forget_before(judgement.queued_at);
    }

    /// Puts an accepted record into the duplicate window (also used to
    /// rebuild the window from the durable served record on start).
    pub fn remember(&mut self, capture: Capture) {
        let key = (capture.device, capture.subject);
        if let Some(old) = self.seen.get(&key) {
            if old.occurred_at >= capture.occurred_at {
                return;
            }
            self.seen_by_age.remove(&(old.occurred_at, key.clone()));
        }
        self.seen_by_age.insert((capture.occurred_at, key.clone()));
        self.seen.insert(
            key,
            Seen {
                occurred_at: capture.occurred_at,
                event_id: capture.event_id,
            },
        );
        while self.seen.len() > DUPLICATE_ENTRIES_MAX {
            let Some(oldest) = self.seen_by_age.pop_first() else {
                break;
            };
            self.seen.remove(&oldest.1);
        }
    }

    /// Counts a record against its device's rate budget (rebuilding on start).
    pub fn spend(&mut self, device: String, occurred_at: UnixMs) {
        *self
            .rate
            .entry(device)
            .or_default()
            .entry(occurred_at)
            .or_default() += 1;
    }

    /// Drops rate entries no fresh record can reach any more: anything
    /// captured before `now − STALE_AFTER − RATE_WINDOW`.
    fn forget_before(&mut self, now: UnixMs) {
        let horizon = UnixMs(now.0 - millis_i64(STALE_AFTER) - millis_i64(RATE_WINDOW));
        self.rate.retain(|_, times| {
            *times = times.split_off(&horizon);
            !times.is_empty()
        });
    }

    /// Entries in the duplicate window.
    pub fn duplicate_entries(&self) -> usize {
        self.seen.len()
    }

    /// Records counted against `device`'s rate budget.
    pub fn rate_entries(&self, device: &str) -> usize {
        self.rate.get(device).map_or(0, |t| t.values().sum())
    }
}

fn millis_i64(span: Millis) -> i64 {
    i64::try_from(span.0).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: UnixMs = UnixMs(1_800_000_000_000);

    fn capture(device: &str, subject: &str, event_id: &str, secs_ago: i64) -> Capture {
        Capture {
            device: device.to_owned(),
            subject: subject.to_owned(),
            event_id: event_id.to_owned(),
            occurred_at: UnixMs(NOW.0 - secs_ago * 1000),
        }
    }

    /// Judges and commits, as a successful write does.
    fn check(rules: &mut Rules, queued_at: UnixMs, captures: &[Capture]) -> Vec<RuleOutcome> {
        let judgement = rules.judge(queued_at, captures);
        let outcomes = judgement.outcomes.clone();
        rules.commit(judgement);
        outcomes
    }

    #[test]
    fn captured_600s_ago_and_queued_570s_ago_is_fresh() {
        let mut rules = Rules::new();
        let queued_at = UnixMs(NOW.0 - 570_000);
        let outcomes = check(&mut rules, queued_at, &[capture("T1", "1452", "e1", 600)]);
        assert_eq!(outcomes, [RuleOutcome::Accepted]);
    }

    #[test]
    fn stale_is_three_minutes_or_more_between_capture_and_queue_write() {
        let mut rules = Rules::new();
        let outcomes = check(
            &mut rules,
            NOW,
            &[capture("T1", "a", "e1", 179), capture("T1", "b", "e2", 180)],
        );
        assert_eq!(outcomes, [RuleOutcome::Accepted, RuleOutcome::Stale]);
    }

    #[test]
    fn more_than_five_minutes_in_the_future_is_clock_skew() {
        let mut rules = Rules::new();
        let outcomes = check(
            &mut rules,
            NOW,
            &[
                capture("T1", "a", "e1", -300),
                capture("T1", "b", "e2", -301),
            ],
        );
        assert_eq!(outcomes, [RuleOutcome::Accepted, RuleOutcome::ClockSkew]);
    }

    #[test]
    fn outage_backlog_of_200_records_drains_with_no_rejections() {
        // 200 records over 10 minutes from one terminal, each queued by the
        // listener a second after capture; the ledger saw none of them for
        // 10 minutes, which the rules never read.
        let mut rules = Rules::new();
        for i in 0..200i64 {
            let captured = UnixMs(NOW.0 - 600_000 + i * 3_000);
            let c = Capture {
                device: "T1".to_owned(),
                subject: format!("{}", i % 7),
                event_id: format!("e{i}"),
                occurred_at: captured,
            };
            let outcomes = check(&mut rules, UnixMs(captured.0 + 1_000), &[c]);
            assert_eq!(outcomes, [RuleOutcome::Accepted], "record {i}");
        }
    }

    #[test]
    fn replaying_last_weeks_log_is_all_stale_and_spends_nothing() {
        let mut rules = Rules::new();
        let week_secs = 7 * 24 * 3600;
        let replay: Vec<Capture> = (0..500)
            .map(|i| capture("T1", "1452", &format!("old{i}"), week_secs - i))
            .collect();
        let outcomes = check(&mut rules, NOW, &replay);
        assert!(outcomes.iter().all(|o| *o == RuleOutcome::Stale));
        assert_eq!(rules.rate_entries("T1"), 0);
        assert_eq!(rules.duplicate_entries(), 0);
        let fresh = check(&mut rules, NOW, &[capture("T1", "1452", "new", 1)]);
        assert_eq!(fresh, [RuleOutcome::Accepted]);
    }

    #[test]
    fn the_121st_record_in_a_minute_of_capture_time_is_rate_limited() {
        let mut rules = Rules::new();
        let burst: Vec<Capture> = (0..121)
            .map(|i| Capture {
                device: "G1".to_owned(),
                subject: format!("tag{i}"),
                event_id: format!("e{i}"),
                occurred_at: UnixMs(NOW.0 - 59_000 + i * 100),
            })
            .collect();
        let outcomes = check(&mut rules, NOW, &burst);
        assert!(outcomes[..120].iter().all(|o| *o == RuleOutcome::Accepted));
        assert_eq!(outcomes[120], RuleOutcome::RateLimited);
        let other_device = check(&mut rules, NOW, &[capture("G2", "tag0", "x", 1)]);
        assert_eq!(other_device, [RuleOutcome::Accepted]);
        let a_minute_later = Capture {
            occurred_at: UnixMs(NOW.0 + 60_000),
            ..capture("G1", "late", "late", 0)
        };
        assert_eq!(
            check(&mut rules, UnixMs(NOW.0 + 61_000), &[a_minute_later]),
            [RuleOutcome::Accepted]
        );
    }

    #[test]
    fn the_same_tag_within_five_seconds_is_a_duplicate_but_its_retry_is_not() {
        let mut rules = Rules::new();
        let first = capture("G1", "e280", "read1", 10);
        let outcomes = check(
            &mut rules,
            NOW,
            &[
                first.clone(),
                capture("G1", "e280", "read2", 6),
                capture("G2", "e280", "read3", 6),
                capture("G1", "e280", "read4", 5),
            ],
        );
        assert_eq!(
            outcomes,
            [
                RuleOutcome::Accepted,
                RuleOutcome::Duplicate,
                RuleOutcome::Accepted,
                RuleOutcome::Accepted
            ]
        );
        let retry = check(&mut rules, NOW, &[capture("G1", "e280", "read4", 5)]);
        assert_eq!(retry, [RuleOutcome::Accepted]);
    }

    #[test]
    fn a_failed_write_leaves_the_windows_untouched() {
        let mut rules = Rules::new();
        let judgement = rules.judge(NOW, &[capture("T1", "7", "e1", 1)]);
        assert_eq!(judgement.outcomes, [RuleOutcome::Accepted]);
        drop(judgement);
        assert_eq!(rules.rate_entries("T1"), 0);
        assert_eq!(
            check(&mut rules, NOW, &[capture("T1", "7", "e2", 1)]),
            [RuleOutcome::Accepted]
        );
    }

    #[test]
    fn the_duplicate_window_is_bounded_and_drops_the_oldest_capture() {
        let mut rules = Rules::new();
        for i in 0..(DUPLICATE_ENTRIES_MAX as i64 + 10) {
            rules.remember(Capture {
                device: "G1".to_owned(),
                subject: format!("tag{i}"),
                event_id: format!("e{i}"),
                occurred_at: UnixMs(NOW.0 + i),
            });
        }
        assert_eq!(rules.duplicate_entries(), DUPLICATE_ENTRIES_MAX);
        let oldest_again = check(
            &mut rules,
            UnixMs(NOW.0 + 1),
            &[Capture {
                device: "G1".to_owned(),
                subject: "tag0".to_owned(),
                event_id: "again".to_owned(),
                occurred_at: UnixMs(NOW.0 + 1),
            }],
        );
        assert_eq!(oldest_again, [RuleOutcome::Accepted]);
        let newest = NOW.0 + DUPLICATE_ENTRIES_MAX as i64 + 9;
        let newest_again = check(
            &mut rules,
            UnixMs(newest + 1_000),
            &[Capture {
                device: "G1".to_owned(),
                subject: format!("tag{}", DUPLICATE_ENTRIES_MAX + 9),
                event_id: "again".to_owned(),
                occurred_at: UnixMs(newest + 1_000),
            }],
        );
        assert_eq!(newest_again, [RuleOutcome::Duplicate]);
    }
}
