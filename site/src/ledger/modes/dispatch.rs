//! Dispatch verify: every tag on the dock is checked against a manifest
//! that is packing or dispatched. A tag on the manifest is verified and
//! its unit dispatched (one DISPATCH hop); a second verify of the same tag
//! applies with no new hop. A pallet's label (its SSCC) verifies every
//! unit the manifest puts on that pallet, one DISPATCH hop each. The
//! manifest is verified when every unit is.

use crate::store::sql::Connection;

use super::{derived_key, reasons, ScanCtx, Scanned, Undo};
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
    if let (Some(sscc), None) = (body.sscc.as_deref(), body.epc.as_deref()) {
        return pallet(conn, ctx, &manifest, sscc);
    }
    // Checked on arrival: a dispatch scan names its tag or its pallet.
    let epc = body.epc.as_deref().unwrap_or_default();
    let Some(verified) = manifests::unit(conn, &manifest, epc)? else {
        return Ok(Scanned::Rejected(reasons::NOT_ON_MANIFEST));
    };
    if verified {
        return Ok(Scanned::Applied(vec![]));
    }
    // The import puts only known units on a manifest.
    let unit = manifest_unit(conn, epc)?;
    if ctx.is_stale(&unit) {
        return Ok(Scanned::Rejected(STALE_STATE));
    }
    let hop_id = dispatch(conn, ctx, &manifest, &unit, ctx.hop.key)?;
    Ok(Scanned::Applied(vec![hop_id]))
}

/// A verify of the pallet `sscc`: each of its units on the manifest not
/// yet verified is dispatched, one hop each, the first under the scan's
/// key and the others under keys derived from it and their tags.
/// `not_on_manifest` when the manifest puts no unit on the pallet. A
/// pallet's label carries no unit's version, so none is stale.
fn pallet(
    conn: &Connection,
    ctx: &ScanCtx<'_>,
    manifest: &str,
    sscc: &str,
) -> Result<Scanned, LedgerError> {
    let on_pallet = manifests::pallet(conn, manifest, sscc)?;
    if on_pallet.is_empty() {
        return Ok(Scanned::Rejected(reasons::NOT_ON_MANIFEST));
    }
    let mut hop_ids = Vec::new();
    for (epc, verified) in on_pallet {
        if verified {
            continue;
        }
        let unit = manifest_unit(conn, &epc)?;
        let key = match hop_ids.is_empty() {
            true => ctx.hop.key.to_owned(),
            false => derived_key(&[ctx.hop.device_id, ctx.hop.key, &epc]),
        };
        hop_ids.push(dispatch(conn, ctx, manifest, &unit, &key)?);
    }
    Ok(Scanned::Applied(hop_ids))
}

/// The unit of a manifest line: the import puts only known units on a
/// manifest.
fn manifest_unit(conn: &Connection, epc: &str) -> Result<Unit, LedgerError> {
    units::find(conn, Some(epc), None)?
        .ok_or_else(|| LedgerError::Corrupt(format!("manifest unit {epc} is not a unit")))
}

/// Verifies `unit` on `manifest` and dispatches it: it leaves its bin.
/// Answers its DISPATCH hop, appended under `key`.
fn dispatch(
    conn: &Connection,
    ctx: &ScanCtx<'_>,
    manifest: &str,
    unit: &Unit,
    key: &str,
) -> Result<i64, LedgerError> {
    let epc = unit.epc.as_deref().unwrap_or_default();
    let version = units::place(conn, unit, None, UnitState::Dispatched)?;
    manifests::verify(conn, manifest, epc)?;
    let dispatched = Unit {
        state: UnitState::Dispatched,
        bin: None,
        version,
        ..unit.clone()
    };
    Ok(ctx.append_keyed(
        conn,
        key,
        kinds::DISPATCH,
        Some(&dispatched),
        unit.bin.as_deref(),
        Some(version),
    )?)
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
