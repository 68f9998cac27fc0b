//! The handheld's reference cache in a real headless Chromium page: real
//! IndexedDB, the queue runtime's pulls, lookups and captures. The site is
//! substituted (it pages its rows as `GET /v1/reference` does), as these
//! tests are about the cache above the fetch; `FetchTransport`'s reads are
//! checked against a closed loopback port, and the benchmark loads the
//! cache from a real site.
use crate::support::*;
use serde_json::{json, Value};
use stockhop::queue::{Capture, TransportOutcome};
use stockhop::reference::{Pull, RowKind, REFERENCE_PAGE_ROWS};
use stockhop::time::{Millis, UnixMs};
use stockhop::web::error::QueueError;
use stockhop::web::runtime::{Options, Queue};
use stockhop::web::transport::{FetchTransport, Transport};
use stockhop::web::ServiceWorker;
use stockhop::wire::{Command, Mode, OpenSessionBody};
use uuid::Uuid;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

/// A JS value as JSON, for assertions.
fn value(js: JsValue) -> Value {
    serde_wasm_bindgen::from_value(js).unwrap()
}

fn unit(epc: &str, code: Option<&str>, bin: &str, version: u64) -> Value {
    json!({"epc": epc, "code": code, "sku": "SKU-1", "state": "in_stock", "bin": bin,
           "version": version})
}

/// A site with `units` units (E0…, serial SN-0…) in two bins, a GRN and a count.
fn stocked(units: usize) -> FakeSite {
    let site = FakeSite::new();
    site.change(
        "bins",
        json!({"bin": "A-1", "zone": "Z-A", "location": "L-1"}),
    );
    site.change(
        "bins",
        json!({"bin": "A-2", "zone": "Z-A", "location": "L-1"}),
    );
    for n in 0..units {
        let bin = if n % 2 == 0 { "A-1" } else { "A-2" };
        site.change(
            "units",
            unit(&format!("E{n}"), Some(&format!("SN-{n}")), bin, 1),
        );
    }
    site.change(
        "grns",
        json!({"grn": "G-1", "qc": "accepted", "state": "open",
               "lines": [{"sku": "SKU-1", "expected": 2, "received": 0}]}),
    );
    site.change(
        "counts",
        json!({"count_id": "C-000001", "location": "L-1", "zone": "Z-A", "state": "open"}),
    );
    site
}

/// A runtime that drains and wakes only when asked.
fn manual() -> Options {
    Options {
        drain_after_capture: false,
        wake_on_timer: false,
    }
}

async fn open(queue: &Queue) -> Uuid {
    let body = OpenSessionBody {
        operator_id: "op-ref".into(),
        mode: Mode::PutAway,
        context: Default::default(),
    };
    queue.open_session(None, body).await.unwrap().session_id
}

fn scan(body: Value) -> Capture {
    Capture {
        command: Command::Scan,
        body,
    }
}

#[wasm_bindgen_test]
async fn the_cache_fills_in_pages_then_follows_the_changes_after_its_cursor() {
    let name = db_name("ref-pages");
    let site = stocked(1_200);
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;

    let status = queue.reference_refresh().await.unwrap();
    assert_eq!(
        (status.units, status.bins, status.grns, status.counts),
        (1_200, 2, 1, 1)
    );
    assert!(status.complete && !status.loading);
    assert_eq!(status.cursor.as_deref(), Some("1204"));
    assert_eq!((status.refreshed_at, status.age_ms), (Some(T0.0), Some(0)));
    let device = status.device.unwrap();
    assert_eq!((device.profile.as_str(), device.encode), ("mc3390xr", true));
    // The setup started a run of pages; the refresh rode the next one.
    let pulls = site.pulls.borrow().clone();
    let mut expected = vec![(None, REFERENCE_PAGE_ROWS)];
    for after in (REFERENCE_PAGE_ROWS..1_204).step_by(REFERENCE_PAGE_ROWS) {
        expected.push((Some(after.to_string()), REFERENCE_PAGE_ROWS));
    }
    expected.push((Some("1204".into()), REFERENCE_PAGE_ROWS));
    assert!(expected.len() >= 4, "more than one page");
    assert_eq!(
        pulls, expected,
        "1,204 rows in pages, each from the cursor before it"
    );

    // A unit changes on the site: the next pull brings only it.
    site.change("units", unit("E7", Some("SN-7"), "A-1", 2));
    clock.set(T0.plus(Millis(90_000)));
    let status = queue.reference_refresh().await.unwrap();
    assert_eq!(status.cursor.as_deref(), Some("1205"));
    assert_eq!(status.units, 1_200);
    assert_eq!(status.age_ms, Some(0));
    assert_eq!(
        site.pulls.borrow().last().unwrap().0.as_deref(),
        Some("1204")
    );
    let found = queue.find_unit("E7".into()).await.unwrap();
    assert_eq!(value(found.row)["version"], 2);
}

