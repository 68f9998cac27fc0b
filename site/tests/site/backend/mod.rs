//! The ledger backend a test runs on: SQLite in the data directory (the
//! default), or PostgreSQL with `STOCKHOP_TEST_BACKEND=postgres`, one fresh
//! database per data directory on the cluster `STOCKHOP_TEST_POSTGRES`
//! names (its admin URL). `cargo xtask test` starts such a cluster and runs
//! the ledger suites a second time on it; `cargo xtask postgres` starts one
//! for running a suite by hand.
//!
//! Every in-process open of a ledger goes through [`open_db`], and every
//! spawned `stockhop-site` gets [`database_args`], so one suite covers both
//! backends.

#![allow(dead_code)] // each test file uses its own part of the helper

use std::path::Path;

use stockhop_site::store::db::{Database, Db};

/// `postgres` runs the ledger on PostgreSQL; unset, empty or `sqlite` on
/// SQLite.
pub const BACKEND_VAR: &str = "STOCKHOP_TEST_BACKEND";
/// The cluster's admin URL (`postgres://postgres@127.0.0.1:PORT/postgres`).
pub const POSTGRES_VAR: &str = "STOCKHOP_TEST_POSTGRES";
/// The file in a data directory that records its database's URL, so a
/// restart over the same directory finds the same ledger.
const DATABASE_URL_FILE: &str = "test-database-url";
/// Random bytes in a database's name (`stockhop_t_` and 16 hex digits):
/// enough that parallel tests and earlier runs on one cluster never meet.
const DATABASE_NAME_RANDOM_BYTES: usize = 8;

/// How long creating a test's database waits for a cluster that is
/// restarting (after a crash of one of its processes, say) before the
/// test fails: crash recovery of a test cluster takes seconds.
const SERVER_RECOVERY_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
const SERVER_RECOVERY_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// Whether creating a database failed because the server is not taking
/// work for now (as the ledger judges it), or not listening at all while
/// it restarts.
fn server_unavailable(err: &postgres::Error) -> bool {
    stockhop_site::store::sql::server_unavailable(err)
        || std::error::Error::source(err).is_some_and(|source| source.is::<std::io::Error>())
}

/// Whether the ledger runs on PostgreSQL in this test process. Panics when
/// it is asked for without a cluster to run on, or the backend is unknown.
pub fn postgres_requested() -> bool {
    match std::env::var(BACKEND_VAR).as_deref() {
        Err(std::env::VarError::NotPresent) | Ok("" | "sqlite") => false,
        Ok("postgres") => {
            admin_url();
            true
        }
        Ok(other) => panic!("{BACKEND_VAR}={other:?}: expected `postgres` or `sqlite`"),
        Err(err) => panic!("{BACKEND_VAR}: {err}"),
    }
}

/// The cluster's admin URL; panics with what to run when there is none.
fn admin_url() -> String {
    std::env::var(POSTGRES_VAR).unwrap_or_else(|_| {
        panic!(
            "{BACKEND_VAR}=postgres needs a PostgreSQL cluster's admin URL in {POSTGRES_VAR}: \
             run the suites with `cargo xtask test`, or start a cluster with \
             `cargo xtask postgres` and set the variable it prints"
        )
    })
}

/// The URL of the PostgreSQL database that holds `data_dir`'s ledger: on
/// the first call for a directory a new, empty database on the cluster
/// (recorded in the directory, which is created if missing), on later
/// calls (a restart, the CLI, a reader) the same one.
pub fn fresh_database(data_dir: &Path) -> String {
    let record = data_dir.join(DATABASE_URL_FILE);
    match std::fs::read_to_string(&record) {
        Ok(url) => return url.trim().to_owned(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => panic!("reading {}: {err}", record.display()),
    }
    let admin = admin_url();
    // On a thread of its own: the sync client runs its own runtime, which
    // cannot start on a thread that drives an async test.
    let name = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let deadline = std::time::Instant::now() + SERVER_RECOVERY_WAIT;
                loop {
                    let mut random = [0u8; DATABASE_NAME_RANDOM_BYTES];
                    getrandom::fill(&mut random).expect("the system's random source");
                    let name = format!("stockhop_t_{}", hex::encode(random));
                    let created = postgres::Client::connect(&admin, postgres::NoTls).and_then(
                        |mut client| client.batch_execute(&format!("CREATE DATABASE {name}")),
                    );
                    match created {
                        Ok(()) => return name,
                        Err(err)
                            if server_unavailable(&err) && std::time::Instant::now() < deadline =>
                        {
                            // Said, not hidden: `cargo xtask test` also
                            // shows the server log's crash lines.
                            eprintln!(
                                "CREATE DATABASE {name} on {admin}: the server is not taking \
                                 work ({err:?}); trying again"
                            );
                            std::thread::sleep(SERVER_RECOVERY_POLL);
                        }
                        Err(err) => {
                            panic!("CREATE DATABASE {name} on {admin} ({POSTGRES_VAR}): {err:?}")
                        }
                    }
                }
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    let mut url = url::Url::parse(&admin)
        .unwrap_or_else(|err| panic!("{POSTGRES_VAR}={admin:?} is not a URL: {err}"));
    url.set_path(&name);
    let url = String::from(url);
    std::fs::create_dir_all(data_dir)
        .unwrap_or_else(|err| panic!("creating {}: {err}", data_dir.display()));
    let partial = record.with_extension("partial");
    std::fs::write(&partial, format!("{url}\n")).unwrap();
    std::fs::rename(&partial, &record).unwrap();
    url
}

/// The database URL the ledger of `data_dir` uses: `None` on SQLite (the
/// file in the directory), the directory's PostgreSQL database otherwise.
pub fn database_for(data_dir: &Path) -> Option<String> {
    postgres_requested().then(|| fresh_database(data_dir))
}

/// The arguments that point a spawned `stockhop-site` at `data_dir`'s
/// ledger beyond `--data`: none on SQLite, `--database URL` on PostgreSQL.
pub fn database_args(data_dir: &Path) -> Vec<String> {
    database_for(data_dir).map_or_else(Vec::new, |url| vec!["--database".to_owned(), url])
}

/// A new site's data directory under `dir`, its ledger made as the
/// server's first start makes it: a command other than `serve` works only
/// on a site that exists.
pub fn new_site(dir: &Path) -> std::path::PathBuf {
    let data = dir.join("data");
    drop(open_db(&data));
    data
}

/// `data_dir`'s ledger, opened in this process as the server opens it.
pub fn open_db(data_dir: &Path) -> Db {
    let Some(url) = database_for(data_dir) else {
        return Db::open(data_dir).unwrap();
    };
    let deadline = std::time::Instant::now() + SERVER_RECOVERY_WAIT;
    loop {
        match Db::connect(&Database::Postgres(url.clone()), data_dir) {
            Ok(db) => return db,
            Err(err) if err.is_busy() && std::time::Instant::now() < deadline => {
                eprintln!("opening {url}: the server is not taking work ({err}); trying again");
                std::thread::sleep(SERVER_RECOVERY_POLL);
            }
            Err(err) => panic!("opening {url}: {err}"),
        }
    }
}
