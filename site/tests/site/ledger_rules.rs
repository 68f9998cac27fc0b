//! The ledger's rules over real HTTP on loopback against a real SQLite
//! file: sessions, stale state, clocks, undo, simulation, closed periods,
//! unique constraints, overload, the read side and heartbeats.

use crate::backend;
use crate::ledger_common;

use ledger_common::{now, Handheld, Site};
use serde_json::{json, Value};
use stockhop::time::{Millis, UnixMs};

fn assert_code(result: &Value, status: u64, code: &str) {
    assert_eq!(result["status"], status, "{result}");
    assert_eq!(result["code"], code, "{result}");
}

fn assert_rejected(result: &Value, reason: &str) {
    assert_eq!(result["status"], 200, "{result}");
    assert_eq!(result["outcome"], "rejected", "{result}");
    assert_eq!(result["reason"], reason, "{result}");
}

#[tokio::test]
async fn one_open_session_per_device_and_per_operator_is_a_4xx_session_conflict() {
    let site = Site::start_stocked().await;
    let mut a = site.handheld("HH-A").await;
    let mut b = site.handheld("HH-B").await;
    let open = a.open("op-1");
    assert_eq!(site.sync_ok(&a, &[open]).await[0]["outcome"], "applied");

    let mut a2 = a.clone();
    a2.new_session();
    let second_on_device = a2.open("op-2");
    let refused = &site.sync_ok(&a2, &[second_on_device]).await[0];
    assert_code(refused, 409, "SESSION_CONFLICT");
    // The product's words, never the schema's constraint.
    assert_eq!(
        refused["message"],
        "this device already has a session open: close it first (a handheld that lost it: a supervisor closes it, Devices, Close session)"
    );
    let same_operator = b.open("op-1");
    let refused = &site.sync_ok(&b, std::slice::from_ref(&same_operator)).await[0];
    assert_code(refused, 409, "SESSION_CONFLICT");
    assert_eq!(
        refused["message"],
        "this operator already has a session open (on this device or another): sign out there first, or a supervisor closes it (Devices, Close session)"
    );

    // Closing frees both; the refused open was not stored, so it now applies.
    let close = a.item("close_session", json!({}));
    assert_eq!(site.sync_ok(&a, &[close]).await[0]["outcome"], "applied");
    let retried = site.sync_ok(&b, &[same_operator]).await;
    assert_eq!(retried[0]["outcome"], "applied", "{}", retried[0]);
    assert_eq!(retried[0]["replayed"], false);
}

#[tokio::test]
async fn an_item_for_another_devices_session_is_403_and_the_read_side_is_per_device() {
    let site = Site::start_stocked().await;
    let mut a = site.handheld("HH-A").await;
    let b = site.handheld("HH-B").await;
    let items = [a.open("op-1"), a.scan("EPC-1", "B-1")];
    site.sync_ok(&a, &items).await;

    let mut intruder = Handheld {
        token: b.token.clone(),
        device_id: b.device_id.clone(),
        ..a.clone()
    };
    let item = intruder.scan("EPC-1", "B-9");
    assert_code(
        &site.sync_ok(&intruder, &[item]).await[0],
        403,
        "SESSION_NOT_YOURS",
    );

    let path = format!("/v1/sessions/{}/hops", a.session);
    let (status, body) = site.get(&path, &b.token).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("SESSION_NOT_YOURS"))
    );
    let (status, body) = site.get(&path, &a.token).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["hops"].as_array().unwrap().len(), 1);
    let hop = &body["hops"][0];
    assert_eq!(hop["client_seq"], 2);
    assert_eq!(hop["command"], "scan");
    assert_eq!(hop["mode"], "put_away");
    assert_eq!(hop["source_mode"], "live");
    assert_eq!(hop["facts"]["epc"], "EPC-1");
    let unknown = format!("/v1/sessions/{}/hops", uuid_text());
    assert_eq!(site.get(&unknown, &a.token).await.0, 404);
}

fn uuid_text() -> String {
    ledger_common::key()
}

