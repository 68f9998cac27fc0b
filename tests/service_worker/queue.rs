//! The queue inside a real service worker: capture, the Web Lock and the
//! drain work in the worker's global scope, and the exported
//! `ServiceWorker` answers page messages on a reply port.
use crate::support::*;
use serde_json::json;
use stockhop::queue::{Capture, ItemState};
use stockhop::web::ServiceWorker;
use stockhop::wire::{Command, Mode, OpenSessionBody};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

#[wasm_bindgen_test]
async fn a_capture_in_the_worker_is_durable_and_drains_under_the_lock() {
    let name = db_name("sw");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let body = OpenSessionBody {
        operator_id: "op-1".into(),
        mode: Mode::CycleCount,
        context: Default::default(),
    };
    let a = queue.open_session(None, body).await.unwrap().session_id;
    let capture = Capture {
        command: Command::Scan,
        body: json!({"mode": "cycle_count", "epc": "E1"}),
    };
    queue.capture(a, capture).await.unwrap();
    let report = queue.drain(false).await.unwrap();
    assert_eq!(
        (report.requests, report.items_sent, report.pending),
        (1, 2, 0)
    );
    let items = fresh(&name).await.session_items(a).await.unwrap();
    assert!(items.iter().all(|i| i.state == ItemState::Done));
}

#[wasm_bindgen_test]
async fn page_messages_get_replies() {
    let worker = ServiceWorker::open(Some(db_name("messages")), None)
        .await
        .unwrap();
    let open = ask(
        &worker,
        json!({"type": "open_session", "operator_id": "op-9", "mode": "receive"}),
    )
    .await;
    assert_eq!(open["ok"], true, "{open}");
    assert_eq!(open["client_seq"], 1);
    let session = open["session_id"].as_str().unwrap().to_owned();
    let scan = ask(
        &worker,
        json!({"type": "capture", "session_id": session, "body": {"mode": "receive", "epc": "E1"}}),
    )
    .await;
    assert_eq!(
        (scan["ok"].clone(), scan["client_seq"].clone()),
        (json!(true), json!(2))
    );
    let burst = ask(
        &worker,
        json!({"type": "capture_many", "session_id": session,
               "bodies": [{"mode": "receive", "epc": "E2"}, {"mode": "receive", "epc": "E3"}]}),
    )
    .await;
    let seqs: Vec<_> = burst["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["client_seq"].clone())
        .collect();
    assert_eq!(seqs, [json!(3), json!(4)], "{burst}");
    let too_many = ask(
        &worker,
        json!({"type": "capture_many", "session_id": session, "bodies": vec![json!({}); 1001]}),
    )
    .await;
    assert_eq!(too_many["error"]["code"], "BAD_MESSAGE");
    let counts = ask(&worker, json!({"type": "counts"})).await;
    assert_eq!(counts["queued"], 4, "{counts}");
    let list = ask(&worker, json!({"type": "list", "limit": 10})).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 4);
    assert_eq!(list["items"][1]["state"], "queued");
    let row = list["items"][1].as_object().unwrap();
    assert_eq!(row.get("why"), Some(&json!(null)), "{list}");
    assert_eq!(
        (row["client_seq"].clone(), row["command"].clone()),
        (json!(2), json!("scan"))
    );
    assert!(
        row["key"].is_string() && row["body"]["epc"] == "E1",
        "{list}"
    );
    assert_eq!(list["next_after"], list["items"][3]["id"]);
    let bad = ask(
        &worker,
        json!({"type": "capture", "session_id": "not-a-uuid"}),
    )
    .await;
    assert_eq!(
        (bad["ok"].clone(), bad["error"]["code"].clone()),
        (json!(false), json!("BAD_MESSAGE"))
    );
    let wake = ask(&worker, json!({"type": "wake"})).await;
    assert_eq!(wake["ok"], true, "{wake}");
    assert_eq!(
        wake["requests"], 0,
        "nothing leaves before the device is set up"
    );
    let device = ask(&worker, json!({"type": "device"})).await;
    assert_eq!(device["configured"], false);
    assert_eq!(
        device["refused"], false,
        "the site has said nothing of this device"
    );
    assert!(
        device["closed_sessions"].is_null(),
        "no session closed: {device}"
    );
    let setup = ask(
        &worker,
        json!({"type": "setup", "site_url": "", "device_token": "t", "device_id": "HH-1"}),
    )
    .await;
    assert_eq!(setup["error"]["code"], "BAD_MESSAGE");
    let storage = ask(&worker, json!({"type": "storage"})).await;
    assert!(storage["quota"].as_f64().unwrap_or(0.0) > 0.0, "{storage}");
}

