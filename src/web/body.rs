//! An item's body in the browser module: the JS value itself (see
//! [`crate::body`]). It is made by [`Body::read`] from what the page
//! posted, a plain copy in the shapes [`super::js`] accepts for JSON, or
//! taken as stored from a record the queue wrote ([`Body::stored`]).

use js_sys::{Array, Object, Reflect, JSON};
use wasm_bindgen::{JsCast, JsValue};

use crate::wire::{OpenSessionBody, VoidBody};

use super::js::{self, ReadError};
use super::write::{Record, ToJs};

/// An item's body: a JSON-shaped JS value (`null`, a boolean, a finite
/// number, a string, an array or a plain object of these).
#[derive(Clone)]
pub struct Body(pub(super) JsValue);

/// An `open_session`'s context: a plain object (`null` stands for `{}`).
pub type Context = Body;

impl Body {
    /// A copy of `value` as JSON (see [`js::json`] for what is accepted).
    pub fn read(value: &JsValue) -> Result<Body, ReadError> {
        js::json(value).map(Body)
    }

    /// A body the queue stored itself: taken as it is.
    pub fn stored(value: JsValue) -> Body {
        Body(if value.is_undefined() {
            JsValue::NULL
        } else {
            value
        })
    }

    pub fn as_js(&self) -> &JsValue {
        &self.0
    }

    /// The body as JSON text (`JSON.stringify`), for messages and tests.
    pub fn to_json_text(&self) -> String {
        JSON::stringify(&self.0)
            .ok()
            .and_then(|text| text.as_string())
            .unwrap_or_default()
    }
}

impl Default for Body {
    /// `null`, a body's default as serde reads an absent one.
    fn default() -> Body {
        Body(JsValue::NULL)
    }
}

impl ToJs for Body {
    fn to_js(&self) -> JsValue {
        self.0.clone()
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_json_text())
    }
}

impl PartialEq for Body {
    /// The same JSON: equal scalars, arrays alike element by element,
    /// objects with the same keys (in any order) and equal values.
    fn eq(&self, other: &Body) -> bool {
        same_json(&self.0, &other.0)
    }
}

fn same_json(a: &JsValue, b: &JsValue) -> bool {
    if Array::is_array(a) || Array::is_array(b) {
        let (Some(a), Some(b)) = (a.dyn_ref::<Array>(), b.dyn_ref::<Array>()) else {
            return false;
        };
        return a.length() == b.length()
            && (0..a.length()).all(|at| same_json(&a.get(at), &b.get(at)));
    }
    match (a.is_object() && !a.is_null(), b.is_object() && !b.is_null()) {
        (true, true) => {
            let keys = Object::keys(a.unchecked_ref::<Object>());
            keys.length() == Object::keys(b.unchecked_ref::<Object>()).length()
                && keys.iter().all(|key| {
                    Reflect::has(b, &key).unwrap_or(false)
                        && same_json(
                            &Reflect::get(a, &key).unwrap_or(JsValue::UNDEFINED),
                            &Reflect::get(b, &key).unwrap_or(JsValue::UNDEFINED),
                        )
                })
        }
        (false, false) => {
            a == b || (a.is_null() && b.is_undefined()) || (a.is_undefined() && b.is_null())
        }
        _ => false,
    }
}

/// Through serde-wasm-bindgen the body passes as the JS value it is (its
/// `preserve` form); other serde formats cannot carry it.
impl serde::Serialize for Body {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serde_wasm_bindgen::preserve::serialize(&self.0, serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Body {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Body, D::Error> {
        serde_wasm_bindgen::preserve::deserialize::<D, JsValue>(deserializer).map(Body::stored)
    }
}

/// `{}`: the body of a `close_session`.
pub fn empty_object() -> Body {
    Body(Object::new().into())
}

/// The body of an `open_session`: `{operator_id, mode, context}`.
pub fn of_open(body: &OpenSessionBody) -> Body {
    let context = if js::is_nullish(&body.context.0) {
        empty_object()
    } else {
        body.context.clone()
    };
    Body(
        Record::new()
            .set("operator_id", &body.operator_id)
            .set("mode", &body.mode.as_str())
            .set("context", &context)
            .build(),
    )
}

/// The body of a `void`: `{void_seq}`.
pub fn of_void(body: VoidBody) -> Body {
    Body(Record::new().set("void_seq", &body.void_seq).build())
}

/// A `void`'s `void_seq`, if the body holds a whole one.
pub fn void_seq(body: &Body) -> Option<u64> {
    js::read_u64(&Reflect::get(&body.0, &JsValue::from_str("void_seq")).ok()?)
}