#[tokio::test]
async fn closing_a_session_leaves_its_later_items_valid() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let close = hh.item("close_session", json!({}));
    let late = hh.scan("EPC-1", "B-1");
    site.sync_applied(&hh, &[open, close, late]).await;
    assert_eq!(site.count("SELECT count(*) FROM hops"), 1);
    let mut again = hh.clone();
    again.new_session();
    let reopen = again.open("op-1");
    assert_eq!(
        site.sync_ok(&again, &[reopen]).await[0]["outcome"],
        "applied"
    );
}

#[tokio::test]
async fn a_scan_with_a_stale_unit_version_is_rejected_changes_nothing_and_replays_rejected() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let first = hh.item(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "unit_version": 1, "bin": "B-1"}),
    );
    let stale = hh.item(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "unit_version": 1, "bin": "B-2"}),
    );
    let fresh = hh.item(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "unit_version": 2, "bin": "B-3"}),
    );
    let results = site
        .sync_ok(&hh, &[open, first, stale.clone(), fresh])
        .await;
    assert_eq!(results[1]["outcome"], "applied");
    assert_rejected(&results[2], "stale_state");
    assert_eq!(results[2]["hop_ids"], json!([]));
    assert_eq!(results[3]["outcome"], "applied");
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE bin = 'B-3' AND version = 3"),
        1
    );
    assert_eq!(site.count("SELECT count(*) FROM hops"), 2);

    let replay = site.sync_ok(&hh, &[stale]).await;
    assert_rejected(&replay[0], "stale_state");
    assert_eq!(replay[0]["replayed"], true);

    // Put-away never creates a unit: a tag the site does not know is
    // rejected, whatever version the device claims.
    let unseen = hh.item(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-NEW", "unit_version": 3, "bin": "B-1"}),
    );
    assert_rejected(&site.sync_ok(&hh, &[unseen]).await[0], "unknown_unit");
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE epc = 'EPC-NEW'"),
        0
    );
}

#[tokio::test]
async fn every_hop_carries_the_device_clocks_and_the_request_skew() {
    let site = Site::start_stocked().await;
    site.import(
        "units",
        "epc,code,sku,state,bin\nEPC-CODED,CODE-1,SKU-1,new,\n",
    );
    let mut hh = site.handheld("HH-1").await;
    let captured = UnixMs(now().0 - 3_600_000);
    let open = hh.item_at(
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away"}),
        captured,
    );
    let scan = hh.item_at(
        "scan",
        json!({"mode": "put_away", "code": "CODE-1", "bin": "B-1"}),
        captured.plus(Millis(1000)),
    );
    let sent_at = UnixMs(now().0 - 90_000); // the device clock runs 90 s slow
    let body = json!({"device_id": "HH-1", "sent_at": sent_at.to_string(), "items": [open, scan]});
    let before = now();
    let (status, answer) = site
        .post_raw("/v1/sync", Some(&hh.token), body.to_string().into_bytes())
        .await;
    let after = now();
    assert_eq!(status, 200, "{answer}");
    let (status, hops) = site
        .get(&format!("/v1/sessions/{}/hops", hh.session), &hh.token)
        .await;
    assert_eq!(status, 200);
    let hop = &hops["hops"][0];
    assert_eq!(hop["occurred_at"], captured.plus(Millis(1000)).to_string());
    let recorded = UnixMs::parse_rfc3339(hop["recorded_at"].as_str().unwrap()).unwrap();
    assert!(before <= recorded && recorded <= after);
    let skew = hop["device_clock_skew_ms"].as_i64().unwrap();
    assert!((90_000..90_000 + 5_000).contains(&skew), "skew {skew}");
}

