//! The invariants a run must hold once the network has healed and the
//! queues have had their time to drain:
//!
//! 1. `exactly_once`: every capture the device acknowledged is applied once
//!    (a done scan has exactly one hop under its key) or waits for a person
//!    with its reason (rejected, blocked), or was discarded by one;
//! 2. `session_order`: the hops of a session follow its `client_seq`;
//! 3. `no_stray_hop`: every hop's key is one its device captured;
//! 4. `replay_matches`: every answer for a key says what the first final
//!    answer for it said (status, outcome, reason, hops);
//! 5. `drains_to_zero`: no item is left queued or sending (the world's
//!    person has decided about every blocked and rejected item by then);
//! 6. `rescued`: a handheld that broke for good had its file imported at
//!    the site, and every item it still held queued or sending was
//!    answered by the import (its answers are held to `replay_matches`,
//!    and its hops to exactly once, as the device's own).
//!
//! And for terminal records ([`terminals`]), under the same names:
//! every record the listener's queue committed is there once and is either
//! recorded by the ledger exactly once (a terminal event under its key, at
//! most one gate hop) or dead-lettered with the ledger's status and answer,
//! and dead only when the ledger refuses it for good (`exactly_once`); no
//! terminal event or gate hop under a key the listener never minted
//! (`no_stray_hop`); every answer for a key says what the first said
//! (`replay_matches`); every record a terminal read acknowledged, nothing
//! pending in the listener's queue (`drains_to_zero`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use stockhop::key::IdempotencyKey;
use stockhop::queue::item::ItemState;
use stockhop::wire::{Command, ItemResult};

use stockhop_site::ident::IDENT_MAX_CHARS as MAX_FIELD_CHARS;
use stockhop_site::terminal_wire::TerminalResult;

use crate::device::Device;
use crate::ledger::Ledger;
use crate::terminal::{Listener, Terminal};

/// One per-record answer the ledger gave to a forwarded batch.
#[derive(Debug, Clone)]
pub struct TerminalAnswer {
    pub forward_id: u64,
    pub result: TerminalResult,
}

/// One per-item answer the ledger gave to a request.
#[derive(Debug, Clone)]
pub struct Answer {
    pub device: usize,
    pub request_id: u64,
    pub result: ItemResult,
}

#[derive(Debug, Clone)]
pub struct Violation {
    pub invariant: &'static str,
    pub detail: String,
}

fn violation(invariant: &'static str, detail: String) -> Violation {
    Violation { invariant, detail }
}

