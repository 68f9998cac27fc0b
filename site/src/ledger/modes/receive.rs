//! Receive: units arriving against a GRN whose QC disposition is accepted.
//! Each scan creates the unit (a tag the site does not know yet, with the
//! SKU the scan names) or claims one the site was told about (state
//! `new`), counts it on its GRN line and records a RECEIVE hop, plus an
//! ENCODE hop when the device wrote the tag; at a station with a printer
//! the tag is written there instead (a print job, whose ENCODE hop posts
//! on a matching read-back). A receive of a GS1 unit label takes its SKU
//! from the label's GTIN (the SKUs' table) and records its lot and expiry
//! on the unit, with the GTIN and serial an SGTIN tag encodes. Closing the
//! session settles
//! the GRN: `complete`, or `needs_resolution` when a line is short or over,
//! until a supervisor runs `grn resolve`.

use crate::store::sql::Connection;
use stockhop::time::UnixMs;

use super::{derived_key, reasons, ScanCtx, Scanned, Undo};
use crate::ledger::grns::{self, states};
use crate::ledger::hops::kinds;
use crate::ledger::units::{self, Gs1Keys, Unit, UnitFacts, UnitState};
use crate::ledger::{labels, skus};
use crate::ledger::{LedgerError, Refusal};
use crate::printers::station;
use stockhop::reason::STALE_STATE;

/// Whether a receive session may open for `grn`.
pub fn open_refusal(
    conn: &Connection,
    grn: Option<&str>,
) -> crate::store::sql::Result<Option<&'static str>> {
    let qc = match grn {
        Some(grn) => grns::qc_of(conn, grn)?,
        None => None,
    };
    Ok((qc.as_deref() != Some(grns::qc::ACCEPTED)).then_some(reasons::GRN_NOT_ACCEPTED))
}

/// The id of the print job a receive scan with encode queues at its
/// station's printer: derived from the scan's key, the same on every
/// replay, so the handheld finds its label by the key it minted.
pub fn print_job_id(device_id: &str, scan_key: &str) -> String {
    derived_key(&[device_id, scan_key, "PRINT"])
}

pub fn scan(conn: &Connection, ctx: &ScanCtx<'_>) -> Result<Scanned, LedgerError> {
    let body = &ctx.body;
    let Some(grn) = ctx.context_value("grn", body.grn.as_deref())? else {
        return Ok(Scanned::Rejected(reasons::GRN_NOT_ACCEPTED));
    };
    // Checked on arrival: a receive scan names its tag.
    let epc = body.epc.as_deref().unwrap_or_default();
    let known = units::find(conn, Some(epc), None)?;
    // Checked on arrival: a GTIN the scan names is one. A tag that is an
    // SGTIN names its own GTIN, as its import and `label read` take it.
    let gtin = body
        .gtin
        .as_deref()
        .and_then(|gtin| labels::gtin(gtin).ok())
        .or_else(|| labels::sgtin_keys(epc).map(|(gtin, _)| gtin));
    let gtin_sku = match &gtin {
        Some(gtin) => skus::by_gtin(conn, gtin)?.map(|sku| sku.sku),
        None => None,
    };
    // The SKU is the site's when it knows the unit's, else the one its
    // label's GTIN names, else the scan's.
    let sku = known
        .as_ref()
        .and_then(|unit| unit.sku.clone())
        .or(gtin_sku)
        .or_else(|| body.sku.clone());
    let Some(sku) = sku else {
        return Ok(Scanned::Rejected(reasons::UNKNOWN_UNIT));
    };
    if let Some(unit) = &known {
        if ctx.is_stale(unit) {
            return Ok(Scanned::Rejected(STALE_STATE));
        }
        if unit.state != UnitState::New || grns::was_received(conn, unit.unit_id)? {
            return Ok(Scanned::Rejected(reasons::ALREADY_RECEIVED));
        }
    }
    let Some((expected, received)) = grns::line(conn, &grn, &sku)? else {
        return Ok(Scanned::Rejected(reasons::NOT_ON_GRN));
    };
    if received >= expected {
        return Ok(Scanned::Rejected(reasons::EXCESS_LINE));
    }
    let gs1 = received_keys(
        known.as_ref().map(|unit| &unit.gs1),
        epc,
        gtin,
        body.lot.as_deref(),
        body.expiry.as_deref(),
    );
    let unit = match known {
        Some(unit) => {
            let facts = UnitFacts {
                epc: unit.epc.as_deref(),
                code: unit.code.as_deref(),
                sku: Some(&sku),
                state: unit.state,
                bin: unit.bin.as_deref(),
                gs1: Some(&gs1),
            };
            let version = units::update(conn, &unit, &facts)?;
            Unit {
                version,
                sku: Some(sku.clone()),
                gs1,
                ..unit
            }
        }
        None => units::create(
            conn,
            &UnitFacts {
                epc: Some(epc),
                code: None,
                sku: Some(&sku),
                state: UnitState::New,
                bin: None,
                gs1: Some(&gs1),
            },
            ctx.now,
        )?,
    };
    let bin = unit.bin.as_deref();
    let mut hop_ids =
        vec![ctx.append(conn, kinds::RECEIVE, Some(&unit), bin, Some(unit.version))?];
    grns::receive(conn, &grn, &sku, unit.unit_id, hop_ids[0])?;
    // At a station with a printer, the tag is written and read back there:
    // its ENCODE hop posts from the print job, on a matching read-back.
    let at_printer = body.encode
        && station::queue_receive_label(
            conn,
            &station::ReceiveLabel {
                device_id: ctx.hop.device_id,
                job_id: &print_job_id(ctx.hop.device_id, ctx.hop.key),
                epc: unit.epc.as_deref().unwrap_or(epc),
                sku: unit.sku.as_deref(),
                serial: unit.code.as_deref(),
                gs1: crate::printers::zpl::Gs1Key::of(&unit.gs1),
            },
            ctx.now,
        )?
        .is_some();
    if body.encode && !at_printer {
        let key = derived_key(&[ctx.hop.device_id, ctx.hop.key, kinds::ENCODE]);
        hop_ids.push(ctx.append_keyed(
            conn,
            &key,
            kinds::ENCODE,
            Some(&unit),
            bin,
            Some(unit.version),
        )?);
    }
    Ok(Scanned::Applied(hop_ids))
}

