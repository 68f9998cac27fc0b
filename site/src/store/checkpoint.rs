//! WAL checkpoints off the writer's path.
//!
//! SQLite's default copies the write-ahead log back into the database
//! file (a checkpoint) inside the commit that takes the log past 1,000
//! pages, on the committing connection: that commit then holds the site's
//! one writer for as long as the copy and its `fsync` take, hundreds of
//! milliseconds on a busy disk, and every sync waits behind it. So the
//! writer connection does no checkpoints of its own
//! (`wal_autocheckpoint=0`), and a thread of its own, on a connection of
//! its own, runs a `PASSIVE` checkpoint every [`CHECKPOINT_EVERY`]: a
//! passive checkpoint never takes the writer's lock nor waits on a reader,
//! so writes go on while it copies. While the log keeps changing it
//! checkpoints again after [`CHECKPOINT_BUSY_EVERY`] instead, so each
//! copy and its `fsync` stay small under a long job's writes (an import).
//!
//! The log still cannot grow without end: a checkpoint that finds every
//! frame copied lets the next write start the log again from its
//! beginning, and should the thread fall behind (or stop), the writer
//! checkpoints itself again once the log passes [`WRITER_FALLBACK_PAGES`]
//! pages, as SQLite would by default, only later.
//!
//! Neither happens while the writer never rests (the terminal listener at
//! ten portals' full rate) and reads run beside it: every passive
//! checkpoint finds new frames behind the ones it copied, and a reader's
//! snapshot keeps the writer's own from finishing. The log then grew past
//! a gigabyte in ten minutes, and every page read searched its index. So
//! once the log passes [`RESTART_AFTER_PAGES`] the thread starts it again
//! itself ([`Restart`]): it waits for the view's running reads to end,
//! holding new ones back (a status poll under that load can take half a
//! second, and the writer is not held meanwhile), takes a turn at the
//! writer (in the background lane, so a sync waiting goes first), holds
//! every new read back until those running end, and runs a `RESTART`
//! checkpoint, which copies the few frames the passive ones left (1 MiB
//! at most). The next write then starts the log from its beginning, over
//! the same file: emptying it (`TRUNCATE`) held the writer 60 ms more for
//! 256 MiB on an idle disk, and every commit after it grew the file again.
//! Each restart logs its parts ("started the write-ahead log again"),
//! which the site-load bench's soak prints.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the checkpoint thread's connection waits, while it opens,
/// for another process opening or migrating the database (a command run
/// beside the server): a turn that still finds it busy is skipped and the
/// next one tries again.
pub const OPEN_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the checkpoint thread copies the log into the database:
/// often enough that the log stays a few megabytes under steady sync
/// traffic, seldom enough to cost nothing when the site is idle.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// How soon the thread checkpoints again after a checkpoint that found
/// the log changed since the one before: while writes go on, each
/// checkpoint copies a few milliseconds' writes and its `fsync` is short
/// (one every half second would put half a second's writes on the disk at
/// once, and every commit's own `fsync` would queue behind it); and a
/// checkpoint that copies the whole log between two writes lets the next
/// write start the log again from its beginning.
pub const CHECKPOINT_BUSY_EVERY: Duration = Duration::from_millis(20);

/// Pages (4 KiB each) the log may hold before the writer checkpoints in
/// its own commit after all: 40 times SQLite's default of 1,000, about
/// 160 MiB, reached only if the checkpoint thread cannot keep up.
pub const WRITER_FALLBACK_PAGES: u32 = 40_000;

/// Pages (4 KiB each) past which the thread starts the log again from its
/// beginning ([`Restart`]): 256 MiB, about five seconds of the listener's
/// writes at ten portals' full rate (each of its commits rewrites
/// thousands of index pages). Each restart holds the writer while it
/// copies what the passive checkpoints left and syncs the file: in a soak
/// at 64 MiB that came every 1.3 s and held it 230 ms on average, a tail
/// every sync behind it felt.
pub const RESTART_AFTER_PAGES: i64 = 65_536;

/// Before a restart takes the writer, passive checkpoints (which take
/// nothing) copy the log until at most this many pages (1 MiB) are left
/// for the restart to copy while it holds the writer; at most
/// [`RESTART_CATCH_UP_PASSES`] of them, [`RESTART_CATCH_UP_PAUSE`] apart
/// (a reader's snapshot may keep a pass from copying the newest frames
/// until it ends). Each pass copies what came since the one before, so
/// the passes shorten fast.
pub const RESTART_LEFT_PAGES: i64 = 256;
pub const RESTART_CATCH_UP_PASSES: usize = 16;
pub const RESTART_CATCH_UP_PAUSE: Duration = Duration::from_millis(5);

