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

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{
    Transaction, TransactionDurability, TransactionMode, TransactionOptions,
};
use indexed_db_futures::KeyRange;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use wasm_bindgen::JsValue;

use crate::backoff::Backoff;
use crate::key::IdempotencyKey;
use crate::queue::capture::capture_instant;
use crate::queue::{
    acknowledge, discard, Blockers, Capture, CaptureError, Counts, Item, ItemState, Session,
};
use crate::reference::{set_unit_version, wants_unit_version};
use crate::time::{Millis, UnixMs};
use crate::wire::OpenSessionBody;

use super::convert::{from_record, to_js, unit_version};
use super::error::QueueError;
use super::schema::{self, BY_SESSION_SEQ, BY_STATE, ITEMS, META, SESSIONS, UNITS};

const META_BACKOFF: &str = "backoff";
pub(super) const META_DEVICE: &str = "device";

/// The device's setup, kept in IndexedDB so every wake-up can drain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceConfig {
    /// The site server's origin, e.g. `https://site.example:8443`.
    pub site_url: String,
    pub device_token: String,
    pub device_id: String,
    /// Days a `done` item stays on the device; absent is
    /// [`crate::queue::item::DONE_RETENTION`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_retention_days: Option<u32>,
}

impl DeviceConfig {
    /// How long a `done` item stays on this device.
    pub fn done_retention(&self) -> Millis {
        match self.done_retention_days {
            Some(days) => Millis::from_secs(u64::from(days) * 24 * 60 * 60),
            None => crate::queue::item::DONE_RETENTION,
        }
    }
}

/// A row of the meta store: `{name, value}`.
#[derive(Serialize, Deserialize)]
struct MetaRecord<T> {
    name: String,
    value: T,
}

/// One write a capture group carries.
#[derive(Debug, Clone, PartialEq)]
pub enum CaptureRequest {
    Open {
        session_id: Uuid,
        body: OpenSessionBody,
    },
    /// A scan or undo; `occurred_at` is the page's capture instant (Unix
    /// ms), checked against the writer's clock when it is written.
    Capture {
        session_id: Uuid,
        capture: Capture,
        occurred_at: Option<f64>,
    },
    Close {
        session_id: Uuid,
    },
}

impl CaptureRequest {
    fn session_id(&self) -> Uuid {
        match self {
            CaptureRequest::Open { session_id, .. }
            | CaptureRequest::Capture { session_id, .. }
            | CaptureRequest::Close { session_id } => *session_id,
        }
    }
}

/// What storage holds for the drain: sessions, pending items, backoff.
pub struct DrainSnapshot {
    pub sessions: Vec<Session>,
    pub pending: Vec<Item>,
    pub backoff: Backoff,
}

/// Most done items one prune deletes: one short transaction, however long
/// the device was away; the next prune takes the rest.
pub const PRUNE_MAX_ITEMS: usize = 1_000;

