//! The site server against hostile and broken clients, over real HTTP on
//! loopback against real SQLite files (and, for running out of file
//! descriptors, the real binary under a low descriptor limit): nothing
//! crashes, nothing starves, and nothing is stored that the site cannot
//! give back.

use crate::listening;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::ledger_common::{now, Site, TERMINAL_SECRET};
use serde_json::{json, Value};
use stockhop::time::UnixMs;
use stockhop_site::limits::{API_HEAD_DEADLINE, MAX_CLOCK_SKEW_MS, SIGNED_BODY_DEADLINE};
use stockhop_site::store::db::Db;
use stockhop_site::AppState;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `request` on a fresh connection and reads the answer to its close
/// (or to its first `Content-Length` worth of body).
async fn raw_exchange(addr: &str, request: &[u8], within: Duration) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut reply = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = tokio::time::timeout(within, async {
        loop {
            let n = stream.read(&mut chunk).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            reply.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&reply);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(str::to_owned)
                    })
                    .and_then(|v| v.trim().parse::<usize>().ok());
                if length.is_some_and(|n| body.len() >= n) {
                    break;
                }
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no answer within {within:?}");
    String::from_utf8_lossy(&reply).into_owned()
}

/// How many times (50 ms apart, 20 s in all) the descriptor test looks
/// for the server's first failed accept before it gives up.
const ACCEPT_FAILURE_WAIT_POLLS: usize = 400;

fn addr_of(base: &str) -> String {
    base.trim_start_matches("http://").to_owned()
}

