//! Recovery: every open is one.
//!
//! Order matters, and nothing is changed until everything was checked:
//! 1. read the manifest (creating a store only in an empty directory, `open.rs`);
//! 2. load and verify the dictionary prefix the root commits and open the runs it names,
//!    each file's stamp checked against the root (`files.rs`);
//! 3. survey the run files the root does not name, and replay the log from the root's
//!    start LSN into a fresh memtable (segment headers checked before any is read);
//! 4. judge the unnamed runs against the log's end: leftovers of a crash may go, proof of
//!    a later commit refuses the store;
//! 5. only then, for a writer: upgrade a store from before stamps, remove what step 4 allows,
//!    cut the uncommitted dictionary tail, start the log, and commit a root that says the
//!    log is in use (and what torn tail was cut).

use super::files::{self, Expected, Stray};
use super::lock::StoreLock;
use super::open::{check_shape, compression, key_kind, load_manifest, worker_pool};
use super::replay::{deleted_in_runs, replay_wal};
use super::{CommitPoint, Graph, Inner, Maint, Options, State, Writer};
use crate::dict::Dict;
use crate::keys::{self, KeyKind, Keys};
use crate::manifest::{self, Legacy, Manifest, Root, TornTail, FORMAT_VERSION_STAMPED};
use crate::medium::Medium;
use crate::memtable::Memtable;
use crate::run::{self, Run};
use crate::types::{Durability, VertexId};
use crate::wal::{self, LogStamps, Wal};
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex, RwLock};

/// Opens (or creates) the store held by `medium`: every open is a recovery. A store found
/// damaged is refused with the store's path in the message.
pub(crate) fn open_on(
    path: &Path,
    medium: Arc<dyn Medium>,
    lock: Option<StoreLock>,
    opts: Options,
) -> Result<Graph> {
    recover(path, medium, lock, opts).map_err(|e| match e {
        Error::Corrupt(m) if !m.starts_with(&*path.to_string_lossy()) => {
            Error::Corrupt(format!("{}: {m}", path.display()))
        }
        e => e,
    })
}

/// What recovery read, before anything was changed.
struct Recovered {
    dict: Dict,
    runs: Vec<Arc<Run>>,
    mem: Memtable,
    deleted: Vec<u64>,
    log: wal::Recovered,
    /// Files a writer removes: unfinished and retired runs, leftovers of crashes.
    removable: Vec<String>,
    /// Tails a reader loaded instead of replaying their log.
    tails_loaded: usize,
}

fn recover(
    path: &Path,
    medium: Arc<dyn Medium>,
    lock: Option<StoreLock>,
    opts: Options,
) -> Result<Graph> {
    let opts = super::open::normalized(opts);
    let pool = worker_pool(opts.threads)?;
    let mut manifest = load_manifest(path, &*medium, &opts)?;
    let root = manifest.root().clone();
    check_shape(path, &root, &opts)?;
    let repair = !opts.read_only;
    let found = read_store(&medium, &root, &manifest, &opts, &pool)
        .map_err(|e| blame_damaged_slot(&manifest, e))?;
    let next_run_id = root.next_run_id.max(
        found
            .runs
            .iter()
            .map(|r| r.header.id + 1)
            .max()
            .unwrap_or(1),
    );
    if repair {
        upgrade_legacy(&*medium, &mut manifest, next_run_id, found.log.next_lsn)?;
    }
    let root = manifest.root().clone();
    let keys = open_keys(&*medium, &root, &found.dict, repair)?;
    let spares = settle_files(&*medium, &root, &found, &opts)?;
    let cut = found.log.tail.clone();
    let replayed = found.log.bytes_replayed;
    let wal = start_log(&medium, &manifest, &found, &opts, spares)?;
    let inner = assemble(
        path,
        medium,
        lock,
        opts,
        pool,
        manifest,
        found,
        keys,
        wal,
        next_run_id,
    )?;
    if repair {
        settle_log(&inner, replayed, cut)?;
        settle_history_at_open(&inner);
    }
    Graph::from_inner(inner)
}

