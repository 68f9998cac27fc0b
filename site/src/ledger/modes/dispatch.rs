//! Dispatch verify: every tag on the dock is checked against a manifest
//! that is packing or dispatched. A tag on the manifest is verified and
//! its unit dispatched (one DISPATCH hop); a second verify of the same tag
//! applies with no new hop. The manifest is verified when every unit is.

use crate::store::sql::Connection;

use super::{reasons, ScanCtx, Scanned, Undo};
use crate::ledger::hops::kinds;
use crate::ledger::manifests::{self, states};
use crate::ledger::units::{self, Unit, UnitState};
use crate::ledger::LedgerError;
use stockhop::reason::STALE_STATE;

/// Whether a dispatch verify session may open for `manifest`.
pub fn open_refusal(
    conn: &Connection,
    manifest: Option<&str>,
) -> crate::store::sql::Result<Option<&'static str>> {
    let state = match manifest {
        Some(manifest) => manifests::state_of(conn, manifest)?,
        None => None,
    };
    let ready = matches!(state.as_deref(), Some(states::PACKING | states::DISPATCHED));
    Ok((!ready).then_some(reasons::MANIFEST_NOT_READY))
}

pub fn scan(conn: &Connection, ctx: &ScanCtx<'_>) -> Result<Scanned, LedgerError> {
    let body = &ctx.body;
    let Some(manifest) = ctx.context_value("manifest", body.manifest.as_deref())? else {
        return Ok(Scanned::Rejected(reasons::MANIFEST_NOT_READY));
    };
    // Checked on arrival: a dispatch scan names its tag.
    let epc = body.epc.as_deref().unwrap_or_default();
    let Some(verified) = manifests::unit(conn, &manifest, epc)? else {
        return Ok(Scanned::Rejected(reasons::NOT_ON_MANIFEST));
    };
    if verified {
        return Ok(Scanned::Applied(vec![]));
    }
    // The import puts only known units on a manifest.
    let unit = units::find(conn, Some(epc), None)?
        .ok_or_else(|| LedgerError::Corrupt(format!("manifest unit {epc} is not a unit")))?;
    if ctx.is_stale(&unit) {
        return Ok(Scanned::Rejected(STALE_STATE));
    }
    // A dispatched unit has left its bin.
    let version = units::place(conn, &unit, None, UnitState::Dispatched)?;
    manifests::verify(conn, &manifest, epc)?;
    let dispatched = Unit {
        state: UnitState::Dispatched,
        bin: None,
        version,
        ..unit.clone()
    };
    let hop_id = ctx.append(
        conn,
        kinds::DISPATCH,
        Some(&dispatched),
        unit.bin.as_deref(),
        Some(version),
    )?;
    Ok(Scanned::Applied(vec![hop_id]))
}

/// Undoes a verify: the unit is back in the bin it left, in stock there
/// (new if it had none), and its manifest line unverified; a manifest the
/// verify completed goes back to the state it was verified from.
/// `stale_state` when the unit changed since.
pub fn undo(
    conn: &Connection,
    undo: Undo<'_>,
    manifest: Option<String>,
) -> Result<Scanned, LedgerError> {
    let unit = undo.unit()?;
    if undo.moved_since(unit) {
        return Ok(Scanned::Rejected(STALE_STATE));
    }
    let (Some(manifest), Some(epc)) = (manifest, unit.epc.as_deref()) else {
        return Err(LedgerError::Corrupt(format!(
            "dispatch hop {} names no manifest or tag",
            undo.original.hop_id
        )));
    };
    manifests::unverify(conn, &manifest, epc)?;
    let back_to = undo.original.from_bin.as_deref();
    let state = match back_to {
        Some(_) => UnitState::InStock,
        None => UnitState::New,
    };
    let version = units::place(conn, unit, back_to, state)?;
    undo.post(conn, unit.bin.as_deref(), back_to, Some(version))
}
