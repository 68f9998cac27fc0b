//! The one place that opens the ledger's database and moves its schema
//! forward: the site's embedded SQLite by default, or PostgreSQL.
//!
//! SQLite lives in `<data dir>/stockhop.sqlite` (or the file `--database`
//! names), created on first start. Every connection runs in WAL mode with
//! `synchronous=FULL`, so a transaction that returned from COMMIT survives a
//! power cut: the ledger and the terminal listener acknowledge only after
//! such a commit. PostgreSQL (`--database postgres://…`) is reached through
//! a pool ([`crate::store::sql::PgPool`]); it commits durably with its own
//! defaults (`synchronous_commit=on`).
//!
//! Migrations are numbered SQL files, one set per engine (`site/migrations/`
//! and `site/migrations/postgres/`, the same numbers and names), compiled
//! in, applied in order, each in its own transaction together with the bump
//! of the schema version (SQLite's `PRAGMA user_version`, PostgreSQL's
//! `stockhop_schema` row), so a crash mid-migration leaves the previous
//! version intact.
//!
//! The terminal listener's queue always stays in the site's own SQLite
//! file, whichever engine holds the ledger: it is what keeps terminal
//! records while the ledger cannot be reached ([`Db::call_local`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::OpenFlags;

use crate::store::checkpoint::{self, Checkpointer};
use crate::store::readers::{Reader, Readers};
use crate::store::sql::{self, Connection, PgPool};
use crate::store::writer::{Caller, Use, Writer};

/// The database file inside the data directory.
pub const DB_FILE: &str = "stockhop.sqlite";

/// How long a connection waits on another's write lock before failing with
/// `SQLITE_BUSY`; the server answers that as 503 with `Retry-After`.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements kept per connection: the ledger's hot path alone
/// runs more than rusqlite's default of 16, and re-preparing them on every
/// item costs more than the inserts.
pub const STATEMENT_CACHE_CAPACITY: usize = 64;

/// The page cache of a read-write connection, in KiB (SQLite's default is
/// 2,000): enough to hold the upper levels of every B-tree of a file of
/// several GB, which each write walks. With the default a portal's write
/// read most of those pages back from the operating system, through the
/// write-ahead log's index, and the writer's turns lengthened as the file
/// grew. Pages are taken as they are first read, so a small file keeps a
/// small cache.
pub const WRITER_CACHE_KIB: i64 = 64 * 1024;

pub use crate::store::migrations::{Migration, MIGRATIONS, MIGRATIONS_POSTGRES};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot create data directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0}")]
    Sql(#[from] sql::Error),
    #[error("database schema version {found} is newer than this binary knows ({known})")]
    SchemaTooNew { found: i64, known: i64 },
    #[error("migration {version} ({name}) failed: {source}")]
    Migration {
        version: i64,
        name: &'static str,
        source: sql::Error,
    },
    #[error("database task failed: {0}")]
    Task(String),
    #[error("the terminal listener's queue needs the site's SQLite database")]
    NotLocal,
}

impl DbError {
    /// Whether the database refused a write for lack of space.
    pub fn is_storage_full(&self) -> bool {
        match self {
            DbError::Sqlite(err) => sql::sqlite_full(err),
            DbError::Sql(err) | DbError::Migration { source: err, .. } => err.is_storage_full(),
            _ => false,
        }
    }

    /// Whether the database was busy rather than broken (503, not 500).
    pub fn is_busy(&self) -> bool {
        match self {
            DbError::Sqlite(err) => sql::sqlite_busy(err),
            DbError::Sql(err) | DbError::Migration { source: err, .. } => err.is_busy(),
            _ => false,
        }
    }
}

/// The two connections of an online backup ([`crate::store::backup`]): the
/// ledger's SQLite file at `source`, opened as it is (never created, never
/// migrated; read-write only because a WAL reader needs the shared-memory
/// file), and a new file at `copy`.
pub fn open_for_backup(
    source: &Path,
    copy: &Path,
    busy_timeout: std::time::Duration,
) -> Result<(rusqlite::Connection, rusqlite::Connection), DbError> {
    let src = rusqlite::Connection::open_with_flags(
        source,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    src.busy_timeout(busy_timeout)?;
    let dst = rusqlite::Connection::open(copy)?;
    Ok((src, dst))
}

/// Where the ledger's data lives: `--database` (env `STOCKHOP_DATABASE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// An SQLite file: `stockhop.sqlite` in the data directory unless named.
    Sqlite(PathBuf),
    /// A `postgres://` (or `postgresql://`) connection URL.
    Postgres(String),
}

