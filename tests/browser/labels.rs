//! Labels read in the worker, in a real headless Chromium page: a page of
//! the site's reference data written to IndexedDB with its SKUs and its
//! separator substitute, then scans read through the worker's store as
//! `read_label` reads them (the unit a label names by EPC or by GTIN and
//! serial, the SKU its GTIN names, a refusal in the parser's words), and
//! the v3 → v4 upgrade that adds the label indexes.
use crate::support::*;
use indexed_db_futures::Build;
use serde_json::{json, Value};
use stockhop::reference::ReferenceMeta;
use stockhop::time::UnixMs;
use stockhop::web::cache::FetchedPage;
use stockhop::web::schema;
use stockhop::web::store::Store;
use wasm_bindgen_test::*;

/// An instant late in 2026, the day the labels' two-digit years are read against.
const NOW: UnixMs = UnixMs(1_796_000_000_000);
const SITE: &str = "http://site.test";
const GTIN: &str = "09521101530001";
/// TDS's SGTIN-96 example: GTIN 80614141123458, serial 6789.
const SGTIN: &str = "3074257BF7194E4000001A85";

/// The read of `text` as JSON.
async fn read(store: &Store, text: &str) -> Value {
    let reply = store.read_label(text, NOW, 0).await.unwrap();
    serde_wasm_bindgen::from_value(to_js(&reply).unwrap()).unwrap()
}

/// A store holding one page: two units with GS1 keys (one in bin A-1), a
/// bin, two SKUs and the separator substitute `separator`.
async fn stocked(name: &str, separator: &str) -> Store {
    let store = fresh(name).await;
    let page = json!({"cursor": "5", "more": false, "device": null,
        "units": [
            {"epc": "E1", "code": null, "sku": "SKU-G", "state": "in_stock", "bin": "A-1", "version": 1,
             "gtin": GTIN, "serial": "S-1", "lot": "L-1", "expiry": "2027-12-31"},
            {"epc": SGTIN, "code": null, "sku": "SKU-T", "state": "new", "bin": null, "version": 1,
             "gtin": "80614141123458", "serial": "6789"}],
        "bins": [{"bin": "A-1", "zone": "Z", "location": "L"}], "grns": [], "counts": [],
        "skus": [{"sku": "SKU-G", "gtin": GTIN}, {"sku": "SKU-T", "gtin": "80614141123458"}],
        "gs1_separator": separator});
    let page = FetchedPage::read(to_js(&page).unwrap(), SITE).unwrap();
    let meta = ReferenceMeta::empty(SITE).after_page(&page.head, NOW);
    store.write_reference_page(&page, &meta).await.unwrap();
    store
}

#[wasm_bindgen_test]
async fn a_unit_label_names_its_cached_unit_by_gtin_and_serial_or_by_its_epc() {
    let store = stocked(&db_name("labels-unit"), "~").await;
    let by_keys = read(&store, &format!("]C101{GTIN}21S-1\u{1d}10L-1")).await;
    assert_eq!(by_keys["names"], "unit", "{by_keys}");
    assert_eq!(by_keys["unit"]["epc"], "E1");
    assert_eq!(by_keys["bin"]["zone"], "Z");
    assert_eq!(
        (&by_keys["sku"], &by_keys["text"]),
        (&json!("SKU-G"), &json!(format!("(01){GTIN}(21)S-1(10)L-1")))
    );
    let substitute = read(&store, &format!("~01{GTIN}21S-1~10L-1")).await;
    assert_eq!(substitute["unit"]["epc"], "E1", "{substitute}");
    let link = read(
        &store,
        "https://id.example.com/01/9521101530001/21/S-1?17=271231",
    )
    .await;
    assert_eq!(
        (&link["unit"]["epc"], &link["expiry"]),
        (&json!("E1"), &json!("2027-12-31"))
    );
    let tag = read(&store, &SGTIN.to_lowercase()).await;
    assert_eq!(
        (&tag["kind"], &tag["epc"], &tag["unit"]["epc"], &tag["sku"]),
        (&json!("epc"), &json!(SGTIN), &json!(SGTIN), &json!("SKU-T"))
    );
    let unknown = read(&store, &format!("]C101{GTIN}21S-9")).await;
    assert_eq!(
        (&unknown["names"], &unknown["unit"], &unknown["sku"]),
        (&json!("unit"), &Value::Null, &json!("SKU-G"))
    );
    store.close();
}

#[wasm_bindgen_test]
async fn pallets_lots_and_plain_text_are_told_apart_and_a_bad_label_is_refused_in_words() {
    let store = stocked(&db_name("labels-kinds"), "|").await;
    let pallet = read(&store, "]C100106141411234567897").await;
    assert_eq!(
        (&pallet["names"], &pallet["sscc"]),
        (&json!("pallet"), &json!("106141411234567897"))
    );
    let lot = read(&store, &format!("(01){GTIN}(10)L-9(17)280600")).await;
    assert_eq!(
        (&lot["names"], &lot["lot"], &lot["expiry"], &lot["sku"]),
        (
            &json!("sku_lot"),
            &json!("L-9"),
            &json!("2028-06-30"),
            &json!("SKU-G")
        )
    );
    // The site's substitute here is `|`: `~` is plain text's own.
    let plain = read(&store, "]C0B-12~03").await;
    assert_eq!(
        (&plain["names"], &plain["text"]),
        (&json!("plain"), &json!("B-12~03"))
    );
    let refused = read(&store, "]C10109521101530002").await;
    assert_eq!(
        refused,
        json!({"refused": {"error": "label_check_digit", "ai": "01",
            "message": "the check digit of (01) 09521101530002 should be 1"}})
    );
    store.close();
}

#[wasm_bindgen_test]
async fn the_v4_upgrade_adds_the_label_indexes_and_reads_the_cache_again_from_the_start() {
    let name = db_name("labels-upgrade");
    let v3 = schema::open_at(&name, 3).await.unwrap();
    {
        let tx = write_tx(&v3, schema::UNITS);
        let unit = json!({"epc": "E1", "sku": "SKU-G", "state": "in_stock", "bin": null,
            "version": 1, "gtin": GTIN, "serial": "S-1"});
        tx.object_store(schema::UNITS)
            .unwrap()
            .put(to_js(&unit).unwrap())
            .build()
            .unwrap()
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let tx = write_tx(&v3, schema::META);
        let meta = ReferenceMeta {
            cursor: Some("41".into()),
            complete: true,
            refreshed_at: Some(NOW),
            ..ReferenceMeta::empty(SITE)
        };
        let meta = json!({"name": "reference", "value": meta});
        tx.object_store(schema::META)
            .unwrap()
            .put(to_js(&meta).unwrap())
            .build()
            .unwrap()
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
    v3.close();
    let store = Store::open(&name).await.unwrap();
    let meta = store.reference_meta().await.unwrap().unwrap();
    assert_eq!(
        (meta.cursor, meta.complete, meta.refreshed_at),
        (None, true, Some(NOW)),
        "the cursor is dropped, the rows and their age kept"
    );
    let found = read(&store, &format!("]C101{GTIN}21S-1")).await;
    assert_eq!(found["unit"]["epc"], "E1", "{found}");
    store.close();
}
