//! Data in and out: handheld sync latency while a 1,000,000-row import of
//! bins runs beside it, with the quiet figure of the same handhelds as its
//! baseline, and the hop feed's pages per second beside reading the same
//! pages straight from the database.
//!
//! Two loads, each beside an import of its own: one handheld syncing back
//! to back (the most syncs that can meet the import; its figures also
//! split at the import's flip, staging then applying), and 16 handhelds
//! each syncing a scan every 0.5 s, as handhelds do on the floor. For the
//! back-to-back load, the turns that gave way to a waiting sync are timed
//! from the look that found it waiting to the writer's release: what such
//! a sync waits for.
//!
//! The site runs in process over one SQLite file (WAL, synchronous=FULL),
//! serving over loopback; the import takes the path both `PUT
//! /v1/admin/reference/bins` and `stockhop-site import` take
//! (`ledger::import::run` on the site's database), on its own thread.
//! Targets: no sync answered 503, sync p99 during the import within 2x of
//! quiet, no import turn holding the writer over 100 ms; beside the last,
//! the longest a quiet one-scan sync held the writer in the same run (its
//! commit and `fsync`): the disk's own floor. Prints tables; asserts
//! nothing.
//!
//! On a machine shared with other work, both figures move with the load:
//! the quiet baseline is taken before the import and again after it, and
//! the ratio is against both together; and each turn's hold is split, by
//! Linux's per-thread scheduler statistics, into the time its thread ran
//! on a CPU, the time it waited, runnable, for one, and the rest, when it
//! was blocked (on the disk: a page read, the log's write).
//!
//! PostgreSQL: with `STOCKHOP_BENCH_POSTGRES=postgres://user@host:port/db`
//! (a cluster's admin URL, e.g. the one `cargo xtask postgres` prints) the
//! same runs again with the ledger on a database the bench creates and
//! drops, the feed's baseline read with tokio-postgres.
//!
//! `cargo bench -p stockhop-site --profile site --bench data_in_out`
//! (`STOCKHOP_BENCH_QUICK=1`: small sizes, see `support`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stockhop_site::ledger::{self, devices::Profile, import, LedgerState};
use stockhop_site::store::db::{Database, Db};
use stockhop_site::AppState;

#[path = "support/handheld.rs"]
mod handheld;
mod support;

use handheld::Handheld;

/// The bench's sizes: the million rows, or a quick look.
struct Sizes {
    import_rows: usize,
    quiet: Duration,
    feed_hops: usize,
}

fn sizes() -> Sizes {
    Sizes {
        import_rows: support::scaled(1_000_000, 5_000),
        quiet: support::scaled(Duration::from_secs(10), Duration::from_secs(1)),
        feed_hops: support::scaled(100_000, 2_000),
    }
}

/// The cluster to run the PostgreSQL half on, if any.
const POSTGRES_VAR: &str = "STOCKHOP_BENCH_POSTGRES";
/// The database the PostgreSQL half creates on it, and drops after.
const POSTGRES_DATABASE: &str = "stockhop_bench_data_in_out";

/// Hops on one feed page: the most a page holds.
const FEED_PAGE: usize = 1_000;
/// Units the handheld puts away, over and over (each scan is a hop).
const UNITS: usize = 100;
/// Handhelds in the paced run, and how often each syncs: a scan every
/// half second, as the issue's own measurement had one, on enough
/// handhelds for a p99 over a few hundred syncs in the quiet phases.
const PACED_HANDHELDS: usize = 16;
const PACE: Duration = Duration::from_millis(500);
/// Scans a request carries while the feed's hops are made: the most a
/// request may.
const SCANS_PER_REQUEST: usize = stockhop::wire::MAX_ITEMS_PER_REQUEST;

