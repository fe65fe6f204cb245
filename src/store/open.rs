//! Opening a store: refuse what is not one, create what should be, then recover.
//!
//! A directory is one of three things (see [`StoreState`]): empty (absent, empty, or
//! holding only what a creation cut short leaves), a store (a `MANIFEST` with a committed
//! root), or damaged (store files without a committed root). Only an empty one is ever
//! made a store; a damaged one is refused with its files named, never reinitialised.
//! Everything after the manifest is read is recovery (`recovery.rs`).

use super::lock::StoreLock;
use super::{Compression, Graph, MediumKind, Options};
use crate::dict;
use crate::keys::{self, KeyKind};
use crate::manifest::{self, Manifest, Root};
use crate::medium::dir::create_dir_durably;
use crate::medium::file::FileMedium;
use crate::medium::pmem::{PmemMedium, PmemMode};
use crate::medium::{memory::MemoryMedium, Medium};
use crate::run::{Run, Verify};
use crate::types::{width_mismatch, Durability, ID_WIDTH};
use crate::wal;
use crate::{Error, Result};
use std::path::Path;
use std::sync::Arc;

pub(super) use super::recovery::open_on;

/// Whether `name` is a file an evograph store consists of (manifest, dictionary, keys, locks,
/// runs, runs being written, WAL segments and spares): what may be removed to take back a
/// store that was never finished.
pub fn is_store_file(name: &str) -> bool {
    name == manifest::FILE
        || name == manifest::NEW_FILE
        || name == "LOCK"
        || name == super::readers::FILE
        || is_data_file(name)
}

/// Whether `name` is a store file that holds data: anything but the lock and a manifest.
/// A directory holding one was a store, whatever became of its `MANIFEST`.
fn is_data_file(name: &str) -> bool {
    name == dict::FILE
        || name == keys::FILE
        || Run::parse_file_name(name).is_some()
        || Run::parse_tmp_name(name).is_some()
        || wal::segment::parse_name(name).is_some()
        || wal::segment::is_spare(name)
        || crate::history::segment::parse_name(name).is_some()
        || crate::history::versions_file::parse_name(name.trim_end_matches(".tmp")).is_some()
        || super::tails::is_tail_file(name)
}

/// Whether the directory `dir` holds an evograph store, whole or damaged: a `MANIFEST` (or
/// `MANIFEST.new`), `DICT` or `KEYS` beginning as evograph writes it, or any run, WAL or
/// history file by its name. For commands that must never write into a store they were
/// not asked to change (an output path that resolves into one is refused). A directory
/// that cannot be read holds no store as far as this can tell.
pub fn holds_store(dir: &Path) -> bool {
    let starts = |name: &str, magics: &[&[u8]]| {
        let mut head = [0u8; 8];
        let Ok(mut f) = std::fs::File::open(dir.join(name)) else {
            return false;
        };
        let n = std::io::Read::read(&mut f, &mut head).unwrap_or(0);
        magics
            .iter()
            .any(|m| head[..n].starts_with(m) && n >= m.len())
    };
    // A new store's first root may sit in the second slot, at half the file's length.
    let manifest_at = |name: &str| {
        let path = dir.join(name);
        let half = std::fs::metadata(&path).map_or(0, |m| m.len() / 2);
        let mut head = [0u8; 8];
        std::fs::File::open(&path).is_ok_and(|f| {
            [0, half].iter().any(|&at| {
                std::os::unix::fs::FileExt::read_exact_at(&f, &mut head, at).is_ok()
                    && &head == manifest::MAGIC
            })
        })
    };
    if manifest_at(manifest::FILE)
        || manifest_at(manifest::NEW_FILE)
        || starts(dict::FILE, &[b"DCH2", b"DCHK"])
        || starts(keys::FILE, &[keys::MAGIC])
    {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name != dict::FILE && name != keys::FILE && is_data_file(&name)
    })
}

/// Checks that this build can make a store of `bits`-bit vertex ids. `what` names the
/// request in the message (e.g. `a store made with --id-width 64`); the error names the
/// build that can.
pub fn check_id_width(what: &str, bits: u32) -> Result<()> {
    if bits == ID_WIDTH {
        return Ok(());
    }
    Err(Error::Invalid(width_mismatch(what, bits as u64)))
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

/// What created the store at `path`, as its manifest records it ([`Options::created_by`]);
/// `None` where no store was committed yet or its creator said nothing. Reads only the
/// manifest: for tools that must know whose a store is before they open it for writing.
pub fn recorded_creator(path: &Path) -> Result<Option<String>> {
    if !path.join(manifest::FILE).exists() {
        return Ok(None);
    }
    let files = FileMedium::new(path);
    if Manifest::never_committed(&files)? {
        return Ok(None);
    }
    Ok(Manifest::open(&files)?.root().created_by.clone())
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
    if intent == Intent::Create && store_state(&*medium)? == StoreState::Committed {
        return Err(Error::Invalid(format!(
            "{} already holds an evograph store: open it instead of creating one",
            path.display()
        )));
    }
    open_on(path, medium, Some(lock), opts)
}

/// What a directory holds, as far as creating a store in it goes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum StoreState {
    /// A `MANIFEST` with a committed root (or one whose slots are damaged: never empty).
    Committed,
    /// Nothing, or only what a creation cut short leaves: `LOCK`, `MANIFEST.new`, a
    /// `MANIFEST` that never had a root committed.
    Empty,
    /// Store files that hold data, with no committed root to say what they are.
    Damaged(Vec<String>),
}

