//! The handheld's heartbeat from the queue runtime in a real headless
//! Chromium page: real IndexedDB for its figures; the network substituted,
//! as these tests are about when the runtime sends it and what it carries.
use crate::support::*;
use serde_json::json;
use stockhop::queue::heartbeat::HEARTBEAT_PERIOD_DEFAULT;
use stockhop::queue::{Capture, TransportOutcome};
use stockhop::time::{Millis, UnixMs};
use stockhop::web::runtime::{Queue, APP_VERSION};
use stockhop::wire::{Command, Mode, OpenSessionBody};
use uuid::Uuid;
use wasm_bindgen_test::*;

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

/// (sent_at, queue_depth, oldest_queued_at is set) of every heartbeat
/// sent. A heartbeat goes out after the drain has answered, so a test
/// waits for it ([`FakeSite::heartbeats_reach`]); that none went out at a
/// wake shows in the next one's `sent_at`.
fn beats(site: &FakeSite) -> Vec<(UnixMs, u64, bool)> {
    site.heartbeats
        .borrow()
        .iter()
        .map(|beat| {
            (
                beat.sent_at,
                beat.queue_depth,
                beat.oldest_queued_at.is_some(),
            )
        })
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
    site.heartbeats_reach(1).await;
    assert_eq!(beats(&site), [(T0, 0, false)], "the drained queue, once");
    let beat = site.heartbeats.borrow()[0].clone();
    assert_eq!(beat.app_version, APP_VERSION);

    // A wake with nothing sent and the period not up sends nothing: the
    // next heartbeat is the one sent when the period is up.
    let almost = T0.plus(Millis(HEARTBEAT_PERIOD_DEFAULT.0 - 1));
    clock.set(almost);
    queue.drain(false).await.unwrap();

    // Once the period is up, a wake sends one.
    let due = T0.plus(HEARTBEAT_PERIOD_DEFAULT);
    clock.set(due);
    queue.drain(false).await.unwrap();
    site.heartbeats_reach(2).await;
    assert_eq!(beats(&site), [(T0, 0, false), (due, 0, false)]);
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
    site.heartbeats_reach(1).await;
    assert_eq!(beats(&site), [(T0, 2, true)], "the failed run's backlog");

    // Neither the drain nor the heartbeat is due before the 2 s step: no
    // request now, and the next heartbeat is the one sent at 2 s.
    clock.set(T0.plus(Millis(1_999)));
    assert_eq!(queue.drain(false).await.unwrap().requests, 0);
    assert_eq!(site.requests.borrow().len(), 1);

    let step = T0.plus(Millis::from_secs(2));
    clock.set(step);
    queue.drain(false).await.unwrap();
    site.heartbeats_reach(2).await;
    assert_eq!(beats(&site), [(T0, 2, true), (step, 2, true)]);

    // The site returns: the drain empties the queue and the heartbeat says so.
    site.answer_each(applied);
    let back = T0.plus(Millis::from_secs(6));
    clock.set(back);
    let report = queue.drain(false).await.unwrap();
    assert_eq!(report.pending, 0);
    site.heartbeats_reach(3).await;
    assert_eq!(
        beats(&site),
        [(T0, 2, true), (step, 2, true), (back, 0, false)]
    );
}
