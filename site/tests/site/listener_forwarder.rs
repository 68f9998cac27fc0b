//! The forwarder against a stand-in ledger over real HTTP on loopback: FIFO
//! delivery, rows marked done, dead letters that cost one record, retries
//! with backoff that a new frame cuts short, no redirects followed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::listener_support::*;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use stockhop::time::Millis;
use stockhop_site::listener::forwarder::Cadence;

const DEVICE: &str = "bridge-1";
/// A retry wait no run of this suite lasts.
const HOUR: Millis = Millis::from_secs(3600);

#[tokio::test]
async fn records_reach_the_ledger_in_order_and_rows_are_marked_done_not_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = TestLedger::start(&dir.path().join("ledger.sqlite")).await;
    let listener = start(dir.path(), config(DEVICE), Some(&ledger.url)).await;
    let records: Vec<String> = (0..120)
        .map(|i| framed_record(DEVICE, &format!("r{i}"), &format!("p{i}"), 2))
        .collect();
    let acks = send_frames(listener.tcp, &records).await;
    assert!(acks.iter().all(|a| a.starts_with(r#"{"ack":"#)));
    assert!(eventually(10, || ledger.events() == 120).await);
    let expected: Vec<String> = (0..120).map(|i| format!("p{i}")).collect();
    assert_eq!(ledger.subjects(), expected);
    assert!(ledger.batches() >= 3, "batches of at most 50");
    assert!(
        eventually(5, || listener
            .count("SELECT count(*) FROM listener_queue WHERE state = 'done'")
            == 120)
        .await
    );
    assert_eq!(listener.count("SELECT count(*) FROM listener_served"), 120);
    assert!(eventually(5, || ledger.heartbeats() == 1).await);
    listener.stop().await;
}

#[tokio::test]
async fn a_permanently_rejected_record_is_dead_lettered_and_the_records_behind_it_are_delivered() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = TestLedger::start(&dir.path().join("ledger.sqlite")).await;
    let listener = start(dir.path(), config(DEVICE), Some(&ledger.url)).await;
    let records = vec![
        framed_record(DEVICE, "a", "p1", 3),
        framed_record(DEVICE, "bad", POISON, 3),
        framed_record(DEVICE, "c", "p3", 2),
        framed_record(DEVICE, "d", "p4", 1),
    ];
    send_frames(listener.tcp, &records).await;
    assert!(eventually(10, || ledger.events() == 3).await);
    assert_eq!(ledger.subjects(), ["p1", "p3", "p4"]);
    assert!(
        eventually(5, || listener
            .count("SELECT count(*) FROM listener_queue WHERE state = 'done'")
            == 3)
        .await
    );
    let (status, body): (i64, String) = listener.query(
        "SELECT dead_status, dead_body FROM listener_queue WHERE state = 'dead'",
        |r| Ok((r.get(0)?, r.get(1)?)),
    );
    assert_eq!(status, 422);
    assert!(body.contains("subject refused"), "{body}");
    listener.stop().await;
}

#[tokio::test]
async fn a_busy_ledger_is_retried_and_a_new_frame_skips_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = TestLedger::start(&dir.path().join("ledger.sqlite")).await;
    ledger.fail_next(2);
    // Retry waits far longer than the test may take, so an attempt after a
    // failure can only come from a new frame cutting the wait short.
    let mut config = config(DEVICE);
    config.forwarding = Cadence {
        retry_delay_first: HOUR,
        retry_delay_max: HOUR,
        ..Cadence::default()
    };
    let listener = start(dir.path(), config, Some(&ledger.url)).await;
    send_frames(listener.tcp, &[framed_record(DEVICE, "a", "p1", 1)]).await;
    assert!(eventually(30, || ledger.batches() == 1).await);
    // The forwarder now waits; a new frame starts the next attempt at once.
    send_frames(listener.tcp, &[framed_record(DEVICE, "b", "p2", 1)]).await;
    assert!(
        eventually(30, || ledger.batches() >= 2).await,
        "the new frame cut the wait short"
    );
    send_frames(listener.tcp, &[framed_record(DEVICE, "c", "p3", 1)]).await;
    assert!(eventually(30, || ledger.events() == 3).await);
    assert!(
        eventually(5, || listener.count(
            "SELECT count(*) FROM listener_queue WHERE state = 'pending'"
        ) == 0)
        .await
    );
    listener.stop().await;
}

#[tokio::test]
async fn an_outage_backlog_drains_with_no_stale_rate_limited_or_duplicate_records() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = TestLedger::start(&dir.path().join("ledger.sqlite")).await;
    ledger.fail_next(usize::MAX);
    let listener = start(dir.path(), config(DEVICE), Some(&ledger.url)).await;
    // One terminal, 200 records captured 850 ms apart over the last 170 s
    // (the listener itself was up), seven people taking turns.
    let now = stockhop_site::listener::unix_now().0;
    for chunk in (0..200i64).collect::<Vec<_>>().chunks(25) {
        let records: Vec<String> = chunk
            .iter()
            .map(|i| {
                let at = stockhop::time::UnixMs(now - 170_000 + i * 850);
                format!(
                    r#"{{"device":"{DEVICE}","id":"r{i}","at":"{at}","person":"p{}"}}"#,
                    i % 7
                )
            })
            .collect();
        send_frames(listener.tcp, &records).await;
    }
    assert_eq!(ledger.events(), 0, "the ledger is down");
    ledger.fail_next(0);
    send_frames(listener.tcp, &[framed_record(DEVICE, "last", "p9", 0)]).await;
    assert!(eventually(10, || ledger.events() == 201).await);
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome <> 'accepted'"),
        0
    );
    listener.stop().await;
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = TestLedger::start(&dir.path().join("ledger.sqlite")).await;
    let hits = Arc::new(AtomicUsize::new(0));
    let target = format!(
        "{}{}",
        ledger.url,
        stockhop_site::terminal_wire::TERMINAL_EVENTS_PATH
    );
    let redirector = {
        let hits = Arc::clone(&hits);
        axum::Router::new().fallback(move || {
            let target = target.clone();
            hits.fetch_add(1, Ordering::SeqCst);
            async move { (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, target)]).into_response() }
        })
    };
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let redirect_url = format!("http://{}", socket.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(socket, redirector).await.unwrap() });
    let listener = start(dir.path(), config(DEVICE), Some(&redirect_url)).await;
    send_frames(listener.tcp, &[framed_record(DEVICE, "a", "p1", 1)]).await;
    assert!(eventually(5, || hits.load(Ordering::SeqCst) >= 1).await);
    send_frames(listener.tcp, &[framed_record(DEVICE, "b", "p2", 1)]).await;
    assert!(eventually(5, || hits.load(Ordering::SeqCst) >= 2).await);
    assert_eq!(ledger.batches(), 0, "the redirect target was never called");
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE state = 'pending'"),
        2
    );
    listener.stop().await;
}