/// How long a restart's checkpoint waits for another process's read or
/// write (a `backup` command copying the file holds a snapshot for
/// minutes) before it gives up: the writer's turn is held meanwhile.
pub const RESTART_BUSY_TIMEOUT: Duration = Duration::from_millis(50);
/// After a restart that could not finish, the next is tried no sooner.
pub const RESTART_RETRY_AFTER: Duration = Duration::from_secs(10);

/// What the thread needs to start the log again: the writer's turns and
/// the read-only connections beside it.
pub struct Restart {
    pub writer: std::sync::Arc<crate::store::writer::Writer>,
    pub readers: std::sync::Arc<crate::store::readers::Readers>,
    /// The log's pages past which it is started again:
    /// [`RESTART_AFTER_PAGES`] (fewer in tests).
    pub after_pages: i64,
}

/// The checkpoint thread of one database file; stops when dropped.
pub struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts checkpointing the SQLite file at `path` (in WAL mode) every
    /// [`CHECKPOINT_EVERY`] on a connection of its own, starting the log
    /// again through `restart` when it grows long.
    pub fn start(path: &Path, restart: Option<Restart>) -> std::io::Result<Checkpointer> {
        let (stop, stopped) = mpsc::channel::<()>();
        let path: PathBuf = path.to_owned();
        let thread = std::thread::Builder::new()
            .name("wal-checkpoint".into())
            .spawn(move || run(&path, restart.as_ref(), &stopped))?;
        Ok(Checkpointer {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(path: &Path, restart: Option<&Restart>, stopped: &mpsc::Receiver<()>) {
    // Opened on the first turn, and again on a later one should that
    // fail (another process may hold the file a moment as it opens it).
    let mut conn = None;
    let mut failing = false;
    let mut last = None;
    let mut every = CHECKPOINT_EVERY;
    let mut restart_not_before = std::time::Instant::now();
    // The log's frames when it was last restarted: until a write starts it
    // from its beginning, a checkpoint still finds them all.
    let mut restarted_at = None;
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
        let turn = match &conn {
            Some(conn) => checkpoint(conn).and_then(|log| match (log, restart) {
                (Some((frames, _)), Some(restart))
                    if frames >= restart.after_pages
                        && restarted_at != Some(frames)
                        && std::time::Instant::now() >= restart_not_before =>
                {
                    match start_again(conn, restart)? {
                        Some(frames) => {
                            restarted_at = Some(frames);
                            Ok(Some((frames, frames)))
                        }
                        None => {
                            restart_not_before = std::time::Instant::now() + RESTART_RETRY_AFTER;
                            Ok(log)
                        }
                    }
                }
                _ => Ok(log),
            }),
            None => open(path).map(|opened| {
                conn = Some(opened);
                None
            }),
        };
        match turn {
            Ok(log) => {
                failing = false;
                every = next_look(last, log);
                last = log;
            }
            Err(err) if !failing => {
                failing = true;
                tracing::warn!(%err, path = %path.display(), "a WAL checkpoint failed; trying again");
            }
            Err(_) => {}
        }
    }
}

/// How long the thread waits before its next checkpoint, given what the
/// last two found (the log's frames and those copied back): soon while
/// the log changes between them, else the idle pace.
fn next_look(before: Option<(i64, i64)>, now: Option<(i64, i64)>) -> Duration {
    if now.is_some() && now != before {
        CHECKPOINT_BUSY_EVERY
    } else {
        CHECKPOINT_EVERY
    }
}

fn open(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // For opening only: a passive checkpoint never calls the busy handler,
    // and one that finds another checkpoint running is skipped.
    conn.busy_timeout(OPEN_BUSY_TIMEOUT)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(conn)
}

/// One passive checkpoint: the log's frames and those copied back, after
/// it. Another checkpoint already running is no failure (`None`).
fn checkpoint(conn: &rusqlite::Connection) -> rusqlite::Result<Option<(i64, i64)>> {
    match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
        Ok((row.get(1)?, row.get(2)?))
    }) {
        Err(rusqlite::Error::SqliteFailure(err, _))
            if err.code == rusqlite::ErrorCode::DatabaseBusy =>
        {
            Ok(None)
        }
        other => other.map(Some),
    }
}

