//! A supervisor closes a device's open session from the site: for a
//! handheld that lost its storage (its queue and the session it had open
//! went with it, so it cannot send `close_session`), or one broken
//! mid-shift with its operator's session open. Until then the ledger's
//! one-open-session rule answers that device's, or that operator's, next
//! `open_session` with `SESSION_CONFLICT`.
//!
//! Closing here is what the handheld's own `close_session` does (the
//! session's mode settles a receive's GRN, closes a count), so a session
//! ends one way whoever ends it. What the device still sends for it
//! applies by when it was captured: a scan or undo captured before the
//! close lands (offline work), one captured after it is refused
//! `session_closed`, and its own `close_session` is refused
//! `session_already_closed`. The device learns of the close at its next
//! heartbeat (`closed_sessions`) and ends the session on its screen.

use crate::store::sql::{Connection, OptionalExtension};
use serde::Serialize;
use stockhop::time::UnixMs;

use super::devices;
use super::sessions::{self, SessionState};
use super::{codes, modes, LedgerError, Refusal};

/// How far back a heartbeat's answer tells its device of the sessions the
/// site closed, in ms: a day covers a handheld left off over a shift and
/// the next; one off longer has its session ended by the operator's next
/// scan, refused `session_closed`.
pub const CLOSED_SESSIONS_TOLD_MS: i64 = 24 * 3600 * 1000;

/// At most this many closed sessions in one heartbeat answer: a device has
/// one session open at a time, so a few cover every one it may still show.
pub const CLOSED_SESSIONS_TOLD_MAX: usize = 8;

/// The sessions of `device_id` the site closed lately, newest first, as a
/// heartbeat's answer tells them.
pub fn told_at_heartbeat(
    conn: &Connection,
    device_id: &str,
    now: UnixMs,
) -> crate::store::sql::Result<Vec<stockhop::wire::ClosedSession>> {
    sessions::closed_by_site_since(
        conn,
        device_id,
        UnixMs(now.0.saturating_sub(CLOSED_SESSIONS_TOLD_MS)),
        CLOSED_SESSIONS_TOLD_MAX,
    )
}

/// A device's open session, as the site's view and the admin API show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct OpenSession {
    pub session_id: String,
    pub operator_id: Option<String>,
    pub mode: Option<String>,
    /// When the handheld opened it (its clock).
    #[schema(value_type = Option<String>, format = DateTime)]
    pub opened_at: Option<UnixMs>,
}

/// The session `device_id` has open, if any.
pub fn open_of(
    conn: &Connection,
    device_id: &str,
) -> crate::store::sql::Result<Option<OpenSession>> {
    conn.prepare_cached(
        "SELECT session_id, operator_id, mode, opened_at FROM sessions
         WHERE device_id = ?1 AND state = 'open'",
    )?
    .query_row([device_id], |row| {
        Ok(OpenSession {
            session_id: row.get(0)?,
            operator_id: row.get(1)?,
            mode: row.get(2)?,
            opened_at: row.get::<_, Option<i64>>(3)?.map(UnixMs),
        })
    })
    .optional()
}

/// Closes the session `device_id` has open, at `now`, with its mode's
/// closing work, all or nothing; answers the session
/// closed. `404 DEVICE_NOT_FOUND` for no such device, `409
/// NO_OPEN_SESSION` when it has none open.
pub fn close_for_device(
    conn: &Connection,
    device_id: &str,
    now: UnixMs,
) -> Result<OpenSession, LedgerError> {
    let device = devices::find(conn, device_id)?;
    let open = open_of(conn, device_id)?.ok_or_else(|| {
        LedgerError::Refused(Refusal::new(
            409,
            codes::NO_OPEN_SESSION,
            format!("{device_id} has no session open"),
        ))
    })?;
    super::savepoint(conn, |conn| {
        let session = sessions::find(conn, &open.session_id)?
            .filter(|session| session.state == SessionState::Open)
            .ok_or_else(|| LedgerError::Corrupt(format!("session {} vanished", open.session_id)))?;
        sessions::close(conn, &session.session_id, now)?;
        sessions::mark_closed_by_site(conn, &session.session_id, now)?;
        modes::close(conn, &device, &session, now)?;
        Ok(open)
    })
}
