//! `GET /v1/site/status`: which devices are offline and since when, each
//! device's queue, the site's depth, latency and trend, terminals, the
//! listener's queue and dead letters, the decisions waiting, rejected
//! items and the devices rejecting now, the outbox to the central and, on
//! a central, the sites it has heard from.

use crate::store::sql::Connection;
use stockhop::time::UnixMs;

use super::decisions::{self, Decisions};
use super::history;
use crate::central::ingest::{self, CentralSite};
use crate::central::outbox::{self, OutboxStatus};
use crate::ledger::devices::Profile;
use crate::ledger::rejections::{self, Rejections};
use crate::ledger::rescue::{self, Rescued, Stranded};
use crate::ledger::session_close::OpenSession;
use crate::listener::queue::{self, DeadLetter, QueueError, SetAside};
use crate::printers::store::{self as printers, PrinterStatus};
use crate::site_clock::SiteZone;

pub use super::history::ESCALATE_AFTER_MS;

/// Dead letters listed on the dashboard (newest first).
pub const MAX_DEAD_LETTERS_LISTED: usize = 50;
/// Set-aside terminal records listed on the dashboard (oldest first), as
/// many as dead letters: the total says how many more there are.
pub const MAX_SET_ASIDE_LISTED: usize = 50;

pub use super::history::Alert;

/// The priority an offline device of `profile` is raised at.
pub fn alert_priority(profile: Profile) -> Alert {
    match profile {
        Profile::Fxr90 => Alert::P1,
        Profile::Zt411r => Alert::P2,
        Profile::Mc3390xr | Profile::Rfd40 => Alert::P3,
    }
}

pub use super::history::Trend;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct DeviceStatus {
    pub device_id: String,
    pub profile: String,
    pub commissioned: bool,
    pub online: bool,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_seen_at: Option<UnixMs>,
    /// When the silence passed the profile's heartbeat period (from when
    /// the device was added, if it was never seen); null while online, for
    /// a device not heard from yet within its first period, and for one
    /// never heard from and not commissioned (not in service yet); never
    /// after the status's `server_time`.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub offline_since: Option<UnixMs>,
    /// The profile's priority while offline, else null.
    pub alert: Option<Alert>,
    pub queue_depth: Option<i64>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub oldest_queued_at: Option<UnixMs>,
    pub app_version: Option<String>,
    /// The session it has open on the ledger, if any: a supervisor closes
    /// it for a handheld that lost its storage or broke mid-shift.
    #[serde(default)]
    pub open_session: Option<OpenSession>,
}

/// A terminal seen through the listener.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct TerminalStatus {
    pub device_id: String,
    pub source: String,
    #[schema(value_type = String, format = DateTime)]
    pub last_seen_at: UnixMs,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ListenerStatus {
    /// Records waiting to be forwarded to the ledger.
    pub queue_depth: i64,
    pub dead_letters_total: i64,
    pub dead_letters: Vec<DeadLetter>,
    /// Records the ledger kept failing (5xx), set aside so the records
    /// behind them flow: still queued (counted in `queue_depth` too) and
    /// retried at the slower cadence, each with its attempts and last error.
    pub set_aside_total: i64,
    pub set_aside: Vec<SetAside>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct SiteStatus {
    #[schema(value_type = String, format = DateTime)]
    pub server_time: UnixMs,
    /// The site's time zone (IANA name): every time the view and the
    /// handhelds show is read in it.
    pub time_zone: String,
    /// Its offset from UTC at `server_time`, in minutes east.
    pub utc_offset_minutes: i32,
    pub trend: Trend,
    /// The site's total: the sum of the devices' latest heartbeat depths.
    pub queue_depth: i64,
    /// Last hour, capture → recorded, handheld hops; null with none.
    pub median_sync_latency_ms: Option<i64>,
    /// Offline first (by priority, longest first), then by id.
    pub devices: Vec<DeviceStatus>,
    pub terminals: Vec<TerminalStatus>,
    pub listener: ListenerStatus,
    pub decisions: Decisions,
    /// This site's outbox to its central: depth and dead letters (the
    /// counts are zero and `site_id` null on a site that does not forward).
    pub central_outbox: OutboxStatus,
    /// On a central, every site it has heard from, by id; empty elsewhere.
    pub central_sites: Vec<CentralSite>,
    /// The label printers: their last host status, faults and queues.
    pub printers: Vec<PrinterView>,
    /// Rescue files imported, newest first (at most
    /// [`MAX_RESCUES_LISTED`]): whose, when, and what became of their items.
    #[serde(default)]
    pub rescues: Vec<Rescued>,
    /// Revoked devices that still had items queued at their last
    /// heartbeat, and whether a rescue file of theirs came in since.
    #[serde(default)]
    pub stranded: Vec<Stranded>,
    /// Rejected items by reason and device, and the devices rejecting now
    /// (read from the rejection summaries, never by counting receipts).
    #[serde(default)]
    pub rejections: Rejections,
}

/// Rescue imports the status lists: months of a site's retirements and
/// broken handhelds, without the answer growing with the site's age.
pub const MAX_RESCUES_LISTED: i64 = 50;

/// A printer on the view: its status, and the priority its faults are
/// raised at (its profile's, as when it is offline), null without one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct PrinterView {
    #[serde(flatten)]
    pub status: PrinterStatus,
    pub alert: Option<Alert>,
}

