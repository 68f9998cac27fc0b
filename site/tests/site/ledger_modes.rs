//! The five modes' rules over real HTTP on loopback against a real SQLite
//! file: each mode's `open_session` preconditions, each scan's checks and
//! effects, what closing a session computes, count approval, profile
//! gating and the read-only mode. Every rejection is a stored answer that
//! replays as it was.

use crate::ledger_common;

use ledger_common::{now, Handheld, Site};
use serde_json::{json, Value};
use stockhop_site::ledger::devices::Profile;
use stockhop_site::ledger::modes::{cycle_count, receive};

/// A small warehouse: zone Z-A (bins) and zone Z-B (bin B-1) of
/// location L-1; units U-1…U-3 in stock in A-1, U-4 in stock in B-1, U-5
/// new (announced, SKU-2, no bin), U-6 dispatched; GRN G-1 (accepted:
/// SKU-1 ×2, SKU-2 ×1), G-HELD and G-REJECTED; manifest M-1 (packing:
/// U-1, U-2), M-DRAFT (draft: U-3) and M-DONE (verified: U-4).
async fn warehouse() -> Site {
    let site = Site::start().await;
    site.import(
        "bins",
        "bin,zone,location\nA-1,Z-A,L-1\nA-2,Z-A,L-1\nB-1,Z-B,L-1\n",
    );
    site.import(
        "units",
        "epc,code,sku,state,bin\n\
         U-1,,SKU-1,in_stock,A-1\nU-2,,SKU-1,in_stock,A-1\nU-3,,SKU-1,in_stock,A-1\n\
         U-4,,SKU-1,in_stock,B-1\nU-5,,SKU-2,new,\nU-6,,SKU-1,dispatched,\n",
    );
    site.import(
        "grns",
        "grn,qc,sku,expected\nG-1,accepted,SKU-1,2\nG-1,accepted,SKU-2,1\n\
         G-HELD,held,SKU-1,1\nG-REJECTED,rejected,SKU-1,1\n",
    );
    site.import(
        "manifests",
        "manifest,state,epc\nM-1,packing,U-1\nM-1,packing,U-2\nM-DRAFT,draft,U-3\nM-DONE,verified,U-4\n",
    );
    site
}

fn open(hh: &mut Handheld, mode: &str, context: Value) -> Value {
    let operator = format!("op-{}", hh.device_id);
    hh.item(
        "open_session",
        json!({"operator_id": operator, "mode": mode, "context": context}),
    )
}

fn assert_applied(result: &Value) {
    assert_eq!(result["status"], 200, "{result}");
    assert_eq!(result["outcome"], "applied", "{result}");
}

fn assert_rejected(result: &Value, reason: &str) {
    assert_eq!(result["status"], 200, "{result}");
    assert_eq!(result["outcome"], "rejected", "{result}");
    assert_eq!(result["reason"], reason, "{result}");
    assert_eq!(result["hop_ids"], json!([]), "{result}");
}

async fn get_ok(site: &Site, hh: &Handheld, path: &str) -> Value {
    let (status, body) = site.get(path, &hh.token).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// Sends `items` once, then again: every answer replays as it was stored.
async fn sync_and_replay(site: &Site, hh: &Handheld, items: &[Value]) -> Vec<Value> {
    let first = site.sync_ok(hh, items).await;
    let again = site.sync_ok(hh, items).await;
    for (a, b) in first.iter().zip(&again) {
        assert_eq!(b["replayed"], true, "{b}");
        assert_eq!(
            (&a["outcome"], &a["reason"], &a["hop_ids"]),
            (&b["outcome"], &b["reason"], &b["hop_ids"])
        );
    }
    first
}

#[tokio::test]
async fn put_away_finds_a_unit_by_its_barcode_unless_the_scan_names_another_epc() {
    let site = warehouse().await;
    site.import("units", "epc,code,sku,state,bin\nT-9,BC-9,SKU-1,new,\n");
    let mut hh = site.handheld("HH-1").await;
    let opened = open(&mut hh, "put_away", json!({}));
    let items = [
        opened,
        // A barcode alone: the unit that carries it.
        hh.item(
            "scan",
            json!({"mode": "put_away", "code": "BC-9", "bin": "A-2"}),
        ),
        // Its EPC and its barcode: the same unit, found by the EPC.
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "T-9", "code": "BC-9", "bin": "A-1"}),
        ),
        // Another EPC with that barcode: not the unit that carries T-9.
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "T-OTHER", "code": "BC-9", "bin": "A-1"}),
        ),
        // An unknown bin is refused before the unit is looked at.
        hh.item(
            "scan",
            json!({"mode": "put_away", "code": "BC-9", "bin": "NOWHERE"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "T-NONE", "bin": "NOWHERE"}),
        ),
    ];
    let results = sync_and_replay(&site, &hh, &items).await;
    assert_applied(&results[0]);
    assert_applied(&results[1]);
    assert_applied(&results[2]);
    assert_rejected(&results[3], "unknown_unit");
    assert_rejected(&results[4], "unknown_bin");
    assert_rejected(&results[5], "unknown_bin");
    let unit = get_ok(&site, &hh, "/v1/units/T-9").await;
    assert_eq!(unit["bin"], "A-1", "{unit}");
}