#[tokio::test]
async fn out_of_file_descriptors_the_server_backs_off_logs_once_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    // Every port on loopback where the system chooses; info logs name them.
    let listening::Listening {
        mut child,
        http: api_addr,
        terminal_http,
        so_far,
        ..
    } = listening::spawn(
        Command::new("sh")
            .arg("-c")
            .arg(r#"ulimit -n 128 && exec "$0" "$@""#)
            .arg(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(["serve", "--http", "127.0.0.1:0", "--https", "127.0.0.1:0"])
            .args([
                "--terminal-http",
                "127.0.0.1:0",
                "--terminal-tcp",
                "127.0.0.1:0",
            ])
            .arg("--data")
            .arg(dir.path().join("data"))
            .arg("--www")
            .arg(dir.path())
            .env("STOCKHOP_TERMINAL_ALLOW", "T-1")
            .env("RUST_LOG", "info"),
    );
    let api_addr = api_addr.to_string();
    // More idle connections than the process has descriptors: each sends
    // nothing at all.
    let mut idle = Vec::new();
    for _ in 0..140 {
        idle.push(TcpStream::connect(&api_addr).await.unwrap());
    }
    let accept_failures = || so_far.lock().unwrap().matches("accept failed").count();
    // The server has run out: its first failed accept is in the log.
    let mut out_of_descriptors = false;
    for _ in 0..ACCEPT_FAILURE_WAIT_POLLS {
        if accept_failures() > 0 {
            out_of_descriptors = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(out_of_descriptors, "no failed accept was logged");
    // A terminal arrives while no descriptor is free: its connection waits
    // in the backlog and every accept() of it fails for now.
    let terminal = tokio::spawn(async move {
        raw_exchange(
            &terminal_http.to_string(),
            b"GET /iclock/getrequest?SN=T-1 HTTP/1.1\r\n\r\n",
            Duration::from_secs(40),
        )
        .await
    });
    // Idle connections are closed at the head deadline, and the terminal
    // and the health check are answered.
    let health = raw_exchange(
        &api_addr,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        API_HEAD_DEADLINE * 3,
    )
    .await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let answer = terminal.await.unwrap();
    assert!(answer.ends_with("OK"), "{answer}");
    // Counted once descriptors are free again, over the whole time they
    // were not: every accept retried (pausing at most a second) all along.
    let failures = accept_failures();
    assert!(
        (1..=3).contains(&failures),
        "a failing accept is logged once per interval, not once per retry: {failures} lines"
    );
    drop(idle);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test]
async fn a_signed_batch_is_refused_from_its_head_and_its_body_read_under_a_deadline() {
    let site = Site::start().await;
    let addr = addr_of(&site.base);
    // No signature headers and a 1 MiB body that never comes: 401 at once.
    let unsigned = raw_exchange(
        &addr,
        b"POST /v1/terminal/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n",
        Duration::from_secs(3),
    )
    .await;
    assert!(unsigned.starts_with("HTTP/1.1 401"), "{unsigned}");
    // Fresh, well-formed signature headers, and a body that never comes:
    // the wait ends at the deadline with 408.
    let timestamp = now().0 / 1000;
    let signature =
        stockhop_site::ledger::terminal::sign(TERMINAL_SECRET.as_bytes(), timestamp, b"{}");
    let head = format!(
        "POST /v1/terminal/events HTTP/1.1\r\nHost: x\r\nx-stockhop-timestamp: {timestamp}\r\nx-stockhop-signature: {signature}\r\nContent-Length: 1048576\r\n\r\n"
    );
    let stalled = raw_exchange(&addr, head.as_bytes(), SIGNED_BODY_DEADLINE * 2).await;
    assert!(stalled.starts_with("HTTP/1.1 408"), "{stalled}");
    site.stop().await;
}

#[tokio::test]
async fn instants_outside_the_wire_years_are_refused_and_skew_is_bounded() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    site.sync_ok(&hh, &[open]).await;
    let mut scan = hh.scan("EPC-1", "B-1");
    scan["occurred_at"] = json!("9999-12-31T23:59:60.999-23:59");
    let (status, body) = site.sync(&hh, &[scan]).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(site.count("SELECT count(*) FROM hops"), 0);
    // A device clock in year 0000: the scan applies, its skew is bounded.
    hh.seq -= 1;
    let scan = hh.scan("EPC-1", "B-1");
    let request =
        json!({"device_id": "HH-1", "sent_at": "0000-01-01T00:00:00.000Z", "items": [scan]});
    let (status, body) = site
        .post_raw(
            "/v1/sync",
            Some(&hh.token),
            request.to_string().into_bytes(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["outcome"], "applied", "{body}");
    let (status, hops) = site
        .get(&format!("/v1/sessions/{}/hops", hh.session), &hh.token)
        .await;
    assert_eq!(status, 200);
    let hops: stockhop::wire::SessionHops = serde_json::from_value(hops).unwrap();
    assert_eq!(hops.hops[0].device_clock_skew_ms, MAX_CLOCK_SKEW_MS);
    site.stop().await;
}

#[tokio::test]
async fn an_undo_captured_long_before_its_target_is_outside_the_window() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let t0 = UnixMs(now().0 - 600_000);
    let open = hh.item_at(
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away"}),
        t0,
    );
    let scan = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "bin": "B-1"}),
        t0,
    );
    let early = hh.item_at(
        "undo",
        json!({"target_key": scan["key"]}),
        UnixMs(t0.0 - 86_400_000),
    );
    let just_before = hh.item_at(
        "undo",
        json!({"target_key": scan["key"]}),
        UnixMs(t0.0 - 1000),
    );
    let results = site.sync_ok(&hh, &[open, scan, early, just_before]).await;
    assert_eq!(results[2]["outcome"], "rejected", "{}", results[2]);
    assert_eq!(results[2]["reason"], "undo_window_expired");
    assert_eq!(results[3]["outcome"], "applied", "{}", results[3]);
    site.stop().await;
}

