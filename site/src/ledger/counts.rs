//! Count sessions: a supervisor opens one for a zone of a location, or for
//! one bin of it (`stockhop-site count open`), which snapshots the units
//! expected there; cycle count scans record what was seen; closing the
//! handheld session closes the count; `count approve` posts the variance,
//! and `count cancel` drops a count opened by mistake (nothing it counted
//! ever posts).
//!
//! A cancelled count is stored closed with `cancelled_at` set (migration
//! 0010 says why) and read as state `cancelled` everywhere.

use crate::store::sql::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use stockhop::time::UnixMs;

pub mod states {
    pub const OPEN: &str = "open";
    pub const CLOSED: &str = "closed";
    pub const APPROVED: &str = "approved";
    /// Read, never stored: a closed count with `cancelled_at` set.
    pub const CANCELLED: &str = "cancelled";
}

/// A count's state as read: `cancelled` for a cancelled one.
const STATE: &str = "CASE WHEN cancelled_at IS NULL THEN state ELSE 'cancelled' END";

/// A count as the handheld caches it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Count {
    pub count_id: String,
    pub location: String,
    pub zone: String,
    /// The one bin counted; null for a count of the whole zone.
    pub bin: Option<String>,
    pub state: String,
}

/// A count with its variance, as `GET /v1/counts/{count_id}` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct CountView {
    pub count_id: String,
    pub location: String,
    pub zone: String,
    /// The one bin counted; null for a count of the whole zone.
    pub bin: Option<String>,
    pub state: String,
    /// Units in the zone (or the bin) when the count opened.
    pub expected: u64,
    /// Distinct tags the count saw.
    pub seen: u64,
    /// Expected, not seen.
    pub missing: Vec<String>,
    /// Seen, not expected.
    pub unexpected: Vec<String>,
}

/// `GET /v1/counts/{count_id}`: a count's figures with the site's clock as
/// they were read, so a handheld can tell which of its own scans they hold
/// by the site's clock alone (its own may be off).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CountFigures {
    #[serde(flatten)]
    pub view: CountView,
    /// The site's clock as the figures were read: a scan whose
    /// `recorded_at` is at or before it is in them (on SQLite, where the
    /// read takes the one connection); one after it is not yet.
    #[schema(value_type = String, format = DateTime)]
    pub as_of: UnixMs,
}

pub fn find(conn: &Connection, count_id: &str) -> crate::store::sql::Result<Option<Count>> {
    conn.prepare_cached(&format!(
        "SELECT count_id, location, zone, bin, {STATE} FROM counts WHERE count_id = ?1"
    ))?
    .query_row([count_id], |row| {
        Ok(Count {
            count_id: row.get(0)?,
            location: row.get(1)?,
            zone: row.get(2)?,
            bin: row.get(3)?,
            state: row.get(4)?,
        })
    })
    .optional()
}

/// An open count that a new count of this place would overlap: one of the
/// same bin or of the whole zone, or, for a count of the whole zone, one
/// of any of its bins. Two overlapping counts would each call the units
/// the other saw missing.
pub fn open_overlapping(
    conn: &Connection,
    location: &str,
    zone: &str,
    bin: Option<&str>,
) -> crate::store::sql::Result<Option<String>> {
    conn.query_row(
        "SELECT count_id FROM counts WHERE location = ?1 AND zone = ?2 AND state = 'open'
           AND (CAST(?3 AS TEXT) IS NULL OR bin IS NULL OR bin = ?3)
         ORDER BY count_no LIMIT 1",
        params![location, zone, bin],
        |row| row.get(0),
    )
    .optional()
}

