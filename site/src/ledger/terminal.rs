//! Terminal records into the ledger (the contract is [`crate::terminal_wire`]).
//!
//! The listener mints each record's idempotency key when it writes the
//! record to its queue; [`ingest`] claims that key exactly as a handheld's
//! is claimed, in the same transaction as the work: a replay answers
//! `replayed`, the same key with a different record is 409. Records are
//! stored as terminal events with their three clocks and the listener's
//! rule outcome; an accepted gate read of a known unit also appends an
//! observing `GATE_READ` hop. A duplicate that names the accepted record
//! it repeats is folded into that record's event ([`fold`]: a count and the
//! last instant, no row, receipt or raw body of its own), so a portal
//! reading a standing pallet many times a second costs the ledger one
//! event per tag, not one per read. A terminal the site knows as a device that
//! is not commissioned is in training like a handheld (rule 12, however a
//! record arrives): its hops are recorded as simulation (`sim`). A serial
//! the site has no device for posts as `terminal`, as terminals always
//! have: gates reach the site through the listener without enrolling.
//! Terminal sightings feed the same heartbeat view as handhelds.

use crate::store::sql::{params, Connection, OptionalExtension, TransactionBehavior};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use stockhop::time::UnixMs;
use stockhop::wire::codes as wire_codes;

use super::hops::{self, NewHop, SourceMode};
use super::receipts::{self, Claim, ReceiptState};
use super::{devices, periods, savepoint, units, LedgerError, Refusal};
use crate::terminal_wire::{
    RuleOutcome, TerminalBatch, TerminalBatchResponse, TerminalEventKind, TerminalRecord,
    TerminalResult, MAX_RECORDS_PER_BATCH, SIGNATURE_MAX_AGE_SECS,
};

/// The receipt scope of terminal records: the listener minted every key,
/// so its keys share one namespace whatever terminal they came from.
pub const TERMINAL_SCOPE: &str = "terminal-listener";
/// Longest serial or subject taken, in characters: an identifier
/// ([`crate::ident`]).
pub use crate::ident::IDENT_MAX_CHARS as MAX_FIELD_CHARS;
/// Longest raw record kept for audit: an ATTLOG line or a gate's JSON
/// object is well under this; the listener's frame cap is 256 KB.
pub use crate::limits::LEDGER_MAX_RAW_BYTES as MAX_RAW_BYTES;

/// [`ingest`] on the site database's blocking thread: what the listener's
/// in-process forwarder calls.
pub async fn ingest_into(
    db: &crate::store::db::Db,
    batch: TerminalBatch,
    now: UnixMs,
) -> Result<TerminalBatchResponse, LedgerError> {
    // Behind handhelds: a forwarded batch waits; a sync does not.
    db.call_as(crate::store::writer::Caller::ListenerForward, move |conn| {
        ingest(conn, &batch, now)
    })
    .await
}

/// Records a batch from the listener, received at `now`: one result per
/// record, in batch order. A record answered 4xx will never be taken as
/// sent (dead-letter it, which 409 `IDEMPOTENCY_RECEIPT_UNAVAILABLE`, a
/// receipt that cannot be read, also is: resending would loop forever); an
/// `Err` that [`LedgerError::is_retryable`] is worth retrying.
pub fn ingest(
    conn: &mut Connection,
    batch: &TerminalBatch,
    now: UnixMs,
) -> Result<TerminalBatchResponse, LedgerError> {
    if batch.records.len() > MAX_RECORDS_PER_BATCH {
        return Err(LedgerError::Refused(Refusal::new(
            400,
            wire_codes::TOO_MANY_ITEMS,
            format!(
                "{} records; at most {MAX_RECORDS_PER_BATCH} a batch",
                batch.records.len()
            ),
        )));
    }
    crate::store::sql::retry_conflicts(|| ingest_once(conn, batch, now))
}

/// [`ingest`]'s one transaction.
fn ingest_once(
    conn: &mut Connection,
    batch: &TerminalBatch,
    now: UnixMs,
) -> Result<TerminalBatchResponse, LedgerError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(LedgerError::Sqlite)?;
    let mut results = Vec::with_capacity(batch.records.len());
    for record in &batch.records {
        let result = match record_one(&tx, record, now) {
            Ok(result) => result,
            Err(LedgerError::Refused(refusal)) => refused(record, &refusal),
            Err(err) => return Err(err),
        };
        results.push(result);
    }
    for heartbeat in &batch.heartbeats {
        devices::record_terminal_seen(
            &tx,
            &heartbeat.device_serial,
            heartbeat.source.as_str(),
            heartbeat.seen_at,
        )?;
    }
    tx.commit().map_err(LedgerError::Sqlite)?;
    Ok(TerminalBatchResponse { results })
}

