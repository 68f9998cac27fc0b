//! The supervisor's pages with a million rejected items, measured over
//! loopback on a real SQLite file, beside the same pages of an empty site:
//!
//! * `GET /v1/site/status`, `GET /v1/site/decisions` and `GET /metrics`
//!   (what the site's view polls every 5 s) with 1 M rejected receipts from
//!   four handhelds scanning tags the site does not know, none settled,
//!   against a site with none (the baseline), in interleaved rounds;
//! * the count those pages made before the rejection summaries (every
//!   unsettled rejected receipt, `SELECT count(*)` over the partial index
//!   `receipts_rejected`), timed on the same file: the old cost;
//! * the migration that makes the summaries, backfilling them from the
//!   receipts already held (how long a site with this many takes to start
//!   after the upgrade, once).
//!
//! The receipts are written straight into the file at the schema before
//! the summaries (one transaction, prepared inserts, in the shape the
//! ledger stores a rejected scan), and the summaries are made by the
//! migration's backfill, as on a site that upgrades.
//!
//! Run: `cargo bench -p stockhop-site --profile site --bench rejections`
//! (`STOCKHOP_BENCH_QUICK=1`: 20,000 receipts and fewer reads).

use std::time::Instant;

use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop::wire::{ItemOutcome, ItemResult};
use stockhop_site::ledger::{self, devices::Profile};
use stockhop_site::store::db::{Db, DB_FILE, MIGRATIONS};
use stockhop_site::view;

mod support;

/// Rejected receipts in the full site.
fn rejected() -> usize {
    support::scaled(1_000_000, 20_000)
}

/// Reads timed per row.
fn reads() -> usize {
    support::scaled(200, 20)
}

/// Times the old count is run (each reads every rejected receipt).
fn old_counts() -> usize {
    support::scaled(5, 3)
}

/// The handhelds that scanned, as in the flood that was measured.
const DEVICES: usize = 4;

/// The window the receipts are spread over (ten minutes, as the flood
/// was), ending now.
const SPREAD_MS: i64 = 10 * 60_000;

/// The migration that makes the summaries, by name.
const SUMMARIES: &str = "rejection_summaries";

/// The rows of the correction list as the pages counted them before.
const OLD_COUNT: &str = "SELECT count(*) FROM receipts r
     WHERE r.state = 'final'
       AND CASE WHEN json_valid(r.response) THEN json_extract(r.response, '$.outcome') END = 'rejected'
       AND NOT EXISTS (SELECT 1 FROM decision_log d
                       WHERE d.decision_id = 'item:' || r.scope || ':' || r.key)";

struct Latencies {
    what: String,
    millis: Vec<f64>,
}

impl Latencies {
    fn new(what: impl Into<String>) -> Latencies {
        Latencies {
            what: what.into(),
            millis: Vec::new(),
        }
    }

    fn at(&self, q: f64) -> f64 {
        let mut sorted = self.millis.clone();
        sorted.sort_by(f64::total_cmp);
        sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1]
    }

    fn row(&self) {
        println!(
            "| {:<62} | {:>5} | {:>9.1} | {:>9.1} | {:>9.1} |",
            self.what,
            self.millis.len(),
            self.at(0.5),
            self.at(0.99),
            self.at(1.0)
        );
    }
}

fn header() {
    println!(
        "| {:<62} | {:>5} | {:>9} | {:>9} | {:>9} |",
        "read", "n", "p50 ms", "p99 ms", "max ms"
    );
    println!(
        "|{:-<64}|{:->7}|{:->11}|{:->11}|{:->11}|",
        "", "", "", "", ""
    );
}

fn device_id(n: usize) -> String {
    format!("HH-{}", n + 1)
}

