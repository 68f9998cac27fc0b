//! The browser glue, compiled only for wasm32: the service worker's entry
//! points around the sans-IO core.

use wasm_bindgen::prelude::*;

use crate::key::IdempotencyKey;

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
