//! The sim medium: records every write, persist and name operation, and builds the images a
//! power cut could leave, deterministically from a seed (TigerBeetle's way).
//!
//! The model is strict, stricter than any real file system:
//! - a byte is durable only once its segment was persisted after the write;
//! - an unpersisted write is lost, kept, or torn (each aligned piece of `tear` bytes — 512 on
//!   a sector device, 8 on persistent memory — kept or lost on its own);
//! - a create, rename or removal is durable only after a later `sync_dir`; before that,
//!   each is lost or kept independently, in order, and a kept rename or removal acts on the
//!   file it acted on when it was made (a lost create never lets a rename move another);
//! - the store directory itself exists only once [`Medium::create_root`] was called.
//!
//! It also fails writes and persists on purpose (ENOSPC, EIO) after a countdown, as redb's
//! fault-injecting backend does, so that error paths run in tests.
//!
//! Recording is a log of operations; an image at log position `p` is built by replaying the
//! log up to `p` through the model. [`SimMedium::images`] sweeps many positions in one
//! replay. Threads make the interleaving of the log vary from run to run; the seed fixes
//! everything else (which images, which bytes survive).

use super::{Mapped, Medium, MediumStats, Persistence, SegmentFile};
use crate::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

type Ino = u64;

/// How finely an unpersisted write may tear at a power cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tear {
    /// 512-byte sectors, as on a disk or SSD (the file medium).
    Sector,
    /// 8-byte words, as on persistent memory (the pmem medium).
    Word,
}

impl Tear {
    fn bytes(self) -> u64 {
        match self {
            Tear::Sector => 512,
            Tear::Word => 8,
        }
    }
}

/// An injected failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The medium is full: writes that extend a segment fail, and so do persists (a file
    /// system cannot allocate the blocks of delayed writes). Stays until cleared.
    NoSpace,
    /// An I/O error on the next write or persist only.
    Io,
}

/// One recorded operation.
#[derive(Clone, Debug)]
enum Op {
    CreateRoot,
    Create { name: String, ino: Ino },
    Write { ino: Ino, off: u64, data: Arc<[u8]> },
    SetLen { ino: Ino, len: u64 },
    Persist { ino: Ino, name: String },
    Rename { from: String, to: String, ino: Ino },
    Remove { name: String, ino: Ino },
    SyncDir,
    Mark(u64),
}

/// What a power cut may keep of a store: the directory's existence and its files.
#[derive(Clone, Debug, Default)]
struct Image {
    root: bool,
    files: BTreeMap<String, Vec<u8>>,
}

struct Armed {
    fault: Fault,
    countdown: u64,
}

struct State {
    root: bool,
    names: BTreeMap<String, Ino>,
    files: HashMap<Ino, Vec<u8>>,
    next_ino: Ino,
    /// The durable state recording started from, and what happened since.
    base: Image,
    log: Vec<Op>,
    armed: Option<Armed>,
}

/// A medium in DRAM that records operations and builds power-cut images. For tests.
#[derive(Clone)]
pub struct SimMedium {
    st: Arc<Mutex<State>>,
    stats: Arc<MediumStats>,
    tear: Tear,
    gate: Arc<Gate>,
}

/// Holds persists back while closed, so tests can see who waits for one.
#[derive(Default)]
struct Gate {
    closed: Mutex<(bool, usize)>,
    cv: std::sync::Condvar,
}

impl Gate {
    fn pass(&self) {
        let mut g = self.closed.lock().unwrap_or_else(|p| p.into_inner());
        if g.0 {
            g.1 += 1;
            self.cv.notify_all();
            while g.0 {
                g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
            }
            g.1 -= 1;
        }
    }
}

fn io_err(kind: std::io::ErrorKind, name: &str, op: &'static str) -> Error {
    Error::io(op, name, std::io::Error::from(kind))
}

fn fault_err(f: Fault, name: &str, op: &'static str) -> Error {
    let e = match f {
        Fault::NoSpace => std::io::Error::from_raw_os_error(libc::ENOSPC),
        Fault::Io => std::io::Error::from_raw_os_error(libc::EIO),
    };
    Error::io(op, name, e)
}

