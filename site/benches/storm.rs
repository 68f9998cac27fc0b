//! The backlog storm: 200 handhelds come back from a 40-minute outage at
//! once, each with its backlog, while 20 others keep scanning live, all
//! against the real site server over loopback HTTP (SQLite WAL,
//! `synchronous=FULL`, on the temp directory's disk).
//!
//! Each simulated handheld drains the way the service worker does: a
//! session's items oldest first, at most 50 a request, one request at a
//! time, a 10 s timeout, and after a refusal (503, a timeout) the
//! 2/4/8/16/30 s backoff. Live handhelds capture one scan every
//! [`LIVE_SCAN_EVERY`] and send what they hold at once.
//!
//! Three phases in one run, on one database:
//! 1. quiet: the live handhelds alone (the baseline for their latency);
//! 2. unloaded: [`UNLOADED_DEVICES`] handhelds drain a backlog each with
//!    nothing else running (the ledger's unloaded rate, items/s);
//! 3. storm: the 200 backlogs and the live handhelds together.
//!
//! Targets: live capture → applied p99 in the storm within 2x of quiet;
//! the storm's backlog drains at ≥ 50% of the unloaded rate. Prints a
//! table; asserts nothing.
//!
//! `cargo bench -p stockhop-site --profile site --bench storm`

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop::time::{Millis, UnixMs};
use stockhop_site::db::Db;
use stockhop_site::ledger::{self, devices::Profile, LedgerState};
use stockhop_site::AppState;
use tokio::sync::Mutex;

/// Handhelds back from the outage at once.
const BACKLOG_DEVICES: usize = 200;
/// Handhelds that keep scanning through the storm.
const LIVE_DEVICES: usize = 20;
/// How long the backlog handhelds were offline.
const OUTAGE: Millis = Millis::from_secs(40 * 60);
/// A handheld's scan rate during the outage: one scan every 5 s, so a
/// 40-minute outage leaves 480 items.
const OUTAGE_SCAN_EVERY: Millis = Millis::from_secs(5);
/// Items each backlog handheld holds when it comes back.
const BACKLOG_ITEMS: usize = (OUTAGE.0 / OUTAGE_SCAN_EVERY.0) as usize;
/// A live operator scanning steadily: an RFID sled reading a pallet's
/// cartons four a second (and enough live samples for a p99 while a fast
/// drain lasts a few seconds).
const LIVE_SCAN_EVERY: Duration = Duration::from_millis(250);
/// The quiet phase's length.
const QUIET_PHASE: Duration = Duration::from_secs(20);
/// Handhelds draining a backlog in the unloaded phase: enough to keep the
/// ledger's writer busy between round trips, few enough to queue nothing.
const UNLOADED_DEVICES: usize = 50;
/// Items one sync request carries at most (docs/design.md §3.3).
const ITEMS_PER_REQUEST: usize = 50;
/// The handheld's fetch timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The handheld's backoff after a failed attempt.
const BACKOFF: [Duration; 5] = [
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(16),
    Duration::from_secs(30),
];

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    // The backlog handhelds on a runtime of their own: they are other
    // devices, and their JSON work must not queue in front of the live
    // handhelds' tasks (the server has its own runtime too).
    let backlog_runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = runtime.block_on(run(dir.path(), backlog_runtime.handle().clone()));
    println!();
    println!(
        "backlog storm over loopback: {BACKLOG_DEVICES} handhelds back from a {} min outage ({BACKLOG_ITEMS} items each, 1 scan / {} s), {LIVE_DEVICES} live handhelds scanning 1 / {} s; SQLite WAL synchronous=FULL",
        OUTAGE.0 / 60_000,
        OUTAGE_SCAN_EVERY.0 / 1000,
        LIVE_SCAN_EVERY.as_secs_f64()
    );
    println!(
        "| {:<44} | {:>10} | {:>12} | {:>12} | {:>12} | {:>13} | {:>8} | {:>9} | {:>6} | {:>8} |",
        "phase",
        "live scans",
        "live p50 ms",
        "live p90 ms",
        "live p99 ms",
        "backlog items",
        "drain s",
        "items/s",
        "503s",
        "timeouts"
    );
    println!(
        "|{:-<46}|{:->12}|{:->14}|{:->14}|{:->14}|{:->15}|{:->10}|{:->11}|{:->8}|{:->10}|",
        "", "", "", "", "", "", "", "", "", ""
    );
    for (name, phase) in [
        ("quiet: live handhelds alone (baseline)", &report.quiet),
        (
            "unloaded: 50 backlogs alone (ledger rate)",
            &report.unloaded,
        ),
        ("storm: 200 backlogs + live handhelds", &report.storm),
    ] {
        let live = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
        let drain = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
        println!(
            "| {:<44} | {:>10} | {:>12} | {:>12} | {:>12} | {:>13} | {:>8} | {:>9} | {:>6} | {:>8} |",
            name,
            phase.live_scans,
            live(phase.live_p50_ms),
            live(phase.live_p90_ms),
            live(phase.live_p99_ms),
            phase.backlog_items,
            drain(phase.drain_secs),
            drain(phase.items_per_sec()),
            phase.overloaded,
            phase.timeouts,
        );
    }
    let p99_ratio =
        report.storm.live_p99_ms.unwrap_or(f64::NAN) / report.quiet.live_p99_ms.unwrap_or(f64::NAN);
    let rate_ratio = report.storm.items_per_sec().unwrap_or(f64::NAN)
        / report.unloaded.items_per_sec().unwrap_or(f64::NAN);
    println!(
        "live p99 in the storm / quiet: {p99_ratio:.2}x (target: within 2x); backlog drain / unloaded rate: {:.0}% (target: at least 50%)",
        rate_ratio * 100.0
    );
    println!();
}

