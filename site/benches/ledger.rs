//! Throughput of `POST /v1/sync` over loopback with synchronous=FULL,
//! beside a raw rusqlite baseline doing the same claim + append inserts in
//! a loop on the same disk in the same run, and replay beside apply.
//!
//! Run: `cargo bench -p stockhop-site --bench ledger --profile site`.
//! Prints a table. (The `site` profile is the server's own; the default
//! bench profile inherits the wasm's release profile, which aborts on panic,
//! and cargo then builds the core crate twice, once per panic strategy,
//! into the same file.)
//!
//! The baseline that bounds the ledger is one claim + one hop insert per
//! transaction: the fsync-bound rate of this disk. A second baseline
//! commits 50 items at a time, the same batching a 50-item request gets,
//! and shows what the ledger's per-item work costs beside bare inserts.
//!
//! Put-away is the reference mode; receive (with and without ENCODE),
//! dispatch verify and cycle count scans are measured the same way at 50
//! items a request, against reference data imported before the run, each
//! beside the 50-a-commit baseline too.
//!
//! The machine is shared and its fsync time wanders, so the 50-a-request
//! paths and the 50-a-commit baseline run [`rounds`] times, interleaved,
//! and the table shows each one's median with its range. Every path also
//! shows the SQL statements it ran per item (SQLite's statement trace,
//! trigger bodies not counted; over HTTP that includes the request's token
//! lookup).
//!
//! PostgreSQL: with `STOCKHOP_BENCH_POSTGRES=postgres://user@host:port/db`
//! (a cluster's admin URL, e.g. the one `cargo xtask postgres` prints) the
//! 50-a-request paths run again on a ledger on PostgreSQL, interleaved with
//! a raw tokio-postgres baseline doing the same claim + hop inserts, 50 to
//! a SERIALIZABLE transaction; each on a database the bench creates and
//! drops. A second table shows them beside the baseline and beside the
//! SQLite ledger; statements and round trips per item are counted in a run
//! of their own through a loopback proxy that reads the client's messages.
//! A last table times one round trip on the ledger's connection beside a
//! raw tokio-postgres one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rusqlite::params;
use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop_site::ledger::{self, devices::Profile, LedgerState};
use stockhop_site::store::db::Db;
use stockhop_site::AppState;

mod support;

/// Items sent through each path: enough for a steady rate, small enough
/// to run in seconds on a disk that fsyncs in milliseconds (200 in the
/// quick mode).
fn items_per_run() -> usize {
    support::scaled(2_000, 200)
}
/// Requests in the one-item run: each costs an fsync, so fewer of them
/// (30 in the quick mode).
fn single_requests() -> usize {
    support::scaled(300, 30)
}
/// Runs of each 50-a-request path and of its baseline, interleaved: seven
/// give a median that a slow fsync burst or two does not move (on a disk
/// that commits in a fraction of a millisecond, one run is a tenth of a
/// second and three were too few). One in the quick mode.
fn rounds() -> usize {
    support::scaled(7, 1)
}
/// The PostgreSQL cluster's admin URL (`postgres://user@host:port/db`):
/// set, the same paths run on PostgreSQL too, beside a raw tokio-postgres
/// baseline, each on a database of its own that the bench creates on the
/// cluster and drops at the end.
const POSTGRES_VAR: &str = "STOCKHOP_BENCH_POSTGRES";

/// SQL statements started on every traced connection (trigger bodies,
/// which SQLite reports as `-- TRIGGER` lines, left out).
static STATEMENTS: AtomicU64 = AtomicU64::new(0);

