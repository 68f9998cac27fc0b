//! Past one site, with real parts: a central `stockhop-site` on a real
//! PostgreSQL database, sites (the real binary, on the backend the suite
//! runs on) forwarding to it over real HTTP, and real HTTPS with the
//! central's own site CA, on loopback, a handheld syncing scans, sites that
//! recorded hops before they forwarded, and kill -9 of either side.
//!
//! The central needs a PostgreSQL cluster: `cargo xtask test` starts one
//! and passes its admin URL in `STOCKHOP_TEST_POSTGRES`; `cargo xtask
//! postgres` starts one by hand. Without it every test here fails, saying
//! so.

use crate::backend;
use crate::ports;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop_site::central::wire::CENTRAL_HOPS_PATH;
use stockhop_site::net::delivery::signature;
use stockhop_site::store::db::{Database, Db};
use stockhop_site::terminal_wire::{SIGNATURE_HEADER, TIMESTAMP_HEADER};

const SECRET: &str = "central-test-secret";
/// Longest a test waits for a site's outbox to drain: past the forwarder's
/// 60 s backoff cap, with room for a slow machine.
const DRAIN_WAIT: Duration = Duration::from_secs(150);
const BIN: &str = env!("CARGO_BIN_EXE_stockhop-site");

/// The central's database: a fresh one on the test cluster.
fn central_database(data: &Path) -> String {
    if std::env::var_os(backend::POSTGRES_VAR).is_none() {
        panic!(
            "the central tests need a PostgreSQL cluster's admin URL in {}: run them under \
             `cargo xtask test`, or start a cluster with `cargo xtask postgres` and set the \
             variable it prints",
            backend::POSTGRES_VAR
        );
    }
    backend::fresh_database(data)
}

/// A `stockhop-site serve` that can be killed and started again on the
/// same ports and data (and with other arguments). Its log (warnings and
/// worse) is appended to `serve.log` in its data directory.
struct Server {
    data: PathBuf,
    port: u16,
    https_port: u16,
    args: Vec<String>,
    child: Option<Child>,
}

impl Server {
    fn new(data: PathBuf, args: Vec<String>) -> Server {
        Server {
            data,
            port: ports::free_port(),
            https_port: ports::free_port(),
            args,
            child: None,
        }
    }

    /// A central on a fresh PostgreSQL database, started.
    fn central(dir: &Path) -> Server {
        let data = dir.join("central");
        let url = central_database(&data);
        let mut central = Server::new(
            data,
            vec![
                "--database".into(),
                url,
                "--central-secret".into(),
                SECRET.into(),
            ],
        );
        central.start();
        central
    }

    /// A site (on the suite's backend) forwarding to `central`.
    fn site(dir: &Path, site_id: &str, central: &Server) -> Server {
        let mut site = Server::alone(dir, site_id);
        site.args.extend(forwarding_args(site_id, &central.base()));
        site
    }

    /// A site (on the suite's backend) that forwards to no central.
    fn alone(dir: &Path, site_id: &str) -> Server {
        let data = dir.join(site_id);
        // The site exists before its first start: its reference data and
        // handheld go in from the command line first.
        drop(backend::open_db(&data));
        let args = backend::database_args(&data);
        Server::new(data, args)
    }

    /// Its arguments with forwarding to `central_url` (on: true) or none.
    fn forward_to(&mut self, site_id: &str, central_url: Option<&str>) {
        self.args = backend::database_args(&self.data);
        if let Some(url) = central_url {
            self.args.extend(forwarding_args(site_id, url));
        }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The HTTPS origin by a name its site CA's certificate carries.
    fn https_base(&self) -> String {
        format!("https://localhost:{}", self.https_port)
    }

    /// The site CA it made on its first start (`/ca.crt`).
    fn ca_cert(&self) -> PathBuf {
        self.data.join("tls").join("ca.crt")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.data.join("serve.log")).unwrap_or_default()
    }