/// The tags Background Sync holds for this worker's registration.
async fn sync_tags() -> Vec<String> {
    let global = js_sys::global();
    let registration = js_sys::Reflect::get(&global, &"registration".into()).unwrap();
    let sync = js_sys::Reflect::get(&registration, &"sync".into()).unwrap();
    assert!(
        !sync.is_undefined(),
        "Chromium's service worker has Background Sync"
    );
    let get_tags: js_sys::Function = js_sys::Reflect::get(&sync, &"getTags".into())
        .unwrap()
        .into();
    let tags = JsFuture::from(js_sys::Promise::from(get_tags.call0(&sync).unwrap()))
        .await
        .unwrap();
    js_sys::Array::from(&tags)
        .iter()
        .filter_map(|tag| tag.as_string())
        .collect()
}

#[wasm_bindgen_test]
async fn a_committed_capture_registers_the_drain_sync_tag() {
    let worker = std::rc::Rc::new(
        ServiceWorker::open(Some(db_name("sync-tag")), None)
            .await
            .unwrap(),
    );
    // The `sync` listener sw.js has: the event's drain decides whether the
    // registration stays (items still waiting) or is spent.
    let handler = worker.clone();
    let on_sync = Closure::<dyn Fn(JsValue)>::new(move |event: JsValue| {
        let last_chance = js_sys::Reflect::get(&event, &"lastChance".into())
            .ok()
            .and_then(|v| v.as_bool());
        let wait_until: js_sys::Function = js_sys::Reflect::get(&event, &"waitUntil".into())
            .unwrap()
            .into();
        wait_until
            .call1(&event, &handler.handle_sync(last_chance))
            .unwrap();
    });
    let add: js_sys::Function = js_sys::Reflect::get(&js_sys::global(), &"addEventListener".into())
        .unwrap()
        .into();
    add.call2(&js_sys::global(), &"sync".into(), on_sync.as_ref())
        .unwrap();
    on_sync.forget();
    // Set up for a site nobody answers (a closed loopback port), so the
    // capture stays queued and its registration stays pending.
    let setup = ask(
        &worker,
        json!({"type": "setup", "site_url": "http://127.0.0.1:9", "device_token": "t",
               "device_id": "HH-SYNC"}),
    )
    .await;
    assert_eq!(setup["ok"], true, "{setup}");
    let open = ask(
        &worker,
        json!({"type": "open_session", "operator_id": "op-3", "mode": "put_away"}),
    )
    .await;
    assert_eq!(open["ok"], true, "{open}");
    // The registration is asked for once the capture's transaction has
    // completed, without holding up the reply: give it a moment.
    let mut tags = Vec::new();
    for _ in 0..40 {
        tags = sync_tags().await;
        if !tags.is_empty() {
            break;
        }
        gloo_timers::future::TimeoutFuture::new(50).await;
    }
    assert_eq!(tags, [stockhop::web::runtime::SYNC_TAG]);
}

/// Hands every message to the worker at once, as the browser dispatches
/// messages that waited in the worker's inbox together (a sled's burst
/// sent with `Promise.all`), and then awaits each reply in turn.
async fn ask_together(
    worker: &ServiceWorker,
    messages: Vec<serde_json::Value>,
) -> Vec<serde_json::Value> {
    let pending: Vec<_> = messages
        .iter()
        .map(|message| worker.handle_message(to_js(message).unwrap(), None))
        .collect();
    let mut replies = Vec::new();
    for promise in pending {
        let reply = JsFuture::from(promise).await.unwrap();
        replies.push(serde_wasm_bindgen::from_value(reply).unwrap());
    }
    replies
}

/// The `client_seq` of each item of a `capture_many` reply (`None` for an
/// item refused).
fn item_seqs(reply: &serde_json::Value) -> Vec<Option<u64>> {
    reply["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{reply}"))
        .iter()
        .map(|item| item["client_seq"].as_u64())
        .collect()
}

fn scans(epcs: &[&str]) -> Vec<serde_json::Value> {
    epcs.iter()
        .map(|epc| json!({"mode": "cycle_count", "epc": epc}))
        .collect()
}

/// Opens a worker's queue on `name` and a session in it; its id.
async fn worker_with_session(name: &str) -> (ServiceWorker, String) {
    let worker = ServiceWorker::open(Some(name.to_owned()), None)
        .await
        .unwrap();
    let open = ask(
        &worker,
        json!({"type": "open_session", "operator_id": "op-5", "mode": "cycle_count"}),
    )
    .await;
    assert_eq!(open["ok"], true, "{open}");
    let session = open["session_id"].as_str().unwrap().to_owned();
    (worker, session)
}

