//! The store: WAL, memtable, runs and manifest tied together.
//!
//! Write path (`write.rs`): translate external ids, apply to the active memtable, queue the
//! batch's WAL block; the acknowledgement waits for the block to be durable. Background path
//! (`maintain.rs`): freeze full memtables, seal them into in-DRAM runs, flush those to run
//! files (write, persist, make the WAL durable up to the run, commit the manifest, recycle
//! the WAL), and merge runs level by level. Open (`open.rs`): read the manifest, verify the
//! runs and dictionary, replay the WAL.
//!
//! # Concurrency contract
//!
//! Threads:
//! - **callers**: any number of threads may call [`Graph`] methods (`submit`, `snapshot`,
//!   `flush`, `compact`, `stats`, `check`); writes are applied one batch at a time in the
//!   order they take the writer lock.
//! - **`evograph-flush`** (when `Options::background`): seals frozen memtables into run
//!   files and merges levels (`maintain::flusher_loop`). Failing to start it is an error
//!   of `open`, never a writer waiting forever on backpressure.
//! - **`evograph-wal`**: owns the log files; appends queued blocks and persists them
//!   ([`crate::wal::Wal`]). It takes no store lock, only the WAL's own queue mutex.
//! - **`evograph-worker-*`**: the rayon pool for parallel apply, seal, merge and verify; it
//!   runs work handed to it by the threads above and takes no store lock of its own.
//! - **`evograph-standing-*`**: one per `crate::standing::Standing` handle, a caller like
//!   the others (it snapshots and reads changes), waiting for batches on `commit_cv`.
//!
//! Locks, in the order they may be taken (never the reverse):
//! 1. `writer` — the active memtable, next LSN, deleted-vertex bits. Held while applying a
//!    batch and queuing its WAL block (a memory copy), never across a persist: the
//!    acknowledgement's wait, and backpressure's wait for flushes, happen after it is
//!    released.
//! 2. `maint` — every flush and merge: the right to write files for the next commit. Held
//!    across I/O (run writes, the WAL persist a flush waits for, `fdatasync` of runs,
//!    `DICT` and the manifest), so only commit work ever waits for it.
//! 3. `seal_lock` — one sealer at a time, so frozen memtables become runs oldest first.
//!    Held while a memtable is sealed into DRAM or written into its run file (CPU and
//!    page-cache writes), never across a persist: the flusher persists and commits the
//!    run after releasing it, still holding `maint`.
//! 4. `tails` — the tails published for readers in other processes (`tails.rs`). Held
//!    while a tail's files and `TAILS` are written to the page cache (never persisted), by
//!    the writer after a batch (without `writer`) and by a flush after its commit.
//! 5. `state` — the published runs and frozen memtables. Never held across I/O.
//! 6. `dict` (RwLock) — the id dictionary. Written under `writer` (new ids) and briefly by
//!    a flush to record a `DICT` chunk it wrote and persisted without the lock.
//!
//! The key table of a string-keyed store (`keys`, two locks of its own: see
//! `src/keys/mod.rs`) is taken before all of these and never while one of them is held:
//! names are interned, and made durable, before the batch that uses them takes `writer`.
//!
//! So a snapshot (`writer` briefly, `seal_lock`, `state`, `dict`) waits for at most one
//! batch's apply and one memtable's seal, never for an `fdatasync`. Once taken, it waits
//! for nothing: views built on first use are never waited for by a second caller
//! (`crate::build_once`), since a rayon thread waiting in a join can run that caller on
//! the builder's own stack.
//!
//! Other processes: one writer holds `LOCK` (an exclusive `flock`); read-only handles
//! (`reader.rs`) take no lock on the store and rely on the file-level promises listed in
//! FORMAT.md ("What a reader in another process may rely on"), so nothing here waits for
//! them. While one opens it holds a shared `flock` on `READERS` and sets the file's time,
//! which the writer only tries and reads, never waits for (`readers.rs`): it then freezes
//! its memtables smaller.
//!
//! `manifest` (the root in force), `history` (what history is kept, and its committed
//! segments: `history.rs`), `followers` (who follows the commits: `follow.rs`), `poisoned`
//! and each frozen memtable's own mutex are leaves: nothing else is taken while they are held. `manifest` is held across the one
//! persist of a commit; every commit takes it, and the first batch of a writer takes it
//! without `maint` to say the log is in use (`Inner::claim_log`), so that commit never
//! waits for a merge. A write error anywhere poisons the handle: later writes are refused, the
//! log is kept, and reopening recovers from the last commit.
//!
//! Followers (`follow.rs`) wait for the next batch on `commit_cv` with `writer`: the writer
//! notifies it holding `writer`, after applying a batch, and `close` takes `writer` before
//! notifying it, so no follower sleeps through either.
//!
//! `state_cv` waits on `state`. Its waiters also wait for `shutdown` and `poisoned`, which
//! live outside `state`: whoever sets one takes `state` before notifying
//! (`Inner::wake_state_waiters`), so no waiter sleeps through it.

