//! Pacing, not loss: every record a terminal sends spends its serial's
//! budget, whatever the time rules then make of it (a stale record is
//! stored as rejected, so it costs a row like any other). Past the budget a
//! request is answered with the protocol's "try again" (503 with
//! Retry-After on HTTP, a `nack` with `retry` on the framed port) and
//! nothing of it is kept: the terminal still holds its records and sends
//! them again, at the budget's pace. A real terminal's backlog after an
//! outage fits in the burst; a terminal replaying its whole log in a loop
//! is slowed to [`RECORDS_PER_SERIAL_PER_SECOND`].
//!
//! Sans-IO: the handlers call [`Pacing::take`] with `now`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::limits::{MAX_KNOWN_PEERS, MAX_ROWS_PER_TERMINAL_REQUEST};

/// Records a serial may send per second, sustained: an attendance terminal
/// at shift change sends two a second (the 120-a-minute rate rule), a
/// bridge of barcode scanners a few more.
pub const RECORDS_PER_SERIAL_PER_SECOND: f64 = 20.0;
/// Records a serial may send at once: one full upload (a terminal's backlog
/// after an outage), so a request within the per-request bound is never
/// refused by a full budget.
pub const RECORDS_PER_SERIAL_BURST: f64 = MAX_ROWS_PER_TERMINAL_REQUEST as f64;
/// Serials whose budgets are followed at once; a serial whose budget is
/// full needs no entry, so past it the full ones are forgotten first.
pub const PACED_SERIALS_MAX: usize = MAX_KNOWN_PEERS;

/// The budget of each serial that has spent some.
#[derive(Debug, Default)]
pub struct Pacing {
    buckets: HashMap<String, Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    records: f64,
    at: Instant,
}

impl Bucket {
    fn refilled(self, now: Instant) -> f64 {
        let refill =
            now.saturating_duration_since(self.at).as_secs_f64() * RECORDS_PER_SERIAL_PER_SECOND;
        (self.records + refill).min(RECORDS_PER_SERIAL_BURST)
    }
}

impl Pacing {
    /// Takes `counts` (records per serial) from the serials' budgets at
    /// `now`, all or none: `Err` with the wait until every serial has
    /// enough again.
    pub fn take(&mut self, counts: &[(&str, usize)], now: Instant) -> Result<(), Duration> {
        let mut wait = Duration::ZERO;
        for (serial, n) in counts {
            let have = self
                .buckets
                .get(*serial)
                .map_or(RECORDS_PER_SERIAL_BURST, |bucket| bucket.refilled(now));
            let short = *n as f64 - have;
            if short > 0.0 {
                wait = wait.max(Duration::from_secs_f64(
                    short / RECORDS_PER_SERIAL_PER_SECOND,
                ));
            }
        }
        if wait > Duration::ZERO {
            return Err(wait);
        }
        for (serial, n) in counts {
            if !self.buckets.contains_key(*serial) && self.buckets.len() >= PACED_SERIALS_MAX {
                self.forget_full(now);
                if self.buckets.len() >= PACED_SERIALS_MAX {
                    // Every followed serial is spending: this one goes
                    // unpaced rather than evicting one that is.
                    continue;
                }
            }
            let have = self
                .buckets
                .get(*serial)
                .map_or(RECORDS_PER_SERIAL_BURST, |bucket| bucket.refilled(now));
            self.buckets.insert(
                (*serial).to_owned(),
                Bucket {
                    records: have - *n as f64,
                    at: now,
                },
            );
        }
        Ok(())
    }

    fn forget_full(&mut self, now: Instant) {
        self.buckets
            .retain(|_, bucket| bucket.refilled(now) < RECORDS_PER_SERIAL_BURST);
    }
}

/// Records per serial of `serials` (one entry a record), in first-seen order.
pub fn counts<'a>(serials: impl IntoIterator<Item = &'a str>) -> Vec<(&'a str, usize)> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for serial in serials {
        match counts.iter_mut().find(|(s, _)| *s == serial) {
            Some((_, n)) => *n += 1,
            None => counts.push((serial, 1)),
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_serial_gets_its_burst_then_its_rate_and_others_are_untouched() {
        let mut pacing = Pacing::default();
        let start = Instant::now();
        let burst = RECORDS_PER_SERIAL_BURST as usize;
        assert_eq!(pacing.take(&[("T1", burst)], start), Ok(()));
        let wait = pacing.take(&[("T1", 40)], start).unwrap_err();
        assert_eq!(wait, Duration::from_secs(2));
        assert_eq!(pacing.take(&[("T2", 40)], start), Ok(()));
        assert_eq!(
            pacing.take(&[("T1", 40)], start + Duration::from_secs(2)),
            Ok(())
        );
        assert!(pacing
            .take(&[("T1", 1)], start + Duration::from_secs(2))
            .is_err());
    }

    #[test]
    fn records_are_counted_per_serial() {
        assert_eq!(counts(["A", "B", "A"]), vec![("A", 2), ("B", 1)]);
    }
}
