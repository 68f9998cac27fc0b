//! PostgreSQL under the ledger's SQL API: tokio-postgres connections from a
//! deadpool pool, each driven on the thread that uses it
//! ([`super::pg_driver`]).
//!
//! The ledger's work is synchronous and runs on blocking threads (as it
//! does on SQLite); a statement is awaited on the calling thread, which
//! drives the connection's socket while it waits.
//!
//! Each statement is a round trip, which on PostgreSQL costs more than the
//! statement: a write whose result the ledger does not read (a claim, a
//! unit's new place) can wait inside a transaction and travel with the
//! next statement, pipelined ([`PgConn::execute_later`]).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::error::Error as StdError;
use std::str::FromStr;
use std::time::Duration;

use bytes::BytesMut;
use deadpool::managed::Pool;
use tokio_postgres::config::{LoadBalanceHosts, TargetSessionAttrs};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};

use super::pg_driver::{Opener, PG_WAIT};
use super::pg_error::describe;
use super::{Connection, Error, Value, ValueRef};

/// Connections a site server keeps to PostgreSQL: the admission gate lets
/// two sync requests write at once; the rest serve reads (reference pages,
/// the site's view) and the CLI beside them.
pub const PG_POOL_SIZE: usize = 8;

/// How long a statement waits for a lock another transaction holds before
/// it fails as busy: SQLite's busy timeout, for the same reason.
pub const PG_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

type BoxError = Box<dyn StdError + Sync + Send>;

/// A pool of connections to one PostgreSQL database.
#[derive(Clone)]
pub struct PgPool {
    pool: Pool<Opener>,
}

impl PgPool {
    /// Parses `url` (`postgres://user@host:port/database`) and opens the
    /// pool; the first connection is made (and checked) here.
    pub fn connect(url: &str) -> Result<PgPool, Error> {
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|err| Error::Unavailable(format!("bad database URL: {err}")))?;
        if config.get_target_session_attrs() != TargetSessionAttrs::Any
            || config.get_load_balance_hosts() != LoadBalanceHosts::Disable
        {
            return Err(Error::Unavailable(
                "bad database URL: target_session_attrs and load_balance_hosts are not \
                 supported; the ledger connects to the first host that answers"
                    .into(),
            ));
        }
        // Notices (a migration's "already exists, skipping") are not the
        // ledger's to report: warnings and errors still come.
        let options = format!(
            "{} -c lock_timeout={} -c client_min_messages=warning",
            config.get_options().unwrap_or_default(),
            PG_LOCK_TIMEOUT.as_millis()
        );
        config.options(options.trim_start());
        let pool = Pool::builder(Opener { config })
            .max_size(PG_POOL_SIZE)
            .runtime(deadpool::Runtime::Smol2)
            .wait_timeout(Some(PG_WAIT))
            .create_timeout(Some(PG_WAIT))
            .build()
            .map_err(|err| Error::Unavailable(err.to_string()))?;
        let pool = PgPool { pool };
        match pool.connection() {
            Connection::Unavailable(why) => Err(Error::Unavailable(why)),
            _ => Ok(pool),
        }
    }

    /// A connection from the pool, or one whose every statement fails with
    /// why none could be had.
    pub fn connection(&self) -> Connection {
        // Waiting for a free connection needs a waker and a timer, which
        // async-io gives on any thread.
        match async_io::block_on(self.pool.get()) {
            Ok(driven) => Connection::Postgres(PgConn {
                driven: Box::new(driven),
                changes: Cell::new(0),
                in_transaction: Cell::new(false),
                aborted: Cell::new(false),
                later: RefCell::new(Vec::new()),
            }),
            Err(deadpool::managed::PoolError::Backend(Error::Unavailable(why))) => {
                Connection::Unavailable(why)
            }
            Err(deadpool::managed::PoolError::Backend(err)) => {
                Connection::Unavailable(err.to_string())
            }
            Err(err) => Connection::Unavailable(err.to_string()),
        }
    }
}

/// One pooled connection; back to the pool when dropped.
pub struct PgConn {
    /// Boxed: an open connection is large beside SQLite's handle.
    driven: Box<deadpool::managed::Object<Opener>>,
    pub(super) changes: Cell<u64>,
    in_transaction: Cell<bool>,
    /// A statement failed in the open transaction (since it began, or
    /// since the last `ROLLBACK TO`): PostgreSQL takes no more statements
    /// in it until it is rolled back.
    aborted: Cell<bool>,
    /// Writes of the open transaction not sent yet, in order
    /// ([`PgConn::execute_later`]).
    later: RefCell<Vec<Later>>,
}

