//! Reading plain JS values into Rust types by hand: the records the queue
//! stored in IndexedDB, the page's messages, the site's answers (parsed by
//! the browser's `JSON.parse`) and JSON bodies.
//!
//! Writing is hand-written too ([`super::write`]). A serde `Deserialize`
//! over `serde-wasm-bindgen` builds a visitor per type and per field type,
//! and its error paths pull in float formatting; together they made up a
//! large share of the module. The
//! readers here walk the object with `Reflect::get` and accept exactly
//! the shapes that serde path accepted:
//!
//! * a field that is absent takes its serde default, or is an error where
//!   the type has none;
//! * `null` is `None` for an `Option`, JSON `null` for a body, and an
//!   error for anything else (as serde, `null` is a present value);
//! * integers are safe-integer numbers (or `BigInt`s for 64-bit fields),
//!   unsigned ones not negative;
//! * instants are RFC 3339 strings ([`UnixMs`]), keys and session ids
//!   strings, enums their snake_case names (or `{name: null}`, the
//!   externally tagged form of a unit variant);
//! * a JSON value (a body, an `open_session` context) is `null`/`undefined`,
//!   a boolean, a number (NaN and the infinities become `null`, as JSON has
//!   no form for them), a `BigInt` within ±(2^53 − 1) (it becomes a number),
//!   a string, an array, a plain object or a `Map` with string keys, and is
//!   copied into the plain form `JSON.parse` would give. Anything else (a
//!   function, a symbol, a `Set`, a byte buffer, a larger `BigInt`, which
//!   no JS number holds exactly) is refused, not stored altered.
//!
//! Two corners differ, on shapes no page posts and no build stored: a
//! field present with the value `undefined` counts as absent (serde read
//! it as a value, an error for a non-`Option`), and an `open_session`
//! `context` must be an object or a `Map` (serde also took other iterables
//! of `[key, value]` pairs).
//!
//! Every error names the field it is about (`item.client_seq: expected a
//! whole number ≥ 0`).

use js_sys::{Array, ArrayBuffer, Map, Number, Object, Reflect, Symbol};
use uuid::Uuid;
use wasm_bindgen::{JsCast, JsValue};

use crate::backoff::Backoff;
use crate::key::IdempotencyKey;
use crate::queue::{Item, ItemState, Session};
use crate::time::UnixMs;
use crate::wire::{
    Command, ErrorBody, ItemOutcome, ItemResult, Mode, OpenSessionBody, SyncResponse,
};

use super::body::Body;
use super::store::{DeviceConfig, MetaRecord};

/// A value that is not of the shape its reader expects.
///
/// Boxed, like `QueueError`: every reader returns a `Result` with it, and
/// each `?` moves one pointer rather than the place and the expectation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: expected {}", .0.at, .0.expected)]
pub struct ReadError(Box<Misread>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Misread {
    at: String,
    expected: &'static str,
}

impl ReadError {
    pub(crate) fn new(at: impl Into<String>, expected: &'static str) -> ReadError {
        ReadError(Box::new(Misread {
            at: at.into(),
            expected,
        }))
    }

    /// Where in the value: `item.client_seq`, `capture.body.lines[2]`.
    pub fn at(&self) -> &str {
        &self.0.at
    }

    /// What was expected there: `a whole number ≥ 0`.
    pub fn expected(&self) -> &'static str {
        self.0.expected
    }

    /// The same error one level further out (`prefix` then the old place).
    fn within(mut self, prefix: &str) -> ReadError {
        self.0.at.insert_str(0, prefix);
        self
    }
}

/// A type read from a JS value by hand.
pub trait FromJs: Sized {
    fn from_js(value: &JsValue) -> Result<Self, ReadError>;
}

/// The fields of a JS object, read one by one; errors are placed as
/// `noun.field`.
pub struct Fields<'a> {
    object: &'a JsValue,
    noun: &'a str,
}