#[tokio::test]
async fn free_form_fields_are_bounded_and_identifiers_take_no_control_characters() {
    let site = Site::start().await;
    let mut hh = site.handheld("HH-1").await;
    let huge = "x".repeat(1_000_000);
    let open = hh.item(
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away", "context": {"note": huge}}),
    );
    let results = site.sync_ok(&hh, &[open]).await;
    assert_eq!(results[0]["status"], 422, "{}", results[0]);
    assert_eq!(results[0]["code"], "INVALID_ITEM");
    hh.seq -= 1;
    let open = hh.open("op-1");
    site.sync_ok(&hh, &[open]).await;
    let mut extra = hh.scan("EPC-1", "B-1");
    extra["body"]["comment"] = json!(huge);
    let results = site.sync_ok(&hh, &[extra]).await;
    assert_eq!(results[0]["status"], 422, "{}", results[0]);
    for (epc, bin) in [
        ("EPC\u{0}1", "B-1"),
        ("EPC-1", "B\u{0}1"),
        ("EPC-1", "B-1\n"),
    ] {
        hh.seq -= 1;
        let scan = hh.scan(epc, bin);
        let results = site.sync_ok(&hh, &[scan]).await;
        assert_eq!(results[0]["status"], 422, "{epc:?} {bin:?}: {}", results[0]);
    }
    assert_eq!(site.count("SELECT count(*) FROM hops"), 0);
    assert_eq!(
        site.count("SELECT coalesce(max(length(item)), 0) FROM receipts"),
        0
    );
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filling_a_long_gap_applies_the_backlog_in_chunks_others_go_between() {
    const BACKLOG: u64 = 2_000;
    let site = Arc::new(Site::start_stocked().await);
    import_units(&site, (0..BACKLOG).map(|i| format!("EPC-A-{i}")));
    let mut a = site.handheld("HH-A").await;
    let mut b = site.handheld("HH-B").await;
    let open_a = a.open("op-a");
    let open_b = b.open("op-b");
    site.sync_ok(&b, &[open_b]).await;
    // Everything after A's open arrives first and is buffered.
    let scans: Vec<Value> = (0..BACKLOG)
        .map(|i| a.scan(&format!("EPC-A-{i}"), "B-1"))
        .collect();
    for batch in scans.chunks(50) {
        let results = site.sync_ok(&a, batch).await;
        assert!(results.iter().all(|r| r["status"] == 202));
    }
    // B scans continuously while A's gap fills.
    let stop = Arc::new(AtomicBool::new(false));
    let scanning = {
        let (site, stop) = (Arc::clone(&site), Arc::clone(&stop));
        tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                // The stocked units over and over: each scan is a hop.
                let scan = b.scan(&format!("EPC-{}", i % 100), "B-2");
                site.sync_ok(&b, &[scan]).await;
                i += 1;
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    site.sync_ok(&a, &[open_a]).await;
    let applied_a = "SELECT count(*) FROM hops WHERE device_id = 'HH-A'";
    for _ in 0..600 {
        if site.count(applied_a) == BACKLOG as i64 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::SeqCst);
    scanning.await.unwrap();
    assert_eq!(
        site.count(applied_a),
        BACKLOG as i64,
        "the whole backlog applied"
    );
    assert_eq!(
        site.count(
            "SELECT count(*) FROM hops h1 JOIN hops h2 ON h1.device_id = h2.device_id
             AND h1.client_seq < h2.client_seq AND h1.hop_id > h2.hop_id
             WHERE h1.device_id = 'HH-A'"
        ),
        0,
        "in client_seq order"
    );
    assert!(
        site.count(
            "SELECT count(*) FROM hops WHERE device_id = 'HH-B' AND hop_id >
               (SELECT min(hop_id) FROM hops WHERE device_id = 'HH-A') AND hop_id <
               (SELECT max(hop_id) FROM hops WHERE device_id = 'HH-A')"
        ) > 0,
        "another device's scans applied while the backlog drained"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM receipts WHERE state = 'buffered'"),
        0
    );
}

#[tokio::test]
async fn a_terminal_cannot_take_a_handhelds_identity() {
    let site = Site::start().await;
    let hh = site.handheld("HH-2").await;
    let beat = json!({"sent_at": now().to_string(), "queue_depth": 3, "app_version": "0.1.0"});
    let (status, _) = site
        .post_raw(
            "/v1/devices/HH-2/heartbeat",
            Some(&hh.token),
            beat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(status, 200);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = stockhop_site::listener::ListenerConfig {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        tcp_addr: "127.0.0.1:0".parse().unwrap(),
        allow: stockhop_site::listener::config::Allowlist::Any,
        ..Default::default()
    };
    let sink: Arc<dyn stockhop_site::listener::LedgerSink> = Arc::new(
        stockhop_site::site::in_process::InProcessLedger::new(site.db.clone()),
    );
    let listener = stockhop_site::listener::spawn(config, site.db.clone(), Some(sink), async {
        let _ = stopped.await;
    })
    .await
    .unwrap();
    let reply = raw_exchange(
        &listener.http_addr.to_string(),
        b"GET /iclock/getrequest?SN=HH-2 HTTP/1.1\r\n\r\n",
        Duration::from_secs(10),
    )
    .await;
    assert!(reply.ends_with("OK"), "{reply}");
    let forwarded = "SELECT count(*) FROM listener_heartbeat WHERE device_serial = 'HH-2' AND forwarded_seen_at IS NOT NULL";
    for _ in 0..250 {
        if site.count(forwarded) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        site.count(forwarded),
        1,
        "the terminal's sighting reached the ledger"
    );
    let seen = site
        .db
        .call_blocking(|conn| stockhop_site::ledger::devices::last_seen(conn, "HH-2"))
        .unwrap()
        .unwrap();
    assert_eq!(seen.source, "handheld");
    assert_eq!(seen.queue_depth, Some(3));
    let _ = stop.send(());
    listener.join().await;
    site.stop().await;
}

async fn serve_www(www: &Path, data: &Path) -> (String, tokio::sync::oneshot::Sender<()>) {
    let db = Db::open(data).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let state = AppState {
        db,
        www_dir: www.to_owned(),
        ledger: Default::default(),
    };
    tokio::spawn(async move {
        stockhop_site::serve(listener, state, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (base, stop)
}

#[tokio::test]
async fn the_file_server_stays_inside_www_and_answers_404_for_what_it_will_not_serve() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(www.join("index.html"), "<title>Stockhop</title>").unwrap();
    std::fs::write(www.join(".env"), "SECRET=1").unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(&outside, www.join("leak")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), www.join("secret.txt")).unwrap();
    let (base, stop) = serve_www(&www, &dir.path().join("data")).await;
    let client = reqwest::Client::new();
    let status = |path: String| {
        let client = client.clone();
        let url = format!("{base}{path}");
        async move { client.get(url).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(status("/index.html".into()).await, 200);
    for path in [
        "/leak/secret.txt".to_owned(),
        "/secret.txt".to_owned(),
        "/.env".to_owned(),
        "/%2eenv".to_owned(),
        format!("/{}", "a".repeat(300)),
    ] {
        assert_eq!(status(path.clone()).await, 404, "{path}");
    }
    let _ = stop.send(());
}

#[tokio::test]
async fn a_drain_left_parked_by_a_crash_goes_on_with_the_devices_next_request() {
    const BACKLOG: u64 = 600;
    let site = Site::start_stocked().await;
    import_units(&site, (100..BACKLOG).map(|i| format!("EPC-{i}")));
    let mut a = site.handheld("HH-A").await;
    let open = a.open("op-a");
    let scans: Vec<Value> = (0..BACKLOG)
        .map(|i| a.scan(&format!("EPC-{i}"), "B-1"))
        .collect();
    for batch in scans.chunks(50) {
        site.sync_ok(&a, batch).await;
    }
    // The gap fills in process and the server "dies" before any further
    // chunk: the session's cursor stays parked on a buffered slot.
    let token = a.token.clone();
    let parked = site.db.call_blocking(move |conn| {
        let device = stockhop_site::ledger::devices::authenticate(conn, &token)
            .unwrap()
            .unwrap();
        let open = stockhop_site::ledger::sync::Incoming::from_value(&open).unwrap();
        stockhop_site::ledger::sync::run_parked(conn, &device, now(), &[open], &[false], now())
            .unwrap()
            .parked
    });
    assert_eq!(parked, [a.session.to_string()]);
    let applied = "SELECT count(*) FROM hops WHERE device_id = 'HH-A'";
    assert!(site.count(applied) < BACKLOG as i64);
    // The device resends what it was answered `buffered` for.
    let results = site.sync_ok(&a, &scans[scans.len() - 1..]).await;
    assert!(results[0]["replayed"] == true, "{}", results[0]);
    for _ in 0..300 {
        if site.count(applied) == BACKLOG as i64 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(site.count(applied), BACKLOG as i64);
    assert_eq!(
        site.count("SELECT count(*) FROM receipts WHERE state = 'buffered'"),
        0
    );
    site.stop().await;
}

/// Makes `epcs` known to the site as new units, beside the stocked ones:
/// put-away scans only units the site knows.
fn import_units(site: &Site, epcs: impl Iterator<Item = String>) {
    let rows: String = epcs.map(|epc| format!("{epc},,SKU-1,new,\n")).collect();
    site.import("units", &format!("epc,code,sku,state,bin\n{rows}"));
}
