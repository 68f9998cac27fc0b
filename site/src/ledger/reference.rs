//! The site's reference data as handhelds cache it: bins, units, GRNs with
//! their lines, count sessions, operators and SKUs' GTINs, read in pages
//! and then as changes.
//!
//! Every cached row carries the site-wide change number of its last change
//! (`ref_seq`, set by the schema's triggers), so "everything changed after
//! cursor N" is one ordered read across the five tables. A page answers
//! its last row's number as the next cursor; a row that changes again
//! while a device pages moves past the cursor and comes in a later page.

use crate::store::sql::Connection;
use serde::{Deserialize, Serialize};

use stockhop::wire::Mode;

use super::bins::{self, Bin};
use super::counts::{self, Count};
use super::devices::Device;
use super::grns::{self, Grn};
use super::operators::{self, Operator};
use super::skus::{self, Sku};
use super::units::{self, Unit, UnitState};
use super::LedgerError;

/// Rows in a page when the device asks for no limit: a page the handheld
/// writes in one IndexedDB transaction without stalling its screens.
pub const DEFAULT_PAGE_ROWS: usize = 500;
/// The most rows a page may hold: bounds the answer (about 200 bytes a
/// row, so under half a megabyte) and the read transaction.
pub const MAX_PAGE_ROWS: usize = 2_000;

/// A unit as the handheld caches it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UnitView {
    pub epc: Option<String>,
    pub code: Option<String>,
    pub sku: Option<String>,
    pub state: UnitState,
    pub bin: Option<String>,
    pub version: u64,
    /// The GTIN (14 digits) of its GS1 labels; with `serial`, it names
    /// the unit. The GS1 keys are left out when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gtin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lot: Option<String>,
    /// `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<String>,
}

impl From<Unit> for UnitView {
    fn from(unit: Unit) -> UnitView {
        UnitView {
            epc: unit.epc,
            code: unit.code,
            sku: unit.sku,
            state: unit.state,
            bin: unit.bin,
            version: unit.version,
            gtin: unit.gs1.gtin,
            serial: unit.gs1.serial,
            lot: unit.gs1.lot,
            expiry: unit.gs1.expiry,
        }
    }
}

/// What the site knows of the device reading its reference data: its
/// profile and what that lets it do, so the handheld offers only the modes
/// it can open (the ledger refuses the others `mode_not_allowed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct DeviceView {
    pub device_id: String,
    pub profile: &'static str,
    /// The modes the profile can open, by their wire names.
    pub modes: Vec<&'static str>,
    /// Whether it can write (encode) a tag.
    pub encode: bool,
    /// Whether its items post for real; a device that is not commissioned
    /// is in training: its items land as simulation, and it says so on
    /// every screen.
    pub commissioned: bool,
}

impl DeviceView {
    /// A handheld or sled runs every mode (find a unit among them: it is
    /// answered from the device's cache); a fixed gate and a printer none.
    pub fn of(device: &Device) -> DeviceView {
        let modes = match device.profile.runs_handheld_modes() {
            true => Mode::ALL.iter().map(|mode| mode.as_str()).collect(),
            false => Vec::new(),
        };
        DeviceView {
            device_id: device.device_id.clone(),
            profile: device.profile.as_str(),
            modes,
            encode: device.profile.can_encode(),
            commissioned: device.commissioned,
        }
    }
}

/// `GET /v1/reference` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ReferencePage {
    /// Pass it back as `after` for the next page or, once `more` is
    /// false, for the next round of changes.
    pub cursor: String,
    pub more: bool,
    pub bins: Vec<Bin>,
    pub units: Vec<UnitView>,
    pub grns: Vec<Grn>,
    pub counts: Vec<Count>,
    /// The operators (`badge`, `name`, `language`: a BCP 47 tag or null)
    /// whose badges open sessions.
    pub operators: Vec<Operator>,
    /// The SKUs with their GTINs (`sku`, `gtin`): a GS1 label's GTIN
    /// names its SKU.
    pub skus: Vec<Sku>,
    /// The character the site's scanners send for the GS1 group separator
    /// (ASCII 29) when they cannot send it: on every page, so a handheld
    /// reads labels as the site does.
    pub gs1_separator: String,
    /// The device that asked: on every page, so a handheld learns its
    /// profile with the data its modes check.
    pub device: DeviceView,
}

/// Reads a cursor: the decimal change number a page answered.
pub fn parse_cursor(text: Option<&str>) -> Option<u64> {
    match text {
        None | Some("") => Some(0),
        Some(text) => text.parse().ok(),
    }
}

/// Every row changed after `after`, at most `limit` of them, oldest change
/// first, as `device` reads them, in one snapshot: the page lists its
/// changed rows and then reads each, and a write between the two (a turn
/// of an import run from the command line, in a process of its own) would
/// show a row as it is past the page's cap, mid-import.
pub fn page(
    conn: &mut Connection,
    device: &Device,
    after: u64,
    limit: usize,
) -> Result<ReferencePage, LedgerError> {
    crate::store::sql::retry_conflicts(|| {
        let tx = conn.transaction()?;
        let page = page_in(&tx, device, after, limit)?;
        tx.commit()?;
        Ok(page)
    })
}

