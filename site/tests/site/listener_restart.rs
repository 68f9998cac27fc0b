//! What the listener remembers across a restart: the durable served record
//! and still-queued records keep the duplicate window, and queued records
//! are forwarded by the next process.

use crate::listener_support::*;

const DEVICE: &str = "bridge-1";

#[tokio::test]
async fn the_duplicate_window_survives_a_restart_through_the_served_record() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = TestLedger::start(&dir.path().join("ledger.sqlite")).await;
    let listener = start(dir.path(), config(DEVICE), Some(&ledger.url)).await;
    send_frames(listener.tcp, &[framed_record(DEVICE, "first", "1452", 3)]).await;
    assert!(
        eventually(5, || listener.count("SELECT count(*) FROM listener_served")
            == 1)
        .await
    );
    listener.stop().await;
    // The served record is what remembers it: the queue row may be pruned.
    let conn = rusqlite::Connection::open(dir.path().join("data/stockhop.sqlite")).unwrap();
    conn.execute("DELETE FROM listener_queue", []).unwrap();
    drop(conn);

    let listener = start(dir.path(), config(DEVICE), Some(&ledger.url)).await;
    let acks = send_frames(
        listener.tcp,
        &[
            framed_record(DEVICE, "second", "1452", 1),
            framed_record(DEVICE, "first", "1452", 3),
        ],
    )
    .await;
    assert_eq!(acks, [r#"{"ack":"second"}"#, r#"{"ack":"first"}"#]);
    let outcomes: String = listener.query(
        "SELECT group_concat(event_id || '=' || rule_outcome, ' ') FROM (SELECT * FROM listener_queue ORDER BY seq)",
        |r| r.get(0),
    );
    // A new read 2 s after a served one is a duplicate; the served record
    // itself, resent, is not its own duplicate.
    assert_eq!(outcomes, "second=duplicate first=accepted");
    listener.stop().await;
}

#[tokio::test]
async fn records_queued_while_the_ledger_was_away_are_forwarded_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = TestLedger::start(&dir.path().join("ledger.sqlite")).await;
    let listener = start(dir.path(), config(DEVICE), None).await;
    send_frames(listener.tcp, &[framed_record(DEVICE, "a", "7", 2)]).await;
    listener.stop().await;
    let listener = start(dir.path(), config(DEVICE), Some(&ledger.url)).await;
    // Still in the window though never served: it was accepted and queued.
    send_frames(listener.tcp, &[framed_record(DEVICE, "b", "7", 1)]).await;
    assert!(eventually(5, || ledger.events() == 2).await);
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'duplicate'"),
        1
    );
    listener.stop().await;
}