/// Records a new open count for a zone, or one bin of it, with the
/// snapshot of the units there (new or in stock); returns its site-minted
/// id (`C-000001`).
pub fn insert(
    conn: &Connection,
    location: &str,
    zone: &str,
    bin: Option<&str>,
    now: UnixMs,
) -> crate::store::sql::Result<String> {
    // The id is the count's number, known once the row is in; until the
    // update below it holds a placeholder no other open count can have
    // (one open count per place).
    let count_no: i64 = conn.query_row(
        "INSERT INTO counts (count_id, location, zone, bin, opened_at)
         VALUES ('C-opening:' || ?1 || '/' || ?2 || '/' || coalesce(CAST(?3 AS TEXT), ''),
                 ?1, ?2, ?3, ?4)
         RETURNING count_no",
        params![location, zone, bin, now.0],
        |row| row.get(0),
    )?;
    let count_id = format!("C-{count_no:06}");
    conn.execute(
        "UPDATE counts SET count_id = ?2 WHERE count_no = ?1",
        params![count_no, count_id],
    )?;
    conn.execute(
        "INSERT INTO count_expected (count_id, epc, unit_id, unit_version)
         SELECT ?1, units.epc, units.unit_id, units.version
         FROM units JOIN bins ON units.bin = bins.bin
         WHERE bins.location = ?2 AND bins.zone = ?3 AND units.epc IS NOT NULL
           AND (CAST(?4 AS TEXT) IS NULL OR bins.bin = ?4)
           AND units.state IN ('new', 'in_stock')",
        params![count_id, location, zone, bin],
    )?;
    Ok(count_id)
}

/// Records a tag a count saw, in the bin it was last counted in.
pub fn see(
    conn: &Connection,
    count_id: &str,
    epc: &str,
    bin: Option<&str>,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached(
        "INSERT INTO count_seen (count_id, epc, bin) VALUES (?1, ?2, ?3)
         ON CONFLICT (count_id, epc) DO UPDATE SET bin = coalesce(excluded.bin, count_seen.bin),
                                                   scans = count_seen.scans + 1",
    )?
    .execute(params![count_id, epc, bin])?;
    Ok(())
}

/// Takes back one scan of a tag: it stays seen while other scans count it.
pub fn unsee(conn: &Connection, count_id: &str, epc: &str) -> crate::store::sql::Result<()> {
    let kept = conn
        .prepare_cached(
            "UPDATE count_seen SET scans = scans - 1
             WHERE count_id = ?1 AND epc = ?2 AND scans > 1",
        )?
        .execute([count_id, epc])?;
    if kept == 0 {
        conn.prepare_cached("DELETE FROM count_seen WHERE count_id = ?1 AND epc = ?2")?
            .execute([count_id, epc])?;
    }
    Ok(())
}

/// The counts a supervisor's approval waits on, with when each closed,
/// the longest waiting first (at most `limit`; with `only`, that count
/// alone when it waits): closed, not cancelled (nothing a cancelled count
/// saw ever posts, so it waits for no one) and not settled in the
/// decision log. The status's list, `/metrics` and the workbench all read
/// this one query, so they cannot disagree on what waits.
pub fn awaiting_approval(
    conn: &Connection,
    only: Option<&str>,
    limit: usize,
) -> crate::store::sql::Result<Vec<(String, Option<UnixMs>)>> {
    conn.prepare_cached(
        "SELECT c.count_id, c.closed_at FROM counts c
         WHERE c.state = ?1 AND c.cancelled_at IS NULL
           AND (CAST(?2 AS TEXT) IS NULL OR c.count_id = ?2)
           AND NOT EXISTS
               (SELECT 1 FROM decision_log d WHERE d.decision_id = 'count:' || c.count_id)
         ORDER BY c.closed_at, c.count_no LIMIT ?3",
    )?
    .query_map(params![states::CLOSED, only, limit as i64], |row| {
        Ok((row.get(0)?, row.get::<_, Option<i64>>(1)?.map(UnixMs)))
    })?
    .collect()
}

