//! Summaries of rejected items, kept as items are written: what the
//! site's status, decisions and metrics show of rejections, read from a
//! few rows instead of by counting receipts (a handheld scanning tags the
//! site does not know leaves thousands a minute).
//!
//! `rejection_summary` holds one row a device and reason: the rejected
//! items, those of them not settled in the decision log (the correction
//! list's total) and the newest one's receipt instant. `rejection_minutes`
//! holds a device's rejected items a minute of receipt, for the rate over
//! the last [`WINDOW_MINUTES`]. A rejected item is one whose receipt holds
//! a final answer with outcome `rejected`; both tables change in the
//! transaction that writes that answer ([`rejected`]) or settles its
//! decision ([`settled`]), so they always equal a count over the receipts.

use crate::store::sql::{params, Connection};
use stockhop::time::UnixMs;

/// The window a device's recent rejections are counted over, in minutes
/// of receipt (the current minute and the ones before it): long enough
/// that a burst at one bad label is not a flood, short enough that the
/// view (polled every 5 s) shows a flood while it lasts and clears soon
/// after it stops.
pub const WINDOW_MINUTES: i64 = 5;

/// Rejected items within [`WINDOW_MINUTES`] at which a device is shown and
/// alerted as rejecting: 20 a minute, one every 3 s without a break. A
/// picker's ordinary refusals (a bin label the site lacks, a late undo)
/// come a few an hour; this many comes from a device scanning tags the
/// site does not know, or another site's, over and over.
pub const REJECTING_AT_LEAST: i64 = 100;

/// How long a minute's row is kept, in minutes: twice the window, so a
/// read at any instant of the current minute finds the window whole.
pub const KEEP_MINUTES: i64 = 2 * WINDOW_MINUTES;

const MINUTE_MS: i64 = 60_000;

/// The minute of receipt an instant falls in.
pub fn minute_of(at: UnixMs) -> i64 {
    at.0.div_euclid(MINUTE_MS)
}

/// Rejected items of one reason, as the status shows them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ReasonCount {
    /// The ledger's reason code; empty for an answer that named none.
    pub reason: String,
    pub rejected: i64,
    /// Of them, not settled yet.
    pub unsettled: i64,
}

/// One device's rejected items.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct DeviceCount {
    pub device_id: String,
    pub rejected: i64,
    pub unsettled: i64,
    #[schema(value_type = String, format = DateTime)]
    pub last_rejected_at: UnixMs,
    /// Rejected within the last [`WINDOW_MINUTES`].
    pub recent: i64,
}

/// A device that keeps producing rejections: [`REJECTING_AT_LEAST`] or
/// more within the last [`WINDOW_MINUTES`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Rejecting {
    pub device_id: String,
    /// Rejected within the window.
    pub recent: i64,
    /// The window's rate, per minute (rounded down).
    pub per_minute: i64,
    /// The reason most of its rejected items carry (all time), empty when
    /// they named none.
    pub top_reason: String,
    #[schema(value_type = String, format = DateTime)]
    pub last_rejected_at: UnixMs,
}

/// What the status shows of rejected items.
#[derive(
    Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
pub struct Rejections {
    /// Rejected items in all, settled or not.
    pub rejected: i64,
    /// Of them, not settled yet (the correction list's total).
    pub unsettled: i64,
    /// The newest rejected item's receipt instant; null with none.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_rejected_at: Option<UnixMs>,
    /// By reason code, by code.
    pub by_reason: Vec<ReasonCount>,
    /// By device, by id.
    pub by_device: Vec<DeviceCount>,
    /// The window `recent` counts over, in minutes ([`WINDOW_MINUTES`]).
    pub window_minutes: i64,
    /// Rejected items within the window that make a device rejecting
    /// ([`REJECTING_AT_LEAST`]).
    pub rejecting_at_least: i64,
    /// Devices rejecting now, the most recent rejections first.
    pub rejecting: Vec<Rejecting>,
}

/// Counts a rejected item (device scope `device_id`, key `key`) received
/// at `received_at`, in the transaction that writes its final answer. One
/// settled before it was rejected counts as settled.
pub fn rejected(
    conn: &Connection,
    device_id: &str,
    key: &str,
    reason: Option<&str>,
    received_at: UnixMs,
) -> crate::store::sql::Result<()> {
    let decision_id = super::decision_log::item_id(device_id, key);
    conn.prepare_cached(
        "INSERT INTO rejection_summary (device_id, reason, rejected, unsettled, last_received_at)
         VALUES (?1, ?2, 1,
                 CASE WHEN EXISTS (SELECT 1 FROM decision_log WHERE decision_id = ?3)
                      THEN 0 ELSE 1 END,
                 ?4)
         ON CONFLICT (device_id, reason) DO UPDATE SET
           rejected = rejection_summary.rejected + 1,
           unsettled = rejection_summary.unsettled + excluded.unsettled,
           last_received_at = CASE
             WHEN excluded.last_received_at > rejection_summary.last_received_at
             THEN excluded.last_received_at ELSE rejection_summary.last_received_at END",
    )?
    .execute_later(params![
        device_id,
        reason.unwrap_or_default(),
        decision_id,
        received_at.0
    ])?;
    let minute = minute_of(received_at);
    conn.prepare_cached(
        "INSERT INTO rejection_minutes (device_id, minute, rejected) VALUES (?1, ?2, 1)
         ON CONFLICT (device_id, minute) DO UPDATE SET
           rejected = rejection_minutes.rejected + 1",
    )?
    .execute_later(params![device_id, minute])?;
    conn.prepare_cached("DELETE FROM rejection_minutes WHERE device_id = ?1 AND minute < ?2")?
        .execute_later(params![device_id, minute - KEEP_MINUTES])
}

