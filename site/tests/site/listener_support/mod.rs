//! Shared by the listener's integration tests: a listener on loopback over a
//! real SQLite file, raw socket exchanges, and a stand-in ledger (a real
//! HTTP server on port 0 over its own SQLite file that verifies signatures
//! and claims idempotency keys, as the ledger does).

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use rusqlite::Connection;
use stockhop_site::listener::config::Allowlist;
use stockhop_site::listener::{self, LedgerSink, ListenerConfig, RemoteLedgerSink, Running};
use stockhop_site::net::delivery::signature;
pub use stockhop_site::net::outbound::Trust;
use stockhop_site::store::db::Db;
use stockhop_site::terminal_wire::{
    TerminalBatch, TerminalBatchResponse, TerminalResult, SIGNATURE_HEADER, TERMINAL_EVENTS_PATH,
    TIMESTAMP_HEADER,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub const SECRET: &str = "test-secret-0123456789";
/// A subject the stand-in ledger refuses for good.
pub const POISON: &str = "poison";

pub struct Harness {
    pub http: SocketAddr,
    pub tcp: SocketAddr,
    pub data: PathBuf,
    pub db: Db,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    running: Option<Running>,
}

impl Harness {
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(running) = self.running.take() {
            running.join().await;
        }
    }

    /// Reads the listener's database from a separate connection.
    pub fn query<T>(
        &self,
        sql: &str,
        read: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> T {
        let conn = Connection::open(self.data.join("stockhop.sqlite")).unwrap();
        conn.query_row(sql, [], read).unwrap()
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.query(sql, |row| row.get(0))
    }
}

pub fn config(allow: &str) -> ListenerConfig {
    ListenerConfig {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        tcp_addr: "127.0.0.1:0".parse().unwrap(),
        allow: Allowlist::parse(allow).unwrap(),
        ..ListenerConfig::default()
    }
}

/// Starts a listener over `dir/data`, forwarding to `ledger` when given.
pub async fn start(dir: &Path, config: ListenerConfig, ledger: Option<&str>) -> Harness {
    start_trusting(dir, config, ledger, &Trust::System).await
}

/// [`start`], checking an https:// ledger's certificate against `trust`.
pub async fn start_trusting(
    dir: &Path,
    config: ListenerConfig,
    ledger: Option<&str>,
    trust: &Trust,
) -> Harness {
    let data = dir.join("data");
    let db = Db::open(&data).unwrap();
    let sink: Option<Arc<dyn LedgerSink>> = ledger.map(|url| {
        Arc::new(RemoteLedgerSink::new(url, SECRET, trust).unwrap()) as Arc<dyn LedgerSink>
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = listener::spawn(config, db.clone(), sink, async {
        let _ = stopped.await;
    })
    .await
    .unwrap();
    Harness {
        http: running.http_addr,
        tcp: running.tcp_addr,
        data,
        db,
        stop: Some(stop),
        running: Some(running),
    }
}

/// Sends `request` and reads the whole answer until the server closes.
pub async fn exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply))
        .await
        .expect("listener answered in time")
        .unwrap();
    reply
}

/// Splits an HTTP answer into its head (with the `Date` value checked and
/// replaced by `<date>`) and its body.
pub fn split_reply(reply: &[u8]) -> (String, Vec<u8>) {
    let end = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete head")
        + 4;
    let head = String::from_utf8(reply[..end].to_vec()).unwrap();
    let date_start = head.find("Date: ").expect("a Date header") + 6;
    let date_end = date_start + head[date_start..].find("\r\n").unwrap();
    let date = &head[date_start..date_end];
    let parsed = httpdate::parse_http_date(date).expect("an IMF-fixdate");
    let skew = std::time::SystemTime::now()
        .duration_since(parsed)
        .unwrap_or_default();
    assert!(
        skew < Duration::from_secs(5),
        "Date is the site clock: {date}"
    );
    assert!(date.ends_with(" GMT"));
    let head = format!("{}<date>{}", &head[..date_start], &head[date_end..]);
    (head, reply[end..].to_vec())
}

/// The exact head the listener answers with, `Date` aside.
pub fn expected_head(version: &str, status: &str, body_len: usize) -> String {
    format!(
        "{version} {status}\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: {body_len}\r\nConnection: close\r\n\r\n"
    )
}