impl<'a> Fields<'a> {
    /// The fields of `value`, which must be an object.
    pub fn of(value: &'a JsValue, noun: &'a str) -> Result<Fields<'a>, ReadError> {
        if value.is_object() {
            Ok(Fields {
                object: value,
                noun,
            })
        } else {
            Err(ReadError::new(noun, "an object"))
        }
    }

    /// The field's value; `undefined` when absent (or unreadable).
    pub(crate) fn get(&self, name: &str) -> JsValue {
        Reflect::get(self.object, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    }

    fn error(&self, name: &str, expected: &'static str) -> ReadError {
        ReadError::new(format!("{}.{name}", self.noun), expected)
    }

    /// Reads a required field.
    fn required<T>(
        &self,
        name: &str,
        expected: &'static str,
        read: impl FnOnce(&JsValue) -> Option<T>,
    ) -> Result<T, ReadError> {
        read(&self.get(name)).ok_or_else(|| self.error(name, expected))
    }

    /// Reads an `Option` field: absent, `undefined` or `null` is `None`.
    fn optional<T>(
        &self,
        name: &str,
        expected: &'static str,
        read: impl FnOnce(&JsValue) -> Option<T>,
    ) -> Result<Option<T>, ReadError> {
        let value = self.get(name);
        if is_nullish(&value) {
            return Ok(None);
        }
        read(&value)
            .map(Some)
            .ok_or_else(|| self.error(name, expected))
    }

    /// Reads a field with a default: absent or `undefined` is `default`.
    fn defaulted<T>(
        &self,
        name: &str,
        expected: &'static str,
        default: T,
        read: impl FnOnce(&JsValue) -> Option<T>,
    ) -> Result<T, ReadError> {
        let value = self.get(name);
        if value.is_undefined() {
            return Ok(default);
        }
        read(&value).ok_or_else(|| self.error(name, expected))
    }

    pub fn string(&self, name: &str) -> Result<String, ReadError> {
        self.required(name, "a string", JsValue::as_string)
    }

    pub fn opt_string(&self, name: &str) -> Result<Option<String>, ReadError> {
        self.optional(name, "a string", JsValue::as_string)
    }

    /// Any number (an old schema's auto-increment id).
    pub fn number(&self, name: &str) -> Result<f64, ReadError> {
        self.required(name, "a number", JsValue::as_f64)
    }

    pub fn u64(&self, name: &str) -> Result<u64, ReadError> {
        self.required(name, EXPECTED_U64, read_u64)
    }

    pub fn opt_u64(&self, name: &str) -> Result<Option<u64>, ReadError> {
        self.optional(name, EXPECTED_U64, read_u64)
    }

    /// A `u32` that is 0 when absent.
    pub fn u32_or_zero(&self, name: &str) -> Result<u32, ReadError> {
        self.defaulted(name, EXPECTED_U32, 0, read_u32)
    }

    pub fn u16(&self, name: &str) -> Result<u16, ReadError> {
        self.required(name, "a whole number from 0 to 65535", |value| {
            safe_integer(value).and_then(|v| u16::try_from(v).ok())
        })
    }

    pub fn u32(&self, name: &str) -> Result<u32, ReadError> {
        self.required(name, EXPECTED_U32, read_u32)
    }

    pub fn opt_u32(&self, name: &str) -> Result<Option<u32>, ReadError> {
        self.optional(name, EXPECTED_U32, read_u32)
    }

    /// A flag that is `false` when absent.
    pub fn flag(&self, name: &str) -> Result<bool, ReadError> {
        self.defaulted(name, "a boolean", false, JsValue::as_bool)
    }

    pub fn uuid(&self, name: &str) -> Result<Uuid, ReadError> {
        self.required(name, EXPECTED_UUID, read_uuid)
    }

    pub fn opt_uuid(&self, name: &str) -> Result<Option<Uuid>, ReadError> {
        self.optional(name, EXPECTED_UUID, read_uuid)
    }

    pub fn key(&self, name: &str) -> Result<IdempotencyKey, ReadError> {
        self.required(name, "a canonical UUID key", |value| {
            IdempotencyKey::parse(&value.as_string()?).ok()
        })
    }

    pub fn time(&self, name: &str) -> Result<UnixMs, ReadError> {
        self.required(name, EXPECTED_TIME, read_time)
    }

    pub fn opt_time(&self, name: &str) -> Result<Option<UnixMs>, ReadError> {
        self.optional(name, EXPECTED_TIME, read_time)
    }

    pub fn command(&self, name: &str) -> Result<Command, ReadError> {
        self.required(name, EXPECTED_COMMAND, read_command)
    }

    /// A command that is `scan` when absent (a capture's default).
    pub fn command_or_scan(&self, name: &str) -> Result<Command, ReadError> {
        self.defaulted(name, EXPECTED_COMMAND, Command::Scan, read_command)
    }

    pub fn mode(&self, name: &str) -> Result<Mode, ReadError> {
        self.required(name, "a capture mode", |value| {
            read_variant(value, &Mode::ALL, |mode| mode.as_str())
        })
    }

    pub fn state(&self, name: &str) -> Result<ItemState, ReadError> {
        self.required(name, "an item state", |value| {
            read_variant(value, &ItemState::ALL, |state| state.as_str())
        })
    }

    /// A list of records (required).
    pub fn list<T: FromJs>(&self, name: &str) -> Result<Vec<T>, ReadError> {
        let items = elements(&self.get(name)).ok_or_else(|| self.error(name, "a list"))?;
        let mut read = Vec::with_capacity(items.len());
        for (at, item) in items.iter().enumerate() {
            let at = || format!("{}.{name}[{at}]: ", self.noun);
            read.push(T::from_js(item).map_err(|err| err.within(&at()))?);
        }
        Ok(read)
    }

    /// Whole numbers, an empty list when absent.
    pub fn i64_list(&self, name: &str) -> Result<Vec<i64>, ReadError> {
        let value = self.get(name);
        if value.is_undefined() {
            return Ok(Vec::new());
        }
        let expected = "a list of whole numbers";
        let items = elements(&value).ok_or_else(|| self.error(name, expected))?;
        let mut read = Vec::with_capacity(items.len());
        for item in &items {
            read.push(read_i64(item).ok_or_else(|| self.error(name, expected))?);
        }
        Ok(read)
    }

    /// A JSON value (a body), `null` when absent.
    pub fn json(&self, name: &str) -> Result<Body, ReadError> {
        Body::read(&self.get(name)).map_err(|err| err.within(&format!("{}.{name}", self.noun)))
    }

    /// A list of JSON values (required).
    pub fn json_list(&self, name: &str) -> Result<Vec<Body>, ReadError> {
        let items = elements(&self.get(name)).ok_or_else(|| self.error(name, "a list"))?;
        let mut read = Vec::with_capacity(items.len());
        for (at, item) in items.iter().enumerate() {
            let at = || format!("{}.{name}[{at}]", self.noun);
            read.push(Body::read(item).map_err(|err| err.within(&at()))?);
        }
        Ok(read)
    }

    /// An object of JSON values (an `open_session`'s context), `{}` when
    /// absent.
    pub fn json_object(&self, name: &str) -> Result<Body, ReadError> {
        let value = self.get(name);
        if value.is_undefined() {
            return Ok(crate::body::empty_object());
        }
        object(&value)
            .map(Body)
            .map_err(|err| err.within(&format!("{}.{name}", self.noun)))
    }
}

