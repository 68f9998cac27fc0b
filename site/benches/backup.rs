//! `stockhop-site backup DEST` on a big ledger while a handheld syncs: the
//! online backup's time and size for 1,000,000 hops (with their receipts),
//! and what the handheld's sync latency does meanwhile. Beside it, the
//! baseline: a plain copy of the same file with nothing writing (the
//! floor any backup of those bytes has on this disk), and the handheld's
//! latency with no backup running. Prints a table; asserts nothing but
//! that every scan is applied.
//!
//! The ledger is made as a site makes it, then grown: a handheld syncs
//! put-aways through the real API; then the last of its hops and that
//! hop's receipt are copied, each copy under its own key and session,
//! until the ledger holds the hops asked for, as a site that has recorded
//! that many scans holds them.
//!
//! `cargo bench -p stockhop-site --profile site --bench backup`
//! (`STOCKHOP_BENCH_QUICK=1`: 20,000 hops and one-second phases)

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use stockhop::time::UnixMs;
use stockhop_site::ledger::{self, LedgerState};
use stockhop_site::store::db::{Db, DB_FILE};
use stockhop_site::AppState;

#[path = "support/handheld.rs"]
mod handheld;
mod support;
use handheld::Handheld;

/// Hops in the ledger when the backup starts: 1,000,000, or 20,000 in the
/// quick mode.
fn hops_wanted() -> i64 {
    support::scaled(1_000_000, 20_000)
}
/// How long the handheld syncs with no backup running, for its baseline.
fn quiet_length() -> Duration {
    support::scaled(Duration::from_secs(5), Duration::from_secs(1))
}
/// Copies of the template hop made per transaction while the ledger grows.
const GROW_CHUNK: i64 = 100_000;
/// Units the handheld can put away: more than it syncs in the run (5,000
/// in the quick mode, whose phases are short).
fn units_wanted() -> usize {
    support::scaled(50_000, 5_000)
}
/// The bin every scan puts its unit into.
const BIN: &str = "B-1";

fn main() {
    support::announce("backup");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = runtime.block_on(run(dir.path()));
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    println!();
    println!(
        "online backup of a ledger of {} hops (SQLite WAL, synchronous=FULL) while a handheld syncs one put-away a request",
        report.hops
    );
    println!(
        "| {:<52} | {:>9} | {:>9} | {:>7} | {:>9} | {:>9} |",
        "what", "time s", "MiB", "syncs", "p50 ms", "p99 ms"
    );
    println!(
        "|{:-<54}|{:->11}|{:->11}|{:->9}|{:->11}|{:->11}|",
        "", "", "", "", "", ""
    );
    println!(
        "| {:<52} | {:>9.2} | {:>9.1} | {:>7} | {:>9} | {:>9} |",
        "baseline: plain file copy, nothing writing",
        report.plain_copy.as_secs_f64(),
        mib(report.ledger_bytes),
        "–",
        "–",
        "–"
    );
    println!(
        "| {:<52} | {:>9} | {:>9} | {:>7} | {:>9.2} | {:>9.2} |",
        "baseline: handheld syncing, no backup",
        "–",
        "–",
        report.quiet.syncs,
        report.quiet.p50_ms,
        report.quiet.p99_ms
    );
    println!(
        "| {:<52} | {:>9.2} | {:>9.1} | {:>7} | {:>9.2} | {:>9.2} |",
        "`stockhop-site backup DEST` while the handheld syncs",
        report.backup.as_secs_f64(),
        mib(report.backup_bytes),
        report.during.syncs,
        report.during.p50_ms,
        report.during.p99_ms
    );
    println!(
        "backup time / plain copy: {:.2}x; the copy holds {} hops, {} acknowledged before it began (all of them: {})",
        report.backup.as_secs_f64() / report.plain_copy.as_secs_f64(),
        report.hops_in_copy,
        report.acknowledged,
        report.hops_in_copy >= report.acknowledged
    );
    println!();
}

struct Phase {
    syncs: usize,
    p50_ms: f64,
    p99_ms: f64,
}

struct Report {
    hops: i64,
    ledger_bytes: u64,
    plain_copy: Duration,
    quiet: Phase,
    backup: Duration,
    backup_bytes: u64,
    hops_in_copy: i64,
    /// Hops acknowledged before the backup began.
    acknowledged: i64,
    during: Phase,
}