#[derive(Default)]
struct Phase {
    live_scans: usize,
    live_p50_ms: Option<f64>,
    live_p90_ms: Option<f64>,
    live_p99_ms: Option<f64>,
    backlog_items: usize,
    drain_secs: Option<f64>,
    overloaded: u64,
    timeouts: u64,
}

impl Phase {
    fn items_per_sec(&self) -> Option<f64> {
        self.drain_secs.map(|s| self.backlog_items as f64 / s)
    }
}

struct Report {
    quiet: Phase,
    unloaded: Phase,
    storm: Phase,
}

/// What every handheld's drain counts.
#[derive(Default)]
struct Counters {
    overloaded: AtomicU64,
    timeouts: AtomicU64,
}

async fn run(dir: &std::path::Path, backlog: tokio::runtime::Handle) -> Report {
    let db = Db::open(&dir.join("data")).unwrap();
    let api = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/sync", api.local_addr().unwrap());
    let state = AppState {
        db: db.clone(),
        www_dir: dir.join("www"),
        ledger: LedgerState::default(),
    };
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    // The server on a runtime of its own, as `serve` runs it: the
    // handhelds' tasks here do not queue in front of its tasks.
    let api = api.into_std().unwrap();
    let server = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let api = tokio::net::TcpListener::from_std(api).unwrap();
            stockhop_site::serve(api, state, async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            })
            .await
        })
    });
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap();
    // The backlog handhelds' own connections, driven on their runtime.
    let backlog_client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap();
    let add = |prefix: &'static str, n: usize| {
        let db = db.clone();
        async move {
            db.call(move |conn| -> Result<Vec<Handheld>, ledger::LedgerError> {
                (0..n)
                    .map(|i| {
                        let id = format!("{prefix}-{i}");
                        let token = ledger::devices::add(
                            conn,
                            &id,
                            Profile::Mc3390xr,
                            true,
                            ledger::wall_clock(),
                        )?;
                        Ok(Handheld::new(id, token))
                    })
                    .collect()
            })
            .await
            .unwrap()
        }
    };
    let live: Vec<Arc<Handheld>> = add("LIVE", LIVE_DEVICES)
        .await
        .into_iter()
        .map(Arc::new)
        .collect();
    let unloaded: Vec<Handheld> = add("SOLO", UNLOADED_DEVICES).await;
    let stormers: Vec<Handheld> = add("BACK", BACKLOG_DEVICES).await;

    let quiet = live_phase(&client, &url, &live, &backlog, None).await;
    let unloaded = backlog_phase(&backlog_client, &url, &backlog, unloaded).await;
    let storm = live_phase(
        &client,
        &url,
        &live,
        &backlog,
        Some((backlog_client, stormers)),
    )
    .await;

    let _ = stop.send(true);
    tokio::task::spawn_blocking(move || server.join().unwrap().unwrap())
        .await
        .unwrap();
    Report {
        quiet,
        unloaded,
        storm,
    }
}

