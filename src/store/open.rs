//! Opening a store: every open is a recovery.
//!
//! Order matters: refuse foreign directories before touching them, take the lock, read the
//! manifest, load and verify the dictionary and the runs it names, delete files it does not
//! name (leftovers of a crash between writing and committing), then replay the WAL from the
//! manifest's start LSN into a fresh memtable.

use super::lock::StoreLock;
use super::{Compression, Graph, Inner, Maint, MediumKind, Options, State, Writer};
use crate::batch::{id_of, is_del, Section};
use crate::dict::{self, Dict};
use crate::keys::{self, KeyKind, Keys};
use crate::manifest::{self, Manifest, Root};
use crate::medium::dir::create_dir_durably;
use crate::medium::file::FileMedium;
use crate::medium::pmem::{PmemMedium, PmemMode};
use crate::medium::{memory::MemoryMedium, Medium};
use crate::memtable::Memtable;
use crate::run::{self, Run};
use crate::types::{Durability, VertexId};
use crate::wal::{self, Wal};
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex, RwLock};

/// Whether `name` is a file an evograph store consists of (manifest, dictionary, lock, runs,
/// WAL segments and spares): what may be removed to take back a store that was never
/// finished.
pub fn is_store_file(name: &str) -> bool {
    name == manifest::FILE
        || name == manifest::NEW_FILE
        || name == dict::FILE
        || name == keys::FILE
        || name == "LOCK"
        || Run::parse_file_name(name).is_some()
        || wal::segment::parse_name(name).is_some()
        || wal::segment::is_spare(name)
}

/// Whether `name` is a WAL spare: a retired segment a closed store keeps for its next
/// writer to overwrite. It holds no data, so at-rest figures leave it out.
pub fn is_wal_spare(name: &str) -> bool {
    wal::segment::is_spare(name)
}

/// How the store at `path` keys its vertices, reading only its manifest; `None` where no
/// store was committed yet (so the caller decides at creation).
pub fn recorded_key_kind(path: &Path) -> Result<Option<KeyKind>> {
    if !path.join(manifest::FILE).exists() {
        return Ok(None);
    }
    let files = FileMedium::new(path);
    if Manifest::never_committed(&files)? {
        return Ok(None);
    }
    key_kind(Manifest::open(&files)?.root()).map(Some)
}

/// What the caller of [`open`] asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Intent {
    /// [`Graph::open`]: an existing store (or a new one when `Options::create` says so).
    Open,
    /// [`Graph::create`]: a new store; an existing one is an error.
    Create,
}

pub(super) fn open(path: &Path, mut opts: Options, intent: Intent) -> Result<Graph> {
    if intent == Intent::Create {
        opts.create = true;
        opts.read_only = false;
    }
    let opts = normalized(opts);
    if opts.medium == Some(MediumKind::Memory) {
        return open_on(path, Arc::new(MemoryMedium::new()), None, opts);
    }
    if opts.read_only {
        recorded_medium(path, &opts)?;
        return super::reader::open_reader(path, opts);
    }
    prepare_dir(path, &opts)?;
    let lock = StoreLock::acquire(path)?;
    let kind = recorded_medium(path, &opts)?;
    let medium: Arc<dyn Medium> = match kind {
        MediumKind::Pmem => Arc::new(PmemMedium::new(path, PmemMode::Flush)),
        MediumKind::Battery => Arc::new(PmemMedium::new(path, PmemMode::Battery)),
        _ => Arc::new(FileMedium::new(path)),
    };
    if intent == Intent::Create && holds_store(&*medium)? {
        return Err(Error::Invalid(format!(
            "{} already holds an evograph store: open it instead of creating one",
            path.display()
        )));
    }
    open_on(path, medium, Some(lock), opts)
}

/// Whether the medium holds a store that was committed at least once (a creation cut short
/// before its first commit, with no data, is no store).
fn holds_store(medium: &dyn Medium) -> Result<bool> {
    Ok(medium.exists(manifest::FILE)
        && !(Manifest::never_committed(medium)? && holds_no_data(medium)?))
}

/// Read-only opens change nothing: no creation, no background work, no log.
fn normalized(mut opts: Options) -> Options {
    if opts.read_only {
        opts.create = false;
        opts.background = false;
        opts.durability = Durability::None;
    }
    // Wider partitions than the id space are one partition: no split.
    opts.partition_bits = opts.partition_bits.min(crate::types::ID_WIDTH);
    opts
}