pub fn all(
    devices: &[Device],
    acknowledged: &[Vec<IdempotencyKey>],
    rescued: &[bool],
    ledger: &Ledger,
    answers: &[Answer],
) -> anyhow::Result<Vec<Violation>> {
    let mut found = Vec::new();
    let hops = hops(ledger)?;
    for (d, device) in devices.iter().enumerate() {
        // Nothing crashes after the last event, so what the store holds
        // is everything committed, relaxed writes included.
        let captured = &device.items_by_key();
        for key in &acknowledged[d] {
            if !captured.contains_key(key) {
                found.push(violation(
                    "exactly_once",
                    format!("HH-{d}: the acknowledged capture {key} is gone from the queue"),
                ));
            }
        }
        let mine: Vec<&Hop> = hops
            .iter()
            .filter(|h| h.device_id == device.device_id)
            .collect();
        let mut per_key: HashMap<IdempotencyKey, usize> = HashMap::new();
        for hop in &mine {
            *per_key.entry(hop.key).or_default() += 1;
            if !captured.contains_key(&hop.key) {
                found.push(violation(
                    "no_stray_hop",
                    format!(
                        "HH-{d}: hop {} has key {} that the device never captured",
                        hop.hop_id, hop.key
                    ),
                ));
            }
        }
        for item in captured.values() {
            let count = per_key.get(&item.key).copied().unwrap_or(0);
            let what = format!(
                "HH-{d} #{} {} (key {})",
                item.client_seq,
                item.command.as_str(),
                item.key
            );
            if rescued[d] && item.state.is_pending() {
                // The device never learnt what became of its rescued items:
                // the site's answer is theirs.
                let answered = answers
                    .iter()
                    .any(|answer| answer.device == d && answer.result.key == item.key);
                if matches!(item.state, ItemState::Queued | ItemState::Sending) && !answered {
                    found.push(violation(
                        "rescued",
                        format!("{what} was in the rescue file but the site has no answer for it"),
                    ));
                }
                continue;
            }
            if matches!(item.state, ItemState::Queued | ItemState::Sending) {
                found.push(violation(
                    "drains_to_zero",
                    format!(
                        "{what} is still {} ({:?})",
                        item.state.as_str(),
                        item.reason
                    ),
                ));
                continue;
            }
            if count > 1 {
                found.push(violation(
                    "exactly_once",
                    format!("{what} has {count} hops"),
                ));
            }
            match item.state {
                ItemState::Done if item.command == Command::Scan && count != 1 => {
                    found.push(violation(
                        "exactly_once",
                        format!("{what} is done on the device but has {count} hops"),
                    ));
                }
                ItemState::Rejected | ItemState::Blocked if item.reason.is_none() => {
                    found.push(violation(
                        "exactly_once",
                        format!("{what} waits for a person without a reason"),
                    ));
                }
                ItemState::Rejected | ItemState::Blocked | ItemState::Voided if count != 0 => {
                    found.push(violation(
                        "exactly_once",
                        format!(
                            "{what} is {} on the device but has a hop",
                            item.state.as_str()
                        ),
                    ));
                }
                _ => {}
            }
        }
    }
    let mut by_session: BTreeMap<&str, Vec<&Hop>> = BTreeMap::new();
    for hop in &hops {
        if let Some(session) = hop.session_id.as_deref() {
            by_session.entry(session).or_default().push(hop);
        }
    }
    for (session, hops) in by_session {
        for pair in hops.windows(2) {
            if pair[1].client_seq <= pair[0].client_seq {
                found.push(violation(
                    "session_order",
                    format!(
                        "session {session}: hop {} (#{}) applied after hop {} (#{})",
                        pair[1].hop_id, pair[1].client_seq, pair[0].hop_id, pair[0].client_seq
                    ),
                ));
            }
        }
    }
    found.extend(replays(answers));
    Ok(found)
}

/// Every final answer for a key matches the first one.
fn replays(answers: &[Answer]) -> Vec<Violation> {
    let mut found = Vec::new();
    let mut first: HashMap<(usize, IdempotencyKey), &Answer> = HashMap::new();
    let mut reported = BTreeSet::new();
    for answer in answers {
        let result = &answer.result;
        if result.code.as_deref() == Some("IDEMPOTENCY_KEY_REUSED") {
            found.push(violation(
                "replay_matches",
                format!(
                    "HH-{} key {}: a resend of the same item was refused as another body (request {})",
                    answer.device, result.key, answer.request_id
                ),
            ));
        }
        // Only stored answers (an outcome) are replayed; a 4xx for an item
        // in its turn is not stored and may differ once the conflict is gone.
        if result.outcome.is_none() {
            continue;
        }
        match first.get(&(answer.device, result.key)) {
            None => {
                first.insert((answer.device, result.key), answer);
            }
            Some(earlier) => {
                let a = &earlier.result;
                let same = a.status == result.status
                    && a.outcome == result.outcome
                    && a.reason == result.reason
                    && a.hop_ids == result.hop_ids
                    && a.recorded_at == result.recorded_at;
                if !same && reported.insert((answer.device, result.key)) {
                    found.push(violation(
                        "replay_matches",
                        format!(
                            "HH-{} key {}: request {} answered {:?}/{:?}/{:?} hops {:?}, request {} answered {:?}/{:?}/{:?} hops {:?}",
                            answer.device, result.key,
                            earlier.request_id, a.status, a.outcome, a.reason, a.hop_ids,
                            answer.request_id, result.status, result.outcome, result.reason, result.hop_ids
                        ),
                    ));
                }
            }
        }
    }
    found
}

