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
//! removes old done rows separately.

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use stockhop::key::{IdempotencyKey, KeyError};
use stockhop::time::{Millis, UnixMs};

use super::rules::{Capture, RateKey, ReaderRates, Rules, Terminal, RATE_WINDOW_MAX, STALE_AFTER};
use crate::db::DbError;
use crate::limits::{RAW_RETENTION, RAW_ROWS_MAX};
use crate::terminal_wire::{
    Repeat, RuleOutcome, TerminalEventKind, TerminalHeartbeat, TerminalRecord, TerminalSource,
};

/// How long done rows stay for audit before the prune pass removes them.
pub const DONE_RETENTION: Millis = Millis::from_secs(7 * 24 * 3600);
/// How long served records stay: only captures inside the stale horizon
/// can ever be compared with them, so an hour is ample.
pub const SERVED_RETENTION: Millis = Millis::from_secs(3600);
/// How long a forwarded repeat's row stays (a duplicate the ledger has
/// taken), counted from its capture: a resend of its frame is judged anew
/// only once the row is gone, and by then it is stale (3 min), so it counts
/// nothing twice; and the rate budgets rebuilt on start read rows this far
/// back. The ledger keeps the repeat only as its record's count, so the row
/// is not kept for audit: at 700 reads a second, about 500 bytes a row, a
/// portal would add some 30 GB a day.
pub const REPEAT_RETENTION: Millis = Millis(STALE_AFTER.0 + RATE_WINDOW_MAX.0);
/// The most rows one prune statement deletes, so the write lock is never
/// held long while terminals are waiting for their acks.
pub const PRUNE_ROWS_MAX: usize = 5_000;

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
    /// `None` for a record that was already queued (its first verdict stands).
    pub outcomes: Vec<Option<RuleOutcome>>,
}

/// Everything one terminal request hands the queue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Write {
    pub records: Vec<NewRecord>,
    /// Bodies kept raw beside the records (e.g. unreadable ATTLOG lines).
    pub raw: Vec<RawBody>,
    /// Terminals whose last-seen time this request moves.
    pub seen: Vec<(String, TerminalSource)>,
}

/// Writes requests received at `queued_at` in one durable transaction
/// (several requests share one commit when they arrive together). Either
/// all of them are durable when this returns `Ok`, or none is and the rules
/// are unchanged.
pub fn write(
    conn: &mut Connection,
    rules: &mut Rules,
    queued_at: UnixMs,
    writes: &[Write],
) -> Result<Vec<WriteReport>, QueueError> {
    write_keyed(conn, rules, queued_at, writes, &mut IdempotencyKey::mint)
}

/// [`write`], each new record's key from `mint`: the simulation's seeded
/// keys, so a seed replays exactly.
pub fn write_keyed(
    conn: &mut Connection,
    rules: &mut Rules,
    queued_at: UnixMs,
    writes: &[Write],
    mint: &mut dyn FnMut() -> Result<IdempotencyKey, KeyError>,
) -> Result<Vec<WriteReport>, QueueError> {
    let tx = conn.transaction()?;
    // (write, record) of every record not queued before, in arrival order.
    let mut fresh: Vec<(usize, usize)> = Vec::new();
    let mut reports: Vec<WriteReport> = writes
        .iter()
        .map(|w| WriteReport {
            outcomes: vec![None; w.records.len()],
        })
        .collect();
    {
        let mut find = tx.prepare_cached(
            "SELECT 1 FROM listener_queue WHERE device_serial = ?1 AND event_id = ?2",
        )?;
        let mut in_this_commit: HashMap<(&str, &str), ()> = HashMap::new();
        for (w, write) in writes.iter().enumerate() {
            for (i, record) in write.records.iter().enumerate() {
                let c = &record.capture;
                let queued = find
                    .query_row(params![c.device, c.event_id], |_| Ok(()))
                    .optional()?
                    .is_some();
                let repeated = in_this_commit
                    .insert((c.device.as_str(), c.event_id.as_str()), ())
                    .is_some();
                if !queued && !repeated {
                    fresh.push((w, i));
                }
            }
        }
    }
    let captures: Vec<(Terminal, &Capture)> = fresh
        .iter()
        .map(|&(w, i)| {
            let record = &writes[w].records[i];
            (terminal_of(record.kind), &record.capture)
        })
        .collect();
    let judgement = rules.judge(queued_at, &captures);
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO listener_queue
               (key, source, device_serial, event_id, kind, subject, occurred_at, queued_at, rule_outcome, raw,
                repeat_of, repeat_number)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?;
        // A duplicate counts one more repeat on the accepted row it repeats
        // (written earlier in this transaction or before), and takes that
        // row's key and the new count with it to the ledger.
        let mut count_repeat = tx.prepare_cached(
            "UPDATE listener_queue SET repeats = repeats + 1
             WHERE device_serial = ?1 AND event_id = ?2 AND rule_outcome = 'accepted'
             RETURNING key, repeats",
        )?;
        for (n, (&(w, i), &outcome)) in fresh.iter().zip(&judgement.outcomes).enumerate() {
            let record = &writes[w].records[i];
            let c = &record.capture;
            let repeat: Option<(String, i64)> = match judgement.repeats.get(&n) {
                Some(event_id) => count_repeat
                    .query_row(params![c.device, event_id], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })
                    .optional()?,
                None => None,
            };
            let (repeat_of, repeat_number) = repeat.unzip();
            insert.execute(params![
                mint()?.to_string(),
                record.source.as_str(),
                c.device,
                c.event_id,
                record.kind.as_str(),
                c.subject,
                c.occurred_at.0,
                queued_at.0,
                outcome.as_str(),
                record.raw,
                repeat_of,
                repeat_number,
            ])?;
            reports[w].outcomes[i] = Some(outcome);
        }
    }
    for write in writes {
        insert_raw(&tx, queued_at, &write.raw)?;
        for (device, source) in &write.seen {
            touch(&tx, device, *source, queued_at)?;
        }
    }
    tx.commit()?;
    rules.commit(judgement);
    Ok(reports)
}