fn main() {
    support::announce("data_in_out");
    let sizes = sizes();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    let sqlite = Db::open(&dir.path().join("sqlite")).unwrap();
    reports.push((
        "SQLite (WAL, synchronous=FULL)",
        runtime.block_on(run(sqlite, None, dir.path(), &sizes)),
    ));
    if let Ok(admin) = std::env::var(POSTGRES_VAR) {
        let url = runtime.block_on(admin_batch(
            &admin,
            &format!(
                "DROP DATABASE IF EXISTS {POSTGRES_DATABASE}; CREATE DATABASE {POSTGRES_DATABASE}"
            ),
        ));
        let db = Db::connect(
            &Database::Postgres(url.clone()),
            &dir.path().join("postgres"),
        )
        .unwrap();
        let report = runtime.block_on(run(db, Some(&url), dir.path(), &sizes));
        runtime.block_on(admin_batch(
            &admin,
            &format!("DROP DATABASE IF EXISTS {POSTGRES_DATABASE} WITH (FORCE)"),
        ));
        reports.push(("PostgreSQL (SERIALIZABLE)", report));
    }
    print_tables(&reports);
}

/// Runs `statements` on the cluster `admin` names; returns the URL of the
/// bench's database on it.
async fn admin_batch(admin: &str, statements: &str) -> String {
    let (client, connection) = tokio_postgres::connect(admin, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|err| panic!("connecting to {admin} ({POSTGRES_VAR}): {err}"));
    tokio::spawn(connection);
    for statement in statements.split("; ") {
        client.batch_execute(statement).await.unwrap();
    }
    let mut url = url::Url::parse(admin).unwrap();
    url.set_path(POSTGRES_DATABASE);
    String::from(url)
}

/// The head of a table of sync phases, one row each ([`print_phase_row`]).
fn print_phase_header() {
    println!(
        "| {:<30} | {:<40} | {:>7} | {:>5} | {:>9} | {:>9} | {:>9} |",
        "ledger", "phase", "syncs", "503s", "p50 ms", "p99 ms", "max ms"
    );
    println!(
        "|{:-<32}|{:-<42}|{:->9}|{:->7}|{:->11}|{:->11}|{:->11}|",
        "", "", "", "", "", "", ""
    );
}

fn print_phase_row(engine: &str, name: &str, phase: &Phase) {
    println!(
        "| {:<30} | {:<40} | {:>7} | {:>5} | {:>9.2} | {:>9.2} | {:>9.2} |",
        engine,
        name,
        phase.latencies.len(),
        phase.refused,
        phase.at(0.50),
        phase.at(0.99),
        phase.at(1.0)
    );
}

