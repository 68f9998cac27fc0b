//! Put-away: a unit that is new or in stock goes into the bin whose label
//! was scanned, and is in stock there. One ZONE_CHANGE hop per scan; a
//! unit already in stock in that bin is observed there and keeps its
//! version.

use crate::store::sql::Connection;

use super::{reasons, ScanCtx, Scanned, Undo};
use crate::ledger::hops::kinds;
use crate::ledger::units::{self, Unit, UnitState};
use crate::ledger::LedgerError;
use stockhop::reason::STALE_STATE;

pub fn scan(conn: &Connection, ctx: &ScanCtx<'_>) -> Result<Scanned, LedgerError> {
    let body = &ctx.body;
    // Checked on arrival: a put-away scan always names its bin.
    let bin = body.bin.as_deref().unwrap_or_default();
    let (bin_known, unit) =
        units::find_with_bin(conn, bin, body.epc.as_deref(), body.code.as_deref())?;
    if !bin_known {
        return Ok(Scanned::Rejected(reasons::UNKNOWN_BIN));
    }
    let Some(unit) = unit else {
        return Ok(Scanned::Rejected(reasons::UNKNOWN_UNIT));
    };
    // A stale cache first: the device may think the unit is still in stock.
    if ctx.is_stale(&unit) {
        return Ok(Scanned::Rejected(STALE_STATE));
    }
    if !matches!(unit.state, UnitState::New | UnitState::InStock) {
        return Ok(Scanned::Rejected(reasons::UNIT_STATE));
    }
    let version = units::place(conn, &unit, Some(bin), UnitState::InStock)?;
    let placed = Unit {
        bin: Some(bin.to_owned()),
        state: UnitState::InStock,
        version,
        ..unit.clone()
    };
    let hop_id = ctx.append(
        conn,
        kinds::ZONE_CHANGE,
        Some(&placed),
        unit.bin.as_deref(),
        Some(version),
    )?;
    Ok(Scanned::Applied(vec![hop_id]))
}

/// Undoes a put-away: the unit goes back where the scan found it, in stock
/// there, or new again if it had no bin; `stale_state` if it moved since.
pub fn undo(conn: &Connection, undo: Undo<'_>) -> Result<Scanned, LedgerError> {
    let unit = undo.unit()?;
    if undo.moved_since(unit) {
        return Ok(Scanned::Rejected(STALE_STATE));
    }
    let back_to = undo.original.from_bin.as_deref();
    if back_to == undo.original.to_bin.as_deref() {
        // The scan observed the unit where it was: nothing to move back.
        return undo.post(
            conn,
            unit.bin.as_deref(),
            unit.bin.as_deref(),
            Some(unit.version),
        );
    }
    let state = match back_to {
        Some(_) => UnitState::InStock,
        None => UnitState::New,
    };
    let version = units::place(conn, unit, back_to, state)?;
    undo.post(conn, unit.bin.as_deref(), back_to, Some(version))
}