/// What `medium` holds (see [`StoreState`]).
pub(super) fn store_state(medium: &dyn Medium) -> Result<StoreState> {
    if medium.exists(manifest::FILE) && !Manifest::never_committed(medium)? {
        return Ok(StoreState::Committed);
    }
    let data: Vec<String> = medium
        .list()?
        .into_iter()
        .filter(|n| is_data_file(n))
        .collect();
    Ok(match data.is_empty() {
        true => StoreState::Empty,
        false => StoreState::Damaged(data),
    })
}

/// The error for a directory of store files without a committed root.
fn damaged_store(path: &Path, files: &[String]) -> Error {
    let shown: Vec<&str> = files.iter().take(4).map(String::as_str).collect();
    let more = files.len().saturating_sub(shown.len());
    Error::corrupt(format!(
        "{} holds store files ({}{}) but no MANIFEST with a committed root: a damaged store, which evograph will not open or create a store over; restore its MANIFEST, or move the files away",
        path.display(),
        shown.join(", "),
        if more > 0 { format!(" and {more} more") } else { String::new() }
    ))
}

/// Read-only opens change nothing: no creation, no background work, no log.
pub(super) fn normalized(mut opts: Options) -> Options {
    if opts.read_only {
        opts.create = false;
        opts.background = false;
        opts.durability = Durability::None;
    }
    // A reader is about to read the runs; a writer's ingest would share the cores.
    opts.verify.get_or_insert(if opts.read_only {
        Verify::Ahead
    } else {
        Verify::OnFirstUse
    });
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
        let names: Vec<String> = std::fs::read_dir(path)
            .map_err(|e| Error::io("list", path, e))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let data: Vec<String> = names.iter().filter(|n| is_data_file(n)).cloned().collect();
        if !data.is_empty() {
            return Err(damaged_store(path, &data));
        }
        if let Some(f) = names.iter().find(|n| !is_store_file(n)) {
            return Err(not_store(&format!(
                "it has no MANIFEST and holds other files (such as {})",
                crate::error::printable(f)
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

pub(super) fn worker_pool(threads: usize) -> Result<rayon::ThreadPool> {
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

/// The committed manifest, or a new store's first one. A directory holding only what a
/// creation cut short leaves is made a store anew; one holding data without a committed
/// root is refused as damaged.
pub(super) fn load_manifest(path: &Path, medium: &dyn Medium, opts: &Options) -> Result<Manifest> {
    match store_state(medium)? {
        StoreState::Committed => return Manifest::open(medium),
        StoreState::Damaged(files) => return Err(damaged_store(path, &files)),
        StoreState::Empty if !opts.create => {
            return Err(Error::NotAStore {
                path: path.to_path_buf(),
                reason: "no store was ever committed there".into(),
            })
        }
        StoreState::Empty => {}
    }
    medium.create_root()?;
    // What a creation cut short left holds nothing: it goes, and the creation starts over.
    for leftover in [manifest::NEW_FILE, manifest::FILE] {
        if medium.exists(leftover) {
            medium.remove(leftover)?;
        }
    }
    let mut r = Root::new(opts.undirected.unwrap_or(false));
    r.weighted = opts.weighted.unwrap_or(false);
    r.medium = opts.medium.unwrap_or(MediumKind::File).as_str().into();
    r.logged = opts.durability != Durability::None;
    r.durability = Some(opts.durability.to_string());
    r.keys = opts.keys.unwrap_or_default().as_str().into();
    r.compression = opts.compression.unwrap_or_default().as_str().into();
    r.store_id = Some(crate::stamp::new_store_id());
    r.created_by = opts.created_by.clone();
    r.history = opts.history.keeps().then(|| opts.history.to_string());
    r.format_version = r.expected_format();
    Manifest::create(medium, r)
}

/// Refuses to open a store as the other kind (directed or not, weighted or not).
pub(super) fn check_shape(path: &Path, root: &Root, opts: &Options) -> Result<()> {
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
pub(super) fn compression(root: &Root) -> Result<Compression> {
    root.compression
        .parse()
        .map_err(|e: String| Error::corrupt(format!("MANIFEST: {e}")))
}

/// The key kind a root records.
pub(super) fn key_kind(root: &Root) -> Result<KeyKind> {
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
