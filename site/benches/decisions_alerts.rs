//! Decisions, alerts and the company's view, measured on real parts over
//! loopback, each beside its floor:
//!
//! * alert latency: a P1 gate's silence passes its period (the condition
//!   starts at that instant) → the `firing` alert arrives at a webhook
//!   receiver, with the served 5 s evaluation period; beside the period
//!   itself and one signed POST to the receiver;
//! * decisions settled per second through the page's API (`POST
//!   /v1/site/decisions/{id}`, dismiss with a note, one after another as a
//!   supervisor's page sends them), beside one durable SQLite row a
//!   transaction (WAL, `synchronous=FULL`), the floor of any settlement;
//! * the central's view with 100 sites: `GET /v1/site/status` (what the
//!   central's `/site/` polls) once every site has sent its summary and
//!   hops, beside the same read with no site and `GET /healthz`.
//!
//! Run: `cargo bench -p stockhop-site --profile site --bench decisions_alerts`
//! (`STOCKHOP_BENCH_QUICK=1`: fewer gates, decisions, sites and reads).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop::wire::Heartbeat;
use stockhop_site::central::ingest;
use stockhop_site::central::wire::{CentralBatch, CentralHop, SiteHop, SiteSummary};
use stockhop_site::ledger::{self, devices::Profile};
use stockhop_site::net::outbound::Trust;
use stockhop_site::store::db::Db;
use stockhop_site::view;
use stockhop_site::view::alerts::webhook::{self, Settings, Webhook, EVALUATE_INTERVAL};
use stockhop_site::view::history::{Alert, Trend};

mod support;

/// Gates that go silent, one after another at spread phases of the
/// evaluation period.
fn gates() -> usize {
    support::scaled(12, 3)
}

/// Decisions settled through the API.
fn decisions() -> usize {
    support::scaled(1000, 60)
}

/// Sites at the central.
const SITES: usize = 100;

/// Hops each site sends the central beside its summary.
fn hops_per_site() -> usize {
    support::scaled(50, 5)
}

/// Reads timed per row.
fn reads() -> usize {
    support::scaled(200, 20)
}

/// An fxr90 gate's heartbeat period: silent past it, the gate is offline.
const GATE_PERIOD_MS: i64 = 60_000;

struct Latencies {
    what: String,
    millis: Vec<f64>,
}

impl Latencies {
    fn at(&self, q: f64) -> f64 {
        let mut sorted = self.millis.clone();
        sorted.sort_by(f64::total_cmp);
        sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1]
    }

    fn row(&self) {
        println!(
            "| {:<52} | {:>5} | {:>9.1} | {:>9.1} | {:>9.1} |",
            self.what,
            self.millis.len(),
            self.at(0.5),
            self.at(0.99),
            self.at(1.0)
        );
    }
}

fn header(first: &str) {
    println!(
        "| {:<52} | {:>5} | {:>9} | {:>9} | {:>9} |",
        first, "n", "p50 ms", "p99 ms", "max ms"
    );
    println!(
        "|{:-<54}|{:->7}|{:->11}|{:->11}|{:->11}|",
        "", "", "", "", ""
    );
}

/// When each `firing` alert arrived, by device.
#[derive(Clone, Default)]
struct Receiver {
    fired: Arc<Mutex<Vec<(String, UnixMs)>>>,
}

async fn receive(State(receiver): State<Receiver>, body: axum::body::Bytes) -> StatusCode {
    let at = ledger::wall_clock();
    let post: Value = serde_json::from_slice(&body).unwrap_or_default();
    let mut fired = receiver.fired.lock().unwrap();
    for alert in post["alerts"].as_array().into_iter().flatten() {
        if alert["name"] == "DeviceOffline" && alert["state"] == "firing" {
            fired.push((
                alert["device_id"].as_str().unwrap_or_default().to_owned(),
                at,
            ));
        }
    }
    StatusCode::OK
}

