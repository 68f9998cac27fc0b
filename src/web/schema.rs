//! The IndexedDB schema and its explicit, numbered upgrades.
//!
//! * v1 (an older handheld build): one `items` store, auto-increment `id`,
//!   items without an idempotency key.
//! * v2: every item carries a key (old items get the derived UUIDv8 of
//!   their queue id, docs/design.md §3.1), indexes by state, by (session, seq)
//!   and by key, a `sessions` store rebuilt from the items, and a `meta`
//!   store (device setup, backoff).
//! * v3: the reference cache: `units` (keyed by `epc`, a unique index on
//!   `code`), `bins`, `grns` and `counts` (keyed by `bin`, `grn`,
//!   `count_id`); its meta record (site, cursor, when last complete) is a
//!   row of `meta`.
//! * v4: real labels: the units' index on (`gtin`, `serial`) (a GS1 unit
//!   label names its unit by them), a `skus` store keyed by `sku` with an
//!   index on `gtin` (a label's GTIN names its SKU), and the cache's
//!   cursor dropped (its rows and age kept), so the next pull reads every
//!   row again and brings the SKUs an older worker passed over.
//!
//! Upgrades run inside the browser's version-change transaction, step by
//! step from the stored version, so a handheld that skipped a release
//! still passes through every step, and they only add: every queued item
//! is kept. A rollback meets a newer schema: the worker (`sw.js`) reads
//! that database's declaration (the meta record
//! [`crate::release::SCHEMA_RECORD`], which each build writes once its
//! queue is open) before it opens the queue, and runs on it only when it
//! is named compatible ([`super::schema_fits`]); otherwise it opens
//! nothing and answers `SCHEMA_NEWER`: capture stops, and the queue stays
//! as the newer build left it. [`open_at`] itself opens a newer database
//! as it is. [`upgrade`] is the one place that uses
//! `web_sys`'s IndexedDB directly: the v2 step walks every v1 row with a
//! cursor inside that transaction, and `indexed_db_futures` hands its
//! upgrade callback the database but no way to run requests on the
//! version-change transaction. The connection the queue keeps is opened
//! through `indexed_db_futures` (see `store` for its transactions).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use indexed_db_futures::database::Database;
use js_sys::{Array, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    IdbCursorWithValue, IdbDatabase, IdbFactory, IdbIndexParameters, IdbObjectStore,
    IdbObjectStoreParameters, IdbOpenDbRequest, IdbRequest, IdbTransaction, IdbVersionChangeEvent,
};

use serde::Deserialize;

use crate::key::IdempotencyKey;
use crate::queue::Session;
pub use crate::release::SCHEMA_VERSION;
use crate::time::UnixMs;
use crate::wire::{Command, OpenSessionBody};

use super::convert::{from_record, to_js};
use super::error::{describe, QueueError};

/// The production database.
pub const DB_NAME: &str = "stockhop";

pub const ITEMS: &str = "items";
pub const SESSIONS: &str = "sessions";
pub const META: &str = "meta";
pub const BY_STATE: &str = "by_state";
pub const BY_SESSION_SEQ: &str = "by_session_seq";
pub const BY_KEY: &str = "by_key";
pub const UNITS: &str = "units";
pub const BINS: &str = "bins";
pub const GRNS: &str = "grns";
pub const COUNTS: &str = "counts";
/// The units' unique index on `code` (serial or barcode); a unit without
/// one is not in it.
pub const BY_CODE: &str = "by_code";
/// The units' index on (`gtin`, `serial`), the keys of a GS1 unit label; a
/// unit without both is not in it. Not unique: a page may hold a unit that
/// took the keys before the change that took them from another arrives.
pub const BY_GS1: &str = "by_gs1";
/// The SKUs with their GTINs (`{sku, gtin}`), keyed by `sku`.
pub const SKUS: &str = "skus";
/// The SKUs' index on `gtin`.
pub const BY_GTIN: &str = "by_gtin";
/// The meta record of the reference cache (`crate::web::cache`), whose
/// cursor the v4 step drops.
const META_REFERENCE: &str = "reference";