/// What a command other than `serve` says when the SQLite file it was
/// pointed at, and its folder, do not exist: where it looked, and how a
/// site is named or made.
pub fn no_site_at(path: &Path) -> String {
    format!(
        "no site database at {} (its folder does not exist): name the site's data \
         directory with --data DIR (or STOCKHOP_DATA), or its file with --database; \
         `stockhop-site serve --data DIR` makes a new site there on its first start, \
         and a command run on an existing empty folder sets a site up there",
        path.display()
    )
}

impl Database {
    /// Reads `--database`: unset is the data directory's SQLite file, a
    /// `postgres://` or `postgresql://` URL is PostgreSQL, anything else is
    /// the path of an SQLite file.
    pub fn from_arg(arg: Option<&str>, data_dir: &Path) -> Database {
        match arg.map(str::trim).filter(|arg| !arg.is_empty()) {
            None => Database::Sqlite(data_dir.join(DB_FILE)),
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Database::Postgres(url.to_owned())
            }
            Some(path) => Database::Sqlite(PathBuf::from(path)),
        }
    }

    /// How logs and errors name it: the file, or the URL without its
    /// password.
    pub fn describe(&self) -> String {
        match self {
            Database::Sqlite(path) => path.display().to_string(),
            Database::Postgres(url) => {
                let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
                match rest.split_once('@') {
                    Some((credentials, host)) if credentials.contains(':') => {
                        let user = credentials.split(':').next().unwrap_or_default();
                        format!("{scheme}://{user}:…@{host}")
                    }
                    _ => url.clone(),
                }
            }
        }
    }
}

#[derive(Clone)]
enum Backend {
    Sqlite {
        conn: Arc<Mutex<Connection>>,
        /// The turns at `conn`, handhelds first, and who used it how long.
        writer: Arc<Writer>,
        /// Read-only connections beside `conn`, for work that only reads.
        readers: Arc<Readers>,
        path: PathBuf,
        /// Copies the log back off the writer's path; stops with the
        /// last clone.
        _checkpoints: Option<Arc<Checkpointer>>,
    },
    Postgres {
        pool: PgPool,
        /// The site's own SQLite file, for the terminal listener's queue.
        local: Arc<Db>,
    },
}

/// The ledger's database: SQLite's one connection for writes, shared
/// behind a mutex, or a PostgreSQL pool; used from blocking threads so a
/// commit never stalls the runtime.
#[derive(Clone)]
pub struct Db {
    backend: Backend,
}

impl Db {
    /// Opens (creating on first start) the SQLite database in `data_dir` and
    /// migrates it to the newest schema.
    pub fn open(data_dir: &Path) -> Result<Db, DbError> {
        create_dir(data_dir)?;
        Db::open_sqlite(&data_dir.join(DB_FILE))
    }

