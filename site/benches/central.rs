//! Central ingest: 10 simulated sites forward their hops at once, each as
//! a site's forwarder does (one signed batch in flight, the next after the
//! answer), over loopback to a real central (`stockhop-site`'s router on a
//! PostgreSQL database). Prints hops/s and per-batch latency beside a raw
//! tokio-postgres baseline that inserts the same rows into the same table,
//! from 10 connections, one transaction per batch of the same size, in the
//! same run.
//!
//! The central does more per hop than the baseline: HTTP and the HMAC
//! check, JSON parsing, the canonical JSON and its SHA-256, a read of the
//! (site, key) it may already hold, the site row's upsert and update, all
//! in a SERIALIZABLE transaction; the baseline is the floor of the inserts.
//!
//! First, on SQLite and without a cluster, a site's backlog: the time
//! `serve` takes at start to enqueue [`backlog_hops`] hops appended before
//! forwarding was on (one transaction, `outbox::configure`), and a restart
//! with nothing left to enqueue, beside appending the same hops (forwarding
//! off, and on, where the trigger writes each row).
//!
//! Needs a PostgreSQL cluster's admin URL: start one with `cargo xtask
//! postgres` and, in another shell, run
//! `STOCKHOP_TEST_POSTGRES=postgres://postgres@127.0.0.1:PORT/postgres
//! cargo bench -p stockhop-site --profile site --bench central`.
//! Each run gets fresh databases on that cluster (dropped at the end).

use std::sync::Arc;
use std::time::{Duration, Instant};

use stockhop::key::IdempotencyKey;
use stockhop_site::central::forwarder::CentralClient;
use stockhop_site::central::outbox;
use stockhop_site::central::wire::{CentralBatch, CentralHop, SiteHop};
use stockhop_site::ledger::{receipts, wall_clock, LedgerState};
use stockhop_site::net::outbound::Trust;
use stockhop_site::store::db::{Database, Db};
use stockhop_site::store::sql::params;
use stockhop_site::AppState;

const SITES: usize = 10;
mod support;

/// Hops each site forwards in one run (200 in the quick mode).
fn hops_per_site() -> usize {
    support::scaled(2_000, 200)
}
/// The batch sizes measured: the forwarder's cap, and a site that
/// forwards as hops trickle in.
const BATCH_SIZES: [usize; 2] = [100, 10];
const SECRET: &str = "bench-central-secret";
/// A site's history when it first gets a central: months of a busy site
/// (5,000 in the quick mode).
fn backlog_hops() -> usize {
    support::scaled(100_000, 5_000)
}
const ADMIN_VAR: &str = "STOCKHOP_TEST_POSTGRES";

/// One site's hops in outbox order.
fn site_hops(site: usize) -> Vec<CentralHop> {
    let now = wall_clock().0;
    (0..hops_per_site())
        .map(|i| {
            let key = IdempotencyKey::mint().unwrap().to_string();
            let seq = i as i64 + 1;
            CentralHop {
                seq,
                key: key.clone(),
                hop: SiteHop {
                    hop_id: seq,
                    device_id: format!("HH-{site}-{}", i % 20),
                    session_id: Some(format!("session-{site}-{}", i / 100)),
                    key,
                    client_seq: Some((i % 100) as i64 + 2),
                    command: "scan".into(),
                    kind: "ZONE_CHANGE".into(),
                    mode: Some("put_away".into()),
                    unit_id: Some(seq),
                    from_bin: Some(format!("B-{}", i % 40)),
                    to_bin: Some(format!("B-{}", (i + 1) % 40)),
                    unit_version: Some(2),
                    facts: serde_json::json!({"epc": format!("3034F8{site:02}{i:010}"), "bin": format!("B-{}", (i + 1) % 40), "operator_id": "op-1"}),
                    occurred_at: now - 60_000 + i as i64,
                    booked_at: now - 60_000 + i as i64,
                    recorded_at: now - 59_000 + i as i64,
                    device_clock_skew_ms: 12,
                    source_mode: "live".into(),
                    compensates: None,
                },
            }
        })
        .collect()
}