/// The live handhelds scanning, alone for [`QUIET_PHASE`] or, with
/// `backlogs`, until every backlog has drained.
async fn live_phase(
    client: &reqwest::Client,
    url: &str,
    live: &[Arc<Handheld>],
    runtime: &tokio::runtime::Handle,
    backlogs: Option<(reqwest::Client, Vec<Handheld>)>,
) -> Phase {
    let scanning = Arc::new(AtomicBool::new(true));
    let counters = Arc::new(Counters::default());
    let mut scanners = Vec::new();
    for (i, handheld) in live.iter().enumerate() {
        let (client, url, handheld, scanning, counters) = (
            client.clone(),
            url.to_owned(),
            Arc::clone(handheld),
            Arc::clone(&scanning),
            Arc::clone(&counters),
        );
        // Spread the live handhelds' scans evenly over the interval.
        let offset = LIVE_SCAN_EVERY.mul_f64(i as f64 / live.len() as f64);
        scanners.push(tokio::spawn(async move {
            handheld.open(&client, &url, &counters).await;
            tokio::time::sleep(offset).await;
            let mut latencies = Vec::new();
            let mut tick = tokio::time::interval(LIVE_SCAN_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            while scanning.load(Ordering::SeqCst) {
                tick.tick().await;
                let captured = Instant::now();
                handheld.capture_now().await;
                let handheld = Arc::clone(&handheld);
                let (client, url, counters) = (client.clone(), url.clone(), Arc::clone(&counters));
                // The drain runs beside the operator: a scan never waits
                // for the previous one's answer to be captured.
                latencies.push(tokio::spawn(async move {
                    handheld.drain(&client, &url, &counters).await;
                    captured.elapsed()
                }));
            }
            let mut done = Vec::new();
            for latency in latencies {
                done.push(latency.await.unwrap());
            }
            done
        }));
    }
    let mut phase = Phase::default();
    match backlogs {
        None => tokio::time::sleep(QUIET_PHASE).await,
        Some((backlog_client, backlogs)) => {
            let drained = backlog_drain(&backlog_client, url, runtime, backlogs, &counters).await;
            phase.backlog_items = drained.0;
            phase.drain_secs = Some(drained.1.as_secs_f64());
        }
    }
    scanning.store(false, Ordering::SeqCst);
    let mut latencies: Vec<Duration> = Vec::new();
    for scanner in scanners {
        latencies.extend(scanner.await.unwrap());
    }
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)))
            .map(|d| ms(*d))
    };
    phase.live_scans = latencies.len();
    phase.live_p50_ms = at(0.50);
    phase.live_p90_ms = at(0.90);
    phase.live_p99_ms = at(0.99);
    phase.overloaded = counters.overloaded.load(Ordering::SeqCst);
    phase.timeouts = counters.timeouts.load(Ordering::SeqCst);
    phase
}

async fn backlog_phase(
    client: &reqwest::Client,
    url: &str,
    runtime: &tokio::runtime::Handle,
    backlogs: Vec<Handheld>,
) -> Phase {
    let counters = Arc::new(Counters::default());
    let (items, took) = backlog_drain(client, url, runtime, backlogs, &counters).await;
    Phase {
        backlog_items: items,
        drain_secs: Some(took.as_secs_f64()),
        overloaded: counters.overloaded.load(Ordering::SeqCst),
        timeouts: counters.timeouts.load(Ordering::SeqCst),
        ..Phase::default()
    }
}

/// Every handheld of `backlogs` comes back with its outage's scans and
/// drains them; returns the items and how long until the last applied.
async fn backlog_drain(
    client: &reqwest::Client,
    url: &str,
    runtime: &tokio::runtime::Handle,
    backlogs: Vec<Handheld>,
    counters: &Arc<Counters>,
) -> (usize, Duration) {
    let back_at = ledger::wall_clock();
    for handheld in &backlogs {
        handheld.capture_outage(back_at).await;
    }
    let items = backlogs.len() * (BACKLOG_ITEMS + 1);
    let started = Instant::now();
    let mut drains = Vec::new();
    for handheld in backlogs {
        let (client, url, counters) = (client.clone(), url.to_owned(), Arc::clone(counters));
        drains.push(runtime.spawn(async move {
            handheld.drain(&client, &url, &counters).await;
        }));
    }
    for drain in drains {
        drain.await.unwrap();
    }
    (items, started.elapsed())
}

/// One simulated handheld: its queue (oldest first) and its session.
struct Handheld {
    device_id: String,
    token: String,
    session: String,
    queue: Mutex<Queue>,
    /// One drain at a time, as the service worker's Web Lock has it.
    draining: Mutex<()>,
}