fn count_statement(event: rusqlite::trace::TraceEvent<'_>) {
    if let rusqlite::trace::TraceEvent::Stmt(_, sql) = event {
        if !sql.starts_with("--") {
            STATEMENTS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn trace(db: &Db) {
    db.call_blocking(|conn| {
        conn.as_sqlite()
            .expect("the bench's site is on SQLite")
            .trace_v2(
                rusqlite::trace::TraceEventCodes::SQLITE_TRACE_STMT,
                Some(count_statement),
            )
    });
}

/// One timed run: its seconds and the statements it ran.
#[derive(Clone, Copy)]
struct Run {
    seconds: f64,
    statements: u64,
}

/// Times `work`, counting the statements it runs.
fn measured(work: impl FnOnce() -> f64) -> Run {
    let before = STATEMENTS.load(Ordering::Relaxed);
    let seconds = work();
    Run {
        seconds,
        statements: STATEMENTS.load(Ordering::Relaxed) - before,
    }
}

struct Row {
    path: String,
    per_request: usize,
    items: usize,
    /// Every run of the path, in the order they ran.
    runs: Vec<Run>,
}

impl Row {
    fn new(path: impl Into<String>, per_request: usize, items: usize) -> Row {
        Row {
            path: path.into(),
            per_request,
            items,
            runs: Vec::new(),
        }
    }

    fn rates(&self) -> Vec<f64> {
        let mut rates: Vec<f64> = self
            .runs
            .iter()
            .map(|run| self.items as f64 / run.seconds)
            .collect();
        rates.sort_by(f64::total_cmp);
        rates
    }

    /// The median rate.
    fn rate(&self) -> f64 {
        let rates = self.rates();
        rates[rates.len() / 2]
    }

    fn range(&self) -> String {
        let rates = self.rates();
        match rates.as_slice() {
            [only] => format!("{only:.0}"),
            [low, .., high] => format!("{low:.0}-{high:.0}"),
            [] => String::new(),
        }
    }

    fn seconds(&self) -> f64 {
        self.items as f64 / self.rate()
    }

    fn statements_per_item(&self) -> f64 {
        let statements: u64 = self.runs.iter().map(|run| run.statements).sum();
        statements as f64 / (self.items * self.runs.len()) as f64
    }
}

/// A session of one mode: its `open_session` body and each scan's body by
/// `client_seq`.
struct Mode {
    name: &'static str,
    open: Value,
    scan: fn(&str, u64) -> Value,
    /// Prefix of the EPCs this session's scans name.
    prefix: String,
}

fn put_away(prefix: &str) -> Mode {
    Mode {
        name: "put-away",
        open: json!({"mode": "put_away", "context": {}}),
        scan: |prefix, seq| json!({"mode": "put_away", "epc": format!("{prefix}-{seq}"), "unit_version": 1, "bin": "B-1"}),
        prefix: prefix.to_owned(),
    }
}

/// The modes beside put-away, with the reference data `stock` imports.
fn other_modes(count_id: &str) -> Vec<Mode> {
    vec![
        Mode {
            name: "receive",
            open: json!({"mode": "receive", "context": {"grn": "G-BENCH"}}),
            scan: |prefix, seq| json!({"mode": "receive", "epc": format!("{prefix}-{seq}"), "sku": "SKU-1"}),
            prefix: "RC".to_owned(),
        },
        Mode {
            name: "receive + encode",
            open: json!({"mode": "receive", "context": {"grn": "G-BENCH"}}),
            scan: |prefix, seq| json!({"mode": "receive", "epc": format!("{prefix}-{seq}"), "sku": "SKU-1", "encode": true}),
            prefix: "EN".to_owned(),
        },
        Mode {
            name: "dispatch verify",
            open: json!({"mode": "dispatch_verify", "context": {"manifest": "M-BENCH"}}),
            scan: |prefix, seq| json!({"mode": "dispatch_verify", "epc": format!("{prefix}-{seq}")}),
            prefix: "DV".to_owned(),
        },
        Mode {
            name: "cycle count",
            open: json!({"mode": "cycle_count", "context": {"count_id": count_id}}),
            scan: |prefix, seq| json!({"mode": "cycle_count", "epc": format!("{prefix}-{seq}"), "bin": "CB-1"}),
            prefix: "CC".to_owned(),
        },
    ]
}

/// Imports what the modes' scans need: bins, the put-away units (new),
/// dispatch units on a packing manifest, counted units in a zone with an
/// open count, and an accepted GRN; returns the count's id.
fn stock(db: &Db, dir: &std::path::Path, put_away_prefixes: &[String]) -> String {
    let scans = 2..=items_per_run() as u64;
    let mut units = String::from("epc,code,sku,state,bin\n");
    for prefix in put_away_prefixes {
        for seq in scans.clone() {
            units += &format!("{prefix}-{seq},,SKU-1,new,\n");
        }
    }
    let mut manifest = String::from("manifest,state,epc\n");
    for seq in scans.clone() {
        units += &format!("DV-{seq},,SKU-1,in_stock,B-1\nCC-{seq},,SKU-1,in_stock,CB-1\n");
        manifest += &format!("M-BENCH,packing,DV-{seq}\n");
    }
    let files = [
        (
            ledger::import::Kind::Bins,
            "bin,zone,location\nB-1,Z-P,L-1\nCB-1,Z-C,L-1\n".to_owned(),
        ),
        (ledger::import::Kind::Units, units),
        (
            ledger::import::Kind::Grns,
            "grn,qc,sku,expected\nG-BENCH,accepted,SKU-1,1000000\n".to_owned(),
        ),
        (ledger::import::Kind::Manifests, manifest),
    ];
    db.call_blocking(|conn| {
        for (kind, text) in files {
            let path = dir.join(format!("{kind:?}.csv"));
            std::fs::write(&path, text).unwrap();
            ledger::import::import(conn, kind, &path, UnixMs(0)).unwrap();
        }
        ledger::modes::cycle_count::open(conn, "L-1", "Z-C", UnixMs(0)).unwrap()
    })
}

fn items(session: &str, mode: &Mode, count: usize) -> Vec<Value> {
    (1..=count as u64)
        .map(|seq| {
            let (command, body) = if seq == 1 {
                let mut open = mode.open.clone();
                open["operator_id"] = json!(format!("op-{session}"));
                ("open_session", open)
            } else {
                ("scan", (mode.scan)(&mode.prefix, seq))
            };
            json!({
                "key": IdempotencyKey::mint().unwrap().to_string(),
                "session_id": session,
                "client_seq": seq,
                "command": command,
                "occurred_at": UnixMs(1_795_947_302_120).to_string(),
                "queued_at": UnixMs(1_795_947_302_123).to_string(),
                "body": body,
            })
        })
        .collect()
}

async fn send_all(
    client: &reqwest::Client,
    url: &str,
    device: &str,
    token: &str,
    batches: &[Vec<Value>],
    expect_replayed: bool,
) -> f64 {
    let started = Instant::now();
    for batch in batches {
        let body = json!({"device_id": device, "sent_at": ledger::wall_clock().to_string(), "items": batch});
        let answer: Value = client
            .post(url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for result in answer["results"].as_array().unwrap() {
            assert_eq!(result["outcome"], "applied", "{result}");
            assert_eq!(result["replayed"], expect_replayed, "{result}");
        }
    }
    started.elapsed().as_secs_f64()
}

/// The close that ends a session sent as `total` items, so the next run
/// can open one for the device.
fn close_item(session: &str, total: usize) -> Value {
    json!({
        "key": IdempotencyKey::mint().unwrap().to_string(),
        "session_id": session,
        "client_seq": total + 1,
        "command": "close_session",
        "occurred_at": UnixMs(1_795_947_302_120).to_string(),
        "queued_at": UnixMs(1_795_947_302_120).to_string(),
        "body": {},
    })
}

/// The site over HTTP, and the one device the runs sync as.
struct Http {
    client: reqwest::Client,
    url: String,
    token: String,
}

impl Http {
    /// One session of `mode`, `total` items sent `per_request` at a time:
    /// the apply run and the replay run; the session is closed after.
    async fn run(&self, mode: &Mode, per_request: usize, total: usize) -> (Run, Run) {
        let session = IdempotencyKey::mint().unwrap().to_string();
        let all = items(&session, mode, total);
        let batches: Vec<Vec<Value>> = all.chunks(per_request).map(<[Value]>::to_vec).collect();
        let send = |replayed| {
            send_all(
                &self.client,
                &self.url,
                "HH-BENCH",
                &self.token,
                &batches,
                replayed,
            )
        };
        let before = STATEMENTS.load(Ordering::Relaxed);
        let seconds = send(false).await;
        let apply = Run {
            seconds,
            statements: STATEMENTS.load(Ordering::Relaxed) - before,
        };
        let before = STATEMENTS.load(Ordering::Relaxed);
        let seconds = send(true).await;
        let replay = Run {
            seconds,
            statements: STATEMENTS.load(Ordering::Relaxed) - before,
        };
        let close = [close_item(&session, total)];
        send_all(
            &self.client,
            &self.url,
            "HH-BENCH",
            &self.token,
            &[close.to_vec()],
            false,
        )
        .await;
        (apply, replay)
    }
}

/// One run of the baseline: [`items_per_run`] claim + hop inserts, `per_commit` to
/// a transaction.
fn baseline(db: &Db, per_commit: usize) -> Run {
    // A session a run, its items in order, as the ledger's are.
    let session = IdempotencyKey::mint().unwrap().to_string();
    db.call_blocking(|conn| {
        let stockhop_site::store::sql::Connection::Sqlite(conn) = conn else {
            unreachable!("the baseline is raw SQLite");
        };
        measured(|| {
            let started = Instant::now();
            for chunk in 0..items_per_run() / per_commit {
                let tx = conn.transaction().unwrap();
                for i in 0..per_commit {
                    let n = (chunk * per_commit + i) as i64;
                    let key = IdempotencyKey::mint().unwrap().to_string();
                    tx.prepare_cached(
                        "INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash,
                                               state, received_at, skew_ms, response)
                         VALUES ('D', ?1, ?3, ?2, 'scan', 'h', 'final', 0, 0, '{}')",
                    )
                    .unwrap()
                    .execute(params![key, n + 1, session])
                    .unwrap();
                    tx.prepare_cached(
                        "INSERT INTO hops (device_id, session_id, key, client_seq, command, kind, facts,
                                           occurred_at, booked_at, recorded_at, device_clock_skew_ms,
                                           source_mode)
                         VALUES ('D', 's', ?1, ?2, 'scan', 'ZONE_CHANGE', '{}', 0, 0, 0, 0, 'live')",
                    )
                    .unwrap()
                    .execute(params![key, n + 1])
                    .unwrap();
                }
                tx.commit().unwrap();
            }
            started.elapsed().as_secs_f64()
        })
    })
}

/// The same 50-item batches through `ledger::sync::run` without HTTP, to
/// tell the ledger's own cost from the transport's.
struct InProcess {
    db: Db,
    device: ledger::devices::Device,
}

impl InProcess {
    fn open(dir: &std::path::Path, prefixes: &[String]) -> InProcess {
        let db = Db::open(dir).unwrap();
        stock(&db, dir, prefixes);
        InProcess::on(db, "HH-RAW")
    }

    /// Syncs as a new device `device_id` of `db`, whose units are stocked.
    fn on(db: Db, device_id: &str) -> InProcess {
        let device = db.call_blocking(|conn| {
            ledger::devices::add(conn, device_id, Profile::Mc3390xr, true, UnixMs(0)).unwrap();
            conn.query_row(
                "SELECT device_id, profile, commissioned FROM devices WHERE device_id = ?1",
                [device_id],
                ledger::devices::Device::from_row,
            )
            .unwrap()
        });
        InProcess { db, device }
    }

    fn batches(values: &[Value]) -> Vec<Vec<ledger::sync::Incoming>> {
        values
            .chunks(50)
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|item| ledger::sync::Incoming::from_value(item).unwrap())
                    .collect()
            })
            .collect()
    }

    fn run(&self, prefix: &str) -> Run {
        let session = IdempotencyKey::mint().unwrap().to_string();
        let batches = InProcess::batches(&items(&session, &put_away(prefix), items_per_run()));
        let close = InProcess::batches(&[close_item(&session, items_per_run())]);
        self.db.call_blocking(|conn| {
            let mut apply = |batches: &[Vec<ledger::sync::Incoming>]| {
                for batch in batches {
                    let held = vec![false; batch.len()];
                    let now = ledger::wall_clock();
                    for result in
                        ledger::sync::run(conn, &self.device, now, batch, &held, now).unwrap()
                    {
                        assert_eq!(
                            result.outcome,
                            Some(stockhop::wire::ItemOutcome::Applied),
                            "{result:?}"
                        );
                    }
                }
            };
            let run = measured(|| {
                let started = Instant::now();
                apply(&batches);
                started.elapsed().as_secs_f64()
            });
            apply(&close);
            run
        })
    }
}

