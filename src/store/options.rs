//! Options for opening or creating a store.

use crate::history::History;
use crate::keys::KeyKind;
pub use crate::run::{Compression, Verify};
use crate::snapshot::SweepReads;
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

/// How to open a store: built from [`Options::new`] (the defaults: a durable, directed
/// store on files, opened only if it exists) by the setters below, each of which returns the
/// options changed.
///
/// ```
/// use evograph::{Durability, Options};
/// let opts = Options::new().create(true).durability(Durability::None).threads(2);
/// # let _ = opts;
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// Undirected (`Some(true)`) or directed (`Some(false)`) at creation; `None` means
    /// directed when creating and "whatever it is" when opening. Asking an existing store
    /// for the other kind is an error.
    pub(crate) undirected: Option<bool>,
    /// Weighted (`Some(true)`) or not at creation; `None` means unweighted when creating and
    /// "whatever it is" when opening.
    pub(crate) weighted: Option<bool>,
    /// How vertices are keyed, at creation: integers (`None` or `Some(U64)`) or names
    /// (`Some(String)`). `None` opens an existing store as whatever it is; asking for the
    /// other kind is an error.
    pub(crate) keys: Option<KeyKind>,
    /// How runs store neighbor lists, at creation (plain when `None`). `None` opens an
    /// existing store as whatever it is; asking for the other kind is an error.
    pub(crate) compression: Option<Compression>,
    /// When updates are acknowledged.
    pub(crate) durability: Durability,
    /// DRAM budget for memtables (active, frozen and sealed but unflushed), in bytes.
    pub(crate) memtable_bytes: usize,
    /// DRAM a snapshot of several runs may spend copying a direction's neighbor lists for
    /// a kernel that sweeps it pass after pass (`Snapshot::plan_sweeps`: PageRank's
    /// in-lists, CDLP's both), so that each pass reads a CSR instead of every run's slice;
    /// `None`: half the DRAM available when the copy is made (`MemAvailable`, or the
    /// cgroup's headroom when lower). 0 reads the runs in place always.
    pub(crate) view_copy_bytes: Option<usize>,
    /// How a kernel's sweeps read a compacted store's lists: streamed with direct I/O
    /// when they (and the kernel's state) do not fit the DRAM
    /// available, by default.
    pub(crate) sweep_reads: SweepReads,
    /// Worker threads for apply, seal, merge and verification (0: one per core).
    pub(crate) threads: usize,
    /// Where bytes live: recorded at creation (file when `None`); `None` opens an existing
    /// store on the medium it was created on, and naming another one is an error.
    pub(crate) medium: Option<MediumKind>,
    /// [`crate::Graph::open`] creates the store if the directory has none (false by
    /// default: open a mistyped path and get an error, not an empty store; the command
    /// line's `ingest` sets it).
    pub(crate) create: bool,
    /// When run checksums are verified ([`Verify`]); `None`: ahead for read-only opens,
    /// on first use for writers (see [`Options::verify`]).
    pub(crate) verify: Option<Verify>,
    /// Runs per level before they are merged into one run of the next level.
    pub(crate) fanout: usize,
    /// Merges above level 0 write one run per partition of `2^partition_bits` vertex ids,
    /// so that a merge rewrites one partition, not the whole graph (20: partitions of
    /// about a million vertices; 0: never partition). A store that already has partition
    /// runs keeps their size.
    pub(crate) partition_bits: u32,
    /// Flush and compact on a background thread (else only on explicit calls).
    pub(crate) background: bool,
    /// Bytes per WAL segment (64 MiB). Tests set it small so that segment rotation and
    /// recycling happen every few batches.
    pub(crate) wal_segment_bytes: u64,
    /// Open without changing any file: no WAL repair, no flush on close, writes refused.
    /// The WAL is still replayed (into DRAM) so reads see every acknowledged update.
    pub(crate) read_only: bool,
    /// How far a read-only handle reads the log of a writer running beside it.
    pub(crate) log_reach: LogReach,
    /// What creates the store (such as "evograph demo"), recorded in it at creation and
    /// shown by `stats`; ignored when opening an existing store.
    pub(crate) created_by: Option<String>,
    /// What history a new store keeps.
    pub(crate) history: History,
    /// When the versions of runs are derived (a store keeping history).
    pub(crate) run_versions: RunVersions,
    /// A read-only handle records each replayed commit's changes for a follower
    /// (`Options::following`).
    pub(crate) follow: bool,
    /// When a writer publishes tails for readers, and whether a reader uses them.
    pub(crate) tails: Tails,
}

impl Options {
    /// A read-only handle replays the log into a memtable that records each commit's
    /// changes, so that a standing kernel stepped on it ([`crate::standing::Maintainer`])
    /// finds the changes since its last step there, not only in history the store keeps
    /// (off by default: replay then costs a little more).
    pub fn follow_changes(mut self, on: bool) -> Options {
        self.follow = on;
        self
    }

    /// The defaults (see [`Options`]).
    pub fn new() -> Options {
        Options::default()
    }

