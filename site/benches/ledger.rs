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
//! items a request, against reference data imported before the run.

use std::time::Instant;

use rusqlite::params;
use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop_site::db::Db;
use stockhop_site::ledger::{self, devices::Profile, LedgerState};
use stockhop_site::AppState;

/// Items sent through each path: enough for a steady rate, small enough
/// to run in seconds on a disk that fsyncs in milliseconds.
const ITEMS: usize = 2_000;
/// Requests in the one-item run: each costs an fsync, so fewer of them.
const SINGLE_REQUESTS: usize = 300;

struct Row {
    path: &'static str,
    per_request: usize,
    items: usize,
    seconds: f64,
}

impl Row {
    fn rate(&self) -> f64 {
        self.items as f64 / self.seconds
    }
}

/// A session of one mode: its `open_session` body and each scan's body by
/// `client_seq`.
struct Mode {
    name: &'static str,
    open: Value,
    scan: fn(&str, u64) -> Value,
    /// Prefix of the EPCs this session's scans name.
    prefix: &'static str,
}

fn put_away(prefix: &'static str) -> Mode {
    Mode {
        name: "put-away",
        open: json!({"mode": "put_away", "context": {}}),
        scan: |prefix, seq| json!({"mode": "put_away", "epc": format!("{prefix}-{seq}"), "unit_version": 1, "bin": "B-1"}),
        prefix,
    }
}

/// The modes beside put-away, with the reference data `stock` imports.
fn other_modes(count_id: &str) -> Vec<Mode> {
    vec![
        Mode {
            name: "receive",
            open: json!({"mode": "receive", "context": {"grn": "G-BENCH"}}),
            scan: |prefix, seq| json!({"mode": "receive", "epc": format!("{prefix}-{seq}"), "sku": "SKU-1"}),
            prefix: "RC",
        },
        Mode {
            name: "receive + encode",
            open: json!({"mode": "receive", "context": {"grn": "G-BENCH"}}),
            scan: |prefix, seq| json!({"mode": "receive", "epc": format!("{prefix}-{seq}"), "sku": "SKU-1", "encode": true}),
            prefix: "EN",
        },
        Mode {
            name: "dispatch verify",
            open: json!({"mode": "dispatch_verify", "context": {"manifest": "M-BENCH"}}),
            scan: |prefix, seq| json!({"mode": "dispatch_verify", "epc": format!("{prefix}-{seq}")}),
            prefix: "DV",
        },
        Mode {
            name: "cycle count",
            open: json!({"mode": "cycle_count", "context": {"count_id": count_id}}),
            scan: |prefix, seq| json!({"mode": "cycle_count", "epc": format!("{prefix}-{seq}"), "bin": "CB-1"}),
            prefix: "CC",
        },
    ]
}

