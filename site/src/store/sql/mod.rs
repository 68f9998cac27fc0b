//! The ledger's SQL edge: one API over the embedded SQLite and over
//! PostgreSQL.
//!
//! The ledger's code is written once, against [`Connection`]: `execute`,
//! `query_row`, `prepare_cached` and statements that `query_map`, shaped
//! like rusqlite's so the SQL reads the same as before. Its SQL is the
//! dialect both engines run (`ON CONFLICT`, `RETURNING`, `COALESCE`, `CAST`)
//! with `?N` parameters; on PostgreSQL they become `$N` and every value is
//! typed at the edge by what the server says the parameter or column is
//! (`postgres.rs`). A site keeps its embedded SQLite; a central ledger, or a
//! site whose operations team runs PostgreSQL, names it with `--database`.
//!
//! Transactions: SQLite's are `BEGIN IMMEDIATE` on the one writer
//! connection. PostgreSQL's are SERIALIZABLE: the ledger's rules read and
//! then write (a session's next `client_seq`, a unit's version, a GRN
//! line's quantity, whether a count is open), and SERIALIZABLE makes each
//! transaction's reads hold as if it ran alone, without a lock taken by
//! hand at each read; a conflict fails one transaction with SQLSTATE
//! 40001, which [`Error::is_busy`] counts as busy (retried, or 503).

mod pg_driver;
mod pg_error;
mod postgres;
mod value;

use std::cell::Cell;

pub use crate::params;
pub use postgres::{server_unavailable, PgPool, PG_POOL_SIZE};
pub use value::{FromSql, Params, ToSql, Value, ValueRef};

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which engine a connection speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// Why a statement failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("sqlite: {0}")]
    Sqlite(rusqlite::Error),
    #[error("postgres: {}", pg_error::describe(.0))]
    Postgres(tokio_postgres::Error),
    /// No connection to PostgreSQL could be had (the pool's wait ran out,
    /// or the server refused).
    #[error("postgres connection: {0}")]
    Unavailable(String),
    #[error("query returned no rows")]
    QueryReturnedNoRows,
    #[error("column {column}: {detail}")]
    FromSqlConversionFailure { column: usize, detail: String },
    #[error("parameter: {0}")]
    ToSqlConversionFailure(String),
}

impl Error {
    /// A stored value that does not read as the type the ledger expects.
    pub fn conversion(column: usize, detail: impl Into<String>) -> Error {
        Error::FromSqlConversionFailure {
            column,
            detail: detail.into(),
        }
    }

    /// Whether the same work may succeed if run again unchanged: SQLite's
    /// write lock was held too long, PostgreSQL found the transaction in a
    /// serialization conflict or deadlock, or no connection was free.
    pub fn is_busy(&self) -> bool {
        match self {
            Error::Sqlite(err) => sqlite_busy(err),
            Error::Postgres(err) => postgres::is_busy(err),
            Error::Unavailable(_) => true,
            _ => false,
        }
    }

    /// Whether the database refused the write for lack of space: SQLite's
    /// `SQLITE_FULL`, PostgreSQL's `disk_full` (53100).
    pub fn is_storage_full(&self) -> bool {
        match self {
            Error::Sqlite(err) => sqlite_full(err),
            Error::Postgres(err) => err
                .code()
                .is_some_and(|code| *code == tokio_postgres::error::SqlState::DISK_FULL),
            _ => false,
        }
    }

    /// Whether PostgreSQL ended the transaction in a serialization
    /// conflict or a deadlock: run again from the start, it may well pass.
    pub fn is_conflict(&self) -> bool {
        match self {
            Error::Postgres(err) => postgres::is_conflict(err),
            _ => false,
        }
    }

    /// For a unique-constraint violation, the violated columns as SQLite
    /// names them: `table.column, table.column`.
    pub fn unique_violation(&self) -> Option<String> {
        match self {
            Error::Sqlite(rusqlite::Error::SqliteFailure(failure, message)) => {
                let unique = matches!(
                    failure.extended_code,
                    rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                        | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                );
                if !unique {
                    return None;
                }
                let message = message.as_deref().unwrap_or_default();
                Some(
                    message
                        .strip_prefix("UNIQUE constraint failed: ")
                        .unwrap_or(message)
                        .to_owned(),
                )
            }
            Error::Postgres(err) => postgres::unique_violation(err),
            _ => None,
        }
    }
}

