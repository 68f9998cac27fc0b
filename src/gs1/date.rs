//! Civil dates, and the six-digit dates of GS1 labels (`YYMMDD`, AIs 11–17).
//!
//! A label writes two digits of the year; the century is the one that puts
//! the date within 49 years before and 50 years after `today`, the
//! General Specifications' rule. `today` is the caller's: nothing here
//! reads a clock. A day of `00` is the month's last day. The calendar
//! arithmetic is the crate's own ([`crate::time`]), so a date means the
//! same natively and in wasm.

use std::fmt;

use serde::{Serialize, Serializer};

use super::error::LabelError;
use crate::time::UnixMs;

const MS_PER_DAY: i64 = 86_400_000;
/// The years a [`CivilDate`] holds: the four digits its text form writes.
const YEARS: std::ops::RangeInclusive<i32> = 0..=9999;
/// The months' names, as the messages write them.
const MONTH_NAMES: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A day of the proleptic Gregorian calendar, written `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CivilDate {
    year: i32,
    month: u8,
    day: u8,
}

impl CivilDate {
    /// The date, when there is one: a year of 0000–9999, a month of 1–12
    /// and a day the month has.
    pub fn new(year: i32, month: u8, day: u8) -> Option<CivilDate> {
        let real = YEARS.contains(&year)
            && (1..=12).contains(&month)
            && (1..=days_in_month(year, month)).contains(&day);
        real.then_some(CivilDate { year, month, day })
    }

    /// The date in UTC at the instant `at` (a caller wanting the site's
    /// local date passes the instant shifted by its offset).
    pub fn from_unix_ms(at: UnixMs) -> CivilDate {
        let (year, month, day, ..) = at.to_civil();
        CivilDate {
            year: i32::try_from(year).unwrap_or(if year < 0 { 0 } else { 9999 }),
            month: u8::try_from(month).unwrap_or(1),
            day: u8::try_from(day).unwrap_or(1),
        }
    }

    pub fn year(self) -> i32 {
        self.year
    }

    pub fn month(self) -> u8 {
        self.month
    }

    pub fn day(self) -> u8 {
        self.day
    }
}

impl fmt::Display for CivilDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl Serialize for CivilDate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// How many days `month` (1–12) of `year` has.
fn days_in_month(year: i32, month: u8) -> u8 {
    let (year, month) = (i64::from(year), i64::from(month));
    let (next_year, next_month) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    let first = UnixMs::from_civil(year, month, 1, 0, 0, 0);
    let next = UnixMs::from_civil(next_year, next_month, 1, 0, 0, 0);
    u8::try_from(next.since(first) / MS_PER_DAY).unwrap_or(31)
}

/// The date the six digits `value` of `ai` (already checked to be digits)
/// name, read relative to `today`.
pub(super) fn read_yymmdd(
    ai: &str,
    value: &str,
    today: CivilDate,
) -> Result<CivilDate, LabelError> {
    let two = |at: usize| -> u8 {
        value.as_bytes()[at..at + 2]
            .iter()
            .fold(0, |acc, d| acc * 10 + (d - b'0'))
    };
    let (yy, month, day) = (two(0), two(2), two(4));
    if !(1..=12).contains(&month) {
        return Err(LabelError::bad_date(
            ai,
            value,
            &format!("there is no month {month:02}"),
        ));
    }
    let year = century_year(yy, today);
    if !YEARS.contains(&year) {
        return Err(LabelError::bad_date(
            ai,
            value,
            &format!("its year {year} is outside 0000-9999"),
        ));
    }
    let days = days_in_month(year, month);
    let day = match day {
        0 => days,
        day if day <= days => day,
        _ => {
            let name = MONTH_NAMES[usize::from(month - 1)];
            return Err(LabelError::bad_date(
                ai,
                value,
                &format!("{name} {year} has {days} days"),
            ));
        }
    };
    Ok(CivilDate { year, month, day })
}

/// The full year of the two digits `yy`: the one from 49 years before
/// `today`'s year to 50 years after it (GS1 General Specifications, the
/// century of a six-digit date).
fn century_year(yy: u8, today: CivilDate) -> i32 {
    let this_yy = today.year.rem_euclid(100);
    let century = today.year - this_yy;
    match i32::from(yy) - this_yy {
        51.. => century - 100 + i32::from(yy),
        ..=-50 => century + 100 + i32::from(yy),
        _ => century + i32::from(yy),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gs1::error::LabelErrorCode;

    fn date(year: i32, month: u8, day: u8) -> CivilDate {
        CivilDate::new(year, month, day).expect("a real date")
    }

    fn check(value: &str, today: CivilDate, expected: &str) {
        let read = read_yymmdd("17", value, today).map(|d| d.to_string());
        assert_eq!(read.as_deref(), Ok(expected), "{value} read on {today}");
    }

    #[test]
    fn the_century_puts_a_date_from_49_years_back_to_50_ahead() {
        let today = date(2026, 3, 14);
        check("760101", today, "2076-01-01");
        check("770101", today, "1977-01-01");
        check("260314", today, "2026-03-14");
        check("000101", today, "2000-01-01");
        let end_of_century = date(2099, 6, 1);
        check("490101", end_of_century, "2149-01-01");
        check("500101", end_of_century, "2050-01-01");
    }

    #[test]
    fn day_zero_is_the_months_last_day() {
        let today = date(2026, 3, 14);
        check("240200", today, "2024-02-29");
        check("250200", today, "2025-02-28");
        check("261200", today, "2026-12-31");
        check("260400", today, "2026-04-30");
    }

    #[test]
    fn impossible_dates_are_refused_in_words() {
        let today = date(2026, 3, 14);
        for (value, words) in [
            ("261301", "(17) 261301 is not a date: there is no month 13"),
            ("260001", "(17) 260001 is not a date: there is no month 00"),
            (
                "250229",
                "(17) 250229 is not a date: february 2025 has 28 days",
            ),
            (
                "260431",
                "(17) 260431 is not a date: april 2026 has 30 days",
            ),
        ] {
            let error = read_yymmdd("17", value, today).expect_err(value);
            assert_eq!(error.code, LabelErrorCode::BadDate);
            assert_eq!(error.message, words);
        }
    }

    #[test]
    fn a_civil_date_exists_only_when_the_calendar_has_it() {
        assert!(CivilDate::new(2024, 2, 29).is_some());
        assert!(CivilDate::new(2023, 2, 29).is_none());
        assert!(CivilDate::new(2023, 0, 1).is_none());
        assert!(CivilDate::new(10_000, 1, 1).is_none());
        assert_eq!(
            CivilDate::from_unix_ms(UnixMs::from_civil(2026, 11, 29, 23, 59, 59)),
            date(2026, 11, 29)
        );
        assert_eq!(date(987, 6, 5).to_string(), "0987-06-05");
    }
}
