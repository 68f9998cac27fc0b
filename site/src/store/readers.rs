//! Read-only connections to SQLite beside its one writer.
//!
//! In WAL mode a reader does not wait for the writer, nor the writer for
//! a reader. So what only reads (the site's view polling its status,
//! decisions, chart and fleet; every request's token or session lookup)
//! runs on one of these connections and takes no turn at the writer,
//! where it would have queued with the handhelds' syncs. Each read runs in
//! one read transaction, so what it returns is one snapshot of the ledger,
//! as a turn at the writer would have seen it.
//!
//! The connections are opened when first wanted, at most [`READERS_MAX`];
//! a read that finds them all busy waits for the next one freed. The
//! view's reads ([`Reader::View`]), which under a portal's load take a
//! tenth of a second or more, hold at most [`VIEW_READERS_MAX`] of them at
//! once, so a handheld's token lookup ([`Reader::Lookup`]) always finds
//! one of its own and never queues behind a page's poll.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};

use rusqlite::OpenFlags;

use crate::store::db::{DbError, BUSY_TIMEOUT, STATEMENT_CACHE_CAPACITY};
use crate::store::sql::Connection;

/// Read-only connections kept open at most. Reads are short (a poll of the
/// view, a token lookup) and the site has few cores; four lets a slow one
/// (a 24-hour chart) run beside token lookups without opening a file
/// handle per request under a flood.
pub const READERS_MAX: usize = 4;
/// Of [`READERS_MAX`], those the view's reads may hold at once: all but
/// one, kept for lookups.
pub const VIEW_READERS_MAX: usize = READERS_MAX - 1;

/// What a read is for, which says how many connections it may share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// A token or session looked up while a handheld or a person waits:
    /// one statement, any connection.
    Lookup,
    /// The view's and the APIs' reads: at most [`VIEW_READERS_MAX`] at once.
    View,
}

#[derive(Default)]
struct Pool {
    idle: Vec<rusqlite::Connection>,
    /// Connections open, idle or lent.
    open: usize,
    /// Connections lent to [`Reader::View`] reads.
    viewing: usize,
    /// New reads wait while the write-ahead log is started again
    /// ([`Readers::hold_back`]).
    held_back: bool,
    /// New view reads wait while a restart of the write-ahead log waits
    /// for the running ones to end ([`Readers::hold_back_views`]).
    views_held_back: bool,
}

/// The read-only connections to one SQLite file.
pub struct Readers {
    path: PathBuf,
    pool: Mutex<Pool>,
    freed: Condvar,
}

/// Reads held back until dropped: all of them ([`Readers::hold_back`])
/// or the view's ([`Readers::hold_back_views`]).
pub struct HeldBack<'r> {
    readers: &'r Readers,
    views_only: bool,
}

impl Drop for HeldBack<'_> {
    fn drop(&mut self) {
        let mut pool = self.readers.lock();
        if self.views_only {
            pool.views_held_back = false;
        } else {
            pool.held_back = false;
        }
        drop(pool);
        self.readers.freed.notify_all();
    }
}

/// A lent connection: back to the pool when dropped (closed instead if a
/// read left it inside a transaction it could not end).
struct Lent<'r> {
    readers: &'r Readers,
    reader: Reader,
    conn: Option<Connection>,
}