#[tokio::test]
async fn put_away_moves_a_new_or_stocked_unit_into_a_known_bin_and_rejects_the_rest() {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let opened = open(&mut hh, "put_away", json!({}));
    let items = [
        opened,
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-5", "bin": "A-2", "unit_version": 1}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-1", "bin": "A-2"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-2", "bin": "A-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-3", "bin": "NOWHERE"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-404", "bin": "A-2"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-6", "bin": "A-2"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-5", "bin": "B-1", "unit_version": 1}),
        ),
    ];
    let results = sync_and_replay(&site, &hh, &items).await;
    assert_applied(&results[0]);
    assert_applied(&results[1]);
    assert_applied(&results[2]);
    assert_applied(&results[3]);
    assert_rejected(&results[4], "unknown_bin");
    assert_rejected(&results[5], "unknown_unit");
    assert_rejected(&results[6], "unit_state");
    assert_rejected(&results[7], "stale_state");

    let u5 = get_ok(&site, &hh, "/v1/units/U-5").await;
    assert_eq!(
        u5,
        json!({"epc": "U-5", "code": null, "sku": "SKU-2", "state": "in_stock", "bin": "A-2", "version": 2})
    );
    // Already in stock in A-1: observed there, version kept.
    assert_eq!(get_ok(&site, &hh, "/v1/units/U-2").await["version"], 1);
    let hops = get_ok(&site, &hh, &format!("/v1/sessions/{}/hops", hh.session)).await;
    let hops = hops["hops"].as_array().unwrap();
    assert_eq!(hops.len(), 3, "one ZONE_CHANGE hop per applied scan");
    assert!(hops.iter().all(|hop| hop["kind"] == "ZONE_CHANGE"));
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE from_bin IS NULL AND to_bin = 'A-2'"),
        1
    );

    // A put-away scan without its bin label is never taken as sent.
    let no_bin = hh.item("scan", json!({"mode": "put_away", "epc": "U-3"}));
    let result = &site.sync_ok(&hh, &[no_bin]).await[0];
    assert_eq!(
        (result["status"].as_u64(), result["code"].as_str()),
        (Some(422), Some("INVALID_ITEM"))
    );
}

#[tokio::test]
async fn receive_opens_only_on_an_accepted_grn() {
    let site = warehouse().await;
    for (i, grn) in [
        json!("G-404"),
        json!("G-HELD"),
        json!("G-REJECTED"),
        json!(null),
    ]
    .into_iter()
    .enumerate()
    {
        let mut hh = site.handheld(&format!("HH-{i}")).await;
        let context = if grn.is_null() {
            json!({})
        } else {
            json!({"grn": grn})
        };
        let opened = open(&mut hh, "receive", context);
        let scan = hh.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-1", "sku": "SKU-1"}),
        );
        let results = sync_and_replay(&site, &hh, &[opened, scan]).await;
        assert_rejected(&results[0], "grn_not_accepted");
        assert_rejected(&results[1], "session_not_open");
    }
    assert_eq!(
        site.count("SELECT count(*) FROM sessions WHERE state = 'open'"),
        0
    );
}

