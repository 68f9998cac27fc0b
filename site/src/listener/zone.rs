//! A terminal's time zone: a fixed offset from UTC.
//!
//! iclock terminals stamp records in device local time without a zone, and
//! set their clock from the handshake's `Date` (GMT) plus `TimeZone`. The
//! listener converts their local times back to UTC with the same offset it
//! tells them, configured per serial or site-wide. Offsets are fixed:
//! a site that observes daylight saving changes the configured offset, just
//! as the terminal's own clock has to be moved.

use std::fmt;
use std::str::FromStr;

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
