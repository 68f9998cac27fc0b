//! What the listener keeps of a record once it is behind it: its identity
//! alone. A record's queue row, its raw body with it, goes once the
//! record is forwarded and past the stale horizon ([`ROW_RETENTION`]);
//! a row of `listener_seen` stays, 8 bytes of a digest of the terminal
//! and the terminal's own identity of the record under the record's
//! capture instant, so a resend (an upload whose acknowledgement was
//! lost, a reader's retained events, a backfill) is recognised for
//! [`SEEN_RETENTION`] of capture time and changes nothing. The ledger
//! holds the record itself.
//!
//! Keyed by capture instant first: a resend carries the same instant, and
//! records arrive in about the order they are captured, so the table
//! grows at its right edge in full pages and its oldest rows go as one
//! range at its left edge, with no index of its own.

use sha2::{Digest, Sha256};

use super::*;

/// How long, in capture time, a record's identity is kept once its queue
/// row is gone: a week. A backfill asks an iclock terminal again for a
/// range of its records after an outage, and a week covers one over a
/// weekend noticed days later; a Zebra reader's retained events (150,000
/// at most, lost when it reboots) and an upload whose acknowledgement was
/// lost come back within hours. The same week a forwarded record's whole
/// row was kept before. A record captured further than this from the
/// prune's instant, either way (a terminal whose clock is that far off),
/// keeps no identity: a resend of it is judged again, stale or clock skew.
pub const SEEN_RETENTION: Millis = Millis::from_secs(7 * 24 * 3600);

/// Bytes of a record's digest kept. Two distinct records are taken for one
/// only when they were captured in the same millisecond and their 64-bit
/// digests meet: about one in 2^64 for each such pair.
pub const SEEN_DIGEST_BYTES: usize = 8;

/// A record's identity: the digest of its terminal's serial (its length
/// first, so no serial and event id run into another pair) and the
/// terminal's own identity of the record.
pub(super) fn digest(device: &str, event_id: &str) -> [u8; SEEN_DIGEST_BYTES] {
    let mut hash = Sha256::new();
    hash.update((device.len() as u64).to_le_bytes());
    hash.update(device.as_bytes());
    hash.update(event_id.as_bytes());
    let full = hash.finalize();
    let mut kept = [0; SEEN_DIGEST_BYTES];
    kept.copy_from_slice(&full[..SEEN_DIGEST_BYTES]);
    kept
}

/// Whether a record captured at `occurred_at` with this identity was
/// kept before and its queue row has gone.
pub(super) fn was_seen(
    tx: &Transaction<'_>,
    occurred_at: UnixMs,
    digest: &[u8; SEEN_DIGEST_BYTES],
) -> rusqlite::Result<bool> {
    holds(
        tx,
        "SELECT 1 FROM listener_seen WHERE occurred_at = ?1 AND digest = ?2",
        occurred_at,
        digest,
    )
}

