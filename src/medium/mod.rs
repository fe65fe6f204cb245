//! Media: where bytes become durable.
//!
//! A [`Medium`] is a flat namespace of segment files. The engine decides *which* bytes to
//! write; the medium decides *how* they become durable. Every durable byte of a store goes
//! through [`SegmentFile::write_at`] followed by [`SegmentFile::persist`], and every file
//! creation, rename or removal is made durable by [`Medium::sync_dir`]. Nothing else in the
//! crate touches the filesystem for store data.
//!
//! Implemented: [`file::FileMedium`] (pwrite + fdatasync, mmap for reads; WAL segments with
//! direct I/O),
//! [`pmem::PmemMedium`] (segments mapped into memory; cache-line write-back + fence on a DAX
//! mount, msync elsewhere, or a fence alone for battery-backed caches),
//! [`memory::MemoryMedium`] (volatile) and [`sim::SimMedium`] (records every operation and
//! builds the images a power cut could leave, for crash tests).

mod aligned;
pub(crate) use aligned::{AlignedBuf, ALIGN};
pub(crate) mod dir;
#[cfg(target_os = "linux")]
mod direct;
pub(crate) mod dram;
pub mod file;
mod flusher;
mod mapped;
pub mod memory;
pub mod pmem;
pub mod sim;
mod stats;
mod sweep;

pub use mapped::{Access, Mapped};
pub use stats::{MediumStats, StatsSnapshot};
pub use sweep::SweepFile;

use crate::Result;

/// How a medium makes bytes durable, which decides what a power cut can tear and what a
/// persist costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persistence {
    /// A system call (`fdatasync`, `msync`): costly, so writers group many updates into one;
    /// unpersisted writes tear at 512-byte sectors.
    Syscall,
    /// Cache-line write-back or a fence, no system call: cheap enough to persist a small
    /// commit block and then its 8-byte commit marker; unpersisted writes tear at 8 bytes.
    CacheLine,
    /// Nothing survives the process.
    Volatile,
}

/// Writes `bytes` as file `name` whole or not at all: under `name.tmp` (one a crash left
/// is replaced), persisted, renamed, and the directory synced. For files written once,
/// whole, and named only when durable (history segments, run versions).
pub(crate) fn write_whole(medium: &dyn Medium, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = format!("{name}.tmp");
    if medium.exists(&tmp) {
        medium.remove(&tmp)?;
    }
    let f = medium.create(&tmp)?;
    f.write_at(0, bytes)?;
    f.persist()?;
    drop(f);
    medium.rename(&tmp, name)?;
    medium.sync_dir()
}

