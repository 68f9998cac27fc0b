//! `POST /v1/sync` over real HTTP on loopback against a real SQLite file:
//! claimed keys, replays, request limits and per-session order.

use crate::ledger_common::{key, now, Site};
use serde_json::{json, Value};

fn outcome(result: &Value) -> (&str, u64) {
    (
        result["outcome"].as_str().unwrap_or(""),
        result["status"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn a_replay_returns_the_stored_answer_marked_replayed_and_applies_nothing_twice() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let items = vec![hh.open("op-1"), hh.scan("EPC-1", "B-1")];
    let first = site.sync_ok(&hh, &items).await;
    assert_eq!(outcome(&first[0]), ("applied", 200));
    assert_eq!(outcome(&first[1]), ("applied", 200));
    assert_eq!(first[1]["replayed"], false);
    assert_eq!(first[1]["hop_ids"].as_array().unwrap().len(), 1);

    let again = site.sync_ok(&hh, &items).await;
    for (a, b) in first.iter().zip(&again) {
        assert_eq!(b["replayed"], true);
        let mut b = b.clone();
        b["replayed"] = json!(false);
        assert_eq!(a, &b, "the stored answer, unchanged");
    }
    assert_eq!(site.count("SELECT count(*) FROM hops"), 1);
    assert_eq!(site.count("SELECT version FROM units"), 1);
}

#[tokio::test]
async fn the_request_hash_ignores_key_order_and_whitespace() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    site.sync_ok(&hh, std::slice::from_ref(&open)).await;
    // The same item with its fields in another order and spaced out.
    let mut fields: Vec<(String, Value)> = open.as_object().unwrap().clone().into_iter().collect();
    fields.reverse();
    let reordered = fields
        .iter()
        .map(|(k, v)| format!("{k:?} :  {v}"))
        .collect::<Vec<_>>()
        .join(" ,\n ");
    let body = format!(
        r#"{{"device_id":"HH-1","sent_at":"{}","items":[{{ {reordered} }}]}}"#,
        now()
    );
    let (status, answer) = site
        .post_raw("/v1/sync", Some(&hh.token), body.into_bytes())
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["replayed"], true);
    assert_eq!(answer["results"][0]["outcome"], "applied");
}

#[tokio::test]
async fn the_same_key_with_another_body_or_command_is_409_key_reused() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let scan = hh.scan("EPC-1", "B-1");
    site.sync_ok(&hh, &[open, scan.clone()]).await;

    let mut changed = scan.clone();
    changed["body"]["bin"] = json!("B-2");
    let mut other_command = hh.item("close_session", json!({}));
    other_command["key"] = scan["key"].clone();
    let results = site.sync_ok(&hh, &[changed, other_command]).await;
    for result in &results {
        assert_eq!(result["status"], 409);
        assert_eq!(result["code"], "IDEMPOTENCY_KEY_REUSED");
    }
    assert_eq!(site.count("SELECT count(*) FROM hops"), 1);
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE bin = 'B-1'"),
        1
    );
}

#[tokio::test]
async fn a_receipt_that_cannot_be_read_fails_closed_and_never_runs_again() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let items = vec![hh.open("op-1"), hh.scan("EPC-1", "B-1")];
    site.sync_ok(&hh, &items).await;
    let scan_key = items[1]["key"].as_str().unwrap().to_owned();
    site.db.call_blocking(|conn| {
        conn.execute(
            "UPDATE receipts SET response = '{not json' WHERE key = ?1",
            [&scan_key],
        )
        .unwrap()
    });
    let results = site.sync_ok(&hh, &items[1..]).await;
    // 409: the device blocks the item and shows it, instead of resending
    // a 500 every 30 s forever.
    assert_eq!(results[0]["status"], 409);
    assert_eq!(results[0]["code"], "IDEMPOTENCY_RECEIPT_UNAVAILABLE");
    assert_eq!(site.count("SELECT count(*) FROM hops"), 1);
}