type Keep = Rc<RefCell<Vec<Closure<dyn FnMut(web_sys::Event)>>>>;

/// Opens `name` at the current schema, upgrading it first if it is older.
pub async fn open(name: &str) -> Result<Database, QueueError> {
    open_at(name, SCHEMA_VERSION).await
}

/// Opens `name` at `version`, running the upgrade steps up to it. Tests
/// use it to build an older schema.
pub async fn open_at(name: &str, version: u32) -> Result<Database, QueueError> {
    // Nearly every open (each time a worker starts) finds the schema
    // current: one open, through the crate, with no version asked for.
    let db = Database::open(name).await?;
    let has_items = db.object_store_names().any(|store| store == ITEMS);
    if db.version() >= f64::from(version) && has_items {
        return Ok(db);
    }
    db.close();
    if !has_items {
        // There was no database: that open made an empty one. Start over,
        // so the upgrade runs every step from nothing.
        Database::delete_by_name(name)?.await?;
    }
    upgrade(name, version).await?;
    Ok(Database::open(name).await?)
}

/// Runs the upgrade steps from the stored version to `version` in the
/// browser's version-change transaction, through `web_sys` directly: the v2
/// step reads and rewrites every v1 row with a cursor on that transaction,
/// and `indexed_db_futures`' upgrade callback does not hand it over. This
/// and the steps it calls are the only raw IndexedDB code in the module.
async fn upgrade(name: &str, version: u32) -> Result<(), QueueError> {
    let factory: IdbFactory = Reflect::get(&js_sys::global(), &"indexedDB".into())
        .map_err(QueueError::browser)?
        .dyn_into()
        .map_err(|_| QueueError::Storage("IndexedDB is not available".into()))?;
    let request = factory
        .open_with_u32(name, version)
        .map_err(|e| QueueError::Storage(describe(&e)))?;
    let failure: Rc<RefCell<Option<String>>> = Rc::default();
    let keep: Keep = Rc::default();

    let on_upgrade = {
        let request = request.clone();
        let failure = failure.clone();
        let keep = keep.clone();
        Closure::<dyn FnMut(IdbVersionChangeEvent)>::new(move |event: IdbVersionChangeEvent| {
            let from = event.old_version() as u32;
            let result = run_steps(&request, from, version, &keep, &failure);
            if let Err(err) = result {
                *failure.borrow_mut() = Some(describe(&err));
                if let Some(tx) = request.transaction() {
                    let _ = tx.abort();
                }
            }
        })
    };
    request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));

    let done = Promise::new(&mut |resolve, reject| {
        request.set_onsuccess(Some(&resolve));
        request.set_onerror(Some(&reject));
    });
    let opened = JsFuture::from(done).await;
    request.set_onupgradeneeded(None);
    request.set_onsuccess(None);
    request.set_onerror(None);
    drop(keep);
    if let Some(why) = failure.borrow_mut().take() {
        return Err(QueueError::Storage(format!("upgrade failed: {why}")));
    }
    opened.map_err(|_| {
        let why = request
            .error()
            .ok()
            .flatten()
            .map(|e| format!("{}: {}", e.name(), e.message()))
            .unwrap_or_else(|| "unknown".into());
        QueueError::Storage(format!("open failed: {why}"))
    })?;
    let db: IdbDatabase = request
        .result()
        .map_err(QueueError::browser)?
        .unchecked_into();
    db.close();
    Ok(())
}

fn run_steps(
    request: &IdbOpenDbRequest,
    from: u32,
    to: u32,
    keep: &Keep,
    failure: &Rc<RefCell<Option<String>>>,
) -> Result<(), JsValue> {
    let db: IdbDatabase = request.result()?.unchecked_into();
    let tx = request
        .transaction()
        .ok_or_else(|| JsValue::from_str("no version-change transaction"))?;
    for step in (from + 1)..=to {
        match step {
            1 => v1_create_items(&db)?,
            2 => v2_keys_indexes_sessions(&db, &tx, keep, failure)?,
            3 => v3_reference_cache(&db)?,
            4 => v4_labels(&tx, &db, keep, failure)?,
            other => return Err(JsValue::from_str(&format!("no upgrade step to v{other}"))),
        }
    }
    Ok(())
}

