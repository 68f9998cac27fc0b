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
//! Three phases, interleaved in [`round_count`] rounds on one database so the
//! baselines and the storm share whatever else the machine is doing:
//! 1. unloaded: [`unloaded_devices`] handhelds drain a backlog each with
//!    nothing else running (the ledger's unloaded rate, items/s);
//! 2. quiet: the live handhelds alone for [`quiet_slice`] (the baseline
//!    for their latency);
//! 3. storm: a fresh 200 back from the outage and the live handhelds
//!    together, until the 200 have drained.
//!
//! One storm drains in a few seconds; eight give the storm's p99 thousands
//! of live scans to rest on rather than its few worst.
//!
//! Two arrangements, one table each: the server and the handhelds in one
//! process on every core, then the server in a process of its own pinned
//! to one core and the handhelds in another pinned to the other
//! (`taskset`), so the handhelds' CPU work does not run where the server
//! runs.
//!
//! Targets: live capture → applied p99 in the storm within 2x of quiet;
//! the storm's backlog drains at ≥ 50% of the unloaded rate. Prints the
//! tables; asserts nothing.
//!
//! `cargo bench -p stockhop-site --profile site --bench storm`

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop::time::{Millis, UnixMs};
use stockhop::wire::{MAX_ITEMS_PER_REQUEST, SYNC_PATH};
use stockhop_site::ledger::{self, devices::Profile, LedgerState};
use stockhop_site::store::db::Db;
use stockhop_site::AppState;
use tokio::sync::Mutex;

mod support;

/// Handhelds back from the outage at once (20 in the quick mode).
fn backlog_devices() -> usize {
    support::scaled(200, 20)
}
/// Handhelds that keep scanning through the storm (5 in the quick mode).
fn live_devices() -> usize {
    support::scaled(20, 5)
}
/// How long the backlog handhelds were offline (4 minutes in the quick
/// mode).
fn outage() -> Millis {
    support::scaled(Millis::from_secs(40 * 60), Millis::from_secs(4 * 60))
}
/// A handheld's scan rate during the outage: one scan every 5 s, so a
/// 40-minute outage leaves 480 items.
const OUTAGE_SCAN_EVERY: Millis = Millis::from_secs(5);
/// Items each backlog handheld holds when it comes back.
fn backlog_items() -> usize {
    (outage().0 / OUTAGE_SCAN_EVERY.0) as usize
}
/// A live operator scanning steadily: an RFID sled reading a pallet's
/// cartons four a second.
const LIVE_SCAN_EVERY: Duration = Duration::from_millis(250);
/// Rounds of the three phases: each round's storm is a fresh set of
/// [`backlog_devices`] handhelds back from the outage (one in the quick
/// mode).
fn round_count() -> usize {
    support::scaled(8, 1)
}
/// The quiet phase's length in each round: 20 s in all, about as long as
/// the storms together (0.5 s in the quick mode).
fn quiet_slice() -> Duration {
    support::scaled(Duration::from_millis(2_500), Duration::from_millis(500))
}
/// Handhelds draining a backlog in the unloaded phase: enough to keep the
/// ledger's writer busy between round trips, few enough to queue nothing
/// (5 in the quick mode).
fn unloaded_devices() -> usize {
    support::scaled(50, 5)
}
/// The handheld's fetch timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The separated arrangement's cores: the server's and the handhelds'.
const SERVER_CPU: &str = "1";
const LOAD_CPU: &str = "0";
/// The arguments this bench runs itself with for its other processes.
const SERVER_ROLE: &str = "--storm-server";
const SEPARATED_ROLE: &str = "--storm-separated";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == SERVER_ROLE) {
        serve_role(std::path::Path::new(&args[at + 1]));
        return;
    }
    if args.iter().any(|arg| arg == SEPARATED_ROLE) {
        arrangement(Arrangement::Separated);
        return;
    }
    support::announce("storm");
    arrangement(Arrangement::Shared);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 {
        println!("separated arrangement skipped: it needs 2 cores, this machine has {cores}");
        return;
    }
    // The handhelds in a process of their own, pinned to their core; it
    // starts the server, pinned to the other.
    let status = Command::new("taskset")
        .args(["-c", LOAD_CPU])
        .arg(std::env::current_exe().unwrap())
        .arg(SEPARATED_ROLE)
        .status()
        .expect("taskset (util-linux) runs the separated arrangement");
    assert!(status.success(), "separated arrangement: {status}");
}

