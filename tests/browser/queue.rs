//! The queue runtime in a real headless Chromium page: real IndexedDB,
//! real `Response` objects; the network is substituted only where a test
//! is about the drain logic above it.
use crate::support::*;
use indexed_db_futures::prelude::*;
use serde_json::json;
use stockhop::classify::ResultKind;
use stockhop::key::IdempotencyKey;
use stockhop::queue::{verdicts, Capture, Item, ItemState, TransportOutcome};
use stockhop::time::Millis;
use stockhop::web::runtime::Queue;
use stockhop::web::schema;
use stockhop::web::store::Store;
use stockhop::web::transport::{read_response, FetchTransport, Transport};
use stockhop::wire::{Command, Mode, OpenSessionBody, SyncRequest};
use uuid::Uuid;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use wasm_bindgen_test::*;

fn open_body(operator: &str) -> OpenSessionBody {
    OpenSessionBody {
        operator_id: operator.into(),
        mode: Mode::PutAway,
        context: Default::default(),
    }
}

fn scan(epc: &str) -> Capture {
    Capture {
        command: Command::Scan,
        body: json!({"mode": "put_away", "epc": epc, "bin": "B-12-03"}),
    }
}

/// Opens a session for `operator` and returns its id.
async fn open(queue: &Queue, operator: &str) -> Uuid {
    queue
        .open_session(None, open_body(operator))
        .await
        .unwrap()
        .session_id
}

fn seqs(items: &[Item]) -> Vec<u64> {
    items.iter().map(|i| i.client_seq).collect()
}

#[wasm_bindgen_test]
async fn capture_returns_only_after_the_item_is_readable_from_a_fresh_connection() {
    let name = db_name("ack");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let open = queue.open_session(None, open_body("op-17")).await.unwrap();
    let captured = queue.capture(open.session_id, scan("E1")).await.unwrap();
    assert_eq!(captured.client_seq, 2);
    assert_eq!(captured.key.version(), 4);
    assert_eq!(captured.queued_at, T0);

    let fresh = fresh(&name).await;
    let items = fresh.session_items(open.session_id).await.unwrap();
    assert_eq!(seqs(&items), [1, 2]);
    assert_eq!(items[1].key, captured.key);
    assert_eq!(items[1].state, ItemState::Queued);
    assert_eq!(items[1].id, captured.id);
    fresh.close();
}

#[wasm_bindgen_test]
async fn closing_and_reopening_the_database_loses_nothing_and_seqs_stay_contiguous() {
    let name = db_name("reopen");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    for n in 0..10 {
        queue.capture(a, scan(&format!("A{n}"))).await.unwrap();
    }
    queue.close().await.unwrap();

    let queue = manual_queue(&name, &site, &clock).await;
    let next = queue.capture(a, scan("A-after")).await.unwrap();
    assert_eq!(next.client_seq, 12);
    queue.close_session(a).await.unwrap();
    let refused = queue.capture(a, scan("late")).await;
    assert_eq!(refused.unwrap_err().code(), "SESSION_CLOSED");
    let items = fresh(&name).await.session_items(a).await.unwrap();
    assert_eq!(seqs(&items), (1..=13).collect::<Vec<_>>());
    assert_eq!(items.last().unwrap().command, Command::CloseSession);
}

#[wasm_bindgen_test]
fn storage_errors_read_as_the_indexeddb_library_words_them() {
    use indexed_db_futures::error::{Error, OpenDbError};
    use stockhop::web::error::QueueError;
    let quota = || {
        let quota =
            web_sys::DomException::new_with_message_and_name("disk full", "QuotaExceededError");
        Error::from(JsValue::from(quota.unwrap()))
    };
    let ours = QueueError::from(quota());
    assert_eq!(ours.to_string(), format!("storage: {}", quota()));
    assert_eq!(ours.code(), "STORAGE");
    assert_eq!(
        QueueError::from(OpenDbError::VersionZero).to_string(),
        format!("storage: {}", OpenDbError::VersionZero)
    );
}