/// Whether SQLite's write lock was held past the busy timeout.
pub fn sqlite_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Whether SQLite refused a write for lack of space (`SQLITE_FULL`).
pub fn sqlite_full(err: &rusqlite::Error) -> bool {
    err.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
}

impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Error {
        match err {
            rusqlite::Error::QueryReturnedNoRows => Error::QueryReturnedNoRows,
            other => Error::Sqlite(other),
        }
    }
}

/// `.optional()` on a single-row read: no row is `None`, not an error.
pub trait OptionalExtension<T> {
    fn optional(self) -> Result<Option<T>>;
}

impl<T> OptionalExtension<T> for Result<T> {
    fn optional(self) -> Result<Option<T>> {
        match self {
            Ok(value) => Ok(Some(value)),
            Err(Error::QueryReturnedNoRows) => Ok(None),
            Err(err) => Err(err),
        }
    }
}

/// How a transaction takes its locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionBehavior {
    /// SQLite takes the write lock at the first write.
    Deferred,
    /// SQLite takes the write lock at `BEGIN`, so the transaction never
    /// fails to upgrade halfway through its work.
    Immediate,
}

/// One connection to the ledger's database.
pub enum Connection {
    Sqlite(rusqlite::Connection),
    Postgres(postgres::PgConn),
    /// PostgreSQL could not give a connection; every statement fails with
    /// this error, so the work's own error path reports it.
    Unavailable(String),
}

impl Connection {
    pub fn engine(&self) -> Engine {
        match self {
            Connection::Sqlite(_) => Engine::Sqlite,
            Connection::Postgres(_) | Connection::Unavailable(_) => Engine::Postgres,
        }
    }

    /// The SQLite connection underneath, for what only SQLite has
    /// (pragmas, backups).
    pub fn as_sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Connection::Sqlite(conn) => Some(conn),
            _ => None,
        }
    }

    fn unavailable(&self) -> Option<Error> {
        match self {
            Connection::Unavailable(why) => Some(Error::Unavailable(why.clone())),
            _ => None,
        }
    }

    /// Prepares `sql` once per connection and reuses it.
    pub fn prepare_cached(&self, sql: &str) -> Result<Statement<'_>> {
        match self {
            Connection::Sqlite(conn) => Ok(Statement::Sqlite(SqliteStatement::Cached(
                conn.prepare_cached(sql)?,
            ))),
            Connection::Postgres(conn) => Ok(Statement::Postgres {
                conn,
                statement: conn.prepare(sql)?,
                writes: postgres::writes(sql),
            }),
            Connection::Unavailable(why) => Err(Error::Unavailable(why.clone())),
        }
    }

    /// Prepares `sql` for this use only (PostgreSQL caches every statement).
    pub fn prepare(&self, sql: &str) -> Result<Statement<'_>> {
        match self {
            Connection::Sqlite(conn) => Ok(Statement::Sqlite(SqliteStatement::Plain(
                conn.prepare(sql)?,
            ))),
            _ => self.prepare_cached(sql),
        }
    }

    /// Runs one statement; returns the rows it changed.
    pub fn execute<P: Params>(&self, sql: &str, params: P) -> Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    /// Reads the first row of `sql`; no row is [`Error::QueryReturnedNoRows`].
    pub fn query_row<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        self.prepare_cached(sql)?.query_row(params, f)
    }

    /// Runs statements without parameters, separated by `;`.
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        if let Some(err) = self.unavailable() {
            return Err(err);
        }
        match self {
            Connection::Sqlite(conn) => Ok(conn.execute_batch(sql)?),
            Connection::Postgres(conn) => conn.batch(sql),
            Connection::Unavailable(_) => unreachable!("answered above"),
        }
    }

    /// Sends the writes [`Statement::execute_later`] put off, and answers
    /// with their failure: what an item's savepoint and a commit do first,
    /// so a write's failure is reported for the work that made it.
    pub fn flush(&self) -> Result<()> {
        match self {
            Connection::Postgres(conn) => conn.flush(),
            Connection::Sqlite(_) | Connection::Unavailable(_) => Ok(()),
        }
    }

    /// Whether a transaction is open on this connection.
    pub fn in_transaction(&self) -> bool {
        match self {
            Connection::Sqlite(conn) => !conn.is_autocommit(),
            Connection::Postgres(conn) => conn.in_transaction(),
            Connection::Unavailable(_) => false,
        }
    }

    /// Whether a statement failed in the open transaction (since it
    /// began, or since the last `ROLLBACK TO`) and left it aborted:
    /// PostgreSQL runs nothing more in it until it is rolled back. A failed
    /// SQLite statement undoes only itself, so this is never true there.
    pub fn transaction_aborted(&self) -> bool {
        match self {
            Connection::Postgres(conn) => conn.aborted(),
            Connection::Sqlite(_) | Connection::Unavailable(_) => false,
        }
    }

    /// The statement that opens a write transaction: SQLite takes its
    /// write lock at once; PostgreSQL runs it SERIALIZABLE.
    pub fn begin_write(&self) -> &'static str {
        match self.engine() {
            Engine::Sqlite => "BEGIN IMMEDIATE",
            Engine::Postgres => "BEGIN ISOLATION LEVEL SERIALIZABLE",
        }
    }

    /// Rows changed by every statement this connection has run: a change
    /// in it tells that a piece of work wrote.
    pub fn total_changes(&self) -> u64 {
        match self {
            Connection::Sqlite(conn) => conn.total_changes(),
            Connection::Postgres(conn) => conn.changes.get(),
            Connection::Unavailable(_) => 0,
        }
    }

    /// Begins a transaction, rolled back unless committed.
    pub fn transaction(&mut self) -> Result<Transaction<'_>> {
        self.transaction_with_behavior(TransactionBehavior::Deferred)
    }

    pub fn transaction_with_behavior(
        &mut self,
        behavior: TransactionBehavior,
    ) -> Result<Transaction<'_>> {
        let begin = match (self.engine(), behavior) {
            (Engine::Sqlite, TransactionBehavior::Deferred) => "BEGIN DEFERRED",
            _ => self.begin_write(),
        };
        self.execute_batch(begin)?;
        Ok(Transaction {
            conn: self,
            open: Cell::new(true),
        })
    }
}

