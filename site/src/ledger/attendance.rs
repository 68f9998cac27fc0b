//! Attendance out: the attendance records the ledger holds from its
//! terminals, by capture time, for payroll and HR
//! (`GET /v1/site/terminals/{serial}/records`,
//! `GET /v1/site/attendance.csv`).
//!
//! A record is a terminal event of kind `attendance`, whatever the
//! listener's time rules said of it (a backfilled record is stale by the
//! time it arrives, and is still the punch it was), except a duplicate: a
//! second punch within seconds of an accepted one is folded into it.
//! Each record is given once: a line the ledger took twice (the terminal
//! sent it again after the listener had forgotten it) is given as the
//! first event that holds it.
//!
//! A page is the records of a range after a cursor, in capture order
//! (`occurred_at`, then key); `next` resumes after the page's last one.
//! Records a backfill brings later into a range already read are there
//! when the range is read again.

use serde::Serialize;
use stockhop::time::UnixMs;

use crate::store::sql::{Connection, OptionalExtension, Row};

/// Most records one page holds: a page is one short read of the ledger.
pub const MAX_RECORDS_PAGE: usize = 1_000;
/// Records a page holds when the request names no `limit`.
pub const DEFAULT_RECORDS_PAGE: usize = 100;

/// One attendance record as the ledger holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRecord {
    pub key: String,
    pub device_serial: String,
    pub pin: String,
    pub occurred_at: UnixMs,
    pub recorded_at: UnixMs,
    /// The line as the terminal sent it.
    pub raw: String,
}

/// Where a page starts: after the record captured at `occurred_at` with
/// key `key`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cursor {
    pub occurred_at: UnixMs,
    pub key: String,
}

impl Cursor {
    /// The cursor as a page's `next` gives it: `<ms>.<key>`.
    pub fn encode(&self) -> String {
        format!("{}.{}", self.occurred_at.0, self.key)
    }

    /// Reads a `next`; `None` for text no page gave.
    pub fn parse(text: &str) -> Option<Cursor> {
        let (at, key) = text.split_once('.')?;
        Some(Cursor {
            occurred_at: UnixMs(at.parse().ok()?),
            key: key.to_owned(),
        })
    }
}

/// Records of the range after the cursor, each once; `{device}` narrows
/// them to one terminal. A punch is its terminal, PIN and instant: the
/// same punch uploaded again in another line format (a backfill's answer
/// from newer firmware, a work code of `0` for none) is a record the
/// listener could not recognise as a resend, and the ledger keeps what
/// arrived, but payroll gets it once, as first recorded.
const SELECT: &str = "SELECT e.key, e.device_serial, e.subject, e.occurred_at, e.recorded_at, e.raw
    FROM terminal_events e
    WHERE e.kind = 'attendance' AND e.rule_outcome <> 'duplicate'
      AND e.occurred_at >= ?1 AND e.occurred_at < ?2
      AND (e.occurred_at > ?3 OR (e.occurred_at = ?3 AND e.key > ?4)) {device}
      AND NOT EXISTS (
        SELECT 1 FROM terminal_events d
        WHERE d.kind = 'attendance' AND d.device_serial = e.device_serial
          AND d.occurred_at = e.occurred_at AND d.subject = e.subject
          AND d.rule_outcome <> 'duplicate'
          AND (d.recorded_at < e.recorded_at OR (d.recorded_at = e.recorded_at AND d.key < e.key)))
    ORDER BY e.occurred_at, e.key
    LIMIT ?5";