/// Refuses paths that are not (and cannot become) a store; creates a missing directory,
/// durably, when creation is allowed.
pub(super) fn prepare_dir(path: &Path, opts: &Options) -> Result<()> {
    let not_store = |reason: &str| Error::NotAStore {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    if !path.exists() {
        if !opts.create {
            return Err(not_store("it does not exist"));
        }
        create_dir_durably(path)?;
    }
    if !path.is_dir() {
        return Err(not_store("it is not a directory"));
    }
    if !path.join(manifest::FILE).exists() {
        let foreign = std::fs::read_dir(path)
            .map_err(|e| Error::io("list", path, e))?
            .filter_map(|e| e.ok())
            .find(|e| !is_store_file(&e.file_name().to_string_lossy()));
        if let Some(f) = foreign {
            return Err(not_store(&format!(
                "it has no MANIFEST and holds other files (such as {})",
                f.file_name().to_string_lossy()
            )));
        }
        if !opts.create {
            return Err(not_store("it has no MANIFEST"));
        }
    }
    Ok(())
}

/// The medium an existing store was created on (refusing another one named in `opts`), or
/// the one `opts` asks for (file by default) for a new store.
fn recorded_medium(path: &Path, opts: &Options) -> Result<MediumKind> {
    let asked = opts.medium.unwrap_or(MediumKind::File);
    let files = FileMedium::new(path);
    if !files.exists(manifest::FILE) || Manifest::never_committed(&files)? {
        return Ok(asked);
    }
    let recorded: MediumKind = Manifest::open(&files)?
        .root()
        .medium
        .parse()
        .map_err(|e: String| Error::corrupt(format!("MANIFEST: {e}")))?;
    match opts.medium {
        Some(k) if k != recorded => Err(Error::Invalid(format!(
            "store {} was created on the {recorded} medium; open it as {recorded} (or name no medium), not {k}",
            path.display()
        ))),
        _ => Ok(recorded),
    }
}

/// Opens (or creates) the store held by `medium`: every open is a recovery.
pub(super) fn open_on(
    path: &Path,
    medium: Arc<dyn Medium>,
    lock: Option<StoreLock>,
    opts: Options,
) -> Result<Graph> {
    let opts = normalized(opts);
    let pool = worker_pool(opts.threads)?;
    let manifest = load_manifest(path, &*medium, &opts)?;
    let root = manifest.root().clone();
    check_shape(path, &root, &opts)?;
    let repair = !opts.read_only;
    let mut dict = Dict::load(&*medium, root.dict_entries as usize, root.dict_bytes)?;
    let runs = pool.install(|| open_runs(&medium, &root, opts.verify))?;
    let strays = strays(&*medium, &root)?;
    let mut deleted = deleted_in_runs(&runs);
    let mut mem = Memtable::new(
        root.undirected,
        root.weighted,
        root.wal_start_lsn,
        dict.len() as VertexId,
    );
    let rec = replay_wal(
        &*medium,
        &root,
        repair,
        &pool,
        (&mut dict, &mut mem, &mut deleted),
    )?;
    refuse_damaged_root(&manifest, &strays, &rec)?;
    let keys = open_keys(&*medium, &root, &dict, repair)?;
    // A writer with a log reuses the spare segments; without one they only take space.
    let spares = spare_segments(&*medium)?;
    let spares = if opts.durability == Durability::None {
        if repair {
            remove_strays(&*medium, &spares)?;
        }
        Vec::new()
    } else {
        spares
    };
    if repair {
        remove_strays(&*medium, &strays)?;
        remove_unfinished_manifest(&*medium)?;
        Dict::cut_uncommitted(&*medium, root.dict_bytes)?;
    }
    let replayed = rec.bytes_replayed;
    let next_lsn = rec.next_lsn;
    mem.max_lsn = next_lsn;
    let wal = match opts.durability {
        Durability::None => None,
        mode => Some(Wal::start(
            medium.clone(),
            rec,
            mode,
            opts.wal_segment_bytes,
            spares,
        )?),
    };
    let next_run_id = root
        .next_run_id
        .max(runs.iter().map(|r| r.header.id + 1).max().unwrap_or(1));
    let part_shift = runs
        .iter()
        .map(|r| r.header.part_shift())
        .find(|&s| s > 0)
        .unwrap_or(opts.partition_bits);
    let inner = Arc::new(Inner {
        path: path.to_path_buf(),
        medium: medium.clone(),
        undirected: root.undirected,
        weighted: root.weighted,
        compression: compression(&root)?,
        keys,
        pool,
        writer: Mutex::new(Writer {
            mem,
            next_lsn,
            deleted: Arc::new(deleted),
        }),
        dict: RwLock::new(dict),
        state: Mutex::new(State {
            runs: runs.into_iter().map(Arc::new).collect::<Vec<_>>().into(),
            frozen: VecDeque::new(),
            // The flusher's first pass runs at once: merges a killed or closed session left
            // undone start now, not at the first flush (with none to do, the pass is idle).
            work: !opts.read_only,
        }),
        state_cv: Condvar::new(),
        seal_lock: Mutex::new(()),
        maint: Mutex::new(Maint { manifest }),
        bytes_written_base: root.bytes_written,
        wal,
        run_bytes: Default::default(),
        next_run_id: AtomicU64::new(next_run_id),
        part_shift,
        poisoned: Mutex::new(None),
        shutdown: AtomicBool::new(false),
        #[cfg(test)]
        before_flusher_wait: Default::default(),
        wal_bytes_replayed: replayed,
        opts,
        _lock: lock,
    });
    if repair {
        settle_log(&inner, replayed)?;
    }
    Graph::from_inner(inner)
}

fn worker_pool(threads: usize) -> Result<rayon::ThreadPool> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("evograph-worker-{i}"))
        .build()
        .map_err(|e| Error::Invalid(format!("thread pool: {e}")))
}