    /// Undirected (`Some(true)`) or directed (`Some(false)`) at creation; `None` means
    /// directed when creating and "whatever it is" when opening. Asking an existing store
    /// for the other kind is an error.
    pub fn undirected(mut self, undirected: impl Into<Option<bool>>) -> Options {
        self.undirected = undirected.into();
        self
    }

    /// Weighted (`Some(true)`) or not at creation; `None` means unweighted when creating and
    /// "whatever it is" when opening.
    pub fn weighted(mut self, weighted: impl Into<Option<bool>>) -> Options {
        self.weighted = weighted.into();
        self
    }

    /// How vertices are keyed, at creation: integers (`None` or `Some(U64)`) or names
    /// (`Some(String)`). `None` opens an existing store as whatever it is; asking for the
    /// other kind is an error.
    pub fn keys(mut self, keys: impl Into<Option<KeyKind>>) -> Options {
        self.keys = keys.into();
        self
    }

    /// How runs store neighbor lists, at creation (plain when `None`). `None` opens an
    /// existing store as whatever it is; asking for the other kind is an error.
    pub fn compression(mut self, compression: impl Into<Option<Compression>>) -> Options {
        self.compression = compression.into();
        self
    }

    /// When updates are acknowledged.
    pub fn durability(mut self, durability: Durability) -> Options {
        self.durability = durability;
        self
    }

    /// What history a new store keeps ([`History::None`] by default); recorded in the
    /// store at creation, ignored when opening an existing one (change it there with
    /// [`crate::Graph::set_history`]).
    pub fn history(mut self, history: History) -> Options {
        self.history = history;
        self
    }

    /// When a writer derives the versions of its runs, in a store that keeps history:
    /// [`RunVersions::Compact`] by default. A point inside a run's range reads the run
    /// filtered by its versions (at Kron20 0.55 s against 1.26 s built by undoing later
    /// changes); deriving them reads the run and the history of its range (`compact`
    /// takes 1.6 s after a Kron20 load, 3.0 s after 20 rounds of changes more), which a
    /// flush would make ingest wait for (a Kron20 load: 3.1 s against 2.0 s).
    pub fn run_versions(mut self, when: RunVersions) -> Options {
        self.run_versions = when;
        self
    }

    /// DRAM budget for memtables (active, frozen and sealed but unflushed), in bytes.
    pub fn memtable_bytes(mut self, memtable_bytes: usize) -> Options {
        self.memtable_bytes = memtable_bytes;
        self
    }

    /// DRAM a snapshot of several runs may spend copying a direction's neighbor lists for
    /// a kernel that sweeps it pass after pass (`Snapshot::plan_sweeps`: PageRank's
    /// in-lists, CDLP's both), so that each pass reads a CSR instead of every run's slice;
    /// `None`: half the DRAM available when the copy is made (`MemAvailable`, or the
    /// cgroup's headroom when lower). 0 reads the runs in place always.
    pub fn view_copy_bytes(mut self, view_copy_bytes: impl Into<Option<usize>>) -> Options {
        self.view_copy_bytes = view_copy_bytes.into();
        self
    }

    /// How a kernel that sweeps a direction pass after pass (PageRank's in-lists) reads a
    /// compacted, file-backed store's lists: [`SweepReads::Auto`] (the default) streams
    /// them in windows with direct I/O when they and the kernel's vertex state do not fit
    /// the DRAM available, and
    /// reads them through the mapping otherwise.
    pub fn sweep_reads(mut self, sweep_reads: SweepReads) -> Options {
        self.sweep_reads = sweep_reads;
        self
    }

    /// Worker threads for apply, seal, merge and verification (0: one per core).
    pub fn threads(mut self, threads: usize) -> Options {
        self.threads = threads;
        self
    }

    /// Where bytes live: recorded at creation (file when `None`); `None` opens an existing
    /// store on the medium it was created on, and naming another one is an error.
    pub fn medium(mut self, medium: impl Into<Option<MediumKind>>) -> Options {
        self.medium = medium.into();
        self
    }

    /// [`crate::Graph::open`] creates the store if the directory has none (false by
    /// default: open a mistyped path and get an error, not an empty store; the command
    /// line's `ingest` sets it).
    pub fn create(mut self, create: bool) -> Options {
        self.create = create;
        self
    }

    /// When run checksums are verified. By default a writer checks a run on first use (a
    /// clean open of any size reads only headers) and a read-only open checks them all
    /// [`Verify::Ahead`], in the background from the moment their headers are read; either
    /// way damage is reported on first use. [`Verify::AtOpen`] refuses the open instead.
    pub fn verify(mut self, verify: Verify) -> Options {
        self.verify = Some(verify);
        self
    }

    /// Runs per level before they are merged into one run of the next level.
    pub fn fanout(mut self, fanout: usize) -> Options {
        self.fanout = fanout;
        self
    }

    /// Merges above level 0 write one run per partition of `2^partition_bits` vertex ids,
    /// so that a merge rewrites one partition, not the whole graph (20: partitions of
    /// about a million vertices; 0: never partition). A store that already has partition
    /// runs keeps their size.
    pub fn partition_bits(mut self, partition_bits: u32) -> Options {
        self.partition_bits = partition_bits;
        self
    }