#[wasm_bindgen_test]
async fn a_failed_write_is_reported_and_not_acknowledged() {
    let name = db_name("fail");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    occupy_seq(&name, a, 2).await;
    let failed = queue.capture(a, scan("E1")).await;
    let err = failed.expect_err("a write IndexedDB refuses must fail");
    assert_eq!(err.code(), "STORAGE", "{err}");
    assert!(err.to_string().contains("ConstraintError"), "{err}");

    let items = fresh(&name).await.session_items(a).await.unwrap();
    assert_eq!(seqs(&items), [1, 2]);
    assert_eq!(
        items[1].state,
        ItemState::Done,
        "only the other writer's row"
    );
}

#[wasm_bindgen_test]
async fn a_group_refused_part_way_writes_none_of_its_captures() {
    let name = db_name("partway");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    // One group: the first capture's add (seq 2) is issued before the
    // second's (seq 3) is refused.
    occupy_seq(&name, a, 3).await;
    let results = queue
        .capture_many(a, vec![scan("E1"), scan("E2"), scan("E3")])
        .await;
    assert!(results.iter().all(Result::is_err), "{results:?}");

    let next = queue.capture(a, scan("E4")).await.unwrap();
    assert_eq!(next.client_seq, 2, "the refused group took no seq");
    let items = fresh(&name).await.session_items(a).await.unwrap();
    assert_eq!(seqs(&items), [1, 2, 3]);
    assert_eq!(items[1].key, next.key);
}

#[wasm_bindgen_test]
async fn a_body_no_js_number_holds_is_refused_alone_not_with_its_group() {
    let name = db_name("bad-body");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    let beyond = Capture {
        command: Command::Scan,
        body: json!({"mode": "put_away", "epc": "E2", "unit_version": u64::MAX}),
    };
    let results = queue
        .capture_many(a, vec![scan("E1"), beyond, scan("E3")])
        .await;
    assert_eq!(results[1].as_ref().unwrap_err().code(), "BAD_MESSAGE");
    let acked: Vec<u64> = results
        .iter()
        .flatten()
        .map(|item| item.client_seq)
        .collect();
    assert_eq!(acked, [2, 3], "the others are captured, contiguous");
    let items = fresh(&name).await.session_items(a).await.unwrap();
    assert_eq!(seqs(&items), [1, 2, 3]);
}

#[wasm_bindgen_test]
async fn interleaved_sessions_drain_oldest_session_first_in_seq_order() {
    let name = db_name("order");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    clock.set(T0.plus(Millis(10)));
    let b = open(&queue, "op-2").await;
    for n in 0..30 {
        clock.set(T0.plus(Millis(20 + n)));
        queue.capture(b, scan(&format!("B{n}"))).await.unwrap();
        queue.capture(a, scan(&format!("A{n}"))).await.unwrap();
    }
    let report = queue.drain(false).await.unwrap();
    assert_eq!(
        (report.requests, report.items_sent, report.pending),
        (2, 62, 0)
    );
    let sent: Vec<_> = site.sent().concat();
    let (a, b) = (a.to_string(), b.to_string());
    let expected: Vec<_> = (1..=31)
        .map(|s| (a.clone(), s))
        .chain((1..=31).map(|s| (b.clone(), s)))
        .collect();
    assert_eq!(sent, expected);
    assert_eq!(site.sent()[0].len(), 50);
    let counts = queue.counts().await.unwrap();
    assert_eq!((counts.done, counts.queued), (62, 0));
}

