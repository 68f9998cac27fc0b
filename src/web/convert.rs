//! The JS edge: every record, message and reply crosses it through serde
//! (`serde-wasm-bindgen`). Reads name the field that failed
//! (`capture.session_id: invalid type: …`); writes build the plain
//! objects `JSON.parse` would give (`None` as `null`, maps as objects).

use serde::de::{DeserializeOwned, Deserializer, Error};
use serde::Serialize;
use wasm_bindgen::JsValue;

/// Reads `value` as a `T`; the error names `noun` and the path to the
/// field that did not fit. For what a page sends, which a person reads
/// when it is refused.
pub fn from_js<T: DeserializeOwned>(value: JsValue, noun: &str) -> Result<T, String> {
    let deserializer = serde_wasm_bindgen::Deserializer::from(value);
    serde_path_to_error::deserialize(deserializer).map_err(|err| {
        let path = err.path().to_string();
        // The error is a JS `Error`; its text starts with its class name.
        let why = err.inner().to_string();
        let why = why.strip_prefix("Error: ").unwrap_or(&why);
        match (noun, path.as_str()) {
            ("", ".") => why.to_owned(),
            (noun, ".") => format!("{noun}: {why}"),
            ("", path) => format!("{path}: {why}"),
            (noun, path) => format!("{noun}.{path}: {why}"),
        }
    })
}

/// Reads one field of a page's message, for `#[serde(deserialize_with)]`
/// on every field of a type read by [`from_js`]. The field is taken as the
/// JS value it is and read as a record is ([`from_record`]); its error
/// still names the field (`capture.session_id: …`). A page's messages are
/// flat, so the path ends at the field: tracking it deeper wrapped the
/// reader of every field's type a second time (reading each field so made
/// the module 8 KiB smaller, 2.6 KiB gzipped) and tracked every key of
/// every capture's body.
pub fn field<'de, D: Deserializer<'de>, T: DeserializeOwned>(field: D) -> Result<T, D::Error> {
    let value: JsValue = serde_wasm_bindgen::preserve::deserialize(field)?;
    serde_wasm_bindgen::from_value(value).map_err(|err| {
        let why = err.to_string();
        D::Error::custom(why.strip_prefix("Error: ").unwrap_or(&why))
    })
}

/// Reads a record the queue stored as a `T`; the error names `noun` and
/// what did not fit (`missing field`, `invalid type`). Without the path
/// of [`from_js`]: a stored record is written by this module from the
/// same types, and tracking the path doubles every reader's code in the
/// module.
pub fn from_record<T: DeserializeOwned>(value: JsValue, noun: &str) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value).map_err(|err| {
        let why = err.to_string();
        format!("{noun}: {}", why.strip_prefix("Error: ").unwrap_or(&why))
    })
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
