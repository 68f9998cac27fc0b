//! The page ↔ worker protocol: what the page posts (with a
//! `MessageChannel` port for the reply) and what it hears back.
//!
//! Every request is `{type, ...}`; every reply is `{ok: true, ...}` or
//! `{ok: false, error: {code, message}}`. Both cross through serde
//! ([`super::convert`]): a bad message is refused with the field named
//! (`capture.session_id: invalid type: …`).

use serde::Serialize;
use uuid::Uuid;
use wasm_bindgen::JsValue;

use crate::body::{Body, Context};
use crate::key::IdempotencyKey;
use crate::queue::{Item, ItemState};
use crate::reference::{ListKind, RowKind};
use crate::wire::{Command, Mode};

use super::convert::{unknown_kind, Fields};
use super::error::QueueError;
use super::store::DeviceConfig;
use super::transport::SiteWord;

/// Items a `list` returns when the page does not say: one screenful.
pub const LIST_LIMIT_DEFAULT: u32 = 50;
/// The most a `list` returns at once, so a reply stays small.
pub const LIST_LIMIT_MAX: u32 = 500;
/// The most captures one `capture_many` carries: a few seconds of the
/// fastest sled's reads, and a message and its reply stay small.
pub const CAPTURE_MANY_MAX: usize = 1_000;

