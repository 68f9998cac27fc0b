//! A site of 1,000 devices: the real `stockhop-site serve` binary in a
//! process of its own (so its CPU and memory are its own), over loopback,
//! with everything a busy site sends it at once:
//! - 1,000 handhelds (800 MC3390xR, 200 RFD40 sleds), added and
//!   commissioned before the run, each heartbeating at its profile's
//!   period, and 200 of them scanning at any moment, one scan every 2 s
//!   each, in a mix of modes (put-away, receive against a GRN, cycle count,
//!   dispatch verify) against reference data imported before the run, so
//!   every scan is applied (a refused scan would measure the refusal);
//!   each drains the way the service worker does (what it holds, at most
//!   50 items a request, one request at a time, a 10 s timeout, backoff
//!   after a refusal);
//! - 10 RFID portals (Zebra IoT Connector) posting one report a second of
//!   700 reads each to the terminal listener: a pallet's tags read several
//!   times a second, over and over while it stands in the portal;
//! - 20 gates on iclock uploading ATTLOG punches to the listener;
//! - 5 supervisors on the site's view, signed in as the page signs in and
//!   polling what the page polls, every 5 s.
//!
//! Each handheld and terminal sends from a loopback address other than
//! the supervisors' (127.0.1.1 to 127.0.1.250, a few devices an address),
//! as devices on a site's Wi-Fi and LAN are hosts of their own: the site
//! caps the connections one address holds open.
//!
//! **The shift, compressed.** The run is [`SHIFT`] of a shift in
//! [`load_length`] (5× faster in the full run). What happens at a rate
//! runs at its real rate: scans, portal reads, punches and the view's
//! polls are the load the site carries at any instant. What happens once
//! in minutes runs faster by the same factor, so the run holds all of the
//! shift's share of it: every heartbeat period is divided by it, and the
//! 200 scanning hand over to the next 200 [`scanning_groups`] times, so
//! every one of the 1,000 opens a session, scans and closes it.
//!
//! Before the load, in the same run and on the same database, each
//! endpoint is timed alone (the baseline beside each row), and one
//! handheld syncs one put-away a request back to back: the ledger's
//! unloaded rate.
//!
//! Prints the tables; asserts nothing, but panics with what it saw when
//! the site breaks (stops answering, exits, or refuses a scan the data
//! says it must apply).
//!
//! `cargo bench -p stockhop-site --profile site --bench site_load`
//! (`STOCKHOP_BENCH_QUICK=1`: 20 handhelds, 2 portals and gates, one
//! supervisor, a 4 s load; see `support`)

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop::time::{Millis, UnixMs};
use stockhop::wire::{MAX_ITEMS_PER_REQUEST, SYNC_PATH};
use stockhop_site::ledger::{self, devices::Profile};
use stockhop_site::listener::queue::{self, PRUNE_ROWS_MAX};
use stockhop_site::listener::rules::{RATE_WINDOW_MAX, STALE_AFTER};
use stockhop_site::listener::unix_now;
use stockhop_site::store::db::{open_connection, Db};
use stockhop_site::view;

#[path = "site_load/soak.rs"]
mod soak;
mod support;

/// The shift the load stands for.
const SHIFT: Duration = Duration::from_secs(5 * 60);
/// How long the load runs: 60 s (the shift 5× compressed), 4 s in the
/// quick mode; a soak's minutes with `--soak MINUTES`.
fn load_length() -> Duration {
    match soak::soak_minutes() {
        Some(minutes) => Duration::from_secs(minutes * 60),
        None => support::scaled(Duration::from_secs(60), Duration::from_secs(4)),
    }
}
/// How much faster than real the shift's slow cycles run (never slower:
/// a soak longer than the shift runs them at their real pace).
fn compression() -> f64 {
    (SHIFT.as_secs_f64() / load_length().as_secs_f64()).max(1.0)
}
/// The windows the data directory's size is read at: a soak's 5 minutes,
/// or a quarter of a run without `--soak`.
fn size_window() -> Duration {
    match soak::soak_minutes() {
        Some(_) => soak::soak_window(),
        None => load_length() / soak::WINDOWS_IN_A_RUN,
    }
}
/// Handhelds on the site (20 in the quick mode).
fn handhelds() -> usize {
    support::scaled(1_000, 20)
}
/// Handhelds scanning at any moment (4 in the quick mode).
fn scanning_at_once() -> usize {
    support::scaled(200, 4)
}
/// Turns in the run: each fifth of the handhelds scans for a fifth of it.
fn scanning_groups() -> usize {
    handhelds().div_ceil(scanning_at_once())
}
/// One operator's scan rate.
const SCAN_EVERY: Duration = Duration::from_secs(2);
/// Every fifth handheld is an RFD40 sled, the others MC3390xR.
const SLED_EVERY: usize = 5;
/// RFID portals (2 in the quick mode).
fn portals() -> usize {
    support::scaled(10, 2)
}
/// A portal's reads a second (the FXR90 profile's), sent as one report a
/// second as its IoT Connector batches them.
const READS_PER_REPORT: usize = 700;
const REPORT_EVERY: Duration = Duration::from_secs(1);
/// A pallet in a portal: this many tags, each read 5 times a second (one
/// read an antenna pass), standing in the field for [`PALLET_REPORTS`]
/// reports before the next one.
const TAGS_PER_PALLET: usize = 140;
const PALLET_REPORTS: u64 = 3;
/// Gates on iclock (2 in the quick mode).
fn gates() -> usize {
    support::scaled(20, 2)
}
/// A gate at shift change: one person through every 2 s (30 a minute,
/// a quarter of the listener's per-terminal rate rule), each punch its own
/// upload (Realtime=1).
const PUNCH_EVERY: Duration = Duration::from_secs(2);
/// Supervisors with the site's view open (1 in the quick mode).
fn supervisors() -> usize {
    support::scaled(5, 1)
}
/// The view page's poll (`POLL_MS` in its script).
const POLL_EVERY: Duration = Duration::from_secs(5);
/// The handheld's fetch timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a backing-off handheld looks whether the run has ended.
const BACKOFF_STEP: Duration = Duration::from_millis(100);
/// The unloaded phase: the one handheld syncs back to back this long,
/// and each other endpoint is asked this many times, one at a time.
fn unloaded_sync() -> Duration {
    support::scaled(Duration::from_secs(5), Duration::from_secs(1))
}
fn unloaded_requests() -> usize {
    support::scaled(40, 5)
}
/// How long `serve` may take to say where it listens.
const START_DEADLINE: Duration = Duration::from_secs(60);
/// `/proc/PID/stat` counts CPU time in USER_HZ ticks, 100 a second on
/// every Linux architecture (the kernel scales to it).
const PROC_TICKS_PER_SEC: f64 = 100.0;
/// Units a put-away handheld moves between its two bins, and the units in
/// a counted bin.
const PUT_AWAY_UNITS: usize = 4;
const COUNTED_UNITS: usize = 4;
const PUT_AWAY_BINS: [&str; 2] = ["PA-1", "PA-2"];
const DOCK_BIN: &str = "DK-1";
const RECEIVED_SKU: &str = "SKU-R";

fn main() {
    support::announce("site_load");
    let dir = tempfile::tempdir_in(
        std::env::var_os("STOCKHOP_BENCH_DIR").unwrap_or_else(|| std::env::temp_dir().into()),
    )
    .unwrap();
    let site = prepare(dir.path());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut server = Server::start(dir.path(), &site.terminal_config);
    let report = runtime.block_on(run(&site, &server));
    server.stop();
    let past = past_the_horizon(&site.data);
    print(&site, &report, &server);
    print_past_the_horizon(&report, &past);
}

// ---------------------------------------------------------------------------
// The site's data before the run

/// What a handheld does in its turn.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    PutAway,
    Receive,
    CycleCount,
    DispatchVerify,
}

impl Mode {
    /// The mix: of every 20 handhelds 8 put away, 5 receive, 4 count and 3
    /// verify dispatches.
    fn of(device: usize) -> Mode {
        match device % 20 {
            0..8 => Mode::PutAway,
            8..13 => Mode::Receive,
            13..17 => Mode::CycleCount,
            _ => Mode::DispatchVerify,
        }
    }

    fn wire(self) -> &'static str {
        match self {
            Mode::PutAway => "put_away",
            Mode::Receive => "receive",
            Mode::CycleCount => "cycle_count",
            Mode::DispatchVerify => "dispatch_verify",
        }
    }
}

struct Device {
    id: String,
    token: String,
    profile: Profile,
    mode: Mode,
    /// The count a counting handheld counts.
    count_id: Option<String>,
}

impl Device {
    /// The session's context its mode opens with.
    fn context(&self) -> Value {
        match self.mode {
            Mode::PutAway => json!({}),
            Mode::Receive => json!({"grn": format!("GRN-{}", self.id)}),
            Mode::CycleCount => json!({"count_id": self.count_id}),
            Mode::DispatchVerify => json!({"manifest": format!("MAN-{}", self.id)}),
        }
    }