/// Where the simulated handhelds run beside the server.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arrangement {
    /// One process: the server on a runtime of its own (as `serve` runs
    /// it), the handhelds on theirs, every thread on every core.
    Shared,
    /// The server in a process of its own pinned to [`SERVER_CPU`], the
    /// handhelds in this one pinned to [`LOAD_CPU`].
    Separated,
}

/// Runs the rounds in `arrangement` and prints their table.
fn arrangement(arrangement: Arrangement) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    // The backlog handhelds on a runtime of their own: they are other
    // devices, and their JSON work must not queue in front of the live
    // handhelds' tasks.
    let backlog_runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = runtime.block_on(run(
        dir.path(),
        arrangement,
        backlog_runtime.handle().clone(),
    ));
    let placed = match arrangement {
        Arrangement::Shared => "server and handhelds in one process on every core".to_owned(),
        Arrangement::Separated => format!(
            "server pinned to cpu {SERVER_CPU}, handhelds in another process pinned to cpu {LOAD_CPU}"
        ),
    };
    println!();
    println!(
        "backlog storm over loopback, {placed}; {} rounds, each: {} backlogs alone, the live handhelds alone {} s, {} handhelds back from a {} min outage ({} items each, 1 scan / {} s) with the {} live handhelds scanning 1 / {} s; SQLite WAL synchronous=FULL",
        round_count(),
        unloaded_devices(),
        quiet_slice().as_secs_f64(),
        backlog_devices(),
        outage().0 / 60_000,
        backlog_items(),
        OUTAGE_SCAN_EVERY.0 / 1000,
        live_devices(),
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
    let unloaded_name = format!(
        "unloaded: {} backlogs alone (ledger rate)",
        unloaded_devices()
    );
    let storm_name = format!("storm: {} backlogs + live handhelds", backlog_devices());
    for (name, phase) in [
        ("quiet: live handhelds alone (baseline)", &report.quiet),
        (unloaded_name.as_str(), &report.unloaded),
        (storm_name.as_str(), &report.storm),
    ] {
        let figure = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
        println!(
            "| {:<44} | {:>10} | {:>12} | {:>12} | {:>12} | {:>13} | {:>8} | {:>9} | {:>6} | {:>8} |",
            name,
            phase.live.len(),
            figure(phase.live_ms(0.50)),
            figure(phase.live_ms(0.90)),
            figure(phase.live_ms(0.99)),
            phase.backlog_items,
            figure(phase.drain_secs()),
            figure(phase.items_per_sec()),
            phase.counters.overloaded.load(Ordering::SeqCst),
            phase.counters.timeouts.load(Ordering::SeqCst),
        );
    }
    let p99_ratio = report.storm.live_ms(0.99).unwrap_or(f64::NAN)
        / report.quiet.live_ms(0.99).unwrap_or(f64::NAN);
    let rate_ratio = report.storm.items_per_sec().unwrap_or(f64::NAN)
        / report.unloaded.items_per_sec().unwrap_or(f64::NAN);
    println!(
        "live p99 in the storm / quiet: {p99_ratio:.2}x (target: within 2x); backlog drain / unloaded rate: {:.0}% (target: at least 50%)",
        rate_ratio * 100.0
    );
    println!();
}

