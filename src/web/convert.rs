//! The JS edge: every record, message and reply crosses it through serde
//! (`serde-wasm-bindgen`). Reads name the field that failed
//! (`capture.session_id: invalid type: …`); writes build the plain
//! objects `JSON.parse` would give (`None` as `null`, maps as objects).

use serde::de::{self, DeserializeOwned};
use serde::Serialize;
use wasm_bindgen::JsValue;

/// A page's message, `{type, ...fields}`, read field by field: each
/// field's value by serde-wasm-bindgen, as a record is ([`from_record`]),
/// and a refusal names the type and the field that did not fit
/// (`capture.session_id: invalid type: …`), or the type alone for a
/// field that is missing (`capture: missing field `session_id``).
///
/// A request reads every field it lists with [`Fields::get`] first, in
/// that order, and only then asks for the required ones
/// ([`Fields::required`]): the refusal lines stay those of a derived
/// `Deserialize`, which reads the fields present before it names one that
/// is missing. Each reader is compiled once per field type; a derived
/// `Deserialize` of the request enum was compiled once per request and
/// field (25 KiB of the module, 8 KiB gzipped).
pub struct Fields<'a> {
    kind: &'a str,
    message: &'a JsValue,
}

impl<'a> Fields<'a> {
    /// The fields of `message`, a request of type `kind`.
    pub fn of(kind: &'a str, message: &'a JsValue) -> Fields<'a> {
        Fields { kind, message }
    }

    /// The field `name`; `None` when it is absent or `undefined`.
    pub fn get<T: DeserializeOwned>(&self, name: &'static str) -> Result<Option<T>, String> {
        let value = js_sys::Reflect::get(self.message, &JsValue::from_str(name))
            .unwrap_or(JsValue::UNDEFINED);
        if value.is_undefined() {
            return Ok(None);
        }
        serde_wasm_bindgen::from_value(value)
            .map(Some)
            .map_err(|err| in_field(self.kind, name, err))
    }

    /// An optional field: `None` when it is absent, `undefined` or `null`.
    pub fn optional<T: DeserializeOwned>(&self, name: &'static str) -> Result<Option<T>, String> {
        Ok(self.get::<Option<T>>(name)?.flatten())
    }

    /// A required field, read before with [`Fields::get`].
    pub fn required<T>(&self, value: Option<T>, name: &'static str) -> Result<T, String> {
        value.ok_or_else(|| missing_field(self.kind, name))
    }
}

// The error paths below are plain functions, not closures in the generic
// readers, so the module holds each once rather than once per field type.

/// A required field that is absent, in serde's words, with the type named.
fn missing_field(kind: &str, name: &'static str) -> String {
    format!("{kind}: {}", js_error_text(de::Error::missing_field(name)))
}

/// A field's value that did not fit, named `kind.name`.
fn in_field(kind: &str, name: &str, err: serde_wasm_bindgen::Error) -> String {
    format!("{kind}.{name}: {}", js_error_text(err))
}

/// A message whose `type` is none of `kinds`, in serde's words (`unknown
/// variant `fly`, expected one of …`).
pub fn unknown_kind(kind: &str, kinds: &'static [&'static str]) -> String {
    js_error_text(de::Error::unknown_variant(kind, kinds))
}

/// A serde-wasm-bindgen error's text. The error is a JS `Error`; its text
/// starts with its class name, which is dropped.
fn js_error_text(err: serde_wasm_bindgen::Error) -> String {
    let why = err.to_string();
    match why.strip_prefix("Error: ") {
        Some(rest) => rest.to_owned(),
        None => why,
    }
}

/// Reads a record the queue stored as a `T`; the error names `noun` and
/// what did not fit (`missing field`, `invalid type`). Without the field
/// a page's message names ([`Fields`]): a stored record is written by this module from the
/// same types, and tracking the path doubles every reader's code in the
/// module.
pub fn from_record<T: DeserializeOwned>(value: JsValue, noun: &str) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value).map_err(|err| in_record(noun, err))
}

/// A stored record that did not read, named `noun`.
fn in_record(noun: &str, err: serde_wasm_bindgen::Error) -> String {
    format!("{noun}: {}", js_error_text(err))
}

/// Writes `value` as a plain JS value. It fails only on a number no JS
/// number holds exactly (beyond ±2^53), which is refused, not altered.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, String> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|err| err.to_string())
}

/// A stored unit's `version`, when it holds a whole one.
pub fn unit_version(row: &JsValue) -> Option<u64> {
    let version = js_sys::Reflect::get(row, &"version".into())
        .ok()?
        .as_f64()?;
    (version >= 0.0 && version.fract() == 0.0 && version <= 9_007_199_254_740_991.0)
        .then_some(version as u64)
}