    /// Scan `n` of its turn, one the site applies.
    fn scan(&self, n: usize) -> Value {
        let id = &self.id;
        match self.mode {
            Mode::PutAway => json!({
                "mode": "put_away",
                "epc": format!("PA-{id}-{}", n % PUT_AWAY_UNITS),
                "bin": PUT_AWAY_BINS[(n / PUT_AWAY_UNITS + 1) % 2],
            }),
            Mode::Receive => json!({
                "mode": "receive", "grn": format!("GRN-{id}"),
                "epc": format!("RC-{id}-{n}"), "sku": RECEIVED_SKU,
            }),
            Mode::CycleCount => json!({
                "mode": "cycle_count", "count_id": self.count_id,
                "epc": format!("CC-{id}-{}", n % COUNTED_UNITS), "bin": format!("CC-{id}"),
            }),
            Mode::DispatchVerify => json!({
                "mode": "dispatch_verify", "manifest": format!("MAN-{id}"),
                "epc": format!("DS-{id}-{n}"),
            }),
        }
    }
}

/// The scans one turn holds at most.
fn scans_per_turn() -> usize {
    let turn = load_length().as_secs_f64() / scanning_groups() as f64;
    (turn / SCAN_EVERY.as_secs_f64()).ceil() as usize + 1
}

/// The handheld the unloaded phase syncs with, and the units it puts away.
const SOLO_DEVICE: &str = "HH-SOLO";
fn solo_units() -> usize {
    // More than it syncs at 1 ms a scan.
    unloaded_sync().as_millis() as usize
}

struct Site {
    devices: Vec<Device>,
    solo: Device,
    admins: Vec<String>,
    data: PathBuf,
    terminal_config: PathBuf,
}

/// Adds the devices and admins, imports the reference data and opens the
/// counts, in the data directory `serve` then opens.
fn prepare(dir: &Path) -> Site {
    let data = dir.join("data");
    let db = Db::open(&data).unwrap();
    let now = ledger::wall_clock();
    let built = Instant::now();
    let mut devices: Vec<Device> = db.call_blocking(|conn| {
        let tx = conn.transaction().unwrap();
        let devices = (0..handhelds())
            .map(|i| {
                let id = format!("HH-{i:04}");
                let profile = if i % SLED_EVERY == SLED_EVERY - 1 {
                    Profile::Rfd40
                } else {
                    Profile::Mc3390xr
                };
                let token = ledger::devices::add(&tx, &id, profile, true, now).unwrap();
                Device {
                    id,
                    token,
                    profile,
                    mode: Mode::of(i),
                    count_id: None,
                }
            })
            .collect();
        tx.commit().unwrap();
        devices
    });
    let solo = Device {
        token: db
            .call_blocking(|conn| {
                ledger::devices::add(conn, SOLO_DEVICE, Profile::Mc3390xr, true, now)
            })
            .unwrap(),
        id: SOLO_DEVICE.to_owned(),
        profile: Profile::Mc3390xr,
        mode: Mode::PutAway,
        count_id: None,
    };
    import_reference(&db, &devices);
    db.call_blocking(|conn| {
        for device in devices.iter_mut().filter(|d| d.mode == Mode::CycleCount) {
            let bin = format!("CC-{}", device.id);
            device.count_id = Some(
                ledger::modes::cycle_count::open_place(conn, "L-1", "Z-C", Some(&bin), now)
                    .unwrap(),
            );
        }
    });
    let admins = (0..supervisors())
        .map(|i| {
            db.call_blocking(|conn| view::admin::add(conn, &format!("supervisor-{i}"), now))
                .unwrap()
        })
        .collect();
    drop(db);
    println!(
        "site: {} handhelds, their reference data and {} counts prepared in {:.1} s",
        devices.len(),
        devices.iter().filter(|d| d.count_id.is_some()).count(),
        built.elapsed().as_secs_f64()
    );
    let terminal_config = dir.join("terminals.toml");
    let serials: Vec<String> = (0..portals())
        .map(portal_serial)
        .chain((0..gates()).map(gate_serial))
        .chain([SOLO_PORTAL.to_owned(), SOLO_GATE.to_owned()])
        .collect();
    let profiles: String = (0..portals())
        .map(|p| format!("{} = \"fxr90\"\n", portal_serial(p)))
        .collect();
    // A soak's identities pass within it; a run's are the site's week.
    let retention = soak::soak_minutes()
        .map(|_| {
            format!(
                "seen_retention_minutes = {}\n",
                soak::SOAK_SEEN_RETENTION_MINUTES
            )
        })
        .unwrap_or_default();
    std::fs::write(
        &terminal_config,
        format!(
            "allow = {serials:?}\ntime_zone = \"UTC\"\nrealtime = true\n{retention}[reader_profiles]\n{profiles}{SOLO_PORTAL} = \"fxr90\"\n"
        ),
    )
    .unwrap();
    Site {
        devices,
        solo,
        admins,
        data,
        terminal_config,
    }
}

fn import_reference(db: &Db, devices: &[Device]) {
    let mut bins = String::from("bin,zone,location\n");
    for bin in PUT_AWAY_BINS {
        bins += &format!("{bin},Z-P,L-1\n");
    }
    bins += &format!("{DOCK_BIN},Z-D,L-1\n");
    let mut units = String::from("epc,code,sku,state,bin\n");
    let mut grns = String::from("grn,qc,sku,expected\n");
    let mut manifests = String::from("manifest,state,epc\n");
    for i in 0..solo_units() {
        units += &format!("SOLO-{i},,SKU-1,new,\n");
    }
    for device in devices {
        let id = &device.id;
        match device.mode {
            Mode::PutAway => {
                for n in 0..PUT_AWAY_UNITS {
                    units += &format!("PA-{id}-{n},,SKU-1,in_stock,{}\n", PUT_AWAY_BINS[0]);
                }
            }
            // One more than a turn scans, so no line is over.
            Mode::Receive => {
                grns += &format!(
                    "GRN-{id},accepted,{RECEIVED_SKU},{}\n",
                    scans_per_turn() + 1
                )
            }
            Mode::CycleCount => {
                bins += &format!("CC-{id},Z-C,L-1\n");
                for n in 0..COUNTED_UNITS {
                    units += &format!("CC-{id}-{n},,SKU-1,in_stock,CC-{id}\n");
                }
            }
            Mode::DispatchVerify => {
                for n in 0..=scans_per_turn() {
                    units += &format!("DS-{id}-{n},,SKU-1,in_stock,{DOCK_BIN}\n");
                    manifests += &format!("MAN-{id},packing,DS-{id}-{n}\n");
                }
            }
        }
    }
    let files = [
        (ledger::import::Kind::Bins, bins),
        (ledger::import::Kind::Units, units),
        (ledger::import::Kind::Grns, grns),
        (ledger::import::Kind::Manifests, manifests),
    ];
    db.call_blocking(|conn| {
        for (kind, text) in files {
            ledger::import::import_reader(conn, kind, "bench", text.as_bytes(), UnixMs(0))
                .unwrap_or_else(|err| panic!("importing {}: {err}", kind.name()));
        }
    });
}

const SOLO_PORTAL: &str = "PORTALSOLO";
const SOLO_GATE: &str = "GATESOLO";

fn portal_serial(portal: usize) -> String {
    format!("PORTAL{portal:02}")
}

fn gate_serial(gate: usize) -> String {
    format!("GATE{gate:02}")
}

// ---------------------------------------------------------------------------
// The server in its own process

struct Server {
    child: Option<Child>,
    pid: u32,
    api: String,
    terminals: String,
    /// The server's warnings and errors, by message, with a count.
    complaints: Arc<Mutex<BTreeMap<String, u64>>>,
    /// The write-ahead log's restarts logged since the last window took
    /// them: each holds the writer, so each is timed part by part.
    restarts: Arc<Mutex<Vec<soak::Restart>>>,
}

