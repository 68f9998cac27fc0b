//! Which alert conditions hold, from the site's status at `now`: pure, so
//! the rules read as a table and test without a clock.

use stockhop::time::UnixMs;

use crate::site_clock::SiteZone;
use crate::view::status::{Alert, SiteStatus, Trend};

/// The central outbox is stuck when its oldest pending hop has waited this
/// long: the forwarder retries every 60 s at most, so ten minutes is ten
/// failed rounds, not a slow link.
pub const OUTBOX_STUCK_AFTER_MS: i64 = 10 * 60 * 1000;

/// Free space below which the data directory is nearly full: four times
/// the 256 MiB the site keeps free before it stops taking work, so people
/// hear of it while the site still writes.
pub const STORAGE_LOW_FREE_BYTES: u64 = 1024 * 1024 * 1024;

/// The alert names, as the webhook and the Prometheus rules spell them.
pub mod names {
    pub const DEVICE_OFFLINE: &str = "DeviceOffline";
    pub const BACKLOG_ESCALATED: &str = "BacklogEscalated";
    pub const DEAD_LETTERS: &str = "DeadLetters";
    pub const STORAGE_LOW: &str = "StorageLow";
    pub const CENTRAL_OUTBOX_STUCK: &str = "CentralOutboxStuck";
    pub const DEVICE_REJECTING: &str = "DeviceRejecting";
}

/// The priority a rejecting device is raised at: nothing is lost, but
/// its operator's work is refused and each refusal is kept (a flood of
/// them grows the ledger by megabytes a second), so someone should walk
/// over soon, not at once.
pub const REJECTING_PRIORITY: Alert = Alert::P2;

/// A condition that holds: `key` tells one condition from another (a
/// device's offline condition is its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub key: String,
    pub name: &'static str,
    pub priority: Alert,
    pub device_id: Option<String>,
    /// When it started, as far as the status says (else `now`).
    pub since: UnixMs,
    pub summary: String,
}

/// The data directory's free space, as last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Storage {
    pub free_bytes: u64,
}

impl Storage {
    pub fn nearly_full(self) -> bool {
        self.free_bytes < STORAGE_LOW_FREE_BYTES
    }
}

/// Every condition that holds in `status` (and `storage`) at `now`; times
/// in summaries on `zone`'s clock.
pub fn evaluate(
    status: &SiteStatus,
    storage: Option<Storage>,
    zone: &SiteZone,
    now: UnixMs,
) -> Vec<Condition> {
    let mut holding = Vec::new();
    for device in &status.devices {
        if let (Some(priority), Some(since)) = (device.alert, device.offline_since) {
            holding.push(Condition {
                key: format!("device_offline:{}", device.device_id),
                name: names::DEVICE_OFFLINE,
                priority,
                device_id: Some(device.device_id.clone()),
                since,
                summary: format!(
                    "{} ({}) offline since {} ({}): silent past its heartbeat period",
                    device.device_id,
                    device.profile,
                    zone.clock(since),
                    zone.name()
                ),
            });
        }
    }
    if status.trend == Trend::Escalated {
        holding.push(Condition {
            key: "backlog_escalated".to_owned(),
            name: names::BACKLOG_ESCALATED,
            priority: Alert::P1,
            device_id: None,
            since: now,
            summary: format!(
                "the backlog is escalated: {} items queued, an item waiting over 15 min or a P1 device offline",
                status.queue_depth
            ),
        });
    }
    let dead = status.listener.dead_letters_total + status.central_outbox.dead_letters_total;
    if dead > 0 {
        holding.push(Condition {
            key: "dead_letters".to_owned(),
            name: names::DEAD_LETTERS,
            priority: Alert::P2,
            device_id: None,
            since: now,
            summary: format!(
                "{} terminal record(s) and {} hop(s) for the central refused for good",
                status.listener.dead_letters_total, status.central_outbox.dead_letters_total
            ),
        });
    }
    if let Some(storage) = storage.filter(|s| s.nearly_full()) {
        holding.push(Condition {
            key: "storage_low".to_owned(),
            name: names::STORAGE_LOW,
            priority: Alert::P1,
            device_id: None,
            since: now,
            summary: format!(
                "the data directory has {} MiB free (alert below {} MiB)",
                storage.free_bytes / (1024 * 1024),
                STORAGE_LOW_FREE_BYTES / (1024 * 1024)
            ),
        });
    }
    for device in &status.rejections.rejecting {
        let reason = match device.top_reason.as_str() {
            "" => "no reason",
            reason => reason,
        };
        holding.push(Condition {
            key: format!("device_rejecting:{}", device.device_id),
            name: names::DEVICE_REJECTING,
            priority: REJECTING_PRIORITY,
            device_id: Some(device.device_id.clone()),
            since: now,
            summary: format!(
                "{} had {} item(s) rejected in the last {} min ({} a minute; alert at {}), most for {}",
                device.device_id,
                device.recent,
                status.rejections.window_minutes,
                device.per_minute,
                status.rejections.rejecting_at_least,
                reason
            ),
        });
    }
    let outbox = &status.central_outbox;
    if let Some(oldest) = outbox.oldest_pending_at {
        if outbox.pending > 0 && now.0 - oldest.0 > OUTBOX_STUCK_AFTER_MS {
            holding.push(Condition {
                key: "central_outbox_stuck".to_owned(),
                name: names::CENTRAL_OUTBOX_STUCK,
                priority: Alert::P2,
                device_id: None,
                since: UnixMs(oldest.0 + OUTBOX_STUCK_AFTER_MS),
                summary: format!(
                    "{} hop(s) wait for the central, the oldest since {} ({})",
                    outbox.pending,
                    zone.clock(oldest),
                    zone.name()
                ),
            });
        }
    }
    holding
}