/// A page's request. On the wire it is `{type, ...fields}`, `type` the
/// variant's name in snake case. An absent (or `undefined`) `Option` is
/// `None`, as is a `null` one; an absent `command` (or `null`) is `scan`,
/// `body` JSON `null` and `context` empty; every other field is required,
/// and unknown fields are ignored.
#[derive(Debug, Clone, PartialEq)]
pub enum PageRequest {
    /// Device setup: where the site is and how this device signs in.
    Setup {
        site_url: String,
        device_token: String,
        device_id: String,
        /// Days a done item stays on the device (default 7).
        done_retention_days: Option<u32>,
    },
    /// The stored setup (without the token), and what the site last said
    /// of this device: its token refused, the sessions it closed.
    Device {},
    OpenSession {
        session_id: Option<Uuid>,
        operator_id: String,
        mode: Mode,
        context: Context,
    },
    /// A scan (or an undo, with `command: "undo"`). `occurred_at` is the
    /// page's input-event instant (Unix ms); absent, the worker's clock.
    Capture {
        session_id: Uuid,
        command: Command,
        body: Body,
        occurred_at: Option<f64>,
    },
    /// A burst of scans in one message (an RFID sled's read); each is
    /// acknowledged only once its own transaction has completed.
    /// `occurred_at`, when given, holds one instant per body.
    CaptureMany {
        session_id: Uuid,
        command: Command,
        bodies: Vec<Body>,
        occurred_at: Option<Vec<f64>>,
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
    /// A wake-up from the page (visible): drain on schedule.
    Wake {},
    Discard {
        id: u64,
    },
    /// A rejected item dealt with: `rescan_key` names the scan that
    /// replaced it, when the operator scanned again.
    Acknowledge {
        id: u64,
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
    /// Reads a scan as a label (GS1 element string, Digital Link, EPC or
    /// plain text) and what it names in the cache.
    ReadLabel {
        text: String,
    },
    /// The queue screen's Export: every item the site has not acknowledged
    /// as one signed rescue file (`super::export`); changes nothing.
    ExportQueue {},
}

/// The requests' types as a page names them, in the order a refusal of
/// an unknown one lists them.
const KINDS: &[&str] = &[
    "setup",
    "device",
    "open_session",
    "capture",
    "capture_many",
    "close_session",
    "list",
    "counts",
    "retry_now",
    "wake",
    "discard",
    "acknowledge",
    "storage",
    "reference_status",
    "reference_refresh",
    "find_unit",
    "reference_get",
    "reference_list",
    "refresh_unit",
    "read_label",
    "export_queue",
];

impl PageRequest {
    /// Reads a page's message as the request its `type` names, so an
    /// error's path starts with the type: `capture.session_id: …`.
    pub fn read(data: &JsValue) -> Result<PageRequest, QueueError> {
        let kind = js_sys::Reflect::get(data, &"type".into())
            .ok()
            .and_then(|kind| kind.as_string())
            .ok_or_else(|| QueueError::BadMessage("a message needs a string `type`".into()))?;
        PageRequest::read_fields(&kind, &Fields::of(&kind, data)).map_err(QueueError::BadMessage)
    }

    /// The request of type `kind`: each field it lists read in that order,
    /// then the required ones checked (see [`Fields`]).
    fn read_fields(kind: &str, fields: &Fields<'_>) -> Result<PageRequest, String> {
        let request = match kind {
            "setup" => {
                let site_url = fields.get("site_url")?;
                let device_token = fields.get("device_token")?;
                let device_id = fields.get("device_id")?;
                let done_retention_days = fields.optional("done_retention_days")?;
                PageRequest::Setup {
                    site_url: fields.required(site_url, "site_url")?,
                    device_token: fields.required(device_token, "device_token")?,
                    device_id: fields.required(device_id, "device_id")?,
                    done_retention_days,
                }
            }
            "device" => PageRequest::Device {},
            "open_session" => {
                let session_id = fields.optional("session_id")?;
                let operator_id = fields.get("operator_id")?;
                let mode = fields.get("mode")?;
                let context = fields.get("context")?;
                PageRequest::OpenSession {
                    session_id,
                    operator_id: fields.required(operator_id, "operator_id")?,
                    mode: fields.required(mode, "mode")?,
                    context: context.unwrap_or_default(),
                }
            }
            "capture" => {
                let session_id = fields.get("session_id")?;
                let command = fields.optional("command")?;
                let body = fields.get("body")?;
                let occurred_at = fields.optional("occurred_at")?;
                PageRequest::Capture {
                    session_id: fields.required(session_id, "session_id")?,
                    command: command.unwrap_or(Command::Scan),
                    body: body.unwrap_or_default(),
                    occurred_at,
                }
            }
            "capture_many" => {
                let session_id = fields.get("session_id")?;
                let command = fields.optional("command")?;
                let bodies = fields.get("bodies")?;
                let occurred_at = fields.optional("occurred_at")?;
                PageRequest::CaptureMany {
                    session_id: fields.required(session_id, "session_id")?,
                    command: command.unwrap_or(Command::Scan),
                    bodies: fields.required(bodies, "bodies")?,
                    occurred_at,
                }
            }
            "close_session" => {
                let session_id = fields.get("session_id")?;
                PageRequest::CloseSession {
                    session_id: fields.required(session_id, "session_id")?,
                }
            }
            "list" => PageRequest::List {
                after: fields.optional("after")?,
                limit: fields.optional("limit")?,
            },
            "counts" => PageRequest::Counts {},
            "retry_now" => PageRequest::RetryNow {},
            "wake" => PageRequest::Wake {},
            "discard" => {
                let id = fields.get("id")?;
                PageRequest::Discard {
                    id: fields.required(id, "id")?,
                }
            }
            "acknowledge" => {
                let id = fields.get("id")?;
                let rescan_key = fields.optional("rescan_key")?;
                PageRequest::Acknowledge {
                    id: fields.required(id, "id")?,
                    rescan_key,
                }
            }
            "storage" => PageRequest::Storage {},
            "reference_status" => PageRequest::ReferenceStatus {},
            "reference_refresh" => PageRequest::ReferenceRefresh {},
            "find_unit" => {
                let code = fields.get("code")?;
                PageRequest::FindUnit {
                    code: fields.required(code, "code")?,
                }
            }
            "reference_get" => {
                let row_kind = fields.get("kind")?;
                let id = fields.get("id")?;
                PageRequest::ReferenceGet {
                    kind: fields.required(row_kind, "kind")?,
                    id: fields.required(id, "id")?,
                }
            }
            "reference_list" => {
                let list_kind = fields.get("kind")?;
                PageRequest::ReferenceList {
                    kind: fields.required(list_kind, "kind")?,
                }
            }
            "refresh_unit" => {
                let epc = fields.get("epc")?;
                PageRequest::RefreshUnit {
                    epc: fields.required(epc, "epc")?,
                }
            }
            "read_label" => {
                let text = fields.get("text")?;
                PageRequest::ReadLabel {
                    text: fields.required(text, "text")?,
                }
            }
            "export_queue" => PageRequest::ExportQueue {},
            other => return Err(unknown_kind(other, KINDS)),
        };
        Ok(request)
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

/// The stored setup as the page sees it (never the token), the absent
/// fields left out, and what the site last said of the device: `refused`,
/// its token refused (401) on the last answer; `closed_sessions`, the
/// sessions of this device it closed as its last heartbeat answer listed
/// them (`[{session_id, closed_at}]`, or absent).
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    pub configured: bool,
    pub refused: bool,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    pub closed_sessions: JsValue,
}

impl DeviceReply {
    pub fn new(device: Option<&DeviceConfig>, word: &SiteWord) -> DeviceReply {
        DeviceReply {
            site_url: device.map(|d| d.site_url.clone()),
            device_id: device.map(|d| d.device_id.clone()),
            configured: device.is_some(),
            refused: word.refused(),
            closed_sessions: word.closed_sessions(),
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
