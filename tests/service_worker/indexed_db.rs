//! IndexedDB from inside a real service worker: a write committed with
//! durability "strict" is readable from a fresh connection.
use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{TransactionDurability, TransactionMode, TransactionOptions};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

const STORE: &str = "probe";

async fn open(name: &str) -> Database {
    Database::open(name)
        .with_version(1u8)
        .with_on_upgrade_needed(|_event, db| {
            db.create_object_store(STORE).build()?;
            Ok(())
        })
        .await
        .unwrap()
}

#[wasm_bindgen_test]
async fn runs_in_a_service_worker_scope() {
    let global = js_sys::global();
    assert!(global
        .dyn_into::<web_sys::ServiceWorkerGlobalScope>()
        .is_ok());
}

#[wasm_bindgen_test]
async fn strict_write_is_readable_from_a_fresh_connection() {
    let name = format!(
        "stockhop-probe-{}",
        stockhop::key::IdempotencyKey::mint().unwrap()
    );
    let db = open(&name).await;
    let mut options = TransactionOptions::new();
    options.set_durability(TransactionDurability::Strict);
    let tx = db
        .transaction(STORE)
        .with_mode(TransactionMode::Readwrite)
        .with_options(options)
        .build()
        .unwrap();
    let store = tx.object_store(STORE).unwrap();
    store
        .put("captured")
        .with_key("k1")
        .primitive()
        .unwrap()
        .await
        .unwrap();
    tx.commit().await.unwrap();
    db.close();

    let fresh = open(&name).await;
    let value: Option<String> = fresh
        .transaction(STORE)
        .build()
        .unwrap()
        .object_store(STORE)
        .unwrap()
        .get("k1")
        .primitive()
        .unwrap()
        .await
        .unwrap();
    assert_eq!(value.as_deref(), Some("captured"));
    fresh.close();
}
