//! The queue's IndexedDB store: every read and write the runtime does, one
//! transaction per step, through `indexed_db_futures`. Writes of what only
//! the device knows (captures, discards, acknowledgements, the setup) use
//! durability "strict", so a completed transaction is on disk before
//! anyone hears of it; the drain's own bookkeeping is "relaxed" (see
//! [`Store::put_items`]).
//!
//! Records cross into and out of IndexedDB through serde
//! ([`super::convert`]); a record that does not read is a storage error
//! naming the record and what did not fit.
//!
//! Architecture invariant: no transaction here awaits anything but its own
//! requests (no fetch, no timer), so none auto-commits half-way. A
//! transaction dropped before its commit (an error part-way through a
//! step) is rolled back by the crate, so a step writes all or nothing.

use std::cell::Cell;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::future::Future;

use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{
    Transaction, TransactionDurability, TransactionMode, TransactionOptions,
};
use indexed_db_futures::KeyRange;
use js_sys::Array;
use serde::de::DeserializeOwned;
use serde::Serialize;
use uuid::Uuid;
use wasm_bindgen::JsValue;

use crate::backoff::Backoff;
use crate::key::IdempotencyKey;
use crate::queue::{
    acknowledge, discard, Blockers, CaptureError, Counts, Item, ItemState, Session,
};
use crate::reference::{wants_unit_version, ReferenceMeta, RowKind};
use crate::runtime::traits::Store as QueueStore;
use crate::runtime::{plan_capture, Page, Written};
use crate::time::{Millis, UnixMs};

use super::convert::{from_record, to_js, unit_version};
use super::error::QueueError;
use super::schema::{self, BY_SESSION_SEQ, BY_STATE, ITEMS, META, SESSIONS, UNITS};
pub use crate::runtime::{CaptureRequest, DeviceConfig, DrainSnapshot};

const META_BACKOFF: &str = "backoff";
pub(super) const META_DEVICE: &str = "device";

/// Most done items one prune deletes: one short transaction, however long
/// the device was away; the next prune takes the rest.
pub const PRUNE_MAX_ITEMS: usize = 1_000;

/// The queue's database.
#[derive(Clone)]
pub struct Store {
    db: Database,
    /// A unit was found in the cache in this worker life: a group naming
    /// units reads their versions without counting the cache first.
    units_cached: Cell<bool>,
}

/// A record read from storage, with the field that did not fit named.
fn record<T: DeserializeOwned>(value: JsValue, noun: &str) -> Result<T, QueueError> {
    from_record(value, noun).map_err(QueueError::Storage)
}

/// A record written for storage.
fn plain<T: Serialize>(value: &T) -> Result<JsValue, QueueError> {
    to_js(value).map_err(QueueError::Storage)
}

impl Store {
    /// Opens (and if needed upgrades) the database `name`.
    pub async fn open(name: &str) -> Result<Store, QueueError> {
        Ok(Store {
            db: schema::open(name).await?,
            units_cached: Cell::new(false),
        })
    }

    pub(super) fn read<'a>(&'a self, stores: &[&str]) -> Result<Transaction<'a>, QueueError> {
        Ok(self.db.transaction(stores).build()?)
    }

    pub(super) fn write<'a>(
        &'a self,
        stores: &[&str],
        durability: TransactionDurability,
    ) -> Result<Transaction<'a>, QueueError> {
        let mut options = TransactionOptions::new();
        options.set_durability(durability);
        Ok(self
            .db
            .transaction(stores)
            .with_mode(TransactionMode::Readwrite)
            .with_options(options)
            .build()?)
    }

    pub async fn backoff(&self) -> Result<Backoff, QueueError> {
        let tx = self.read(&[META])?;
        Ok(get_meta(&tx, META_BACKOFF).await?.unwrap_or_default())
    }

    pub async fn set_device(&self, config: &DeviceConfig) -> Result<(), QueueError> {
        let tx = self.write(&[META], TransactionDurability::Strict)?;
        put_meta(&tx, META_DEVICE, config)?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn item(&self, id: u64) -> Result<Item, QueueError> {
        let tx = self.read(&[ITEMS])?;
        get_item(&tx, id).await
    }

    /// The device's setup and every item the site has not acknowledged
    /// (queued, sending, blocked; each state's in capture order), for the
    /// queue screen's Export: one read-only transaction, so the drain's
    /// writes either all precede it or all follow it, and nothing is
    /// changed.
    pub async fn unacknowledged(&self) -> Result<(Option<DeviceConfig>, Vec<Item>), QueueError> {
        let tx = self.read(&[ITEMS, META])?;
        let device = get_meta(&tx, META_DEVICE).await?;
        let items = pending_items(&tx).await?;
        Ok((device, items))
    }

    /// Every item of a session, in seq order (for tests and diagnostics).
    pub async fn session_items(&self, session_id: Uuid) -> Result<Vec<Item>, QueueError> {
        let tx = self.read(&[ITEMS])?;
        let items = tx.object_store(ITEMS)?;
        let index = items.index(BY_SESSION_SEQ)?;
        let id = JsValue::from_str(&session_id.to_string());
        let lower: JsValue = js_sys::Array::of2(&id, &JsValue::from_f64(0.0)).into();
        let upper: JsValue = js_sys::Array::of2(&id, &JsValue::from_f64(f64::MAX)).into();
        let rows = index
            .get_all::<JsValue>()
            .with_query::<JsValue, _>(KeyRange::Bound(lower, false, upper, false))
            .primitive()?
            .await?;
        all(rows, "item")
    }
}

