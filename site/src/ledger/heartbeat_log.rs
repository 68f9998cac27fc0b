//! Every handheld heartbeat, kept for a bounded window: the site's view
//! draws its queue-depth chart and reads its trend from them
//! (`crate::view::history`). The ledger writes them beside the latest-only
//! `device_heartbeats` row, in the same call.

use crate::store::sql::{params, Connection};
use stockhop::time::UnixMs;
use stockhop::wire::Heartbeat;

/// The longest series the site's view draws: a day, two shifts.
pub const MAX_SERIES_HOURS: u32 = 24;

/// How long heartbeats are kept: the longest series plus an hour (more than
/// the longest heartbeat period, an rfd40's 30 min), so the chart's first
/// bucket still knows every device's depth. Each device's latest heartbeat
/// stays however old, so the table holds at most this window's heartbeats
/// and one row per device.
pub const HEARTBEAT_KEEP_MS: i64 = (MAX_SERIES_HOURS as i64 + 1) * 60 * 60 * 1000;

/// Logs a handheld heartbeat received at `now` and prunes heartbeats past
/// [`HEARTBEAT_KEEP_MS`] (each device's latest stays).
pub fn record(
    conn: &Connection,
    device_id: &str,
    beat: &Heartbeat,
    now: UnixMs,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached(
        "INSERT INTO heartbeat_log (device_id, at, queue_depth, oldest_queued_at)
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        device_id,
        now.0,
        i64::try_from(beat.queue_depth).unwrap_or(i64::MAX),
        beat.oldest_queued_at.map(|t| t.0),
    ])?;
    prune(conn, now)?;
    Ok(())
}

/// Removes heartbeats older than [`HEARTBEAT_KEEP_MS`] that a newer one of
/// the same device supersedes; returns how many.
pub fn prune(conn: &Connection, now: UnixMs) -> crate::store::sql::Result<usize> {
    conn.prepare_cached(
        "DELETE FROM heartbeat_log
         WHERE at < ?1
           AND EXISTS (SELECT 1 FROM heartbeat_log newer
                       WHERE newer.device_id = heartbeat_log.device_id
                         AND newer.at > heartbeat_log.at)",
    )?
    .execute([now.0.saturating_sub(HEARTBEAT_KEEP_MS)])
}

/// Forgets a device's heartbeats (it was revoked).
pub fn forget(conn: &Connection, device_id: &str) -> crate::store::sql::Result<()> {
    conn.execute(
        "DELETE FROM heartbeat_log WHERE device_id = ?1",
        [device_id],
    )?;
    Ok(())
}