/// A write that waits for the next statement: the statement and its
/// parameters, owned.
struct Later {
    statement: tokio_postgres::Statement,
    values: Vec<Value>,
}

impl PgConn {
    fn client(&self) -> &tokio_postgres::Client {
        &self.driven.client
    }

    /// Prepares `sql`, or finds it prepared on this connection. Writes
    /// that wait stay waiting: a prepared statement changes no data.
    pub(super) fn prepare(&self, sql: &str) -> Result<tokio_postgres::Statement, Error> {
        let sql = placeholders(sql);
        if let Some(statement) = self.driven.statements.borrow().get(sql.as_ref()) {
            return Ok(statement.clone());
        }
        let statement = self.noted(self.driven.run(self.client().prepare(&sql)))?;
        self.driven
            .statements
            .borrow_mut()
            .insert(sql.into_owned(), statement.clone());
        Ok(statement)
    }

    /// Runs `next` after the writes waiting for it, all sent at once and
    /// answered in order: one round trip. A waiting write's failure is the
    /// answer (the transaction is aborted; `next` then failed too).
    fn pipelined<T>(
        &self,
        next: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, Error> {
        let later = self.later.take();
        if later.is_empty() {
            return self.noted(self.driven.run(next));
        }
        let (written, result) = self
            .driven
            .run(futures_util::future::join(self.send(&later), next));
        self.noted(written)?;
        self.noted(result)
    }

    /// The waiting writes, sent together; the first failure, if any.
    async fn send(&self, later: &[Later]) -> Result<(), tokio_postgres::Error> {
        let writes = later.iter().map(|write| {
            self.client().execute_raw(
                &write.statement,
                write.values.iter().map(|value| Param(value.as_ref())),
            )
        });
        for changed in futures_util::future::join_all(writes).await {
            // Counted as one change when it was put off.
            self.changes
                .set(self.changes.get() + changed?.saturating_sub(1));
        }
        Ok(())
    }

    /// Sends the writes waiting for a next statement, on their own.
    pub(super) fn flush(&self) -> Result<(), Error> {
        let later = self.later.take();
        if later.is_empty() {
            return Ok(());
        }
        self.noted(self.driven.run(self.send(&later)))
    }

    /// Runs a write whose result the caller does not read. Inside a
    /// transaction it waits and goes with the next statement (or
    /// [`PgConn::flush`]), which answers with its failure if it fails;
    /// outside one it runs now. It counts as one change at once.
    pub(super) fn execute_later(
        &self,
        statement: &tokio_postgres::Statement,
        values: &[ValueRef<'_>],
    ) -> Result<(), Error> {
        if !self.in_transaction.get() {
            return self.execute(statement, values).map(drop);
        }
        self.later.borrow_mut().push(Later {
            statement: statement.clone(),
            values: values.iter().map(|value| owned(*value)).collect(),
        });
        self.changes.set(self.changes.get() + 1);
        Ok(())
    }

    /// Notes a statement's failure inside a transaction, which PostgreSQL
    /// has aborted.
    fn noted<T>(&self, result: Result<T, tokio_postgres::Error>) -> Result<T, Error> {
        if result.is_err() && self.in_transaction.get() {
            self.aborted.set(true);
        }
        result.map_err(Error::Postgres)
    }

    pub(super) fn batch(&self, sql: &str) -> Result<(), Error> {
        let mut words = sql.split_whitespace().map(str::to_ascii_uppercase);
        let (first, second) = (words.next(), words.next());
        // Writes put off inside what a rollback undoes are never sent;
        // anything else runs after them.
        let result = if first.as_deref() == Some("ROLLBACK") {
            self.later.borrow_mut().clear();
            self.noted(self.driven.run(self.client().batch_execute(sql)))
        } else {
            self.flush()
                .and_then(|()| self.noted(self.driven.run(self.client().batch_execute(sql))))
        };
        // The server knows whether a transaction is open, but says so only
        // in a reply's status byte, which the client does not expose: the
        // connection follows the transaction statements it sends itself.
        let ended = |conn: &PgConn| {
            conn.in_transaction.set(false);
            conn.aborted.set(false);
        };
        match (first.as_deref(), second.as_deref()) {
            (Some("BEGIN" | "START"), _) if result.is_ok() => {
                self.in_transaction.set(true);
                self.aborted.set(false);
            }
            (Some("COMMIT" | "END"), _) => ended(self),
            (Some("ROLLBACK"), Some("TO")) if result.is_ok() => self.aborted.set(false),
            (Some("ROLLBACK"), _) => ended(self),
            _ => {}
        }
        result
    }

    pub(super) fn in_transaction(&self) -> bool {
        self.in_transaction.get()
    }

    pub(super) fn aborted(&self) -> bool {
        self.aborted.get()
    }

    pub(super) fn execute(
        &self,
        statement: &tokio_postgres::Statement,
        values: &[ValueRef<'_>],
    ) -> Result<usize, Error> {
        let params = Param::all(values);
        let refs = Param::refs(&params);
        let changed = self.pipelined(self.client().execute(statement, &refs))?;
        self.changes.set(self.changes.get() + changed);
        Ok(usize::try_from(changed).unwrap_or(usize::MAX))
    }

    pub(super) fn query(
        &self,
        statement: &tokio_postgres::Statement,
        values: &[ValueRef<'_>],
        writes: bool,
    ) -> Result<Vec<Vec<Value>>, Error> {
        let params = Param::all(values);
        let refs = Param::refs(&params);
        let rows = self.pipelined(self.client().query(statement, &refs))?;
        // INSERT … RETURNING and UPDATE … RETURNING write too.
        if writes {
            self.changes.set(self.changes.get() + rows.len() as u64);
        }
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|column| {
                        row.try_get::<_, Column>(column)
                            .map(|cell| cell.0)
                            .map_err(|err| Error::conversion(column, describe(&err)))
                    })
                    .collect()
            })
            .collect()
    }
}

/// Whether `sql` writes (so the rows it returns count as changes).
pub(super) fn writes(sql: &str) -> bool {
    let first = sql.split_whitespace().next().unwrap_or_default();
    ["INSERT", "UPDATE", "DELETE"]
        .iter()
        .any(|verb| first.eq_ignore_ascii_case(verb))
}

/// `?N` → `$N` and `?` → the next number, outside quotes and comments.
fn placeholders(sql: &str) -> Cow<'_, str> {
    if !sql.contains('?') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut next = 1_u32;
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    out.push(c);
                }
                '-' if chars.peek() == Some(&'-') => {
                    out.push(c);
                    for c in chars.by_ref() {
                        out.push(c);
                        if c == '\n' {
                            break;
                        }
                    }
                }
                '?' => {
                    let mut digits = String::new();
                    while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                        digits.push(*d);
                        chars.next();
                    }
                    out.push('$');
                    if digits.is_empty() {
                        out.push_str(&next.to_string());
                        next += 1;
                    } else {
                        next = next.max(digits.parse::<u32>().unwrap_or(0) + 1);
                        out.push_str(&digits);
                    }
                }
                _ => out.push(c),
            },
        }
    }
    Cow::Owned(out)
}

