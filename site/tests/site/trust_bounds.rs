//! Trust and bounds, over real sockets on loopback against real SQLite
//! files (and the real binary where a command is the interface): each
//! site its own secret at a central, identifiers checked at every
//! ingress, `/metrics` label values escaped, a full disk answered 503 on a
//! tmpfs the test mounts, sign-in throttling, the PWA's security headers
//! and redirects to the configured name, instants from outside taken
//! without overflow, and online backups that a site starts on.

use crate::ledger_common;
use crate::listener_support;

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ledger_common::{now, Handheld, Site};
use serde_json::{json, Value};
use stockhop_site::ledger::{self, devices::Profile, LedgerState};
use stockhop_site::net::delivery::signature;
use stockhop_site::store::db::Db;
use stockhop_site::terminal_wire::{SIGNATURE_HEADER, TERMINAL_EVENTS_PATH, TIMESTAMP_HEADER};
use stockhop_site::AppState;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod floods;
mod imports;

const BIN: &str = env!("CARGO_BIN_EXE_stockhop-site");
const SHARED: &str = "the-centrals-old-shared-secret";

/// A site server over `state` on a loopback port, through the site's own
/// connection loop (so every request carries its peer's address).
struct Served {
    base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Served {
    async fn start(state: AppState) -> Served {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            stockhop_site::serve(listener, state, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Served {
            base,
            stop: Some(stop),
            task: Some(task),
        }
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
    }
}

fn state(db: Db, data: &Path, ledger: LedgerState) -> AppState {
    AppState {
        db,
        www_dir: data.join("www"),
        ledger,
    }
}

/// Runs the binary with `args`; returns its stdout, panicking with its
/// stderr when it fails.
fn run(args: &[&str], data: &Path) -> String {
    let output = Command::new(BIN)
        .args(args)
        .arg("--data")
        .arg(data)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// POSTs `body` signed with `secret` to `path`.
async fn post_signed(base: &str, path: &str, secret: &str, body: &str) -> (u16, Value) {
    let timestamp = now().0 / 1000;
    let response = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .header(TIMESTAMP_HEADER, timestamp.to_string())
        .header(
            SIGNATURE_HEADER,
            signature(secret.as_bytes(), timestamp, body.as_bytes()),
        )
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn post_batch(base: &str, site_id: &str, secret: &str) -> (u16, Value) {
    let body = json!({"site_id": site_id, "hops": []}).to_string();
    post_signed(base, "/v1/central/hops", secret, &body).await
}

fn central_sites(db: &Db) -> Vec<String> {
    db.call_blocking(|conn| {
        let mut select = conn
            .prepare("SELECT site_id FROM central_sites ORDER BY site_id")
            .unwrap();
        select
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    })
}

#[tokio::test]
async fn a_central_takes_a_sites_batch_only_under_that_sites_own_secret() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("central");
    drop(Db::open(&data).unwrap());
    let east = run(&["central", "add-site", "DC-EAST"], &data);
    let west = run(&["central", "add-site", "DC-WEST"], &data);
    assert_eq!(east.len(), 64, "the secret alone on stdout: {east:?}");
    assert_ne!(east, west);
    let again = Command::new(BIN)
        .args(["central", "add-site", "DC-EAST", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(!again.status.success(), "a site's secret is minted once");
    let bad = Command::new(BIN)
        .args(["central", "add-site", "<b>DC</b>", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("site_id"));

    let db = Db::open(&data).unwrap();
    let ledger = LedgerState::new(None).with_central_secret(Some(SHARED.into()));
    let central = Served::start(state(db.clone(), &data, ledger)).await;

    // Another site's secret, or the shared one, cannot post as DC-EAST.
    for (secret, whose) in [(&west, "DC-WEST's"), (&SHARED.to_owned(), "the shared")] {
        let (status, body) = post_batch(&central.base, "DC-EAST", secret).await;
        assert_eq!(status, 401, "{whose} secret: {body}");
        assert_eq!(body["code"], "SITE_MISMATCH", "{body}");
    }
    assert!(
        central_sites(&db).is_empty(),
        "nothing stored for a forgery"
    );
    let (status, body) = post_batch(&central.base, "DC-EAST", &east).await;
    assert_eq!(status, 200, "{body}");
    // A site without a secret of its own still signs with the shared one.
    let (status, body) = post_batch(&central.base, "DC-NORTH", SHARED).await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = post_batch(&central.base, "DC-NORTH", "a-guess").await;
    assert_eq!(status, 401);
    assert_eq!(central_sites(&db), ["DC-EAST", "DC-NORTH"]);
    central.stop().await;

    // Without the shared secret, a site with none of its own is refused.
    let ledger = LedgerState::new(None);
    let central = Served::start(state(db.clone(), &data, ledger)).await;
    let (status, body) = post_batch(&central.base, "DC-NORTH", SHARED).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "SITE_MISMATCH");
    let (status, body) = post_batch(&central.base, "DC-WEST", &west).await;
    assert_eq!(status, 200, "{body}");
    central.stop().await;
}

#[tokio::test]
async fn a_site_id_cannot_write_lines_into_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("central");
    let db = Db::open(&data).unwrap();
    let admin = db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap();
    let ledger = LedgerState::new(None).with_central_secret(Some(SHARED.into()));
    let central = Served::start(state(db.clone(), &data, ledger)).await;
    let forged = "DC-SOUTH\"} 1\nstockhop_site_queue_depth 999999\nstockhop_fake{x=\"";
    let (status, body) = post_batch(&central.base, forged, SHARED).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("site_id"),
        "{body}"
    );
    assert!(central_sites(&db).is_empty());

    // A row an older central took before ids were checked is escaped.
    db.call_blocking(|conn| {
        conn.execute(
            "INSERT INTO central_sites (site_id, first_seen_at, last_seen_at) VALUES (?1, 0, 0)",
            [forged],
        )
    })
    .unwrap();
    let text = reqwest::Client::new()
        .get(format!("{}/metrics", central.base))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !text.lines().any(|line| line.starts_with("stockhop_fake")
            || line.starts_with("stockhop_site_queue_depth 999999")),
        "{text}"
    );
    assert!(
        text.contains(
            r#"site_id="DC-SOUTH\"} 1\nstockhop_site_queue_depth 999999\nstockhop_fake{x=\""}"#
        ),
        "{text}"
    );
    central.stop().await;
}

#[tokio::test]
async fn markup_in_an_identifier_is_refused_at_every_ingress_naming_the_field() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.item(
        "open_session",
        json!({"operator_id": "<script>alert(1)</script>", "mode": "put_away", "context": {}}),
    );
    let results = site.sync_ok(&hh, &[open]).await;
    assert_eq!(results[0]["status"], 422, "{}", results[0]);
    assert!(results[0]["message"]
        .as_str()
        .unwrap()
        .contains("operator_id"));
    hh.seq -= 1;
    let open = hh.open("op-1");
    site.sync_applied(&hh, &[open]).await;
    for (epc, bin, field) in [
        ("EPC-1", "<svg/onload=alert(1)>", "bin"),
        ("<svg/onload=alert(1)>", "B-1", "epc"),
        ("EPC-1", &"B".repeat(65), "bin"),
    ] {
        let scan = hh.scan(epc, bin);
        let results = site.sync_ok(&hh, &[scan]).await;
        assert_eq!(results[0]["status"], 422, "{}", results[0]);
        let message = results[0]["message"].as_str().unwrap();
        assert!(message.starts_with(field), "{message}");
        hh.seq -= 1;
    }
    assert_eq!(site.count("SELECT count(*) FROM hops"), 0);
    site.stop().await;

    // The terminal listener's framed JSON port: the device and the tag.
    let dir = tempfile::tempdir().unwrap();
    let listener =
        listener_support::start_with_site_ledger(dir.path(), listener_support::config("bridge-1"))
            .await;
    let at = now().to_string();
    for (record, field) in [
        (
            format!(r#"{{"device":"<script>","id":"e1","at":"{at}","person":"1001"}}"#),
            "device",
        ),
        (
            format!(
                r#"{{"device":"bridge-1","id":"e2","at":"{at}","epc":"<svg/onload=alert(1)>"}}"#
            ),
            "epc",
        ),
    ] {
        let replies = listener_support::send_frames(listener.tcp, &[record]).await;
        let reply: Value = serde_json::from_str(&replies[0]).unwrap();
        assert_eq!(reply["error"], "bad_record", "{reply}");
        assert!(
            reply["message"].as_str().unwrap().starts_with(field),
            "{reply}"
        );
    }
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 0);
    listener.stop().await;
}

#[tokio::test]
async fn a_signature_timestamp_of_i64_min_is_refused_not_a_crash() {
    let site = Site::start().await;
    let body = r#"{"records":[],"heartbeats":[]}"#;
    for timestamp in [i64::MIN, i64::MAX, i64::MIN + 1] {
        let response = site
            .client
            .post(format!("{}{TERMINAL_EVENTS_PATH}", site.base))
            .header("content-type", "application/json")
            .header(TIMESTAMP_HEADER, timestamp.to_string())
            .header(
                SIGNATURE_HEADER,
                signature(
                    ledger_common::TERMINAL_SECRET.as_bytes(),
                    timestamp,
                    body.as_bytes(),
                ),
            )
            .body(body)
            .send()
            .await
            .expect("an answer, not a dropped connection");
        assert_eq!(response.status().as_u16(), 401, "timestamp {timestamp}");
    }
    let health = site
        .client
        .get(format!("{}/healthz", site.base))
        .send()
        .await;
    assert_eq!(health.unwrap().status().as_u16(), 200);
    site.stop().await;
}

#[tokio::test]
async fn failed_sign_ins_are_throttled_per_address_counted_and_logged() {
    let site = Site::start().await;
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap();
    let login = |token: &str| {
        site.client
            .post(format!("{}/v1/site/login", site.base))
            .json(&json!({ "token": token }))
            .send()
    };
    let started = Instant::now();
    let mut answers = Vec::new();
    for i in 0..12 {
        let response = login(&format!("guess-{i}")).await.unwrap();
        answers.push((
            response.status().as_u16(),
            response
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_owned()),
        ));
    }
    let elapsed = started.elapsed();
    assert!(
        answers[..10].iter().all(|(status, _)| *status == 401),
        "{answers:?}"
    );
    for (status, retry_after) in &answers[10..] {
        assert_eq!(*status, 429, "{answers:?}");
        let secs: u64 = retry_after.as_deref().unwrap().parse().unwrap();
        assert!((1..=60).contains(&secs), "{secs}");
    }
    // The right token is taken from a throttled address all the same: an
    // admin behind the same NAT or proxy as the noise is not locked out.
    assert_eq!(login(&admin).await.unwrap().status().as_u16(), 200);
    let status = |token: String| {
        site.client
            .get(format!("{}/v1/site/status", site.base))
            .bearer_auth(token)
            .send()
    };
    assert_eq!(status(admin.clone()).await.unwrap().status().as_u16(), 200);
    // Bearer guesses count the same way.
    let bearer = status("another-guess".to_owned()).await.unwrap();
    assert_eq!(bearer.status().as_u16(), 429);
    assert_eq!(login("guess-after").await.unwrap().status().as_u16(), 429);
    let metrics = site.ledger.metrics.sign_in_failures.get();
    assert_eq!(metrics, 10);
    assert_eq!(site.ledger.metrics.sign_ins_throttled.get(), 4);
    eprintln!(
        "sign-in: 10 failures then 429 within {:?} ({:.0} guesses/s before the lock, then 10 a minute)",
        elapsed,
        12.0 / elapsed.as_secs_f64()
    );
    site.stop().await;
}

