//! The reference cache's IndexedDB side: a page of the site's rows written
//! in one transaction with the cache's meta record (so the cursor never
//! runs ahead of the rows), lookups, row counts, and the clearing a change
//! of site needs. The decisions (which cursor, what is stale, what a scan
//! takes) are [`crate::reference`]'s.
//!
//! Rows are kept as the site sent them: the page's JSON, parsed by the
//! browser, goes into its store object by object (only its key checked),
//! and lookups hand the stored object back. The head of a page (`cursor`,
//! `more`, `device`) and the meta record cross through serde. Keeping the
//! rows as the browser parsed them is what lets 100,000 units load without
//! a round trip through Rust per row.
//!
//! Besides the rows the core names ([`RowKind`]), a page brings what
//! labels are read with (docs/design.md, real labels): the SKUs with their
//! GTINs (`skus`, kept in their own store) and the site's substitute for
//! the group separator (`gs1_separator`, a meta record of its own), both
//! written in the page's transaction.

use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionDurability;
use js_sys::{Array, Reflect};
use wasm_bindgen::JsValue;

use crate::reference::{usable_key, PageHead, ReferenceMeta, RowKind};
use crate::runtime::Page;

use super::convert::from_record;
use super::error::QueueError;
use super::schema::{BINS, BY_CODE, COUNTS, GRNS, META, SKUS, UNITS};
use super::store::{get_meta, put_meta, DeviceConfig, Store, META_DEVICE};

/// The meta record's name.
pub(super) const META_REFERENCE: &str = "reference";
/// The meta record of the site's substitute for the group separator (one
/// character, as the site's page sends it).
pub const META_GS1_SEPARATOR: &str = "gs1_separator";

/// The stores the cache keeps, by kind.
pub fn store_of(kind: RowKind) -> &'static str {
    match kind {
        RowKind::Unit => UNITS,
        RowKind::Bin => BINS,
        RowKind::Grn => GRNS,
        RowKind::Count => COUNTS,
    }
}

const ROW_STORES: [&str; 4] = [UNITS, BINS, GRNS, COUNTS];
/// Every store a change of site empties: the rows and the SKUs.
const CLEARED_STORES: [&str; 5] = [UNITS, BINS, GRNS, COUNTS, SKUS];

/// A page's rows as the browser parsed them (JS arrays of objects, as the
/// site sent them): each kind's in [`RowKind::ALL`]'s order, the SKUs, and
/// the site's separator substitute when the page names one.
#[derive(Debug, Clone, Default)]
pub struct PageRows {
    pub kinds: [Array; 4],
    pub skus: Array,
    pub gs1_separator: Option<String>,
}

/// A page as the browser parsed it: the head through serde, the rows as
/// the site sent them.
pub type FetchedPage = Page<PageRows>;

/// The array `field` of a parsed page; empty when it has none.
fn rows_of(json: &JsValue, field: &str) -> Array {
    Reflect::get(json, &field.into())
        .ok()
        .filter(Array::is_array)
        .map(|rows| Array::from(&rows))
        .unwrap_or_default()
}

impl FetchedPage {
    /// Reads a `GET /v1/reference` answer parsed by `JSON.parse`.
    pub fn read(json: JsValue, site: &str) -> Result<FetchedPage, String> {
        let head: PageHead = from_record(json.clone(), "reference page")?;
        let rows = PageRows {
            kinds: RowKind::ALL.map(|kind| rows_of(&json, kind.page_field())),
            skus: rows_of(&json, "skus"),
            gs1_separator: text_field(&json, "gs1_separator"),
        };
        Ok(FetchedPage {
            head,
            rows,
            site: site.to_owned(),
        })
    }
}

/// Makes room for a page's unit codes: a code the cache holds under
/// another EPC left that unit at the site before this one took it, and the
/// change that took it away may come in a later page (a unit changed again
/// moves past the cursor). That unit keeps its row without the code (its
/// own newer row follows), so the unique index on `code` never refuses the
/// page. The lookups are all issued before any is awaited: one pass over
/// the index.
async fn free_codes(
    units: &indexed_db_futures::object_store::ObjectStore<'_>,
    rows: &[JsValue],
) -> Result<(), QueueError> {
    let by_code = units.index(BY_CODE)?;
    let coded: Vec<(String, String)> = rows
        .iter()
        .filter_map(|row| Some((text_field(row, "epc")?, text_field(row, "code")?)))
        .collect();
    let mut held = Vec::with_capacity(coded.len());
    for (epc, code) in &coded {
        held.push((epc, by_code.get(code.as_str()).primitive()?));
    }
    for (epc, owner) in held {
        let other: Option<JsValue> = owner.await?;
        let Some(other) = other else {
            continue;
        };
        if text_field(&other, "epc").is_some_and(|other| other != *epc) {
            Reflect::set(&other, &"code".into(), &JsValue::NULL).map_err(QueueError::browser)?;
            units.put(other).build()?;
        }
    }
    Ok(())
}

/// A field of a stored row as text.
pub fn text_field(row: &JsValue, name: &str) -> Option<String> {
    Reflect::get(row, &name.into()).ok()?.as_string()
}

impl Store {
    /// The cache's meta record; `None` before anything was cached.
    pub async fn reference_meta(&self) -> Result<Option<ReferenceMeta>, QueueError> {
        let tx = self.read(&[META])?;
        get_meta(&tx, META_REFERENCE).await
    }

