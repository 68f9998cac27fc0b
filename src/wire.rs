//! The sync protocol's wire types (docs/design.md §4), shared by the handheld
//! module and the site server so both read and write the same JSON.
//!
//! An item's `body` stays a JSON value here ([`crate::body::Body`]): the
//! server hashes the item's canonical JSON as sent, and reads the typed
//! bodies ([`OpenSessionBody`], [`ScanBody`], …) from it with
//! [`SyncItem::body_as`].

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::body::{Body, Context};
use crate::key::IdempotencyKey;
use crate::time::UnixMs;

/// Items in one `POST /v1/sync`: small enough that one request commits in
/// one short transaction, large enough to drain a backlog quickly.
pub const MAX_ITEMS_PER_REQUEST: usize = 50;
/// A sync request body: 50 items of a few hundred bytes fit many times over;
/// anything larger is refused with 413 before it is parsed.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// The path of the sync endpoint.
pub const SYNC_PATH: &str = "/v1/sync";

/// Error codes carried by per-item results and request-level errors.
pub mod codes {
    pub const IDEMPOTENCY_KEY_REUSED: &str = "IDEMPOTENCY_KEY_REUSED";
    pub const OPERATION_IN_PROGRESS: &str = "OPERATION_IN_PROGRESS";
    pub const SEQ_ALREADY_USED: &str = "SEQ_ALREADY_USED";
    pub const SESSION_CONFLICT: &str = "SESSION_CONFLICT";
    pub const SESSION_NOT_YOURS: &str = "SESSION_NOT_YOURS";
    pub const INVALID_ITEM: &str = "INVALID_ITEM";
    pub const DEVICE_AWAITING_APPROVAL: &str = "DEVICE_AWAITING_APPROVAL";
    pub const MALFORMED_REQUEST: &str = "MALFORMED_REQUEST";
    pub const TOO_MANY_ITEMS: &str = "TOO_MANY_ITEMS";
    pub const UNAUTHORIZED: &str = "UNAUTHORIZED";
    pub const BODY_TOO_LARGE: &str = "BODY_TOO_LARGE";
    pub const OVERLOADED: &str = "OVERLOADED";
    /// A claimed key whose stored answer cannot be read: answered 409 so
    /// the item is blocked and shown to a person, not resent forever (the
    /// ledger fails closed and never runs the key again).
    pub const IDEMPOTENCY_RECEIPT_UNAVAILABLE: &str = "IDEMPOTENCY_RECEIPT_UNAVAILABLE";
}

/// `POST /v1/sync` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SyncRequest {
    pub device_id: String,
    /// The device clock when the request left; the server derives
    /// `device_clock_skew_ms` from it.
    pub sent_at: UnixMs,
    pub items: Vec<SyncItem>,
}

/// One queued item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SyncItem {
    pub key: IdempotencyKey,
    pub session_id: Uuid,
    /// 1-based, contiguous within the session.
    pub client_seq: u64,
    pub command: Command,
    /// Capture clock (device).
    pub occurred_at: UnixMs,
    /// Queue-write clock (device).
    pub queued_at: UnixMs,
    /// The command's own fields: `OpenSessionBody`, `ScanBody`,
    /// `UndoBody`, `VoidBody` or `AcknowledgeBody`; `{}` to close a session.
    #[serde(default)]
    pub body: Body,
}

impl SyncItem {
    /// Reads the body as the typed body of its command.
    pub fn body_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.body)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Command {
    OpenSession,
    Scan,
    Undo,
    Void,
    CloseSession,
    /// The operator has dealt with a rejected item on the handheld
    /// (`body.target_key`): the site settles the decision it waits as.
    Acknowledge,
}

impl Command {
    pub const ALL: [Command; 6] = [
        Command::OpenSession,
        Command::Scan,
        Command::Undo,
        Command::Void,
        Command::CloseSession,
        Command::Acknowledge,
    ];

    /// The wire name (serde's).
    pub fn as_str(self) -> &'static str {
        match self {
            Command::OpenSession => "open_session",
            Command::Scan => "scan",
            Command::Undo => "undo",
            Command::Void => "void",
            Command::CloseSession => "close_session",
            Command::Acknowledge => "acknowledge",
        }
    }
}

