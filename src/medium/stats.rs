//! Per-medium counters of bytes written and persists issued.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters a medium bumps on every write and persist.
#[derive(Debug, Default)]
pub struct MediumStats {
    bytes_written: AtomicU64,
    writes: AtomicU64,
    persists: AtomicU64,
}

/// A plain copy of [`MediumStats`] at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StatsSnapshot {
    /// Bytes handed to `write_at`.
    pub bytes_written: u64,
    /// Number of `write_at` calls.
    pub writes: u64,
    /// Number of `persist` calls (fdatasync on files).
    pub persists: u64,
}

impl MediumStats {
    pub(crate) fn on_write(&self, n: usize) {
        self.bytes_written.fetch_add(n as u64, Relaxed);
        self.writes.fetch_add(1, Relaxed);
    }
    pub(crate) fn on_persist(&self) {
        self.persists.fetch_add(1, Relaxed);
    }
    /// Reads all counters.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            bytes_written: self.bytes_written.load(Relaxed),
            writes: self.writes.load(Relaxed),
            persists: self.persists.load(Relaxed),
        }
    }
}
