//! The decision workbench over real HTTP on loopback against a real SQLite
//! file (and PostgreSQL with `STOCKHOP_TEST_BACKEND=postgres`): each kind
//! of decision listed with its context, settled by dismiss and by correct
//! (the hops posted, the audit row, gone from the open list), and a
//! handheld's acknowledgement settling the decision it answers.

use crate::ledger_common;

use ledger_common::{now, Handheld, Site};
use serde_json::{json, Value};
use stockhop::time::{Millis, UnixMs};
use stockhop_site::ledger::modes::cycle_count;
use stockhop_site::view;

/// Zone Z-A (bins) of location L-1; units U-1…U-3 in stock in
/// A-1, U-5 new (SKU-2, no bin); GRN G-1 (accepted: SKU-1 ×2, SKU-2 ×1).
async fn warehouse() -> (Site, String) {
    let site = Site::start().await;
    site.import(
        "bins",
        "bin,zone,location\nA-1,Z-A,L-1\nA-2,Z-A,L-1\nB-1,Z-B,L-1\n",
    );
    site.import(
        "units",
        "epc,code,sku,state,bin\n\
         U-1,,SKU-1,in_stock,A-1\nU-2,,SKU-1,in_stock,A-1\nU-3,,SKU-1,in_stock,A-1\n\
         U-5,,SKU-2,new,\n",
    );
    site.import(
        "grns",
        "grn,qc,sku,expected\nG-1,accepted,SKU-1,2\nG-1,accepted,SKU-2,1\n\
         G-2,accepted,SKU-1,2\n",
    );
    let admin = site
        .db
        .call_blocking(|conn| view::admin::add(conn, "supervisor", now()))
        .unwrap();
    (site, admin)
}

fn open(hh: &mut Handheld, mode: &str, context: Value) -> Value {
    let operator = format!("op-{}", hh.device_id);
    hh.item(
        "open_session",
        json!({"operator_id": operator, "mode": mode, "context": context}),
    )
}

async fn decisions(site: &Site, admin: &str) -> Vec<Value> {
    let (code, body) = site.get("/v1/site/decisions", admin).await;
    assert_eq!(code, 200, "{body}");
    body["decisions"].as_array().unwrap().clone()
}

async fn decision(site: &Site, admin: &str, id: &str) -> Option<Value> {
    decisions(site, admin)
        .await
        .into_iter()
        .find(|d| d["id"] == id)
}

async fn log(site: &Site, admin: &str) -> Vec<Value> {
    let (code, body) = site.get("/v1/site/decision-log", admin).await;
    assert_eq!(code, 200, "{body}");
    body["entries"].as_array().unwrap().clone()
}

/// POSTs a settlement with the admin's bearer token.
async fn settle(site: &Site, admin: &str, id: &str, action: &str, note: &str) -> (u16, Value) {
    let path = format!(
        "/v1/site/decisions/{}",
        percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC)
    );
    let body = json!({"action": action, "note": note});
    site.post_raw(&path, Some(admin), body.to_string().into_bytes())
        .await
}