mod check;
mod files;
pub(crate) mod follow;
mod history;
mod lifetime;
mod lock;
mod maintain;
mod mirror;
mod open;
pub(crate) mod options;
mod policy;
mod reader;
mod readers;
mod recovery;
mod replay;
mod retention;
mod rolling;
mod size;
mod stats;
mod tails;
mod versions;
mod window;
mod write;

pub use crate::history::lifetime::LifeOp;
pub use check::CheckReport;
pub use history::{Diff, Log, Point};
pub use lifetime::{LifeEvent, Lifetime};
pub use open::{check_id_width, holds_store, is_store_file, recorded_creator, recorded_key_kind};
pub use options::{Compression, LogReach, MediumKind, Options, RunVersions, Tails, Verify};
pub use retention::HistoryBytes;
pub use rolling::{RollStep, Stride};
pub use size::GraphSize;
pub use stats::{CutTail, LevelStats, Stats, UnreadableTail};
pub use window::WindowSpan;

use crate::dict::Dict;
use crate::history::History;
use crate::keys::{KeyKind, Keys, Names};
use crate::manifest::Manifest;
use crate::medium::Medium;
use crate::memtable::Memtable;
use crate::run::Run;
use crate::snapshot::Snapshot;
use crate::types::{Durability, Record, VertexId};
use crate::wal::Wal;
use crate::{Error, Result};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::thread::JoinHandle;

/// Proof that a batch was accepted; [`Graph::wait`] turns it into an acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[must_use = "a batch is durable only once `Graph::wait` returns for its ticket"]
pub struct Ticket(u64);

impl Ticket {
    /// The LSN after the batch's last record.
    pub fn lsn(&self) -> u64 {
        self.0
    }
}

/// A graph store: make one with [`Graph::create`] or open one with [`Graph::open`], then
/// insert, delete, snapshot.
///
/// `Graph` is `Sync`: several threads may submit batches; they are applied in one order,
/// and their WAL blocks share `fdatasync`s (group commit).
pub struct Graph {
    inner: Arc<Inner>,
    flusher: Mutex<Option<JoinHandle<()>>>,
    closed: AtomicBool,
}

/// State owned by whoever holds the writer lock.
struct Writer {
    mem: Memtable,
    next_lsn: u64,
    deleted: Arc<Vec<u64>>,
    /// The newest commit: the LSN after its last record, and its time (Unix nanoseconds).
    /// A later batch never commits at an earlier time.
    last_commit: Option<CommitPoint>,
}

/// A commit point: an acknowledged batch, named by the LSN after its last record (what its
/// [`Ticket::lsn`] says), and the time it committed at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitPoint {
    /// The LSN after the batch's last record: the graph as of this commit holds every
    /// record below it.
    pub lsn: u64,
    /// When it committed, in nanoseconds since the Unix epoch (UTC): the wall clock at the
    /// commit, or the time the input gave ([`Graph::submit_at`]).
    pub unix_nanos: i64,
}

/// A frozen memtable on its way to becoming a run.
struct Frozen {
    mem: Mutex<Option<Memtable>>,
    sealed: OnceLock<Arc<Run>>,
    bytes: usize,
}

/// Published runs, oldest first: cloned cheaply by snapshots and sealers.
type Runs = Arc<[Arc<Run>]>;

/// The published read state: runs oldest first, then memtables frozen but not yet sealed.
struct State {
    runs: Runs,
    frozen: VecDeque<Arc<Frozen>>,
    work: bool,
    /// The history of runs sealed but not yet committed with a segment, by LSN range
    /// (`history.rs`): published with the run, so that whoever reads the runs finds it.
    dram_history: Vec<((u64, u64), Arc<crate::memtable::history::Sealed>)>,
    /// The history of runs flushed since, kept for followers still behind them
    /// (`follow.rs`).
    followed_history: Vec<((u64, u64), Arc<crate::memtable::history::Sealed>)>,
}

