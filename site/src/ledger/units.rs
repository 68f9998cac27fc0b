//! Units: what scans name (by EPC or by code), created the first time a
//! scan names one. Every change of place bumps the unit's version; a scan
//! carries the version its device saw, and a mismatch is `stale_state`.

use rusqlite::{params, Connection, OptionalExtension};
use stockhop::time::UnixMs;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub unit_id: i64,
    pub epc: Option<String>,
    pub bin: Option<String>,
    pub version: u64,
}

/// A unit's version before the ledger has seen it.
pub const FIRST_SIGHT_VERSION: u64 = 0;

/// The unit an EPC names, or else the unit a code names.
pub fn find(
    conn: &Connection,
    epc: Option<&str>,
    code: Option<&str>,
) -> rusqlite::Result<Option<Unit>> {
    let read = |column: &str, value: &str| {
        conn.prepare_cached(&format!(
            "SELECT unit_id, epc, bin, version FROM units WHERE {column} = ?1"
        ))?
        .query_row([value], from_row)
        .optional()
    };
    if let Some(epc) = epc {
        if let Some(unit) = read("epc", epc)? {
            return Ok(Some(unit));
        }
    }
    let by_code = match code {
        Some(code) => read("code", code)?,
        None => None,
    };
    // A code held by a unit with another EPC names a different unit: the
    // scan then creates its own, and the code's uniqueness refuses it.
    Ok(by_code.filter(|unit| epc.is_none() || unit.epc.is_none()))
}

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Unit> {
    Ok(Unit {
        unit_id: row.get(0)?,
        epc: row.get(1)?,
        bin: row.get(2)?,
        version: row.get::<_, i64>(3)? as u64,
    })
}

/// Creates a unit on first sight, already moved to `bin` when the scan
/// names one (version 1), else with no place (version 0).
pub fn create(
    conn: &Connection,
    epc: Option<&str>,
    code: Option<&str>,
    bin: Option<&str>,
    now: UnixMs,
) -> rusqlite::Result<Unit> {
    let version = FIRST_SIGHT_VERSION + u64::from(bin.is_some());
    conn.prepare_cached(
        "INSERT INTO units (epc, code, bin, version, first_seen_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![epc, code, bin, version as i64, now.0])?;
    Ok(Unit {
        unit_id: conn.last_insert_rowid(),
        epc: epc.map(str::to_owned),
        bin: bin.map(str::to_owned),
        version,
    })
}

/// Moves a unit to `bin` and returns its new version.
pub fn move_to(conn: &Connection, unit: &Unit, bin: Option<&str>) -> rusqlite::Result<u64> {
    let version = unit.version + 1;
    conn.prepare_cached("UPDATE units SET bin = ?2, version = ?3 WHERE unit_id = ?1")?
        .execute(params![unit.unit_id, bin, version as i64])?;
    Ok(version)
}

/// The current state of a unit by id.
pub fn get(conn: &Connection, unit_id: i64) -> rusqlite::Result<Option<Unit>> {
    conn.prepare_cached("SELECT unit_id, epc, bin, version FROM units WHERE unit_id = ?1")?
        .query_row([unit_id], from_row)
        .optional()
}
