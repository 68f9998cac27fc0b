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
/// Records an attendance terminal may send in any
/// [`ATTENDANCE_RATE_WINDOW`] of capture instants: twice a busy terminal's
/// peak (people queue at one reader at shift change), far under a stuck
/// terminal's flood.
pub const ATTENDANCE_RATE_LIMIT_PER_WINDOW: usize = 120;
pub const ATTENDANCE_RATE_WINDOW: Millis = Millis::from_secs(60);
/// An RFID reader's limit is per tag: reads of one tag in any window this
/// long, at most the reader profile's reads per second. A dock door reads a
/// 200-tag pallet within a second, so a per-device budget would refuse
/// good reads; only one tag read faster than the reader can read is a
/// stuck reader or a loop.
pub const TAG_RATE_WINDOW: Millis = Millis::from_secs(1);
/// The longest rate window: how far back of the stale horizon rate entries
/// are kept.
pub const RATE_WINDOW_MAX: Millis = ATTENDANCE_RATE_WINDOW;
/// How often, in queue-write time, rate entries no fresh record can reach
/// are dropped: a reader at 700 reads/s keeps over a hundred thousand
/// per-tag entries, too many to sweep on every commit.
pub const RATE_SWEEP_EVERY: Millis = Millis::from_secs(1);
/// Two reads of the same person or tag by the same device closer than this
/// are one event (a gate sees a tag many times a second).
pub const DUPLICATE_WINDOW: Millis = Millis::from_secs(5);
/// Entries the in-memory duplicate window holds; the oldest capture goes
/// first. 50,000 covers every tag a busy site sees in far more than 5 s.
pub const DUPLICATE_ENTRIES_MAX: usize = 50_000;

/// The kind of terminal a record came from, which picks its rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    /// Attendance and access-control terminals, and barcode bridges: people
    /// at a reader, limited per device.
    Attendance,
    /// RFID readers (tag reads): limited per tag, at the reader's reads/s.
    RfidReader,
}

/// Each RFID reader's reads per second (its device profile's), with the
/// rate for readers not named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderRates {
    pub per_reader: HashMap<String, u32>,
    pub default_reads_per_sec: u32,
}

impl ReaderRates {
    /// `reader`'s reads per second.
    pub fn reads_per_sec(&self, reader: &str) -> u32 {
        self.per_reader
            .get(reader)
            .copied()
            .unwrap_or(self.default_reads_per_sec)
    }
}

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

/// Whose budget a record spends: a device's, or one tag's at one reader.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RateKey {
    Device(String),
    Tag { device: String, tag: String },
}

impl RateKey {
    fn device(&self) -> &str {
        match self {
            RateKey::Device(device) | RateKey::Tag { device, .. } => device,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    occurred_at: UnixMs,
    event_id: String,
}

/// The windows the rules keep between writes.
#[derive(Debug)]
pub struct Rules {
    readers: ReaderRates,
    /// Per budget: capture instant → records taken at that instant.
    rate: HashMap<RateKey, BTreeMap<UnixMs, usize>>,
    /// When the rate entries were last swept.
    swept_at: UnixMs,
    /// Per device + subject: the last accepted capture and its event id.
    seen: HashMap<DupKey, Seen>,
    /// The same entries ordered by capture, to evict the oldest.
    seen_by_age: BTreeSet<(UnixMs, DupKey)>,
}

/// The verdicts for one write, to be committed once the write is durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub outcomes: Vec<RuleOutcome>,
    /// For a [`RuleOutcome::Duplicate`] in `outcomes` (by its index there),
    /// the event id and capture instant of the accepted capture it repeats
    /// (the one within the window).
    pub repeats: HashMap<usize, (String, UnixMs)>,
    queued_at: UnixMs,
    /// Records that spent rate budget: (budget, capture).
    spent: Vec<(RateKey, UnixMs)>,
    /// Records accepted: they become the previous capture of their key.
    accepted: Vec<Capture>,
}

impl Rules {
    pub fn new(readers: ReaderRates) -> Rules {
        Rules {
            readers,
            rate: HashMap::new(),
            swept_at: UnixMs(0),
            seen: HashMap::new(),
            seen_by_age: BTreeSet::new(),
        }
    }