async fn run(dir: &Path) -> Report {
    let data = dir.join("data");
    let db = Db::open(&data).unwrap();
    let token = handheld::add(&db);
    stock(&db);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let api = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/sync", api.local_addr().unwrap());
    let state = AppState {
        db: db.clone(),
        www_dir: dir.join("www"),
        ledger: LedgerState::default(),
    };
    let mut api_stopped = stopped.clone();
    let server = tokio::spawn(stockhop_site::serve(api, state, async move {
        let _ = api_stopped.wait_for(|stop| *stop).await;
    }));
    let client = reqwest::Client::new();
    let mut handheld = Handheld::new(token);
    let open = handheld.next(
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away", "context": {}}),
    );
    handheld.sync(&client, &url, vec![open]).await;
    let mut next_unit = 0;
    for _ in 0..10 {
        put_away(&mut handheld, &client, &url, &mut next_unit).await;
    }
    let ledger_path = data.join(DB_FILE);
    let hops = grow(&ledger_path, hops_wanted());
    let ledger_bytes = std::fs::metadata(&ledger_path).unwrap().len();

    let copy = dir.join("plain-copy.sqlite");
    let started = Instant::now();
    std::fs::copy(&ledger_path, &copy).unwrap();
    std::fs::File::open(&copy).unwrap().sync_all().unwrap();
    let plain_copy = started.elapsed();
    std::fs::remove_file(&copy).unwrap();

    let quiet = phase(&client, &url, &mut handheld, &mut next_unit, |started| {
        started.elapsed() >= quiet_length()
    })
    .await;

    let acknowledged: i64 = rusqlite::Connection::open(&ledger_path)
        .unwrap()
        .query_row("SELECT count(*) FROM hops", [], |row| row.get(0))
        .unwrap();
    let dest = dir.join("backup.sqlite");
    let (source, target) = (ledger_path.clone(), dest.clone());
    let backup = tokio::task::spawn_blocking(move || {
        stockhop_site::store::backup::backup(&source, &target).expect("the backup completes")
    });
    let during = phase(&client, &url, &mut handheld, &mut next_unit, |_| {
        backup.is_finished()
    })
    .await;
    let summary = backup.await.unwrap();
    let hops_in_copy: i64 = rusqlite::Connection::open(&dest)
        .unwrap()
        .query_row("SELECT count(*) FROM hops", [], |row| row.get(0))
        .unwrap();
    let _ = stop.send(true);
    server.await.unwrap().unwrap();
    Report {
        hops,
        ledger_bytes,
        plain_copy,
        quiet,
        backup: summary.elapsed,
        backup_bytes: summary.bytes,
        hops_in_copy,
        acknowledged,
        during,
    }
}

/// Copies the newest hop and its receipt, each copy under its own key and
/// session, until the ledger at `path` holds `wanted` hops; returns how
/// many it holds.
fn grow(path: &Path, wanted: i64) -> i64 {
    let mut conn = rusqlite::Connection::open(path).unwrap();
    conn.busy_timeout(Duration::from_secs(30)).unwrap();
    let (hop_id, key): (i64, String) = conn
        .query_row(
            "SELECT hop_id, key FROM hops ORDER BY hop_id DESC LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    let copy_columns = |table: &str, varied: &[&str], skipped: &[&str]| -> (String, String) {
        let mut select = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap();
        let names: Vec<String> = select
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .filter(|name: &String| !skipped.contains(&name.as_str()))
            .collect();
        let values = names
            .iter()
            .map(|name| {
                if varied.contains(&name.as_str()) {
                    format!("{name} || '-' || n.i")
                } else {
                    name.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        (names.join(", "), values)
    };
    let (hop_columns, hop_values) = copy_columns("hops", &["key", "session_id"], &["hop_id"]);
    let (receipt_columns, receipt_values) = copy_columns("receipts", &["key", "session_id"], &[]);
    let count = |conn: &rusqlite::Connection| -> i64 {
        conn.query_row("SELECT count(*) FROM hops", [], |row| row.get(0))
            .unwrap()
    };
    let mut made = 0;
    while count(&conn) < wanted {
        let chunk = (wanted - count(&conn)).min(GROW_CHUNK);
        let tx = conn.transaction().unwrap();
        let series = format!(
            "WITH RECURSIVE n(i) AS (SELECT {first} UNION ALL SELECT i + 1 FROM n WHERE i < {last})",
            first = made + 1,
            last = made + chunk
        );
        tx.execute(
            &format!(
                "{series} INSERT INTO hops ({hop_columns}) SELECT {hop_values} FROM hops, n WHERE hop_id = ?1"
            ),
            [hop_id],
        )
        .unwrap();
        tx.execute(
            &format!(
                "{series} INSERT INTO receipts ({receipt_columns}) SELECT {receipt_values} FROM receipts, n WHERE key = ?1"
            ),
            [&key],
        )
        .unwrap();
        tx.commit().unwrap();
        made += chunk;
    }
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    count(&conn)
}

/// Imports the bin and the units the handheld puts away.
fn stock(db: &Db) {
    let mut units = String::from("epc,code,sku,state,bin\n");
    for i in 0..units_wanted() {
        units += &format!("U-{i},,SKU-1,new,\n");
    }
    let files = [
        (
            ledger::import::Kind::Bins,
            format!("bin,zone,location\n{BIN},Z-P,L-1\n"),
        ),
        (ledger::import::Kind::Units, units),
    ];
    db.call_blocking(|conn| {
        for (kind, text) in files {
            ledger::import::import_reader(conn, kind, "bench", text.as_bytes(), UnixMs(0)).unwrap();
        }
    });
}

/// Syncs put-aways, one a request, until `done` says so.
async fn phase(
    client: &reqwest::Client,
    url: &str,
    handheld: &mut Handheld,
    next_unit: &mut usize,
    done: impl Fn(Instant) -> bool,
) -> Phase {
    let mut latencies = Vec::new();
    let started = Instant::now();
    while !done(started) && *next_unit < units_wanted() {
        let sent = Instant::now();
        put_away(handheld, client, url, next_unit).await;
        latencies.push(sent.elapsed());
    }
    if latencies.is_empty() {
        return Phase {
            syncs: 0,
            p50_ms: 0.0,
            p99_ms: 0.0,
        };
    }
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at =
        |q: f64| ms(latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)]);
    Phase {
        syncs: latencies.len(),
        p50_ms: at(0.50),
        p99_ms: at(0.99),
    }
}

/// Puts the next unit away into the bench's bin, one scan a request.
async fn put_away(
    handheld: &mut Handheld,
    client: &reqwest::Client,
    url: &str,
    next_unit: &mut usize,
) {
    let scan = handheld.next(
        "scan",
        json!({"mode": "put_away", "epc": format!("U-{next_unit}"), "unit_version": 1, "bin": BIN}),
    );
    *next_unit += 1;
    handheld.sync(client, url, vec![scan]).await;
}
