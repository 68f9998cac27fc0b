//! Units: what scans name (by EPC, by code, or by the GTIN and serial of
//! a GS1 label), loaded from the site's reference data or created when a
//! receive scan meets a new tag. Every change of a unit (place, state,
//! SKU, code, GS1 keys) bumps its version; a scan carries the version its
//! device saw, and a mismatch is `stale_state`.

use crate::store::sql::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use stockhop::time::UnixMs;

/// Where a unit stands in the warehouse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnitState {
    /// Received (or announced), not yet put away.
    New,
    InStock,
    Dispatched,
    /// Posted missing by an approved count.
    Missing,
}

impl UnitState {
    pub const ALL: [UnitState; 4] = [
        UnitState::New,
        UnitState::InStock,
        UnitState::Dispatched,
        UnitState::Missing,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            UnitState::New => "new",
            UnitState::InStock => "in_stock",
            UnitState::Dispatched => "dispatched",
            UnitState::Missing => "missing",
        }
    }

    pub fn parse(text: &str) -> Option<UnitState> {
        UnitState::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub unit_id: i64,
    pub epc: Option<String>,
    pub code: Option<String>,
    pub sku: Option<String>,
    pub state: UnitState,
    pub bin: Option<String>,
    pub version: u64,
    pub gs1: Gs1Keys,
}

/// What a unit's GS1 labels say of it: the GTIN (14 digits) and serial
/// that name it together (an SGTIN EPC encodes the same two), and the lot
/// and expiry (`YYYY-MM-DD`) of its goods. Each may be unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gs1Keys {
    pub gtin: Option<String>,
    pub serial: Option<String>,
    pub lot: Option<String>,
    pub expiry: Option<String>,
}

/// The version a unit has when the site first records it.
pub const FIRST_VERSION: u64 = 1;

const COLUMNS: &str = "unit_id, epc, code, sku, state, bin, version, gtin, serial, lot, expiry";

/// The unit an EPC names, or else the unit a code names.
pub fn find(
    conn: &Connection,
    epc: Option<&str>,
    code: Option<&str>,
) -> crate::store::sql::Result<Option<Unit>> {
    let read = |column: &str, value: &str| {
        conn.prepare_cached(&format!("SELECT {COLUMNS} FROM units WHERE {column} = ?1"))?
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
    // A code held by a unit with another EPC names a different unit.
    Ok(by_code.filter(|unit| epc.is_none() || unit.epc.is_none()))
}

/// The unit whose GS1 GTIN and serial these are.
pub fn find_gs1(
    conn: &Connection,
    gtin: &str,
    serial: &str,
) -> crate::store::sql::Result<Option<Unit>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM units WHERE gtin = ?1 AND serial = ?2"
    ))?
    .query_row([gtin, serial], from_row)
    .optional()
}

/// The unit a scan names in `bin`, and whether that bin is known, in one
/// statement (one round trip on PostgreSQL): the unit by its EPC, or, when
/// the EPC names none, as [`find`] reads it by its code.
pub fn find_with_bin(
    conn: &Connection,
    bin: &str,
    epc: Option<&str>,
    code: Option<&str>,
) -> crate::store::sql::Result<(bool, Option<Unit>)> {
    let Some(epc) = epc else {
        return Ok((
            crate::ledger::bins::find(conn, bin)?.is_some(),
            find(conn, None, code)?,
        ));
    };
    let (known, by_epc) = conn
        .prepare_cached(&format!(
            "SELECT EXISTS (SELECT 1 FROM bins WHERE bin = ?1), {COLUMNS}
             FROM (SELECT 1) AS one LEFT JOIN units ON units.epc = ?2"
        ))?
        .query_row([bin, epc], |row| {
            let unit = match row.get::<_, Option<i64>>(1)? {
                Some(_) => Some(unit_at(row, 1)?),
                None => None,
            };
            Ok((row.get::<_, bool>(0)?, unit))
        })?;
    match by_epc {
        Some(unit) => Ok((known, Some(unit))),
        None if code.is_some() => Ok((known, find(conn, Some(epc), code)?)),
        None => Ok((known, None)),
    }
}

fn from_row(row: &crate::store::sql::Row<'_>) -> crate::store::sql::Result<Unit> {
    unit_at(row, 0)
}

