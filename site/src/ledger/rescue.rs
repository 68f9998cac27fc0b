//! Importing a handheld's rescue file ([`stockhop::rescue`]): the queue of
//! a device that can no longer reach the site, applied through the same
//! code as its sync requests would be, exactly once by key.
//!
//! A file is checked whole before anything of it is applied: it must be a
//! rescue file ([`stockhop::rescue::read`]) signed with the digest the
//! site keeps of its device's token, or of the token a revoked device held
//! when it was revoked (retiring a device is revoke, then import its file).
//! Anything else is `422 RESCUE_UNVERIFIED` and nothing is applied.
//!
//! Its items then go to [`super::sync::run_parked`] as the device itself
//! would send them: sessions oldest first (by the `queued_at` of each
//! session's first item), each in `client_seq` order whatever the file's
//! order, in requests of [`MAX_ITEMS_PER_REQUEST`], each request in its
//! own transaction and any backlog it unparks drained before the next. A
//! key the site holds already (from the device's own sync or an earlier
//! import) answers its stored answer, marked replayed; refusals are
//! recorded as sync records them. So an import is safe to repeat, and safe
//! beside the device's own requests: both claim keys in the transaction
//! that does the work.
//!
//! Decisions made here:
//!
//! * The device's clock against the site's is unknown (the file was written
//!   some time before it arrived), so items are taken with no skew: the
//!   request's `sent_at` is the import's `now`.
//! * The answer counts each item once: `replayed` (the site had its key
//!   already, whatever its answer then), else `applied` (applied, or
//!   simulated for a device not commissioned), else `rejected` (a business
//!   refusal, a 4xx refusal such as `SEQ_ALREADY_USED`, or still buffered
//!   behind an earlier `client_seq` the file did not hold). Buffered items
//!   are stored and apply when their gap fills, by the device or a later
//!   file; `buffered` says how many of the rejected they are.
//! * The import is not one transaction: a failure part way leaves the
//!   requests before it applied, and importing the file again replays them.
//!   Only a completed import is recorded in `rescues`.

use std::collections::HashMap;

use stockhop::key::IdempotencyKey;
use stockhop::rescue::{self, TokenDigest};
use stockhop::time::UnixMs;
use stockhop::wire::{ItemOutcome, ItemResult, SyncItem, MAX_ITEMS_PER_REQUEST};

use super::devices::{self, Device};
use super::receipts::{self, ReceiptState};
use super::sync::{self, Incoming};
use super::{LedgerError, Refusal};
use crate::store::sql::{params, Connection, OptionalExtension};

/// A file that is not a rescue file, or whose signature does not hold for
/// its device: refused whole.
pub const RESCUE_UNVERIFIED: &str = "RESCUE_UNVERIFIED";

fn unverified(message: String) -> LedgerError {
    LedgerError::Refused(Refusal::new(422, RESCUE_UNVERIFIED, message))
}

/// What an import did with a file's items: `items` is the sum of
/// `applied`, `rejected` and `replayed`; `buffered` is part of `rejected`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct RescueCounts {
    pub items: u64,
    pub applied: u64,
    pub rejected: u64,
    pub replayed: u64,
    /// Of the rejected, those held for an earlier `client_seq` the file did
    /// not carry: they apply when that gap fills.
    pub buffered: u64,
}

impl RescueCounts {
    fn count(&mut self, result: &ItemResult) {
        self.items += 1;
        match result.outcome {
            Some(ItemOutcome::Buffered) => {
                self.rejected += 1;
                self.buffered += 1;
            }
            _ if result.replayed => self.replayed += 1,
            Some(ItemOutcome::Applied | ItemOutcome::Simulated) => self.applied += 1,
            Some(ItemOutcome::Rejected) | None => self.rejected += 1,
        }
    }
}

/// A verified file, ready to apply request by request: the caller runs
/// [`Plan::run_request`] for each in turn (one transaction each, so other
/// work can go between) and then [`Plan::finish`].
#[derive(Debug)]
pub struct Plan {
    device: Device,
    exported_at: UnixMs,
    requests: Vec<Vec<Incoming>>,
    results: Vec<ItemResult>,
}

