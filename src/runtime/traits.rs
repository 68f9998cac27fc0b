//! What the runtime needs from where it runs, as four small traits: the
//! queue's durable operations ([`Store`]), the site's endpoints
//! ([`Transport`]), time ([`Clock`]) and the platform's lock and wake-up
//! registration ([`Platform`]). The browser implements them in
//! `crate::web`; the simulation implements them over its model of
//! IndexedDB, its network and its virtual clock.
//!
//! Durability, the contract every store keeps: a write method's future
//! resolves `Ok` only once its transaction has committed, all of it or
//! nothing; a write that fails (or whose future is dropped before it
//! resolves) has written nothing. Writes commit in the order they were
//! made. "Strict" writes are on disk when they resolve, with every write
//! committed before them; "relaxed" writes may be lost by a crash that
//! comes before a later strict write, as a suffix (never a later relaxed
//! write without the earlier ones).

use std::future::Future;

use uuid::Uuid;

use std::collections::BTreeMap;

use crate::backoff::Backoff;
use crate::key::IdempotencyKey;
use crate::queue::{BeatOutcome, Counts, Item, Session, TransportOutcome};
use crate::reference::{PageHead, Pull, ReferenceMeta, RowKind};
use crate::time::{Millis, UnixMs};
use crate::wire::{Heartbeat, SyncRequest};

use super::error::QueueError;
use super::records::{CaptureRequest, DeviceConfig, DrainSnapshot, Written};

/// A page of `GET /v1/reference` as the transport read it: the head, the
/// rows in the store's own form, and the site it was read from (a setup
/// naming another site drops it).
pub struct Page<R> {
    pub head: PageHead,
    pub rows: R,
    pub site: String,
}

/// The queue's durable storage. The runtime is its only writer; a clone
/// is the same storage, for the reads the runtime answers beside its loop.
#[allow(async_fn_in_trait)]
pub trait Store: Clone {
    /// A cached reference row as the site sent it; "none" is a row too
    /// (the browser's `null`), so a lookup always has one to hand back.
    type Row: 'static;
    /// Every cached row of a kind, as [`Store::reference_rows`] lists them.
    type Rows: 'static;
    /// A reference page's rows as the transport read them.
    type PageRows: 'static;

    /// Writes a capture group in ONE strict transaction. `remembered`
    /// holds sessions as this runtime last committed them: a session found
    /// there is not read back. Each capture takes the key given with it
    /// and the next seq of its session ([`super::plan_capture`]); a
    /// refused one takes no seq. The outer error is the transaction's (nothing of the group
    /// was written: a remembered session may be behind storage, and a
    /// reused `(session_id, client_seq)` is refused by the store).
    async fn write_captures(
        &mut self,
        requests: &[(CaptureRequest, IdempotencyKey)],
        remembered: &BTreeMap<Uuid, Session>,
        now: UnixMs,
    ) -> Result<Written, QueueError>;