fn print_tables(reports: &[(&str, Report)]) {
    println!();
    println!("handheld POST /v1/sync (1 scan a request, back to back) over loopback");
    print_phase_header();
    for (engine, report) in reports {
        let during = format!(
            "during a {}-row import of bins",
            report.imported.summary.rows
        );
        for (name, phase) in [
            ("quiet, before the import (baseline)", &report.quiet),
            (during.as_str(), &report.during),
            ("  of them while it staged", &report.staging),
            ("  of them while it applied", &report.applying),
            ("quiet, after the import (baseline)", &report.quiet_after),
        ] {
            print_phase_row(engine, name, phase);
        }
    }
    println!();
    println!(
        "| {:<30} | {:>12} | {:>9} | {:>10} | {:>10} | {:>12} | {:>21} | {:>22} |",
        "ledger",
        "import rows",
        "changed",
        "seconds",
        "rows/s",
        "longest ms",
        "quiet sync's longest",
        "p99 during / quiet"
    );
    println!(
        "|{:-<32}|{:->14}|{:->11}|{:->12}|{:->12}|{:->14}|{:->23}|{:->24}|",
        "", "", "", "", "", "", "", ""
    );
    for (engine, report) in reports {
        let quiet_hold = match report.quiet_hold {
            Duration::ZERO => "-".to_owned(),
            held => format!("{:.1}", held.as_secs_f64() * 1000.0),
        };
        println!(
            "| {:<30} | {:>12} | {:>9} | {:>10.1} | {:>10.0} | {:>12.1} | {:>21} | {:>21.2}x |",
            engine,
            report.imported.summary.rows,
            report.imported.summary.changed,
            report.imported.took.as_secs_f64(),
            report.imported.summary.rows as f64 / report.imported.took.as_secs_f64(),
            report.imported.summary.longest_turn.as_secs_f64() * 1000.0,
            quiet_hold,
            report.during.at(0.99) / report.quiet.and(&report.quiet_after).at(0.99)
        );
    }
    println!("targets: no 503, p99 during the import within 2x of quiet (before and after together), longest hold of the writer under 100 ms");
    println!("(longest ms: the import's longest turn at the writer; quiet sync's longest: the longest a quiet one-scan sync held it, in ms, its commit and fsync included: the disk's floor)");
    println!();
    println!(
        "{PACED_HANDHELDS} handhelds, each POST /v1/sync (1 scan) every {} ms, spread evenly; another import of as many new bins",
        PACE.as_millis()
    );
    print_phase_header();
    for (engine, report) in reports {
        let paced = &report.paced;
        let during = format!(
            "during the import ({:.1} s)",
            paced.import_time.as_secs_f64()
        );
        for (name, phase) in [
            ("quiet, before the import (baseline)", &paced.quiet),
            (during.as_str(), &paced.during),
            ("quiet, after the import (baseline)", &paced.quiet_after),
        ] {
            print_phase_row(engine, name, phase);
        }
        println!(
            "| {:<30} | {:<40} | {:>7} | {:>5} | {:>9} | {:>8.2}x | {:>9} |",
            engine,
            "p99 during / quiet (before and after)",
            "",
            "",
            "",
            paced.during.at(0.99) / paced.quiet.and(&paced.quiet_after).at(0.99),
            ""
        );
    }
    println!();
    println!("the import's turns at the writer (each one transaction, its commit included)");
    println!(
        "| {:<30} | {:>7} | {:>9} | {:>9} | {:>9} | {:>9} | {:>10} | {:>22} | {:>20} |",
        "ledger",
        "turns",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "over 50 ms",
        "on a CPU: p99 / max ms",
        "over 50 ms on a CPU"
    );
    println!(
        "|{:-<32}|{:->9}|{:->11}|{:->11}|{:->11}|{:->11}|{:->12}|{:->24}|{:->22}|",
        "", "", "", "", "", "", "", "", ""
    );
    for (engine, report) in reports {
        let holds = &report.imported.holds;
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let at = |q: f64| quantile_ms(holds, q);
        let over_50 = |holds: &[Duration]| {
            holds
                .iter()
                .filter(|d| **d > Duration::from_millis(50))
                .count()
        };
        let mut on_cpu: Vec<Duration> = report
            .imported
            .splits
            .iter()
            .map(|split| split.on_cpu)
            .collect();
        on_cpu.sort();
        let (cpu_spread, cpu_over) = match on_cpu.last() {
            None => ("-".to_owned(), "-".to_owned()),
            Some(longest) => (
                format!("{:.2} / {:.2}", quantile_ms(&on_cpu, 0.99), ms(*longest)),
                over_50(&on_cpu).to_string(),
            ),
        };
        println!(
            "| {:<30} | {:>7} | {:>9.2} | {:>9.2} | {:>9.2} | {:>9.2} | {:>10} | {:>22} | {:>20} |",
            engine,
            holds.len(),
            at(0.50),
            at(0.99),
            at(0.999),
            holds.last().map_or(0.0, |d| ms(*d)),
            over_50(holds),
            cpu_spread,
            cpu_over
        );
    }
    for (engine, report) in reports {
        let gave_way = &report.imported.gave_way;
        if !gave_way.is_empty() {
            println!(
                "{engine}: {} turns gave way to a waiting sync; from the look that found it waiting to the release (rest of the turn's work, its commit): p50 {:.2} / p90 {:.2} / p99 {:.2} / max {:.2} ms",
                gave_way.len(),
                quantile_ms(gave_way, 0.5),
                quantile_ms(gave_way, 0.9),
                quantile_ms(gave_way, 0.99),
                quantile_ms(gave_way, 1.0)
            );
        }
    }
    println!();
    println!("the import's five longest turns: where the time holding the writer went");
    println!(
        "| {:<30} | {:>13} | {:>9} | {:>9} | {:>17} | {:>21} | {:>12} | {:>17} |",
        "ledger",
        "turn",
        "held ms",
        "on a CPU",
        "waiting for a CPU",
        "blocked (disk, locks)",
        "log MiB",
        "frames / copied"
    );
    println!(
        "|{:-<32}|{:->15}|{:->11}|{:->11}|{:->19}|{:->23}|{:->14}|{:->19}|",
        "", "", "", "", "", "", "", ""
    );
    for (engine, report) in reports {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let mut longest = report.imported.splits.clone();
        longest.sort_by_key(|split| std::cmp::Reverse(split.held));
        for split in longest.iter().take(5) {
            println!(
                "| {:<30} | {:>13} | {:>9.2} | {:>9.2} | {:>17.2} | {:>21.2} | {:>12.1} | {:>17} |",
                engine,
                format!("{} of {}", split.turn, longest.len()),
                ms(split.held),
                ms(split.on_cpu),
                ms(split.cpu_wait),
                ms(split.blocked()),
                split.log_mib,
                format!("{} / {}", split.frames.0, split.frames.1)
            );
        }
    }
    for (engine, report) in reports {
        let peak = report
            .imported
            .splits
            .iter()
            .map(|split| split.log_mib)
            .fold(0.0, f64::max);
        if peak > 0.0 {
            println!("{engine}: the log reached {peak:.1} MiB during the import (the writer checkpoints in its own commit past {} MiB)",
                stockhop_site::store::checkpoint::WRITER_FALLBACK_PAGES as u64 * 4096 / (1024 * 1024));
        }
    }
    println!();
    println!("hop feed, pages of {FEED_PAGE} hops");
    println!(
        "| {:<30} | {:<42} | {:>9} | {:>9} | {:>11} |",
        "ledger", "reader", "hops", "pages/s", "hops/s"
    );
    println!(
        "|{:-<32}|{:-<44}|{:->11}|{:->11}|{:->13}|",
        "", "", "", "", ""
    );
    for (engine, report) in reports {
        for (name, (pages, took)) in [
            ("the page's SELECT, raw client (baseline)", report.raw_feed),
            ("GET /v1/hops over loopback", report.feed),
        ] {
            let per_sec = pages as f64 / took.as_secs_f64();
            println!(
                "| {:<30} | {:<42} | {:>9} | {:>9.0} | {:>11.0} |",
                engine,
                name,
                report.feed_hops,
                per_sec,
                per_sec * FEED_PAGE as f64
            );
        }
    }
    println!();
}