#[tokio::test]
async fn request_level_failures_are_plain_http_errors_with_a_code() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let valid = |items: Vec<Value>| {
        json!({"device_id": "HH-1", "sent_at": now().to_string(), "items": items})
            .to_string()
            .into_bytes()
    };
    let check = |(status, body): (u16, Value), want_status: u16, want_code: &str| {
        assert_eq!(status, want_status, "{body}");
        assert_eq!(body["code"], want_code, "{body}");
    };

    let huge = vec![b' '; stockhop::wire::MAX_REQUEST_BYTES + 1];
    check(
        site.post_raw("/v1/sync", Some(&hh.token), huge).await,
        413,
        "BODY_TOO_LARGE",
    );
    check(
        site.post_raw("/v1/sync", Some(&hh.token), b"{\"items\":[".to_vec())
            .await,
        400,
        "MALFORMED_REQUEST",
    );
    let too_many: Vec<Value> = (0..51).map(|_| hh.scan("EPC-1", "B-1")).collect();
    check(
        site.post_raw("/v1/sync", Some(&hh.token), valid(too_many))
            .await,
        400,
        "TOO_MANY_ITEMS",
    );
    let mut bad_key = hh.open("op-1");
    bad_key["key"] = json!("8a0c");
    check(
        site.post_raw("/v1/sync", Some(&hh.token), valid(vec![bad_key]))
            .await,
        400,
        "MALFORMED_REQUEST",
    );
    let mut no_key = hh.open("op-1");
    no_key.as_object_mut().unwrap().remove("key");
    check(
        site.post_raw("/v1/sync", Some(&hh.token), valid(vec![no_key]))
            .await,
        400,
        "MALFORMED_REQUEST",
    );
    check(
        site.post_raw("/v1/sync", None, valid(vec![])).await,
        401,
        "UNAUTHORIZED",
    );
    check(
        site.post_raw("/v1/sync", Some("not-a-token"), valid(vec![]))
            .await,
        401,
        "UNAUTHORIZED",
    );
    let other = site.add_device("HH-2", true);
    check(
        site.post_raw("/v1/sync", Some(&other), valid(vec![])).await,
        403,
        "DEVICE_MISMATCH",
    );
    assert_eq!(
        site.count("SELECT count(*) FROM receipts"),
        0,
        "nothing taken"
    );
}

#[tokio::test]
async fn an_item_ahead_of_a_gap_is_buffered_durably_and_applies_in_order_when_the_gap_fills() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let second = hh.scan("EPC-1", "B-1");
    let third = hh.scan("EPC-1", "B-2");
    let fourth = hh.scan("EPC-1", "B-3");

    let results = site
        .sync_ok(&hh, &[open, fourth.clone(), third.clone()])
        .await;
    assert_eq!(outcome(&results[0]), ("applied", 200));
    assert_eq!(outcome(&results[1]), ("buffered", 202));
    assert_eq!(outcome(&results[2]), ("buffered", 202));
    let replay = site.sync_ok(&hh, std::slice::from_ref(&third)).await;
    assert_eq!(outcome(&replay[0]), ("buffered", 202));
    assert_eq!(replay[0]["replayed"], true);
    assert_eq!(site.count("SELECT count(*) FROM hops"), 0);

    // A restart in between: buffered items are on disk.
    let data = site.data.clone();
    let dir = site.stop().await;
    let site = Site::start_on(data).await;

    let results = site.sync_ok(&hh, &[second]).await;
    assert_eq!(outcome(&results[0]), ("applied", 200));
    let seqs: Vec<i64> = site.db.call_blocking(|conn| {
        let mut st = conn
            .prepare("SELECT client_seq FROM hops ORDER BY hop_id")
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    assert_eq!(seqs, vec![2, 3, 4], "applied in client_seq order");
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE bin = 'B-3' AND version = 4"),
        1
    );
    let replay = site.sync_ok(&hh, &[third, fourth]).await;
    for result in &replay {
        assert_eq!(outcome(result), ("applied", 200));
        assert_eq!(result["replayed"], true);
        assert_eq!(result["hop_ids"].as_array().unwrap().len(), 1);
    }
    site.stop().await;
    drop(dir);
}