/// The runtime's store: IndexedDB, one transaction per call. The
/// reference cache's side is in [`super::cache`].
impl QueueStore for Store {
    type Row = JsValue;
    type Rows = Array;
    type PageRows = super::cache::PageRows;

    /// Writes a group of captures in ONE strict transaction (see
    /// [`QueueStore::write_captures`]).
    async fn write_captures(
        &mut self,
        requests: &[(CaptureRequest, IdempotencyKey)],
        remembered: &BTreeMap<Uuid, Session>,
        now: UnixMs,
    ) -> Result<Written, QueueError> {
        // A scan that names a unit without its version reads the cached
        // unit in this same transaction (only then is the unit store in
        // its scope, so other groups never wait behind the cache's fill).
        let reads_units = requests.iter().any(|(request, _)| {
            matches!(request, CaptureRequest::Capture { capture, .. }
                if wants_unit_version(&capture.body).is_some())
        });
        let scope: &[&str] = if reads_units {
            &[ITEMS, SESSIONS, UNITS]
        } else {
            &[ITEMS, SESSIONS]
        };
        let tx = self.write(scope, TransactionDurability::Strict)?;
        let items = tx.object_store(ITEMS)?;
        let sessions = tx.object_store(SESSIONS)?;
        let mut versions = vec![None; requests.len()];
        if reads_units {
            let units = tx.object_store(UNITS)?;
            // Until a unit is found in this worker life, one count tells
            // whether there is any version to read: a cache that holds no
            // unit (not loaded yet) then costs one request a group, not
            // one a scan.
            if !self.units_cached.get() && units.count().primitive()?.await? > 0 {
                self.units_cached.set(true);
            }
            if self.units_cached.get() {
                // Every cached unit the group names is asked for at once,
                // before any is read: one wait for IndexedDB a group.
                let mut gets = Vec::new();
                for (index, (request, _)) in requests.iter().enumerate() {
                    if let CaptureRequest::Capture { capture, .. } = request {
                        if let Some(epc) = wants_unit_version(&capture.body) {
                            gets.push((index, units.get(epc).primitive()?));
                        }
                    }
                }
                // Requests finish in the order they were made: once the
                // last is answered, the others are read without waiting.
                let last = gets.pop();
                for (index, get) in last.into_iter().chain(gets) {
                    versions[index] = get.await?.as_ref().and_then(unit_version);
                }
            }
        }
        // The sessions this group touches, as they will be after it (a
        // session not found stays out, and each capture for it is refused).
        let mut touched: BTreeMap<Uuid, Session> = BTreeMap::new();
        let mut results = Vec::with_capacity(requests.len());
        let mut adds = Vec::with_capacity(requests.len());
        for ((request, key), version) in requests.iter().zip(versions) {
            let session_id = request.session_id();
            if let Entry::Vacant(vacant) = touched.entry(session_id) {
                let session = match remembered.get(&session_id) {
                    Some(session) => Some(session.clone()),
                    None => {
                        let stored: Option<JsValue> =
                            sessions.get(session_id.to_string()).primitive()?.await?;
                        stored.map(|s| record(s, "session")).transpose()?
                    }
                };
                if let Some(session) = session {
                    vacant.insert(session);
                }
            }
            let item = plan_capture(&mut touched, request, *key, now, version);
            let record = match &item {
                // Each item (with its body) is converted for IndexedDB once.
                Ok(planned) => match to_js(planned) {
                    Ok(record) => Some(record),
                    // A body IndexedDB could not hold as given (a number
                    // beyond ±2^53) is refused, and the seq it took is
                    // given back.
                    Err(why) if matches!(request, CaptureRequest::Capture { .. }) => {
                        if let Some(session) = touched.get_mut(&session_id) {
                            session.next_seq = planned.client_seq;
                        }
                        results.push(Err(QueueError::BadMessage(format!("body: {why}"))));
                        continue;
                    }
                    Err(why) => return Err(QueueError::Storage(why)),
                },
                Err(_) => None,
            };
            if let Some(record) = record {
                let add = items.add(record).with_key_type::<f64>().primitive()?;
                adds.push((results.len(), add));
            }
            results.push(item);
        }
        for session in touched.values() {
            sessions.put(plain(session)?).build()?;
        }
        // The commit is asked for as soon as the last request is made, not
        // after its answer: one wait for IndexedDB fewer a group. A failed
        // add aborts the transaction, so the commit fails and the whole
        // group with it (nothing written unheard); once committed, every
        // add has its id.
        tx.commit().await?;
        for (index, add) in adds {
            let id = queue_id(add.await?)?;
            if let Ok(item) = &mut results[index] {
                item.id = Some(id);
            }
        }
        Ok(Written {
            results,
            sessions: touched,
        })
    }

