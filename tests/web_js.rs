//! The hand-written readers and writers of the JS edge in a real browser
//! page: stored records read back exactly as written, older record shapes
//! still read, every page message reads into its request, and a bad
//! message names the field at fault. Where the core type still derives
//! `Deserialize` or `Serialize`, the reader or writer is checked against
//! serde-wasm-bindgen, the path it replaced.
#![cfg(target_arch = "wasm32")]

#[path = "web_queue_support.rs"]
mod support;

use indexed_db_futures::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::json;
use stockhop::backoff::Backoff;
use stockhop::body::Body;
use stockhop::key::IdempotencyKey;
use stockhop::queue::{Item, ItemState, Session};
use stockhop::time::UnixMs;
use stockhop::web::error::{QueueError, QueueErrorKind};
use stockhop::web::js::{self, FromJs};
use stockhop::web::message::PageRequest;
use stockhop::web::schema;
use stockhop::web::store::{from_js, DeviceConfig, Store};
use stockhop::web::write::{self, ToJs};
use stockhop::wire::{Command, Mode};
use support::*;
use uuid::Uuid;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const SESSION: Uuid = Uuid::from_u128(0x5f1e_2d3c_4b5a_4697_8877_6655_4433_2211);
const KEY: &str = "8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab";

/// A JS value built by the browser from a JS expression, so the tests see
/// what a page or an older build really hands over (`undefined`, `Map`, …).
fn js_expr(expression: &str) -> JsValue {
    js_sys::Function::new_no_args(&format!("return ({expression});"))
        .call0(&JsValue::NULL)
        .unwrap()
}

fn js_json(value: serde_json::Value) -> JsValue {
    to_js(&value).unwrap()
}

/// Reads `value` with the hand-written reader and with serde (the path
/// it replaced) and checks they agree: the same value, or both refuse.
fn check_same<T: FromJs + DeserializeOwned + PartialEq + std::fmt::Debug>(
    value: &JsValue,
) -> Option<T> {
    let by_hand = T::from_js(value);
    let by_serde = serde_wasm_bindgen::from_value::<T>(value.clone());
    assert_eq!(
        by_hand.as_ref().ok(),
        by_serde.as_ref().ok(),
        "hand: {by_hand:?}, serde: {by_serde:?}"
    );
    by_hand.ok()
}

fn full_item() -> Item {
    Item {
        id: Some(41),
        key: IdempotencyKey::parse(KEY).unwrap(),
        session_id: SESSION,
        client_seq: 7,
        command: Command::Scan,
        occurred_at: UnixMs(1_795_947_302_120),
        queued_at: UnixMs(1_795_947_302_123),
        body: body(
            json!({"mode": "receive", "epc": "E1", "qty": 2, "weight": 1.5,
                     "lines": [1, -2, null, true, "x", {"deep": []}], "note": null}),
        ),
        state: ItemState::Rejected,
        reason: Some("stale_state".into()),
        attempts: 3,
        recorded_at: Some(UnixMs(1_795_947_302_401)),
        replayed: true,
        hop_ids: vec![11, -12, 9_007_199_254_740_991],
        updated_at: Some(UnixMs(1_795_947_302_500)),
        acknowledged: true,
    }
}

fn bare_item() -> Item {
    Item {
        id: None,
        body: Body::default(),
        state: ItemState::Queued,
        reason: None,
        attempts: 0,
        recorded_at: None,
        replayed: false,
        hop_ids: Vec::new(),
        updated_at: None,
        acknowledged: false,
        ..full_item()
    }
}

#[wasm_bindgen_test]
fn an_item_reads_back_exactly_as_written_with_every_optional_field_set_or_unset() {
    for item in [full_item(), bare_item()] {
        let stored = write::item(&item);
        assert_eq!(from_js::<Item>(stored.clone()).unwrap(), item);
        assert_eq!(check_same::<Item>(&stored), Some(item));
    }
    for state in ItemState::ALL {
        let item = Item {
            state,
            ..full_item()
        };
        assert_eq!(check_same::<Item>(&write::item(&item)), Some(item));
    }
    for command in ["open_session", "scan", "undo", "void", "close_session"] {
        let mut row: serde_json::Value =
            serde_wasm_bindgen::from_value(write::item(&full_item())).unwrap();
        row["command"] = json!(command);
        let item = check_same::<Item>(&js_json(row)).unwrap();
        assert_eq!(item.command.as_str(), command);
    }
}

