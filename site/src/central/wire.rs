//! What a site sends a central and what the central answers: a batch of
//! the site's hops in outbox order, signed as terminal batches are
//! (HMAC-SHA256 over `"<timestamp>.<body>"`, the same headers and age
//! window, [`crate::terminal_wire`]), with, now and then, a summary of how
//! the site is doing for the central's view of every site.

use serde::{Deserialize, Serialize};
use stockhop::time::UnixMs;

/// Whether the backlog drains, grows or is escalated.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    /// The backlog is not growing and nothing is overdue.
    Draining,
    /// The site's depth is above what it was 5 minutes ago.
    Growing,
    /// An item has waited over 15 minutes, or a P1 device is offline.
    Escalated,
}

/// An offline device's alert priority (beside [`Trend`], so a site's
/// summary to its central can carry both without the whole status).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    utoipa::ToSchema,
)]
pub enum Alert {
    P1,
    P2,
    P3,
}

/// Where a central takes site batches.
pub const CENTRAL_HOPS_PATH: &str = "/v1/central/hops";

/// Code of a per-hop refusal: a new key whose seq is at or below the last
/// seq the central holds for the site (it keeps each site's hops in seq
/// order; a site's outbox never sends one).
pub const SEQ_OUT_OF_ORDER: &str = "SEQ_OUT_OF_ORDER";
/// Code of a per-hop refusal: the hop's `key` is not the key inside it.
pub const KEY_MISMATCH: &str = "KEY_MISMATCH";
/// Code of a per-hop refusal: a new key whose seq is past the one right
/// after the last the central holds for the site. A site's stream has no
/// holes, so a jump is never taken as the site's new floor (one signed
/// batch with a seq far ahead would otherwise make every later hop of the
/// site out of order); the site asks where its stream stands (the
/// answer's [`StreamPosition`]) and sends its hops again after it.
pub const SEQ_GAP: &str = "SEQ_GAP";
/// Code of a batch refused as a whole: its outbox epoch is older than the
/// one the central holds for the site, so it comes from a copy of the site
/// from before its last restore.
pub const EPOCH_STALE: &str = "EPOCH_STALE";
/// Code of a batch refused as a whole: it starts a new outbox epoch (the
/// site was restored from a backup) but is not signed with the site's own
/// secret; the central's shared secret never moves a site's stream.
pub const EPOCH_NEEDS_OWN_SECRET: &str = "EPOCH_NEEDS_OWN_SECRET";

/// One site's hops, in outbox order (`seq` strictly increasing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CentralBatch {
    pub site_id: String,
    /// The site's outbox epoch: 0 until the site is first restored from a
    /// backup, then a new, higher one at each restore (`stockhop-site
    /// restore`). Left out while 0, so a central of an older release takes
    /// the batches of a site never restored.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub epoch: i64,
    pub hops: Vec<CentralHop>,
    /// How the site is doing as it sends the batch; a site attaches one
    /// every [`SUMMARY_EVERY_MS`] (alone in a batch without hops while it
    /// has none to send).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<SiteSummary>,
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

/// How often a site sends its summary: the central's view of a site is at
/// most this old while the site reaches it, for one status read a period.
pub const SUMMARY_EVERY_MS: i64 = 10_000;

/// The longest `time_zone` a summary may carry: IANA names are far
/// shorter; anything past this is not one.
pub const SUMMARY_TIME_ZONE_CHARS_MAX: usize = 64;
/// The longest `view_url` a summary may carry, the usual URL bound of
/// browsers and proxies.
pub const SUMMARY_VIEW_URL_CHARS_MAX: usize = 2048;

/// A site's status in brief, as the central shows it beside the site's
/// last contact: the same facts the site's own `/v1/site/status` gives.
/// Unknown fields are taken and dropped, so a newer site can say more to
/// an older central.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SiteSummary {
    /// When the site read it, on the site's clock.
    #[schema(value_type = String, format = DateTime)]
    pub taken_at: UnixMs,
    /// The site's time zone (IANA name), to show the site's times in.
    pub time_zone: String,
    pub trend: Trend,
    /// The sum of the site's devices' latest heartbeat depths.
    pub queue_depth: i64,
    /// The oldest item queued on any of the site's devices.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub oldest_queued_at: Option<UnixMs>,
    pub devices_offline: i64,
    /// The highest priority among the offline devices, null with none.
    pub alert: Option<Alert>,
    /// Hops waiting in the site's outbox to this central.
    pub outbox_pending: i64,
    /// How long the oldest of them has waited since it was recorded, in
    /// milliseconds (0 with none).
    pub outbox_lag_ms: i64,
    /// The site's own view (`https://…/site/`), when the site knows its
    /// address.
    pub view_url: Option<String>,
}

/// Why a summary is refused (the whole batch is, 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SummaryError {
    #[error("summary.time_zone must be 1 to {SUMMARY_TIME_ZONE_CHARS_MAX} printable characters")]
    TimeZone,
    #[error("summary.view_url must be an http or https URL of at most {SUMMARY_VIEW_URL_CHARS_MAX} characters")]
    ViewUrl,
    #[error("summary.{0} must not be negative")]
    Negative(&'static str),
}

impl SiteSummary {
    /// Checks what the central would store and show.
    pub fn check(&self) -> Result<(), SummaryError> {
        let printable = |text: &str| text.chars().all(|c| !c.is_control());
        if self.time_zone.is_empty()
            || self.time_zone.chars().count() > SUMMARY_TIME_ZONE_CHARS_MAX
            || !printable(&self.time_zone)
        {
            return Err(SummaryError::TimeZone);
        }
        if let Some(url) = &self.view_url {
            let web = reqwest::Url::parse(url)
                .is_ok_and(|parsed| matches!(parsed.scheme(), "http" | "https"));
            if !web || url.chars().count() > SUMMARY_VIEW_URL_CHARS_MAX {
                return Err(SummaryError::ViewUrl);
            }
        }
        for (name, value) in [
            ("queue_depth", self.queue_depth),
            ("devices_offline", self.devices_offline),
            ("outbox_pending", self.outbox_pending),
            ("outbox_lag_ms", self.outbox_lag_ms),
        ] {
            if value < 0 {
                return Err(SummaryError::Negative(name));
            }
        }
        Ok(())
    }
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CentralBatchResponse {
    pub results: Vec<CentralResult>,
    /// Where the site's stream stands at the central after this batch (a
    /// central of an older release says nothing). A batch without hops
    /// asks only this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamPosition>,
}

/// Where a site's stream stands at its central: the site goes on after
/// `last_seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StreamPosition {
    /// The site's outbox epoch the central holds.
    pub epoch: i64,
    /// The last seq of the site's stream the central has answered for
    /// good (taken, replayed or refused); the site's next hop is the one
    /// after it.
    pub last_seq: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
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