fn main() {
    support::announce("ledger");
    let round_count = rounds();
    let dir =
        tempfile::tempdir_in(std::env::var_os("STOCKHOP_BENCH_DIR").unwrap_or_else(|| ".".into()))
            .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let round_prefixes = |stem: &str| -> Vec<String> {
        (0..rounds())
            .map(|round| format!("{stem}{round}"))
            .collect()
    };
    let site_prefixes: Vec<String> = std::iter::once("PA1".to_owned())
        .chain(round_prefixes("PA50-"))
        .collect();
    let db = Db::open(&dir.path().join("site")).unwrap();
    let count_id = stock(&db, &dir.path().join("site"), &site_prefixes);
    let token = db
        .call_blocking(|conn| {
            ledger::devices::add(conn, "HH-BENCH", Profile::Mc3390xr, true, UnixMs(0))
        })
        .unwrap();
    let in_process = InProcess::open(&dir.path().join("in-process"), &round_prefixes("IP-"));
    let raw_single = Db::open(&dir.path().join("raw-1")).unwrap();
    let raw_batched = Db::open(&dir.path().join("raw-50")).unwrap();
    for traced in [&db, &in_process.db, &raw_single, &raw_batched] {
        trace(traced);
    }

    let mut single_apply = Row::new("POST /v1/sync, put-away scan, apply", 1, single_requests());
    let mut single_replay = Row::new("POST /v1/sync, put-away scan, replay", 1, single_requests());
    let mut apply = Row::new("POST /v1/sync, put-away scan, apply", 50, items_per_run());
    let mut replay = Row::new("POST /v1/sync, put-away scan, replay", 50, items_per_run());
    let mut direct = Row::new("ledger::sync::run in process, apply", 50, items_per_run());
    let mut single = Row::new("raw rusqlite, one commit per item", 1, items_per_run());
    let mut batched = Row::new("raw rusqlite, one commit per 50 items", 50, items_per_run());
    let mut modes = Vec::new();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let http = Http {
            client: reqwest::Client::new(),
            url: format!("http://{}/v1/sync", listener.local_addr().unwrap()),
            token,
        };
        let state = AppState {
            db: db.clone(),
            www_dir: dir.path().join("www"),
            ledger: LedgerState::default(),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(stockhop_site::serve(listener, state, async {
            let _ = stopped.await;
        }));

        let (applied, replayed) = http.run(&put_away("PA1"), 1, single_requests()).await;
        single_apply.runs.push(applied);
        single_replay.runs.push(replayed);
        for prefix in round_prefixes("PA50-") {
            batched.runs.push(baseline(&raw_batched, 50));
            let (applied, replayed) = http.run(&put_away(&prefix), 50, items_per_run()).await;
            apply.runs.push(applied);
            replay.runs.push(replayed);
        }
        for (round, prefix) in round_prefixes("IP-").iter().enumerate() {
            if round > 0 {
                batched.runs.push(baseline(&raw_batched, 50));
            }
            direct.runs.push(in_process.run(prefix));
        }
        for mode in other_modes(&count_id) {
            let mut row = Row::new(mode.name, 50, items_per_run());
            row.runs.push(http.run(&mode, 50, items_per_run()).await.0);
            modes.push(row);
        }
        stop.send(()).unwrap();
        server.await.unwrap().unwrap();
    });
    single.runs.push(baseline(&raw_single, 1));

    println!(
        "synchronous=FULL, WAL, data in {}; 50-a-request rows: median of {round_count} runs, interleaved with the 50-a-commit baseline",
        dir.path().display()
    );
    println!(
        "| {:<40} | {:>13} | {:>6} | {:>8} | {:>9} | {:>13} | {:>15} | {:>18} |",
        "path",
        "items/request",
        "items",
        "seconds",
        "items/s",
        "items/s range",
        "statements/item",
        "vs raw, same batch"
    );
    println!(
        "|{:-<42}|{:->15}|{:->8}|{:->10}|{:->11}|{:->15}|{:->17}|{:->20}|",
        "", "", "", "", "", "", "", ""
    );
    let base_rate = |per: usize| {
        if per == 1 {
            single.rate()
        } else {
            batched.rate()
        }
    };
    for row in [
        &single_apply,
        &single_replay,
        &apply,
        &replay,
        &direct,
        &single,
        &batched,
    ] {
        println!(
            "| {:<40} | {:>13} | {:>6} | {:>8.3} | {:>9.0} | {:>13} | {:>15.2} | {:>17.0}% |",
            row.path,
            row.per_request,
            row.items,
            row.seconds(),
            row.rate(),
            row.range(),
            row.statements_per_item(),
            100.0 * row.rate() / base_rate(row.per_request)
        );
    }
    println!();
    println!(
        "| {:<40} | {:>13} | {:>6} | {:>8} | {:>9} | {:>15} | {:>11} | {:>11} |",
        "POST /v1/sync, apply: scan mode",
        "items/request",
        "items",
        "seconds",
        "items/s",
        "statements/item",
        "vs raw, 50",
        "vs put-away"
    );
    println!(
        "|{:-<42}|{:->15}|{:->8}|{:->10}|{:->11}|{:->17}|{:->13}|{:->13}|",
        "", "", "", "", "", "", "", ""
    );
    println!(
        "| {:<40} | {:>13} | {:>6} | {:>8.3} | {:>9.0} | {:>15.2} | {:>10.0}% | {:>10.0}% |",
        "put-away (above)",
        50,
        items_per_run(),
        apply.seconds(),
        apply.rate(),
        apply.statements_per_item(),
        100.0 * apply.rate() / batched.rate(),
        100.0
    );
    for row in &modes {
        println!(
            "| {:<40} | {:>13} | {:>6} | {:>8.3} | {:>9.0} | {:>15.2} | {:>10.0}% | {:>10.0}% |",
            row.path,
            row.per_request,
            row.items,
            row.seconds(),
            row.rate(),
            row.statements_per_item(),
            100.0 * row.rate() / batched.rate(),
            100.0 * row.rate() / apply.rate()
        );
    }
    for (per, apply, replay) in [(1, &single_apply, &single_replay), (50, &apply, &replay)] {
        println!(
            "replay / apply at {per} item(s) a request: {:.2}x",
            replay.rate() / apply.rate()
        );
    }
    if let Ok(admin) = std::env::var(POSTGRES_VAR) {
        let sqlite = SqliteRates {
            apply: apply.rate(),
            replay: replay.rate(),
            direct: direct.rate(),
        };
        pg::bench(&runtime, &admin, dir.path(), &sqlite);
    }
}