#[wasm_bindgen_test]
async fn a_blocked_item_holds_back_only_its_session_and_shows_why() {
    let name = db_name("blocked");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    let b = open(&queue, "op-2").await;
    let bad = queue.capture(a, scan("BAD")).await.unwrap();
    queue.capture(a, scan("A-after")).await.unwrap();
    queue.capture(b, scan("B1")).await.unwrap();
    let bad_key = bad.key;
    site.answer_each(move |item| {
        if item.key == bad_key {
            json!({"key": item.key, "client_seq": item.client_seq, "status": 422, "code": "INVALID_ITEM"})
        } else if item.client_seq == 3 && item.body["epc"] == "A-after" {
            json!({"key": item.key, "client_seq": 3, "status": 202, "outcome": "buffered"})
        } else {
            applied(item)
        }
    });
    queue.drain(false).await.unwrap();
    site.answer_each(applied);
    clock.set(T0.plus(Millis(60_000)));
    queue.capture(b, scan("B2")).await.unwrap();
    queue.drain(true).await.unwrap();
    let last: Vec<_> = site.sent().last().unwrap().clone();
    assert_eq!(last, [(b.to_string(), 3)], "only session B moves on");

    let rows = queue.list(None, 50).await.unwrap();
    let row = |seq: u64, session: Uuid| {
        rows.iter()
            .find(|(i, _)| i.client_seq == seq && i.session_id == session)
            .unwrap()
    };
    assert_eq!(row(2, a).0.state, ItemState::Blocked);
    assert_eq!(row(2, a).1.as_deref(), Some("INVALID_ITEM (HTTP 422)"));
    assert_eq!(row(3, a).0.state, ItemState::Queued);
    assert_eq!(
        row(3, a).1.as_deref(),
        Some("waiting behind blocked item #2")
    );

    // Discard: the void goes first, then the item that waited.
    let (voided, void) = queue.discard(bad.id.unwrap()).await.unwrap();
    assert_eq!(voided.state, ItemState::Voided);
    assert_eq!((void.command, void.client_seq), (Command::Void, 4));
    assert_eq!(void.body, json!({"void_seq": 2}));
    queue.drain(true).await.unwrap();
    assert_eq!(
        site.sent().last().unwrap().clone(),
        [(a.to_string(), 4), (a.to_string(), 3)]
    );
    let counts = queue.counts().await.unwrap();
    assert_eq!((counts.blocked, counts.voided, counts.queued), (0, 1, 0));
}

#[wasm_bindgen_test]
async fn items_found_sending_after_a_kill_are_sent_again_with_their_keys() {
    let name = db_name("resend");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    queue.capture(a, scan("E1")).await.unwrap();
    queue.close().await.unwrap();
    // The worker leased these and was killed before it recorded an answer.
    let store = fresh(&name).await;
    let mut leased = store.session_items(a).await.unwrap();
    for item in &mut leased {
        item.state = ItemState::Sending;
    }
    store.put_items(&leased, None).await.unwrap();
    store.close();

    let queue = manual_queue(&name, &site, &clock).await;
    queue.drain(false).await.unwrap();
    let sent_keys: Vec<_> = site.requests.borrow()[0]
        .items
        .iter()
        .map(|i| i.key)
        .collect();
    assert_eq!(sent_keys, leased.iter().map(|i| i.key).collect::<Vec<_>>());
    let items = fresh(&name).await.session_items(a).await.unwrap();
    assert!(items.iter().all(|i| i.state == ItemState::Done));
}

