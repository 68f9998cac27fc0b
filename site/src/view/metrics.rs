//! `GET /metrics` in the Prometheus text format (prometheus-client): the
//! ledger's process counters beside gauges read from the database at
//! scrape time.

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::alerts::outbox::Firing;
use super::status::{alert_priority, SiteStatus, Trend};
use crate::ledger::devices::Profile;
use crate::ledger::metrics::SyncMetrics;
use crate::store::writer::{Caller, Use};
use std::sync::atomic::AtomicU64;

type Labels = Vec<(String, LabelValue)>;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), LabelValue((*value).to_owned())))
        .collect()
}

/// A label value written as the text format requires: `\`, `"` and a
/// line feed escaped (`\\`, `\"`, `\n`), so an identifier from outside
/// cannot end its label or start a line of its own.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct LabelValue(pub String);

impl EncodeLabelValue for LabelValue {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        use std::fmt::Write;
        for c in self.0.chars() {
            match c {
                '\\' => encoder.write_str("\\\\")?,
                '"' => encoder.write_str("\\\"")?,
                '\n' => encoder.write_str("\\n")?,
                c => encoder.write_char(c)?,
            }
        }
        Ok(())
    }
}

fn gauge(value: i64) -> Gauge {
    let gauge = Gauge::default();
    gauge.set(value);
    gauge
}

/// The exposition text for `status`, the ledger's counters, the alert
/// conditions `firing` and each caller's use of SQLite's one writer.
pub fn render(
    status: &SiteStatus,
    sync: &SyncMetrics,
    firing: &[Firing],
    writer: &[(Caller, Use)],
) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::with_prefix("stockhop");
    register_writer(&mut registry, writer);
    let depth = Family::<Labels, Gauge>::default();
    let online = Family::<Labels, Gauge>::default();
    for device in &status.devices {
        let id = labels(&[
            ("device_id", &device.device_id),
            ("profile", &device.profile),
        ]);
        depth
            .get_or_create(&id)
            .set(device.queue_depth.unwrap_or(0));
        online.get_or_create(&id).set(i64::from(device.online));
    }
    registry.register(
        "device_queue_depth",
        "Items queued on a device, from its latest heartbeat",
        depth,
    );
    registry.register(
        "device_online",
        "1 while a device was heard from within its profile's heartbeat period",
        online,
    );
    // The priority a device is raised at while offline, as a label, so an
    // alerting rule routes by it.
    let offline = Family::<Labels, Gauge>::default();
    for device in &status.devices {
        let Some(profile) = Profile::parse(&device.profile) else {
            continue;
        };
        let priority = format!("{:?}", alert_priority(profile));
        offline
            .get_or_create(&labels(&[
                ("device_id", &device.device_id),
                ("profile", &device.profile),
                ("priority", &priority),
            ]))
            .set(i64::from(device.alert.is_some()));
    }
    registry.register(
        "device_offline",
        "1 while a device is silent past its profile's heartbeat period, labelled with the priority it is raised at",
        offline,
    );
    registry.register(
        "site_escalated",
        "1 while the backlog is escalated (an item waiting over 15 min, or a P1 device offline)",
        gauge(i64::from(status.trend == Trend::Escalated)),
    );
    let oldest_age_s = status
        .central_outbox
        .oldest_pending_at
        .map_or(0, |oldest| (status.server_time.0 - oldest.0).max(0) / 1000);
    registry.register(
        "central_outbox_oldest_pending_age_seconds",
        "How long the oldest hop waiting for the central has waited (0 with none)",
        gauge(oldest_age_s),
    );
    let alerts = Family::<Labels, Gauge>::default();
    for condition in firing {
        let priority = format!("{:?}", condition.priority);
        let mut pairs = vec![("name", condition.name.as_str()), ("priority", &priority)];
        if let Some(device_id) = &condition.device_id {
            pairs.push(("device_id", device_id));
        }
        alerts.get_or_create(&labels(&pairs)).set(1);
    }
    registry.register(
        "alert_firing",
        "The site's own alert conditions firing now (storage nearly full among them)",
        alerts,
    );
    registry.register(
        "site_queue_depth",
        "The site's total queue depth (sum of the devices' latest heartbeats)",
        gauge(status.queue_depth),
    );
    registry.register(
        "sync_items",
        "Sync items answered, by outcome (replays not counted)",
        sync.items.clone(),
    );
    registry.register(
        "sync_latency_seconds",
        "Capture to recorded latency of the hops sync items recorded",
        sync.latency_seconds.clone(),
    );
    registry.register(
        "listener_queue_depth",
        "Terminal records waiting to be forwarded to the ledger",
        gauge(status.listener.queue_depth),
    );
    registry.register(
        "listener_dead_letters",
        "Terminal records the ledger refused for good",
        gauge(status.listener.dead_letters_total),
    );
    registry.register(
        "listener_set_aside",
        "Terminal records the ledger kept failing, set aside and retried at a slower cadence",
        gauge(status.listener.set_aside_total),
    );
    registry.register(
        "central_outbox_pending",
        "Hops waiting to be forwarded to the central",
        gauge(status.central_outbox.pending),
    );
    registry.register(
        "central_outbox_dead_letters",
        "Hops the central refused for good",
        gauge(status.central_outbox.dead_letters_total),
    );
    let received = Family::<Labels, Gauge>::default();
    for site in &status.central_sites {
        received
            .get_or_create(&labels(&[("site_id", &site.site_id)]))
            .set(site.hops_received);
    }
    registry.register(
        "central_hops_received",
        "On a central: hops held from each site",
        received,
    );
    registry.register(
        "admin_sign_in_failures",
        "Failed admin sign-ins: a wrong token at sign-in or as a bearer",
        sync.sign_in_failures.clone(),
    );
    registry.register(
        "admin_sign_ins_throttled",
        "Admin sign-ins answered 429: too many failures from the address",
        sync.sign_ins_throttled.clone(),
    );
    registry.register(
        "storage_full",
        "1 while the site is out of storage and answers writes 503 STORAGE_FULL",
        sync.storage_full.clone(),
    );
    registry.register(
        "storage_free_bytes",
        "Free bytes on the data directory's file system, as last read",
        sync.storage_free_bytes.clone(),
    );
    let decisions = Family::<Labels, Gauge>::default();
    let pending = &status.decisions;
    for (kind, count) in [
        ("count_variance", pending.count_variances.len() as i64),
        ("grn", pending.grns.len() as i64),
        ("correction", pending.corrections_total),
    ] {
        decisions
            .get_or_create(&labels(&[("kind", kind)]))
            .set(count);
    }
    registry.register(
        "pending_decisions",
        "Decisions waiting for a person, by kind",
        decisions,
    );
    let rejected = Family::<Labels, Gauge>::default();
    for reason in &status.rejections.by_reason {
        rejected
            .get_or_create(&labels(&[("reason", &reason.reason)]))
            .set(reason.rejected);
    }
    registry.register(
        "rejected_items",
        "Items the ledger rejected, settled or not, by reason (from the rejection summaries)",
        rejected,
    );
    let recent = Family::<Labels, Gauge>::default();
    let rejecting = Family::<Labels, Gauge>::default();
    for device in &status.rejections.by_device {
        let id = labels(&[("device_id", &device.device_id)]);
        recent.get_or_create(&id).set(device.recent);
        rejecting.get_or_create(&id).set(i64::from(
            device.recent >= status.rejections.rejecting_at_least,
        ));
    }
    registry.register(
        "device_rejections_recent",
        format!(
            "Items rejected from a device within the last {} min of receipt",
            status.rejections.window_minutes
        ),
        recent,
    );
    registry.register(
        "device_rejecting",
        "1 while a device keeps producing rejections: at least the threshold within the window",
        rejecting,
    );
    let mut text = String::new();
    encode(&mut text, &registry)?;
    Ok(text)
}

