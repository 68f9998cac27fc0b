//! The data directory over a long run: its size every window, split into
//! the listener's own tables, the ledger's records (which grow with the
//! work) and the rest, beside the handhelds' sync in that window.
//!
//! `--soak MINUTES` runs the site-load bench's load for MINUTES with
//! windows of [`soak_window`] and the listener keeping a forwarded
//! record's identity for [`SOAK_SEEN_RETENTION_MINUTES`] (the
//! `seen_retention_minutes` setting), so the listener's stale horizon and
//! its identities' both pass within the run and its store must level off.
//! A run without it prints the same table over shorter windows.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use rusqlite::OpenFlags;
use stockhop_site::store::db::DB_FILE;

use super::support;

/// A soak's window in a full run, in minutes: the table's row.
pub const SOAK_WINDOW_MINUTES: u64 = 5;

/// A soak's windows: [`SOAK_WINDOW_MINUTES`] (10 s in the quick mode).
pub fn soak_window() -> Duration {
    support::scaled(
        Duration::from_secs(SOAK_WINDOW_MINUTES * 60),
        Duration::from_secs(10),
    )
}

/// How long a soak's listener keeps a forwarded record's identity, in
/// minutes: the setting's least, so it passes twice within an hour's soak
/// (a site keeps a week, which the growth after it stands for).
pub const SOAK_SEEN_RETENTION_MINUTES: u64 = 10;

/// The windows a run without `--soak` splits its load into.
pub const WINDOWS_IN_A_RUN: u32 = 4;

/// `--soak MINUTES` among the bench's arguments, or None; a malformed one
/// stops the bench saying so.
pub fn soak_minutes() -> Option<u64> {
    static MINUTES: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *MINUTES.get_or_init(|| {
        let args: Vec<String> = std::env::args().collect();
        let at = args
            .iter()
            .position(|arg| arg == "--soak" || arg.starts_with("--soak="))?;
        let value = match args[at].strip_prefix("--soak=") {
            Some(value) => Some(value.to_owned()),
            // The harness's own flags (`--bench`) are not minutes.
            None => args.get(at + 1).filter(|v| !v.starts_with("--")).cloned(),
        };
        match value.as_deref().map(str::parse::<u64>) {
            Some(Ok(minutes)) if minutes >= SOAK_WINDOW_MINUTES => Some(minutes),
            _ => {
                eprintln!(
                    "site_load: --soak takes whole minutes, at least {SOAK_WINDOW_MINUTES} (one row of its table; an hour or more shows the store levelling off), as `-- --soak 60`; got {}",
                    value.map_or("nothing".to_owned(), |v| format!("{v:?}"))
                );
                std::process::exit(2);
            }
        }
    })
}

/// The tables whose rows are the work itself, kept by design: the
/// handhelds' hops and their receipts, the terminals' events and repeat
/// counts, and the units, goods receipts, counts and sessions the scans
/// made. They grow with the work for as long as the site runs; the rest
/// of the data directory must level off.
pub const LEDGER_RECORDS: [&str; 8] = [
    "hops",
    "receipts",
    "terminal_events",
    "terminal_repeats",
    "units",
    "grn_receipts",
    "count_seen",
    "sessions",
];

/// The data directory's bytes at one moment, split three ways.
#[derive(Clone, Copy, Default)]
pub struct Sizes {
    /// Every file in the data directory.
    pub dir: u64,
    /// The listener's own tables (`listener_…`) with their indexes:
    /// SQLite's pages, from `dbstat`.
    pub listener: u64,
    /// The ledger's records ([`LEDGER_RECORDS`]) with their indexes.
    pub ledger: u64,
}

impl Sizes {
    /// Read beside the running server.
    pub fn of(data: &Path) -> Sizes {
        let tables = table_sizes(data);
        let sum = |keep: &dyn Fn(&str) -> bool| -> u64 {
            tables
                .iter()
                .filter(|(name, _)| keep(name))
                .map(|(_, bytes)| bytes)
                .sum()
        };
        Sizes {
            dir: dir_bytes(data),
            listener: sum(&|name| name.starts_with("listener_")),
            ledger: sum(&|name| LEDGER_RECORDS.contains(&name)),
        }
    }

    /// Everything but the ledger's records and the listener's tables: the
    /// site's other tables, free pages and the write-ahead log.
    pub fn rest(&self) -> u64 {
        self.dir.saturating_sub(self.listener + self.ledger)
    }
}

/// The bytes of the database's pages each table holds in `data`'s file,
/// read beside the running server.
pub fn table_sizes(data: &Path) -> BTreeMap<String, u64> {
    support::table_sizes(&read_only(data))
}

/// One window's end: the sizes then and the handhelds' latency within it.
pub struct Window {
    pub at: Duration,
    pub sizes: Sizes,
    /// Portal reads acknowledged so far.
    pub reads: u64,
    pub sync_p99: Option<f64>,
    pub heartbeat_p99: Option<f64>,
    /// The write-ahead log's restarts within the window.
    pub restarts: Vec<Restart>,
}

/// One restart of the write-ahead log, as the server logs it: the view's
/// reads end first (the writer not held), then the writer is held while
/// the other running reads end and then while the checkpoint runs.
pub struct Restart {
    pub views_wait_ms: f64,
    pub reads_wait_ms: f64,
    pub checkpoint_ms: f64,
    /// The log's pages when it was emptied.
    pub pages: f64,
}