    /// What the drain needs after a wake-up.
    async fn load_drain(&self) -> Result<DrainSnapshot, QueueError> {
        let tx = self.read(&[ITEMS, SESSIONS, META])?;
        let sessions = all(
            tx.object_store(SESSIONS)?
                .get_all::<JsValue>()
                .primitive()?
                .await?,
            "session",
        )?;
        let pending = pending_items(&tx).await?;
        let backoff = get_meta(&tx, META_BACKOFF).await?.unwrap_or_default();
        Ok(DrainSnapshot {
            sessions,
            pending,
            backoff,
        })
    }

    /// Writes the drain's items (a lease, or recorded outcomes) and
    /// optionally the backoff, in one transaction with durability
    /// "relaxed": on the operating system, not yet known to be on disk.
    ///
    /// That is enough because each of these writes can be lost without
    /// losing or doubling a scan: a lost lease leaves the items `queued`, a
    /// lost outcome leaves them `sending` or `queued`, and either way they
    /// are sent again under their keys and the server answers from its
    /// receipts; a lost backoff only means an earlier attempt. Captures,
    /// discards and acknowledgements, which record what only the device
    /// knows, stay "strict".
    async fn put_items(&self, items: &[Item], backoff: Option<Backoff>) -> Result<(), QueueError> {
        let tx = self.write(&[ITEMS, META], TransactionDurability::Relaxed)?;
        let store = tx.object_store(ITEMS)?;
        for item in items {
            store.put(plain(item)?).build()?;
        }
        if let Some(backoff) = backoff {
            put_meta(&tx, META_BACKOFF, &backoff)?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn device(&self) -> Result<Option<DeviceConfig>, QueueError> {
        let tx = self.read(&[META])?;
        get_meta(&tx, META_DEVICE).await
    }

    /// A page of items in capture order after queue id `after`, each with
    /// the reason it waits (its own, or the blocked item it is behind).
    async fn list(
        &self,
        after: Option<u64>,
        limit: u32,
    ) -> Result<Vec<(Item, Option<String>)>, QueueError> {
        let tx = self.read(&[ITEMS])?;
        let store = tx.object_store(ITEMS)?;
        let after = after.map_or(0.0, |id| id as f64);
        let rows = store
            .get_all::<JsValue>()
            .with_query::<f64, _>(KeyRange::LowerBound(after, true))
            .with_limit(limit)
            .primitive()?
            .await?;
        let page = all::<Item>(rows, "item")?;
        let blocked = store
            .index(BY_STATE)?
            .get_all::<JsValue>()
            .with_query(ItemState::Blocked.as_str())
            .primitive()?
            .await?;
        let blockers = Blockers::from_blocked(&all::<Item>(blocked, "item")?);
        Ok(page
            .into_iter()
            .map(|item| {
                let reason = blockers.reason(&item);
                (item, reason)
            })
            .collect())
    }

    /// Items by state and the oldest item still to go out.
    async fn counts(&self, now: UnixMs) -> Result<Counts, QueueError> {
        let tx = self.read(&[ITEMS])?;
        let items = tx.object_store(ITEMS)?;
        let by_state = items.index(BY_STATE)?;
        let mut counts = Counts::default();
        let mut oldest: Option<UnixMs> = None;
        for state in ItemState::ALL {
            let n = by_state
                .count()
                .with_query(state.as_str())
                .primitive()?
                .await?;
            counts.add(state, u64::from(n));
            if matches!(state, ItemState::Queued | ItemState::Sending) && n > 0 {
                // Within one index key, rows come in primary-key (capture) order.
                let first: Option<JsValue> = by_state.get(state.as_str()).primitive()?.await?;
                if let Some(first) = first {
                    let at = record::<Item>(first, "item")?.queued_at;
                    oldest = Some(oldest.map_or(at, |o| o.min(at)));
                }
            }
        }
        Ok(counts.with_oldest(oldest, now))
    }

    /// Discards a blocked item and queues its `void`, in one strict transaction.
    async fn discard(
        &mut self,
        id: u64,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Result<(Item, Item), QueueError> {
        let tx = self.write(&[ITEMS, SESSIONS], TransactionDurability::Strict)?;
        let mut item = get_item(&tx, id).await?;
        let sessions = tx.object_store(SESSIONS)?;
        let stored: Option<JsValue> = sessions
            .get(item.session_id.to_string())
            .primitive()?
            .await?;
        let mut session: Session = stored
            .map(|s| record(s, "session"))
            .transpose()?
            .ok_or(CaptureError::UnknownSession(item.session_id))?;
        let mut void = discard(&mut item, &mut session, key, now)?;
        let items = tx.object_store(ITEMS)?;
        items.put(plain(&item)?).build()?;
        let added = items
            .add(plain(&void)?)
            .with_key_type::<f64>()
            .primitive()?;
        sessions.put(plain(&session)?).build()?;
        void.id = Some(queue_id(added.await?)?);
        tx.commit().await?;
        Ok((item, void))
    }

    /// Records the operator's acknowledgement of a rejected item (replaced
    /// by the scan `rescan`, for a re-scan) and queues the `acknowledge`
    /// that tells the site, in one strict transaction.
    async fn acknowledge(
        &mut self,
        id: u64,
        rescan: Option<IdempotencyKey>,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Result<(Item, Item), QueueError> {
        let tx = self.write(&[ITEMS, SESSIONS], TransactionDurability::Strict)?;
        let mut item = get_item(&tx, id).await?;
        let sessions = tx.object_store(SESSIONS)?;
        let stored: Option<JsValue> = sessions
            .get(item.session_id.to_string())
            .primitive()?
            .await?;
        let mut session: Session = stored
            .map(|s| record(s, "session"))
            .transpose()?
            .ok_or(CaptureError::UnknownSession(item.session_id))?;
        let mut ack = acknowledge(&mut item, &mut session, rescan, key, now)?;
        let items = tx.object_store(ITEMS)?;
        items.put(plain(&item)?).build()?;
        let added = items.add(plain(&ack)?).with_key_type::<f64>().primitive()?;
        sessions.put(plain(&session)?).build()?;
        ack.id = Some(queue_id(added.await?)?);
        tx.commit().await?;
        Ok((item, ack))
    }

    /// Deletes items done for at least `retention` ([`Item::is_prunable`]),
    /// at most [`PRUNE_MAX_ITEMS`]; returns how many. Relaxed: a lost
    /// delete only leaves a done item a little longer.
    async fn prune_done(&self, now: UnixMs, retention: Millis) -> Result<usize, QueueError> {
        let tx = self.write(&[ITEMS], TransactionDurability::Relaxed)?;
        let items = tx.object_store(ITEMS)?;
        let by_state = items.index(BY_STATE)?;
        let mut pruned = 0;
        let cursor = by_state
            .open_cursor()
            .with_query(ItemState::Done.as_str())
            .await?;
        if let Some(mut cursor) = cursor {
            while let Some(row) = cursor.next_record::<JsValue>().await? {
                let item: Item = record(row, "item")?;
                if item.is_prunable(now, retention) {
                    cursor.delete()?.await?;
                    pruned += 1;
                    if pruned == PRUNE_MAX_ITEMS {
                        break;
                    }
                }
            }
        }
        tx.commit().await?;
        Ok(pruned)
    }

    fn set_device(
        &self,
        config: &DeviceConfig,
        clear_cache: bool,
    ) -> impl Future<Output = Result<(), QueueError>> {
        self.set_device_and_cache(config, clear_cache)
    }

    // The reference cache's side is in `cache.rs`; these hand its futures
    // on as they are (no wrapping state machine in the module).

    fn reference_meta(&self) -> impl Future<Output = Result<Option<ReferenceMeta>, QueueError>> {
        Store::reference_meta(self)
    }

    fn reference_counts(&self) -> impl Future<Output = Result<[u32; 4], QueueError>> {
        Store::reference_counts(self)
    }

    fn write_reference_page(
        &self,
        page: &Page<super::cache::PageRows>,
        meta: &ReferenceMeta,
    ) -> impl Future<Output = Result<(), QueueError>> {
        Store::write_reference_page(self, page, meta)
    }

    fn put_unit(&self, unit: &JsValue) -> impl Future<Output = Result<(), QueueError>> {
        Store::put_unit(self, unit)
    }

    fn find_unit(
        &self,
        code: &str,
    ) -> impl Future<Output = Result<(JsValue, JsValue), QueueError>> {
        Store::find_unit(self, code)
    }

    fn reference_row(
        &self,
        kind: RowKind,
        id: &str,
    ) -> impl Future<Output = Result<JsValue, QueueError>> {
        Store::reference_row(self, kind, id)
    }

    fn reference_rows(
        &self,
        kind: RowKind,
        limit: u32,
    ) -> impl Future<Output = Result<Array, QueueError>> {
        Store::reference_rows(self, kind, limit)
    }

    /// Closes this connection; later operations on it fail as a storage error.
    fn close(self) {
        self.db.close();
    }
}

/// Every row of a `getAll`, failing at the first that does not read.
fn all<T: DeserializeOwned>(
    rows: impl IntoIterator<Item = indexed_db_futures::Result<JsValue>>,
    noun: &str,
) -> Result<Vec<T>, QueueError> {
    rows.into_iter().map(|row| record(row?, noun)).collect()
}

/// Every item not yet acknowledged by the site ([`ItemState::is_pending`]),
/// state by state, each state's in capture order.
async fn pending_items(tx: &Transaction<'_>) -> Result<Vec<Item>, QueueError> {
    let items = tx.object_store(ITEMS)?;
    let by_state = items.index(BY_STATE)?;
    let mut pending = Vec::new();
    for state in ItemState::ALL
        .into_iter()
        .filter(|state| state.is_pending())
    {
        let rows = by_state
            .get_all::<JsValue>()
            .with_query(state.as_str())
            .primitive()?
            .await?;
        pending.extend(all::<Item>(rows, "item")?);
    }
    Ok(pending)
}

async fn get_item(tx: &Transaction<'_>, id: u64) -> Result<Item, QueueError> {
    let row: Option<JsValue> = tx.object_store(ITEMS)?.get(id as f64).primitive()?.await?;
    row.map(|row| record(row, "item"))
        .transpose()?
        .ok_or(QueueError::NoItem(id))
}

pub(super) async fn get_meta<T: DeserializeOwned>(
    tx: &Transaction<'_>,
    name: &str,
) -> Result<Option<T>, QueueError> {
    let row: Option<JsValue> = tx.object_store(META)?.get(name).primitive()?.await?;
    row.map(|row| record(meta_value(&row, name)?, name))
        .transpose()
}

/// A meta row's `value`, read as the row's serde reader did: missing when
/// the row has no such property. Its `name` is the store's key path, the
/// name the row was read by. Only the value goes through serde, so the
/// module holds one reader a value type and no second one of its row.
fn meta_value(row: &JsValue, name: &str) -> Result<JsValue, QueueError> {
    let field = JsValue::from_str("value");
    let value = js_sys::Reflect::get(row, &field).unwrap_or(JsValue::UNDEFINED);
    if value.is_undefined() && !js_sys::Reflect::has(row, &field).unwrap_or(false) {
        return Err(QueueError::Storage(format!(
            "{name}: missing field `value`"
        )));
    }
    Ok(value)
}

pub(super) fn put_meta<T: Serialize>(
    tx: &Transaction<'_>,
    name: &str,
    value: &T,
) -> Result<(), QueueError> {
    put_meta_row(tx, name, plain(value)?)
}

/// Writes the meta row `{name, value}`; only the value goes through serde
/// (see [`meta_value`]).
fn put_meta_row(tx: &Transaction<'_>, name: &str, value: JsValue) -> Result<(), QueueError> {
    // Setting a property of a fresh plain object cannot fail.
    let row = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&row, &"name".into(), &name.into());
    let _ = js_sys::Reflect::set(&row, &"value".into(), &value);
    tx.object_store(META)?.put(row).build()?;
    Ok(())
}

/// The queue id IndexedDB generated for an added item.
fn queue_id(key: f64) -> Result<u64, QueueError> {
    if key >= 1.0 && key.fract() == 0.0 {
        Ok(key as u64)
    } else {
        Err(QueueError::Storage(
            "an added item's key is not a whole queue id".into(),
        ))
    }
}