/// Step 5's removals, for a writer: what recovery showed nothing depends on, spares a
/// writer without a log has no use for, an unfinished manifest, the dictionary past its
/// committed prefix. Returns the spares the log will reuse.
fn settle_files(
    medium: &dyn Medium,
    root: &Root,
    found: &Recovered,
    opts: &Options,
) -> Result<Vec<String>> {
    let spares = spare_segments(medium)?;
    if opts.read_only {
        return Ok(Vec::new());
    }
    remove_files(medium, &found.removable)?;
    remove_unfinished_manifest(medium)?;
    Dict::cut_uncommitted(medium, root.dict_bytes)?;
    if opts.durability == Durability::None {
        // Without a log, spares only take space.
        remove_files(medium, &spares)?;
        return Ok(Vec::new());
    }
    Ok(spares)
}

/// The log, continued where recovery left it, for a writer that keeps one.
fn start_log(
    medium: &Arc<dyn Medium>,
    manifest: &Manifest,
    found: &Recovered,
    opts: &Options,
    spares: Vec<String>,
) -> Result<Option<Wal>> {
    if opts.durability == Durability::None {
        return Ok(None);
    }
    let store_id = manifest
        .root()
        .store_id
        .expect("a writer's open gives a store from before stamps an id");
    let stamps = LogStamps {
        store_id,
        committed: manifest.committed_seq(),
    };
    Wal::start(
        medium.clone(),
        found.log.clone(),
        opts.durability,
        opts.wal_segment_bytes,
        spares,
        stamps,
    )
    .map(Some)
}

/// Steps 2 to 4 of the module documentation: everything read and checked, nothing changed
/// but what the log's own recovery repairs (a torn tail cut, segments past its end).
fn read_store(
    medium: &Arc<dyn Medium>,
    root: &Root,
    manifest: &Manifest,
    opts: &Options,
    pool: &rayon::ThreadPool,
) -> Result<Recovered> {
    let expected = Expected::new(root);
    files::foreign_manifest(&**medium, root)?;
    let verify = opts.verify.unwrap_or_default();
    let runs = pool.install(|| open_runs(medium, root, &expected, verify));
    let runs: Vec<Arc<Run>> = runs?.into_iter().map(Arc::new).collect();
    if verify == run::Verify::Ahead {
        check_ahead(pool, &runs);
    }
    let mut dict = Dict::load(
        &**medium,
        root.dict_entries as usize,
        root.dict_bytes,
        &|at, st| expected.dict_chunk(at, st),
    )?;
    expected.dict_tail(Dict::uncommitted_stamp(&**medium, root.dict_bytes)?)?;
    check_history_files(&**medium, root)?;
    let survey = files::survey(&**medium, root)?;
    let strays: Vec<(String, Stray)> = survey
        .strays
        .iter()
        .map(|(name, h)| Ok((name.clone(), expected.stray_run(name, h)?)))
        .collect::<Result<_>>()?;
    let keep_history = history_setting(root)?.keeps() || opts.follow;
    let (runs, log_start, tails_loaded) = with_tails(medium, root, runs, &mut dict, opts)?;
    let mut deleted = deleted_in_runs(&runs, dict.len() as u64)?;
    let mut mem = Memtable::new(
        root.undirected,
        root.weighted,
        log_start,
        dict.len() as VertexId,
    )
    .keeping_history(keep_history);
    let header_ok = |name: &str, h: &wal::segment::SegmentHeader| expected.segment(name, h);
    let expect = wal::Expect {
        start_lsn: log_start,
        log_in_use: root.log_in_use,
        header_ok: &header_ok,
        reach: match opts.log_reach {
            super::LogReach::Durable => wal::Reach::Durable,
            super::LogReach::Written => wal::Reach::Written,
        },
    };
    let repair = !opts.read_only;
    let log = replay_wal(
        &**medium,
        root,
        &expect,
        repair,
        pool,
        (&mut dict, &mut mem, &mut deleted),
    )?;
    mem.max_lsn = log.next_lsn;
    for (name, s) in &strays {
        if let Stray::NextCommit { max_lsn } = s {
            expected.next_commit_run(name, *max_lsn, log.next_lsn)?;
        }
    }
    let mut removable = survey.unfinished;
    removable.extend(strays.into_iter().map(|(n, _)| n));
    refuse_damaged_root(manifest, &removable, &log)?;
    Ok(Recovered {
        dict,
        runs,
        mem,
        deleted,
        log,
        removable,
        tails_loaded,
    })
}

