//! The site's view under a realistic fleet: 500 devices with a simulated
//! 24 h heartbeat history at their profiles' periods (and a day of handheld
//! hops), served over loopback while the fleet keeps heartbeating at those
//! periods. Prints latency of `GET /v1/site/status` and
//! `GET /v1/site/series?hours=12` beside `GET /healthz` (the HTTP floor)
//! and the raw SQLite reads under them, then the heartbeat ingest rate
//! beside the ledger's sync rate in the same run.
//!
//! Run: `cargo bench -p stockhop-site --profile site --bench site_view`.
//! Targets: status p99 ≤ 50 ms, series p99 ≤ 200 ms.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop::wire::Heartbeat;
use stockhop_site::ledger::{self, devices::Profile, hops, LedgerState};
use stockhop_site::store::db::Db;
use stockhop_site::{view, AppState};

mod support;

/// The fleet: (profile, devices, heartbeat period in seconds); 500
/// devices, a tenth of each in the quick mode.
fn fleet_shape() -> [(Profile, usize, i64); 4] {
    let per = support::scaled(1, 10);
    [
        (Profile::Fxr90, 50 / per, 60),
        (Profile::Mc3390xr, 300 / per, 900),
        (Profile::Rfd40, 100 / per, 1800),
        (Profile::Zt411r, 50 / per, 300),
    ]
}
/// The simulated history.
const HISTORY_MS: i64 = 24 * 60 * 60 * 1000;
/// Handheld hops in that day (about 1.2 a second; 5,000 in the quick mode).
fn history_hops() -> i64 {
    support::scaled(100_000, 5_000)
}
/// Timed requests per endpoint (a tenth in the quick mode).
fn status_requests() -> usize {
    support::scaled(300, 30)
}
fn series_requests() -> usize {
    support::scaled(100, 10)
}
/// Heartbeats and sync items in the ingest runs (a tenth in the quick
/// mode), and the clients sending.
fn ingest_heartbeats() -> usize {
    support::scaled(2_000, 200)
}
fn ingest_sync_items() -> usize {
    support::scaled(2_000, 400)
}
const INGEST_CLIENTS: usize = 8;

struct Device {
    id: String,
    token: String,
    period_ms: i64,
}

fn fleet(db: &Db, now: UnixMs) -> Vec<Device> {
    let mut devices = Vec::new();
    db.call_blocking(|conn| {
        let tx = conn.transaction().unwrap();
        for (profile, count, period_s) in fleet_shape() {
            for i in 0..count {
                let id = format!("{}-{i:03}", profile.as_str());
                let token =
                    ledger::devices::add(&tx, &id, profile, true, UnixMs(now.0 - HISTORY_MS))
                        .unwrap();
                let period_ms = period_s * 1000;
                // A day of heartbeats, phase-shifted per device; depth
                // rises and falls through the day.
                let mut at = now.0 - HISTORY_MS + (i as i64 * 7_919) % period_ms;
                while at <= now.0 {
                    let depth = ((at / 60_000 + i as i64) % 240 - 120).unsigned_abs();
                    let beat = Heartbeat {
                        sent_at: UnixMs(at),
                        queue_depth: depth,
                        oldest_queued_at: (depth > 0).then_some(UnixMs(at - 60_000)),
                        app_version: "bench".into(),
                    };
                    ledger::devices::record_heartbeat(&tx, &id, &beat, UnixMs(at)).unwrap();
                    ledger::heartbeat_log::record(&tx, &id, &beat, UnixMs(at)).unwrap();
                    at += period_ms;
                }
                devices.push(Device {
                    id,
                    token,
                    period_ms,
                });
            }
        }
        let facts = json!({"epc": "E280", "bin": "B-1"});
        let step = HISTORY_MS / history_hops();
        for n in 0..history_hops() {
            let recorded = now.0 - HISTORY_MS + n * step;
            let key = IdempotencyKey::mint().unwrap().to_string();
            hops::append(
                &tx,
                &hops::NewHop {
                    device_id: "mc3390xr-000",
                    session_id: None,
                    key: &key,
                    client_seq: None,
                    command: "scan",
                    kind: "ZONE_CHANGE",
                    mode: None,
                    unit_id: None,
                    from_bin: None,
                    to_bin: Some("B-1"),
                    unit_version: None,
                    facts: &facts,
                    occurred_at: UnixMs(recorded - 500 - (n % 50) * 100),
                    recorded_at: UnixMs(recorded),
                    device_clock_skew_ms: 0,
                    source_mode: hops::SourceMode::Live,
                    compensates: None,
                    closed_until: None,
                },
            )
            .unwrap();
        }
        tx.commit().unwrap();
    });
    devices
}