/// A received unit's GS1 keys: the GTIN and serial its tag encodes when it
/// is an SGTIN (else the GTIN its label names), the lot and expiry its
/// label names; each the unit's own where the scan says nothing.
fn received_keys(
    before: Option<&Gs1Keys>,
    epc: &str,
    gtin: Option<String>,
    lot: Option<&str>,
    expiry: Option<&str>,
) -> Gs1Keys {
    let before = before.cloned().unwrap_or_default();
    let (gtin, serial) = match labels::sgtin_keys(epc) {
        Some((gtin, serial)) => (Some(gtin), Some(serial)),
        None => (gtin.or(before.gtin), before.serial),
    };
    Gs1Keys {
        gtin,
        serial,
        lot: lot.map(str::to_owned).or(before.lot),
        expiry: expiry.map(str::to_owned).or(before.expiry),
    }
}

/// What closing a receive session computes: the GRN's state from its lines.
pub fn settle(conn: &Connection, grn: &str) -> crate::store::sql::Result<()> {
    grns::settle(conn, grn).map(drop)
}

/// `stockhop-site grn resolve`, the admin API's and the workbench's: a
/// supervisor accepts a GRN's short and excess lines as they stand. Each
/// line is booked as an ADJUST hop with its SKU and quantity (received −
/// expected) and the GRN is complete: one operation whoever resolves it,
/// under keys derived from the GRN's decision, so it books once. Answers
/// the hops.
pub fn resolve(
    conn: &Connection,
    grn: &str,
    note: &str,
    now: UnixMs,
) -> Result<Vec<i64>, LedgerError> {
    let not_found = || {
        LedgerError::Refused(Refusal::new(
            404,
            crate::ledger::codes::NOT_FOUND,
            format!("no GRN {grn:?}"),
        ))
    };
    let found = grns::find(conn, grn)?.ok_or_else(not_found)?;
    if found.state != states::NEEDS_RESOLUTION {
        return Err(LedgerError::Refused(Refusal::new(
            409,
            crate::ledger::codes::NOTHING_TO_RESOLVE,
            format!("GRN {grn} is {}, not needs_resolution", found.state),
        )));
    }
    let key_base = crate::ledger::decision_log::grn_id(grn);
    crate::ledger::corrections::book_grn(conn, grn, &key_base, note, now)
}

/// Undoes a receive: the unit leaves its GRN line (the line counts one
/// less and the unit may be received again); a GRN its session settled
/// is settled again from its lines. The unit itself stays, new. An ENCODE
/// the scan posted stays too: the tag was written. `stale_state` when the
/// unit changed since (put away, say).
pub fn undo(conn: &Connection, undo: Undo<'_>) -> Result<Scanned, LedgerError> {
    undo.not_undone_yet(conn)?;
    let unit = undo.unit()?;
    if undo.moved_since(unit) {
        return Ok(Scanned::Rejected(STALE_STATE));
    }
    let Some(grn) = grns::unreceive(conn, undo.original.hop_id, unit.unit_id)? else {
        return Err(LedgerError::Corrupt(format!(
            "receive hop {} counted on no GRN line",
            undo.original.hop_id
        )));
    };
    if grns::find(conn, &grn)?.is_some_and(|found| found.state != states::OPEN) {
        grns::settle(conn, &grn)?;
    }
    undo.post(
        conn,
        unit.bin.as_deref(),
        unit.bin.as_deref(),
        Some(unit.version),
    )
}