#[tokio::test]
async fn undo_compensates_within_120_s_of_capture_and_is_rejected_otherwise() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let t0 = UnixMs(now().0 - 600_000);
    let open = hh.item_at(
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away"}),
        t0,
    );
    let moved = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "bin": "B-1"}),
        t0,
    );
    let moved_again = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "bin": "B-2"}),
        t0.plus(Millis(1000)),
    );
    let undo = hh.item_at(
        "undo",
        json!({"target_key": moved_again["key"]}),
        t0.plus(Millis(121_000)),
    );
    let results = site
        .sync_ok(
            &hh,
            &[open, moved.clone(), moved_again.clone(), undo.clone()],
        )
        .await;
    assert_eq!(results[3]["outcome"], "applied", "{}", results[3]);
    let undo_hop = results[3]["hop_ids"][0].as_i64().unwrap();
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE bin = 'B-1' AND version = 4"),
        1
    );
    assert_eq!(
        site.count(&format!(
            "SELECT compensates FROM hops WHERE hop_id = {undo_hop}"
        )),
        results[2]["hop_ids"][0].as_i64().unwrap()
    );

    let late = hh.item_at(
        "undo",
        json!({"target_key": moved["key"]}),
        t0.plus(Millis(120_001)),
    );
    let of_undo = hh.item_at(
        "undo",
        json!({"target_key": undo["key"]}),
        t0.plus(Millis(121_500)),
    );
    let unknown = hh.item_at(
        "undo",
        json!({"target_key": ledger_common::key()}),
        t0.plus(Millis(2000)),
    );
    let stale = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "unit_version": 0, "bin": "B-9"}),
        t0.plus(Millis(3000)),
    );
    let of_rejected = hh.item_at(
        "undo",
        json!({"target_key": stale["key"]}),
        t0.plus(Millis(4000)),
    );
    let results = site
        .sync_ok(&hh, &[late, of_undo, unknown, stale, of_rejected])
        .await;
    assert_rejected(&results[0], "undo_window_expired");
    assert_rejected(&results[1], "cannot_undo_an_undo");
    assert_rejected(&results[2], "unknown_target");
    assert_rejected(&results[3], "stale_state");
    assert_rejected(&results[4], "target_rejected");
    assert_eq!(site.count("SELECT count(*) FROM hops"), 3);
}

#[tokio::test]
async fn a_device_that_is_not_commissioned_lands_simulated_and_moves_nothing() {
    let site = Site::start_stocked().await;
    let token = site.add_device("HH-SIM", false);
    let mut hh = Handheld::new("HH-SIM", token);
    let open = hh.open("op-2");
    let scan = hh.scan("EPC-2", "B-1");
    let undo = hh.item("undo", json!({"target_key": scan["key"]}));
    let results = site.sync_ok(&hh, &[open, scan, undo]).await;
    for result in &results {
        assert_eq!(result["status"], 200, "{result}");
        assert_eq!(result["outcome"], "simulated", "{result}");
    }
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE version <> 1 OR bin IS NOT NULL"),
        0,
        "the stocked units stand as imported"
    );
    assert_eq!(site.count("SELECT count(*) FROM hops WHERE source_mode = 'sim' AND session_id IS NOT NULL AND key IN (SELECT key FROM receipts WHERE scope = 'HH-SIM')"), 2);
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE source_mode <> 'sim'"),
        0
    );
}

#[tokio::test]
async fn once_operators_are_listed_an_unknown_badge_opens_no_session() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let before = hh.open("ANY-BADGE");
    assert_eq!(
        site.sync_ok(&hh, &[before]).await[0]["outcome"],
        "applied",
        "a site without an operator list takes any badge"
    );
    site.import("operators", "badge,name\nOP-1,Ann Lee\n");
    let mut other = site.handheld("HH-2").await;
    let unknown = other.open("OP-404");
    let result = site.sync_ok(&other, std::slice::from_ref(&unknown)).await;
    assert_rejected(&result[0], "unknown_operator");
    let replay = site.sync_ok(&other, &[unknown]).await;
    assert_eq!(
        (&replay[0]["replayed"], &replay[0]["reason"]),
        (&json!(true), &json!("unknown_operator"))
    );
    // Its scans find no open session.
    let scan = other.scan("EPC-1", "B-1");
    assert_rejected(&site.sync_ok(&other, &[scan]).await[0], "session_not_open");
    other.new_session();
    let known = other.open("OP-1");
    assert_eq!(
        site.sync_ok(&other, &[known]).await[0]["outcome"],
        "applied"
    );

    // A device in training needs a listed badge too.
    let token = site.add_device("HH-SIM", false);
    let mut trainee = Handheld::new("HH-SIM", token);
    let unknown = trainee.open("OP-405");
    assert_rejected(
        &site.sync_ok(&trainee, &[unknown]).await[0],
        "unknown_operator",
    );
    assert_eq!(
        site.count("SELECT count(*) FROM sessions WHERE state = 'open'"),
        2,
        "the session opened before the list, and OP-1's"
    );
}