/// The committed manifest, or a new store's first one. A `MANIFEST` that never had a root
/// committed, in a directory holding no data, is a creation cut short: it is created anew.
fn load_manifest(path: &Path, medium: &dyn Medium, opts: &Options) -> Result<Manifest> {
    if holds_store(medium)? {
        return Manifest::open(medium);
    }
    if !opts.create {
        return Err(Error::NotAStore {
            path: path.to_path_buf(),
            reason: "no store was ever committed there".into(),
        });
    }
    medium.create_root()?;
    let mut r = Root::new(opts.undirected.unwrap_or(false));
    r.weighted = opts.weighted.unwrap_or(false);
    r.medium = opts.medium.unwrap_or(MediumKind::File).as_str().into();
    r.logged = opts.durability != Durability::None;
    r.durability = Some(opts.durability.to_string());
    r.keys = opts.keys.unwrap_or_default().as_str().into();
    r.compression = opts.compression.unwrap_or_default().as_str().into();
    r.format_version = r.expected_format();
    Manifest::create(medium, r)
}

fn holds_no_data(medium: &dyn Medium) -> Result<bool> {
    Ok(!medium.list()?.iter().any(|n| {
        n == dict::FILE
            || n == keys::FILE
            || Run::parse_file_name(n).is_some()
            || wal::segment::parse_name(n).is_some()
    }))
}

/// Refuses to open a store as the other kind (directed or not, weighted or not).
fn check_shape(path: &Path, root: &Root, opts: &Options) -> Result<()> {
    let clash = |what: [&str; 2], stored: bool, asked: bool| {
        Error::Invalid(format!(
            "store {} is {}; it cannot be opened as {}",
            path.display(),
            what[stored as usize],
            what[asked as usize]
        ))
    };
    if let Some(u) = opts.undirected.filter(|&u| u != root.undirected) {
        return Err(clash(["directed", "undirected"], root.undirected, u));
    }
    if let Some(w) = opts.weighted.filter(|&w| w != root.weighted) {
        return Err(clash(["unweighted", "weighted"], root.weighted, w));
    }
    let packed = compression(root)?;
    if let Some(c) = opts.compression.filter(|&c| c != packed) {
        return Err(Error::Invalid(format!(
            "store {} was created with compression {packed}; it cannot be opened with compression {c}",
            path.display()
        )));
    }
    let stored = key_kind(root)?;
    if let Some(k) = opts.keys.filter(|&k| k != stored) {
        return Err(Error::Invalid(format!(
            "store {} is keyed by {}; it cannot be opened as keyed by {}",
            path.display(),
            key_words(stored),
            key_words(k)
        )));
    }
    Ok(())
}

/// The compression a root records.
fn compression(root: &Root) -> Result<Compression> {
    root.compression
        .parse()
        .map_err(|e: String| Error::corrupt(format!("MANIFEST: {e}")))
}

