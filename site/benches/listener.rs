//! ATTLOG uploads from 20 concurrent terminals over loopback, and a fixed
//! RFID reader (fxr90, 700 reads/s) posting a second of distinct tags per
//! report: frames/s and ack latency percentiles, beside the fsync-bound raw
//! insert rate of the same disk measured in the same run. Prints a table;
//! asserts nothing.
//!
//! `cargo bench -p stockhop-site --bench listener --profile site`

use std::time::{Duration, Instant};

use stockhop::time::UnixMs;
use stockhop_site::listener::config::Allowlist;
use stockhop_site::listener::{self, unix_now, ListenerConfig};
use stockhop_site::store::db::{open_connection, Db};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Concurrent terminals, as the issue asks.
const TERMINALS: usize = 20;
mod support;

/// Uploads each terminal makes, one record each (Realtime=1 pushes one at
/// a time); 10 in the quick mode.
fn uploads_per_terminal() -> usize {
    support::scaled(100, 10)
}
/// Records in each upload of the batched run (a terminal catching up).
const RECORDS_PER_BATCHED_UPLOAD: usize = 9;
/// The fixed gate's profile reads 700 tags a second; its IoT Connector
/// batches a second of reads into one report.
const READS_PER_REPORT: usize = 700;
/// Reports the reader sends, back to back (3 in the quick mode).
fn reader_reports() -> usize {
    support::scaled(20, 3)
}
/// How long the raw insert loop runs (0.3 s in the quick mode).
fn raw_insert_run() -> Duration {
    support::scaled(Duration::from_secs(2), Duration::from_millis(300))
}

fn main() {
    support::announce("listener");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The disk's fsync rate drifts with whatever else the machine does:
    // measured before and after the listener runs, to bracket them.
    let raw_before = raw_insert_rate(&dir.path().join("raw-before.sqlite"));
    let single = runtime.block_on(run(&dir.path().join("single"), 1));
    let batched = runtime.block_on(run(&dir.path().join("batched"), RECORDS_PER_BATCHED_UPLOAD));
    let (reader, accepted) = runtime.block_on(run_reader(&dir.path().join("reader")));
    let raw_after = raw_insert_rate(&dir.path().join("raw-after.sqlite"));
    println!();
    println!(
        "terminal listener over loopback, SQLite WAL synchronous=FULL: ATTLOG from {TERMINALS} concurrent terminals, Zebra from one reader"
    );
    println!(
        "| {:<34} | {:>10} | {:>10} | {:>9} | {:>9} | {:>9} |",
        "run", "frames/s", "records/s", "p50 ms", "p99 ms", "max ms"
    );
    println!(
        "|{:-<36}|{:->12}|{:->12}|{:->11}|{:->11}|{:->11}|",
        "", "", "", "", "", ""
    );
    for (name, r) in [
        ("ATTLOG, 1 record per upload", &single),
        ("ATTLOG, 9 records per upload", &batched),
        ("Zebra fxr90, 700 tags per report", &reader),
    ] {
        println!(
            "| {:<34} | {:>10.0} | {:>10.0} | {:>9.2} | {:>9.2} | {:>9.2} |",
            name, r.frames_per_sec, r.records_per_sec, r.p50_ms, r.p99_ms, r.max_ms
        );
    }
    for (name, rate) in [
        ("raw INSERT, 1 row/commit, before", raw_before),
        ("raw INSERT, 1 row/commit, after", raw_after),
    ] {
        println!(
            "| {:<34} | {:>10.0} | {:>10.0} | {:>9} | {:>9} | {:>9} |",
            name, rate, rate, "-", "-", "-"
        );
    }
    println!();
    println!(
        "reader: {accepted} of {} distinct tags accepted (none rate limited); the profile's target is 700 reads/s, one reader",
        READS_PER_REPORT * reader_reports()
    );
    println!();
}