/// The stand-in ledger.
#[derive(Clone)]
pub struct TestLedger {
    pub url: String,
    inner: Arc<LedgerInner>,
}

struct LedgerInner {
    conn: Mutex<Connection>,
    /// Answer this many more batches with 503 before taking any.
    pub fail_next: AtomicUsize,
    pub batches: AtomicUsize,
    /// Record batches but never answer them (the sender is about to die).
    pub hold: std::sync::atomic::AtomicBool,
}

impl TestLedger {
    pub async fn start(path: &Path) -> TestLedger {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        TestLedger::serve_on(listener, path).await
    }

    pub async fn serve_on(listener: tokio::net::TcpListener, path: &Path) -> TestLedger {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
             CREATE TABLE IF NOT EXISTS terminal_events (
               key TEXT PRIMARY KEY, device TEXT NOT NULL, subject TEXT NOT NULL,
               outcome TEXT NOT NULL, raw TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS heartbeats (device TEXT PRIMARY KEY, seen_at TEXT NOT NULL);",
        )
        .unwrap();
        let inner = Arc::new(LedgerInner {
            conn: Mutex::new(conn),
            fail_next: AtomicUsize::new(0),
            batches: AtomicUsize::new(0),
            hold: std::sync::atomic::AtomicBool::new(false),
        });
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = Router::new()
            .route(TERMINAL_EVENTS_PATH, post(ingest))
            .with_state(Arc::clone(&inner));
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        TestLedger { url, inner }
    }

    pub fn fail_next(&self, n: usize) {
        self.inner.fail_next.store(n, Ordering::SeqCst);
    }

    /// Records batches from now on without ever answering them.
    pub fn hold(&self, hold: bool) {
        self.inner.hold.store(hold, Ordering::SeqCst);
    }

    pub fn batches(&self) -> usize {
        self.inner.batches.load(Ordering::SeqCst)
    }

    pub fn events(&self) -> i64 {
        let conn = self.inner.conn.lock().unwrap();
        conn.query_row("SELECT count(*) FROM terminal_events", [], |r| r.get(0))
            .unwrap()
    }