/// `stockhop_db_writer_{turns,waited_seconds,held_seconds,commit_seconds}_total`
/// and `stockhop_db_writer_longest_{wait,hold}_seconds` by `caller`: where
/// SQLite's one writer's time goes (none on PostgreSQL's ledger but the
/// listener's own file).
fn register_writer(registry: &mut Registry, writer: &[(Caller, Use)]) {
    type Seconds = Counter<f64, AtomicU64>;
    let turns = Family::<Labels, Counter>::default();
    let waited = Family::<Labels, Seconds>::default();
    let held = Family::<Labels, Seconds>::default();
    let committing = Family::<Labels, Seconds>::default();
    type Longest = Gauge<f64, AtomicU64>;
    let longest_wait = Family::<Labels, Longest>::default();
    let longest_hold = Family::<Labels, Longest>::default();
    for (caller, used) in writer {
        let caller = labels(&[("caller", caller.name())]);
        turns.get_or_create(&caller).inc_by(used.turns);
        waited
            .get_or_create(&caller)
            .inc_by(used.waited.as_secs_f64());
        held.get_or_create(&caller).inc_by(used.held.as_secs_f64());
        committing
            .get_or_create(&caller)
            .inc_by(used.committing.as_secs_f64());
        longest_wait
            .get_or_create(&caller)
            .set(used.longest_wait.as_secs_f64());
        longest_hold
            .get_or_create(&caller)
            .set(used.longest_hold.as_secs_f64());
    }
    registry.register(
        "db_writer_turns",
        "Turns taken at SQLite's one writer connection, by caller",
        turns,
    );
    registry.register(
        "db_writer_waited_seconds",
        "Time callers waited for their turn at the writer (handhelds and the view go before the terminal listener)",
        waited,
    );
    registry.register(
        "db_writer_held_seconds",
        "Time callers held the writer: their work, commit and fsync",
        held,
    );
    registry.register(
        "db_writer_commit_seconds",
        "Of the time held, the time in COMMIT: the log's write and its fsync",
        committing,
    );
    registry.register(
        "db_writer_longest_wait_seconds",
        "The longest one caller waited for a turn at the writer since the site started",
        longest_wait,
    );
    registry.register(
        "db_writer_longest_hold_seconds",
        "The longest one caller held the writer since the site started",
        longest_hold,
    );
}