    /// Discards a blocked item and adds its `void` under `key` (the
    /// session's next seq), in one strict transaction; both items as
    /// written.
    async fn discard(
        &mut self,
        id: u64,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Result<(Item, Item), QueueError>;

    /// Records the acknowledgement of a rejected item (replaced by the scan
    /// `rescan`, if so) and adds the `acknowledge` that tells the site
    /// under `key`, in one strict transaction.
    async fn acknowledge(
        &mut self,
        id: u64,
        rescan: Option<IdempotencyKey>,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Result<(Item, Item), QueueError>;

    /// Every session, every pending item (queued, sending, blocked) and
    /// the backoff, read in one transaction.
    async fn load_drain(&self) -> Result<DrainSnapshot, QueueError>;

    /// Puts the drain's items (a lease, or recorded outcomes) and, for an
    /// outcome, the backoff, in one RELAXED transaction: each can be lost
    /// without losing or doubling a scan (a lost lease leaves the items
    /// queued, a lost outcome leaves them sending or queued, and either
    /// way they are sent again under their keys).
    async fn put_items(&self, items: &[Item], backoff: Option<Backoff>) -> Result<(), QueueError>;

    /// Deletes items done for at least `retention`, at most a bounded
    /// number a call; returns how many. Relaxed.
    async fn prune_done(&self, now: UnixMs, retention: Millis) -> Result<usize, QueueError>;

    /// The device's setup, if it has one.
    async fn device(&self) -> Result<Option<DeviceConfig>, QueueError>;

    /// Stores the setup (strict); with `clear_cache`, empties the reference
    /// cache and its meta record in the same transaction.
    async fn set_device(&self, config: &DeviceConfig, clear_cache: bool) -> Result<(), QueueError>;

    /// A page of items in capture order after queue id `after`, each with
    /// the reason it waits.
    async fn list(
        &self,
        after: Option<u64>,
        limit: u32,
    ) -> Result<Vec<(Item, Option<String>)>, QueueError>;

    /// Items by state and the oldest still to go out.
    async fn counts(&self, now: UnixMs) -> Result<Counts, QueueError>;

    /// The reference cache's meta record; `None` before anything was cached.
    async fn reference_meta(&self) -> Result<Option<ReferenceMeta>, QueueError>;

    /// Rows cached of each kind, in [`RowKind::ALL`]'s order.
    async fn reference_counts(&self) -> Result<[u32; 4], QueueError>;

    /// A page's rows and the meta record after it, in one relaxed
    /// transaction (the cursor never runs ahead of the rows).
    async fn write_reference_page(
        &self,
        page: &Page<Self::PageRows>,
        meta: &ReferenceMeta,
    ) -> Result<(), QueueError>;

    /// Keeps a unit read live from the site; relaxed.
    async fn put_unit(&self, unit: &Self::Row) -> Result<(), QueueError>;

    /// A unit by EPC, else by code, and the bin it is in.
    async fn find_unit(&self, code: &str) -> Result<(Self::Row, Self::Row), QueueError>;

    /// One cached row by kind and key.
    async fn reference_row(&self, kind: RowKind, id: &str) -> Result<Self::Row, QueueError>;

    /// Every cached row of a kind in key order, at most `limit`.
    async fn reference_rows(&self, kind: RowKind, limit: u32) -> Result<Self::Rows, QueueError>;

    /// Closes the connection: the runtime has stopped.
    fn close(self);
}

/// The site's endpoints, each answered in the core's terms. A request
/// that gets no answer in its timeout resolves as one (it never hangs).
#[allow(async_fn_in_trait)]
pub trait Transport {
    /// A reference page's rows, as the store keeps them.
    type PageRows;
    /// A unit read live, as the store keeps it.
    type Unit;

    /// `POST /v1/sync`.
    async fn send(&self, device: &DeviceConfig, request: &SyncRequest) -> TransportOutcome;
    /// `POST /v1/devices/{device_id}/heartbeat`.
    async fn heartbeat(&self, device: &DeviceConfig, beat: &Heartbeat) -> BeatOutcome;
    /// One page of `GET /v1/reference`.
    async fn reference(
        &self,
        device: &DeviceConfig,
        pull: &Pull,
    ) -> Result<Page<Self::PageRows>, QueueError>;
    /// `GET /v1/units/{epc}`: the unit, or `None` for a 404.
    async fn unit(
        &self,
        device: &DeviceConfig,
        epc: &str,
    ) -> Result<Option<Self::Unit>, QueueError>;
}

/// The device's clock, and sleeping on it.
pub trait Clock {
    /// A sleep; ready once the clock has reached its instant.
    type Sleep: Future<Output = ()> + Unpin;
    fn now(&self) -> UnixMs;
    /// Ready once [`Clock::now`] has reached `at` (at once if it has).
    fn sleep_until(&self, at: UnixMs) -> Self::Sleep;
}

/// The platform around the runtime: the lock every request is sent under,
/// the wake-up registration, and where tasks run.
#[allow(async_fn_in_trait)]
pub trait Platform {
    /// The drain lock, held until dropped.
    type Lock: 'static;
    /// Waits for the drain lock (`None`: the platform has no such lock,
    /// and the runtime's being the queue's one writer is the only guard).
    async fn lock(&self) -> Option<Self::Lock>;
    /// Asks the platform to wake the runtime to drain should it be stopped
    /// before it is done; whether a registration was made.
    async fn register_sync(&self) -> bool;
    /// Runs `task` beside the runtime, on the same thread.
    fn spawn(&self, task: impl Future<Output = ()> + 'static);
    /// A fresh idempotency key (a session id, too) from the platform's
    /// randomness.
    fn mint_key(&self) -> Result<IdempotencyKey, QueueError>;
}
