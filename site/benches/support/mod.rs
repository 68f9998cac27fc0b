//! What every site bench shares: its quick mode.
//!
//! `STOCKHOP_BENCH_QUICK=1` runs a bench at small sizes and one round, a
//! few seconds in all, through the same code paths and printing the same
//! tables as a full run. `cargo xtask test` runs every bench that way, so a
//! bench that panics, hangs or prints no table fails the test run instead
//! of rotting while its old figures stay quoted. A quick run's figures mean
//! nothing; a full run's are the ones to quote.

/// The variable that asks for the quick mode.
pub const QUICK_VAR: &str = "STOCKHOP_BENCH_QUICK";

/// Whether this run is the quick one.
pub fn quick() -> bool {
    std::env::var(QUICK_VAR).is_ok_and(|value| value == "1")
}

/// `full` in a full run, `quick` in the quick one.
pub fn scaled<T>(full: T, quick: T) -> T {
    if self::quick() {
        quick
    } else {
        full
    }
}

/// The line every bench prints first, so a reader of the output knows the
/// figures below are from the quick mode.
pub fn announce(bench: &str) {
    if quick() {
        println!("{bench}: quick mode ({QUICK_VAR}=1): small sizes, one round; figures not comparable to a full run");
    }
}

/// The bytes of the database's pages each table holds on `conn`, its
/// indexes counted with it (SQLite's `dbstat`, which the bundled SQLite
/// has).
#[allow(dead_code)] // Only the benches that weigh the site's file call it.
pub fn table_sizes(conn: &rusqlite::Connection) -> std::collections::BTreeMap<String, u64> {
    conn.prepare(
        "SELECT coalesce(s.tbl_name, d.name), sum(d.pgsize) FROM dbstat AS d
         LEFT JOIN sqlite_schema AS s ON s.name = d.name GROUP BY 1",
    )
    .unwrap()
    .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)?)))
    .unwrap()
    .map(|row| {
        let (name, bytes) = row.unwrap();
        (name, u64::try_from(bytes).unwrap())
    })
    .collect()
}

/// A simulated handheld's wait after its `failures`-th failed sync in a
/// row, counted from 0: the service worker's schedule (2/4/8/16 s, then
/// 30 s), read from the core.
#[allow(dead_code)] // Only the benches that drain as handhelds call it.
pub fn backoff(failures: usize) -> std::time::Duration {
    std::time::Duration::from_millis(stockhop::backoff::delay_after(failures as u32 + 1).0)
}

/// A site on `db` served over plain HTTP on loopback (its `www` folder
/// under `dir`): its base URL, the sender that stops it, and its task.
#[allow(dead_code)] // Only the benches that read the site's view call it.
pub async fn serve(
    db: stockhop_site::store::db::Db,
    dir: &std::path::Path,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state = stockhop_site::AppState {
        db,
        www_dir: dir.join("www"),
        ledger: stockhop_site::ledger::LedgerState::default(),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        stockhop_site::serve(listener, state, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (base, stop, task)
}
