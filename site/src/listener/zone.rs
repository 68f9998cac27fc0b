//! A terminal's time zone: a zone of the IANA database (`Europe/Berlin`),
//! whose daylight-saving rules the listener follows, or a fixed offset from
//! UTC (`+05:30`).
//!
//! iclock terminals stamp records in device local time without a zone, and
//! set their clock from the handshake's `Date` (GMT) plus `TimeZone`. The
//! listener converts their local times back to UTC with the zone
//! configured per serial or site-wide ([`TerminalZone`]): a named zone reads
//! each local time with the offset in force at that local time, so a
//! record taken before a clock change and uploaded after it keeps its true
//! instant, and the handshake tells the terminal the offset in force now.
//! A line's own `TimeOffset` (a [`UtcOffset`]) wins over either.
//!
//! A local time the clock change skipped or repeated is read as RFC 5545
//! and Temporal's "compatible" choice does: a skipped time (02:30 on the
//! night clocks go forward) with the offset before the gap, so it lands as
//! long after the gap's start as it claims to be past it (02:30 CET is
//! 01:30 UTC); a repeated time (02:30 on the night clocks go back) as its
//! first occurrence, with the offset before the change (02:30 CEST, 00:30
//! UTC).
//!
//! The zone data is the system's `/usr/share/zoneinfo` (Debian's `tzdata`,
//! kept current by the system's updates); a machine without it (a minimal
//! image) uses the copy built into the binary, so a named zone always loads.

use std::fmt;
use std::str::FromStr;

use jiff::tz::TimeZone;
use jiff::Timestamp;
use stockhop::time::UnixMs;

/// Furthest real offsets: UTC−12:00 to UTC+14:00.
pub const OFFSET_MINUTES_MIN: i32 = -12 * 60;
pub const OFFSET_MINUTES_MAX: i32 = 14 * 60;

/// An offset from UTC in whole minutes (UTC+5:30 is 330).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UtcOffset {
    minutes: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid time zone offset {0:?}: expected UTC, Z, +HH:MM, -HHMM or minutes between -720 and 840")]
pub struct OffsetError(String);

impl UtcOffset {
    pub const UTC: UtcOffset = UtcOffset { minutes: 0 };

    pub fn from_minutes(minutes: i32) -> Result<UtcOffset, OffsetError> {
        if (OFFSET_MINUTES_MIN..=OFFSET_MINUTES_MAX).contains(&minutes) {
            Ok(UtcOffset { minutes })
        } else {
            Err(OffsetError(minutes.to_string()))
        }
    }

    pub fn minutes(self) -> i32 {
        self.minutes
    }

    /// An offset of `seconds` east of UTC, to the whole minute towards
    /// zero, held within the real offsets (historical local mean times of
    /// the database go past them by seconds).
    fn from_seconds_clamped(seconds: i32) -> UtcOffset {
        UtcOffset {
            minutes: (seconds / 60).clamp(OFFSET_MINUTES_MIN, OFFSET_MINUTES_MAX),
        }
    }

    /// A local wall-clock reading (as if it were UTC) converted to UTC.
    pub fn local_to_utc(self, local_as_utc: UnixMs) -> UnixMs {
        UnixMs(local_as_utc.0 - i64::from(self.minutes) * 60_000)
    }

    /// The handshake's `TimeZone` value: whole hours when the offset is a
    /// whole number of hours (the device reads −12 < tz < 12 as hours),
    /// minutes otherwise (the device reads |tz| > 60 as minutes).
    pub fn iclock_value(self) -> String {
        if self.minutes % 60 == 0 && self.minutes.abs() < 12 * 60 {
            (self.minutes / 60).to_string()
        } else {
            self.minutes.to_string()
        }
    }
}

impl FromStr for UtcOffset {
    type Err = OffsetError;

    fn from_str(text: &str) -> Result<UtcOffset, OffsetError> {
        let bad = || OffsetError(text.to_owned());
        let t = text.trim();
        if t.eq_ignore_ascii_case("utc")
            || t.eq_ignore_ascii_case("z")
            || t.eq_ignore_ascii_case("gmt")
        {
            return Ok(UtcOffset::UTC);
        }
        let (sign, rest) = match t.as_bytes().first() {
            Some(b'+') => (1, &t[1..]),
            Some(b'-') => (-1, &t[1..]),
            _ => {
                return t
                    .parse::<i32>()
                    .map_err(|_| bad())
                    .and_then(|m| UtcOffset::from_minutes(m).map_err(|_| bad()))
            }
        };
        let digits: String = rest.chars().filter(|c| *c != ':').collect();
        if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let hours: i32 = digits[..2].parse().map_err(|_| bad())?;
        let minutes: i32 = digits[2..].parse().map_err(|_| bad())?;
        if minutes > 59 {
            return Err(bad());
        }
        UtcOffset::from_minutes(sign * (hours * 60 + minutes)).map_err(|_| bad())
    }
}