impl Server {
    /// `serve` on loopback ports it picks itself (port 0), read back from
    /// its JSON log lines.
    fn start(dir: &Path, terminal_config: &Path) -> Server {
        let data = dir.join("data");
        // The PWA's shell is not what is measured: an empty one.
        let www = dir.join("www");
        std::fs::create_dir_all(www.join("pkg")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(["--log-format", "json", "serve"])
            .args(["--http", "127.0.0.1:0", "--https", "127.0.0.1:0"])
            .args(["--terminal-http", "127.0.0.1:0"])
            .args(["--terminal-tcp", "127.0.0.1:0"])
            .arg("--terminal-config")
            .arg(terminal_config)
            .arg("--data")
            .arg(&data)
            .arg("--www")
            .arg(&www)
            .args(["--site-tz", "UTC"])
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting stockhop-site serve");
        let pid = child.id();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let complaints = Arc::new(Mutex::new(BTreeMap::new()));
        let (found, addresses) = std::sync::mpsc::channel();
        let kept = Arc::clone(&complaints);
        let restarts = Arc::new(Mutex::new(Vec::new()));
        let logged = Arc::clone(&restarts);
        // Reads the log to its end, so the server never blocks on a full
        // pipe: first the two addresses, then what it complains of.
        std::thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { break };
                let Ok(entry) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                let fields = &entry["fields"];
                let message = fields["message"].as_str().unwrap_or_default();
                match message {
                    "site server listening (http)" => {
                        let _ = found.send(("api", fields["addr"].as_str().unwrap().to_owned()));
                    }
                    "terminal listener listening" => {
                        let _ = found.send((
                            "terminals",
                            fields["http_addr"].as_str().unwrap().to_owned(),
                        ));
                    }
                    "started the write-ahead log again" => {
                        let figure = |name: &str| fields[name].as_f64().unwrap_or(f64::NAN);
                        logged.lock().unwrap().push(soak::Restart {
                            views_wait_ms: figure("views_wait_ms"),
                            reads_wait_ms: figure("reads_wait_ms"),
                            checkpoint_ms: figure("checkpoint_ms"),
                            pages: figure("pages"),
                        });
                    }
                    _ if matches!(entry["level"].as_str(), Some("WARN" | "ERROR")) => {
                        let level = entry["level"].as_str().unwrap_or_default();
                        // What the line says of its cause, where it does.
                        let detail = ["detail", "err", "reason", "why"]
                            .iter()
                            .find_map(|name| fields[*name].as_str())
                            .map(|detail| format!(": {detail}"))
                            .unwrap_or_default();
                        *kept
                            .lock()
                            .unwrap()
                            .entry(format!("{level} {message}{detail}"))
                            .or_insert(0) += 1;
                    }
                    _ => {}
                }
            }
        });
        let (mut api, mut terminals) = (None, None);
        while api.is_none() || terminals.is_none() {
            match addresses.recv_timeout(START_DEADLINE) {
                Ok(("api", addr)) => api = Some(addr),
                Ok((_, addr)) => terminals = Some(addr),
                Err(_) => {
                    let _ = child.kill();
                    panic!(
                        "serve did not say where it listens within {START_DEADLINE:?}: {:?}",
                        child.wait()
                    );
                }
            }
        }
        Server {
            child: Some(child),
            pid,
            api: format!("http://{}", api.unwrap()),
            terminals: format!("http://{}", terminals.unwrap()),
            complaints,
            restarts,
        }
    }

    /// Panics when the server has exited.
    fn check_alive(&self) {
        let status = std::fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .ok()
            .and_then(|stat| stat.rsplit(')').next().map(|rest| rest.trim().to_owned()))
            .and_then(|rest| rest.chars().next());
        assert!(
            !matches!(status, None | Some('Z' | 'X')),
            "the site server (pid {}) exited under the load",
            self.pid
        );
    }

    /// Stops it as a service manager does (SIGTERM) and waits.
    fn stop(&mut self) {
        let mut child = self.child.take().unwrap();
        let signalled = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()
            .unwrap();
        assert!(signalled.success());
        let status = child.wait().unwrap();
        assert!(status.success(), "serve after SIGTERM: {status}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A panic on the way: the bench's own child goes with it.
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// CPU seconds (user + system) of process `pid` so far.
fn cpu_secs(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which may hold spaces: state is 3rd,
    // utime the 14th and stime the 15th of the whole line.
    let rest: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let ticks = rest[11].parse::<f64>().unwrap() + rest[12].parse::<f64>().unwrap();
    ticks / PROC_TICKS_PER_SEC
}

/// A `/proc/PID/status` field in MiB (`VmRSS`, `VmHWM`).
fn memory_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with(&format!("{field}:")))
        .unwrap();
    let kib: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib / 1024.0
}