struct Run {
    frames_per_sec: f64,
    records_per_sec: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

fn bench_config() -> ListenerConfig {
    ListenerConfig {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        tcp_addr: "127.0.0.1:0".parse().unwrap(),
        allow: Allowlist::Any,
        ..ListenerConfig::default()
    }
}

/// One fxr90 reader sending [`reader_reports`] reports of
/// [`READS_PER_REPORT`] distinct tags each, back to back; returns the run
/// and how many reads were accepted.
async fn run_reader(data: &std::path::Path) -> (Run, i64) {
    let db = Db::open(data).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = listener::spawn(bench_config(), db, None, async {
        let _ = stopped.await;
    })
    .await
    .unwrap();
    let addr = running.http_addr;
    let started = Instant::now();
    let mut latencies = Vec::with_capacity(reader_reports());
    for report in 0..reader_reports() {
        let now = unix_now();
        let events: Vec<String> = (0..READS_PER_REPORT)
            .map(|i| {
                let at = UnixMs(now.0 - 1_000 + (i * 1_000 / READS_PER_REPORT) as i64);
                let timestamp = at.to_string().replace('Z', "+0000");
                format!(
                    r#"{{"data":{{"antenna":{},"eventNum":{},"format":"epc","idHex":"e2801190{report:04x}{i:08x}","peakRssi":-52,"reads":1}},"timestamp":"{timestamp}","type":"INVENTORY"}}"#,
                    i % 4 + 1,
                    report * READS_PER_REPORT + i
                )
            })
            .collect();
        let body = format!("[{}]", events.join(","));
        let request = format!(
            "POST /zebra?SN=fxr90-dock1 HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let sent = Instant::now();
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).await.unwrap();
        latencies.push(sent.elapsed());
        assert!(
            reply.starts_with(b"HTTP/1.1 200 "),
            "{}",
            String::from_utf8_lossy(&reply)
        );
    }
    let elapsed = started.elapsed().as_secs_f64();
    let _ = stop.send(());
    running.join().await;
    let accepted = open_connection(&data.join("stockhop.sqlite"))
        .unwrap()
        .query_row(
            "SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    (summarise(latencies, elapsed, READS_PER_REPORT), accepted)
}

async fn run(data: &std::path::Path, records_per_upload: usize) -> Run {
    let db = Db::open(data).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = listener::spawn(bench_config(), db, None, async {
        let _ = stopped.await;
    })
    .await
    .unwrap();
    let addr = running.http_addr;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for terminal in 0..TERMINALS {
        tasks.push(tokio::spawn(async move {
            let serial = format!("BENCH{terminal:04}");
            let mut latencies = Vec::with_capacity(uploads_per_terminal());
            for upload in 0..uploads_per_terminal() {
                let body: String = (0..records_per_upload)
                    .map(|i| {
                        format!(
                            "{}\t{}\t0\t1\t0\t0\t0\n",
                            upload * records_per_upload + i,
                            local_now()
                        )
                    })
                    .collect();
                let request = format!(
                    "POST /iclock/cdata?SN={serial}&table=ATTLOG&Stamp=9999 HTTP/1.1\r\nHost: bench\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let sent = Instant::now();
                let mut stream = TcpStream::connect(addr).await.unwrap();
                stream.write_all(request.as_bytes()).await.unwrap();
                let mut reply = Vec::new();
                stream.read_to_end(&mut reply).await.unwrap();
                latencies.push(sent.elapsed());
                assert!(
                    reply.ends_with(format!("OK:{records_per_upload}").as_bytes()),
                    "{}",
                    String::from_utf8_lossy(&reply)
                );
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    let elapsed = started.elapsed().as_secs_f64();
    let _ = stop.send(());
    running.join().await;
    summarise(latencies, elapsed, records_per_upload)
}

/// Throughput and latency percentiles of one run.
fn summarise(mut latencies: Vec<Duration>, elapsed: f64, records_per_upload: usize) -> Run {
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at =
        |q: f64| ms(latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)]);
    let frames = latencies.len() as f64;
    Run {
        frames_per_sec: frames / elapsed,
        records_per_sec: frames * records_per_upload as f64 / elapsed,
        p50_ms: at(0.50),
        p99_ms: at(0.99),
        max_ms: ms(*latencies.last().unwrap()),
    }
}

fn local_now() -> String {
    let (y, mo, d, h, mi, s, _) = unix_now().to_civil();
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// Single-row transactions on the same disk with the site's durability
/// settings: the ceiling a one-transaction-per-ack design can reach.
fn raw_insert_rate(path: &std::path::Path) -> f64 {
    let mut conn = open_connection(path).unwrap();
    conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        .unwrap();
    let started = Instant::now();
    let mut rows = 0u64;
    while started.elapsed() < raw_insert_run() {
        let tx = conn.transaction().unwrap();
        tx.execute(
            "INSERT INTO t (body) VALUES (?1)",
            [&b"1452\t2015-07-30 15:16:28\t0\t1\t0\t0\t0"[..]],
        )
        .unwrap();
        tx.commit().unwrap();
        rows += 1;
    }
    rows as f64 / started.elapsed().as_secs_f64()
}