    pub fn subjects(&self) -> Vec<String> {
        let conn = self.inner.conn.lock().unwrap();
        let mut stmt = conn
            .prepare("SELECT subject FROM terminal_events ORDER BY rowid")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    pub fn heartbeats(&self) -> i64 {
        let conn = self.inner.conn.lock().unwrap();
        conn.query_row("SELECT count(*) FROM heartbeats", [], |r| r.get(0))
            .unwrap()
    }
}

async fn ingest(
    State(inner): State<Arc<LedgerInner>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    inner.batches.fetch_add(1, Ordering::SeqCst);
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let timestamp: i64 = header(TIMESTAMP_HEADER).parse().unwrap_or(0);
    if header(SIGNATURE_HEADER) != signature(SECRET.as_bytes(), timestamp, &body) {
        return (StatusCode::UNAUTHORIZED, "bad signature").into_response();
    }
    if inner
        .fail_next
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        return (StatusCode::SERVICE_UNAVAILABLE, "ledger busy").into_response();
    }
    let batch: TerminalBatch = match serde_json::from_slice(&body) {
        Ok(batch) => batch,
        Err(err) => return (StatusCode::BAD_REQUEST, err.to_string()).into_response(),
    };
    if batch.records.iter().any(|r| r.subject == POISON) {
        return (
            StatusCode::UNPROCESSABLE_ENTITY,
            r#"{"code":"bad_record","message":"subject refused"}"#,
        )
            .into_response();
    }
    let results = {
        let mut conn = inner.conn.lock().unwrap();
        let tx = conn.transaction().unwrap();
        let mut results = Vec::new();
        for record in &batch.records {
            let inserted = tx
                .execute(
                    "INSERT OR IGNORE INTO terminal_events (key, device, subject, outcome, raw) VALUES (?1, ?2, ?3, ?4, ?5)",
                    rusqlite::params![
                        record.key.to_string(),
                        record.device_serial,
                        record.subject,
                        serde_json::to_string(&record.rule_outcome).unwrap(),
                        record.raw
                    ],
                )
                .unwrap();
            results.push(TerminalResult {
                key: record.key,
                status: 200,
                replayed: inserted == 0,
                code: None,
                message: None,
                hop_ids: Vec::new(),
            });
        }
        for beat in &batch.heartbeats {
            tx.execute(
                "INSERT INTO heartbeats (device, seen_at) VALUES (?1, ?2)
                 ON CONFLICT (device) DO UPDATE SET seen_at = excluded.seen_at",
                rusqlite::params![beat.device_serial, beat.seen_at.to_string()],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        results
    };
    if inner.hold.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    Json(TerminalBatchResponse { results }).into_response()
}

/// Polls `check` every 20 ms for up to `secs` seconds.
pub async fn eventually(secs: u64, mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..secs * 50 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}

/// An ATTLOG line (35 bytes for a 4-digit PIN) in device local time.
pub fn att_line(pin: &str, local: &str) -> String {
    format!("{pin}\t{local}\t0\t1\t0\t0\t0\n")
}

/// `now − secs_ago` as device local time in UTC (`YYYY-MM-DD HH:MM:SS`).
pub fn local_time(secs_ago: i64) -> String {
    let now = listener::unix_now();
    let (y, mo, d, h, mi, s, _) = stockhop::time::UnixMs(now.0 - secs_ago * 1000).to_civil();
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

pub fn attlog_request(serial: &str, body: &str) -> Vec<u8> {
    format!(
        "POST /iclock/cdata?SN={serial}&table=ATTLOG&Stamp=9999 HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: iClock Proxy/1.09\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A framed record from `device` captured `secs_ago` seconds ago.
pub fn framed_record(device: &str, id: &str, person: &str, secs_ago: i64) -> String {
    let at = stockhop::time::UnixMs(listener::unix_now().0 - secs_ago * 1000);
    format!(r#"{{"device":"{device}","id":"{id}","at":"{at}","person":"{person}"}}"#)
}

/// Sends `records` as frames in one write and returns the reply frames' JSON.
pub async fn send_frames(addr: SocketAddr, records: &[String]) -> Vec<String> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut bytes = Vec::new();
    for record in records {
        bytes.extend_from_slice(&(record.len() as u32).to_be_bytes());
        bytes.extend_from_slice(record.as_bytes());
    }
    stream.write_all(&bytes).await.unwrap();
    let mut replies = Vec::new();
    for _ in records {
        let mut len = [0u8; 4];
        tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut len))
            .await
            .expect("answered in time")
            .unwrap();
        let mut payload = vec![0u8; u32::from_be_bytes(len) as usize];
        stream.read_exact(&mut payload).await.unwrap();
        replies.push(String::from_utf8(payload).unwrap());
    }
    replies
}

impl Harness {
    /// Requests the listener has not handled so far.
    pub fn unknown_requests(&self) -> stockhop_site::listener::unknown::UnknownCounts {
        self.running
            .as_ref()
            .expect("listener running")
            .unknown_requests()
    }

    /// The site ledger's terminal events (in the same data directory, fed
    /// by [`start_with_site_ledger`]): subject and capture instant, in order.
    pub fn ledger_events(&self) -> Vec<(String, i64)> {
        let conn = Connection::open(self.data.join("stockhop.sqlite")).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT subject, occurred_at FROM terminal_events ORDER BY occurred_at, subject",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }
}

/// Starts a listener over `dir/data` forwarding to this site's own ledger
/// in the same database, as `stockhop-site serve` does.
pub async fn start_with_site_ledger(dir: &Path, config: ListenerConfig) -> Harness {
    let data = dir.join("data");
    let db = Db::open(&data).unwrap();
    let sink: Arc<dyn LedgerSink> = Arc::new(
        stockhop_site::site::in_process::InProcessLedger::new(db.clone()),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = listener::spawn(config, db.clone(), Some(sink), async {
        let _ = stopped.await;
    })
    .await
    .unwrap();
    Harness {
        http: running.http_addr,
        tcp: running.tcp_addr,
        data,
        db,
        stop: Some(stop),
        running: Some(running),
    }
}

/// A POST to the iclock port with `body`, as the terminals send it.
pub fn iclock_post(path_and_query: &str, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST {path_and_query} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: iClock Proxy/1.09\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

/// A GET to the iclock port, as the terminals send it.
pub fn iclock_get(path_and_query: &str) -> Vec<u8> {
    format!(
        "GET {path_and_query} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: iClock Proxy/1.09\r\nConnection: close\r\n\r\n"
    )
    .into_bytes()
}
