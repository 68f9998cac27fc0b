//! The site's one clock on screen: the IANA time zone every time the
//! site's view shows is read in (the page, the chart's axis, the offline
//! banners), and the one `/v1/site/status` names in `time_zone` for the
//! handhelds (`/v1/site/status` and the heartbeat's answer). `serve --site-tz` (env `STOCKHOP_SITE_TZ`) sets it, else the
//! machine's own zone; `serve` records it in the database, so the view and
//! every command read the same zone.
//!
//! The zone data is jiff's: the system's zoneinfo, else the copy built in.

use jiff::tz::TimeZone;
use jiff::Timestamp;
use stockhop::time::UnixMs;

use crate::store::sql::{Connection, OptionalExtension};

/// The `site_meta` key the zone's name is kept under.
const SITE_TZ_KEY: &str = "site_tz";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown time zone {0:?} for --site-tz: give a name of the IANA database, such as Europe/Berlin")]
pub struct ZoneError(String);

/// A time zone of the IANA database, by name.
#[derive(Debug, Clone)]
pub struct SiteZone {
    name: String,
    zone: TimeZone,
}

impl PartialEq for SiteZone {
    fn eq(&self, other: &SiteZone) -> bool {
        self.name == other.name
    }
}

impl SiteZone {
    /// The zone named `name` (`Europe/Berlin`, `UTC`).
    pub fn named(name: &str) -> Result<SiteZone, ZoneError> {
        let name = name.trim();
        jiff::tz::db()
            .get(name)
            .map(|zone| SiteZone {
                name: name.to_owned(),
                zone,
            })
            .map_err(|_| ZoneError(name.to_owned()))
    }

    /// The machine's zone, or UTC when it has no IANA name.
    pub fn machine() -> SiteZone {
        let system = TimeZone::try_system().ok();
        system
            .as_ref()
            .and_then(TimeZone::iana_name)
            .and_then(|name| SiteZone::named(name).ok())
            .unwrap_or_else(SiteZone::utc)
    }

    pub fn utc() -> SiteZone {
        SiteZone {
            name: "UTC".to_owned(),
            zone: TimeZone::UTC,
        }
    }

    /// `--site-tz` when given, else the machine's zone.
    pub fn configured(name: Option<&str>) -> Result<SiteZone, ZoneError> {
        name.map_or_else(|| Ok(SiteZone::machine()), SiteZone::named)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `HH:MM` of the instant `at` on the site's clock.
    pub fn clock(&self, at: UnixMs) -> String {
        let Ok(instant) = Timestamp::from_millisecond(at.0) else {
            return "--:--".to_owned();
        };
        self.zone.to_datetime(instant).strftime("%H:%M").to_string()
    }

    /// The offset from UTC in force at `at`, in minutes east.
    pub fn offset_minutes(&self, at: UnixMs) -> i32 {
        let instant = Timestamp::from_millisecond(at.0).unwrap_or(Timestamp::UNIX_EPOCH);
        self.zone.to_offset(instant).seconds() / 60
    }

    /// The site's zone as `serve` recorded it; the machine's until then.
    pub fn remembered(conn: &Connection) -> crate::store::sql::Result<SiteZone> {
        let name: Option<String> = conn
            .query_row(
                "SELECT value FROM site_meta WHERE key = ?1",
                [SITE_TZ_KEY],
                |row| row.get(0),
            )
            .optional()?;
        Ok(name
            .and_then(|name| SiteZone::named(&name).ok())
            .unwrap_or_else(SiteZone::machine))
    }

    /// Records the zone for the view and the commands.
    pub fn remember(&self, conn: &Connection) -> crate::store::sql::Result<()> {
        conn.execute(
            "INSERT INTO site_meta (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [SITE_TZ_KEY, self.name.as_str()],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_zone_reads_instants_with_its_daylight_saving() {
        let berlin = SiteZone::named("Europe/Berlin").unwrap();
        // 2026-01-15T12:00Z is 13:00 CET; 2026-07-15T12:00Z is 14:00 CEST.
        assert_eq!(berlin.clock(UnixMs(1_768_478_400_000)), "13:00");
        assert_eq!(berlin.clock(UnixMs(1_784_116_800_000)), "14:00");
        assert_eq!(berlin.offset_minutes(UnixMs(1_784_116_800_000)), 120);
        assert_eq!(SiteZone::utc().clock(UnixMs(1_768_478_400_000)), "12:00");
        assert!(SiteZone::named("Mars/Olympus").is_err());
        assert_eq!(SiteZone::configured(None).unwrap(), SiteZone::machine());
    }
}
