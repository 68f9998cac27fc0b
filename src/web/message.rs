//! The page ↔ worker protocol: what the page posts (with a
//! `MessageChannel` port for the reply) and what it hears back.
//!
//! Every request is `{type, ...}`; every reply is `{ok: true, ...}` or
//! `{ok: false, error: {code, message}}`.

use uuid::Uuid;
use wasm_bindgen::JsValue;

use crate::queue::Item;
use crate::time::UnixMs;
use crate::wire::{Command, Mode};

use super::body::{Body, Context};
use super::error::QueueError;
use super::js::{Fields, ReadError};
use super::store::DeviceConfig;
use super::write::{self, Record, ToJs};

/// Items a `list` returns when the page does not say: one screenful.
pub const LIST_LIMIT_DEFAULT: u32 = 50;
/// The most a `list` returns at once, so a reply stays small.
pub const LIST_LIMIT_MAX: u32 = 500;
/// The most captures one `capture_many` carries: a few seconds of the
/// fastest sled's reads, and a message and its reply stay small.
pub const CAPTURE_MANY_MAX: usize = 1_000;

/// A page's request. On the wire it is `{type, ...fields}`, read by
/// [`PageRequest::read`]. An absent `Option` is `None`, an absent
/// `command` is `scan`, an absent `body` is JSON `null` and an absent
/// `context` is empty; every other field is required.
#[derive(Debug, Clone, PartialEq)]
pub enum PageRequest {
    /// Device setup: where the site is and how this device signs in.
    Setup {
        site_url: String,
        device_token: String,
        device_id: String,
    },
    /// The stored setup (without the token).
    Device {},
    OpenSession {
        session_id: Option<Uuid>,
        operator_id: String,
        mode: Mode,
        context: Context,
    },
    /// A scan (or an undo, with `command: "undo"`).
    Capture {
        session_id: Uuid,
        command: Command,
        body: Body,
    },
    /// A burst of scans in one message (an RFID sled's read); each is
    /// acknowledged only once its own transaction has completed.
    CaptureMany {
        session_id: Uuid,
        command: Command,
        bodies: Vec<Body>,
    },
    CloseSession {
        session_id: Uuid,
    },
    List {
        after: Option<u64>,
        limit: Option<u32>,
    },
    Counts {},
    RetryNow {},
    /// A wake-up from the page (visible, online): drain on schedule.
    Wake {},
    Discard {
        id: u64,
    },
    Acknowledge {
        id: u64,
    },
    Storage {},
}

const EXPECTED_TYPE: &str = "one of setup, device, open_session, capture, capture_many, \
     close_session, list, counts, retry_now, wake, discard, acknowledge, storage";

impl PageRequest {
    /// Reads a page's message. A missing or ill-typed field is a
    /// [`BadMessage`](super::error::QueueErrorKind::BadMessage) error that names it (`capture.session_id:
    /// expected a UUID string`); unknown fields are ignored.
    pub fn read(data: &JsValue) -> Result<PageRequest, QueueError> {
        let kind = js_sys::Reflect::get(data, &"type".into())
            .ok()
            .and_then(|kind| kind.as_string())
            .ok_or_else(|| QueueError::bad_message("a message needs a string `type`"))?;
        PageRequest::read_fields(&kind, data)
            .map_err(|err| QueueError::bad_message(err.to_string()))
    }

    fn read_fields(kind: &str, data: &JsValue) -> Result<PageRequest, ReadError> {
        let f = Fields::of(data, kind)?;
        Ok(match kind {
            "setup" => PageRequest::Setup {
                site_url: f.string("site_url")?,
                device_token: f.string("device_token")?,
                device_id: f.string("device_id")?,
            },
            "device" => PageRequest::Device {},
            "open_session" => PageRequest::OpenSession {
                session_id: f.opt_uuid("session_id")?,
                operator_id: f.string("operator_id")?,
                mode: f.mode("mode")?,
                context: f.json_object("context")?,
            },
            "capture" => PageRequest::Capture {
                session_id: f.uuid("session_id")?,
                command: f.command_or_scan("command")?,
                body: f.json("body")?,
            },
            "capture_many" => PageRequest::CaptureMany {
                session_id: f.uuid("session_id")?,
                command: f.command_or_scan("command")?,
                bodies: f.json_list("bodies")?,
            },
            "close_session" => PageRequest::CloseSession {
                session_id: f.uuid("session_id")?,
            },
            "list" => PageRequest::List {
                after: f.opt_u64("after")?,
                limit: f.opt_u32("limit")?,
            },
            "counts" => PageRequest::Counts {},
            "retry_now" => PageRequest::RetryNow {},
            "wake" => PageRequest::Wake {},
            "discard" => PageRequest::Discard { id: f.u64("id")? },
            "acknowledge" => PageRequest::Acknowledge { id: f.u64("id")? },
            "storage" => PageRequest::Storage {},
            _ => return Err(ReadError::new("type", EXPECTED_TYPE)),
        })
    }
}

