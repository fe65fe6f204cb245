//! One writer per store: an exclusive advisory lock on `LOCK`.

use crate::{Error, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a taken lock is waited for before a second writer is refused.
pub const GRACE: Duration = Duration::from_millis(500);

/// Held for as long as the store is open; dropping it releases the lock.
pub struct StoreLock(#[allow(dead_code)] File);

impl StoreLock {
    /// Takes the lock, or fails with [`Error::Locked`] if it stays taken for [`GRACE`].
    ///
    /// The grace period is for a lock that was just released: a child process started by
    /// another thread of this program holds copies of our descriptors, `LOCK` included,
    /// from `fork` until `exec` closes them, and `spawn` returns (the vfork completes)
    /// before the kernel gets to that. So a store closed while another thread spawns a
    /// process can stay locked for a moment; a real second writer still gets `Locked`.
    pub fn acquire(dir: &Path) -> Result<StoreLock> {
        let path = dir.join("LOCK");
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        let start = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match f.try_lock() {
                Ok(()) => return Ok(StoreLock(f)),
                Err(TryLockError::WouldBlock) if start.elapsed() < GRACE => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(Error::Locked {
                        path: dir.to_path_buf(),
                    })
                }
                Err(TryLockError::Error(e)) => return Err(Error::io("lock", &path, e)),
            }
        }
    }
}

impl StoreLock {
    /// Whether some process holds the lock now (without creating `LOCK` or taking it for
    /// longer than the test: a read-only open must not hold a writer back).
    pub fn is_held(dir: &Path) -> bool {
        let Ok(f) = File::open(dir.join("LOCK")) else {
            return false;
        };
        matches!(f.try_lock_shared(), Err(TryLockError::WouldBlock))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_refuses_after_the_grace_period_and_a_released_one_is_taken() {
        let d = tempfile::tempdir().unwrap();
        let first = StoreLock::acquire(d.path()).unwrap();
        let t = Instant::now();
        assert!(matches!(
            StoreLock::acquire(d.path()),
            Err(Error::Locked { .. })
        ));
        assert!(t.elapsed() >= GRACE);
        // Released while the second waits: taken within the grace period.
        let waiter = std::thread::spawn({
            let p = d.path().to_path_buf();
            move || StoreLock::acquire(&p).map(|_| ())
        });
        std::thread::sleep(Duration::from_millis(50));
        drop(first);
        waiter.join().unwrap().unwrap();
        assert!(
            !StoreLock::is_held(d.path()),
            "released when the waiter returned"
        );
        let held = StoreLock::acquire(d.path()).unwrap();
        assert!(StoreLock::is_held(d.path()));
        drop(held);
    }
}