#[tokio::test]
async fn the_pwa_is_served_with_a_policy_nosniff_and_no_framing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let www = data.join("www");
    std::fs::create_dir_all(&www).unwrap();
    for file in ["index.html", "trust.html", "app.js", "sw.js", "app.css"] {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../www")
                .join(file),
            www.join(file),
        )
        .unwrap();
    }
    let db = Db::open(&data).unwrap();
    let served = Served::start(state(db, &data, LedgerState::new(None))).await;
    let client = reqwest::Client::new();
    for path in [
        "/",
        "/index.html",
        "/trust.html",
        "/app.js",
        "/sw.js",
        "/nothing-here",
    ] {
        let response = client
            .get(format!("{}{path}", served.base))
            .send()
            .await
            .unwrap();
        let headers = response.headers();
        let policy = headers
            .get("content-security-policy")
            .unwrap_or_else(|| panic!("{path}: no policy"))
            .to_str()
            .unwrap();
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{path}: {policy}"
        );
        assert!(policy.contains("object-src 'none'"), "{path}: {policy}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        if path == "/trust.html" {
            assert!(!policy.contains("script-src"), "{policy}");
            assert!(policy.contains("default-src 'none'"), "{policy}");
        } else {
            assert!(
                policy.contains("script-src 'self' 'wasm-unsafe-eval';"),
                "{policy}"
            );
            assert!(!policy.contains("unsafe-inline"), "{policy}");
        }
    }
    // The page runs no inline script and no inline handler: the policy
    // would block them.
    let index = std::fs::read_to_string(www.join("index.html")).unwrap();
    assert!(!index.contains("<script>") && !index.contains(" onclick="));
    served.stop().await;
}