/// A reader's runs and log start with the tails a writer published for it (`tails.rs`),
/// and how many it loaded: the tails' runs after the root's, their ids in the dictionary,
/// and the log replayed only past the last one. Unchanged for a writer, a store keeping
/// history (or a handle following commits), with none to use, or [`super::Tails::Never`].
fn with_tails(
    medium: &Arc<dyn Medium>,
    root: &Root,
    mut runs: Vec<Arc<Run>>,
    dict: &mut Dict,
    opts: &Options,
) -> Result<(Vec<Arc<Run>>, u64, usize)> {
    let wanted = opts.read_only
        && opts.tails != super::Tails::Never
        && !opts.follow
        && !history_setting(root)?.keeps();
    let found = wanted
        .then(|| super::tails::load(medium, root, dict.len() as u64))
        .flatten();
    let Some(t) = found else {
        return Ok((runs, root.wal_start_lsn, 0));
    };
    for (first, ids) in &t.ids {
        dict.replay(*first as VertexId, ids)?;
    }
    let n = t.runs.len();
    runs.extend(t.runs);
    Ok((runs, t.end_lsn, n))
}

/// Starts checking every run's checksums and offsets on the store's threads and returns:
/// the rest of the open proceeds on this one. Each outcome is kept by its run
/// ([`Run::verify`]), so the first use waits only for what is left and reports what was
/// found; the open itself never fails on it, so `Verify::Ahead` refuses nothing
/// `OnFirstUse` would open. A check that finds damage stops the others (they run on use).
fn check_ahead(pool: &rayon::ThreadPool, runs: &[Arc<Run>]) {
    let runs = runs.to_vec();
    pool.spawn(move || {
        let _ = run::verify_all(&runs);
    });
}

/// An error found while an older root is in force because the newest slot is damaged may
/// come from that older root (it names runs or log the newer one let go): the message says
/// so, naming the `MANIFEST`.
fn blame_damaged_slot(manifest: &Manifest, e: Error) -> Error {
    match e {
        Error::Corrupt(m) if manifest.other_slot_damaged => Error::Corrupt(format!(
            "{m} (the newest MANIFEST slot is damaged, so the older root, commit {}, is in force: the damage may be there)",
            manifest.root().seq
        )),
        e => e,
    }
}

/// Builds the open handle's state from what recovery found.
#[allow(clippy::too_many_arguments)]
fn assemble(
    path: &Path,
    medium: Arc<dyn Medium>,
    lock: Option<StoreLock>,
    opts: Options,
    pool: rayon::ThreadPool,
    manifest: Manifest,
    found: Recovered,
    keys: Option<Keys>,
    wal: Option<Wal>,
    next_run_id: u64,
) -> Result<Arc<Inner>> {
    let root = manifest.root().clone();
    let part_shift = found
        .runs
        .iter()
        .map(|r| r.header.part_shift())
        .find(|&s| s > 0)
        .unwrap_or(opts.partition_bits);
    Ok(Arc::new(Inner {
        path: path.to_path_buf(),
        medium,
        undirected: root.undirected,
        weighted: root.weighted,
        compression: compression(&root)?,
        keys,
        pool,
        writer: Mutex::new(Writer {
            last_commit: last_commit(&found),
            next_lsn: found.log.next_lsn,
            mem: found.mem,
            deleted: Arc::new(found.deleted),
        }),
        dict: RwLock::new(found.dict),
        state: Mutex::new(State {
            runs: found.runs.into(),
            frozen: VecDeque::new(),
            // The flusher's first pass runs at once: merges a killed or closed session left
            // undone start now, not at the first flush (with none to do, the pass is idle).
            work: !opts.read_only,
            dram_history: Vec::new(),
            followed_history: Vec::new(),
        }),
        followers: Default::default(),
        commit_cv: Condvar::new(),
        followers_waiting: Default::default(),
        state_cv: Condvar::new(),
        seal_lock: Mutex::new(()),
        bytes_written_base: root.bytes_written,
        maint: Mutex::new(Maint),
        history: Mutex::new(kept_history(&root)?),
        manifest: Mutex::new(manifest),
        log_claimed: AtomicBool::new(false),
        wal,
        run_bytes: Default::default(),
        next_run_id: AtomicU64::new(next_run_id),
        versions_refused: Default::default(),
        part_shift,
        poisoned: Mutex::new(None),
        shutdown: AtomicBool::new(false),
        #[cfg(test)]
        before_flusher_wait: Default::default(),
        wal_bytes_replayed: found.log.bytes_replayed,
        tails_loaded: found.tails_loaded,
        log_end: super::LogEnd {
            lsn: found.log.next_lsn,
            writer_present: opts.read_only && super::lock::StoreLock::is_held(path),
            tail: found.log.tail.clone().filter(|_| opts.read_only),
        },
        warnings: Mutex::new(Vec::new()),
        readers: super::readers::Watch::open(path, lock.is_some()),
        tails: Default::default(),
        tail_unlisted: AtomicU64::new(0),
        opts,
        _lock: lock,
    }))
}