/// The text `JSON.stringify` makes of `value`: equal texts mean the same
/// fields, in the same order, with the same values.
fn text(value: &JsValue) -> String {
    js_sys::JSON::stringify(value).unwrap().into()
}

/// Checks a writer's object against serde-wasm-bindgen's for the same value.
fn check_written<T: serde::Serialize>(value: &T, written: JsValue) {
    assert_eq!(text(&written), text(&to_js(value).unwrap()));
}

#[wasm_bindgen_test]
fn every_record_writer_builds_the_object_serde_built() {
    for item in [full_item(), bare_item()] {
        check_written(&item, write::item(&item));
    }
    for state in ItemState::ALL {
        let item = Item {
            state,
            hop_ids: vec![3],
            ..bare_item()
        };
        check_written(&item, write::item(&item));
    }
    let mut session = Session {
        session_id: SESSION,
        operator_id: "op-17".into(),
        mode: Mode::DispatchVerify,
        opened_at: UnixMs(1_795_947_302_120),
        next_seq: 4,
        closed: false,
    };
    check_written(&session, session.to_js());
    session.closed = true;
    check_written(&session, session.to_js());
    for backoff in [
        Backoff::default(),
        Backoff {
            failures: 3,
            next_attempt_at: Some(UnixMs(1_795_947_310_000)),
        },
    ] {
        check_written(&backoff, backoff.to_js());
    }
    let device = DeviceConfig {
        site_url: "https://site.example:8443".into(),
        device_token: "t0ken".into(),
        device_id: "mc3390-07".into(),
    };
    check_written(&device, device.to_js());
    let request = stockhop::wire::SyncRequest {
        device_id: "mc3390-07".into(),
        sent_at: UnixMs(1_795_947_302_999),
        items: vec![full_item().to_wire(), bare_item().to_wire()],
    };
    check_written(&request, write::sync_request(&request));
    let mut counts = stockhop::queue::Counts::default();
    check_written(&counts, counts.to_js());
    counts.add(ItemState::Queued, 5);
    counts.add(ItemState::Voided, 1);
    let counts = counts.with_oldest(Some(UnixMs(1_000)), UnixMs(4_000));
    check_written(&counts, counts.to_js());
}

#[wasm_bindgen_test]
fn a_body_with_no_exact_js_number_is_refused_not_altered() {
    let message = format!(
        "{{type: 'capture', session_id: '{SESSION}', body: {{epc: 'E1', serial: 2n ** 64n - 1n}}}}"
    );
    let refused =
        PageRequest::read(&js_expr(&message)).expect_err("2^64 - 1 has no exact JS number");
    assert_eq!(refused.code(), "BAD_MESSAGE", "{refused}");
    assert!(
        refused.to_string().contains("capture.body.serial"),
        "{refused}"
    );
    let burst = format!(
        "{{type: 'capture_many', session_id: '{SESSION}', bodies: [{{epc: 'E1'}}, {{n: -(2n ** 53n)}}]}}"
    );
    let refused = PageRequest::read(&js_expr(&burst)).unwrap_err();
    assert!(
        refused.to_string().contains("capture_many.bodies[1].n"),
        "{refused}"
    );
    // Within ±(2^53 − 1) a BigInt is a number like any other.
    let exact = Body::read(&js_expr("({n: 2n ** 53n - 1n, m: -5n})")).unwrap();
    assert_eq!(
        json_of(&exact),
        json!({"n": 9_007_199_254_740_991u64, "m": -5})
    );
}

#[wasm_bindgen_test]
fn lists_read_from_any_iterable_and_a_throwing_one_is_refused() {
    let from_set =
        format!("{{type: 'capture_many', session_id: '{SESSION}', bodies: new Set([1, 'two'])}}");
    match PageRequest::read(&js_expr(&from_set)) {
        Ok(PageRequest::CaptureMany { bodies, .. }) => {
            assert_eq!(bodies, [body(json!(1)), body(json!("two"))])
        }
        other => panic!("{other:?}"),
    }
    let throwing = format!(
        "{{type: 'capture_many', session_id: '{SESSION}',
           bodies: {{[Symbol.iterator]() {{ throw new Error('no'); }}}}}}"
    );
    let refused = PageRequest::read(&js_expr(&throwing)).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("capture_many.bodies: expected a list"),
        "{refused}"
    );
}