impl Readers {
    pub fn new(path: &Path) -> Readers {
        Readers {
            path: path.to_owned(),
            pool: Mutex::default(),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `work` on a read-only connection inside one read transaction,
    /// on the current thread. A statement that would write fails with
    /// SQLite's `attempt to write a readonly database`.
    pub fn read<T, E>(
        &self,
        reader: Reader,
        work: impl FnOnce(&mut Connection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<DbError>,
    {
        let mut lent = self.lend(reader)?;
        let conn = lent.conn.as_mut().expect("a lent connection");
        let Connection::Sqlite(sqlite) = conn else {
            unreachable!("readers are SQLite connections")
        };
        sqlite.execute_batch("BEGIN").map_err(DbError::from)?;
        let result = work(conn);
        if let Connection::Sqlite(sqlite) = conn {
            if !sqlite.is_autocommit() && sqlite.execute_batch("ROLLBACK").is_err() {
                lent.conn = None;
            }
        }
        result
    }

    /// Holds new reads back and waits for those running to end: no
    /// snapshot of the write-ahead log is in use until the guard drops, so
    /// a checkpoint can start the log again. Reads are short; this waits
    /// for the longest one running.
    pub fn hold_back(&self) -> HeldBack<'_> {
        let mut pool = self.lock();
        pool.held_back = true;
        while pool.open > pool.idle.len() {
            pool = self.freed.wait(pool).unwrap_or_else(|p| p.into_inner());
        }
        HeldBack {
            readers: self,
            views_only: false,
        }
    }

    /// Holds new view reads back and waits for those running to end;
    /// lookups go on. A view's read under portal load can take half a
    /// second: a restart of the write-ahead log waits for them here,
    /// before it takes the writer, so the writer is never held while one
    /// ends. Nothing waits on the writer while holding a view's read, so
    /// this cannot wait on the restart's own turn.
    pub fn hold_back_views(&self) -> HeldBack<'_> {
        let mut pool = self.lock();
        pool.views_held_back = true;
        while pool.viewing > 0 {
            pool = self.freed.wait(pool).unwrap_or_else(|p| p.into_inner());
        }
        HeldBack {
            readers: self,
            views_only: true,
        }
    }

    fn lend(&self, reader: Reader) -> Result<Lent<'_>, DbError> {
        let mut pool = self.lock();
        loop {
            let may = !pool.held_back
                && match reader {
                    Reader::Lookup => true,
                    Reader::View => !pool.views_held_back && pool.viewing < VIEW_READERS_MAX,
                };
            if may && (!pool.idle.is_empty() || pool.open < READERS_MAX) {
                if reader == Reader::View {
                    pool.viewing += 1;
                }
                let lent = |conn| Lent {
                    readers: self,
                    reader,
                    conn: Some(Connection::Sqlite(conn)),
                };
                if let Some(conn) = pool.idle.pop() {
                    return Ok(lent(conn));
                }
                pool.open += 1;
                drop(pool);
                return match open_reader(&self.path) {
                    Ok(conn) => Ok(lent(conn)),
                    Err(err) => {
                        // Dropping a lent connection with none in it gives
                        // its place back.
                        drop(Lent {
                            readers: self,
                            reader,
                            conn: None,
                        });
                        Err(err)
                    }
                };
            }
            pool = self.freed.wait(pool).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let mut pool = self.readers.lock();
        match self.conn.take() {
            Some(Connection::Sqlite(conn)) => pool.idle.push(conn),
            _ => pool.open -= 1,
        }
        if self.reader == Reader::View {
            pool.viewing -= 1;
        }
        drop(pool);
        // Waiters differ in what they may take: wake them all to look.
        self.readers.freed.notify_all();
    }
}

/// Opens a read-only connection with the writer's busy timeout and
/// statement cache.
fn open_reader(path: &Path) -> Result<rusqlite::Connection, DbError> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db::Db;

    fn count(conn: &mut Connection) -> Result<i64, DbError> {
        let Connection::Sqlite(conn) = conn else {
            unreachable!()
        };
        Ok(conn.query_row("SELECT COUNT(*) FROM devices", [], |row| row.get(0))?)
    }

    #[test]
    fn a_read_sees_what_the_writer_committed_and_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        let readers = Readers::new(db.path().unwrap());
        assert_eq!(readers.read(Reader::View, count).unwrap(), 0);
        db.call_blocking(|conn| {
            let Connection::Sqlite(conn) = conn else {
                unreachable!()
            };
            conn.execute(
                "INSERT INTO devices (device_id, profile, token_sha256, added_at)
                 VALUES ('d1', 'mc3390xr', 'h', 0)",
                [],
            )
            .unwrap();
        });
        assert_eq!(readers.read(Reader::View, count).unwrap(), 1);
        let written = readers.read(Reader::Lookup, |conn| -> Result<usize, DbError> {
            let Connection::Sqlite(conn) = conn else {
                unreachable!()
            };
            Ok(conn.execute("DELETE FROM devices", [])?)
        });
        let err = written.unwrap_err().to_string();
        assert!(err.contains("readonly"), "{err}");
        assert_eq!(readers.read(Reader::View, count).unwrap(), 1);
    }