/// Each printer with the priority it is raised at: its device record's
/// while it is offline (`devices`), its profile's while it shows a fault.
fn printer_views(
    conn: &Connection,
    devices: &[DeviceStatus],
) -> crate::store::sql::Result<Vec<PrinterView>> {
    Ok(printers::statuses(conn)?
        .into_iter()
        .map(|status| {
            let offline = devices
                .iter()
                .find(|d| d.device_id == status.printer_id)
                .and_then(|d| d.alert);
            PrinterView {
                alert: offline.or_else(|| {
                    (!status.faults.is_empty()).then(|| alert_priority(Profile::Zt411r))
                }),
                status,
            }
        })
        .collect())
}

/// Every device that is not revoked, with its liveness at `now`.
pub fn devices(conn: &Connection, now: UnixMs) -> crate::store::sql::Result<Vec<DeviceStatus>> {
    let mut select = conn.prepare_cached(
        "SELECT d.device_id, d.profile, d.commissioned, d.added_at,
                h.last_seen_at, h.queue_depth, h.oldest_queued_at, h.app_version,
                s.session_id, s.operator_id, s.mode, s.opened_at
         FROM devices d LEFT JOIN device_heartbeats h ON h.device_id = d.device_id
         LEFT JOIN sessions s ON s.device_id = d.device_id AND s.state = 'open'
         WHERE NOT EXISTS (SELECT 1 FROM device_revocations r WHERE r.device_id = d.device_id)",
    )?;
    let rows = select.query_map([], |row| {
        let profile_text: String = row.get(1)?;
        let profile = Profile::parse(&profile_text).ok_or_else(|| {
            crate::store::sql::Error::conversion(1, format!("unknown profile {profile_text:?}"))
        })?;
        let added_at: i64 = row.get(3)?;
        let last_seen_at: Option<i64> = row.get(4)?;
        let period = profile.heartbeat_period_ms();
        let commissioned: bool = row.get(2)?;
        let silent_since = last_seen_at.unwrap_or(added_at);
        // Silent past its period: offline since the period ran out, which
        // is never after `now`. A device never heard from within its first
        // period is not online, nor offline yet; one never heard from and
        // not commissioned is not in service yet (a gate added before it is
        // installed), so its silence raises nothing.
        let in_service = commissioned || last_seen_at.is_some();
        let overdue = in_service && now.0.saturating_sub(silent_since) > period;
        let online = last_seen_at.is_some() && !overdue;
        Ok(DeviceStatus {
            device_id: row.get(0)?,
            profile: profile_text,
            commissioned,
            online,
            last_seen_at: last_seen_at.map(UnixMs),
            offline_since: overdue.then(|| UnixMs(silent_since + period)),
            alert: overdue.then(|| alert_priority(profile)),
            queue_depth: row.get(5)?,
            oldest_queued_at: row.get::<_, Option<i64>>(6)?.map(UnixMs),
            app_version: row.get(7)?,
            open_session: row
                .get::<_, Option<String>>(8)?
                .map(|session_id| -> crate::store::sql::Result<OpenSession> {
                    Ok(OpenSession {
                        session_id,
                        operator_id: row.get(9)?,
                        mode: row.get(10)?,
                        opened_at: row.get::<_, Option<i64>>(11)?.map(UnixMs),
                    })
                })
                .transpose()?,
        })
    })?;
    let mut devices = rows.collect::<crate::store::sql::Result<Vec<_>>>()?;
    devices.sort_by(|a, b| {
        (a.alert.is_none(), a.alert, a.offline_since, &a.device_id).cmp(&(
            b.alert.is_none(),
            b.alert,
            b.offline_since,
            &b.device_id,
        ))
    });
    Ok(devices)
}