#[tokio::test]
async fn buffered_items_answered_in_the_request_that_fills_their_gap_report_what_they_became() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let second = hh.scan("EPC-1", "B-1");
    let third = hh.scan("EPC-1", "B-2");
    let results = site.sync_ok(&hh, &[third, second, open]).await;
    for result in &results {
        assert_eq!(outcome(result), ("applied", 200), "{result}");
        assert_eq!(result["replayed"], false);
    }
    assert_eq!(site.count("SELECT count(*) FROM hops"), 2);
}

#[tokio::test]
async fn a_void_fills_the_gap_from_its_own_slot_or_from_the_voided_one() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let lost = hh.scan("EPC-1", "B-1"); // seq 2, never delivered
    let after = hh.scan("EPC-2", "B-1"); // seq 3
    let results = site.sync_ok(&hh, &[open, after.clone()]).await;
    assert_eq!(outcome(&results[1]), ("buffered", 202));
    // The void gets the next slot (4) and passes over seq 2.
    let void = hh.item("void", json!({"void_seq": 2}));
    let results = site.sync_ok(&hh, &[void]).await;
    assert_eq!(outcome(&results[0]), ("applied", 200));
    let replay = site.sync_ok(&hh, &[after]).await;
    assert_eq!(outcome(&replay[0]), ("applied", 200));
    // The voided item itself can no longer take its slot.
    let late = site.sync_ok(&hh, &[lost]).await;
    assert_eq!(late[0]["status"], 409);
    assert_eq!(late[0]["code"], "SEQ_ALREADY_USED");

    // A void sent in the slot it voids.
    let lost = hh.scan("EPC-3", "B-1"); // seq 5, never delivered
    let after = hh.scan("EPC-4", "B-1"); // seq 6
    site.sync_ok(&hh, std::slice::from_ref(&after)).await;
    let mut void = hh.item("void", json!({"void_seq": 5}));
    void["client_seq"] = lost["client_seq"].clone();
    hh.seq -= 1;
    let results = site.sync_ok(&hh, &[void]).await;
    assert_eq!(outcome(&results[0]), ("applied", 200));
    let replay = site.sync_ok(&hh, &[after]).await;
    assert_eq!(outcome(&replay[0]), ("applied", 200));
    assert_eq!(site.count("SELECT count(*) FROM hops"), 2);
    assert_eq!(site.count("SELECT next_seq FROM sessions"), 7);
}

#[tokio::test]
async fn a_new_key_on_a_taken_client_seq_is_409_seq_already_used_and_never_applied() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let scan = hh.scan("EPC-1", "B-1");
    hh.seq += 1; // leave a gap at seq 3 so seq 4 stays buffered
    let buffered_ahead = hh.scan("EPC-3", "B-1");
    site.sync_ok(&hh, &[open, scan.clone(), buffered_ahead.clone()])
        .await;

    let mut applied_slot = scan.clone();
    applied_slot["key"] = json!(key());
    let mut buffered_slot = buffered_ahead.clone();
    buffered_slot["key"] = json!(key());
    let results = site.sync_ok(&hh, &[applied_slot, buffered_slot]).await;
    for result in &results {
        assert_eq!(result["status"], 409, "{result}");
        assert_eq!(result["code"], "SEQ_ALREADY_USED");
    }
    assert_eq!(site.count("SELECT count(*) FROM hops"), 1);
    assert_eq!(site.count("SELECT count(*) FROM receipts"), 3);
}

