//! A scan read as a label in the worker (docs/design.md, real labels):
//! the page asks `read_label` for every scan a mode takes before it acts
//! on it, so the one parser ([`crate::gs1`]) reads every scan, with the
//! site's separator substitute and the device's date, and no GS1 rule
//! lives in the page.
//!
//! The answer is the label's keys and what they name in the cache, read
//! in one transaction: the unit (by its EPC when the label is an SGTIN
//! EPC, else by `gtin` + `serial`), its bin, and the SKU its GTIN names.
//! A label that does not parse is answered `refused`, with the parser's
//! code, AI and words: nothing of it is used. Plain text comes back as
//! the text to act on, with nothing looked up, and goes on as before.

use indexed_db_futures::prelude::*;
use serde::Serialize;
use wasm_bindgen::JsValue;

use crate::gs1::{self, CivilDate, LabelError, LabelKind, Named, ReadOptions, Separator};
use crate::reference::ReferenceMeta;
use crate::time::UnixMs;

use super::cache::{text_field, META_GS1_SEPARATOR, META_REFERENCE};
use super::error::QueueError;
use super::schema::{BINS, BY_GS1, BY_GTIN, META, SKUS, UNITS};
use super::store::{get_meta, Store};

/// What a label names, as the page acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Names {
    /// Not a GS1 label: the page acts on `text` as on any code.
    Plain,
    /// One unit: (01)+(21), or an SGTIN EPC.
    Unit,
    /// A pallet: (00), or an SSCC EPC.
    Pallet,
    /// A SKU's lot: (01) with (10) or (17) and no (21).
    SkuLot,
    /// GS1 data none of those keys are in.
    Other,
}

/// `read_label`'s answer for a label that parsed.
#[derive(Debug, Serialize)]
pub struct LabelRead {
    pub kind: LabelKind,
    pub names: Names,
    /// For plain text, the text to act on (without any symbology
    /// identifier); for a GS1 label, its bracketed human form.
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gtin: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lot: Option<String>,
    /// (17) as `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiry: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sscc: Option<String>,
    /// The EPC in upper-case hex, when the label is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epc: Option<String>,
    /// The cached unit the label names, as the site sent it; `null` when
    /// it names none or the cache lacks it.
    #[serde(with = "serde_wasm_bindgen::preserve")]
    pub unit: JsValue,
    /// The cached bin that unit is in; `null` when none.
    #[serde(with = "serde_wasm_bindgen::preserve")]
    pub bin: JsValue,
    /// The SKU the label's GTIN names in the cached SKUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    /// When the cache last reached the site's end, and how long ago.
    pub refreshed_at: Option<i64>,
    pub age_ms: Option<i64>,
}

/// `read_label`'s answer: the label, or why it is refused.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum LabelReply {
    Read(Box<LabelRead>),
    Refused { refused: LabelError },
}

/// The date at the device at `now`, `utc_offset_ms` east of UTC: what a
/// label's two-digit years are read against.
pub fn today(now: UnixMs, utc_offset_ms: i64) -> CivilDate {
    CivilDate::from_unix_ms(UnixMs(now.0 + utc_offset_ms))
}

/// The device's offset from UTC at `now`, in ms east (the browser's time
/// zone; a site's handhelds are where the site is).
pub fn local_offset_ms(now: UnixMs) -> i64 {
    let date = js_sys::Date::new(&JsValue::from_f64(now.0 as f64));
    // getTimezoneOffset is minutes west of UTC.
    -(date.get_timezone_offset() as i64) * 60_000
}

impl Store {
    /// Reads `text` as the site's labels are read (its separator
    /// substitute, the device's date at `now`) and looks up what it names.
    pub async fn read_label(
        &self,
        text: &str,
        now: UnixMs,
        utc_offset_ms: i64,
    ) -> Result<LabelReply, QueueError> {
        let tx = self.read(&[META, UNITS, BINS, SKUS])?;
        let substitute: Option<String> = get_meta(&tx, META_GS1_SEPARATOR).await?;
        let separator = substitute
            .and_then(|text| text.chars().next())
            .and_then(|c| Separator::new(c).ok())
            .unwrap_or_default();
        let options = ReadOptions {
            separator,
            today: today(now, utc_offset_ms),
        };
        let label = match gs1::read(text, &options) {
            Ok(label) => label,
            Err(refused) => return Ok(LabelReply::Refused { refused }),
        };
        let meta: Option<ReferenceMeta> = get_meta(&tx, META_REFERENCE).await?;
        let mut read = LabelRead {
            kind: label.kind(),
            names: Names::Other,
            text: match label.plain_text() {
                Some(plain) => plain.to_owned(),
                None => gs1::bracketed(&label),
            },
            gtin: label.gtin().map(str::to_owned),
            serial: label.serial().map(str::to_owned),
            lot: label.lot().map(str::to_owned),
            expiry: label.expiry().map(|day| day.to_string()),
            sscc: label.sscc().map(str::to_owned),
            epc: label.epc().map(str::to_owned),
            unit: JsValue::NULL,
            bin: JsValue::NULL,
            sku: None,
            refreshed_at: meta.as_ref().and_then(|m| m.refreshed_at.map(|at| at.0)),
            age_ms: meta.as_ref().and_then(|m| m.age_ms(now)),
        };
        if label.kind() == LabelKind::Plain {
            read.names = Names::Plain;
            return Ok(LabelReply::Read(Box::new(read)));
        }
        read.names = match label.names() {
            Named::Unit { gtin, serial, epc } => {
                let units = tx.object_store(UNITS)?;
                let mut unit: Option<JsValue> = None;
                if let Some(epc) = epc {
                    unit = units.get(epc).primitive()?.await?;
                }
                if unit.is_none() {
                    unit = units
                        .index(BY_GS1)?
                        .get([gtin, serial])
                        .primitive()?
                        .await?;
                }
                if let Some(unit) = unit {
                    if let Some(bin) = text_field(&unit, "bin").filter(|bin| !bin.is_empty()) {
                        let row: Option<JsValue> =
                            tx.object_store(BINS)?.get(bin).primitive()?.await?;
                        read.bin = row.unwrap_or(JsValue::NULL);
                    }
                    read.unit = unit;
                }
                Names::Unit
            }
            Named::Pallet { .. } => Names::Pallet,
            Named::SkuLot { .. } => Names::SkuLot,
            Named::Other => Names::Other,
        };
        if let Some(gtin) = label.gtin() {
            let row: Option<JsValue> = tx
                .object_store(SKUS)?
                .index(BY_GTIN)?
                .get(gtin)
                .primitive()?
                .await?;
            read.sku = row.and_then(|row| text_field(&row, "sku"));
        }
        Ok(LabelReply::Read(Box::new(read)))
    }
}
