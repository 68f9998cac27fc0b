//! Closed periods. Closing a period fixes everything booked before its end;
//! a hop whose capture time falls inside a closed period is booked at the
//! start of the open period, and keeps its original `occurred_at`.

use crate::store::sql::{params, Connection};
use stockhop::time::UnixMs;

use super::{codes, LedgerError, Refusal};

/// The end of the last closed period (the start of the open one), if any
/// period was closed.
pub fn closed_until(conn: &Connection) -> crate::store::sql::Result<Option<UnixMs>> {
    conn.prepare_cached("SELECT max(closed_until) FROM periods")?
        .query_row([], |row| row.get::<_, Option<i64>>(0))
        .map(|until| until.map(UnixMs))
}

/// When a hop captured at `occurred_at` is booked, given the end of the
/// last closed period ([`closed_until`], read once per transaction: the
/// write lock keeps it from changing meanwhile).
pub fn booking_time(closed_until: Option<UnixMs>, occurred_at: UnixMs) -> UnixMs {
    match closed_until {
        Some(until) if occurred_at < until => until,
        _ => occurred_at,
    }
}

/// Closes the books up to `until`, which must be later than the last close
/// and no later than `now`: a period closes once it has ended. Closing one
/// that has not (a year typed wrong) would book every hop captured until
/// then at its end, and a close is never taken back.
pub fn close(conn: &Connection, until: UnixMs, now: UnixMs) -> Result<(), LedgerError> {
    if until > now {
        return Err(LedgerError::Refused(Refusal::new(
            409,
            codes::PERIOD_NOT_ENDED,
            format!(
                "{until} is after the site's clock, {now}: the books close only up to an \
                 instant that has passed"
            ),
        )));
    }
    if let Some(current) = closed_until(conn)? {
        if until <= current {
            return Err(LedgerError::Refused(Refusal::new(
                409,
                codes::PERIOD_NOT_LATER,
                format!("the books are already closed until {current}"),
            )));
        }
    }
    conn.execute(
        "INSERT INTO periods (closed_until, closed_at) VALUES (?1, ?2)",
        params![until.0, now.0],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hop_inside_a_closed_period_is_booked_at_its_end() {
        let until = UnixMs(1_000);
        assert_eq!(booking_time(Some(until), UnixMs(999)), until);
        assert_eq!(booking_time(Some(until), UnixMs(1_000)), UnixMs(1_000));
        assert_eq!(booking_time(Some(until), UnixMs(5_000)), UnixMs(5_000));
        assert_eq!(booking_time(None, UnixMs(5)), UnixMs(5));
    }
}