/// Starts the log again: a `RESTART` checkpoint with the writer's turn
/// held and reads held back, so nothing on this site can keep it from
/// finishing but another process reading or writing the file, which it
/// waits for [`RESTART_BUSY_TIMEOUT`] at most. After it every frame is in
/// the database and no reader uses the log, so the next write starts the
/// log from its beginning, over the same file: the file is not truncated
/// (emptying 256 MiB took 60 ms on an idle disk, with the writer held) and
/// each commit after it writes into blocks the file already has. The
/// log's frames when it was started again, or `None` if it was not.
fn start_again(conn: &rusqlite::Connection, restart: &Restart) -> rusqlite::Result<Option<i64>> {
    for _ in 0..RESTART_CATCH_UP_PASSES {
        match checkpoint(conn)? {
            Some((log, copied)) if log - copied > RESTART_LEFT_PAGES => {
                std::thread::sleep(RESTART_CATCH_UP_PAUSE);
            }
            _ => break,
        }
    }
    // The view's reads are the long ones: they end before the writer is
    // taken, and none starts until the log is started again.
    let asked = std::time::Instant::now();
    let _views = restart.readers.hold_back_views();
    let views_ended = asked.elapsed();
    let _turn = restart
        .writer
        .take(crate::store::writer::Caller::Checkpoint);
    // The turn's parts, told in the log: what holds the writer.
    let began = std::time::Instant::now();
    let writer_waited = began - asked - views_ended;
    let _held = restart.readers.hold_back();
    let reads_ended = began.elapsed();
    conn.busy_timeout(RESTART_BUSY_TIMEOUT)?;
    let done = conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |row| {
        Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
    });
    conn.busy_timeout(OPEN_BUSY_TIMEOUT)?;
    let done = done.map(|(busy, pages)| {
        tracing::info!(
            busy,
            pages,
            views_wait_ms = views_ended.as_secs_f64() * 1e3,
            writer_wait_ms = writer_waited.as_secs_f64() * 1e3,
            reads_wait_ms = reads_ended.as_secs_f64() * 1e3,
            checkpoint_ms = (began.elapsed() - reads_ended).as_secs_f64() * 1e3,
            "started the write-ahead log again"
        );
        (busy, pages)
    });
    match done {
        Ok((busy, pages)) => Ok((busy == 0).then_some(pages)),
        Err(rusqlite::Error::SqliteFailure(err, _))
            if err.code == rusqlite::ErrorCode::DatabaseBusy =>
        {
            Ok(None)
        }
        Err(err) => Err(err),
    }
}

/// Runs `work` on the writer connection `conn` with its commits left
/// unflushed (`synchronous=NORMAL`), then restores `synchronous=FULL`
/// (even if `work` panics): for a long job's turns (an import), whose
/// writes [`flush_log`] then puts on the disk once the writer is let go,
/// so the writer is never held waiting on the disk for them. A commit so
/// made is as atomic as any (a killed process loses nothing the operating
/// system holds), and the log is written in order, so the next flushed
/// commit (a sync's, or the job's own flush) makes it durable with
/// everything before it. Not SQLite: `work` runs as it is.
pub fn unflushed<T>(
    conn: &mut crate::store::sql::Connection,
    work: impl FnOnce(&mut crate::store::sql::Connection) -> T,
) -> T {
    let set = |conn: &crate::store::sql::Connection, level: &str| {
        if let Some(sqlite) = conn.as_sqlite() {
            if let Err(err) = sqlite.pragma_update(None, "synchronous", level) {
                tracing::warn!(%err, level, "could not set synchronous");
            }
        }
    };
    set(conn, "NORMAL");
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(conn)));
    set(conn, "FULL");
    out.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Puts the write-ahead log of the SQLite file at `path` on the disk
/// (`fdatasync`): what commits made [`unflushed`] wrote. Runs off the
/// writer: other connections' work goes on meanwhile.
pub fn flush_log(path: &Path) -> std::io::Result<()> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    match std::fs::File::open(PathBuf::from(wal)) {
        Ok(file) => file.sync_data(),
        // No log: nothing unflushed (every frame was checkpointed and the
        // log removed).
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}