#[tokio::test]
async fn receive_creates_or_claims_units_counts_them_on_their_line_and_encodes_on_request() {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "receive", json!({"grn": "G-1"})),
        hh.item("scan", json!({"mode": "receive", "grn": "G-1", "epc": "NEW-1", "sku": "SKU-1", "encode": true})),
        hh.item("scan", json!({"mode": "receive", "grn": "G-1", "epc": "U-5", "unit_version": 1, "encode": false})),
        hh.item("scan", json!({"mode": "receive", "grn": "G-1", "epc": "NEW-1", "sku": "SKU-1"})),
        hh.item("scan", json!({"mode": "receive", "grn": "G-1", "epc": "U-1"})),
        hh.item("scan", json!({"mode": "receive", "grn": "G-1", "epc": "NEW-2"})),
        hh.item("scan", json!({"mode": "receive", "grn": "G-1", "epc": "NEW-3", "sku": "SKU-9"})),
        hh.item("scan", json!({"mode": "receive", "grn": "G-1", "epc": "NEW-4", "sku": "SKU-1"})),
        hh.item("scan", json!({"mode": "receive", "grn": "G-1", "epc": "NEW-5", "sku": "SKU-1"})),
    ];
    let results = sync_and_replay(&site, &hh, &items).await;
    assert_applied(&results[0]);
    assert_applied(&results[1]);
    assert_eq!(
        results[1]["hop_ids"].as_array().unwrap().len(),
        2,
        "RECEIVE and ENCODE"
    );
    assert_applied(&results[2]);
    assert_eq!(results[2]["hop_ids"].as_array().unwrap().len(), 1);
    assert_rejected(&results[3], "already_received");
    assert_rejected(&results[4], "already_received");
    assert_rejected(&results[5], "unknown_unit");
    assert_rejected(&results[6], "not_on_grn");
    assert_applied(&results[7]);
    assert_rejected(&results[8], "excess_line");

    assert_eq!(
        get_ok(&site, &hh, "/v1/units/NEW-1").await,
        json!({"epc": "NEW-1", "code": null, "sku": "SKU-1", "state": "new", "bin": null, "version": 1})
    );
    assert_eq!(site.get("/v1/units/NEW-3", &hh.token).await.0, 404);
    let grn = get_ok(&site, &hh, "/v1/grns/G-1").await;
    assert_eq!(
        grn,
        json!({"grn": "G-1", "qc": "accepted", "state": "open", "lines": [
            {"sku": "SKU-1", "expected": 2, "received": 2},
            {"sku": "SKU-2", "expected": 1, "received": 1}]})
    );
    let kinds: Vec<String> = get_ok(&site, &hh, &format!("/v1/sessions/{}/hops", hh.session)).await
        ["hops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hop| hop["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["RECEIVE", "ENCODE", "RECEIVE", "RECEIVE"]);

    // Every line received what it expected: closing completes the GRN.
    let close = hh.item("close_session", json!({}));
    assert_applied(&site.sync_ok(&hh, &[close]).await[0]);
    assert_eq!(
        get_ok(&site, &hh, "/v1/grns/G-1").await["state"],
        "complete"
    );
}

#[tokio::test]
async fn receive_stale_state_comes_from_the_version_the_device_read() {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "receive", json!({"grn": "G-1"})),
        hh.item(
            "scan",
            json!({"mode": "receive", "epc": "U-5", "unit_version": 7}),
        ),
    ];
    let results = sync_and_replay(&site, &hh, &items).await;
    assert_rejected(&results[1], "stale_state");
    assert_eq!(
        get_ok(&site, &hh, "/v1/grns/G-1").await["lines"][1]["received"],
        0
    );
}

#[tokio::test]
async fn closing_a_receive_session_with_a_short_or_over_line_needs_resolution_until_a_supervisor_resolves(
) {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "receive", json!({"grn": "G-1"})),
        hh.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-1", "sku": "SKU-1"}),
        ),
        hh.item("close_session", json!({})),
    ];
    site.sync_applied(&hh, &items).await;
    assert_eq!(
        get_ok(&site, &hh, "/v1/grns/G-1").await["state"],
        "needs_resolution",
        "SKU-1 short by one, SKU-2 short by one"
    );
    let booked = site
        .db
        .call_blocking(|conn| receive::resolve(conn, "G-1", "", now()))
        .unwrap();
    assert_eq!(booked.len(), 2, "one ADJUST hop a short line");
    assert_eq!(
        get_ok(&site, &hh, "/v1/grns/G-1").await["state"],
        "complete"
    );
    // Each hop says which SKU and how many, received − expected, in the
    // hop feed the CSV and the central read.
    let feed = site
        .db
        .call_blocking(|conn| stockhop_site::ledger::hop_feed::page(conn, 0, 1_000))
        .unwrap();
    let mut adjusts: Vec<(Option<String>, Option<i64>, Option<String>)> = feed
        .hops
        .iter()
        .filter(|hop| booked.contains(&hop.hop_id))
        .map(|hop| {
            assert_eq!(hop.kind, "ADJUST");
            (hop.sku.clone(), hop.quantity, hop.grn.clone())
        })
        .collect();
    adjusts.sort();
    let g1 = Some("G-1".to_owned());
    assert_eq!(
        adjusts,
        [
            (Some("SKU-1".to_owned()), Some(-1), g1.clone()),
            (Some("SKU-2".to_owned()), Some(-1), g1),
        ]
    );
    let again = site
        .db
        .call_blocking(|conn| receive::resolve(conn, "G-1", "", now()));
    assert!(again.is_err(), "a complete GRN has nothing to resolve");

    // Over: the GRN is corrected down after the units were received.
    let mut hh = hh.clone();
    hh.new_session();
    let items = [
        open(&mut hh, "receive", json!({"grn": "G-1"})),
        hh.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-2", "sku": "SKU-1"}),
        ),
        hh.item("scan", json!({"mode": "receive", "epc": "U-5"})),
    ];
    site.sync_ok(&hh, &items).await;
    site.import("grns", "grn,qc,sku,expected\nG-1,accepted,SKU-1,1\n");
    let close = hh.item("close_session", json!({}));
    site.sync_ok(&hh, &[close]).await;
    let grn = get_ok(&site, &hh, "/v1/grns/G-1").await;
    assert_eq!(grn["state"], "needs_resolution", "{grn}");
    assert_eq!(
        grn["lines"][0],
        json!({"sku": "SKU-1", "expected": 1, "received": 2})
    );
}

