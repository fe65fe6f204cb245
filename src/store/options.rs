//! Options for opening or creating a store.

use crate::keys::KeyKind;
use crate::types::Durability;

/// Where the store's bytes live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MediumKind {
    /// Files in the store directory, `pwrite` + `fdatasync` (NVMe/SSD).
    File,
    /// Files mapped into memory; durable by cache-line write-back and a fence on a DAX
    /// mount (persistent memory), by `msync` elsewhere.
    Pmem,
    /// Files mapped into memory whose caches are battery-backed (eADR): a fence persists.
    Battery,
    /// DRAM only: nothing survives the process.
    Memory,
}

impl MediumKind {
    /// The name the CLI and the manifest use.
    pub fn as_str(self) -> &'static str {
        match self {
            MediumKind::File => "file",
            MediumKind::Pmem => "pmem",
            MediumKind::Battery => "battery",
            MediumKind::Memory => "memory",
        }
    }
}

impl std::str::FromStr for MediumKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "file" => Ok(MediumKind::File),
            "pmem" => Ok(MediumKind::Pmem),
            "battery" => Ok(MediumKind::Battery),
            "memory" => Ok(MediumKind::Memory),
            _ => Err(format!(
                "unknown medium '{s}': want file, pmem, battery or memory"
            )),
        }
    }
}

impl std::fmt::Display for MediumKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How runs store neighbor lists: chosen when a store is created and recorded in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// Plain sorted arrays: 4 bytes per neighbor (8 with 64-bit ids).
    #[default]
    None,
    /// Delta-encoded, bit-packed lists (FORMAT.md, "Packed directions"): about 1.5-1.9
    /// bytes per neighbor on Kronecker graphs, decoded inside kernels' scans.
    Packed,
}

impl Compression {
    /// The name the CLI and the manifest use.
    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Packed => "packed",
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Compression::None),
            "packed" => Ok(Compression::Packed),
            _ => Err(format!("unknown compression '{s}': want none or packed")),
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
    /// How vertices are keyed, at creation: integers (`None` or `Some(U64)`) or names
    /// (`Some(String)`). `None` opens an existing store as whatever it is; asking for the
    /// other kind is an error.
    pub keys: Option<KeyKind>,
    /// How runs store neighbor lists, at creation (plain when `None`). `None` opens an
    /// existing store as whatever it is; asking for the other kind is an error.
    pub compression: Option<Compression>,
    /// When updates are acknowledged.
    pub durability: Durability,
    /// DRAM budget for memtables (active, frozen and sealed but unflushed), in bytes.
    pub memtable_bytes: usize,
    /// DRAM a snapshot's layered view may spend copying the neighbor lists that newer runs
    /// changed, so that kernels read them as on a CSR (lists past it are read from the
    /// base cut at their deleted neighbors, about 1.4x slower on a sweep); `None`: the
    /// memtable budget.
    pub view_copy_bytes: Option<usize>,
    /// Worker threads for apply, seal, merge and verification (0: one per core).
    pub threads: usize,
    /// Where bytes live: recorded at creation (file when `None`); `None` opens an existing
    /// store on the medium it was created on, and naming another one is an error.
    pub medium: Option<MediumKind>,
    /// [`crate::Graph::open`] creates the store if the directory has none (false by
    /// default: open a mistyped path and get an error, not an empty store; the command
    /// line's `ingest` sets it).
    pub create: bool,
    /// When run checksums are verified: on first use (default; a clean open of any size
    /// reads only headers) or all at open.
    pub verify: Verify,
    /// Runs per level before they are merged into one run of the next level.
    pub fanout: usize,
    /// Merges above level 0 write one run per partition of `2^partition_bits` vertex ids,
    /// so that a merge rewrites one partition, not the whole graph (20: partitions of
    /// about a million vertices; 0: never partition). A store that already has partition
    /// runs keeps their size.
    pub partition_bits: u32,
    /// Flush and compact on a background thread (else only on explicit calls).
    pub background: bool,
    /// Bytes per WAL segment (64 MiB). Tests set it small so that segment rotation and
    /// recycling happen every few batches.
    pub wal_segment_bytes: u64,
    /// Open without changing any file: no WAL repair, no flush on close, writes refused.
    /// The WAL is still replayed (into DRAM) so reads see every acknowledged update.
    pub read_only: bool,
    /// What creates the store (such as "evograph demo"), recorded in it at creation and
    /// shown by `stats`; ignored when opening an existing store.
    pub created_by: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            undirected: None,
            weighted: None,
            keys: None,
            compression: None,
            durability: Durability::Sync,
            memtable_bytes: 1 << 30,
            view_copy_bytes: None,
            threads: 0,
            medium: None,
            create: false,
            verify: Verify::OnFirstUse,
            fanout: 4,
            partition_bits: 20,
            background: true,
            read_only: false,
            wal_segment_bytes: crate::wal::writer::SEGMENT_BYTES,
            created_by: None,
        }
    }
}

/// When a run file's block checksums (and offsets) are checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verify {
    /// All of them when the store is opened: the open reads the whole store.
    AtOpen,
    /// When the run is first read: by the first snapshot, by the first seal that resolves
    /// against it, by the merge that consumes it. A clean open reads only headers. A damaged
    /// run is still never read into a result: the first use fails with `Corrupt` instead.
    #[default]
    OnFirstUse,
}