/// The SQLite ledger's median rates, for the PostgreSQL table.
struct SqliteRates {
    apply: f64,
    replay: f64,
    direct: f64,
}

/// The ledger on PostgreSQL beside a raw tokio-postgres baseline.
mod pg {
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;

    use stockhop::key::IdempotencyKey;
    use stockhop::time::UnixMs;
    use stockhop_site::ledger::{self, devices::Profile, LedgerState};
    use stockhop_site::store::db::{Database, Db};
    use stockhop_site::AppState;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::{items_per_run, put_away, rounds, stock, Http, InProcess, Row, Run, SqliteRates};

    /// Random bytes in a bench database's name (`stockhop_bench_` and hex).
    const DATABASE_NAME_RANDOM_BYTES: usize = 8;
    /// The frontend message codes that open a session rather than carry a
    /// statement: SSLRequest and GSSENCRequest, answered before the real
    /// startup message comes.
    const ENCRYPTION_REQUESTS: [i32; 2] = [80_877_103, 80_877_104];

    /// Round trips and statements (`Execute` and simple `Query` messages)
    /// that went through the counting proxy. A round trip is a flight of
    /// requests (each ends in `Sync` or is a `Query`) sent while none was
    /// waiting for its `ReadyForQuery`: pipelined requests ride in one.
    static ROUND_TRIPS: AtomicU64 = AtomicU64::new(0);
    static STATEMENTS: AtomicU64 = AtomicU64::new(0);