#[tokio::test]
async fn a_hop_captured_inside_a_closed_period_is_booked_at_the_start_of_the_open_one() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let until = UnixMs(now().0 - 60_000);
    site.db
        .call_blocking(|conn| stockhop_site::ledger::periods::close(conn, until, now()))
        .unwrap();
    let early = UnixMs(until.0 - 3_600_000);
    let open = hh.item_at(
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away"}),
        early,
    );
    let inside = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "bin": "B-1"}),
        early,
    );
    let outside = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "bin": "B-2"}),
        until.plus(Millis(5)),
    );
    site.sync_ok(&hh, &[open, inside, outside]).await;
    let (_, hops) = site
        .get(&format!("/v1/sessions/{}/hops", hh.session), &hh.token)
        .await;
    assert_eq!(hops["hops"][0]["occurred_at"], early.to_string());
    assert_eq!(hops["hops"][0]["booked_at"], until.to_string());
    assert_eq!(
        hops["hops"][1]["booked_at"],
        until.plus(Millis(5)).to_string()
    );
    let refused = site
        .db
        .call_blocking(|conn| stockhop_site::ledger::periods::close(conn, until, now()));
    assert!(refused.is_err(), "a period closes only forward");
}

#[tokio::test]
async fn every_unique_constraint_reached_over_http_answers_a_4xx_code() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let scan = hh.scan("EPC-1", "B-1");
    site.sync_ok(&hh, &[open, scan]).await;

    // units.code: no scan writes a code any more (units and their codes
    // come from reference data, whose importer refuses a clash itself).
    // hops.compensates: an observing scan (the unit is already there) undone twice.
    let observe = hh.scan("EPC-1", "B-1");
    let undo = hh.item("undo", json!({"target_key": observe["key"]}));
    let undo_again = hh.item("undo", json!({"target_key": observe["key"]}));
    let results = site.sync_ok(&hh, &[observe, undo, undo_again]).await;
    assert_eq!(results[1]["outcome"], "applied", "{}", results[1]);
    assert_code(&results[2], 409, "ALREADY_UNDONE");
    hh.seq -= 1;
    // seq_voids: two voids passing over the same slot.
    let skipped = hh.seq + 1;
    hh.seq += 1;
    let void = hh.item("void", json!({"void_seq": skipped}));
    let void_again = hh.item("void", json!({"void_seq": skipped}));
    let results = site.sync_ok(&hh, &[void, void_again]).await;
    assert_eq!(results[0]["outcome"], "applied", "{}", results[0]);
    assert_code(&results[1], 409, "SEQ_ALREADY_USED");
    // Nothing above is a 500, and the refused items left nothing behind.
    assert_eq!(site.count("SELECT count(*) FROM units"), 100);
}

