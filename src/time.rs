//! Time as newtypes with their unit: instants since the Unix epoch in
//! milliseconds ([`UnixMs`]) and spans in milliseconds ([`Millis`]).
//!
//! On the wire an instant is an RFC 3339 string in UTC with milliseconds
//! (`2026-11-29T09:01:00.000Z`). Parsing accepts the forms devices send:
//! `Z`, `+HH:MM` and `+HHMM` offsets, and zero to nine fraction digits.
//! The calendar arithmetic is done here, in integers, so the core needs no
//! date crate and gives the same answer natively and in wasm.

use std::fmt;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// An instant: milliseconds since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct UnixMs(pub i64);

/// A span of time in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Millis(pub u64);

impl Millis {
    pub const fn from_secs(secs: u64) -> Millis {
        Millis(secs * 1000)
    }
}

impl UnixMs {
    /// The instant `span` after this one (saturating).
    pub fn plus(self, span: Millis) -> UnixMs {
        UnixMs(
            self.0
                .saturating_add(i64::try_from(span.0).unwrap_or(i64::MAX)),
        )
    }

    /// Signed difference `self - earlier` in milliseconds.
    pub fn since(self, earlier: UnixMs) -> i64 {
        self.0.saturating_sub(earlier.0)
    }

    /// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.f+](Z|±HH:MM|±HHMM)`); a space
    /// may stand for the `T`. Fractions beyond milliseconds are truncated.
    pub fn parse_rfc3339(text: &str) -> Result<UnixMs, TimeError> {
        let b = text.as_bytes();
        if b.len() < 20 {
            return Err(TimeError::new(text, "too short"));
        }
        let num = |range: std::ops::Range<usize>| -> Result<i64, TimeError> {
            let part = &b[range];
            if !part.iter().all(u8::is_ascii_digit) {
                return Err(TimeError::new(text, "expected digits"));
            }
            Ok(part
                .iter()
                .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
        };
        let sep_ok = b[4] == b'-'
            && b[7] == b'-'
            && matches!(b[10], b'T' | b't' | b' ')
            && b[13] == b':'
            && b[16] == b':';
        if !sep_ok {
            return Err(TimeError::new(text, "expected YYYY-MM-DDTHH:MM:SS"));
        }
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return Err(TimeError::new(text, "field out of range"));
        }
        let mut i = 19;
        let mut millis = 0i64;
        if b[i] == b'.' {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                if i - start < 3 {
                    millis = millis * 10 + i64::from(b[i] - b'0');
                }
                i += 1;
            }
            let digits = i - start;
            if digits == 0 || digits > 9 {
                return Err(TimeError::new(text, "bad fraction"));
            }
            for _ in digits..3 {
                millis *= 10;
            }
        }
        let offset_min = match &b[i..] {
            [b'Z' | b'z'] => 0,
            [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2]
            | [sign @ (b'+' | b'-'), h1, h2, m1, m2] => {
                let digits = [*h1, *h2, *m1, *m2];
                if !digits.iter().all(u8::is_ascii_digit) {
                    return Err(TimeError::new(text, "bad offset"));
                }
                let hours = i64::from((h1 - b'0') * 10 + (h2 - b'0'));
                let mins = i64::from((m1 - b'0') * 10 + (m2 - b'0'));
                if hours > 23 || mins > 59 {
                    return Err(TimeError::new(text, "bad offset"));
                }
                let total = hours * 60 + mins;
                if *sign == b'-' {
                    -total
                } else {
                    total
                }
            }
            _ => return Err(TimeError::new(text, "expected Z or an offset")),
        };
        let days = days_from_civil(year, month, day);
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_min * 60;
        let instant = UnixMs(secs * 1000 + millis);
        // The offset (or a leap second) may carry the instant out of the
        // years the wire form can write; such a text would not round-trip.
        if !(UnixMs::MIN..=UnixMs::MAX).contains(&instant) {
            return Err(TimeError::new(text, "outside years 0000-9999 in UTC"));
        }
        Ok(instant)
    }

    /// The earliest instant the wire form writes: 0000-01-01T00:00:00.000Z.
    pub const MIN: UnixMs = UnixMs(-62_167_219_200_000);
    /// The latest instant the wire form writes: 9999-12-31T23:59:59.999Z.
    pub const MAX: UnixMs = UnixMs(253_402_300_799_999);

    /// Builds an instant from a civil date and time in UTC.
    pub fn from_civil(
        year: i64,
        month: i64,
        day: i64,
        hour: i64,
        minute: i64,
        second: i64,
    ) -> UnixMs {
        let days = days_from_civil(year, month, day);
        UnixMs((days * 86_400 + hour * 3600 + minute * 60 + second) * 1000)
    }

    /// The civil date and time in UTC: (year, month, day, hour, minute, second, millis).
    pub fn to_civil(self) -> (i64, i64, i64, i64, i64, i64, i64) {
        let millis = self.0.rem_euclid(1000);
        let secs = self.0.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60, millis)
    }
}