    /// A database of its own on the cluster, dropped when the bench is done.
    struct Fresh {
        admin: String,
        name: String,
        url: url::Url,
    }

    impl Fresh {
        async fn create(admin: &str, stem: &str) -> Fresh {
            let mut random = [0u8; DATABASE_NAME_RANDOM_BYTES];
            getrandom::fill(&mut random).unwrap();
            let name = format!("stockhop_bench_{stem}_{}", hex::encode(random));
            admin_batch(admin, &format!("CREATE DATABASE {name}")).await;
            let mut url = url::Url::parse(admin).unwrap();
            url.set_path(&name);
            Fresh {
                admin: admin.to_owned(),
                name,
                url,
            }
        }

        /// Its URL, reached through the counting proxy at `proxy`.
        fn via(&self, proxy: SocketAddr) -> String {
            let mut url = self.url.clone();
            url.set_port(Some(proxy.port())).unwrap();
            url.into()
        }

        async fn drop_now(self) {
            admin_batch(
                &self.admin,
                &format!("DROP DATABASE {} WITH (FORCE)", self.name),
            )
            .await;
        }
    }

    async fn admin_batch(admin: &str, sql: &str) {
        let (client, connection) = tokio_postgres::connect(admin, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|err| panic!("connecting to {admin} ({}): {err}", super::POSTGRES_VAR));
        let driver = tokio::spawn(connection);
        client.batch_execute(sql).await.unwrap();
        drop(client);
        let _ = driver.await;
    }