/// This machine's first non-loopback IPv4 address.
fn lan_address() -> Option<IpAddr> {
    if_addrs::get_if_addrs()
        .unwrap()
        .into_iter()
        .map(|iface| iface.ip())
        .find(|ip| ip.is_ipv4() && !ip.is_loopback())
}

#[tokio::test]
async fn the_plain_ports_redirect_names_the_configured_site_never_the_requests_host() {
    let Some(lan) = lan_address() else {
        eprintln!(
            "no non-loopback IPv4 address here: a LAN peer cannot be made on this machine; skipped"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = Db::open(&data).unwrap();
    let site = stockhop_site::app(state(db, &data, LedgerState::new(None)));
    let router =
        stockhop_site::site::lan::https_only_off_loopback(site, "https://stockhop.lan:8443");
    let listener = tokio::net::TcpListener::bind((lan, 0)).await.unwrap();
    let to = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        stockhop_site::net::server::serve_connections(listener, None, router, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(lan, 0)).unwrap();
    let mut stream = socket.connect(to).await.unwrap();
    stream
        .write_all(b"GET /index.html HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    assert!(reply.starts_with("HTTP/1.1 308"), "{reply}");
    let lower = reply.to_ascii_lowercase();
    assert!(
        lower.contains("location: https://stockhop.lan:8443/index.html"),
        "{reply}"
    );
    assert!(!lower.contains("evil.example"), "{reply}");
    let _ = stop.send(());
    task.await.unwrap();
}

// --- A full disk ------------------------------------------------------------

/// A tmpfs of `mib` MiB mounted at a fresh directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(mib: u64) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|err| err.to_string())?;
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|err| format!("mount: {err}"))?;
        if !output.status.success() {
            return Err(format!(
                "mount -t tmpfs: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        Ok(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a server task that outlives a failed test may still
        // hold a file open.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Fills the file system at `dir` with a file until at most `leave`
/// bytes are free, in a file `name`; returns the file.
fn fill(dir: &Path, leave: u64, name: &str) -> PathBuf {
    use std::io::Write;
    let path = dir.join(name);
    let mut file = std::fs::File::create(&path).unwrap();
    let chunk = vec![0xA5u8; 256 * 1024];
    loop {
        let stat = rustix::fs::statvfs(dir).unwrap();
        let free = stat.f_bavail * stat.f_frsize;
        if free <= leave {
            break;
        }
        let n = (free - leave).min(chunk.len() as u64) as usize;
        if file.write_all(&chunk[..n]).is_err() {
            break;
        }
    }
    let _ = file.sync_all();
    path
}

async fn healthz(base: &str) -> (u16, Value) {
    let response = reqwest::get(format!("{base}/healthz")).await.unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

/// Sends a sync request of `items` as `hh`; returns the status, the
/// Retry-After seconds and the body.
async fn sync_as(base: &str, hh: &Handheld, items: &[Value]) -> (u16, Option<u64>, Value) {
    let body = json!({"device_id": hh.device_id, "sent_at": now().to_string(), "items": items});
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/sync"))
        .bearer_auth(&hh.token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.parse().ok());
    (
        status,
        retry_after,
        response.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn a_full_disk_answers_503_storage_full_loses_nothing_and_recovers() {
    let tmpfs = match Tmpfs::mount(32) {
        Ok(tmpfs) => tmpfs,
        Err(why) => {
            eprintln!("cannot mount a tmpfs here ({why}): the full-disk test is skipped");
            return;
        }
    };
    let data = tmpfs.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    stock(&data);
    let db = Db::open(&data).unwrap();
    let admin = db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap();
    let token = db
        .call_blocking(|conn| ledger::devices::add(conn, "HH-1", Profile::Mc3390xr, true, now()))
        .unwrap();
    let token_2 = db
        .call_blocking(|conn| ledger::devices::add(conn, "HH-2", Profile::Mc3390xr, true, now()))
        .unwrap();
    const MIN_FREE: u64 = 8 * 1024 * 1024;
    let ledger = LedgerState::new(None).with_storage(Some(data.clone()), MIN_FREE);
    let served = Served::start(state(db.clone(), &data, ledger)).await;
    let client = reqwest::Client::new();
    let mut hh = Handheld::new("HH-1", token.clone());
    let acknowledged = hh.open("op-1");
    let (status, _, body) = sync_as(&served.base, &hh, std::slice::from_ref(&acknowledged)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(healthz(&served.base).await.0, 200);

    // Below the watermark: refused before anything is written.
    let filler = fill(tmpfs.path(), MIN_FREE / 2, "filler-1");
    tokio::time::sleep(stockhop_site::store::storage::CHECK_INTERVAL).await;
    let close = hh.item("close_session", json!({}));
    let (status, retry_after, body) =
        sync_as(&served.base, &hh, std::slice::from_ref(&close)).await;
    eprintln!("full disk (below the watermark): {status} {body} Retry-After {retry_after:?}");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["code"], "STORAGE_FULL", "{body}");
    assert!(retry_after.is_some_and(|secs| secs > 0));
    let heartbeat = client
        .post(format!("{}/v1/devices/HH-1/heartbeat", served.base))
        .bearer_auth(&token)
        .json(&json!({"sent_at": now().to_string(), "queue_depth": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(heartbeat.status().as_u16(), 503);
    assert!(heartbeat.headers().contains_key("retry-after"));
    let (status, health) = healthz(&served.base).await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["storage"], "full");
    let view: Value = client
        .get(format!("{}/v1/site/status", served.base))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(view["storage"], "full", "{view}");
    let metrics = client
        .get(format!("{}/metrics", served.base))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("stockhop_storage_full 1"), "{metrics}");
    served.stop().await;

    // Truly full, with no watermark to stop it first: the database's own
    // refusal is the same answer, never a 500.
    let ledger = LedgerState::new(None).with_storage(Some(data.clone()), 0);
    let served = Served::start(state(db.clone(), &data, ledger)).await;
    let filler_2 = fill(tmpfs.path(), 0, "filler-2");
    let mut other = Handheld::new("HH-2", token_2);
    let mut database_full = None;
    for round in 0..400 {
        let mut items = vec![other.open("op-2")];
        for i in 0..48 {
            let bin = format!("B-{}", (round + i) % 9 + 1);
            let mut scan = other.scan(&format!("EPC-{i}"), &bin);
            scan["body"]["note"] = json!("n".repeat(1000));
            items.push(scan);
        }
        items.push(other.item("close_session", json!({})));
        let (status, retry_after, body) = sync_as(&served.base, &other, &items).await;
        if round % 20 == 0 {
            let stat = rustix::fs::statvfs(tmpfs.path()).unwrap();
            eprintln!(
                "round {round}: {status} free {} {}",
                stat.f_bavail * stat.f_frsize,
                body.to_string().chars().take(300).collect::<String>()
            );
        }
        assert_ne!(status, 500, "{body}");
        if status == 503 {
            database_full = Some((body, retry_after));
            break;
        }
        other.new_session();
    }
    let (body, retry_after) = database_full.expect("the disk never filled");
    eprintln!("full disk (SQLITE_FULL): 503 {body} Retry-After {retry_after:?}");
    assert_eq!(body["code"], "STORAGE_FULL", "{body}");
    assert!(retry_after.is_some());
    assert_eq!(healthz(&served.base).await.0, 503);

    // Space returns: the site takes writes again by itself.
    std::fs::remove_file(&filler).unwrap();
    std::fs::remove_file(&filler_2).unwrap();
    let mut recovered = false;
    for _ in 0..60 {
        if healthz(&served.base).await.0 == 200 {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(recovered, "the site did not recover by itself");
    let (status, _, body) = sync_as(&served.base, &hh, &[close]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["outcome"], "applied", "{body}");
    let key = acknowledged["key"].as_str().unwrap().to_owned();
    let kept: i64 = db.call_blocking(|conn| {
        conn.query_row(
            "SELECT count(*) FROM receipts WHERE key = ?1",
            [key],
            |row| row.get(0),
        )
        .unwrap()
    });
    assert_eq!(kept, 1, "the acknowledged item is kept");
    let check: String = db.call_blocking(|conn| {
        conn.query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap()
    });
    assert_eq!(check, "ok");
    served.stop().await;
    drop(db);
}

// --- Backups -----------------------------------------------------------------

/// The whole site on `data`, in-process on loopback ports of its own
/// choosing, with no free-space floor (the backups fill the disk a little).
async fn serve_whole_site(data: &Path) -> (stockhop_site::Site, String) {
    let site = stockhop_site::Site::start(stockhop_site::SiteConfig {
        min_free_bytes: 0,
        ..stockhop_site::SiteConfig::on_loopback(data.to_path_buf())
    })
    .await
    .unwrap();
    let base = format!("http://{}", site.http_addr());
    (site, base)
}

/// Syncs sessions of 20 scans as fast as the site answers until `stop` is
/// set, adding the key of every item the site answered to `acknowledged`.
async fn sync_until(
    base: String,
    mut hh: Handheld,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    acknowledged: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    let client = reqwest::Client::new();
    let mut n = 0;
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let mut items = vec![];
        if hh.seq == 0 {
            items.push(hh.open("op-1"));
        }
        for _ in 0..20 {
            items.push(hh.scan(&format!("EPC-{}", n % 100), &format!("B-{}", n % 9 + 1)));
            n += 1;
        }
        let body = json!({"device_id": hh.device_id, "sent_at": now().to_string(), "items": items});
        let response = client
            .post(format!("{base}/v1/sync"))
            .bearer_auth(&hh.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        let results: Value = response.json().await.unwrap();
        let mut held = acknowledged.lock().unwrap();
        for (item, result) in items.iter().zip(results["results"].as_array().unwrap()) {
            assert!(result["status"].as_u64().unwrap() < 500, "{result}");
            held.push(item["key"].as_str().unwrap().to_owned());
        }
    }
}

fn stock(data: &Path) {
    let db = Db::open(data).unwrap();
    let bins: String = (1..=9).map(|i| format!("B-{i},Z-1,L-1\n")).collect();
    let units: String = (0..100).map(|i| format!("EPC-{i},,SKU-1,new,\n")).collect();
    for (kind, text) in [
        (
            ledger::import::Kind::Bins,
            format!("bin,zone,location\n{bins}"),
        ),
        (
            ledger::import::Kind::Units,
            format!("epc,code,sku,state,bin\n{units}"),
        ),
    ] {
        let path = data.join("import.csv");
        std::fs::write(&path, text).unwrap();
        db.call_blocking(|conn| ledger::import::import(conn, kind, &path, now()))
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_while_syncing_holds_every_item_acknowledged_before_it_began() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    stock(&data);
    let token = Db::open(&data)
        .unwrap()
        .call_blocking(|conn| ledger::devices::add(conn, "HH-1", Profile::Mc3390xr, true, now()))
        .unwrap();
    let (site, base) = serve_whole_site(&data).await;
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let syncing = tokio::spawn(sync_until(
        base,
        Handheld::new("HH-1", token),
        stop.clone(),
        acknowledged.clone(),
    ));
    let enough =
        listener_support::eventually(60, || acknowledged.lock().unwrap().len() >= 400).await;
    assert!(enough, "the handheld did not sync");

    // A backup killed (SIGKILL) at any point leaves no DEST or a whole
    // one, never a half one, and the site goes on.
    for (i, delay_ms) in [0, 2, 5, 10, 20, 40].into_iter().enumerate() {
        let killed_dest = dir.path().join(format!("killed-{i}.sqlite"));
        let mut backup = Command::new(BIN)
            .arg("backup")
            .arg(&killed_dest)
            .arg("--data")
            .arg(&data)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = backup.kill();
        let status = backup.wait().unwrap();
        if killed_dest.exists() {
            assert!(status.success() || status.code().is_none());
            let copy = rusqlite::Connection::open(&killed_dest).unwrap();
            let check: String = copy
                .query_row("PRAGMA quick_check", [], |row| row.get(0))
                .unwrap();
            assert_eq!(check, "ok", "a whole copy or none");
        }
    }

    let before: Vec<String> = acknowledged.lock().unwrap().clone();
    let dest = dir.path().join("backup.sqlite");
    let started = Instant::now();
    let output = Command::new(BIN)
        .arg("backup")
        .arg(&dest)
        .arg("--data")
        .arg(&data)
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let during = acknowledged.lock().unwrap().len();
    stop.store(true, Ordering::SeqCst);
    syncing.await.unwrap();
    assert!(
        during > before.len(),
        "the handheld kept syncing during the backup"
    );

    // A second backup to the same DEST is refused: never overwritten.
    let again = Command::new(BIN)
        .arg("backup")
        .arg(&dest)
        .arg("--data")
        .arg(&data)
        .output()
        .unwrap();
    assert!(!again.status.success());
    // A DEST that is a folder is refused, saying to name a file.
    let folder = Command::new(BIN)
        .arg("backup")
        .arg(dir.path())
        .arg("--data")
        .arg(&data)
        .output()
        .unwrap();
    assert!(!folder.status.success());
    assert!(
        String::from_utf8_lossy(&folder.stderr).contains("is a folder"),
        "{}",
        String::from_utf8_lossy(&folder.stderr)
    );
    // A DEST in a folder that does not exist is refused, naming the folder.
    let nowhere = dir.path().join("no-such-folder");
    let missing_folder = Command::new(BIN)
        .arg("backup")
        .arg(nowhere.join("backup.sqlite"))
        .arg("--data")
        .arg(&data)
        .output()
        .unwrap();
    assert!(!missing_folder.status.success());
    let said = String::from_utf8_lossy(&missing_folder.stderr);
    assert!(
        said.contains(&format!("{} is not a folder", nowhere.display())),
        "{said}"
    );

    // A site started on the copy holds every item acknowledged before.
    let restored = dir.path().join("restored");
    std::fs::create_dir_all(&restored).unwrap();
    std::fs::copy(&dest, restored.join("stockhop.sqlite")).unwrap();
    let size = std::fs::metadata(&dest).unwrap().len();
    let restored_site = Site::start_on(restored.clone()).await;
    let held: std::collections::HashSet<String> = restored_site.db.call_blocking(|conn| {
        let mut select = conn.prepare("SELECT key FROM receipts").unwrap();
        select
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    let missing: Vec<_> = before.iter().filter(|key| !held.contains(*key)).collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged items missing",
        missing.len()
    );
    let (status, _) = restored_site.get("/healthz", "").await;
    assert_eq!(status, 200);
    eprintln!(
        "backup while syncing: {} items acknowledged before, {} bytes in {:?}",
        before.len(),
        size,
        took
    );
    restored_site.stop().await;
    site.stop().await.unwrap();
}

// --- TLS handshakes ----------------------------------------------------------

/// The handheld's fetch timeout: past it the worker counts the site as
/// unreachable.
const HANDHELD_TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_client_hellos_do_not_hold_a_real_handheld_past_its_timeout() {
    let site = floods::serve_tls().await;
    let addr = site.addr;
    let url = format!("https://localhost:{}/healthz", addr.port());
    let trust = stockhop_site::net::outbound::Trust::CaFile(site.ca_path.clone());
    let client = stockhop_site::net::outbound::signed_post_client(
        &url,
        &trust,
        stockhop_site::net::delivery::DELIVERY_TIMEOUT,
    )
    .unwrap();
    let healthz = || async {
        let started = Instant::now();
        let response = client.get(&url).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200);
        started.elapsed()
    };
    let quiet = healthz().await;

    // 1,500 connections from another loopback address, each sending the
    // first bytes of a ClientHello and then nothing.
    const STALLED: usize = 1_500;
    let mut stalled = Vec::with_capacity(STALLED);
    for _ in 0..STALLED {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket
            .bind(SocketAddr::new("127.0.0.2".parse().unwrap(), 0))
            .unwrap();
        let Ok(mut stream) = socket.connect(addr).await else {
            continue;
        };
        let _ = stream.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00]).await;
        stalled.push(stream);
    }
    let loaded = healthz().await;
    eprintln!(
        "TLS /healthz: {quiet:?} quiet, {loaded:?} with {} stalled ClientHellos",
        stalled.len()
    );
    assert!(
        loaded < HANDHELD_TIMEOUT,
        "a real handheld waited {loaded:?} behind stalled handshakes"
    );
    drop(stalled);
    site.stop().await;
}

// --- Pacing ------------------------------------------------------------------

#[tokio::test]
async fn a_flood_of_old_dated_lines_is_paced_per_serial_and_nothing_acknowledged_is_lost() {
    use listener_support::{att_line, attlog_request, exchange, local_time, split_reply};
    let dir = tempfile::tempdir().unwrap();
    let listener =
        listener_support::start(dir.path(), listener_support::config("CKJF1,CKJF2"), None).await;
    const LINES: usize = 5_000;
    let request = |serial: &str, first_pin: usize| {
        let stale = local_time(3_600);
        let body: String = (first_pin..first_pin + LINES)
            .map(|pin| att_line(&pin.to_string(), &stale))
            .collect();
        attlog_request(serial, &body)
    };
    let mut acknowledged = 0;
    let mut paced = 0;
    for round in 0..5 {
        let reply = exchange(listener.http, &request("CKJF1", 10_000 + round * LINES)).await;
        let (head, _) = split_reply(&reply);
        if head.starts_with("HTTP/1.1 200") {
            acknowledged += LINES;
        } else {
            assert!(head.starts_with("HTTP/1.1 503"), "{head}");
            assert!(head.contains("Retry-After"), "{head}");
            paced += 1;
        }
    }
    let stored = listener.count("SELECT count(*) FROM listener_queue") as usize;
    eprintln!(
        "stale flood: {} lines sent, {acknowledged} acknowledged and stored ({stored} rows), {paced} requests paced",
        5 * LINES
    );
    assert!(paced >= 3, "{paced} of 5 paced");
    assert_eq!(
        stored, acknowledged,
        "every acknowledged line stored, nothing else"
    );
    // Another terminal's budget is its own.
    let reply = exchange(listener.http, &request("CKJF2", 90_000)).await;
    assert!(split_reply(&reply).0.starts_with("HTTP/1.1 200"));
    listener.stop().await;
}

/// Connects to `to` from the loopback address `from`.
async fn connect_from(from: &str, to: SocketAddr) -> std::io::Result<tokio::net::TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from.parse().unwrap(), 0))?;
    socket.connect(to).await
}

/// Sends one framed record from `from` and reads the reply frame.
async fn framed_from(from: &str, to: SocketAddr, record: &str) -> std::io::Result<String> {
    let mut stream = connect_from(from, to).await?;
    let mut bytes = (record.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(record.as_bytes());
    stream.write_all(&bytes).await?;
    let mut len = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut len))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no reply"))??;
    let mut payload = vec![0u8; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut payload).await?;
    Ok(String::from_utf8(payload).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_bridge_keeps_its_reserved_slot_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let record = |id: &str| listener_support::framed_record("bridge-1", id, "1001", 0);
    let listener =
        listener_support::start(dir.path(), listener_support::config("bridge-1"), None).await;
    let reply = framed_from("127.0.0.3", listener.tcp, &record("e1"))
        .await
        .unwrap();
    assert!(reply.contains("\"ack\""), "{reply}");
    listener.stop().await;

    let listener =
        listener_support::start(dir.path(), listener_support::config("bridge-1"), None).await;
    // Slow clients from another address take every general slot.
    let mut slow = Vec::new();
    for _ in 0..300 {
        if let Ok(stream) = connect_from("127.0.0.4", listener.tcp).await {
            slow.push(stream);
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let reply = framed_from("127.0.0.3", listener.tcp, &record("e2")).await;
    assert!(
        reply
            .as_deref()
            .is_ok_and(|reply| reply.contains("\"ack\"")),
        "the known bridge was refused after the restart: {reply:?}"
    );
    drop(slow);
    listener.stop().await;
}

// --- Transport -----------------------------------------------------------------

#[tokio::test]
async fn https_answers_carry_hsts_and_plain_http_answers_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let (site, base) = serve_whole_site(&dir.path().join("data")).await;
    let ca = std::fs::read(dir.path().join("data/tls/ca.crt")).unwrap();
    let tls = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .build()
        .unwrap();
    let https = format!("https://localhost:{}", site.https_addr().port());
    for path in ["/healthz", "/v1/site/status", "/no-such-page"] {
        let answer = tls.get(format!("{https}{path}")).send().await.unwrap();
        assert_eq!(
            answer
                .headers()
                .get("strict-transport-security")
                .map(|v| v.to_str().unwrap()),
            Some("max-age=31536000"),
            "{path} answered {}",
            answer.status()
        );
    }
    let plain = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(plain.status().as_u16(), 200);
    assert!(plain.headers().get("strict-transport-security").is_none());
    site.stop().await.unwrap();
}

/// Sends a request head declaring a body of `declared` bytes and the first
/// KiB of it, and reads the answer's status line; a server that waits for
/// the rest of the body never answers (the hang guard fails the test).
async fn declared_body(addr: SocketAddr, head: &str, declared: u64) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("{head}Content-Length: {declared}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    stream.write_all(&[b'x'; 1024]).await.unwrap();
    let mut answer = vec![0; 256];
    let read = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut answer))
        .await
        .expect("an answer before the body was sent")
        .unwrap();
    String::from_utf8_lossy(&answer[..read])
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_body_whose_content_length_is_over_its_limit_is_refused_413_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (site, _) = serve_whole_site(&data).await;
    let admin = Db::open(&data)
        .unwrap()
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap();
    let import = format!(
        "PUT /v1/admin/reference/bins HTTP/1.1\r\nHost: localhost\r\n\
         Authorization: Bearer {admin}\r\nContent-Type: text/csv\r\n"
    );
    let status = declared_body(site.http_addr(), &import, 300 * 1024 * 1024).await;
    assert_eq!(status, "HTTP/1.1 413 Payload Too Large");
    let view =
        "POST /v1/site/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n";
    let status = declared_body(site.http_addr(), view, 64 * 1024 * 1024).await;
    assert_eq!(status, "HTTP/1.1 413 Payload Too Large");
    site.stop().await.unwrap();
}

#[tokio::test]
async fn a_json_import_row_naming_a_field_twice_is_refused_naming_the_row_and_the_field() {
    let site = Site::start().await;
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap();
    let body = r#"[{"bin":"D-1","zone":"Z","location":"L"},
                   {"bin":"D-2","zone":"Z","location":"L","bin":"D-3"}]"#;
    let response = site
        .client
        .put(format!("{}/v1/admin/reference/bins", site.base))
        .bearer_auth(&admin)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 422);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["errors"][0]["line"], 2, "{answer}");
    assert_eq!(
        answer["errors"][0]["message"], "the field \"bin\" is given twice: give each field once",
        "{answer}"
    );
    assert_eq!(answer["errors"].as_array().unwrap().len(), 1, "{answer}");
    site.stop().await;
}

// --- Identifiers ---------------------------------------------------------------

#[tokio::test]
async fn bins_that_look_like_others_or_hold_invisible_characters_are_refused_naming_the_character()
{
    let site = Site::start().await;
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap();
    let bins = [
        ("LA-é", None),
        ("LA-e\u{0301}", Some("U+0065 U+0301 is written U+00E9")),
        ("LA-\u{FF21}", Some("U+FF21 is written U+0041")),
        ("LA-\u{3164}", Some("U+3164")),
        ("LA-\u{FFA0}", Some("U+FFA0")),
        ("LA-\u{2800}", Some("U+2800")),
        ("LA-\u{034F}1", Some("U+034F")),
        ("LA-1\u{FE0F}", Some("U+FE0F")),
        ("LA-1\u{E0041}", Some("bin must not contain U+E0041")),
        ("LA-\u{E000}", Some("U+E000")),
        ("LA-\u{FFFE}", Some("U+FFFE")),
    ];
    let rows: Vec<Value> = bins
        .iter()
        .map(|(bin, _)| json!({"bin": bin, "zone": "Z", "location": "L"}))
        .collect();
    let response = site
        .client
        .put(format!("{}/v1/admin/reference/bins", site.base))
        .bearer_auth(&admin)
        .json(&rows)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 422);
    let answer: Value = response.json().await.unwrap();
    let errors = answer["errors"].as_array().unwrap();
    assert_eq!(errors.len(), bins.len() - 1, "{answer}");
    for (line, (bin, said)) in bins.iter().enumerate().skip(1) {
        let error = errors
            .iter()
            .find(|e| e["line"] == line as u64 + 1)
            .unwrap_or_else(|| panic!("{bin:?} refused: {answer}"));
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(said.unwrap()), "{bin:?}: {message}");
    }
    site.stop().await;
}

/// Every operation the OpenAPI document says needs a token, asked without
/// one and with input that is wrong in every place it can be (path
/// parameters that are not ids or keys, a query of junk, a body that is
/// not JSON): each is answered 401, so who asks is settled before what is
/// asked, and an unauthenticated caller learns nothing of the checks
/// behind it.
#[tokio::test]
async fn an_unauthenticated_request_is_refused_401_before_its_input_is_checked() {
    let site = Site::start().await;
    let document: Value = site
        .client
        .get(format!("{}/v1/openapi.json", site.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut refused = Vec::new();
    let mut asked = 0;
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let Some(security) = operation["security"].as_array() else {
                continue;
            };
            // A token is optional where one alternative asks for nothing.
            if security.is_empty()
                || security
                    .iter()
                    .any(|s| s.as_object().is_some_and(|s| s.is_empty()))
            {
                continue;
            }
            let concrete = path
                .split('/')
                .map(|part| {
                    if part.starts_with('{') {
                        "%00bad"
                    } else {
                        part
                    }
                })
                .collect::<Vec<_>>()
                .join("/");
            let url = format!(
                "{}{concrete}?after=x&limit=0&from=x&to=y&label=%00",
                site.base
            );
            let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let response = site
                .client
                .request(method.clone(), url)
                .header("content-type", "application/json")
                .body("{not json")
                .send()
                .await
                .unwrap();
            asked += 1;
            let status = response.status().as_u16();
            if status != 401 {
                refused.push(format!("{method} {path}: {status}"));
            }
        }
    }
    assert!(asked > 30, "only {asked} operations need a token");
    assert!(refused.is_empty(), "not 401 without a token: {refused:#?}");
    site.stop().await;
}

/// The CSV exports, asked for gzip as a script's HTTP client asks by
/// default: the answer ends with its last chunk, whole, rather than the
/// connection breaking after it (the compressed stream asked the export
/// again once it had ended).
#[tokio::test]
async fn a_csv_export_asked_for_gzip_ends_whole() {
    let site = Site::start().await;
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap();
    for path in ["/v1/hops.csv", "/v1/site/attendance.csv"] {
        let response = site
            .client
            .get(format!(
                "{}{path}?from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z",
                site.base
            ))
            .header("accept-encoding", "gzip")
            .bearer_auth(&admin)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
        assert_eq!(
            response.headers()["content-encoding"],
            "gzip",
            "{path}: not compressed"
        );
        let gzipped = response
            .bytes()
            .await
            .unwrap_or_else(|err| panic!("{path}: the answer broke off: {err}"));
        assert!(!gzipped.is_empty(), "{path}");
    }
    site.stop().await;
}