struct Figures {
    /// Batches sent again after a busy answer (503: serialization
    /// conflicts past the central's retries).
    resent: usize,
    hops_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
}

fn figures(hops: usize, elapsed: Duration, mut batch_ms: Vec<f64>, resent: usize) -> Figures {
    batch_ms.sort_by(f64::total_cmp);
    let at = |q: f64| batch_ms[((batch_ms.len() - 1) as f64 * q).round() as usize];
    Figures {
        resent,
        hops_per_s: hops as f64 / elapsed.as_secs_f64(),
        p50_ms: at(0.5),
        p99_ms: at(0.99),
    }
}

/// A new, empty database on the cluster, migrated to the site schema.
async fn fresh_database(admin: &str, name: &str) -> String {
    let (client, connection) = tokio_postgres::connect(admin, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|err| panic!("connecting to {admin} ({ADMIN_VAR}): {err}"));
    tokio::spawn(connection);
    for statement in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        client.batch_execute(&statement).await.unwrap();
    }
    let mut url = url::Url::parse(admin).unwrap();
    url.set_path(name);
    String::from(url)
}

async fn drop_database(admin: &str, name: &str) {
    let (client, connection) = tokio_postgres::connect(admin, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let _ = client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await;
}

/// Every site's batches to a central over loopback, sites at once.
async fn central_run(
    url: &str,
    dir: &std::path::Path,
    sites: &[Vec<CentralHop>],
    batch: usize,
) -> Figures {
    let url = url.to_owned();
    let data = dir.to_owned();
    let db = tokio::task::spawn_blocking(move || Db::connect(&Database::Postgres(url), &data))
        .await
        .unwrap()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state = AppState {
        db: db.clone(),
        www_dir: dir.join("www"),
        ledger: LedgerState::default().with_central_secret(Some(SECRET.into())),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(stockhop_site::serve(listener, state, async {
        let _ = stopped.await;
    }));
    let started = Instant::now();
    let tasks: Vec<_> = sites
        .iter()
        .enumerate()
        .map(|(site, hops)| {
            let client = CentralClient::new(&base, SECRET, &Trust::System).unwrap();
            let hops = hops.clone();
            tokio::spawn(async move {
                let (mut latencies, mut resent) = (Vec::new(), 0);
                for chunk in hops.chunks(batch) {
                    let batch = CentralBatch {
                        site_id: format!("SITE-{site:02}"),
                        epoch: 0,
                        hops: chunk.to_vec(),
                        summary: None,
                    };
                    loop {
                        let sent = Instant::now();
                        match client.deliver(&batch).await {
                            Ok(answer) => {
                                assert!(answer
                                    .results
                                    .iter()
                                    .all(|r| r.status == 200 && !r.replayed));
                                latencies.push(sent.elapsed().as_secs_f64() * 1000.0);
                                break;
                            }
                            // A busy central (503 after serialization
                            // conflicts): sent again, as the forwarder does.
                            Err(err) => {
                                resent += 1;
                                eprintln!("central: {err}; again");
                            }
                        }
                    }
                }
                (latencies, resent)
            })
        })
        .collect();
    let (mut latencies, mut resent) = (Vec::new(), 0);
    for task in tasks {
        let (site, again) = task.await.unwrap();
        latencies.extend(site);
        resent += again;
    }
    let elapsed = started.elapsed();
    let held: i64 = tokio::task::spawn_blocking(move || {
        db.call_blocking(|conn| {
            conn.query_row("SELECT count(*) FROM central_hops", [], |r| r.get(0))
        })
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        held as usize,
        SITES * hops_per_site(),
        "every hop held once"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    figures(SITES * hops_per_site(), elapsed, latencies, resent)
}

/// A `central_hops` row: site, key, seq, the hop's canonical JSON, its
/// SHA-256.
type RawRow = (String, String, i64, String, String);

/// The same rows, raw: one connection a site, one transaction a batch.
async fn baseline_run(url: &str, sites: &[Vec<CentralHop>], batch: usize) -> Figures {
    let now = wall_clock().0;
    // The rows as the central stores them, prepared before the clock runs.
    let rows: Vec<Vec<RawRow>> = sites
        .iter()
        .enumerate()
        .map(|(site, hops)| {
            hops.iter()
                .map(|hop| {
                    let value = serde_json::to_value(&hop.hop).unwrap();
                    let mut canonical = String::new();
                    receipts::write_canonical(&value, &mut canonical);
                    let sha = receipts::canonical_hash(&canonical);
                    (
                        format!("SITE-{site:02}"),
                        hop.key.clone(),
                        hop.seq,
                        canonical,
                        sha,
                    )
                })
                .collect()
        })
        .collect();
    let mut clients = Vec::new();
    for (site, _) in rows.iter().enumerate() {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .execute(
                "INSERT INTO central_sites (site_id, first_seen_at, last_seen_at) VALUES ($1, $2, $2)",
                &[&format!("SITE-{site:02}"), &now],
            )
            .await
            .unwrap();
        clients.push(client);
    }
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .zip(rows)
        .map(|(mut client, rows)| {
            tokio::spawn(async move {
                let insert = client
                    .prepare(
                        "INSERT INTO central_hops (site_id, key, seq, hop, hop_sha256, received_at)
                         VALUES ($1, $2, $3, $4, $5, $6)",
                    )
                    .await
                    .unwrap();
                let mut latencies = Vec::new();
                for chunk in rows.chunks(batch) {
                    let sent = Instant::now();
                    let tx = client.transaction().await.unwrap();
                    for (site, key, seq, hop, sha) in chunk {
                        tx.execute(&insert, &[site, key, seq, hop, sha, &now])
                            .await
                            .unwrap();
                    }
                    tx.commit().await.unwrap();
                    latencies.push(sent.elapsed().as_secs_f64() * 1000.0);
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    figures(SITES * hops_per_site(), started.elapsed(), latencies, 0)
}

/// Appends `hops` hops in one transaction, as the ledger writes them.
fn append_hops(db: &Db, hops: usize) -> Duration {
    db.call_blocking(|conn| {
        let started = Instant::now();
        let tx = conn.transaction().unwrap();
        for i in 0..hops {
            let key = IdempotencyKey::mint().unwrap().to_string();
            tx.prepare_cached(
                "INSERT INTO hops (device_id, session_id, key, client_seq, command, kind, mode,
                                   facts, occurred_at, booked_at, recorded_at,
                                   device_clock_skew_ms, source_mode)
                 VALUES (?1, ?2, ?3, ?4, 'scan', 'ZONE_CHANGE', 'put_away', '{\"epc\":\"E\"}',
                         ?5, ?5, ?5, 0, 'live')",
            )
            .unwrap()
            .execute(params![
                format!("HH-{}", i % 20),
                format!("session-{}", i / 100),
                key,
                (i % 100) as i64 + 2,
                1_795_947_302_120_i64 + i as i64
            ])
            .unwrap();
        }
        tx.commit().unwrap();
        started.elapsed()
    })
}

fn configure(db: &Db, on: bool) -> (Duration, usize) {
    let forwarding = outbox::Forwarding {
        site_id: "SITE".into(),
        central_url: "https://central.example".into(),
    };
    db.call_blocking(|conn| {
        let started = Instant::now();
        let enqueued = outbox::configure(conn, on.then_some(&forwarding), wall_clock()).unwrap();
        (started.elapsed(), enqueued)
    })
}

fn backlog(dir: &std::path::Path) {
    let late = Db::open(&dir.join("backlog-late")).unwrap();
    let off = append_hops(&late, backlog_hops());
    let (enqueue, enqueued) = configure(&late, true);
    assert_eq!(enqueued, backlog_hops());
    let (restart, again) = configure(&late, true);
    assert_eq!(again, 0);
    let early = Db::open(&dir.join("backlog-early")).unwrap();
    configure(&early, true);
    let on = append_hops(&early, backlog_hops());
    println!();
    println!(
        "a site's backlog: {} hops appended before forwarding was on; SQLite",
        backlog_hops()
    );
    println!(
        "| {:<66} | {:>9} | {:>8} | {:>11} |",
        "path", "ms", "µs/hop", "vs baseline"
    );
    println!("|{:-<68}|{:->11}|{:->10}|{:->13}|", "", "", "", "");
    for (path, took) in [
        (
            "serve's start: enqueue the backlog (one transaction)",
            enqueue,
        ),
        ("serve's restart: nothing left to enqueue", restart),
        (
            "hops appended with forwarding on (the trigger writes rows)",
            on,
        ),
        ("baseline: the same hops appended, forwarding off", off),
    ] {
        println!(
            "| {:<66} | {:>9.1} | {:>8.2} | {:>10.2}× |",
            path,
            took.as_secs_f64() * 1e3,
            took.as_secs_f64() * 1e6 / backlog_hops() as f64,
            took.as_secs_f64() / off.as_secs_f64()
        );
    }
}

fn main() {
    support::announce("central");
    let backlog_dir = tempfile::tempdir().unwrap();
    backlog(backlog_dir.path());
    drop(backlog_dir);
    let admin = std::env::var(ADMIN_VAR).unwrap_or_else(|_| {
        panic!(
            "{ADMIN_VAR} must name a PostgreSQL cluster's admin URL: start one with \
             `cargo xtask postgres` and set the variable it prints"
        )
    });
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sites: Arc<Vec<Vec<CentralHop>>> = Arc::new((0..SITES).map(site_hops).collect());
    println!();
    println!(
        "central ingest: {SITES} sites at once, {} hops each, one batch in flight per site; PostgreSQL on loopback",
        hops_per_site()
    );
    println!(
        "| {:<62} | {:>5} | {:>8} | {:>12} | {:>12} | {:>6} | {:>11} |",
        "path", "batch", "hops/s", "batch p50 ms", "batch p99 ms", "resent", "vs baseline"
    );
    println!(
        "|{:-<64}|{:->7}|{:->10}|{:->14}|{:->14}|{:->8}|{:->13}|",
        "", "", "", "", "", "", ""
    );
    for batch in BATCH_SIZES {
        let (central, baseline) = runtime.block_on(async {
            let pid = std::process::id();
            let central_db = format!("stockhop_bench_central_{pid}_{batch}");
            let raw_db = format!("stockhop_bench_raw_{pid}_{batch}");
            let central_url = fresh_database(&admin, &central_db).await;
            let raw_url = fresh_database(&admin, &raw_db).await;
            // The baseline's table is the central's, migrated the same way.
            let migrate_url = raw_url.clone();
            let migrate_dir = dir.path().join(format!("raw-{batch}"));
            tokio::task::spawn_blocking(move || {
                Db::connect(&Database::Postgres(migrate_url), &migrate_dir).unwrap()
            })
            .await
            .unwrap();
            let central = central_run(
                &central_url,
                &dir.path().join(format!("central-{batch}")),
                &sites,
                batch,
            )
            .await;
            let baseline = baseline_run(&raw_url, &sites, batch).await;
            drop_database(&admin, &central_db).await;
            drop_database(&admin, &raw_db).await;
            (central, baseline)
        });
        for (path, f) in [
            (
                "central: signed POST /v1/central/hops → PostgreSQL",
                &central,
            ),
            (
                "baseline: raw tokio-postgres INSERTs, a transaction a batch",
                &baseline,
            ),
        ] {
            println!(
                "| {:<62} | {:>5} | {:>8.0} | {:>12.1} | {:>12.1} | {:>6} | {:>10.2}× |",
                path,
                batch,
                f.hops_per_s,
                f.p50_ms,
                f.p99_ms,
                f.resent,
                f.hops_per_s / baseline.hops_per_s
            );
        }
    }
}