#[wasm_bindgen_test]
async fn a_load_that_fails_part_way_resumes_from_the_last_page_written() {
    let name = db_name("ref-resume");
    let site = stocked(1_200);
    site.pages_before_offline.set(Some(2));
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;

    let failed = queue.reference_refresh().await;
    assert!(matches!(failed, Err(QueueError::Offline)), "{failed:?}");
    let status = queue.reference_status().await.unwrap();
    assert!(!status.complete && !status.loading);
    let written = (2 * REFERENCE_PAGE_ROWS).to_string();
    assert_eq!(
        status.cursor.as_deref(),
        Some(written.as_str()),
        "two pages written"
    );

    site.pages_before_offline.set(None);
    let status = queue.reference_refresh().await.unwrap();
    assert!(status.complete);
    assert_eq!(status.units, 1_200);
    let pulls: Vec<_> = site
        .pulls
        .borrow()
        .iter()
        .map(|(after, _)| after.clone())
        .collect();
    assert_eq!(
        pulls[2..4],
        [Some(written.clone()), Some(written)],
        "the page that failed is asked for again, not the first"
    );
}

#[wasm_bindgen_test]
async fn find_unit_answers_offline_by_epc_or_serial_with_its_bin_and_the_caches_age() {
    let name = db_name("ref-find");
    let site = stocked(10);
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    queue.reference_refresh().await.unwrap();
    site.answer_whole(TransportOutcome::Offline);
    clock.set(T0.plus(Millis(42_000)));

    let by_epc = queue.find_unit("E3".into()).await.unwrap();
    assert_eq!(value(by_epc.row), unit("E3", Some("SN-3"), "A-2", 1));
    assert_eq!(
        value(by_epc.bin.unwrap()),
        json!({"bin": "A-2", "zone": "Z-A", "location": "L-1"})
    );
    assert_eq!(by_epc.meta.age_ms(T0.plus(Millis(42_000))), Some(42_000));
    let by_serial = queue.find_unit("SN-4".into()).await.unwrap();
    assert_eq!(value(by_serial.row)["epc"], "E4");
    let unknown = queue.find_unit("E404".into()).await.unwrap();
    assert!(unknown.row.is_null() && unknown.bin.unwrap().is_null());

    let grn = queue
        .reference_get(RowKind::Grn, "G-1".into())
        .await
        .unwrap();
    assert_eq!(value(grn.row)["lines"][0]["expected"], 2);
    let none = queue
        .reference_get(RowKind::Count, "C-404".into())
        .await
        .unwrap();
    assert!(none.row.is_null());
    let bins = value(
        queue
            .reference_list(RowKind::Bin, 100)
            .await
            .unwrap()
            .into(),
    );
    assert_eq!(bins.as_array().unwrap().len(), 2);

    // Offline, a refresh says so and the cache stays as it was.
    let refused = queue.reference_refresh().await.unwrap_err();
    assert_eq!(refused, QueueError::Offline);
    assert_eq!(refused.code(), "OFFLINE");
    assert_eq!(queue.reference_status().await.unwrap().units, 10);
}

#[wasm_bindgen_test]
async fn the_cache_survives_a_worker_restart_and_is_read_without_the_site() {
    let name = db_name("ref-restart");
    let site = stocked(700);
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    let before = queue.reference_refresh().await.unwrap();
    queue.close().await.unwrap();

    // The next worker life, with the site gone.
    let offline = FakeSite::new();
    offline.answer_whole(TransportOutcome::Offline);
    let again = Queue::open(&name, offline.clone(), clock.clone(), manual())
        .await
        .unwrap();
    let after = again.reference_status().await.unwrap();
    assert_eq!(
        (
            after.units,
            after.bins,
            after.cursor.clone(),
            after.complete
        ),
        (700, 2, before.cursor.clone(), true)
    );
    assert_eq!(after.refreshed_at, before.refreshed_at);
    assert_eq!(after.device, before.device, "the profile is kept too");
    let found = again.find_unit("SN-699".into()).await.unwrap();
    assert_eq!(value(found.row)["epc"], "E699");
    // Its pull starts from the cursor it kept, not from the start.
    again.reference_refresh().await.unwrap_err();
    assert_eq!(
        offline.pulls.borrow().last().unwrap().0,
        before.cursor,
        "{:?}",
        offline.pulls.borrow()
    );
}