/// The server role of the separated arrangement: serves the database in
/// `data` on a loopback port it prints on stdout, until stdin closes.
fn serve_role(data: &std::path::Path) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let api = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{}", api.local_addr().unwrap());
        let state = AppState {
            db: Db::open(data).unwrap(),
            www_dir: data.join("www"),
            ledger: LedgerState::default(),
        };
        stockhop_site::serve(api, state, async {
            // The bench closes the pipe when it is done.
            let _ = tokio::task::spawn_blocking(|| {
                std::io::copy(&mut std::io::stdin(), &mut std::io::sink())
            })
            .await;
        })
        .await
        .unwrap();
    });
}

/// The site server the handhelds talk to.
enum Server {
    InProcess(
        tokio::sync::watch::Sender<bool>,
        std::thread::JoinHandle<std::io::Result<()>>,
    ),
    Child(std::process::Child),
}

impl Server {
    /// Serves `db` on a runtime of its own in this process, as `serve`
    /// runs it: the handhelds' tasks do not queue in front of its tasks.
    /// Returns the sync URL too.
    fn in_process(db: Db, dir: &std::path::Path) -> (Server, String) {
        let api = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        api.set_nonblocking(true).unwrap();
        let addr = api.local_addr().unwrap();
        let state = AppState {
            db,
            www_dir: dir.join("www"),
            ledger: LedgerState::default(),
        };
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let thread = std::thread::spawn(move || {
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
        let url = format!("http://{addr}{SYNC_PATH}");
        (Server::InProcess(stop, thread), url)
    }

    /// Serves the database in `data` from this bench's server role, in a
    /// process of its own pinned to [`SERVER_CPU`].
    fn pinned_child(data: &std::path::Path) -> (Server, String) {
        let mut child = Command::new("taskset")
            .args(["-c", SERVER_CPU])
            .arg(std::env::current_exe().unwrap())
            .arg(SERVER_ROLE)
            .arg(data)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("taskset (util-linux) starts the pinned server");
        let mut addr = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut addr)
            .unwrap();
        let url = format!("http://{}{SYNC_PATH}", addr.trim());
        (Server::Child(child), url)
    }

    async fn stop(self) {
        match self {
            Server::InProcess(stop, thread) => {
                let _ = stop.send(true);
                tokio::task::spawn_blocking(move || thread.join().unwrap().unwrap())
                    .await
                    .unwrap();
            }
            Server::Child(mut child) => {
                drop(child.stdin.take());
                let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
                    .await
                    .unwrap();
                assert!(status.success(), "server: {status}");
            }
        }
    }
}

/// What one phase measured over every round.
#[derive(Default)]
struct Phase {
    /// Live scans' capture → applied.
    live: Vec<Duration>,
    backlog_items: usize,
    /// From each round's backlogs starting to the last one applied.
    draining: Option<Duration>,
    counters: Arc<Counters>,
}

impl Phase {
    fn live_ms(&self, quantile: f64) -> Option<f64> {
        let at =
            ((self.live.len() as f64 * quantile) as usize).min(self.live.len().checked_sub(1)?);
        Some(self.live[at].as_secs_f64() * 1000.0)
    }

    fn drain_secs(&self) -> Option<f64> {
        self.draining.map(|took| took.as_secs_f64())
    }

    fn items_per_sec(&self) -> Option<f64> {
        self.drain_secs().map(|s| self.backlog_items as f64 / s)
    }

