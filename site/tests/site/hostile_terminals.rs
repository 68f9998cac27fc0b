//! The terminal ports against hostile and broken clients, over real TCP on
//! loopback against a real SQLite file: what one request may make the
//! listener write, slow clients that would hold every slot, and nothing
//! acknowledged that the ledger would refuse.

use std::net::SocketAddr;
use std::time::Duration;

use crate::listener_support::*;
use stockhop_site::limits::{
    FIRST_FRAME_DEADLINE, RAW_BYTES_BURST, RAW_BYTES_PER_SECOND, TCP_MAX_CONNECTIONS,
    TERMINAL_HEAD_DEADLINE, TERMINAL_HTTP_MAX_CONNECTIONS,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const SN: &str = "0316144680030";

fn frame(json: &str) -> Vec<u8> {
    let mut out = (json.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(json.as_bytes());
    out
}

/// A connection from another loopback address than the terminals' own
/// 127.0.0.1: the peer the listener has never had a record from.
async fn connect_from_elsewhere(addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    socket.connect(addr).await.unwrap()
}

/// Opens `n` connections from elsewhere that each trickle one byte of
/// `prefix` every second and never complete it; returns their tasks.
async fn trickle(
    addr: SocketAddr,
    n: usize,
    prefix: &'static [u8],
) -> Vec<tokio::task::JoinHandle<bool>> {
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        let mut stream = connect_from_elsewhere(addr).await;
        tasks.push(tokio::spawn(async move {
            // Returns whether the listener closed the connection on it.
            for byte in prefix.iter().cycle().take(120) {
                if stream.write_all(&[*byte]).await.is_err() {
                    return true;
                }
                let mut probe = [0u8; 64];
                match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut probe)).await {
                    Ok(Ok(0)) | Ok(Err(_)) => return true,
                    Ok(Ok(_)) | Err(_) => {}
                }
            }
            false
        }));
    }
    tasks
}

/// Waits until the listener has closed one of `attackers` at once: it
/// closes an unknown peer's connection on accept only while every general
/// slot is taken, so the others then hold all of them. A close before
/// `deadline` (under the first-frame and head deadlines) can only be that.
async fn wait_until_slots_are_held(
    attackers: &[tokio::task::JoinHandle<bool>],
    deadline: Duration,
) {
    let held = eventually(deadline.as_secs(), || {
        attackers.iter().any(tokio::task::JoinHandle::is_finished)
    })
    .await;
    assert!(
        held,
        "no connection past the general slots was closed within {deadline:?}"
    );
}

#[tokio::test]
async fn an_upload_of_junk_lines_is_one_raw_record_not_one_row_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let junk = "x\n".repeat(128 * 1024);
    let (head, body) = split_reply(&exchange(listener.http, &attlog_request(SN, &junk)).await);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert_eq!(body, b"OK:131072", "every line is counted as taken");
    assert_eq!(listener.count("SELECT count(*) FROM listener_raw"), 1);
    assert_eq!(
        listener.count("SELECT length(body) FROM listener_raw"),
        junk.len() as i64 - 1,
        "the lines are kept, in one body"
    );
    let reason: String = listener.query("SELECT reason FROM listener_raw", |r| r.get(0));
    assert!(reason.starts_with("131072 line(s) kept raw"), "{reason}");
    // A mixed upload: its records are queued, its junk is one raw row.
    let mixed = format!(
        "{}y\n{}z\n",
        att_line("7", &local_time(1)),
        att_line("8", &local_time(1))
    );
    let (_, body) = split_reply(&exchange(listener.http, &attlog_request(SN, &mixed)).await);
    assert_eq!(body, b"OK:4");
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 2);
    assert_eq!(listener.count("SELECT count(*) FROM listener_raw"), 2);
    listener.stop().await;
}

