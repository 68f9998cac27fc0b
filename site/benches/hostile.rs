//! Handheld sync latency while hostile clients push junk: the site as
//! `serve` runs it (handheld API and terminal listener over one SQLite
//! file, forwarding in process), a handheld syncing one scan a request, and
//! beside it in the same run the same handheld while four clients upload
//! 256 KB ATTLOG bodies of junk lines (`x\n` repeated) as fast as the
//! listener answers them, from the first junk byte on (so the raw
//! budget's burst is inside the phase). Target: p99 under junk within 2x of
//! quiet. Prints a table; asserts nothing.
//!
//! A second table times floods from many addresses, each phase beside its
//! own quiet baseline, with every sync and health check on a new
//! connection (a new TCP connection, and over HTTPS a new handshake, as a
//! handheld waking from sleep makes): 400 half-open TLS handshakes (half a
//! ClientHello, then nothing; reopened half a second after the site closes
//! one) from 20
//! loopback addresses, 127.0.0.2 to 127.0.0.21, against the HTTPS port;
//! and 600 request heads from 127.0.0.2, a byte every half second
//! (reopened half a second after the site closes one), against the plain
//! port. Beside the handheld's syncs, `/healthz` is asked every 50 ms.
//! Target: sync and `/healthz` p99 under 1 s in both floods. Linux routes
//! all of 127/8 to loopback, so the floods bind their own sources.
//!
//! The handheld puts away units the site knows into a bin it knows (both
//! imported before the run, as a site's reference data would be), so every
//! scan is applied: a refused scan would measure the refusal, not the work.
//!
//! `cargo bench -p stockhop-site --profile site --bench hostile`
//! (`STOCKHOP_BENCH_QUICK=1`: one-second phases, see `support`)

use std::net::{IpAddr, SocketAddr};
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
    let (quiet, noisy, floods) = runtime.block_on(run(dir.path()));
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
    print_floods(&floods);
}

struct Phase {
    syncs: usize,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    junk_uploads: u64,
    junk_kept: u64,
}

async fn run(dir: &std::path::Path) -> (Phase, Phase, Vec<FloodPhase>) {
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
    let state_db = db.clone();
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
    let mut handheld = Handheld::new(token.clone());
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
    let floods = floods(dir, &state_db, &token, &mut handheld, &stopped).await;
    let _ = stop.send(true);
    server.await.unwrap().unwrap();
    terminals.join().await;
    (quiet, noisy, floods)
}