    /// Flush and compact on a background thread (else only on explicit calls).
    pub fn background(mut self, background: bool) -> Options {
        self.background = background;
        self
    }

    /// Bytes per WAL segment (64 MiB). Tests set it small so that segment rotation and
    /// recycling happen every few batches.
    pub fn wal_segment_bytes(mut self, wal_segment_bytes: u64) -> Options {
        self.wal_segment_bytes = wal_segment_bytes;
        self
    }

    /// Open without changing any file: no WAL repair, no flush on close, writes refused.
    /// The WAL is still replayed (into DRAM) so reads see every acknowledged update.
    pub fn read_only(mut self, read_only: bool) -> Options {
        self.read_only = read_only;
        self
    }

    /// How far a read-only handle reads the log of a writer that holds the store open
    /// beside it: the batches it has made durable (the default; under
    /// [`Durability::Sync`] that is every batch acknowledged, and none still in flight),
    /// or every batch it has written. With no writer running, a reader reads every block
    /// that reads, as the next writer's recovery will keep them.
    pub fn log_reach(mut self, reach: LogReach) -> Options {
        self.log_reach = reach;
        self
    }

    /// When a writer publishes *tails* (the runs it sealed since its last flush, cached as
    /// files for readers in other processes, so that a reader replays only what came after
    /// them), and whether a read-only handle uses the tails it finds. The default publishes
    /// while readers are about; see [`Tails`].
    pub fn tails(mut self, tails: Tails) -> Options {
        self.tails = tails;
        self
    }

    /// What creates the store (such as "evograph demo"), recorded in it at creation and
    /// shown by `stats`; ignored when opening an existing store.
    pub fn created_by(mut self, created_by: impl Into<Option<String>>) -> Options {
        self.created_by = created_by.into();
        self
    }
}

/// How far a read-only handle reads a live writer's log ([`Options::log_reach`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogReach {
    /// The batches the writer has made durable. Under [`Durability::Sync`] a batch is
    /// acknowledged once durable, so the reader holds every batch acknowledged before it
    /// opened and none that a power cut could still take back; under
    /// [`Durability::Interval`] it holds the batches up to the last persist.
    #[default]
    Durable,
    /// Every batch the writer has written to the log, durable or not: newer, but a batch
    /// read this way may not be acknowledged yet and may still be lost to a power cut.
    Written,
}

/// When a writer publishes tails ([`Options::tails`]): caches of the updates it has
/// not flushed yet, sealed into runs and written beside the store so that a reader in
/// another process loads them instead of replaying the log they came from (FORMAT.md,
/// "Tails"). They cost the writer a seal every few hundred thousand updates and the
/// page-cache writes of their files; a store keeping history publishes none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tails {
    /// While a reader opened within the last second (the default): an unread writer pays
    /// nothing. A read-only handle uses the tails it finds.
    #[default]
    WhileReaders,
    /// After every few hundred thousand updates, readers or not (tests, and writers whose
    /// readers come too rarely to be seen).
    Always,
    /// Never: a writer publishes none, and a read-only handle replays the log instead of
    /// using any it finds.
    Never,
}

impl Tails {
    /// The name the CLI uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Tails::WhileReaders => "while-readers",
            Tails::Always => "always",
            Tails::Never => "never",
        }
    }
}

impl std::str::FromStr for Tails {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "while-readers" => Ok(Tails::WhileReaders),
            "always" => Ok(Tails::Always),
            "never" => Ok(Tails::Never),
            _ => Err(format!(
                "unknown tails setting '{s}': want while-readers, always or never"
            )),
        }
    }
}

/// When a writer derives the versions of its runs ([`Options::run_versions`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunVersions {
    /// By [`crate::Graph::compact`] only, for every run that has none: the step that
    /// readies a store for reading derives them, and ingest pays nothing for them.
    #[default]
    Compact,
    /// After every flush and merge as well: points are fast all along, and each flush
    /// waits for its run's versions.
    Flush,
    /// Never: points are built from the runs and the history segments.
    Never,
}

impl std::str::FromStr for RunVersions {
    type Err = String;

    /// `compact`, `flush` or `never`, as the command line takes them.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "compact" => Ok(RunVersions::Compact),
            "flush" => Ok(RunVersions::Flush),
            "never" => Ok(RunVersions::Never),
            _ => Err(format!(
                "'{s}' is not a time to derive run versions: give compact, flush or never"
            )),
        }
    }
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
            sweep_reads: SweepReads::Auto,
            threads: 0,
            medium: None,
            create: false,
            verify: None,
            fanout: 4,
            partition_bits: 20,
            background: true,
            read_only: false,
            log_reach: LogReach::Durable,
            wal_segment_bytes: crate::wal::writer::SEGMENT_BYTES,
            created_by: None,
            history: History::None,
            run_versions: RunVersions::Compact,
            follow: false,
            tails: Tails::WhileReaders,
        }
    }
}