#[tokio::test]
async fn slow_framed_connections_cannot_lock_out_a_known_bridge() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("bridge-1"), None).await;
    let first = send_frames(listener.tcp, &[framed_record("bridge-1", "r-1", "1452", 1)]).await;
    assert_eq!(first, [r#"{"ack":"r-1"}"#]);
    // More trickling connections than the port has slots.
    let attackers = trickle(listener.tcp, TCP_MAX_CONNECTIONS + 44, b"\x00\x00\x00\x40{").await;
    wait_until_slots_are_held(&attackers, FIRST_FRAME_DEADLINE / 2).await;
    let again = tokio::time::timeout(
        FIRST_FRAME_DEADLINE / 2,
        send_frames(listener.tcp, &[framed_record("bridge-1", "r-2", "1453", 1)]),
    )
    .await
    .expect("the known bridge is served while the slow connections still hold their slots");
    assert_eq!(again, [r#"{"ack":"r-2"}"#]);
    // And no trickle keeps its slot past the first-frame deadline.
    for attacker in attackers {
        assert!(attacker.await.unwrap(), "a trickling connection was closed");
    }
    listener.stop().await;
}

#[tokio::test]
async fn slow_http_connections_cannot_lock_out_a_known_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let ping = format!("GET /iclock/getrequest?SN={SN} HTTP/1.1\r\n\r\n");
    let (_, body) = split_reply(&exchange(listener.http, ping.as_bytes()).await);
    assert_eq!(body, b"OK");
    let attackers = trickle(
        listener.http,
        TERMINAL_HTTP_MAX_CONNECTIONS + 88,
        b"GET /iclock/getrequest?SN=0316144680030 HTTP/1.1\r\nX: ",
    )
    .await;
    wait_until_slots_are_held(&attackers, TERMINAL_HEAD_DEADLINE / 2).await;
    let upload = attlog_request(SN, &att_line("1", &local_time(1)));
    let reply = tokio::time::timeout(TERMINAL_HEAD_DEADLINE / 2, exchange(listener.http, &upload))
        .await
        .expect("the known terminal is served while the slow connections still hold their slots");
    let (_, body) = split_reply(&reply);
    assert_eq!(body, b"OK:1");
    for attacker in attackers {
        assert!(attacker.await.unwrap(), "a trickling connection was closed");
    }
    listener.stop().await;
}

#[tokio::test]
async fn a_serial_outside_the_allowlist_is_refused_from_the_request_line() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let mut stream = TcpStream::connect(listener.http).await.unwrap();
    // The request line alone; the head is never finished.
    stream
        .write_all(b"POST /iclock/cdata?SN=INTRUDER&table=ATTLOG HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut reply))
        .await
        .expect("refused without waiting for the rest of the head")
        .unwrap();
    let (head, _) = split_reply(&reply);
    assert!(head.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{head}");
    listener.stop().await;
}

#[tokio::test]
async fn nothing_the_ledger_would_refuse_is_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let long_reader = "r".repeat(300);
    let listener = start(dir.path(), config(&format!("bridge-1,{SN}")), None).await;
    // A Zebra reader named with 300 characters: the ledger takes 256. No
    // allowlist can name it (an entry is a serial, at most 64 characters),
    // and the serial rule refuses it before the allowlist is asked.
    let event = r#"{"data":{"idHex":"e2806894000040017790e471"},"timestamp":"2026-09-07T12:50:36.194+0000"}"#;
    let post = format!(
        "POST /zebra?SN={long_reader} HTTP/1.1\r\nContent-Length: {}\r\n\r\n{event}",
        event.len()
    );
    let (head, _) = split_reply(&exchange(listener.http, post.as_bytes()).await);
    assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
    // A framed record whose raw JSON is over the ledger's 64 KB audit cap.
    let padding = "p".repeat(70 * 1024);
    let at = stockhop_site::listener::unix_now();
    let big = format!(
        r#"{{"device":"bridge-1","id":"big","at":"{at}","person":"1","note":"{padding}"}}"#
    );
    let mut stream = TcpStream::connect(listener.tcp).await.unwrap();
    stream.write_all(&frame(&big)).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply))
        .await
        .expect("answered and closed")
        .unwrap();
    let text = String::from_utf8_lossy(&reply[4..]);
    assert!(text.starts_with(r#"{"error":"bad_record""#), "{text}");
    // An ATTLOG line over the cap is kept raw, not queued for the ledger.
    let long_line = format!("1\t{}\t{}\n", local_time(1), "0\t".repeat(40 * 1024));
    let (_, body) = split_reply(&exchange(listener.http, &attlog_request(SN, &long_line)).await);
    assert_eq!(body, b"OK:1");
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 0);
    listener.stop().await;
}

#[tokio::test]
async fn a_content_length_with_a_space_before_its_colon_is_a_bad_request() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let line = att_line("1", &local_time(1));
    let request = format!(
        "POST /iclock/cdata?SN={SN}&table=ATTLOG HTTP/1.1\r\nContent-Length : {}\r\n\r\n{line}",
        line.len()
    );
    let (head, _) = split_reply(&exchange(listener.http, request.as_bytes()).await);
    assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 0);
    listener.stop().await;
}

#[tokio::test]
async fn a_flood_of_junk_is_held_to_the_raw_budget_and_refused_unkept_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    // One unreadable line of 256 KiB: cheap to parse, so the flood's cost
    // is the bytes the budget counts, not a debug build's per-line work.
    let junk = format!("{}\n", "x".repeat(256 * 1024 - 1));
    let burst_uploads = RAW_BYTES_BURST / junk.len();
    let sent = burst_uploads + 8;
    // The flood arrives at once, as a junk client's uploads would.
    let request = attlog_request(SN, &junk);
    let started = std::time::Instant::now();
    let mut uploads = tokio::task::JoinSet::new();
    for _ in 0..sent {
        let (addr, request) = (listener.http, request.clone());
        uploads.spawn(async move { exchange(addr, &request).await });
    }
    let mut refused = 0;
    while let Some(reply) = uploads.join_next().await {
        let (head, _) = split_reply(&reply.unwrap());
        if head.starts_with("HTTP/1.1 503 Service Unavailable\r\n") {
            assert!(head.contains("Retry-After: "), "{head}");
            refused += 1;
        }
    }
    let elapsed = started.elapsed();
    let kept = listener.count("SELECT count(*) FROM listener_raw") as usize;
    assert_eq!(kept + refused, sent, "a refused upload keeps nothing");
    // The budget's own bound: its burst plus what it refilled while the
    // flood lasted, whatever the machine's speed.
    let refilled = (elapsed.as_secs_f64() * RAW_BYTES_PER_SECOND as f64) as usize;
    let bound = (RAW_BYTES_BURST + refilled) / junk.len() + 1;
    assert!(
        kept <= bound,
        "{kept} kept of {sent} in {elapsed:?}; the budget allows {bound}"
    );
    // A flood that ends before the budget could refill its excess has
    // some of it refused.
    if refilled < (sent - burst_uploads) * junk.len() {
        assert!(
            refused >= 1,
            "an upload past the budget is refused ({elapsed:?})"
        );
    }
    listener.stop().await;
}