    /// Writes a page's rows and the meta record after it in ONE relaxed
    /// transaction: a lost page leaves the old cursor with the old rows,
    /// and the page is read again. Rows without a usable key are left out.
    /// Only the stores the page has rows for are in the transaction's
    /// scope, so an empty page (nothing changed) holds up no lookup.
    pub async fn write_reference_page(
        &self,
        page: &FetchedPage,
        meta: &ReferenceMeta,
    ) -> Result<(), QueueError> {
        let kinds: Vec<(RowKind, &Array)> = RowKind::ALL
            .into_iter()
            .zip(&page.rows.kinds)
            .filter(|(_, rows)| rows.length() > 0)
            .collect();
        let mut stores: Vec<&str> = kinds.iter().map(|(kind, _)| store_of(*kind)).collect();
        let skus = page.rows.skus.length() > 0;
        if skus {
            stores.push(SKUS);
        }
        stores.push(META);
        let tx = self.write(&stores, TransactionDurability::Relaxed)?;
        for (kind, rows) in &kinds {
            let store = tx.object_store(store_of(*kind))?;
            let rows: Vec<JsValue> = rows
                .iter()
                .filter(|row| usable_key(text_field(row, kind.key_field()).as_deref()))
                .collect();
            if *kind == RowKind::Unit {
                free_codes(&store, &rows).await?;
            }
            for row in rows {
                store.put(row).build()?;
            }
        }
        if skus {
            let store = tx.object_store(SKUS)?;
            for row in page.rows.skus.iter() {
                if usable_key(text_field(&row, "sku").as_deref()) {
                    store.put(row).build()?;
                }
            }
        }
        if let Some(separator) = &page.rows.gs1_separator {
            put_meta(&tx, META_GS1_SEPARATOR, separator)?;
        }
        put_meta(&tx, META_REFERENCE, meta)?;
        tx.commit().await?;
        Ok(())
    }

    /// Stores the device setup; when it names another site than the cache
    /// holds, the cache is emptied in the same strict transaction.
    pub async fn set_device_and_cache(
        &self,
        config: &DeviceConfig,
        clear_cache: bool,
    ) -> Result<(), QueueError> {
        if !clear_cache {
            return self.set_device(config).await;
        }
        let mut stores = CLEARED_STORES.to_vec();
        stores.push(META);
        let tx = self.write(&stores, TransactionDurability::Strict)?;
        for store in CLEARED_STORES {
            tx.object_store(store)?.clear()?;
        }
        drop(
            tx.object_store(META)?
                .delete(META_GS1_SEPARATOR)
                .primitive()?,
        );
        put_meta(&tx, META_DEVICE, config)?;
        put_meta(&tx, META_REFERENCE, &ReferenceMeta::empty(&config.site_url))?;
        tx.commit().await?;
        Ok(())
    }

    /// One cached row by its key (`null` when there is none).
    pub async fn reference_row(&self, kind: RowKind, id: &str) -> Result<JsValue, QueueError> {
        let store = store_of(kind);
        let tx = self.read(&[store])?;
        let row: Option<JsValue> = tx.object_store(store)?.get(id).primitive()?.await?;
        Ok(row.unwrap_or(JsValue::NULL))
    }

    /// A unit by EPC, else by code, and the bin it is in; `null` for
    /// either that is not cached.
    pub async fn find_unit(&self, code: &str) -> Result<(JsValue, JsValue), QueueError> {
        let tx = self.read(&[UNITS, BINS])?;
        let units = tx.object_store(UNITS)?;
        let mut unit: Option<JsValue> = units.get(code).primitive()?.await?;
        if unit.is_none() {
            unit = units.index(BY_CODE)?.get(code).primitive()?.await?;
        }
        let Some(unit) = unit else {
            return Ok((JsValue::NULL, JsValue::NULL));
        };
        let bin = match text_field(&unit, "bin") {
            Some(bin) if !bin.is_empty() => {
                let row: Option<JsValue> = tx.object_store(BINS)?.get(bin).primitive()?.await?;
                row.unwrap_or(JsValue::NULL)
            }
            _ => JsValue::NULL,
        };
        Ok((unit, bin))
    }

    /// Every cached row of a kind in key order, at most `limit`.
    pub async fn reference_rows(&self, kind: RowKind, limit: u32) -> Result<Array, QueueError> {
        let store = store_of(kind);
        let tx = self.read(&[store])?;
        let rows = tx
            .object_store(store)?
            .get_all::<JsValue>()
            .with_limit(limit)
            .primitive()?
            .await?;
        let out = Array::new();
        for row in rows {
            out.push(&row?);
        }
        Ok(out)
    }

    /// Rows cached of each kind, in [`RowKind::ALL`]'s order.
    pub async fn reference_counts(&self) -> Result<[u32; 4], QueueError> {
        let tx = self.read(&ROW_STORES)?;
        let mut counts = [0; 4];
        for (count, store) in counts.iter_mut().zip(ROW_STORES) {
            *count = tx.object_store(store)?.count().primitive()?.await?;
        }
        Ok(counts)
    }

    /// Keeps a unit read live from the site (`refresh_unit`), relaxed: a
    /// lost write leaves the older row until the next page brings it.
    pub async fn put_unit(&self, unit: &JsValue) -> Result<(), QueueError> {
        if !usable_key(text_field(unit, "epc").as_deref()) {
            return Err(QueueError::Site("the site's unit has no epc".into()));
        }
        let tx = self.write(&[UNITS], TransactionDurability::Relaxed)?;
        tx.object_store(UNITS)?.put(unit).build()?;
        tx.commit().await?;
        Ok(())
    }
}