#[tokio::test]
async fn thirty_two_concurrent_requests_with_the_same_items_apply_each_once() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let mut items = vec![hh.open("op-1")];
    for i in 0..20 {
        items.push(hh.scan(&format!("EPC-{i}"), "B-1"));
    }
    let site = std::sync::Arc::new(site);
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let site = std::sync::Arc::clone(&site);
        let hh = hh.clone();
        let items = items.clone();
        tasks.push(tokio::spawn(async move { site.sync_ok(&hh, &items).await }));
    }
    let mut fresh = vec![0; items.len()];
    for task in tasks {
        for (i, result) in task.await.unwrap().iter().enumerate() {
            match (
                result["status"].as_u64().unwrap(),
                result["replayed"].as_bool(),
            ) {
                (200, Some(false)) => fresh[i] += 1,
                (200, Some(true)) => {}
                (409, _) => assert_eq!(result["code"], "OPERATION_IN_PROGRESS"),
                other => panic!("unexpected answer {other:?}: {result}"),
            }
        }
    }
    assert!(
        fresh.iter().all(|&n| n == 1),
        "each item applied once: {fresh:?}"
    );
    assert_eq!(site.count("SELECT count(*) FROM hops"), 20);
    assert_eq!(
        site.count(
            "SELECT count(*) FROM (SELECT key FROM hops GROUP BY key HAVING count(*) > 1) AS twice"
        ),
        0
    );
}

#[tokio::test]
async fn a_chunked_body_over_the_limit_is_413_too() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let site = Site::start_stocked().await;
    let hh = site.handheld("HH-1").await;
    let addr = site.base.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /v1/sync HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        hh.token
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 64 * 1024];
    let mut sent = 0;
    while sent <= stockhop::wire::MAX_REQUEST_BYTES {
        let frame = [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
        if stream.write_all(&frame).await.is_err() {
            break; // the server answered and closed early
        }
        sent += chunk.len();
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply).await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("BODY_TOO_LARGE"), "{reply}");
}

#[tokio::test]
async fn a_buffered_item_refused_when_its_turn_comes_keeps_that_answer_and_the_session_moves_on() {
    let site = Site::start_stocked().await;
    let mut first = site.handheld("HH-1").await;
    let open = first.open("op-1");
    site.sync_ok(&first, &[open]).await;

    // A second session of the same device: its open_session waits behind
    // seq 1 and, when a void fills seq 1, conflicts with the open session.
    let mut second = first.clone();
    second.new_session();
    second.seq = 1;
    let late_open = second.open("op-2");
    let scan = second.scan("EPC-1", "B-1");
    let results = site
        .sync_ok(&second, &[late_open.clone(), scan.clone()])
        .await;
    assert_eq!(outcome(&results[0]), ("buffered", 202));
    let mut void = second.item("void", json!({"void_seq": 1}));
    void["client_seq"] = json!(1);
    let results = site.sync_ok(&second, &[void]).await;
    assert_eq!(outcome(&results[0]), ("applied", 200));

    let replay = site.sync_ok(&second, &[late_open, scan]).await;
    assert_eq!(replay[0]["status"], 409, "{}", replay[0]);
    assert_eq!(replay[0]["code"], "SESSION_CONFLICT");
    assert_eq!(replay[0]["replayed"], true);
    assert_eq!(replay[1]["outcome"], "rejected", "{}", replay[1]);
    assert_eq!(replay[1]["reason"], "session_not_open");
    assert_eq!(
        site.count(&format!(
            "SELECT next_seq FROM sessions WHERE session_id = '{}'",
            second.session
        )),
        4
    );
}

#[tokio::test]
async fn a_key_held_by_a_request_in_flight_is_409_operation_in_progress_and_not_taken() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let key: stockhop::key::IdempotencyKey = open["key"].as_str().unwrap().parse().unwrap();
    let (in_flight, _) = site.ledger.in_flight.claim("HH-1", &[key]);
    let results = site.sync_ok(&hh, std::slice::from_ref(&open)).await;
    assert_eq!(results[0]["status"], 409);
    assert_eq!(results[0]["code"], "OPERATION_IN_PROGRESS");
    assert_eq!(site.count("SELECT count(*) FROM receipts"), 0);
    drop(in_flight);
    let results = site.sync_ok(&hh, &[open]).await;
    assert_eq!(outcome(&results[0]), ("applied", 200));
}

#[tokio::test]
async fn fifty_items_fit_in_one_request() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let mut items = vec![hh.open("op-1")];
    items.extend(
        (1..stockhop::wire::MAX_ITEMS_PER_REQUEST).map(|i| hh.scan(&format!("EPC-{i}"), "B-1")),
    );
    let results = site.sync_ok(&hh, &items).await;
    assert_eq!(results.len(), 50);
    assert!(results.iter().all(|r| r["outcome"] == "applied"));
}

