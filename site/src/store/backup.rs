//! `stockhop-site backup DEST`: a consistent copy of the SQLite ledger
//! while the site serves, through SQLite's online backup API.
//!
//! The copy is taken in one step, inside one read transaction of its own
//! connection: in WAL mode a reader never blocks the site's writer, and a
//! backup copied in several steps would start again each time the site
//! commits, so under steady sync traffic it might never finish. The copy is
//! of one instant: every item acknowledged before the backup began is in
//! it (an acknowledgement follows a durable commit).
//!
//! The copy is written beside DEST under a temporary name, checked
//! (`PRAGMA quick_check`), turned into a single file (rollback journal, no
//! `-wal` beside it), synced, and only then renamed to DEST: a backup that
//! is killed or fails leaves no DEST, never a half one. PostgreSQL ledgers
//! are backed up with `pg_dump`.
//!
//! [`restore`] puts a backup in place of the site's ledger, the other way
//! round: the backup is copied and checked beside the ledger the same way,
//! the ledger it replaces is kept aside with its write-ahead log (so
//! SQLite never replays an old log over the copy, and nothing is lost if
//! the wrong backup was named), and the copy is renamed into place. The
//! caller holds the data directory's lock ([`crate::store::data_lock`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::backup::{Backup, StepResult};

/// How long the backup's connection waits on a lock the site holds for a
/// moment (a checkpoint) before it gives up.
pub const BACKUP_BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// The pause between tries when the source is busy at the start.
const BUSY_PAUSE: Duration = Duration::from_millis(50);