#[wasm_bindgen_test]
async fn capture_messages_waiting_together_are_each_answered_their_own_items_in_seq_order() {
    let name = db_name("sw-together");
    let (worker, session) = worker_with_session(&name).await;
    let replies = ask_together(
        &worker,
        vec![
            json!({"type": "capture_many", "session_id": session, "bodies": scans(&["E1", "E2", "E3"])}),
            json!({"type": "capture", "session_id": session, "body": scans(&["E4"])[0]}),
            json!({"type": "capture_many", "session_id": session, "bodies": scans(&["E5", "E6"])}),
        ],
    )
    .await;
    assert_eq!(item_seqs(&replies[0]), [Some(2), Some(3), Some(4)]);
    assert_eq!(replies[1]["client_seq"], 5, "{}", replies[1]);
    assert_eq!(item_seqs(&replies[2]), [Some(6), Some(7)]);

    let session = uuid::Uuid::parse_str(&session).unwrap();
    let stored = fresh(&name).await.session_items(session).await.unwrap();
    let epcs: Vec<_> = stored
        .iter()
        .skip(1)
        .map(|i| i.body["epc"].clone())
        .collect();
    assert_eq!(epcs, ["E1", "E2", "E3", "E4", "E5", "E6"]);
    assert_eq!(
        stored.iter().map(|i| i.client_seq).collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
}

#[wasm_bindgen_test]
async fn waiting_capture_messages_share_one_transaction_and_a_failed_one_stores_none_of_them() {
    let name = db_name("sw-shared-tx");
    let (worker, session) = worker_with_session(&name).await;
    let first = ask(
        &worker,
        json!({"type": "capture", "session_id": session, "body": scans(&["E1"])[0]}),
    )
    .await;
    assert_eq!(first["client_seq"], 2, "{first}");
    let id = uuid::Uuid::parse_str(&session).unwrap();
    // Another writer holds seq 6, which the second message would take: its
    // add fails, and with it the transaction both messages share.
    occupy_seq(&name, id, 6).await;
    let replies = ask_together(
        &worker,
        vec![
            json!({"type": "capture_many", "session_id": session, "bodies": scans(&["E2", "E3", "E4"])}),
            json!({"type": "capture_many", "session_id": session, "bodies": scans(&["E5", "E6"])}),
        ],
    )
    .await;
    for reply in &replies {
        assert_eq!(
            item_seqs(reply),
            vec![None; reply["items"].as_array().unwrap().len()]
        );
        for item in reply["items"].as_array().unwrap() {
            assert_eq!(item["error"]["code"], "STORAGE", "{reply}");
        }
    }

    let stored = fresh(&name).await.session_items(id).await.unwrap();
    assert_eq!(
        stored.iter().map(|i| i.client_seq).collect::<Vec<_>>(),
        [1, 2, 6],
        "what was stored before stays; the failed group left nothing"
    );
    assert_eq!(stored[1].body["epc"], "E1");
    let next = ask(
        &worker,
        json!({"type": "capture", "session_id": session, "body": scans(&["E7"])[0]}),
    )
    .await;
    assert_eq!(
        next["client_seq"], 3,
        "the failed group took no seq: {next}"
    );
}

#[wasm_bindgen_test]
async fn a_bad_capture_among_waiting_messages_fails_only_its_own_item_or_message() {
    let name = db_name("sw-bad-among");
    let (worker, session) = worker_with_session(&name).await;
    let ahead = js_sys::Date::now() + 86_400_000.0;
    let now = js_sys::Date::now();
    let replies = ask_together(
        &worker,
        vec![
            json!({"type": "capture_many", "session_id": session, "bodies": scans(&["E1", "E2"])}),
            // Refused as a message: two instants for three bodies.
            json!({"type": "capture_many", "session_id": session,
                   "bodies": scans(&["X1", "X2", "X3"]), "occurred_at": [now, now]}),
            // One item refused: its instant is a day ahead of the device.
            json!({"type": "capture_many", "session_id": session,
                   "bodies": scans(&["E3", "X4", "E4"]), "occurred_at": [now, ahead, now]}),
            json!({"type": "capture", "session_id": session, "body": scans(&["E5"])[0]}),
        ],
    )
    .await;
    assert_eq!(item_seqs(&replies[0]), [Some(2), Some(3)]);
    assert_eq!(
        (
            replies[1]["ok"].clone(),
            replies[1]["error"]["code"].clone()
        ),
        (json!(false), json!("BAD_MESSAGE"))
    );
    assert_eq!(item_seqs(&replies[2]), [Some(4), None, Some(5)]);
    assert_eq!(replies[2]["items"][1]["error"]["code"], "BAD_MESSAGE");
    assert_eq!(replies[3]["client_seq"], 6, "{}", replies[3]);

    let id = uuid::Uuid::parse_str(&session).unwrap();
    let stored = fresh(&name).await.session_items(id).await.unwrap();
    let epcs: Vec<_> = stored
        .iter()
        .skip(1)
        .map(|i| i.body["epc"].clone())
        .collect();
    assert_eq!(epcs, ["E1", "E2", "E3", "E4", "E5"]);
    assert_eq!(
        stored.iter().map(|i| i.client_seq).collect::<Vec<_>>(),
        (1..=6).collect::<Vec<_>>()
    );
}
