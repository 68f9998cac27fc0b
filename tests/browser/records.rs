//! The JS edge in a real headless Chromium page: records already stored
//! by earlier builds still read (fixtures of their shapes, written into a
//! real IndexedDB), what the store writes reads back the same, and page
//! messages read into their requests or are refused with the field named.
use crate::support::*;
use indexed_db_futures::prelude::*;
use serde_json::json;
use stockhop::backoff::Backoff;
use stockhop::key::IdempotencyKey;
use stockhop::queue::{Item, ItemState, Session};
use stockhop::reference::{ListKind, RowKind};
use stockhop::time::UnixMs;
use stockhop::web::convert::{from_record, to_js};
use stockhop::web::error::QueueError;
use stockhop::web::message::PageRequest;
use stockhop::web::schema;
use stockhop::wire::{Command, Mode};
use uuid::Uuid;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

const SESSION: Uuid = Uuid::from_u128(0x5f1e_2d3c_4b5a_4697_8877_6655_4433_2211);
const KEY: &str = "8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab";

/// A JS value built by the browser from a JS expression, so the tests see
/// what a page or an older build really hands over (`undefined`, `BigInt`, …).
fn js_expr(expression: &str) -> JsValue {
    js_sys::Function::new_no_args(&format!("return ({expression});"))
        .call0(&JsValue::NULL)
        .unwrap()
}

/// Items as the previous builds stored them, field for field: the full
/// shape (every optional field set), the bare one (every optional field
/// unset, as written), an item from before `attempts`, `body` and `id`
/// were written, one with `null`s and `undefined`s where an `Option` was
/// absent, and one with a `BigInt` seq and an externally tagged command.
fn stored_item_fixtures() -> [(&'static str, String); 5] {
    [
        (
            "full",
            format!(
                "{{id: 41, key: '{KEY}', session_id: '{SESSION}', client_seq: 7, command: 'scan',
                   occurred_at: '2026-11-29T09:01:00.000Z', queued_at: '2026-11-29T09:01:00.004Z',
                   body: {{mode: 'receive', epc: 'E1', qty: 2, weight: 1.5,
                           lines: [1, -2, null, true, 'x', {{deep: []}}], note: null}},
                   state: 'rejected', reason: 'stale_state', attempts: 3,
                   recorded_at: '2026-11-29T10:15:02.401Z', replayed: true,
                   hop_ids: [11, -12, 9007199254740991], updated_at: '2026-11-29T10:15:02.500Z',
                   acknowledged: true}}"
            ),
        ),
        (
            "bare",
            format!(
                "{{id: 42, key: '{KEY}', session_id: '{SESSION}', client_seq: 8, command: 'scan',
                   occurred_at: '2026-11-29T09:01:00.000Z', queued_at: '2026-11-29T09:01:00.004Z',
                   body: null, state: 'queued', attempts: 0, replayed: false,
                   acknowledged: false}}"
            ),
        ),
        (
            "sparse",
            format!(
                "{{id: 43, key: '{KEY}', session_id: '{SESSION}', client_seq: 9, command: 'scan',
                   occurred_at: '2026-11-29T09:01:00.000Z',
                   queued_at: '2026-11-29T09:01:00.004+00:00', state: 'queued'}}"
            ),
        ),
        (
            "nulls",
            format!(
                "{{id: 44, key: '{KEY}', session_id: '{SESSION}', client_seq: 10,
                   command: 'scan', occurred_at: '2026-11-29T09:01:00.000Z',
                   queued_at: '2026-11-29T09:01:00.004Z', body: undefined, state: 'sending',
                   reason: null, recorded_at: null, updated_at: undefined, extra: 'ignored'}}"
            ),
        ),
        (
            "tagged",
            format!(
                "{{id: 45, key: '{KEY}', session_id: '{SESSION}', client_seq: 11n,
                   command: {{void: null}}, occurred_at: '2026-11-29T09:01:00.000Z',
                   queued_at: '2026-11-29T09:01:00.004Z', body: {{void_seq: 4}},
                   state: 'blocked', hop_ids: [1n, 2]}}"
            ),
        ),
    ]
}

