//! The queue screen's Export in a real headless Chromium page: the worker's
//! `export_queue` over a real IndexedDB queue, the file written with the
//! browser's JSON and WebCrypto read back by the site's own reader
//! (`stockhop::rescue::read` and `verify`), and the queue left as it was.
use std::collections::BTreeSet;

use crate::support::*;
use serde_json::{json, Value};
use stockhop::rescue;
use stockhop::web::ServiceWorker;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

/// Scans one `capture_many` carries in this test.
const SCANS: usize = 300;

/// The worker's raw reply to `message`: the export's `file` is a
/// `Uint8Array`, which the JSON view of [`ask`] does not hold.
async fn ask_raw(worker: &ServiceWorker, message: Value) -> JsValue {
    let data = to_js(&message).unwrap();
    wasm_bindgen_futures::JsFuture::from(worker.handle_message(data, None))
        .await
        .unwrap()
}

fn field(reply: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(reply, &name.into()).unwrap()
}

/// A worker set up against a closed loopback port: offline from the start.
async fn offline_worker(name: &str, device_id: &str) -> ServiceWorker {
    let worker = ServiceWorker::open(Some(db_name(name)), Some("build-7".into()))
        .await
        .unwrap();
    let setup = ask(
        &worker,
        json!({"type": "setup", "site_url": "http://127.0.0.1:9", "device_token": "token-of-the-device",
               "device_id": device_id}),
    )
    .await;
    assert_eq!(setup["ok"], true, "{setup}");
    worker
}

/// Every item's key and state, from `list`'s pages.
async fn listed(worker: &ServiceWorker) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let mut after = Value::Null;
    loop {
        let page = ask(
            worker,
            json!({"type": "list", "after": after, "limit": 500}),
        )
        .await;
        let items = page["items"].as_array().unwrap();
        if items.is_empty() {
            return rows;
        }
        rows.extend(items.iter().map(|item| {
            (
                item["key"].as_str().unwrap().to_owned(),
                item["state"].as_str().unwrap().to_owned(),
            )
        }));
        after = page["next_after"].clone();
    }
}

#[wasm_bindgen_test]
async fn export_writes_every_unacknowledged_item_signed_and_leaves_them_queued() {
    let worker = offline_worker("rescue-export", "HH-RES").await;
    let open = ask(
        &worker,
        json!({"type": "open_session", "operator_id": "op-1", "mode": "put_away"}),
    )
    .await;
    let bodies: Vec<Value> = (0..SCANS)
        .map(|i| json!({"mode": "put_away", "epc": format!("E{i}"), "bin": "A-1", "note": "line\nbreak ✓"}))
        .collect();
    let burst = ask(
        &worker,
        json!({"type": "capture_many", "session_id": open["session_id"], "bodies": bodies}),
    )
    .await;
    assert_eq!(burst["items"].as_array().unwrap().len(), SCANS, "{burst}");
    let before = listed(&worker).await;
    assert_eq!(before.len(), SCANS + 1);

    // The drain is woken (and fails against the closed port) while the
    // export reads.
    let wake = worker.wake();
    let reply = ask_raw(&worker, json!({"type": "export_queue"})).await;
    let _ = wasm_bindgen_futures::JsFuture::from(wake).await;
    assert_eq!(field(&reply, "ok"), JsValue::TRUE, "{reply:?}");
    assert_eq!(field(&reply, "items").as_f64(), Some((SCANS + 1) as f64));
    let name = field(&reply, "name").as_string().unwrap();
    assert!(
        name.starts_with("stockhop-rescue-HH-RES-") && name.ends_with("Z.jsonl"),
        "{name}"
    );
    let bytes = js_sys::Uint8Array::new(&field(&reply, "file")).to_vec();
    assert_eq!(field(&reply, "bytes").as_f64(), Some(bytes.len() as f64));

    // The site's reader takes it whole, and it is the device's.
    let file = rescue::read(&bytes).expect("the exported file reads");
    assert!(rescue::verify(
        &file,
        &rescue::token_digest("token-of-the-device")
    ));
    assert!(!rescue::verify(&file, &rescue::token_digest("another")));
    assert_eq!(
        (file.header.device_id.as_str(), file.header.build.as_str()),
        ("HH-RES", "build-7")
    );
    assert_eq!(name, rescue::file_name("HH-RES", file.header.exported_at));
    let in_file: BTreeSet<String> = file.items.iter().map(|i| i.key.to_string()).collect();
    let queued: BTreeSet<String> = before.iter().map(|(key, _)| key.clone()).collect();
    assert_eq!(in_file, queued);
    assert!(file.items.iter().any(|i| i.body["note"] == "line\nbreak ✓"));

    // Nothing changed: every item is still waiting to go out.
    let after = listed(&worker).await;
    assert_eq!(
        after.iter().map(|(k, _)| k).collect::<Vec<_>>(),
        before.iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    assert!(
        after.iter().all(|(_, s)| s == "queued" || s == "sending"),
        "{after:?}"
    );
    let again = ask_raw(&worker, json!({"type": "export_queue"})).await;
    assert_eq!(field(&again, "items").as_f64(), Some((SCANS + 1) as f64));
}

#[wasm_bindgen_test]
async fn export_of_an_empty_queue_answers_nothing_to_export() {
    let worker = offline_worker("rescue-empty", "HH-EMPTY").await;
    let reply = ask(&worker, json!({"type": "export_queue"})).await;
    assert_eq!(
        reply,
        json!({"ok": true, "items": 0, "name": null, "bytes": 0, "file": null})
    );
}