/// Held (as `maint`) by whoever commits: a flush or a merge, across its I/O. Holding it is
/// the right to write files for the next commit; the root itself is in `manifest`.
struct Maint;

struct Inner {
    path: PathBuf,
    medium: Arc<dyn Medium>,
    opts: Options,
    undirected: bool,
    weighted: bool,
    /// How flushes and merges write runs (fixed at creation).
    compression: Compression,
    /// The names of a string-keyed store (see [`crate::keys`] for its locks, which are
    /// never held with the ones below).
    keys: Option<Keys>,
    pool: rayon::ThreadPool,
    writer: Mutex<Writer>,
    dict: RwLock<Dict>,
    state: Mutex<State>,
    /// Signalled when `state` changes, and when `shutdown` or `poisoned` is set. Those two
    /// live outside `state`, so their setters go through [`Inner::wake_state_waiters`].
    state_cv: Condvar,
    seal_lock: Mutex<()>,
    maint: Mutex<Maint>,
    /// The manifest and its root in force. A leaf: held only to read the root or to
    /// commit one (one persist), with no other lock taken meanwhile.
    manifest: Mutex<Manifest>,
    /// What history the store keeps, and its committed segments (`history.rs`). A leaf,
    /// like `manifest`: never held while another lock is taken.
    history: Mutex<history::Kept>,
    /// Who follows the commits, and how far each has reached (`follow.rs`). A leaf.
    followers: Mutex<follow::Followers>,
    /// Signalled, with `writer` held, when a batch is applied while someone follows, and
    /// at shutdown: followers wait on `writer` for the next batch.
    commit_cv: Condvar,
    /// Followers inside a wait, holding the store (`follow.rs`).
    followers_waiting: std::sync::atomic::AtomicUsize,
    /// Whether this handle committed a root saying its log is in use ([`Inner::claim_log`]).
    log_claimed: AtomicBool,
    wal: Option<Wal>,
    next_run_id: AtomicU64,
    /// Runs whose versions this handle could not derive (`versions.rs`): not tried again.
    versions_refused: Mutex<std::collections::HashSet<u64>>,
    /// Partition shift of the partition runs merges write (0: none); the store's own if
    /// it has partition runs, else [`Options::partition_bits`].
    part_shift: u32,
    poisoned: Mutex<Option<Arc<Error>>>,
    shutdown: AtomicBool,
    /// Test hook: run by the flusher between checking its condition and waiting.
    #[cfg(test)]
    before_flusher_wait: Mutex<Option<Box<dyn Fn() + Send>>>,
    wal_bytes_replayed: u64,
    /// Tails this read-only handle loaded at its open (`tails.rs`).
    tails_loaded: usize,
    /// Where the log this handle replayed ended, and what lay past it.
    log_end: LogEnd,
    /// What the open found that a user should know though the store opened (a damaged
    /// history segment: the latest graph is usable, the points that need it are not).
    warnings: Mutex<Vec<String>>,
    /// Bytes written to the medium before this handle opened the store.
    bytes_written_base: u64,
    /// Run-file bytes this handle wrote, by cause.
    run_bytes: RunBytes,
    _lock: Option<lock::StoreLock>,
    /// Readers opening beside this writer, in other processes (`readers.rs`).
    readers: readers::Watch,
    /// The tails this writer published for them (`tails.rs`).
    tails: Mutex<tails::Published>,
    /// The end LSN of the newest tail written but not yet listed (the log was not durable
    /// past it then); 0 when none waits. Read after every batch without taking `tails`.
    tail_unlisted: AtomicU64,
}

/// Where the log a handle replayed at its open ended: for a read-only handle, what lay past
/// it (a writer cut that, and recorded it in the root).
#[derive(Default)]
struct LogEnd {
    /// The LSN after the last record read.
    lsn: u64,
    /// The newest segment's bytes past the last block that read (read-only handles).
    tail: Option<crate::wal::Tail>,
    /// Whether a writer held the store when this read-only handle opened it: then a tail
    /// that a crash could leave is its write in progress.
    writer_present: bool,
}

/// Run-file bytes written by flushes (memtables becoming runs) and by merges (compaction),
/// so that write amplification can be told apart by cause.
#[derive(Default)]
struct RunBytes {
    flushed: AtomicU64,
    merged: AtomicU64,
}

