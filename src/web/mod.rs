//! The browser glue, compiled only for wasm32: the service worker's queue
//! runtime around the sans-IO core in [`crate::queue`].
//!
//! * [`worker`]: [`ServiceWorker`], the one type `sw.js` drives;
//! * [`message`]: the page ↔ worker protocol;
//! * [`runtime`]: the actor that owns the store and the drain;
//! * [`store`]: every IndexedDB read and write, through `indexed_db_futures`;
//! * [`cache`]: the reference cache's IndexedDB side;
//! * [`schema`]: the IndexedDB schema and its numbered upgrades;
//! * [`convert`]: serde at the JS edge (`serde-wasm-bindgen`);
//! * [`transport`]: `fetch` to `/v1/sync` behind a trait tests substitute;
//! * [`browser`]: bindings web-sys lacks (Web Locks, Background Sync, storage);
//! * [`clock`], [`error`].

pub mod browser;
pub mod cache;
pub mod clock;
pub mod convert;
pub mod error;
pub mod message;
pub mod runtime;
pub mod schema;
pub mod store;
pub mod transport;
pub mod worker;

use wasm_bindgen::prelude::*;

use crate::key::IdempotencyKey;

pub use worker::ServiceWorker;

/// Mints a UUIDv4 idempotency key from the browser's crypto.
#[wasm_bindgen(js_name = mintKey)]
pub fn mint_key() -> Result<String, JsError> {
    Ok(IdempotencyKey::mint()?.to_string())
}

/// The module's version, for the page's About line and the heartbeat.
#[wasm_bindgen(js_name = coreVersion)]
pub fn core_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