/// The database's files (the database and its write-ahead log) and their
/// sizes.
fn file_sizes(data: &Path) -> BTreeMap<String, u64> {
    std::fs::read_dir(data)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".sqlite") || name.ends_with(".sqlite-wal")
        })
        .map(|entry| {
            (
                entry.file_name().to_string_lossy().into_owned(),
                entry.metadata().map_or(0, |m| m.len()),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Measuring

/// The endpoints timed, in the table's order.
const SYNC: &str = "POST /v1/sync (handheld)";
const HEARTBEAT: &str = "POST /v1/devices/{id}/heartbeat";
const STATUS: &str = "GET /v1/site/status";
const DECISIONS: &str = "GET /v1/site/decisions";
const DECISION_LOG: &str = "GET /v1/site/decision-log";
const BUILDS: &str = "GET /v1/site/builds";
const CHART: &str = "GET /v1/site/chart.svg?hours=12";
const ZEBRA: &str = "POST /zebra (700 reads, listener)";
const ICLOCK: &str = "POST /iclock/cdata ATTLOG (listener)";
const ENDPOINTS: [&str; 9] = [
    SYNC,
    HEARTBEAT,
    STATUS,
    DECISIONS,
    DECISION_LOG,
    BUILDS,
    CHART,
    ZEBRA,
    ICLOCK,
];

/// Every answer of one phase: endpoint → (status, latency, when it was
/// sent since the phase began); status 0 is a timeout.
struct Samples {
    began: Instant,
    all: Mutex<BTreeMap<&'static str, Vec<Answer>>>,
}

/// The status an answer is counted under when the connection was refused
/// or reset before one came.
const NO_CONNECTION: u16 = 1;

/// One answer: its status (0: none in time), how long it took, and when
/// it was sent since the phase began.
type Answer = (u16, Duration, Duration);

impl Samples {
    fn new() -> Samples {
        Samples {
            began: Instant::now(),
            all: Mutex::default(),
        }
    }

    fn add(&self, endpoint: &'static str, status: u16, sent: Instant) {
        self.all.lock().unwrap().entry(endpoint).or_default().push((
            status,
            sent.elapsed(),
            sent.saturating_duration_since(self.began),
        ));
    }

    fn clear(&self) {
        self.all.lock().unwrap().clear();
    }

    /// The p99 of `endpoint`'s answers sent from `from` to `to` after the
    /// phase began.
    fn p99_between(&self, endpoint: &str, from: Duration, to: Duration) -> Option<f64> {
        let samples = self.all.lock().unwrap();
        let mut ms: Vec<f64> = samples
            .get(endpoint)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(|(_, _, sent)| (from..to).contains(sent))
            .map(|(_, d, _)| d.as_secs_f64() * 1000.0)
            .collect();
        ms.sort_by(f64::total_cmp);
        (!ms.is_empty())
            .then(|| ms[((ms.len() as f64 * 0.99).ceil() as usize).clamp(1, ms.len()) - 1])
    }

    fn row(&self, endpoint: &str) -> Row {
        let samples = self.all.lock().unwrap();
        let all = samples.get(endpoint).map_or(&[][..], Vec::as_slice);
        let mut ms: Vec<f64> = all
            .iter()
            .map(|(_, d, _)| d.as_secs_f64() * 1000.0)
            .collect();
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| {
            (!ms.is_empty())
                .then(|| ms[((ms.len() as f64 * q).ceil() as usize).clamp(1, ms.len()) - 1])
        };
        let mut failed: BTreeMap<u16, usize> = BTreeMap::new();
        for (status, _, _) in all.iter().filter(|(s, _, _)| !(200..300).contains(s)) {
            *failed.entry(*status).or_default() += 1;
        }
        Row {
            n: all.len(),
            failed,
            first_failure: all
                .iter()
                .filter(|(s, _, _)| !(200..300).contains(s))
                .map(|(_, _, sent)| sent.as_secs_f64())
                .min_by(f64::total_cmp),
            p50: at(0.50),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

struct Row {
    n: usize,
    /// Answers other than 2xx, by status (0: no answer in time).
    failed: BTreeMap<u16, usize>,
    /// When the first of them was sent, in seconds into the phase.
    first_failure: Option<f64>,
    p50: Option<f64>,
    p99: Option<f64>,
    max: Option<f64>,
}

/// Sends `request`, times it and records it under `endpoint`; the answer's
/// status and body, or None on a timeout. Anything else (refused, reset)
/// is the site gone: a panic.
async fn timed(
    samples: &Samples,
    endpoint: &'static str,
    request: reqwest::RequestBuilder,
) -> Option<(u16, bytes::Bytes)> {
    let sent = Instant::now();
    let answer = match request.send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            response.bytes().await.map(|body| (status, body))
        }
        Err(err) => Err(err),
    };
    match answer {
        Ok((status, body)) => {
            samples.add(endpoint, status, sent);
            Some((status, body))
        }
        Err(err) if err.is_timeout() => {
            samples.add(endpoint, 0, sent);
            None
        }
        // Refused or reset while the server runs (a full connection cap):
        // counted, and the client backs off; a server that exited is
        // found by the watch on its process.
        Err(err) if err.is_connect() || err.is_request() => {
            samples.add(endpoint, NO_CONNECTION, sent);
            None
        }
        Err(err) => panic!("{endpoint}: the site did not answer: {err}"),
    }
}

// ---------------------------------------------------------------------------
// The clients

/// A handheld's queue and session, drained as the service worker drains.
struct Handheld {
    device: Arc<Device>,
    session: String,
    queue: tokio::sync::Mutex<(u64, Vec<Value>)>,
    /// One drain at a time, as the worker's Web Lock has it.
    draining: tokio::sync::Mutex<()>,
}

impl Handheld {
    fn new(device: Arc<Device>) -> Handheld {
        Handheld {
            device,
            session: IdempotencyKey::mint().unwrap().to_string(),
            queue: tokio::sync::Mutex::new((0, Vec::new())),
            draining: tokio::sync::Mutex::new(()),
        }
    }

    async fn capture(&self, command: &str, body: Value) {
        let mut queue = self.queue.lock().await;
        queue.0 += 1;
        let now = ledger::wall_clock().to_string();
        let item = json!({
            "key": IdempotencyKey::mint().unwrap().to_string(),
            "session_id": self.session, "client_seq": queue.0, "command": command,
            "occurred_at": now, "queued_at": now, "body": body,
        });
        queue.1.push(item);
    }

    /// Sends what it holds until empty, 50 a request, backing off after a
    /// refusal or a timeout, until `ending` is set. Returns the items
    /// applied.
    async fn drain(&self, ctx: &Ctx, ending: &AtomicBool) -> u64 {
        let _one = self.draining.lock().await;
        let mut failures = 0;
        let mut applied = 0;
        loop {
            // Past the run's end a handheld sends nothing more: what is in
            // flight is answered, what is queued is counted as left.
            if ending.load(Ordering::SeqCst) {
                return applied;
            }
            let items: Vec<Value> = {
                let queue = self.queue.lock().await;
                queue
                    .1
                    .iter()
                    .take(MAX_ITEMS_PER_REQUEST)
                    .cloned()
                    .collect()
            };
            if items.is_empty() {
                return applied;
            }
            let body = json!({"device_id": self.device.id, "sent_at": ledger::wall_clock().to_string(), "items": items});
            let request = ctx
                .from(&self.device.id)
                .post(format!("{}{SYNC_PATH}", ctx.api))
                .bearer_auth(&self.device.token)
                .json(&body);
            let answer = match timed(&ctx.samples, SYNC, request).await {
                Some((200, body)) => Some(serde_json::from_slice::<Value>(&body).unwrap()),
                // Refused for load, or no answer in time: back off.
                Some((429 | 503, _)) | None => None,
                Some((status, body)) => panic!(
                    "sync of {} answered {status}: {}",
                    self.device.id,
                    String::from_utf8_lossy(&body)
                ),
            };
            let Some(answer) = answer else {
                // The backoff, cut short when the run ends.
                let retry = Instant::now() + support::backoff(failures);
                while Instant::now() < retry && !ending.load(Ordering::SeqCst) {
                    tokio::time::sleep(BACKOFF_STEP).await;
                }
                if ending.load(Ordering::SeqCst) {
                    return applied;
                }
                failures += 1;
                continue;
            };
            failures = 0;
            let results = answer["results"].as_array().unwrap();
            assert!(
                results.iter().all(|r| r["outcome"] == "applied"
                    || r["code"] == "OPERATION_IN_PROGRESS"
                    || r["status"] == 202),
                "{} ({}): every item is applied or still in progress: {answer}",
                self.device.id,
                self.device.mode.wire()
            );
            let done: Vec<&str> = results
                .iter()
                .filter(|r| r["outcome"] == "applied")
                .map(|r| r["key"].as_str().unwrap())
                .collect();
            applied += done.len() as u64;
            let mut queue = self.queue.lock().await;
            queue
                .1
                .retain(|item| !done.contains(&item["key"].as_str().unwrap()));
        }
    }
}

/// The source addresses the handhelds and terminals come from,
/// 127.0.1.1 up: on a site each is a host of its own on the Wi-Fi or the
/// LAN, and the site caps the connections one address may hold open, so a
/// whole fleet from one address would measure that cap. A device's
/// address is picked by its name, a few devices an address.
const SOURCE_ADDRESSES: u8 = 250;

/// What every client shares.
struct Ctx {
    /// The supervisors' client, from 127.0.0.1.
    client: reqwest::Client,
    /// A client a source address, for the handhelds and terminals.
    devices: Vec<reqwest::Client>,
    api: String,
    terminals: String,
    samples: Samples,
    applied: AtomicU64,
    scans: AtomicU64,
    heartbeats: AtomicU64,
    reads: AtomicU64,
    punches: AtomicU64,
}

impl Ctx {
    /// The client a device (a handheld's id, a terminal's serial) sends
    /// from.
    fn from(&self, device: &str) -> &reqwest::Client {
        &self.devices[serial_hash(device) as usize % self.devices.len()]
    }

    fn new(server: &Server) -> Ctx {
        Ctx {
            client: reqwest::Client::builder()
                .timeout(REQUEST_TIMEOUT)
                .build()
                .unwrap(),
            devices: (1..=SOURCE_ADDRESSES)
                .map(|host| {
                    reqwest::Client::builder()
                        .timeout(REQUEST_TIMEOUT)
                        .local_address(std::net::IpAddr::from([127, 0, 1, host]))
                        .build()
                        .unwrap()
                })
                .collect(),
            api: server.api.clone(),
            terminals: server.terminals.clone(),
            samples: Samples::new(),
            applied: AtomicU64::new(0),
            scans: AtomicU64::new(0),
            heartbeats: AtomicU64::new(0),
            reads: AtomicU64::new(0),
            punches: AtomicU64::new(0),
        }
    }
}

async fn heartbeat(ctx: &Ctx, device: &Device, depth: u64) {
    let body = json!({"sent_at": ledger::wall_clock().to_string(), "queue_depth": depth, "app_version": "bench"});
    let request = ctx
        .from(&device.id)
        .post(format!("{}/v1/devices/{}/heartbeat", ctx.api, device.id))
        .bearer_auth(&device.token)
        .json(&body);
    if let Some((status, body)) = timed(&ctx.samples, HEARTBEAT, request).await {
        assert!(
            status == 200 || status == 503,
            "heartbeat of {} answered {status}: {}",
            device.id,
            String::from_utf8_lossy(&body)
        );
    }
    ctx.heartbeats.fetch_add(1, Ordering::Relaxed);
}

/// One report of `portal`'s: the pallet standing in it read
/// [`READS_PER_TAG`] times a tag over the last second.
fn zebra_report(serial: &str, report: u64) -> String {
    let now = unix_now();
    let pallet = report / PALLET_REPORTS;
    let events: Vec<String> = (0..READS_PER_REPORT)
        .map(|i| {
            let tag = i % TAGS_PER_PALLET;
            let at = UnixMs(now.0 - 1_000 + (i * 1_000 / READS_PER_REPORT) as i64);
            let timestamp = at.to_string().replace('Z', "+0000");
            format!(
                r#"{{"data":{{"antenna":{},"eventNum":{},"format":"epc","idHex":"e280{serial_hash:08x}{pallet:08x}{tag:04x}","peakRssi":-52,"reads":1}},"timestamp":"{timestamp}","type":"INVENTORY"}}"#,
                i / TAGS_PER_PALLET + 1,
                report * READS_PER_REPORT as u64 + i as u64,
                serial_hash = serial_hash(serial),
            )
        })
        .collect();
    format!("[{}]", events.join(","))
}

fn serial_hash(serial: &str) -> u32 {
    serial.bytes().fold(2_166_136_261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16_777_619)
    })
}

async fn post_zebra(ctx: &Ctx, serial: &str, report: u64) {
    let request = ctx
        .from(serial)
        .post(format!("{}/zebra?SN={serial}", ctx.terminals))
        .header("content-type", "application/json")
        .body(zebra_report(serial, report));
    if let Some((status, body)) = timed(&ctx.samples, ZEBRA, request).await {
        assert!(
            status == 200 || status == 503,
            "zebra report of {serial} answered {status}: {}",
            String::from_utf8_lossy(&body)
        );
        if status == 200 {
            ctx.reads
                .fetch_add(READS_PER_REPORT as u64, Ordering::Relaxed);
        }
    }
}

async fn post_punch(ctx: &Ctx, serial: &str, pin: u64) {
    let (y, mo, d, h, mi, s, _) = unix_now().to_civil();
    let body = format!("{pin}\t{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}\t0\t1\t0\t0\t0\n");
    let request = ctx
        .from(serial)
        .post(format!(
            "{}/iclock/cdata?SN={serial}&table=ATTLOG&Stamp=9999",
            ctx.terminals
        ))
        .body(body);
    if let Some((status, body)) = timed(&ctx.samples, ICLOCK, request).await {
        assert!(
            status == 503 || (status == 200 && body.ends_with(b"OK:1")),
            "ATTLOG of {serial} answered {status}: {}",
            String::from_utf8_lossy(&body)
        );
        if status == 200 {
            ctx.punches.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A supervisor signed in as the view page signs in: the session cookie.
async fn sign_in(ctx: &Ctx, token: &str) -> String {
    let response = ctx
        .client
        .post(format!("{}/v1/site/login", ctx.api))
        .json(&json!({"token": token}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "sign-in");
    let set = response
        .headers()
        .get(reqwest::header::SET_COOKIE)
        .expect("the sign-in sets the session cookie")
        .to_str()
        .unwrap()
        .to_owned();
    let cookie = cookie::Cookie::parse(set).unwrap();
    format!("{}={}", cookie.name(), cookie.value())
}

/// One refresh of the view page: status, decisions and the decision log
/// at once, then the builds, then the chart.
async fn view_refresh(ctx: &Ctx, cookie: &str) {
    let get = |path: &str| {
        ctx.client
            .get(format!("{}{path}", ctx.api))
            .header(reqwest::header::COOKIE, cookie)
    };
    tokio::join!(
        timed(&ctx.samples, STATUS, get("/v1/site/status")),
        timed(&ctx.samples, DECISIONS, get("/v1/site/decisions")),
        timed(&ctx.samples, DECISION_LOG, get("/v1/site/decision-log")),
    );
    timed(&ctx.samples, BUILDS, get("/v1/site/builds")).await;
    // The page asks for the chart at the status's server time.
    let at = ledger::wall_clock().0;
    timed(
        &ctx.samples,
        CHART,
        get(&format!("/v1/site/chart.svg?hours=12&at={at}")),
    )
    .await;
}

// ---------------------------------------------------------------------------
// The run

struct Phase {
    samples: Samples,
    took: Duration,
    cpu_secs: f64,
    applied: u64,
    scans: u64,
    heartbeats: u64,
    reads: u64,
    punches: u64,
    left_queued: u64,
}

struct Report {
    unloaded: Phase,
    load: Phase,
    rss_before: f64,
    rss_after: f64,
    peak_rss: f64,
    files_before: BTreeMap<String, u64>,
    files_after: BTreeMap<String, u64>,
    /// Bytes each table holds (with its indexes), before and after the load.
    tables_before: BTreeMap<String, u64>,
    tables_after: BTreeMap<String, u64>,
    /// Before the quiet phase, whose portal reads the prune pass past the
    /// horizon takes with the load's.
    tables_at_first: BTreeMap<String, u64>,
    /// The data directory's and the listener's tables' bytes when the
    /// load began, and at the end of each window of it.
    sizes_at_start: soak::Sizes,
    windows: Vec<soak::Window>,
    queue: Vec<(String, i64)>,
    /// Each caller's use of the server's one SQLite writer over the load.
    writer: BTreeMap<String, WriterUse>,
    hops: i64,
    client_cpu_secs: f64,
    /// How long the one handheld synced alone.
    solo_sync: Duration,
}

async fn run(site: &Site, server: &Server) -> Report {
    let pid = server.pid.to_string();
    // Unloaded: each endpoint alone.
    let ctx = Ctx::new(server);
    let tables_at_first = soak::table_sizes(&site.data);
    let cpu_before = cpu_secs(&pid);
    let started = Instant::now();
    let solo_sync = unloaded(&ctx, site).await;
    server.check_alive();
    let unloaded = Phase {
        took: started.elapsed(),
        cpu_secs: cpu_secs(&pid) - cpu_before,
        applied: ctx.applied.load(Ordering::SeqCst),
        scans: ctx.scans.load(Ordering::SeqCst),
        heartbeats: 0,
        reads: ctx.reads.load(Ordering::SeqCst),
        punches: 0,
        left_queued: 0,
        samples: ctx.samples,
    };

    // The load.
    let rss_before = memory_mib(server.pid, "VmRSS");
    let files_before = file_sizes(&site.data);
    let tables_before = soak::table_sizes(&site.data);
    let ctx = Arc::new(Ctx::new(server));
    let devices: Vec<Arc<Device>> = site
        .devices
        .iter()
        .map(|d| {
            Arc::new(Device {
                id: d.id.clone(),
                token: d.token.clone(),
                profile: d.profile,
                mode: d.mode,
                count_id: d.count_id.clone(),
            })
        })
        .collect();
    let cookies = {
        let mut cookies = Vec::new();
        for token in &site.admins {
            cookies.push(sign_in(&ctx, token).await);
        }
        cookies
    };
    let writer_before = writer_use(&ctx, &cookies[0]).await;
    let sizes_at_start = soak::Sizes::of(&site.data);
    let client_cpu_before = cpu_secs("self");
    let cpu_before = cpu_secs(&pid);
    let started = Instant::now();
    let end = tokio::time::Instant::now() + load_length();
    server.restarts.lock().unwrap().clear();
    let sampling = tokio::spawn(sample_sizes(
        Arc::clone(&ctx),
        Arc::clone(&server.restarts),
        site.data.clone(),
        started.duration_since(ctx.samples.began),
    ));
    let ending = Arc::new(AtomicBool::new(false));
    let mut tasks = tokio::task::JoinSet::new();
    // Handhelds: heartbeats and turns.
    tasks.spawn(heartbeats(Arc::clone(&ctx), devices.clone(), end));
    let turn = load_length().div_f64(scanning_groups() as f64);
    let left = Arc::new(AtomicU64::new(0));
    for (i, device) in devices.iter().enumerate() {
        let group = i / scanning_at_once();
        let offset =
            SCAN_EVERY.mul_f64((i % scanning_at_once()) as f64 / scanning_at_once() as f64);
        let begins = tokio::time::Instant::now() + turn * group as u32 + offset.min(turn / 2);
        tasks.spawn(handheld_turn(
            Arc::clone(&ctx),
            Arc::clone(device),
            begins,
            begins + turn - offset.min(turn / 2),
            Arc::clone(&ending),
            Arc::clone(&left),
        ));
    }
    for portal in 0..portals() {
        let ctx = Arc::clone(&ctx);
        let offset = REPORT_EVERY.mul_f64(portal as f64 / portals() as f64);
        tasks.spawn(async move {
            tokio::time::sleep(offset).await;
            let serial = portal_serial(portal);
            let mut tick = tokio::time::interval(REPORT_EVERY);
            let mut report = 0;
            while tick.tick().await < end {
                post_zebra(&ctx, &serial, report).await;
                report += 1;
            }
        });
    }
    for gate in 0..gates() {
        let ctx = Arc::clone(&ctx);
        let offset = PUNCH_EVERY.mul_f64(gate as f64 / gates() as f64);
        tasks.spawn(async move {
            tokio::time::sleep(offset).await;
            let serial = gate_serial(gate);
            let mut tick = tokio::time::interval(PUNCH_EVERY);
            let mut pin = 1_000 * gate as u64;
            while tick.tick().await < end {
                post_punch(&ctx, &serial, pin).await;
                pin += 1;
            }
        });
    }
    for (n, cookie) in cookies.into_iter().enumerate() {
        let ctx = Arc::clone(&ctx);
        let offset = POLL_EVERY.mul_f64(n as f64 / supervisors() as f64);
        tasks.spawn(async move {
            tokio::time::sleep(offset).await;
            let mut tick = tokio::time::interval(POLL_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            while tick.tick().await < end {
                view_refresh(&ctx, &cookie).await;
            }
        });
    }
    // Watches the server while the clients run.
    let watching = {
        let pid = server.pid;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                if std::fs::metadata(format!("/proc/{pid}")).is_err() {
                    return false;
                }
            }
        })
    };
    tokio::time::sleep_until(end).await;
    ending.store(true, Ordering::SeqCst);
    while let Some(done) = tasks.join_next().await {
        if let Err(err) = done {
            watching.abort();
            server.check_alive();
            std::panic::resume_unwind(err.into_panic());
        }
    }
    watching.abort();
    server.check_alive();
    let took = started.elapsed();
    let windows = sampling.await.unwrap();
    let cpu = cpu_secs(&pid) - cpu_before;
    let client_cpu_secs = cpu_secs("self") - client_cpu_before;
    let rss_after = memory_mib(server.pid, "VmRSS");
    let peak_rss = memory_mib(server.pid, "VmHWM");
    let writer_after = writer_use(&ctx, &site.admins[0]).await;
    let files_after = file_sizes(&site.data);
    let conn = soak::read_only(&site.data);
    let queue = conn
        .prepare(
            "SELECT source || ' ' || state, count(*) FROM listener_queue GROUP BY 1 ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let hops = conn
        .query_row("SELECT count(*) FROM hops", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    let tables_after = soak::table_sizes(&site.data);
    let ctx = Arc::into_inner(ctx).expect("every client is done");
    Report {
        unloaded,
        load: Phase {
            took,
            cpu_secs: cpu,
            applied: ctx.applied.load(Ordering::SeqCst),
            scans: ctx.scans.load(Ordering::SeqCst),
            heartbeats: ctx.heartbeats.load(Ordering::SeqCst),
            reads: ctx.reads.load(Ordering::SeqCst),
            punches: ctx.punches.load(Ordering::SeqCst),
            left_queued: left.load(Ordering::SeqCst),
            samples: ctx.samples,
        },
        rss_before,
        rss_after,
        peak_rss,
        files_before,
        files_after,
        tables_before,
        tables_after,
        tables_at_first,
        sizes_at_start,
        windows,
        queue,
        writer: writer_over(&writer_before, &writer_after),
        hops,
        client_cpu_secs,
        solo_sync,
    }
}

/// The data directory's size and the listener's tables' at the end of
/// every [`size_window`] of the load, with the handhelds' p99 in it;
/// `began`: the load's start on the samples' clock. Each row is printed
/// as it is read, so a long soak shows its course as it runs.
async fn sample_sizes(
    ctx: Arc<Ctx>,
    restarts: Arc<Mutex<Vec<soak::Restart>>>,
    data: PathBuf,
    began: Duration,
) -> Vec<soak::Window> {
    let start = tokio::time::Instant::now();
    let mut windows = Vec::new();
    let mut at = Duration::ZERO;
    while at + size_window() <= load_length() {
        at += size_window();
        tokio::time::sleep_until(start + at).await;
        let dir = data.clone();
        let sizes = tokio::task::spawn_blocking(move || soak::Sizes::of(&dir))
            .await
            .unwrap();
        let (from, to) = (began + at - size_window(), began + at);
        let window = soak::Window {
            at,
            sizes,
            reads: ctx.reads.load(Ordering::Relaxed),
            sync_p99: ctx.samples.p99_between(SYNC, from, to),
            heartbeat_p99: ctx.samples.p99_between(HEARTBEAT, from, to),
            restarts: std::mem::take(&mut *restarts.lock().unwrap()),
        };
        println!(
            "at {:.1} min: data dir {} B, listener tables {} B, the ledger's records {} B, {} reads, sync p99 {} ms; {}",
            at.as_secs_f64() / 60.0,
            window.sizes.dir,
            window.sizes.listener,
            window.sizes.ledger,
            window.reads,
            window
                .sync_p99
                .map_or("-".to_owned(), |ms| format!("{ms:.0}")),
            soak::restarts_said(&window.restarts),
        );
        windows.push(window);
    }
    windows
}

/// Each endpoint alone: the one handheld syncing one put-away a request
/// back to back, then every other endpoint asked one at a time. Returns
/// how long the handheld synced.
async fn unloaded(ctx: &Ctx, site: &Site) -> Duration {
    let solo = Arc::new(Device {
        id: site.solo.id.clone(),
        token: site.solo.token.clone(),
        profile: site.solo.profile,
        mode: site.solo.mode,
        count_id: None,
    });
    let handheld = Handheld::new(Arc::clone(&solo));
    let never = AtomicBool::new(false);
    handheld
        .capture(
            "open_session",
            json!({"operator_id": "op-solo", "mode": "put_away", "context": {}}),
        )
        .await;
    handheld.drain(ctx, &never).await;
    // The rate counts from here: scans only.
    ctx.samples.clear();
    let started = Instant::now();
    let mut n = 0;
    while started.elapsed() < unloaded_sync() && n < solo_units() {
        handheld
            .capture(
                "scan",
                json!({"mode": "put_away", "epc": format!("SOLO-{n}"), "bin": PUT_AWAY_BINS[0]}),
            )
            .await;
        let applied = handheld.drain(ctx, &never).await;
        ctx.applied.fetch_add(applied, Ordering::SeqCst);
        ctx.scans.fetch_add(1, Ordering::SeqCst);
        n += 1;
    }
    let solo_sync = started.elapsed();
    let cookie = sign_in(ctx, &site.admins[0]).await;
    for i in 0..unloaded_requests() {
        heartbeat(ctx, &solo, i as u64).await;
        view_refresh(ctx, &cookie).await;
        post_zebra(ctx, SOLO_PORTAL, i as u64).await;
        post_punch(ctx, SOLO_GATE, i as u64).await;
    }
    solo_sync
}

/// Every handheld beats at its profile's period divided by the
/// compression, each at its own phase in the period, until `end`.
async fn heartbeats(ctx: Arc<Ctx>, devices: Vec<Arc<Device>>, end: tokio::time::Instant) {
    let started = tokio::time::Instant::now();
    let period = |d: &Device| {
        Duration::from_millis(d.profile.heartbeat_period_ms() as u64).div_f64(compression())
    };
    let mut due: Vec<Duration> = devices
        .iter()
        .enumerate()
        .map(|(i, d)| period(d).mul_f64((i * 7_919 % 1_000) as f64 / 1_000.0))
        .collect();
    let mut beats = tokio::task::JoinSet::new();
    while tokio::time::Instant::now() < end {
        let elapsed = started.elapsed();
        for (device, due) in devices.iter().zip(due.iter_mut()) {
            if *due <= elapsed {
                *due += period(device);
                let (ctx, device) = (Arc::clone(&ctx), Arc::clone(device));
                beats.spawn(async move { heartbeat(&ctx, &device, 0).await });
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    while let Some(beat) = beats.join_next().await {
        if let Err(err) = beat {
            std::panic::resume_unwind(err.into_panic());
        }
    }
}

/// One handheld's turn: opens a session in its mode at `begins`, scans
/// every [`SCAN_EVERY`] until `ends`, closes the session; each capture is
/// drained beside the operator, as the worker drains.
async fn handheld_turn(
    ctx: Arc<Ctx>,
    device: Arc<Device>,
    begins: tokio::time::Instant,
    ends: tokio::time::Instant,
    ending: Arc<AtomicBool>,
    left: Arc<AtomicU64>,
) {
    tokio::time::sleep_until(begins).await;
    let handheld = Arc::new(Handheld::new(Arc::clone(&device)));
    let mut drains = tokio::task::JoinSet::new();
    let drain = |drains: &mut tokio::task::JoinSet<()>| {
        let (ctx, handheld, ending) =
            (Arc::clone(&ctx), Arc::clone(&handheld), Arc::clone(&ending));
        drains.spawn(async move {
            let applied = handheld.drain(&ctx, &ending).await;
            ctx.applied.fetch_add(applied, Ordering::Relaxed);
        });
    };
    handheld
        .capture(
            "open_session",
            json!({"operator_id": format!("op-{}", device.id), "mode": device.mode.wire(), "context": device.context()}),
        )
        .await;
    let mut tick = tokio::time::interval(SCAN_EVERY);
    let mut n = 0;
    while tick.tick().await < ends {
        handheld.capture("scan", device.scan(n)).await;
        ctx.scans.fetch_add(1, Ordering::Relaxed);
        n += 1;
        drain(&mut drains);
    }
    handheld.capture("close_session", json!({})).await;
    drain(&mut drains);
    while let Some(done) = drains.join_next().await {
        if let Err(err) = done {
            std::panic::resume_unwind(err.into_panic());
        }
    }
    left.fetch_add(
        handheld.queue.lock().await.1.len() as u64,
        Ordering::Relaxed,
    );
}

// ---------------------------------------------------------------------------
// The tables

fn print(site: &Site, report: &Report, server: &Server) {
    let load_secs = report.load.took.as_secs_f64();
    println!();
    println!(
        "the load ran {load_secs:.1} s: {:.0} s of clients, then the answers in flight",
        load_length().as_secs_f64()
    );
    println!(
        "site load over loopback: `stockhop-site serve` in its own process, SQLite WAL synchronous=FULL; {} handhelds ({} scanning at once, 1 scan / {} s, in turns: {} of {:.1} s each), {} RFID portals ({} reads / report / s), {} iclock gates (1 punch / {} s each), {} supervisors polling every {} s; {} s of shift compressed {:.0}x into {:.1} s (heartbeat periods and turns {:.0}x faster; scan, read, punch and poll rates real)",
        site.devices.len(),
        scanning_at_once(),
        SCAN_EVERY.as_secs(),
        scanning_groups(),
        load_length().as_secs_f64() / scanning_groups() as f64,
        portals(),
        READS_PER_REPORT,
        gates(),
        PUNCH_EVERY.as_secs(),
        supervisors(),
        POLL_EVERY.as_secs(),
        SHIFT.as_secs(),
        compression(),
        load_length().as_secs_f64(),
        compression(),
    );
    println!(
        "| {:<38} | {:>8} | {:>7} | {:>9} | {:>8} | {:>8} | {:>8} | {:>14} | {:>14} |",
        "endpoint",
        "requests",
        "non-2xx",
        "first at s",
        "p50 ms",
        "p99 ms",
        "max ms",
        "alone p50 ms",
        "alone p99 ms"
    );
    println!(
        "|{:-<40}|{:->10}|{:->9}|{:->11}|{:->10}|{:->10}|{:->10}|{:->16}|{:->16}|",
        "", "", "", "", "", "", "", "", ""
    );
    let figure = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
    for endpoint in ENDPOINTS {
        let load = report.load.samples.row(endpoint);
        let alone = report.unloaded.samples.row(endpoint);
        println!(
            "| {:<38} | {:>8} | {:>7} | {:>9} | {:>8} | {:>8} | {:>8} | {:>14} | {:>14} |",
            endpoint,
            load.n,
            load.failed.values().sum::<usize>(),
            figure(load.first_failure),
            figure(load.p50),
            figure(load.p99),
            figure(load.max),
            figure(alone.p50),
            figure(alone.p99),
        );
    }
    let failures: Vec<String> = ENDPOINTS
        .iter()
        .filter_map(|endpoint| {
            let failed = report.load.samples.row(endpoint).failed;
            (!failed.is_empty()).then(|| {
                let statuses: Vec<String> = failed
                    .iter()
                    .map(|(status, n)| match *status {
                        0 => format!("{n} no answer in {} s", REQUEST_TIMEOUT.as_secs()),
                        NO_CONNECTION => format!("{n} connection refused or reset"),
                        status => format!("{n} × {status}"),
                    })
                    .collect();
                format!("{endpoint}: {}", statuses.join(", "))
            })
        })
        .collect();
    println!(
        "non-2xx by status (first at s: when the first was sent, into the load): {}",
        if failures.is_empty() {
            "none".to_owned()
        } else {
            failures.join("; ")
        }
    );
    let solo_rate = report.unloaded.applied as f64 / report.solo_sync.as_secs_f64();
    println!();
    println!(
        "| {:<52} | {:>12} | {:>14} |",
        "ledger", "under load", "alone (1 hh)"
    );
    println!("|{:-<54}|{:->14}|{:->16}|", "", "", "");
    println!(
        "| {:<52} | {:>12.1} | {:>14.1} |",
        "items applied / s",
        report.load.applied as f64 / load_secs,
        solo_rate
    );
    println!(
        "| {:<52} | {:>12} | {:>14} |",
        "scans captured / left queued at the end",
        format!("{} / {}", report.load.scans, report.load.left_queued),
        report.unloaded.scans
    );
    println!(
        "| {:<52} | {:>12} | {:>14} |",
        "heartbeats sent", report.load.heartbeats, "-"
    );
    println!(
        "| {:<52} | {:>12} | {:>14} |",
        "portal reads / gate punches acknowledged",
        format!("{} / {}", report.load.reads, report.load.punches),
        "-"
    );
    println!(
        "| {:<52} | {:>12.0} | {:>14.0} |",
        "server CPU, % of one core",
        report.load.cpu_secs / load_secs * 100.0,
        report.unloaded.cpu_secs / report.unloaded.took.as_secs_f64() * 100.0
    );
    println!(
        "| {:<52} | {:>12} | {:>14} |",
        "server RSS MiB (before → after load; peak VmHWM)",
        format!(
            "{:.0} → {:.0}; {:.0}",
            report.rss_before, report.rss_after, report.peak_rss
        ),
        "-"
    );
    println!(
        "| {:<52} | {:>12.0} | {:>14} |",
        "load generator CPU, % of one core (this process)",
        report.client_cpu_secs / load_secs * 100.0,
        "-"
    );
    println!();
    println!(
        "| {:<28} | {:>12} | {:>12} | {:>12} | {:>16} |",
        "SQLite file", "before MiB", "after MiB", "growth MiB", "per hour MiB"
    );
    println!(
        "|{:-<30}|{:->14}|{:->14}|{:->14}|{:->18}|",
        "", "", "", "", ""
    );
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let (mut before_all, mut after_all) = (0, 0);
    let names: std::collections::BTreeSet<&String> = report
        .files_before
        .keys()
        .chain(report.files_after.keys())
        .collect();
    for name in names {
        let before = report.files_before.get(name).copied().unwrap_or(0);
        let after = report.files_after.get(name).copied().unwrap_or(0);
        before_all += before;
        after_all += after;
        let growth = mib(after) - mib(before);
        println!(
            "| {:<28} | {:>12.1} | {:>12.1} | {:>12.1} | {:>16.0} |",
            name,
            mib(before),
            mib(after),
            growth,
            growth / load_secs * 3600.0
        );
    }
    let growth = mib(after_all) - mib(before_all);
    println!(
        "| {:<28} | {:>12.1} | {:>12.1} | {:>12.1} | {:>16.0} |",
        "all",
        mib(before_all),
        mib(after_all),
        growth,
        growth / load_secs * 3600.0
    );
    println!(
        "per hour: the growth over the load's {load_secs:.1} s × 3600 / {load_secs:.1}: the load's rates are the shift's real ones, but its {} heartbeats came {:.0}x faster than real, so they count {:.0}x in that figure (the WAL file is reused after each checkpoint: its size is its high-water mark)",
        report.load.heartbeats,
        compression(),
        compression()
    );
    print_tables(report, load_secs);
    print_writer(report);
    let heading = match soak::soak_minutes() {
        Some(minutes) => format!(
            "soak: {minutes} min of the load; the data directory every {} min; the listener keeps a forwarded record's identity {} min (`seen_retention_minutes = {}`, a site's default a week) and its queue rows {} min past capture, so both horizons pass within the run",
            soak::soak_window().as_secs() / 60,
            soak::SOAK_SEEN_RETENTION_MINUTES,
            soak::SOAK_SEEN_RETENTION_MINUTES,
            queue::ROW_RETENTION.0 as f64 / 60_000.0,
        ),
        None => format!(
            "the data directory every {:.0} s of the load (identities kept a week, queue rows {} min past capture: neither horizon passes within it; `--soak MINUTES` for that)",
            size_window().as_secs_f64(),
            queue::ROW_RETENTION.0 as f64 / 60_000.0,
        ),
    };
    soak::print(
        &report.windows,
        report.sizes_at_start,
        report.unloaded.samples.row(SYNC).p99,
        report.unloaded.samples.row(HEARTBEAT).p99,
        &heading,
    );
    println!(
        "listener queue at the end: {}; hops in the ledger: {}",
        report
            .queue
            .iter()
            .map(|(what, n)| format!("{what} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        report.hops
    );
    let complaints = server.complaints.lock().unwrap();
    if complaints.is_empty() {
        println!("the server logged no warning or error");
    } else {
        println!("the server logged (sampled lines, by message):");
        for (message, n) in complaints.iter() {
            println!("  {n:>6}  {message}");
        }
    }
    println!();
}

/// The tables that grew during the load, the most first: their bytes
/// (indexes included) before and after, per portal read acknowledged and
/// per hour at the load's rate.
fn print_tables(report: &Report, load_secs: f64) {
    /// Tables that grew less than this are left out of the table.
    const LISTED_FROM_BYTES: i64 = 64 * 1024;
    let mut grown: Vec<(&String, u64, u64, i64)> = report
        .tables_after
        .iter()
        .map(|(name, &after)| {
            let before = report.tables_before.get(name).copied().unwrap_or(0);
            let growth = i64::try_from(after).unwrap() - i64::try_from(before).unwrap();
            (name, before, after, growth)
        })
        .filter(|&(_, _, _, growth)| growth >= LISTED_FROM_BYTES)
        .collect();
    grown.sort_by_key(|&(name, _, _, growth)| (std::cmp::Reverse(growth), name.clone()));
    let mib = |b: f64| b / (1024.0 * 1024.0);
    let reads = report.load.reads.max(1) as f64;
    println!();
    println!(
        "| {:<28} | {:>12} | {:>12} | {:>14} | {:>16} |",
        "table (with its indexes)", "before MiB", "after MiB", "bytes / read", "per hour MiB"
    );
    println!(
        "|{:-<30}|{:->14}|{:->14}|{:->16}|{:->18}|",
        "", "", "", "", ""
    );
    let mut total = 0;
    for (name, before, after, growth) in grown {
        total += growth;
        println!(
            "| {:<28} | {:>12.1} | {:>12.1} | {:>14.0} | {:>16.0} |",
            name,
            mib(before as f64),
            mib(after as f64),
            growth as f64 / reads,
            mib(growth as f64) / load_secs * 3600.0
        );
    }
    println!(
        "| {:<28} | {:>12} | {:>12} | {:>14.0} | {:>16.0} |",
        "all listed",
        "",
        "",
        total as f64 / reads,
        mib(total as f64) / load_secs * 3600.0
    );
    println!(
        "bytes / read: a table's growth over the load ÷ the {} portal reads acknowledged (pages in use, from SQLite's dbstat; tables that grew under {} KiB are not listed)",
        report.load.reads,
        LISTED_FROM_BYTES / 1024
    );
}

/// Past the listener's stale horizon: its rules look back this far from a
/// queue write (the stale limit and the longest rate window), and a
/// second more.
const PAST_THE_HORIZON: Millis = Millis(STALE_AFTER.0 + RATE_WINDOW_MAX.0 + 1_000);

/// What the site's tables hold once the listener's prune pass has run
/// past the stale horizon of every read of the load.
struct PastTheHorizon {
    tables: BTreeMap<String, u64>,
    pruned_rows: usize,
}

/// With the server stopped, runs the listener's prune pass at an instant
/// past the horizon of the load's last read (the pass takes the instant,
/// so nothing sleeps), keeping identities as the run's listener did, and
/// reads the tables' sizes again.
fn past_the_horizon(data: &Path) -> PastTheHorizon {
    let at = unix_now().plus(PAST_THE_HORIZON);
    let retention = soak::soak_minutes().map_or(queue::SEEN_RETENTION, |_| {
        Millis::from_secs(soak::SOAK_SEEN_RETENTION_MINUTES * 60)
    });
    let mut conn = open_connection(&data.join("stockhop.sqlite")).unwrap();
    let mut pruned_rows = 0;
    loop {
        let n = queue::prune_keeping(&mut conn, at, retention).unwrap();
        pruned_rows += n;
        if n < PRUNE_ROWS_MAX {
            break;
        }
    }
    drop(conn);
    PastTheHorizon {
        tables: soak::table_sizes(data),
        pruned_rows,
    }
}

/// Bytes a portal read and an hour at the load's rate, once the load is
/// behind the stale horizon: the listener's own tables (`listener_…`, with
/// their indexes) and every table, grown from before the first read.
fn print_past_the_horizon(report: &Report, past: &PastTheHorizon) {
    let reads = (report.unloaded.reads + report.load.reads).max(1) as f64;
    let per_hour = report.load.reads as f64 / report.load.took.as_secs_f64() * 3600.0;
    let grown = |tables: &BTreeMap<String, u64>, listener: bool| {
        let sum = |sizes: &BTreeMap<String, u64>| -> i64 {
            sizes
                .iter()
                .filter(|(name, _)| !listener || name.starts_with("listener_"))
                .map(|(_, &b)| b as i64)
                .sum()
        };
        (sum(tables) - sum(&report.tables_at_first)) as f64
    };
    println!(
        "| {:<44} | {:>14} | {:>14} | {:>14} | {:>14} |",
        "grown from before the first read",
        "listener B/read",
        "listener MiB/h",
        "all B/read",
        "all MiB/h"
    );
    println!(
        "|{:-<46}|{:->16}|{:->16}|{:->16}|{:->16}|",
        "", "", "", "", ""
    );
    let mib = |b: f64| b / (1024.0 * 1024.0);
    for (name, tables) in [
        ("at the load's end", &report.tables_after),
        ("past the stale horizon, pruned", &past.tables),
    ] {
        let (listener, all) = (grown(tables, true), grown(tables, false));
        println!(
            "| {:<44} | {:>14.0} | {:>14.0} | {:>14.0} | {:>14.0} |",
            name,
            listener / reads,
            mib(listener / reads * per_hour),
            all / reads,
            mib(all / reads * per_hour),
        );
    }
    println!(
        "bytes / read: the tables' growth from before the quiet phase ÷ its and the load's {} portal reads; the prune pass run {} s past the load's last read removed {} rows; identities kept {}; per hour: bytes / read × the load's {:.0} reads / h (pages in use, SQLite's dbstat)",
        reads,
        PAST_THE_HORIZON.0 / 1000,
        past.pruned_rows,
        match soak::soak_minutes() {
            Some(_) => format!("{} min (the soak's seen_retention_minutes)", soak::SOAK_SEEN_RETENTION_MINUTES),
            None => "a week (the default): all of them still".to_owned(),
        },
        per_hour
    );
    println!();
}

/// One caller's use of the server's one SQLite writer: turns, and the
/// seconds waited for them, held, and spent committing.
#[derive(Clone, Copy, Debug, Default)]
struct WriterUse {
    turns: f64,
    waited: f64,
    held: f64,
    committing: f64,
    /// The longest wait and hold since the server started (seconds).
    longest_wait: f64,
    longest_hold: f64,
}

/// The server's `stockhop_db_writer_*` counters by caller, from
/// `GET /metrics` (`auth`: a session cookie or an admin token).
async fn writer_use(ctx: &Ctx, auth: &str) -> BTreeMap<String, WriterUse> {
    let request = ctx.client.get(format!("{}/metrics", ctx.api));
    let request = if auth.contains('=') {
        request.header(reqwest::header::COOKIE, auth)
    } else {
        request.bearer_auth(auth)
    };
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200, "GET /metrics");
    let text = response.text().await.unwrap();
    let mut uses: BTreeMap<String, WriterUse> = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("stockhop_db_writer_") else {
            continue;
        };
        let Some((metric, rest)) = rest
            .split_once("_total{caller=\"")
            .or_else(|| rest.split_once("{caller=\""))
        else {
            continue;
        };
        let (caller, value) = rest.split_once("\"} ").unwrap();
        let value: f64 = value.trim().parse().unwrap();
        let used = uses.entry(caller.to_owned()).or_default();
        match metric {
            "turns" => used.turns = value,
            "waited_seconds" => used.waited = value,
            "held_seconds" => used.held = value,
            "commit_seconds" => used.committing = value,
            "longest_wait_seconds" => used.longest_wait = value,
            "longest_hold_seconds" => used.longest_hold = value,
            _ => {}
        }
    }
    uses
}

fn writer_over(
    before: &BTreeMap<String, WriterUse>,
    after: &BTreeMap<String, WriterUse>,
) -> BTreeMap<String, WriterUse> {
    after
        .iter()
        .map(|(caller, a)| {
            let b = before.get(caller).copied().unwrap_or_default();
            (
                caller.clone(),
                WriterUse {
                    turns: a.turns - b.turns,
                    waited: a.waited - b.waited,
                    held: a.held - b.held,
                    committing: a.committing - b.committing,
                    longest_wait: a.longest_wait,
                    longest_hold: a.longest_hold,
                },
            )
        })
        .collect()
}

/// Where the writer's time went over the load, by caller.
fn print_writer(report: &Report) {
    let load = report.load.took.as_secs_f64();
    println!();
    println!(
        "| {:<18} | {:>8} | {:>13} | {:>13} | {:>13} | {:>15} | {:>13} | {:>13} | {:>13} |",
        "writer caller",
        "turns",
        "waited ms avg",
        "held ms avg",
        "commit ms avg",
        "held % of load",
        "waited s all",
        "waited ms max",
        "held ms max"
    );
    println!(
        "|{:-<20}|{:->10}|{:->15}|{:->15}|{:->15}|{:->17}|{:->15}|{:->15}|{:->15}|",
        "", "", "", "", "", "", "", "", ""
    );
    let per = |secs: f64, turns: f64| {
        if turns > 0.0 {
            secs / turns * 1000.0
        } else {
            0.0
        }
    };
    let mut all = WriterUse::default();
    for (caller, used) in &report.writer {
        all.turns += used.turns;
        all.waited += used.waited;
        all.held += used.held;
        all.committing += used.committing;
        all.longest_wait = all.longest_wait.max(used.longest_wait);
        all.longest_hold = all.longest_hold.max(used.longest_hold);
        println!(
            "| {:<18} | {:>8.0} | {:>13.1} | {:>13.1} | {:>13.1} | {:>15.0} | {:>13.1} | {:>13.1} | {:>13.1} |",
            caller,
            used.turns,
            per(used.waited, used.turns),
            per(used.held, used.turns),
            per(used.committing, used.turns),
            used.held / load * 100.0,
            used.waited,
            used.longest_wait * 1000.0,
            used.longest_hold * 1000.0,
        );
    }
    println!(
        "| {:<18} | {:>8.0} | {:>13.1} | {:>13.1} | {:>13.1} | {:>15.0} | {:>13.1} | {:>13.1} | {:>13.1} |",
        "all",
        all.turns,
        per(all.waited, all.turns),
        per(all.held, all.turns),
        per(all.committing, all.turns),
        all.held / load * 100.0,
        all.waited,
        all.longest_wait * 1000.0,
        all.longest_hold * 1000.0,
    );
    println!(
        "the server's one SQLite writer over the load (its `stockhop_db_writer_*` counters): waited: for the turn; held: the work, its commit and fsync; commit: of that, the COMMIT statements (the log's write and fsync; a statement outside a transaction counts as work); handheld_sync, heartbeat and other go before listener_write (portal and gate uploads to the queue), listener_forward (the forwarder's reads, ledger batches and settles) and listener_upkeep (the prune pass); max: the longest one since the server started, the quiet phase included"
    );
}