const EXPECTED_U64: &str = "a whole number ≥ 0";
const EXPECTED_U32: &str = "a whole number from 0 to 4294967295";
const EXPECTED_UUID: &str = "a UUID string";
const EXPECTED_TIME: &str = "an RFC 3339 timestamp string";
const EXPECTED_COMMAND: &str = "a command";

pub(crate) fn is_nullish(value: &JsValue) -> bool {
    value.is_null() || value.is_undefined()
}

/// A number within ±2^53 − 1 with no fraction.
fn safe_integer(value: &JsValue) -> Option<i64> {
    if Number::is_safe_integer(value) {
        value.as_f64().map(|v| v as i64)
    } else {
        None
    }
}

pub(crate) fn read_u64(value: &JsValue) -> Option<u64> {
    if value.is_bigint() {
        return u64::try_from(value.clone()).ok();
    }
    safe_integer(value).and_then(|v| u64::try_from(v).ok())
}

fn read_i64(value: &JsValue) -> Option<i64> {
    if value.is_bigint() {
        return i64::try_from(value.clone()).ok();
    }
    safe_integer(value)
}

fn read_u32(value: &JsValue) -> Option<u32> {
    safe_integer(value).and_then(|v| u32::try_from(v).ok())
}

/// A UUID in its hyphenated form (see [`crate::key::parse_hyphenated`]).
fn read_uuid(value: &JsValue) -> Option<Uuid> {
    crate::key::parse_hyphenated(&value.as_string()?)
}

fn read_time(value: &JsValue) -> Option<UnixMs> {
    UnixMs::parse_rfc3339(&value.as_string()?).ok()
}

fn read_command(value: &JsValue) -> Option<Command> {
    read_variant(value, &Command::ALL, |command| command.as_str())
}

