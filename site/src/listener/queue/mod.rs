//! The listener's durable queue in SQLite: the one place with the
//! listener's SQL.
//!
//! [`write()`] is the listener's only way in: one transaction (shared by
//! the requests that arrived together) that finds records already queued (a terminal resending what it was never
//! acknowledged for), judges the rest with the time rules, mints each new
//! record's idempotency key, inserts, and commits with `synchronous=FULL`;
//! the rules' windows move only after that commit. The forwarder reads
//! pending rows in FIFO order ([`pending_batch`]) and settles them in one
//! transaction ([`settle`]): the durable served record first, then the
//! queue rows marked done or dead, or a failed attempt counted. A row the
//! ledger kept failing is set aside: still pending, but out of
//! [`pending_batch`] and read alone by [`due_set_aside`] when its next
//! attempt falls due. Rows are never deleted during a drain; [`prune`]
//! removes them separately once they are forwarded and past the stale
//! horizon, keeping only each record's identity ([`seen`]), so a resend
//! is recognised long after its row is gone.

mod commands;
mod inspect;
mod seen;
mod write;

pub use self::{commands::*, inspect::*, seen::*, write::*};

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use stockhop::key::{IdempotencyKey, KeyError};
use stockhop::time::{Millis, UnixMs};

use super::rules::{
    Capture, RateKey, ReaderRates, Rules, Terminal, CLOCK_SKEW_MAX, RATE_WINDOW_MAX, STALE_AFTER,
};
use crate::limits::{RAW_RETENTION, RAW_ROWS_MAX};
use crate::store::db::DbError;
use crate::terminal_wire::{
    Repeat, RuleOutcome, TerminalEventKind, TerminalHeartbeat, TerminalRecord, TerminalSource,
};

/// How long a forwarded record's queue row stays, counted from its
/// capture: the rules rebuilt on start read rows this far back (the stale
/// limit, and the longest rate window behind it). Then the row, its raw
/// body with it, goes and only the record's identity stays
/// ([`SEEN_RETENTION`]); the ledger holds the record itself. Kept whole
/// for a week, as before, a row of some 500 bytes at 700 reads a second
/// would add some 30 GB a day at a portal.
pub const ROW_RETENTION: Millis = Millis(STALE_AFTER.0 + RATE_WINDOW_MAX.0);
/// How long served records stay, counted from their capture: the rules
/// rebuilt on start read them this far back and no further.
pub const SERVED_RETENTION: Millis = ROW_RETENTION;
/// The most rows one prune statement deletes or moves. A prune pass is a
/// turn at SQLite's one writer, and a handheld's sync that comes during it
/// waits for its end: at 500 a statement a turn holds the writer for tens
/// of milliseconds. At 5,000 a soak at ten portals' full rate saw syncs
/// wait hundreds (sync p99 443 ms against 136 before the first pass).
pub const PRUNE_ROWS_MAX: usize = 500;

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot mint an idempotency key: {0}")]
    Key(#[from] KeyError),
    #[error("queue writer: {0}")]
    Writer(String),
    #[error("queue row {seq} is unreadable: {why}")]
    Row { seq: i64, why: String },
}

/// A record as a listener read it, before it is judged and written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRecord {
    pub source: TerminalSource,
    pub kind: TerminalEventKind,
    pub capture: Capture,
    pub raw: Vec<u8>,
}

/// What a write did with each record, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteReport {
    /// `None` for a record that was already kept, queued or seen (its first
    /// verdict stands).
    pub outcomes: Vec<Option<RuleOutcome>>,
    /// The commands a heartbeat poll hands out, marked sent in the write.
    pub commands: Vec<crate::listener::command::HandedOut>,
}

/// Everything one terminal request hands the queue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Write {
    pub records: Vec<NewRecord>,
    /// Bodies kept raw beside the records (e.g. unreadable ATTLOG lines).
    pub raw: Vec<RawBody>,
    /// Terminals whose last-seen time this request moves.
    pub seen: Vec<(String, TerminalSource)>,
    /// A heartbeat poll, answered with the commands it hands out.
    pub poll: Option<Poll>,
    /// An iclock terminal and the zone the listener reads its local times
    /// in (as `TerminalZone` writes it), noted with its last-seen time: a
    /// backfill queued before its next poll is written in that zone from
    /// the start.
    pub zone: Option<(String, String)>,
    /// A terminal's answers to commands (`devicecmd`): its serial and
    /// the results, which settle the commands they name.
    pub results: Option<(String, Vec<crate::listener::command::CommandResult>)>,
}

