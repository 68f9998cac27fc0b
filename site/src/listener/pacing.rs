//! Pacing, not loss: every record a terminal sends spends its serial's
//! budget, whatever the time rules then make of it (a stale record is
//! stored as rejected, so it costs a row like any other). Past the budget a
//! request is answered with the protocol's "try again" (503 with
//! Retry-After on HTTP, a `nack` with `retry` on the framed port) and
//! nothing of it is kept: the terminal still holds its records and sends
//! them again, at the budget's pace. A real terminal's backlog after an
//! outage fits in the burst; a terminal replaying its whole log in a loop
//! is slowed to [`RECORDS_PER_SERIAL_PER_SECOND`]. An RFID reader is
//! paced at its profile's reads per second instead ([`records_per_second`]):
//! a portal reports every tag it reads, that many a second all shift long.
//!
//! Sans-IO: the handlers call [`Pacing::take`] with `now`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::limits::{MAX_KNOWN_PEERS, MAX_ROWS_PER_TERMINAL_REQUEST};
use crate::terminal_wire::TerminalEventKind;

/// Records a serial may send per second, sustained, unless it is an RFID
/// reader: an attendance terminal at shift change sends two a second (the
/// 120-a-minute rate rule), a bridge of barcode scanners a few more.
pub const RECORDS_PER_SERIAL_PER_SECOND: f64 = 20.0;
/// Records a serial may send at once: one full upload (a terminal's backlog
/// after an outage), so a request within the per-request bound is never
/// refused by a full budget.
pub const RECORDS_PER_SERIAL_BURST: f64 = MAX_ROWS_PER_TERMINAL_REQUEST as f64;
/// Serials whose budgets are followed at once; a serial whose budget is
/// full needs no entry, so past it the full ones are forgotten first.
pub const PACED_SERIALS_MAX: usize = MAX_KNOWN_PEERS;

/// The records per second a serial sending `kind` records may keep up:
/// an RFID reader (tag reads) its profile's `reads_per_sec`, which it
/// reads and reports all shift long at a busy portal; any other terminal
/// [`RECORDS_PER_SERIAL_PER_SECOND`].
pub fn records_per_second(kind: TerminalEventKind, reads_per_sec: u32) -> f64 {
    match kind {
        TerminalEventKind::TagRead => f64::from(reads_per_sec).max(RECORDS_PER_SERIAL_PER_SECOND),
        TerminalEventKind::Attendance | TerminalEventKind::CodeRead => {
            RECORDS_PER_SERIAL_PER_SECOND
        }
    }
}

/// One serial's part of a request: its records, and the rate its budget
/// refills at ([`records_per_second`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spend<'a> {
    pub serial: &'a str,
    pub records: usize,
    pub per_second: f64,
}

/// The budget of each serial that has spent some.
#[derive(Debug, Default)]
pub struct Pacing {
    buckets: HashMap<String, Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    records: f64,
    at: Instant,
    /// The rate it refills at, as its last spend named it.
    per_second: f64,
}

impl Bucket {
    fn refilled(self, now: Instant) -> f64 {
        let refill = now.saturating_duration_since(self.at).as_secs_f64() * self.per_second;
        (self.records + refill).min(RECORDS_PER_SERIAL_BURST)
    }
}