struct Report {
    quiet: Phase,
    quiet_after: Phase,
    during: Phase,
    /// The syncs of `during` sent before the import was decided, and after.
    staging: Phase,
    applying: Phase,
    paced: Paced,
    imported: Imported,
    /// The longest any quiet sync held the writer (on PostgreSQL, zero:
    /// no one writer).
    quiet_hold: Duration,
    feed_hops: usize,
    feed: (usize, Duration),
    raw_feed: (usize, Duration),
}

/// Handhelds that each sync every [`PACE`], quiet and during an import of
/// as many rows as the first.
struct Paced {
    quiet: Phase,
    during: Phase,
    quiet_after: Phase,
    import_time: Duration,
}

/// What the import thread hands back.
struct Imported {
    summary: import::Summary,
    took: Duration,
    /// Every turn's hold of the writer, shortest first.
    holds: Vec<Duration>,
    /// Every turn's hold split as [`Split`], in the order they ran.
    splits: Vec<Split>,
    /// For each turn that saw a sync wait for the writer: from its first
    /// look that did to its release (its rest of work, its commit),
    /// shortest first. What a waiting sync waits for, bar the look itself.
    gave_way: Vec<Duration>,
}

/// Starts importing `rows` new bins (`{prefix}-0000000`, …) on `db` on a
/// thread of its own; returns it, and when the import was seen decided
/// (filled in by its first turn after the flip).
fn start_import(
    db: &Db,
    rows: usize,
    prefix: &str,
) -> (
    tokio::task::JoinHandle<Imported>,
    std::sync::Arc<std::sync::Mutex<Option<Instant>>>,
) {
    let mut csv = String::from("bin,zone,location\n");
    for i in 0..rows {
        csv.push_str(&format!("{prefix}-{i:07},Z-{},L-{}\n", i % 100, i % 7));
    }
    let flipped = std::sync::Arc::new(std::sync::Mutex::new(None));
    let importing = Turns {
        db: db.clone(),
        flipped: flipped.clone(),
        held: Default::default(),
        own: Default::default(),
        first_wanted: Default::default(),
        gave_way: Default::default(),
    };
    let started = Instant::now();
    let import = tokio::task::spawn_blocking(move || {
        let summary = import::run(
            &importing,
            import::Kind::Bins,
            "bench",
            import::Source::Csv(csv.as_bytes()),
            &ledger::wall_clock,
        )
        .unwrap();
        let mut holds = importing.held.into_inner();
        holds.sort();
        let mut gave_way = importing.gave_way.into_inner();
        gave_way.sort();
        Imported {
            summary,
            took: started.elapsed(),
            holds,
            splits: importing.own.into_inner(),
            gave_way,
        }
    });
    (import, flipped)
}