/// Cancels a count that is open or closed: closed, never to be approved.
/// Returns whether it was cancelled now (false: it already was, or it is
/// approved, or there is no such count).
pub fn cancel(conn: &Connection, count_id: &str, now: UnixMs) -> crate::store::sql::Result<bool> {
    let changed = conn.execute(
        "UPDATE counts SET state = 'closed', closed_at = coalesce(closed_at, ?2),
                           cancelled_at = ?2
         WHERE count_id = ?1 AND state IN ('open', 'closed') AND cancelled_at IS NULL",
        params![count_id, now.0],
    )?;
    Ok(changed == 1)
}

pub fn set_state(
    conn: &Connection,
    count_id: &str,
    from: &str,
    to: &str,
    now: UnixMs,
) -> crate::store::sql::Result<bool> {
    let at = if to == states::APPROVED {
        "approved_at"
    } else {
        "closed_at"
    };
    let changed = conn.execute(
        &format!(
            "UPDATE counts SET state = ?3, {at} = ?4
             WHERE count_id = ?1 AND state = ?2 AND cancelled_at IS NULL"
        ),
        params![count_id, from, to, now.0],
    )?;
    Ok(changed == 1)
}

/// An expected unit the count did not see: its id and its version when
/// the count opened.
pub struct Missing {
    pub epc: String,
    pub unit_id: i64,
    pub unit_version: u64,
}

pub fn missing(conn: &Connection, count_id: &str) -> crate::store::sql::Result<Vec<Missing>> {
    conn.prepare_cached(
        "SELECT epc, unit_id, unit_version FROM count_expected AS e WHERE count_id = ?1
           AND NOT EXISTS (SELECT 1 FROM count_seen AS s WHERE s.count_id = e.count_id AND s.epc = e.epc)
         ORDER BY epc",
    )?
    .query_map([count_id], |row| {
        Ok(Missing {
            epc: row.get(0)?,
            unit_id: row.get(1)?,
            unit_version: row.get::<_, i64>(2)? as u64,
        })
    })?
    .collect()
}

/// Tags seen and not expected, with the bin each was counted in.
pub fn unexpected(
    conn: &Connection,
    count_id: &str,
) -> crate::store::sql::Result<Vec<(String, Option<String>)>> {
    conn.prepare_cached(
        "SELECT epc, bin FROM count_seen AS s WHERE count_id = ?1
           AND NOT EXISTS (SELECT 1 FROM count_expected AS e WHERE e.count_id = s.count_id AND e.epc = s.epc)
         ORDER BY epc",
    )?
    .query_map([count_id], |row| Ok((row.get(0)?, row.get(1)?)))?
    .collect()
}

/// How many units a count's snapshot expects: those new or in stock in
/// its zone (or bin) when it opened.
pub fn expected(conn: &Connection, count_id: &str) -> crate::store::sql::Result<u64> {
    conn.prepare_cached("SELECT count(*) FROM count_expected WHERE count_id = ?1")?
        .query_row([count_id], |row| row.get::<_, i64>(0))
        .map(|n| n as u64)
}

/// A count with its variance as it stands.
pub fn view(conn: &Connection, count_id: &str) -> crate::store::sql::Result<Option<CountView>> {
    let Some(count) = find(conn, count_id)? else {
        return Ok(None);
    };
    let tally = |sql: &str| -> crate::store::sql::Result<u64> {
        conn.prepare_cached(sql)?
            .query_row([count_id], |row| row.get::<_, i64>(0))
            .map(|n| n as u64)
    };
    Ok(Some(CountView {
        expected: expected(conn, count_id)?,
        seen: tally("SELECT count(*) FROM count_seen WHERE count_id = ?1")?,
        missing: missing(conn, count_id)?
            .into_iter()
            .map(|m| m.epc)
            .collect(),
        unexpected: unexpected(conn, count_id)?
            .into_iter()
            .map(|(epc, _)| epc)
            .collect(),
        count_id: count.count_id,
        location: count.location,
        zone: count.zone,
        bin: count.bin,
        state: count.state,
    }))
}