#[wasm_bindgen_test]
async fn backoff_waits_on_the_persisted_schedule_and_a_capture_skips_it() {
    let name = db_name("backoff");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    site.answer_whole(TransportOutcome::from_text(
        503,
        r#"{"code":"OVERLOADED","message":"busy"}"#,
    ));
    let report = queue.drain(false).await.unwrap();
    assert_eq!(report.requests, 1);
    assert_eq!(report.next_attempt_at, Some(T0.plus(Millis(2_000))));
    let persisted = fresh(&name).await.backoff().await.unwrap();
    assert_eq!(
        (persisted.failures, persisted.next_attempt_at),
        (1, Some(T0.plus(Millis(2_000))))
    );

    clock.set(T0.plus(Millis(1_999)));
    assert_eq!(
        queue.drain(false).await.unwrap().requests,
        0,
        "still waiting"
    );
    clock.set(T0.plus(Millis(2_000)));
    let report = queue.drain(false).await.unwrap();
    assert_eq!(
        report.next_attempt_at,
        Some(T0.plus(Millis(6_000))),
        "then 4 s"
    );

    site.answer_each(applied);
    clock.set(T0.plus(Millis(2_500)));
    queue.capture(a, scan("E1")).await.unwrap();
    let report = queue.drain(true).await.unwrap();
    // After a request the site did not answer, one item probes first; its
    // answer brings back full batches for the rest.
    assert_eq!(
        (report.requests, report.pending, report.next_attempt_at),
        (2, 0, None)
    );
    let seqs: Vec<Vec<u64>> = site
        .sent()
        .into_iter()
        .map(|request| request.into_iter().map(|(_, seq)| seq).collect())
        .collect();
    assert_eq!(seqs, [vec![1], vec![1], vec![1], vec![2]]);
}

async fn response(status: u16, body: &str) -> TransportOutcome {
    let init = web_sys::ResponseInit::new();
    init.set_status(status);
    let response = web_sys::Response::new_with_opt_str_and_init(Some(body), &init).unwrap();
    read_response(response).await.unwrap()
}

#[wasm_bindgen_test]
async fn real_response_objects_are_classified_per_design() {
    let key = IdempotencyKey::mint().unwrap();
    let item = Item {
        id: Some(1),
        key,
        session_id: Uuid::from_u128(7),
        client_seq: 1,
        command: Command::Scan,
        occurred_at: T0,
        queued_at: T0,
        body: json!({}),
        state: ItemState::Sending,
        reason: None,
        attempts: 1,
        recorded_at: None,
        replayed: false,
        hop_ids: Vec::new(),
        updated_at: None,
        acknowledged: false,
    };
    let items = [item];
    let one = |status: u16, extra: serde_json::Value| {
        let mut result = json!({"key": key, "client_seq": 1, "status": status});
        result
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"server_time": "2026-11-29T10:15:02.480Z", "results": [result]}).to_string()
    };
    let cases = [
        (
            200,
            one(200, json!({"outcome": "applied"})),
            ResultKind::Done,
        ),
        (
            200,
            one(200, json!({"outcome": "rejected", "reason": "stale_state"})),
            ResultKind::Rejected,
        ),
        (
            200,
            one(202, json!({"outcome": "buffered"})),
            ResultKind::Buffered,
        ),
        (
            200,
            one(409, json!({"code": "OPERATION_IN_PROGRESS"})),
            ResultKind::Retryable,
        ),
        (
            200,
            one(409, json!({"code": "IDEMPOTENCY_KEY_REUSED"})),
            ResultKind::Blocked,
        ),
        (
            401,
            r#"{"code":"UNAUTHORIZED","message":"bad token"}"#.to_owned(),
            ResultKind::Deferred,
        ),
        (
            429,
            r#"{"code":"OVERLOADED","message":"slow down"}"#.to_owned(),
            ResultKind::Retryable,
        ),
        (503, String::new(), ResultKind::Retryable),
        (
            400,
            r#"{"code":"MALFORMED_REQUEST","message":"no"}"#.to_owned(),
            ResultKind::Blocked,
        ),
        (
            413,
            r#"{"code":"BODY_TOO_LARGE","message":"no"}"#.to_owned(),
            ResultKind::Unknown,
        ),
        (
            200,
            "<html>captive portal</html>".to_owned(),
            ResultKind::Unknown,
        ),
    ];
    for (status, body, expected) in cases {
        let outcome = response(status, &body).await;
        let verdict = &verdicts(&items, &outcome)[0];
        assert_eq!(verdict.kind, expected, "{status} {body}");
    }
}