/// Runs the bench on `db`; `postgres` is its URL when it is on PostgreSQL,
/// for the feed's baseline to read it on a connection of its own.
async fn run(db: Db, postgres: Option<&str>, dir: &std::path::Path, sizes: &Sizes) -> Report {
    let now = ledger::wall_clock();
    let (token, admin) = db
        .call_blocking(|conn| {
            let token =
                ledger::devices::add(conn, handheld::DEVICE_ID, Profile::Mc3390xr, true, now)?;
            let admin = stockhop_site::view::admin::add(conn, "bench", now)?;
            Ok::<_, ledger::LedgerError>((token, admin))
        })
        .unwrap();
    let bins = "bin,zone,location\nB-1,Z-1,L-1\nB-2,Z-1,L-1\n".to_owned();
    let units: String = (0..UNITS).map(|i| format!("U-{i},,SKU-1,new,\n")).collect();
    for (kind, text) in [
        (import::Kind::Bins, bins),
        (
            import::Kind::Units,
            format!("epc,code,sku,state,bin\n{units}"),
        ),
    ] {
        db.call_blocking(|conn| import::import_reader(conn, kind, "seed", text.as_bytes(), now))
            .unwrap();
    }
    let api = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", api.local_addr().unwrap());
    let state = AppState {
        db: db.clone(),
        www_dir: dir.join("www"),
        ledger: LedgerState::default(),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(stockhop_site::serve(api, state, async {
        let _ = stopped.await;
    }));
    let client = reqwest::Client::new();
    let url = format!("{base}/v1/sync");
    let mut handheld = Handheld::new(token);
    let open = handheld.next(
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away", "context": {}}),
    );
    handheld.sync(&client, &url, vec![open]).await;

    let quiet_until = Instant::now() + sizes.quiet;
    db.take_longest_hold();
    let quiet = phase(&client, &url, &mut handheld, || {
        Instant::now() >= quiet_until
    })
    .await;
    let quiet_hold = db.take_longest_hold();

    let (import, flipped) = start_import(&db, sizes.import_rows, "BIG");
    let during = phase(&client, &url, &mut handheld, || import.is_finished()).await;
    let imported = import.await.unwrap();
    let (staging, applying) = during.split_at(*flipped.lock().unwrap());
    let quiet_until = Instant::now() + sizes.quiet;
    let quiet_after = phase(&client, &url, &mut handheld, || {
        Instant::now() >= quiet_until
    })
    .await;

    // The same again with handhelds that each sync every PACE, as they do
    // on the floor, and another import of as many new bins.
    let mut paced = paced_handhelds(&db, &client, &url).await;
    let quiet_until = Instant::now() + sizes.quiet;
    let paced_quiet =
        paced_phase(&client, &url, &mut paced, || Instant::now() >= quiet_until).await;
    let (import, _) = start_import(&db, sizes.import_rows, "PACE");
    let paced_during = paced_phase(&client, &url, &mut paced, || import.is_finished()).await;
    let paced_import_time = import.await.unwrap().took;
    let quiet_until = Instant::now() + sizes.quiet;
    let paced_quiet_after =
        paced_phase(&client, &url, &mut paced, || Instant::now() >= quiet_until).await;

    // The feed's hops: put-away scans, many a request.
    let mut made = 0;
    while made < sizes.feed_hops {
        let items: Vec<Value> = (0..SCANS_PER_REQUEST)
            .map(|i| {
                handheld.next(
                    "scan",
                    json!({"mode": "put_away", "epc": format!("U-{}", (made + i) % UNITS), "bin": "B-2"}),
                )
            })
            .collect();
        handheld.sync(&client, &url, items).await;
        made += SCANS_PER_REQUEST;
    }
    let feed_hops: usize = db
        .call_blocking(|conn| {
            conn.query_row("SELECT count(*) FROM hops", [], |row| row.get::<_, i64>(0))
        })
        .unwrap() as usize;
    let feed = read_feed(&client, &base, &admin).await;
    let raw_feed = match postgres {
        Some(url) => read_raw_postgres(url).await,
        None => read_raw(db.path().unwrap()),
    };
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    Report {
        quiet,
        quiet_after,
        during,
        staging,
        applying,
        paced: Paced {
            quiet: paced_quiet,
            during: paced_during,
            quiet_after: paced_quiet_after,
            import_time: paced_import_time,
        },
        imported,
        quiet_hold,
        feed_hops,
        feed,
        raw_feed,
    }
}

/// The site's database as the import takes it, a turn at a time, with
/// how long each turn held the writer, and where that time went.
struct Turns {
    db: Db,
    /// When the import was seen decided (its first turn after the flip).
    flipped: std::sync::Arc<std::sync::Mutex<Option<Instant>>>,
    held: std::cell::RefCell<Vec<Duration>>,
    own: std::cell::RefCell<Vec<Split>>,
    /// When this turn first found someone waiting for the writer.
    first_wanted: std::cell::Cell<Option<Instant>>,
    gave_way: std::cell::RefCell<Vec<Duration>>,
}

/// One turn's hold of the writer: on a CPU, waiting for one, and the rest.
#[derive(Clone, Copy)]
struct Split {
    /// Which turn of the import this was, from 1.
    turn: usize,
    held: Duration,
    on_cpu: Duration,
    cpu_wait: Duration,
    /// The SQLite log's length as the turn began, in MiB (it grows while
    /// checkpoints cannot start it again, and never shrinks); 0 elsewhere.
    log_mib: f64,
    /// The log's frames and of them those copied back, as the turn began.
    frames: (u32, u32),
}

/// The log's last frame and the frames copied back into the database
/// (`mxFrame`, `nBackfill`), read from the head of the wal-index beside
/// the file, as SQLite's file-format document lays it out (two copies of
/// a 48-byte header, `mxFrame` at byte 16; then the checkpoint's record,
/// `nBackfill` first; native byte order). A turn that begins with the log
/// past [`stockhop_site::store::checkpoint::WRITER_FALLBACK_PAGES`] frames and
/// not all of them copied pays for the rest in its commit.
fn log_state(path: &std::path::Path) -> (u32, u32) {
    use std::io::Read;
    let mut shm = path.as_os_str().to_owned();
    shm.push("-shm");
    let mut head = [0_u8; 100];
    let read = std::fs::File::open(shm).and_then(|mut file| file.read_exact(&mut head));
    if read.is_err() {
        return (0, 0);
    }
    let word = |at: usize| u32::from_ne_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    (word(16), word(96))
}

impl Split {
    /// Neither running nor runnable: blocked, on the disk as a rule.
    fn blocked(&self) -> Duration {
        self.held.saturating_sub(self.on_cpu + self.cpu_wait)
    }
}

impl import::Connections for Turns {
    fn turn<T>(
        &self,
        work: impl FnOnce(&mut stockhop_site::store::sql::Connection) -> T,
    ) -> (T, Duration) {
        let mut spent = None;
        let log_mib = self.db.path().map_or(0.0, |path| {
            let mut log = path.as_os_str().to_owned();
            log.push("-wal");
            std::fs::metadata(log).map_or(0.0, |meta| meta.len() as f64 / (1024.0 * 1024.0))
        });
        let frames = self.db.path().map_or((0, 0), log_state);
        let (out, took) = self.db.turn(|conn| {
            let before = scheduled();
            self.first_wanted.set(None);
            let out = work(conn);
            if let Some(first) = self.first_wanted.get() {
                self.gave_way.borrow_mut().push(first.elapsed());
            }
            let mut flipped = self.flipped.lock().unwrap();
            if flipped.is_none() && import::visible_until(conn).unwrap().is_some() {
                *flipped = Some(Instant::now());
            }
            drop(flipped);
            spent = before
                .zip(scheduled())
                .map(|(before, after)| (after.0 - before.0, after.1 - before.1));
            out
        });
        self.held.borrow_mut().push(took);
        if let Some((on_cpu, cpu_wait)) = spent {
            let mut own = self.own.borrow_mut();
            let turn = own.len() + 1;
            own.push(Split {
                turn,
                held: took,
                on_cpu,
                cpu_wait,
                log_mib,
                frames,
            });
        }
        (out, took)
    }

    fn wanted(&self) -> bool {
        let wanted = self.db.writer_wanted();
        if wanted && self.first_wanted.get().is_none() {
            self.first_wanted.set(Some(Instant::now()));
        }
        wanted
    }
}

/// How long the calling thread has run on a CPU (its CPU-time clock) and
/// waited, runnable, for one (the second field of Linux's
/// `/proc/thread-self/schedstat`, in nanoseconds) since it started; `None`
/// where the system does not keep the latter.
fn scheduled() -> Option<(Duration, Duration)> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let waited = stat.split_whitespace().nth(1)?.parse().ok()?;
    let cpu = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let on_cpu = Duration::new(cpu.tv_sec as u64, cpu.tv_nsec as u32);
    Some((on_cpu, Duration::from_nanos(waited)))
}

