//! The browser glue, compiled only for wasm32: the service worker's queue
//! runtime around the sans-IO core in [`crate::queue`].
//!
//! * [`body`]: an item's body, the JS value itself;
//! * [`schema`]: the IndexedDB schema and its numbered upgrades;
//! * [`store`]: every IndexedDB read and write, one strict transaction per step;
//! * [`js`]: hand-written readers of stored records, page messages and JSON bodies;
//! * [`write`]: hand-written writers of stored records, the sync request and replies;
//! * [`runtime`]: group-committed captures and the drain loop;
//! * [`transport`]: `fetch` to `/v1/sync` behind a trait tests substitute;
//! * [`browser`]: hand-written bindings (Web Locks, Background Sync, storage);
//! * [`worker`]: [`ServiceWorker`], the one type `sw.js` drives;
//! * [`heap`]: the module's allocator over `memory.grow`.

pub mod body;
pub mod browser;
pub mod clock;
pub mod error;
#[cfg(not(target_feature = "atomics"))]
pub mod heap;
pub mod js;
pub mod message;
pub mod runtime;
pub mod schema;
pub mod store;
pub mod transport;
pub mod worker;
pub mod write;

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