    /// Opens `database` and migrates it to the newest schema. A ledger on
    /// PostgreSQL still opens the SQLite file in `data_dir`, which keeps the
    /// terminal listener's queue.
    pub fn connect(database: &Database, data_dir: &Path) -> Result<Db, DbError> {
        match database {
            Database::Sqlite(path) => {
                if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
                    create_dir(dir)?;
                }
                Db::open_sqlite(path)
            }
            Database::Postgres(url) => {
                let local = Arc::new(Db::open(data_dir)?);
                let pool = PgPool::connect(url)?;
                migrate_postgres(&mut pool.connection())?;
                Ok(Db {
                    backend: Backend::Postgres { pool, local },
                })
            }
        }
    }

    fn open_sqlite(path: &Path) -> Result<Db, DbError> {
        let mut conn = open_connection(path)?;
        migrate(&mut conn)?;
        return_freed_pages(&conn, path);
        let writer = Arc::new(Writer::default());
        let readers = Arc::new(Readers::new(path));
        let restart = checkpoint::Restart {
            writer: Arc::clone(&writer),
            readers: Arc::clone(&readers),
            after_pages: checkpoint::RESTART_AFTER_PAGES,
        };
        let checkpoints = match Checkpointer::start(path, Some(restart)) {
            Ok(checkpoints) => {
                checkpoint::leave_to_thread(&conn)?;
                Some(Arc::new(checkpoints))
            }
            Err(err) => {
                tracing::warn!(%err, "no checkpoint thread: commits checkpoint the log themselves");
                None
            }
        };
        Ok(Db {
            backend: Backend::Sqlite {
                conn: Arc::new(Mutex::new(Connection::Sqlite(conn))),
                writer,
                readers,
                path: path.to_owned(),
                _checkpoints: checkpoints,
            },
        })
    }

    pub fn engine(&self) -> sql::Engine {
        match self.backend {
            Backend::Sqlite { .. } => sql::Engine::Sqlite,
            Backend::Postgres { .. } => sql::Engine::Postgres,
        }
    }

    /// The directory of the site's files (the SQLite file's; on
    /// PostgreSQL, that of the file the listener keeps its queue in):
    /// where a request's temporary files go.
    pub fn data_dir(&self) -> &Path {
        let dir = match &self.backend {
            Backend::Sqlite { path, .. } => path.parent(),
            Backend::Postgres { local, .. } => return local.data_dir(),
        };
        dir.filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    }

    /// The SQLite file, for a site on SQLite.
    pub fn path(&self) -> Option<&Path> {
        match &self.backend {
            Backend::Sqlite { path, .. } => Some(path),
            Backend::Postgres { .. } => None,
        }
    }

    /// The longest any caller held SQLite's one writer (its work, commit
    /// and `fsync` included, not its wait for it) since the last call,
    /// which starts the count again; zero on PostgreSQL, whose pool has a
    /// connection for each. What a long job's turns are set beside: a
    /// quiet sync's own hold is the disk's floor.
    pub fn take_longest_hold(&self) -> Duration {
        match &self.backend {
            Backend::Sqlite { writer, .. } => writer.take_longest_hold(),
            Backend::Postgres { .. } => Duration::ZERO,
        }
    }

    /// Whether another caller waits for SQLite's one writer now (never on
    /// PostgreSQL, whose pool has a connection for each): a long job's turn
    /// that holds it commits early and lets it go.
    pub fn writer_wanted(&self) -> bool {
        match &self.backend {
            Backend::Sqlite { writer, .. } => writer.wanted(),
            Backend::Postgres { .. } => false,
        }
    }

    /// Each caller's use of SQLite's one writer since the process started
    /// (none on PostgreSQL, whose pool has a connection for each).
    pub fn writer_uses(&self) -> Vec<(Caller, Use)> {
        match &self.backend {
            Backend::Sqlite { writer, .. } => writer.uses(),
            Backend::Postgres { local, .. } => local.writer_uses(),
        }
    }

    /// Runs `work` on a connection on a blocking thread, in the first lane
    /// ([`Caller::Other`]).
    pub async fn call<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    {
        self.call_as(Caller::Other, work).await
    }

    /// Runs `work` for `caller` on a connection on a blocking thread: on
    /// SQLite, when the writer's turn comes to `caller`'s lane.
    pub async fn call_as<T, E, F>(&self, caller: Caller, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.call_blocking_as(caller, work))
            .await
            .map_err(|err| E::from(DbError::Task(err.to_string())))?
    }

    /// Runs `work` on a connection on the current thread (CLI commands,
    /// tests). On PostgreSQL a connection that cannot be had is one whose
    /// every statement fails with the reason, so `work`'s errors carry it.
    pub fn call_blocking<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> T {
        self.call_blocking_as(Caller::Other, work)
    }

    /// [`Db::call_blocking`] for `caller`, in its lane.
    pub fn call_blocking_as<T>(
        &self,
        caller: Caller,
        work: impl FnOnce(&mut Connection) -> T,
    ) -> T {
        match &self.backend {
            Backend::Sqlite { conn, writer, .. } => {
                let _turn = writer.take(caller);
                // Never contended: the turn is the writer's lock.
                let mut guard = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                work(&mut guard)
            }
            Backend::Postgres { pool, .. } => work(&mut pool.connection()),
        }
    }

    /// Runs `work`, which only reads, on a blocking thread: on SQLite on a
    /// read-only connection in one read transaction, taking no turn at the
    /// writer ([`crate::store::readers`]); on PostgreSQL on a pooled
    /// connection. A statement that writes fails there.
    pub async fn read<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.read_blocking(work))
            .await
            .map_err(|err| E::from(DbError::Task(err.to_string())))?
    }

    /// [`Db::read`] on the current thread.
    pub fn read_blocking<T, E>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<DbError>,
    {
        self.read_as(Reader::View, work)
    }

    /// A token or session looked up on a read-only connection kept for
    /// lookups, which the view's reads never all take
    /// ([`crate::store::readers`]).
    pub async fn lookup<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.read_as(Reader::Lookup, work))
            .await
            .map_err(|err| E::from(DbError::Task(err.to_string())))?
    }

    fn read_as<T, E>(
        &self,
        reader: Reader,
        work: impl FnOnce(&mut Connection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<DbError>,
    {
        match &self.backend {
            Backend::Sqlite { readers, .. } => readers.read(reader, work),
            Backend::Postgres { pool, .. } => work(&mut pool.connection()),
        }
    }

    /// The site's own SQLite file: this database on SQLite, the file
    /// beside a PostgreSQL ledger that keeps the listener's queue.
    fn local(&self) -> Db {
        match &self.backend {
            Backend::Sqlite { .. } => self.clone(),
            Backend::Postgres { local, .. } => Db::clone(local),
        }
    }

    /// [`Db::read`] on the site's own SQLite file: the terminal listener's
    /// queue, read for the view without a turn at the writer.
    pub async fn read_local<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> Result<T, E> + Send + 'static,
    {
        self.local()
            .read(move |conn| match conn {
                Connection::Sqlite(conn) => work(conn),
                _ => Err(E::from(DbError::NotLocal)),
            })
            .await
    }

    /// Runs `work` on the site's own SQLite connection, on a blocking
    /// thread: the terminal listener's queue, read or changed by someone
    /// waiting for the answer ([`Caller::Other`]).
    pub async fn call_local<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> Result<T, E> + Send + 'static,
    {
        self.call_local_as(Caller::Other, work).await
    }

    /// [`Db::call_local`] for `caller`, in its lane: the listener's own
    /// writes and upkeep wait behind handhelds.
    pub async fn call_local_as<T, E, F>(&self, caller: Caller, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> Result<T, E> + Send + 'static,
    {
        self.local()
            .call_as(caller, move |conn| match conn {
                Connection::Sqlite(conn) => work(conn),
                _ => Err(E::from(DbError::NotLocal)),
            })
            .await
    }

    /// The schema version the database is at.
    pub fn schema_version(&self) -> Result<i64, DbError> {
        self.call_blocking(|conn| match conn {
            Connection::Sqlite(conn) => {
                Ok(conn.pragma_query_value(None, "user_version", |row| row.get(0))?)
            }
            conn => Ok(postgres_version(conn)?),
        })
    }
}

fn create_dir(dir: &Path) -> Result<(), DbError> {
    std::fs::create_dir_all(dir).map_err(|source| DbError::CreateDir {
        path: dir.to_owned(),
        source,
    })
}

/// Opens a connection with the site's durability settings.
pub fn open_connection(path: &Path) -> Result<rusqlite::Connection, DbError> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
    // A negative cache_size is in KiB.
    conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)?;
    // Before the first table (and before WAL, which writes the header), so
    // a new file can give freed pages back (see `return_freed_pages`); on a
    // file that has tables this only names the mode its next VACUUM takes.
    conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

/// Makes a file made before the site kept its files with
/// `auto_vacuum=INCREMENTAL` give freed pages back from now on: a one-time
/// `VACUUM` at the first start that finds it so (it rewrites the file, so
/// it takes as long as a copy of the ledger and as much free space). A
/// refused import's pages are then returned to the file system, not left
/// free in the file. If it cannot run (no space), the site starts as
/// before and tries again at its next start.
fn return_freed_pages(conn: &rusqlite::Connection, path: &Path) {
    let mode: rusqlite::Result<i64> =
        conn.pragma_query_value(None, "auto_vacuum", |row| row.get(0));
    if !matches!(mode, Ok(mode) if mode != SQLITE_AUTO_VACUUM_INCREMENTAL) {
        return;
    }
    tracing::info!(
        path = %path.display(),
        "rewriting the ledger's file once so freed pages go back to the file system"
    );
    let converted = conn
        .pragma_update(None, "auto_vacuum", "INCREMENTAL")
        .and_then(|()| conn.execute_batch("VACUUM"));
    if let Err(err) = converted {
        tracing::warn!(%err, path = %path.display(), "could not rewrite the ledger's file; freed pages stay in it for reuse");
    }
}

/// `PRAGMA auto_vacuum`'s value for `INCREMENTAL`.
const SQLITE_AUTO_VACUUM_INCREMENTAL: i64 = 2;

/// Applies every migration newer than the database's `user_version`.
pub fn migrate(conn: &mut rusqlite::Connection) -> Result<(), DbError> {
    let known = MIGRATIONS.last().map_or(0, |m| m.version);
    let found: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > known {
        return Err(DbError::SchemaTooNew { found, known });
    }
    let mut applied = 0;
    for migration in MIGRATIONS.iter().filter(|m| m.version > found) {
        let apply = |conn: &mut rusqlite::Connection| -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            tx.execute_batch(migration.sql)?;
            tx.pragma_update(None, "user_version", migration.version)?;
            tx.commit()
        };
        apply(conn).map_err(|source| DbError::Migration {
            version: migration.version,
            name: migration.name,
            source: source.into(),
        })?;
        applied += 1;
        tracing::debug!(
            version = migration.version,
            name = migration.name,
            "migrated database"
        );
    }
    log_migrated(found, known, applied);
    Ok(())
}