#[tokio::test]
async fn dispatch_verify_opens_on_a_ready_manifest_and_verifies_each_tag_once() {
    let site = warehouse().await;
    for (i, manifest) in ["M-DRAFT", "M-DONE", "M-404"].into_iter().enumerate() {
        let mut hh = site.handheld(&format!("HH-NR-{i}")).await;
        let opened = open(&mut hh, "dispatch_verify", json!({"manifest": manifest}));
        assert_rejected(
            &sync_and_replay(&site, &hh, &[opened]).await[0],
            "manifest_not_ready",
        );
    }
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "dispatch_verify", json!({"manifest": "M-1"})),
        hh.item(
            "scan",
            json!({"mode": "dispatch_verify", "manifest": "M-1", "epc": "U-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "dispatch_verify", "manifest": "M-1", "epc": "U-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "dispatch_verify", "manifest": "M-1", "epc": "U-3"}),
        ),
    ];
    let results = sync_and_replay(&site, &hh, &items).await;
    assert_applied(&results[1]);
    assert_eq!(results[1]["hop_ids"].as_array().unwrap().len(), 1);
    assert_applied(&results[2]);
    assert_eq!(
        results[2]["hop_ids"],
        json!([]),
        "a second verify adds no hop"
    );
    assert_rejected(&results[3], "not_on_manifest");
    let manifest = get_ok(&site, &hh, "/v1/manifests/M-1").await;
    assert_eq!(
        manifest,
        json!({"manifest": "M-1", "state": "packing", "units": [
            {"epc": "U-1", "verified": true}, {"epc": "U-2", "verified": false}]})
    );
    let u1 = get_ok(&site, &hh, "/v1/units/U-1").await;
    assert_eq!(
        (&u1["state"], &u1["bin"], &u1["version"]),
        (&json!("dispatched"), &json!(null), &json!(2))
    );

    let last = hh.item("scan", json!({"mode": "dispatch_verify", "epc": "U-2"}));
    assert_applied(&site.sync_ok(&hh, &[last]).await[0]);
    assert_eq!(
        get_ok(&site, &hh, "/v1/manifests/M-1").await["state"],
        "verified"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'DISPATCH'"),
        2
    );
    assert_eq!(site.get("/v1/manifests/M-404", &hh.token).await.0, 404);
}

#[tokio::test]
async fn a_cycle_count_records_every_tag_changes_no_unit_and_approval_posts_the_variance_as_adjust_hops(
) {
    let site = warehouse().await;
    let count_id = site
        .db
        .call_blocking(|conn| cycle_count::open(conn, "L-1", "Z-A", ledger_common::now()))
        .unwrap();
    let mut hh = site.handheld("HH-1").await;
    let before = site.count("SELECT CAST(sum(version) AS BIGINT) FROM units");
    let items = [
        open(&mut hh, "cycle_count", json!({"count_id": count_id})),
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": count_id, "epc": "U-1", "bin": "A-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": count_id, "epc": "U-2", "bin": "A-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": count_id, "epc": "U-4", "bin": "A-2"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": count_id, "epc": "STRAY-1", "bin": "A-2"}),
        ),
    ];
    let results = sync_and_replay(&site, &hh, &items).await;
    for result in &results[1..] {
        assert_applied(result);
        assert_eq!(result["hop_ids"].as_array().unwrap().len(), 1);
    }
    assert_eq!(
        site.count("SELECT CAST(sum(version) AS BIGINT) FROM units"),
        before,
        "a count scan changes no unit"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'CYCLE_COUNT'"),
        4
    );

    let open_count = ledger_common::count_figures(&site, &hh.token, &count_id).await;
    assert_eq!(open_count["state"], "open");
    let close = hh.item("close_session", json!({}));
    assert_applied(&site.sync_ok(&hh, &[close]).await[0]);
    let closed = ledger_common::count_figures(&site, &hh.token, &count_id).await;
    assert_eq!(
        closed,
        json!({"count_id": count_id, "location": "L-1", "zone": "Z-A", "bin": null,
               "state": "closed", "expected": 3, "seen": 4, "missing": ["U-3"],
               "unexpected": ["STRAY-1", "U-4"]})
    );
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ADJUST'"),
        0,
        "nothing posts before approval"
    );

    // A count that is no longer open takes no session.
    let mut late = site.handheld("HH-2").await;
    let reopened = open(&mut late, "cycle_count", json!({"count_id": count_id}));
    assert_rejected(
        &sync_and_replay(&site, &late, &[reopened]).await[0],
        "count_not_open",
    );

    let approval = site
        .db
        .call_blocking(|conn| cycle_count::approve(conn, &count_id, ledger_common::now()))
        .unwrap();
    assert_eq!(approval.hop_ids.len(), 3);
    assert!(approval.moved_since.is_empty());
    let u3 = get_ok(&site, &hh, "/v1/units/U-3").await;
    assert_eq!(
        (&u3["state"], &u3["version"]),
        (&json!("missing"), &json!(2))
    );
    let u4 = get_ok(&site, &hh, "/v1/units/U-4").await;
    assert_eq!(
        (&u4["state"], &u4["bin"], &u4["version"]),
        (&json!("in_stock"), &json!("A-2"), &json!(2))
    );
    let stray = get_ok(&site, &hh, "/v1/units/STRAY-1").await;
    assert_eq!(
        (&stray["state"], &stray["bin"]),
        (&json!("in_stock"), &json!("A-2"))
    );
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ADJUST' AND source_mode = 'live'"),
        3
    );
    assert_eq!(
        ledger_common::count_figures(&site, &hh.token, &count_id).await["state"],
        "approved"
    );
    let twice = site
        .db
        .call_blocking(|conn| cycle_count::approve(conn, &count_id, ledger_common::now()));
    assert!(twice.is_err(), "a count is approved once");
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ADJUST'"),
        3
    );
}

