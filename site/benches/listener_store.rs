//! What the terminal listener keeps of a portal's reads once they are
//! behind it: RFID portals (Zebra IoT Connector, one report of 700
//! distinct reads a second each) post to the real listener over
//! loopback, which writes them to its queue, forwards them to this site's
//! own ledger in process and is stopped once every read is forwarded;
//! then the instant moves past the stale horizon (the prune pass takes
//! it, so nothing sleeps) and the queue is pruned as the listener's prune
//! pass does.
//!
//! Prints, per distinct read, the bytes of the listener's own tables
//! (`listener_…`, with their indexes), of the database's pages in use and
//! of the site's files on disk, measured from the empty site's: once every
//! read is forwarded (what the store held before it is pruned) and once
//! past the horizon; and each listener table's share. Pages are SQLite's
//! own count (`dbstat`, in the bundled SQLite), the write-ahead log
//! checkpointed first. Asserts nothing.
//!
//! `cargo bench -p stockhop-site --profile site --bench listener_store`
//! (`STOCKHOP_BENCH_QUICK=1`: 2 portals, 2 reports each)

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use stockhop::time::{Millis, UnixMs};
use stockhop_site::listener::config::Allowlist;
use stockhop_site::listener::queue::{self, PRUNE_ROWS_MAX};
use stockhop_site::listener::rules::{RATE_WINDOW_MAX, STALE_AFTER};
use stockhop_site::listener::{self, unix_now, LedgerSink, ListenerConfig};
use stockhop_site::site::in_process::InProcessLedger;
use stockhop_site::store::db::{open_connection, Db, DB_FILE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;

/// Portals posting at once (2 in the quick mode).
fn portals() -> usize {
    support::scaled(10, 2)
}
/// Reports each portal posts, one a second as its IoT Connector batches
/// them (2 in the quick mode).
fn reports_per_portal() -> usize {
    support::scaled(15, 2)
}
/// A portal's reads a second (the FXR90 profile's), each of a tag not
/// read before: every read is a distinct one.
const READS_PER_REPORT: usize = 700;
const REPORT_EVERY: Duration = Duration::from_secs(1);
/// How long the forwarder may take to hand every read to the ledger.
const FORWARD_DEADLINE: Duration = Duration::from_secs(600);
/// How often the bench looks whether every read is forwarded.
const FORWARD_POLL: Duration = Duration::from_millis(200);
/// Past the stale horizon: the listener's rules look back this far from
/// a queue write (the stale limit and the longest rate window), and a
/// second more.
const PAST_THE_HORIZON: Millis = Millis(STALE_AFTER.0 + RATE_WINDOW_MAX.0 + 1_000);

fn main() {
    support::announce("listener_store");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let db = Db::open(data).unwrap();
    let empty = Sizes::of(data);
    let started = Instant::now();
    let reads = runtime.block_on(run(db.clone(), data));
    let load_secs = started.elapsed().as_secs_f64();
    drop(db);
    let forwarded = Sizes::of(data);
    let pruned_at = unix_now().plus(PAST_THE_HORIZON);
    let mut conn = open_connection(&data.join(DB_FILE)).unwrap();
    let mut removed = 0;
    loop {
        let n = queue::prune(&mut conn, pruned_at).unwrap();
        removed += n;
        if n < PRUNE_ROWS_MAX {
            break;
        }
    }
    drop(conn);
    let pruned = Sizes::of(data);

    println!();
    println!(
        "the listener's own store: {reads} distinct portal reads ({} portals × {} reports × {READS_PER_REPORT}) written, forwarded to the ledger in {load_secs:.1} s; {removed} rows pruned {} s past the last",
        portals(),
        reports_per_portal(),
        PAST_THE_HORIZON.0 / 1000
    );
    println!(
        "| {:<44} | {:>16} | {:>16} | {:>16} |",
        "bytes a distinct read", "listener tables", "pages in use", "files on disk"
    );
    println!("|{:-<46}|{:->18}|{:->18}|{:->18}|", "", "", "", "");
    for (name, sizes) in [
        ("forwarded, before the prune", &forwarded),
        ("past the stale horizon, pruned", &pruned),
    ] {
        let per_read = |after: u64, before: u64| after.saturating_sub(before) as f64 / reads as f64;
        println!(
            "| {:<44} | {:>16.0} | {:>16.0} | {:>16.0} |",
            name,
            per_read(sizes.listener(), empty.listener()),
            per_read(sizes.in_use, empty.in_use),
            per_read(sizes.files, empty.files),
        );
    }
    println!();
    println!(
        "| {:<44} | {:>16} | {:>16} |",
        "listener table (with its indexes), B a read", "forwarded", "past the horizon"
    );
    println!("|{:-<46}|{:->18}|{:->18}|", "", "", "");
    let names: std::collections::BTreeSet<&String> = forwarded
        .tables
        .keys()
        .chain(pruned.tables.keys())
        .filter(|name| name.starts_with("listener_"))
        .collect();
    for name in names {
        let grown = |sizes: &Sizes| {
            let before = empty.tables.get(name).copied().unwrap_or(0);
            let after = sizes.tables.get(name).copied().unwrap_or(0);
            after.saturating_sub(before) as f64 / reads as f64
        };
        println!(
            "| {:<44} | {:>16.1} | {:>16.1} |",
            name,
            grown(&forwarded),
            grown(&pruned)
        );
    }
    println!();
    println!("pages in use: the database's pages less its free list, the write-ahead log checkpointed; files on disk: every file in the data directory (freed pages stay in the file and are reused)");
    println!();
}

/// Posts every portal's reports at the portal's pace, waits until the
/// forwarder has handed every read to the ledger, and stops the listener.
/// Returns the reads written.
async fn run(db: Db, data: &Path) -> usize {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let sink: Arc<dyn LedgerSink> = Arc::new(InProcessLedger::new(db.clone()));
    let config = ListenerConfig {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        tcp_addr: "127.0.0.1:0".parse().unwrap(),
        allow: Allowlist::Any,
        ..ListenerConfig::default()
    };
    let running = listener::spawn(config, db.clone(), Some(sink), async {
        let _ = stopped.await;
    })
    .await
    .unwrap();
    let addr = running.http_addr;
    let mut portals_posting = Vec::new();
    for portal in 0..portals() {
        portals_posting.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(REPORT_EVERY);
            for report in 0..reports_per_portal() {
                tick.tick().await;
                post_report(addr, portal, report).await;
            }
        }));
    }
    for posting in portals_posting {
        posting.await.unwrap();
    }
    let reads = portals() * reports_per_portal() * READS_PER_REPORT;
    let deadline = Instant::now() + FORWARD_DEADLINE;
    let path = data.join(DB_FILE);
    loop {
        let mut conn = open_connection(&path).unwrap();
        let counts = queue::counts(&mut conn).unwrap();
        assert_eq!(counts.dead, 0, "the ledger refused reads: {counts:?}");
        if counts.pending == 0 {
            let done = queue::done_count(&mut conn).unwrap();
            assert_eq!(done, reads, "every read written once");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "reads still not forwarded after {FORWARD_DEADLINE:?}: {counts:?}"
        );
        tokio::time::sleep(FORWARD_POLL).await;
    }
    let _ = stop.send(());
    running.join().await;
    reads
}

