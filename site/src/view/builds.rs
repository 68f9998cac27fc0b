//! The fleet by build: which build each handheld's worker runs (its last
//! heartbeat's `app_version`, read by [`stockhop::release::read_app_version`])
//! against the build this site serves now, and the handhelds that are not
//! capturing because their build did not start (a failed module, a queue
//! from a newer release after a rollback).

use serde::Serialize;

use stockhop::release::read_app_version;

use super::status::DeviceStatus;

/// `GET /v1/site/builds`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildCount {
    pub build: String,
    pub devices: u64,
    pub served: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