/// A unit from [`COLUMNS`] read from column `first` on.
fn unit_at(row: &crate::store::sql::Row<'_>, first: usize) -> crate::store::sql::Result<Unit> {
    let state: String = row.get(first + 4)?;
    Ok(Unit {
        unit_id: row.get(first)?,
        epc: row.get(first + 1)?,
        code: row.get(first + 2)?,
        sku: row.get(first + 3)?,
        state: UnitState::parse(&state).ok_or_else(|| {
            crate::store::sql::Error::conversion(first + 4, format!("unknown unit state {state:?}"))
        })?,
        bin: row.get(first + 5)?,
        version: row.get::<_, i64>(first + 6)? as u64,
        gs1: Gs1Keys {
            gtin: row.get(first + 7)?,
            serial: row.get(first + 8)?,
            lot: row.get(first + 9)?,
            expiry: row.get(first + 10)?,
        },
    })
}

/// What a unit is: the fields reference data and the modes set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitFacts<'a> {
    pub epc: Option<&'a str>,
    pub code: Option<&'a str>,
    pub sku: Option<&'a str>,
    pub state: UnitState,
    pub bin: Option<&'a str>,
    /// Its GS1 keys, or `None` to leave those it has.
    pub gs1: Option<&'a Gs1Keys>,
}

/// Records a new unit at [`FIRST_VERSION`].
pub fn create(
    conn: &Connection,
    facts: &UnitFacts<'_>,
    now: UnixMs,
) -> crate::store::sql::Result<Unit> {
    let gs1 = facts.gs1.cloned().unwrap_or_default();
    let unit_id: i64 = conn
        .prepare_cached(
            "INSERT INTO units (epc, code, sku, state, bin, version, first_seen_at,
                                gtin, serial, lot, expiry)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         RETURNING unit_id",
        )?
        .query_row(
            params![
                facts.epc,
                facts.code,
                facts.sku,
                facts.state.as_str(),
                facts.bin,
                FIRST_VERSION as i64,
                now.0,
                gs1.gtin,
                gs1.serial,
                gs1.lot,
                gs1.expiry
            ],
            |row| row.get(0),
        )?;
    Ok(Unit {
        unit_id,
        epc: facts.epc.map(str::to_owned),
        code: facts.code.map(str::to_owned),
        sku: facts.sku.map(str::to_owned),
        state: facts.state,
        bin: facts.bin.map(str::to_owned),
        version: FIRST_VERSION,
        gs1,
    })
}

/// Puts a unit at `bin` in `state`; returns its version after, bumped
/// only when something changed. The update goes with the next statement
/// ([`crate::store::sql::Statement::execute_later`]).
pub fn place(
    conn: &Connection,
    unit: &Unit,
    bin: Option<&str>,
    state: UnitState,
) -> crate::store::sql::Result<u64> {
    if unit.bin.as_deref() == bin && unit.state == state {
        return Ok(unit.version);
    }
    let version = unit.version + 1;
    conn.prepare_cached("UPDATE units SET bin = ?2, state = ?3, version = ?4 WHERE unit_id = ?1")?
        .execute_later(params![unit.unit_id, bin, state.as_str(), version as i64])?;
    Ok(version)
}

/// Rewrites a unit's facts from reference data; returns its version after,
/// bumped only when something changed.
pub fn update(
    conn: &Connection,
    unit: &Unit,
    facts: &UnitFacts<'_>,
) -> crate::store::sql::Result<u64> {
    let gs1 = facts.gs1.unwrap_or(&unit.gs1);
    let same = unit.code.as_deref() == facts.code
        && unit.sku.as_deref() == facts.sku
        && unit.state == facts.state
        && unit.bin.as_deref() == facts.bin
        && &unit.gs1 == gs1;
    if same {
        return Ok(unit.version);
    }
    let version = unit.version + 1;
    conn.prepare_cached(
        "UPDATE units SET code = ?2, sku = ?3, state = ?4, bin = ?5, version = ?6,
                          gtin = ?7, serial = ?8, lot = ?9, expiry = ?10
         WHERE unit_id = ?1",
    )?
    .execute(params![
        unit.unit_id,
        facts.code,
        facts.sku,
        facts.state.as_str(),
        facts.bin,
        version as i64,
        gs1.gtin,
        gs1.serial,
        gs1.lot,
        gs1.expiry
    ])?;
    Ok(version)
}

/// The current state of a unit by id.
pub fn get(conn: &Connection, unit_id: i64) -> crate::store::sql::Result<Option<Unit>> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM units WHERE unit_id = ?1"))?
        .query_row([unit_id], from_row)
        .optional()
}