#[wasm_bindgen_test]
async fn fetch_to_an_unreachable_site_is_offline() {
    let device = device();
    let request = SyncRequest {
        device_id: "HH-1".into(),
        sent_at: T0,
        items: Vec::new(),
    };
    assert_eq!(
        FetchTransport::default().send(&device, &request).await,
        TransportOutcome::Offline
    );
}

#[wasm_bindgen_test]
async fn a_burst_of_a_thousand_captures_is_all_acknowledged_present_and_contiguous() {
    let name = db_name("burst");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    let promises = js_sys::Array::new();
    for n in 0..1000 {
        let queue = queue.clone();
        promises.push(&future_to_promise(async move {
            let item = queue.capture(a, scan(&format!("E{n:04}"))).await?;
            Ok(JsValue::from_f64(item.client_seq as f64))
        }));
    }
    let acked = JsFuture::from(js_sys::Promise::all(&promises))
        .await
        .unwrap();
    let mut acked: Vec<u64> = js_sys::Array::from(&acked)
        .iter()
        .map(|v| v.as_f64().unwrap() as u64)
        .collect();
    acked.sort_unstable();
    assert_eq!(acked, (2..=1001).collect::<Vec<_>>());
    let fresh = fresh(&name).await;
    let items = fresh.session_items(a).await.unwrap();
    assert_eq!(seqs(&items), (1..=1001).collect::<Vec<_>>());
    let keys: std::collections::HashSet<_> = items.iter().map(|i| i.key).collect();
    assert_eq!(keys.len(), 1001);
}

#[wasm_bindgen_test]
async fn upgrading_v1_to_v2_derives_keys_and_rebuilds_sessions() {
    let name = db_name("upgrade");
    let session = Uuid::from_u128(0x5f1e_2d3c_4b5a_4697_8877_6655_4433_2211);
    let v1 = schema::open_at(&name, 1).await.unwrap();
    assert_eq!(v1.version(), 1.0);
    {
        let tx = write_tx(&v1, schema::ITEMS);
        let store = tx.object_store(schema::ITEMS).unwrap();
        let legacy = [
            (
                "open_session",
                json!({"operator_id": "op-17", "mode": "put_away", "context": {}}),
            ),
            ("scan", json!({"mode": "put_away", "epc": "E1"})),
            ("scan", json!({"mode": "put_away", "epc": "E2"})),
        ];
        for (seq, (command, body)) in legacy.iter().enumerate() {
            let row = json!({"session_id": session, "client_seq": seq + 1, "command": command,
                "occurred_at": "2026-11-29T09:01:00.000Z", "queued_at": "2026-11-29T09:01:00.004Z",
                "body": body, "state": "queued"});
            let value = to_js(&row).unwrap();
            store.add(value).build().unwrap().await.unwrap();
        }
        tx.commit().await.unwrap();
    }
    v1.close();

    let store = Store::open(&name).await.unwrap();
    let items = store.session_items(session).await.unwrap();
    assert_eq!(seqs(&items), [1, 2, 3]);
    for item in &items {
        let derived = IdempotencyKey::derive_from_legacy_id(item.id.unwrap()).unwrap();
        assert_eq!(item.key, derived);
        assert_eq!(item.key.version(), 8);
    }
    store.close();
    // Opening again changes nothing: the same keys, stable across restarts.
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let again = fresh(&name).await.session_items(session).await.unwrap();
    assert_eq!(
        again.iter().map(|i| i.key).collect::<Vec<_>>(),
        items.iter().map(|i| i.key).collect::<Vec<_>>()
    );
    let next = queue.capture(session, scan("E3")).await.unwrap();
    assert_eq!(next.client_seq, 4, "the rebuilt session continues its seqs");
    queue.drain(false).await.unwrap();
    assert_eq!(site.requests.borrow()[0].items[0].key, items[0].key);
}

