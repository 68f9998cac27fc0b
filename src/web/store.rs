//! The queue's IndexedDB store: every read and write the runtime does, one
//! transaction per step. Writes of what only the device knows (captures,
//! discards, acknowledgements, the setup) use durability "strict", so a
//! completed transaction is on disk before anyone hears of it; the drain's
//! own bookkeeping is "relaxed" (see [`Store::put_items`]).
//!
//! Architecture invariant: no transaction here awaits anything but its own
//! requests (no fetch, no timer), so none auto-commits half-way.

use std::cell::RefCell;
use std::rc::Rc;

use indexed_db_futures::database::Database;
use indexed_db_futures::internals::SystemRepr;
use js_sys::{Array, Promise};
use uuid::Uuid;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    IdbIndex, IdbKeyRange, IdbObjectStore, IdbRequest, IdbRequestReadyState, IdbTransaction,
};

#[wasm_bindgen]
extern "C" {
    /// The connection, for the one call web-sys has only behind its
    /// unstable APIs.
    #[wasm_bindgen(js_name = IDBDatabase)]
    type Connection;
    /// `db.transaction(stores, mode, {durability})`.
    #[wasm_bindgen(method, catch, js_class = "IDBDatabase", js_name = transaction)]
    fn transaction_with(
        this: &Connection,
        stores: &Array,
        mode: &str,
        options: &JsValue,
    ) -> Result<IdbTransaction, JsValue>;
    /// A transaction, for `commit()` (deprecated in web-sys, which
    /// predates it being in every engine).
    #[wasm_bindgen(js_name = IDBTransaction)]
    type Committable;
    #[wasm_bindgen(method, catch, js_class = "IDBTransaction", js_name = commit)]
    fn commit_now(this: &Committable) -> Result<(), JsValue>;
}

use crate::backoff::Backoff;
use crate::key::IdempotencyKey;
use crate::queue::{
    acknowledge, discard, Blockers, Capture, CaptureError, Counts, Item, ItemState, Session,
};
use crate::time::UnixMs;
use crate::wire::OpenSessionBody;

use super::error::{describe, QueueError};
use super::js::FromJs;
use super::schema::{self, BY_STATE, ITEMS, META, SESSIONS};
use super::write::{self, Record, ToJs};

const META_BACKOFF: &str = "backoff";
const META_DEVICE: &str = "device";

/// Reads a stored record with its hand-written reader (see [`super::js`];
/// records are written by [`super::write`]).
pub fn from_js<T: FromJs>(value: JsValue) -> Result<T, QueueError> {
    T::from_js(&value).map_err(|err| QueueError::storage(err.to_string()))
}

/// Reads every row of a `getAll`, failing at the first that cannot be
/// read. (A loop: collecting `Result`s links an adapter per call site.)
fn from_js_rows<T: FromJs>(rows: JsValue) -> Result<Vec<T>, QueueError> {
    let rows = js_sys::Array::from(&rows);
    let mut read = Vec::with_capacity(rows.length() as usize);
    for row in rows.iter() {
        read.push(from_js(row)?);
    }
    Ok(read)
}

/// An object store of a live transaction, for its requests.
pub fn table(tx: &IdbTransaction, name: &str) -> Result<IdbObjectStore, QueueError> {
    tx.object_store(name).map_err(refused)
}

/// A transaction of the queue's database. Dropped without [`Tx::commit`]
/// (an error part-way through a step) it is aborted, so a step writes all
/// of its requests or none: left alone, IndexedDB would commit whatever
/// had been issued.
struct Tx {
    tx: IdbTransaction,
    committing: bool,
}

impl std::ops::Deref for Tx {
    type Target = IdbTransaction;
    fn deref(&self) -> &IdbTransaction {
        &self.tx
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if !self.committing {
            // A transaction that already finished refuses the abort: harmless.
            let _ = self.tx.abort();
        }
    }
}

impl Tx {
    /// Commits and waits for the transaction's `complete` event. An
    /// `abort` (a failed request, a full disk) is the error, in the
    /// transaction's own words.
    async fn commit(mut self) -> Result<(), QueueError> {
        self.committing = true;
        let tx = &self.tx;
        let done = Promise::new(&mut |resolve, reject| {
            tx.set_oncomplete(Some(&resolve));
            tx.set_onabort(Some(&reject));
        });
        tx.unchecked_ref::<Committable>()
            .commit_now()
            .map_err(refused)?;
        let ended = JsFuture::from(done).await;
        tx.set_oncomplete(None);
        tx.set_onabort(None);
        match ended {
            Ok(_) => Ok(()),
            Err(_) => Err(match tx.error() {
                Some(error) => refused(error.into()),
                None => QueueError::storage("the transaction was aborted"),
            }),
        }
    }
}