/// Imports what the modes' scans need: bins, the put-away units (new),
/// dispatch units on a packing manifest, counted units in a zone with an
/// open count, and an accepted GRN; returns the count's id.
fn stock(db: &Db, dir: &std::path::Path, put_away_prefixes: &[&str]) -> String {
    let scans = 2..=ITEMS as u64;
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
                ("scan", (mode.scan)(mode.prefix, seq))
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

fn baseline(dir: &std::path::Path, per_commit: usize) -> Row {
    let db = Db::open(dir).unwrap();
    let seconds = db.call_blocking(|conn| {
        let started = Instant::now();
        for chunk in 0..ITEMS / per_commit {
            let tx = conn.transaction().unwrap();
            for i in 0..per_commit {
                let n = (chunk * per_commit + i) as i64;
                let key = IdempotencyKey::mint().unwrap().to_string();
                tx.prepare_cached(
                    "INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash,
                                           state, received_at, skew_ms, response)
                     VALUES ('D', ?1, 's', ?2, 'scan', 'h', 'final', 0, 0, '{}')",
                )
                .unwrap()
                .execute(params![key, n + 1])
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
    });
    Row {
        path: if per_commit == 1 {
            "raw rusqlite, one commit per item"
        } else {
            "raw rusqlite, one commit per 50 items"
        },
        per_request: per_commit,
        items: ITEMS / per_commit * per_commit,
        seconds,
    }
}

/// The same 50-item batches through `ledger::sync::run` without HTTP, to
/// tell the ledger's own cost from the transport's.
fn in_process(dir: &std::path::Path) -> Row {
    let db = Db::open(dir).unwrap();
    stock(&db, dir, &["IP"]);
    let device = db.call_blocking(|conn| {
        ledger::devices::add(conn, "HH-RAW", Profile::Mc3390xr, true, UnixMs(0)).unwrap();
        conn.query_row(
            "SELECT device_id, profile, commissioned FROM devices",
            [],
            ledger::devices::Device::from_row,
        )
        .unwrap()
    });
    let session = IdempotencyKey::mint().unwrap().to_string();
    let batches: Vec<Vec<ledger::sync::Incoming>> = items(&session, &put_away("IP"), ITEMS)
        .chunks(50)
        .map(|chunk| {
            chunk
                .iter()
                .map(|item| ledger::sync::Incoming::from_value(item).unwrap())
                .collect()
        })
        .collect();
    let seconds = db.call_blocking(|conn| {
        let started = Instant::now();
        for batch in &batches {
            let held = vec![false; batch.len()];
            let now = ledger::wall_clock();
            ledger::sync::run(conn, &device, now, batch, &held, now).unwrap();
        }
        started.elapsed().as_secs_f64()
    });
    Row {
        path: "ledger::sync::run in process, apply",
        per_request: 50,
        items: ITEMS,
        seconds,
    }
}

fn main() {
    let dir =
        tempfile::tempdir_in(std::env::var_os("STOCKHOP_BENCH_DIR").unwrap_or_else(|| ".".into()))
            .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let db = Db::open(&dir.path().join("site")).unwrap();
    let count_id = stock(&db, &dir.path().join("site"), &["PA1", "PA50"]);
    let token = db
        .call_blocking(|conn| {
            ledger::devices::add(conn, "HH-BENCH", Profile::Mc3390xr, true, UnixMs(0))
        })
        .unwrap();
    let mut rows = Vec::new();
    let mut modes = Vec::new();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/sync", listener.local_addr().unwrap());
        let state = AppState {
            db: db.clone(),
            www_dir: dir.path().join("www"),
            ledger: LedgerState::default(),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(stockhop_site::serve(listener, state, async {
            let _ = stopped.await;
        }));
        let client = reqwest::Client::new();

        let runs = [
            (put_away("PA1"), 1usize, SINGLE_REQUESTS),
            (put_away("PA50"), 50, ITEMS),
        ]
        .into_iter()
        .chain(
            other_modes(&count_id)
                .into_iter()
                .map(|mode| (mode, 50, ITEMS)),
        );
        for (mode, per_request, total) in runs {
            let session = IdempotencyKey::mint().unwrap().to_string();
            let all = items(&session, &mode, total);
            let batches: Vec<Vec<Value>> = all.chunks(per_request).map(<[Value]>::to_vec).collect();
            let seconds = send_all(&client, &url, "HH-BENCH", &token, &batches, false).await;
            let replay = send_all(&client, &url, "HH-BENCH", &token, &batches, true).await;
            if mode.name == "put-away" {
                rows.push(Row {
                    path: "POST /v1/sync, put-away scan, apply",
                    per_request,
                    items: total,
                    seconds,
                });
                rows.push(Row {
                    path: "POST /v1/sync, put-away scan, replay",
                    per_request,
                    items: total,
                    seconds: replay,
                });
            } else {
                modes.push(Row {
                    path: mode.name,
                    per_request,
                    items: total,
                    seconds,
                });
            }
            // Close the session so the next run can open one for the operator.
            let close = json!([{
                "key": IdempotencyKey::mint().unwrap().to_string(),
                "session_id": session,
                "client_seq": total + 1,
                "command": "close_session",
                "occurred_at": UnixMs(1_795_947_302_120).to_string(),
                "queued_at": UnixMs(1_795_947_302_120).to_string(),
                "body": {},
            }]);
            send_all(
                &client,
                &url,
                "HH-BENCH",
                &token,
                &[close.as_array().unwrap().clone()],
                false,
            )
            .await;
        }
        stop.send(()).unwrap();
        server.await.unwrap().unwrap();
    });
    rows.push(in_process(&dir.path().join("in-process")));
    let single = baseline(&dir.path().join("raw-1"), 1);
    let batched = baseline(&dir.path().join("raw-50"), 50);

    println!("synchronous=FULL, WAL, data in {}", dir.path().display());
    println!(
        "| {:<40} | {:>13} | {:>6} | {:>8} | {:>9} | {:>17} |",
        "path", "items/request", "items", "seconds", "items/s", "vs raw, same batch"
    );
    println!(
        "|{:-<42}|{:->15}|{:->8}|{:->10}|{:->11}|{:->19}|",
        "", "", "", "", "", ""
    );
    let base_rate = |per: usize| {
        if per == 1 {
            single.rate()
        } else {
            batched.rate()
        }
    };
    for row in rows.iter().chain([&single, &batched]) {
        println!(
            "| {:<40} | {:>13} | {:>6} | {:>8.3} | {:>9.0} | {:>16.0}% |",
            row.path,
            row.per_request,
            row.items,
            row.seconds,
            row.rate(),
            100.0 * row.rate() / base_rate(row.per_request)
        );
    }
    let put_away_50 = rows
        .iter()
        .find(|r| r.per_request == 50 && r.path.ends_with("apply"))
        .unwrap()
        .rate();
    println!();
    println!(
        "| {:<40} | {:>13} | {:>6} | {:>8} | {:>9} | {:>17} |",
        "POST /v1/sync, apply: scan mode",
        "items/request",
        "items",
        "seconds",
        "items/s",
        "vs put-away"
    );
    println!(
        "|{:-<42}|{:->15}|{:->8}|{:->10}|{:->11}|{:->19}|",
        "", "", "", "", "", ""
    );
    println!(
        "| {:<40} | {:>13} | {:>6} | {:>8} | {:>9.0} | {:>16.0}% |",
        "put-away (above)", 50, ITEMS, "", put_away_50, 100.0
    );
    for row in &modes {
        println!(
            "| {:<40} | {:>13} | {:>6} | {:>8.3} | {:>9.0} | {:>16.0}% |",
            row.path,
            row.per_request,
            row.items,
            row.seconds,
            row.rate(),
            100.0 * row.rate() / put_away_50
        );
    }
    for per in [1usize, 50] {
        let apply = rows
            .iter()
            .find(|r| r.per_request == per && r.path.ends_with("apply"))
            .unwrap();
        let replay = rows
            .iter()
            .find(|r| r.per_request == per && r.path.ends_with("replay"))
            .unwrap();
        println!(
            "replay / apply at {per} item(s) a request: {:.2}x",
            replay.rate() / apply.rate()
        );
    }
}