/// Settles `id` and checks the answer, the audit row and that it left
/// the open list; returns the hops it posted.
async fn settled(site: &Site, admin: &str, id: &str, action: &str) -> Vec<i64> {
    let note = format!("{action} by the test");
    let (code, body) = settle(site, admin, id, action, &note).await;
    assert_eq!(code, 200, "{id}: {body}");
    let entry = &body["decision"];
    assert_eq!(
        (
            &entry["decision_id"],
            &entry["action"],
            &entry["settled_by"],
            &entry["note"]
        ),
        (
            &json!(id),
            &json!(action),
            &json!("supervisor"),
            &json!(note)
        ),
    );
    assert!(decision(site, admin, id).await.is_none(), "{id} still open");
    let logged = log(site, admin).await;
    assert!(
        logged
            .iter()
            .any(|e| e["decision_id"] == id && e["action"] == action),
        "{logged:?}"
    );
    let (again, body) = settle(site, admin, id, action, "").await;
    assert_eq!(
        (again, body["code"].as_str()),
        (409, Some("ALREADY_SETTLED"))
    );
    entry["hop_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_i64().unwrap())
        .collect()
}

fn hop(site: &Site, hop_id: i64) -> (String, String, Option<i64>) {
    site.db
        .call_blocking(|conn| {
            conn.query_row(
                "SELECT kind, device_id, compensates FROM hops WHERE hop_id = ?1",
                [hop_id],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
        })
        .unwrap()
}

async fn unit(site: &Site, hh: &Handheld, epc: &str) -> Value {
    let (code, body) = site.get(&format!("/v1/units/{epc}"), &hh.token).await;
    assert_eq!(code, 200, "{body}");
    body
}

async fn grn(site: &Site, hh: &Handheld, grn: &str) -> Value {
    let (code, body) = site.get(&format!("/v1/grns/{grn}"), &hh.token).await;
    assert_eq!(code, 200, "{body}");
    body
}

/// A count of Z-A that saw U-1 and a stray tag: U-2 and U-3 missing.
async fn closed_count(site: &Site, device: &str) -> String {
    let count_id = site
        .db
        .call_blocking(|conn| cycle_count::open(conn, "L-1", "Z-A", now()))
        .unwrap();
    let mut hh = site.handheld(device).await;
    let items = [
        open(&mut hh, "cycle_count", json!({"count_id": count_id})),
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": count_id, "epc": "U-1", "bin": "A-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": count_id, "epc": "STRAY", "bin": "A-2"}),
        ),
        hh.item("close_session", json!({})),
    ];
    site.sync_applied(&hh, &items).await;
    count_id
}

#[tokio::test]
async fn a_count_variance_is_approved_by_correct_and_left_standing_by_dismiss() {
    let (site, admin) = warehouse().await;
    let count_id = closed_count(&site, "HH-1").await;
    let id = format!("count:{count_id}");
    let waiting = decision(&site, &admin, &id).await.expect("the count waits");
    assert_eq!(waiting["kind"], "count_variance");
    assert_eq!(waiting["missing"], json!(["U-2", "U-3"]));
    assert_eq!(waiting["unexpected"], json!(["STRAY"]));
    assert_eq!(waiting["actions"], json!(["dismiss", "correct"]));

    let hops = settled(&site, &admin, &id, "correct").await;
    assert_eq!(hops.len(), 3, "two missing, one unexpected");
    for hop_id in hops {
        assert_eq!(hop(&site, hop_id).0, "ADJUST");
    }
    let hh = site.handheld("HH-R").await;
    assert_eq!(unit(&site, &hh, "U-2").await["state"], "missing");

    // The zone is counted again; this time the variance is left alone.
    let again = closed_count(&site, "HH-2").await;
    let id = format!("count:{again}");
    let adjusts = site.count("SELECT count(*) FROM hops WHERE kind = 'ADJUST'");
    assert!(settled(&site, &admin, &id, "dismiss").await.is_empty());
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ADJUST'"),
        adjusts
    );
    let (_, status) = site.get("/v1/site/status", &admin).await;
    assert_eq!(status["decisions"]["count_variances"], json!([]));
}

