//! Opening a store: every open is a recovery.
//!
//! Order matters: refuse foreign directories before touching them, take the lock, read the
//! manifest, load and verify the dictionary and the runs it names, delete files it does not
//! name (leftovers of a crash between writing and committing), then replay the WAL from the
//! manifest's start LSN into a fresh memtable.

use super::lock::StoreLock;
use super::{Graph, Inner, Maint, MediumKind, Options, State, Writer};
use crate::batch::{id_of, is_del, Section};
use crate::dict::{self, Dict};
use crate::manifest::{self, Manifest, Root};
use crate::medium::{file::FileMedium, memory::MemoryMedium, Medium};
use crate::memtable::Memtable;
use crate::run::{self, Run};
use crate::types::Durability;
use crate::wal::{self, Wal};
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex, RwLock};

/// Files an evograph store may contain besides runs and WAL segments.
fn is_store_file(name: &str) -> bool {
    name == manifest::FILE
        || name == dict::FILE
        || name == "LOCK"
        || Run::parse_file_name(name).is_some()
        || wal::segment::parse_name(name).is_some()
        || name.starts_with("wal-spare-")
}

pub(super) fn open(path: &Path, mut opts: Options) -> Result<Graph> {
    if opts.read_only {
        opts.create = false;
        opts.background = false;
        opts.durability = Durability::None;
    }
    let (medium, lock): (Arc<dyn Medium>, _) = match opts.medium {
        MediumKind::Memory => (Arc::new(MemoryMedium::new()), None),
        MediumKind::File => {
            let not_store = |reason: &str| Error::NotAStore {
                path: path.to_path_buf(),
                reason: reason.to_string(),
            };
            if !path.exists() {
                if !opts.create {
                    return Err(not_store("it does not exist"));
                }
                std::fs::create_dir_all(path).map_err(|e| Error::io("create", path, e))?;
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
            let lock = StoreLock::acquire(path)?;
            (Arc::new(FileMedium::new(path)), Some(lock))
        }
    };
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.threads
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("evograph-worker-{i}"))
        .build()
        .map_err(|e| Error::Invalid(format!("thread pool: {e}")))?;

    let manifest = if medium.exists(manifest::FILE) {
        Manifest::open(&*medium)?
    } else {
        // A new store: nothing else may be there yet (a half-created store has no runs).
        Manifest::create(&*medium, {
            let mut r = Root::new(opts.undirected.unwrap_or(false));
            r.weighted = opts.weighted.unwrap_or(false);
            r
        })?
    };
    let root = manifest.root().clone();
    if let Some(u) = opts.undirected {
        if u != root.undirected {
            return Err(Error::Invalid(format!(
                "store {} is {}; it cannot be opened as {}",
                path.display(),
                if root.undirected {
                    "undirected"
                } else {
                    "directed"
                },
                if u { "undirected" } else { "directed" }
            )));
        }
    }
    let repair = !opts.read_only;
    // Cut nothing yet: a damaged newest root must not become an excuse to cut data.
    if let Some(wt) = opts.weighted {
        if wt != root.weighted {
            return Err(Error::Invalid(format!(
                "store {} is {}; it cannot be opened as {}",
                path.display(),
                if root.weighted {
                    "weighted"
                } else {
                    "unweighted"
                },
                if wt { "weighted" } else { "unweighted" }
            )));
        }
    }
    let dict = Dict::load(&*medium, root.dict_entries as usize, root.dict_bytes)?;
    let runs = pool.install(|| open_runs(&medium, &root, opts.verify_on_open))?;
    let strays = strays(&*medium, &root)?;

    let mut deleted: Vec<u64> = Vec::new();
    for r in &runs {
        for &x in r.vertex_ops.get() {
            let v = id_of(x) as usize;
            if deleted.len() <= v / 64 {
                deleted.resize(v / 64 + 1, 0);
            }
            if is_del(x) {
                deleted[v / 64] |= 1 << (v % 64);
            } else {
                deleted[v / 64] &= !(1 << (v % 64));
            }
        }
    }

    // Replay the log into a memtable.
    let mut dict = dict;
    let mut mem = Memtable::new(
        root.undirected,
        root.weighted,
        root.wal_start_lsn,
        dict.len() as u32,
    );
    let rec = {
        let mut replay = |blk: &wal::block::Block, skip: u64| -> Result<()> {
            dict.replay(blk.batch.first_new_id, &blk.batch.new_ids)?;
            mem.ensure_vertices(dict.len() as u32);
            let mut skip = skip as usize;
            for s in &blk.batch.sections {
                let n = s.len();
                let from = skip.min(n);
                skip -= from;
                match s {
                    Section::Edges(e, wts) => {
                        if blk.batch.weighted != root.weighted {
                            return Err(Error::corrupt(format!(
                                "WAL block at LSN {} disagrees with the store on edge weights",
                                blk.first_lsn
                            )));
                        }
                        if e[from..].iter().any(|&[a, b]| {
                            a as usize >= dict.len() || id_of(b) as usize >= dict.len()
                        }) {
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
                            let i = id_of(x) as usize;
                            if i >= dict.len() {
                                return Err(Error::corrupt(
                                    "WAL vertex record beyond the dictionary",
                                ));
                            }
                            if deleted.len() <= i / 64 {
                                deleted.resize(i / 64 + 1, 0);
                            }
                            if is_del(x) {
                                deleted[i / 64] |= 1 << (i % 64);
                            } else {
                                deleted[i / 64] &= !(1 << (i % 64));
                            }
                            mem.apply_vertex(x);
                        }
                    }
                }
            }
            mem.max_lsn = blk.first_lsn + blk.records;
            Ok(())
        };
        wal::recover(&*medium, root.wal_start_lsn, repair, &mut replay)?
    };
    if manifest.other_slot_damaged && !strays.is_empty() && rec.segments.is_empty() {
        // The root in force is the older one. A torn commit would have left the log that
        // rebuilds what the newer root held; with no log, that root had committed and was
        // damaged afterwards. Opening would silently drop its runs.
        return Err(Error::corrupt(format!(
            "the newest MANIFEST root is damaged; the previous root does not name {} and no log remains to rebuild {}",
            strays.join(", "),
            if strays.len() == 1 { "it" } else { "them" }
        )));
    }
    if repair {
        remove_strays(&*medium, &strays)?;
        Dict::cut_uncommitted(&*medium, root.dict_bytes)?;
    }
    let replayed = rec.bytes_replayed;
    let next_lsn = rec.next_lsn;
    mem.max_lsn = next_lsn;
    let wal = match opts.durability {
        Durability::None => None,
        mode => Some(Wal::start(medium.clone(), rec, mode)?),
    };
    let next_run_id = root
        .next_run_id
        .max(runs.iter().map(|r| r.header.id + 1).max().unwrap_or(1));
    let inner = Arc::new(Inner {
        path: path.to_path_buf(),
        medium: medium.clone(),
        undirected: root.undirected,
        weighted: root.weighted,
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
            work: false,
        }),
        state_cv: Condvar::new(),
        seal_lock: Mutex::new(()),
        maint: Mutex::new(Maint {
            bytes_written_base: root.bytes_written,
            manifest,
        }),
        wal,
        run_bytes: Default::default(),
        next_run_id: AtomicU64::new(next_run_id),
        poisoned: Mutex::new(None),
        shutdown: AtomicBool::new(false),
        wal_bytes_replayed: replayed,
        opts,
        _lock: lock,
    });
    if inner.wal.is_none() && replayed > 0 && repair {
        // Without a log of our own, make what the old log held part of the runs now, then
        // drop the old log.
        inner.flush()?;
        for name in medium.list()? {
            if wal::segment::parse_name(&name).is_some() {
                medium.remove(&name)?;
            }
        }
        medium.sync_dir()?;
    }
    Ok(Graph::from_inner(inner))
}

fn open_runs(medium: &Arc<dyn Medium>, root: &Root, verify: bool) -> Result<Vec<Run>> {
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
    for w in runs.windows(2) {
        if w[0].header.max_lsn != w[1].header.min_lsn {
            return Err(Error::corrupt(format!(
                "runs {} and {} leave a gap in the LSN range",
                w[0].header.id, w[1].header.id
            )));
        }
    }
    if let Some(last) = runs.last() {
        if last.header.max_lsn != root.wal_start_lsn {
            return Err(Error::corrupt(
                "the newest run does not end where the WAL starts",
            ));
        }
    }
    Ok(runs)
}

/// Run files the manifest does not name (a crash between write and commit, or a retired
/// run whose removal did not happen) and spare WAL segments.
fn strays(medium: &dyn Medium, root: &Root) -> Result<Vec<String>> {
    Ok(medium
        .list()?
        .into_iter()
        .filter(|name| {
            Run::parse_file_name(name).is_some_and(|id| !root.runs.iter().any(|r| r.id == id))
                || name.starts_with("wal-spare-")
        })
        .collect())
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