/// What the page hears of a durably written item.
#[derive(Debug, Clone)]
pub struct Captured {
    pub id: Option<u64>,
    pub key: String,
    pub session_id: Uuid,
    pub client_seq: u64,
    pub command: Command,
    pub queued_at: UnixMs,
}

impl From<&Item> for Captured {
    fn from(item: &Item) -> Captured {
        Captured {
            id: item.id,
            key: item.key.to_string(),
            session_id: item.session_id,
            client_seq: item.client_seq,
            command: item.command,
            queued_at: item.queued_at,
        }
    }
}

/// One row of the queue screen: the item's fields and `why`.
#[derive(Debug, Clone)]
pub struct ItemRow {
    pub item: Item,
    /// Why it waits: its own reason or the blocked item it is behind.
    pub why: Option<String>,
}

impl ToJs for ItemRow {
    /// The row as the page reads it: the stored item's object with `why`
    /// added (a data property of a fresh plain object: the set cannot fail).
    fn to_js(&self) -> JsValue {
        let row = write::item(&self.item);
        let _ = js_sys::Reflect::set(&row, &"why".into(), &self.why.to_js());
        row
    }
}

/// A failure the page shows: a stable code and a readable line.
#[derive(Debug, Clone)]
pub struct ErrorReply {
    pub code: &'static str,
    pub message: String,
}

impl From<&QueueError> for ErrorReply {
    fn from(err: &QueueError) -> ErrorReply {
        ErrorReply {
            code: err.code(),
            message: err.to_string(),
        }
    }
}

/// One capture of a `capture_many`: acknowledged, or why not (as
/// `{error: {code, message}}`).
#[derive(Debug, Clone)]
pub enum CapturedOrError {
    Captured(Captured),
    Error { error: ErrorReply },
}

/// The stored setup as the page sees it (never the token); the absent
/// fields are left out.
#[derive(Debug, Clone)]
pub struct DeviceReply {
    pub site_url: Option<String>,
    pub device_id: Option<String>,
    pub configured: bool,
}

impl From<Option<&DeviceConfig>> for DeviceReply {
    fn from(device: Option<&DeviceConfig>) -> DeviceReply {
        match device {
            Some(device) => DeviceReply {
                site_url: Some(device.site_url.clone()),
                device_id: Some(device.device_id.clone()),
                configured: true,
            },
            None => DeviceReply {
                site_url: None,
                device_id: None,
                configured: false,
            },
        }
    }
}

/// The storage estimate in bytes; `null` for both where the browser has none.
#[derive(Debug, Clone)]
pub struct StorageReply {
    pub usage: Option<f64>,
    pub quota: Option<f64>,
}

impl From<Option<(f64, f64)>> for StorageReply {
    fn from(estimate: Option<(f64, f64)>) -> StorageReply {
        StorageReply {
            usage: estimate.map(|(usage, _)| usage),
            quota: estimate.map(|(_, quota)| quota),
        }
    }
}

impl ToJs for Captured {
    fn to_js(&self) -> JsValue {
        Record::new()
            .set("id", &self.id)
            .set("key", &self.key)
            .set("session_id", &self.session_id)
            .set("client_seq", &self.client_seq)
            .set("command", &self.command.as_str())
            .set("queued_at", &self.queued_at)
            .build()
    }
}

impl ToJs for ErrorReply {
    fn to_js(&self) -> JsValue {
        Record::new()
            .set("code", &self.code)
            .set("message", &self.message)
            .build()
    }
}

impl ToJs for CapturedOrError {
    fn to_js(&self) -> JsValue {
        match self {
            CapturedOrError::Captured(captured) => captured.to_js(),
            CapturedOrError::Error { error } => Record::new().set("error", error).build(),
        }
    }
}

impl ToJs for DeviceReply {
    fn to_js(&self) -> JsValue {
        Record::new()
            .set_some("site_url", &self.site_url)
            .set_some("device_id", &self.device_id)
            .set("configured", &self.configured)
            .build()
    }
}

impl ToJs for StorageReply {
    fn to_js(&self) -> JsValue {
        Record::new()
            .set("usage", &self.usage)
            .set("quota", &self.quota)
            .build()
    }
}
