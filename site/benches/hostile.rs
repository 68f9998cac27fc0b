//! Handheld sync latency while hostile clients push junk: the site as
//! `serve` runs it (handheld API and terminal listener over one SQLite
//! file, forwarding in process), a handheld syncing one scan a request, and
//! beside it in the same run the same handheld while four clients upload
//! 256 KB ATTLOG bodies of junk lines (`x\n` repeated) as fast as the
//! listener answers them, from the first junk byte on (so the raw
//! budget's burst is inside the phase). Target: p99 under junk within 2x of
//! quiet. Prints a table; asserts nothing.
//!
//! The handheld puts away units the site knows into a bin it knows (both
//! imported before the run, as a site's reference data would be), so every
//! scan is applied: a refused scan would measure the refusal, not the work.
//!
//! `cargo bench -p stockhop-site --profile site --bench hostile`
//! (`STOCKHOP_BENCH_QUICK=1`: one-second phases, see `support`)

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use stockhop::time::UnixMs;
use stockhop_site::ledger::{self, LedgerState};
use stockhop_site::listener::config::Allowlist;
use stockhop_site::listener::{self, LedgerSink, ListenerConfig};
use stockhop_site::site::in_process::InProcessLedger;
use stockhop_site::store::db::Db;
use stockhop_site::AppState;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[path = "support/handheld.rs"]
mod handheld;
mod support;

use handheld::Handheld;

/// How long each phase syncs, one scan a request, back to back: 10 s, or
/// 1 s in the quick mode.
fn phase_length() -> Duration {
    support::scaled(Duration::from_secs(10), Duration::from_secs(1))
}
/// Units imported for each phase to put away: more than a phase syncs at
/// 1 ms a scan, so a phase ends on its clock, not on running out.
fn units_per_phase() -> usize {
    support::scaled(20_000, 2_000)
}
/// The bin every scan puts its unit into.
const BIN: &str = "B-1";
/// Clients pushing junk uploads, as the reproduction had.
const JUNK_CLIENTS: usize = 4;
/// Junk body: 256 KB of `x\n`, the largest body the listener takes.
const JUNK_BYTES: usize = 256 * 1024;

fn main() {
    support::announce("hostile");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (quiet, noisy) = runtime.block_on(run(dir.path()));
    println!();
    println!(
        "handheld POST /v1/sync (1 scan a request) over loopback, SQLite WAL synchronous=FULL"
    );
    println!(
        "| {:<44} | {:>7} | {:>9} | {:>9} | {:>9} | {:>13} | {:>13} |",
        format!("phase ({} s each)", phase_length().as_secs()),
        "syncs",
        "p50 ms",
        "p99 ms",
        "max ms",
        "junk answered",
        "junk kept raw"
    );
    println!(
        "|{:-<46}|{:->9}|{:->11}|{:->11}|{:->11}|{:->15}|{:->15}|",
        "", "", "", "", "", "", ""
    );
    for (name, phase) in [
        ("quiet (baseline)", &quiet),
        ("4 clients pushing 256 KB junk ATTLOG uploads", &noisy),
    ] {
        println!(
            "| {:<44} | {:>7} | {:>9.2} | {:>9.2} | {:>9.2} | {:>13} | {:>13} |",
            name,
            phase.syncs,
            phase.p50_ms,
            phase.p99_ms,
            phase.max_ms,
            phase.junk_uploads,
            phase.junk_kept
        );
    }
    println!(
        "p99 under junk / quiet p99: {:.2}x (target: within 2x)",
        noisy.p99_ms / quiet.p99_ms
    );
    println!();
}

struct Phase {
    syncs: usize,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    junk_uploads: u64,
    junk_kept: u64,
}