impl Graph {
    /// Opens the existing store at `path`, recovering it (WAL replay) if it was not closed
    /// cleanly. A path that holds no store is an error ([`Error::NotAStore`]), so that a
    /// mistyped path never becomes a new empty store; [`Graph::create`] makes one (or
    /// `Options::create` allows either).
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Graph> {
        open::open(path.as_ref(), opts, open::Intent::Open)
    }

    /// Creates a new store at `path` (a missing or empty directory) and opens it for
    /// writing. A store already there is an error ([`Error::Invalid`]): open it with
    /// [`Graph::open`]. The directory is fsynced into its parent before this returns.
    pub fn create(path: impl AsRef<Path>, opts: Options) -> Result<Graph> {
        open::open(path.as_ref(), opts, open::Intent::Create)
    }

    /// Opens (or creates) the store held by a medium built by the caller, such as the sim
    /// medium of the crash tests (`evograph::internals::open_on`). No lock file is taken:
    /// the caller keeps to one writer.
    pub(crate) fn open_on(medium: Arc<dyn Medium>, mut opts: Options) -> Result<Graph> {
        opts.create = !opts.read_only;
        open::open_on(Path::new(medium.kind()), medium, None, opts)
    }

    /// A store that lives in DRAM only.
    pub fn in_memory(mut opts: Options) -> Result<Graph> {
        opts.medium = Some(MediumKind::Memory);
        open::open(Path::new(":memory:"), opts, open::Intent::Create)
    }

    fn from_inner(inner: Arc<Inner>) -> Result<Graph> {
        let flusher = if inner.opts.background {
            let i = inner.clone();
            let t = std::thread::Builder::new()
                .name("evograph-flush".into())
                .spawn(move || maintain::flusher_loop(i))
                .map_err(|e| Error::io("spawn", "evograph-flush", e))?;
            Some(t)
        } else {
            None
        };
        Ok(Graph {
            inner,
            flusher: Mutex::new(flusher),
            closed: AtomicBool::new(false),
        })
    }

    /// Queues a batch: it is applied (visible to later snapshots) when this returns, and
    /// durable once [`Graph::wait`] on the ticket returns. It commits at the wall clock's
    /// time, or at the last commit's if the clock is behind it.
    pub fn submit(&self, records: &[Record]) -> Result<Ticket> {
        self.inner.submit(records, None)
    }

    /// [`Graph::submit`], committing at `unix_nanos` (nanoseconds since the Unix epoch,
    /// UTC): the time an input gives its changes. A time before the last commit's is
    /// refused ([`Error::Invalid`]) and nothing of the batch is stored: commit times never
    /// go backwards. The time is durable with the batch.
    pub fn submit_at(&self, records: &[Record], unix_nanos: i64) -> Result<Ticket> {
        self.inner.submit(records, Some(unix_nanos))
    }

    /// The newest commit, `None` in a store that never committed a batch with a time
    /// (an empty one, or one written before commit times were kept).
    pub fn last_commit(&self) -> Option<CommitPoint> {
        self.inner.writer.lock().unwrap().last_commit
    }

    /// Waits until the batch behind `t` is acknowledged under the store's durability mode.
    pub fn wait(&self, t: Ticket) -> Result<()> {
        self.inner.wait(t)
    }

    /// Applies a batch and waits for its acknowledgement.
    pub fn apply(&self, records: &[Record]) -> Result<()> {
        let t = self.submit(records)?;
        self.wait(t)
    }

    /// Inserts edges (external ids); existing edges are left as they are.
    pub fn insert_edges(&self, edges: &[(u64, u64)]) -> Result<()> {
        let recs: Vec<Record> = edges.iter().map(|&(s, d)| Record::Insert(s, d)).collect();
        self.apply(&recs)
    }

    /// Deletes edges (external ids); missing edges are ignored.
    pub fn delete_edges(&self, edges: &[(u64, u64)]) -> Result<()> {
        let recs: Vec<Record> = edges.iter().map(|&(s, d)| Record::Delete(s, d)).collect();
        self.apply(&recs)
    }

    /// Makes a vertex exist.
    pub fn insert_vertex(&self, v: u64) -> Result<()> {
        self.apply(&[Record::InsertVertex(v)])
    }

    /// Deletes a vertex and all its edges.
    pub fn delete_vertex(&self, v: u64) -> Result<()> {
        self.apply(&[Record::DeleteVertex(v)])
    }