fn record_one(
    conn: &Connection,
    record: &TerminalRecord,
    now: UnixMs,
) -> Result<TerminalResult, LedgerError> {
    let value = serde_json::to_value(record)
        .map_err(|err| LedgerError::Corrupt(format!("record does not serialize: {err}")))?;
    let hash = receipts::request_hash(&value);
    if let Some(receipt) = receipts::find(conn, TERMINAL_SCOPE, &record.key)? {
        if receipt.request_hash != hash {
            return Err(LedgerError::Refused(Refusal::new(
                409,
                wire_codes::IDEMPOTENCY_KEY_REUSED,
                "this key was used for a different record",
            )));
        }
        let stored = receipt
            .response
            .as_deref()
            .and_then(|text| serde_json::from_str::<TerminalResult>(text).ok());
        return Ok(match stored {
            Some(answer) => TerminalResult {
                replayed: true,
                ..answer
            },
            None => {
                tracing::error!(key = %record.key, "stored terminal receipt cannot be read; failing closed");
                refused(
                    record,
                    &Refusal::new(
                        409,
                        wire_codes::IDEMPOTENCY_RECEIPT_UNAVAILABLE,
                        "the stored answer for this key cannot be read; it will not run again: a person must decide",
                    ),
                )
            }
        });
    }
    validate(record)?;
    if let Some(answer) = fold(conn, record)? {
        return Ok(answer);
    }
    savepoint(conn, |conn| {
        receipts::claim(
            conn,
            &Claim {
                scope: TERMINAL_SCOPE,
                key: &record.key,
                session_id: None,
                client_seq: None,
                command: record.kind.as_str(),
                request_hash: &hash,
                state: ReceiptState::Final,
                item: None,
                received_at: now,
                skew_ms: 0,
                response: None,
            },
        )?;
        let hop_id = gate_read(conn, record, now)?;
        conn.prepare_cached(
            "INSERT INTO terminal_events (key, source, device_serial, kind, subject, occurred_at,
                                          queued_at, recorded_at, rule_outcome, raw, hop_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?
        .execute(params![
            record.key.to_string(),
            record.source.as_str(),
            record.device_serial,
            record.kind.as_str(),
            record.subject,
            record.occurred_at.0,
            record.queued_at.0,
            now.0,
            record.rule_outcome.as_str(),
            record.raw,
            hop_id,
        ])?;
        devices::record_terminal_seen(
            conn,
            &record.device_serial,
            record.source.as_str(),
            record.queued_at,
        )?;
        let answer = TerminalResult {
            key: record.key,
            status: 200,
            replayed: false,
            code: None,
            message: None,
            hop_ids: hop_id.into_iter().collect(),
        };
        let text = serde_json::to_string(&answer)
            .map_err(|err| LedgerError::Corrupt(format!("answer does not serialize: {err}")))?;
        conn.prepare_cached("UPDATE receipts SET response = ?3 WHERE scope = ?1 AND key = ?2")?
            .execute(params![TERMINAL_SCOPE, record.key.to_string(), text])?;
        Ok(answer)
    })
}

/// Folds a duplicate that names the accepted record it repeats into that
/// record's terminal event: the larger of the repeat counts and of the last
/// repeat's capture instants, so a resent batch (or one of its records
/// arriving late) changes nothing. No receipt, no event of its own, no raw
/// body: a repeat costs nothing durable in the ledger. `None` when the
/// record is not such a repeat, or when the ledger does not hold the
/// record it repeats (that one was refused, or is still to come): it is
/// then kept as an event of its own, as a duplicate always was, and its
/// receipt answers a resend.
fn fold(conn: &Connection, record: &TerminalRecord) -> Result<Option<TerminalResult>, LedgerError> {
    let Some(repeat) = record.repeat else {
        return Ok(None);
    };
    if record.rule_outcome != RuleOutcome::Duplicate || repeat.number == 0 {
        return Ok(None);
    }
    let of = repeat.of.to_string();
    // The record it repeats, with what has been folded into it so far: one
    // read a repeat.
    let repeated: Option<(Option<i64>, Option<i64>)> = conn
        .prepare_cached(
            "SELECT r.repeats, r.last_repeat_at FROM terminal_events e
             LEFT JOIN terminal_repeats r ON r.key = e.key
             WHERE e.key = ?1 AND e.device_serial = ?2 AND e.subject = ?3 AND e.rule_outcome = ?4",
        )?
        .query_row(
            params![
                of,
                record.device_serial,
                record.subject,
                RuleOutcome::Accepted.as_str()
            ],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    let Some(held) = repeated else {
        return Ok(None);
    };
    let held = held.0.zip(held.1);
    let number = i64::from(repeat.number);
    let at = record.occurred_at.0;
    let replayed = held.is_some_and(|(repeats, last)| repeats >= number && last >= at);
    if !replayed {
        conn.prepare_cached(
            "INSERT INTO terminal_repeats (key, repeats, last_repeat_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (key) DO UPDATE SET
               repeats = CASE WHEN excluded.repeats > terminal_repeats.repeats
                              THEN excluded.repeats ELSE terminal_repeats.repeats END,
               last_repeat_at = CASE WHEN excluded.last_repeat_at > terminal_repeats.last_repeat_at
                                     THEN excluded.last_repeat_at ELSE terminal_repeats.last_repeat_at END",
        )?
        .execute(params![of, number, at])?;
    }
    devices::record_terminal_seen(
        conn,
        &record.device_serial,
        record.source.as_str(),
        record.queued_at,
    )?;
    Ok(Some(TerminalResult {
        key: record.key,
        status: 200,
        replayed,
        code: None,
        message: None,
        hop_ids: vec![],
    }))
}

/// The observing hop of an accepted gate read of a known unit, if any.
/// A terminal's clock skew is not measured here (the listener converted
/// its local time), so the hop carries 0.
fn gate_read(
    conn: &Connection,
    record: &TerminalRecord,
    now: UnixMs,
) -> Result<Option<i64>, LedgerError> {
    if record.rule_outcome != RuleOutcome::Accepted {
        return Ok(None);
    }
    let unit = match record.kind {
        // A Zebra reader sends its EPCs in lower case; the ledger holds them
        // as the handheld sends them (upper case, `ident::canonical_epc`).
        TerminalEventKind::TagRead => units::find(
            conn,
            Some(&crate::ident::canonical_epc(record.subject.clone())),
            None,
        )?,
        TerminalEventKind::CodeRead => units::find(conn, None, Some(&record.subject))?,
        TerminalEventKind::Attendance => None,
    };
    let Some(unit) = unit else {
        return Ok(None);
    };
    let source_mode = match devices::commissioned(conn, &record.device_serial)? {
        Some(false) => SourceMode::Sim,
        Some(true) | None => SourceMode::Terminal,
    };
    let key = record.key.to_string();
    let facts = serde_json::json!({
        "source": record.source.as_str(),
        "subject": record.subject,
        "kind": record.kind.as_str(),
    });
    let hop_id = hops::append(
        conn,
        &NewHop {
            device_id: &record.device_serial,
            session_id: None,
            key: &key,
            client_seq: None,
            command: record.kind.as_str(),
            kind: hops::kinds::GATE_READ,
            mode: None,
            unit_id: Some(unit.unit_id),
            from_bin: unit.bin.as_deref(),
            to_bin: unit.bin.as_deref(),
            unit_version: Some(unit.version),
            facts: &facts,
            occurred_at: record.occurred_at,
            recorded_at: now,
            device_clock_skew_ms: 0,
            source_mode,
            compensates: None,
            closed_until: periods::closed_until(conn)?,
        },
    )?;
    Ok(Some(hop_id))
}

fn validate(record: &TerminalRecord) -> Result<(), LedgerError> {
    match refusal_reason(&record.device_serial, &record.subject, record.raw.len()) {
        Some(message) => Err(LedgerError::Refused(Refusal::new(
            422,
            wire_codes::INVALID_ITEM,
            message,
        ))),
        None => Ok(()),
    }
}

/// Why the ledger would refuse a terminal record with this serial, subject
/// and raw text length in bytes (as UTF-8), if it would: the listener asks
/// before it acknowledges, so it never acknowledges what will be refused.
pub fn refusal_reason(device_serial: &str, subject: &str, raw_bytes: usize) -> Option<String> {
    for (name, value) in [("device_serial", device_serial), ("subject", subject)] {
        if let Err(err) = crate::ident::check(name, value) {
            return Some(err.to_string());
        }
    }
    if raw_bytes > MAX_RAW_BYTES {
        return Some(format!("raw record over {MAX_RAW_BYTES} bytes"));
    }
    None
}

fn refused(record: &TerminalRecord, refusal: &Refusal) -> TerminalResult {
    TerminalResult {
        key: record.key,
        status: refusal.status,
        replayed: false,
        code: Some(refusal.code.to_owned()),
        message: Some(refusal.message.clone()),
        hop_ids: vec![],
    }
}

/// The signature header's value for `body` signed at `timestamp_secs`:
/// `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`.
pub fn sign(secret: &[u8], timestamp_secs: i64, body: &[u8]) -> String {
    format!(
        "sha256={}",
        hex::encode(mac(secret, timestamp_secs, body).finalize().into_bytes())
    )
}

/// Why a signed request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("missing or malformed signature headers")]
    Malformed,
    #[error("signature older than {SIGNATURE_MAX_AGE_SECS} s or from the future")]
    Expired,
    #[error("signature does not match")]
    Mismatch,
}

/// Checks a signed request at `now` (constant-time comparison).
pub fn verify(
    secret: &[u8],
    timestamp: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
    now: UnixMs,
) -> Result<(), SignatureError> {
    check_headers(timestamp, signature, now)?.verify(secret, body)
}

/// The signature headers, read and checked for freshness: what can be
/// refused before a byte of the body is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    timestamp_secs: i64,
    digest: Vec<u8>,
}