#[tokio::test]
async fn an_item_refused_after_it_wrote_leaves_no_trace_and_the_items_around_it_apply() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let mut second = hh.clone();
    second.new_session();
    // The second session's row is written when its first item arrives;
    // its open is then refused: the device already has an open session.
    let refused_open = second.open("op-2");
    let items = vec![
        hh.open("op-1"),
        hh.scan("EPC-1", "B-1"),
        refused_open.clone(),
        hh.scan("EPC-2", "B-1"),
    ];
    let results = site.sync_ok(&hh, &items).await;
    assert_eq!(outcome(&results[0]), ("applied", 200));
    assert_eq!(outcome(&results[1]), ("applied", 200));
    assert_eq!(results[2]["status"], 409, "{}", results[2]);
    assert_eq!(results[2]["code"], "SESSION_CONFLICT");
    assert_eq!(outcome(&results[3]), ("applied", 200));
    assert_eq!(site.count("SELECT count(*) FROM sessions"), 1);
    assert_eq!(site.count("SELECT count(*) FROM receipts"), 3);
    assert_eq!(site.count("SELECT count(*) FROM hops"), 2);
    assert_eq!(
        site.count(
            "SELECT CAST(sum(version) AS BIGINT) FROM units WHERE epc IN ('EPC-1', 'EPC-2')"
        ),
        4,
        "each scanned unit moved once"
    );

    let again = site.sync_ok(&hh, &items).await;
    for (first, replayed) in [(0, 0), (1, 1), (3, 3)].map(|(a, b)| (&results[a], &again[b])) {
        assert_eq!(replayed["replayed"], true);
        assert_eq!(replayed["hop_ids"], first["hop_ids"]);
    }
    assert_eq!(
        again[2]["code"], "SESSION_CONFLICT",
        "refused again, never stored"
    );

    // Its slot stayed open: once the first session closes, it applies.
    let close = hh.item("close_session", json!({}));
    site.sync_ok(&hh, &[close]).await;
    let retried = site.sync_ok(&second, &[refused_open]).await;
    assert_eq!(outcome(&retried[0]), ("applied", 200));
    assert_eq!(retried[0]["replayed"], false);
}

#[tokio::test]
async fn a_backlog_longer_than_a_chunk_applies_in_order_once_its_gap_fills() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let backlog: Vec<Value> = (0..stockhop_site::limits::DRAIN_CHUNK_ITEMS + 44)
        .map(|_| hh.scan("EPC-1", "B-1"))
        .collect();
    for batch in backlog.chunks(stockhop::wire::MAX_ITEMS_PER_REQUEST) {
        let results = site.sync_ok(&hh, batch).await;
        assert!(
            results.iter().all(|r| r["outcome"] == "buffered"),
            "{results:?}"
        );
    }
    let results = site.sync_ok(&hh, &[open]).await;
    assert_eq!(outcome(&results[0]), ("applied", 200));

    // The first chunk applied with the open; the rest drain after the answer.
    let total = backlog.len() as i64;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while site.count("SELECT count(*) FROM hops") < total {
        assert!(
            std::time::Instant::now() < deadline,
            "the backlog did not drain"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let in_order = site.count(
        "SELECT count(*) FROM hops AS a JOIN hops AS b
         ON a.session_id = b.session_id AND a.client_seq < b.client_seq AND a.hop_id > b.hop_id",
    );
    assert_eq!(in_order, 0, "hops in client_seq order");
    assert_eq!(site.count("SELECT count(*) FROM hops"), total);
    assert_eq!(
        site.count("SELECT next_seq FROM sessions"),
        total + 2,
        "the cursor rests past the last item"
    );
    let replayed = site.sync_ok(&hh, &backlog[..50]).await;
    assert!(replayed
        .iter()
        .all(|r| r["outcome"] == "applied" && r["replayed"] == true));
}
