//! The page ↔ worker protocol: what the page posts (with a
//! `MessageChannel` port for the reply) and what it hears back.
//!
//! Every request is `{type, ...}`; every reply is `{ok: true, ...}` or
//! `{ok: false, error: {code, message}}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::queue::Item;
use crate::time::UnixMs;
use crate::wire::{Command, Mode};

use super::error::QueueError;
use super::store::DeviceConfig;

/// Items a `list` returns when the page does not say: one screenful.
pub const LIST_LIMIT_DEFAULT: u32 = 50;
/// The most a `list` returns at once, so a reply stays small.
pub const LIST_LIMIT_MAX: u32 = 500;
/// The most captures one `capture_many` carries: a few seconds of the
/// fastest sled's reads, and a message and its reply stay small.
pub const CAPTURE_MANY_MAX: usize = 1_000;

/// A page's request. On the wire it is `{type, ...fields}`; the worker
/// reads it as `{type: {...fields}}` (externally tagged), which serde reads
/// in one pass, where an internally tagged enum would buffer every message
/// and cost the module tens of kilobytes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
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
        #[serde(default)]
        session_id: Option<Uuid>,
        operator_id: String,
        mode: Mode,
        #[serde(default)]
        context: BTreeMap<String, serde_json::Value>,
    },
    /// A scan (or an undo, with `command: "undo"`).
    Capture {
        session_id: Uuid,
        #[serde(default = "scan")]
        command: Command,
        #[serde(default)]
        body: serde_json::Value,
    },
    /// A burst of scans in one message (an RFID sled's read); each is
    /// acknowledged only once its own transaction has completed.
    CaptureMany {
        session_id: Uuid,
        #[serde(default = "scan")]
        command: Command,
        bodies: Vec<serde_json::Value>,
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
    Acknowledge {
        id: u64,
    },
    Storage {},
}

fn scan() -> Command {
    Command::Scan
}

/// What the page hears of a durably written item.
#[derive(Debug, Clone, Serialize)]
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

/// One row of the queue screen.
#[derive(Debug, Clone, Serialize)]
pub struct ItemRow {
    #[serde(flatten)]
    pub item: Item,
    /// Why it waits: its own reason or the blocked item it is behind.
    pub why: Option<String>,
}

/// A failure the page shows: a stable code and a readable line.
#[derive(Debug, Clone, Serialize)]
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

/// One capture of a `capture_many`: acknowledged, or why not.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum CapturedOrError {
    Captured(Captured),
    Error { error: ErrorReply },
}

/// The stored setup as the page sees it (never the token).
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    pub configured: bool,
}

impl From<Option<DeviceConfig>> for DeviceReply {
    fn from(device: Option<DeviceConfig>) -> DeviceReply {
        match device {
            Some(device) => DeviceReply {
                site_url: Some(device.site_url),
                device_id: Some(device.device_id),
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