/// One part's mean and most over `restarts`, "-" for none.
fn mean_most(restarts: &[Restart], of: fn(&Restart) -> f64) -> String {
    if restarts.is_empty() {
        return "-".to_owned();
    }
    let all: Vec<f64> = restarts.iter().map(of).collect();
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    let most = all.iter().copied().fold(f64::MIN, f64::max);
    format!("{mean:.0} / {most:.0}")
}

/// A window's restarts in words: how many, and each part's mean and most.
pub fn restarts_said(restarts: &[Restart]) -> String {
    if restarts.is_empty() {
        return "no restart of the write-ahead log".to_owned();
    }
    let part = |of: fn(&Restart) -> f64| format!("{} ms (mean / most)", mean_most(restarts, of));
    format!(
        "{} restarts of the write-ahead log: waiting for the view's reads {}, for the others {}; the checkpoint {}; {:.0} pages each on average",
        restarts.len(),
        part(|r| r.views_wait_ms),
        part(|r| r.reads_wait_ms),
        part(|r| r.checkpoint_ms),
        restarts.iter().map(|r| r.pages).sum::<f64>() / restarts.len() as f64,
    )
}

/// Bytes of every file under `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| match entry.metadata() {
                    Ok(meta) if meta.is_dir() => dir_bytes(&entry.path()),
                    Ok(meta) => meta.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// A read-only connection to the site's file in `data`: what the bench
/// reads beside the running server (a reader of the write-ahead log
/// takes no lock its writer waits for).
pub fn read_only(data: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(
        data.join(DB_FILE),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .unwrap()
}

/// Prints the table: one row a window, against `start`'s sizes and the
/// sync alone.
pub fn print(
    windows: &[Window],
    start: Sizes,
    alone_sync_p99: Option<f64>,
    alone_heartbeat_p99: Option<f64>,
    heading: &str,
) {
    println!();
    println!("{heading}");
    println!(
        "| {:>11} | {:>12} | {:>12} | {:>12} | {:>10} | {:>12} | {:>10} | {:>14} | {:>11} | {:>13} | {:>11} | {:>12} | {:>14} | {:>12} | {:>17} | {:>17} | {:>17} |",
        "elapsed m:s", "data dir MiB", "listener MiB", "ledger MiB", "rest MiB", "reads", "B / read", "window MiB / h", "rest MiB/h", "listener B/rd", "sync p99 ms", "alone p99 ms", "heartbeat p99", "WAL restarts", "views wait ms", "reads wait ms", "checkpoint ms"
    );
    println!(
        "|{:->13}|{:->14}|{:->14}|{:->14}|{:->12}|{:->14}|{:->12}|{:->16}|{:->13}|{:->15}|{:->13}|{:->14}|{:->16}|{:->14}|{:->19}|{:->19}|{:->19}|",
        "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""
    );
    let mut previous = (Duration::ZERO, start);
    let figure = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    for window in windows {
        let reads = window.reads.max(1) as f64;
        let span = (window.at - previous.0).as_secs_f64().max(f64::EPSILON);
        let per_hour = |now: u64, then: u64| (mib(now) - mib(then)) / span * 3600.0;
        let sizes = window.sizes;
        println!(
            "| {:>11} | {:>12.1} | {:>12.1} | {:>12.1} | {:>10.1} | {:>12} | {:>10.0} | {:>14.0} | {:>11.0} | {:>13.0} | {:>11} | {:>12} | {:>14} | {:>12} | {:>17} | {:>17} | {:>17} |",
            format!("{}:{:02}", window.at.as_secs() / 60, window.at.as_secs() % 60),
            mib(sizes.dir),
            mib(sizes.listener),
            mib(sizes.ledger),
            mib(sizes.rest()),
            window.reads,
            sizes.dir.saturating_sub(start.dir) as f64 / reads,
            per_hour(sizes.dir, previous.1.dir),
            per_hour(sizes.rest(), previous.1.rest()),
            sizes.listener.saturating_sub(start.listener) as f64 / reads,
            figure(window.sync_p99),
            figure(alone_sync_p99),
            format!("{} ({})", figure(window.heartbeat_p99), figure(alone_heartbeat_p99)),
            window.restarts.len(),
            mean_most(&window.restarts, |r| r.views_wait_ms),
            mean_most(&window.restarts, |r| r.reads_wait_ms),
            mean_most(&window.restarts, |r| r.checkpoint_ms),
        );
        previous = (window.at, sizes);
    }
    println!(
        "ledger: the ledger's records ({}), which grow with the work for as long as the site runs; rest: every other byte of the data directory (the site's other tables, free pages, the write-ahead log), which must level off with the listener's; B / read: the data directory's growth since the load began ÷ the portal reads acknowledged; window MiB / h and rest MiB/h: the growth in the window, per hour; listener B/rd: the listener's tables' growth per read; sync and heartbeat p99: the answers sent in the window (heartbeat's alone in brackets); alone: the same run's quiet phase; WAL restarts: the server's restarts of its write-ahead log in the window, each waiting for the view's running reads (the writer not held), then holding the writer while the other running reads end and while its checkpoint runs (mean / most)",
        LEDGER_RECORDS.join(", ")
    );
}