/// One line for a run of migrations (each is logged at debug level): a
/// new site's first command would otherwise open with a line per
/// migration.
fn log_migrated(from: i64, to: i64, applied: usize) {
    if applied > 0 {
        tracing::info!(from, to, applied, "database schema brought up to date");
    }
}

/// The table PostgreSQL keeps the schema version in (SQLite's is a pragma).
const POSTGRES_VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS stockhop_schema (
    id      BIGINT PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL CHECK (version >= 0)
)";

/// Every process that opens the database may migrate it; this advisory
/// lock makes them take turns, so each migration runs once.
const POSTGRES_MIGRATION_LOCK: i64 = 0x5354_4f43_4b48_4f50; // "STOCKHOP"

fn postgres_version(conn: &Connection) -> Result<i64, sql::Error> {
    use sql::OptionalExtension;
    let version = conn
        .query_row(
            "SELECT version FROM stockhop_schema WHERE id = 1",
            [],
            |row| row.get(0),
        )
        .optional()?;
    Ok(version.unwrap_or(0))
}

/// Applies every PostgreSQL migration newer than the database's version.
pub fn migrate_postgres(conn: &mut Connection) -> Result<(), DbError> {
    let known = MIGRATIONS_POSTGRES.last().map_or(0, |m| m.version);
    conn.execute_batch(POSTGRES_VERSION_TABLE)?;
    let (mut first, mut applied) = (None, 0);
    for migration in MIGRATIONS_POSTGRES {
        let tx = conn.transaction()?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(?1)",
            [POSTGRES_MIGRATION_LOCK],
        )?;
        let found = postgres_version(&tx)?;
        if found > known {
            return Err(DbError::SchemaTooNew { found, known });
        }
        if migration.version <= found {
            continue;
        }
        let apply = || -> Result<(), sql::Error> {
            tx.execute_batch(migration.sql)?;
            tx.execute(
                "INSERT INTO stockhop_schema (id, version) VALUES (1, ?1)
                 ON CONFLICT (id) DO UPDATE SET version = excluded.version",
                [migration.version],
            )?;
            Ok(())
        };
        apply().map_err(|source| DbError::Migration {
            version: migration.version,
            name: migration.name,
            source,
        })?;
        tx.commit()?;
        first.get_or_insert(found);
        applied += 1;
        tracing::debug!(
            version = migration.version,
            name = migration.name,
            "migrated database"
        );
    }
    log_migrated(first.unwrap_or(known), known, applied);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order_from_one() {
        for (i, migration) in MIGRATIONS.iter().enumerate() {
            assert_eq!(migration.version, i as i64 + 1, "{}", migration.name);
        }
    }

    #[test]
    fn the_listener_queue_built_again_keeps_its_rows_and_its_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
        let before = MIGRATIONS
            .iter()
            .position(|m| m.name == "listener_queue_by_time")
            .unwrap();
        for migration in &MIGRATIONS[..before] {
            conn.execute_batch(migration.sql).unwrap();
        }
        conn.pragma_update(None, "user_version", before as i64)
            .unwrap();
        let insert = "INSERT INTO listener_queue (key, source, device_serial, event_id, kind,
                          subject, occurred_at, queued_at, rule_outcome, raw, state, repeat_of)
                      VALUES (?1, 'zebra', 'P1', ?2, 'tag_read', 'T', ?3, 1, 'accepted', x'7b7d', ?4, ?5)";
        let rows: [(&str, &str, i64, &str, Option<&str>); 3] = [
            ("k1", "e1", 100, "done", None),
            ("k2", "e2", 200, "pending", None),
            ("k3", "e3", 300, "pending", Some("k2")),
        ];
        for (key, event, at, state, of) in rows {
            conn.execute(insert, rusqlite::params![key, event, at, state, of])
                .unwrap();
        }
        // A later row, pruned: its number is never handed out again.
        conn.execute(
            insert,
            rusqlite::params!["k4", "e4", 400, "done", None::<&str>],
        )
        .unwrap();
        conn.execute("DELETE FROM listener_queue WHERE key = 'k4'", [])
            .unwrap();
        migrate(&mut conn).unwrap();
        let kept: Vec<(i64, String, String)> = conn
            .prepare("SELECT seq, key, state FROM listener_queue ORDER BY seq")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            kept,
            [
                (1, "k1", "done"),
                (2, "k2", "pending"),
                (3, "k3", "pending")
            ]
            .map(|(seq, key, state)| (seq, key.to_owned(), state.to_owned()))
        );
        conn.execute(
            insert,
            rusqlite::params!["k5", "e5", 500, "pending", None::<&str>],
        )
        .unwrap();
        let seq: i64 = conn
            .query_row("SELECT seq FROM listener_queue WHERE key = 'k5'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(seq, 5);
        // One record per terminal, instant and identity: the same identity
        // at another instant is another record.
        conn.execute(
            insert,
            rusqlite::params!["k6", "e5", 600, "pending", None::<&str>],
        )
        .unwrap();
        let again = conn.execute(
            insert,
            rusqlite::params!["k7", "e5", 600, "pending", None::<&str>],
        );
        assert!(again.unwrap_err().to_string().contains("UNIQUE"));
        let indexes: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'listener_queue'
                   AND name LIKE 'listener_queue_%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            indexes, 5,
            "pending, set aside, forwarded, dead, waiting repeat"
        );
    }

    #[test]
    fn first_open_creates_and_migrates_with_durable_settings() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("nested/data");
        let db = Db::open(&data).unwrap();
        assert!(data.join(DB_FILE).exists());
        let newest = MIGRATIONS.last().unwrap().version;
        assert_eq!(db.schema_version().unwrap(), newest);
        db.call_blocking(|conn| {
            let conn = conn.as_sqlite().unwrap();
            let mode: String = conn
                .pragma_query_value(None, "journal_mode", |r| r.get(0))
                .unwrap();
            let sync: i64 = conn
                .pragma_query_value(None, "synchronous", |r| r.get(0))
                .unwrap();
            assert_eq!(mode, "wal");
            assert_eq!(sync, 2, "synchronous=FULL");
        });
        drop(db);
        let again = Db::open(&data).unwrap();
        assert_eq!(again.schema_version().unwrap(), newest);
    }

    #[test]
    fn a_database_argument_names_sqlite_or_postgres_and_hides_a_password() {
        let data = Path::new("/srv/data");
        assert_eq!(
            Database::from_arg(None, data),
            Database::Sqlite(data.join(DB_FILE))
        );
        assert_eq!(
            Database::from_arg(Some("/var/lib/ledger.sqlite"), data),
            Database::Sqlite(PathBuf::from("/var/lib/ledger.sqlite"))
        );
        let pg = Database::from_arg(Some("postgres://ops:s3cret@db.example:5432/ledger"), data);
        assert_eq!(pg.describe(), "postgres://ops:…@db.example:5432/ledger");
        let no_password = Database::from_arg(Some("postgresql://ops@db/ledger"), data);
        assert_eq!(no_password.describe(), "postgresql://ops@db/ledger");
    }

    #[test]
    fn the_writer_knows_who_waits_for_it_and_its_longest_hold() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.take_longest_hold();
        assert!(!db.writer_wanted());
        let waiter = db.clone();
        let held = Duration::from_millis(20);
        let thread = db.call_blocking(|_| {
            let thread = std::thread::spawn(move || waiter.call_blocking(|_| ()));
            while !db.writer_wanted() {
                std::thread::yield_now();
            }
            std::thread::sleep(held);
            thread
        });
        thread.join().unwrap();
        assert!(!db.writer_wanted());
        assert!(db.take_longest_hold() >= held);
        assert_eq!(db.take_longest_hold(), Duration::ZERO);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            conn.as_sqlite()
                .unwrap()
                .pragma_update(None, "user_version", 999)
                .unwrap()
        });
        drop(db);
        assert!(matches!(
            Db::open(dir.path()),
            Err(DbError::SchemaTooNew { found: 999, .. })
        ));
    }
}
