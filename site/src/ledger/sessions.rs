//! Capture sessions: who owns them, whether they are open, and the order
//! cursor (`next_seq`) that makes items apply in `client_seq` order.
//!
//! One open session per device and one per operator is the schema's job
//! (partial unique indexes); a violation comes back as `SESSION_CONFLICT`.

use crate::store::sql::{params, Connection, OptionalExtension};
use stockhop::time::UnixMs;
use stockhop::wire::OpenSessionBody;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    /// Known from an item, not opened yet.
    Pending,
    Open,
    Closed,
}

#[derive(Debug, Clone)]
pub struct Session {
    pub session_id: String,
    pub device_id: String,
    pub state: SessionState,
    pub next_seq: u64,
    /// The mode it was opened in (none while pending).
    pub mode: Option<String>,
    /// The `open_session` context, as stored JSON (none while pending).
    pub context: Option<String>,
    /// When the site closed it (Close session, `device close-session`), on
    /// the site's clock; `None` when its device closed it or it is open.
    pub site_closed_at: Option<UnixMs>,
}

pub fn find(conn: &Connection, session_id: &str) -> crate::store::sql::Result<Option<Session>> {
    conn.prepare_cached(
        "SELECT session_id, device_id, state, next_seq, mode, context, site_closed_at
         FROM sessions WHERE session_id = ?1",
    )?
    .query_row([session_id], from_row)
    .optional()
}

/// [`find`], and whether any slot at or past its cursor is taken (an item
/// buffered there, a void's own slot, a slot passed over by a void): while
/// none is, the cursor moves on without reading slots.
pub fn find_with_ahead(
    conn: &Connection,
    session_id: &str,
) -> crate::store::sql::Result<Option<(Session, bool)>> {
    conn.prepare_cached(
        // The highest slot taken, not "any slot past the cursor": a
        // session's greatest seq is one step down its index on both
        // engines, where PostgreSQL may plan the range as a scan of the
        // table when its statistics think the session small.
        "SELECT s.session_id, s.device_id, s.state, s.next_seq, s.mode, s.context,
                s.site_closed_at,
                COALESCE((SELECT max(r.client_seq) FROM receipts AS r
                          WHERE r.session_id = s.session_id), -1) >= s.next_seq
                OR COALESCE((SELECT max(v.seq) FROM seq_voids AS v
                             WHERE v.session_id = s.session_id), -1) >= s.next_seq
         FROM sessions AS s WHERE s.session_id = ?1",
    )?
    .query_row([session_id], |row| Ok((from_row(row)?, row.get(7)?)))
    .optional()
}

fn from_row(row: &crate::store::sql::Row<'_>) -> crate::store::sql::Result<Session> {
    let state: String = row.get(2)?;
    Ok(Session {
        session_id: row.get(0)?,
        device_id: row.get(1)?,
        state: match state.as_str() {
            "open" => SessionState::Open,
            "closed" => SessionState::Closed,
            _ => SessionState::Pending,
        },
        next_seq: row.get::<_, i64>(3)? as u64,
        mode: row.get(4)?,
        context: row.get(5)?,
        site_closed_at: row.get::<_, Option<i64>>(6)?.map(UnixMs),
    })
}

/// Records a session the ledger first hears of, owned by `device_id`.
pub fn insert_pending(
    conn: &Connection,
    session_id: &str,
    device_id: &str,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached(
        "INSERT INTO sessions (session_id, device_id, state) VALUES (?1, ?2, 'pending')",
    )?
    .execute([session_id, device_id])?;
    Ok(())
}

/// Opens a pending session.
pub fn open(
    conn: &Connection,
    session_id: &str,
    body: &OpenSessionBody,
    at: UnixMs,
) -> crate::store::sql::Result<()> {
    let context = serde_json::to_string(&body.context)
        .map_err(|err| crate::store::sql::Error::ToSqlConversionFailure(err.to_string()))?;
    conn.prepare_cached(
        "UPDATE sessions SET state = 'open', operator_id = ?2, mode = ?3, context = ?4,
                             opened_at = ?5
         WHERE session_id = ?1",
    )?
    .execute(params![
        session_id,
        body.operator_id,
        body.mode.as_str(),
        context,
        at.0
    ])?;
    Ok(())
}

pub fn close(conn: &Connection, session_id: &str, at: UnixMs) -> crate::store::sql::Result<()> {
    conn.prepare_cached(
        "UPDATE sessions SET state = 'closed', closed_at = ?2 WHERE session_id = ?1",
    )?
    .execute(params![session_id, at.0])?;
    Ok(())
}

/// Marks a session the site closed (its `closed_at` set by [`close`] in
/// the same transaction) as closed by the site at `at`: what its device
/// captures after that is refused `session_closed`.
pub fn mark_closed_by_site(
    conn: &Connection,
    session_id: &str,
    at: UnixMs,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached("UPDATE sessions SET site_closed_at = ?2 WHERE session_id = ?1")?
        .execute(params![session_id, at.0])?;
    Ok(())
}

/// The sessions of `device_id` the site closed at or after `since`,
/// newest first, at most `limit`: what its heartbeat answer tells it.
pub fn closed_by_site_since(
    conn: &Connection,
    device_id: &str,
    since: UnixMs,
    limit: usize,
) -> crate::store::sql::Result<Vec<stockhop::wire::ClosedSession>> {
    conn.prepare_cached(
        "SELECT session_id, site_closed_at FROM sessions
         WHERE device_id = ?1 AND site_closed_at >= ?2
         ORDER BY site_closed_at DESC LIMIT ?3",
    )?
    .query_map(params![device_id, since.0, limit as i64], |row| {
        Ok(stockhop::wire::ClosedSession {
            session_id: row.get(0)?,
            closed_at: UnixMs(row.get(1)?),
        })
    })?
    .collect()
}

pub fn set_next_seq(
    conn: &Connection,
    session_id: &str,
    next_seq: u64,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached("UPDATE sessions SET next_seq = ?2 WHERE session_id = ?1")?
        .execute(params![session_id, next_seq as i64])?;
    Ok(())
}

/// Marks `seq` passed over by a void sent in another slot.
pub fn void_seq(
    conn: &Connection,
    session_id: &str,
    seq: u64,
    void_key: &str,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached("INSERT INTO seq_voids (session_id, seq, void_key) VALUES (?1, ?2, ?3)")?
        .execute(params![session_id, seq as i64, void_key])?;
    Ok(())
}

pub fn is_voided(conn: &Connection, session_id: &str, seq: u64) -> crate::store::sql::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM seq_voids WHERE session_id = ?1 AND seq = ?2")?
        .exists(params![session_id, seq as i64])
}

/// What holds a slot of a session's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Empty,
    /// An item waiting for its turn.
    Buffered,
    /// An item that has its final answer.
    Done,
    /// Passed over by a void sent in another slot.
    Voided,
}

/// What holds `seq` in a session, in one query.
pub fn slot(conn: &Connection, session_id: &str, seq: u64) -> crate::store::sql::Result<Slot> {
    conn.prepare_cached(
        "SELECT (SELECT state FROM receipts WHERE session_id = ?1 AND client_seq = ?2),
                EXISTS (SELECT 1 FROM seq_voids WHERE session_id = ?1 AND seq = ?2)",
    )?
    .query_row(params![session_id, seq as i64], |row| {
        let state: Option<String> = row.get(0)?;
        let voided: bool = row.get(1)?;
        Ok(match state.as_deref() {
            Some("buffered") => Slot::Buffered,
            Some(_) => Slot::Done,
            None if voided => Slot::Voided,
            None => Slot::Empty,
        })
    })
}