impl SimMedium {
    /// A medium whose store directory does not exist yet.
    pub fn new(tear: Tear) -> SimMedium {
        SimMedium::from_image(Image::default(), tear)
    }

    fn from_image(img: Image, tear: Tear) -> SimMedium {
        let mut names = BTreeMap::new();
        let mut files = HashMap::new();
        for (i, (name, data)) in img.files.iter().enumerate() {
            names.insert(name.clone(), i as Ino);
            files.insert(i as Ino, data.clone());
        }
        SimMedium {
            st: Arc::new(Mutex::new(State {
                root: img.root,
                next_ino: names.len() as Ino,
                names,
                files,
                base: img,
                log: Vec::new(),
                armed: None,
            })),
            stats: Arc::default(),
            tear,
            gate: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a test's annotation (for instance the number of records acknowledged so far)
    /// at the current position of the log.
    pub fn mark(&self, value: u64) {
        self.lock().log.push(Op::Mark(value));
    }

    /// Operations recorded so far: images can be taken at positions `0..=len`.
    pub fn log_len(&self) -> usize {
        self.lock().log.len()
    }

    /// Positions just after each [`SimMedium::mark`], with the marked value.
    pub fn marks(&self) -> Vec<(usize, u64)> {
        let st = self.lock();
        st.log
            .iter()
            .enumerate()
            .filter_map(|(i, op)| match op {
                Op::Mark(v) => Some((i + 1, *v)),
                _ => None,
            })
            .collect()
    }

    /// Positions just after each persist of a segment that was named `name` then.
    pub fn persists_of(&self, name: &str) -> Vec<usize> {
        let st = self.lock();
        st.log
            .iter()
            .enumerate()
            .filter_map(|(i, op)| match op {
                Op::Persist { name: n, .. } if n == name => Some(i + 1),
                _ => None,
            })
            .collect()
    }

    /// Positions just after each directory sync.
    pub fn dir_syncs(&self) -> Vec<usize> {
        let st = self.lock();
        st.log
            .iter()
            .enumerate()
            .filter_map(|(i, op)| matches!(op, Op::SyncDir).then_some(i + 1))
            .collect()
    }

    /// The value of the last mark at or before position `pos` (0 if none).
    pub fn mark_before(&self, pos: usize) -> u64 {
        let st = self.lock();
        st.log[..pos.min(st.log.len())]
            .iter()
            .rev()
            .find_map(|op| match op {
                Op::Mark(v) => Some(*v),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// From the next `after` writes and persists on, fail with `fault` (an [`Fault::Io`]
    /// fails once; [`Fault::NoSpace`] until [`SimMedium::clear_fault`]).
    pub fn fail_after(&self, after: u64, fault: Fault) {
        self.lock().armed = Some(Armed {
            fault,
            countdown: after,
        });
    }

    /// While `hold` is true, every persist and directory sync blocks (as a slow
    /// `fdatasync` would) until it is set false again.
    pub fn hold_persists(&self, hold: bool) {
        let mut g = self.gate.closed.lock().unwrap_or_else(|p| p.into_inner());
        g.0 = hold;
        self.gate.cv.notify_all();
    }

    /// Waits until at least `n` persists are held back by [`SimMedium::hold_persists`].
    pub fn wait_held(&self, n: usize) {
        let mut g = self.gate.closed.lock().unwrap_or_else(|p| p.into_inner());
        while g.1 < n {
            g = self.gate.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Ends an injected failure (space was freed).
    pub fn clear_fault(&self) {
        self.lock().armed = None;
    }

    /// Calls `f(position, image)` for every position in `points` (any order, repeats
    /// allowed), in one replay of the log. Each image's random choices come from `seed` and
    /// its position, so the same seed and log give the same images.
    pub fn images(&self, points: &[usize], seed: u64, mut f: impl FnMut(usize, SimMedium)) {
        let (base, log) = {
            let st = self.lock();
            (st.base.clone(), st.log.clone())
        };
        let mut pts: Vec<usize> = points.iter().map(|&p| p.min(log.len())).collect();
        pts.sort_unstable();
        let pts = pts;
        let mut model = Replay::new(&base);
        let mut at = 0;
        let mut repeat = 0u64;
        for (i, &p) in pts.iter().enumerate() {
            while at < p {
                model.apply(&log[at]);
                at += 1;
            }
            // Repeats of one position get images of their own.
            repeat = if i > 0 && pts[i - 1] == p {
                repeat + 1
            } else {
                0
            };
            let mix = (p as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ repeat.wrapping_mul(0xD1B5_4A32_D192_ED03);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ mix);
            let img = model.image(&mut rng, self.tear.bytes());
            f(p, SimMedium::from_image(img, self.tear));
        }
    }

    /// The image a power cut right now leaves when it keeps nothing unpersisted: the worst
    /// case, deterministic.
    pub fn durable_image(&self) -> SimMedium {
        let (base, log) = {
            let st = self.lock();
            (st.base.clone(), st.log.clone())
        };
        let mut model = Replay::new(&base);
        log.iter().for_each(|op| model.apply(op));
        SimMedium::from_image(model.durable(), self.tear)
    }

    /// The medium as the process sees it now (what a crash of the process alone keeps),
    /// as a new medium with everything durable.
    pub fn process_image(&self) -> SimMedium {
        let st = self.lock();
        let files = st
            .names
            .iter()
            .map(|(n, ino)| (n.clone(), st.files[ino].clone()))
            .collect();
        let img = Image {
            root: st.root,
            files,
        };
        drop(st);
        SimMedium::from_image(img, self.tear)
    }

    /// Writes the files as the process sees them into `dir` (created), so that a failing
    /// image can be examined with `evograph check`.
    pub fn save_to(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let st = self.lock();
        for (n, ino) in &st.names {
            std::fs::write(dir.join(n), &st.files[ino])?;
        }
        Ok(())
    }

    /// Counts a write or persist against an armed fault; the error to return, if it fires.
    fn check_fault(st: &mut State, name: &str, op: &'static str, extends: bool) -> Result<()> {
        let Some(a) = &mut st.armed else {
            return Ok(());
        };
        if a.countdown > 0 {
            a.countdown -= 1;
            return Ok(());
        }
        let f = a.fault;
        match f {
            Fault::Io => st.armed = None,
            // A full file system still lets a write land inside blocks it already has.
            Fault::NoSpace if op == "write" && !extends => return Ok(()),
            Fault::NoSpace => {}
        }
        Err(fault_err(f, name, op))
    }
}

impl Medium for SimMedium {
    fn kind(&self) -> &'static str {
        "sim"
    }
    fn persistence(&self) -> Persistence {
        match self.tear {
            Tear::Sector => Persistence::Syscall,
            Tear::Word => Persistence::CacheLine,
        }
    }
    fn persist_method(&self) -> String {
        format!("simulated (tears at {} bytes)", self.tear.bytes())
    }
    fn create_root(&self) -> Result<()> {
        let mut st = self.lock();
        if !st.root {
            st.root = true;
            st.log.push(Op::CreateRoot);
        }
        Ok(())
    }
    fn create(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let ino = self.create_ino(name)?;
        Ok(self.segment(name, ino))
    }
    fn open(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let ino = self.open_ino(name)?;
        Ok(self.segment(name, ino))
    }
    #[cfg(target_os = "linux")]
    fn create_log(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let ino = self.create_ino(name)?;
        Ok(self.log_segment(name, ino))
    }
    #[cfg(target_os = "linux")]
    fn open_log(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let ino = self.open_ino(name)?;
        Ok(self.log_segment(name, ino))
    }
    fn exists(&self, name: &str) -> bool {
        self.lock().names.contains_key(name)
    }
    fn remove(&self, name: &str) -> Result<()> {
        let mut st = self.lock();
        let ino = st
            .names
            .remove(name)
            .ok_or_else(|| io_err(std::io::ErrorKind::NotFound, name, "remove"))?;
        st.log.push(Op::Remove {
            name: name.to_string(),
            ino,
        });
        Ok(())
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        if self.exists(to) {
            return Err(io_err(std::io::ErrorKind::AlreadyExists, to, "rename"));
        }
        self.rename_replacing(from, to)
    }
    fn rename_replacing(&self, from: &str, to: &str) -> Result<()> {
        let mut st = self.lock();
        let ino = st
            .names
            .remove(from)
            .ok_or_else(|| io_err(std::io::ErrorKind::NotFound, from, "rename"))?;
        st.names.insert(to.to_string(), ino);
        st.log.push(Op::Rename {
            from: from.to_string(),
            to: to.to_string(),
            ino,
        });
        Ok(())
    }
    fn list(&self) -> Result<Vec<String>> {
        Ok(self.lock().names.keys().cloned().collect())
    }
    fn sync_dir(&self) -> Result<()> {
        self.gate.pass();
        self.stats.on_persist();
        self.lock().log.push(Op::SyncDir);
        Ok(())
    }
    fn stats(&self) -> &MediumStats {
        &self.stats
    }
}

impl SimMedium {
    fn segment(&self, name: &str, ino: Ino) -> Box<dyn SegmentFile> {
        Box::new(self.sim_segment(name, ino))
    }

    /// A handle on inode `ino`, opened as `name`.
    fn sim_segment(&self, name: &str, ino: Ino) -> SimSegment {
        SimSegment {
            sim: self.clone(),
            name: name.to_string(),
            ino,
        }
    }

    /// Creates `name`, which must not exist (like `O_EXCL`), and returns its inode.
    fn create_ino(&self, name: &str) -> Result<Ino> {
        let mut st = self.lock();
        if !st.root {
            return Err(io_err(std::io::ErrorKind::NotFound, name, "create"));
        }
        if st.names.contains_key(name) {
            return Err(io_err(std::io::ErrorKind::AlreadyExists, name, "create"));
        }
        let ino = st.next_ino;
        st.next_ino += 1;
        st.files.insert(ino, Vec::new());
        st.names.insert(name.to_string(), ino);
        st.log.push(Op::Create {
            name: name.to_string(),
            ino,
        });
        Ok(ino)
    }

    /// The inode `name` names now.
    fn open_ino(&self, name: &str) -> Result<Ino> {
        self.lock()
            .names
            .get(name)
            .copied()
            .ok_or_else(|| io_err(std::io::ErrorKind::NotFound, name, "open"))
    }

    /// A log segment on inode `ino` as the medium the tear models writes it: on a sector
    /// device (the file medium) in whole pages with direct I/O, the partial last page
    /// rewritten and padded with zeros each time (see `direct`), so images tear those
    /// writes; on persistent memory as it is. Both halves name the inode the caller
    /// created or opened, so a later rename of `name` cannot split them.
    #[cfg(target_os = "linux")]
    fn log_segment(&self, name: &str, ino: Ino) -> Box<dyn SegmentFile> {
        let plain = self.segment(name, ino);
        if self.tear != Tear::Sector {
            return plain;
        }
        let pages = SimPages(self.sim_segment(name, ino));
        Box::new(super::direct::DirectSegment::new(
            pages,
            plain,
            self.stats.clone(),
        ))
    }
}

/// A sim file's direct writes: recorded as any write is (and torn as any is), counted by
/// the segment that makes them.
#[cfg(target_os = "linux")]
struct SimPages(SimSegment);

#[cfg(target_os = "linux")]
impl super::direct::PageWriter for SimPages {
    fn write_pages(&self, offset: u64, pages: &[u8]) -> Result<super::direct::Direct> {
        self.0.record_write(offset, pages)?;
        Ok(super::direct::Direct::Written)
    }
}

/// An open segment: it names its file by inode, so it follows renames as a descriptor does.
struct SimSegment {
    sim: SimMedium,
    name: String,
    ino: Ino,
}

impl SegmentFile for SimSegment {
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.record_write(offset, data)?;
        self.sim.stats.on_write(data.len());
        Ok(())
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let st = self.sim.lock();
        let f = &st.files[&self.ino];
        let src = f
            .get(offset as usize..offset as usize + buf.len())
            .ok_or_else(|| io_err(std::io::ErrorKind::UnexpectedEof, &self.name, "read"))?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn persist(&self) -> Result<()> {
        self.sim.gate.pass();
        let mut st = self.sim.lock();
        SimMedium::check_fault(&mut st, &self.name, "persist", true)?;
        self.sim.stats.on_persist();
        let name = self.name_now(&st);
        st.log.push(Op::Persist {
            ino: self.ino,
            name,
        });
        Ok(())
    }
    fn len(&self) -> Result<u64> {
        Ok(self.sim.lock().files[&self.ino].len() as u64)
    }
    fn set_len(&self, len: u64) -> Result<()> {
        let mut st = self.sim.lock();
        let cur = st.files[&self.ino].len() as u64;
        if len > cur {
            SimMedium::check_fault(&mut st, &self.name, "truncate", true)?;
        }
        st.files.get_mut(&self.ino).unwrap().resize(len as usize, 0);
        st.log.push(Op::SetLen { ino: self.ino, len });
        Ok(())
    }
    fn map(&self) -> Result<Mapped> {
        Ok(Mapped::from_bytes(&self.sim.lock().files[&self.ino]))
    }
}

impl SimSegment {
    /// Records a write, or fails it as an armed fault says (uncounted: the caller counts).
    fn record_write(&self, offset: u64, data: &[u8]) -> Result<()> {
        let mut st = self.sim.lock();
        let len = st.files[&self.ino].len() as u64;
        let end = offset + data.len() as u64;
        if let Err(e) = SimMedium::check_fault(&mut st, &self.name, "write", end > len) {
            // A write that runs out of space lands up to the space it had, sector by sector.
            let tear = self.sim.tear.bytes();
            let keep = (len.max(offset).next_multiple_of(tear).min(end) - offset) as usize;
            if keep > 0 && offset <= len {
                self.apply_write(&mut st, offset, &data[..keep]);
            }
            return Err(e);
        }
        self.apply_write(&mut st, offset, data);
        Ok(())
    }

    fn apply_write(&self, st: &mut State, offset: u64, data: &[u8]) {
        let f = st.files.get_mut(&self.ino).unwrap();
        write_into(f, offset, data);
        st.log.push(Op::Write {
            ino: self.ino,
            off: offset,
            data: Arc::from(data),
        });
    }

    /// The name the file has now (the one it was opened by if it has none).
    fn name_now(&self, st: &State) -> String {
        st.names
            .iter()
            .find(|(_, &i)| i == self.ino)
            .map_or_else(|| self.name.clone(), |(n, _)| n.clone())
    }
}

fn write_into(f: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let end = offset as usize + data.len();
    if f.len() < end {
        f.resize(end, 0);
    }
    f[offset as usize..end].copy_from_slice(data);
}

/// A change not yet made durable.
#[derive(Clone)]
enum Pending {
    Write(u64, Arc<[u8]>),
    SetLen(u64),
}

/// A name operation, with the inode it acted on: a rename or removal that survives a
/// power cut moves or drops the entry of that inode, as a file system's does, even when an
/// earlier operation on the name (the create that bound it) was lost. Applying it to
/// whatever the name meant in the image instead would rename a file the process never
/// renamed, an image no file system leaves.
#[derive(Clone)]
enum NameOp {
    Bind(String, Ino),
    Rename(String, String, Ino),
    Remove(String, Ino),
}

fn apply_name(names: &mut BTreeMap<String, Ino>, op: &NameOp) {
    match op {
        NameOp::Bind(n, ino) => {
            names.insert(n.clone(), *ino);
        }
        NameOp::Rename(from, to, ino) => {
            unbind(names, from, *ino);
            names.insert(to.clone(), *ino);
        }
        NameOp::Remove(n, ino) => unbind(names, n, *ino),
    }
}

/// Drops `name` if it names `ino`; if the entry binding them was itself lost, `name` still
/// names what it named before, and stays.
fn unbind(names: &mut BTreeMap<String, Ino>, name: &str, ino: Ino) {
    if names.get(name) == Some(&ino) {
        names.remove(name);
    }
}

/// The durable state and what is pending, replayed from the log.
struct Replay {
    root: bool,
    durable: HashMap<Ino, Vec<u8>>,
    pending: HashMap<Ino, Vec<Pending>>,
    names: BTreeMap<String, Ino>,
    pending_names: Vec<NameOp>,
}

impl Replay {
    fn new(base: &Image) -> Replay {
        let mut r = Replay {
            root: base.root,
            durable: HashMap::new(),
            pending: HashMap::new(),
            names: BTreeMap::new(),
            pending_names: Vec::new(),
        };
        // Inode numbers as SimMedium::from_image hands them out.
        for (i, (name, data)) in base.files.iter().enumerate() {
            r.names.insert(name.clone(), i as Ino);
            r.durable.insert(i as Ino, data.clone());
        }
        r
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::CreateRoot => self.root = true,
            Op::Create { name, ino } => {
                self.durable.insert(*ino, Vec::new());
                self.pending_names.push(NameOp::Bind(name.clone(), *ino));
            }
            Op::Write { ino, off, data } => self
                .pending
                .entry(*ino)
                .or_default()
                .push(Pending::Write(*off, data.clone())),
            Op::SetLen { ino, len } => self
                .pending
                .entry(*ino)
                .or_default()
                .push(Pending::SetLen(*len)),
            Op::Persist { ino, .. } => {
                let f = self.durable.entry(*ino).or_default();
                for p in self.pending.remove(ino).unwrap_or_default() {
                    match p {
                        Pending::Write(off, d) => write_into(f, off, &d),
                        Pending::SetLen(len) => f.resize(len as usize, 0),
                    }
                }
            }
            Op::Rename { from, to, ino } => {
                self.pending_names
                    .push(NameOp::Rename(from.clone(), to.clone(), *ino))
            }
            Op::Remove { name, ino } => self.pending_names.push(NameOp::Remove(name.clone(), *ino)),
            Op::SyncDir => {
                for op in std::mem::take(&mut self.pending_names) {
                    apply_name(&mut self.names, &op);
                }
            }
            Op::Mark(_) => {}
        }
    }

    /// Only what is durable: every pending change lost.
    fn durable(&self) -> Image {
        if !self.root {
            return Image::default();
        }
        let files = self
            .names
            .iter()
            .map(|(n, ino)| {
                (
                    n.clone(),
                    self.durable.get(ino).cloned().unwrap_or_default(),
                )
            })
            .collect();
        Image { root: true, files }
    }

    /// A random image under the strict model.
    fn image(&self, rng: &mut Xoshiro256PlusPlus, tear: u64) -> Image {
        if !self.root {
            return Image::default();
        }
        let mut names = self.names.clone();
        for op in &self.pending_names {
            if rng.random_bool(0.5) {
                apply_name(&mut names, op);
            }
        }
        let mut contents: HashMap<Ino, Vec<u8>> = HashMap::new();
        let mut files = BTreeMap::new();
        for (name, ino) in names {
            let f = contents.entry(ino).or_insert_with(|| {
                let mut f = self.durable.get(&ino).cloned().unwrap_or_default();
                for p in self.pending.get(&ino).map_or(&[][..], |v| &v[..]) {
                    match (p, rng.random_range(0..3u32)) {
                        (_, 0) => {}
                        (Pending::SetLen(len), _) => f.resize(*len as usize, 0),
                        (Pending::Write(off, d), 1) => write_into(&mut f, *off, d),
                        (Pending::Write(off, d), _) => tear_into(&mut f, *off, d, tear, rng),
                    }
                }
                f
            });
            files.insert(name, f.clone());
        }
        Image { root: true, files }
    }
}

/// Applies each `tear`-aligned piece of a write with probability one half.
fn tear_into(f: &mut Vec<u8>, off: u64, d: &[u8], tear: u64, rng: &mut Xoshiro256PlusPlus) {
    let end = off + d.len() as u64;
    let mut at = off;
    while at < end {
        let next = ((at / tear) + 1) * tear;
        let piece_end = next.min(end);
        if rng.random_bool(0.5) {
            write_into(f, at, &d[(at - off) as usize..(piece_end - off) as usize]);
        }
        at = piece_end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(m: &SimMedium, name: &str) -> Option<Vec<u8>> {
        let seg = m.open(name).ok()?;
        let mut b = vec![0u8; seg.len().unwrap() as usize];
        seg.read_at(0, &mut b).unwrap();
        Some(b)
    }

    #[test]
    fn persisted_bytes_and_synced_names_survive_every_image() {
        let m = SimMedium::new(Tear::Sector);
        m.create_root().unwrap();
        let s = m.create("a").unwrap();
        s.write_at(0, &[1u8; 1000]).unwrap();
        s.persist().unwrap();
        m.sync_dir().unwrap();
        s.write_at(1000, &[2u8; 1000]).unwrap();
        let end = m.log_len();
        let mut seen_long = false;
        m.images(&vec![end; 200], 7, |_, img| {
            let c = content(&img, "a").expect("a synced name survives");
            assert!(c.len() >= 1000 && c[..1000].iter().all(|&b| b == 1));
            seen_long |= c.len() == 2000;
        });
        assert!(seen_long, "an unpersisted write is sometimes kept");
        let d = m.durable_image();
        assert_eq!(content(&d, "a").unwrap().len(), 1000);
    }

    #[test]
    fn unsynced_names_and_unpersisted_writes_may_vanish() {
        let m = SimMedium::new(Tear::Word);
        m.create_root().unwrap();
        let s = m.create("b").unwrap();
        s.write_at(0, &[9u8; 64]).unwrap();
        s.persist().unwrap();
        let (mut with, mut without, mut torn) = (0, 0, 0);
        let end = m.log_len();
        m.images(&vec![end; 300], 3, |_, img| match content(&img, "b") {
            Some(c) => {
                with += 1;
                assert_eq!(c, vec![9u8; 64], "persisted bytes are whole");
            }
            None => without += 1,
        });
        assert!(with > 0 && without > 0);
        // An unpersisted 64-byte write tears at 8-byte words.
        m.sync_dir().unwrap();
        s.write_at(0, &[5u8; 64]).unwrap();
        let end = m.log_len();
        m.images(&vec![end; 300], 4, |_, img| {
            let c = content(&img, "b").unwrap();
            let fives = c.iter().filter(|&&b| b == 5).count();
            assert_eq!(fives % 8, 0);
            torn += (fives > 0 && fives < 64) as usize;
        });
        assert!(torn > 0);
    }

    /// A rename that survives moves the file the process renamed, even when the removal
    /// of an older file of that name and the create that replaced it were lost: what
    /// `MANIFEST.new` then names must never become `MANIFEST`.
    #[test]
    fn a_kept_rename_moves_the_file_that_was_renamed() {
        let m = SimMedium::new(Tear::Word);
        m.create_root().unwrap();
        let old = m.create("new").unwrap();
        old.write_at(0, &[1u8; 64]).unwrap();
        old.persist().unwrap();
        m.sync_dir().unwrap();
        m.remove("new").unwrap();
        let s = m.create("new").unwrap();
        s.write_at(0, &[2u8; 64]).unwrap();
        s.persist().unwrap();
        m.rename("new", "file").unwrap();
        let (mut renamed, mut old_kept) = (0, 0);
        let end = m.log_len();
        m.images(&vec![end; 300], 5, |_, img| {
            if let Some(c) = content(&img, "file") {
                assert_eq!(c, vec![2u8; 64], "only the renamed file becomes the target");
                renamed += 1;
            }
            if let Some(c) = content(&img, "new") {
                old_kept += (c == vec![1u8; 64]) as usize;
            }
        });
        assert!(renamed > 0 && old_kept > 0, "both outcomes occur");
    }

    /// On a sector device a log segment is written as the file medium writes it: whole
    /// pages, the partial last one rewritten each time. A power cut tears those writes, and
    /// never loses a persisted byte of the rewritten page.
    #[cfg(target_os = "linux")]
    #[test]
    fn log_segments_write_whole_pages_and_keep_persisted_bytes() {
        let m = SimMedium::new(Tear::Sector);
        m.create_root().unwrap();
        let s = m.create_log("w").unwrap();
        s.write_at(0, &[1u8; 1000]).unwrap();
        s.persist().unwrap();
        m.sync_dir().unwrap();
        s.write_at(1000, &[2u8; 5000]).unwrap();
        assert_eq!(s.len().unwrap(), 8192, "padded to whole pages");
        let writes: Vec<(u64, usize)> = m
            .lock()
            .log
            .iter()
            .filter_map(|op| match op {
                Op::Write { off, data, .. } => Some((*off, data.len())),
                _ => None,
            })
            .collect();
        assert_eq!(
            writes,
            [(0, 4096), (0, 8192)],
            "the first page written twice"
        );
        assert_eq!(
            m.stats().snapshot().bytes_written,
            6000,
            "stats count what was asked"
        );
        let end = m.log_len();
        let (mut torn, mut zeros_kept) = (0, 0);
        m.images(&vec![end; 300], 5, |_, img| {
            let c = content(&img, "w").unwrap();
            assert!(c.len() >= 4096 && c[..1000].iter().all(|&b| b == 1));
            let twos = c.iter().filter(|&&b| b == 2).count();
            torn += (twos > 0 && twos < 5000) as usize;
            zeros_kept += (c.len() == 8192 && c[6000..].iter().all(|&b| b == 0)) as usize;
        });
        assert!(torn > 0 && zeros_kept > 0);
        let log = m.open_log("w").unwrap();
        log.write_at(6000, b"more").unwrap();
        assert_eq!(
            content(&m, "w").unwrap()[5990..6004],
            [[2u8; 10].as_slice(), b"more"].concat()
        );
    }

    #[test]
    fn nothing_survives_before_the_root_exists() {
        let m = SimMedium::new(Tear::Sector);
        assert!(m.create("x").is_err());
        m.create_root().unwrap();
        m.images(&[0], 1, |_, img| assert!(img.list().unwrap().is_empty()));
    }

    #[test]
    fn no_create_or_rename_replaces_a_name() {
        let m = SimMedium::new(Tear::Sector);
        m.create_root().unwrap();
        m.create("a").unwrap().write_at(0, b"keep").unwrap();
        m.create("b").unwrap();
        for e in [
            m.create("a").err(),
            m.create_log("a").err(),
            m.rename("b", "a").err(),
        ] {
            let e = e.expect("replaced a name").to_string();
            assert!(e.contains("exists"), "{e}");
        }
        assert_eq!(content(&m, "a").unwrap(), b"keep");
        m.rename_replacing("b", "a").unwrap();
        assert_eq!(content(&m, "a").unwrap(), b"");
        assert!(!m.exists("b"));
    }

    #[test]
    fn same_seed_same_images() {
        let m = SimMedium::new(Tear::Sector);
        m.create_root().unwrap();
        let s = m.create("c").unwrap();
        for i in 0..20u64 {
            s.write_at(i * 700, &[i as u8; 700]).unwrap();
        }
        let end = m.log_len();
        let take = |seed| {
            let mut v = Vec::new();
            m.images(&[end, end / 2], seed, |_, img| v.push(content(&img, "c")));
            v
        };
        assert_eq!(take(11), take(11));
        assert_ne!(take(11), take(12));
    }

    #[test]
    fn faults_fire_after_the_countdown() {
        let m = SimMedium::new(Tear::Sector);
        m.create_root().unwrap();
        let s = m.create("d").unwrap();
        s.write_at(0, &[0u8; 4096]).unwrap();
        m.fail_after(1, Fault::Io);
        s.write_at(0, b"ok").unwrap();
        let e = s.persist().unwrap_err().to_string();
        assert!(e.contains("Input/output error"), "{e}");
        s.persist().unwrap();
        m.fail_after(0, Fault::NoSpace);
        s.write_at(0, b"in place").unwrap();
        assert!(s.write_at(4096, &[1u8; 600]).is_err());
        assert!(s.persist().is_err());
        m.clear_fault();
        s.persist().unwrap();
    }
}