/// Reads the signature headers and checks the timestamp against `now`.
pub fn check_headers(
    timestamp: Option<&str>,
    signature: Option<&str>,
    now: UnixMs,
) -> Result<SignedHeaders, SignatureError> {
    let timestamp_secs: i64 = timestamp
        .and_then(|t| t.trim().parse().ok())
        .ok_or(SignatureError::Malformed)?;
    let digest = signature
        .and_then(|s| s.trim().strip_prefix("sha256="))
        .and_then(|h| hex::decode(h).ok())
        .filter(|digest| digest.len() == 32)
        .ok_or(SignatureError::Malformed)?;
    // The timestamp comes from outside: any i64 parses, so the distance is
    // taken without overflow (`abs_diff`), not by subtracting.
    if now.0.div_euclid(1000).abs_diff(timestamp_secs) > SIGNATURE_MAX_AGE_SECS.unsigned_abs() {
        return Err(SignatureError::Expired);
    }
    Ok(SignedHeaders {
        timestamp_secs,
        digest,
    })
}

impl SignedHeaders {
    /// Checks the MAC of `body` (constant-time comparison).
    pub fn verify(&self, secret: &[u8], body: &[u8]) -> Result<(), SignatureError> {
        mac(secret, self.timestamp_secs, body)
            .verify_slice(&self.digest)
            .map_err(|_| SignatureError::Mismatch)
    }
}