/// `/metrics`' count of `kind` among the decisions waiting.
async fn pending_metric(site: &Site, admin: &str, kind: &str) -> String {
    let (_, text) = site.get_text("/metrics", admin).await;
    let series = format!("stockhop_pending_decisions{{kind=\"{kind}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .unwrap_or_else(|| panic!("no {series} in\n{text}"))
        .to_owned()
}

#[tokio::test]
async fn a_cancelled_count_waits_for_no_one_on_the_list_the_status_or_metrics() {
    let (site, admin) = warehouse().await;
    // One count closed with its variance, then cancelled; one cancelled
    // while still open; one closed and waiting, the list's one entry.
    let closed_then_cancelled = closed_count(&site, "HH-1").await;
    site.db
        .call_blocking(|conn| cycle_count::cancel(conn, &closed_then_cancelled, now()))
        .unwrap();
    let open_then_cancelled = site
        .db
        .call_blocking(|conn| cycle_count::open(conn, "L-1", "Z-B", now()))
        .unwrap();
    site.db
        .call_blocking(|conn| cycle_count::cancel(conn, &open_then_cancelled, now()))
        .unwrap();
    let waiting = closed_count(&site, "HH-2").await;

    let counts: Vec<Value> = decisions(&site, &admin)
        .await
        .into_iter()
        .filter(|d| d["kind"] == "count_variance")
        .map(|d| d["count_id"].clone())
        .collect();
    assert_eq!(counts, [json!(waiting)], "only the count that waits");
    let (_, status) = site.get("/v1/site/status", &admin).await;
    let listed: Vec<&Value> = status["decisions"]["count_variances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["count_id"])
        .collect();
    assert_eq!(listed, [&json!(waiting)], "the status agrees");
    assert_eq!(pending_metric(&site, &admin, "count_variance").await, "1");

    // Nothing offers to settle a cancelled count, and its approval is
    // refused as cancelled.
    for count_id in [&closed_then_cancelled, &open_then_cancelled] {
        let id = format!("count:{count_id}");
        for action in ["correct", "dismiss"] {
            let (code, body) = settle(&site, &admin, &id, action, "").await;
            assert_eq!(
                (code, body["code"].as_str()),
                (404, Some("NOT_FOUND")),
                "{id} {action}: {body}"
            );
        }
        let (code, body) = site
            .post_raw(
                &format!("/v1/site/counts/{count_id}/approve"),
                Some(&admin),
                b"{}".to_vec(),
            )
            .await;
        assert_eq!(
            (code, body["code"].as_str()),
            (409, Some("COUNT_NOT_CLOSED"))
        );
        assert!(
            body["message"].as_str().unwrap().contains("cancelled"),
            "{body}"
        );
    }

    // The one that waited is approved: no count waits, on every reading.
    settled(&site, &admin, &format!("count:{waiting}"), "correct").await;
    assert!(decisions(&site, &admin)
        .await
        .iter()
        .all(|d| d["kind"] != "count_variance"));
    let (_, status) = site.get("/v1/site/status", &admin).await;
    assert_eq!(status["decisions"]["count_variances"], json!([]));
    assert_eq!(pending_metric(&site, &admin, "count_variance").await, "0");
}

/// A receive of U-5 (SKU-2) and one new tag of SKU-1 on `grn`, closed
/// with SKU-1 short by one.
async fn short_grn(site: &Site, device: &str, grn: &str, new_tag: &str) -> Handheld {
    let mut hh = site.handheld(device).await;
    let items = [
        open(&mut hh, "receive", json!({"grn": grn})),
        hh.item(
            "scan",
            json!({"mode": "receive", "grn": grn, "epc": new_tag, "sku": "SKU-1"}),
        ),
        hh.item("close_session", json!({})),
    ];
    site.sync_applied(&hh, &items).await;
    hh
}

#[tokio::test]
async fn a_grn_to_resolve_names_its_lines_and_tags_and_accepting_it_books_each_line_once() {
    let (site, admin) = warehouse().await;
    let hh = short_grn(&site, "HH-1", "G-1", "NEW-1").await;
    let waiting = decision(&site, &admin, "grn:G-1").await.expect("G-1 waits");
    assert_eq!(waiting["kind"], "grn_resolution");
    assert_eq!(
        waiting["lines"],
        json!([
            {"sku": "SKU-1", "expected": 2, "received": 1, "short": 1, "excess": 0, "tags": ["NEW-1"]},
            {"sku": "SKU-2", "expected": 1, "received": 0, "short": 1, "excess": 0, "tags": []},
        ])
    );
    assert_eq!(waiting["device_id"], "HH-1");
    assert_eq!(waiting["operator_id"], "op-HH-1");
    assert!(waiting["summary"]
        .as_str()
        .unwrap()
        .contains("SKU-1 1 of 2 received, short 1"));
    // Beside the English, the view's messages and the figures they name.
    assert_eq!(
        (&waiting["summary_id"], &waiting["reason_words_id"]),
        (&json!("decision-grn"), &json!("decision-grn-why"))
    );
    assert_eq!(waiting["dismiss_id"], "decision-grn-dismiss");
    assert_eq!(
        waiting["args"],
        json!({"grn": "G-1", "lines": 2, "short": 2, "excess": 0})
    );

    // Resolving a GRN is one operation: the decision offers only it, and
    // accepting the GRN as received books its lines.
    assert_eq!(waiting["actions"], json!(["dismiss"]), "{waiting}");
    let (code, body) = settle(&site, &admin, "grn:G-1", "correct", "").await;
    assert_eq!(
        (code, body["code"].as_str()),
        (409, Some("NOT_CORRECTABLE"))
    );
    assert!(
        decision(&site, &admin, "grn:G-1").await.is_some(),
        "still waits"
    );

    let hops = settled(&site, &admin, "grn:G-1", "dismiss").await;
    assert_eq!(hops.len(), 2, "one ADJUST a short line");
    assert_eq!(hop(&site, hops[0]).0, "ADJUST");
    assert_eq!(grn(&site, &hh, "G-1").await["state"], "complete");
    let (code, feed) = site.get("/v1/hops?limit=1000", &admin).await;
    assert_eq!(code, 200, "{feed}");
    let mut booked: Vec<(String, i64)> = feed["hops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| hops.contains(&h["hop_id"].as_i64().unwrap()))
        .map(|h| {
            (
                h["sku"].as_str().unwrap().to_owned(),
                h["quantity"].as_i64().unwrap(),
            )
        })
        .collect();
    booked.sort();
    assert_eq!(
        booked,
        [("SKU-1".to_owned(), -1), ("SKU-2".to_owned(), -1)],
        "received − expected, a short line negative"
    );
}

#[tokio::test]
async fn a_rejected_put_away_is_confirmed_by_correct_and_left_refused_by_dismiss() {
    let (site, admin) = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "put_away", json!({})),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-1", "bin": "A-2", "unit_version": 7}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-2", "bin": "A-2", "unit_version": 9}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "GHOST", "bin": "A-2"}),
        ),
    ];
    let results = site.sync_ok(&hh, &items).await;
    assert_eq!(results[1]["reason"], "stale_state");
    let stale = format!("item:HH-1:{}", items[1]["key"].as_str().unwrap());
    let waiting = decision(&site, &admin, &stale)
        .await
        .expect("the refusal waits");
    assert_eq!(
        (
            &waiting["kind"],
            &waiting["epc"],
            &waiting["bin"],
            &waiting["mode"],
            &waiting["operator_id"]
        ),
        (
            &json!("rejected_item"),
            &json!("U-1"),
            &json!("A-2"),
            &json!("put_away"),
            &json!("op-HH-1")
        )
    );
    assert_eq!(waiting["client_seq"], 2);
    assert_eq!(waiting["captured_at"], items[1]["occurred_at"]);
    assert!(waiting["reason_words"]
        .as_str()
        .unwrap()
        .contains("changed on the site"));
    // The page puts the reason under the summary and each action's words
    // after its label: the server says each thing once.
    let summary = waiting["summary"].as_str().unwrap();
    assert!(!summary.contains("changed on the site"), "{summary}");
    assert_eq!(
        waiting["correct_words"],
        "U-1 is in stock in bin A-2 (an ADJUST hop)."
    );
    assert_eq!(
        waiting["dismiss_words"],
        "the refusal stands and nothing is posted."
    );
    // The same sentences as the view's messages, with the values they name.
    assert_eq!(
        (
            &waiting["summary_id"],
            &waiting["correct_id"],
            &waiting["dismiss_id"]
        ),
        (
            &json!("decision-item"),
            &json!("decision-item-correct"),
            &json!("decision-item-dismiss")
        )
    );
    assert_eq!(
        waiting["reason_words_id"],
        json!(null),
        "its reason has its own message"
    );
    assert_eq!(
        (
            &waiting["args"]["unit"],
            &waiting["args"]["bin"],
            &waiting["args"]["seq"]
        ),
        (&json!("U-1"), &json!("A-2"), &json!("2"))
    );
    let unknown = format!("item:HH-1:{}", items[3]["key"].as_str().unwrap());
    assert_eq!(
        decision(&site, &admin, &unknown).await.unwrap()["actions"],
        json!(["dismiss"]),
        "an unknown unit has no correction"
    );
    let (code, body) = settle(&site, &admin, &unknown, "correct", "").await;
    assert_eq!(
        (code, body["code"].as_str()),
        (409, Some("NOT_CORRECTABLE"))
    );

    let hops = settled(&site, &admin, &stale, "correct").await;
    assert_eq!(hop(&site, hops[0]).0, "ADJUST");
    let u1 = unit(&site, &hh, "U-1").await;
    assert_eq!(
        (&u1["bin"], &u1["state"]),
        (&json!("A-2"), &json!("in_stock"))
    );

    let other = format!("item:HH-1:{}", items[2]["key"].as_str().unwrap());
    assert!(settled(&site, &admin, &other, "dismiss").await.is_empty());
    assert_eq!(unit(&site, &hh, "U-2").await["bin"], "A-1");
    assert!(settled(&site, &admin, &unknown, "dismiss").await.is_empty());
}

