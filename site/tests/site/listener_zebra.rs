//! Zebra IoT Connector tag events (docs/terminal-protocols.md) over real HTTP on
//! loopback against a real SQLite file.

use crate::listener_support::*;
use stockhop::time::UnixMs;
use stockhop_site::listener::unix_now;

const READER: &str = "fxr90-dock1";

fn event(epc: &str, num: u32, at: UnixMs, plus_0000: bool) -> String {
    let mut timestamp = at.to_string();
    if plus_0000 {
        timestamp = timestamp.replace('Z', "+0000");
    }
    format!(
        r#"{{"data":{{"antenna":1,"eventNum":{num},"format":"epc","idHex":"{epc}","peakRssi":-37,"reads":1}},"timestamp":"{timestamp}","type":"INVENTORY"}}"#
    )
}

fn post(body: &str) -> Vec<u8> {
    format!(
        "POST /zebra?SN={READER} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[tokio::test]
async fn protocol_examples_are_answered_200_with_an_empty_body() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(READER), None).await;
    for body in [
        r#"{"data":{"eventNum":5036,"format":"epc","idHex":"e2806894000040017790e471"},"timestamp":"2026-09-07T12:50:36.194+0000","type":"SIMPLE"}"#,
        r#"{"data":{"antenna":1,"eventNum":5059,"format":"epc","idHex":"e2806894000040017790e471","peakRssi":-37,"reads":1},"timestamp":"2026-09-07T12:50:55.513+0000","type":"INVENTORY"}"#,
    ] {
        let (head, got) = split_reply(&exchange(listener.http, &post(body)).await);
        assert_eq!(head, expected_head("HTTP/1.1", "200 OK", 0));
        assert!(got.is_empty());
    }
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE kind = 'tag_read'"),
        2
    );
    listener.stop().await;
}

#[tokio::test]
async fn an_array_with_both_offset_forms_is_queued_whole() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(READER), None).await;
    let now = unix_now();
    let body = format!(
        "[{},{}]",
        event("e2806894000040017790e471", 1, UnixMs(now.0 - 1000), true),
        event("E2806894000040017790E472", 2, UnixMs(now.0 - 900), false)
    );
    let (_, got) = split_reply(&exchange(listener.http, &post(&body)).await);
    assert!(got.is_empty());
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        2
    );
    let subject: String = listener.query(
        "SELECT subject FROM listener_queue ORDER BY seq DESC LIMIT 1",
        |r| r.get(0),
    );
    assert_eq!(subject, "e2806894000040017790e472");
    listener.stop().await;
}

#[tokio::test]
async fn the_same_tag_within_five_seconds_is_recorded_as_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(READER), None).await;
    let now = unix_now();
    let reads: Vec<String> = (0..10)
        .map(|i| {
            event(
                "e280aa",
                i,
                UnixMs(now.0 - 3000 + i64::from(i) * 100),
                false,
            )
        })
        .collect();
    let (_, got) =
        split_reply(&exchange(listener.http, &post(&format!("[{}]", reads.join(",")))).await);
    assert!(got.is_empty());
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        1
    );
    // The first repeat has a row, numbered 9 by the last; the eight
    // after it folded into it and kept only their identities.
    assert_eq!(
        listener.count(
            "SELECT count(*) FROM listener_queue WHERE rule_outcome = 'duplicate' AND repeat_number = 9"
        ),
        1
    );
    assert_eq!(listener.count("SELECT count(*) FROM listener_repeat"), 8);
    listener.stop().await;
}

#[tokio::test]
async fn a_tag_read_over_and_over_reaches_the_site_ledger_as_one_event_with_its_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start_with_site_ledger(dir.path(), config(READER)).await;
    let now = unix_now();
    let reads: Vec<String> = (0..10)
        .map(|i| {
            event(
                "e280aa",
                i,
                UnixMs(now.0 - 3000 + i64::from(i) * 100),
                false,
            )
        })
        .collect();
    let report = post(&format!("[{}]", reads.join(",")));
    // The portal missed the first ack and sends the report again.
    for _ in 0..2 {
        let (_, got) = split_reply(&exchange(listener.http, &report).await);
        assert!(got.is_empty());
    }
    assert!(
        eventually(10, || listener
            .count("SELECT count(*) FROM listener_queue WHERE state = 'done'")
            == 2)
        .await,
        "the forwarder delivers the read and its repeat row, the other eight folded into it"
    );
    assert_eq!(
        listener.ledger_events(),
        [("e280aa".to_owned(), now.0 - 3000)],
        "one event, the accepted read's"
    );
    let (repeats, last): (i64, i64) = listener.query(
        "SELECT repeats, last_repeat_at FROM terminal_repeats",
        |r| Ok((r.get(0)?, r.get(1)?)),
    );
    assert_eq!((repeats, last), (9, now.0 - 3000 + 900));
    assert_eq!(
        listener.count("SELECT count(*) FROM receipts"),
        1,
        "the repeats claim no key"
    );
    listener.stop().await;
}

