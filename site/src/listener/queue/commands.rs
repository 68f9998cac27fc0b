//! The commands kept for iclock terminals ([`crate::listener::command`]):
//! queued by the command line or the site's view, handed out in the
//! transaction that writes a heartbeat poll, settled in the one that
//! writes the terminal's `devicecmd` results.

use super::*;
use crate::listener::command::{
    attlog_query, BackfillError, CommandResult, CommandState, HandedOut, MAX_COMMANDS_PER_POLL,
    RESEND_AFTER,
};
use crate::listener::zone::TerminalZone;
use crate::terminal_wire::TerminalSource;

/// A heartbeat poll that may carry commands: its terminal and the zone
/// the listener reads that terminal's local times in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poll {
    pub serial: String,
    pub zone: TerminalZone,
}

/// A command as the command line and the view show it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct TerminalCommand {
    pub id: i64,
    /// The line after `C:<id>:`, as handed out (or as it will be).
    pub command: String,
    pub state: CommandState,
    /// The terminal's `Return` code, once it answered.
    #[serde(rename = "return", skip_serializing_if = "Option::is_none")]
    pub return_code: Option<i64>,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: UnixMs,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub sent_at: Option<UnixMs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub done_at: Option<UnixMs>,
}

/// Commands of one terminal listed at most, newest first: a terminal gets
/// a backfill after an outage, a few a month.
pub const MAX_COMMANDS_LISTED: usize = 200;

/// Queues a backfill of `serial`'s records captured from `from` to `to`,
/// at `now`. Refused for a reversed or empty range, for one that starts
/// after `now` (by more than a terminal's clock may run ahead), and for a
/// serial no
/// iclock terminal has polled the listener with; the range is written in
/// the zone the listener last read that terminal in (and rewritten on
/// hand-out, should the zone have changed since).
pub fn queue_backfill(
    conn: &mut Connection,
    serial: &str,
    from: UnixMs,
    to: UnixMs,
    now: UnixMs,
) -> Result<TerminalCommand, BackfillError> {
    if to <= from {
        return Err(BackfillError::Reversed {
            from: from.to_string(),
            to: to.to_string(),
        });
    }
    // A terminal's clock may run a little ahead of the site's.
    if from > now.plus(CLOCK_SKEW_MAX) {
        return Err(BackfillError::Ahead {
            from: from.to_string(),
            now: now.to_string(),
        });
    }
    let zone: Option<Option<String>> = conn
        .prepare_cached(
            "SELECT zone FROM listener_heartbeat WHERE device_serial = ?1 AND source = ?2",
        )
        .map_err(QueueError::from)?
        .query_row(params![serial, TerminalSource::Iclock.as_str()], |row| {
            row.get(0)
        })
        .optional()
        .map_err(QueueError::from)?;
    let Some(zone) = zone else {
        return Err(BackfillError::UnknownSerial(serial.to_owned()));
    };
    let zone = zone
        .and_then(|text| TerminalZone::parse(&text).ok())
        .unwrap_or_default();
    let command = attlog_query(from, to, &zone);
    let id: i64 = conn
        .prepare_cached(
            "INSERT INTO listener_commands (device_serial, from_at, to_at, command, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
        )
        .map_err(QueueError::from)?
        .query_row(params![serial, from.0, to.0, command, now.0], |row| {
            row.get(0)
        })
        .map_err(QueueError::from)?;
    Ok(TerminalCommand {
        id,
        command,
        state: CommandState::Pending,
        return_code: None,
        created_at: now,
        sent_at: None,
        done_at: None,
    })
}

/// `serial`'s commands, newest first, at most [`MAX_COMMANDS_LISTED`];
/// refused for a serial no iclock terminal has polled the listener with,
/// as a backfill is.
pub fn commands(conn: &Connection, serial: &str) -> Result<Vec<TerminalCommand>, BackfillError> {
    if !known_iclock_terminal(conn, serial)? {
        return Err(BackfillError::UnknownSerial(serial.to_owned()));
    }
    Ok(listed(conn, serial)?)
}

