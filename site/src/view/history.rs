//! The heartbeat history behind the chart and the trend: every handheld
//! heartbeat for a bounded window, and the capture → recorded latency of
//! the hops handhelds sent.
//!
//! The site's total queue depth at an instant is the sum of each device's
//! latest heartbeat depth as of that instant; the chart samples it at the
//! end of each 5-minute bucket and the trend compares it with 5 minutes
//! ago.

use std::collections::HashMap;

use crate::ledger::devices::Profile;
use crate::store::sql::{params, Connection};

pub use crate::ledger::heartbeat_log::MAX_SERIES_HOURS;
use stockhop::time::UnixMs;

/// The trend and the alert priority travel in a site's summary to its
/// central, so they are defined with that wire, below this page.
pub use crate::central::wire::{Alert, Trend};

/// The chart's bucket: 5 minutes.
pub const BUCKET_MS: i64 = 5 * 60 * 1000;

/// What the trend compares the depth now with: 5 minutes ago.
pub const TREND_LOOKBACK_MS: i64 = 5 * 60 * 1000;

/// A device's oldest queued item older than this escalates the backlog.
pub const ESCALATE_AFTER_MS: i64 = 15 * 60 * 1000;

/// The window of `median_sync_latency_ms`: the last hour.
pub const LATENCY_WINDOW_MS: i64 = 60 * 60 * 1000;

/// Hop sources that are handhelds (terminal records have their own clocks;
/// a terminal that is not commissioned records its gate reads as `sim`).
const HANDHELD_SOURCES: &str = "source_mode IN ('live', 'sim') AND kind <> 'GATE_READ'";

/// The site's total queue depth at `at`: each device's latest heartbeat
/// depth as of then, summed.
pub fn depth_at(conn: &Connection, at: UnixMs) -> crate::store::sql::Result<i64> {
    conn.prepare_cached(
        "SELECT CAST(COALESCE(SUM((SELECT queue_depth FROM heartbeat_log h
                                    WHERE h.device_id = d.device_id AND h.at <= ?1
                                    ORDER BY h.at DESC LIMIT 1)), 0) AS BIGINT)
         FROM (SELECT DISTINCT device_id FROM heartbeat_log) d",
    )?
    .query_row([at.0], |row| row.get(0))
}

/// Whether the site's depth now is above what it was [`TREND_LOOKBACK_MS`]
/// ago, or, with a shorter history, at the earliest heartbeat inside that
/// window.
pub fn depth_growing(conn: &Connection, now: UnixMs) -> crate::store::sql::Result<bool> {
    let lookback = UnixMs(now.0 - TREND_LOOKBACK_MS);
    let has_older: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM heartbeat_log WHERE at <= ?1)")?
        .query_row([lookback.0], |row| row.get(0))?;
    let baseline_at = if has_older {
        lookback
    } else {
        let earliest: Option<i64> = conn
            .prepare_cached("SELECT min(at) FROM heartbeat_log WHERE at > ?1 AND at <= ?2")?
            .query_row(params![lookback.0, now.0], |row| row.get(0))?;
        match earliest {
            Some(at) => UnixMs(at),
            None => return Ok(false),
        }
    };
    Ok(depth_at(conn, now)? > depth_at(conn, baseline_at)?)
}

/// The median capture → recorded latency of handheld hops recorded in
/// `(from, to]`, in milliseconds; `None` with no such hop.
pub fn median_latency(
    conn: &Connection,
    from: UnixMs,
    to: UnixMs,
) -> crate::store::sql::Result<Option<i64>> {
    let mut select = conn.prepare_cached(&format!(
        "SELECT recorded_at - occurred_at FROM hops
         WHERE recorded_at > ?1 AND recorded_at <= ?2 AND {HANDHELD_SOURCES}"
    ))?;
    let mut latencies = select
        .query_map(params![from.0, to.0], |row| row.get::<_, i64>(0))?
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    Ok(median(&mut latencies))
}

/// The lower median (an observed value, not an average of two).
fn median(values: &mut [i64]) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    let middle = (values.len() - 1) / 2;
    let (_, value, _) = values.select_nth_unstable(middle);
    Some(*value)
}

/// One 5-minute bucket of the chart.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Bucket {
    /// The bucket's start.
    #[schema(value_type = String, format = DateTime)]
    pub at: UnixMs,
    /// The site's total queue depth at the bucket's end (or now, for the
    /// bucket now is in).
    pub queue_depth: i64,
    /// Median capture → recorded latency of handheld hops recorded in the
    /// bucket; null when none was.
    pub median_sync_latency_ms: Option<i64>,
    /// The trend at the bucket's end, by the status's rule from the
    /// heartbeat history: escalated when a device's oldest queued item was
    /// over 15 min old or a fixed gate (P1) silent past its period, else
    /// growing when the depth is above the previous bucket's, else
    /// draining.
    pub trend: Trend,
}

/// `GET /v1/site/series`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Series {
    pub hours: u32,
    pub bucket_ms: i64,
    pub buckets: Vec<Bucket>,
}