#[wasm_bindgen_test]
fn a_body_is_a_plain_copy_of_what_the_page_handed_over() {
    let source =
        js_expr("({epc: 'E1', tags: new Map([['dock', 4]]), at: new Date(0), gone: undefined})");
    let body = Body::read(&source).unwrap();
    js_sys::Reflect::set(&source, &"epc".into(), &"changed".into()).unwrap();
    assert_eq!(
        body.to_json_text(),
        r#"{"epc":"E1","tags":{"dock":4},"at":{},"gone":null}"#
    );
    // Every key stays an own data property, `__proto__` too, as JSON.parse makes it.
    let parsed = js_expr(r#"JSON.parse('{"__proto__": {"x": 1}, "y": 2}')"#);
    assert_eq!(
        Body::read(&parsed).unwrap().to_json_text(),
        r#"{"__proto__":{"x":1},"y":2}"#
    );
    // The same JSON is the same body, whatever the key order.
    assert_eq!(
        Body::read(&js_expr("({a: 1, b: [true, null]})")).unwrap(),
        Body::read(&js_expr("({b: [true, null], a: 1})")).unwrap()
    );
    assert_ne!(
        Body::read(&js_expr("({a: 1})")).unwrap(),
        Body::read(&js_expr("({a: 1, b: 2})")).unwrap()
    );
    assert_ne!(
        Body::read(&js_expr("[1, 2]")).unwrap(),
        Body::read(&js_expr("({0: 1, 1: 2})")).unwrap()
    );
}

#[wasm_bindgen_test]
fn older_and_sparser_record_shapes_read_as_serde_read_them() {
    let v1_era = format!(
        "{{key: '{KEY}', session_id: '{SESSION}', client_seq: 2, command: 'scan',
           occurred_at: '2026-11-29T09:01:00.000Z', queued_at: '2026-11-29T09:01:00.004+00:00',
           state: 'queued'}}"
    );
    let item = check_same::<Item>(&js_expr(&v1_era)).unwrap();
    assert_eq!(
        (item.id, item.attempts, item.body.clone()),
        (None, 0, Body::default())
    );
    let nulls = format!(
        "{{id: null, key: '{KEY}', session_id: '{SESSION}', client_seq: 2, command: 'scan',
           occurred_at: '2026-11-29T09:01:00.000Z', queued_at: '2026-11-29T09:01:00.004Z',
           body: undefined, state: 'sending', reason: null, recorded_at: null, updated_at: undefined,
           extra: 'ignored'}}"
    );
    assert_eq!(check_same::<Item>(&js_expr(&nulls)).unwrap().id, None);
    let tagged = format!(
        "{{key: '{KEY}', session_id: '{SESSION}', client_seq: 2n, command: {{void: null}},
           occurred_at: '2026-11-29T09:01:00.000Z', queued_at: '2026-11-29T09:01:00.004Z',
           state: 'blocked', hop_ids: [1n, 2]}}"
    );
    let item = check_same::<Item>(&js_expr(&tagged)).unwrap();
    assert_eq!((item.command, item.hop_ids), (Command::Void, vec![1, 2]));

    let session = js_expr(&format!(
        "{{session_id: '{SESSION}', operator_id: 'op-1', mode: 'put_away',
           opened_at: '2026-11-29T09:01:00.000Z', next_seq: 4}}"
    ));
    let session = check_same::<Session>(&session).unwrap();
    assert_eq!((session.mode, session.closed), (Mode::PutAway, false));
    let backoff = check_same::<Backoff>(&js_expr("{failures: 2}")).unwrap();
    assert_eq!(
        backoff,
        Backoff {
            failures: 2,
            next_attempt_at: None
        }
    );
    let backoff = js_json(json!({"failures": 1, "next_attempt_at": "2026-11-29T09:01:02.000Z"}));
    assert!(check_same::<Backoff>(&backoff)
        .unwrap()
        .next_attempt_at
        .is_some());
}