    /// A consistent view of everything applied so far.
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.inner.snapshot()
    }

    /// The graph exactly as it was right after the commit `at` names (the last commit at
    /// or before that LSN or time), and that commit. The same [`Snapshot`] as
    /// [`Graph::snapshot`]'s, so every kernel runs on it. A point outside the history the
    /// store keeps is refused ([`Error::Invalid`]), the message naming the window.
    pub fn snapshot_at(&self, at: Point) -> Result<(Snapshot, CommitPoint)> {
        self.inner.snapshot_at(at)
    }

    /// How big the graph is now, as [`GraphSize::of`] the latest snapshot counts it:
    /// from the runs' headers (their adds, tombstones and self loops) without reading (or
    /// verifying) any list, so a run whose lists are damaged is not reported here: a
    /// snapshot, or [`Graph::check`], reports it. An undirected store holding a run
    /// written before headers counted self loops takes a snapshot instead.
    pub fn size(&self) -> Result<GraphSize> {
        self.inner.size()
    }

    /// How big the graph was right after the commit `at` names (as
    /// [`Graph::snapshot_at`] reads it), and that commit: counted from the runs' versions
    /// without building the graph where the runs holding the commit have them (a pass over
    /// their columns, nothing written), else from the graph built.
    pub fn size_at(&self, at: Point) -> Result<(GraphSize, CommitPoint)> {
        self.inner.size_at(at)
    }

    /// The graph over the window from `start` to `end`: every edge and vertex present as of
    /// `start` (as [`Graph::snapshot_at`] reads it) or after any later commit before `end`
    /// (a time: commits timed before it; an LSN: commits below it). An edge a commit at
    /// `start` deleted is not in it, nor one a commit at `end` inserted; commits that share
    /// one time count as one moment, the state after the last of them. Raphtory's
    /// persistent-graph `window(start, end)`. An edge present at `start` keeps the weight
    /// it had there; one added later has the weight of the last moment it was present.
    /// Costs the graph as of `start` plus a sort of the changes inside the window.
    pub fn snapshot_window(&self, start: Point, end: Point) -> Result<(Snapshot, WindowSpan)> {
        self.inner.snapshot_window(start, end)
    }

    /// The steps of a rolling computation from `from` to `to`: a point every `every`
    /// (a duration from `from`'s time, or a number of commits from `from`'s commit), each
    /// with the commit whose graph it reads and, given a `width`, the window of that
    /// width that ends with it (its state included). Read each step with
    /// [`Graph::snapshot_at`] or [`Graph::snapshot_window`].
    pub fn rolling_steps(
        &self,
        from: Point,
        to: Point,
        every: Stride,
        width: Option<Stride>,
    ) -> Result<Vec<RollStep>> {
        self.inner.rolling_steps(from, to, every, width)
    }

    /// The net changes from the commit `from` names to the one `to` names (see [`Diff`]):
    /// applied to the graph as of `from` they give the graph as of `to`, in either order.
    /// Its cost grows with the changes between them, not with the graph.
    pub fn diff(&self, from: Point, to: Point) -> Result<Diff> {
        self.inner.diff(from, to)
    }

    /// When the edge from `src` to `dst` (dense ids; either order in an undirected store)
    /// lived within the history kept: the commits that added and removed it, and whether it
    /// existed before the oldest commit kept. Reads only the history's change lists and the
    /// latest graph, never a past graph.
    pub fn edge_history(&self, src: VertexId, dst: VertexId) -> Result<Lifetime> {
        self.inner.lifetime(lifetime::Of::Edge(src, dst))
    }

    /// When vertex `v` (dense id) lived within the history kept, as
    /// [`Graph::edge_history`] says of an edge.
    pub fn vertex_history(&self, v: VertexId) -> Result<Lifetime> {
        self.inner.lifetime(lifetime::Of::Vertex(v))
    }

    /// The commits in the history kept, and what it costs on the medium.
    pub fn log(&self) -> Result<Log> {
        self.inner.log()
    }

    /// What history the store keeps.
    pub fn history(&self) -> History {
        self.inner.history.lock().unwrap().setting
    }

    /// Changes what history the store keeps, durably. History starts at the first commit
    /// after the change (everything applied before is flushed first); a narrower window
    /// lets go of what falls outside it, and `none` of all of it, for good: a commit let go
    /// stays refused whatever window is set later, and its bytes are freed now.
    pub fn set_history(&self, setting: History) -> Result<()> {
        self.inner.set_history(setting)
    }

    /// The bytes of the history segments, apart for the commits the window keeps and
    /// those it let go (held until `config` or the next writer's open frees them).
    pub fn history_bytes(&self) -> Result<HistoryBytes> {
        self.inner.history_bytes()
    }

    /// Writes everything applied so far into run files and commits them.
    pub fn flush(&self) -> Result<()> {
        self.inner.flush()
    }

    /// Flushes, then merges all runs into one base run.
    pub fn compact(&self) -> Result<()> {
        self.inner.compact_full()
    }

    /// The dense id of an external id, if the vertex was ever seen; `Corrupt` if the
    /// dictionary is damaged (it is indexed on first use, not at open). In a string-keyed
    /// store the external id is the name's number ([`Graph::intern`]).
    pub fn dense_id(&self, ext: u64) -> Result<Option<VertexId>> {
        self.inner.dict.read().unwrap().get(ext)
    }

    /// The dense id of the vertex a user names by `key`: an integer in an integer-keyed
    /// store, a name in a string-keyed one. `None` if no such vertex was ever seen.
    pub fn dense_id_of(&self, key: &str) -> Result<Option<VertexId>> {
        let ext = match &self.inner.keys {
            Some(k) => k.find(key),
            None => Some(key.trim().parse::<u64>().map_err(|_| {
                Error::Invalid(format!(
                    "'{key}' is not a vertex id: this store is keyed by unsigned 64-bit integers"
                ))
            })?),
        };
        match ext {
            Some(e) => self.dense_id(e),
            None => Ok(None),
        }
    }

    /// How the store's vertices are keyed, as recorded at creation.
    pub fn key_kind(&self) -> KeyKind {
        match self.inner.keys {
            Some(_) => KeyKind::String,
            None => KeyKind::U64,
        }
    }

    /// The external ids of `names` in a string-keyed store, giving names never seen before
    /// the next free numbers. New names are durable in the store before this returns, so
    /// the ids can go into [`Record`]s like integer ids. A bad name (empty, over 65,535
    /// bytes) fails the call and stores none of them.
    pub fn intern<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Result<Vec<u64>> {
        self.inner.check_writable()?;
        self.inner.intern(names)
    }

    /// The external id of `name` in a string-keyed store, if it was ever interned.
    pub fn key_id(&self, name: &str) -> Result<Option<u64>> {
        Ok(self.inner.string_keys()?.find(name))
    }

    /// Submits `records` whose ids are positions in `names` (what an input parsed with
    /// string keys hands out, see [`crate::io::RecordSource::take_names`]). Names that an
    /// insert uses are interned; deletes that name a vertex never stored are dropped, as
    /// they would delete nothing.
    pub fn submit_named(&self, records: &[Record], names: &Names) -> Result<Ticket> {
        let recs = self.inner.resolve_names(records, names)?;
        self.submit(&recs)
    }

    /// [`Graph::submit_named`], committing at `unix_nanos` as [`Graph::submit_at`] does.
    pub fn submit_named_at(
        &self,
        records: &[Record],
        names: &Names,
        unix_nanos: i64,
    ) -> Result<Ticket> {
        let recs = self.inner.resolve_names(records, names)?;
        self.submit_at(&recs, unix_nanos)
    }

    /// Inserts edges between named vertices of a string-keyed store.
    pub fn insert_named_edges(&self, edges: &[(&str, &str)]) -> Result<()> {
        let ids = self.intern(edges.iter().flat_map(|&(s, d)| [s, d]))?;
        let recs: Vec<Record> = ids
            .chunks_exact(2)
            .map(|p| Record::Insert(p[0], p[1]))
            .collect();
        self.apply(&recs)
    }

    /// The store directory (`:memory:` for DRAM-only stores).
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Whether edges carry weights.
    pub fn is_weighted(&self) -> bool {
        self.inner.weighted
    }

    /// Whether the store is undirected.
    pub fn is_undirected(&self) -> bool {
        self.inner.undirected
    }

    /// The store's durability mode.
    pub fn durability(&self) -> Durability {
        self.inner.opts.durability
    }

    /// Counters and sizes.
    pub fn stats(&self) -> Result<Stats> {
        self.inner.stats()
    }

    /// DRAM the engine accounts for; see [`Stats::dram_bytes`].
    pub fn dram_bytes(&self) -> u64 {
        self.inner.dram_bytes()
    }

    /// Verifies every checksum and invariant; see [`CheckReport`].
    pub fn check(&self) -> Result<CheckReport> {
        self.inner.check()
    }

    /// Bytes of WAL replayed when this handle opened the store.
    pub fn wal_bytes_replayed(&self) -> u64 {
        self.inner.wal_bytes_replayed
    }

    /// For a read-only handle: the newest WAL segment's bytes past the last block that read,
    /// if any (a torn tail, or damage), as found when it opened; the handle answers from the
    /// log before them. `None` for a writer (its recovery cut them: [`Stats::last_cut`]) and
    /// beside a live writer unless they are damage (a crash's kind of tail is its write in
    /// progress).
    pub fn unreadable_tail(&self) -> Option<UnreadableTail> {
        self.inner.unreadable_tail()
    }

    /// What opening the store found that a user should know though it opened: damage to
    /// a history segment (the latest graph is usable; points and diffs that need the
    /// segment are refused, naming it).
    pub fn warnings(&self) -> Vec<String> {
        self.inner.warnings.lock().unwrap().clone()
    }

    /// The LSN after the last record of the log this handle read when it opened.
    pub fn log_read_to(&self) -> u64 {
        self.inner.log_end.lsn
    }

    /// Whether a writer held the store when this read-only handle opened it.
    pub fn writer_was_present(&self) -> bool {
        self.inner.log_end.writer_present
    }

    /// Flushes everything, stops background work and releases the store. Merges still
    /// running in the background are given up (the next open starts them again), except
    /// that a level holding far more runs than the fan-out asks for is merged before this
    /// returns: runs stay bounded however short the sessions are.
    pub fn close(self) -> Result<()> {
        self.shutdown(true)
    }

    fn shutdown(&self, flush: bool) -> Result<()> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        self.inner.shutdown.store(true, Ordering::Release);
        self.inner.wake_state_waiters();
        // Taken before notifying, as `wake_state_waiters` does: no follower sleeps through it.
        drop(self.inner.writer.lock().unwrap());
        self.inner.commit_cv.notify_all();
        self.inner.let_followers_go();
        if let Some(t) = self.flusher.lock().unwrap().take() {
            let _ = t.join();
        }
        let writable = flush && !self.inner.opts.read_only;
        let res = match self.inner.poison_error() {
            Some(e) if writable => Err(Error::Poisoned(e)),
            // Overdue levels are merged here, so that a store closed (or killed) soon after
            // every open still keeps its runs bounded.
            _ if writable => self.inner.flush_then(maintain::Merges::Overdue),
            _ => Ok(()),
        };
        if let Some(wal) = &self.inner.wal {
            // Only after a flush that ran and succeeded is every record in committed runs;
            // otherwise the log may hold the only copy of acknowledged records: keep it.
            // The root stops saying the log is in use before the log is retired, so that
            // a crash in between leaves a root that needs no segment.
            let flushed = writable && res.is_ok();
            let res = match flushed {
                true => self.inner.commit_log_released(),
                false => res,
            };
            let wal_res = wal.shutdown(flushed && res.is_ok());
            return res.and(wal_res);
        }
        res
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let _ = self.shutdown(true);
    }
}