/// [`page`], read on `conn` as it stands.
fn page_in(
    conn: &Connection,
    device: &Device,
    after: u64,
    limit: usize,
) -> Result<ReferencePage, LedgerError> {
    let limit = limit.clamp(1, MAX_PAGE_ROWS);
    // While an import applies, pages stop where it began: a handheld takes
    // the whole import at once, on the page after its last turn. A row
    // changed since (by the import or anyone else) is read as it stood
    // then, where the import kept it: every reader sees the site as at the
    // flip.
    let applying = super::import::applying(conn)?;
    let (until, import_id) = applying.map_or((i64::MAX, -1), |at| (at.watermark, at.import_id));
    let mut statement = conn.prepare_cached(
        "SELECT kind, key, ref_seq, item FROM (
             SELECT 'bin' AS kind, bin AS key, ref_seq, CAST(NULL AS TEXT) AS item FROM bins
                 WHERE ref_seq > ?1 AND ref_seq <= ?3
             UNION ALL SELECT 'unit', CAST(unit_id AS TEXT), ref_seq, NULL FROM units
                 WHERE ref_seq > ?1 AND ref_seq <= ?3
             UNION ALL SELECT 'grn', grn, ref_seq, NULL FROM grns
                 WHERE ref_seq > ?1 AND ref_seq <= ?3
             UNION ALL SELECT 'count', count_id, ref_seq, NULL FROM counts
                 WHERE ref_seq > ?1 AND ref_seq <= ?3
             UNION ALL SELECT 'operator', badge, ref_seq, NULL FROM operators
                 WHERE ref_seq > ?1 AND ref_seq <= ?3
             UNION ALL SELECT 'sku', sku, ref_seq, NULL FROM skus
                 WHERE ref_seq > ?1 AND ref_seq <= ?3
             UNION ALL SELECT kind, key, ref_seq, item FROM import_before
                 WHERE import_id = ?4 AND ref_seq > ?1 AND ref_seq <= ?3) AS changed
         ORDER BY ref_seq LIMIT ?2",
    )?;
    let mut rows = statement
        .query_map(
            crate::params![after as i64, (limit + 1) as i64, until, import_id],
            |row| {
                Ok(Changed {
                    kind: row.get(0)?,
                    key: row.get(1)?,
                    ref_seq: row.get(2)?,
                    kept: row.get(3)?,
                })
            },
        )?
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let mut page = ReferencePage {
        cursor: rows
            .last()
            .map_or(after, |row| row.ref_seq as u64)
            .to_string(),
        more,
        bins: vec![],
        units: vec![],
        grns: vec![],
        counts: vec![],
        operators: vec![],
        skus: vec![],
        gs1_separator: super::labels::separator(conn)?.char().to_string(),
        device: DeviceView::of(device),
    };
    let vanished = |what: &str, key: &str| LedgerError::Corrupt(format!("{what} {key} vanished"));
    for Changed {
        kind, key, kept, ..
    } in rows
    {
        if let Some(item) = kept {
            page.add_kept(&kind, &key, &item)?;
            continue;
        }
        match kind.as_str() {
            "bin" => page
                .bins
                .push(bins::find(conn, &key)?.ok_or_else(|| vanished("bin", &key))?),
            "unit" => {
                let unit_id = key
                    .parse()
                    .map_err(|_| LedgerError::Corrupt(format!("unit id {key}")))?;
                let unit = units::get(conn, unit_id)?.ok_or_else(|| vanished("unit", &key))?;
                page.units.push(unit.into());
            }
            "grn" => page
                .grns
                .push(grns::find(conn, &key)?.ok_or_else(|| vanished("grn", &key))?),
            "operator" => page
                .operators
                .push(operators::find(conn, &key)?.ok_or_else(|| vanished("operator", &key))?),
            "sku" => page
                .skus
                .push(skus::find(conn, &key)?.ok_or_else(|| vanished("sku", &key))?),
            _ => page
                .counts
                .push(counts::find(conn, &key)?.ok_or_else(|| vanished("count", &key))?),
        }
    }
    Ok(page)
}

/// A row a page lists: a live one, or one an applying import kept as it
/// stood at its flip (`kept`, the page's JSON of it).
struct Changed {
    kind: String,
    key: String,
    ref_seq: i64,
    kept: Option<String>,
}

impl ReferencePage {
    /// Adds a row an applying import kept as it stood at its flip: the
    /// JSON its migration's triggers wrote, in this page's shapes.
    fn add_kept(&mut self, kind: &str, key: &str, item: &str) -> Result<(), LedgerError> {
        fn decode<T: serde::de::DeserializeOwned>(
            kind: &str,
            key: &str,
            item: &str,
        ) -> Result<T, LedgerError> {
            serde_json::from_str(item)
                .map_err(|err| LedgerError::Corrupt(format!("{kind} {key} as kept: {err}")))
        }
        match kind {
            "bin" => self.bins.push(decode(kind, key, item)?),
            "unit" => self.units.push(decode(kind, key, item)?),
            "grn" => {
                let mut grn: Grn = decode(kind, key, item)?;
                grn.lines.sort_by(|a, b| a.sku.cmp(&b.sku));
                self.grns.push(grn);
            }
            "operator" => self.operators.push(decode(kind, key, item)?),
            _ => self.counts.push(decode(kind, key, item)?),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_is_a_change_number_and_none_means_from_the_start() {
        assert_eq!(parse_cursor(None), Some(0));
        assert_eq!(parse_cursor(Some("")), Some(0));
        assert_eq!(parse_cursor(Some("42")), Some(42));
        assert_eq!(parse_cursor(Some("-1")), None);
        assert_eq!(parse_cursor(Some("4 2")), None);
    }
}