#[wasm_bindgen_test]
fn records_that_serde_refused_are_refused_with_the_field_named() {
    let good = serde_json::to_value(full_item()).unwrap();
    for (field, bad, named) in [
        ("client_seq", json!(-1), "item.client_seq"),
        ("client_seq", json!(1.5), "item.client_seq"),
        ("client_seq", json!("1"), "item.client_seq"),
        ("client_seq", json!(null), "item.client_seq"),
        ("key", json!("8a0c"), "item.key"),
        ("session_id", json!(7), "item.session_id"),
        ("command", json!("fly"), "item.command"),
        ("state", json!("lost"), "item.state"),
        ("queued_at", json!("yesterday"), "item.queued_at"),
        ("attempts", json!(4_294_967_296u64), "item.attempts"),
        ("attempts", json!(null), "item.attempts"),
        ("replayed", json!(null), "item.replayed"),
        ("replayed", json!(1), "item.replayed"),
        ("hop_ids", json!([1.5]), "item.hop_ids"),
        ("hop_ids", json!("1"), "item.hop_ids"),
        ("reason", json!(3), "item.reason"),
    ] {
        let mut row = good.clone();
        row[field] = bad.clone();
        let value = js_json(row);
        assert_eq!(check_same::<Item>(&value), None, "{field}: {bad}");
        let err = from_js::<Item>(value).unwrap_err();
        assert!(
            matches!(err.kind(), QueueErrorKind::Storage(why) if why.contains(named)),
            "{field}: {err}"
        );
    }
    let mut row = good.clone();
    row.as_object_mut().unwrap().remove("queued_at");
    assert_eq!(check_same::<Item>(&js_json(row)), None);
    assert_eq!(check_same::<Item>(&JsValue::from_str("item")), None);
    assert_eq!(
        check_same::<Backoff>(&js_expr("{next_attempt_at: null}")),
        None
    );
}

#[wasm_bindgen_test]
fn json_bodies_convert_as_serde_json_values_did() {
    // The copy `js::json` makes reads as the same `serde_json` value the
    // original does, wherever serde read the original.
    let as_serde = |value: JsValue| serde_wasm_bindgen::from_value::<serde_json::Value>(value);
    for expression in [
        "null",
        "undefined",
        "true",
        "0",
        "-0",
        "-12",
        "9007199254740991",
        "9007199254740992",
        "1.5",
        "NaN",
        "Infinity",
        "12n",
        "-12n",
        "'text'",
        "[1, [2, [3]], undefined, null]",
        "({a: {b: [1, {c: 'd'}]}, e: undefined, f: NaN})",
        "new Map([['k', 1], ['m', [2]]])",
        "new Date(0)",
        "[]",
        "({})",
    ] {
        let value = js_expr(expression);
        let by_hand = js::json(&value).map(|copy| as_serde(copy).unwrap());
        let by_serde = as_serde(value.clone());
        assert_eq!(
            by_hand.as_ref().ok(),
            by_serde.as_ref().ok(),
            "{expression}"
        );
        assert!(by_hand.is_ok(), "{expression}: {by_hand:?}");
    }
    assert_eq!(js::json(&js_expr("3")).unwrap().as_f64(), Some(3.0));
    assert_eq!(js::json(&js_expr("12n")).unwrap().as_f64(), Some(12.0));
    // serde read a BigInt beyond 2^53 as an integer, but no JS number
    // holds it exactly: the copy refuses it rather than round it.
    for beyond in [
        "18446744073709551615n",
        "9007199254740992n",
        "-9007199254740992n",
    ] {
        assert!(as_serde(js_expr(beyond)).is_ok(), "serde read {beyond}");
        assert_eq!(js::json(&js_expr(beyond)).unwrap_err().at(), "", "{beyond}");
    }
    for (expression, at) in [
        ("() => 1", ""),
        ("Symbol('s')", ""),
        ("new Set([1])", ""),
        ("new Uint8Array([1])", ""),
        ("new ArrayBuffer(1)", ""),
        ("340282366920938463463374607431768211456n", ""),
        ("new Map([[1, 2]])", ""),
        ("({a: [1, () => 1]})", ".a[1]"),
        ("[{b: Symbol('s')}]", "[0].b"),
    ] {
        let value = js_expr(expression);
        assert!(as_serde(value.clone()).is_err(), "serde read {expression}");
        assert_eq!(js::json(&value).unwrap_err().at(), at, "{expression}");
    }
}

fn read(message: serde_json::Value) -> Result<PageRequest, QueueError> {
    PageRequest::read(&js_json(message))
}