#[wasm_bindgen_test]
fn items_in_every_shape_earlier_builds_stored_still_read() {
    let read: Vec<Item> = stored_item_fixtures()
        .iter()
        .map(|(name, fixture)| from_record(js_expr(fixture), "item").expect(name))
        .collect();
    let full = &read[0];
    assert_eq!(full.key, IdempotencyKey::parse(KEY).unwrap());
    assert_eq!(full.body["lines"][5], json!({"deep": []}));
    assert_eq!(full.body["weight"], json!(1.5));
    assert_eq!(full.hop_ids, [11, -12, 9_007_199_254_740_991]);
    assert_eq!(
        (full.state, full.attempts, full.acknowledged),
        (ItemState::Rejected, 3, true)
    );
    assert_eq!(
        full.recorded_at.unwrap().to_string(),
        "2026-11-29T10:15:02.401Z"
    );
    let bare = &read[1];
    assert_eq!(
        (bare.body.clone(), bare.reason.clone(), bare.updated_at),
        (json!(null), None, None)
    );
    let sparse = &read[2];
    assert_eq!(
        (sparse.attempts, sparse.replayed, sparse.hop_ids.len()),
        (0, false, 0)
    );
    assert_eq!(
        sparse.queued_at,
        UnixMs::parse_rfc3339("2026-11-29T09:01:00.004Z").unwrap()
    );
    let nulls = &read[3];
    assert_eq!(
        (nulls.state, nulls.body.clone(), nulls.reason.clone()),
        (ItemState::Sending, json!(null), None)
    );
    let tagged = &read[4];
    assert_eq!((tagged.client_seq, tagged.command), (11, Command::Void));
    assert_eq!(
        tagged.position(),
        (4, 11),
        "the void stands where it discards"
    );
}

#[wasm_bindgen_test]
fn an_item_the_store_writes_reads_back_the_same_and_as_the_old_writer_wrote_it() {
    for (name, fixture) in stored_item_fixtures().iter().take(2) {
        let original = js_expr(fixture);
        let item: Item = from_record(original.clone(), "item").expect(name);
        let written = to_js(&item).unwrap();
        assert_eq!(from_record::<Item>(written.clone(), "item").unwrap(), item);
        // Field for field the object earlier builds stored (their writer
        // left out `None`s the type skips and wrote the rest as `null`).
        let text = |value: &JsValue| -> serde_json::Value {
            serde_json::from_str(&String::from(js_sys::JSON::stringify(value).unwrap())).unwrap()
        };
        assert_eq!(text(&written), text(&original), "{name}");
    }
}

#[wasm_bindgen_test]
fn sessions_and_meta_rows_earlier_builds_stored_still_read() {
    let session: Session = from_record(
        js_expr(&format!(
            "{{session_id: '{SESSION}', operator_id: 'op-1', mode: 'put_away',
               opened_at: '2026-11-29T09:01:00.000Z', next_seq: 4}}"
        )),
        "session",
    )
    .unwrap();
    assert_eq!(
        (session.mode, session.next_seq, session.closed),
        (Mode::PutAway, 4, false)
    );
    let backoff: Backoff = from_record(js_expr("{failures: 2}"), "backoff").unwrap();
    assert_eq!(
        backoff,
        Backoff {
            failures: 2,
            next_attempt_at: None
        }
    );
}