#[tokio::test]
async fn a_late_undo_of_a_receive_is_reversed_by_correct_and_the_unit_leaves_its_grn_line() {
    let (site, admin) = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let scanned_at = UnixMs(now().0 - 10 * 60_000);
    let items = [
        open(&mut hh, "receive", json!({"grn": "G-1"})),
        hh.item_at(
            "scan",
            json!({"mode": "receive", "grn": "G-1", "epc": "NEW-1", "sku": "SKU-1"}),
            scanned_at,
        ),
    ];
    site.sync_applied(&hh, &items).await;
    let before = unit(&site, &hh, "NEW-1").await;
    // Past the 120 s window, whatever the mode's own undo allows.
    let undo = hh.item_at(
        "undo",
        json!({"target_key": items[1]["key"]}),
        scanned_at.plus(Millis(121_000)),
    );
    let result = &site.sync_ok(&hh, std::slice::from_ref(&undo)).await[0];
    assert_eq!(result["outcome"], "rejected", "{result}");
    let id = format!("item:HH-1:{}", undo["key"].as_str().unwrap());
    let waiting = decision(&site, &admin, &id).await.expect("the undo waits");
    assert_eq!(
        (
            &waiting["kind"],
            &waiting["epc"],
            &waiting["mode"],
            &waiting["grn"]
        ),
        (
            &json!("late_undo"),
            &json!("NEW-1"),
            &json!("receive"),
            &json!("G-1")
        )
    );
    assert_eq!(waiting["actions"], json!(["dismiss", "correct"]));
    assert_eq!(grn(&site, &hh, "G-1").await["lines"][0]["received"], 1);

    let hops = settled(&site, &admin, &id, "correct").await;
    let (kind, device, compensates) = hop(&site, hops[0]);
    assert_eq!((kind.as_str(), device.as_str()), ("UNDO", "site"));
    let original: i64 = site.count(&format!(
        "SELECT hop_id FROM hops WHERE key = '{}'",
        items[1]["key"].as_str().unwrap()
    ));
    assert_eq!(compensates, Some(original));
    assert_eq!(grn(&site, &hh, "G-1").await["lines"][0]["received"], 0);
    let after = unit(&site, &hh, "NEW-1").await;
    assert!(after["version"].as_i64() > before["version"].as_i64());

    // A late undo of a put-away, left as it is.
    let mut putting = site.handheld("HH-2").await;
    let items = [
        open(&mut putting, "put_away", json!({})),
        putting.item_at(
            "scan",
            json!({"mode": "put_away", "epc": "U-5", "bin": "A-2"}),
            scanned_at,
        ),
    ];
    site.sync_applied(&putting, &items).await;
    let undo = putting.item_at(
        "undo",
        json!({"target_key": items[1]["key"]}),
        scanned_at.plus(Millis(121_000)),
    );
    let result = &site.sync_ok(&putting, std::slice::from_ref(&undo)).await[0];
    assert_eq!(result["reason"], "undo_window_expired");
    let id = format!("item:HH-2:{}", undo["key"].as_str().unwrap());
    assert!(settled(&site, &admin, &id, "dismiss").await.is_empty());
    assert_eq!(unit(&site, &putting, "U-5").await["bin"], "A-2");
}

