//! An item's body: the free-form JSON a capture carries, which the site
//! reads by command ([`crate::wire`]'s `ScanBody`, `OpenSessionBody`, …).
//!
//! Natively (the site, the core's tests) a body is a `serde_json::Value`.
//! In the browser module it is the JS value itself ([`crate::web::body`]):
//! a plain, JSON-shaped copy made when the page hands the capture over,
//! which IndexedDB clones and `JSON.stringify` sends, so the module links
//! no JSON tree or map of its own. The core builds and reads bodies only
//! through the functions here, which both forms provide.

#[cfg(target_arch = "wasm32")]
pub use crate::web::body::{empty_object, of_open, of_void, void_seq, Body, Context};
#[cfg(not(target_arch = "wasm32"))]
pub use native::*;

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::collections::BTreeMap;

    use serde_json::Value;

    use crate::wire::{OpenSessionBody, VoidBody};

    /// An item's body.
    pub type Body = Value;
    /// An `open_session`'s free-form context: an object.
    pub type Context = BTreeMap<String, Value>;

    /// `{}`: the body of a `close_session`.
    pub fn empty_object() -> Body {
        Value::Object(Default::default())
    }

    /// The body of an `open_session`.
    pub fn of_open(body: &OpenSessionBody) -> Body {
        serde_json::to_value(body).unwrap_or_default()
    }

    /// The body of a `void`.
    pub fn of_void(body: VoidBody) -> Body {
        serde_json::to_value(body).unwrap_or_default()
    }

    /// A `void`'s `void_seq`, if the body holds a whole one.
    pub fn void_seq(body: &Body) -> Option<u64> {
        body.get("void_seq").and_then(Value::as_u64)
    }
}