/// An index of the items store, in a live transaction.
fn items_index(tx: &IdbTransaction, name: &str) -> Result<IdbIndex, QueueError> {
    table(tx, ITEMS)?.index(name).map_err(refused)
}

/// What IndexedDB threw when asked for a request (a closed connection, an
/// inactive transaction, a key it cannot use), as a storage error.
fn refused(thrown: JsValue) -> QueueError {
    QueueError::storage(describe(&thrown))
}

/// Awaits one request of a live transaction: its result, or its error.
pub async fn settled(request: Result<IdbRequest, JsValue>) -> Result<JsValue, QueueError> {
    let request = request.map_err(refused)?;
    finished(&request).await;
    read_request(&request)
}

/// Waits for a request's `success` or `error` event; at once if it is done
/// (its event has fired and would not again).
///
/// The module carries this one request future rather than one per request
/// type and value type. The transaction stays active meanwhile: the
/// event resolves the promise, and the queue's task resumes in the same
/// microtask checkpoint, before IndexedDB would let the transaction commit.
async fn finished(request: &IdbRequest) {
    if request.ready_state() != IdbRequestReadyState::Done {
        // Failure is read from the request afterwards, not from the rejection.
        let _ = JsFuture::from(Promise::new(&mut |resolve, reject| {
            request.set_onsuccess(Some(&resolve));
            request.set_onerror(Some(&reject));
        }))
        .await;
    }
}

/// A finished request's result, or its error.
fn read_request(request: &IdbRequest) -> Result<JsValue, QueueError> {
    if request.ready_state() != IdbRequestReadyState::Done {
        return Err(QueueError::storage("a request was read before it finished"));
    }
    match request.error() {
        Ok(None) => request.result().map_err(refused),
        Ok(Some(error)) => Err(refused(error.into())),
        Err(thrown) => Err(refused(thrown)),
    }
}

/// A record if `value` holds one (`get` resolves with `undefined` when
/// there is none).
fn found(value: JsValue) -> Option<JsValue> {
    (!value.is_undefined()).then_some(value)
}

/// The device's setup, kept in IndexedDB so every wake-up can drain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeviceConfig {
    /// The site server's origin, e.g. `https://site.example:8443`.
    pub site_url: String,
    pub device_token: String,
    pub device_id: String,
}

/// A row of the meta store: `{name, value}`.
pub(crate) struct MetaRecord<T> {
    /// The row's key. Its reader requires it (a row without one is not a
    /// meta row), but the store looks rows up by it and never reads it back.
    #[allow(dead_code)]
    pub(crate) name: String,
    pub(crate) value: T,
}

