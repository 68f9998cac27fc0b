//! The contract between the terminal listener's forwarder and the ledger:
//! batches of terminal records, each with the idempotency key the listener
//! minted when it wrote the record, and the terminals' last-seen times.
//!
//! In-process the forwarder hands a [`TerminalBatch`] to the ledger
//! directly; to a remote ledger it POSTs the same JSON to
//! [`TERMINAL_EVENTS_PATH`], signed with HMAC-SHA256 over
//! `"<timestamp>.<body>"` with a shared secret ([`SIGNATURE_HEADER`],
//! [`TIMESTAMP_HEADER`]).

use serde::{Deserialize, Serialize};
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;

/// Where a remote ledger takes terminal batches.
pub const TERMINAL_EVENTS_PATH: &str = "/v1/terminal/events";
/// `sha256=<lower-case hex of HMAC-SHA256(secret, "<timestamp>.<body>")>`.
pub const SIGNATURE_HEADER: &str = "x-stockhop-signature";
/// The signer's clock, Unix seconds; the ledger refuses signatures older
/// than [`SIGNATURE_MAX_AGE_SECS`] so a captured request cannot be replayed
/// later with another meaning (replays of the same body are idempotent anyway).
pub const TIMESTAMP_HEADER: &str = "x-stockhop-timestamp";
/// Five minutes: covers clock drift between two site machines on NTP.
pub const SIGNATURE_MAX_AGE_SECS: i64 = 300;
/// Records in one forwarded batch.
pub const MAX_RECORDS_PER_BATCH: usize = 50;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TerminalBatch {
    pub records: Vec<TerminalRecord>,
    #[serde(default)]
    pub heartbeats: Vec<TerminalHeartbeat>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TerminalRecord {
    /// Minted by the listener when it wrote the record to its queue.
    pub key: IdempotencyKey,
    pub source: TerminalSource,
    /// The terminal's serial number (iclock `SN`, reader id, framed `device`).
    pub device_serial: String,
    pub kind: TerminalEventKind,
    /// Who or what was read: an iclock PIN, an EPC, a barcode.
    pub subject: String,
    /// Capture clock: the terminal's reading time, converted to UTC.
    pub occurred_at: UnixMs,
    /// Queue-write clock: when the listener's write hit disk.
    pub queued_at: UnixMs,
    pub rule_outcome: RuleOutcome,
    /// The record as received (an ATTLOG line, a JSON object), for audit.
    pub raw: String,
    /// A duplicate's place among the repeats of the accepted record it
    /// repeats, when the listener still holds that record: the ledger
    /// folds it into that record instead of keeping it as one of its own.
    /// Absent on every other record (and from listeners that do not fold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Repeat>,
}

/// Which accepted record a duplicate repeats, and how many repeats of it
/// the listener had taken with this one: an absolute count, so a resent
/// batch or one arriving late folds in without counting anything twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Repeat {
    /// The accepted record's key.
    pub of: IdempotencyKey,
    /// 1 for its first repeat, 2 for the second, ...
    pub number: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TerminalSource {
    Iclock,
    Zebra,
    Framed,
}

impl TerminalSource {
    /// The snake_case name, as on the wire and in both databases.
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalSource::Iclock => "iclock",
            TerminalSource::Zebra => "zebra",
            TerminalSource::Framed => "framed",
        }
    }

    /// The reverse of [`TerminalSource::as_str`].
    pub fn parse(text: &str) -> Option<TerminalSource> {
        match text {
            "iclock" => Some(TerminalSource::Iclock),
            "zebra" => Some(TerminalSource::Zebra),
            "framed" => Some(TerminalSource::Framed),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TerminalEventKind {
    /// A person at an attendance terminal (iclock ATTLOG, framed `person`).
    Attendance,
    /// An RFID tag read at a gate (Zebra, framed `epc`).
    TagRead,
    /// A barcode read (framed `code`).
    CodeRead,
}

impl TerminalEventKind {
    /// The snake_case name, as on the wire and in both databases.
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalEventKind::Attendance => "attendance",
            TerminalEventKind::TagRead => "tag_read",
            TerminalEventKind::CodeRead => "code_read",
        }
    }

    /// The reverse of [`TerminalEventKind::as_str`].
    pub fn parse(text: &str) -> Option<TerminalEventKind> {
        match text {
            "attendance" => Some(TerminalEventKind::Attendance),
            "tag_read" => Some(TerminalEventKind::TagRead),
            "code_read" => Some(TerminalEventKind::CodeRead),
            _ => None,
        }
    }
}

/// The listener's time rules' verdict (docs/design.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleOutcome {
    Accepted,
    Stale,
    ClockSkew,
    RateLimited,
    Duplicate,
}

impl RuleOutcome {
    /// The snake_case name, as on the wire and in both databases.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleOutcome::Accepted => "accepted",
            RuleOutcome::Stale => "stale",
            RuleOutcome::ClockSkew => "clock_skew",
            RuleOutcome::RateLimited => "rate_limited",
            RuleOutcome::Duplicate => "duplicate",
        }
    }

    /// The reverse of [`RuleOutcome::as_str`].
    pub fn parse(text: &str) -> Option<RuleOutcome> {
        match text {
            "accepted" => Some(RuleOutcome::Accepted),
            "stale" => Some(RuleOutcome::Stale),
            "clock_skew" => Some(RuleOutcome::ClockSkew),
            "rate_limited" => Some(RuleOutcome::RateLimited),
            "duplicate" => Some(RuleOutcome::Duplicate),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TerminalHeartbeat {
    pub device_serial: String,
    pub source: TerminalSource,
    pub seen_at: UnixMs,
}

/// The ledger's answer: one result per record, in batch order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TerminalBatchResponse {
    pub results: Vec<TerminalResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TerminalResult {
    pub key: IdempotencyKey,
    /// 200 recorded; a 4xx with `code` for a record the ledger will never take.
    pub status: u16,
    #[serde(default)]
    pub replayed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The `GATE_READ` hop recorded for a tag read of a known unit.
    #[serde(default)]
    pub hop_ids: Vec<i64>,
}