#[tokio::test]
async fn a_count_session_needs_an_open_count_and_approval_skips_units_that_moved_since_it_opened() {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let unknown = open(&mut hh, "cycle_count", json!({"count_id": "C-404"}));
    assert_rejected(
        &sync_and_replay(&site, &hh, &[unknown]).await[0],
        "count_not_open",
    );

    let count_id = site
        .db
        .call_blocking(|conn| cycle_count::open(conn, "L-1", "Z-B", ledger_common::now()))
        .unwrap();
    let mut counter = site.handheld("HH-2").await;
    let mut mover = site.handheld("HH-3").await;
    let items = [
        open(&mut counter, "cycle_count", json!({"count_id": count_id})),
        counter.item("close_session", json!({})),
    ];
    site.sync_ok(&counter, &items).await;
    // U-4 was expected in Z-B; it is put away elsewhere before approval.
    let items = [
        open(&mut mover, "put_away", json!({})),
        mover.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-4", "bin": "A-1"}),
        ),
    ];
    site.sync_ok(&mover, &items).await;
    let approval = site
        .db
        .call_blocking(|conn| cycle_count::approve(conn, &count_id, ledger_common::now()))
        .unwrap();
    assert_eq!(approval.moved_since, ["U-4"]);
    assert!(approval.hop_ids.is_empty());
    assert_eq!(
        get_ok(&site, &hh, "/v1/units/U-4").await["state"],
        "in_stock"
    );
}

#[tokio::test]
async fn only_handheld_and_sled_profiles_open_modes_and_only_writers_encode() {
    let site = warehouse().await;
    for (device, profile) in [("GATE-1", Profile::Fxr90), ("PRN-1", Profile::Zt411r)] {
        let token = site.add_device_as(device, profile, true);
        let mut hh = Handheld::new(device, token);
        let opened = open(&mut hh, "put_away", json!({}));
        let encode = hh.item(
            "scan",
            json!({"mode": "receive", "grn": "G-1", "epc": "NEW-1", "sku": "SKU-1", "encode": true}),
        );
        let results = sync_and_replay(&site, &hh, &[opened, encode]).await;
        assert_rejected(&results[0], "mode_not_allowed");
        assert_rejected(&results[1], "mode_not_allowed");
    }
    let token = site.add_device_as("SLED-1", Profile::Rfd40, true);
    let mut sled = Handheld::new("SLED-1", token);
    let items = [
        open(&mut sled, "receive", json!({"grn": "G-1"})),
        sled.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-1", "sku": "SKU-1", "encode": true}),
        ),
    ];
    let results = site.sync_ok(&sled, &items).await;
    assert_applied(&results[0]);
    assert_applied(&results[1]);
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ENCODE'"),
        1
    );
}

#[tokio::test]
async fn a_find_unit_item_is_read_only_in_whatever_session_and_leaves_no_hop() {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let opened = open(&mut hh, "find_unit", json!({}));
    let find = hh.item("scan", json!({"mode": "find_unit", "epc": "U-1"}));
    let results = sync_and_replay(&site, &hh, &[opened, find]).await;
    assert_rejected(&results[0], "read_only_mode");
    assert_rejected(&results[1], "read_only_mode");

    let mut other = site.handheld("HH-2").await;
    let items = [
        open(&mut other, "put_away", json!({})),
        other.item("scan", json!({"mode": "find_unit", "epc": "U-1"})),
    ];
    let results = sync_and_replay(&site, &other, &items).await;
    assert_applied(&results[0]);
    assert_rejected(&results[1], "read_only_mode");
    assert_eq!(site.count("SELECT count(*) FROM hops"), 0);
}