    /// A loopback proxy in front of the cluster that counts what the
    /// client sends: each `Sync` or simple `Query` is one round trip.
    async fn counting_proxy(upstream: SocketAddr) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(upstream).await else {
                    continue;
                };
                tokio::spawn(relay(client, server));
            }
        });
        addr
    }

    async fn relay(client: tokio::net::TcpStream, server: tokio::net::TcpStream) {
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let (from_client, mut to_client) = client.into_split();
        let (from_server, mut to_server) = server.into_split();
        // Requests sent and not yet answered with `ReadyForQuery`: the
        // startup message first.
        let waiting = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(1));
        let answered = std::sync::Arc::clone(&waiting);
        tokio::spawn(async move {
            let mut from_server = tokio::io::BufReader::new(from_server);
            let mut message = Vec::new();
            let mut first = true;
            loop {
                let Ok(tag) = from_server.read_u8().await else {
                    return;
                };
                // The one-byte answer to an SSLRequest comes before any
                // message.
                if first && (tag == b'N' || tag == b'S') {
                    first = false;
                    if to_client.write_u8(tag).await.is_err() {
                        return;
                    }
                    continue;
                }
                first = false;
                let Ok(len) = from_server.read_i32().await else {
                    return;
                };
                message.resize(len as usize - 4, 0);
                if from_server.read_exact(&mut message).await.is_err() {
                    return;
                }
                if tag == b'Z' {
                    answered.fetch_sub(1, Ordering::SeqCst);
                }
                let mut head = [0u8; 5];
                head[0] = tag;
                head[1..].copy_from_slice(&len.to_be_bytes());
                if to_client.write_all(&head).await.is_err()
                    || to_client.write_all(&message).await.is_err()
                {
                    return;
                }
            }
        });
        let mut from_client = tokio::io::BufReader::new(from_client);
        let mut message = Vec::new();
        // Untyped startup messages first, then typed ones.
        loop {
            let Ok(len) = from_client.read_i32().await else {
                return;
            };
            message.resize(len as usize - 4, 0);
            if from_client.read_exact(&mut message).await.is_err()
                || to_server.write_i32(len).await.is_err()
                || to_server.write_all(&message).await.is_err()
            {
                return;
            }
            let code = i32::from_be_bytes(message[..4].try_into().unwrap());
            if !ENCRYPTION_REQUESTS.contains(&code) {
                break;
            }
        }
        loop {
            let Ok(tag) = from_client.read_u8().await else {
                return;
            };
            let Ok(len) = from_client.read_i32().await else {
                return;
            };
            message.resize(len as usize - 4, 0);
            if from_client.read_exact(&mut message).await.is_err() {
                return;
            }
            if tag == b'Q' || tag == b'E' {
                STATEMENTS.fetch_add(1, Ordering::Relaxed);
            }
            if (tag == b'Q' || tag == b'S') && waiting.fetch_add(1, Ordering::SeqCst) == 0 {
                ROUND_TRIPS.fetch_add(1, Ordering::Relaxed);
            }
            let mut head = [0u8; 5];
            head[0] = tag;
            head[1..].copy_from_slice(&len.to_be_bytes());
            if to_server.write_all(&head).await.is_err()
                || to_server.write_all(&message).await.is_err()
            {
                return;
            }
        }
    }

    /// Statements and round trips per item of one counted run.
    struct Counted {
        statements: f64,
        round_trips: f64,
    }

    fn counted(items: usize, work: impl FnOnce()) -> Counted {
        let (statements, round_trips) = (
            STATEMENTS.load(Ordering::Relaxed),
            ROUND_TRIPS.load(Ordering::Relaxed),
        );
        work();
        Counted {
            statements: (STATEMENTS.load(Ordering::Relaxed) - statements) as f64 / items as f64,
            round_trips: (ROUND_TRIPS.load(Ordering::Relaxed) - round_trips) as f64 / items as f64,
        }
    }

    /// One run of the raw baseline: [`items_per_run`] claim + hop inserts, the same
    /// statements as SQLite's baseline, `per_commit` to a SERIALIZABLE
    /// transaction, on one connection of the bench's runtime.
    async fn baseline(url: &str, per_commit: usize) -> f64 {
        let (mut client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let driver = tokio::spawn(connection);
        let claim = client
            .prepare(
                "INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash,
                                       state, received_at, skew_ms, response)
                 VALUES ('D', $1, $3, $2, 'scan', 'h', 'final', 0, 0, '{}')",
            )
            .await
            .unwrap();
        let hop = client
            .prepare(
                "INSERT INTO hops (device_id, session_id, key, client_seq, command, kind, facts,
                                   occurred_at, booked_at, recorded_at, device_clock_skew_ms,
                                   source_mode)
                 VALUES ('D', 's', $1, $2, 'scan', 'ZONE_CHANGE', '{}', 0, 0, 0, 0, 'live')",
            )
            .await
            .unwrap();
        // A session a run, its items in order, as the ledger's are.
        let session = IdempotencyKey::mint().unwrap().to_string();
        let started = Instant::now();
        for chunk in 0..items_per_run() / per_commit {
            let tx = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::Serializable)
                .start()
                .await
                .unwrap();
            for i in 0..per_commit {
                let seq = (chunk * per_commit + i) as i64 + 1;
                let key = IdempotencyKey::mint().unwrap().to_string();
                tx.execute(&claim, &[&key, &seq, &session]).await.unwrap();
                tx.execute(&hop, &[&key, &seq]).await.unwrap();
            }
            tx.commit().await.unwrap();
        }
        let seconds = started.elapsed().as_secs_f64();
        drop(client);
        let _ = driver.await;
        seconds
    }

    pub(super) fn bench(
        runtime: &tokio::runtime::Runtime,
        admin: &str,
        dir: &std::path::Path,
        sqlite: &SqliteRates,
    ) {
        let (site, raw) = runtime.block_on(async {
            (
                Fresh::create(admin, "site").await,
                Fresh::create(admin, "raw").await,
            )
        });
        let upstream = {
            let url = url::Url::parse(admin).unwrap();
            let host = url.host_str().unwrap_or("127.0.0.1").to_owned();
            let port = url.port().unwrap_or(5432);
            std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
                .unwrap()
                .next()
                .unwrap()
        };
        let proxy = runtime.block_on(counting_proxy(upstream));

        let http_prefixes: Vec<String> = (0..rounds()).map(|r| format!("PG50-{r}")).collect();
        let direct_prefixes: Vec<String> = (0..rounds()).map(|r| format!("PGIP-{r}")).collect();
        let counted_prefix = "PGCOUNT".to_owned();
        let warm_prefix = "PGWARM".to_owned();
        let db = Db::connect(
            &Database::Postgres(site.url.to_string()),
            &dir.join("pg-site"),
        )
        .unwrap();
        let everything: Vec<String> = http_prefixes
            .iter()
            .chain(&direct_prefixes)
            .chain([&counted_prefix, &warm_prefix])
            .cloned()
            .collect();
        stock(&db, &dir.join("pg-site"), &everything);
        let token = db
            .call_blocking(|conn| {
                ledger::devices::add(conn, "HH-BENCH", Profile::Mc3390xr, true, UnixMs(0))
            })
            .unwrap();
        let in_process = InProcess::on(db.clone(), "HH-RAW");
        // A ledger in use, as a site's is: receipts and hops already held,
        // and the planner's statistics taken over them (autovacuum does so
        // within a minute of a table's growth). On an empty database that
        // has never been analysed, a statement prepared early keeps a plan
        // made for empty tables.
        in_process.run(&warm_prefix);
        runtime.block_on(admin_batch(site.url.as_str(), "ANALYZE"));
        // The schema for the raw baseline, as the ledger's own.
        drop(
            Db::connect(
                &Database::Postgres(raw.url.to_string()),
                &dir.join("pg-raw"),
            )
            .unwrap(),
        );

        let mut apply = Row::new("POST /v1/sync, put-away scan, apply", 50, items_per_run());
        let mut replay = Row::new("POST /v1/sync, put-away scan, replay", 50, items_per_run());
        let mut direct = Row::new("ledger::sync::run in process, apply", 50, items_per_run());
        let mut batched = Row::new("raw tokio-postgres, one commit per 50", 50, items_per_run());
        let seconds = |seconds| Run {
            seconds,
            statements: 0,
        };
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let http = Http {
                client: reqwest::Client::new(),
                url: format!("http://{}/v1/sync", listener.local_addr().unwrap()),
                token,
            };
            let state = AppState {
                db: db.clone(),
                www_dir: dir.join("www"),
                ledger: LedgerState::default(),
            };
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let server = tokio::spawn(stockhop_site::serve(listener, state, async {
                let _ = stopped.await;
            }));
            for prefix in &http_prefixes {
                batched
                    .runs
                    .push(seconds(baseline(raw.url.as_str(), 50).await));
                let (applied, replayed) = http.run(&put_away(prefix), 50, items_per_run()).await;
                apply.runs.push(applied);
                replay.runs.push(replayed);
            }
            stop.send(()).unwrap();
            server.await.unwrap().unwrap();
        });
        for (round, prefix) in direct_prefixes.iter().enumerate() {
            if round > 0 {
                batched
                    .runs
                    .push(seconds(runtime.block_on(baseline(raw.url.as_str(), 50))));
            }
            direct.runs.push(in_process.run(prefix));
        }

        // Counted apart from the timed runs: the proxy costs time of its own.
        let counted_db =
            Db::connect(&Database::Postgres(site.via(proxy)), &dir.join("pg-site")).unwrap();
        let counted_ledger = InProcess::on(counted_db, "HH-COUNT");
        let ledger_counts = counted(items_per_run(), || {
            counted_ledger.run(&counted_prefix);
        });
        let raw_counts = counted(items_per_run(), || {
            runtime.block_on(baseline(&raw.via(proxy), 50));
        });
        drop(counted_ledger);
        drop(in_process);
        drop(db);
        let round_trips = round_trip_rows(runtime, site.url.as_str());
        runtime.block_on(async {
            site.drop_now().await;
            raw.drop_now().await;
        });

        let (item_count, round_count) = (items_per_run(), rounds());
        println!();
        println!(
            "PostgreSQL at {}, a fresh database per run, the ledger's warmed with {item_count} items and analysed; \
             median of {round_count} runs, interleaved with the raw baseline; \
             statements and round trips counted in a separate run through a loopback proxy",
            super::POSTGRES_VAR
        );
        println!(
            "| {:<40} | {:>13} | {:>6} | {:>8} | {:>9} | {:>13} | {:>15} | {:>16} | {:>15} | {:>12} |",
            "path",
            "items/request",
            "items",
            "seconds",
            "items/s",
            "items/s range",
            "statements/item",
            "round trips/item",
            "vs raw PG, 50",
            "vs SQLite"
        );
        println!(
            "|{:-<42}|{:->15}|{:->8}|{:->10}|{:->11}|{:->15}|{:->17}|{:->18}|{:->17}|{:->14}|",
            "", "", "", "", "", "", "", "", "", ""
        );
        let none = || "-".to_owned();
        for (row, counts, sqlite) in [
            (&apply, None, Some(sqlite.apply)),
            (&replay, None, Some(sqlite.replay)),
            (&direct, Some(&ledger_counts), Some(sqlite.direct)),
            (&batched, Some(&raw_counts), None),
        ] {
            println!(
                "| {:<40} | {:>13} | {:>6} | {:>8.3} | {:>9.0} | {:>13} | {:>15} | {:>16} | {:>14.0}% | {:>12} |",
                row.path,
                row.per_request,
                row.items,
                row.seconds(),
                row.rate(),
                row.range(),
                counts.map_or_else(none, |c| format!("{:.2}", c.statements)),
                counts.map_or_else(none, |c| format!("{:.2}", c.round_trips)),
                100.0 * row.rate() / batched.rate(),
                sqlite.map_or_else(none, |rate| format!("{:.0}%", 100.0 * row.rate() / rate)),
            );
        }

        println!();
        println!(
            "One round trip (a prepared SELECT of its parameter), {} in a row; \
             median of {round_count} runs, interleaved",
            round_trips_timed()
        );
        println!(
            "| {:<40} | {:>13} | {:>13} | {:>10} |",
            "connection", "µs/round trip", "range", "vs raw"
        );
        println!("|{:-<42}|{:->15}|{:->15}|{:->12}|", "", "", "", "");
        let (ours, raw) = round_trips;
        for (name, micros) in [
            ("the ledger's, driven on its caller", &ours),
            ("raw tokio-postgres, task on the runtime", &raw),
        ] {
            println!(
                "| {:<40} | {:>13.1} | {:>13} | {:>9.0}% |",
                name,
                median(micros),
                format!(
                    "{:.1}-{:.1}",
                    micros.iter().copied().fold(f64::INFINITY, f64::min),
                    micros.iter().copied().fold(0.0, f64::max)
                ),
                100.0 * median(micros) / median(&raw),
            );
        }
    }

    /// Round trips timed in a row for the latency table (500 in the quick
    /// mode).
    fn round_trips_timed() -> usize {
        super::support::scaled(5_000, 500)
    }

    fn median(values: &[f64]) -> f64 {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted[sorted.len() / 2]
    }

    /// µs per round trip on the ledger's own connection and on a raw
    /// tokio-postgres one (its connection a task on the bench's runtime),
    /// [`rounds`] runs each, interleaved.
    fn round_trip_rows(runtime: &tokio::runtime::Runtime, url: &str) -> (Vec<f64>, Vec<f64>) {
        let pool = stockhop_site::store::sql::PgPool::connect(url).unwrap();
        let mut ours = Vec::new();
        let mut raw = Vec::new();
        for _ in 0..rounds() {
            let conn = pool.connection();
            let started = Instant::now();
            for i in 0..round_trips_timed() as i64 {
                let back: i64 = conn
                    .query_row("SELECT CAST(?1 AS BIGINT)", [i], |row| row.get(0))
                    .unwrap();
                assert_eq!(back, i);
            }
            ours.push(started.elapsed().as_secs_f64() * 1e6 / round_trips_timed() as f64);
            drop(conn);
            raw.push(runtime.block_on(async {
                let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                let driver = tokio::spawn(connection);
                let select = client.prepare("SELECT CAST($1 AS BIGINT)").await.unwrap();
                let started = Instant::now();
                for i in 0..round_trips_timed() as i64 {
                    let back: i64 = client.query_one(&select, &[&i]).await.unwrap().get(0);
                    assert_eq!(back, i);
                }
                let micros = started.elapsed().as_secs_f64() * 1e6 / round_trips_timed() as f64;
                drop(client);
                let _ = driver.await;
                micros
            }));
        }
        (ours, raw)
    }
}
