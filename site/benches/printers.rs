//! Printing to one ZT411R stand-in on loopback (`tests/site/printer_support/`):
//! jobs a second through the site (each accepted over HTTP into the job
//! log, sent by the printer driver, settled on the printer's answer)
//! beside the same formats written straight to the stand-in on one
//! connection (the wire and the stand-in alone); and the time from a
//! printer's return to a job accepted while it was offline being printed,
//! with the shipped 30 s poll and with a 1 s one, beside the poll period
//! that bounds it.
//!
//! Run: `cargo bench -p stockhop-site --profile site --bench printers`.

#[path = "../tests/site/printer_support/mod.rs"]
mod printer_support;
mod support;

use std::time::{Duration, Instant};

use axum::Extension;
use printer_support::StandIn;
use serde_json::json;
use stockhop_site::ledger::{self, LedgerState};
use stockhop_site::printers::driver::{self, Config, Wake};
use stockhop_site::printers::zpl::{self, Label};
use stockhop_site::store::db::Db;
use stockhop_site::AppState;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Jobs in the throughput run (50 in the quick mode).
fn jobs() -> usize {
    support::scaled(500, 50)
}
/// Requests in flight at once in the throughput run.
const CLIENTS: usize = 8;
/// The longest wait for the last job's answer to be settled once the
/// stand-in has its label (one answer read, one commit).
const SETTLE_WAIT: Duration = Duration::from_secs(10);
/// Returns measured per poll period (1 in the quick mode).
fn returns() -> usize {
    support::scaled(3, 1)
}
/// The poll periods the return is measured with: a short one, and the
/// shipped one (left out in the quick mode, where a run takes seconds).
fn polls() -> Vec<Duration> {
    support::scaled(
        vec![Duration::from_secs(1), driver::POLL_INTERVAL],
        vec![Duration::from_secs(1)],
    )
}

struct Bench {
    base: String,
    db: Db,
    admin: String,
    client: reqwest::Client,
    stop: tokio::sync::watch::Sender<bool>,
    _dir: tempfile::TempDir,
}

async fn start(config: Config) -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = Db::open(&data).unwrap();
    let admin = db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "bench", ledger::wall_clock()))
        .unwrap();
    let bins = data.join("bins.csv");
    std::fs::write(&bins, "bin,zone,location\nB-1,Z-1,L-1\n").unwrap();
    db.call_blocking(|conn| {
        ledger::import::import(
            conn,
            ledger::import::Kind::Bins,
            &bins,
            ledger::wall_clock(),
        )
    })
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let signal = move || {
        let mut stopped = stopped.clone();
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        }
    };
    let wake = Wake::default();
    let state = AppState {
        db: db.clone(),
        www_dir: data.join("www"),
        ledger: LedgerState::default(),
    };
    let router = stockhop_site::app(state).layer(Extension(wake.clone()));
    tokio::spawn(stockhop_site::net::server::serve_connections(
        listener,
        None,
        router,
        signal(),
    ));
    tokio::spawn(driver::run(db.clone(), wake, config, signal()));
    Bench {
        base,
        db,
        admin,
        client: reqwest::Client::new(),
        stop,
        _dir: dir,
    }
}