#[tokio::test]
async fn a_scan_names_its_sessions_mode_and_context() {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let opened = open(&mut hh, "receive", json!({"grn": "G-1"}));
    site.sync_ok(&hh, &[opened]).await;
    for body in [
        json!({"mode": "put_away", "epc": "U-5", "bin": "A-1"}),
        json!({"mode": "receive", "grn": "G-HELD", "epc": "NEW-1", "sku": "SKU-1"}),
    ] {
        let scan = hh.item("scan", body);
        let result = &site.sync_ok(&hh, &[scan]).await[0];
        assert_eq!(
            (result["status"].as_u64(), result["code"].as_str()),
            (Some(422), Some("INVALID_ITEM")),
            "{result}"
        );
        hh.seq -= 1;
    }
}

#[tokio::test]
async fn an_undo_of_a_put_away_puts_the_unit_back_where_it_was() {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "put_away", json!({})),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-5", "bin": "A-2"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-1", "bin": "A-2"}),
        ),
    ];
    let results = site.sync_ok(&hh, &items).await;
    let undos = [
        hh.item("undo", json!({"target_key": items[1]["key"]})),
        hh.item("undo", json!({"target_key": items[2]["key"]})),
    ];
    let undone = sync_and_replay(&site, &hh, &undos).await;
    assert_applied(&undone[0]);
    assert_applied(&undone[1]);
    let u5 = get_ok(&site, &hh, "/v1/units/U-5").await;
    assert_eq!(
        (&u5["state"], &u5["bin"], &u5["version"]),
        (&json!("new"), &json!(null), &json!(3)),
        "{results:?}"
    );
    let u1 = get_ok(&site, &hh, "/v1/units/U-1").await;
    assert_eq!(
        (&u1["state"], &u1["bin"], &u1["version"]),
        (&json!("in_stock"), &json!("A-1"), &json!(3))
    );
    assert_eq!(
        site.count(&format!(
            "SELECT compensates FROM hops WHERE hop_id = {}",
            undone[1]["hop_ids"][0]
        )),
        results[2]["hop_ids"][0].as_i64().unwrap()
    );
}

#[tokio::test]
async fn an_undo_of_a_receive_takes_the_unit_off_its_grn_line() {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "receive", json!({"grn": "G-1"})),
        hh.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-1", "sku": "SKU-1", "encode": true}),
        ),
        hh.item(
            "scan",
            json!({"mode": "receive", "epc": "U-5", "unit_version": 1}),
        ),
    ];
    let results = site.sync_ok(&hh, &items).await;
    assert_applied(&results[1]);
    assert_applied(&results[2]);
    let undo = hh.item("undo", json!({"target_key": items[1]["key"]}));
    let undone = sync_and_replay(&site, &hh, &[undo]).await;
    assert_applied(&undone[0]);
    let undo_hop = &undone[0]["hop_ids"][0];
    assert_eq!(
        site.count(&format!(
            "SELECT compensates FROM hops WHERE hop_id = {undo_hop}"
        )),
        results[1]["hop_ids"][0].as_i64().unwrap(),
        "the RECEIVE hop is compensated; the tag written stays written"
    );
    let grn = get_ok(&site, &hh, "/v1/grns/G-1").await;
    assert_eq!(
        grn["lines"],
        json!([{"sku": "SKU-1", "expected": 2, "received": 0},
               {"sku": "SKU-2", "expected": 1, "received": 1}])
    );
    // Off the line, the unit may be received again.
    let again = [
        hh.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-1", "sku": "SKU-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-2", "sku": "SKU-1"}),
        ),
        hh.item("close_session", json!({})),
    ];
    for result in site.sync_ok(&hh, &again).await {
        assert_applied(&result);
    }
    assert_eq!(
        get_ok(&site, &hh, "/v1/grns/G-1").await["state"],
        "complete"
    );

    // A GRN its session closed complete needs resolution again once a unit
    // leaves its line.
    let undo_after_close = hh.item("undo", json!({"target_key": items[2]["key"]}));
    assert_applied(&site.sync_ok(&hh, &[undo_after_close]).await[0]);
    let grn = get_ok(&site, &hh, "/v1/grns/G-1").await;
    assert_eq!(grn["state"], "needs_resolution", "{grn}");
    assert_eq!(
        grn["lines"][1],
        json!({"sku": "SKU-2", "expected": 1, "received": 0})
    );

    // An undo undone already takes nothing more off the line.
    let twice = hh.item("undo", json!({"target_key": items[2]["key"]}));
    let result = &site.sync_ok(&hh, &[twice]).await[0];
    assert_eq!(
        (&result["status"], &result["code"]),
        (&json!(409), &json!("ALREADY_UNDONE")),
        "{result}"
    );
    assert_eq!(
        get_ok(&site, &hh, "/v1/grns/G-1").await["lines"][1]["received"],
        0
    );
}

