//! One writer per store: an exclusive advisory lock on `LOCK`.

use crate::{Error, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

/// Held for as long as the store is open; dropping it releases the lock.
pub struct StoreLock(#[allow(dead_code)] File);

impl StoreLock {
    /// Takes the lock or fails at once with [`Error::Locked`].
    pub fn acquire(dir: &Path) -> Result<StoreLock> {
        let path = dir.join("LOCK");
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        match f.try_lock() {
            Ok(()) => Ok(StoreLock(f)),
            Err(TryLockError::WouldBlock) => Err(Error::Locked {
                path: dir.to_path_buf(),
            }),
            Err(TryLockError::Error(e)) => Err(Error::io("lock", &path, e)),
        }
    }
}