/// At most `limit` (up to [`MAX_RECORDS_PAGE`]) records captured from
/// `from` to before `to`, after `after`, of terminal `serial` or of every
/// terminal; the cursor of the last one when another page follows.
pub fn page(
    conn: &Connection,
    serial: Option<&str>,
    from: UnixMs,
    to: UnixMs,
    after: Option<&Cursor>,
    limit: usize,
) -> crate::store::sql::Result<(Vec<HeldRecord>, Option<Cursor>)> {
    let limit = limit.clamp(1, MAX_RECORDS_PAGE);
    let (after_at, after_key) = match after {
        Some(cursor) => (cursor.occurred_at.0, cursor.key.clone()),
        None => (i64::MIN, String::new()),
    };
    // One more than the page holds: whether another page follows.
    let limit_rows = limit as i64 + 1;
    let mut records = match serial {
        Some(serial) => conn
            .prepare_cached(&SELECT.replace("{device}", "AND e.device_serial = ?6"))?
            .query_map(
                crate::params![from.0, to.0, after_at, after_key, limit_rows, serial],
                from_row,
            )?
            .collect::<crate::store::sql::Result<Vec<_>>>()?,
        None => conn
            .prepare_cached(&SELECT.replace("{device}", ""))?
            .query_map(
                crate::params![from.0, to.0, after_at, after_key, limit_rows],
                from_row,
            )?
            .collect::<crate::store::sql::Result<Vec<_>>>()?,
    };
    let more = records.len() > limit;
    records.truncate(limit);
    let next = more.then(|| {
        let last = &records[records.len() - 1];
        Cursor {
            occurred_at: last.occurred_at,
            key: last.key.clone(),
        }
    });
    Ok((records, next))
}

/// Whether the site knows a terminal by `serial`: it has an attendance
/// record of it, or has seen it (its last-seen time in the heartbeat
/// view). A serial it has never heard of is most likely mistyped, and is
/// told so rather than answered with an empty page.
pub fn terminal_known(conn: &Connection, serial: &str) -> crate::store::sql::Result<bool> {
    let known: Option<i64> = conn
        .prepare_cached(
            "SELECT 1 FROM terminal_events WHERE device_serial = ?1 AND kind = 'attendance'
             UNION ALL
             SELECT 1 FROM device_heartbeats WHERE device_id = ?1 AND source IN ('iclock', 'zebra', 'framed')
             LIMIT 1",
        )?
        .query_row(crate::params![serial], |row| row.get(0))
        .optional()?;
    Ok(known.is_some())
}

fn from_row(row: &Row<'_>) -> crate::store::sql::Result<HeldRecord> {
    Ok(HeldRecord {
        key: row.get(0)?,
        device_serial: row.get(1)?,
        pin: row.get(2)?,
        occurred_at: UnixMs(row.get(3)?),
        recorded_at: UnixMs(row.get(4)?),
        raw: row.get(5)?,
    })
}

/// A record's status and verify mode as its line gives them: the third
/// and fourth TAB-separated fields of an ATTLOG line, `inoutstatus` and
/// `verifytype` of an access event's `key=value` fields; `None` where the
/// line has none (a framed record).
pub fn state_and_verify(raw: &str) -> (Option<String>, Option<String>) {
    let fields: Vec<&str> = raw.split('\t').map(str::trim).collect();
    let keyed = |name: &str| {
        fields.iter().find_map(|field| {
            let (key, value) = field.split_once('=')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.to_owned())
        })
    };
    if fields.first().is_some_and(|first| first.contains('=')) {
        return (keyed("inoutstatus"), keyed("verifytype"));
    }
    let at = |i: usize| {
        fields
            .get(i)
            .filter(|value| !value.is_empty())
            .map(|value| (*value).to_owned())
    };
    (at(2), at(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_and_verify_come_from_the_line_as_the_terminal_wrote_it() {
        assert_eq!(
            state_and_verify("1452\t2015-07-30 15:16:28\t0\t1\t0\t0\t0"),
            (Some("0".into()), Some("1".into()))
        );
        assert_eq!(
            state_and_verify("time=2024-01-02 08:00:00\tpin=7\tinoutstatus=1\tverifytype=4"),
            (Some("1".into()), Some("4".into()))
        );
        assert_eq!(state_and_verify("{\"person\":\"7\"}"), (None, None));
    }

    #[test]
    fn a_cursor_reads_back_as_written() {
        let cursor = Cursor {
            occurred_at: UnixMs(1_700_000_000_123),
            key: "0b7c.x".into(),
        };
        assert_eq!(Cursor::parse(&cursor.encode()), Some(cursor));
        assert_eq!(Cursor::parse("nonsense"), None);
    }
}