/// A pending queue row on its way to the ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    pub seq: i64,
    pub record: TerminalRecord,
    pub event_id: String,
    /// Deliveries the ledger failed (5xx) for this record so far.
    pub attempts: u32,
    /// Whether it was set aside: out of the FIFO drain, retried alone at
    /// the slower cadence.
    pub set_aside: bool,
}

/// A repeat row forwards the last capture instant folded into it.
const QUEUED_COLUMNS: &str = "seq, key, source, device_serial, event_id, kind, subject, coalesce(last_repeat_at, occurred_at), queued_at, rule_outcome, raw, attempts, set_aside_at IS NOT NULL, repeat_of, repeat_number";

/// The oldest `limit` pending rows not set aside, in the order they were
/// written.
pub fn pending_batch(conn: &mut Connection, limit: usize) -> Result<Vec<Queued>, QueueError> {
    let mut select = conn.prepare_cached(&format!(
        "SELECT {QUEUED_COLUMNS} FROM listener_queue
         WHERE state = 'pending' AND set_aside_at IS NULL ORDER BY seq LIMIT ?1"
    ))?;
    let rows = select.query_map([limit as i64], queued_row)?;
    rows.map(|row| row?).collect()
}

/// Up to `limit` set-aside rows whose next attempt is due at `now`, the
/// longest-waiting first.
pub fn due_set_aside(
    conn: &mut Connection,
    now: UnixMs,
    limit: usize,
) -> Result<Vec<Queued>, QueueError> {
    let mut select = conn.prepare_cached(&format!(
        "SELECT {QUEUED_COLUMNS} FROM listener_queue
         WHERE state = 'pending' AND set_aside_at IS NOT NULL AND next_attempt_at <= ?1
         ORDER BY next_attempt_at, seq LIMIT ?2"
    ))?;
    let rows = select.query_map(params![now.0, limit as i64], queued_row)?;
    rows.map(|row| row?).collect()
}

/// When the next set-aside row falls due, if any is set aside.
pub fn next_set_aside_at(conn: &mut Connection) -> Result<Option<UnixMs>, QueueError> {
    let at: Option<i64> = conn
        .prepare_cached(
            "SELECT min(next_attempt_at) FROM listener_queue
             WHERE state = 'pending' AND set_aside_at IS NOT NULL",
        )?
        .query_row([], |row| row.get(0))?;
    Ok(at.map(UnixMs))
}

/// One row of [`QUEUED_COLUMNS`]; the outer error is SQLite's, the inner
/// one a stored value this build cannot read.
fn queued_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Result<Queued, QueueError>> {
    let seq: i64 = row.get(0)?;
    let key: String = row.get(1)?;
    let source: String = row.get(2)?;
    let kind: String = row.get(5)?;
    let outcome: String = row.get(9)?;
    let raw: Vec<u8> = row.get(10)?;
    let attempts: i64 = row.get(11)?;
    let repeat_of: Option<String> = row.get(13)?;
    let repeat_number: Option<i64> = row.get(14)?;
    let bad = |why: &str| QueueError::Row {
        seq,
        why: why.to_owned(),
    };
    let read = || -> Result<Queued, QueueError> {
        let repeat = match (repeat_of, repeat_number) {
            (Some(of), Some(number)) => Some(Repeat {
                of: IdempotencyKey::parse(&of).map_err(|_| bad("repeat_of"))?,
                number: u32::try_from(number).map_err(|_| bad("repeat_number"))?,
            }),
            _ => None,
        };
        Ok(Queued {
            seq,
            event_id: row.get(4)?,
            attempts: u32::try_from(attempts).map_err(|_| bad("attempts"))?,
            set_aside: row.get(12)?,
            record: TerminalRecord {
                key: IdempotencyKey::parse(&key).map_err(|_| bad("key"))?,
                source: TerminalSource::parse(&source).ok_or_else(|| bad("source"))?,
                device_serial: row.get(3)?,
                kind: TerminalEventKind::parse(&kind).ok_or_else(|| bad("kind"))?,
                subject: row.get(6)?,
                occurred_at: UnixMs(row.get(7)?),
                queued_at: UnixMs(row.get(8)?),
                rule_outcome: RuleOutcome::parse(&outcome).ok_or_else(|| bad("rule_outcome"))?,
                // The wire carries text; the queue keeps the exact bytes.
                raw: String::from_utf8_lossy(&raw).into_owned(),
                repeat,
            },
        })
    };
    Ok(read())
}

/// A terminal's last-seen time is forwarded again only once it has moved
/// this far: heartbeat polls come every few seconds, and the shortest
/// offline threshold on the dashboard is a minute.
pub const HEARTBEAT_FORWARD_STEP: Millis = Millis::from_secs(15);

