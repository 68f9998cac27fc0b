//! Hand-written writers from Rust values to plain JS objects: the queue's
//! stored records (items, sessions, the meta rows), the `/v1/sync` request
//! body and the replies the page reads. The counterpart of [`super::js`]'s
//! readers.
//!
//! Each writer builds exactly the object serde-wasm-bindgen's
//! JSON-compatible serializer makes of the type's `Serialize` (the shape
//! `JSON.parse` would give, fields in declaration order, `None` as `null`
//! or left out where the type skips it), and the browser tests compare
//! the two for every type (`tests/web_js.rs`). Written out by hand because the generic
//! serializer costs the shipped module about 20 KB for records whose shape
//! never changes. A capture's body is already a plain JS value
//! ([`super::body`]) and is set as it is.

use js_sys::{Array, Object, Reflect};
use uuid::Uuid;
use wasm_bindgen::JsValue;

use crate::backoff::Backoff;
use crate::key::IdempotencyKey;
use crate::queue::{Counts, Item, Session};
use crate::time::UnixMs;
use crate::wire::{SyncItem, SyncRequest};

use super::store::DeviceConfig;

/// A value's JS form.
pub trait ToJs {
    fn to_js(&self) -> JsValue;
}

/// A plain object, built field by field.
pub struct Record(Object);

impl Default for Record {
    fn default() -> Record {
        Record::new()
    }
}

impl Record {
    pub fn new() -> Record {
        Record(Object::new())
    }

    /// Sets `name`. Setting a data property on a fresh plain object cannot
    /// throw, so there is no error to hand on.
    pub fn set(self, name: &str, value: &impl ToJs) -> Record {
        self.set_js(name, value.to_js())
    }

    /// The one out-of-line setter every `set` calls: a field costs its
    /// caller two calls, not the key, the set and two drops inlined.
    #[inline(never)]
    fn set_js(self, name: &str, value: JsValue) -> Record {
        let _ = Reflect::set(&self.0, &JsValue::from_str(name), &value);
        self
    }

    /// Sets `name` unless `value` is `None` (serde's
    /// `skip_serializing_if = "Option::is_none"`).
    pub fn set_some<T: ToJs>(self, name: &str, value: &Option<T>) -> Record {
        match value {
            Some(value) => self.set(name, value),
            None => self,
        }
    }

    pub fn build(self) -> JsValue {
        self.0.into()
    }
}

impl ToJs for JsValue {
    fn to_js(&self) -> JsValue {
        self.clone()
    }
}

impl ToJs for String {
    fn to_js(&self) -> JsValue {
        JsValue::from_str(self)
    }
}

impl ToJs for &str {
    fn to_js(&self) -> JsValue {
        JsValue::from_str(self)
    }
}

impl ToJs for bool {
    fn to_js(&self) -> JsValue {
        JsValue::from_bool(*self)
    }
}

impl ToJs for f64 {
    fn to_js(&self) -> JsValue {
        JsValue::from_f64(*self)
    }
}

/// Whole numbers the queue writes (ids, seqs, counts, milliseconds) are
/// far below 2^53, so a JS number holds them exactly, as it does in
/// serde-wasm-bindgen's JSON-compatible output.
macro_rules! number_to_js {
    ($($t:ty),*) => {$(
        impl ToJs for $t {
            fn to_js(&self) -> JsValue {
                JsValue::from_f64(*self as f64)
            }
        }
    )*};
}
number_to_js!(u32, u64, i64);

impl<T: ToJs> ToJs for Option<T> {
    fn to_js(&self) -> JsValue {
        match self {
            Some(value) => value.to_js(),
            None => JsValue::NULL,
        }
    }
}

impl<T: ToJs> ToJs for Vec<T> {
    fn to_js(&self) -> JsValue {
        let array = Array::new_with_length(self.len() as u32);
        for (at, value) in self.iter().enumerate() {
            array.set(at as u32, value.to_js());
        }
        array.into()
    }
}

impl ToJs for Uuid {
    fn to_js(&self) -> JsValue {
        JsValue::from_str(self.hyphenated().encode_lower(&mut Uuid::encode_buffer()))
    }
}

impl ToJs for IdempotencyKey {
    fn to_js(&self) -> JsValue {
        self.as_uuid().to_js()
    }
}

impl ToJs for UnixMs {
    fn to_js(&self) -> JsValue {
        JsValue::from_str(&self.to_string())
    }
}

/// Sets the fields a stored item shares with its wire form, in their
/// order (`Item` and `SyncItem` name them alike).
macro_rules! set_wire_fields {
    ($record:expr, $item:expr) => {
        $record
            .set("key", &$item.key)
            .set("session_id", &$item.session_id)
            .set("client_seq", &$item.client_seq)
            .set("command", &$item.command.as_str())
            .set("occurred_at", &$item.occurred_at)
            .set("queued_at", &$item.queued_at)
            .set("body", &$item.body)
    };
}

/// A stored item.
pub fn item(item: &Item) -> JsValue {
    let fields = set_wire_fields!(Record::new().set_some("id", &item.id), item)
        .set("state", &item.state.as_str())
        .set_some("reason", &item.reason)
        .set("attempts", &item.attempts)
        .set_some("recorded_at", &item.recorded_at)
        .set("replayed", &item.replayed);
    let fields = if item.hop_ids.is_empty() {
        fields
    } else {
        fields.set("hop_ids", &item.hop_ids)
    };
    fields
        .set_some("updated_at", &item.updated_at)
        .set("acknowledged", &item.acknowledged)
        .build()
}

/// The `/v1/sync` request body.
pub fn sync_request(request: &SyncRequest) -> JsValue {
    Record::new()
        .set("device_id", &request.device_id)
        .set("sent_at", &request.sent_at)
        .set("items", &request.items)
        .build()
}

impl ToJs for SyncItem {
    fn to_js(&self) -> JsValue {
        set_wire_fields!(Record::new(), self).build()
    }
}

impl ToJs for Session {
    fn to_js(&self) -> JsValue {
        Record::new()
            .set("session_id", &self.session_id)
            .set("operator_id", &self.operator_id)
            .set("mode", &self.mode.as_str())
            .set("opened_at", &self.opened_at)
            .set("next_seq", &self.next_seq)
            .set("closed", &self.closed)
            .build()
    }
}

impl ToJs for Backoff {
    fn to_js(&self) -> JsValue {
        Record::new()
            .set("failures", &self.failures)
            .set("next_attempt_at", &self.next_attempt_at)
            .build()
    }
}

impl ToJs for DeviceConfig {
    fn to_js(&self) -> JsValue {
        Record::new()
            .set("site_url", &self.site_url)
            .set("device_token", &self.device_token)
            .set("device_id", &self.device_id)
            .build()
    }
}

impl ToJs for Counts {
    fn to_js(&self) -> JsValue {
        Record::new()
            .set("queued", &self.queued)
            .set("sending", &self.sending)
            .set("done", &self.done)
            .set("rejected", &self.rejected)
            .set("blocked", &self.blocked)
            .set("voided", &self.voided)
            .set("oldest_queued_at", &self.oldest_queued_at)
            .set("oldest_queued_age_ms", &self.oldest_queued_age_ms)
            .build()
    }
}