/// Imports the bin and each phase's new units, as a site's reference data
/// arrives before a shift.
fn stock(db: &Db) {
    let mut units = String::from("epc,code,sku,state,bin\n");
    for prefix in ["QUIET", "NOISY"].into_iter().chain(FLOOD_PREFIXES) {
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

// --- Floods from many addresses ---------------------------------------------

/// Half-open TLS handshakes held at once, and the addresses they come from.
const STALLED_HANDSHAKES: usize = 400;
const STALLING_ADDRESSES: usize = 20;
/// Slow request heads held at once from one address, and their pace.
const SLOW_HEADS: usize = 600;
const SLOW_HEAD_BYTE_EVERY: Duration = Duration::from_millis(500);
/// How long a flooding connection the site closed waits before it opens
/// again: the floods hold their connections, they are not a flood of
/// connection attempts (which the kernel's accept backlog meets first).
const FLOOD_RECONNECT_AFTER: Duration = Duration::from_millis(500);
/// How often `/healthz` is asked beside the handheld's syncs.
const HEALTHZ_EVERY: Duration = Duration::from_millis(50);
/// The handheld's fetch timeout: a sync or check past it failed.
const HANDHELD_TIMEOUT: Duration = Duration::from_secs(10);
/// The units each flood phase puts away, by the phase's prefix.
const FLOOD_PREFIXES: [&str; 4] = ["TLSQUIET", "SHAKES", "HTTPQUIET", "HEADS"];
/// The first bytes of a ClientHello.
const HALF_A_CLIENT_HELLO: &[u8] = &[0x16, 0x03, 0x01, 0x02, 0x00];

struct FloodPhase {
    name: &'static str,
    port: &'static str,
    syncs: Latencies,
    healthz: Latencies,
}

#[derive(Default)]
struct Latencies {
    taken: Vec<Duration>,
    failed: usize,
}

impl Latencies {
    fn record(&mut self, took: Duration, ok: bool) {
        self.taken.push(took);
        if !ok {
            self.failed += 1;
        }
    }

    fn ms_at(&self, q: f64) -> f64 {
        let mut sorted = self.taken.clone();
        sorted.sort();
        let i = ((sorted.len() as f64 * q) as usize).min(sorted.len().saturating_sub(1));
        sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    }
}

fn print_floods(phases: &[FloodPhase]) {
    println!(
        "floods from many addresses: every sync and /healthz on a new connection ({} s each)",
        phase_length().as_secs()
    );
    println!(
        "| {:<52} | {:<5} | {:>6} | {:>11} | {:>11} | {:>11} | {:>12} | {:>12} | {:>12} |",
        "phase",
        "port",
        "syncs",
        "sync p50 ms",
        "sync p99 ms",
        "sync max ms",
        "syncs failed",
        "healthz p99",
        "healthz fail"
    );
    println!(
        "|{:-<54}|{:-<7}|{:->8}|{:->13}|{:->13}|{:->13}|{:->14}|{:->14}|{:->14}|",
        "", "", "", "", "", "", "", "", ""
    );
    for phase in phases {
        println!(
            "| {:<52} | {:<5} | {:>6} | {:>11.2} | {:>11.2} | {:>11.2} | {:>12} | {:>12.2} | {:>12} |",
            phase.name,
            phase.port,
            phase.syncs.taken.len(),
            phase.syncs.ms_at(0.50),
            phase.syncs.ms_at(0.99),
            phase.syncs.ms_at(1.0),
            phase.syncs.failed,
            phase.healthz.ms_at(0.99),
            phase.healthz.failed,
        );
    }
    println!("target: sync and /healthz p99 under 1 s, nothing failed, in both floods");
    println!();
}

/// The flood phases: the handheld on an HTTPS port (quiet, then under
/// stalled handshakes) and on a plain port (quiet, then under slow heads),
/// both serving `db` as `serve` does.
async fn floods(
    dir: &std::path::Path,
    db: &Db,
    token: &str,
    handheld: &mut Handheld,
    stopped: &tokio::sync::watch::Receiver<bool>,
) -> Vec<FloodPhase> {
    use stockhop_site::net::tls::{site_names, CertSource, CertStore};
    let (certs, _) = CertStore::open(CertSource::SiteCa {
        dir: dir.join("tls"),
        names: site_names(None, &[]).unwrap(),
    })
    .unwrap();
    let ca = std::fs::read(certs.ca_cert_path().unwrap()).unwrap();
    let serve = |tls: Option<Arc<rustls::ServerConfig>>, listener: tokio::net::TcpListener| {
        let state = AppState {
            db: db.clone(),
            www_dir: dir.join("www"),
            ledger: LedgerState::default(),
        };
        let mut stopped = stopped.clone();
        tokio::spawn(stockhop_site::net::server::serve_connections(
            listener,
            tls,
            stockhop_site::app(state),
            async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            },
        ))
    };
    let secure = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let secure_addr = secure.local_addr().unwrap();
    let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain_addr = plain.local_addr().unwrap();
    let _servers = [
        serve(Some(certs.server_config()), secure),
        serve(None, plain),
    ];
    // A new connection every request: no idle connection is kept.
    let https = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .resolve("localhost", secure_addr)
        .pool_max_idle_per_host(0)
        .timeout(HANDHELD_TIMEOUT)
        .build()
        .unwrap();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(HANDHELD_TIMEOUT)
        .build()
        .unwrap();
    let https_base = format!("https://localhost:{}", secure_addr.port());
    let http_base = format!("http://{plain_addr}");

    let mut phases = Vec::new();
    // The handheld's address has finished a handshake before the flood,
    // as a handheld in use has.
    phases.push(
        flood_phase(
            "quiet (baseline)",
            "https",
            &https,
            &https_base,
            token,
            handheld,
            "TLSQUIET",
        )
        .await,
    );
    let flood = Flood::start(STALLED_HANDSHAKES, |n| {
        let from = loopback(2 + n % STALLING_ADDRESSES);
        stall_handshake(from, secure_addr)
    });
    phases.push(
        flood_phase(
            "400 half-open TLS handshakes from 20 addresses",
            "https",
            &https,
            &https_base,
            token,
            handheld,
            "SHAKES",
        )
        .await,
    );
    flood.stop().await;
    phases.push(
        flood_phase(
            "quiet (baseline)",
            "http",
            &http,
            &http_base,
            token,
            handheld,
            "HTTPQUIET",
        )
        .await,
    );
    let flood = Flood::start(SLOW_HEADS, |_| slow_head(loopback(2), plain_addr));
    phases.push(
        flood_phase(
            "600 slow request heads from one address",
            "http",
            &http,
            &http_base,
            token,
            handheld,
            "HEADS",
        )
        .await,
    );
    flood.stop().await;
    phases
}

fn loopback(n: usize) -> IpAddr {
    IpAddr::from([127, 0, 0, n as u8])
}

/// Flooding connections, each reopened after the site closes it, until
/// stopped.
struct Flood {
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Flood {
    fn start<F, Fut>(connections: usize, one: F) -> Flood
    where
        F: Fn(usize) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        Flood {
            tasks: (0..connections).map(|n| tokio::spawn(one(n))).collect(),
        }
    }

    async fn stop(self) {
        for task in self.tasks {
            task.abort();
            let _ = task.await;
        }
    }
}

async fn connect_from(from: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    socket.connect(to).await
}

/// Half a ClientHello from `from`, then nothing until the site closes the
/// connection; again, for as long as the flood lasts.
async fn stall_handshake(from: IpAddr, to: SocketAddr) {
    loop {
        if let Ok(mut stream) = connect_from(from, to).await {
            let _ = stream.write_all(HALF_A_CLIENT_HELLO).await;
            let mut byte = [0u8; 1];
            let _ = stream.read(&mut byte).await;
        }
        tokio::time::sleep(FLOOD_RECONNECT_AFTER).await;
    }
}

/// A request head from `from`, a byte every [`SLOW_HEAD_BYTE_EVERY`], until
/// the site closes the connection; again, for as long as the flood lasts.
async fn slow_head(from: IpAddr, to: SocketAddr) {
    let head = b"GET /healthz HTTP/1.1\r\nHost: site\r\nX-Slow: ";
    loop {
        if let Ok(mut stream) = connect_from(from, to).await {
            for byte in head.iter().chain(std::iter::repeat(&b'x')) {
                if stream.write_all(&[*byte]).await.is_err() {
                    break;
                }
                tokio::time::sleep(SLOW_HEAD_BYTE_EVERY).await;
            }
        }
        tokio::time::sleep(FLOOD_RECONNECT_AFTER).await;
    }
}

/// Syncs put-aways of the units named `prefix`-N, one a request on a new
/// connection, until the phase's clock runs out; `/healthz` beside it.
async fn flood_phase(
    name: &'static str,
    port: &'static str,
    client: &reqwest::Client,
    base: &str,
    token: &str,
    handheld: &mut Handheld,
    prefix: &str,
) -> FloodPhase {
    let checking = Arc::new(AtomicBool::new(true));
    let checks = {
        let (client, url, checking) = (
            client.clone(),
            format!("{base}/healthz"),
            Arc::clone(&checking),
        );
        tokio::spawn(async move {
            let mut healthz = Latencies::default();
            while checking.load(Ordering::SeqCst) {
                let sent = Instant::now();
                let ok = match client.get(&url).send().await {
                    Ok(response) => response.status().is_success(),
                    Err(_) => false,
                };
                healthz.record(sent.elapsed(), ok);
                tokio::time::sleep(HEALTHZ_EVERY).await;
            }
            healthz
        })
    };
    let url = format!("{base}/v1/sync");
    let mut syncs = Latencies::default();
    let started = Instant::now();
    // A scan whose sync failed is sent again, as the handheld resends it.
    let mut unsent = None;
    let mut next_unit = 0;
    while started.elapsed() < phase_length() && next_unit < units_per_phase() {
        let scan = unsent.take().unwrap_or_else(|| {
            next_unit += 1;
            handheld.next(
                "scan",
                json!({"mode": "put_away", "epc": format!("{prefix}-{}", next_unit - 1), "unit_version": 1, "bin": BIN}),
            )
        });
        let body = json!({
            "device_id": handheld::DEVICE_ID,
            "sent_at": ledger::wall_clock().to_string(),
            "items": [&scan],
        });
        let sent = Instant::now();
        let ok = match client
            .post(&url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
        {
            Ok(response) => response.status().is_success(),
            Err(_) => false,
        };
        syncs.record(sent.elapsed(), ok);
        if !ok {
            unsent = Some(scan);
        }
    }
    checking.store(false, Ordering::SeqCst);
    let healthz = checks.await.unwrap();
    FloodPhase {
        name,
        port,
        syncs,
        healthz,
    }
}