#[wasm_bindgen_test]
async fn stored_fixtures_read_through_the_store_from_a_real_database() {
    let name = db_name("fixtures");
    let db = schema::open(&name).await.unwrap();
    {
        let tx = db
            .transaction([schema::ITEMS, schema::SESSIONS, schema::META])
            .with_mode(indexed_db_futures::transaction::TransactionMode::Readwrite)
            .build()
            .unwrap();
        let items = tx.object_store(schema::ITEMS).unwrap();
        for (at, (_, fixture)) in stored_item_fixtures().iter().enumerate() {
            // Each its own key: the key index is unique.
            let row = js_expr(fixture);
            let key = format!("8a0c5e2e-4b1f-4c3d-9e8f-01234567890{at}");
            js_sys::Reflect::set(&row, &"key".into(), &key.into()).unwrap();
            if at == 4 {
                js_sys::Reflect::set(&row, &"client_seq".into(), &JsValue::from_f64(11.0)).unwrap();
            }
            items.put(row).build().unwrap().await.unwrap();
        }
        let meta = tx.object_store(schema::META).unwrap();
        for row in [
            "{name: 'device', value: {site_url: 'https://site:8443', device_token: 't', device_id: 'HH-7'}}",
            "{name: 'backoff', value: {failures: 3, next_attempt_at: '2026-11-29T09:01:08.000Z'}}",
        ] {
            meta.put(js_expr(row)).build().unwrap().await.unwrap();
        }
        tx.commit().await.unwrap();
    }
    db.close();

    let store = fresh(&name).await;
    let items = store.session_items(SESSION).await.unwrap();
    assert_eq!(
        items.iter().map(|i| i.client_seq).collect::<Vec<_>>(),
        [7, 8, 9, 10, 11]
    );
    let device = store.device().await.unwrap().unwrap();
    assert_eq!(
        (device.device_id.as_str(), device.done_retention_days),
        ("HH-7", None)
    );
    assert_eq!(store.backoff().await.unwrap().failures, 3);
    let snapshot = store.load_drain().await.unwrap();
    assert_eq!(
        snapshot.pending.len(),
        4,
        "queued, queued, sending and blocked"
    );
    store.close();
}

/// A meta row the store writes is `{name, value}`, as earlier builds wrote
/// it, and reads back the same.
#[wasm_bindgen_test]
async fn a_meta_row_the_store_writes_is_its_name_and_value() {
    let name = db_name("meta-write");
    let store = fresh(&name).await;
    let config = stockhop::web::store::DeviceConfig {
        site_url: "https://s".into(),
        device_token: "t".into(),
        device_id: "HH-1".into(),
        done_retention_days: Some(3),
    };
    store.set_device(&config).await.unwrap();
    let db = schema::open(&name).await.unwrap();
    let tx = db.transaction([schema::META]).build().unwrap();
    let row: JsValue = tx
        .object_store(schema::META)
        .unwrap()
        .get("device")
        .primitive()
        .unwrap()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        String::from(js_sys::JSON::stringify(&row).unwrap()),
        r#"{"name":"device","value":{"site_url":"https://s","device_token":"t","device_id":"HH-1","done_retention_days":3}}"#
    );
    drop(tx);
    db.close();
    assert_eq!(store.device().await.unwrap(), Some(config));
    store.close();
}

/// A meta row that does not read is refused naming the row and what did
/// not fit: a row without its `value`, one whose `value` is `undefined`,
/// and one whose `value` is not the record.
#[wasm_bindgen_test]
async fn a_meta_row_that_does_not_read_is_refused_naming_the_row() {
    for (row, line) in [
        ("{name: 'device'}", "device: missing field `value`"),
        (
            "{name: 'device', value: undefined}",
            "device: invalid type: unit value, expected struct DeviceConfig",
        ),
        (
            "{name: 'device', value: {site_url: 's', device_token: 't'}}",
            "device: missing field `device_id`",
        ),
        (
            "{name: 'device', value: 'HH-7'}",
            "device: invalid type: string \"HH-7\", expected struct DeviceConfig",
        ),
    ] {
        let name = db_name("meta-row");
        let db = schema::open(&name).await.unwrap();
        let tx = db
            .transaction([schema::META])
            .with_mode(indexed_db_futures::transaction::TransactionMode::Readwrite)
            .build()
            .unwrap();
        let meta = tx.object_store(schema::META).unwrap();
        meta.put(js_expr(row)).build().unwrap().await.unwrap();
        tx.commit().await.unwrap();
        db.close();
        let store = fresh(&name).await;
        match store.device().await {
            Err(QueueError::Storage(why)) => assert_eq!(why, line, "{row}"),
            other => panic!("{row}: {:?}", other.map(|device| device.is_some())),
        }
        store.close();
    }
}

