//! The printer a handheld's station prints at, and the label a receive
//! with encode queues there: when a receiving handheld's station has a
//! printer, its scan's tag is written and verified at that printer (the
//! ENCODE hop then posts from the job, on a matching read-back) rather
//! than taken as written by the handheld.
//!
//! The ledger's receive rule calls in here inside the scan's transaction,
//! so the job is kept exactly when the scan is applied. This file reads
//! nothing of the ledger's own modules: only the job log's tables.

use stockhop::time::UnixMs;

use super::zpl::{self, Label};
use crate::store::sql::{params, Connection, OptionalExtension};

/// The printer `device_id`'s station prints at, if it has one that is not
/// revoked.
pub fn printer_for(
    conn: &Connection,
    device_id: &str,
) -> crate::store::sql::Result<Option<String>> {
    conn.prepare_cached(
        "SELECT s.printer_id FROM printer_stations s
         WHERE s.device_id = ?1
           AND NOT EXISTS (SELECT 1 FROM device_revocations r WHERE r.device_id = s.printer_id)",
    )?
    .query_row([device_id], |row| row.get(0))
    .optional()
}

/// A unit label to print and encode for a receive scan.
pub struct ReceiveLabel<'a> {
    pub device_id: &'a str,
    /// Derived from the scan's key: the same on every replay.
    pub job_id: &'a str,
    pub epc: &'a str,
    pub sku: Option<&'a str>,
    pub serial: Option<&'a str>,
    /// The unit's GTIN and GS1 serial, printed as its GS1-128.
    pub gs1: Option<zpl::Gs1Key>,
}

/// Queues `label` at the station's printer; returns the printer, or None
/// when the station has none or the EPC cannot be written as a tag (not
/// hex words), in which case the handheld's own encode stands.
pub fn queue_receive_label(
    conn: &Connection,
    label: &ReceiveLabel<'_>,
    now: UnixMs,
) -> crate::store::sql::Result<Option<String>> {
    let Some(printer_id) = printer_for(conn, label.device_id)? else {
        return Ok(None);
    };
    let Ok(epc) = zpl::normalize_epc(label.epc) else {
        return Ok(None);
    };
    let unit = Label::Unit {
        epc: epc.clone(),
        sku: label.sku.map(str::to_owned),
        serial: label.serial.map(str::to_owned),
        gs1: label.gs1.clone(),
        encode: true,
    };
    // A SKU, serial or GS1 key the label cannot carry prints without it.
    let zpl = zpl::format(label.job_id, &unit, 1).or_else(|_| {
        zpl::format(
            label.job_id,
            &Label::Unit {
                epc: epc.clone(),
                sku: None,
                serial: None,
                gs1: None,
                encode: true,
            },
            1,
        )
    });
    let Ok(zpl) = zpl else {
        return Ok(None);
    };
    let request = serde_json::json!({
        "printer_id": printer_id,
        "label": "unit",
        "subject": epc,
        "encode": true,
        "copies": 1,
    })
    .to_string();
    conn.prepare_cached(
        "INSERT INTO print_jobs (job_id, printer_id, request, label, subject, encode, copies,
                                 zpl, state, requested_by, accepted_at)
         VALUES (?1, ?2, ?3, 'unit', ?4, 1, 1, ?5, 'pending', ?6, ?7)
         ON CONFLICT (job_id) DO NOTHING",
    )?
    .execute(params![
        label.job_id,
        printer_id,
        request,
        epc,
        zpl,
        label.device_id,
        now.0
    ])?;
    Ok(Some(printer_id))
}