/// Last-seen times the ledger has not taken yet (first ones, and ones that
/// moved at least [`HEARTBEAT_FORWARD_STEP`]).
pub fn pending_heartbeats(conn: &mut Connection) -> Result<Vec<TerminalHeartbeat>, QueueError> {
    let mut select = conn.prepare_cached(
        "SELECT device_serial, source, seen_at FROM listener_heartbeat
         WHERE forwarded_seen_at IS NULL OR seen_at >= forwarded_seen_at + ?1
         ORDER BY device_serial",
    )?;
    let rows = select.query_map([HEARTBEAT_FORWARD_STEP.0 as i64], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, i64>(2)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (device_serial, source, seen_at) = row?;
        if let Some(source) = TerminalSource::parse(&source) {
            out.push(TerminalHeartbeat {
                device_serial,
                source,
                seen_at: UnixMs(seen_at),
            });
        }
    }
    Ok(out)
}

/// How the ledger settled a delivered row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// Recorded (or already recorded): mark done, remember it if accepted.
    Done,
    /// Refused for good: kept as a dead letter with the ledger's answer.
    Dead { status: u16, body: String },
    /// The ledger failed this very record (a 5xx): one more attempt is
    /// counted with its `error`. With `set_aside_for` the row is (or stays)
    /// set aside and is tried again that long from now.
    Failed {
        error: String,
        set_aside_for: Option<Millis>,
    },
}