#[wasm_bindgen_test]
fn a_record_that_does_not_read_is_refused_naming_the_record_and_what_did_not_fit() {
    let (_, full) = &stored_item_fixtures()[0];
    for (field, bad, why) in [
        ("client_seq", "-1", "expected u64"),
        ("client_seq", "1.5", "expected u64"),
        ("client_seq", "'1'", "expected u64"),
        ("key", "'8a0c'", "not a canonical UUID key"),
        ("session_id", "7", "invalid type"),
        ("command", "'fly'", "unknown variant `fly`"),
        ("state", "'lost'", "unknown variant `lost`"),
        ("queued_at", "'yesterday'", "yesterday"),
        ("attempts", "4294967296", "expected u32"),
        ("hop_ids", "[1.5]", "expected i64"),
        ("reason", "3", "invalid type"),
    ] {
        let row = js_expr(full);
        js_sys::Reflect::set(&row, &field.into(), &js_expr(bad)).unwrap();
        let err = from_record::<Item>(row, "item").unwrap_err();
        assert!(
            err.starts_with("item: ") && err.contains(why),
            "{field} = {bad}: {err}"
        );
    }
    let row = js_expr(full);
    js_sys::Reflect::delete_property(row.unchecked_ref::<js_sys::Object>(), &"queued_at".into())
        .unwrap();
    let err = from_record::<Item>(row, "item").unwrap_err();
    assert_eq!(err, "item: missing field `queued_at`");
}

fn read(message: serde_json::Value) -> Result<PageRequest, QueueError> {
    PageRequest::read(&to_js(&message).unwrap())
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
                done_retention_days: None,
            },
        ),
        (json!({"type": "device"}), PageRequest::Device {}),
        (
            json!({"type": "open_session", "operator_id": "op-9", "mode": "receive"}),
            PageRequest::OpenSession {
                session_id: None,
                operator_id: "op-9".into(),
                mode: Mode::Receive,
                context: Default::default(),
            },
        ),
        (
            json!({"type": "open_session", "session_id": session, "operator_id": "op-9",
                   "mode": "find_unit", "context": {"dock": 4, "tags": ["a"]}}),
            PageRequest::OpenSession {
                session_id: Some(SESSION),
                operator_id: "op-9".into(),
                mode: Mode::FindUnit,
                context: serde_json::from_value(json!({"dock": 4, "tags": ["a"]})).unwrap(),
            },
        ),
        (
            json!({"type": "capture", "session_id": session, "body": {"epc": "E1", "qty": 1.5}}),
            PageRequest::Capture {
                session_id: SESSION,
                command: Command::Scan,
                body: json!({"epc": "E1", "qty": 1.5}),
                occurred_at: None,
            },
        ),
        (
            json!({"type": "capture", "session_id": session, "command": "undo"}),
            PageRequest::Capture {
                session_id: SESSION,
                command: Command::Undo,
                body: json!(null),
                occurred_at: None,
            },
        ),
        (
            json!({"type": "capture_many", "session_id": session, "bodies": [{"epc": "E2"}, 3]}),
            PageRequest::CaptureMany {
                session_id: SESSION,
                command: Command::Scan,
                bodies: vec![json!({"epc": "E2"}), json!(3)],
                occurred_at: None,
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
            PageRequest::Acknowledge {
                id: 6,
                rescan_key: None,
            },
        ),
        (
            json!({"type": "acknowledge", "id": 7, "rescan_key": "8a0c5e2e-4d1b-4c7a-9f3e-2b6d8c1a0f4e"}),
            PageRequest::Acknowledge {
                id: 7,
                rescan_key: Some("8a0c5e2e-4d1b-4c7a-9f3e-2b6d8c1a0f4e".parse().unwrap()),
            },
        ),
        (json!({"type": "storage"}), PageRequest::Storage {}),
        (
            json!({"type": "capture", "session_id": session, "body": {"epc": "E1"},
                   "occurred_at": 1_795_940_000_123.5}),
            PageRequest::Capture {
                session_id: SESSION,
                command: Command::Scan,
                body: json!({"epc": "E1"}),
                occurred_at: Some(1_795_940_000_123.5),
            },
        ),
        (
            json!({"type": "capture_many", "session_id": session, "bodies": [{"epc": "E2"}],
                   "occurred_at": [1_795_940_000_000u64]}),
            PageRequest::CaptureMany {
                session_id: SESSION,
                command: Command::Scan,
                bodies: vec![json!({"epc": "E2"})],
                occurred_at: Some(vec![1_795_940_000_000.0]),
            },
        ),
        (
            json!({"type": "reference_status"}),
            PageRequest::ReferenceStatus {},
        ),
        (
            json!({"type": "reference_refresh"}),
            PageRequest::ReferenceRefresh {},
        ),
        (
            json!({"type": "find_unit", "code": "SN-1"}),
            PageRequest::FindUnit {
                code: "SN-1".into(),
            },
        ),
        (
            json!({"type": "reference_get", "kind": "grn", "id": "G-1"}),
            PageRequest::ReferenceGet {
                kind: RowKind::Grn,
                id: "G-1".into(),
            },
        ),
        (
            json!({"type": "reference_list", "kind": "bins"}),
            PageRequest::ReferenceList {
                kind: ListKind::Bins,
            },
        ),
        (
            json!({"type": "refresh_unit", "epc": "E1"}),
            PageRequest::RefreshUnit { epc: "E1".into() },
        ),
        (json!({"type": "export_queue"}), PageRequest::ExportQueue {}),
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
            body: json!(null),
            occurred_at: None,
        })
    );
}