/// A unit variant by its name: `"name"`, or `{name: null}`.
fn read_variant<T: Copy>(value: &JsValue, all: &[T], name: fn(T) -> &'static str) -> Option<T> {
    let tag = variant_tag(value)?;
    all.iter().copied().find(|&variant| name(variant) == tag)
}

/// The name a unit variant is written with, whatever its type: one reader
/// for every enum, not one per enum.
fn variant_tag(value: &JsValue) -> Option<String> {
    if let Some(tag) = value.as_string() {
        return Some(tag);
    }
    if !value.is_object() {
        return None;
    }
    let entries = Object::entries(value.unchecked_ref());
    if entries.length() != 1 {
        return None;
    }
    let pair: Array = entries.get(0).unchecked_into();
    if !is_nullish(&pair.get(1)) {
        return None;
    }
    pair.get(0).as_string()
}

/// The elements of an array, or of another iterable (a `Set`).
fn elements(value: &JsValue) -> Option<Vec<JsValue>> {
    if Array::is_array(value) {
        return Some(value.unchecked_ref::<Array>().to_vec());
    }
    if !value.is_object() {
        return None;
    }
    iterated(value)
}

/// What iterating `value` yields, if it is iterable and every step succeeds
/// (`Array.from`, which the browser runs; a throwing iterator is a `None`).
fn iterated(value: &JsValue) -> Option<Vec<JsValue>> {
    if !is_iterable(value) {
        return None;
    }
    array_from(value).ok().map(|array| array.to_vec())
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `Array.from(value)`, with what it throws caught.
    #[wasm_bindgen(catch, js_namespace = Array, js_name = from)]
    fn array_from(value: &JsValue) -> Result<Array, JsValue>;
}

/// Whether `value` is iterable (`Symbol.iterator in value`).
fn is_iterable(value: &JsValue) -> bool {
    Reflect::has(value, &Symbol::iterator()).unwrap_or(false)
}

/// The largest whole number a JS number holds exactly: 2^53 − 1.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A plain JSON copy of a JS value (see the module docs for what is
/// accepted): what `JSON.parse` would give for the JSON the value means.
pub fn json(value: &JsValue) -> Result<JsValue, ReadError> {
    if is_nullish(value) {
        return Ok(JsValue::NULL);
    }
    if value.as_bool().is_some() || value.is_string() {
        return Ok(value.clone());
    }
    if value.is_bigint() {
        return read_i64(value)
            .filter(|n| n.unsigned_abs() as f64 <= MAX_SAFE_INTEGER)
            .map(|n| JsValue::from_f64(n as f64))
            .ok_or_else(|| {
                ReadError::new(
                    "",
                    "a BigInt within ±(2^53 − 1), which a JS number holds exactly",
                )
            });
    }
    if let Some(number) = value.as_f64() {
        return Ok(if number.is_finite() {
            value.clone()
        } else {
            JsValue::NULL
        });
    }
    if Array::is_array(value) {
        let array = value.unchecked_ref::<Array>();
        let copy = Array::new_with_length(array.length());
        for (at, item) in array.iter().enumerate() {
            copy.set(
                at as u32,
                json(&item).map_err(|err| err.within(&format!("[{at}]")))?,
            );
        }
        return Ok(copy.into());
    }
    let is_map = value.has_type::<Map>();
    if value.is_object() && !value.has_type::<ArrayBuffer>() && (is_map || !is_iterable(value)) {
        return object(value);
    }
    Err(ReadError::new("", "a JSON value"))
}

/// A plain-object copy of a plain object or a `Map` with string keys, each
/// value read by [`json`]. Built with `Object.fromEntries` from the
/// `[key, value]` pairs `Object.entries` (or the map) hands out, each pair
/// fresh and filled in place, so every key (`__proto__` too) is an own data
/// property, as `JSON.parse` makes it.
fn object(value: &JsValue) -> Result<JsValue, ReadError> {
    let pairs = if let Some(map) = value.dyn_ref::<Map>() {
        iterated(&map.entries()).ok_or_else(|| ReadError::new("", "an object"))?
    } else if value.is_object() && !is_iterable(value) {
        Object::entries(value.unchecked_ref()).to_vec()
    } else {
        return Err(ReadError::new("", "an object"));
    };
    for pair in &pairs {
        let pair: &Array = pair.unchecked_ref();
        let key = pair.get(0);
        if !key.is_string() {
            return Err(ReadError::new("", "an object with string keys"));
        }
        let read = json(&pair.get(1))
            .map_err(|err| err.within(&format!(".{}", key.as_string().unwrap_or_default())))?;
        pair.set(1, read);
    }
    Object::from_entries(&pairs.into_iter().collect::<Array>())
        .map(JsValue::from)
        .map_err(|_| ReadError::new("", "an object"))
}

