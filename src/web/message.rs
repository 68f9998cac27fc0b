//! The page ↔ worker protocol: what the page posts (with a
//! `MessageChannel` port for the reply) and what it hears back.
//!
//! Every request is `{type, ...}`; every reply is `{ok: true, ...}` or
//! `{ok: false, error: {code, message}}`. Both cross through serde
//! ([`super::convert`]): a bad message is refused with the field named
//! (`capture.session_id: invalid type: …`).

use serde::{Deserialize, Deserializer, Serialize};
use uuid::Uuid;
use wasm_bindgen::JsValue;

use crate::body::{Body, Context};
use crate::key::IdempotencyKey;
use crate::queue::{Item, ItemState};
use crate::reference::{ListKind, RowKind};
use crate::wire::{Command, Mode};

use super::convert::read_message;
use super::error::QueueError;
use super::store::DeviceConfig;

/// Items a `list` returns when the page does not say: one screenful.
pub const LIST_LIMIT_DEFAULT: u32 = 50;
/// The most a `list` returns at once, so a reply stays small.
pub const LIST_LIMIT_MAX: u32 = 500;
/// The most captures one `capture_many` carries: a few seconds of the
/// fastest sled's reads, and a message and its reply stay small.
pub const CAPTURE_MANY_MAX: usize = 1_000;

/// A page's request. On the wire it is `{type, ...fields}`. An absent (or
/// `undefined`) `Option` is `None`, `command` is `scan`, `body` is JSON
/// `null` and `context` is empty; every other field is required, and
/// unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageRequest {
    /// Device setup: where the site is and how this device signs in.
    Setup {
        site_url: String,
        device_token: String,
        device_id: String,
        /// Days a done item stays on the device (default 7).
        #[serde(default)]
        done_retention_days: Option<u32>,
    },
    /// The stored setup (without the token).
    Device {},
    OpenSession {
        #[serde(default)]
        session_id: Option<Uuid>,
        operator_id: String,
        mode: Mode,
        #[serde(default)]
        context: Context,
    },
    /// A scan (or an undo, with `command: "undo"`). `occurred_at` is the
    /// page's input-event instant (Unix ms); absent, the worker's clock.
    Capture {
        session_id: Uuid,
        #[serde(default = "scan", deserialize_with = "scan_unless_named")]
        command: Command,
        #[serde(default)]
        body: Body,
        #[serde(default)]
        occurred_at: Option<f64>,
    },
    /// A burst of scans in one message (an RFID sled's read); each is
    /// acknowledged only once its own transaction has completed.
    /// `occurred_at`, when given, holds one instant per body.
    CaptureMany {
        session_id: Uuid,
        #[serde(default = "scan", deserialize_with = "scan_unless_named")]
        command: Command,
        bodies: Vec<Body>,
        #[serde(default)]
        occurred_at: Option<Vec<f64>>,
    },
    CloseSession {
        session_id: Uuid,
    },
    List {
        #[serde(default)]
        after: Option<u64>,
        #[serde(default)]
        limit: Option<u32>,
    },
    Counts {},
    RetryNow {},
    /// A wake-up from the page (visible, online): drain on schedule.
    Wake {},
    Discard {
        id: u64,
    },
    /// A rejected item dealt with: `rescan_key` names the scan that
    /// replaced it, when the operator scanned again.
    Acknowledge {
        id: u64,
        #[serde(default)]
        rescan_key: Option<IdempotencyKey>,
    },
    Storage {},
    /// The reference cache: how far it has read, how old it is, its row
    /// counts and the device's profile.
    ReferenceStatus {},
    /// Pull the site's changes now, to the end; then as `reference_status`.
    ReferenceRefresh {},
    /// A unit by EPC, else by code (serial or barcode), from the cache.
    FindUnit {
        code: String,
    },
    /// One cached row of a kind by its key.
    ReferenceGet {
        kind: RowKind,
        id: String,
    },
    /// Every cached bin, GRN or count.
    ReferenceList {
        kind: ListKind,
    },
    /// Reads a unit live from the site and keeps it in the cache.
    RefreshUnit {
        epc: String,
    },
}

