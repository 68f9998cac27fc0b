//! The browser glue, compiled only for wasm32: [`crate::runtime`]'s traits
//! for the service worker, and its messages. None of the queue's logic is
//! here.
//!
//! * [`worker`]: [`ServiceWorker`], the one type `sw.js` drives;
//! * [`message`]: the page ↔ worker protocol;
//! * [`runtime`]: the queue on IndexedDB, and the browser as its platform;
//! * [`store`]: the runtime's store: every IndexedDB read and write, through
//!   `indexed_db_futures`;
//! * [`cache`]: the reference cache's IndexedDB side;
//! * [`label`]: a scan read as a label, and what it names in the cache;
//! * `export`: the queue screen's Export, the queue as a rescue file;
//! * [`schema`]: the IndexedDB schema and its numbered upgrades;
//! * [`convert`]: serde at the JS edge (`serde-wasm-bindgen`);
//! * [`transport`]: the runtime's transport: `fetch`;
//! * [`browser`]: bindings web-sys lacks (Web Locks, Background Sync, storage);
//! * [`clock`], [`error`].

pub mod browser;
pub mod cache;
pub mod clock;
pub mod convert;
pub mod error;
mod export;
pub mod label;
pub mod message;
pub mod runtime;
pub mod schema;
pub mod store;
pub mod transport;
pub mod worker;

use wasm_bindgen::prelude::*;

use crate::key::IdempotencyKey;
use crate::release::{schema_fit, SchemaFit, OLDEST_COMPATIBLE_SCHEMA, SCHEMA_VERSION};

pub use worker::ServiceWorker;

/// The module's heap: talc, growing the wasm memory as it needs, in place
/// of Rust's default dlmalloc (6.6 KiB smaller, 2.9 KiB gzipped).
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// Mints a UUIDv4 idempotency key from the browser's crypto.
#[wasm_bindgen(js_name = mintKey)]
pub fn mint_key() -> Result<String, JsError> {
    Ok(IdempotencyKey::mint()?.to_string())
}

/// Whether this build's worker may run on a queue database at schema
/// `stored` whose declaration names `oldest_compatible`
/// ([`crate::release::schema_fit`]); `sw.js` asks before it opens the
/// queue.
#[wasm_bindgen(js_name = schemaFits)]
pub fn schema_fits(stored: u32, oldest_compatible: Option<u32>) -> bool {
    schema_fit(SCHEMA_VERSION, stored, oldest_compatible) != SchemaFit::NewerIncompatible
}

/// This build's schema: `sw.js` writes it, with
/// [`oldest_compatible_schema`], into the queue database once it is open.
#[wasm_bindgen(js_name = schemaVersion)]
pub fn schema_version() -> u32 {
    SCHEMA_VERSION
}

/// The oldest schema whose workers may keep capturing on this build's.
#[wasm_bindgen(js_name = oldestCompatibleSchema)]
pub fn oldest_compatible_schema() -> u32 {
    OLDEST_COMPATIBLE_SCHEMA
}