/// Pages the whole feed over HTTP: the pages read and the time taken.
async fn read_feed(client: &reqwest::Client, base: &str, admin: &str) -> (usize, Duration) {
    let started = Instant::now();
    let mut after = String::new();
    let mut pages = 0;
    loop {
        let page: Value = client
            .get(format!("{base}/v1/hops?after={after}&limit={FEED_PAGE}"))
            .bearer_auth(admin)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        pages += 1;
        after = page["next"].as_str().unwrap().to_owned();
        if page["hops"].as_array().unwrap().len() < FEED_PAGE {
            return (pages, started.elapsed());
        }
    }
}

/// The feed's page: its join, as `ledger::hop_feed` runs it.
const FEED_PAGE_SQL: &str =
    "SELECT h.hop_id, h.key, h.kind, h.command, h.mode, h.device_id, h.session_id,
        h.client_seq, s.operator_id, u.epc, h.from_bin, h.to_bin, h.facts,
        h.occurred_at, h.booked_at, h.recorded_at, h.source_mode, h.compensates
 FROM hops h
 LEFT JOIN sessions s ON s.session_id = h.session_id
 LEFT JOIN units u ON u.unit_id = h.unit_id
 WHERE h.hop_id > $1 ORDER BY h.hop_id LIMIT $2";