/// What a finished backup wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The copy's size, in bytes.
    pub bytes: u64,
    /// How long it took, from opening the ledger to the rename.
    pub elapsed: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{0} exists: a backup never overwrites a file; name a new one")]
    Exists(PathBuf),
    #[error("{0} is a folder: name the backup's file, e.g. {0}/stockhop.sqlite")]
    IsFolder(PathBuf),
    #[error("no ledger at {0}")]
    NoSource(PathBuf),
    #[error("{0} is not a folder: a backup goes into a folder that exists (make it first)")]
    NoFolder(PathBuf),
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Open(#[from] crate::store::db::DbError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the copy failed its check: {0}")]
    Check(String),
    #[error("the ledger stayed busy for {} s", BACKUP_BUSY_TIMEOUT.as_secs())]
    Busy,
    #[error("{0} is the site's ledger itself: name a backup")]
    IsLedger(PathBuf),
    #[error("{path} is not a Stockhop backup ({why}): name a file `stockhop-site backup` wrote")]
    NotABackup { path: PathBuf, why: &'static str },
}

/// Copies the ledger at `source` to `dest` (which must not exist).
pub fn backup(source: &Path, dest: &Path) -> Result<Summary, BackupError> {
    let started = Instant::now();
    if dest.is_dir() {
        return Err(BackupError::IsFolder(dest.to_owned()));
    }
    if dest.exists() {
        return Err(BackupError::Exists(dest.to_owned()));
    }
    if !source.is_file() {
        return Err(BackupError::NoSource(source.to_owned()));
    }
    let folder = match dest.parent() {
        Some(parent) if parent.as_os_str().is_empty() => Path::new("."),
        Some(parent) => parent,
        None => Path::new("/"),
    };
    if !folder.is_dir() {
        return Err(BackupError::NoFolder(folder.to_owned()));
    }
    let partial = partial_path(dest);
    let result = copy_to(source, &partial).and_then(|()| {
        std::fs::rename(&partial, dest).map_err(|err| io(&partial, err))?;
        sync_dir(dest)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
        let mut journal = partial.clone().into_os_string();
        journal.push("-journal");
        let _ = std::fs::remove_file(journal);
    }
    result?;
    let bytes = std::fs::metadata(dest).map_err(|err| io(dest, err))?.len();
    Ok(Summary {
        bytes,
        elapsed: started.elapsed(),
    })
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The restored ledger's size, in bytes.
    pub bytes: u64,
    /// Where the ledger it replaced is kept (with its `-wal`), if there
    /// was one.
    pub kept: Option<PathBuf>,
}

/// Puts the backup at `backup` in place of the ledger at `ledger`, at
/// `now` (Unix milliseconds, which names the replaced ledger kept aside).
pub fn restore(backup: &Path, ledger: &Path, now: i64) -> Result<Restored, BackupError> {
    if !backup.is_file() {
        return Err(BackupError::NoSource(backup.to_owned()));
    }
    if same_file(backup, ledger) {
        return Err(BackupError::IsLedger(backup.to_owned()));
    }
    is_a_ledger(backup)?;
    let staged = with_suffix(ledger, ".restoring");
    // A leftover of a killed restore is ours to replace.
    let _ = std::fs::remove_file(&staged);
    self::backup(backup, &staged)?;
    let kept = if ledger.exists() {
        let aside = with_suffix(ledger, &format!(".before-restore-{now}"));
        std::fs::rename(ledger, &aside).map_err(|err| io(ledger, err))?;
        let wal = with_suffix(ledger, "-wal");
        if wal.exists() {
            let aside_wal = with_suffix(&aside, "-wal");
            std::fs::rename(&wal, &aside_wal).map_err(|err| io(&wal, err))?;
        }
        Some(aside)
    } else {
        None
    };
    // The shared-memory index belongs to the log just moved aside; SQLite
    // makes a new one for the new ledger.
    let shm = with_suffix(ledger, "-shm");
    match std::fs::remove_file(&shm) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(io(&shm, err)),
        _ => {}
    }
    std::fs::rename(&staged, ledger).map_err(|err| io(&staged, err))?;
    sync_dir(ledger)?;
    let bytes = std::fs::metadata(ledger)
        .map_err(|err| io(ledger, err))?
        .len();
    Ok(Restored { bytes, kept })
}

/// Tables every Stockhop ledger has had since its first schema: a file
/// without them is some other SQLite database.
const LEDGER_TABLES: [&str; 3] = ["devices", "hops", "units"];

/// Refuses a file that is not a ledger the site wrote, before anything is
/// moved: restoring some other file would leave the site with no devices,
/// no hops and no reference data, and carry that emptiness into who may
/// sync. Read only; a newer schema than this build knows is refused when
/// the restored ledger is opened.
fn is_a_ledger(path: &Path) -> Result<(), BackupError> {
    let not = |why| BackupError::NotABackup {
        path: path.to_owned(),
        why,
    };
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let tables = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN (?1, ?2, ?3)",
        LEDGER_TABLES,
        |row| row.get::<_, usize>(0),
    );
    match tables {
        Ok(found) if found == LEDGER_TABLES.len() => {}
        Ok(_) => return Err(not("an SQLite database without the ledger's tables")),
        Err(rusqlite::Error::SqliteFailure(err, _))
            if err.code == rusqlite::ErrorCode::NotADatabase =>
        {
            return Err(not("not an SQLite database"))
        }
        Err(err) => return Err(err.into()),
    }
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if version == 0 {
        return Err(not("an SQLite database with no ledger schema version"));
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `path` with `suffix` added to its file name, beside it.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// `DEST.partial` beside DEST: same file system, so the rename is atomic.
fn partial_path(dest: &Path) -> PathBuf {
    with_suffix(dest, ".partial")
}

/// A backup's mode: read and write for its owner, nothing for anyone
/// else.
const BACKUP_MODE: u32 = 0o600;

/// Creates the empty file `path` with [`BACKUP_MODE`].
fn create_private(path: &Path) -> Result<(), BackupError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(BACKUP_MODE)
        .open(path)
        .map(drop)
        .map_err(|err| io(path, err))
}

fn copy_to(source: &Path, partial: &Path) -> Result<(), BackupError> {
    // A leftover of a killed backup is ours to replace.
    let _ = std::fs::remove_file(partial);
    // The copy is made readable by its owner only before SQLite writes a
    // page into it (SQLite keeps the mode of a file it opens and gives its
    // journal the same): a backup holds the site's whole ledger and leaves
    // the machine, so it is never world-readable on the way.
    create_private(partial)?;
    let (src, mut dst) = crate::store::db::open_for_backup(source, partial, BACKUP_BUSY_TIMEOUT)?;
    {
        let backup = Backup::new(&src, &mut dst)?;
        let deadline = Instant::now() + BACKUP_BUSY_TIMEOUT;
        loop {
            // -1: every page in one step, one read transaction.
            match backup.step(-1)? {
                StepResult::Done => break,
                StepResult::More => continue,
                StepResult::Busy | StepResult::Locked if Instant::now() < deadline => {
                    std::thread::sleep(BUSY_PAUSE)
                }
                StepResult::Busy | StepResult::Locked => return Err(BackupError::Busy),
                _ => std::thread::sleep(BUSY_PAUSE),
            }
        }
    }
    drop(src);
    let check: String = dst.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
    if check != "ok" {
        return Err(BackupError::Check(check));
    }
    // One self-contained file: no -wal to carry beside it.
    let _: String = dst.query_row("PRAGMA journal_mode = DELETE", [], |row| row.get(0))?;
    dst.close().map_err(|(_, err)| err)?;
    std::fs::File::open(partial)
        .and_then(|file| file.sync_all())
        .map_err(|err| io(partial, err))
}

fn sync_dir(file: &Path) -> Result<(), BackupError> {
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(|err| io(dir, err))
}

fn io(path: &Path, source: std::io::Error) -> BackupError {
    BackupError::Io {
        path: path.to_owned(),
        source,
    }
}
