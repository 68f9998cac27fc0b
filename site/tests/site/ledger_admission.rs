//! The admission gate in front of the ledger's writer, over loopback
//! against a real SQLite file: live requests go ahead of backlog ones, and
//! a backlog request is queued, not refused.

use crate::ledger_common::{now, Handheld, Site};
use serde_json::{json, Value};
use stockhop::time::UnixMs;
use stockhop_site::ledger::admission::{Class, WRITER_SLOTS};

/// Backlog handhelds queued behind the busy writer.
const BACKLOGS: usize = 3;
/// Scans each backlog carries: more than one chunk's worth.
const BACKLOG_SCANS: usize = 15;

fn open_at(hh: &mut Handheld, at: UnixMs) -> Value {
    hh.item_at(
        "open_session",
        json!({"operator_id": format!("op-{}", hh.device_id), "mode": "put_away", "context": {}}),
        at,
    )
}

#[tokio::test]
async fn a_live_request_is_served_ahead_of_backlog_requests_queued_before_it() {
    let site = std::sync::Arc::new(Site::start_stocked().await);
    let gate = site.ledger.admission.clone();
    let outage_began = UnixMs(now().0 - 40 * 60_000);
    let mut queued = Vec::new();
    // The writer is busy (this test holds its turns) while three handhelds
    // back from a 40-minute outage send their backlogs.
    let mut turns = Vec::new();
    for _ in 0..WRITER_SLOTS {
        turns.push(gate.admit(Class::Live).await.unwrap());
    }
    for b in 0..BACKLOGS {
        let mut hh = site.handheld(&format!("BACK-{b}")).await;
        let mut items = vec![open_at(&mut hh, outage_began)];
        for s in 0..BACKLOG_SCANS {
            let epc = format!("EPC-{}", b * BACKLOG_SCANS + s);
            let at = UnixMs(outage_began.0 + 5_000 * (s as i64 + 1));
            items.push(hh.item_at(
                "scan",
                json!({"mode": "put_away", "epc": epc, "bin": "B-1"}),
                at,
            ));
        }
        let site = std::sync::Arc::clone(&site);
        queued.push(tokio::spawn(async move { site.sync(&hh, &items).await }));
        while gate.waiting() != (0, b + 1) {
            tokio::task::yield_now().await;
        }
    }
    // Then an operator scans live.
    let mut live = site.handheld("LIVE-1").await;
    let items = vec![live.open("op-live"), live.scan("EPC-99", "B-2")];
    let live_site = std::sync::Arc::clone(&site);
    let live_sync = tokio::spawn(async move { live_site.sync(&live, &items).await });
    while gate.waiting() != (1, BACKLOGS) {
        tokio::task::yield_now().await;
    }
    // One turn frees: the live request, the last to come, takes it ahead
    // of every backlog. (Freeing every turn at once would let backlogs
    // run beside it in the other slots, racing it for hop ids.)
    turns.pop();
    let (status, body) = live_sync.await.unwrap();
    assert_eq!(status, 200, "{body}");
    drop(turns);
    for backlog in queued {
        let (status, body) = backlog.await.unwrap();
        assert_eq!(status, 200, "queued, not refused: {body}");
        let results = body["results"].as_array().unwrap();
        assert_eq!(results.len(), BACKLOG_SCANS + 1);
        assert!(results.iter().all(|r| r["outcome"] == "applied"), "{body}");
    }
    let live_hop = site.count("SELECT max(hop_id) FROM hops WHERE device_id = 'LIVE-1'");
    let first_backlog_hop =
        site.count("SELECT min(hop_id) FROM hops WHERE device_id LIKE 'BACK-%'");
    assert!(
        live_hop < first_backlog_hop,
        "the live scan (hop {live_hop}) applied before the backlog that came first (hop {first_backlog_hop})"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE device_id LIKE 'BACK-%'"),
        (BACKLOGS * BACKLOG_SCANS) as i64
    );
}

#[tokio::test]
async fn a_token_revoked_after_the_gate_knew_it_is_refused_in_its_turn() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    site.sync_applied(&hh, &[open]).await;
    site.db
        .call_blocking(|conn| stockhop_site::ledger::devices::revoke(conn, "HH-1", now()))
        .unwrap();
    let scan = hh.scan("EPC-1", "B-1");
    let (status, body) = site.sync(&hh, &[scan]).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("UNAUTHORIZED")),
        "{body}"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM receipts"),
        1,
        "the session's opening, from before the revocation, and nothing since"
    );
}