/// Which rate limit a record's kind falls under: tag reads come from RFID
/// readers, everything else from terminals people stand at.
fn terminal_of(kind: TerminalEventKind) -> Terminal {
    match kind {
        TerminalEventKind::TagRead => Terminal::RfidReader,
        TerminalEventKind::Attendance | TerminalEventKind::CodeRead => Terminal::Attendance,
    }
}

fn touch(
    tx: &Transaction<'_>,
    device: &str,
    source: TerminalSource,
    seen_at: UnixMs,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO listener_heartbeat (device_serial, source, seen_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (device_serial) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at),
           source = excluded.source",
    )?
    .execute(params![device, source.as_str(), seen_at.0])?;
    Ok(())
}

/// A request body kept as it came (OPERLOG, ATTPHOTO, options, command
/// results, unreadable ATTLOG lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBody {
    pub device: String,
    pub kind: String,
    pub query: String,
    pub body: Vec<u8>,
    pub reason: Option<String>,
}

fn insert_raw(
    tx: &Transaction<'_>,
    received_at: UnixMs,
    bodies: &[RawBody],
) -> rusqlite::Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO listener_raw (device_serial, kind, query, body, reason, received_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for raw in bodies {
        insert.execute(params![
            raw.device,
            raw.kind,
            raw.query,
            raw.body,
            raw.reason,
            received_at.0
        ])?;
    }
    Ok(())
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

const QUEUED_COLUMNS: &str = "seq, key, source, device_serial, event_id, kind, subject, occurred_at, queued_at, rule_outcome, raw, attempts, set_aside_at IS NOT NULL, repeat_of, repeat_number";

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
        let mut done = tx.prepare_cached(
            "UPDATE listener_queue SET state = 'done', done_at = ?2 WHERE seq = ?1 AND state = 'pending'",
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
                    done.execute(params![queued.seq, now.0])?;
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
    tx.commit()?;
    Ok(())
}

/// Deletes done rows settled before `now − DONE_RETENTION`, done repeats
/// (duplicates) captured before `now − REPEAT_RETENTION`,
/// served records older than `now − SERVED_RETENTION`, and raw bodies
/// received before `now − RAW_RETENTION` or beyond the newest
/// [`RAW_ROWS_MAX`], a bounded number at a time. Dead letters stay until
/// someone deals with them.
pub fn prune(conn: &mut Connection, now: UnixMs) -> Result<usize, QueueError> {
    let done_before = now.0 - DONE_RETENTION.0 as i64;
    let repeats_before = now.0 - REPEAT_RETENTION.0 as i64;
    let served_before = now.0 - SERVED_RETENTION.0 as i64;
    let tx = conn.transaction()?;
    let mut removed = tx.execute(
        "DELETE FROM listener_queue WHERE seq IN
           (SELECT seq FROM listener_queue WHERE state = 'done' AND done_at < ?1 LIMIT ?2)",
        params![done_before, PRUNE_ROWS_MAX as i64],
    )?;
    removed += tx.execute(
        "DELETE FROM listener_queue WHERE seq IN
           (SELECT seq FROM listener_queue INDEXED BY listener_queue_repeats_done
            WHERE state = 'done' AND rule_outcome = 'duplicate' AND occurred_at < ?1
            LIMIT ?2)",
        params![repeats_before, PRUNE_ROWS_MAX as i64],
    )?;
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
    tx.commit()?;
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
    let horizon = now.0 - (STALE_AFTER.0 + RATE_WINDOW_MAX.0) as i64;
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
         WHERE rule_outcome IN ('accepted', 'duplicate') AND occurred_at >= ?1",
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

/// Rows by state, for the dashboard and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Every row still to be delivered, set-aside ones included.
    pub pending: usize,
    pub done: usize,
    pub dead: usize,
    /// The pending rows that are set aside.
    pub set_aside: usize,
}

pub fn counts(conn: &mut Connection) -> Result<Counts, QueueError> {
    let mut counts = Counts::default();
    let mut select =
        conn.prepare_cached("SELECT state, count(*) FROM listener_queue GROUP BY state")?;
    let rows = select.query_map([], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
    })?;
    for row in rows {
        let (state, n) = row?;
        let n = n as usize;
        match state.as_str() {
            "pending" => counts.pending = n,
            "done" => counts.done = n,
            _ => counts.dead = n,
        }
    }
    counts.set_aside = conn
        .prepare_cached(
            "SELECT count(*) FROM listener_queue WHERE state = 'pending' AND set_aside_at IS NOT NULL",
        )?
        .query_row([], |row| row.get::<_, i64>(0))? as usize;
    Ok(counts)
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

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: UnixMs = UnixMs(1_800_000_000_000);

    fn readers() -> ReaderRates {
        ReaderRates {
            per_reader: HashMap::new(),
            default_reads_per_sec: 700,
        }
    }

    fn record(event_id: &str, subject: &str, secs_ago: i64) -> NewRecord {
        NewRecord {
            source: TerminalSource::Framed,
            kind: TerminalEventKind::Attendance,
            capture: Capture {
                device: "D1".to_owned(),
                subject: subject.to_owned(),
                event_id: event_id.to_owned(),
                occurred_at: UnixMs(NOW.0 - secs_ago * 1000),
            },
            raw: b"{}".to_vec(),
        }
    }

    /// A database with `records` written at NOW from device D1.
    fn check(records: Vec<NewRecord>) -> (tempfile::TempDir, Connection, Rules) {
        let dir = tempfile::tempdir().unwrap();
        crate::db::Db::open(dir.path()).unwrap();
        let mut conn = crate::db::open_connection(&dir.path().join(crate::db::DB_FILE)).unwrap();
        let mut rules = Rules::new(readers());
        let write_one = Write {
            records,
            raw: Vec::new(),
            seen: vec![("D1".to_owned(), TerminalSource::Framed)],
        };
        write(&mut conn, &mut rules, NOW, &[write_one]).unwrap();
        (dir, conn, rules)
    }

    #[test]
    fn pending_rows_come_out_in_write_order_with_their_minted_keys() {
        let (_dir, mut conn, _) = check(vec![record("a", "1", 2), record("b", "2", 1)]);
        let rows = pending_batch(&mut conn, 50).unwrap();
        let ids: Vec<&str> = rows.iter().map(|r| r.event_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_ne!(rows[0].record.key, rows[1].record.key);
        assert_eq!(rows[0].record.queued_at, NOW);
        assert_eq!(pending_batch(&mut conn, 1).unwrap().len(), 1);
    }

    #[test]
    fn a_repeat_counts_on_the_read_it_repeats_once_and_leaves_soon_after_it_is_forwarded() {
        // An accepted read and three repeats within the duplicate window;
        // then the terminal resends the whole frame (it missed the ack).
        let frame = vec![
            record("a", "7", 4),
            record("b", "7", 3),
            record("c", "7", 2),
            record("d", "7", 1),
        ];
        let (_dir, mut conn, mut rules) = check(frame.clone());
        let resend = Write {
            records: frame,
            raw: Vec::new(),
            seen: Vec::new(),
        };
        let report = write(&mut conn, &mut rules, NOW.plus(Millis(500)), &[resend]).unwrap();
        assert_eq!(report[0].outcomes, vec![None; 4], "already queued");
        let rows = pending_batch(&mut conn, 50).unwrap();
        let outcomes: Vec<RuleOutcome> = rows.iter().map(|r| r.record.rule_outcome).collect();
        assert_eq!(
            outcomes,
            [
                RuleOutcome::Accepted,
                RuleOutcome::Duplicate,
                RuleOutcome::Duplicate,
                RuleOutcome::Duplicate
            ]
        );
        let accepted = rows[0].record.key;
        assert_eq!(rows[0].record.repeat, None);
        let repeats: Vec<Option<Repeat>> = rows[1..].iter().map(|r| r.record.repeat).collect();
        assert_eq!(
            repeats,
            (1..=3)
                .map(|number| Some(Repeat {
                    of: accepted,
                    number
                }))
                .collect::<Vec<_>>(),
            "numbered in order, the resend counted nothing"
        );
        let held: i64 = conn
            .query_row(
                "SELECT repeats FROM listener_queue WHERE key = ?1",
                [accepted.to_string()],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(held, 3);

        let settled: Vec<(&Queued, Settled)> = rows.iter().map(|r| (r, Settled::Done)).collect();
        settle(&mut conn, NOW, &settled, &[]).unwrap();
        // The first repeat was captured 3 s before NOW, the last 1 s.
        let kept = UnixMs(NOW.0 + REPEAT_RETENTION.0 as i64 - 3_000);
        assert_eq!(
            prune(&mut conn, kept).unwrap(),
            0,
            "a resend would not be stale yet"
        );
        let gone = kept.plus(Millis(2_001));
        assert_eq!(prune(&mut conn, gone).unwrap(), 3, "the three repeats");
        let left: Vec<String> = conn
            .prepare("SELECT key FROM listener_queue")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(left, [accepted.to_string()], "the read stays its 7 days");
    }

    #[test]
    fn settled_rows_are_marked_not_deleted_and_the_prune_pass_removes_old_done_ones() {
        let (_dir, mut conn, _) = check(vec![
            record("a", "1", 2),
            record("b", "2", 1),
            record("c", "3", 1),
        ]);
        let rows = pending_batch(&mut conn, 50).unwrap();
        let beats = pending_heartbeats(&mut conn).unwrap();
        settle(
            &mut conn,
            NOW,
            &[
                (&rows[0], Settled::Done),
                (
                    &rows[1],
                    Settled::Dead {
                        status: 422,
                        body: "no".to_owned(),
                    },
                ),
            ],
            &beats,
        )
        .unwrap();
        assert_eq!(
            counts(&mut conn).unwrap(),
            Counts {
                pending: 1,
                done: 1,
                dead: 1,
                set_aside: 0,
            }
        );
        assert!(pending_heartbeats(&mut conn).unwrap().is_empty());
        assert_eq!(prune(&mut conn, NOW).unwrap(), 0, "too recent to prune");
        let later = NOW.plus(DONE_RETENTION).plus(Millis(1));
        assert_eq!(
            prune(&mut conn, later).unwrap(),
            2,
            "the done row and the served record"
        );
        assert_eq!(
            counts(&mut conn).unwrap(),
            Counts {
                pending: 1,
                done: 0,
                dead: 1,
                set_aside: 0,
            }
        );
    }

    #[test]
    fn a_set_aside_row_leaves_the_fifo_drain_keeps_its_attempts_and_falls_due_later() {
        let (_dir, mut conn, _) = check(vec![record("a", "1", 2), record("b", "2", 1)]);
        let rows = pending_batch(&mut conn, 50).unwrap();
        let failed = |set_aside_for| Settled::Failed {
            error: "500 disk I/O error".to_owned(),
            set_aside_for,
        };
        settle(&mut conn, NOW, &[(&rows[0], failed(None))], &[]).unwrap();
        let again = pending_batch(&mut conn, 50).unwrap();
        assert_eq!(again[0].attempts, 1);
        assert_eq!(again.len(), 2, "not set aside yet: still first in line");
        let wait = Millis::from_secs(600);
        settle(&mut conn, NOW, &[(&again[0], failed(Some(wait)))], &[]).unwrap();
        let behind = pending_batch(&mut conn, 50).unwrap();
        let ids: Vec<&str> = behind.iter().map(|r| r.event_id.as_str()).collect();
        assert_eq!(ids, ["b"], "the set-aside row no longer heads the queue");
        assert_eq!(next_set_aside_at(&mut conn).unwrap(), Some(NOW.plus(wait)));
        assert!(due_set_aside(&mut conn, NOW, 1).unwrap().is_empty());
        let due = due_set_aside(&mut conn, NOW.plus(wait), 1).unwrap();
        assert_eq!((due[0].event_id.as_str(), due[0].attempts), ("a", 2));
        assert!(due[0].set_aside);
        let counted = counts(&mut conn).unwrap();
        assert_eq!((counted.pending, counted.set_aside), (2, 1));
        let listed = set_aside(&conn, 10).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].attempts, 2);
        assert_eq!(listed[0].last_error.as_deref(), Some("500 disk I/O error"));
        assert_eq!(listed[0].set_aside_at, NOW);
        settle(&mut conn, NOW.plus(wait), &[(&due[0], Settled::Done)], &[]).unwrap();
        let counted = counts(&mut conn).unwrap();
        assert_eq!(
            (counted.pending, counted.done, counted.set_aside),
            (1, 1, 0)
        );
        assert_eq!(next_set_aside_at(&mut conn).unwrap(), None);
    }

    #[test]
    fn raw_bodies_are_pruned_past_their_retention() {
        let (_dir, mut conn, mut rules) = check(Vec::new());
        let raw = RawBody {
            device: "D1".to_owned(),
            kind: "OPERLOG".to_owned(),
            query: String::new(),
            body: b"x".to_vec(),
            reason: None,
        };
        let kept = Write {
            raw: vec![raw],
            ..Write::default()
        };
        write(&mut conn, &mut rules, NOW, &[kept]).unwrap();
        let raw_rows = |conn: &Connection| -> i64 {
            conn.query_row("SELECT count(*) FROM listener_raw", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(prune(&mut conn, NOW.plus(RAW_RETENTION)).unwrap(), 0);
        assert_eq!(raw_rows(&conn), 1);
        let later = NOW.plus(RAW_RETENTION).plus(Millis(1));
        assert_eq!(prune(&mut conn, later).unwrap(), 1);
        assert_eq!(raw_rows(&conn), 0);
    }

    #[test]
    fn the_rules_windows_are_rebuilt_from_served_and_queued_records() {
        let (_dir, mut conn, _) = check(vec![record("a", "1", 2), record("b", "2", 1)]);
        let rows = pending_batch(&mut conn, 50).unwrap();
        settle(&mut conn, NOW, &[(&rows[0], Settled::Done)], &[]).unwrap();
        let rules = load_rules(&mut conn, NOW, readers()).unwrap();
        assert_eq!(rules.duplicate_entries(), 2, "one served, one still queued");
        assert_eq!(rules.rate_entries("D1"), 2);
        let again = rules.judge(NOW, &[(Terminal::Attendance, &record("z", "1", 1).capture)]);
        assert_eq!(again.outcomes, [RuleOutcome::Duplicate]);
    }

    #[test]
    fn a_readers_budgets_are_rebuilt_per_tag_and_a_terminals_per_device() {
        let tag = |i: usize| NewRecord {
            kind: TerminalEventKind::TagRead,
            ..record(&format!("t{i}"), &format!("e280{i:04}"), 1)
        };
        let mut records: Vec<NewRecord> = (0..200).map(tag).collect();
        records.extend((0..120).map(|i| NewRecord {
            capture: Capture {
                device: "T1".to_owned(),
                ..record(&format!("p{i}"), &format!("{i}"), 1).capture
            },
            ..record("", "", 1)
        }));
        let (_dir, mut conn, _) = check(records);
        let rules = load_rules(&mut conn, NOW, readers()).unwrap();
        assert_eq!(rules.rate_entries("D1"), 200);
        let more_tags = tag(200);
        let person = Capture {
            device: "T1".to_owned(),
            ..record("p120", "120", 1).capture
        };
        let judged = rules.judge(
            NOW,
            &[
                (Terminal::RfidReader, &more_tags.capture),
                (Terminal::Attendance, &person),
            ],
        );
        assert_eq!(
            judged.outcomes,
            [RuleOutcome::Accepted, RuleOutcome::RateLimited]
        );
    }

    #[test]
    fn a_heartbeat_is_forwarded_again_only_once_it_has_moved_a_step() {
        let (_dir, mut conn, mut rules) = check(Vec::new());
        let beats = pending_heartbeats(&mut conn).unwrap();
        assert_eq!(beats.len(), 1);
        settle(&mut conn, NOW, &[], &beats).unwrap();
        let seen = || Write {
            seen: vec![("D1".to_owned(), TerminalSource::Framed)],
            ..Write::default()
        };
        write(
            &mut conn,
            &mut rules,
            NOW.plus(Millis::from_secs(5)),
            &[seen()],
        )
        .unwrap();
        assert!(pending_heartbeats(&mut conn).unwrap().is_empty());
        write(
            &mut conn,
            &mut rules,
            NOW.plus(HEARTBEAT_FORWARD_STEP),
            &[seen()],
        )
        .unwrap();
        assert_eq!(pending_heartbeats(&mut conn).unwrap().len(), 1);
    }
}
