//! What a site sends a central and what the central answers: a batch of
//! the site's hops in outbox order, signed as terminal batches are
//! (HMAC-SHA256 over `"<timestamp>.<body>"`, the same headers and age
//! window, [`crate::terminal_wire`]).

use serde::{Deserialize, Serialize};

/// Where a central takes site batches.
pub const CENTRAL_HOPS_PATH: &str = "/v1/central/hops";

/// Code of a per-hop refusal: a new key whose seq is at or below the last
/// seq the central holds for the site (it keeps each site's hops in seq
/// order; a site's outbox never sends one).
pub const SEQ_OUT_OF_ORDER: &str = "SEQ_OUT_OF_ORDER";
/// Code of a per-hop refusal: the hop's `key` is not the key inside it.
pub const KEY_MISMATCH: &str = "KEY_MISMATCH";

/// One site's hops, in outbox order (`seq` strictly increasing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CentralBatch {
    pub site_id: String,
    pub hops: Vec<CentralHop>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CentralHop {
    /// The site's outbox seq: its hops' order.
    pub seq: i64,
    /// The hop's idempotency key: the central holds it once per site.
    pub key: String,
    pub hop: SiteHop,
}

/// Every column of a site's `hops` row, instants as Unix milliseconds and
/// `facts` as the JSON it stores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteHop {
    pub hop_id: i64,
    pub device_id: String,
    pub session_id: Option<String>,
    pub key: String,
    pub client_seq: Option<i64>,
    pub command: String,
    pub kind: String,
    pub mode: Option<String>,
    pub unit_id: Option<i64>,
    pub from_bin: Option<String>,
    pub to_bin: Option<String>,
    pub unit_version: Option<i64>,
    pub facts: serde_json::Value,
    pub occurred_at: i64,
    pub booked_at: i64,
    pub recorded_at: i64,
    pub device_clock_skew_ms: i64,
    pub source_mode: String,
    pub compensates: Option<i64>,
}

/// The central's answer: one result per hop, in batch order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CentralBatchResponse {
    pub results: Vec<CentralResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CentralResult {
    pub seq: i64,
    pub key: String,
    /// 200 applied or replayed; a 4xx with `code` for a hop the central
    /// will never take.
    pub status: u16,
    #[serde(default)]
    pub replayed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
