//! Count sessions: a supervisor opens one for a zone of a location
//! (`stockhop-site count open`), which snapshots the units expected there;
//! cycle count scans record what was seen; closing the handheld session
//! closes the count; `count approve` posts the variance.

use crate::sql::{params, Connection, OptionalExtension};
use serde::Serialize;
use stockhop::time::UnixMs;

pub mod states {
    pub const OPEN: &str = "open";
    pub const CLOSED: &str = "closed";
    pub const APPROVED: &str = "approved";
}

/// A count as the handheld caches it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Count {
    pub count_id: String,
    pub location: String,
    pub zone: String,
    pub state: String,
}

/// A count with its variance, as `GET /v1/counts/{count_id}` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CountView {
    pub count_id: String,
    pub location: String,
    pub zone: String,
    pub state: String,
    /// Units in the zone when the count opened.
    pub expected: u64,
    /// Distinct tags the count saw.
    pub seen: u64,
    /// Expected, not seen.
    pub missing: Vec<String>,
    /// Seen, not expected.
    pub unexpected: Vec<String>,
}

pub fn find(conn: &Connection, count_id: &str) -> crate::sql::Result<Option<Count>> {
    conn.prepare_cached("SELECT count_id, location, zone, state FROM counts WHERE count_id = ?1")?
        .query_row([count_id], |row| {
            Ok(Count {
                count_id: row.get(0)?,
                location: row.get(1)?,
                zone: row.get(2)?,
                state: row.get(3)?,
            })
        })
        .optional()
}

/// Whether a count is open for this zone already.
pub fn open_in(
    conn: &Connection,
    location: &str,
    zone: &str,
) -> crate::sql::Result<Option<String>> {
    conn.query_row(
        "SELECT count_id FROM counts WHERE location = ?1 AND zone = ?2 AND state = 'open'",
        [location, zone],
        |row| row.get(0),
    )
    .optional()
}

/// Records a new open count for a zone with the snapshot of the units in
/// its bins (new or in stock); returns its site-minted id (`C-000001`).
pub fn insert(
    conn: &Connection,
    location: &str,
    zone: &str,
    now: UnixMs,
) -> crate::sql::Result<String> {
    // The id is the count's number, known once the row is in; until the
    // update below it holds a placeholder no other open count can have (one
    // open count per zone).
    let count_no: i64 = conn.query_row(
        "INSERT INTO counts (count_id, location, zone, opened_at)
         VALUES ('C-opening:' || ?1 || '/' || ?2, ?1, ?2, ?3)
         RETURNING count_no",
        params![location, zone, now.0],
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
           AND units.state IN ('new', 'in_stock')",
        params![count_id, location, zone],
    )?;
    Ok(count_id)
}

/// Records a tag a count saw, in the bin it was last counted in.
pub fn see(
    conn: &Connection,
    count_id: &str,
    epc: &str,
    bin: Option<&str>,
) -> crate::sql::Result<()> {
    conn.prepare_cached(
        "INSERT INTO count_seen (count_id, epc, bin) VALUES (?1, ?2, ?3)
         ON CONFLICT (count_id, epc) DO UPDATE SET bin = coalesce(excluded.bin, count_seen.bin)",
    )?
    .execute(params![count_id, epc, bin])?;
    Ok(())
}

pub fn set_state(
    conn: &Connection,
    count_id: &str,
    from: &str,
    to: &str,
    now: UnixMs,
) -> crate::sql::Result<bool> {
    let at = if to == states::APPROVED {
        "approved_at"
    } else {
        "closed_at"
    };
    let changed = conn.execute(
        &format!("UPDATE counts SET state = ?3, {at} = ?4 WHERE count_id = ?1 AND state = ?2"),
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

pub fn missing(conn: &Connection, count_id: &str) -> crate::sql::Result<Vec<Missing>> {
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
) -> crate::sql::Result<Vec<(String, Option<String>)>> {
    conn.prepare_cached(
        "SELECT epc, bin FROM count_seen AS s WHERE count_id = ?1
           AND NOT EXISTS (SELECT 1 FROM count_expected AS e WHERE e.count_id = s.count_id AND e.epc = s.epc)
         ORDER BY epc",
    )?
    .query_map([count_id], |row| Ok((row.get(0)?, row.get(1)?)))?
    .collect()
}

/// A count with its variance as it stands.
pub fn view(conn: &Connection, count_id: &str) -> crate::sql::Result<Option<CountView>> {
    let Some(count) = find(conn, count_id)? else {
        return Ok(None);
    };
    let tally = |sql: &str| -> crate::sql::Result<u64> {
        conn.prepare_cached(sql)?
            .query_row([count_id], |row| row.get::<_, i64>(0))
            .map(|n| n as u64)
    };
    Ok(Some(CountView {
        expected: tally("SELECT count(*) FROM count_expected WHERE count_id = ?1")?,
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
        state: count.state,
    }))
}