#[derive(Default)]
struct Queue {
    seq: u64,
    pending: Vec<Value>,
}

impl Handheld {
    fn new(device_id: String, token: String) -> Handheld {
        Handheld {
            device_id,
            token,
            session: IdempotencyKey::mint().unwrap().to_string(),
            queue: Mutex::new(Queue::default()),
            draining: Mutex::new(()),
        }
    }

    async fn capture(&self, command: &str, body: Value, occurred_at: UnixMs) {
        let mut queue = self.queue.lock().await;
        queue.seq += 1;
        let item = json!({
            "key": IdempotencyKey::mint().unwrap().to_string(),
            "session_id": self.session,
            "client_seq": queue.seq,
            "command": command,
            "occurred_at": occurred_at.to_string(),
            "queued_at": occurred_at.to_string(),
            "body": body,
        });
        queue.pending.push(item);
    }

    fn scan_body(&self, n: u64) -> Value {
        json!({"mode": "put_away", "epc": format!("EPC-{}-{n}", self.device_id), "unit_version": 0, "bin": "B-1"})
    }

    /// Opens the handheld's session, once.
    async fn open(&self, client: &reqwest::Client, url: &str, counters: &Counters) {
        if self.queue.lock().await.seq > 0 {
            return;
        }
        self.capture(
            "open_session",
            json!({"operator_id": format!("op-{}", self.device_id), "mode": "put_away", "context": {}}),
            ledger::wall_clock(),
        )
        .await;
        self.drain(client, url, counters).await;
    }

    async fn capture_now(&self) {
        let n = self.queue.lock().await.seq;
        self.capture("scan", self.scan_body(n), ledger::wall_clock())
            .await;
    }

    /// The outage's scans, captured one every [`OUTAGE_SCAN_EVERY`] up to
    /// `back_at`, after the session's opening.
    async fn capture_outage(&self, back_at: UnixMs) {
        let start = UnixMs(back_at.0 - OUTAGE.0 as i64);
        self.capture(
            "open_session",
            json!({"operator_id": format!("op-{}", self.device_id), "mode": "put_away", "context": {}}),
            start,
        )
        .await;
        for i in 0..BACKLOG_ITEMS {
            let at = UnixMs(start.0 + (i as i64 + 1) * OUTAGE_SCAN_EVERY.0 as i64);
            self.capture("scan", self.scan_body(i as u64), at).await;
        }
    }

    /// Sends what the queue holds, 50 a request, until it is empty,
    /// backing off after a failed attempt.
    async fn drain(&self, client: &reqwest::Client, url: &str, counters: &Counters) {
        let _one_drain = self.draining.lock().await;
        let mut failures = 0usize;
        loop {
            let items: Vec<Value> = {
                let queue = self.queue.lock().await;
                queue
                    .pending
                    .iter()
                    .take(ITEMS_PER_REQUEST)
                    .cloned()
                    .collect()
            };
            if items.is_empty() {
                return;
            }
            let body = json!({"device_id": self.device_id, "sent_at": ledger::wall_clock().to_string(), "items": items});
            let sent = client
                .post(url)
                .bearer_auth(&self.token)
                .json(&body)
                .send()
                .await;
            let answered = match sent {
                Ok(response) if response.status() == 200 => response.json::<Value>().await.ok(),
                Ok(response) => {
                    assert_eq!(response.status(), 503, "only load is refused");
                    counters.overloaded.fetch_add(1, Ordering::SeqCst);
                    None
                }
                Err(err) => {
                    assert!(err.is_timeout(), "{err}");
                    counters.timeouts.fetch_add(1, Ordering::SeqCst);
                    None
                }
            };
            let Some(answer) = answered else {
                tokio::time::sleep(BACKOFF[failures.min(BACKOFF.len() - 1)]).await;
                failures += 1;
                continue;
            };
            failures = 0;
            let results = answer["results"].as_array().unwrap();
            let done: Vec<&str> = results
                .iter()
                .filter(|r| r["status"] == 200)
                .map(|r| r["key"].as_str().unwrap())
                .collect();
            assert!(
                results.iter().all(|r| r["status"] == 200
                    || r["code"] == "OPERATION_IN_PROGRESS"
                    || r["status"] == 202),
                "{answer}"
            );
            let mut queue = self.queue.lock().await;
            queue
                .pending
                .retain(|item| !done.contains(&item["key"].as_str().unwrap()));
        }
    }
}