struct Latencies {
    what: &'static str,
    millis: Vec<f64>,
}

impl Latencies {
    fn at(&self, q: f64) -> f64 {
        let mut sorted = self.millis.clone();
        sorted.sort_by(f64::total_cmp);
        sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1]
    }
}

async fn time_gets(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    n: usize,
    what: &'static str,
) -> Latencies {
    let mut millis = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let response = client.get(url).bearer_auth(token).send().await.unwrap();
        assert!(
            response.status().is_success(),
            "{url}: {}",
            response.status()
        );
        response.bytes().await.unwrap();
        millis.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Latencies { what, millis }
}

fn time_raw(db: &Db, n: usize, what: &'static str, sql: &'static str, arg: i64) -> Latencies {
    let millis = (0..n)
        .map(|_| {
            let started = Instant::now();
            db.call_blocking(|conn| {
                let mut statement = conn.prepare_cached(sql).unwrap();
                let rows = statement.query_map([arg], |_| Ok(())).unwrap().count();
                std::hint::black_box(rows);
            });
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    Latencies { what, millis }
}

/// Posts heartbeats for the fleet at their periods until `stop` is set.
async fn keep_heartbeating(
    client: reqwest::Client,
    base: String,
    devices: Arc<Vec<Device>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> usize {
    let started = Instant::now();
    // Phases spread over each period, as a real fleet's are.
    let mut next: Vec<i64> = devices
        .iter()
        .enumerate()
        .map(|(i, d)| (i as i64 * 7_919) % d.period_ms)
        .collect();
    let mut sent = 0;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let elapsed = started.elapsed().as_millis() as i64;
        for (device, due) in devices.iter().zip(next.iter_mut()) {
            if *due <= elapsed {
                heartbeat(&client, &base, device, 5).await;
                *due += device.period_ms;
                sent += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sent
}

async fn heartbeat(client: &reqwest::Client, base: &str, device: &Device, depth: u64) {
    let body = json!({
        "sent_at": ledger::wall_clock().to_string(),
        "queue_depth": depth,
        "app_version": "bench",
    });
    let response = client
        .post(format!("{base}/v1/devices/{}/heartbeat", device.id))
        .bearer_auth(&device.token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
}

/// Sends `per_client` requests from each of [`INGEST_CLIENTS`] clients;
/// returns the rate in requests per second.
/// The bin the sync ingest puts its units into.
const INGEST_BIN: &str = "B-1";

/// The handheld ingest client `client` syncs as, for requests of
/// `per_request` items: the fleet's handhelds follow its fxr90 readers,
/// a set of [`INGEST_CLIENTS`] for each request size.
fn ingest_device(client: usize, per_request: usize) -> usize {
    fleet_shape()[0].1 + client + INGEST_CLIENTS * usize::from(per_request > 1)
}

/// The EPC of the unit a sync ingest scan puts away.
fn ingest_epc(device: &str, per_request: usize, seq: u64) -> String {
    format!("E-{device}-{per_request}-{seq}")
}

/// Imports the bin and the new units the sync ingest puts away, so every
/// scan it times is applied: a refused scan would time the refusal.
fn stock_ingest(db: &Db, devices: &[Device]) {
    let mut units = String::from("epc,code,sku,state,bin\n");
    for per_request in [1, 50] {
        let items = ingest_sync_items() / per_request / INGEST_CLIENTS * per_request;
        for client in 0..INGEST_CLIENTS {
            let device = &devices[ingest_device(client, per_request)].id;
            // Item 1 opens the session; the scans are 2 onwards.
            for seq in 2..=items as u64 {
                units += &format!("{},,SKU-1,new,\n", ingest_epc(device, per_request, seq));
            }
        }
    }
    let files = [
        (
            ledger::import::Kind::Bins,
            format!("bin,zone,location\n{INGEST_BIN},Z-P,L-1\n"),
        ),
        (ledger::import::Kind::Units, units),
    ];
    db.call_blocking(|conn| {
        for (kind, text) in files {
            ledger::import::import_reader(conn, kind, "bench", text.as_bytes(), UnixMs(0)).unwrap();
        }
    });
}

async fn ingest<F, Fut>(per_client: usize, send: F) -> f64
where
    F: Fn(usize, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let started = Instant::now();
    let tasks: Vec<_> = (0..INGEST_CLIENTS)
        .map(|client| {
            let send = send.clone();
            tokio::spawn(async move {
                for n in 0..per_client {
                    send(client, n).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    (per_client * INGEST_CLIENTS) as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    support::announce("site_view");
    let dir =
        tempfile::tempdir_in(std::env::var_os("STOCKHOP_BENCH_DIR").unwrap_or_else(|| ".".into()))
            .unwrap();
    let db = Db::open(&dir.path().join("site")).unwrap();
    let now = ledger::wall_clock();
    let built = Instant::now();
    let devices = Arc::new(fleet(&db, now));
    stock_ingest(&db, &devices);
    let (heartbeats, hops): (i64, i64) = db.call_blocking(|conn| {
        (
            conn.query_row("SELECT count(*) FROM heartbeat_log", [], |r| r.get(0))
                .unwrap(),
            conn.query_row("SELECT count(*) FROM hops", [], |r| r.get(0))
                .unwrap(),
        )
    });
    println!(
        "history: {} devices, {heartbeats} heartbeats and {hops} hops over 24 h (built in {:.1} s)",
        devices.len(),
        built.elapsed().as_secs_f64()
    );
    let admin = db
        .call_blocking(|conn| view::admin::add(conn, "bench", now))
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = AppState {
            db: db.clone(),
            www_dir: dir.path().join("www"),
            ledger: LedgerState::default(),
        };
        let (stop_server, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(stockhop_site::serve(listener, state, async {
            let _ = stopped.await;
        }));
        let client = reqwest::Client::new();

        // Reads while the fleet heartbeats at its periods.
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let beating = tokio::spawn(keep_heartbeating(
            client.clone(),
            base.clone(),
            Arc::clone(&devices),
            Arc::clone(&stop),
        ));
        let reads = [
            time_gets(&client, &format!("{base}/healthz"), &admin, status_requests(), "GET /healthz (HTTP floor)").await,
            time_gets(&client, &format!("{base}/v1/site/status"), &admin, status_requests(), "GET /v1/site/status").await,
            time_raw(&db, status_requests(), "raw: devices ⋈ latest heartbeats", "SELECT d.device_id, h.queue_depth FROM devices d LEFT JOIN device_heartbeats h ON h.device_id = d.device_id WHERE d.added_at > ?1", 0),
            time_gets(&client, &format!("{base}/v1/site/series?hours=12"), &admin, series_requests(), "GET /v1/site/series?hours=12").await,
            time_gets(&client, &format!("{base}/v1/site/chart.svg?hours=12"), &admin, series_requests(), "GET /v1/site/chart.svg?hours=12").await,
            time_raw(&db, series_requests(), "raw: 12 h of heartbeat rows", "SELECT device_id, at, queue_depth FROM heartbeat_log WHERE at > ?1 ORDER BY at", now.0 - 12 * 3_600_000),
        ];
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let sent_meanwhile = beating.await.unwrap();

        // Ingest: heartbeats beside one-item and 50-item sync requests.
        let hb_rate = {
            let (client, base, devices) = (client.clone(), base.clone(), Arc::clone(&devices));
            ingest(ingest_heartbeats() / INGEST_CLIENTS, move |c, n| {
                let (client, base, devices) = (client.clone(), base.clone(), Arc::clone(&devices));
                async move {
                    let device = &devices[(c * 61 + n) % devices.len()];
                    heartbeat(&client, &base, device, n as u64).await;
                }
            })
            .await
        };
        let sync_rate = |per_request: usize| {
            let (client, base, devices) = (client.clone(), base.clone(), Arc::clone(&devices));
            async move {
                let requests = ingest_sync_items() / per_request / INGEST_CLIENTS;
                let rate = ingest(requests, move |c, n| {
                    let (client, base, devices) = (client.clone(), base.clone(), Arc::clone(&devices));
                    async move {
                        // Each client is its own handheld with one session.
                        let device = &devices[ingest_device(c, per_request)];
                        let session = uuid_for(&device.id, per_request);
                        let items: Vec<_> = (0..per_request)
                            .map(|i| {
                                let seq = (n * per_request + i + 1) as u64;
                                let (command, body) = if seq == 1 {
                                    ("open_session", json!({"operator_id": format!("op-{}", device.id), "mode": "put_away", "context": {}}))
                                } else {
                                    ("scan", json!({"mode": "put_away", "epc": ingest_epc(&device.id, per_request, seq), "unit_version": 1, "bin": INGEST_BIN}))
                                };
                                let at = ledger::wall_clock();
                                json!({"key": IdempotencyKey::mint().unwrap().to_string(), "session_id": session,
                                       "client_seq": seq, "command": command, "occurred_at": at.to_string(),
                                       "queued_at": at.to_string(), "body": body})
                            })
                            .collect();
                        let response = client
                            .post(format!("{base}/v1/sync"))
                            .bearer_auth(&device.token)
                            .json(&json!({"device_id": device.id, "sent_at": ledger::wall_clock().to_string(), "items": items}))
                            .send()
                            .await
                            .unwrap();
                        assert!(response.status().is_success(), "{}", response.status());
                        let answer: Value = response.json().await.unwrap();
                        let applied = answer["results"]
                            .as_array()
                            .is_some_and(|results| results.iter().all(|r| r["outcome"] == "applied"));
                        assert!(applied, "every ingest scan is applied: {answer}");
                    }
                })
                .await;
                rate * per_request as f64
            }
        };
        let sync_1 = sync_rate(1).await;
        let sync_50 = sync_rate(50).await;
        stop_server.send(()).unwrap();
        server.await.unwrap().unwrap();

        println!("synchronous=FULL, WAL, data in {}; {sent_meanwhile} heartbeats arrived during the reads", dir.path().display());
        println!("| {:<38} | {:>5} | {:>8} | {:>8} | {:>8} |", "read", "n", "p50 ms", "p99 ms", "max ms");
        println!("|{:-<40}|{:->7}|{:->10}|{:->10}|{:->10}|", "", "", "", "", "");
        for row in &reads {
            println!(
                "| {:<38} | {:>5} | {:>8.2} | {:>8.2} | {:>8.2} |",
                row.what,
                row.millis.len(),
                row.at(0.5),
                row.at(0.99),
                row.at(1.0)
            );
        }
        println!("targets: status p99 ≤ 50 ms, series p99 ≤ 200 ms");
        println!();
        println!("| {:<38} | {:>12} |", "ingest, 8 clients", "per second");
        println!("|{:-<40}|{:->14}|", "", "");
        println!("| {:<38} | {:>12.0} |", "heartbeats (one a request)", hb_rate);
        println!("| {:<38} | {:>12.0} |", "sync items, one a request", sync_1);
        println!("| {:<38} | {:>12.0} |", "sync items, 50 a request", sync_50);
        let fleet_rate: f64 = fleet_shape().iter().map(|(_, n, period)| *n as f64 / *period as f64).sum();
        let fleet_size: usize = fleet_shape().iter().map(|(_, n, _)| n).sum();
        println!("the {fleet_size}-device fleet sends {fleet_rate:.2} heartbeats/s at its periods");
    });
}

/// A fixed session id per bench device and batch size.
fn uuid_for(device: &str, per_request: usize) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("{device}/{per_request}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    IdempotencyKey::from_random_bytes(bytes).to_string()
}
