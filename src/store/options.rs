//! Options for opening or creating a store.

use crate::types::Durability;

/// Where the store's bytes live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MediumKind {
    /// Files in the store directory (NVMe/SSD, or tmpfs standing in for persistent memory).
    File,
    /// DRAM only: nothing survives the process.
    Memory,
}

/// How to open a store. `Options::default()` is a durable, directed store on files.
#[derive(Clone, Debug)]
pub struct Options {
    /// Undirected (`Some(true)`) or directed (`Some(false)`) at creation; `None` means
    /// directed when creating and "whatever it is" when opening. Asking an existing store
    /// for the other kind is an error.
    pub undirected: Option<bool>,
    /// Weighted (`Some(true)`) or not at creation; `None` means unweighted when creating and
    /// "whatever it is" when opening.
    pub weighted: Option<bool>,
    /// When updates are acknowledged.
    pub durability: Durability,
    /// DRAM budget for memtables (active, frozen and sealed but unflushed), in bytes.
    pub memtable_bytes: usize,
    /// Worker threads for apply, seal, merge and verification (0: one per core).
    pub threads: usize,
    /// Where bytes live.
    pub medium: MediumKind,
    /// Create the store if the directory has none.
    pub create: bool,
    /// Verify every run checksum on open (else only headers and offsets).
    pub verify_on_open: bool,
    /// Runs per level before they are merged into one run of the next level.
    pub fanout: usize,
    /// Flush and compact on a background thread (else only on explicit calls).
    pub background: bool,
    /// Open without changing any file: no WAL repair, no flush on close, writes refused.
    /// The WAL is still replayed (into DRAM) so reads see every acknowledged update.
    pub read_only: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            undirected: None,
            weighted: None,
            durability: Durability::Sync,
            memtable_bytes: 1 << 30,
            threads: 0,
            medium: MediumKind::File,
            create: true,
            verify_on_open: true,
            fanout: 4,
            background: true,
            read_only: false,
        }
    }
}