impl Inner {
    fn poison_error(&self) -> Option<Arc<Error>> {
        if let Some(e) = self.poisoned.lock().unwrap().clone() {
            return Some(e);
        }
        self.wal.as_ref().and_then(|w| w.error())
    }

    fn check_writable(&self) -> Result<()> {
        if self.opts.read_only {
            return Err(Error::Invalid("the store was opened read-only".into()));
        }
        Ok(())
    }

    /// The key table, or the error for a store keyed by integers.
    fn string_keys(&self) -> Result<&Keys> {
        self.keys.as_ref().ok_or_else(|| {
            Error::Invalid(
                "this store is keyed by integer ids; vertex names need a store created with string keys (ingest --keys string, Options::keys)"
                    .into(),
            )
        })
    }

    /// [`Keys::intern`] into this store's medium. A failed write of `KEYS` poisons the
    /// handle like any failed write: what reached the file is unknown, and only a reopen
    /// (which reads back what is there) may append again.
    fn intern<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Result<Vec<u64>> {
        self.check_poisoned()?;
        let keys = self.string_keys()?;
        keys.intern(&*self.medium, names).inspect_err(|e| {
            if matches!(e, Error::Io { .. }) {
                self.poison(e);
            }
        })
    }

    /// `records` with positions in `names` replaced by external ids (see
    /// [`Graph::submit_named`]).
    fn resolve_names(&self, records: &[Record], names: &Names) -> Result<Vec<Record>> {
        let keys = self.string_keys()?;
        names.check().map_err(Error::Invalid)?;
        let mut inserted = vec![false; names.len()];
        let mut mark = |i: u64| -> Result<()> {
            *inserted.get_mut(i as usize).ok_or_else(|| {
                Error::Invalid(format!(
                    "a record names position {i} of a batch of {} names",
                    names.len()
                ))
            })? = true;
            Ok(())
        };
        for r in records {
            match *r {
                Record::Insert(s, d) | Record::InsertWeighted(s, d, _) => {
                    mark(s)?;
                    mark(d)?;
                }
                Record::InsertVertex(v) => mark(v)?,
                Record::Delete(s, d) => {
                    // Positions of deletes are checked too, so a bad batch fails whole.
                    for i in [s, d] {
                        if i >= names.len() as u64 {
                            return Err(Error::Invalid(format!(
                                "a record names position {i} of a batch of {} names",
                                names.len()
                            )));
                        }
                    }
                }
                Record::DeleteVertex(v) if v >= names.len() as u64 => {
                    return Err(Error::Invalid(format!(
                        "a record names position {v} of a batch of {} names",
                        names.len()
                    )));
                }
                Record::DeleteVertex(_) => {}
            }
        }
        let name = |i: u64| names.get(i).expect("checked above");
        let to_intern = (0..names.len() as u64).filter(|&i| inserted[i as usize]);
        let interned = if inserted.iter().any(|&b| b) {
            self.check_writable()?;
            self.intern(to_intern.clone().map(name))?
        } else {
            Vec::new()
        };
        let mut ext: Vec<Option<u64>> = vec![None; names.len()];
        for (i, e) in to_intern.zip(interned) {
            ext[i as usize] = Some(e);
        }
        for (i, slot) in ext.iter_mut().enumerate() {
            if slot.is_none() {
                *slot = keys.find(name(i as u64));
            }
        }
        let id = |i: u64| ext[i as usize];
        Ok(records
            .iter()
            .filter_map(|r| {
                Some(match *r {
                    Record::Insert(s, d) => Record::Insert(id(s)?, id(d)?),
                    Record::InsertWeighted(s, d, w) => Record::InsertWeighted(id(s)?, id(d)?, w),
                    Record::InsertVertex(v) => Record::InsertVertex(id(v)?),
                    Record::Delete(s, d) => Record::Delete(id(s)?, id(d)?),
                    Record::DeleteVertex(v) => Record::DeleteVertex(id(v)?),
                })
            })
            .collect())
    }