/// Whole refusal lines the page shows, as the message reader has always
/// worded them: every present field is read first, in the order the
/// request lists its fields, and only then is a missing one named; a value
/// of the wrong type is named with serde-wasm-bindgen's own words.
#[wasm_bindgen_test]
fn a_refusal_names_the_first_bad_field_then_the_first_missing_one() {
    let session = SESSION.to_string();
    let cases = [
        (json!({"type": "setup", "device_token": 5}), "setup.device_token: invalid type: floating point `5.0`, expected a string"),
        (json!({"type": "setup", "device_token": "t"}), "setup: missing field `site_url`"),
        (
            json!({"type": "setup", "site_url": "s", "device_token": "t", "device_id": "d", "done_retention_days": 1.5}),
            "setup.done_retention_days: invalid type: floating point `1.5`, expected u32",
        ),
        (json!({"type": "open_session", "mode": "receive", "context": 3}), "open_session.context: TypeError: Reflect.get called on non-object"),
        (json!({"type": "open_session", "mode": "receive"}), "open_session: missing field `operator_id`"),
        (json!({"type": "open_session", "operator_id": "op"}), "open_session: missing field `mode`"),
        (json!({"type": "capture", "session_id": null}), "capture.session_id: invalid type: unit value, expected a formatted UUID string"),
        (json!({"type": "capture", "session_id": session, "occurred_at": true}), "capture.occurred_at: invalid type: boolean `true`, expected f64"),
        (json!({"type": "capture_many", "session_id": session, "bodies": {}}), "capture_many.bodies: invalid type: JsValue(Object({})), expected a sequence"),
        (json!({"type": "capture_many", "bodies": []}), "capture_many: missing field `session_id`"),
        (json!({"type": "close_session"}), "close_session: missing field `session_id`"),
        (json!({"type": "list", "after": -2}), "list.after: invalid type: floating point `-2.0`, expected u64"),
        (json!({"type": "acknowledge", "id": 2, "rescan_key": "k"}), "acknowledge.rescan_key: not a canonical UUID key: 'k'"),
        (json!({"type": "reference_get", "kind": "bin"}), "reference_get: missing field `id`"),
        (json!({"type": "reference_list"}), "reference_list: missing field `kind`"),
        (json!({"type": "refresh_unit"}), "refresh_unit: missing field `epc`"),
        (json!({"type": "Counts"}), "unknown variant `Counts`, expected one of `setup`, `device`, `open_session`, `capture`, `capture_many`, `close_session`, `list`, `counts`, `retry_now`, `wake`, `discard`, `acknowledge`, `storage`, `reference_status`, `reference_refresh`, `find_unit`, `reference_get`, `reference_list`, `refresh_unit`, `read_label`, `export_queue`"),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(message, line)| match read(message.clone()) {
            Err(QueueError::BadMessage(why)) if why == *line => None,
            other => Some(format!("{message}: {other:?}")),
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
    // `null` is an absent optional field, and a capture's command `scan`.
    assert_eq!(
        read(json!({"type": "list", "after": null, "limit": null})),
        Ok(PageRequest::List {
            after: None,
            limit: None
        })
    );
    assert_eq!(
        read(json!({"type": "capture", "session_id": session, "command": null, "body": null})),
        Ok(PageRequest::Capture {
            session_id: SESSION,
            command: Command::Scan,
            body: json!(null),
            occurred_at: None,
        })
    );
}

#[wasm_bindgen_test]
fn a_bad_message_is_refused_naming_the_field() {
    let session = SESSION.to_string();
    for (message, named) in [
        (json!({"kind": "counts"}), "`type`"),
        (json!({"type": 3}), "`type`"),
        (json!({"type": "launch"}), "unknown variant `launch`"),
        (json!({"type": "capture"}), "session_id"),
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
            "bodies",
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
            json!({"type": "open_session", "operator_id": "op", "mode": "receive", "context": [1]}),
            "open_session.context",
        ),
        (json!({"type": "setup", "site_url": "s"}), "device_token"),
        (json!({"type": "list", "limit": -1}), "list.limit"),
        (json!({"type": "list", "after": "3"}), "list.after"),
        (json!({"type": "discard"}), "id"),
        (json!({"type": "acknowledge", "id": 1.5}), "acknowledge.id"),
        (
            json!({"type": "capture", "session_id": session, "occurred_at": "09:01"}),
            "capture.occurred_at",
        ),
        (
            json!({"type": "capture_many", "session_id": session, "bodies": [], "occurred_at": 5}),
            "capture_many.occurred_at",
        ),
        (json!({"type": "find_unit"}), "code"),
        (
            json!({"type": "reference_get", "kind": "manifest", "id": "M-1"}),
            "reference_get.kind",
        ),
        (
            json!({"type": "reference_list", "kind": "units"}),
            "reference_list.kind",
        ),
        (
            json!({"type": "refresh_unit", "epc": 7}),
            "refresh_unit.epc",
        ),
    ] {
        match read(message.clone()) {
            Err(QueueError::BadMessage(why)) => assert!(why.contains(named), "{message}: {why}"),
            other => panic!("{message}: {other:?}"),
        }
    }
    assert!(matches!(
        PageRequest::read(&JsValue::from_str("counts")),
        Err(QueueError::BadMessage(_))
    ));
    // The whole line the page shows: the type, then the field when one did
    // not fit.
    for (message, line) in [
        (
            json!({"type": "capture"}),
            "capture: missing field `session_id`",
        ),
        (
            json!({"type": "discard", "id": "3"}),
            "discard.id: invalid type: string \"3\", expected u64",
        ),
        (
            json!({"type": "fly"}),
            "unknown variant `fly`, expected one of `setup`, `device`, `open_session`, \
             `capture`, `capture_many`, `close_session`, `list`, `counts`, `retry_now`, \
             `wake`, `discard`, `acknowledge`, `storage`, `reference_status`, \
             `reference_refresh`, `find_unit`, `reference_get`, `reference_list`, \
             `refresh_unit`, `read_label`, `export_queue`",
        ),
    ] {
        assert_eq!(read(message), Err(QueueError::BadMessage(line.into())));
    }
}
