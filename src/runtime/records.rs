//! What the runtime and its store exchange: the device's setup, a capture
//! group's writes, what storage holds for the drain, and how one capture
//! of a group becomes an item (the same on every store).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::backoff::Backoff;
use crate::key::IdempotencyKey;
use crate::queue::capture::capture_instant;
use crate::queue::{Capture, CaptureError, Item, Session};
use crate::reference::{set_unit_version, DeviceProfile, ReferenceMeta};
use crate::time::{Millis, UnixMs};
use crate::wire::OpenSessionBody;

use super::error::QueueError;

/// The device's setup, kept in storage so every wake-up can drain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceConfig {
    /// The site server's origin, e.g. `https://site.example:8443`.
    pub site_url: String,
    pub device_token: String,
    pub device_id: String,
    /// Days a `done` item stays on the device; absent is
    /// [`crate::queue::item::DONE_RETENTION`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_retention_days: Option<u32>,
}

impl DeviceConfig {
    /// How long a `done` item stays on this device.
    pub fn done_retention(&self) -> Millis {
        match self.done_retention_days {
            Some(days) => Millis::from_secs(u64::from(days) * 24 * 60 * 60),
            None => crate::queue::item::DONE_RETENTION,
        }
    }
}

/// One write a capture group carries.
#[derive(Debug, Clone, PartialEq)]
pub enum CaptureRequest {
    Open {
        session_id: Uuid,
        body: OpenSessionBody,
    },
    /// A scan or undo; `occurred_at` is the page's capture instant (Unix
    /// ms), checked against the writer's clock when it is written.
    Capture {
        session_id: Uuid,
        capture: Capture,
        occurred_at: Option<f64>,
    },
    Close {
        session_id: Uuid,
    },
}

impl CaptureRequest {
    pub fn session_id(&self) -> Uuid {
        match self {
            CaptureRequest::Open { session_id, .. }
            | CaptureRequest::Capture { session_id, .. }
            | CaptureRequest::Close { session_id } => *session_id,
        }
    }
}

/// What storage holds for the drain: sessions, pending items, backoff.
pub struct DrainSnapshot {
    pub sessions: Vec<Session>,
    pub pending: Vec<Item>,
    pub backoff: Backoff,
}

/// A capture group as written: each request's item (its queue id set) or
/// why it was refused, and every session the group touched as it is after
/// the group.
pub struct Written {
    pub results: Vec<Result<Item, QueueError>>,
    pub sessions: BTreeMap<Uuid, Session>,
}

/// Turns one request of a group into its item, against the sessions the
/// group has touched so far (`touched`, which it updates): a session not
/// in `touched` is unknown. `unit_version` is the cached version of the
/// unit the scan names without one, if the store has it. The item has no
/// queue id yet; the store gives it one as it adds it.
pub fn plan_capture(
    touched: &mut BTreeMap<Uuid, Session>,
    request: &CaptureRequest,
    key: IdempotencyKey,
    now: UnixMs,
    unit_version: Option<u64>,
) -> Result<Item, QueueError> {
    let session_id = request.session_id();
    match request {
        CaptureRequest::Open { body, .. } => {
            if touched.contains_key(&session_id) {
                return Err(CaptureError::SessionExists(session_id).into());
            }
            let (session, item) = Session::open(session_id, body.clone(), key, now);
            touched.insert(session_id, session);
            Ok(item)
        }
        CaptureRequest::Capture {
            capture,
            occurred_at,
            ..
        } => {
            let occurred_at = capture_instant(*occurred_at, now)
                .map_err(|why| QueueError::BadMessage(why.to_string()))?;
            let mut capture = capture.clone();
            if let Some(version) = unit_version {
                set_unit_version(&mut capture.body, version);
            }
            Ok(touched
                .get_mut(&session_id)
                .ok_or(CaptureError::UnknownSession(session_id))?
                .capture_at(capture, key, occurred_at, now)?)
        }
        CaptureRequest::Close { .. } => Ok(touched
            .get_mut(&session_id)
            .ok_or(CaptureError::UnknownSession(session_id))?
            .close(key, now)?),
    }
}

/// `reference_status`'s reply (and `reference_refresh`'s).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReferenceStatus {
    pub cursor: Option<String>,
    pub complete: bool,
    /// A pull is out or pages remain.
    pub loading: bool,
    /// When the cache last reached the site's end (Unix ms).
    pub refreshed_at: Option<i64>,
    pub age_ms: Option<i64>,
    pub units: u32,
    pub bins: u32,
    pub grns: u32,
    pub counts: u32,
    pub device: Option<DeviceProfile>,
    /// The site's operators by badge (`{badge: {badge, name, language?}}`, null
    /// before any), for names and badge checks offline.
    pub operators: serde_json::Value,
}

impl ReferenceStatus {
    pub fn new(meta: &ReferenceMeta, loading: bool, rows: [u32; 4], now: UnixMs) -> Self {
        let [units, bins, grns, counts] = rows;
        ReferenceStatus {
            cursor: meta.cursor.clone(),
            complete: meta.complete,
            loading,
            refreshed_at: meta.refreshed_at.map(|at| at.0),
            age_ms: meta.age_ms(now),
            units,
            bins,
            grns,
            counts,
            device: meta.device.clone(),
            operators: meta.operators.clone(),
        }
    }
}