struct Hop {
    hop_id: i64,
    device_id: String,
    session_id: Option<String>,
    key: IdempotencyKey,
    client_seq: i64,
}

fn hops(ledger: &Ledger) -> anyhow::Result<Vec<Hop>> {
    let mut statement = ledger.conn().prepare(
        "SELECT hop_id, device_id, session_id, key, COALESCE(client_seq, 0) FROM hops ORDER BY hop_id",
    )?;
    let rows = statement.query_map([], |row| {
        let key: String = row.get(3)?;
        Ok(Hop {
            hop_id: row.get(0)?,
            device_id: row.get(1)?,
            session_id: row.get(2)?,
            key: key.parse().map_err(|err: stockhop::key::KeyError| {
                stockhop_site::store::sql::Error::conversion(3, err.to_string())
            })?,
            client_seq: row.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One row of the listener's queue as the checks read it.
struct Row {
    key: String,
    device_serial: String,
    event_id: String,
    subject: String,
    state: String,
    dead_status: Option<i64>,
    dead_body: Option<String>,
    /// For a duplicate: the accepted record's key it repeats, its number.
    repeat: Option<(String, i64)>,
}

pub fn terminals(
    terminals: &[Terminal],
    accepted: &[(String, String)],
    listener: &Listener,
    ledger: &Ledger,
    answers: &[TerminalAnswer],
) -> anyhow::Result<Vec<Violation>> {
    let mut found = Vec::new();
    let rows: Vec<Row> = listener
        .conn()
        .prepare(
            "SELECT key, device_serial, event_id, subject, state, dead_status, dead_body,
                    repeat_of, repeat_number
             FROM listener_queue ORDER BY seq",
        )?
        .query_map([], |row| {
            let repeat_of: Option<String> = row.get(7)?;
            let repeat_number: Option<i64> = row.get(8)?;
            Ok(Row {
                key: row.get(0)?,
                device_serial: row.get(1)?,
                event_id: row.get(2)?,
                subject: row.get(3)?,
                state: row.get(4)?,
                dead_status: row.get(5)?,
                dead_body: row.get(6)?,
                repeat: repeat_of.zip(repeat_number),
            })
        })?
        .collect::<Result<_, _>>()?;
    let mut events: HashMap<String, usize> = HashMap::new();
    for key in ledger
        .conn()
        .prepare("SELECT key FROM terminal_events")?
        .query_map([], |row| row.get::<_, String>(0))?
    {
        *events.entry(key?).or_default() += 1;
    }
    let mut gate_hops: HashMap<String, usize> = HashMap::new();
    for key in ledger
        .conn()
        .prepare("SELECT key FROM hops WHERE kind = 'GATE_READ'")?
        .query_map([], |row| row.get::<_, String>(0))?
    {
        *gate_hops.entry(key?).or_default() += 1;
    }
    // Repeats the ledger folded into the accepted event they repeat.
    let mut repeats: HashMap<String, i64> = HashMap::new();
    for row in ledger
        .conn()
        .prepare("SELECT key, repeats FROM terminal_repeats")?
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
        })?
    {
        let (key, n) = row?;
        repeats.insert(key, n);
    }
    // The highest repeat number of each accepted record among its repeats
    // the ledger folded (done, with no event of their own).
    let mut folded: HashMap<&str, i64> = HashMap::new();
    let by_event: HashMap<(&str, &str), &Row> = rows
        .iter()
        .map(|r| ((r.device_serial.as_str(), r.event_id.as_str()), r))
        .collect();
    for (serial, event_id) in accepted {
        // A repeat folded into the waiting repeat row of its read has no
        // row of its own: the row it was folded into forwards its count.
        if !by_event.contains_key(&(serial.as_str(), event_id.as_str()))
            && !stockhop_site::listener::queue::is_folded(listener.conn(), serial, event_id)?
        {
            found.push(violation(
                "exactly_once",
                format!("{serial} {event_id}: the listener committed it, its queue lost it"),
            ));
        }
    }
    for row in &rows {
        let what = format!("{} {} (key {})", row.device_serial, row.event_id, row.key);
        let recorded = events.get(&row.key).copied().unwrap_or(0);
        let hops = gate_hops.get(&row.key).copied().unwrap_or(0);
        let refusable = row.subject.chars().count() > MAX_FIELD_CHARS;
        match row.state.as_str() {
            "pending" => found.push(violation(
                "drains_to_zero",
                format!("{what} is still pending in the listener's queue"),
            )),
            "done"
                if recorded == 0
                    && hops == 0
                    && row.repeat.as_ref().is_some_and(|(of, number)| {
                        repeats.get(of).is_some_and(|&held| held >= *number)
                    }) =>
            {
                if let Some((of, number)) = &row.repeat {
                    let high = folded.entry(of.as_str()).or_default();
                    *high = (*high).max(*number);
                }
            }
            "done" if recorded != 1 || hops > 1 => found.push(violation(
                "exactly_once",
                format!("{what} is done with {recorded} terminal events and {hops} gate hops"),
            )),
            "done" if refusable => found.push(violation(
                "exactly_once",
                format!("{what} is done though the ledger refuses its subject"),
            )),
            "dead" if recorded != 0 || hops != 0 => found.push(violation(
                "exactly_once",
                format!("{what} is dead-lettered but recorded ({recorded} events, {hops} hops)"),
            )),
            "dead"
                if row.dead_status.is_none()
                    || row.dead_body.as_deref().unwrap_or("").is_empty() =>
            {
                found.push(violation(
                    "exactly_once",
                    format!("{what} is dead-lettered without the ledger's reason"),
                ))
            }
            "dead" if !refusable => found.push(violation(
                "exactly_once",
                format!(
                    "{what} is dead-lettered ({:?} {:?}) though the ledger takes it",
                    row.dead_status, row.dead_body
                ),
            )),
            _ => {}
        }
    }
    for (key, &held) in &repeats {
        let forwarded = folded.get(key.as_str()).copied().unwrap_or(0);
        if held != forwarded {
            found.push(violation(
                "exactly_once",
                format!(
                    "terminal event {key} holds {held} repeats, the listener's done repeats of it reach {forwarded}"
                ),
            ));
        }
    }
    let minted: BTreeSet<&str> = rows.iter().map(|r| r.key.as_str()).collect();
    for key in events.keys().chain(gate_hops.keys()).chain(repeats.keys()) {
        if !minted.contains(key.as_str()) {
            found.push(violation(
                "no_stray_hop",
                format!(
                    "a terminal event or gate hop under key {key}, which the listener never minted"
                ),
            ));
        }
    }
    for terminal in terminals {
        if let Some(reading) = terminal.unacked.first() {
            found.push(violation(
                "drains_to_zero",
                format!(
                    "{} still holds {} unacknowledged records, the first {}",
                    terminal.serial,
                    terminal.unacked.len(),
                    reading.event_id
                ),
            ));
        }
    }
    let mut first: HashMap<IdempotencyKey, &TerminalAnswer> = HashMap::new();
    let mut reported = BTreeSet::new();
    for answer in answers {
        let result = &answer.result;
        match first.get(&result.key) {
            None => {
                first.insert(result.key, answer);
            }
            Some(earlier) => {
                let a = &earlier.result;
                let same = a.status == result.status
                    && a.code == result.code
                    && a.hop_ids == result.hop_ids;
                if !same && reported.insert(result.key) {
                    found.push(violation(
                        "replay_matches",
                        format!(
                            "terminal key {}: batch {} answered {} {:?} hops {:?}, batch {} answered {} {:?} hops {:?}",
                            result.key, earlier.forward_id, a.status, a.code, a.hop_ids,
                            answer.forward_id, result.status, result.code, result.hop_ids
                        ),
                    ));
                }
            }
        }
    }
    Ok(found)
}