/// Writes `count` rejected scans into a new ledger file in `data` at the
/// schema before the summaries: each with its stored answer and body as
/// the ledger keeps a rejected item.
fn fill(data: &std::path::Path, count: usize, now: UnixMs) {
    std::fs::create_dir_all(data).unwrap();
    let mut conn = rusqlite::Connection::open(data.join(DB_FILE)).unwrap();
    // As the site makes its files: freed pages go back to the file system.
    conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
        .unwrap();
    let before: Vec<_> = MIGRATIONS
        .iter()
        .take_while(|migration| migration.name != SUMMARIES)
        .collect();
    assert!(before.len() < MIGRATIONS.len(), "no migration {SUMMARIES}");
    for migration in &before {
        conn.execute_batch(migration.sql).unwrap();
    }
    conn.pragma_update(None, "user_version", before.last().unwrap().version)
        .unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", "OFF").unwrap();
    let sessions: Vec<String> = (0..DEVICES)
        .map(|_| IdempotencyKey::mint().unwrap().to_string())
        .collect();
    let tx = conn.transaction().unwrap();
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash,
                                       state, item, received_at, skew_ms, response)
                 VALUES (?1, ?2, ?3, ?4, 'scan', ?5, 'final', ?6, ?7, 0, ?8)",
            )
            .unwrap();
        for n in 0..count {
            let device = n % DEVICES;
            let seq = (n / DEVICES + 2) as u64;
            let key = IdempotencyKey::mint().unwrap();
            let received = UnixMs(now.0 - SPREAD_MS + (n as i64 * SPREAD_MS) / count as i64);
            let epc = format!("3034257BF7194E4{n:09X}");
            let item = serde_json::json!({
                "key": key.to_string(),
                "session_id": sessions[device],
                "client_seq": seq,
                "command": "scan",
                "occurred_at": received.to_string(),
                "queued_at": received.to_string(),
                "body": {"mode": "put_away", "epc": epc, "bin": "A-01-03"},
            });
            let answer = ItemResult {
                key,
                client_seq: seq,
                status: 200,
                outcome: Some(ItemOutcome::Rejected),
                reason: Some("unknown_unit".into()),
                code: None,
                message: Some(format!("{epc} is not a unit the site knows")),
                replayed: false,
                recorded_at: Some(received),
                hop_ids: Vec::new(),
            };
            let item = item.to_string();
            insert
                .execute(rusqlite::params![
                    device_id(device),
                    key.to_string(),
                    sessions[device],
                    seq as i64,
                    ledger::receipts::canonical_hash(&item),
                    item,
                    received.0,
                    serde_json::to_string(&answer).unwrap(),
                ])
                .unwrap();
        }
    }
    tx.commit().unwrap();
}

/// The admin token of a site with the four handhelds.
fn prepare(db: &Db, now: UnixMs) -> String {
    db.call_blocking(move |conn| {
        for n in 0..DEVICES {
            ledger::devices::add(conn, &device_id(n), Profile::Mc3390xr, true, now).unwrap();
        }
        view::admin::add(conn, "bench", now).unwrap()
    })
}

async fn run(dir: &std::path::Path) {
    let now = ledger::wall_clock();
    let count = rejected();
    let filled_dir = dir.join("filled");
    let started = Instant::now();
    fill(&filled_dir, count, now);
    let fill_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let filled = Db::open(&filled_dir).unwrap();
    let backfill_s = started.elapsed().as_secs_f64();
    let empty = Db::open(&dir.join("empty")).unwrap();
    let admin = prepare(&filled, now);
    let empty_admin = prepare(&empty, now);

    let mut old = Latencies::new(format!(
        "before: count of unsettled rejected receipts, {count} held"
    ));
    for _ in 0..old_counts() {
        let started = Instant::now();
        let counted: i64 =
            filled.call_blocking(|conn| conn.query_row(OLD_COUNT, [], |row| row.get(0)).unwrap());
        old.millis.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(counted, count as i64);
    }

    let (empty_base, stop_empty, empty_task) = support::serve(empty, &dir.join("empty")).await;
    let (base, stop, task) = support::serve(filled, &filled_dir).await;
    let client = reqwest::Client::new();
    let status: serde_json::Value = client
        .get(format!("{base}/v1/site/status"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status["decisions"]["corrections_total"], count);
    assert_eq!(status["rejections"]["rejected"], count);
    assert_eq!(
        status["rejections"]["rejecting"].as_array().unwrap().len(),
        DEVICES,
        "{}",
        status["rejections"]
    );
    let paths = ["/v1/site/status", "/v1/site/decisions", "/metrics"];
    let mut rows: Vec<(String, &String, Latencies)> = Vec::new();
    for path in paths {
        rows.push((
            format!("{empty_base}{path}"),
            &empty_admin,
            Latencies::new(format!("GET {path}, no rejected item (baseline)")),
        ));
        rows.push((
            format!("{base}{path}"),
            &admin,
            Latencies::new(format!("GET {path}, {count} rejected")),
        ));
    }
    for _ in 0..reads() {
        for (url, token, latencies) in &mut rows {
            let started = Instant::now();
            let response = client
                .get(url.as_str())
                .bearer_auth(token.as_str())
                .send()
                .await
                .unwrap();
            assert!(response.status().is_success(), "{url}");
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

    println!(
        "SQLite (WAL, synchronous=FULL), data in {}; {count} rejected receipts from {DEVICES} handhelds over 10 min, none settled",
        dir.display()
    );
    println!();
    header();
    for (_, _, latencies) in &rows {
        latencies.row();
    }
    old.row();
    println!();
    println!("| {:<62} | {:>10} |", "one-off", "seconds");
    println!("|{:-<64}|{:->12}|", "", "");
    println!(
        "| {:<62} | {:>10.1} |",
        format!("fill: {count} receipts written straight into the file"),
        fill_s
    );
    println!(
        "| {:<62} | {:>10.1} |",
        format!("migration {SUMMARIES}: backfill from {count} receipts"),
        backfill_s
    );
}

fn main() {
    support::announce("rejections");
    let dir =
        tempfile::tempdir_in(std::env::var_os("STOCKHOP_BENCH_DIR").unwrap_or_else(|| ".".into()))
            .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(run(dir.path()));
}