    fn check_poisoned(&self) -> Result<()> {
        match self.poison_error() {
            Some(e) => Err(Error::Poisoned(e)),
            None => Ok(()),
        }
    }

    fn poison(&self, e: &Error) {
        self.poisoned
            .lock()
            .unwrap()
            .get_or_insert_with(|| match e {
                // Already a poison: keep its first cause, not a wrapping of it.
                Error::Poisoned(cause) => cause.clone(),
                e => Arc::new(e.replica()),
            });
        self.wake_state_waiters();
    }

    /// Wakes the threads waiting on `state_cv` after a condition kept outside `state`
    /// (`shutdown`, `poisoned`) was set. A waiter checks its condition holding `state` and
    /// releases it only by starting to wait; taking `state` here before notifying means
    /// the waiter either saw the condition or is already waiting. A notification sent
    /// without the lock could fall between its check and its wait, and it would sleep
    /// forever: a `close` that never returned, or a writer held back for good after an
    /// I/O error.
    ///
    /// Takes `state`, so the caller must not hold it.
    fn wake_state_waiters(&self) {
        drop(self.state.lock().unwrap());
        self.state_cv.notify_all();
    }

    fn wait(&self, t: Ticket) -> Result<()> {
        match (&self.wal, self.opts.durability) {
            (Some(wal), Durability::Sync) => wal.wait_durable(t.0).inspect_err(|e| self.poison(e)),
            _ => self.check_poisoned(),
        }
    }

    /// Memtable bytes at which the active memtable is frozen: half the budget, so the
    /// active memtable and one being sealed (which frees its buffers as it goes) fit; less
    /// while readers in other processes open beside it (`readers.rs`), which replay it all.
    fn freeze_bytes(&self) -> usize {
        let half = (self.opts.memtable_bytes / 2).max(1);
        match self.readers.readers_about() {
            true => half.min(readers::FREEZE_BYTES_WITH_READERS),
            false => half,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod run_bound_tests;

#[cfg(test)]
mod time_tests;

#[cfg(test)]
mod route_tests;

#[cfg(test)]
mod size_tests;