impl Pacing {
    /// Takes `spends` (records per serial) from the serials' budgets at
    /// `now`, all or none: `Err` with the wait until every serial has
    /// enough again.
    pub fn take(&mut self, spends: &[Spend<'_>], now: Instant) -> Result<(), Duration> {
        let mut wait = Duration::ZERO;
        for spend in spends {
            let short = spend.records as f64 - self.have(spend, now);
            if short > 0.0 {
                wait = wait.max(Duration::from_secs_f64(short / spend.per_second));
            }
        }
        if wait > Duration::ZERO {
            return Err(wait);
        }
        for spend in spends {
            if !self.buckets.contains_key(spend.serial) && self.buckets.len() >= PACED_SERIALS_MAX {
                self.forget_full(now);
                if self.buckets.len() >= PACED_SERIALS_MAX {
                    // Every followed serial is spending: this one goes
                    // unpaced rather than evicting one that is.
                    continue;
                }
            }
            let have = self.have(spend, now);
            self.buckets.insert(
                spend.serial.to_owned(),
                Bucket {
                    records: have - spend.records as f64,
                    at: now,
                    per_second: spend.per_second,
                },
            );
        }
        Ok(())
    }

    /// What `spend`'s serial has at `now`, refilled at the spend's rate.
    fn have(&self, spend: &Spend<'_>, now: Instant) -> f64 {
        self.buckets
            .get(spend.serial)
            .map_or(RECORDS_PER_SERIAL_BURST, |bucket| {
                Bucket {
                    per_second: spend.per_second,
                    ..*bucket
                }
                .refilled(now)
            })
    }

    fn forget_full(&mut self, now: Instant) {
        self.buckets
            .retain(|_, bucket| bucket.refilled(now) < RECORDS_PER_SERIAL_BURST);
    }
}

/// The spends of a request's records, each given as its serial and the
/// serial's rate: one a serial, in first-seen order.
pub fn spends<'a>(records: impl IntoIterator<Item = (&'a str, f64)>) -> Vec<Spend<'a>> {
    let mut spends: Vec<Spend<'a>> = Vec::new();
    for (serial, per_second) in records {
        match spends.iter_mut().find(|spend| spend.serial == serial) {
            Some(spend) => {
                spend.records += 1;
                spend.per_second = spend.per_second.max(per_second);
            }
            None => spends.push(Spend {
                serial,
                records: 1,
                per_second,
            }),
        }
    }
    spends
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::devices::Profile;

    const PEOPLE: f64 = RECORDS_PER_SERIAL_PER_SECOND;

    fn spend(serial: &str, records: usize, per_second: f64) -> Spend<'_> {
        Spend {
            serial,
            records,
            per_second,
        }
    }

    #[test]
    fn a_serial_gets_its_burst_then_its_rate_and_others_are_untouched() {
        let mut pacing = Pacing::default();
        let start = Instant::now();
        let burst = RECORDS_PER_SERIAL_BURST as usize;
        assert_eq!(pacing.take(&[spend("T1", burst, PEOPLE)], start), Ok(()));
        let wait = pacing.take(&[spend("T1", 40, PEOPLE)], start).unwrap_err();
        assert_eq!(wait, Duration::from_secs(2));
        assert_eq!(pacing.take(&[spend("T2", 40, PEOPLE)], start), Ok(()));
        assert_eq!(
            pacing.take(&[spend("T1", 40, PEOPLE)], start + Duration::from_secs(2)),
            Ok(())
        );
        assert!(pacing
            .take(&[spend("T1", 1, PEOPLE)], start + Duration::from_secs(2))
            .is_err());
    }

    #[test]
    fn a_portal_reporting_its_profiles_reads_every_second_is_never_paced() {
        let reads = Profile::Fxr90.reads_per_sec();
        let per_second = records_per_second(TerminalEventKind::TagRead, reads);
        let mut pacing = Pacing::default();
        let start = Instant::now();
        // A shift's worth of one report a second, each a second of reads.
        for second in 0..8 * 3600 {
            let now = start + Duration::from_secs(second);
            assert_eq!(
                pacing.take(&[spend("DOCK1", reads as usize, per_second)], now),
                Ok(()),
                "report {second}"
            );
        }
        // Reading faster than its profile can is still paced: a second
        // burst in the last report's second finds the budget short.
        let last = start + Duration::from_secs(8 * 3600 - 1);
        let wait = pacing
            .take(
                &[spend(
                    "DOCK1",
                    RECORDS_PER_SERIAL_BURST as usize,
                    per_second,
                )],
                last,
            )
            .unwrap_err();
        assert_eq!(wait, Duration::from_secs(1));
    }

    #[test]
    fn terminals_people_stand_at_keep_the_people_rate() {
        for kind in [TerminalEventKind::Attendance, TerminalEventKind::CodeRead] {
            assert_eq!(records_per_second(kind, 700), PEOPLE);
        }
        // A reader whose profile reads less than people do is not slowed
        // below them.
        assert_eq!(records_per_second(TerminalEventKind::TagRead, 0), PEOPLE);
    }

    #[test]
    fn records_are_counted_per_serial_at_the_serials_rate() {
        assert_eq!(
            spends([("A", 20.0), ("B", 700.0), ("A", 20.0)]),
            vec![spend("A", 2, 20.0), spend("B", 1, 700.0)]
        );
    }
}