#[test]
fn every_unique_constraint_in_the_schema_maps_to_a_4xx_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = backend::open_db(dir.path());
    let statements = [
        ("INSERT INTO devices VALUES ('D', 'rfd40', 'h1', 1, 0)", ""),
        ("INSERT INTO devices VALUES ('D', 'rfd40', 'h9', 1, 0)", "DEVICE_EXISTS"),
        ("INSERT INTO devices VALUES ('D2', 'rfd40', 'h1', 1, 0)", "DEVICE_EXISTS"),
        ("INSERT INTO sessions (session_id, device_id, state, operator_id) VALUES ('s1', 'D', 'open', 'op')", ""),
        ("INSERT INTO sessions (session_id, device_id, state, operator_id) VALUES ('s1', 'D', 'pending', NULL)", "SESSION_NOT_YOURS"),
        ("INSERT INTO sessions (session_id, device_id, state, operator_id) VALUES ('s2', 'D', 'open', 'op2')", "SESSION_CONFLICT"),
        ("INSERT INTO devices VALUES ('E', 'rfd40', 'h2', 1, 0)", ""),
        ("INSERT INTO sessions (session_id, device_id, state, operator_id) VALUES ('s3', 'E', 'open', 'op')", "SESSION_CONFLICT"),
        ("INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash, state, received_at, skew_ms) VALUES ('D', 'k', 's1', 1, 'scan', 'h', 'final', 0, 0)", ""),
        ("INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash, state, received_at, skew_ms) VALUES ('D', 'k', 's1', 2, 'scan', 'h', 'final', 0, 0)", "IDEMPOTENCY_KEY_REUSED"),
        ("INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash, state, received_at, skew_ms) VALUES ('D', 'k2', 's1', 1, 'scan', 'h', 'final', 0, 0)", "SEQ_ALREADY_USED"),
        ("INSERT INTO seq_voids VALUES ('s1', 5, 'v')", ""),
        ("INSERT INTO seq_voids VALUES ('s1', 5, 'w')", "SEQ_ALREADY_USED"),
        ("INSERT INTO units (epc, code, version, first_seen_at) VALUES ('E1', 'C1', 0, 0)", ""),
        ("INSERT INTO units (epc, code, version, first_seen_at) VALUES ('E1', NULL, 0, 0)", "UNIT_CONFLICT"),
        ("INSERT INTO units (epc, code, version, first_seen_at) VALUES ('E2', 'C1', 0, 0)", "UNIT_CONFLICT"),
        ("INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode) VALUES ('D', 'k', 'scan', 'FIND', '{}', 0, 0, 0, 0, 'live')", ""),
        ("INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode) VALUES ('D', 'k', 'scan', 'FIND', '{}', 0, 0, 0, 0, 'live')", "IDEMPOTENCY_KEY_REUSED"),
        ("INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode, compensates) VALUES ('D', 'u1', 'undo', 'UNDO', '{}', 0, 0, 0, 0, 'live', 1)", ""),
        ("INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode, compensates) VALUES ('D', 'u2', 'undo', 'UNDO', '{}', 0, 0, 0, 0, 'live', 1)", "ALREADY_UNDONE"),
        ("INSERT INTO terminal_events VALUES ('t', 'iclock', 'SN', 'attendance', '1', 0, 0, 0, 'accepted', '', NULL)", ""),
        ("INSERT INTO terminal_events VALUES ('t', 'iclock', 'SN', 'attendance', '1', 0, 0, 0, 'accepted', '', NULL)", "IDEMPOTENCY_KEY_REUSED"),
        ("INSERT INTO periods VALUES (10, 0)", ""),
        ("INSERT INTO periods VALUES (10, 1)", "PERIOD_NOT_LATER"),
    ];
    db.call_blocking(|conn| {
        for (sql, code) in statements {
            match conn.execute(sql, []) {
                Ok(_) => assert_eq!(code, "", "{sql} should have failed"),
                Err(err) => {
                    let refusal = stockhop_site::ledger::unique_violation(&err)
                        .unwrap_or_else(|| panic!("{sql}: not a unique violation: {err}"));
                    assert_eq!(refusal.code, code, "{sql}");
                    assert!((400..500).contains(&refusal.status), "{sql}");
                    // Every one is answered in the product's words: the
                    // schema's table and column names stay inside.
                    for table in [
                        "devices",
                        "sessions",
                        "receipts",
                        "seq_voids",
                        "units",
                        "hops",
                        "terminal_events",
                        "periods",
                    ] {
                        assert!(
                            !refusal.message.contains(&format!("{table}.")),
                            "{sql}: {}",
                            refusal.message
                        );
                    }
                }
            }
        }
    });
}

#[test]
fn the_hop_ledger_refuses_update_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let db = backend::open_db(dir.path());
    db.call_blocking(|conn| {
        conn.execute(
            "INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode) VALUES ('D', 'k', 'scan', 'FIND', '{}', 0, 0, 0, 0, 'live')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO terminal_events VALUES ('t', 'iclock', 'SN', 'attendance', '1', 0, 0, 0, 'accepted', '', NULL)",
            [],
        )
        .unwrap();
        for sql in [
            "UPDATE hops SET to_bin = 'elsewhere'",
            "DELETE FROM hops",
            "UPDATE terminal_events SET subject = 'x'",
            "DELETE FROM terminal_events",
        ] {
            let err = conn.execute(sql, []).unwrap_err();
            assert!(err.to_string().contains("append-only"), "{sql}: {err}");
        }
        let count: i64 = conn.query_row("SELECT count(*) FROM hops", [], |r| r.get(0)).unwrap();
        assert_eq!(count, 1);
    });
}

