//! The one place that opens the site's embedded SQLite database and moves
//! its schema forward.
//!
//! The database lives in `<data dir>/stockhop.sqlite`, created on first
//! start. Every connection runs in WAL mode with `synchronous=FULL`, so a
//! transaction that returned from COMMIT survives a power cut: the ledger
//! and the terminal listener acknowledge only after such a commit.
//!
//! Migrations are numbered SQL files under `site/migrations/`, compiled in,
//! applied in order, each in its own transaction together with the bump of
//! `PRAGMA user_version`, so a crash mid-migration leaves the previous
//! version intact.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// The database file inside the data directory.
pub const DB_FILE: &str = "stockhop.sqlite";

/// How long a connection waits on another's write lock before failing with
/// `SQLITE_BUSY`; the server answers that as 503 with `Retry-After`.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements kept per connection: the ledger's hot path alone
/// runs more than rusqlite's default of 16, and re-preparing them on every
/// item costs more than the inserts.
pub const STATEMENT_CACHE_CAPACITY: usize = 64;

/// The schema, in order. A migration is never edited once released: add one.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "site",
        sql: include_str!("../migrations/0001_site.sql"),
    },
    Migration {
        version: 2,
        name: "ledger",
        sql: include_str!("../migrations/0002_ledger.sql"),
    },
    Migration {
        version: 3,
        name: "listener",
        sql: include_str!("../migrations/0003_listener.sql"),
    },
    Migration {
        version: 4,
        name: "site_view",
        sql: include_str!("../migrations/0004_site_view.sql"),
    },
    Migration {
        version: 5,
        name: "reference",
        sql: include_str!("../migrations/0005_reference.sql"),
    },
];

pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot create data directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database schema version {found} is newer than this binary knows ({known})")]
    SchemaTooNew { found: i64, known: i64 },
    #[error("migration {version} ({name}) failed: {source}")]
    Migration {
        version: i64,
        name: &'static str,
        source: rusqlite::Error,
    },
    #[error("database task failed: {0}")]
    Task(String),
}

/// The site database: one connection for writes, shared behind a mutex and
/// used from blocking threads so SQLite's fsync never stalls the runtime.
#[derive(Clone)]
pub struct Db {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl Db {
    /// Opens (creating on first start) the database in `data_dir` and
    /// migrates it to the newest schema.
    pub fn open(data_dir: &Path) -> Result<Db, DbError> {
        std::fs::create_dir_all(data_dir).map_err(|source| DbError::CreateDir {
            path: data_dir.to_owned(),
            source,
        })?;
        let path = data_dir.join(DB_FILE);
        let mut conn = open_connection(&path)?;
        migrate(&mut conn)?;
        Ok(Db {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `work` on the connection on a blocking thread.
    pub async fn call<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut guard = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            work(&mut guard)
        })
        .await
        .map_err(|err| E::from(DbError::Task(err.to_string())))?
    }

    /// Runs `work` on the connection on the current thread (CLI commands, tests).
    pub fn call_blocking<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> T {
        let mut guard = self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(&mut guard)
    }

    /// The schema version the database is at.
    pub fn schema_version(&self) -> Result<i64, DbError> {
        self.call_blocking(|conn| {
            Ok(conn.pragma_query_value(None, "user_version", |row| row.get(0))?)
        })
    }
}

/// Opens a connection with the site's durability settings.
pub fn open_connection(path: &Path) -> Result<Connection, DbError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

/// Applies every migration newer than the database's `user_version`.
pub fn migrate(conn: &mut Connection) -> Result<(), DbError> {
    let known = MIGRATIONS.last().map_or(0, |m| m.version);
    let found: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > known {
        return Err(DbError::SchemaTooNew { found, known });
    }
    for migration in MIGRATIONS.iter().filter(|m| m.version > found) {
        let apply = |conn: &mut Connection| -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            tx.execute_batch(migration.sql)?;
            tx.pragma_update(None, "user_version", migration.version)?;
            tx.commit()
        };
        apply(conn).map_err(|source| DbError::Migration {
            version: migration.version,
            name: migration.name,
            source,
        })?;
        tracing::info!(
            version = migration.version,
            name = migration.name,
            "migrated database"
        );
    }
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
    fn first_open_creates_and_migrates_with_durable_settings() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("nested/data");
        let db = Db::open(&data).unwrap();
        assert!(data.join(DB_FILE).exists());
        let newest = MIGRATIONS.last().unwrap().version;
        assert_eq!(db.schema_version().unwrap(), newest);
        db.call_blocking(|conn| {
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
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| conn.pragma_update(None, "user_version", 999).unwrap());
        drop(db);
        assert!(matches!(
            Db::open(dir.path()),
            Err(DbError::SchemaTooNew { found: 999, .. })
        ));
    }
}