/// The five capture modes (docs/design.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Mode {
    CycleCount,
    Receive,
    DispatchVerify,
    PutAway,
    FindUnit,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::CycleCount,
        Mode::Receive,
        Mode::DispatchVerify,
        Mode::PutAway,
        Mode::FindUnit,
    ];

    /// The wire name (serde's).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::CycleCount => "cycle_count",
            Mode::Receive => "receive",
            Mode::DispatchVerify => "dispatch_verify",
            Mode::PutAway => "put_away",
            Mode::FindUnit => "find_unit",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OpenSessionBody {
    pub operator_id: String,
    pub mode: Mode,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub context: Context,
}

/// The facts of a scan: what was read, where. The server computes every
/// quantity and variance from these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScanBody {
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The unit's version as the device last saw it; a mismatch is `stale_state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_version: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bin: Option<String>,
    /// A receive of a GS1 unit label: its GTIN (14 digits), which names
    /// the unit's SKU, and the lot and expiry (`YYYY-MM-DD`) the site
    /// records on the unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gtin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<String>,
    /// A dispatch verify of a pallet's label: its SSCC (18 digits), in
    /// place of a tag's `epc`; every unit of the pallet on the manifest is
    /// verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sscc: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UndoBody {
    pub target_key: IdempotencyKey,
}

/// An `acknowledge` item's body: the rejected item the operator dealt
/// with, and the scan that replaced it when the operator scanned again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AcknowledgeBody {
    pub target_key: IdempotencyKey,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rescan_key: Option<IdempotencyKey>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VoidBody {
    pub void_seq: u64,
}

/// `POST /v1/sync` answer: one result per item, in request order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SyncResponse {
    pub server_time: UnixMs,
    pub results: Vec<ItemResult>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ItemOutcome {
    Applied,
    Rejected,
    Simulated,
    Buffered,
}

impl ItemOutcome {
    pub const ALL: [ItemOutcome; 4] = [
        ItemOutcome::Applied,
        ItemOutcome::Rejected,
        ItemOutcome::Simulated,
        ItemOutcome::Buffered,
    ];

    /// The wire name (serde's).
    pub fn as_str(self) -> &'static str {
        match self {
            ItemOutcome::Applied => "applied",
            ItemOutcome::Rejected => "rejected",
            ItemOutcome::Simulated => "simulated",
            ItemOutcome::Buffered => "buffered",
        }
    }
}

/// One item's result: what a request for that item alone would have answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ItemResult {
    pub key: IdempotencyKey,
    pub client_seq: u64,
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ItemOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default)]
    pub replayed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<UnixMs>,
    #[serde(default)]
    pub hop_ids: Vec<i64>,
}

/// A failure of a request as a whole: `{"code","message"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}

/// `POST /v1/devices/{device_id}/heartbeat` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Heartbeat {
    pub sent_at: UnixMs,
    pub queue_depth: u64,
    #[serde(default)]
    pub oldest_queued_at: Option<UnixMs>,
    pub app_version: String,
}

/// One row of `GET /v1/sessions/{session_id}/hops`, in applied order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HopView {
    pub hop_id: i64,
    pub key: IdempotencyKey,
    pub client_seq: u64,
    pub command: Command,
    #[serde(default)]
    pub mode: Option<Mode>,
    pub facts: serde_json::Value,
    pub occurred_at: UnixMs,
    pub recorded_at: UnixMs,
    pub device_clock_skew_ms: i64,
    pub source_mode: String,
    #[serde(default)]
    pub compensates: Option<i64>,
    /// The hop's kind (`ZONE_CHANGE`, `UNDO`, …).
    #[serde(default)]
    pub kind: Option<String>,
    /// When the hop is booked: its `occurred_at`, or the start of the open
    /// period when it was captured inside a closed one.
    #[serde(default)]
    pub booked_at: Option<UnixMs>,
}

/// `GET /v1/sessions/{session_id}/hops` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionHops {
    pub session_id: Uuid,
    pub hops: Vec<HopView>,
}

/// `POST /v1/devices/{device_id}/heartbeat` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HeartbeatAck {
    pub server_time: UnixMs,
    /// The device's heartbeat period by its profile, in ms: the device
    /// beats at least this often. Absent from older sites, where the
    /// device keeps its default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_period_ms: Option<u64>,
    /// Whether the device is commissioned (its items post for real), as on
    /// every reference page: a device commissioned from the site's view
    /// learns it at its next beat too. Absent from older sites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commissioned: Option<bool>,
    /// The site's time zone (IANA name): the times the handheld shows are
    /// on the site's clock. Absent from older sites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// The sessions of this device the site closed (Close session in the
    /// site's view, `device close-session`) in the last day, newest
    /// first: a handheld that still has one of them open ends it, with
    /// words. Absent from older sites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_sessions: Option<Vec<ClosedSession>>,
}