/// The key kind a root records.
fn key_kind(root: &Root) -> Result<KeyKind> {
    root.keys
        .parse()
        .map_err(|e: String| Error::corrupt(format!("MANIFEST: {e}")))
}

fn key_words(k: KeyKind) -> &'static str {
    match k {
        KeyKind::U64 => "integer ids",
        KeyKind::String => "string names",
    }
}

/// The key table of a string-keyed store, loaded after the log was replayed (a reader
/// beside a live writer then finds every name the log it read uses), and checked to hold
/// every number the dictionary gives a dense id.
fn open_keys(medium: &dyn Medium, root: &Root, dict: &Dict, repair: bool) -> Result<Option<Keys>> {
    if key_kind(root)? != KeyKind::String {
        if medium.exists(keys::FILE) {
            return Err(Error::corrupt(
                "the store is keyed by integer ids but holds a KEYS file",
            ));
        }
        return Ok(None);
    }
    let max = dict.externals().iter().copied().max();
    Keys::open(medium, repair, max).map(Some)
}

/// Vertices deleted as of the runs: the last vertex op of each vertex wins.
fn deleted_in_runs(runs: &[Run]) -> Vec<u64> {
    let mut deleted = Vec::new();
    for r in runs {
        r.vertex_ops
            .get()
            .iter()
            .for_each(|&x| mark_deleted(&mut deleted, x));
    }
    deleted
}

fn mark_deleted(bits: &mut Vec<u64>, x: VertexId) {
    let v = id_of(x) as usize;
    if bits.len() <= v / 64 {
        bits.resize(v / 64 + 1, 0);
    }
    if is_del(x) {
        bits[v / 64] |= 1 << (v % 64);
    } else {
        bits[v / 64] &= !(1 << (v % 64));
    }
}

/// Replays the log from the manifest's start LSN into the memtable, the dictionary and the
/// deleted-vertex bits.
fn replay_wal(
    medium: &dyn Medium,
    root: &Root,
    repair: bool,
    pool: &rayon::ThreadPool,
    (dict, mem, deleted): (&mut Dict, &mut Memtable, &mut Vec<u64>),
) -> Result<wal::Recovered> {
    let mut replay = |blk: &wal::block::Block, skip: u64| -> Result<()> {
        dict.replay(blk.batch.first_new_id, &blk.batch.new_ids)?;
        mem.ensure_vertices(dict.len() as VertexId);
        let mut skip = skip as usize;
        for s in &blk.batch.sections {
            let from = skip.min(s.len());
            skip -= from;
            match s {
                Section::Edges(e, wts) => {
                    if blk.batch.weighted != root.weighted {
                        return Err(Error::corrupt(format!(
                            "WAL block at LSN {} disagrees with the store on edge weights",
                            blk.first_lsn
                        )));
                    }
                    if e[from..]
                        .iter()
                        .any(|&[a, b]| a as usize >= dict.len() || id_of(b) as usize >= dict.len())
                    {
                        return Err(Error::corrupt(format!(
                            "WAL block at LSN {} names a vertex the dictionary lacks",
                            blk.first_lsn
                        )));
                    }
                    let w = if wts.is_empty() {
                        &[][..]
                    } else {
                        &wts[from..]
                    };
                    pool.install(|| mem.apply_edges(&e[from..], w));
                }
                Section::Vertices(v) => {
                    for &x in &v[from..] {
                        if id_of(x) as usize >= dict.len() {
                            return Err(Error::corrupt("WAL vertex record beyond the dictionary"));
                        }
                        mark_deleted(deleted, x);
                        mem.apply_vertex(x);
                    }
                }
            }
        }
        mem.max_lsn = blk.first_lsn + blk.records;
        Ok(())
    };
    wal::recover(medium, root.wal_start_lsn, repair, &mut replay)
}

/// The newest root is damaged and the older one is in force. When the store was written
/// with a log, a commit torn by a crash leaves the log that rebuilds what the newer root
/// held; with no log left, that root had committed and was damaged afterwards, and opening
/// would silently drop its runs.
fn refuse_damaged_root(manifest: &Manifest, strays: &[String], rec: &wal::Recovered) -> Result<()> {
    if manifest.other_slot_damaged
        && manifest.root().logged
        && !strays.is_empty()
        && rec.segments.is_empty()
    {
        return Err(Error::corrupt(format!(
            "the newest MANIFEST root is damaged; the previous root does not name {} and no log remains to rebuild {}",
            strays.join(", "),
            if strays.len() == 1 { "it" } else { "them" }
        )));
    }
    Ok(())
}