#[wasm_bindgen_test]
async fn operator_actions_and_counts() {
    let name = db_name("actions");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    let stale = queue.capture(a, scan("E1")).await.unwrap();
    clock.set(T0.plus(Millis(5_000)));
    let counts = queue.counts().await.unwrap();
    assert_eq!(counts.queued, 2);
    assert_eq!(counts.oldest_queued_at, Some(T0));
    assert_eq!(counts.oldest_queued_age_ms, Some(5_000));
    let stale_key = stale.key;
    site.answer_each(move |item| {
        if item.key == stale_key {
            json!({"key": item.key, "client_seq": item.client_seq, "status": 200, "outcome": "rejected", "reason": "stale_state"})
        } else {
            applied(item)
        }
    });
    queue.drain(false).await.unwrap();
    assert!(
        queue.discard(stale.id.unwrap()).await.is_err(),
        "a rejected item is not discarded"
    );
    let (acked, ack) = queue.acknowledge(stale.id.unwrap(), None).await.unwrap();
    assert!(acked.acknowledged);
    assert_eq!((ack.command, ack.client_seq), (Command::Acknowledge, 3));
    assert_eq!(ack.body["target_key"], stale.key.to_string());
    queue.drain(false).await.unwrap();
    let counts = queue.counts().await.unwrap();
    assert_eq!(
        (
            counts.done,
            counts.rejected,
            counts.queued,
            counts.oldest_queued_at
        ),
        (2, 1, 0, None)
    );
    let page = queue.list(None, 1).await.unwrap();
    assert_eq!(page.len(), 1);
    let next = queue.list(page[0].0.id, 10).await.unwrap();
    assert_eq!(next[0].0.client_seq, 2);
    assert_eq!(next[0].1.as_deref(), Some("stale_state"));
}

#[wasm_bindgen_test]
async fn a_capture_drains_at_once_and_a_failed_attempt_retries_on_its_own_timer() {
    use stockhop::web::runtime::Options;
    let name = db_name("wake");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    site.answer_whole(TransportOutcome::Timeout);
    // The runtime as the worker runs it: a capture drains, and the timer
    // wakes it.
    let queue = set_up_queue(&name, &site, clock.clone(), Options::default()).await;
    let open = queue.open_session(None, open_body("op-1")).await.unwrap();
    // The clock has not moved: the capture drained at once.
    site.requests_reach(1).await;

    // The failed attempt arms the timer for the 2 s backoff step; when the
    // clock reaches it, the runtime sends again by itself.
    let step = T0.plus(Millis(2_000));
    clock.timer_armed_for(step).await;
    site.answer_each(applied);
    clock.set(step);
    site.requests_reach(2).await;
    // A drain asked for now is answered once that attempt has been taken.
    let report = queue.drain(false).await.unwrap();
    assert_eq!(report.pending, 0, "{report:?}");
    assert_eq!(
        site.requests.borrow().len(),
        2,
        "the 2 s backoff timer fired once"
    );
    let items = fresh(&name)
        .await
        .session_items(open.session_id)
        .await
        .unwrap();
    assert_eq!(items[0].state, ItemState::Done);
    assert_eq!(items[0].attempts, 2);
}

#[wasm_bindgen_test]
async fn a_drain_that_finds_one_running_waits_for_its_end() {
    let name = db_name("joined");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    for n in 0..60 {
        queue.capture(a, scan(&format!("E{n}"))).await.unwrap();
    }
    site.answer_each(applied);
    let runner = queue.clone();
    let first = future_to_promise(async move {
        runner.drain(false).await.unwrap();
        Ok(JsValue::UNDEFINED)
    });
    // Let the first drain start and stop at its first IndexedDB request.
    gloo_timers::future::TimeoutFuture::new(0).await;
    let joined = queue.drain(false).await.unwrap();
    assert_eq!(joined.pending, 0, "{joined:?}");
    let items = fresh(&name).await.session_items(a).await.unwrap();
    assert!(
        items.iter().all(|i| i.state == ItemState::Done),
        "the joined call returned before the running drain ended"
    );
    JsFuture::from(first).await.unwrap();
}