fn v1_create_items(db: &IdbDatabase) -> Result<(), JsValue> {
    let params = IdbObjectStoreParameters::new();
    params.set_key_path(&"id".into());
    params.set_auto_increment(true);
    db.create_object_store_with_optional_parameters(ITEMS, &params)?;
    Ok(())
}

fn v3_reference_cache(db: &IdbDatabase) -> Result<(), JsValue> {
    let keyed = |key_path: &str| {
        let params = IdbObjectStoreParameters::new();
        params.set_key_path(&key_path.into());
        params
    };
    let units = db.create_object_store_with_optional_parameters(UNITS, &keyed("epc"))?;
    let unique = IdbIndexParameters::new();
    unique.set_unique(true);
    units.create_index_with_str_and_optional_parameters(BY_CODE, "code", &unique)?;
    db.create_object_store_with_optional_parameters(BINS, &keyed("bin"))?;
    db.create_object_store_with_optional_parameters(GRNS, &keyed("grn"))?;
    db.create_object_store_with_optional_parameters(COUNTS, &keyed("count_id"))?;
    Ok(())
}

/// The v4 step: the indexes a label's keys are looked up by, the SKUs'
/// store, and the reference cursor dropped from the cache's meta record
/// (its rows, `complete` and `refreshed_at` kept): the next pull reads
/// every row again, SKUs included, and the cache stays usable meanwhile.
fn v4_labels(
    tx: &IdbTransaction,
    db: &IdbDatabase,
    keep: &Keep,
    failure: &Rc<RefCell<Option<String>>>,
) -> Result<(), JsValue> {
    let units = tx.object_store(UNITS)?;
    let gs1_keys = Array::of2(&"gtin".into(), &"serial".into());
    units.create_index_with_str_sequence_and_optional_parameters(
        BY_GS1,
        &gs1_keys,
        &IdbIndexParameters::new(),
    )?;
    let params = IdbObjectStoreParameters::new();
    params.set_key_path(&"sku".into());
    let skus = db.create_object_store_with_optional_parameters(SKUS, &params)?;
    skus.create_index_with_str_and_optional_parameters(
        BY_GTIN,
        "gtin",
        &IdbIndexParameters::new(),
    )?;

    let meta = tx.object_store(META)?;
    let request = meta.get(&META_REFERENCE.into())?;
    let on_read = {
        let request = request.clone();
        let failure = failure.clone();
        let tx = tx.clone();
        Closure::<dyn FnMut(web_sys::Event)>::new(move |_event: web_sys::Event| {
            if let Err(err) = drop_cursor(&request, &meta) {
                *failure.borrow_mut() = Some(describe(&err));
                let _ = tx.abort();
            }
        })
    };
    request.set_onsuccess(Some(on_read.as_ref().unchecked_ref()));
    keep.borrow_mut().push(on_read);
    Ok(())
}

/// Writes the cache's meta record back without its cursor, if there is one.
fn drop_cursor(request: &IdbRequest, meta: &IdbObjectStore) -> Result<(), JsValue> {
    let row = request.result()?;
    if row.is_null() || row.is_undefined() {
        return Ok(());
    }
    let value = Reflect::get(&row, &"value".into())?;
    if value.is_object() {
        Reflect::set(&value, &"cursor".into(), &JsValue::NULL)?;
        meta.put(&row)?;
    }
    Ok(())
}

/// The fields of a v1 item the v2 step reads (an `open_session`'s body is
/// read on its own, as an [`OpenSessionBody`]).
#[derive(Deserialize)]
struct LegacyItem {
    id: f64,
    #[serde(default)]
    key: Option<String>,
    session_id: uuid::Uuid,
    client_seq: u64,
    command: Command,
    queued_at: UnixMs,
}

/// The sessions the v2 step has met.
type Seen = Rc<RefCell<BTreeMap<uuid::Uuid, LegacySession>>>;