#[wasm_bindgen_test]
async fn a_setup_naming_another_site_empties_the_cache_and_the_same_site_keeps_it() {
    let name = db_name("ref-site");
    let site = stocked(5);
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    queue.reference_refresh().await.unwrap();

    // Set up again for the same site (a new token): nothing is lost.
    let mut same = device();
    same.device_token = "another-token".into();
    queue.setup(same).await.unwrap();
    assert_eq!(queue.reference_status().await.unwrap().units, 5);

    site.answer_whole(TransportOutcome::Offline);
    let mut other = device();
    other.site_url = "http://127.0.0.1:10".into();
    queue.setup(other).await.unwrap();
    let status = queue.reference_status().await.unwrap();
    assert_eq!(
        (status.units, status.bins, status.grns, status.counts),
        (0, 0, 0, 0)
    );
    assert_eq!((status.cursor, status.complete), (None, false));
    assert_eq!((status.refreshed_at, status.device), (None, None));
    assert!(queue.find_unit("E1".into()).await.unwrap().row.is_null());
    // And so for the next worker life.
    let fresh_status = fresh(&name).await.reference_meta().await.unwrap().unwrap();
    assert_eq!(fresh_status.site, "http://127.0.0.1:10");
    assert_eq!(fresh_status.cursor, None);
}

#[wasm_bindgen_test]
async fn a_scan_naming_a_known_unit_takes_its_cached_version_at_capture() {
    let name = db_name("ref-version");
    let site = stocked(3);
    site.change("units", unit("E1", Some("SN-1"), "A-2", 4));
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    queue.reference_refresh().await.unwrap();
    let session = open(&queue).await;

    let known = queue
        .capture(
            session,
            scan(json!({"mode": "put_away", "epc": "E1", "bin": "A-1"})),
        )
        .await
        .unwrap();
    assert_eq!(known.body["unit_version"], 4);
    let stated = queue
        .capture(
            session,
            scan(json!({"mode": "put_away", "epc": "E1", "bin": "A-1", "unit_version": 3})),
        )
        .await
        .unwrap();
    assert_eq!(stated.body["unit_version"], 3, "what the page says stands");
    let unknown = queue
        .capture(
            session,
            scan(json!({"mode": "put_away", "epc": "E999", "bin": "A-1"})),
        )
        .await
        .unwrap();
    assert!(unknown.body.get("unit_version").is_none());

    // What is stored (and sent) is the filled body.
    let stored = fresh(&name).await.session_items(session).await.unwrap();
    assert_eq!(stored[1].body["unit_version"], 4);
    queue.drain(true).await.unwrap();
    let sent = site.requests.borrow()[0].items[1].body.clone();
    assert_eq!(sent["unit_version"], 4);
}

#[wasm_bindgen_test]
async fn a_unit_cached_after_scans_that_found_none_gives_the_next_scan_its_version() {
    let name = db_name("ref-version-later");
    let site = stocked(0);
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    let session = open(&queue).await;
    let put = |epc: &str| scan(json!({"mode": "put_away", "epc": epc, "bin": "A-1"}));

    let before = queue
        .capture_many(session, vec![put("E1"), put("E2")])
        .await;
    for item in &before {
        assert!(item.as_ref().unwrap().body.get("unit_version").is_none());
    }
    site.change("units", unit("E1", Some("SN-1"), "A-2", 7));
    queue.reference_refresh().await.unwrap();
    let after = queue
        .capture_many(session, vec![put("E1"), put("E2")])
        .await;
    let after: Vec<_> = after.into_iter().map(Result::unwrap).collect();
    assert_eq!(after[0].body["unit_version"], 7);
    assert!(after[1].body.get("unit_version").is_none());
    assert_eq!(
        (after[0].client_seq, after[1].client_seq),
        (4, 5),
        "its seqs follow the scans before"
    );
    let stored = fresh(&name).await.session_items(session).await.unwrap();
    assert_eq!(stored.len(), 5);
    assert_eq!(stored[3].body["unit_version"], 7);
}

