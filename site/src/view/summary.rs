//! The summary a site sends its central with its hops
//! ([`crate::central::wire::SiteSummary`]): the trend, queue depth, oldest
//! item and offline devices of [`super::status`], and the outbox's lag,
//! read the same way the site's own view reads them, so the central shows
//! what the site's page would.

use stockhop::time::UnixMs;

use super::enroll;
use super::status;
use crate::central::outbox;
use crate::central::wire::SiteSummary;
use crate::site_clock::SiteZone;
use crate::store::sql::Connection;

/// The site's summary at `now`.
pub fn summary(conn: &mut Connection, now: UnixMs) -> crate::store::sql::Result<SiteSummary> {
    let devices = status::devices(conn, now)?;
    let trend = status::trend(conn, &devices, now)?;
    // Offline as the view raises it: silent past the profile's period (a
    // device not heard from within its first period is not, yet).
    let offline = devices
        .iter()
        .filter(|device| device.offline_since.is_some());
    let outbox = outbox::status(conn, 0)?;
    Ok(SiteSummary {
        taken_at: now,
        time_zone: SiteZone::remembered(conn)?.name().to_owned(),
        trend,
        queue_depth: devices.iter().filter_map(|d| d.queue_depth).sum(),
        oldest_queued_at: devices.iter().filter_map(|d| d.oldest_queued_at).min(),
        devices_offline: offline.clone().count() as i64,
        alert: offline.filter_map(|device| device.alert).min(),
        outbox_pending: outbox.pending,
        outbox_lag_ms: outbox
            .oldest_pending_at
            .map_or(0, |oldest| (now.0 - oldest.0).max(0)),
        view_url: enroll::remembered_site_url(conn)?.map(|url| format!("{url}/site/")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db::Db;
    use crate::view::history::{Alert, Trend};

    #[test]
    fn a_quiet_site_with_an_offline_gate_summarises_as_its_status_reads() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            let added = UnixMs(1_800_000_000_000);
            crate::ledger::devices::add(
                conn,
                "GATE-1",
                crate::ledger::devices::Profile::Fxr90,
                true,
                added,
            )
            .unwrap();
            let later = UnixMs(added.0 + 60 * 60 * 1000);
            let summary = summary(conn, later).unwrap();
            let status = status::devices(conn, later).unwrap();
            assert!(!status[0].online);
            assert_eq!(summary.devices_offline, 1);
            assert_eq!(summary.alert, Some(Alert::P1));
            assert_eq!(summary.trend, Trend::Escalated, "a P1 device is offline");
            assert_eq!((summary.queue_depth, summary.outbox_pending), (0, 0));
            assert_eq!(summary.outbox_lag_ms, 0);
            assert!(summary.check().is_ok());
        });
    }
}