/// Every history segment the root names is there, as long as it says (its contents are
/// checked when first read).
fn check_history_files(medium: &dyn Medium, root: &Root) -> Result<()> {
    let sizes: std::collections::HashMap<String, u64> = medium.sizes()?.into_iter().collect();
    for h in &root.history_segments {
        let name = crate::history::segment::file_name(h.min_lsn, h.max_lsn);
        match sizes.get(&name) {
            Some(&len) if len == h.file_len => {}
            Some(&len) => {
                return Err(Error::corrupt(format!(
                    "history segment {name} has {len} bytes, the MANIFEST says {}",
                    h.file_len
                )))
            }
            None => {
                return Err(Error::corrupt(format!(
                    "history segment {name} named by the manifest is missing"
                )))
            }
        }
    }
    Ok(())
}

/// What history `root` says the store keeps.
fn history_setting(root: &Root) -> Result<crate::history::History> {
    match &root.history {
        None => Ok(crate::history::History::None),
        Some(h) => h
            .parse()
            .map_err(|e: String| Error::corrupt(format!("MANIFEST: {e}"))),
    }
}

/// The history `root` keeps: its setting and segments, each checked to be there as the root
/// describes it (read on first use), covering consecutive LSN ranges up to the log's start.
fn kept_history(root: &Root) -> Result<super::history::Kept> {
    let segs = &root.history_segments;
    let joined = segs.windows(2).all(|w| w[0].max_lsn == w[1].min_lsn)
        && segs.last().is_none_or(|s| s.max_lsn <= root.wal_start_lsn);
    if !joined {
        return Err(Error::corrupt(
            "MANIFEST: its history segments do not cover consecutive LSN ranges",
        ));
    }
    Ok(super::history::Kept {
        setting: history_setting(root)?,
        floor: root.history_floor,
        segments: (segs.iter().cloned())
            .map(super::history::Segment::new)
            .collect(),
        recent: Default::default(),
    })
}

/// The newest commit recovery found: the last replayed block that carries a time, else the
/// newest run's.
fn last_commit(found: &Recovered) -> Option<CommitPoint> {
    if let Some(t) = found.mem.last_time {
        return Some(CommitPoint {
            lsn: found.mem.max_lsn,
            unix_nanos: t,
        });
    }
    (found.runs.iter())
        .filter_map(|r| r.header.last_time.map(|t| (r.header.max_lsn, t)))
        .max()
        .map(|(lsn, unix_nanos)| CommitPoint { lsn, unix_nanos })
}

/// Opens and checks every run the root names: present, this store's, as the root
/// describes it, in LSN order, ending where the log starts.
fn open_runs(
    medium: &Arc<dyn Medium>,
    root: &Root,
    expected: &Expected,
    verify: run::Verify,
) -> Result<Vec<Run>> {
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
            expected.named_run(&name, h)?;
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
    if let Some(e) = end.filter(|&e| e != root.wal_start_lsn) {
        return Err(Error::corrupt(format!(
            "the newest run ends at LSN {e} but the MANIFEST starts the WAL at LSN {}",
            root.wal_start_lsn
        )));
    }
    Ok(runs)
}

/// In a store from before stamps, the newest root is damaged and the older one is in force.
/// When the store was written with a log, a commit torn by a crash leaves the log that
/// rebuilds what the newer root held; with no log left, that root had committed and was
/// damaged afterwards, and opening would silently drop its runs. (Stamped stores tell this
/// from each run's stamp: see `files.rs`.)
fn refuse_damaged_root(manifest: &Manifest, strays: &[String], log: &wal::Recovered) -> Result<()> {
    let root = manifest.root();
    if root.store_id.is_none()
        && manifest.other_slot_damaged
        && root.logged
        && !strays.is_empty()
        && log.segments.is_empty()
    {
        return Err(Error::corrupt(format!(
            "the newest MANIFEST root is damaged; the previous root does not name {} and no log remains to rebuild {}",
            strays.join(", "),
            if strays.len() == 1 { "it" } else { "them" }
        )));
    }
    Ok(())
}