impl Bench {
    async fn add_printer(&self, stand_in: &StandIn) {
        let response = self
            .client
            .post(format!("{}/v1/site/printers", self.base))
            .bearer_auth(&self.admin)
            .json(&json!({"printer_id": "ZT-1", "address": stand_in.address()}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }

    async fn print(&self, job_id: &str) {
        let response = self
            .client
            .post(format!("{}/v1/site/printers/ZT-1/print", self.base))
            .bearer_auth(&self.admin)
            .json(&json!({"label": "bin", "bin": "B-1", "job_id": job_id}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 202);
    }
}

/// Jobs a second through the site.
async fn through_the_site() -> f64 {
    let bench = start(Config::default()).await;
    let stand_in = StandIn::start().await;
    bench.add_printer(&stand_in).await;
    stand_in
        .until("the first poll", |s| s.status_answers() >= 1)
        .await;
    let started = Instant::now();
    let mut clients = tokio::task::JoinSet::new();
    let bench = std::sync::Arc::new(bench);
    for client in 0..CLIENTS {
        let bench = bench.clone();
        clients.spawn(async move {
            for job in (client..jobs()).step_by(CLIENTS) {
                bench.print(&format!("JOB-{job}")).await;
            }
        });
    }
    while clients.join_next().await.is_some() {}
    stand_in
        .until("every job printed", |s| s.printed().len() >= jobs())
        .await;
    let rate = jobs() as f64 / started.elapsed().as_secs_f64();
    // The stand-in has the last label before the driver has read the
    // printer's answer to it and settled the job: wait for that commit.
    let printed = || {
        bench
            .db
            .call_blocking(|conn| {
                conn.query_row(
                    "SELECT count(*) FROM print_jobs WHERE state = 'printed'",
                    [],
                    |row| row.get::<_, i64>(0),
                )
            })
            .unwrap()
    };
    let deadline = Instant::now() + SETTLE_WAIT;
    while printed() < jobs() as i64 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = bench.stop.send(true);
    assert_eq!(printed(), jobs() as i64);
    rate
}

/// Jobs a second written straight to the stand-in, each followed by a
/// host status read as the driver reads it: the floor under the site.
async fn straight_to_the_stand_in() -> f64 {
    let stand_in = StandIn::start().await;
    let mut stream = tokio::net::TcpStream::connect(stand_in.addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let started = Instant::now();
    let mut buf = Vec::new();
    for job in 0..jobs() {
        let format =
            zpl::format(&format!("RAW-{job}"), &Label::Bin { bin: "B-1".into() }, 1).unwrap();
        stream.write_all(format.as_bytes()).await.unwrap();
        stream.write_all(zpl::HOST_STATUS_QUERY).await.unwrap();
        loop {
            if let Some((_, used)) = zpl::parse_host_status(&buf).unwrap() {
                buf.drain(..used);
                break;
            }
            let mut chunk = [0u8; 512];
            let read = stream.read(&mut chunk).await.unwrap();
            assert!(read > 0);
            buf.extend_from_slice(&chunk[..read]);
        }
    }
    let rate = jobs() as f64 / started.elapsed().as_secs_f64();
    assert_eq!(stand_in.printed().len(), jobs());
    rate
}

/// Seconds from the stand-in's return to the offline job printed, once
/// per return, polling every `poll`.
async fn return_to_printed(poll: Duration) -> Vec<f64> {
    let bench = start(Config {
        poll_interval: poll,
        ..Config::default()
    })
    .await;
    let mut stand_in = StandIn::start().await;
    bench.add_printer(&stand_in).await;
    let mut times = Vec::new();
    for round in 0..returns() {
        stand_in
            .until("a poll", |s| s.status_answers() > round)
            .await;
        stand_in.offline();
        // The job is asked for once the site has missed the printer, as a
        // person would find it off the network.
        let deadline = Instant::now() + poll * 3 + Duration::from_secs(15);
        while !bench
            .db
            .call_blocking(|conn| {
                conn.query_row(
                    "SELECT last_error IS NOT NULL FROM printers WHERE printer_id = 'ZT-1'",
                    [],
                    |row| row.get::<_, bool>(0),
                )
            })
            .unwrap()
        {
            assert!(
                Instant::now() < deadline,
                "the site never missed the printer"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let job_id = format!("OFF-{round}");
        bench.print(&job_id).await;
        // Offline for a stretch that is not a whole number of polls, so the
        // return falls anywhere in the poll's cycle.
        tokio::time::sleep(poll.mul_f64(0.37 * (round + 1) as f64)).await;
        stand_in.online();
        let back = Instant::now();
        stand_in
            // A poll under way as the printer went away may wait out its
            // connect and answer deadlines first.
            .until_within(
                "the offline job printed",
                poll * 3 + Duration::from_secs(15),
                |s| s.printed_of(&job_id) == 1,
            )
            .await;
        times.push(back.elapsed().as_secs_f64());
    }
    let _ = bench.stop.send(true);
    times
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    support::announce("printers");
    runtime.block_on(async {
        let site = through_the_site().await;
        let raw = straight_to_the_stand_in().await;
        println!();
        println!(
            "printing {} bin labels to one stand-in ({CLIENTS} clients posting)",
            jobs()
        );
        println!("| {:<58} | {:>10} |", "path", "jobs/s");
        println!("|{:-<60}|{:->12}|", "", "");
        println!(
            "| {:<58} | {:>10.0} |",
            "site: HTTP → job log → driver → printer's answer", site
        );
        println!(
            "| {:<58} | {:>10.0} |",
            "baseline: formats and ~HS straight down one connection", raw
        );

        println!();
        println!(
            "printer back → job accepted while it was offline printed ({} returns each)",
            returns()
        );
        println!(
            "| {:<26} | {:>10} | {:>10} | {:>14} |",
            "poll", "min s", "max s", "bound: poll s"
        );
        println!("|{:-<28}|{:->12}|{:->12}|{:->16}|", "", "", "", "");
        for poll in polls() {
            let times = return_to_printed(poll).await;
            let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = times.iter().cloned().fold(0.0, f64::max);
            println!(
                "| {:<26} | {:>10.2} | {:>10.2} | {:>14.0} |",
                format!("{} s", poll.as_secs()),
                min,
                max,
                poll.as_secs_f64()
            );
        }
    });
}