/// Brings the log in line with this handle's durability: without a log of our own, what
/// the old log held becomes part of the runs and the old log goes; the root records
/// whether a log is kept (see [`Root::logged`]).
fn settle_log(inner: &Arc<Inner>, replayed: u64) -> Result<()> {
    if inner.wal.is_none() && replayed > 0 {
        inner.flush()?;
        for name in inner.medium.list()? {
            if wal::segment::parse_name(&name).is_some() {
                inner.medium.remove(&name)?;
            }
        }
        inner.medium.sync_dir()?;
    }
    let mut m = inner.maint.lock().unwrap();
    let durability = Some(inner.opts.durability.to_string());
    if m.manifest.root().logged != inner.wal.is_some() || m.manifest.root().durability != durability
    {
        let mut root = m.manifest.root().clone();
        root.logged = inner.wal.is_some();
        root.durability = durability;
        m.manifest.commit(&*inner.medium, root)?;
    }
    Ok(())
}

fn open_runs(medium: &Arc<dyn Medium>, root: &Root, verify: run::file::Verify) -> Result<Vec<Run>> {
    let runs: Vec<Run> = root
        .runs
        .par_iter()
        .map(|rr| {
            let name = Run::file_name(rr.id);
            if !medium.exists(&name) {
                return Err(Error::corrupt(format!(
                    "run file {name} named by the manifest is missing"
                )));
            }
            let r = run::file::open(medium, &name, verify)?;
            let h = &r.header;
            if h.id != rr.id
                || h.file_len != rr.file_len
                || h.min_lsn != rr.min_lsn
                || h.max_lsn != rr.max_lsn
            {
                return Err(Error::corrupt(format!(
                    "run {name} does not match the manifest's description"
                )));
            }
            if h.vertex_space > root.dict_entries {
                return Err(Error::corrupt(format!(
                    "run {name} covers {} vertices but the dictionary has {}",
                    h.vertex_space, root.dict_entries
                )));
            }
            Ok(r)
        })
        .collect::<Result<_>>()?;
    let headers: Vec<&run::RunHeader> = runs.iter().map(|r| &r.header).collect();
    if let Some(p) = super::policy::lsn_order_problem(&headers) {
        return Err(Error::corrupt(format!("the manifest's runs: {p}")));
    }
    let end = runs.iter().map(|r| r.header.max_lsn).max();
    if end.is_some_and(|e| e != root.wal_start_lsn) {
        return Err(Error::corrupt(
            "the newest run does not end where the WAL starts",
        ));
    }
    Ok(runs)
}

/// Run files the manifest does not name (a crash between write and commit, or a retired
/// run whose removal did not happen).
fn strays(medium: &dyn Medium, root: &Root) -> Result<Vec<String>> {
    Ok(medium
        .list()?
        .into_iter()
        .filter(|name| {
            Run::parse_file_name(name).is_some_and(|id| !root.runs.iter().any(|r| r.id == id))
        })
        .collect())
}

/// Spare WAL segments: retired segments a writer overwrites instead of allocating anew.
fn spare_segments(medium: &dyn Medium) -> Result<Vec<String>> {
    Ok(medium
        .list()?
        .into_iter()
        .filter(|name| wal::segment::is_spare(name))
        .collect())
}

/// Removes a `MANIFEST.new` left by a manifest growth cut short. The rename over
/// `MANIFEST` is a growth's commit point, so a file still under that name was never
/// committed; this store was opened from `MANIFEST`, which exists. Not among the strays,
/// because those name uncommitted data a damaged root may have held.
fn remove_unfinished_manifest(medium: &dyn Medium) -> Result<()> {
    debug_assert!(medium.exists(manifest::FILE), "opened without a MANIFEST");
    if medium.exists(manifest::NEW_FILE) {
        medium.remove(manifest::NEW_FILE)?;
        medium.sync_dir()?;
    }
    Ok(())
}

/// Removes stray files, once recovery has shown nothing depends on them.
fn remove_strays(medium: &dyn Medium, strays: &[String]) -> Result<()> {
    for name in strays {
        medium.remove(name)?;
    }
    if !strays.is_empty() {
        medium.sync_dir()?;
    }
    Ok(())
}
