//! Put-away: a unit that is new or in stock goes into the bin whose label
//! was scanned, and is in stock there. One ZONE_CHANGE hop per scan; a
//! unit already in stock in that bin is observed there and keeps its
//! version.

use crate::sql::Connection;

use super::{reasons, ScanCtx, Scanned};
use crate::ledger::hops::kinds;
use crate::ledger::sync::reasons::STALE_STATE;
use crate::ledger::units::{self, Unit, UnitState};
use crate::ledger::LedgerError;

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