/// Counts the decision `decision_id` settled, in the transaction that logs
/// it: a rejected item's leaves the unsettled count. Anything else (a
/// count, a GRN, a terminal record, an item that was not rejected) changes
/// nothing.
pub fn settled(conn: &Connection, decision_id: &str) -> crate::store::sql::Result<()> {
    let Some(super::decision_log::Subject::Item { device_id, key }) =
        super::decision_log::Subject::parse(decision_id)
    else {
        return Ok(());
    };
    conn.prepare_cached(
        "UPDATE rejection_summary SET unsettled = unsettled - 1
         WHERE device_id = ?1
           AND reason = (SELECT coalesce(json_extract(r.response, '$.reason'), '')
                         FROM receipts r
                         WHERE r.scope = ?1 AND r.key = ?2 AND r.state = 'final'
                           AND CASE WHEN json_valid(r.response)
                                    THEN json_extract(r.response, '$.outcome') END = 'rejected')",
    )?
    .execute(params![device_id, key])?;
    Ok(())
}

/// Rejected items not settled yet: the correction list's total.
pub fn unsettled(conn: &Connection) -> crate::store::sql::Result<i64> {
    conn.prepare_cached(
        "SELECT CAST(coalesce(sum(unsettled), 0) AS BIGINT) FROM rejection_summary",
    )?
    .query_row([], |row| row.get(0))
}

/// Every summary at `now`.
pub fn summary(conn: &Connection, now: UnixMs) -> crate::store::sql::Result<Rejections> {
    let rows = conn
        .prepare_cached(
            "SELECT device_id, reason, rejected, unsettled, last_received_at
             FROM rejection_summary ORDER BY device_id, reason",
        )?
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, i64>(3)?,
                row.get::<_, i64>(4)?,
            ))
        })?
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    let recent = conn
        .prepare_cached(
            "SELECT device_id, CAST(sum(rejected) AS BIGINT) FROM rejection_minutes
             WHERE minute > ?1 AND minute <= ?2 GROUP BY device_id",
        )?
        .query_map(
            params![minute_of(now) - WINDOW_MINUTES, minute_of(now)],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)),
        )?
        .collect::<crate::store::sql::Result<std::collections::HashMap<_, _>>>()?;
    let mut out = Rejections {
        window_minutes: WINDOW_MINUTES,
        rejecting_at_least: REJECTING_AT_LEAST,
        ..Rejections::default()
    };
    let mut reasons = std::collections::BTreeMap::<String, ReasonCount>::new();
    // The reason most of each device's items carry, with its count.
    let mut top = std::collections::HashMap::<String, (i64, String)>::new();
    for (device_id, reason, rejected, unsettled, last) in rows {
        out.rejected += rejected;
        out.unsettled += unsettled;
        out.last_rejected_at = out.last_rejected_at.max(Some(UnixMs(last)));
        let entry = reasons
            .entry(reason.clone())
            .or_insert_with(|| ReasonCount {
                reason: reason.clone(),
                rejected: 0,
                unsettled: 0,
            });
        entry.rejected += rejected;
        entry.unsettled += unsettled;
        let best = top.entry(device_id.clone()).or_insert((0, String::new()));
        if rejected > best.0 {
            *best = (rejected, reason);
        }
        match out.by_device.last_mut() {
            Some(device) if device.device_id == device_id => {
                device.rejected += rejected;
                device.unsettled += unsettled;
                device.last_rejected_at = device.last_rejected_at.max(UnixMs(last));
            }
            _ => out.by_device.push(DeviceCount {
                recent: recent.get(&device_id).copied().unwrap_or(0),
                device_id,
                rejected,
                unsettled,
                last_rejected_at: UnixMs(last),
            }),
        }
    }
    out.by_reason = reasons.into_values().collect();
    out.rejecting = out
        .by_device
        .iter()
        .filter(|device| device.recent >= REJECTING_AT_LEAST)
        .map(|device| Rejecting {
            device_id: device.device_id.clone(),
            recent: device.recent,
            per_minute: device.recent / WINDOW_MINUTES,
            top_reason: top
                .get(&device.device_id)
                .map(|(_, reason)| reason.clone())
                .unwrap_or_default(),
            last_rejected_at: device.last_rejected_at,
        })
        .collect();
    out.rejecting
        .sort_by(|a, b| (b.recent, &a.device_id).cmp(&(a.recent, &b.device_id)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_are_whole_minutes_of_receipt() {
        assert_eq!(minute_of(UnixMs(0)), 0);
        assert_eq!(minute_of(UnixMs(59_999)), 0);
        assert_eq!(minute_of(UnixMs(60_000)), 1);
        assert_eq!(minute_of(UnixMs(-1)), -1);
    }
}
