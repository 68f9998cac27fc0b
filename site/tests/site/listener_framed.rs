//! Framed JSON over TCP (protocols.md §3, docs/terminal-protocols.md) byte
//! by byte, over real TCP on loopback against a real SQLite file.

use std::time::Duration;

use crate::listener_support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn frame(json: &str) -> Vec<u8> {
    let mut out = (json.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(json.as_bytes());
    out
}

fn record(id: &str, secs_ago: i64) -> String {
    let at = stockhop::time::UnixMs(stockhop_site::listener::unix_now().0 - secs_ago * 1000);
    format!(r#"{{"device":"bridge-1","id":"{id}","at":"{at}","person":"1452"}}"#)
}

async fn read_exactly(stream: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut buf))
        .await
        .expect("answered in time")
        .unwrap();
    buf
}

async fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut buf))
        .await
        .expect("closed in time")
        .unwrap();
    buf
}

#[tokio::test]
async fn a_frame_split_across_reads_is_acked_once_whole() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("bridge-1"), None).await;
    let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
    let bytes = frame(&record("r-1", 1));
    for piece in [&bytes[..2], &bytes[2..4], &bytes[4..20], &bytes[20..]] {
        stream.write_all(piece).await.unwrap();
        stream.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let ack = br#"{"ack":"r-1"}"#;
    assert_eq!(
        read_exactly(&mut stream, 4 + ack.len()).await,
        frame(r#"{"ack":"r-1"}"#)
    );
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 1);
    listener.stop().await;
}

#[tokio::test]
async fn two_frames_in_one_read_get_two_acks_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("bridge-1"), None).await;
    let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
    let mut bytes = frame(&record("a", 2));
    bytes.extend(frame(&record("b", 1)));
    stream.write_all(&bytes).await.unwrap();
    let mut expected = frame(r#"{"ack":"a"}"#);
    expected.extend(frame(r#"{"ack":"b"}"#));
    assert_eq!(read_exactly(&mut stream, expected.len()).await, expected);
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 2);
    listener.stop().await;
}

#[tokio::test]
async fn an_oversized_frame_gets_an_error_frame_and_a_close_and_never_enters_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("bridge-1"), None).await;
    let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
    let mut bytes = frame(&record("ok-first", 1));
    bytes.extend_from_slice(&(256 * 1024 + 1u32).to_be_bytes());
    bytes.extend_from_slice(b"{\"device\":");
    stream.write_all(&bytes).await.unwrap();
    let mut expected = frame(r#"{"ack":"ok-first"}"#);
    expected.extend(frame(
        r#"{"error":"frame_too_long","message":"frame of 262145 bytes is over the 262144-byte limit"}"#,
    ));
    assert_eq!(read_to_close(&mut stream).await, expected);
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 1);
    listener.stop().await;
}

#[tokio::test]
async fn a_zero_length_frame_gets_an_error_frame_and_a_close() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("bridge-1"), None).await;
    let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
    stream.write_all(&[0, 0, 0, 0]).await.unwrap();
    assert_eq!(
        read_to_close(&mut stream).await,
        frame(r#"{"error":"zero_length","message":"zero-length frame"}"#)
    );
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 0);
    listener.stop().await;
}

#[tokio::test]
async fn a_resent_record_is_acked_again_and_queued_once() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("bridge-1"), None).await;
    let bytes = frame(&record("same", 1));
    for _ in 0..2 {
        let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
        stream.write_all(&bytes).await.unwrap();
        assert_eq!(
            read_exactly(&mut stream, 4 + 14).await,
            frame(r#"{"ack":"same"}"#)
        );
    }
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 1);
    listener.stop().await;
}

#[tokio::test]
async fn a_stale_record_is_acked_and_recorded_as_stale() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("bridge-1"), None).await;
    let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
    stream
        .write_all(&frame(&record("old", 3600)))
        .await
        .unwrap();
    assert_eq!(
        read_exactly(&mut stream, 4 + 13).await,
        frame(r#"{"ack":"old"}"#)
    );
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'stale'"),
        1
    );
    listener.stop().await;
}

#[tokio::test]
async fn a_failed_write_is_nacked_with_retry_and_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("bridge-1"), None).await;
    let fail = rusqlite::Connection::open(listener.data.join("stockhop.sqlite")).unwrap();
    fail.execute_batch(
        "CREATE TRIGGER refuse BEFORE INSERT ON listener_queue WHEN NEW.event_id = 'b'
         BEGIN SELECT RAISE(ABORT, 'disk says no'); END;",
    )
    .unwrap();
    let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
    let mut bytes = frame(&record("a", 2));
    bytes.extend(frame(&record("b", 1)));
    stream.write_all(&bytes).await.unwrap();
    let mut expected = frame(r#"{"nack":"a","retry":true}"#);
    expected.extend(frame(r#"{"nack":"b","retry":true}"#));
    assert_eq!(read_exactly(&mut stream, expected.len()).await, expected);
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 0);
    fail.execute_batch("DROP TRIGGER refuse").unwrap();
    stream.write_all(&bytes).await.unwrap();
    let mut expected = frame(r#"{"ack":"a"}"#);
    expected.extend(frame(r#"{"ack":"b"}"#));
    assert_eq!(read_exactly(&mut stream, expected.len()).await, expected);
    listener.stop().await;
}

#[tokio::test]
async fn a_device_outside_the_allowlist_and_a_bad_record_are_refused_with_error_frames() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("bridge-2"), None).await;
    let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
    stream.write_all(&frame(&record("x", 1))).await.unwrap();
    assert_eq!(
        read_to_close(&mut stream).await,
        frame(r#"{"error":"device_not_allowed","message":"serial not in the terminal allowlist"}"#)
    );
    let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
    stream
        .write_all(&frame(
            r#"{"device":"bridge-2","id":"1","at":"2026-09-07T12:50:36Z"}"#,
        ))
        .await
        .unwrap();
    assert_eq!(
        read_to_close(&mut stream).await,
        frame(
            r#"{"error":"bad_record","message":"exactly one of person, epc or code is required"}"#
        )
    );
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 0);
    listener.stop().await;
}