#[tokio::test]
async fn an_undo_of_a_receive_after_the_unit_moved_is_stale_and_changes_nothing() {
    let site = warehouse().await;
    let mut receiving = site.handheld("HH-1").await;
    let items = [
        open(&mut receiving, "receive", json!({"grn": "G-1"})),
        receiving.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-1", "sku": "SKU-1"}),
        ),
    ];
    site.sync_ok(&receiving, &items).await;
    let mut putting = site.handheld("HH-2").await;
    let moved = [
        open(&mut putting, "put_away", json!({})),
        putting.item(
            "scan",
            json!({"mode": "put_away", "epc": "NEW-1", "bin": "A-1"}),
        ),
    ];
    site.sync_ok(&putting, &moved).await;
    let undo = receiving.item("undo", json!({"target_key": items[1]["key"]}));
    assert_rejected(
        &sync_and_replay(&site, &receiving, &[undo]).await[0],
        "stale_state",
    );
    let grn = get_ok(&site, &receiving, "/v1/grns/G-1").await;
    assert_eq!(grn["lines"][0]["received"], 1);
}

#[tokio::test]
async fn an_undo_of_a_verify_puts_the_unit_back_in_its_bin_and_the_line_unverified() {
    let site = warehouse().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "dispatch_verify", json!({"manifest": "M-1"})),
        hh.item(
            "scan",
            json!({"mode": "dispatch_verify", "manifest": "M-1", "epc": "U-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "dispatch_verify", "manifest": "M-1", "epc": "U-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "dispatch_verify", "manifest": "M-1", "epc": "U-2"}),
        ),
    ];
    let results = site.sync_ok(&hh, &items).await;
    assert_eq!(
        get_ok(&site, &hh, "/v1/manifests/M-1").await["state"],
        "verified"
    );
    let undos = [
        // The repeated verify changed nothing: there is nothing to undo.
        hh.item("undo", json!({"target_key": items[2]["key"]})),
        hh.item("undo", json!({"target_key": items[3]["key"]})),
    ];
    let undone = sync_and_replay(&site, &hh, &undos).await;
    assert_rejected(&undone[0], "target_not_undoable");
    assert_applied(&undone[1]);
    assert_eq!(
        site.count(&format!(
            "SELECT compensates FROM hops WHERE hop_id = {}",
            undone[1]["hop_ids"][0]
        )),
        results[3]["hop_ids"][0].as_i64().unwrap()
    );
    let manifest = get_ok(&site, &hh, "/v1/manifests/M-1").await;
    assert_eq!(
        manifest,
        json!({"manifest": "M-1", "state": "packing", "units": [
            {"epc": "U-1", "verified": true}, {"epc": "U-2", "verified": false}]}),
        "back to the state it was verified from"
    );
    let u2 = get_ok(&site, &hh, "/v1/units/U-2").await;
    assert_eq!(
        (&u2["state"], &u2["bin"], &u2["version"]),
        (&json!("in_stock"), &json!("A-1"), &json!(3))
    );
    // Verified again, it leaves again.
    let again = hh.item(
        "scan",
        json!({"mode": "dispatch_verify", "manifest": "M-1", "epc": "U-2", "unit_version": 3}),
    );
    assert_applied(&site.sync_ok(&hh, &[again]).await[0]);
    assert_eq!(
        get_ok(&site, &hh, "/v1/manifests/M-1").await["state"],
        "verified"
    );
}

#[tokio::test]
async fn an_undo_of_a_count_scan_uncounts_the_tag_while_the_count_is_open() {
    let site = warehouse().await;
    let count_id = site
        .db
        .call_blocking(|conn| cycle_count::open(conn, "L-1", "Z-A", ledger_common::now()))
        .unwrap();
    let mut hh = site.handheld("HH-1").await;
    let scan = |hh: &mut Handheld, epc: &str| {
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": count_id, "epc": epc, "bin": "A-1"}),
        )
    };
    let items = [
        open(&mut hh, "cycle_count", json!({"count_id": count_id})),
        scan(&mut hh, "U-1"),
        scan(&mut hh, "U-2"),
        scan(&mut hh, "U-2"),
        scan(&mut hh, "STRAY-1"),
    ];
    site.sync_ok(&hh, &items).await;
    let undos = [
        hh.item("undo", json!({"target_key": items[1]["key"]})),
        hh.item("undo", json!({"target_key": items[2]["key"]})),
        hh.item("undo", json!({"target_key": items[4]["key"]})),
    ];
    for result in sync_and_replay(&site, &hh, &undos).await {
        assert_applied(&result);
    }
    let figures = ledger_common::count_figures(&site, &hh.token, &count_id).await;
    assert_eq!(
        figures,
        json!({"count_id": count_id, "location": "L-1", "zone": "Z-A", "bin": null,
               "state": "open", "expected": 3, "seen": 1,
               "missing": ["U-1", "U-3"], "unexpected": []}),
        "U-2 was scanned twice and one scan undone: still counted"
    );

    let close = hh.item("close_session", json!({}));
    site.sync_ok(&hh, &[close]).await;
    let late = hh.item("undo", json!({"target_key": items[3]["key"]}));
    assert_rejected(
        &sync_and_replay(&site, &hh, &[late]).await[0],
        "count_not_open",
    );
    let closed = ledger_common::count_figures(&site, &hh.token, &count_id).await;
    assert_eq!(
        (&closed["state"], &closed["seen"]),
        (&json!("closed"), &json!(1)),
        "a closed count's variance stands"
    );
}