#[wasm_bindgen_test]
async fn a_second_writer_for_a_moment_costs_no_seq_and_no_scan() {
    // A worker being replaced by a newer one can take a capture beside it.
    let name = db_name("two-writers");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let old = manual_queue(&name, &site, &clock).await;
    let new = manual_queue(&name, &site, &clock).await;
    let a = open(&old, "op-1").await;
    assert_eq!(old.capture(a, scan("E1")).await.unwrap().client_seq, 2);
    assert_eq!(new.capture(a, scan("E2")).await.unwrap().client_seq, 3);
    // The old worker remembers seq 2 as the last: its next capture must
    // not be lost to the unique (session, seq) index, nor reuse seq 3.
    assert_eq!(old.capture(a, scan("E3")).await.unwrap().client_seq, 4);
    let items = fresh(&name).await.session_items(a).await.unwrap();
    assert_eq!(seqs(&items), [1, 2, 3, 4]);
    let epcs: Vec<_> = items[1..].iter().map(|i| i.body["epc"].clone()).collect();
    assert_eq!(epcs, [json!("E1"), json!("E2"), json!("E3")]);
}

#[wasm_bindgen_test]
async fn done_items_are_pruned_after_the_retention_window_and_no_other_item_is() {
    let name = db_name("prune");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    let rejected = queue.capture(a, scan("E1")).await.unwrap();
    let rejected_key = rejected.key;
    site.answer_each(move |item| {
        if item.key == rejected_key {
            json!({"key": item.key, "client_seq": item.client_seq, "status": 200,
                   "outcome": "rejected", "reason": "stale_state"})
        } else {
            applied(item)
        }
    });
    queue.drain(false).await.unwrap();
    site.answer_whole(TransportOutcome::Offline);
    let waiting = queue.capture(a, scan("E2")).await.unwrap();
    queue.drain(false).await.unwrap();
    let counts = queue.counts().await.unwrap();
    assert_eq!((counts.done, counts.rejected, counts.queued), (1, 1, 1));

    let week = stockhop::queue::item::DONE_RETENTION;
    clock.set(T0.plus(week).plus(Millis(3_600_000)));
    queue.drain(false).await.unwrap();
    let counts = queue.counts().await.unwrap();
    assert_eq!(
        (counts.done, counts.rejected, counts.queued),
        (0, 1, 1),
        "the open_session went; the rejected and the queued stay"
    );
    let items = fresh(&name).await.session_items(a).await.unwrap();
    assert_eq!(seqs(&items), [2, 3]);
    assert_eq!(items[1].key, waiting.key);
}

#[wasm_bindgen_test]
async fn a_close_behind_waiting_captures_writes_them_first_and_stops_the_runtime() {
    let name = db_name("close-behind");
    let (site, clock) = (FakeSite::new(), TestClock::at(T0));
    let queue = manual_queue(&name, &site, &clock).await;
    let a = open(&queue, "op-1").await;
    // `join` polls the burst first: its captures are in the runtime's
    // channel before the close.
    let (burst, closed) = futures_util::future::join(
        queue.capture_many(a, vec![scan("E1"), scan("E2")]),
        queue.clone().close(),
    )
    .await;
    closed.unwrap();
    let acked: Vec<u64> = burst.into_iter().map(|r| r.unwrap().client_seq).collect();
    assert_eq!(acked, [2, 3]);
    assert_eq!(
        seqs(&fresh(&name).await.session_items(a).await.unwrap()),
        [1, 2, 3]
    );
    let stopped = queue.counts().await.unwrap_err();
    assert_eq!(stopped.code(), "STOPPED");
}