fn owned(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(v) => Value::Integer(v),
        ValueRef::Real(v) => Value::Real(v),
        ValueRef::Text(v) => Value::Text(v.to_owned()),
        ValueRef::Blob(v) => Value::Blob(v.to_vec()),
    }
}

/// A parameter, typed by what PostgreSQL inferred for its place.
#[derive(Debug)]
struct Param<'a>(ValueRef<'a>);

impl<'a> Param<'a> {
    fn all(values: &[ValueRef<'a>]) -> Vec<Param<'a>> {
        values.iter().map(|value| Param(*value)).collect()
    }

    fn refs<'p>(params: &'p [Param<'a>]) -> Vec<&'p (dyn ToSql + Sync)> {
        params
            .iter()
            .map(|param| param as &(dyn ToSql + Sync))
            .collect()
    }
}

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        let mismatch = |what: &str| -> BoxError {
            format!("{what} cannot be bound to a {ty} parameter").into()
        };
        match self.0 {
            ValueRef::Null => Ok(IsNull::Yes),
            ValueRef::Integer(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(v)?.to_sql(ty, out),
                Type::BOOL => (v != 0).to_sql(ty, out),
                Type::FLOAT8 => (v as f64).to_sql(ty, out),
                Type::FLOAT4 => (v as f32).to_sql(ty, out),
                _ if <&str as ToSql>::accepts(ty) => v.to_string().as_str().to_sql(ty, out),
                _ => Err(mismatch("an integer")),
            },
            ValueRef::Real(v) => match *ty {
                Type::FLOAT8 => v.to_sql(ty, out),
                Type::FLOAT4 => (v as f32).to_sql(ty, out),
                _ if <&str as ToSql>::accepts(ty) => v.to_string().as_str().to_sql(ty, out),
                _ => Err(mismatch("a real")),
            },
            ValueRef::Text(v) => match *ty {
                _ if <&str as ToSql>::accepts(ty) => v.to_sql(ty, out),
                Type::BYTEA => v.as_bytes().to_sql(ty, out),
                _ => Err(mismatch("text")),
            },
            ValueRef::Blob(v) => match *ty {
                Type::BYTEA => v.to_sql(ty, out),
                _ => Err(mismatch("a blob")),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column's value, read by the type PostgreSQL says it has.
struct Column(Value);

impl<'a> FromSql<'a> for Column {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Column, BoxError> {
        Ok(Column(match *ty {
            Type::INT8 => Value::Integer(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Integer(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT2 => Value::Integer(i64::from(i16::from_sql(ty, raw)?)),
            Type::OID => Value::Integer(i64::from(u32::from_sql(ty, raw)?)),
            Type::BOOL => Value::Integer(i64::from(bool::from_sql(ty, raw)?)),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f64::from(f32::from_sql(ty, raw)?)),
            Type::BYTEA => Value::Blob(Vec::<u8>::from_sql(ty, raw)?),
            _ if <String as FromSql>::accepts(ty) => Value::Text(String::from_sql(ty, raw)?),
            _ => {
                return Err(format!(
                    "a {ty} column is not read by the ledger; CAST it to BIGINT or TEXT"
                )
                .into())
            }
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Column, BoxError> {
        Ok(Column(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

pub(super) fn is_conflict(err: &tokio_postgres::Error) -> bool {
    err.code().is_some_and(|code| {
        *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED
    })
}

pub(super) fn is_busy(err: &tokio_postgres::Error) -> bool {
    server_unavailable(err)
        || err.code().is_some_and(|code| {
            [
                SqlState::T_R_SERIALIZATION_FAILURE,
                SqlState::T_R_DEADLOCK_DETECTED,
                SqlState::LOCK_NOT_AVAILABLE,
                SqlState::TOO_MANY_CONNECTIONS,
            ]
            .contains(code)
        })
}

/// Whether the server is not taking work for now: the connection was cut,
/// or the server said it is starting up, in recovery, shutting down, or
/// ending connections after a crash of one of its processes.
pub fn server_unavailable(err: &tokio_postgres::Error) -> bool {
    err.is_closed()
        || err.code().is_some_and(|code| {
            [
                SqlState::CANNOT_CONNECT_NOW,
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
            ]
            .contains(code)
        })
}

/// The schema names each unique constraint `u__TABLE__COLUMN[__COLUMN…]`;
/// the ledger reads violations by the columns, as SQLite lists them.
pub(super) fn unique_violation(err: &tokio_postgres::Error) -> Option<String> {
    let db = err.as_db_error()?;
    if *db.code() != SqlState::UNIQUE_VIOLATION {
        return None;
    }
    let name = db.constraint().unwrap_or_default();
    let mut parts = name.strip_prefix("u__")?.split("__");
    let Some(table) = parts.next() else {
        return Some(name.to_owned());
    };
    Some(
        parts
            .map(|column| format!("{table}.{column}"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_and_bare_parameters_become_dollar_numbers_outside_quotes() {
        assert_eq!(
            placeholders("SELECT a FROM t WHERE b = ?1 AND c = ?2 AND d = '?'"),
            "SELECT a FROM t WHERE b = $1 AND c = $2 AND d = '?'"
        );
        assert_eq!(placeholders("VALUES (?, ?, ?)"), "VALUES ($1, $2, $3)");
        assert_eq!(
            placeholders("SELECT 1 -- why?\nFROM t"),
            "SELECT 1 -- why?\nFROM t"
        );
        assert_eq!(placeholders("SELECT \"a?\" FROM t"), "SELECT \"a?\" FROM t");
        assert!(matches!(placeholders("SELECT 1"), Cow::Borrowed(_)));
    }
}