    fn start(&mut self) {
        assert!(self.child.is_none());
        std::fs::create_dir_all(&self.data).unwrap();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data.join("serve.log"))
            .unwrap();
        let child = Command::new(BIN)
            .args(["serve", "--http", &format!("127.0.0.1:{}", self.port)])
            .args(["--https", &format!("127.0.0.1:{}", self.https_port)])
            .args([
                "--terminal-http",
                "127.0.0.1:0",
                "--terminal-tcp",
                "127.0.0.1:0",
            ])
            .arg("--data")
            .arg(&self.data)
            .arg("--www")
            .arg(&self.data)
            .args(&self.args)
            .env("RUST_LOG", "warn")
            .env("STOCKHOP_LOG_FORMAT", "text")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "server did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            Command::new("kill")
                .args(["-9", &child.id().to_string()])
                .status()
                .unwrap();
            child.wait().unwrap();
        }
    }

    /// Runs a command of the binary on this server's data and database.
    fn cli(&self, args: &[&str]) -> String {
        let database: Vec<&String> = self
            .args
            .iter()
            .skip_while(|arg| *arg != "--database")
            .take(2)
            .collect();
        let out = Command::new(BIN)
            .args(args)
            .arg("--data")
            .arg(&self.data)
            .args(database)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// This server's ledger, opened in the test as the server opens it.
    fn db(&self) -> Db {
        match self.args.iter().position(|arg| arg == "--database") {
            Some(at) => Db::connect(
                &Database::Postgres(self.args[at + 1].clone()),
                &self.data.join("reader"),
            )
            .unwrap(),
            None => backend::open_db(&self.data),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// The arguments that make a site forward to `central_url` as `site_id`.
fn forwarding_args(site_id: &str, central_url: &str) -> Vec<String> {
    vec![
        "--central-url".into(),
        central_url.into(),
        "--central-secret".into(),
        SECRET.into(),
        "--site-id".into(),
        site_id.into(),
    ]
}

/// `sessions` put-away sessions of `scans` scans each (open, scans, close).
fn plan(sessions: usize, scans: u64) -> Vec<Value> {
    let mut items = Vec::new();
    for s in 0..sessions {
        let session = IdempotencyKey::mint().unwrap().to_string();
        for seq in 1..=scans + 2 {
            let (command, body) = match seq {
                1 => (
                    "open_session",
                    json!({"operator_id": format!("op-{s}"), "mode": "put_away", "context": {}}),
                ),
                _ if seq == scans + 2 => ("close_session", json!({})),
                _ => (
                    "scan",
                    json!({"mode": "put_away", "epc": format!("EPC-{s}-{seq}"), "unit_version": 1, "bin": format!("B-{}", seq % 5)}),
                ),
            };
            let at = UnixMs(stockhop_site::ledger::wall_clock().0 - 60_000 + seq as i64);
            items.push(json!({
                "key": IdempotencyKey::mint().unwrap().to_string(),
                "session_id": session,
                "client_seq": seq,
                "command": command,
                "occurred_at": at.to_string(),
                "queued_at": at.to_string(),
                "body": body,
            }));
        }
    }
    items
}

/// The site's bins and units for [`plan`], a commissioned handheld, and
/// its token.
fn prepare(site: &Server, dir: &Path, sessions: usize, scans: u64) -> String {
    let bins: String = (0..5).map(|b| format!("B-{b},Z-1,L-1\n")).collect();
    let units: String = (0..sessions)
        .flat_map(|s| (2..scans + 2).map(move |seq| format!("EPC-{s}-{seq},,SKU-1,new,\n")))
        .collect();
    for (kind, text) in [
        ("bins", format!("bin,zone,location\n{bins}")),
        ("units", format!("epc,code,sku,state,bin\n{units}")),
    ] {
        let file = dir.join(format!("{kind}.csv"));
        std::fs::write(&file, text).unwrap();
        site.cli(&["import", kind, file.to_str().unwrap()]);
    }
    site.cli(&[
        "device",
        "add",
        "HH-1",
        "--profile",
        "mc3390xr",
        "--commissioned",
    ])
}

/// Sends `items` as one sync request; `None` when the site did not answer
/// (down, or busy), so the handheld sends them again.
async fn sync(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    items: &[Value],
) -> Option<Vec<Value>> {
    let body = json!({"device_id": "HH-1", "sent_at": stockhop_site::ledger::wall_clock().to_string(), "items": items});
    let response = client
        .post(format!("{base}/v1/sync"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .ok()?;
    if response.status() != 200 {
        return None;
    }
    let answer: Value = response.json().await.ok()?;
    let results = answer["results"].as_array().unwrap().clone();
    for result in &results {
        assert_eq!(result["status"], 200, "{result}");
        assert_eq!(result["outcome"], "applied", "{result}");
    }
    Some(results)
}

/// Syncs `items` to `site` in batches of `batch` until each is answered,
/// from a runtime of the test's own.
fn sync_now(site: &Server, token: &str, items: &[Value], batch: usize) {
    runtime().block_on(sync_all(&site.base(), token, items, batch, Duration::ZERO));
}

/// Syncs every item, `batch` at a time, each batch until the site answers.
async fn sync_all(base: &str, token: &str, items: &[Value], batch: usize, pause: Duration) {
    let client = reqwest::Client::new();
    for chunk in items.chunks(batch) {
        while sync(&client, base, token, chunk).await.is_none() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(pause).await;
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The site's outbox in seq order: (seq, hop key, state).
fn outbox(site: &Db) -> Vec<(i64, String, String)> {
    site.call_blocking(|conn| {
        conn.prepare(
            "SELECT o.seq, h.key, o.state FROM central_outbox o JOIN hops h ON h.hop_id = o.hop_id
             ORDER BY o.seq",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
    })
}

fn count(db: &Db, sql: &str) -> i64 {
    db.call_blocking(|conn| conn.query_row(sql, [], |r| r.get(0)).unwrap())
}

/// Waits until every hop of the site has an outbox row and none is pending.
fn wait_drained(site: &Db) {
    let deadline = Instant::now() + DRAIN_WAIT;
    loop {
        let hops = count(site, "SELECT count(*) FROM hops");
        let rows = count(site, "SELECT count(*) FROM central_outbox");
        let pending = count(
            site,
            "SELECT count(*) FROM central_outbox WHERE state = 'pending'",
        );
        assert_eq!(rows, hops, "every hop has its outbox row");
        if pending == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{pending} outbox rows still pending"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What the central holds from `site_id`, in the order it stored it:
/// (seq, key).
fn central_hops(central: &Db, site_id: &str) -> Vec<(i64, String)> {
    let site_id = site_id.to_owned();
    central.call_blocking(move |conn| {
        conn.prepare("SELECT seq, key FROM central_hops WHERE site_id = ?1 ORDER BY received_id")
            .unwrap()
            .query_map([site_id.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    })
}

/// Every done row of the outbox, as the central must hold them.
fn done(outbox: &[(i64, String, String)]) -> Vec<(i64, String)> {
    outbox
        .iter()
        .filter(|(_, _, state)| state == "done")
        .map(|(seq, key, _)| (*seq, key.clone()))
        .collect()
}

async fn get_json(base: &str, path: &str, token: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .get(format!("{base}{path}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// POSTs `body` to the central's endpoint, signed with `secret` at
/// `timestamp` (none: unsigned).
async fn post_batch(base: &str, body: &Value, signed: Option<(&str, i64)>) -> (u16, Value) {
    let bytes = serde_json::to_vec(body).unwrap();
    let mut request = reqwest::Client::new()
        .post(format!("{base}{CENTRAL_HOPS_PATH}"))
        .header("content-type", "application/json");
    if let Some((secret, timestamp)) = signed {
        request = request
            .header(TIMESTAMP_HEADER, timestamp.to_string())
            .header(
                SIGNATURE_HEADER,
                signature(secret.as_bytes(), timestamp, &bytes),
            );
    }
    let response = request.body(bytes).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn now_secs() -> i64 {
    stockhop_site::ledger::wall_clock().0 / 1000
}

/// A hop as a site sends it, every column.
fn site_hop(hop_id: i64, key: &str, to_bin: &str) -> Value {
    json!({
        "hop_id": hop_id, "device_id": "HH-9", "session_id": null, "key": key,
        "client_seq": 2, "command": "scan", "kind": "ZONE_CHANGE", "mode": "put_away",
        "unit_id": 1, "from_bin": null, "to_bin": to_bin, "unit_version": 2,
        "facts": {"epc": "E-1"}, "occurred_at": 1_795_947_302_120_i64,
        "booked_at": 1_795_947_302_120_i64, "recorded_at": 1_795_947_302_500_i64,
        "device_clock_skew_ms": 0, "source_mode": "live", "compensates": null
    })
}

#[test]
fn a_site_forwards_every_hop_to_the_central_once_in_seq_order_and_both_views_show_it() {
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    let mut site = Server::site(dir.path(), "SITE-A", &central);
    let token = prepare(&site, dir.path(), 3, 40);
    site.start();
    let items = plan(3, 40);
    sync_now(&site, &token, &items, 7);

    let site_db = site.db();
    wait_drained(&site_db);
    let outbox = outbox(&site_db);
    assert_eq!(outbox.len(), 120, "one outbox row per scan's hop");
    assert!(outbox.iter().all(|(_, _, state)| state == "done"));
    let site_keys: Vec<String> = site_db.call_blocking(|conn| {
        conn.prepare("SELECT key FROM hops ORDER BY hop_id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    let central_db = central.db();
    let held = central_hops(&central_db, "SITE-A");
    assert_eq!(
        held,
        done(&outbox),
        "the site's hops, each once, in seq order"
    );
    assert_eq!(
        held.iter().map(|(_, key)| key.clone()).collect::<Vec<_>>(),
        site_keys,
        "in the site's hop order"
    );
    // The central keeps the site's hop whole: every column, facts as JSON.
    let first: String = central_db.call_blocking(|conn| {
        conn.query_row(
            "SELECT hop FROM central_hops ORDER BY received_id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap()
    });
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["kind"], "ZONE_CHANGE");
    assert_eq!(first["device_id"], "HH-1");
    assert!(first["facts"].is_object());

    let site_admin = site.cli(&["admin", "add", "ops"]);
    let central_admin = central.cli(&["admin", "add", "ops"]);
    runtime().block_on(async {
        let (code, status) = get_json(&site.base(), "/v1/site/status", &site_admin).await;
        assert_eq!(code, 200);
        assert_eq!(status["central_outbox"]["site_id"], "SITE-A");
        assert_eq!(status["central_outbox"]["pending"], 0);
        assert_eq!(status["central_outbox"]["dead_letters_total"], 0);
        assert_eq!(status["central_sites"], json!([]));
        for field in [
            "trend",
            "queue_depth",
            "devices",
            "terminals",
            "listener",
            "decisions",
        ] {
            assert!(status.get(field).is_some(), "{field} kept");
        }
        let (code, status) = get_json(&central.base(), "/v1/site/status", &central_admin).await;
        assert_eq!(code, 200);
        let sites = status["central_sites"].as_array().unwrap();
        assert_eq!(sites.len(), 1);
        assert_eq!(sites[0]["site_id"], "SITE-A");
        assert_eq!(sites[0]["hops_received"], 120);
        assert_eq!(sites[0]["last_seq"], outbox.last().unwrap().0);
        assert_eq!(status["central_outbox"]["site_id"], Value::Null);
        let metrics = reqwest::Client::new()
            .get(format!("{}/metrics", central.base()))
            .bearer_auth(&central_admin)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            metrics.contains(r#"stockhop_central_hops_received{site_id="SITE-A"} 120"#),
            "{metrics}"
        );
        // A site that is no central takes no site batches.
        let (code, answer) = post_batch(
            &site.base(),
            &json!({"site_id": "X", "hops": []}),
            Some((SECRET, now_secs())),
        )
        .await;
        assert_eq!((code, answer["code"].as_str()), (404, Some("NOT_FOUND")));
    });
}

#[test]
fn unsigned_wrongly_signed_stale_and_reused_key_batches_are_refused_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    let base = central.base();
    let key = IdempotencyKey::mint().unwrap().to_string();
    let batch = |to_bin: &str| json!({"site_id": "SITE-B", "hops": [{"seq": 1, "key": key, "hop": site_hop(7, &key, to_bin)}]});
    let central_db = central.db();
    runtime().block_on(async {
        for (signed, why) in [
            (None, "unsigned"),
            (Some(("another-secret", now_secs())), "wrong secret"),
            (Some((SECRET, now_secs() - 3_600)), "an hour old"),
        ] {
            let (code, answer) = post_batch(&base, &batch("B-1"), signed).await;
            assert_eq!(code, 401, "{why}: {answer}");
            assert_eq!(answer["code"], "UNAUTHORIZED", "{why}");
        }
        assert_eq!(count(&central_db, "SELECT count(*) FROM central_hops"), 0);
        assert_eq!(count(&central_db, "SELECT count(*) FROM central_sites"), 0);

        let (code, answer) = post_batch(&base, &batch("B-1"), Some((SECRET, now_secs()))).await;
        assert_eq!(code, 200);
        assert_eq!(answer["results"][0]["status"], 200);
        assert_eq!(answer["results"][0]["replayed"], false);
        let (code, answer) = post_batch(&base, &batch("B-1"), Some((SECRET, now_secs()))).await;
        assert_eq!(code, 200);
        assert_eq!(answer["results"][0]["status"], 200);
        assert_eq!(answer["results"][0]["replayed"], true, "{answer}");
        let (code, answer) = post_batch(&base, &batch("B-2"), Some((SECRET, now_secs()))).await;
        assert_eq!(code, 200);
        assert_eq!(answer["results"][0]["status"], 409, "{answer}");
        assert_eq!(answer["results"][0]["code"], "IDEMPOTENCY_KEY_REUSED");
        // A new key at or below the last seq held is out of order.
        let other = IdempotencyKey::mint().unwrap().to_string();
        let late = json!({"site_id": "SITE-B", "hops": [{"seq": 1, "key": other, "hop": site_hop(8, &other, "B-1")}]});
        let (_, answer) = post_batch(&base, &late, Some((SECRET, now_secs()))).await;
        assert_eq!(answer["results"][0]["status"], 409, "{answer}");
        assert_eq!(answer["results"][0]["code"], "SEQ_OUT_OF_ORDER");
        // Seqs that do not increase within a batch refuse the batch.
        let twice = json!({"site_id": "SITE-B", "hops": [
            {"seq": 5, "key": other, "hop": site_hop(8, &other, "B-1")},
            {"seq": 5, "key": key, "hop": site_hop(7, &key, "B-1")}]});
        let (code, _) = post_batch(&base, &twice, Some((SECRET, now_secs()))).await;
        assert_eq!(code, 400);
    });
    let held: Vec<String> = central_db.call_blocking(|conn| {
        conn.prepare("SELECT hop FROM central_hops")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    assert_eq!(held.len(), 1, "only the first, signed batch stored a hop");
    let hop: Value = serde_json::from_str(&held[0]).unwrap();
    assert_eq!(hop["to_bin"], "B-1", "the reused key did not change it");
    assert_eq!(
        count(&central_db, "SELECT hops_received FROM central_sites"),
        1
    );
}

/// xorshift64*: the kill schedule, from a seed printed on failure.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// kill -9s in one run, of the site or the central, drawn from the seed.
const KILLS: usize = 16;
/// Longest a process lives before its kill.
const LIFE_MS_MAX: u64 = 700;
const KILL_SEED: u64 = 0xc3e7_7a1d_5eed_0b0e;

#[test]
fn kill_9_of_site_or_central_while_a_handheld_syncs_loses_and_doubles_no_hop() {
    let dir = tempfile::tempdir().unwrap();
    let mut central = Server::central(dir.path());
    let mut site = Server::site(dir.path(), "SITE-C", &central);
    let (sessions, scans) = (4, 120);
    let token = prepare(&site, dir.path(), sessions, scans);
    site.start();
    let items = plan(sessions, scans);
    let base = site.base();
    let handheld = std::thread::spawn(move || {
        runtime().block_on(sync_all(
            &base,
            &token,
            &items,
            5,
            Duration::from_millis(25),
        ));
    });
    let mut rng = Rng(KILL_SEED);
    let (mut site_kills, mut central_kills) = (0, 0);
    for _ in 0..KILLS {
        std::thread::sleep(Duration::from_millis(20 + rng.below(LIFE_MS_MAX)));
        let victim = if rng.below(2) == 0 {
            site_kills += 1;
            &mut site
        } else {
            central_kills += 1;
            &mut central
        };
        victim.kill9();
        victim.start();
    }
    handheld.join().unwrap();
    eprintln!("seed {KILL_SEED:#x}: {site_kills} site kills, {central_kills} central kills");

    let site_db = site.db();
    wait_drained(&site_db);
    let outbox = outbox(&site_db);
    assert_eq!(
        outbox.len(),
        sessions * scans as usize,
        "seed {KILL_SEED:#x}: one hop per scan, each with its outbox row"
    );
    assert!(
        outbox.iter().all(|(_, _, state)| state == "done"),
        "seed {KILL_SEED:#x}: nothing dead-lettered"
    );
    let held = central_hops(&central.db(), "SITE-C");
    assert_eq!(
        held,
        done(&outbox),
        "seed {KILL_SEED:#x}: every hop once, none missing, in seq order"
    );
}

#[test]
fn a_central_that_refuses_one_hop_dead_letters_only_that_hop_and_takes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    let mut site = Server::site(dir.path(), "SITE-D", &central);
    let token = prepare(&site, dir.path(), 1, 30);
    let items = plan(1, 30);
    // The central already holds another hop under the key of the site's
    // first scan: it will refuse that one hop.
    let first_scan = items[1]["key"].as_str().unwrap().to_owned();
    runtime().block_on(async {
        let batch = json!({"site_id": "SITE-D", "hops": [
            {"seq": 1, "key": first_scan, "hop": site_hop(1, &first_scan, "ELSEWHERE")}]});
        let (code, answer) = post_batch(&central.base(), &batch, Some((SECRET, now_secs()))).await;
        assert_eq!((code, &answer["results"][0]["status"]), (200, &json!(200)));
    });
    site.start();
    sync_now(&site, &token, &items, 8);

    let site_db = site.db();
    wait_drained(&site_db);
    let outbox = outbox(&site_db);
    assert_eq!(outbox.len(), 30);
    let dead: Vec<&(i64, String, String)> = outbox
        .iter()
        .filter(|(_, _, state)| state == "dead")
        .collect();
    assert_eq!(dead.len(), 1, "{outbox:?}");
    assert_eq!(dead[0].1, first_scan);
    let reason: String = site_db.call_blocking(|conn| {
        conn.query_row(
            "SELECT dead_reason FROM central_outbox WHERE state = 'dead'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    });
    assert!(reason.contains("IDEMPOTENCY_KEY_REUSED"), "{reason}");
    let held = central_hops(&central.db(), "SITE-D");
    let mut expected = vec![(1, first_scan.clone())];
    expected.extend(done(&outbox));
    assert_eq!(held, expected, "the hops behind the refused one went on");

    let admin = site.cli(&["admin", "add", "ops"]);
    runtime().block_on(async {
        let (_, status) = get_json(&site.base(), "/v1/site/status", &admin).await;
        let outbox = &status["central_outbox"];
        assert_eq!(outbox["dead_letters_total"], 1);
        assert_eq!(outbox["dead_letters"][0]["key"], first_scan.as_str());
        assert_eq!(outbox["dead_letters"][0]["status"], 409);
    });
}

/// The site's outbox is all done, one row per hop, and the central holds
/// exactly those hops once, in seq order, which is the site's hop order.
fn assert_forwarded_in_hop_order(site: &Db, central: &Db, site_id: &str, hops: usize) {
    let outbox = outbox(site);
    assert_eq!(outbox.len(), hops, "one outbox row per hop");
    assert!(
        outbox.iter().all(|(_, _, state)| state == "done"),
        "{outbox:?}"
    );
    let site_keys: Vec<String> = site.call_blocking(|conn| {
        conn.prepare("SELECT key FROM hops ORDER BY hop_id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    let held = central_hops(central, site_id);
    assert_eq!(held, done(&outbox), "each hop once, in seq order");
    assert_eq!(
        held.into_iter().map(|(_, key)| key).collect::<Vec<_>>(),
        site_keys,
        "in the site's hop order"
    );
}

/// Waits until `site` has sent its whole outbox, then checks that
/// `central` holds its `hops` hops once each, in the site's hop order.
fn assert_drained_to_central(site: &Server, central: &Server, site_id: &str, hops: usize) {
    let site_db = site.db();
    wait_drained(&site_db);
    assert_forwarded_in_hop_order(&site_db, &central.db(), site_id, hops);
}

/// Items of one session of [`plan`] with `scans` scans: open, scans, close.
fn session(items: &[Value], scans: u64, n: usize) -> &[Value] {
    let len = scans as usize + 2;
    &items[n * len..(n + 1) * len]
}

#[test]
fn hops_recorded_before_the_site_had_a_central_all_reach_it_in_order_once_and_later_ones_follow() {
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    let mut site = Server::alone(dir.path(), "SITE-E");
    let scans = 15;
    let token = prepare(&site, dir.path(), 2, scans);
    let items = plan(2, scans);
    site.start();
    sync_now(&site, &token, session(&items, scans, 0), 6);
    assert_eq!(
        count(&site.db(), "SELECT count(*) FROM central_outbox"),
        0,
        "a site without a central keeps no outbox rows"
    );
    site.kill9();

    site.forward_to("SITE-E", Some(&central.base()));
    site.start();
    sync_now(&site, &token, session(&items, scans, 1), 6);
    assert_drained_to_central(&site, &central, "SITE-E", 2 * scans as usize);
}

#[test]
fn forwarding_turned_off_and_on_again_sends_the_hops_of_the_gap_in_order_once() {
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    let mut site = Server::site(dir.path(), "SITE-F", &central);
    let scans = 10;
    let token = prepare(&site, dir.path(), 3, scans);
    let items = plan(3, scans);
    let sync_session = |site: &Server, n| {
        sync_now(site, &token, session(&items, scans, n), 4);
    };
    site.start();
    sync_session(&site, 0);
    wait_drained(&site.db());
    site.kill9();

    site.forward_to("SITE-F", None);
    site.start();
    sync_session(&site, 1);
    site.kill9();
    assert_eq!(
        count(&site.db(), "SELECT count(*) FROM central_outbox"),
        scans as i64,
        "hops appended with forwarding off take no row then"
    );

    site.forward_to("SITE-F", Some(&central.base()));
    site.start();
    sync_session(&site, 2);
    assert_drained_to_central(&site, &central, "SITE-F", 3 * scans as usize);
}

#[test]
fn a_site_forwards_over_https_checked_against_the_centrals_ca_and_each_hop_arrives_once() {
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    let mut site = Server::alone(dir.path(), "SITE-G");
    site.args
        .extend(forwarding_args("SITE-G", &central.https_base()));
    site.args.extend([
        "--central-ca".into(),
        central.ca_cert().display().to_string(),
    ]);
    let scans = 15;
    let token = prepare(&site, dir.path(), 2, scans);
    site.start();
    sync_now(&site, &token, &plan(2, scans), 7);
    assert_drained_to_central(&site, &central, "SITE-G", 2 * scans as usize);
    let log = site.log();
    assert!(!log.contains("not delivered"), "{log}");
    assert!(!log.contains("plain HTTP"), "{log}");
}

/// Longest a test waits for a site to log its first failed delivery.
const FIRST_FAILURE_WAIT: Duration = Duration::from_secs(30);

#[test]
fn a_site_trusting_another_ca_has_no_hop_taken_keeps_them_pending_says_why_and_loses_none() {
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    // A CA of its own that never issued the central's certificate.
    let stranger = dir.path().join("stranger-ca");
    stockhop_site::net::tls::CertStore::open(stockhop_site::net::tls::CertSource::SiteCa {
        dir: stranger.clone(),
        names: stockhop_site::net::tls::site_names(Some("stranger"), &[]).unwrap(),
    })
    .unwrap();
    let ca_args = |ca: &Path| vec!["--central-ca".to_owned(), ca.display().to_string()];
    let mut site = Server::alone(dir.path(), "SITE-H");
    site.forward_to("SITE-H", Some(&central.https_base()));
    site.args.extend(ca_args(&stranger.join("ca.crt")));
    let scans = 12;
    let token = prepare(&site, dir.path(), 1, scans);
    site.start();
    sync_now(&site, &token, &plan(1, scans), 5);

    let deadline = Instant::now() + FIRST_FAILURE_WAIT;
    let failure = loop {
        let log = site.log();
        if let Some(line) = log.lines().find(|l| l.contains("not delivered to central")) {
            break line.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no failed delivery logged: {log}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        failure.contains("invalid peer certificate"),
        "the log says the certificate is not trusted: {failure}"
    );
    let site_db = site.db();
    assert!(central_hops(&central.db(), "SITE-H").is_empty());
    let outbox = outbox(&site_db);
    assert_eq!(outbox.len(), scans as usize);
    assert!(
        outbox.iter().all(|(_, _, state)| state == "pending"),
        "nothing dead-lettered: {outbox:?}"
    );
    let admin = site.cli(&["admin", "add", "ops"]);
    runtime().block_on(async {
        let (_, status) = get_json(&site.base(), "/v1/site/status", &admin).await;
        let outbox = &status["central_outbox"];
        assert_eq!(outbox["pending"], scans);
        assert_eq!(outbox["dead_letters_total"], 0);
        let error = outbox["last_error"].as_str().unwrap_or_default();
        assert!(error.contains("invalid peer certificate"), "{outbox}");
        assert!(outbox["last_error_at"].is_string(), "{outbox}");
    });
    site.kill9();

    // Given the central's own CA, the same outbox drains, each hop once.
    site.forward_to("SITE-H", Some(&central.https_base()));
    site.args.extend(ca_args(&central.ca_cert()));
    site.start();
    wait_drained(&site_db);
    assert_forwarded_in_hop_order(&site_db, &central.db(), "SITE-H", scans as usize);
    runtime().block_on(async {
        let (_, status) = get_json(&site.base(), "/v1/site/status", &admin).await;
        assert_eq!(status["central_outbox"]["last_error"], Value::Null);
    });
}

/// Longest a start that must fail may run before the test gives up on it.
const FAILED_START_WAIT: Duration = Duration::from_secs(20);

#[test]
fn a_missing_or_unusable_central_ca_file_stops_the_start_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let garbled = dir.path().join("garbled.crt");
    std::fs::write(
        &garbled,
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let key_only = dir.path().join("key-only.pem");
    std::fs::write(
        &key_only,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    for (ca, says) in [
        (dir.path().join("missing.crt"), "No such file"),
        (garbled, "not usable"),
        (key_only, "no PEM certificate"),
    ] {
        let data = dir.path().join("site");
        let mut child = Command::new(BIN)
            .args(["serve", "--http", "127.0.0.1:0", "--https", "127.0.0.1:0"])
            .args([
                "--terminal-http",
                "127.0.0.1:0",
                "--terminal-tcp",
                "127.0.0.1:0",
            ])
            .arg("--data")
            .arg(&data)
            .args(backend::database_args(&data))
            .args(forwarding_args("SITE-I", "https://localhost:9"))
            .arg("--central-ca")
            .arg(&ca)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + FAILED_START_WAIT;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("serve with --central-ca {} kept running", ca.display());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(!status.success(), "{stderr}");
        assert!(stderr.contains(&ca.display().to_string()), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

/// Waits until the central's status shows a summary from every site in
/// `ready` that `ready` accepts; the central's `central_sites`.
async fn wait_summaries(
    central: &Server,
    admin: &str,
    within: Duration,
    ready: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + within;
    loop {
        let (code, status) = get_json(&central.base(), "/v1/site/status", admin).await;
        assert_eq!(code, 200);
        let sites = status["central_sites"].as_array().unwrap().clone();
        if ready(&Value::Array(sites.clone())) {
            return sites;
        }
        assert!(
            Instant::now() < deadline,
            "the central's sites never showed what was awaited: {sites:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[test]
fn two_sites_send_their_summaries_with_their_hops_and_the_central_shows_each_as_its_own_view_does()
{
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    let central_admin = central.cli(&["admin", "add", "ops"]);
    let mut north = Server::site(dir.path(), "DC-NORTH", &central);
    north
        .args
        .extend(["--site-tz".into(), "Europe/Berlin".into()]);
    let mut south = Server::site(dir.path(), "DC-SOUTH", &central);
    south
        .args
        .extend(["--site-tz".into(), "America/Chicago".into()]);
    let north_token = prepare(&north, dir.path(), 1, 10);
    let south_token = prepare(&south, dir.path(), 1, 5);
    // A fixed gate on the south site that never beats: offline past its
    // 60 s period from when it was added, at P1.
    south.cli(&[
        "device",
        "add",
        "GATE-1",
        "--profile",
        "fxr90",
        "--commissioned",
    ]);
    north.start();
    south.start();
    sync_now(&north, &north_token, &plan(1, 10), 4);
    let (north_admin, south_admin) = (
        north.cli(&["admin", "add", "ops"]),
        south.cli(&["admin", "add", "ops"]),
    );

    runtime().block_on(async {
        // The south handheld reports 7 items queued, the oldest 20 min old:
        // the south site is escalated.
        let oldest = UnixMs(stockhop_site::ledger::wall_clock().0 - 20 * 60 * 1000);
        let beat = json!({"sent_at": stockhop_site::ledger::wall_clock().to_string(), "queue_depth": 7,
                          "oldest_queued_at": oldest.to_string(), "app_version": "test"});
        let answer = reqwest::Client::new()
            .post(format!("{}/v1/devices/HH-1/heartbeat", south.base()))
            .bearer_auth(&south_token)
            .json(&beat)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);

        // A summary period or two, and a retry's backoff.
        let sites = wait_summaries(&central, &central_admin, Duration::from_secs(60), |sites| {
            let site = |id: &str| sites.as_array().unwrap().iter().find(|s| s["site_id"] == id).cloned();
            matches!((site("DC-NORTH"), site("DC-SOUTH")), (Some(n), Some(s))
                if n["hops_received"] == 10 && n["summary"]["outbox_pending"] == 0
                    && s["summary"]["queue_depth"] == 7)
        })
        .await;
        assert_eq!(
            sites.iter().map(|s| s["site_id"].clone()).collect::<Vec<_>>(),
            [json!("DC-NORTH"), json!("DC-SOUTH")]
        );
        for (site, admin, summary) in [(&north, &north_admin, &sites[0]["summary"]), (&south, &south_admin, &sites[1]["summary"])] {
            let (code, own) = get_json(&site.base(), "/v1/site/status", admin).await;
            assert_eq!(code, 200);
            let offline = own["devices"].as_array().unwrap().iter().filter(|d| !d["offline_since"].is_null()).count();
            assert_eq!(summary["trend"], own["trend"], "{summary}");
            assert_eq!(summary["queue_depth"], own["queue_depth"], "{summary}");
            assert_eq!(summary["devices_offline"], offline, "{summary}");
            assert_eq!(summary["time_zone"], own["time_zone"], "{summary}");
            assert_eq!(summary["outbox_pending"], 0, "{summary}");
            assert!(
                summary["view_url"].as_str().unwrap().ends_with("/site/"),
                "{summary}"
            );
            assert!(own["central_sites"].as_array().unwrap().is_empty());
        }
        let south_summary = &sites[1]["summary"];
        assert_eq!(south_summary["trend"], "escalated");
        assert_eq!(south_summary["oldest_queued_at"], json!(oldest.to_string()));
        assert_eq!(south_summary["time_zone"], "America/Chicago");
        assert_eq!(sites[0]["summary"]["time_zone"], "Europe/Berlin");
        assert_eq!(sites[0]["summary"]["queue_depth"], 0);
        assert_eq!(sites[1]["hops_received"], 0, "the south site sent no hop, only its summary");

        // The gate's silence passes its period: the south site reports it
        // offline at P1 (the next summary, within a period or two).
        // The gate's 60 s period and a summary period past it.
        let sites = wait_summaries(&central, &central_admin, Duration::from_secs(120), |sites| {
            sites[1]["summary"]["devices_offline"] == 1
        })
        .await;
        assert_eq!(sites[1]["summary"]["alert"], "P1");

        // The central's page is the one that lays the sites out.
        let page = reqwest::Client::new()
            .get(format!("{}/site/", central.base()))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(page.contains(r#"id="site-cards""#) && page.contains(r#"id="site-detail""#));
    });
}

/// The central refuses no hop of a site restored from a backup: the site
/// took hops the central holds after the backup, was restored, and numbers
/// its new hops after what the central holds, in a new outbox epoch the
/// central logs and shows. The site's ledger is SQLite's on every backend
/// (a PostgreSQL ledger is restored with pg_restore).
#[test]
fn a_site_restored_from_a_backup_gets_every_new_hop_to_the_central_and_none_dead() {
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    let secret = central.cli(&["central", "add-site", "SITE-R"]);
    let data = dir.path().join("SITE-R");
    drop(Db::open(&data).unwrap());
    let mut site = Server::new(
        data.clone(),
        vec![
            "--central-url".into(),
            central.base(),
            "--central-secret".into(),
            secret,
            "--site-id".into(),
            "SITE-R".into(),
        ],
    );
    let scans = 5;
    let token = prepare(&site, dir.path(), 3, scans);
    let items = plan(3, scans);
    site.start();
    sync_now(&site, &token, session(&items, scans, 0), 7);
    let site_db = Db::open(&data).unwrap();
    wait_drained(&site_db);
    let backup = dir.path().join("SITE-R.backup");
    site.cli(&["backup", backup.to_str().unwrap()]);
    sync_now(&site, &token, session(&items, scans, 1), 7);
    wait_drained(&site_db);
    drop(site_db);

    // Refused while the site serves: the site would go on writing the
    // ledger it replaced.
    let refused = Command::new(BIN)
        .arg("restore")
        .arg(&backup)
        .arg("--data")
        .arg(&data)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("stop the site first"), "{said}");

    site.kill9();
    let certificate = std::fs::read(site.ca_cert()).unwrap();
    site.cli(&["restore", backup.to_str().unwrap()]);
    assert_eq!(
        std::fs::read(site.ca_cert()).unwrap(),
        certificate,
        "the certificates are kept"
    );
    assert!(!data.join("stockhop.sqlite-wal").exists());
    site.start();
    sync_now(&site, &token, session(&items, scans, 2), 7);
    let site_db = Db::open(&data).unwrap();
    wait_drained(&site_db);
    let outbox = outbox(&site_db);
    assert!(
        outbox.iter().all(|(_, _, state)| state == "done"),
        "no hop dead-lettered: {outbox:?}"
    );
    let central_db = central.db();
    let held = central_hops(&central_db, "SITE-R");
    assert_eq!(held.len(), 3 * scans as usize, "{held:?}");
    assert_eq!(
        held.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
        (1..=3 * scans as i64).collect::<Vec<_>>(),
        "one stream without holes"
    );
    let new_keys: Vec<String> = session(&items, scans, 2)[1..=scans as usize]
        .iter()
        .map(|item| item["key"].as_str().unwrap().to_owned())
        .collect();
    let held_keys: Vec<&String> = held.iter().map(|(_, key)| key).collect();
    for key in &new_keys {
        assert!(held_keys.contains(&key), "{key} reached the central");
    }
    let admin = central.cli(&["admin", "add", "ops"]);
    runtime().block_on(async {
        let (_, status) = get_json(&central.base(), "/v1/site/status", &admin).await;
        let site = &status["central_sites"][0];
        assert_eq!(site["site_id"], "SITE-R");
        assert!(site["epoch"].as_i64().unwrap() > 0, "{site}");
        assert_eq!(site["epoch_after_seq"], 2 * scans, "{site}");
        assert!(site["epoch_started_at"].is_string(), "{site}");
    });
    assert!(
        central.log().contains("began a new outbox epoch"),
        "{}",
        central.log()
    );
}

/// The central stores only what a site would: a signed batch whose hop
/// holds markup, a kind or source mode off its list, an instant that is no
/// clock's or a huge `facts` is refused whole, 422 naming the field, and
/// nothing of it is stored or served.
#[test]
fn a_signed_batch_with_a_hop_the_site_would_never_store_is_refused_422_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let central = Server::central(dir.path());
    let now_ms = stockhop_site::ledger::wall_clock().0;
    let hop = |change: &dyn Fn(&mut Value)| {
        let mut hop = site_hop(1, "K-1", "B-1");
        for field in ["occurred_at", "booked_at", "recorded_at"] {
            hop[field] = json!(now_ms);
        }
        change(&mut hop);
        json!({"site_id": "SITE-V", "hops": [{"seq": 1, "key": "K-1", "hop": hop}]})
    };
    let big = "x".repeat(300 * 1024);
    runtime().block_on(async {
        for (batch, field) in [
            (hop(&|h| h["device_id"] = json!("<img src=x>")), "device_id"),
            (hop(&|h| h["kind"] = json!("<b>X</b>")), "kind"),
            (hop(&|h| h["source_mode"] = json!("bogus")), "source_mode"),
            (hop(&|h| h["occurred_at"] = json!(i64::MAX)), "occurred_at"),
            (hop(&|h| h["facts"] = json!({ "note": big })), "facts"),
        ] {
            let (code, answer) =
                post_batch(&central.base(), &batch, Some((SECRET, now_secs()))).await;
            assert_eq!(
                (code, answer["code"].as_str()),
                (422, Some("INVALID_HOP")),
                "{answer}"
            );
            let message = answer["message"].as_str().unwrap();
            assert!(message.contains(&format!("seq 1: {field}")), "{message}");
        }
        // A refused batch of one hop moves the site's stream past it (the
        // site dead-letters that hop): the next good hop is seq 2.
        let mut good = hop(&|_| {});
        good["hops"][0]["seq"] = json!(2);
        let (code, answer) = post_batch(&central.base(), &good, Some((SECRET, now_secs()))).await;
        assert_eq!(
            (code, &answer["results"][0]["status"]),
            (200, &json!(200)),
            "{answer}"
        );
    });
    assert_eq!(
        central_hops(&central.db(), "SITE-V"),
        [(2, "K-1".to_owned())]
    );
}