impl FromJs for Item {
    fn from_js(value: &JsValue) -> Result<Item, ReadError> {
        let f = Fields::of(value, "item")?;
        Ok(Item {
            id: f.opt_u64("id")?,
            key: f.key("key")?,
            session_id: f.uuid("session_id")?,
            client_seq: f.u64("client_seq")?,
            command: f.command("command")?,
            occurred_at: f.time("occurred_at")?,
            queued_at: f.time("queued_at")?,
            body: f.json("body")?,
            state: f.state("state")?,
            reason: f.opt_string("reason")?,
            attempts: f.u32_or_zero("attempts")?,
            recorded_at: f.opt_time("recorded_at")?,
            replayed: f.flag("replayed")?,
            hop_ids: f.i64_list("hop_ids")?,
            updated_at: f.opt_time("updated_at")?,
            acknowledged: f.flag("acknowledged")?,
        })
    }
}

impl FromJs for Session {
    fn from_js(value: &JsValue) -> Result<Session, ReadError> {
        let f = Fields::of(value, "session")?;
        Ok(Session {
            session_id: f.uuid("session_id")?,
            operator_id: f.string("operator_id")?,
            mode: f.mode("mode")?,
            opened_at: f.time("opened_at")?,
            next_seq: f.u64("next_seq")?,
            closed: f.flag("closed")?,
        })
    }
}

impl FromJs for Backoff {
    fn from_js(value: &JsValue) -> Result<Backoff, ReadError> {
        let f = Fields::of(value, "backoff")?;
        Ok(Backoff {
            failures: f.u32("failures")?,
            next_attempt_at: f.opt_time("next_attempt_at")?,
        })
    }
}

impl FromJs for DeviceConfig {
    fn from_js(value: &JsValue) -> Result<DeviceConfig, ReadError> {
        let f = Fields::of(value, "device")?;
        Ok(DeviceConfig {
            site_url: f.string("site_url")?,
            device_token: f.string("device_token")?,
            device_id: f.string("device_id")?,
        })
    }
}

impl FromJs for OpenSessionBody {
    fn from_js(value: &JsValue) -> Result<OpenSessionBody, ReadError> {
        let f = Fields::of(value, "open_session")?;
        Ok(OpenSessionBody {
            operator_id: f.string("operator_id")?,
            mode: f.mode("mode")?,
            context: f.json_object("context")?,
        })
    }
}

impl<T: FromJs> FromJs for MetaRecord<T> {
    fn from_js(value: &JsValue) -> Result<MetaRecord<T>, ReadError> {
        let f = Fields::of(value, "meta")?;
        let name = f.string("name")?;
        let value = T::from_js(&f.get("value"))?;
        Ok(MetaRecord { name, value })
    }
}

impl FromJs for SyncResponse {
    fn from_js(value: &JsValue) -> Result<SyncResponse, ReadError> {
        let f = Fields::of(value, "response")?;
        Ok(SyncResponse {
            server_time: f.time("server_time")?,
            results: f.list("results")?,
        })
    }
}

impl FromJs for ItemResult {
    fn from_js(value: &JsValue) -> Result<ItemResult, ReadError> {
        let f = Fields::of(value, "result")?;
        Ok(ItemResult {
            key: f.key("key")?,
            client_seq: f.u64("client_seq")?,
            status: f.u16("status")?,
            outcome: f.optional("outcome", "an item outcome", |value| {
                read_variant(value, &ItemOutcome::ALL, |outcome| outcome.as_str())
            })?,
            reason: f.opt_string("reason")?,
            code: f.opt_string("code")?,
            message: f.opt_string("message")?,
            replayed: f.flag("replayed")?,
            recorded_at: f.opt_time("recorded_at")?,
            hop_ids: f.i64_list("hop_ids")?,
        })
    }
}

impl FromJs for ErrorBody {
    fn from_js(value: &JsValue) -> Result<ErrorBody, ReadError> {
        let f = Fields::of(value, "error")?;
        Ok(ErrorBody {
            code: f.string("code")?,
            message: f.string("message")?,
        })
    }
}