/// The trend rule: escalated when a device's oldest queued item is older
/// than [`ESCALATE_AFTER_MS`] or a P1 device is offline; else growing when
/// the site's depth is above what it was 5 minutes ago; else draining.
pub fn trend(
    conn: &Connection,
    devices: &[DeviceStatus],
    now: UnixMs,
) -> crate::store::sql::Result<Trend> {
    let overdue = devices.iter().any(|device| {
        device.queue_depth.unwrap_or(0) > 0
            && device
                .oldest_queued_at
                .is_some_and(|oldest| now.0.saturating_sub(oldest.0) > ESCALATE_AFTER_MS)
    });
    let p1_offline = devices.iter().any(|device| device.alert == Some(Alert::P1));
    if overdue || p1_offline {
        return Ok(Trend::Escalated);
    }
    Ok(if history::depth_growing(conn, now)? {
        Trend::Growing
    } else {
        Trend::Draining
    })
}

fn terminals(conn: &Connection) -> crate::store::sql::Result<Vec<TerminalStatus>> {
    let mut select = conn.prepare_cached(
        "SELECT device_id, source, last_seen_at FROM device_heartbeats
         WHERE source <> ?1 AND source <> ?2 ORDER BY device_id",
    )?;
    let sources = [
        crate::ledger::devices::SOURCE_HANDHELD,
        printers::SOURCE_PRINTER,
    ];
    let rows = select.query_map(sources, |row| {
        Ok(TerminalStatus {
            device_id: row.get(0)?,
            source: row.get(1)?,
            last_seen_at: UnixMs(row.get(2)?),
        })
    })?;
    rows.collect()
}

/// The whole status at `now`.
/// The terminal listener's queue, from the site's own SQLite file.
pub fn listener_status(conn: &mut rusqlite::Connection) -> Result<ListenerStatus, QueueError> {
    let counts = queue::counts(conn)?;
    Ok(ListenerStatus {
        queue_depth: counts.pending as i64,
        dead_letters_total: counts.dead as i64,
        dead_letters: queue::dead_letters(conn, MAX_DEAD_LETTERS_LISTED)?,
        set_aside_total: counts.set_aside as i64,
        set_aside: queue::set_aside(conn, MAX_SET_ASIDE_LISTED)?,
    })
}

/// The whole status at `now`, with the listener's queue as read.
pub fn status(
    conn: &mut Connection,
    listener: ListenerStatus,
    now: UnixMs,
) -> crate::store::sql::Result<SiteStatus> {
    let devices = devices(conn, now)?;
    let trend = trend(conn, &devices, now)?;
    let queue_depth = devices.iter().filter_map(|d| d.queue_depth).sum();
    let median_sync_latency_ms =
        history::median_latency(conn, UnixMs(now.0 - history::LATENCY_WINDOW_MS), now)?;
    let zone = SiteZone::remembered(conn)?;
    let printers = printer_views(conn, &devices)?;
    Ok(SiteStatus {
        server_time: now,
        time_zone: zone.name().to_owned(),
        utc_offset_minutes: zone.offset_minutes(now),
        trend,
        queue_depth,
        median_sync_latency_ms,
        devices,
        terminals: terminals(conn)?,
        listener,
        decisions: decisions::pending(conn)?,
        central_outbox: outbox::status(conn, MAX_DEAD_LETTERS_LISTED)?,
        central_sites: ingest::sites(conn)?,
        printers,
        rescues: rescue::recent(conn, MAX_RESCUES_LISTED)?,
        stranded: rescue::stranded(conn)?,
        rejections: rejections::summary(conn, now)?,
    })
}