#[derive(Default)]
struct LegacySession {
    opened_at: Option<UnixMs>,
    last_seq: u64,
    closed: bool,
    open: Option<OpenSessionBody>,
}

fn v2_keys_indexes_sessions(
    db: &IdbDatabase,
    tx: &IdbTransaction,
    keep: &Keep,
    failure: &Rc<RefCell<Option<String>>>,
) -> Result<(), JsValue> {
    let items = tx.object_store(ITEMS)?;
    let plain = IdbIndexParameters::new();
    let unique = IdbIndexParameters::new();
    unique.set_unique(true);
    items.create_index_with_str_and_optional_parameters(BY_STATE, "state", &plain)?;
    let session_seq = Array::of2(&"session_id".into(), &"client_seq".into());
    items.create_index_with_str_sequence_and_optional_parameters(
        BY_SESSION_SEQ,
        &session_seq,
        &unique,
    )?;
    items.create_index_with_str_and_optional_parameters(BY_KEY, "key", &unique)?;
    let by_name = |key_path: &str| {
        let params = IdbObjectStoreParameters::new();
        params.set_key_path(&key_path.into());
        params
    };
    db.create_object_store_with_optional_parameters(SESSIONS, &by_name("session_id"))?;
    db.create_object_store_with_optional_parameters(META, &by_name("name"))?;

    let sessions_store = tx.object_store(SESSIONS)?;
    let cursor_request = items.open_cursor()?;
    let seen: Seen = Rc::default();
    let on_row = {
        let cursor_request = cursor_request.clone();
        let failure = failure.clone();
        let tx = tx.clone();
        Closure::<dyn FnMut(web_sys::Event)>::new(move |_event: web_sys::Event| {
            let step = migrate_row(&cursor_request, &seen, &sessions_store);
            if let Err(err) = step {
                *failure.borrow_mut() = Some(describe(&err));
                let _ = tx.abort();
            }
        })
    };
    cursor_request.set_onsuccess(Some(on_row.as_ref().unchecked_ref()));
    keep.borrow_mut().push(on_row);
    Ok(())
}

/// One cursor step of the v2 upgrade: key the row if it has none and note
/// its session; at the end, write the rebuilt sessions.
fn migrate_row(
    cursor_request: &IdbRequest,
    seen: &Seen,
    sessions_store: &IdbObjectStore,
) -> Result<(), JsValue> {
    let result = cursor_request.result()?;
    if result.is_null() || result.is_undefined() {
        for (session_id, legacy) in std::mem::take(&mut *seen.borrow_mut()) {
            let (Some(open), Some(opened_at)) = (legacy.open, legacy.opened_at) else {
                continue;
            };
            let session = Session {
                session_id,
                operator_id: open.operator_id,
                mode: open.mode,
                opened_at,
                next_seq: legacy.last_seq + 1,
                closed: legacy.closed,
            };
            sessions_store.put(&to_js(&session)?)?;
        }
        return Ok(());
    }
    let cursor: IdbCursorWithValue = result.unchecked_into();
    let value = cursor.value()?;
    let row: LegacyItem = from_record(value.clone(), "v1 item")
        .map_err(|e| JsValue::from_str(&format!("unreadable v1 item: {e}")))?;
    if row.key.is_none() {
        let key = IdempotencyKey::derive_from_legacy_id(row.id as u64)
            .map_err(|e| JsValue::from_str(&e.to_string()))?;
        Reflect::set(&value, &"key".into(), &key.to_string().into())?;
        cursor.update(&value)?;
    }
    let mut seen = seen.borrow_mut();
    let session = seen.entry(row.session_id).or_default();
    session.last_seq = session.last_seq.max(row.client_seq);
    session.opened_at = Some(
        session
            .opened_at
            .map_or(row.queued_at, |at| at.min(row.queued_at)),
    );
    match row.command {
        Command::OpenSession => {
            let body = Reflect::get(&value, &"body".into())?;
            session.open = from_record::<OpenSessionBody>(body, "v1 open_session").ok();
        }
        Command::CloseSession => session.closed = true,
        _ => {}
    }
    cursor.continue_()?;
    Ok(())
}