/// The queue's database.
pub struct Store {
    db: Database,
    /// Every session this connection has read or written, as last
    /// committed. The runtime is the queue's only writer, so what it
    /// committed is what storage holds, and a capture need not read its
    /// session back inside its transaction. Cleared after any failed
    /// write, so the next one reads storage again.
    sessions: BTreeMap<Uuid, Session>,
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
            sessions: BTreeMap::new(),
        })
    }

    /// Closes this connection; later operations on it fail as a storage error.
    pub fn close(self) {
        self.db.close();
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

    /// Writes a group of captures in ONE strict transaction. The outer error
    /// is the transaction's (nothing of the group was written); the inner
    /// ones are captures refused before writing (a closed session).
    pub async fn write_captures(
        &mut self,
        requests: &[CaptureRequest],
        now: UnixMs,
    ) -> Result<Vec<Result<Item, QueueError>>, QueueError> {
        let remembered = requests
            .iter()
            .any(|request| self.sessions.contains_key(&request.session_id()));
        let mut written = self.write_captures_once(requests, now).await;
        if written.is_err() && remembered {
            // What this connection remembered may be behind storage: a
            // worker being replaced by a newer one can write for a moment
            // beside it, and the unique (session_id, client_seq) index then
            // refuses a reused seq. Nothing of the group was written; write
            // it once more from what storage says.
            self.sessions.clear();
            written = self.write_captures_once(requests, now).await;
        }
        if written.is_err() {
            self.sessions.clear();
        }
        written
    }

    async fn write_captures_once(
        &mut self,
        requests: &[CaptureRequest],
        now: UnixMs,
    ) -> Result<Vec<Result<Item, QueueError>>, QueueError> {
        // A scan that names a unit without its version reads the cached
        // unit in this same transaction (only then is the unit store in
        // its scope, so other groups never wait behind the cache's fill).
        let reads_units = requests.iter().any(|request| {
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
        // The sessions this group touches, as they will be after it (a
        // session not found stays out, and each capture for it is refused).
        let mut touched: BTreeMap<Uuid, Session> = BTreeMap::new();
        let mut results = Vec::with_capacity(requests.len());
        let mut adds = Vec::with_capacity(requests.len());
        for request in requests {
            let session_id = request.session_id();
            if let Entry::Vacant(vacant) = touched.entry(session_id) {
                let session = match self.sessions.get(&session_id) {
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
            let key = IdempotencyKey::mint()?;
            let item = match request {
                CaptureRequest::Open { body, .. } => match touched.get(&session_id) {
                    Some(_) => Err(CaptureError::SessionExists(session_id).into()),
                    None => {
                        let (session, item) = Session::open(session_id, body.clone(), key, now);
                        touched.insert(session_id, session);
                        Ok(item)
                    }
                },
                // A body IndexedDB could not hold as given (a number
                // beyond ±2^53) is refused before it takes a seq.
                CaptureRequest::Capture {
                    capture,
                    occurred_at,
                    ..
                } => match (to_js(&capture.body), capture_instant(*occurred_at, now)) {
                    (Err(why), _) => Err(QueueError::BadMessage(format!("body: {why}"))),
                    (_, Err(why)) => Err(QueueError::BadMessage(why.to_string())),
                    (Ok(_), Ok(occurred_at)) => {
                        let mut capture = capture.clone();
                        if let Some(epc) = wants_unit_version(&capture.body) {
                            let unit: Option<JsValue> =
                                tx.object_store(UNITS)?.get(epc).primitive()?.await?;
                            if let Some(version) = unit.as_ref().and_then(unit_version) {
                                set_unit_version(&mut capture.body, version);
                            }
                        }
                        touched
                            .get_mut(&session_id)
                            .ok_or(CaptureError::UnknownSession(session_id))
                            .and_then(|s| s.capture_at(capture, key, occurred_at, now))
                            .map_err(QueueError::from)
                    }
                },
                CaptureRequest::Close { .. } => touched
                    .get_mut(&session_id)
                    .ok_or(CaptureError::UnknownSession(session_id))
                    .and_then(|s| s.close(key, now))
                    .map_err(QueueError::from),
            };
            if let Ok(item) = &item {
                let add = items.add(plain(item)?).with_key_type::<f64>().primitive()?;
                adds.push((results.len(), add));
            }
            results.push(item);
        }
        for session in touched.values() {
            sessions.put(plain(session)?).build()?;
        }
        // Requests finish in the order they were made; each add's id is
        // read before the commit, so a failed add aborts the whole group
        // instead of leaving it written unheard.
        for (index, add) in adds {
            let id = queue_id(add.await?)?;
            if let Ok(item) = &mut results[index] {
                item.id = Some(id);
            }
        }
        tx.commit().await?;
        self.sessions.extend(touched);
        Ok(results)
    }

    /// What the drain needs after a wake-up.
    pub async fn load_drain(&self) -> Result<DrainSnapshot, QueueError> {
        let tx = self.read(&[ITEMS, SESSIONS, META])?;
        let sessions = all(
            tx.object_store(SESSIONS)?
                .get_all::<JsValue>()
                .primitive()?
                .await?,
            "session",
        )?;
        let items = tx.object_store(ITEMS)?;
        let by_state = items.index(BY_STATE)?;
        let mut pending = Vec::new();
        for state in [ItemState::Queued, ItemState::Sending, ItemState::Blocked] {
            let rows = by_state
                .get_all::<JsValue>()
                .with_query(state.as_str())
                .primitive()?
                .await?;
            pending.extend(all::<Item>(rows, "item")?);
        }
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
    pub async fn put_items(
        &self,
        items: &[Item],
        backoff: Option<Backoff>,
    ) -> Result<(), QueueError> {
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

    pub async fn backoff(&self) -> Result<Backoff, QueueError> {
        let tx = self.read(&[META])?;
        Ok(get_meta(&tx, META_BACKOFF).await?.unwrap_or_default())
    }

    pub async fn device(&self) -> Result<Option<DeviceConfig>, QueueError> {
        let tx = self.read(&[META])?;
        get_meta(&tx, META_DEVICE).await
    }

    pub async fn set_device(&self, config: &DeviceConfig) -> Result<(), QueueError> {
        let tx = self.write(&[META], TransactionDurability::Strict)?;
        put_meta(&tx, META_DEVICE, config)?;
        tx.commit().await?;
        Ok(())
    }

    /// A page of items in capture order after queue id `after`, each with
    /// the reason it waits (its own, or the blocked item it is behind).
    pub async fn list(
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
    pub async fn counts(&self, now: UnixMs) -> Result<Counts, QueueError> {
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

    pub async fn item(&self, id: u64) -> Result<Item, QueueError> {
        let tx = self.read(&[ITEMS])?;
        get_item(&tx, id).await
    }

    /// Discards a blocked item and queues its `void`, in one strict transaction.
    pub async fn discard(&mut self, id: u64, now: UnixMs) -> Result<(Item, Item), QueueError> {
        let discarded = self.discard_once(id, now).await;
        match &discarded {
            Ok((_, void)) => {
                // The void took the session's next seq: remember it.
                if let Some(session) = self.sessions.get_mut(&void.session_id) {
                    session.next_seq = session.next_seq.max(void.client_seq + 1);
                }
            }
            Err(_) => self.sessions.clear(),
        }
        discarded
    }

    async fn discard_once(&self, id: u64, now: UnixMs) -> Result<(Item, Item), QueueError> {
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
        let mut void = discard(&mut item, &mut session, IdempotencyKey::mint()?, now)?;
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
    pub async fn acknowledge(
        &mut self,
        id: u64,
        rescan: Option<IdempotencyKey>,
        now: UnixMs,
    ) -> Result<(Item, Item), QueueError> {
        let acknowledged = self.acknowledge_once(id, rescan, now).await;
        match &acknowledged {
            Ok((_, ack)) => {
                // The acknowledgement took the session's next seq.
                if let Some(session) = self.sessions.get_mut(&ack.session_id) {
                    session.next_seq = session.next_seq.max(ack.client_seq + 1);
                }
            }
            Err(_) => self.sessions.clear(),
        }
        acknowledged
    }

    async fn acknowledge_once(
        &self,
        id: u64,
        rescan: Option<IdempotencyKey>,
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
        let mut ack = acknowledge(
            &mut item,
            &mut session,
            rescan,
            IdempotencyKey::mint()?,
            now,
        )?;
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
    pub async fn prune_done(&self, now: UnixMs, retention: Millis) -> Result<usize, QueueError> {
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

/// Every row of a `getAll`, failing at the first that does not read.
fn all<T: DeserializeOwned>(
    rows: impl IntoIterator<Item = indexed_db_futures::Result<JsValue>>,
    noun: &str,
) -> Result<Vec<T>, QueueError> {
    rows.into_iter().map(|row| record(row?, noun)).collect()
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
    let row: Option<MetaRecord<T>> = row.map(|row| record(row, name)).transpose()?;
    Ok(row.map(|row| row.value))
}

pub(super) fn put_meta<T: Serialize>(
    tx: &Transaction<'_>,
    name: &str,
    value: &T,
) -> Result<(), QueueError> {
    let row = MetaRecord {
        name: name.to_owned(),
        value,
    };
    tx.object_store(META)?.put(plain(&row)?).build()?;
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