/// The same pages read with the feed's join straight from SQLite: the
/// floor under the feed.
fn read_raw(path: &std::path::Path) -> (usize, Duration) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let started = Instant::now();
    let mut statement = conn.prepare(&FEED_PAGE_SQL.replace('$', "?")).unwrap();
    let mut after = 0_i64;
    let mut pages = 0;
    loop {
        let ids: Vec<i64> = statement
            .query_map([after, FEED_PAGE as i64], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        pages += 1;
        match ids.last() {
            Some(last) if ids.len() == FEED_PAGE => after = *last,
            _ => return (pages, started.elapsed()),
        }
    }
}

/// The same pages read with the feed's join through tokio-postgres, on a
/// connection of its own to the ledger's database.
async fn read_raw_postgres(url: &str) -> (usize, Duration) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let started = Instant::now();
    let statement = client.prepare(FEED_PAGE_SQL).await.unwrap();
    let mut after = 0_i64;
    let mut pages = 0;
    loop {
        let rows = client
            .query(&statement, &[&after, &(FEED_PAGE as i64)])
            .await
            .unwrap();
        pages += 1;
        match rows.last() {
            Some(last) if rows.len() == FEED_PAGE => after = last.get(0),
            _ => return (pages, started.elapsed()),
        }
    }
}

struct Phase {
    /// Every sync's latency, shortest first.
    latencies: Vec<Duration>,
    refused: usize,
    /// Every sync's sending and latency, in the order sent.
    timeline: Vec<(Instant, Duration)>,
}

