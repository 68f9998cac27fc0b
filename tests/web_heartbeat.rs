//! The handheld's heartbeat from the queue runtime in a real headless
//! Chromium page: real IndexedDB for its figures; the network substituted,
//! as these tests are about when the runtime sends it and what it carries.
#![cfg(target_arch = "wasm32")]

#[path = "web_queue_support.rs"]
mod support;

use serde_json::json;
use stockhop::queue::heartbeat::HEARTBEAT_PERIOD_DEFAULT;
use stockhop::queue::{Capture, TransportOutcome};
use stockhop::time::Millis;
use stockhop::web::runtime::{Queue, APP_VERSION};
use stockhop::wire::{Command, Mode, OpenSessionBody};
use support::*;
use uuid::Uuid;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn open(queue: &Queue) -> Uuid {
    let body = OpenSessionBody {
        operator_id: "op-beat".into(),
        mode: Mode::PutAway,
        context: Default::default(),
    };
    queue.open_session(None, body).await.unwrap().session_id
}

fn scan(epc: &str) -> Capture {
    Capture {
        command: Command::Scan,
        body: json!({"mode": "put_away", "epc": epc, "bin": "B-12-03"}),
    }
}

/// Lets the runtime take the heartbeat's answer (it is awaited beside the
/// channel, after the drain has answered).
async fn settle() {
    gloo_timers::future::TimeoutFuture::new(50).await;
}

/// (queue_depth, oldest_queued_at is set) of every heartbeat sent.
fn beats(site: &FakeSite) -> Vec<(u64, bool)> {
    site.heartbeats
        .borrow()
        .iter()
        .map(|beat| (beat.queue_depth, beat.oldest_queued_at.is_some()))
        .collect()
}

#[wasm_bindgen_test]
async fn a_heartbeat_follows_each_drain_run_and_otherwise_waits_its_period() {
    let name = db_name("beat-period");
    let site = FakeSite::new();
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    let session = open(&queue).await;
    queue.capture(session, scan("E2800001")).await.unwrap();
    assert!(
        site.heartbeats.borrow().is_empty(),
        "nothing before a drain"
    );

    let report = queue.drain(true).await.unwrap();
    assert_eq!(report.requests, 1);
    settle().await;
    assert_eq!(beats(&site), [(0, false)], "the drained queue, once");
    let beat = site.heartbeats.borrow()[0].clone();
    assert_eq!(beat.app_version, APP_VERSION);
    assert_eq!(beat.sent_at, T0);

    // A wake with nothing sent and the period not up sends nothing.
    clock.set(T0.plus(Millis(HEARTBEAT_PERIOD_DEFAULT.0 - 1)));
    queue.drain(false).await.unwrap();
    settle().await;
    assert_eq!(site.heartbeats.borrow().len(), 1);

    // Once the period is up, a wake sends one.
    clock.set(T0.plus(HEARTBEAT_PERIOD_DEFAULT));
    queue.drain(false).await.unwrap();
    settle().await;
    assert_eq!(beats(&site), [(0, false), (0, false)]);
    assert_eq!(
        site.requests.borrow().len(),
        1,
        "the heartbeat is no sync request"
    );
}

#[wasm_bindgen_test]
async fn during_an_outage_heartbeats_carry_the_backlog_and_retry_on_the_drains_schedule() {
    let name = db_name("beat-outage");
    let site = FakeSite::new();
    let clock = TestClock::at(T0);
    let queue = manual_queue(&name, &site, &clock).await;
    site.answer_whole(TransportOutcome::Offline);
    let session = open(&queue).await;
    queue.capture(session, scan("E2800002")).await.unwrap();

    queue.drain(true).await.unwrap();
    settle().await;
    assert_eq!(beats(&site), [(2, true)], "the failed run's backlog");

    // Neither the drain nor the heartbeat is due before the 2 s step.
    clock.set(T0.plus(Millis(1_999)));
    queue.drain(false).await.unwrap();
    settle().await;
    assert_eq!(site.heartbeats.borrow().len(), 1);
    assert_eq!(site.requests.borrow().len(), 1);

    clock.set(T0.plus(Millis::from_secs(2)));
    queue.drain(false).await.unwrap();
    settle().await;
    assert_eq!(beats(&site), [(2, true), (2, true)]);

    // The site returns: the drain empties the queue and the heartbeat says so.
    site.answer_each(applied);
    clock.set(T0.plus(Millis::from_secs(6)));
    let report = queue.drain(false).await.unwrap();
    assert_eq!(report.pending, 0);
    settle().await;
    assert_eq!(beats(&site), [(2, true), (2, true), (0, false)]);
}