fn mac(secret: &[u8], timestamp_secs: i64, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(timestamp_secs.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: UnixMs = UnixMs(1_795_947_302_120);

    #[test]
    fn a_fresh_signature_verifies_and_a_changed_body_or_old_one_does_not() {
        let secret = b"site-secret";
        let ts = NOW.0 / 1000;
        let sig = sign(secret, ts, b"{}");
        let ts_text = ts.to_string();
        assert_eq!(
            verify(secret, Some(&ts_text), Some(&sig), b"{}", NOW),
            Ok(())
        );
        assert_eq!(
            verify(secret, Some(&ts_text), Some(&sig), b"{ }", NOW),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(b"other", Some(&ts_text), Some(&sig), b"{}", NOW),
            Err(SignatureError::Mismatch)
        );
        let old = (ts - SIGNATURE_MAX_AGE_SECS - 1).to_string();
        let old_sig = sign(secret, ts - SIGNATURE_MAX_AGE_SECS - 1, b"{}");
        assert_eq!(
            verify(secret, Some(&old), Some(&old_sig), b"{}", NOW),
            Err(SignatureError::Expired)
        );
        assert_eq!(
            verify(secret, None, Some(&sig), b"{}", NOW),
            Err(SignatureError::Malformed)
        );
    }
}