#[tokio::test]
async fn a_late_undo_of_a_put_away_is_reversed_by_correct_unless_the_unit_moved_since() {
    let (site, admin) = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let scanned_at = UnixMs(now().0 - 10 * 60_000);
    let items = [
        open(&mut hh, "put_away", json!({})),
        hh.item_at(
            "scan",
            json!({"mode": "put_away", "epc": "U-1", "bin": "A-2"}),
            scanned_at,
        ),
        hh.item_at(
            "scan",
            json!({"mode": "put_away", "epc": "U-2", "bin": "A-2"}),
            scanned_at,
        ),
    ];
    site.sync_applied(&hh, &items).await;
    let late = scanned_at.plus(Millis(121_000));
    let undos = [
        hh.item_at("undo", json!({"target_key": items[1]["key"]}), late),
        hh.item_at("undo", json!({"target_key": items[2]["key"]}), late),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-2", "bin": "B-1"}),
        ),
    ];
    site.sync_ok(&hh, &undos).await;
    let first = format!("item:HH-1:{}", undos[0]["key"].as_str().unwrap());
    let hops = settled(&site, &admin, &first, "correct").await;
    assert_eq!(hop(&site, hops[0]).0, "UNDO");
    assert_eq!(unit(&site, &hh, "U-1").await["bin"], "A-1");

    let moved = format!("item:HH-1:{}", undos[1]["key"].as_str().unwrap());
    let (code, body) = settle(&site, &admin, &moved, "correct", "").await;
    assert_eq!(
        (code, body["code"].as_str()),
        (409, Some("NOT_CORRECTABLE"))
    );
    assert!(
        decision(&site, &admin, &moved).await.is_some(),
        "still open"
    );
    assert_eq!(unit(&site, &hh, "U-2").await["bin"], "B-1");
}