async fn start_receiver() -> (Receiver, String) {
    let receiver = Receiver::default();
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(receiver.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (receiver, url)
}

fn beat(db: &Db, device_id: &str, at: UnixMs) {
    let heartbeat = Heartbeat {
        sent_at: at,
        queue_depth: 0,
        oldest_queued_at: None,
        app_version: "bench".into(),
    };
    let device_id = device_id.to_owned();
    db.call_blocking(move |conn| {
        ledger::devices::record_heartbeat(conn, &device_id, &heartbeat, at).unwrap();
    });
}

/// Each gate last heard so that its period runs out a little later, at a
/// phase of the evaluation period of its own; the latency from that instant
/// to its `firing` alert at the receiver.
async fn alert_latency(dir: &std::path::Path) -> (Latencies, Latencies) {
    let db = Db::open(&dir.join("alerts")).unwrap();
    let now = ledger::wall_clock();
    let gates: Vec<String> = (0..gates()).map(|n| format!("GATE-{n:02}")).collect();
    db.call_blocking({
        let gates = gates.clone();
        move |conn| {
            for gate in &gates {
                ledger::devices::add(conn, gate, Profile::Fxr90, true, now).unwrap();
            }
        }
    });
    for gate in &gates {
        beat(&db, gate, ledger::wall_clock());
    }
    let (receiver, url) = start_receiver().await;
    let settings = Settings {
        site_id: "BENCH".into(),
        data_dir: dir.to_path_buf(),
        webhook: Some(
            Webhook::new(&url, Some("bench-secret"), &Trust::from_ca_file(None)).unwrap(),
        ),
        evaluate_every: EVALUATE_INTERVAL,
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(webhook::run(db.clone(), settings, stopped));
    // Starts spread over the evaluation period, so the figures cover every
    // phase of it rather than one.
    let period_ms = EVALUATE_INTERVAL.as_millis() as i64;
    let mut starts = Vec::new();
    for (n, gate) in gates.iter().enumerate() {
        let start =
            UnixMs(ledger::wall_clock().0 + 1000 + (n as i64 * period_ms) / gates.len() as i64);
        beat(&db, gate, UnixMs(start.0 - GATE_PERIOD_MS));
        starts.push((gate.clone(), start));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while receiver.fired.lock().unwrap().len() < gates.len() {
        assert!(Instant::now() < deadline, "not every gate's alert arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.send(true).unwrap();
    task.await.unwrap();
    let fired = receiver.fired.lock().unwrap().clone();
    let millis = starts
        .iter()
        .map(|(gate, start)| {
            let (_, at) = fired.iter().find(|(device, _)| device == gate).unwrap();
            (at.0 - start.0) as f64
        })
        .collect();
    // The floor: one signed POST of one alert to the same receiver.
    let client = reqwest::Client::new();
    let body = json!({"alerts": [{"name": "DeviceOffline", "priority": "P1", "state": "resolved",
                                  "device_id": "X", "site_id": "BENCH", "since": ledger::wall_clock().to_string(), "summary": "floor"}]});
    let floor = (0..reads()).map(|_| body.clone()).collect::<Vec<_>>();
    let mut posts = Vec::new();
    for body in floor {
        let started = Instant::now();
        let response = client.post(&url).json(&body).send().await.unwrap();
        assert!(response.status().is_success());
        posts.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    (
        Latencies {
            what: "P1 gate silent past its period → firing received".into(),
            millis,
        },
        Latencies {
            what: "one POST of an alert to the receiver (floor)".into(),
            millis: posts,
        },
    )
}

/// Rejected scans (units the site does not know), one decision each,
/// settled one after another through the API; and the floor.
async fn settle_rate(dir: &std::path::Path) -> (f64, f64) {
    let db = Db::open(&dir.join("decisions")).unwrap();
    let now = ledger::wall_clock();
    let (admin, token) = db.call_blocking(move |conn| {
        (
            view::admin::add(conn, "bench", now).unwrap(),
            ledger::devices::add(conn, "HH-1", Profile::Mc3390xr, true, now).unwrap(),
        )
    });
    let (base, stop, task) = support::serve(db.clone(), dir).await;
    let client = reqwest::Client::new();
    let session = IdempotencyKey::mint().unwrap().to_string();
    let item = |seq: usize, command: &str, body: Value| {
        let at = ledger::wall_clock().to_string();
        json!({"key": IdempotencyKey::mint().unwrap().to_string(), "session_id": session, "client_seq": seq,
               "command": command, "occurred_at": at, "queued_at": at, "body": body})
    };
    let mut items = vec![item(
        1,
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away", "context": {}}),
    )];
    items.extend((0..decisions()).map(|n| {
        item(
            n + 2,
            "scan",
            json!({"mode": "put_away", "epc": format!("UNKNOWN-{n:05}"), "bin": "B-1"}),
        )
    }));
    for chunk in items.chunks(stockhop::wire::MAX_ITEMS_PER_REQUEST) {
        let response = client
            .post(format!("{base}/v1/sync"))
            .bearer_auth(&token)
            .json(&json!({"device_id": "HH-1", "sent_at": ledger::wall_clock().to_string(), "items": chunk}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        assert!(
            status.is_success(),
            "{status}: {}",
            response.text().await.unwrap_or_default()
        );
    }
    let open = open_decisions(&client, &base, &admin).await;
    let listed = open["decisions"].as_array().unwrap().len();
    assert!(listed > 0, "the rejected scans wait: {open}");
    let started = Instant::now();
    let mut settled = 0;
    while settled < decisions() {
        let open = open_decisions(&client, &base, &admin).await;
        let ids: Vec<String> = open["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"] == "rejected_item")
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .collect();
        assert!(
            !ids.is_empty(),
            "{settled} of {} settled and none waits",
            decisions()
        );
        for id in ids {
            let response = client
                .post(format!("{base}/v1/site/decisions/{}", urlencode(&id)))
                .bearer_auth(&admin)
                .json(&json!({"action": "dismiss", "note": "bench"}))
                .send()
                .await
                .unwrap();
            assert!(
                response.status().is_success(),
                "{id}: {}",
                response.status()
            );
            settled += 1;
        }
    }
    let rate = settled as f64 / started.elapsed().as_secs_f64();
    stop.send(()).unwrap();
    task.await.unwrap();

    // The floor: one durable row a transaction in a SQLite file of its own.
    let raw = rusqlite::Connection::open(dir.join("floor.sqlite")).unwrap();
    raw.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         CREATE TABLE settled (id TEXT PRIMARY KEY, note TEXT, at INTEGER)",
    )
    .unwrap();
    let started = Instant::now();
    for n in 0..decisions() {
        raw.execute(
            "INSERT INTO settled (id, note, at) VALUES (?1, 'bench', ?2)",
            rusqlite::params![format!("d-{n}"), n as i64],
        )
        .unwrap();
    }
    let floor = decisions() as f64 / started.elapsed().as_secs_f64();
    (rate, floor)
}

/// Percent-encodes a decision id for its path segment.
fn urlencode(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn site_hop(site: usize, seq: usize) -> CentralHop {
    let key = IdempotencyKey::mint().unwrap().to_string();
    CentralHop {
        seq: seq as i64,
        key: key.clone(),
        hop: SiteHop {
            hop_id: seq as i64,
            device_id: "HH-1".into(),
            session_id: None,
            key,
            client_seq: Some(seq as i64),
            command: "scan".into(),
            kind: "ZONE_CHANGE".into(),
            mode: Some("put_away".into()),
            unit_id: Some(seq as i64),
            from_bin: None,
            to_bin: Some(format!("B-{}", seq % 7)),
            unit_version: Some(2),
            facts: json!({"epc": format!("E-{site}-{seq}")}),
            occurred_at: 1,
            booked_at: 1,
            recorded_at: 1,
            device_clock_skew_ms: 0,
            source_mode: "live".into(),
            compensates: None,
        },
    }
}

/// The central's status read with [`SITES`] sites that each sent a summary
/// and hops, beside the same read of a central with no site and
/// `/healthz`, in interleaved rounds so a busy machine weighs on each alike.
async fn central_view(dir: &std::path::Path) -> Vec<Latencies> {
    let empty = Db::open(&dir.join("central-empty")).unwrap();
    let full = Db::open(&dir.join("central")).unwrap();
    let now = ledger::wall_clock();
    let [empty_admin, admin] = [&empty, &full]
        .map(|db| db.call_blocking(move |conn| view::admin::add(conn, "bench", now).unwrap()));
    full.call_blocking(|conn| {
        for site in 0..SITES {
            let batch = CentralBatch {
                site_id: format!("DC-{site:03}"),
                epoch: 0,
                hops: (1..=hops_per_site())
                    .map(|seq| site_hop(site, seq))
                    .collect(),
                summary: Some(SiteSummary {
                    taken_at: ledger::wall_clock(),
                    time_zone: "Europe/Berlin".into(),
                    trend: [Trend::Draining, Trend::Growing, Trend::Escalated][site % 3],
                    queue_depth: (site * 7 % 50) as i64,
                    oldest_queued_at: Some(UnixMs(ledger::wall_clock().0 - 60_000)),
                    devices_offline: (site % 4) as i64,
                    alert: (site % 4 > 0).then_some(Alert::P2),
                    outbox_pending: (site % 5) as i64,
                    outbox_lag_ms: (site * 1000) as i64,
                    view_url: Some(format!("https://dc-{site:03}.example:8443/site/")),
                }),
            };
            // The bench's hops are at instant 1: checked as of then.
            ingest::check(&batch, UnixMs(1)).unwrap();
            ingest::ingest(
                conn,
                &batch,
                ingest::Signer::OwnSecret,
                ledger::wall_clock(),
            )
            .unwrap();
        }
    });
    let (empty_base, stop_empty, empty_task) = support::serve(empty, &dir.join("empty")).await;
    let (base, stop, task) = support::serve(full, dir).await;
    let client = reqwest::Client::new();
    let body: Value = client
        .get(format!("{base}/v1/site/status"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["central_sites"].as_array().unwrap().len(), SITES);
    let mut rows = [
        (
            format!("{base}/healthz"),
            &admin,
            "GET /healthz (HTTP floor)".to_owned(),
        ),
        (
            format!("{empty_base}/v1/site/status"),
            &empty_admin,
            "GET /v1/site/status, no site".to_owned(),
        ),
        (
            format!("{base}/v1/site/status"),
            &admin,
            format!("GET /v1/site/status, {SITES} sites with summaries"),
        ),
    ]
    .map(|(url, token, what)| {
        (
            url,
            token,
            Latencies {
                what,
                millis: Vec::with_capacity(reads()),
            },
        )
    });
    for _ in 0..reads() {
        for (url, token, latencies) in &mut rows {
            let started = Instant::now();
            let response = client
                .get(url.as_str())
                .bearer_auth(token)
                .send()
                .await
                .unwrap();
            assert!(response.status().is_success());
            response.bytes().await.unwrap();
            latencies
                .millis
                .push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    stop.send(()).unwrap();
    task.await.unwrap();
    stop_empty.send(()).unwrap();
    empty_task.await.unwrap();
    rows.into_iter()
        .map(|(_, _, latencies)| latencies)
        .collect()
}

fn main() {
    support::announce("decisions_alerts");
    let dir =
        tempfile::tempdir_in(std::env::var_os("STOCKHOP_BENCH_DIR").unwrap_or_else(|| ".".into()))
            .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (alerts, post) = runtime.block_on(alert_latency(dir.path()));
    let (rate, floor) = runtime.block_on(settle_rate(dir.path()));
    let central = runtime.block_on(central_view(dir.path()));

    println!(
        "SQLite (WAL, synchronous=FULL), data in {}",
        dir.path().display()
    );
    println!();
    header("alert latency");
    alerts.row();
    post.row();
    println!(
        "| {:<52} | {:>5} | {:>9} | {:>9} | {:>9.1} |",
        "the evaluation period (the bound by design)",
        "–",
        "–",
        "–",
        EVALUATE_INTERVAL.as_secs_f64() * 1000.0
    );
    println!();
    println!("| {:<52} | {:>12} |", "decisions settled", "per second");
    println!("|{:-<54}|{:->14}|", "", "");
    println!(
        "| {:<52} | {:>12.0} |",
        format!(
            "POST /v1/site/decisions/{{id}} dismiss, {} in turn",
            decisions()
        ),
        rate
    );
    println!(
        "| {:<52} | {:>12.0} |",
        "raw SQLite: one row a durable transaction (floor)", floor
    );
    println!();
    header("the central's view");
    for row in &central {
        row.row();
    }
}

/// The site's open decisions, as the workbench lists them.
async fn open_decisions(client: &reqwest::Client, base: &str, admin: &str) -> Value {
    client
        .get(format!("{base}/v1/site/decisions"))
        .bearer_auth(admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}