#[tokio::test]
async fn a_report_that_is_not_json_is_refused_and_an_unreadable_event_is_kept_raw() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(READER), None).await;
    let (head, _) = split_reply(&exchange(listener.http, &post("[{\"data\":")).await);
    assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
    assert_eq!(listener.count("SELECT count(*) FROM listener_raw"), 0);
    let good = event("e280aa", 1, unix_now(), false);
    let body =
        format!(r#"[{good},{{"data":{{"idHex":"e280"}},"timestamp":"x","type":"INVENTORY"}}]"#);
    let (head, got) = split_reply(&exchange(listener.http, &post(&body)).await);
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", 0));
    assert!(got.is_empty());
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 1);
    let (kind, raw, reason): (String, Vec<u8>, String) = listener
        .query("SELECT kind, body, reason FROM listener_raw", |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        });
    assert_eq!(kind, "zebra INVENTORY");
    assert_eq!(
        raw,
        br#"{"data":{"idHex":"e280"},"timestamp":"x","type":"INVENTORY"}"#
    );
    assert!(reason.starts_with("unreadable tag read: "), "{reason}");
    let unnamed = exchange(
        listener.http,
        format!(
            "POST /zebra HTTP/1.1\r\nContent-Length: {}\r\n\r\n{good}",
            good.len()
        )
        .as_bytes(),
    )
    .await;
    assert!(split_reply(&unnamed).0.starts_with("HTTP/1.1 400 "));
    assert_eq!(listener.unknown_requests().by_path["/zebra"], 1);
    listener.stop().await;
}

#[tokio::test]
async fn a_report_mixing_inventory_custom_and_management_events_lands_its_tags() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(READER), None).await;
    let now = unix_now();
    let custom = format!(
        r#"{{"data":{{"door":"D4","pallet":"P-0077","tags":3}},"timestamp":"{}","type":"CUSTOM"}}"#,
        UnixMs(now.0 - 500)
    );
    let heartbeat = format!(
        r#"{{"component":"RM","data":{{"status":"running"}},"timestamp":"{}","type":"HEARTBEAT"}}"#,
        UnixMs(now.0 - 400)
    );
    let body = format!(
        "[{},{custom},{},{heartbeat},{}]",
        event("e2801190200050aa00000001", 10, UnixMs(now.0 - 900), true),
        event("e2801190200050aa00000002", 11, UnixMs(now.0 - 800), true),
        event("e2801190200050aa00000003", 12, UnixMs(now.0 - 700), false),
    );
    let (head, got) = split_reply(&exchange(listener.http, &post(&body)).await);
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", 0));
    assert!(got.is_empty());
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        3
    );
    assert_eq!(
        listener.count(
            "SELECT count(*) FROM listener_raw WHERE kind IN ('zebra CUSTOM', 'zebra HEARTBEAT')"
        ),
        2
    );
    let stored: Vec<u8> = listener.query(
        "SELECT body FROM listener_raw WHERE kind = 'zebra CUSTOM'",
        |r| r.get(0),
    );
    assert_eq!(stored, custom.as_bytes());
    listener.stop().await;
}

#[tokio::test]
async fn a_pallet_of_200_distinct_tags_read_in_one_second_lands_whole() {
    let dir = tempfile::tempdir().unwrap();
    let ledger_db = dir.path().join("ledger.sqlite");
    let ledger = TestLedger::start(&ledger_db).await;
    let listener = start(dir.path(), config(READER), Some(&ledger.url)).await;
    let now = unix_now();
    let pallet: Vec<String> = (0..200u32)
        .map(|i| {
            let at = UnixMs(now.0 - 1_000 + i64::from(i) * 5);
            event(&format!("e2801190200050aa{i:08x}"), i, at, true)
        })
        .collect();
    let (_, got) =
        split_reply(&exchange(listener.http, &post(&format!("[{}]", pallet.join(",")))).await);
    assert!(got.is_empty());
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        200
    );
    assert!(eventually(10, || ledger.events() == 200).await);
    let subjects = ledger.subjects();
    assert_eq!(subjects[0], "e2801190200050aa00000000");
    assert_eq!(subjects[199], "e2801190200050aa000000c7");
    listener.stop().await;
}

#[tokio::test]
async fn a_client_expecting_100_continue_is_told_to_go_on() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(READER), None).await;
    let body = event("e280aa", 1, unix_now(), true);
    let mut stream = tokio::net::TcpStream::connect(listener.http).await.unwrap();
    let head = format!(
        "POST /zebra?SN={READER} HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut interim = [0u8; 25];
    stream.read_exact(&mut interim).await.unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).await.unwrap();
    assert_eq!(
        split_reply(&reply).0,
        expected_head("HTTP/1.1", "200 OK", 0)
    );
    listener.stop().await;
}