/// An open transaction; it derefs to its connection.
pub struct Transaction<'c> {
    conn: &'c mut Connection,
    open: Cell<bool>,
}

impl Transaction<'_> {
    pub fn commit(self) -> Result<()> {
        // A write that was put off and fails leaves the transaction to be
        // rolled back when it drops.
        self.conn.flush()?;
        self.open.set(false);
        let started = std::time::Instant::now();
        let committed = self.conn.execute_batch("COMMIT");
        crate::store::writer::note_commit(started.elapsed());
        committed
    }

    pub fn rollback(self) -> Result<()> {
        self.open.set(false);
        self.conn.execute_batch("ROLLBACK")
    }
}

impl std::ops::Deref for Transaction<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.open.get() {
            // A failed statement may already have ended the transaction
            // (SQLite after a full disk); there is nothing left to undo then.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

enum SqliteStatement<'c> {
    Cached(rusqlite::CachedStatement<'c>),
    Plain(rusqlite::Statement<'c>),
}

impl<'c> SqliteStatement<'c> {
    fn get(&mut self) -> &mut rusqlite::Statement<'c> {
        match self {
            SqliteStatement::Cached(statement) => statement,
            SqliteStatement::Plain(statement) => statement,
        }
    }
}

/// A prepared statement.
pub enum Statement<'c> {
    #[allow(private_interfaces)]
    Sqlite(SqliteStatement<'c>),
    #[allow(private_interfaces)]
    Postgres {
        conn: &'c postgres::PgConn,
        statement: tokio_postgres::Statement,
        writes: bool,
    },
}

/// A parameter bound to SQLite as the value it is.
struct Bind<'a>(ValueRef<'a>);