    #[test]
    fn a_read_does_not_wait_for_a_turn_at_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        let readers = Readers::new(db.path().unwrap());
        db.call_blocking(|conn| {
            let Connection::Sqlite(conn) = conn else {
                unreachable!()
            };
            // The writer in the middle of a transaction, holding its turn.
            conn.execute_batch(
                "BEGIN IMMEDIATE;
                 INSERT INTO devices (device_id, profile, token_sha256, added_at)
                 VALUES ('d1', 'mc3390xr', 'h', 0);",
            )
            .unwrap();
            // A read sees the last commit, not the open transaction.
            assert_eq!(readers.read(Reader::View, count).unwrap(), 0);
            conn.execute_batch("COMMIT").unwrap();
        });
        assert_eq!(readers.read(Reader::View, count).unwrap(), 1);
    }

    #[test]
    fn at_most_readers_max_connections_are_open() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        let readers = std::sync::Arc::new(Readers::new(db.path().unwrap()));
        let threads: Vec<_> = (0..READERS_MAX * 3)
            .map(|i| {
                let readers = std::sync::Arc::clone(&readers);
                std::thread::spawn(move || {
                    let reader = [Reader::View, Reader::Lookup][usize::from(i % 4 == 0)];
                    readers
                        .read(reader, |conn| {
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            count(conn)
                        })
                        .unwrap()
                })
            })
            .collect();
        for thread in threads {
            assert_eq!(thread.join().unwrap(), 0);
        }
        let pool = readers.lock();
        assert!(pool.open <= READERS_MAX && pool.idle.len() == pool.open);
        assert_eq!(pool.viewing, 0);
    }

    #[test]
    fn a_lookup_finds_a_connection_while_the_view_holds_all_it_may() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        let readers = std::sync::Arc::new(Readers::new(db.path().unwrap()));
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = std::sync::Arc::new(Mutex::new(released));
        let (holding, held) = std::sync::mpsc::channel::<()>();
        let views: Vec<_> = (0..VIEW_READERS_MAX)
            .map(|_| {
                let readers = std::sync::Arc::clone(&readers);
                let released = std::sync::Arc::clone(&released);
                let holding = holding.clone();
                std::thread::spawn(move || {
                    readers
                        .read(Reader::View, |conn| {
                            holding.send(()).unwrap();
                            released.lock().unwrap().recv().unwrap();
                            count(conn)
                        })
                        .unwrap()
                })
            })
            .collect();
        for _ in 0..VIEW_READERS_MAX {
            held.recv().unwrap();
        }
        // Every view reader busy: a lookup still reads at once.
        assert_eq!(readers.read(Reader::Lookup, count).unwrap(), 0);
        for _ in 0..VIEW_READERS_MAX {
            release.send(()).unwrap();
        }
        for view in views {
            assert_eq!(view.join().unwrap(), 0);
        }
    }

    #[test]
    fn views_held_back_wait_for_the_running_view_while_lookups_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        let readers = std::sync::Arc::new(Readers::new(db.path().unwrap()));
        let (release, released) = std::sync::mpsc::channel::<()>();
        let (holding, held) = std::sync::mpsc::channel::<()>();
        let view = {
            let readers = std::sync::Arc::clone(&readers);
            std::thread::spawn(move || {
                readers
                    .read(Reader::View, |conn| {
                        holding.send(()).unwrap();
                        released.recv().unwrap();
                        count(conn)
                    })
                    .unwrap()
            })
        };
        held.recv().unwrap();
        let (ended, holds) = std::sync::mpsc::channel();
        let (end, ending) = std::sync::mpsc::channel::<()>();
        let holder = {
            let readers = std::sync::Arc::clone(&readers);
            std::thread::spawn(move || {
                let _views = readers.hold_back_views();
                ended.send(()).unwrap();
                ending.recv().unwrap();
            })
        };
        // The running view keeps the hold from being had; lookups go on.
        assert!(holds
            .recv_timeout(std::time::Duration::from_millis(50))
            .is_err());
        assert!(readers.lock().views_held_back);
        assert_eq!(readers.read(Reader::Lookup, count).unwrap(), 0);
        release.send(()).unwrap();
        assert_eq!(view.join().unwrap(), 0);
        holds.recv().unwrap();
        // Held: lookups still read; the hold ends with its guard.
        assert_eq!(readers.read(Reader::Lookup, count).unwrap(), 0);
        end.send(()).unwrap();
        holder.join().unwrap();
        assert!(!readers.lock().views_held_back);
        assert_eq!(readers.read(Reader::View, count).unwrap(), 0);
    }
}