#[tokio::test]
async fn a_device_commissioned_mid_session_gets_the_modes_refusals_not_an_error() {
    let site = warehouse().await;
    let token = site.add_device("HH-TRAINEE", false);
    let mut hh = Handheld::new("HH-TRAINEE", token);
    let items = [
        open(&mut hh, "receive", json!({})),
        hh.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-1", "sku": "SKU-1"}),
        ),
    ];
    let results = site.sync_ok(&hh, &items).await;
    assert_eq!(
        results[0]["outcome"], "simulated",
        "a trainee opens without preconditions"
    );
    assert_eq!(results[1]["outcome"], "simulated");
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE epc = 'NEW-1'"),
        0
    );

    site.db
        .call_blocking(|conn| stockhop_site::ledger::devices::commission(conn, "HH-TRAINEE"))
        .unwrap();
    let scan = hh.item(
        "scan",
        json!({"mode": "receive", "epc": "NEW-1", "sku": "SKU-1"}),
    );
    assert_rejected(&site.sync_ok(&hh, &[scan]).await[0], "grn_not_accepted");
}

#[tokio::test]
async fn a_count_of_one_bin_closes_only_itself_and_counts_against_that_bin_alone() {
    let site = warehouse().await;
    site.import("units", "epc,code,sku,state,bin\nU-7,,SKU-1,in_stock,A-2\n");
    let open_bin = |bin: &'static str| {
        site.db.call_blocking(move |conn| {
            cycle_count::open_place(conn, "L-1", "Z-A", Some(bin), ledger_common::now())
        })
    };
    let a1 = open_bin("A-1").unwrap();
    let a2 = open_bin("A-2").unwrap();
    let mut hh = site.handheld("HH-1").await;
    let scan = |hh: &mut Handheld, epc: &str| {
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": a1, "epc": epc, "bin": "A-1"}),
        )
    };
    let items = [
        open(&mut hh, "cycle_count", json!({"count_id": a1})),
        scan(&mut hh, "U-1"),
        scan(&mut hh, "U-2"),
        scan(&mut hh, "U-3"),
        hh.item("close_session", json!({})),
    ];
    for result in site.sync_ok(&hh, &items).await {
        assert_applied(&result);
    }
    let closed = ledger_common::count_figures(&site, &hh.token, &a1).await;
    assert_eq!(
        closed,
        json!({"count_id": a1, "location": "L-1", "zone": "Z-A", "bin": "A-1",
               "state": "closed", "expected": 3, "seen": 3, "missing": [], "unexpected": []}),
        "U-7 in A-2 is not this count's business"
    );
    let other = ledger_common::count_figures(&site, &hh.token, &a2).await;
    assert_eq!(
        (&other["state"], &other["expected"], &other["missing"]),
        (&json!("open"), &json!(1), &json!(["U-7"])),
        "the zone's other bin is still being counted"
    );
    let approval = site
        .db
        .call_blocking(|conn| cycle_count::approve(conn, &a1, ledger_common::now()))
        .unwrap();
    assert!(approval.hop_ids.is_empty(), "nothing to adjust in A-1");
    assert_eq!(
        get_ok(&site, &hh, "/v1/units/U-7").await["state"],
        "in_stock"
    );
}

/// A client that sends an EPC in lower case (a bridge from another
/// scanner, a script) names the unit the handheld names in upper case.
#[tokio::test]
async fn a_scan_with_its_epc_in_lower_case_names_the_unit_held_in_upper_case() {
    let site = Site::start_stocked().await;
    site.import(
        "units",
        "epc,code,sku,state,bin\nE2801190200050AA00000005,,SKU-1,new,\n",
    );
    let mut hh = site.handheld("HH-LOWER").await;
    let items = [hh.open("op-1"), hh.scan("e2801190200050aa00000005", "B-2")];
    site.sync_applied(&hh, &items).await;
    assert_eq!(
        site.count(
            "SELECT count(*) FROM units
             WHERE epc = 'E2801190200050AA00000005' AND bin = 'B-2' AND version = 2"
        ),
        1
    );
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE lower(epc) = 'e2801190200050aa00000005'"),
        1,
        "no second unit in the other spelling"
    );
}