impl fmt::Display for UtcOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.minutes < 0 { '-' } else { '+' };
        let abs = self.minutes.abs();
        write!(f, "{sign}{:02}:{:02}", abs / 60, abs % 60)
    }
}

/// A terminal's configured time zone.
#[derive(Debug, Clone)]
pub enum TerminalZone {
    /// The same offset all year.
    Fixed(UtcOffset),
    /// A zone of the IANA database, by the name it was configured with.
    Named { name: String, zone: TimeZone },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown time zone {0:?}: expected a name of the IANA database (\"Europe/Berlin\"), UTC, +HH:MM, -HHMM or minutes between -720 and 840")]
pub struct ZoneError(String);

impl TerminalZone {
    pub const UTC: TerminalZone = TerminalZone::Fixed(UtcOffset::UTC);

    /// A fixed offset (`+05:30`, `-0300`, `330`, `UTC`) or a zone name of
    /// the IANA database (`Europe/Berlin`).
    pub fn parse(text: &str) -> Result<TerminalZone, ZoneError> {
        if let Ok(offset) = text.parse::<UtcOffset>() {
            return Ok(TerminalZone::Fixed(offset));
        }
        let name = text.trim();
        jiff::tz::db()
            .get(name)
            .map(|zone| TerminalZone::Named {
                name: name.to_owned(),
                zone,
            })
            .map_err(|_| ZoneError(text.to_owned()))
    }

    /// A local wall-clock reading (as if it were UTC) converted to UTC with
    /// the offset in force at that local time; a skipped or repeated local
    /// time is read as the module documentation says.
    pub fn local_to_utc(&self, local_as_utc: UnixMs) -> UnixMs {
        match self {
            TerminalZone::Fixed(offset) => offset.local_to_utc(local_as_utc),
            TerminalZone::Named { zone, .. } => {
                let Ok(as_utc) = Timestamp::from_millisecond(local_as_utc.0) else {
                    return local_as_utc;
                };
                let civil = TimeZone::UTC.to_datetime(as_utc);
                match zone.to_ambiguous_timestamp(civil).compatible() {
                    Ok(instant) => UnixMs(instant.as_millisecond()),
                    // At the edge of the representable years: the offset in
                    // force at the reading itself.
                    Err(_) => self.offset_at(local_as_utc).local_to_utc(local_as_utc),
                }
            }
        }
    }

    /// The terminal's wall-clock reading at the instant `at` (as if it were
    /// UTC): what a command names a time by.
    pub fn utc_to_local(&self, at: UnixMs) -> UnixMs {
        UnixMs(at.0 + i64::from(self.offset_at(at).minutes()) * 60_000)
    }

    /// The offset in force at the instant `at`: what the handshake tells a
    /// terminal to set its clock to.
    pub fn offset_at(&self, at: UnixMs) -> UtcOffset {
        match self {
            TerminalZone::Fixed(offset) => *offset,
            TerminalZone::Named { zone, .. } => {
                let instant = Timestamp::from_millisecond(at.0).unwrap_or(Timestamp::UNIX_EPOCH);
                UtcOffset::from_seconds_clamped(zone.to_offset(instant).seconds())
            }
        }
    }
}

impl Default for TerminalZone {
    fn default() -> TerminalZone {
        TerminalZone::UTC
    }
}

impl PartialEq for TerminalZone {
    fn eq(&self, other: &TerminalZone) -> bool {
        match (self, other) {
            (TerminalZone::Fixed(a), TerminalZone::Fixed(b)) => a == b,
            (TerminalZone::Named { name: a, .. }, TerminalZone::Named { name: b, .. }) => a == b,
            _ => false,
        }
    }
}

// Two zones are the same when configured alike: by name or by offset.
impl Eq for TerminalZone {}

impl FromStr for TerminalZone {
    type Err = ZoneError;

    fn from_str(text: &str) -> Result<TerminalZone, ZoneError> {
        TerminalZone::parse(text)
    }
}