/// One write a capture group carries.
#[derive(Debug, Clone, PartialEq)]
pub enum CaptureRequest {
    Open {
        session_id: Uuid,
        body: OpenSessionBody,
    },
    Capture {
        session_id: Uuid,
        capture: Capture,
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

/// The queue's database.
#[derive(Clone)]
pub struct Store {
    db: Database,
    /// Every session this connection has read or written, as last
    /// committed. The service worker is the queue's only writer (see
    /// `runtime`), so what it committed is what storage holds, and a
    /// capture need not read its session back first: that read is a round
    /// trip inside the capture's transaction, on every scan. Dropped
    /// whole after any failed write, so the next one reads storage again.
    /// A worker life is short and a session is ~100 bytes, so it keeps
    /// every session it touched.
    sessions: Rc<RefCell<Vec<Session>>>,
    /// The device setup as last read or written here (the worker is its
    /// only writer too): every capture starts a drain, and the drain's
    /// first question is whether the device is set up.
    device: Rc<RefCell<Option<Option<Rc<DeviceConfig>>>>>,
}

impl Store {
    /// Opens (and if needed upgrades) the database `name`.
    pub async fn open(name: &str) -> Result<Store, QueueError> {
        Ok(Store {
            db: schema::open(name).await?,
            sessions: Rc::default(),
            device: Rc::default(),
        })
    }

    /// Closes this connection; later operations on it fail as a storage error.
    pub fn close(&self) {
        self.db.clone().close();
    }

    fn read(&self, stores: &[&str]) -> Result<Tx, QueueError> {
        self.transaction(stores, "readonly", "default")
    }

    fn write(&self, stores: &[&str]) -> Result<Tx, QueueError> {
        self.transaction(stores, "readwrite", "strict")
    }

    /// A transaction on `stores`; `mode` is `"readonly"` or `"readwrite"`,
    /// `durability` `"default"`, `"strict"` or `"relaxed"`.
    ///
    /// Built on the connection here rather than through
    /// `indexed_db_futures`' builder: the queue awaits its requests through
    /// [`settled`] and its commit through [`Tx::commit`], one future each,
    /// and the builder's listeners and channels were ~7 KB of the release
    /// module.
    fn transaction(&self, stores: &[&str], mode: &str, durability: &str) -> Result<Tx, QueueError> {
        let names = Array::new();
        for store in stores {
            names.push(&JsValue::from_str(store));
        }
        let options = Record::new().set("durability", &durability).build();
        let db: &Connection = self.db.as_sys().unchecked_ref();
        let tx = db
            .transaction_with(&names, mode, &options)
            .map_err(refused)?;
        Ok(Tx {
            tx,
            committing: false,
        })
    }

    /// Writes a group of captures in ONE strict transaction. The outer error
    /// is the transaction's (nothing of the group was written); the inner
    /// ones are captures refused before writing (a closed session).
    pub async fn write_captures(
        &self,
        requests: &[CaptureRequest],
        now: UnixMs,
    ) -> Result<Vec<Result<Item, QueueError>>, QueueError> {
        let remembered = {
            let known = self.sessions.borrow();
            requests
                .iter()
                .any(|request| known.iter().any(|s| s.session_id == request.session_id()))
        };
        let mut written = self.write_captures_once(requests, now).await;
        if written.is_err() && remembered {
            // What this connection remembered may be behind storage: a
            // worker being replaced by a newer one can write for a moment
            // beside it, and the session's unique (session_id, client_seq)
            // index then refuses a reused seq. Nothing of the group was
            // written; write it once more from what storage says.
            self.forget_sessions();
            written = self.write_captures_once(requests, now).await;
        }
        if written.is_err() {
            self.forget_sessions();
        }
        written
    }

    async fn write_captures_once(
        &self,
        requests: &[CaptureRequest],
        now: UnixMs,
    ) -> Result<Vec<Result<Item, QueueError>>, QueueError> {
        let tx = self.write(&[ITEMS, SESSIONS])?;
        let items = table(&tx, ITEMS)?;
        let sessions = table(&tx, SESSIONS)?;
        // The sessions this group touches, in first-touch order: a group
        // holds a few sessions at most, so a list beats a map.
        let mut touched: Vec<(Uuid, Option<Session>)> = Vec::new();
        let mut results = Vec::with_capacity(requests.len());
        let mut adds = Vec::with_capacity(requests.len());
        for request in requests {
            let session_id = request.session_id();
            let at = match touched.iter().position(|(id, _)| *id == session_id) {
                Some(at) => at,
                None => {
                    let known = self.remembered(session_id);
                    let session = match known {
                        Some(session) => Some(session),
                        None => {
                            let stored = settled(sessions.get(&session_id.to_js())).await?;
                            found(stored).map(from_js::<Session>).transpose()?
                        }
                    };
                    touched.push((session_id, session));
                    touched.len() - 1
                }
            };
            let slot = &mut touched[at].1;
            let key = IdempotencyKey::mint()?;
            let item = match request {
                CaptureRequest::Open { body, .. } => match slot {
                    Some(_) => Err(CaptureError::SessionExists(session_id).into()),
                    None => {
                        let (session, item) = Session::open(session_id, body.clone(), key, now);
                        *slot = Some(session);
                        Ok(item)
                    }
                },
                CaptureRequest::Capture { capture, .. } => slot
                    .as_mut()
                    .ok_or(CaptureError::UnknownSession(session_id))
                    .and_then(|s| s.capture(capture.clone(), key, now))
                    .map_err(QueueError::from),
                CaptureRequest::Close { .. } => slot
                    .as_mut()
                    .ok_or(CaptureError::UnknownSession(session_id))
                    .and_then(|s| s.close(key, now))
                    .map_err(QueueError::from),
            };
            if let Ok(item) = &item {
                let add = items.add(&write::item(item)).map_err(refused)?;
                adds.push((results.len(), add));
            }
            results.push(item);
        }
        for session in touched.iter().filter_map(|(_, session)| session.as_ref()) {
            sessions.put(&session.to_js()).map_err(refused)?;
        }
        // A transaction's requests finish in the order they were made: once
        // the last add has, every id IndexedDB generated can be read, with
        // one wait for the group rather than one per capture. Read before
        // the commit, so an add that failed (or an id that is not one)
        // aborts the whole group instead of leaving it written unheard.
        if let Some((_, last)) = adds.last() {
            finished(last).await;
        }
        for (index, add) in adds {
            let id = queue_id(read_request(&add)?)?;
            if let Ok(item) = &mut results[index] {
                item.id = Some(id);
            }
        }
        tx.commit().await?;
        for (_, session) in touched {
            if let Some(session) = session {
                self.remember(session);
            }
        }
        Ok(results)
    }

    /// After a failed write, what this connection remembers of its
    /// sessions may be ahead of storage: forget it.
    fn forget_sessions(&self) {
        self.sessions.borrow_mut().clear();
    }

    /// The session as this connection last committed it, if it did.
    fn remembered(&self, session_id: Uuid) -> Option<Session> {
        let known = self.sessions.borrow();
        known.iter().find(|s| s.session_id == session_id).cloned()
    }

    /// Keeps a session just committed. A worker life touches a handful of
    /// sessions, so a list searched in order serves.
    fn remember(&self, session: Session) {
        let mut known = self.sessions.borrow_mut();
        match known
            .iter_mut()
            .find(|s| s.session_id == session.session_id)
        {
            Some(slot) => *slot = session,
            None => known.push(session),
        }
    }

    /// What the drain needs after a wake-up.
    pub async fn load_drain(&self) -> Result<DrainSnapshot, QueueError> {
        let tx = self.read(&[ITEMS, SESSIONS, META])?;
        let sessions = settled(table(&tx, SESSIONS)?.get_all()).await?;
        let sessions = from_js_rows::<Session>(sessions)?;
        let by_state = items_index(&tx, BY_STATE)?;
        let mut pending = Vec::new();
        for state in [ItemState::Queued, ItemState::Sending, ItemState::Blocked] {
            let only = JsValue::from_str(state.as_str());
            let rows = settled(by_state.get_all_with_key(&only)).await?;
            pending.extend(from_js_rows::<Item>(rows)?);
        }
        let backoff = get_meta::<Backoff>(&tx, META_BACKOFF)
            .await?
            .unwrap_or_default();
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
    /// knows, stay "strict". Waiting for the disk here would hold every
    /// capture behind two flushes per attempt while the site is
    /// unreachable (a scan every attempt, by DESIGN.md §3.5).
    pub async fn put_items(
        &self,
        items: &[Item],
        backoff: Option<Backoff>,
    ) -> Result<(), QueueError> {
        let tx = self.transaction(&[ITEMS, META], "readwrite", "relaxed")?;
        let store = table(&tx, ITEMS)?;
        for item in items {
            store.put(&write::item(item)).map_err(refused)?;
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

    /// The setup, shared: every drain asks for it.
    pub async fn device(&self) -> Result<Option<Rc<DeviceConfig>>, QueueError> {
        if let Some(known) = self.device.borrow().as_ref() {
            return Ok(known.clone());
        }
        let tx = self.read(&[META])?;
        let stored = get_meta::<DeviceConfig>(&tx, META_DEVICE)
            .await?
            .map(Rc::new);
        *self.device.borrow_mut() = Some(stored.clone());
        Ok(stored)
    }

    pub async fn set_device(&self, config: &DeviceConfig) -> Result<(), QueueError> {
        self.device.borrow_mut().take();
        let tx = self.write(&[META])?;
        put_meta(&tx, META_DEVICE, config)?;
        tx.commit().await?;
        *self.device.borrow_mut() = Some(Some(Rc::new(config.clone())));
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
        let store = table(&tx, ITEMS)?;
        let lower = JsValue::from_f64(after.map_or(0.0, |id| id as f64));
        let after = IdbKeyRange::lower_bound_with_open(&lower, true).map_err(refused)?;
        let rows = settled(store.get_all_with_key_and_limit(&after, limit)).await?;
        let page = from_js_rows::<Item>(rows)?;
        let by_state = store.index(BY_STATE).map_err(refused)?;
        let only = JsValue::from_str(ItemState::Blocked.as_str());
        let blocked = from_js_rows::<Item>(settled(by_state.get_all_with_key(&only)).await?)?;
        let blockers = Blockers::from_blocked(&blocked);
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
        let by_state = items_index(&tx, BY_STATE)?;
        let mut counts = Counts::default();
        let mut oldest: Option<UnixMs> = None;
        for state in ItemState::ALL {
            let only = JsValue::from_str(state.as_str());
            let n = settled(by_state.count_with_key(&only)).await?;
            let n = n.as_f64().unwrap_or_default() as u64;
            counts.add(state, n);
            if matches!(state, ItemState::Queued | ItemState::Sending) && n > 0 {
                // Within one index key, rows come in primary-key (capture) order.
                let first = settled(by_state.get(&only)).await?;
                if let Some(first) = found(first) {
                    let at = from_js::<Item>(first)?.queued_at;
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
    pub async fn discard(&self, id: u64, now: UnixMs) -> Result<(Item, Item), QueueError> {
        let discarded = self.discard_once(id, now).await;
        if discarded.is_err() {
            self.forget_sessions();
        }
        discarded
    }

    async fn discard_once(&self, id: u64, now: UnixMs) -> Result<(Item, Item), QueueError> {
        let tx = self.write(&[ITEMS, SESSIONS])?;
        let mut item = get_item(&tx, id).await?;
        let sessions = table(&tx, SESSIONS)?;
        let stored = settled(sessions.get(&item.session_id.to_js())).await?;
        let mut session: Session = found(stored)
            .map(from_js)
            .transpose()?
            .ok_or(CaptureError::UnknownSession(item.session_id))?;
        let mut void = discard(&mut item, &mut session, IdempotencyKey::mint()?, now)?;
        let items = table(&tx, ITEMS)?;
        items.put(&write::item(&item)).map_err(refused)?;
        void.id = Some(queue_id(settled(items.add(&write::item(&void))).await?)?);
        sessions.put(&session.to_js()).map_err(refused)?;
        tx.commit().await?;
        self.remember(session);
        Ok((item, void))
    }

    /// Records the operator's acknowledgement of a rejected item.
    pub async fn acknowledge(&self, id: u64, now: UnixMs) -> Result<Item, QueueError> {
        let tx = self.write(&[ITEMS])?;
        let mut item = get_item(&tx, id).await?;
        acknowledge(&mut item, now)?;
        table(&tx, ITEMS)?
            .put(&write::item(&item))
            .map_err(refused)?;
        tx.commit().await?;
        Ok(item)
    }

    /// Every item of a session, in seq order (for tests and diagnostics).
    pub async fn session_items(&self, session_id: Uuid) -> Result<Vec<Item>, QueueError> {
        let tx = self.read(&[ITEMS])?;
        let index = items_index(&tx, schema::BY_SESSION_SEQ)?;
        let id = session_id.to_js();
        let lower = js_sys::Array::of2(&id, &JsValue::from_f64(0.0));
        let upper = js_sys::Array::of2(&id, &JsValue::from_f64(f64::MAX));
        let seqs = IdbKeyRange::bound(&lower, &upper).map_err(refused)?;
        from_js_rows(settled(index.get_all_with_key(&seqs)).await?)
    }
}

async fn get_item(tx: &IdbTransaction, id: u64) -> Result<Item, QueueError> {
    let row = settled(table(tx, ITEMS)?.get(&JsValue::from_f64(id as f64))).await?;
    found(row)
        .map(from_js)
        .transpose()?
        .ok_or(QueueError::no_item(id))
}

async fn get_meta<T: FromJs>(tx: &IdbTransaction, name: &str) -> Result<Option<T>, QueueError> {
    let row = settled(table(tx, META)?.get(&JsValue::from_str(name))).await?;
    Ok(found(row)
        .map(from_js::<MetaRecord<T>>)
        .transpose()?
        .map(|r| r.value))
}

/// The queue id IndexedDB generated for an added item.
fn queue_id(key: JsValue) -> Result<u64, QueueError> {
    match key.as_f64() {
        Some(id) if id >= 1.0 && id.fract() == 0.0 => Ok(id as u64),
        _ => Err(QueueError::storage(format!(
            "an added item's key is not a queue id: {}",
            describe(&key)
        ))),
    }
}

fn put_meta<T: ToJs>(tx: &IdbTransaction, name: &str, value: &T) -> Result<(), QueueError> {
    let record = Record::new().set("name", &name).set("value", value).build();
    table(tx, META)?.put(&record).map_err(refused)?;
    Ok(())
}