#[wasm_bindgen_test]
async fn a_capture_keeps_the_pages_input_instant_and_a_bad_one_is_refused_naming_it() {
    let name = db_name("ref-instant");
    let site = FakeSite::new();
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    let session = open(&queue).await;
    let seen = T0.0 - 1_250;
    let item = queue
        .capture_at(
            session,
            scan(json!({"mode": "put_away", "epc": "E1", "bin": "A-1"})),
            Some(seen as f64 + 0.4),
        )
        .await
        .unwrap();
    assert_eq!(
        (item.occurred_at, item.queued_at),
        (UnixMs(seen), T0),
        "captured when the page saw it, queued when written"
    );
    let burst = queue
        .capture_many_at(
            session,
            vec![
                (scan(json!({"epc": "E2"})), Some((T0.0 - 5) as f64)),
                (scan(json!({"epc": "E3"})), Some(f64::NAN)),
                (scan(json!({"epc": "E4"})), Some((T0.0 + 3_600_000) as f64)),
                (scan(json!({"epc": "E5"})), None),
            ],
        )
        .await;
    assert_eq!(burst[0].as_ref().unwrap().occurred_at, UnixMs(T0.0 - 5));
    for refused in [&burst[1], &burst[2]] {
        match refused {
            Err(QueueError::BadMessage(why)) => assert!(why.starts_with("occurred_at"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(burst[3].as_ref().unwrap().occurred_at, T0);
    assert_eq!(
        burst[3].as_ref().unwrap().client_seq,
        4,
        "a refused instant takes no seq"
    );

    // The drain sends the capture instant as the wire's occurred_at.
    queue.drain(true).await.unwrap();
    let sent = site.requests.borrow()[0].items.clone();
    assert_eq!((sent[1].occurred_at, sent[1].queued_at), (UnixMs(seen), T0));
}

#[wasm_bindgen_test]
async fn captures_are_written_while_a_reference_page_is_out() {
    let name = db_name("ref-interleave");
    let site = stocked(1_000);
    site.page_delay_ms.set(300);
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    let session = open(&queue).await;
    let refresh = queue.reference_refresh();
    let scans = async {
        let mut seqs = Vec::new();
        for n in 0..5 {
            let body = json!({"mode": "put_away", "epc": format!("X{n}"), "bin": "A-1"});
            seqs.push(queue.capture(session, scan(body)).await.unwrap().client_seq);
        }
        // The cache is still filling: the scans did not wait for it.
        let status = queue.reference_status().await.unwrap();
        (seqs, status.loading)
    };
    let (status, (seqs, loading)) = futures_util::future::join(refresh, scans).await;
    assert_eq!(seqs, [2, 3, 4, 5, 6]);
    assert!(
        loading,
        "the five scans were written before the first page came back"
    );
    assert_eq!(status.unwrap().units, 1_000);
}

#[wasm_bindgen_test]
async fn refresh_unit_reads_the_unit_live_and_keeps_it() {
    let name = db_name("ref-unit");
    let site = stocked(3);
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    queue.reference_refresh().await.unwrap();
    // The site moves E2 and the device has not pulled since.
    site.change("units", unit("E2", Some("SN-2"), "A-1", 2));
    let live = value(queue.refresh_unit("E2".into()).await.unwrap().unwrap());
    assert_eq!(
        (live["bin"].clone(), live["version"].clone()),
        (json!("A-1"), json!(2))
    );
    let cached = queue.find_unit("SN-2".into()).await.unwrap();
    assert_eq!(value(cached.row), live);
    assert!(queue.refresh_unit("E404".into()).await.unwrap().is_none());
    site.answer_whole(TransportOutcome::Offline);
    assert_eq!(
        queue.refresh_unit("E2".into()).await.unwrap_err(),
        QueueError::Offline
    );
}

#[wasm_bindgen_test]
async fn fetch_reads_of_an_unreachable_site_are_offline() {
    let device = device();
    let pull = Pull {
        after: None,
        limit: REFERENCE_PAGE_ROWS,
    };
    assert_eq!(
        FetchTransport::default()
            .reference(&device, &pull)
            .await
            .err(),
        Some(QueueError::Offline)
    );
    assert_eq!(
        FetchTransport::default().unit(&device, "E1").await.err(),
        Some(QueueError::Offline)
    );
}

#[wasm_bindgen_test]
async fn the_reference_messages_answer_in_the_pages_shapes() {
    let worker = ServiceWorker::open(Some(db_name("ref-messages")), None)
        .await
        .unwrap();
    let setup = ask(
        &worker,
        json!({"type": "setup", "site_url": "http://127.0.0.1:9", "device_token": "t",
               "device_id": "HH-REF"}),
    )
    .await;
    assert_eq!(setup["ok"], true, "{setup}");
    let status = ask(&worker, json!({"type": "reference_status"})).await;
    assert_eq!(status["ok"], true, "{status}");
    for field in [
        "cursor",
        "complete",
        "loading",
        "refreshed_at",
        "age_ms",
        "units",
        "bins",
        "grns",
        "counts",
        "device",
    ] {
        assert!(status.get(field).is_some(), "{field}: {status}");
    }
    assert_eq!(
        (&status["units"], &status["device"]),
        (&json!(0), &json!(null))
    );
    let refresh = ask(&worker, json!({"type": "reference_refresh"})).await;
    assert_eq!(
        refresh,
        json!({"ok": false, "error": {"code": "OFFLINE", "message": "offline: the site did not answer"}})
    );
    let found = ask(&worker, json!({"type": "find_unit", "code": "E1"})).await;
    assert_eq!(
        found,
        json!({"ok": true, "unit": null, "bin": null, "refreshed_at": null, "age_ms": null})
    );
    let row = ask(
        &worker,
        json!({"type": "reference_get", "kind": "bin", "id": "A-1"}),
    )
    .await;
    assert_eq!(
        row,
        json!({"ok": true, "row": null, "refreshed_at": null, "age_ms": null})
    );
    let list = ask(&worker, json!({"type": "reference_list", "kind": "counts"})).await;
    assert_eq!(list, json!({"ok": true, "rows": []}));
    let unit = ask(&worker, json!({"type": "refresh_unit", "epc": "E1"})).await;
    assert_eq!(unit["error"]["code"], "OFFLINE", "{unit}");

    // A capture with the page's instant; the list row carries it in ms,
    // with the body and the state the page offers Undo and Re-scan from.
    let open = ask(
        &worker,
        json!({"type": "open_session", "operator_id": "op-9", "mode": "put_away"}),
    )
    .await;
    let now = js_sys::Date::now().floor();
    let captured = ask(
        &worker,
        json!({"type": "capture", "session_id": open["session_id"],
               "body": {"mode": "put_away", "epc": "E1", "bin": "A-1"}, "occurred_at": now - 900.0}),
    )
    .await;
    assert_eq!(captured["ok"], true, "{captured}");
    assert_eq!(captured["occurred_at"].as_f64(), Some(now - 900.0));
    assert!(captured["queued_at"].as_f64().unwrap() >= now);
    let list = ask(&worker, json!({"type": "list"})).await;
    let row = &list["items"][1];
    assert_eq!(row["occurred_at"].as_f64(), Some(now - 900.0), "{row}");
    assert!(row["queued_at"].is_number(), "{row}");
    assert_eq!(row["body"]["epc"], "E1");
    assert_eq!(row["state"], "queued");
    assert!(
        row.get("reason").is_some() && row.get("why").is_some(),
        "{row}"
    );
    let bad = ask(
        &worker,
        json!({"type": "capture", "session_id": open["session_id"], "body": {},
               "occurred_at": now + 3_600_000.0}),
    )
    .await;
    assert_eq!(bad["error"]["code"], "BAD_MESSAGE");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("occurred_at"),
        "{bad}"
    );
}

#[wasm_bindgen_test]
async fn a_serial_that_moved_to_another_unit_comes_through_whatever_order_the_rows_arrive_in() {
    let name = db_name("ref-code-moves");
    let site = stocked(3);
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    queue.reference_refresh().await.unwrap();
    // At the site SN-1 leaves E1 and E2 takes it; then E1 changes again,
    // so its row comes after E2's: the cache sees E2 take SN-1 first.
    site.change("units", unit("E1", None, "A-2", 2));
    site.change("units", unit("E2", Some("SN-1"), "A-1", 2));
    site.change("units", unit("E1", None, "A-1", 3));
    let status = queue.reference_refresh().await.unwrap();
    assert_eq!(status.units, 3);
    let by_serial = queue.find_unit("SN-1".into()).await.unwrap();
    assert_eq!(value(by_serial.row)["epc"], "E2");
    let e1 = value(queue.find_unit("E1".into()).await.unwrap().row);
    assert_eq!(
        (e1["code"].clone(), e1["version"].clone()),
        (json!(null), json!(3))
    );
    assert!(queue.find_unit("SN-2".into()).await.unwrap().row.is_null());
}