impl rusqlite::ToSql for Bind<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef as Sqlite};
        Ok(ToSqlOutput::Borrowed(match self.0 {
            ValueRef::Null => Sqlite::Null,
            ValueRef::Integer(v) => Sqlite::Integer(v),
            ValueRef::Real(v) => Sqlite::Real(v),
            ValueRef::Text(v) => Sqlite::Text(v.as_bytes()),
            ValueRef::Blob(v) => Sqlite::Blob(v),
        }))
    }
}

impl Statement<'_> {
    pub fn execute<P: Params>(&mut self, params: P) -> Result<usize> {
        let values = params.values()?;
        match self {
            Statement::Sqlite(statement) => Ok(statement
                .get()
                .execute(rusqlite::params_from_iter(values.into_iter().map(Bind)))?),
            Statement::Postgres {
                conn, statement, ..
            } => conn.execute(statement, &values),
        }
    }

    /// Runs a write whose changed-row count the caller does not read. On
    /// PostgreSQL inside a transaction it waits and is sent with the next
    /// statement, in the same round trip; if it fails, that statement (or
    /// [`Connection::flush`], or the commit) answers with its error, and
    /// the transaction is aborted. On SQLite it runs now.
    pub fn execute_later<P: Params>(&mut self, params: P) -> Result<()> {
        match self {
            Statement::Postgres {
                conn, statement, ..
            } => conn.execute_later(statement, &params.values()?),
            Statement::Sqlite(_) => self.execute(params).map(drop),
        }
    }

    /// Every row, read now, each through `f`; collect into a `Result`.
    pub fn query_map<T, P: Params>(
        &mut self,
        params: P,
        mut f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<std::vec::IntoIter<Result<T>>> {
        let mut out = Vec::new();
        let mut rows = self.query(params)?;
        while let Some(row) = rows.next()? {
            let mapped = f(&row);
            let failed = mapped.is_err();
            out.push(mapped);
            if failed {
                break;
            }
        }
        Ok(out.into_iter())
    }

    pub fn query_row<T, P: Params>(
        &mut self,
        params: P,
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        let mut rows = self.query(params)?;
        match rows.next()? {
            Some(row) => f(&row),
            None => Err(Error::QueryReturnedNoRows),
        }
    }

    /// Whether the statement returns at least one row.
    pub fn exists<P: Params>(&mut self, params: P) -> Result<bool> {
        Ok(self.query(params)?.next()?.is_some())
    }

    pub fn query<P: Params>(&mut self, params: P) -> Result<Rows<'_>> {
        let values = params.values()?;
        match self {
            Statement::Sqlite(statement) => {
                Ok(Rows::Sqlite(statement.get().query(
                    rusqlite::params_from_iter(values.into_iter().map(Bind)),
                )?))
            }
            Statement::Postgres {
                conn,
                statement,
                writes,
            } => Ok(Rows::Values {
                rows: conn.query(statement, &values, *writes)?,
                next: 0,
            }),
        }
    }

    pub fn column_count(&self) -> usize {
        match self {
            Statement::Sqlite(SqliteStatement::Cached(statement)) => statement.column_count(),
            Statement::Sqlite(SqliteStatement::Plain(statement)) => statement.column_count(),
            Statement::Postgres { statement, .. } => statement.columns().len(),
        }
    }
}

/// A statement's rows, read one at a time.
pub enum Rows<'s> {
    Sqlite(rusqlite::Rows<'s>),
    Values { rows: Vec<Vec<Value>>, next: usize },
}

impl Rows<'_> {
    #[allow(clippy::should_implement_trait)] // a lending iterator: rows borrow the statement
    pub fn next(&mut self) -> Result<Option<Row<'_>>> {
        match self {
            Rows::Sqlite(rows) => Ok(rows.next()?.map(Row::Sqlite)),
            Rows::Values { rows, next } => {
                let row = rows.get(*next).map(|values| Row::Values(values));
                *next += 1;
                Ok(row)
            }
        }
    }
}

/// One row.
pub enum Row<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Values(&'r [Value]),
}

/// How a column is named when read: by its position from 0.
pub trait RowIndex {
    fn index(&self) -> usize;
}

impl RowIndex for usize {
    fn index(&self) -> usize {
        *self
    }
}