/// Gives a store from before stamps its id, at a writer's open: `KEYS` gets it in place,
/// then a root carrying it is committed, recording which of the store's files may go on
/// without one (see FORMAT.md, "Stores from before stamps"). Runs are stamped as merges
/// rewrite them; the dictionary's old chunks stay as they are.
fn upgrade_legacy(
    medium: &dyn Medium,
    manifest: &mut Manifest,
    next_run_id: u64,
    next_lsn: u64,
) -> Result<()> {
    let root = manifest.root();
    if root.store_id.is_some() {
        return Ok(());
    }
    let id = crate::stamp::new_store_id();
    if key_kind(root)? == KeyKind::String {
        keys::stamp_legacy(medium, id)?;
    }
    let mut r = root.clone();
    r.store_id = Some(id);
    r.format_version = FORMAT_VERSION_STAMPED;
    r.next_run_id = next_run_id;
    r.legacy = Some(Legacy {
        runs_below: next_run_id,
        dict_bytes: root.dict_bytes,
        wal_upto_lsn: next_lsn,
    });
    manifest.commit_upgrade(medium, r)
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
    Keys::open(medium, repair, max, root.store_id).map(Some)
}

/// Brings the log in line with this handle's durability and records it in a commit:
/// without a log of our own, what the old log held becomes part of the runs and the old
/// log goes. The commit also records a torn tail this recovery cut. (A writer with a log
/// says it is in use at its first batch: `Inner::claim_log`.)
fn settle_log(inner: &Arc<Inner>, replayed: u64, cut: Option<wal::Tail>) -> Result<()> {
    if inner.wal.is_none() && replayed > 0 {
        inner.flush()?;
        for name in inner.medium.list()? {
            if wal::segment::parse_name(&name).is_some() {
                inner.medium.remove(&name)?;
            }
        }
        inner.medium.sync_dir()?;
    }
    let mut man = inner.manifest.lock().unwrap();
    let mut root = man.root().clone();
    root.logged = inner.wal.is_some();
    root.durability = Some(inner.opts.durability.to_string());
    if inner.wal.is_none() {
        root.log_in_use = false;
    }
    if let Some(c) = cut {
        root.last_cut = Some(TornTail {
            records: c.records,
            bytes: c.bytes,
            lsn: c.lsn,
            seq: root.seq + 1,
            unix_secs: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            segment: Some(c.segment),
            offset: c.offset,
            blocks: c.blocks,
            durable_records: c.durable_records,
            damage: c.damage,
        });
    }
    if root != *man.root() {
        man.commit(&*inner.medium, root)?;
    }
    Ok(())
}

/// A writer's look at the history it keeps: every segment's commit table read (and checked),
/// and what the window let go of while the last writer ran freed. Damage found is said as
/// a warning, not a refusal: the latest graph does not need history, and points that need
/// a damaged segment are refused, naming it, when asked for.
fn settle_history_at_open(inner: &Arc<Inner>) {
    let segments = inner.history.lock().unwrap().segments.clone();
    let damaged: Vec<String> = (segments.iter())
        .filter_map(|s| inner.segment_head(s).err())
        .map(|e| e.to_string())
        .collect();
    if !damaged.is_empty() {
        let mut w = inner.warnings.lock().unwrap();
        w.extend(damaged.into_iter().map(|e| {
            format!("history is damaged ({e}); the latest graph is usable, points and diffs that need it are refused")
        }));
        return;
    }
    let setting = inner.history.lock().unwrap().setting;
    if let Err(e) = inner.let_go(setting, super::retention::Known::Committed) {
        inner.warnings.lock().unwrap().push(format!(
            "the history the window let go of could not be freed ({e}); the next writer's open tries again"
        ));
    }
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
/// committed; this store was opened from `MANIFEST`, which exists.
fn remove_unfinished_manifest(medium: &dyn Medium) -> Result<()> {
    debug_assert!(medium.exists(manifest::FILE), "opened without a MANIFEST");
    if medium.exists(manifest::NEW_FILE) {
        medium.remove(manifest::NEW_FILE)?;
        medium.sync_dir()?;
    }
    Ok(())
}

/// Removes files that recovery showed nothing depends on.
fn remove_files(medium: &dyn Medium, names: &[String]) -> Result<()> {
    for name in names {
        medium.remove(name)?;
    }
    if !names.is_empty() {
        medium.sync_dir()?;
    }
    Ok(())
}