/// Checks `bytes` whole: a rescue file, for a device the site has, signed
/// with the digest of that device's token (or, for a revoked device, the
/// token it held when revoked). Reads but writes nothing.
pub fn verify(conn: &Connection, bytes: &[u8]) -> Result<Plan, LedgerError> {
    let file = rescue::read(bytes)
        .map_err(|err| unverified(format!("not a rescue file, nothing imported: {err}")))?;
    let device_id = &file.header.device_id;
    let refused = || {
        unverified(format!(
            "the file's signature does not hold for device {device_id:?}: it was changed after it was \
             written or another device wrote it; nothing imported"
        ))
    };
    let device = match devices::find(conn, device_id) {
        Ok(device) => device,
        Err(LedgerError::Refused(_)) => {
            return Err(unverified(format!(
            "the file names device {device_id:?}, which this site does not know; nothing imported"
        )))
        }
        Err(err) => return Err(err),
    };
    let digest = signing_digest(conn, device_id)?.ok_or_else(|| {
        unverified(format!(
            "device {device_id:?} was revoked before this site kept revoked devices' token \
             digests, so its file cannot be checked; nothing imported"
        ))
    })?;
    if !rescue::verify(&file, &digest) {
        return Err(refused());
    }
    let requests = in_order(&file.items)
        .chunks(MAX_ITEMS_PER_REQUEST)
        .map(|chunk| chunk.iter().map(|item| incoming(item)).collect())
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Plan {
        device,
        exported_at: file.header.exported_at,
        requests,
        results: Vec::with_capacity(file.items.len()),
    })
}

/// The digest a device's file is signed with: the stored SHA-256 of its
/// token, or of the token it held when it was revoked (`None` for a device
/// revoked before the site kept that).
fn signing_digest(conn: &Connection, device_id: &str) -> Result<Option<TokenDigest>, LedgerError> {
    let stored: Option<Option<String>> = conn
        .prepare_cached(
            "SELECT CASE WHEN r.device_id IS NULL THEN d.token_sha256 ELSE r.token_sha256 END
             FROM devices d LEFT JOIN device_revocations r ON r.device_id = d.device_id
             WHERE d.device_id = ?1",
        )?
        .query_row([device_id], |row| row.get(0))
        .optional()?;
    let Some(Some(hex_digest)) = stored else {
        return Ok(None);
    };
    let digest = hex::decode(&hex_digest)
        .ok()
        .and_then(|bytes| TokenDigest::try_from(bytes).ok())
        .ok_or_else(|| {
            LedgerError::Corrupt(format!(
                "device {device_id:?} has a token digest that is not SHA-256 hex"
            ))
        })?;
    Ok(Some(digest))
}

/// The items as the device's drain sends them: sessions oldest first (the
/// `queued_at` of a session's first item, then its id), each in
/// `client_seq` order; the file's order where both are equal.
fn in_order(items: &[SyncItem]) -> Vec<&SyncItem> {
    let mut started: HashMap<uuid::Uuid, (u64, UnixMs)> = HashMap::new();
    for item in items {
        let first = started
            .entry(item.session_id)
            .or_insert((item.client_seq, item.queued_at));
        if item.client_seq < first.0 {
            *first = (item.client_seq, item.queued_at);
        }
    }
    let mut ordered: Vec<&SyncItem> = items.iter().collect();
    ordered.sort_by_key(|item| {
        (
            started[&item.session_id].1,
            item.session_id,
            item.client_seq,
        )
    });
    ordered
}

/// An item as a sync request carries it: the same JSON, so the same
/// canonical hash as the device's own request for it.
fn incoming(item: &SyncItem) -> Result<Incoming, LedgerError> {
    serde_json::to_value(item)
        .and_then(|value| Incoming::from_value(&value))
        .map_err(|err| LedgerError::Corrupt(format!("an item of a verified file: {err}")))
}

impl Plan {
    pub fn device_id(&self) -> &str {
        &self.device.device_id
    }

    /// How many requests the items make.
    pub fn requests(&self) -> usize {
        self.requests.len()
    }

    /// Runs request `index` through sync at `now`, in its own transaction,
    /// and then the backlog it unparked, to the end.
    pub fn run_request(
        &mut self,
        conn: &mut Connection,
        index: usize,
        now: UnixMs,
    ) -> Result<(), LedgerError> {
        let items = &self.requests[index];
        // Nothing else holds these keys in flight: each request has the
        // site's one writer to itself, and a device request for the same
        // keys runs wholly before or after it and then answers a replay.
        let held = vec![false; items.len()];
        let ran = sync::run_parked(conn, &self.device, now, items, &held, now)?;
        let mut parked = ran.parked;
        while !parked.is_empty() {
            parked = sync::drain_parked(conn, &self.device, &parked, now)?;
        }
        self.results.extend(ran.results);
        Ok(())
    }