/// Has the writer connection `conn` leave checkpoints to the thread, up
/// to [`WRITER_FALLBACK_PAGES`].
pub fn leave_to_thread(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "wal_autocheckpoint", WRITER_FALLBACK_PAGES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_looks_again_soon_only_while_the_log_changes() {
        assert_eq!(next_look(None, None), CHECKPOINT_EVERY);
        assert_eq!(next_look(None, Some((10, 10))), CHECKPOINT_BUSY_EVERY);
        assert_eq!(next_look(Some((10, 10)), Some((10, 10))), CHECKPOINT_EVERY);
        assert_eq!(
            next_look(Some((10, 10)), Some((25, 25))),
            CHECKPOINT_BUSY_EVERY
        );
        // The log started again from its beginning.
        assert_eq!(
            next_look(Some((25, 25)), Some((3, 3))),
            CHECKPOINT_BUSY_EVERY
        );
        // Another checkpoint was running: nothing learned.
        assert_eq!(next_look(Some((25, 25)), None), CHECKPOINT_EVERY);
    }

    /// The database file's length: pages reach it only by a checkpoint.
    fn file_len(path: &Path) -> u64 {
        std::fs::metadata(path).unwrap().len()
    }

    #[test]
    fn the_thread_copies_the_log_back_and_the_writer_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let writer = crate::store::db::open_connection(&path).unwrap();
        leave_to_thread(&writer).unwrap();
        let autocheckpoint: u32 = writer
            .pragma_query_value(None, "wal_autocheckpoint", |row| row.get(0))
            .unwrap();
        assert_eq!(autocheckpoint, WRITER_FALLBACK_PAGES);
        writer.execute_batch("CREATE TABLE t (x BLOB)").unwrap();
        let written = |rows: usize| {
            for _ in 0..rows {
                writer
                    .execute("INSERT INTO t VALUES (zeroblob(8192))", [])
                    .unwrap();
            }
        };
        // SQLite's default would have checkpointed past 1,000 pages; the
        // writer leaves its 2,400 pages in the log.
        written(1_200);
        assert!(file_len(&path) < 1_000 * 4096, "{}", file_len(&path));

        // The thread copies them back within a few of its turns.
        let checkpointer = Checkpointer::start(&path, None).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while file_len(&path) < 1_200 * 8192 {
            assert!(std::time::Instant::now() < deadline, "{}", file_len(&path));
            std::thread::sleep(CHECKPOINT_EVERY / 5);
        }
        drop(checkpointer);
        let count: i64 = writer
            .query_row("SELECT count(*) FROM t", [], |row| row.get(0))
            .unwrap();
        assert_eq!(count, 1_200);
    }

    #[test]
    fn a_log_that_never_rests_with_reads_beside_it_is_started_again() {
        use crate::store::readers::{Reader, Readers};
        use crate::store::writer::{Caller, Writer};
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let conn = crate::store::db::open_connection(&path).unwrap();
        leave_to_thread(&conn).unwrap();
        conn.execute_batch("CREATE TABLE t (x BLOB)").unwrap();
        let writer = Arc::new(Writer::default());
        let readers = Arc::new(Readers::new(&path));
        let after_pages = 256;
        let checkpointer = Checkpointer::start(
            &path,
            Some(Restart {
                writer: Arc::clone(&writer),
                readers: Arc::clone(&readers),
                after_pages,
            }),
        )
        .unwrap();
        // A reader always reading, each snapshot held a moment.
        let stop = Arc::new(AtomicBool::new(false));
        let reading = {
            let (readers, stop) = (Arc::clone(&readers), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut reads = 0;
                while !stop.load(Ordering::Relaxed) {
                    readers
                        .read(
                            Reader::View,
                            |conn| -> Result<(), crate::store::db::DbError> {
                                let sqlite = conn.as_sqlite().unwrap();
                                let _: i64 =
                                    sqlite.query_row("SELECT count(*) FROM t", [], |row| {
                                        row.get(0)
                                    })?;
                                std::thread::sleep(Duration::from_millis(2));
                                Ok(())
                            },
                        )
                        .unwrap();
                    reads += 1;
                }
                reads
            })
        };
        // A writer that never rests: a commit after another, each in a turn.
        let wal = dir.path().join("db.sqlite-wal");
        // The log's header counts the times it was started from its
        // beginning (its checkpoint sequence number, bytes 12..16, written
        // with the first frame after each start).
        let log_starts = || {
            use std::io::Read;
            let mut header = [0u8; 16];
            std::fs::File::open(&wal)
                .and_then(|mut log| log.read_exact(&mut header))
                .map_or(0, |()| {
                    u32::from_be_bytes(header[12..16].try_into().unwrap())
                })
        };
        let rows = 6_000;
        // Times the log was found started again from its beginning since
        // the last write. At least `rows`, and on until it was started
        // again three times (its catch-up passes run longer
        // the faster the writer writes, and a loaded machine runs the
        // thread late), for a minute at most.
        let (mut started, mut before) = (0, 0);
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let mut written = 0;
        while written < rows || (started < 3 && std::time::Instant::now() < deadline) {
            written += 1;
            let _turn = writer.take(Caller::ListenerWrite);
            conn.execute("INSERT INTO t VALUES (zeroblob(4096))", [])
                .unwrap();
            let now = log_starts();
            started += usize::from(now > before);
            before = now;
        }
        stop.store(true, Ordering::Relaxed);
        assert!(reading.join().unwrap() > 0);
        drop(checkpointer);
        let restarts = writer
            .uses()
            .into_iter()
            .find(|(caller, _)| *caller == Caller::Checkpoint)
            .map_or(0, |(_, used)| used.turns);
        assert!(restarts >= 3, "the log was started again {restarts} times");
        assert!(
            started >= 3,
            "the log was started from its beginning {started} times"
        );
        let count: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |row| row.get(0))
            .unwrap();
        assert_eq!(count, written);
    }
}
