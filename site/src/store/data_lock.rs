//! The data directory's lock: `serve` holds it while it runs, and
//! `restore` takes it before it puts a backup in place, so a ledger is
//! never swapped under a site that serves from it (whose open connections
//! and write-ahead log would go on writing the ledger it replaced) and a
//! site never starts on a ledger being restored.
//!
//! An advisory lock on `DATA/stockhop.lock` through the operating system
//! (fs4's `flock`): it goes with the process, however it ends (kill -9
//! too), so a lock is never left behind by a site that is gone.

use std::fs::File;
use std::path::{Path, PathBuf};

/// The lock file's name in the data directory.
pub const LOCK_FILE: &str = "stockhop.lock";

/// Held while it lives; dropping it lets the lock go.
#[derive(Debug)]
pub struct DataLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "a stockhop-site process (serve or restore) is using {0}: stop the site first, then run \
         this again"
    )]
    InUse(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl DataLock {
    /// Takes the lock of the data directory `data`, which must exist.
    pub fn take(data: &Path) -> Result<DataLock, LockError> {
        let path = data.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| LockError::Io {
                path: path.clone(),
                source,
            })?;
        // Called through the trait: the standard library's own `try_lock`
        // is newer than the crate's minimum Rust.
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => Ok(DataLock { _file: file }),
            Err(fs4::TryLockError::WouldBlock) => Err(LockError::InUse(data.to_owned())),
            Err(fs4::TryLockError::Error(source)) => Err(LockError::Io { path, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_directory_is_locked_once_until_its_lock_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let held = DataLock::take(dir.path()).unwrap();
        assert!(matches!(
            DataLock::take(dir.path()),
            Err(LockError::InUse(_))
        ));
        drop(held);
        DataLock::take(dir.path()).unwrap();
    }
}
