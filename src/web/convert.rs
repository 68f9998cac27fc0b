//! The JS edge: every record, message and reply crosses it through serde
//! (`serde-wasm-bindgen`). Reads name the field that failed
//! (`capture.session_id: invalid type: …`); writes build the plain
//! objects `JSON.parse` would give (`None` as `null`, maps as objects).

use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde::Serialize;
use wasm_bindgen::JsValue;

/// Reads a page's message, `{type, ...fields}`, as the variant of `T` (an
/// enum of struct variants) its `type` names. The error names the variant
/// and the field that did not fit (`capture.session_id: invalid type: …`),
/// or the variant alone for a field that is missing.
///
/// Each field's value is read by serde-wasm-bindgen, as a record is
/// ([`from_record`]); only the message's own two levels (its `type` and its
/// fields) go through [`Message`], which knows the field it is reading. A
/// page's messages are flat, so the path ends at the field. This replaced
/// serde_path_to_error, which wrapped the reader of every field's type a
/// second time to track the same path (14 KiB of the module, 6 KiB
/// gzipped).
pub fn read_message<T: DeserializeOwned>(kind: &str, message: &JsValue) -> Result<T, String> {
    T::deserialize(Message { kind, message }).map_err(|refusal| refusal.why)
}

/// Why a page's message was refused: a readable line, and whether it
/// already names the variant and field.
#[derive(Debug)]
struct Refusal {
    why: String,
    named: bool,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.why)
    }
}

impl std::error::Error for Refusal {}

impl de::Error for Refusal {
    fn custom<M: fmt::Display>(why: M) -> Refusal {
        Refusal {
            why: why.to_string(),
            named: false,
        }
    }
}

/// A page's message, read as the variant its `type` names.
struct Message<'a> {
    kind: &'a str,
    message: &'a JsValue,
}

impl<'de> de::Deserializer<'de> for Message<'_> {
    type Error = Refusal;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refusal> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de, 'a> de::EnumAccess<'de> for Message<'a> {
    type Error = Refusal;
    type Variant = Fields<'a>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Fields<'a>), Refusal> {
        let variant = seed.deserialize(self.kind.into_deserializer())?;
        let fields = Fields {
            kind: self.kind,
            message: self.message,
            names: [].iter(),
            next: None,
        };
        Ok((variant, fields))
    }
}

/// A message's fields, each read by name as the variant lists them; an
/// absent or `undefined` field is missing.
struct Fields<'a> {
    kind: &'a str,
    message: &'a JsValue,
    names: std::slice::Iter<'static, &'static str>,
    next: Option<(&'static str, JsValue)>,
}

impl<'de> de::VariantAccess<'de> for Fields<'_> {
    type Error = Refusal;

    fn unit_variant(self) -> Result<(), Refusal> {
        Ok(())
    }

    // A message is an object of fields: every request is a struct variant.
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, _: S) -> Result<S::Value, Refusal> {
        Err(de::Error::custom("not a message of fields"))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Refusal> {
        Err(de::Error::custom("not a message of fields"))
    }

    fn struct_variant<V: Visitor<'de>>(
        mut self,
        names: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Refusal> {
        self.names = names.iter();
        let kind = self.kind;
        visitor
            .visit_map(self)
            .map_err(|refusal| in_variant(kind, refusal))
    }
}

// The error paths below are plain functions, not closures in the generic
// readers, so the module holds each once rather than once per field type.

/// A message's refusal as the page hears it: a field's error names the
/// field already; one of the message's own (a missing field) is given its
/// variant.
fn in_variant(kind: &str, refusal: Refusal) -> Refusal {
    match refusal.named {
        true => refusal,
        false => Refusal {
            why: format!("{kind}: {}", refusal.why),
            named: true,
        },
    }
}

/// A field's value that did not fit, named `kind.name`.
fn in_field(kind: &str, name: &str, err: serde_wasm_bindgen::Error) -> Refusal {
    Refusal {
        why: format!("{kind}.{name}: {}", js_error_text(err)),
        named: true,
    }
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

impl Fields<'_> {
    /// The next field the variant lists that the message holds, and its
    /// value.
    fn next_field(&mut self) -> Option<(&'static str, JsValue)> {
        for &name in &mut self.names {
            let value = js_sys::Reflect::get(self.message, &JsValue::from_str(name))
                .unwrap_or(JsValue::UNDEFINED);
            if !value.is_undefined() {
                return Some((name, value));
            }
        }
        None
    }
}

impl<'de> de::MapAccess<'de> for Fields<'_> {
    type Error = Refusal;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Refusal> {
        self.next = self.next_field();
        match &self.next {
            Some((name, _)) => seed.deserialize(name.into_deserializer()).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Refusal> {
        let (name, value) = self
            .next
            .take()
            .ok_or_else(|| de::Error::custom("a field's value read before its name"))?;
        let kind = self.kind;
        seed.deserialize(serde_wasm_bindgen::Deserializer::from(value))
            .map_err(|err| in_field(kind, name, err))
    }
}

/// Reads a record the queue stored as a `T`; the error names `noun` and
/// what did not fit (`missing field`, `invalid type`). Without the field
/// of [`read_message`]: a stored record is written by this module from the
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