/// One report of [`READS_PER_REPORT`] tags no portal has read before,
/// captured over the second before it is sent.
async fn post_report(addr: std::net::SocketAddr, portal: usize, report: usize) {
    let now = unix_now();
    let events: Vec<String> = (0..READS_PER_REPORT)
        .map(|i| {
            let at = UnixMs(now.0 - 1_000 + (i * 1_000 / READS_PER_REPORT) as i64);
            let timestamp = at.to_string().replace('Z', "+0000");
            format!(
                r#"{{"data":{{"antenna":{},"eventNum":{},"format":"epc","idHex":"e2801190{portal:04x}{report:04x}{i:08x}","peakRssi":-52,"reads":1}},"timestamp":"{timestamp}","type":"INVENTORY"}}"#,
                i % 4 + 1,
                report * READS_PER_REPORT + i
            )
        })
        .collect();
    let body = format!("[{}]", events.join(","));
    let request = format!(
        "POST /zebra?SN=fxr90-portal{portal} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).await.unwrap();
    assert!(
        reply.starts_with(b"HTTP/1.1 200 "),
        "{}",
        String::from_utf8_lossy(&reply)
    );
}

/// What the site's data directory holds at one moment.
struct Sizes {
    /// Bytes of pages each table holds, its indexes counted with it.
    tables: BTreeMap<String, u64>,
    /// Bytes of the database's pages not on its free list.
    in_use: u64,
    /// Bytes of every file in the data directory.
    files: u64,
}

impl Sizes {
    /// Checkpoints the write-ahead log into the database, then counts.
    fn of(data: &Path) -> Sizes {
        let conn = open_connection(&data.join(DB_FILE)).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        let tables = support::table_sizes(&conn);
        let pragma = |name: &str| -> u64 {
            let value: i64 = conn.pragma_query_value(None, name, |r| r.get(0)).unwrap();
            u64::try_from(value).unwrap()
        };
        let in_use = (pragma("page_count") - pragma("freelist_count")) * pragma("page_size");
        drop(conn);
        let files = std::fs::read_dir(data)
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|entry| entry.metadata().ok())
            .filter(|meta| meta.is_file())
            .map(|meta| meta.len())
            .sum();
        Sizes {
            tables,
            in_use,
            files,
        }
    }

    /// Bytes of the listener's own tables.
    fn listener(&self) -> u64 {
        self.tables
            .iter()
            .filter(|(name, _)| name.starts_with("listener_"))
            .map(|(_, bytes)| bytes)
            .sum()
    }
}