fn listed(conn: &Connection, serial: &str) -> Result<Vec<TerminalCommand>, QueueError> {
    let mut select = conn.prepare_cached(
        "SELECT id, command, state, return_code, created_at, sent_at, done_at
         FROM listener_commands WHERE device_serial = ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let rows = select.query_map(params![serial, MAX_COMMANDS_LISTED as i64], |row| {
        let state: String = row.get(2)?;
        Ok((
            state,
            TerminalCommand {
                id: row.get(0)?,
                command: row.get(1)?,
                state: CommandState::Pending,
                return_code: row.get(3)?,
                created_at: UnixMs(row.get(4)?),
                sent_at: row.get::<_, Option<i64>>(5)?.map(UnixMs),
                done_at: row.get::<_, Option<i64>>(6)?.map(UnixMs),
            },
        ))
    })?;
    rows.map(|row| {
        let (state, command) = row?;
        let state = CommandState::parse(&state).ok_or_else(|| QueueError::Row {
            seq: command.id,
            why: format!("command state {state:?}"),
        })?;
        Ok(TerminalCommand { state, ..command })
    })
    .collect()
}

/// Whether a terminal named `serial` has polled the listener over iclock.
pub fn known_iclock_terminal(conn: &Connection, serial: &str) -> Result<bool, QueueError> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM listener_heartbeat WHERE device_serial = ?1 AND source = ?2",
        )?
        .query_row(params![serial, TerminalSource::Iclock.as_str()], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Notes, in a write's transaction, the zone the listener reads
/// `serial`'s local times in (after its last-seen time is written).
pub(super) fn note_zone(tx: &Transaction<'_>, serial: &str, zone: &str) -> Result<(), QueueError> {
    tx.prepare_cached(
        "UPDATE listener_heartbeat SET zone = ?2 WHERE device_serial = ?1 AND zone IS NOT ?2",
    )?
    .execute(params![serial, zone])?;
    Ok(())
}

/// In the poll's transaction (whose write notes the terminal's zone):
/// hands out its commands still pending and those sent at least [`RESEND_AFTER`]
/// ago without an answer (oldest first, at most
/// [`MAX_COMMANDS_PER_POLL`]), each written in that zone and marked sent
/// at `now`.
pub(super) fn hand_out(
    tx: &Transaction<'_>,
    poll: &Poll,
    now: UnixMs,
) -> Result<Vec<HandedOut>, QueueError> {
    let resend_before = now.0 - RESEND_AFTER.0 as i64;
    let due = tx
        .prepare_cached(
            "SELECT id, from_at, to_at FROM listener_commands
             WHERE device_serial = ?1 AND state IN ('pending', 'sent')
               AND (state = 'pending' OR sent_at <= ?2)
             ORDER BY id LIMIT ?3",
        )?
        .query_map(
            params![poll.serial, resend_before, MAX_COMMANDS_PER_POLL as i64],
            |row| Ok((row.get::<_, i64>(0)?, row.get(1)?, row.get(2)?)),
        )?
        .collect::<rusqlite::Result<Vec<(i64, i64, i64)>>>()?;
    let mut sent = tx.prepare_cached(
        "UPDATE listener_commands SET state = 'sent', sent_at = ?2, command = ?3, sends = sends + 1
         WHERE id = ?1",
    )?;
    let mut out = Vec::with_capacity(due.len());
    for (id, from, to) in due {
        let command = attlog_query(UnixMs(from), UnixMs(to), &poll.zone);
        sent.execute(params![id, now.0, command])?;
        out.push(HandedOut { id, command });
    }
    Ok(out)
}

/// In the transaction that writes a `devicecmd` body: settles `serial`'s
/// commands that `results` answer (done or failed by their code, with the
/// code), once; results for commands the site did not hand this terminal
/// (another terminal's, or one still pending: never handed out) change
/// nothing.
pub(super) fn settle_results(
    tx: &Transaction<'_>,
    serial: &str,
    results: &[CommandResult],
    now: UnixMs,
) -> Result<(), QueueError> {
    let mut settle = tx.prepare_cached(
        "UPDATE listener_commands SET state = ?3, return_code = ?4, done_at = ?5
         WHERE id = ?1 AND device_serial = ?2 AND state = 'sent'",
    )?;
    for result in results {
        settle.execute(params![
            result.id,
            serial,
            CommandState::of_return(result.code).as_str(),
            result.code,
            now.0
        ])?;
    }
    Ok(())
}