async fn run(dir: &std::path::Path) -> (Phase, Phase) {
    let db = Db::open(&dir.join("data")).unwrap();
    let token = handheld::add(&db);
    stock(&db);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let config = ListenerConfig {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        tcp_addr: "127.0.0.1:0".parse().unwrap(),
        allow: Allowlist::Any,
        ..ListenerConfig::default()
    };
    let sink: Arc<dyn LedgerSink> = Arc::new(InProcessLedger::new(db.clone()));
    let mut listener_stopped = stopped.clone();
    let terminals = listener::spawn(config, db.clone(), Some(sink), async move {
        let _ = listener_stopped.wait_for(|stop| *stop).await;
    })
    .await
    .unwrap();
    let api = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/sync", api.local_addr().unwrap());
    let state = AppState {
        db,
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

    let quiet = phase(&client, &url, &mut handheld, "QUIET").await;
    let junking = Arc::new(AtomicBool::new(true));
    let uploads = Arc::new(AtomicU64::new(0));
    let kept = Arc::new(AtomicU64::new(0));
    let mut junkers = Vec::new();
    for n in 0..JUNK_CLIENTS {
        let (junking, uploads, kept) = (
            Arc::clone(&junking),
            Arc::clone(&uploads),
            Arc::clone(&kept),
        );
        let addr = terminals.http_addr;
        junkers.push(tokio::spawn(async move {
            let body = "x\n".repeat(JUNK_BYTES / 2);
            let request = format!(
                "POST /iclock/cdata?SN=JUNK{n}&table=ATTLOG&Stamp=9999 HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            while junking.load(Ordering::SeqCst) {
                let mut stream = TcpStream::connect(addr).await.unwrap();
                stream.write_all(request.as_bytes()).await.unwrap();
                let mut reply = Vec::new();
                let _ = stream.read_to_end(&mut reply).await;
                uploads.fetch_add(1, Ordering::SeqCst);
                if reply.starts_with(b"HTTP/1.1 200") {
                    kept.fetch_add(1, Ordering::SeqCst);
                }
            }
        }));
    }
    let (uploads_before, kept_before) =
        (uploads.load(Ordering::SeqCst), kept.load(Ordering::SeqCst));
    let mut noisy = phase(&client, &url, &mut handheld, "NOISY").await;
    noisy.junk_uploads = uploads.load(Ordering::SeqCst) - uploads_before;
    noisy.junk_kept = kept.load(Ordering::SeqCst) - kept_before;
    junking.store(false, Ordering::SeqCst);
    for junker in junkers {
        junker.await.unwrap();
    }
    let _ = stop.send(true);
    server.await.unwrap().unwrap();
    terminals.join().await;
    (quiet, noisy)
}

/// Imports the bin and each phase's new units, as a site's reference data
/// arrives before a shift.
fn stock(db: &Db) {
    let mut units = String::from("epc,code,sku,state,bin\n");
    for prefix in ["QUIET", "NOISY"] {
        for i in 0..units_per_phase() {
            units += &format!("{prefix}-{i},,SKU-1,new,\n");
        }
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

/// Syncs put-aways of the units named `prefix`-N, one a request, until the
/// phase's clock runs out.
async fn phase(
    client: &reqwest::Client,
    url: &str,
    handheld: &mut Handheld,
    prefix: &str,
) -> Phase {
    let mut latencies = Vec::new();
    let started = Instant::now();
    for i in 0..units_per_phase() {
        if started.elapsed() >= phase_length() {
            break;
        }
        let scan = handheld.next(
            "scan",
            json!({"mode": "put_away", "epc": format!("{prefix}-{i}"), "unit_version": 1, "bin": BIN}),
        );
        let sent = Instant::now();
        handheld.sync(client, url, vec![scan]).await;
        latencies.push(sent.elapsed());
    }
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at =
        |q: f64| ms(latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)]);
    Phase {
        syncs: latencies.len(),
        p50_ms: at(0.50),
        p99_ms: at(0.99),
        max_ms: ms(*latencies.last().unwrap()),
        junk_uploads: 0,
        junk_kept: 0,
    }
}