/// A durable byte store holding named segment files.
pub trait Medium: Send + Sync + 'static {
    /// Short name for reports ("file", "pmem", "battery", "memory", "sim").
    fn kind(&self) -> &'static str;
    /// How persists work on this medium.
    fn persistence(&self) -> Persistence {
        Persistence::Syscall
    }
    /// How bytes become durable, in words for `stats` (e.g. "clwb + sfence (DAX, MAP_SYNC)").
    fn persist_method(&self) -> String {
        "fdatasync".into()
    }
    /// Makes the medium's root (the store directory) exist durably: created with its missing
    /// ancestors, each one's entry made durable in its parent. Called before anything is
    /// written, so that a power cut after an acknowledgement cannot lose the whole store.
    fn create_root(&self) -> Result<()> {
        Ok(())
    }
    /// Whether appenders should allocate a segment's space ahead: on mapped media growing a
    /// segment is a system call and a new mapping, so a log of small blocks preallocates.
    fn preallocates(&self) -> bool {
        false
    }
    /// Creates a segment that must not exist yet: an existing one is an error (`AlreadyExists`),
    /// never cut to nothing. No store file is ever created over another.
    fn create(&self, name: &str) -> Result<Box<dyn SegmentFile>>;
    /// Opens an existing segment for reading and writing.
    fn open(&self, name: &str) -> Result<Box<dyn SegmentFile>>;
    /// Creates a log segment that must not exist yet: one written only at its end, in order, and read
    /// only through other handles (a WAL segment). Unlike [`Medium::create`]'s, a log
    /// segment's bytes after the last write up to a 4 KiB boundary may read as zeros, and
    /// its length may be rounded up to 4 KiB: the file medium writes it with direct I/O.
    fn create_log(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        self.create(name)
    }
    /// Opens an existing segment as a log segment (see [`Medium::create_log`]).
    fn open_log(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        self.open(name)
    }
    /// Whether a segment of that name exists.
    fn exists(&self, name: &str) -> bool;
    /// Removes a segment (not durable until [`Medium::sync_dir`]).
    fn remove(&self, name: &str) -> Result<()>;
    /// Renames a segment atomically (not durable until [`Medium::sync_dir`]). A segment
    /// already named `to` is an error (`AlreadyExists`) and stays as it is: no rename
    /// replaces a store file but the manifest commit's ([`Medium::rename_replacing`]).
    fn rename(&self, from: &str, to: &str) -> Result<()>;
    /// Renames `from` over `to`, replacing it atomically (not durable until
    /// [`Medium::sync_dir`]). Only a manifest commit does this: `MANIFEST.new` over `MANIFEST`.
    fn rename_replacing(&self, from: &str, to: &str) -> Result<()>;
    /// Names of all segments.
    fn list(&self) -> Result<Vec<String>>;
    /// Makes creations, renames and removals durable.
    fn sync_dir(&self) -> Result<()>;
    /// Every segment's name and size right now, from one listing.
    fn sizes(&self) -> Result<Vec<(String, u64)>> {
        let mut sizes = Vec::new();
        for name in self.list()? {
            match self.open(&name) {
                Ok(f) => sizes.push((name, f.len()?)),
                // Removed since the listing: by another handle's writer, when this is a
                // read-only handle beside it.
                Err(crate::Error::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(sizes)
    }
    /// Write and persist counters, for write-amplification figures.
    fn stats(&self) -> &MediumStats;
    /// Segment `name` opened for sweeps: large reads front to back, past the page cache
    /// where the medium has one to bypass. `None` on media that hold segments in memory
    /// (DRAM, persistent memory, the sim), whose mappings are read at memory speed.
    fn open_sweep(&self, _name: &str) -> Result<Option<SweepFile>> {
        Ok(None)
    }
}

/// One segment file of a [`Medium`].
pub trait SegmentFile: Send + Sync {
    /// Writes `data` at `offset`, extending the segment if needed. Not durable until persisted.
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()>;
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Makes every byte written so far durable.
    fn persist(&self) -> Result<()>;
    /// Starts writing `len` bytes at `offset` back to the device without waiting for them,
    /// so that the next [`SegmentFile::persist`] has less left to wait for. A hint only:
    /// it may make some written bytes durable early or do nothing, and only `persist`
    /// promises anything (and reports errors the hint met).
    fn start_persist(&self, _offset: u64, _len: u64) {}
    /// Writes `data` at `offset` and starts it towards the device at once, without waiting:
    /// for a small write beside a larger one (a log segment's header page beside its
    /// blocks), so that the two reach the device together rather than one after the other
    /// before the next [`SegmentFile::persist`]. Only `persist` makes it durable.
    fn write_ahead(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.write_at(offset, data)
    }
    /// Writes `data` at `offset` where other processes' reads see it at once, and leaves it
    /// for the next [`SegmentFile::persist`] to write back: for a small write nobody waits
    /// to be durable (a log segment's header page, published after a persist for readers),
    /// which a direct write or a write-back started now would make the next write wait for.
    fn write_behind(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.write_at(offset, data)
    }
    /// Current length in bytes.
    fn len(&self) -> Result<u64>;
    /// Whether the segment is empty.
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Cuts (or extends with zeros) the segment to `len` bytes.
    fn set_len(&self, len: u64) -> Result<()>;
    /// A read-only view of the whole segment as it is now. Callers map only segments that
    /// are no longer written (runs, recovered WAL segments).
    fn map(&self) -> Result<Mapped>;
}