/// Whether `select` (by capture instant and digest) finds a row.
fn holds(
    tx: &Transaction<'_>,
    select: &str,
    occurred_at: UnixMs,
    digest: &[u8; SEEN_DIGEST_BYTES],
) -> rusqlite::Result<bool> {
    Ok(tx
        .prepare_cached(select)?
        .query_row(params![occurred_at.0, &digest[..]], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Keeps what is left of a repeat folded into the waiting repeat row of
/// the read it repeats ([`write`]): its identity ([`digest`]), so a resend is
/// recognised, and what the rate rules rebuilt on start spend.
pub(super) fn keep_folded(
    tx: &Transaction<'_>,
    record: &NewRecord,
    identity: [u8; SEEN_DIGEST_BYTES],
) -> rusqlite::Result<()> {
    let c = &record.capture;
    tx.prepare_cached(
        "INSERT INTO listener_repeat (occurred_at, digest, device_serial, kind, subject)
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
    )?
    .execute(params![
        c.occurred_at.0,
        &identity[..],
        c.device,
        record.kind.as_str(),
        c.subject
    ])?;
    Ok(())
}

/// Whether a repeat captured at `occurred_at` with this identity was
/// folded into another row ([`keep_folded`]).
pub(super) fn was_folded(
    tx: &Transaction<'_>,
    occurred_at: UnixMs,
    digest: &[u8; SEEN_DIGEST_BYTES],
) -> rusqlite::Result<bool> {
    holds(
        tx,
        "SELECT 1 FROM listener_repeat WHERE occurred_at = ?1 AND digest = ?2",
        occurred_at,
        digest,
    )
}

/// Whether the listener kept a record of this terminal and identity as a
/// repeat folded into another row: a check's question, which reads the
/// whole table (the write path looks one up by its capture instant).
pub fn is_folded(conn: &Connection, device: &str, event_id: &str) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM listener_repeat WHERE digest = ?1 LIMIT 1")?
        .query_row([&digest(device, event_id)[..]], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Deletes up to [`PRUNE_ROWS_MAX`] folded repeats captured before the
/// queue rows' horizon at `now`, the oldest first: a resend of one is then
/// stale, and the rate rules read no further back.
pub(super) fn forget_folded(tx: &Transaction<'_>, now: UnixMs) -> rusqlite::Result<usize> {
    let horizon = now.0 - ROW_RETENTION.0 as i64;
    tx.execute(
        "DELETE FROM listener_repeat WHERE (occurred_at, digest) IN
           (SELECT occurred_at, digest FROM listener_repeat WHERE occurred_at < ?1
            ORDER BY occurred_at LIMIT ?2)",
        params![horizon, PRUNE_ROWS_MAX as i64],
    )
}

/// Compacts up to [`PRUNE_ROWS_MAX`] forwarded rows past the horizon at
/// `now`: each row is deleted and, unless it is a repeat (the ledger
/// keeps a repeat only as its read's count, and a row of identity for
/// each of a pallet's many repeats would cost more than the reads), its
/// identity is kept. Rows captured further ahead of `now` than the rules
/// accept go too: they were judged clock skew, and no rule reads them
/// back. Returns the rows deleted.
pub(super) fn compact(
    tx: &Transaction<'_>,
    now: UnixMs,
    seen_retention: Millis,
) -> Result<usize, QueueError> {
    let horizon = now.0 - ROW_RETENTION.0 as i64;
    let ahead = now.0 + CLOCK_SKEW_MAX.0 as i64;
    let kept_from = now.0 - seen_retention.0 as i64;
    let kept_to = now.0 + seen_retention.0 as i64;
    let mut select = tx.prepare_cached(
        "SELECT seq, device_serial, event_id, occurred_at, rule_outcome = 'duplicate'
         FROM listener_queue INDEXED BY listener_queue_forwarded
         WHERE state = 'done' AND (occurred_at < ?1 OR occurred_at > ?2)
         ORDER BY occurred_at LIMIT ?3",
    )?;
    let rows = select
        .query_map(params![horizon, ahead, PRUNE_ROWS_MAX as i64], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, i64>(3)?,
                row.get::<_, bool>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut keep = tx.prepare_cached(
        "INSERT INTO listener_seen (occurred_at, digest) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
    )?;
    let mut delete = tx.prepare_cached("DELETE FROM listener_queue WHERE seq = ?1")?;
    for (seq, device, event_id, occurred_at, repeat) in &rows {
        if !repeat && (kept_from..=kept_to).contains(occurred_at) {
            keep.execute(params![occurred_at, &digest(device, event_id)[..]])?;
        }
        delete.execute([seq])?;
    }
    Ok(rows.len())
}

/// Deletes up to [`PRUNE_ROWS_MAX`] identities of records captured more
/// than `seen_retention` ([`SEEN_RETENTION`] by default) before `now`,
/// the oldest first.
pub(super) fn forget(
    tx: &Transaction<'_>,
    now: UnixMs,
    seen_retention: Millis,
) -> Result<usize, QueueError> {
    let before = now.0 - seen_retention.0 as i64;
    Ok(tx.execute(
        "DELETE FROM listener_seen WHERE (occurred_at, digest) IN
           (SELECT occurred_at, digest FROM listener_seen WHERE occurred_at < ?1
            ORDER BY occurred_at LIMIT ?2)",
        params![before, PRUNE_ROWS_MAX as i64],
    )?)
}