/// The `q` quantile of `sorted` (shortest first), in milliseconds; 0 when
/// it is empty.
fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    let i = ((sorted.len() as f64 * q) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

impl Phase {
    fn at(&self, q: f64) -> f64 {
        quantile_ms(&self.latencies, q)
    }

    /// This phase's syncs sent before `at`, and the rest; all of them
    /// before when `at` is `None`.
    fn split_at(&self, at: Option<Instant>) -> (Phase, Phase) {
        let (before, after) = self
            .timeline
            .iter()
            .partition(|(sent, _)| at.is_none_or(|at| *sent < at));
        (Phase::of(before, 0), Phase::of(after, 0))
    }

    /// The phase of the syncs in `timeline` (sent, took), in the order
    /// sent, `refused` of them not answered 200.
    fn of(timeline: Vec<(Instant, Duration)>, refused: usize) -> Phase {
        let mut latencies: Vec<Duration> = timeline.iter().map(|(_, took)| *took).collect();
        latencies.sort();
        Phase {
            latencies,
            refused,
            timeline,
        }
    }

    /// This phase and `other` as one.
    fn and(&self, other: &Phase) -> Phase {
        let mut latencies = [self.latencies.as_slice(), other.latencies.as_slice()].concat();
        latencies.sort();
        Phase {
            latencies,
            refused: self.refused + other.refused,
            timeline: Vec::new(),
        }
    }
}

/// Adds [`PACED_HANDHELDS`] devices and opens a put-away session on each.
async fn paced_handhelds(db: &Db, client: &reqwest::Client, url: &str) -> Vec<Handheld> {
    let mut handhelds = Vec::new();
    for n in 0..PACED_HANDHELDS {
        let device_id = format!("HH-P{n:02}");
        let token = db
            .call_blocking(|conn| {
                ledger::devices::add(
                    conn,
                    &device_id,
                    Profile::Mc3390xr,
                    true,
                    ledger::wall_clock(),
                )
            })
            .unwrap();
        let mut handheld = Handheld::of(&device_id, token);
        let open = handheld.next(
            "open_session",
            json!({"operator_id": format!("op-P{n:02}"), "mode": "put_away", "context": {}}),
        );
        handheld.sync(client, url, vec![open]).await;
        handhelds.push(handheld);
    }
    handhelds
}

/// Has every handheld sync one scan every [`PACE`], their turns spread
/// evenly over it, until `done`.
async fn paced_phase(
    client: &reqwest::Client,
    url: &str,
    handhelds: &mut [Handheld],
    done: impl Fn() -> bool,
) -> Phase {
    let count = handhelds.len() as u32;
    let start = tokio::time::Instant::now();
    let runs = handhelds.iter_mut().enumerate().map(|(n, handheld)| {
        let done = &done;
        async move {
            let mut next = start + PACE * n as u32 / count;
            let mut timeline = Vec::new();
            let mut refused = 0;
            let mut i = n;
            loop {
                tokio::time::sleep_until(next).await;
                if done() {
                    return (timeline, refused);
                }
                let (sent, took, ok) = sync_scan(client, url, handheld, i).await;
                i += 1;
                refused += usize::from(!ok);
                timeline.push((sent, took));
                next = (next + PACE).max(tokio::time::Instant::now());
            }
        }
    });
    let mut timeline = Vec::new();
    let mut refused = 0;
    for (one, one_refused) in futures_util::future::join_all(runs).await {
        timeline.extend(one);
        refused += one_refused;
    }
    timeline.sort_by_key(|(sent, _)| *sent);
    Phase::of(timeline, refused)
}

/// Syncs one scan a request, back to back, until `done`.
async fn phase(
    client: &reqwest::Client,
    url: &str,
    handheld: &mut Handheld,
    done: impl Fn() -> bool,
) -> Phase {
    let mut timeline = Vec::new();
    let mut refused = 0;
    let mut i = 0;
    while !done() {
        let (sent, took, ok) = sync_scan(client, url, handheld, i).await;
        i += 1;
        refused += usize::from(!ok);
        timeline.push((sent, took));
    }
    Phase::of(timeline, refused)
}

/// Syncs the `i`th put-away scan of `handheld` alone: when it was sent,
/// how long it took, and whether it was answered 200.
async fn sync_scan(
    client: &reqwest::Client,
    url: &str,
    handheld: &mut Handheld,
    i: usize,
) -> (Instant, Duration, bool) {
    let scan = handheld.next(
        "scan",
        json!({"mode": "put_away", "epc": format!("U-{}", i % UNITS), "bin": if i % 2 == 0 { "B-1" } else { "B-2" }}),
    );
    let sent = Instant::now();
    let ok = handheld.try_sync(client, url, vec![scan]).await.is_ok();
    (sent, sent.elapsed(), ok)
}