impl fmt::Display for UnixMs {
    /// RFC 3339 in UTC with milliseconds, the wire form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, mo, d, h, mi, s, ms) = self.to_civil();
        write!(f, "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
    }
}

impl Serialize for UnixMs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for UnixMs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<UnixMs, D::Error> {
        let text = String::deserialize(deserializer)?;
        UnixMs::parse_rfc3339(&text).map_err(de::Error::custom)
    }
}

/// A timestamp that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid timestamp '{text}': {why}")]
pub struct TimeError {
    text: String,
    why: &'static str,
}

impl TimeError {
    fn new(text: &str, why: &'static str) -> TimeError {
        TimeError {
            text: text.chars().take(64).collect(),
            why,
        }
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected_ms: i64) {
        assert_eq!(
            UnixMs::parse_rfc3339(text),
            Ok(UnixMs(expected_ms)),
            "{text}"
        );
    }

    #[test]
    fn parses_the_forms_devices_send() {
        check("1970-01-01T00:00:00Z", 0);
        check("1970-01-01T00:00:00.001Z", 1);
        check("2026-11-29T10:15:02.120Z", 1_795_947_302_120);
        check("2026-09-07T12:50:36.194+0000", 1_788_785_436_194);
        check("2026-09-07T14:50:36.194+02:00", 1_788_785_436_194);
        check("2026-09-07T12:50:36.1949999Z", 1_788_785_436_194);
        check("2026-09-07 12:50:36.19Z", 1_788_785_436_190);
        check("1969-12-31T23:59:59.999Z", -1);
    }

    #[test]
    fn rejects_what_is_not_a_timestamp() {
        for bad in [
            "",
            "2026-11-29",
            "2026-11-29T10:15:02",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-29T24:00:00Z",
            "2026-11-29T10:15:02.Z",
            "2026-11-29T10:15:02+5",
            "2026-11-29T10:15:02.000Zjunk",
            "9999-12-31T23:59:60.999-23:59",
            "0000-01-01T00:00:00.000+00:01",
        ] {
            assert!(UnixMs::parse_rfc3339(bad).is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn the_bounds_of_the_wire_form_round_trip() {
        assert_eq!(UnixMs::MIN.to_string(), "0000-01-01T00:00:00.000Z");
        assert_eq!(UnixMs::MAX.to_string(), "9999-12-31T23:59:59.999Z");
        for bound in [UnixMs::MIN, UnixMs::MAX] {
            assert_eq!(UnixMs::parse_rfc3339(&bound.to_string()), Ok(bound));
        }
    }

    #[test]
    fn display_round_trips() {
        for ms in [
            0,
            1,
            -1,
            1_795_947_302_120,
            951_782_400_000,
            4_102_444_800_000,
        ] {
            let text = UnixMs(ms).to_string();
            assert_eq!(UnixMs::parse_rfc3339(&text), Ok(UnixMs(ms)), "{text}");
        }
        assert_eq!(
            UnixMs(1_795_947_302_120).to_string(),
            "2026-11-29T10:15:02.120Z"
        );
    }
}