impl fmt::Display for TerminalZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TerminalZone::Fixed(offset) => offset.fmt(f),
            TerminalZone::Named { name, .. } => f.write_str(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, minutes: i32, iclock: &str) {
        let offset: UtcOffset = text.parse().unwrap();
        assert_eq!(offset.minutes(), minutes, "{text}");
        assert_eq!(offset.iclock_value(), iclock, "{text}");
    }

    #[test]
    fn offsets_parse_and_become_iclock_time_zones() {
        check("UTC", 0, "0");
        check("+08:00", 480, "8");
        check("-0300", -180, "-3");
        check("+05:30", 330, "330");
        check("330", 330, "330");
        check("+12:45", 765, "765");
        check("-12:00", -720, "-720");
    }

    #[test]
    fn impossible_offsets_are_refused() {
        for bad in ["+15:00", "+5", "8h", "+08:60", "", "-900"] {
            assert!(bad.parse::<UtcOffset>().is_err(), "{bad}");
        }
    }

    #[test]
    fn local_time_converts_to_utc() {
        let offset: UtcOffset = "+08:00".parse().unwrap();
        let local = UnixMs::from_civil(2024, 8, 5, 12, 40, 57);
        assert_eq!(
            offset.local_to_utc(local),
            UnixMs::from_civil(2024, 8, 5, 4, 40, 57)
        );
    }
}

#[cfg(test)]
mod named_zone_tests {
    use super::*;

    fn berlin() -> TerminalZone {
        TerminalZone::parse("Europe/Berlin").expect("the IANA database names Europe/Berlin")
    }

    fn civil(y: i64, mo: i64, d: i64, h: i64, mi: i64) -> UnixMs {
        UnixMs::from_civil(y, mo, d, h, mi, 0)
    }

    #[test]
    fn a_named_zone_reads_winter_and_summer_times_with_their_own_offsets() {
        let zone = berlin();
        assert_eq!(
            zone.local_to_utc(civil(2026, 1, 15, 9, 0)),
            civil(2026, 1, 15, 8, 0)
        );
        assert_eq!(
            zone.local_to_utc(civil(2026, 7, 15, 9, 0)),
            civil(2026, 7, 15, 7, 0)
        );
    }

    #[test]
    fn the_offset_told_to_a_terminal_is_the_one_in_force_now() {
        let zone = berlin();
        assert_eq!(zone.offset_at(civil(2026, 3, 29, 0, 59)).minutes(), 60);
        assert_eq!(zone.offset_at(civil(2026, 3, 29, 1, 0)).minutes(), 120);
        assert_eq!(zone.offset_at(civil(2026, 10, 25, 1, 0)).minutes(), 60);
        assert_eq!(zone.offset_at(civil(2026, 3, 29, 1, 0)).iclock_value(), "2");
    }

    #[test]
    fn a_skipped_local_time_is_read_with_the_offset_before_the_gap() {
        // 2026-03-29 02:00 CET became 03:00 CEST: 02:30 never happened.
        assert_eq!(
            berlin().local_to_utc(civil(2026, 3, 29, 2, 30)),
            civil(2026, 3, 29, 1, 30)
        );
    }

    #[test]
    fn a_repeated_local_time_is_read_as_its_first_occurrence() {
        // 2026-10-25 03:00 CEST became 02:00 CET: 02:30 happened twice.
        assert_eq!(
            berlin().local_to_utc(civil(2026, 10, 25, 2, 30)),
            civil(2026, 10, 25, 0, 30)
        );
    }

    #[test]
    fn names_and_offsets_both_parse_and_unknown_names_are_refused() {
        assert_eq!(
            TerminalZone::parse("+05:30"),
            Ok(TerminalZone::Fixed(UtcOffset::from_minutes(330).unwrap()))
        );
        assert_eq!(berlin().to_string(), "Europe/Berlin");
        assert!(TerminalZone::parse("America/Sao_Paulo").is_ok());
        for bad in ["Europe/Atlantis", "", "+15:00", "../etc/passwd"] {
            let err = TerminalZone::parse(bad).unwrap_err();
            assert!(err.to_string().contains("IANA"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_built_in_zone_data_knows_the_zones_without_the_system_copy() {
        // What a machine without /usr/share/zoneinfo reads.
        let bundled = jiff::tz::TimeZoneDatabase::bundled();
        let zone = bundled.get("Europe/Berlin").expect("built into the binary");
        let instant = Timestamp::from_second(civil(2026, 7, 1, 0, 0).0 / 1000).unwrap();
        assert_eq!(zone.to_offset(instant).seconds(), 7200);
    }
}