#[wasm_bindgen_test]
fn every_page_message_reads_into_its_request() {
    let session = SESSION.to_string();
    let cases = [
        (
            json!({"type": "setup", "site_url": "https://s", "device_token": "t", "device_id": "HH-1"}),
            PageRequest::Setup {
                site_url: "https://s".into(),
                device_token: "t".into(),
                device_id: "HH-1".into(),
            },
        ),
        (json!({"type": "device"}), PageRequest::Device {}),
        (
            json!({"type": "open_session", "operator_id": "op-9", "mode": "receive"}),
            PageRequest::OpenSession {
                session_id: None,
                operator_id: "op-9".into(),
                mode: Mode::Receive,
                context: stockhop::body::empty_object(),
            },
        ),
        (
            json!({"type": "open_session", "session_id": session, "operator_id": "op-9",
                   "mode": "find_unit", "context": {"dock": 4, "tags": ["a"]}}),
            PageRequest::OpenSession {
                session_id: Some(SESSION),
                operator_id: "op-9".into(),
                mode: Mode::FindUnit,
                context: body(json!({"dock": 4, "tags": ["a"]})),
            },
        ),
        (
            json!({"type": "capture", "session_id": session, "body": {"epc": "E1", "qty": 1.5}}),
            PageRequest::Capture {
                session_id: SESSION,
                command: Command::Scan,
                body: body(json!({"epc": "E1", "qty": 1.5})),
            },
        ),
        (
            json!({"type": "capture", "session_id": session, "command": "undo"}),
            PageRequest::Capture {
                session_id: SESSION,
                command: Command::Undo,
                body: Body::default(),
            },
        ),
        (
            json!({"type": "capture_many", "session_id": session, "bodies": [{"epc": "E2"}, 3]}),
            PageRequest::CaptureMany {
                session_id: SESSION,
                command: Command::Scan,
                bodies: vec![body(json!({"epc": "E2"})), body(json!(3))],
            },
        ),
        (
            json!({"type": "close_session", "session_id": session}),
            PageRequest::CloseSession {
                session_id: SESSION,
            },
        ),
        (
            json!({"type": "list"}),
            PageRequest::List {
                after: None,
                limit: None,
            },
        ),
        (
            json!({"type": "list", "after": 12, "limit": 20}),
            PageRequest::List {
                after: Some(12),
                limit: Some(20),
            },
        ),
        (json!({"type": "counts"}), PageRequest::Counts {}),
        (json!({"type": "retry_now"}), PageRequest::RetryNow {}),
        (json!({"type": "wake"}), PageRequest::Wake {}),
        (
            json!({"type": "discard", "id": 5}),
            PageRequest::Discard { id: 5 },
        ),
        (
            json!({"type": "acknowledge", "id": 6}),
            PageRequest::Acknowledge { id: 6 },
        ),
        (json!({"type": "storage"}), PageRequest::Storage {}),
    ];
    for (message, expected) in cases {
        assert_eq!(read(message.clone()), Ok(expected), "{message}");
    }
    let with_undefined = js_expr(&format!(
        "{{type: 'capture', session_id: '{SESSION}', body: undefined, command: undefined}}"
    ));
    assert_eq!(
        PageRequest::read(&with_undefined),
        Ok(PageRequest::Capture {
            session_id: SESSION,
            command: Command::Scan,
            body: Body::default()
        })
    );
}

