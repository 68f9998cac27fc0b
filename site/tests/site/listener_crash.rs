//! kill -9 of the real binary at the two windows that matter: after the
//! durable write but before the terminal read its ack, and after the ledger
//! recorded a batch but before the queue rows were marked done. Nothing is
//! lost and nothing is doubled in the (stand-in) ledger, which claims keys.

use crate::ports;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::listener_support::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const SN: &str = "0316144680030";

struct Ports {
    site: u16,
    http: u16,
    tcp: u16,
}

fn ports() -> Ports {
    Ports {
        site: ports::free_port(),
        http: ports::free_port(),
        tcp: ports::free_port(),
    }
}

/// Starts `stockhop-site serve` forwarding to `ledger_url`, and waits until
/// its terminal port answers.
async fn spawn_site(data: &Path, ports: &Ports, ledger_url: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
        .arg("serve")
        .arg("--data")
        .arg(data)
        .args(["--http", &format!("127.0.0.1:{}", ports.site)])
        .args(["--https", "127.0.0.1:0"])
        .args(["--terminal-http", &format!("127.0.0.1:{}", ports.http)])
        .args(["--terminal-tcp", &format!("127.0.0.1:{}", ports.tcp)])
        .args(["--ledger-url", ledger_url, "--ledger-secret", SECRET])
        .env("STOCKHOP_TERMINAL_ALLOW", "*")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Generous: the whole workspace's suites may be loading the machine.
    for _ in 0..600 {
        if TcpStream::connect(("127.0.0.1", ports.tcp)).await.is_ok() {
            return child;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    panic!(
        "the site did not start ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

fn kill_9(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

fn count(data: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(data.join("stockhop.sqlite")).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

async fn wait_for(data: &Path, sql: &str, expected: i64) -> bool {
    let data = data.to_owned();
    eventually(10, move || {
        data.join("stockhop.sqlite").exists() && count(&data, sql) == expected
    })
    .await
}

#[tokio::test]
async fn killed_between_write_and_ack_the_resend_is_queued_once_and_delivered_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ledger = TestLedger::start(&dir.path().join("ledger.sqlite")).await;
    // Nothing may reach the ledger before the kill: the ledger is busy.
    ledger.fail_next(usize::MAX);
    let ports = ports();
    let site = spawn_site(&data, &ports, &ledger.url).await;
    let body: String = (0..5)
        .map(|i| att_line(&format!("{}", 2000 + i), &local_time(5 - i)))
        .collect();
    let mut terminal = TcpStream::connect(("127.0.0.1", ports.http)).await.unwrap();
    terminal
        .write_all(&attlog_request(SN, &body))
        .await
        .unwrap();
    // The rows are durable; the terminal has not read any ack.
    assert!(wait_for(&data, "SELECT count(*) FROM listener_queue", 5).await);
    kill_9(site);
    drop(terminal);

    ledger.fail_next(0);
    let site = spawn_site(&data, &ports, &ledger.url).await;
    let http = format!("127.0.0.1:{}", ports.http).parse().unwrap();
    let (_, reply) = split_reply(&exchange(http, &attlog_request(SN, &body)).await);
    assert_eq!(reply, b"OK:5");
    assert!(
        wait_for(
            &data,
            "SELECT count(*) FROM listener_queue WHERE state = 'done'",
            5
        )
        .await
    );
    assert_eq!(count(&data, "SELECT count(*) FROM listener_queue"), 5);
    assert_eq!(ledger.events(), 5);
    kill_9(site);
}

#[tokio::test]
async fn killed_between_forward_and_mark_the_batch_is_resent_and_recorded_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ledger = TestLedger::start(&dir.path().join("ledger.sqlite")).await;
    // The ledger records every batch but the answer never comes back.
    ledger.hold(true);
    let ports = ports();
    let site = spawn_site(&data, &ports, &ledger.url).await;
    let tcp = format!("127.0.0.1:{}", ports.tcp).parse().unwrap();
    let records: Vec<String> = (0..5)
        .map(|i| framed_record("bridge-9", &format!("r{i}"), &format!("p{i}"), 2))
        .collect();
    let acks = send_frames(tcp, &records).await;
    assert_eq!(acks.len(), 5);
    assert!(eventually(10, || ledger.events() == 5).await);
    assert_eq!(
        count(
            &data,
            "SELECT count(*) FROM listener_queue WHERE state = 'pending'"
        ),
        5
    );
    kill_9(site);

    ledger.hold(false);
    let batches_before = ledger.batches();
    let site = spawn_site(&data, &ports, &ledger.url).await;
    assert!(
        wait_for(
            &data,
            "SELECT count(*) FROM listener_queue WHERE state = 'done'",
            5
        )
        .await
    );
    assert!(
        ledger.batches() > batches_before,
        "the batch was sent again"
    );
    assert_eq!(ledger.events(), 5, "the ledger claimed each key once");
    assert_eq!(count(&data, "SELECT count(*) FROM listener_served"), 5);
    kill_9(site);
}