/// The last `hours` as 5-minute buckets ending with the one `now` is in.
pub fn series(conn: &Connection, hours: u32, now: UnixMs) -> crate::store::sql::Result<Series> {
    let hours = hours.clamp(1, MAX_SERIES_HOURS);
    let count = i64::from(hours) * 60 * 60 * 1000 / BUCKET_MS;
    let last_start = now.0.div_euclid(BUCKET_MS) * BUCKET_MS;
    let first_start = last_start - (count - 1) * BUCKET_MS;

    // Each device's depth as the window opens, then every heartbeat inside
    // it in time order, swept bucket by bucket. Devices are numbered once,
    // so the sweep allocates nothing per heartbeat.
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut depth: Vec<i64> = Vec::new();
    // Each device's oldest queued item as of the sweep.
    let mut oldest: Vec<Option<i64>> = Vec::new();
    {
        let mut opening = conn.prepare_cached(
            "SELECT d.device_id,
                    (SELECT queue_depth FROM heartbeat_log h
                     WHERE h.device_id = d.device_id AND h.at <= ?1
                     ORDER BY h.at DESC LIMIT 1),
                    (SELECT oldest_queued_at FROM heartbeat_log h
                     WHERE h.device_id = d.device_id AND h.at <= ?1
                     ORDER BY h.at DESC LIMIT 1)
             FROM (SELECT DISTINCT device_id FROM heartbeat_log) d",
        )?;
        let mut rows = opening.query([first_start])?;
        while let Some(row) = rows.next()? {
            index.insert(row.get(0)?, depth.len());
            depth.push(row.get::<_, Option<i64>>(1)?.unwrap_or(0));
            oldest.push(row.get(2)?);
        }
    }
    // The fixed gates (P1): silent past their period, they escalate. Only
    // their latest contact is kept, so the chart shows a gate's current
    // silence from when it began, not an earlier one that has ended.
    let gates: Vec<i64> = conn
        .prepare_cached(
            "SELECT coalesce(h.last_seen_at, d.added_at) FROM devices d
             LEFT JOIN device_heartbeats h ON h.device_id = d.device_id
             WHERE d.profile = ?1
               AND NOT EXISTS (SELECT 1 FROM device_revocations r WHERE r.device_id = d.device_id)",
        )?
        .query_map([Profile::Fxr90.as_str()], |row| row.get(0))?
        .collect::<crate::store::sql::Result<_>>()?;
    let gate_period = Profile::Fxr90.heartbeat_period_ms();
    let mut total: i64 = depth.iter().sum();
    let mut beats: Vec<(usize, i64, i64, Option<i64>)> = Vec::new();
    {
        let mut select = conn.prepare_cached(
            "SELECT device_id, at, queue_depth, oldest_queued_at FROM heartbeat_log
             WHERE at > ?1 AND at <= ?2 ORDER BY at",
        )?;
        let mut rows = select.query(params![first_start, now.0])?;
        while let Some(row) = rows.next()? {
            let device = match row.get_ref(0)? {
                crate::store::sql::ValueRef::Text(device) => device,
                other => {
                    return Err(crate::store::sql::Error::conversion(
                        0,
                        format!("{} where a device id was expected", other.type_name()),
                    ))
                }
            };
            // A device whose first heartbeat is inside the window.
            let slot = match index.get(device) {
                Some(slot) => *slot,
                None => {
                    index.insert(device.to_owned(), depth.len());
                    depth.push(0);
                    oldest.push(None);
                    depth.len() - 1
                }
            };
            beats.push((slot, row.get(1)?, row.get(2)?, row.get(3)?));
        }
    }
    let mut beats = beats.into_iter().peekable();

    let mut latencies: Vec<Vec<i64>> = vec![Vec::new(); count as usize];
    {
        let mut hops = conn.prepare_cached(&format!(
            "SELECT recorded_at, recorded_at - occurred_at FROM hops
             WHERE recorded_at >= ?1 AND recorded_at <= ?2 AND {HANDHELD_SOURCES}"
        ))?;
        let rows = hops.query_map(params![first_start, now.0], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
        })?;
        for row in rows {
            let (recorded_at, latency) = row?;
            let index = (recorded_at - first_start).div_euclid(BUCKET_MS);
            if let Some(bucket) = usize::try_from(index)
                .ok()
                .and_then(|i| latencies.get_mut(i))
            {
                bucket.push(latency);
            }
        }
    }

    let mut buckets: Vec<Bucket> = Vec::with_capacity(count as usize);
    for (i, bucket_latencies) in latencies.iter_mut().enumerate() {
        let start = first_start + i as i64 * BUCKET_MS;
        let end = (start + BUCKET_MS - 1).min(now.0);
        while let Some((slot, _, value, first)) = beats.next_if(|(_, at, _, _)| *at <= end) {
            total += value - std::mem::replace(&mut depth[slot], value);
            oldest[slot] = first;
        }
        let overdue = (0..depth.len()).any(|slot| {
            depth[slot] > 0 && oldest[slot].is_some_and(|at| end - at > ESCALATE_AFTER_MS)
        });
        let gate_silent = gates
            .iter()
            .any(|since| *since <= end && end - since > gate_period);
        let trend = if overdue || gate_silent {
            Trend::Escalated
        } else if buckets
            .last()
            .is_some_and(|before| total > before.queue_depth)
        {
            Trend::Growing
        } else {
            Trend::Draining
        };
        buckets.push(Bucket {
            at: UnixMs(start),
            queue_depth: total,
            median_sync_latency_ms: median(bucket_latencies),
            trend,
        });
    }
    Ok(Series {
        hours,
        bucket_ms: BUCKET_MS,
        buckets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_an_observed_value() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [5]), Some(5));
        assert_eq!(median(&mut [9, 1, 5]), Some(5));
        assert_eq!(median(&mut [4, 1, 3, 2]), Some(2));
    }
}
