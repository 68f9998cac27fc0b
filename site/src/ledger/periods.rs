//! Closed periods. Closing a period fixes everything booked before its end;
//! a hop whose capture time falls inside a closed period is booked at the
//! start of the open period, and keeps its original `occurred_at`.

use rusqlite::{params, Connection};
use stockhop::time::UnixMs;

use super::{codes, LedgerError, Refusal};

/// The end of the last closed period (the start of the open one), if any
/// period was closed.
pub fn closed_until(conn: &Connection) -> rusqlite::Result<Option<UnixMs>> {
    conn.prepare_cached("SELECT max(closed_until) FROM periods")?
        .query_row([], |row| row.get::<_, Option<i64>>(0))
        .map(|until| until.map(UnixMs))
}

/// When a hop captured at `occurred_at` is booked.
pub fn booking_time(conn: &Connection, occurred_at: UnixMs) -> rusqlite::Result<UnixMs> {
    Ok(match closed_until(conn)? {
        Some(until) if occurred_at < until => until,
        _ => occurred_at,
    })
}

/// Closes the books up to `until`, which must be later than the last close.
pub fn close(conn: &Connection, until: UnixMs, now: UnixMs) -> Result<(), LedgerError> {
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