#[tokio::test]
async fn a_handheld_acknowledgement_settles_the_decision_it_answers() {
    let (site, admin) = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "put_away", json!({})),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-1", "bin": "A-2", "unit_version": 7}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-2", "bin": "A-2", "unit_version": 7}),
        ),
        hh.item("close_session", json!({})),
    ];
    site.sync_ok(&hh, &items).await;
    let first = format!("item:HH-1:{}", items[1]["key"].as_str().unwrap());
    let second = format!("item:HH-1:{}", items[2]["key"].as_str().unwrap());
    assert!(decision(&site, &admin, &first).await.is_some());

    // Acknowledged on the handheld after its session closed; the second
    // re-scanned.
    let rescan = ledger_common::key();
    let acks = [
        hh.item("acknowledge", json!({"target_key": items[1]["key"]})),
        hh.item(
            "acknowledge",
            json!({"target_key": items[2]["key"], "rescan_key": rescan}),
        ),
        hh.item("acknowledge", json!({"target_key": ledger_common::key()})),
    ];
    let results = site.sync_ok(&hh, &acks).await;
    assert_eq!(results[0]["outcome"], "applied", "{results:?}");
    assert_eq!(results[1]["outcome"], "applied", "{results:?}");
    assert_eq!(results[2]["reason"], "unknown_target", "{results:?}");
    assert!(decision(&site, &admin, &first).await.is_none());
    assert!(decision(&site, &admin, &second).await.is_none());
    let logged = log(&site, &admin).await;
    let entry = |id: &str| {
        logged
            .iter()
            .find(|e| e["decision_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(
        (&entry(&first)["action"], &entry(&first)["settled_by"]),
        (&json!("acknowledge"), &json!("device:HH-1"))
    );
    assert_eq!(entry(&second)["action"], "rescan");
    assert!(entry(&second)["note"].as_str().unwrap().contains(&rescan));
    let (code, body) = settle(&site, &admin, &first, "dismiss", "").await;
    assert_eq!(
        (code, body["code"].as_str()),
        (409, Some("ALREADY_SETTLED"))
    );

    // Replayed, the acknowledgement answers as stored and logs nothing new.
    let again = site.sync_ok(&hh, &acks[..1]).await;
    assert_eq!(again[0]["replayed"], true);
    assert_eq!(log(&site, &admin).await.len(), logged.len());

    // Settled by a person first, the handheld's acknowledgement still applies.
    let mut other = site.handheld("HH-2").await;
    let items = [
        open(&mut other, "put_away", json!({})),
        other.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-3", "bin": "A-2", "unit_version": 7}),
        ),
    ];
    site.sync_ok(&other, &items).await;
    let id = format!("item:HH-2:{}", items[1]["key"].as_str().unwrap());
    settled(&site, &admin, &id, "dismiss").await;
    let ack = other.item("acknowledge", json!({"target_key": items[1]["key"]}));
    assert_eq!(site.sync_ok(&other, &[ack]).await[0]["outcome"], "applied");
    let logged = log(&site, &admin).await;
    let entry = logged.iter().find(|e| e["decision_id"] == id).unwrap();
    assert_eq!(entry["settled_by"], "supervisor");
}