    /// Counts what became of every item (an item answered `buffered` that a
    /// later request of the file unblocked answers what it became) and
    /// records the import at `now`.
    pub fn finish(mut self, conn: &mut Connection, now: UnixMs) -> Result<Imported, LedgerError> {
        for result in &mut self.results {
            if result.outcome == Some(ItemOutcome::Buffered) {
                *result = settled(conn, &self.device.device_id, &result.key)?
                    .unwrap_or_else(|| result.clone());
            }
        }
        let mut counts = RescueCounts::default();
        self.results.iter().for_each(|result| counts.count(result));
        let n = |count: u64| i64::try_from(count).unwrap_or(i64::MAX);
        conn.execute(
            "INSERT INTO rescues (device_id, imported_at, exported_at, items, applied, rejected,
                                  replayed, buffered)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                self.device.device_id,
                now.0,
                self.exported_at.0,
                n(counts.items),
                n(counts.applied),
                n(counts.rejected),
                n(counts.replayed),
                n(counts.buffered)
            ],
        )?;
        Ok(Imported {
            device_id: self.device.device_id,
            counts,
            results: self.results,
        })
    }
}

/// What an import did: the device, the counts, and each item's answer in
/// the order the items were applied (what the device's own requests would
/// have been answered).
#[derive(Debug, Clone)]
pub struct Imported {
    pub device_id: String,
    pub counts: RescueCounts,
    pub results: Vec<ItemResult>,
}

/// The final answer of a key this import left buffered, if it has one now
/// (this import applied it: not a replay).
fn settled(
    conn: &Connection,
    device_id: &str,
    key: &IdempotencyKey,
) -> Result<Option<ItemResult>, LedgerError> {
    Ok(receipts::find(conn, device_id, key)?
        .filter(|receipt| receipt.state == ReceiptState::Final)
        .and_then(|receipt| receipt.stored_answer())
        .map(|mut answer| {
            answer.replayed = false;
            answer
        }))
}

/// Verifies and imports a file at `now`, request by request on `conn`.
pub fn import(conn: &mut Connection, bytes: &[u8], now: UnixMs) -> Result<Imported, LedgerError> {
    let mut plan = verify(conn, bytes)?;
    for index in 0..plan.requests() {
        plan.run_request(conn, index, now)?;
    }
    plan.finish(conn, now)
}

/// One imported file, for the site's view.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Rescued {
    pub device_id: String,
    #[schema(value_type = String, format = DateTime)]
    pub imported_at: UnixMs,
    #[schema(value_type = String, format = DateTime)]
    pub exported_at: UnixMs,
    pub applied: i64,
    pub replayed: i64,
    pub rejected: i64,
}

/// The imports of the last `limit`, newest first.
pub fn recent(conn: &Connection, limit: i64) -> crate::store::sql::Result<Vec<Rescued>> {
    conn.prepare_cached(
        "SELECT device_id, imported_at, exported_at, applied, replayed, rejected FROM rescues
         ORDER BY imported_at DESC, rescue_id DESC LIMIT ?1",
    )?
    .query_map([limit], |row| {
        Ok(Rescued {
            device_id: row.get(0)?,
            imported_at: UnixMs(row.get(1)?),
            exported_at: UnixMs(row.get(2)?),
            applied: row.get(3)?,
            replayed: row.get(4)?,
            rejected: row.get(5)?,
        })
    })?
    .collect()
}

/// A revoked device whose last heartbeat said it still had items queued:
/// scans the site may not have, until its rescue file is imported.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Stranded {
    pub device_id: String,
    #[schema(value_type = String, format = DateTime)]
    pub revoked_at: UnixMs,
    /// Items queued at its last heartbeat before it was revoked.
    pub queued: i64,
    /// When a rescue file of it was last imported, if one was since it was
    /// revoked.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub rescued_at: Option<UnixMs>,
}

/// Every revoked device that had items queued when it was revoked, most
/// recently revoked first.
pub fn stranded(conn: &Connection) -> crate::store::sql::Result<Vec<Stranded>> {
    conn.prepare_cached(
        "SELECT r.device_id, r.revoked_at, r.queue_depth,
                (SELECT max(s.imported_at) FROM rescues s
                  WHERE s.device_id = r.device_id AND s.imported_at >= r.revoked_at)
         FROM device_revocations r
         WHERE r.queue_depth > 0
         ORDER BY r.revoked_at DESC, r.device_id",
    )?
    .query_map([], |row| {
        Ok(Stranded {
            device_id: row.get(0)?,
            revoked_at: UnixMs(row.get(1)?),
            queued: row.get(2)?,
            rescued_at: row.get::<_, Option<i64>>(3)?.map(UnixMs),
        })
    })?
    .collect()
}