#[tokio::test]
async fn a_busy_database_answers_503_with_retry_after() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let data = site.data.clone();
    let (locked, lock_taken) = std::sync::mpsc::channel();
    // Another writer holds the lock the request needs for longer than the
    // ledger waits: SQLite's write lock, or PostgreSQL's on the receipts.
    let hold = stockhop_site::store::db::BUSY_TIMEOUT + std::time::Duration::from_secs(1);
    let holder = std::thread::spawn(move || match backend::database_for(&data) {
        Some(url) => {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            let mut tx = client.transaction().unwrap();
            tx.batch_execute("LOCK TABLE receipts IN EXCLUSIVE MODE")
                .unwrap();
            locked.send(()).unwrap();
            std::thread::sleep(hold);
            tx.rollback().unwrap();
        }
        None => {
            let path = data.join(stockhop_site::store::db::DB_FILE);
            let conn = stockhop_site::store::db::open_connection(&path).unwrap();
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            locked.send(()).unwrap();
            std::thread::sleep(hold);
            conn.execute_batch("ROLLBACK").unwrap();
        }
    });
    lock_taken.recv().unwrap();
    let body =
        json!({"device_id": "HH-1", "sent_at": now().to_string(), "items": [hh.open("op-1")]});
    let response = site
        .client
        .post(format!("{}/v1/sync", site.base))
        .bearer_auth(&hh.token)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "2");
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["code"], "OVERLOADED");
    holder.join().unwrap();
    assert_eq!(site.count("SELECT count(*) FROM receipts"), 0);
}

#[tokio::test]
async fn a_heartbeat_feeds_the_device_view_tells_its_period_and_only_for_its_own_device() {
    let site = Site::start_stocked().await;
    let hh = site.handheld("HH-1").await;
    let other = site.handheld("HH-2").await;
    let beat = json!({"sent_at": now().to_string(), "queue_depth": 7, "oldest_queued_at": now().to_string(), "app_version": "0.1.0"});
    let (status, body) = site
        .post_raw(
            "/v1/devices/HH-1/heartbeat",
            Some(&hh.token),
            beat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["server_time"].is_string());
    // A handheld (mc3390xr) beats every 15 minutes.
    assert_eq!(body["heartbeat_period_ms"], 900_000, "{body}");
    assert_eq!(body["commissioned"], true, "{body}");
    let seen = site
        .db
        .call_blocking(|conn| stockhop_site::ledger::devices::last_seen(conn, "HH-1"))
        .unwrap()
        .unwrap();
    assert_eq!(seen.queue_depth, Some(7));
    assert_eq!(seen.source, "handheld");
    let (status, _) = site
        .post_raw(
            "/v1/devices/HH-1/heartbeat",
            Some(&other.token),
            beat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(status, 403);
    let (status, _) = site
        .post_raw(
            "/v1/devices/HH-1/heartbeat",
            None,
            beat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn sync_requests_beyond_the_waiting_bound_are_shed_with_503() {
    use stockhop_site::ledger::admission::{Class, LIVE_WAITING_MAX, WRITER_SLOTS};
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    // The writer busy and every live place in the queue taken.
    let gate = site.ledger.admission.clone();
    let mut turns = Vec::new();
    for _ in 0..WRITER_SLOTS {
        turns.push(gate.admit(Class::Live).await.unwrap());
    }
    let waiters: Vec<_> = (0..LIVE_WAITING_MAX)
        .map(|_| {
            let gate = gate.clone();
            tokio::spawn(async move { drop(gate.admit(Class::Live).await.unwrap()) })
        })
        .collect();
    while gate.waiting().0 < LIVE_WAITING_MAX {
        tokio::task::yield_now().await;
    }
    let body =
        json!({"device_id": "HH-1", "sent_at": now().to_string(), "items": [hh.open("op-1")]});
    let response = site
        .client
        .post(format!("{}/v1/sync", site.base))
        .bearer_auth(&hh.token)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert!(response.headers().contains_key("retry-after"));
    drop(turns);
    for waiter in waiters {
        waiter.await.unwrap();
    }
    let (status, _) = site
        .post_raw("/v1/sync", Some(&hh.token), body.to_string().into_bytes())
        .await;
    assert_eq!(status, 200);
}
