//! The write path: requests in, rows durable in one transaction, the
//! repeat rules and the terminals' last-seen times updated with them. A
//! record already kept (its queue row, or once that is gone its identity)
//! is a resend: acknowledged, and nothing is written for it. A repeat of a
//! read whose repeat still waits to be forwarded is folded into that
//! waiting row and keeps only its identity ([`keep_folded`]).

use super::*;

/// Writes requests received at `queued_at` in one durable transaction
/// (several requests share one commit when they arrive together). Either
/// all of them are durable when this returns `Ok`, or none is and the rules
/// are unchanged. Each new record's key is a UUIDv7 of `queued_at`, so the
/// key indexes here and in the ledger grow at their end.
pub fn write(
    conn: &mut Connection,
    rules: &mut Rules,
    queued_at: UnixMs,
    writes: &[Write],
) -> Result<Vec<WriteReport>, QueueError> {
    let millis = u64::try_from(queued_at.0).unwrap_or(0);
    write_keyed(conn, rules, queued_at, writes, &mut || {
        IdempotencyKey::mint_ordered(millis)
    })
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
    // (write, record, its identity) of every record not queued before, in
    // arrival order.
    let mut fresh: Vec<(usize, usize, [u8; SEEN_DIGEST_BYTES])> = Vec::new();
    let mut reports: Vec<WriteReport> = writes
        .iter()
        .map(|w| WriteReport {
            outcomes: vec![None; w.records.len()],
            commands: Vec::new(),
        })
        .collect();
    {
        let mut find = tx.prepare_cached(
            "SELECT 1 FROM listener_queue
             WHERE device_serial = ?1 AND occurred_at = ?2 AND event_id = ?3",
        )?;
        let mut in_this_commit: HashMap<(&str, UnixMs, &str), ()> = HashMap::new();
        for (w, write) in writes.iter().enumerate() {
            for (i, record) in write.records.iter().enumerate() {
                let c = &record.capture;
                let identity = digest(&c.device, &c.event_id);
                let queued = find
                    .query_row(params![c.device, c.occurred_at.0, c.event_id], |_| Ok(()))
                    .optional()?
                    .is_some()
                    || was_seen(&tx, c.occurred_at, &identity)?
                    || was_folded(&tx, c.occurred_at, &identity)?;
                let repeated = in_this_commit
                    .insert((c.device.as_str(), c.occurred_at, c.event_id.as_str()), ())
                    .is_some();
                if !queued && !repeated {
                    fresh.push((w, i, identity));
                }
            }
        }
    }
    let captures: Vec<(Terminal, &Capture)> = fresh
        .iter()
        .map(|&(w, i, _)| {
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
             WHERE device_serial = ?1 AND occurred_at = ?2 AND event_id = ?3
               AND rule_outcome = 'accepted'
             RETURNING key, repeats",
        )?;
        // A repeat of a read whose repeat still waits to be forwarded is
        // folded into that waiting row: the ledger keeps the largest number
        // and the last instant, so one row forwards them all.
        let mut fold_repeat = tx.prepare_cached(
            "UPDATE listener_queue
             SET repeat_number = max(repeat_number, ?2),
                 last_repeat_at = max(coalesce(last_repeat_at, occurred_at), ?3)
             WHERE repeat_of = ?1 AND state = 'pending'",
        )?;
        for (n, (&(w, i, identity), &outcome)) in fresh.iter().zip(&judgement.outcomes).enumerate()
        {
            let record = &writes[w].records[i];
            let c = &record.capture;
            let repeat: Option<(String, i64)> = match judgement.repeats.get(&n) {
                Some((event_id, at)) => count_repeat
                    .query_row(params![c.device, at.0, event_id], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })
                    .optional()?,
                None => None,
            };
            if let Some((of, number)) = &repeat {
                if fold_repeat.execute(params![of, number, c.occurred_at.0])? > 0 {
                    keep_folded(&tx, record, identity)?;
                    reports[w].outcomes[i] = Some(outcome);
                    continue;
                }
            }
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
    for (write, report) in writes.iter().zip(&mut reports) {
        insert_raw(&tx, queued_at, &write.raw)?;
        for (device, source) in &write.seen {
            touch(&tx, device, *source, queued_at)?;
        }
        if let Some((serial, zone)) = &write.zone {
            super::commands::note_zone(&tx, serial, zone)?;
        }
        if let Some((serial, results)) = &write.results {
            settle_results(&tx, serial, results, queued_at)?;
        }
        if let Some(poll) = &write.poll {
            report.commands = hand_out(&tx, poll, queued_at)?;
        }
    }
    crate::store::writer::commit_timed(tx)?;
    rules.commit(judgement);
    Ok(reports)
}

/// Which rate limit a record's kind falls under: tag reads come from RFID
/// readers, everything else from terminals people stand at.
pub(super) fn terminal_of(kind: TerminalEventKind) -> Terminal {
    match kind {
        TerminalEventKind::TagRead => Terminal::RfidReader,
        TerminalEventKind::Attendance | TerminalEventKind::CodeRead => Terminal::Attendance,
    }
}

pub(super) fn touch(
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

pub(super) fn insert_raw(
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
