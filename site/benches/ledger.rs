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

fn items(session: &str, first_seq: u64, count: usize) -> Vec<Value> {
    (0..count as u64)
        .map(|i| {
            let seq = first_seq + i;
            let (command, body) = if seq == 1 {
                (
                    "open_session",
                    json!({"operator_id": format!("op-{session}"), "mode": "put_away", "context": {}}),
                )
            } else {
                (
                    "scan",
                    json!({"mode": "put_away", "epc": format!("EPC-{session}-{seq}"), "unit_version": 0, "bin": "B-1"}),
                )
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
    let batches: Vec<Vec<ledger::sync::Incoming>> = items(&session, 1, ITEMS)
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
    let token = db
        .call_blocking(|conn| {
            ledger::devices::add(conn, "HH-BENCH", Profile::Mc3390xr, true, UnixMs(0))
        })
        .unwrap();
    let mut rows = Vec::new();
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

        for per_request in [1usize, 50] {
            let total = if per_request == 1 {
                SINGLE_REQUESTS
            } else {
                ITEMS
            };
            let session = IdempotencyKey::mint().unwrap().to_string();
            let all = items(&session, 1, total);
            let batches: Vec<Vec<Value>> = all.chunks(per_request).map(<[Value]>::to_vec).collect();
            let seconds = send_all(&client, &url, "HH-BENCH", &token, &batches, false).await;
            rows.push(Row {
                path: "POST /v1/sync, apply",
                per_request,
                items: total,
                seconds,
            });
            let seconds = send_all(&client, &url, "HH-BENCH", &token, &batches, true).await;
            rows.push(Row {
                path: "POST /v1/sync, replay",
                per_request,
                items: total,
                seconds,
            });
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
