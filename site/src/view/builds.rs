//! The fleet by build: which build each handheld's worker runs (its last
//! heartbeat's `app_version`, read by [`stockhop::release::read_app_version`])
//! against the build this site serves now, and the handhelds that are not
//! capturing because their build did not start (a failed module, a queue
//! from a newer release after a rollback).

use serde::Serialize;

use stockhop::release::read_app_version;

use super::status::DeviceStatus;

/// `GET /v1/site/builds`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Fleet {
    /// The build the site serves (`/version.json`'s).
    pub served: String,
    /// The IndexedDB schema that build writes.
    pub schema: u32,
    /// Each build some handheld reports, the served one first, then by
    /// how many handhelds run it.
    pub builds: Vec<BuildCount>,
    /// Every handheld that has sent a heartbeat, by device id.
    pub devices: Vec<DeviceBuild>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct BuildCount {
    pub build: String,
    pub devices: u64,
    pub served: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct DeviceBuild {
    pub device_id: String,
    pub build: String,
    /// Why the worker does not capture (`SCHEMA_NEWER`, `INIT_FAILED`, …).
    pub problem: Option<String>,
    /// The handheld runs another build than the one served.
    pub old: bool,
}

/// The fleet as the devices' last heartbeats report it.
pub fn fleet(devices: &[DeviceStatus], served: &str) -> Fleet {
    let mut out: Vec<DeviceBuild> = devices
        .iter()
        .filter_map(|device| {
            let reported = read_app_version(device.app_version.as_deref()?);
            Some(DeviceBuild {
                device_id: device.device_id.clone(),
                build: reported.build.to_owned(),
                problem: reported.problem.map(str::to_owned),
                old: reported.build != served,
            })
        })
        .collect();
    out.sort_by(|a, b| a.device_id.cmp(&b.device_id));
    let mut builds: Vec<BuildCount> = Vec::new();
    for device in &out {
        match builds.iter_mut().find(|b| b.build == device.build) {
            Some(count) => count.devices += 1,
            None => builds.push(BuildCount {
                build: device.build.clone(),
                devices: 1,
                served: !device.old,
            }),
        }
    }
    builds.sort_by(|a, b| {
        b.served
            .cmp(&a.served)
            .then(b.devices.cmp(&a.devices))
            .then(a.build.cmp(&b.build))
    });
    Fleet {
        served: served.to_owned(),
        schema: stockhop::release::SCHEMA_VERSION,
        builds,
        devices: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(id: &str, app_version: Option<&str>) -> DeviceStatus {
        DeviceStatus {
            device_id: id.to_owned(),
            profile: "mc3390xr".to_owned(),
            commissioned: true,
            online: true,
            last_seen_at: None,
            offline_since: None,
            alert: None,
            queue_depth: None,
            oldest_queued_at: None,
            app_version: app_version.map(str::to_owned),
            open_session: None,
        }
    }

    #[test]
    fn the_fleet_counts_builds_served_first_and_flags_old_and_stopped_handhelds() {
        let devices = [
            device("HH-3", Some("aaaa000000000000")),
            device("HH-1", Some("bbbb000000000000")),
            device("HH-2", Some("bbbb000000000000 SCHEMA_NEWER")),
            device("HH-4", Some("aaaa000000000000")),
            device("HH-5", None),
        ];
        let fleet = fleet(&devices, "bbbb000000000000");
        let builds: Vec<_> = fleet
            .builds
            .iter()
            .map(|b| (b.build.as_str(), b.devices, b.served))
            .collect();
        assert_eq!(
            builds,
            [
                ("bbbb000000000000", 2, true),
                ("aaaa000000000000", 2, false)
            ]
        );
        let flagged: Vec<_> = fleet
            .devices
            .iter()
            .map(|d| (d.device_id.as_str(), d.old, d.problem.as_deref()))
            .collect();
        assert_eq!(
            flagged,
            [
                ("HH-1", false, None),
                ("HH-2", false, Some("SCHEMA_NEWER")),
                ("HH-3", true, None),
                ("HH-4", true, None),
            ]
        );
    }
}