/// A session the site closed, as [`HeartbeatAck::closed_sessions`] tells
/// its device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClosedSession {
    pub session_id: String,
    /// When the site closed it (the site's clock).
    pub closed_at: UnixMs,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/design.md §4's request, with its elided values filled in.
    const REQUEST: &str = r#"{"device_id":"HH-0042","sent_at":"2026-11-29T10:15:02.120Z","items":[
 {"key":"8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab","session_id":"5f1e2d3c-4b5a-4697-8877-665544332211","client_seq":1,"command":"open_session",
  "occurred_at":"2026-11-29T09:01:00.000Z","queued_at":"2026-11-29T09:01:00.004Z",
  "body":{"operator_id":"op-17","mode":"put_away","context":{}}},
 {"key":"c41d0f6e-2a3b-4c5d-8e9f-a0b1c2d3e4f5","session_id":"5f1e2d3c-4b5a-4697-8877-665544332211","client_seq":2,"command":"scan",
  "occurred_at":"2026-11-29T09:01:07.250Z","queued_at":"2026-11-29T09:01:07.253Z",
  "body":{"mode":"put_away","epc":"E2806894000040017790E471","unit_version":3,"bin":"B-12-03"}}]}"#;

    /// docs/design.md §4's answer, with its elided values filled in.
    const RESPONSE: &str = r#"{"server_time":"2026-11-29T10:15:02.480Z","results":[
 {"key":"8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab","client_seq":1,"status":200,"outcome":"applied","replayed":false,
  "recorded_at":"2026-11-29T10:15:02.401Z","hop_ids":[]},
 {"key":"c41d0f6e-2a3b-4c5d-8e9f-a0b1c2d3e4f5","client_seq":2,"status":200,"outcome":"rejected","reason":"stale_state",
  "replayed":false,"recorded_at":"2026-11-29T10:15:02.402Z","hop_ids":[]}]}"#;

    fn round_trip<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
        json: &str,
    ) -> T {
        let parsed: T = serde_json::from_str(json).unwrap();
        let again: T = serde_json::from_str(&serde_json::to_string(&parsed).unwrap()).unwrap();
        assert_eq!(parsed, again);
        let original: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), original);
        parsed
    }

    #[test]
    fn each_variant_is_named_as_serde_names_it() {
        fn check<T: Serialize>(all: &[T], name: impl Fn(&T) -> &'static str) {
            for variant in all {
                assert_eq!(serde_json::to_value(variant).unwrap(), name(variant));
            }
        }
        check(&Command::ALL, |c| c.as_str());
        check(&Mode::ALL, |m| m.as_str());
        check(&ItemOutcome::ALL, |o| o.as_str());
    }

    #[test]
    fn design_request_round_trips() {
        let request: SyncRequest = round_trip(REQUEST);
        assert_eq!(request.items.len(), 2);
        assert_eq!(request.items[0].command, Command::OpenSession);
        let open: OpenSessionBody = request.items[0].body_as().unwrap();
        assert_eq!(open.mode, Mode::PutAway);
        let scan: ScanBody = request.items[1].body_as().unwrap();
        assert_eq!(scan.unit_version, Some(3));
        assert_eq!(scan.bin.as_deref(), Some("B-12-03"));
    }

    #[test]
    fn design_response_round_trips() {
        let response: SyncResponse = round_trip(RESPONSE);
        assert_eq!(response.results[1].outcome, Some(ItemOutcome::Rejected));
        assert_eq!(response.results[1].reason.as_deref(), Some("stale_state"));
    }

    #[test]
    fn error_results_carry_a_code() {
        let json = r#"{"key":"8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab","client_seq":3,"status":409,"code":"OPERATION_IN_PROGRESS","replayed":false,"hop_ids":[]}"#;
        let result: ItemResult = round_trip(json);
        assert_eq!(result.code.as_deref(), Some(codes::OPERATION_IN_PROGRESS));
    }

    #[test]
    fn a_bad_key_or_timestamp_is_refused() {
        let bad_key = REQUEST.replace("8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab", "8a0c");
        assert!(serde_json::from_str::<SyncRequest>(&bad_key).is_err());
        let bad_time = REQUEST.replace("2026-11-29T10:15:02.120Z", "yesterday");
        assert!(serde_json::from_str::<SyncRequest>(&bad_time).is_err());
    }
}