impl Row<'_> {
    pub fn get<I: RowIndex, T: FromSql>(&self, idx: I) -> Result<T> {
        let column = idx.index();
        T::column_result(self.get_ref(column)?).map_err(|detail| Error::conversion(column, detail))
    }

    pub fn get_ref(&self, column: usize) -> Result<ValueRef<'_>> {
        use rusqlite::types::ValueRef as Sqlite;
        match self {
            Row::Sqlite(row) => Ok(match row.get_ref(column)? {
                Sqlite::Null => ValueRef::Null,
                Sqlite::Integer(v) => ValueRef::Integer(v),
                Sqlite::Real(v) => ValueRef::Real(v),
                Sqlite::Text(v) => ValueRef::Text(std::str::from_utf8(v).map_err(|err| {
                    Error::conversion(column, format!("text is not UTF-8: {err}"))
                })?),
                Sqlite::Blob(v) => ValueRef::Blob(v),
            }),
            Row::Values(values) => values
                .get(column)
                .map(Value::as_ref)
                .ok_or_else(|| Error::conversion(column, "no such column")),
        }
    }
}

/// How many times a transaction that PostgreSQL ended in a serialization
/// conflict is run again before the conflict is answered as busy (503 with
/// `Retry-After`, which the device retries). Conflicts need two writers on
/// the same rows at once; five in a row means contention a retry here will
/// not clear.
pub const CONFLICT_ATTEMPTS: u32 = 5;

/// An error that may say PostgreSQL ended the transaction in a
/// serialization conflict ([`Error::is_conflict`]).
pub trait Conflicting {
    fn is_conflict(&self) -> bool;
}

impl Conflicting for Error {
    fn is_conflict(&self) -> bool {
        Error::is_conflict(self)
    }
}

/// Runs `attempt` (one whole transaction) again while PostgreSQL ends it
/// in a serialization conflict, up to [`CONFLICT_ATTEMPTS`] times. The work
/// is a function of the database and its input, so a rerun is the same
/// work on what the other transaction committed.
pub fn retry_conflicts<T, E: Conflicting + std::fmt::Display>(
    mut attempt: impl FnMut() -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    let mut tries = 1;
    loop {
        match attempt() {
            Err(err) if err.is_conflict() && tries < CONFLICT_ATTEMPTS => {
                tracing::debug!(%err, tries, "serialization conflict; running the transaction again");
                tries += 1;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> Connection {
        Connection::Sqlite(rusqlite::Connection::open_in_memory().unwrap())
    }

    #[test]
    fn a_dropped_transaction_rolls_back_and_a_committed_one_stays() {
        let mut conn = memory();
        conn.execute_batch("CREATE TABLE t (v INTEGER)").unwrap();
        {
            let tx = conn.transaction().unwrap();
            tx.execute("INSERT INTO t VALUES (?1)", [1_i64]).unwrap();
        }
        {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .unwrap();
            tx.execute("INSERT INTO t VALUES (?1)", crate::params![2_i64])
                .unwrap();
            tx.commit().unwrap();
        }
        let kept: Vec<i64> = conn
            .prepare("SELECT v FROM t")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(kept, vec![2]);
    }

    #[test]
    fn no_row_is_an_error_that_optional_turns_into_none() {
        let conn = memory();
        let none: Option<i64> = conn
            .query_row("SELECT 1 WHERE 0", [], |row| row.get(0))
            .optional()
            .unwrap();
        assert_eq!(none, None);
    }

    #[test]
    fn a_unique_violation_names_its_columns_as_sqlite_does() {
        let conn = memory();
        conn.execute_batch("CREATE TABLE t (a TEXT, b TEXT, UNIQUE (a, b))")
            .unwrap();
        conn.execute("INSERT INTO t VALUES ('x', 'y')", []).unwrap();
        let err = conn
            .execute("INSERT INTO t VALUES ('x', 'y')", [])
            .unwrap_err();
        assert_eq!(err.unique_violation().as_deref(), Some("t.a, t.b"));
        assert!(!err.is_busy());
    }

    #[test]
    fn an_unavailable_connection_fails_every_statement_with_its_reason() {
        let conn = Connection::Unavailable("pool timed out".into());
        let err = conn.execute("SELECT 1", []).unwrap_err();
        assert_eq!(err.to_string(), "postgres connection: pool timed out");
        assert!(err.is_busy());
    }
}
