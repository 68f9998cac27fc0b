//! What the site's view and the operators read of the queue: rows by
//! state, dead letters, rows set aside, and a dead letter sent again.

use super::*;

/// Rows by state, for the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Every row still to be delivered, set-aside ones included.
    pub pending: usize,
    pub dead: usize,
    /// The pending rows that are set aside.
    pub set_aside: usize,
}

/// The rows still to be delivered, set aside and dead. Each count reads a
/// partial index of its own state, never the forwarded rows, which at a
/// portal's rate are millions until they are pruned.
pub fn counts(conn: &mut Connection) -> Result<Counts, QueueError> {
    let count = |sql: &str| -> Result<usize, QueueError> {
        let n: i64 = conn.prepare_cached(sql)?.query_row([], |row| row.get(0))?;
        Ok(usize::try_from(n).unwrap_or(0))
    };
    Ok(Counts {
        pending: count("SELECT count(*) FROM listener_queue WHERE state = 'pending'")?,
        dead: count("SELECT count(*) FROM listener_queue WHERE state = 'dead'")?,
        set_aside: count(
            "SELECT count(*) FROM listener_queue WHERE state = 'pending' AND set_aside_at IS NOT NULL",
        )?,
    })
}

/// The forwarded rows not pruned yet (a scan of their index: for tests and
/// the operator's commands, not for a page that polls).
pub fn done_count(conn: &mut Connection) -> Result<usize, QueueError> {
    let n: i64 = conn
        .prepare_cached("SELECT count(*) FROM listener_queue WHERE state = 'done'")?
        .query_row([], |row| row.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// A record the ledger refused for good, with its answer, for the dashboard.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct DeadLetter {
    pub seq: i64,
    pub device_serial: String,
    pub kind: String,
    pub subject: String,
    #[schema(value_type = String, format = DateTime)]
    pub queued_at: UnixMs,
    pub status: Option<i64>,
    pub body: Option<String>,
}

/// The newest `limit` dead letters, newest first.
pub fn dead_letters(conn: &Connection, limit: usize) -> Result<Vec<DeadLetter>, QueueError> {
    let mut select = conn.prepare_cached(
        "SELECT seq, device_serial, kind, subject, queued_at, dead_status, dead_body
         FROM listener_queue WHERE state = 'dead' ORDER BY seq DESC LIMIT ?1",
    )?;
    let rows = select.query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |row| {
        Ok(DeadLetter {
            seq: row.get(0)?,
            device_serial: row.get(1)?,
            kind: row.get(2)?,
            subject: row.get(3)?,
            queued_at: UnixMs(row.get(4)?),
            status: row.get(5)?,
            body: row.get(6)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// A record set aside because the ledger kept failing it, for the
/// dashboard: still queued, with its attempts and the last failure.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct SetAside {
    pub seq: i64,
    pub device_serial: String,
    pub kind: String,
    pub subject: String,
    #[schema(value_type = String, format = DateTime)]
    pub queued_at: UnixMs,
    pub attempts: i64,
    pub last_error: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_attempt_at: Option<UnixMs>,
    #[schema(value_type = String, format = DateTime)]
    pub set_aside_at: UnixMs,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_attempt_at: Option<UnixMs>,
}

/// The oldest `limit` set-aside records, oldest first.
pub fn set_aside(conn: &Connection, limit: usize) -> Result<Vec<SetAside>, QueueError> {
    let mut select = conn.prepare_cached(
        "SELECT seq, device_serial, kind, subject, queued_at, attempts, last_error,
                last_attempt_at, set_aside_at, next_attempt_at
         FROM listener_queue WHERE state = 'pending' AND set_aside_at IS NOT NULL
         ORDER BY seq LIMIT ?1",
    )?;
    let rows = select.query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |row| {
        Ok(SetAside {
            seq: row.get(0)?,
            device_serial: row.get(1)?,
            kind: row.get(2)?,
            subject: row.get(3)?,
            queued_at: UnixMs(row.get(4)?),
            attempts: row.get(5)?,
            last_error: row.get(6)?,
            last_attempt_at: row.get::<_, Option<i64>>(7)?.map(UnixMs),
            set_aside_at: UnixMs(row.get(8)?),
            next_attempt_at: row.get::<_, Option<i64>>(9)?.map(UnixMs),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Puts a dead letter back in the queue, so the forwarder sends it to the
/// ledger again (a person fixed what refused it), with its attempts
/// counted afresh and in its place in the FIFO drain. Returns whether
/// `seq` was a dead letter.
pub fn requeue_dead(conn: &Connection, seq: i64) -> Result<bool, QueueError> {
    let changed = conn.execute(
        "UPDATE listener_queue SET state = 'pending', done_at = NULL, dead_status = NULL,
                                   dead_body = NULL, attempts = 0, set_aside_at = NULL,
                                   next_attempt_at = NULL
         WHERE seq = ?1 AND state = 'dead'",
        [seq],
    )?;
    Ok(changed == 1)
}