fn scan() -> Command {
    Command::Scan
}

/// A capture's command: `scan` when `undefined` or `null` too.
fn scan_unless_named<'de, D: Deserializer<'de>>(command: D) -> Result<Command, D::Error> {
    Ok(Option::<Command>::deserialize(command)?.unwrap_or(Command::Scan))
}

impl PageRequest {
    /// Reads a page's message as the variant its `type` names, so an
    /// error's path starts with the type: `capture.session_id: …`.
    pub fn read(data: &JsValue) -> Result<PageRequest, QueueError> {
        let kind = js_sys::Reflect::get(data, &"type".into())
            .ok()
            .and_then(|kind| kind.as_string())
            .ok_or_else(|| QueueError::BadMessage("a message needs a string `type`".into()))?;
        read_message(&kind, data).map_err(QueueError::BadMessage)
    }
}

/// What the page hears of a durably written item. Instants are Unix ms,
/// as the page sends them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Captured {
    pub id: Option<u64>,
    pub key: IdempotencyKey,
    pub session_id: Uuid,
    pub client_seq: u64,
    pub command: Command,
    /// The capture instant (the page's input event, or the worker's clock).
    pub occurred_at: i64,
    /// When its transaction was written.
    pub queued_at: i64,
    /// The body as written (a scan's `unit_version` filled from the cache).
    pub body: Body,
}

impl From<&Item> for Captured {
    fn from(item: &Item) -> Captured {
        Captured {
            id: item.id,
            key: item.key,
            session_id: item.session_id,
            client_seq: item.client_seq,
            command: item.command,
            occurred_at: item.occurred_at.0,
            queued_at: item.queued_at.0,
            body: item.body.clone(),
        }
    }
}

/// One row of the queue screen: what the page needs to show an item and to
/// offer Undo (within 120 s of `occurred_at`) and Re-scan (its `body`).
/// Instants are Unix ms.
#[derive(Debug, Clone, Serialize)]
pub struct ItemRow {
    pub id: Option<u64>,
    pub key: IdempotencyKey,
    pub session_id: Uuid,
    pub client_seq: u64,
    pub command: Command,
    pub occurred_at: i64,
    pub queued_at: i64,
    pub body: Body,
    pub state: ItemState,
    /// The site's rejection reason or the code of a blocking answer.
    pub reason: Option<String>,
    /// Why it waits: its own reason or the blocked item it is behind.
    pub why: Option<String>,
    pub attempts: u32,
    pub recorded_at: Option<i64>,
    pub replayed: bool,
    pub hop_ids: Vec<i64>,
    pub updated_at: Option<i64>,
    pub acknowledged: bool,
}

impl ItemRow {
    pub fn new(item: Item, why: Option<String>) -> ItemRow {
        ItemRow {
            id: item.id,
            key: item.key,
            session_id: item.session_id,
            client_seq: item.client_seq,
            command: item.command,
            occurred_at: item.occurred_at.0,
            queued_at: item.queued_at.0,
            body: item.body,
            state: item.state,
            reason: item.reason,
            why,
            attempts: item.attempts,
            recorded_at: item.recorded_at.map(|at| at.0),
            replayed: item.replayed,
            hop_ids: item.hop_ids,
            updated_at: item.updated_at.map(|at| at.0),
            acknowledged: item.acknowledged,
        }
    }
}

/// A failure the page shows: a stable code and a readable line.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum CapturedOrError {
    Captured(Captured),
    Error { error: ErrorReply },
}

/// The stored setup as the page sees it (never the token); the absent
/// fields are left out.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    pub configured: bool,
}

impl From<Option<&DeviceConfig>> for DeviceReply {
    fn from(device: Option<&DeviceConfig>) -> DeviceReply {
        DeviceReply {
            site_url: device.map(|d| d.site_url.clone()),
            device_id: device.map(|d| d.device_id.clone()),
            configured: device.is_some(),
        }
    }
}

/// The storage estimate in bytes; `null` for both where the browser has none.
#[derive(Debug, Clone, Serialize)]
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

pub use crate::runtime::ReferenceStatus;