    /// The budget `capture` spends, with its limit and window.
    fn budget(&self, terminal: Terminal, capture: &Capture) -> (RateKey, usize, Millis) {
        match terminal {
            Terminal::Attendance => (
                RateKey::Device(capture.device.clone()),
                ATTENDANCE_RATE_LIMIT_PER_WINDOW,
                ATTENDANCE_RATE_WINDOW,
            ),
            Terminal::RfidReader => {
                let per_sec = self.readers.reads_per_sec(&capture.device) as u64;
                let per_window = per_sec * TAG_RATE_WINDOW.0 / 1000;
                (
                    RateKey::Tag {
                        device: capture.device.clone(),
                        tag: capture.subject.clone(),
                    },
                    usize::try_from(per_window).unwrap_or(usize::MAX),
                    TAG_RATE_WINDOW,
                )
            }
        }
    }

    /// Judges `captures`, written together at `queued_at`, in order; a
    /// record sees the records before it in the same write.
    pub fn judge(&self, queued_at: UnixMs, captures: &[(Terminal, &Capture)]) -> Judgement {
        let mut pending_rate: HashMap<RateKey, Vec<UnixMs>> = HashMap::new();
        let mut pending_seen: HashMap<(&str, &str), (UnixMs, &str)> = HashMap::new();
        let mut judgement = Judgement {
            outcomes: Vec::with_capacity(captures.len()),
            repeats: HashMap::new(),
            queued_at,
            spent: Vec::new(),
            accepted: Vec::new(),
        };
        for &(terminal, capture) in captures {
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
            let (budget, limit, window) = self.budget(terminal, capture);
            let window_start = capture.occurred_at.0.saturating_sub(millis_i64(window));
            let in_window = |at: &UnixMs| at.0 > window_start && *at <= capture.occurred_at;
            let taken = self.rate.get(&budget).map_or(0, |times| {
                times
                    .range(UnixMs(window_start.saturating_add(1))..=capture.occurred_at)
                    .map(|(_, n)| n)
                    .sum()
            }) + pending_rate
                .get(&budget)
                .map_or(0, |times| times.iter().filter(|at| in_window(at)).count());
            if taken >= limit {
                judgement.outcomes.push(RuleOutcome::RateLimited);
                continue;
            }
            pending_rate
                .entry(budget.clone())
                .or_default()
                .push(capture.occurred_at);
            judgement.spent.push((budget, capture.occurred_at));
            let duplicate = previous.is_some_and(|(at, _)| {
                capture.occurred_at.since(at).abs() < millis_i64(DUPLICATE_WINDOW)
            });
            if duplicate {
                if let Some((at, event_id)) = previous {
                    judgement
                        .repeats
                        .insert(judgement.outcomes.len(), (event_id.to_owned(), at));
                }
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
        for (budget, at) in judgement.spent {
            self.spend(budget, at);
        }
        for capture in judgement.accepted {
            self.remember(capture);
        }
        if judgement.queued_at.since(self.swept_at) >= millis_i64(RATE_SWEEP_EVERY) {
            self.forget_before(judgement.queued_at);
            self.swept_at = judgement.queued_at;
        }
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

    /// Counts a record against a rate budget (also rebuilding on start).
    pub fn spend(&mut self, budget: RateKey, occurred_at: UnixMs) {
        *self
            .rate
            .entry(budget)
            .or_default()
            .entry(occurred_at)
            .or_default() += 1;
    }

    /// Drops rate entries no fresh record can reach any more: anything
    /// captured before `now − STALE_AFTER − RATE_WINDOW_MAX`.
    fn forget_before(&mut self, now: UnixMs) {
        let horizon = UnixMs(now.0 - millis_i64(STALE_AFTER) - millis_i64(RATE_WINDOW_MAX));
        self.rate.retain(|_, times| {
            *times = times.split_off(&horizon);
            !times.is_empty()
        });
    }

    /// Entries in the duplicate window.
    pub fn duplicate_entries(&self) -> usize {
        self.seen.len()
    }

    /// Records counted against `device`'s budgets, its own and its tags'.
    pub fn rate_entries(&self, device: &str) -> usize {
        self.rate
            .iter()
            .filter(|(key, _)| key.device() == device)
            .map(|(_, times)| times.values().sum::<usize>())
            .sum()
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

    /// Rules with every reader at the fixed gate's 700 reads/s.
    fn rules() -> Rules {
        Rules::new(ReaderRates {
            per_reader: HashMap::from([("HANDHELD".to_owned(), 150)]),
            default_reads_per_sec: 700,
        })
    }

    /// Judges attendance records and commits, as a successful write does.
    fn check(rules: &mut Rules, queued_at: UnixMs, captures: &[Capture]) -> Vec<RuleOutcome> {
        check_as(rules, queued_at, Terminal::Attendance, captures)
    }

    fn check_as(
        rules: &mut Rules,
        queued_at: UnixMs,
        terminal: Terminal,
        captures: &[Capture],
    ) -> Vec<RuleOutcome> {
        let classified: Vec<_> = captures.iter().map(|c| (terminal, c)).collect();
        let judgement = rules.judge(queued_at, &classified);
        let outcomes = judgement.outcomes.clone();
        rules.commit(judgement);
        outcomes
    }

    #[test]
    fn captured_600s_ago_and_queued_570s_ago_is_fresh() {
        let mut rules = rules();
        let queued_at = UnixMs(NOW.0 - 570_000);
        let outcomes = check(&mut rules, queued_at, &[capture("T1", "1452", "e1", 600)]);
        assert_eq!(outcomes, [RuleOutcome::Accepted]);
    }

    #[test]
    fn stale_is_three_minutes_or_more_between_capture_and_queue_write() {
        let mut rules = rules();
        let outcomes = check(
            &mut rules,
            NOW,
            &[capture("T1", "a", "e1", 179), capture("T1", "b", "e2", 180)],
        );
        assert_eq!(outcomes, [RuleOutcome::Accepted, RuleOutcome::Stale]);
    }

    #[test]
    fn more_than_five_minutes_in_the_future_is_clock_skew() {
        let mut rules = rules();
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
        let mut rules = rules();
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
        let mut rules = rules();
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
        let mut rules = rules();
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
    fn a_pallet_of_200_distinct_tags_in_one_second_is_all_accepted() {
        let mut rules = rules();
        let pallet: Vec<Capture> = (0..200)
            .map(|i| Capture {
                device: "DOCK1".to_owned(),
                subject: format!("e280{i:04}"),
                event_id: format!("e{i}"),
                occurred_at: UnixMs(NOW.0 - 1_000 + i * 5),
            })
            .collect();
        let outcomes = check_as(&mut rules, NOW, Terminal::RfidReader, &pallet);
        assert!(outcomes.iter().all(|o| *o == RuleOutcome::Accepted));
        // The same 200 reads from an attendance terminal hit its budget.
        let mut rules = self::rules();
        let outcomes = check(&mut rules, NOW, &pallet);
        let limited = outcomes
            .iter()
            .filter(|o| **o == RuleOutcome::RateLimited)
            .count();
        assert_eq!(limited, 200 - ATTENDANCE_RATE_LIMIT_PER_WINDOW);
    }

    #[test]
    fn one_tag_read_faster_than_its_readers_reads_per_second_is_rate_limited() {
        let stuck = |device: &str, n: i64| -> Vec<Capture> {
            (0..n)
                .map(|i| Capture {
                    device: device.to_owned(),
                    subject: "e280aa".to_owned(),
                    event_id: format!("{device}-{i}"),
                    occurred_at: UnixMs(NOW.0 - 1_000 + i),
                })
                .collect()
        };
        let mut rules = rules();
        let outcomes = check_as(&mut rules, NOW, Terminal::RfidReader, &stuck("DOCK1", 701));
        assert_eq!(outcomes[0], RuleOutcome::Accepted);
        assert!(outcomes[1..700]
            .iter()
            .all(|o| *o == RuleOutcome::Duplicate));
        assert_eq!(outcomes[700], RuleOutcome::RateLimited);
        // A handheld's profile reads 150 tags a second.
        let outcomes = check_as(
            &mut rules,
            NOW,
            Terminal::RfidReader,
            &stuck("HANDHELD", 151),
        );
        assert_eq!(outcomes[150], RuleOutcome::RateLimited);
        // Another tag at the same reader has its own budget.
        let other = capture("DOCK1", "e280bb", "other", 0);
        assert_eq!(
            check_as(&mut rules, NOW, Terminal::RfidReader, &[other]),
            [RuleOutcome::Accepted]
        );
    }

    #[test]
    fn the_same_tag_within_five_seconds_is_a_duplicate_but_its_retry_is_not() {
        let mut rules = rules();
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
        let mut rules = rules();
        let judgement = rules.judge(NOW, &[(Terminal::Attendance, &capture("T1", "7", "e1", 1))]);
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
        let mut rules = rules();
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