#[tokio::test]
async fn settlements_are_checked_before_anything_is_read() {
    let (site, admin) = warehouse().await;
    let (code, body) = settle(&site, &admin, "count:NOPE", "dismiss", "").await;
    assert_eq!((code, body["code"].as_str()), (404, Some("NOT_FOUND")));
    let (code, _) = settle(&site, &admin, "nonsense", "dismiss", "").await;
    assert_eq!(code, 404);
    let (code, _) = settle(&site, &admin, "count:NOPE", "approve", "").await;
    assert_eq!(code, 400);
    let long = "x".repeat(501);
    let (code, _) = settle(&site, &admin, "count:NOPE", "dismiss", &long).await;
    assert_eq!(code, 400);
    let hh = site.handheld("HH-1").await;
    let (code, _) = site.get("/v1/site/decisions", &hh.token).await;
    assert_eq!(code, 403, "a device's token opens no decision");
    let (code, _) = settle(&site, &hh.token, "count:NOPE", "dismiss", "").await;
    assert_eq!(code, 403);
}

/// The workbench offers an action only where it can be carried out now: a
/// put-away refused because its unit is dispatched cannot be confirmed
/// (the ledger would refuse to put a dispatched unit in stock), so only
/// dismiss is offered, and dismissing it succeeds; a refused put-away of a
/// unit in stock can be confirmed, and confirming it succeeds.
#[tokio::test]
async fn every_action_the_workbench_offers_succeeds() {
    let (site, admin) = warehouse().await;
    site.import(
        "units",
        "epc,code,sku,state,bin\nGONE-1,,SKU-1,dispatched,\n",
    );
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "put_away", json!({})),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "GONE-1", "bin": "A-2"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-1", "bin": "A-2", "unit_version": 7}),
        ),
    ];
    let results = site.sync_ok(&hh, &items).await;
    assert_eq!(results[1]["reason"], "unit_state", "{results:?}");
    assert_eq!(results[2]["reason"], "stale_state", "{results:?}");
    for waiting in decisions(&site, &admin).await {
        let id = waiting["id"].as_str().unwrap().to_owned();
        let offered: Vec<String> = waiting["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect();
        if waiting["epc"] == "GONE-1" {
            assert_eq!(offered, ["dismiss"], "a dispatched unit: {waiting}");
        }
        if waiting["epc"] == "U-1" {
            assert!(offered.contains(&"correct".to_owned()), "{waiting}");
        }
        // The first action offered (correct where there is one) succeeds.
        let action = if offered.contains(&"correct".to_owned()) {
            "correct"
        } else {
            "dismiss"
        };
        settled(&site, &admin, &id, action).await;
    }
    assert!(decisions(&site, &admin).await.is_empty());
}