    fn drained(&mut self, (items, took): (usize, Duration)) {
        self.backlog_items += items;
        self.draining = Some(self.draining.unwrap_or_default() + took);
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

/// What the live handhelds do now: [`PAUSED`], or scan for [`QUIET`] or
/// [`STORM`], or stop ([`DONE`]).
const PAUSED: u8 = 0;
const QUIET: u8 = 1;
const STORM: u8 = 2;
const DONE: u8 = 3;

/// The live handhelds' shared state.
struct Scanning {
    phase: AtomicU8,
    /// Live drains not yet answered: a phase starts when the last one's
    /// are done, so no scan is counted in a phase it did not run in.
    in_flight: AtomicUsize,
    /// Each scan's phase and capture → applied.
    samples: std::sync::Mutex<Vec<(u8, Duration)>>,
    /// The counters of the quiet and the storm phase.
    counters: [Arc<Counters>; 2],
}

impl Scanning {
    /// Switches to `phase` once every live drain of the last one is done.
    async fn switch(&self, phase: u8) {
        self.phase.store(PAUSED, Ordering::SeqCst);
        while self.in_flight.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.phase.store(phase, Ordering::SeqCst);
    }
}

async fn run(
    dir: &std::path::Path,
    arrangement: Arrangement,
    backlog: tokio::runtime::Handle,
) -> Report {
    let data = dir.join("data");
    let db = Db::open(&data).unwrap();
    let add = |prefix: String, n: usize| {
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
    // Every device is registered before the server starts.
    let live: Vec<Arc<Handheld>> = add("LIVE".into(), live_devices())
        .await
        .into_iter()
        .map(Arc::new)
        .collect();
    let mut rounds = Vec::new();
    for round in 0..round_count() {
        let unloaded = add(format!("SOLO{round}"), unloaded_devices()).await;
        let storm = add(format!("BACK{round}"), backlog_devices()).await;
        rounds.push((unloaded, storm));
    }
    let every_device = live.iter().map(|h| h.device_id.as_str()).chain(
        rounds
            .iter()
            .flat_map(|(unloaded, storm)| unloaded.iter().chain(storm))
            .map(|h| h.device_id.as_str()),
    );
    stock(&db, every_device);
    let (server, url) = match arrangement {
        Arrangement::Shared => Server::in_process(db, dir),
        Arrangement::Separated => {
            drop(db);
            Server::pinned_child(&data)
        }
    };
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap();
    // The backlog handhelds' own connections, driven on their runtime.
    let backlog_client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap();

    let mut report = Report {
        quiet: Phase::default(),
        unloaded: Phase::default(),
        storm: Phase::default(),
    };
    let scanning = Arc::new(Scanning {
        phase: AtomicU8::new(PAUSED),
        in_flight: AtomicUsize::new(0),
        samples: std::sync::Mutex::new(Vec::new()),
        counters: [
            Arc::clone(&report.quiet.counters),
            Arc::clone(&report.storm.counters),
        ],
    });
    for handheld in &live {
        handheld.open(&client, &url, &report.quiet.counters).await;
    }
    let scanners: Vec<_> = live
        .iter()
        .enumerate()
        .map(|(i, handheld)| {
            // Spread the live handhelds' scans evenly over the interval.
            let offset = LIVE_SCAN_EVERY.mul_f64(i as f64 / live.len() as f64);
            tokio::spawn(scan(
                client.clone(),
                url.clone(),
                Arc::clone(handheld),
                Arc::clone(&scanning),
                offset,
            ))
        })
        .collect();
    for (unloaded, storm) in rounds {
        scanning.switch(PAUSED).await;
        let drained = backlog_drain(
            &backlog_client,
            &url,
            &backlog,
            unloaded,
            &report.unloaded.counters,
        )
        .await;
        report.unloaded.drained(drained);
        scanning.switch(QUIET).await;
        tokio::time::sleep(quiet_slice()).await;
        scanning.switch(STORM).await;
        let drained = backlog_drain(
            &backlog_client,
            &url,
            &backlog,
            storm,
            &report.storm.counters,
        )
        .await;
        report.storm.drained(drained);
    }
    scanning.switch(DONE).await;
    for scanner in scanners {
        scanner.await.unwrap();
    }
    let samples = std::mem::take(&mut *scanning.samples.lock().unwrap());
    for (phase, latency) in samples {
        match phase {
            QUIET => report.quiet.live.push(latency),
            _ => report.storm.live.push(latency),
        }
    }
    report.quiet.live.sort();
    report.storm.live.sort();
    server.stop().await;
    report
}

/// One live handheld scanning every [`LIVE_SCAN_EVERY`] while the phase is
/// quiet or the storm, its drain beside it.
async fn scan(
    client: reqwest::Client,
    url: String,
    handheld: Arc<Handheld>,
    scanning: Arc<Scanning>,
    offset: Duration,
) {
    tokio::time::sleep(offset).await;
    let mut tick = tokio::time::interval(LIVE_SCAN_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        // Counted in flight before the phase is read: a switch sees either
        // this scan in flight or its own phase here.
        scanning.in_flight.fetch_add(1, Ordering::SeqCst);
        let phase = scanning.phase.load(Ordering::SeqCst);
        if phase == PAUSED || phase == DONE {
            scanning.in_flight.fetch_sub(1, Ordering::SeqCst);
            if phase == DONE {
                return;
            }
            continue;
        }
        let captured = Instant::now();
        handheld.capture_now().await;
        let (client, url, handheld, scanning) = (
            client.clone(),
            url.clone(),
            Arc::clone(&handheld),
            Arc::clone(&scanning),
        );
        // The drain runs beside the operator: a scan never waits for the
        // previous one's answer to be captured.
        tokio::spawn(async move {
            let counters = &scanning.counters[usize::from(phase == STORM)];
            handheld.drain(&client, &url, counters).await;
            let latency = captured.elapsed();
            scanning.samples.lock().unwrap().push((phase, latency));
            scanning.in_flight.fetch_sub(1, Ordering::SeqCst);
        });
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
    let items = backlogs.len() * (backlog_items() + 1);
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

/// The units each handheld puts away, in stock in the first bin at start:
/// its scans move them between the two bins in turn.
const UNITS_PER_DEVICE: usize = 10;
/// The bins the units move between.
const BINS: [&str; 2] = ["B-1", "B-2"];

fn unit_epc(device: &str, unit: u64) -> String {
    format!("EPC-{device}-{unit}")
}

/// Imports the two bins and every device's units, in stock in the first,
/// as a site's reference data is there before a shift.
fn stock<'a>(db: &Db, devices: impl Iterator<Item = &'a str>) {
    let mut units = String::from("epc,code,sku,state,bin\n");
    for device in devices {
        for unit in 0..UNITS_PER_DEVICE as u64 {
            units += &format!("{},,SKU-1,in_stock,{}\n", unit_epc(device, unit), BINS[0]);
        }
    }
    let files = [
        (
            ledger::import::Kind::Bins,
            format!(
                "bin,zone,location\n{},Z-P,L-1\n{},Z-P,L-1\n",
                BINS[0], BINS[1]
            ),
        ),
        (ledger::import::Kind::Units, units),
    ];
    db.call_blocking(|conn| {
        for (kind, text) in files {
            ledger::import::import_reader(conn, kind, "bench", text.as_bytes(), UnixMs(0)).unwrap();
        }
    });
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

    /// Scan `n` moves one of the device's [`UNITS_PER_DEVICE`] units into
    /// the bin it is not in, so every scan is applied and does a put-away's
    /// whole work. No `unit_version`: the device's reference cache is empty,
    /// as on its first shift, so the ledger checks no version.
    fn scan_body(&self, n: u64) -> Value {
        let units = UNITS_PER_DEVICE as u64;
        let bin = BINS[((n / units + 1) % 2) as usize];
        json!({"mode": "put_away", "epc": unit_epc(&self.device_id, n % units), "bin": bin})
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
        let start = UnixMs(back_at.0 - outage().0 as i64);
        self.capture(
            "open_session",
            json!({"operator_id": format!("op-{}", self.device_id), "mode": "put_away", "context": {}}),
            start,
        )
        .await;
        for i in 0..backlog_items() {
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
                    .take(MAX_ITEMS_PER_REQUEST)
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
                tokio::time::sleep(support::backoff(failures)).await;
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
                results
                    .iter()
                    .all(|r| (r["status"] == 200 && r["outcome"] == "applied")
                        || r["code"] == "OPERATION_IN_PROGRESS"
                        || r["status"] == 202),
                "every scan is applied or still in progress: {answer}"
            );
            let mut queue = self.queue.lock().await;
            queue
                .pending
                .retain(|item| !done.contains(&item["key"].as_str().unwrap()));
        }
    }
}