#[wasm_bindgen_test]
fn a_bad_message_is_refused_naming_the_field() {
    let session = SESSION.to_string();
    for (message, named) in [
        (json!({"kind": "counts"}), "`type`"),
        (json!({"type": 3}), "`type`"),
        (json!({"type": "launch"}), "type: expected one of"),
        (json!({"type": "capture"}), "capture.session_id"),
        (
            json!({"type": "capture", "session_id": "not-a-uuid"}),
            "capture.session_id",
        ),
        (
            json!({"type": "capture", "session_id": session, "command": "fly"}),
            "capture.command",
        ),
        (
            json!({"type": "capture_many", "session_id": session}),
            "capture_many.bodies",
        ),
        (
            json!({"type": "open_session", "operator_id": 9, "mode": "receive"}),
            "open_session.operator_id",
        ),
        (
            json!({"type": "open_session", "operator_id": "op", "mode": "dance"}),
            "open_session.mode",
        ),
        (
            json!({"type": "open_session", "operator_id": "op", "mode": "receive", "context": null}),
            "open_session.context",
        ),
        (
            json!({"type": "open_session", "operator_id": "op", "mode": "receive", "context": [1]}),
            "open_session.context",
        ),
        (
            json!({"type": "setup", "site_url": "s"}),
            "setup.device_token",
        ),
        (json!({"type": "list", "limit": -1}), "list.limit"),
        (json!({"type": "list", "after": "3"}), "list.after"),
        (json!({"type": "discard"}), "discard.id"),
        (json!({"type": "acknowledge", "id": 1.5}), "acknowledge.id"),
    ] {
        match read(message.clone()).map_err(|err| err.kind().clone()) {
            Err(QueueErrorKind::BadMessage(why)) => {
                assert!(why.contains(named), "{message}: {why}")
            }
            other => panic!("{message}: {other:?}"),
        }
    }
    let nested = js_expr(&format!(
        "{{type: 'capture_many', session_id: '{SESSION}', bodies: [{{}}, {{f: () => 1}}]}}"
    ));
    match PageRequest::read(&nested) {
        Err(err) if matches!(err.kind(), QueueErrorKind::BadMessage(_)) => {
            assert_eq!(err.code(), "BAD_MESSAGE");
            assert!(
                err.to_string().contains("capture_many.bodies[1].f"),
                "{err}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        PageRequest::read(&JsValue::from_str("counts")).map_err(|err| err.kind().clone()),
        Err(QueueErrorKind::BadMessage(_))
    ));
}

#[wasm_bindgen_test]
async fn stored_setup_and_backoff_read_back_from_indexeddb() {
    let name = db_name("meta-records");
    let store = Store::open(&name).await.unwrap();
    assert_eq!(store.device().await.unwrap().as_deref(), None);
    assert_eq!(store.backoff().await.unwrap(), Backoff::default());
    let device = DeviceConfig {
        site_url: "https://site.example:8443".into(),
        device_token: "secret".into(),
        device_id: "HH-0042".into(),
    };
    store.set_device(&device).await.unwrap();
    assert_eq!(store.device().await.unwrap().as_deref(), Some(&device));
    let backoff = Backoff {
        failures: 3,
        next_attempt_at: Some(UnixMs(1_795_947_310_000)),
    };
    store.put_items(&[], Some(backoff)).await.unwrap();
    assert_eq!(store.backoff().await.unwrap(), backoff);
    store.close();

    // A backoff written without its optional field (an older build) reads.
    let db = schema::open(&name).await.unwrap();
    let tx = write_tx(&db, schema::META);
    let meta = tx.object_store(schema::META).unwrap();
    meta.put(js_expr("{name: 'backoff', value: {failures: 1}}"))
        .primitive()
        .unwrap()
        .await
        .unwrap();
    meta.put(js_expr("{name: 'device', value: {site_url: 'https://s'}}"))
        .primitive()
        .unwrap()
        .await
        .unwrap();
    tx.commit().await.unwrap();
    db.close();
    let store = Store::open(&name).await.unwrap();
    assert_eq!(
        store.backoff().await.unwrap(),
        Backoff {
            failures: 1,
            next_attempt_at: None
        }
    );
    match store.device().await.map_err(|err| err.kind().clone()) {
        Err(QueueErrorKind::Storage(why)) => assert!(why.contains("device.device_token"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[wasm_bindgen_test]
fn the_sites_answers_read_as_serde_read_them() {
    use stockhop::wire::{ErrorBody, SyncResponse};
    let full = js_json(
        json!({"server_time": "2026-11-29T10:15:02.480Z", "results": [
        {"key": KEY, "client_seq": 1, "status": 200, "outcome": "applied", "replayed": true,
         "recorded_at": "2026-11-29T10:15:02.401Z", "hop_ids": [4, 5]},
        {"key": KEY, "client_seq": 2, "status": 200, "outcome": "rejected", "reason": "stale_state"},
        {"key": KEY, "client_seq": 3, "status": 409, "code": "OPERATION_IN_PROGRESS",
         "message": "try again", "outcome": null}]}),
    );
    let response = check_same::<SyncResponse>(&full).unwrap();
    assert_eq!(response.results.len(), 3);
    assert_eq!(response.results[0].hop_ids, [4, 5]);
    for bad in [
        json!({"results": []}),
        json!({"server_time": "2026-11-29T10:15:02.480Z"}),
        json!({"server_time": "2026-11-29T10:15:02.480Z", "results": [{"key": KEY, "client_seq": 1}]}),
        json!({"server_time": "2026-11-29T10:15:02.480Z", "results": [
            {"key": KEY, "client_seq": 1, "status": 70000}]}),
        json!({"server_time": "2026-11-29T10:15:02.480Z", "results": [
            {"key": KEY, "client_seq": 1, "status": 200, "outcome": "maybe"}]}),
        json!([]),
    ] {
        assert_eq!(
            check_same::<SyncResponse>(&js_json(bad.clone())),
            None,
            "{bad}"
        );
    }
    let error = check_same::<ErrorBody>(&js_json(json!({"code": "BUSY", "message": "later"})));
    assert_eq!(error.unwrap().code, "BUSY");
    assert_eq!(
        check_same::<ErrorBody>(&js_json(json!({"code": "BUSY"}))),
        None
    );
}
