//! An item's body: the free-form JSON a capture carries, which the site
//! reads by command ([`crate::wire`]'s `ScanBody`, `OpenSessionBody`, …).
//! A `serde_json::Value` on every target; the queue builds the bodies of
//! the items it makes itself (open, close, void) here.

use std::collections::BTreeMap;

use serde_json::Value;

/// An item's body.
pub type Body = Value;
/// An `open_session`'s free-form context: an object.
pub type Context = BTreeMap<String, Value>;

/// `{}`: the body of a `close_session`.
pub fn empty_object() -> Body {
    Value::Object(Default::default())
}

/// A `void`'s `void_seq`, if the body holds a whole one.
pub fn void_seq(body: &Body) -> Option<u64> {
    body.get("void_seq").and_then(Value::as_u64)
}