/// Settles delivered rows in one durable transaction: served records
/// first, then the queue rows, then the forwarded heartbeats.
pub fn settle(
    conn: &mut Connection,
    now: UnixMs,
    rows: &[(&Queued, Settled)],
    heartbeats: &[TerminalHeartbeat],
) -> Result<(), QueueError> {
    let tx = conn.transaction()?;
    {
        let mut served = tx.prepare_cached(
            "INSERT OR IGNORE INTO listener_served (device_serial, event_id, subject, occurred_at, served_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        // A repeat row that had another repeat folded into it while it was
        // on its way stays pending, to forward the larger number.
        let mut done = tx.prepare_cached(
            "UPDATE listener_queue SET state = 'done', done_at = ?2
             WHERE seq = ?1 AND state = 'pending' AND repeat_number IS ?3",
        )?;
        let mut dead = tx.prepare_cached(
            "UPDATE listener_queue SET state = 'dead', done_at = ?2, dead_status = ?3, dead_body = ?4
             WHERE seq = ?1 AND state = 'pending'",
        )?;
        let mut failed = tx.prepare_cached(
            "UPDATE listener_queue SET attempts = attempts + 1, last_error = ?2, last_attempt_at = ?3,
                    set_aside_at = CASE WHEN ?4 IS NULL THEN set_aside_at ELSE coalesce(set_aside_at, ?3) END,
                    next_attempt_at = ?4
             WHERE seq = ?1 AND state = 'pending'",
        )?;
        for (queued, settled) in rows {
            let r = &queued.record;
            match settled {
                Settled::Done => {
                    if r.rule_outcome == RuleOutcome::Accepted {
                        served.execute(params![
                            r.device_serial,
                            queued.event_id,
                            r.subject,
                            r.occurred_at.0,
                            now.0
                        ])?;
                    }
                    let number = r.repeat.map(|repeat| i64::from(repeat.number));
                    done.execute(params![queued.seq, now.0, number])?;
                }
                Settled::Dead { status, body } => {
                    dead.execute(params![queued.seq, now.0, status, body])?;
                }
                Settled::Failed {
                    error,
                    set_aside_for,
                } => {
                    let next = set_aside_for.map(|wait| now.plus(wait).0);
                    failed.execute(params![queued.seq, error, now.0, next])?;
                }
            }
        }
        let mut forwarded = tx.prepare_cached(
            "UPDATE listener_heartbeat SET forwarded_seen_at = ?2 WHERE device_serial = ?1",
        )?;
        for beat in heartbeats {
            forwarded.execute(params![beat.device_serial, beat.seen_at.0])?;
        }
    }
    crate::store::writer::commit_timed(tx)?;
    Ok(())
}

/// Deletes forwarded rows past the horizon, keeping each record's
/// identity ([`seen`]); identities captured before `now −
/// SEEN_RETENTION` ([`prune_keeping`] for another); served records captured before `now −
/// SERVED_RETENTION`; and raw bodies received before `now −
/// RAW_RETENTION` or beyond the newest [`RAW_ROWS_MAX`]: each a bounded
/// number at a time. Dead letters stay until someone deals with them.
pub fn prune(conn: &mut Connection, now: UnixMs) -> Result<usize, QueueError> {
    prune_keeping(conn, now, SEEN_RETENTION)
}

/// [`prune`], with identities kept `seen_retention` of capture time
/// instead of [`SEEN_RETENTION`] (the listener's `seen_retention_minutes`).
pub fn prune_keeping(
    conn: &mut Connection,
    now: UnixMs,
    seen_retention: Millis,
) -> Result<usize, QueueError> {
    let served_before = now.0 - SERVED_RETENTION.0 as i64;
    let tx = conn.transaction()?;
    let mut removed = compact(&tx, now, seen_retention)?;
    removed += forget(&tx, now, seen_retention)?;
    removed += forget_folded(&tx, now)?;
    removed += tx.execute(
        "DELETE FROM listener_served WHERE rowid IN
           (SELECT rowid FROM listener_served WHERE occurred_at < ?1 LIMIT ?2)",
        params![served_before, PRUNE_ROWS_MAX as i64],
    )?;
    // Raw bodies arrive in id order, so the oldest are the first ids: the
    // scan stops at the first young one without an index on received_at.
    let raw_before = now.0 - RAW_RETENTION.0 as i64;
    removed += tx.execute(
        "DELETE FROM listener_raw WHERE id IN
           (SELECT id FROM listener_raw
            WHERE received_at < ?1 OR id <= (SELECT max(id) FROM listener_raw) - ?3
            ORDER BY id LIMIT ?2)",
        params![raw_before, PRUNE_ROWS_MAX as i64, RAW_ROWS_MAX],
    )?;
    crate::store::writer::commit_timed(tx)?;
    Ok(removed)
}

/// Rebuilds the rules' windows on start: the duplicate window from the
/// served record and from accepted rows still queued, the rate budget from
/// rows captured recently enough to matter.
/// The peer addresses of terminal `port` that have had a valid record or
/// request written, kept so a restart still knows them
/// ([`super::KnownPeers`]; at most [`crate::limits::MAX_KNOWN_PEERS`] a
/// port, which bounds the table).
pub fn known_peers(conn: &Connection, port: &str) -> Result<Vec<String>, QueueError> {
    let mut select = conn.prepare_cached(
        "SELECT addr FROM listener_known_peers WHERE port = ?1 ORDER BY first_at LIMIT ?2",
    )?;
    let addrs = select
        .query_map(
            params![port, crate::limits::MAX_KNOWN_PEERS as i64],
            |row| row.get(0),
        )?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(addrs)
}

/// Keeps `addr` as a known peer of `port` from `now`.
pub fn remember_peer(
    conn: &Connection,
    port: &str,
    addr: &str,
    now: UnixMs,
) -> Result<(), QueueError> {
    conn.prepare_cached(
        "INSERT INTO listener_known_peers (port, addr, first_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (port, addr) DO NOTHING",
    )?
    .execute(params![port, addr, now.0])?;
    Ok(())
}

pub fn load_rules(
    conn: &mut Connection,
    now: UnixMs,
    readers: ReaderRates,
) -> Result<Rules, QueueError> {
    let mut rules = Rules::new(readers);
    let horizon = now.0 - ROW_RETENTION.0 as i64;
    let mut served = conn.prepare(
        "SELECT device_serial, subject, event_id, occurred_at FROM listener_served
         WHERE occurred_at >= ?1
         UNION ALL
         SELECT device_serial, subject, event_id, occurred_at FROM listener_queue
         WHERE state = 'pending' AND rule_outcome = 'accepted' AND occurred_at >= ?1",
    )?;
    let rows = served.query_map([horizon], |row| {
        Ok(Capture {
            device: row.get(0)?,
            subject: row.get(1)?,
            event_id: row.get(2)?,
            occurred_at: UnixMs(row.get(3)?),
        })
    })?;
    for capture in rows {
        rules.remember(capture?);
    }
    let mut spent = conn.prepare(
        "SELECT device_serial, kind, subject, occurred_at FROM listener_queue
         WHERE rule_outcome IN ('accepted', 'duplicate') AND occurred_at >= ?1
         UNION ALL
         SELECT device_serial, kind, subject, occurred_at FROM listener_repeat
         WHERE occurred_at >= ?1",
    )?;
    let rows = spent.query_map([horizon], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            UnixMs(row.get(3)?),
        ))
    })?;
    for row in rows {
        let (device, kind, subject, at) = row?;
        let budget = match TerminalEventKind::parse(&kind).map(terminal_of) {
            Some(Terminal::RfidReader) => RateKey::Tag {
                device,
                tag: subject,
            },
            _ => RateKey::Device(device),
        };
        rules.spend(budget, at);
    }
    Ok(rules)
}

#[cfg(test)]
mod tests;
