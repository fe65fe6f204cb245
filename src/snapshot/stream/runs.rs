//! Streaming several runs' lists of one direction (PageRank's in-lists, Afforest's out-
//! and in-lists): a live store's, as ingest and merges leave it.
//!
//! Every run indexes its vertices in order, so the lists of a range of vertices are one
//! contiguous part of each run's index and neighbor sections. A window is a vertex range
//! holding at most a window's bytes of those parts across all runs; the reader thread reads
//! each file-backed run's parts with one direct read per section (the ids of a sparse
//! run's vertices, its offsets or stream positions, its neighbor ids or compressed
//! streams), in file order pass after pass. DRAM runs (a reader's replayed log) are read
//! where they are.
//!
//! The kernel's threads then **merge** the window ([`super::merge`]): per vertex, its
//! slices in every run, oldest first, less what newer runs' tombstones killed, into one CSR
//! of the window's live lists, which the kernel sweeps as it would a compacted run. A
//! compressed run's streams are decoded into it on the way, so a compressed store reads
//! its fewer bytes and decodes each list once per pass, as a compacted one does. The merge
//! costs a copy of the window's lists in DRAM (buffers kept across passes),
//! which is cheap beside reading them; reading slices run by run in the kernel instead
//! would cost a mispredicted branch per run and vertex in every pass (see
//! `layered`). Tombstones are looked up through the runs' mappings: they are few, and
//! only vertices some run tombstones from pay for them. The first pass counts each
//! window's live degrees (and which vertices are cut) once for all later ones: 4 B per
//! vertex, which took a Kron24 PageRank under a 768 MiB cap from 20-23 s to 18 s.

use super::super::{Snapshot, SweepIn};
use super::kept::{PackedLists, PackedWindow};
use super::merge::{count, merge, Counts, Lists, Merged, MergedWindow, Part};
use super::{pipeline, read_all, Buffers, Filled, SectionRead, Starts, StreamStats};
use crate::build_once::BuildOnce;
use crate::medium::{AlignedBuf, SweepFile, ALIGN};
use crate::run::{packed, Dir, DirData, PackedIndex, Run};
use crate::types::{VertexId, ID_BYTES};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};

/// Bytes per id and per vertex of a kept window, packed, for choosing the windows to keep:
/// Kron22's in-lists pack into 1.6 B per id (`run::packed`), and a vertex takes a 4-byte
/// start and its stream's head (its degree and first id, 2-4 bytes). Erring high keeps
/// the windows chosen within the budget, counted packed as each is kept.
const PACKED_ID_BYTES: f64 = 1.75;
const PACKED_VERTEX_BYTES: u64 = 8;

/// Windows are kept packed when their packed estimates sum to at most this many times the
/// bytes they may keep (see [`RunsStream::keep_within`]).
const PACK_WITHIN: f64 = 1.5;

/// Where a [`RunsStream`] reads its runs' parts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// File-backed runs by direct reads, pass after pass: the lists do not fit in DRAM.
    Files,
    /// Every run through its mapping (or in DRAM): the lists fit, but no layered view
    /// reads them (compressed runs, or more than it takes), and a window merged into a
    /// CSR sweeps faster than the general path's search of every run per vertex.
    Mappings,
}

/// Several runs' lists of one direction, opened for streamed sweeps.
pub(crate) struct RunsStream {
    source: Source,
    dir: Dir,
    /// Per run of the snapshot (oldest first), its direction's sections in its file;
    /// `None` for a run read in DRAM.
    files: Vec<Option<RunSections>>,
    /// A pass's windows, planned once.
    plan: Vec<WindowPlan>,
    /// Bytes a window holds at most (a single vertex's longer lists excepted).
    window: usize,
    /// Windows read through the mappings after a read failed.
    fallbacks: AtomicU64,
    buffers: Buffers,
    merged: Mutex<Merged>,
    /// Whether each window's merged lists are kept for later passes (runs merged from
    /// their mappings, for a kernel that sweeps them many times, within the copy budget).
    keep: AtomicBool,
    /// Bytes of merged windows a stream from the files may still keep for later passes
    /// ([`RunsStream::keep_within`]). Windows are chosen on estimates (a compressed
    /// window's decoded size is the run's average), so what is kept is checked against it
    /// again, merge by merge.
    keep_left: AtomicU64,
    /// Bytes of merged windows kept so far.
    kept: AtomicU64,
    /// Of `kept`, the bytes kept packed.
    kept_packed: AtomicU64,
}

/// Where one run's sections of the direction start in its file.
struct RunSections {
    file: SweepFile,
    /// `None`: the run is dense, its entries are its vertices.
    vids: Option<u64>,
    /// Its index: offsets, or stream positions of a compressed run ([`starts_of`]).
    index: u64,
    /// Bytes per index entry.
    width: u64,
    /// Its lists: neighbor ids, or compressed streams.
    lists: u64,
}

/// One window: its vertices, per run holding any of them which of its entries, and what
/// its merge counted.
struct WindowPlan {
    vs: Range<usize>,
    parts: Vec<PartPlan>,
    /// Bytes a pass reads for it: every run's part of its index and lists.
    read: u64,
    /// Bytes it takes merged, at most (tombstones ignored).
    merged_at_most: u64,
    /// Bytes it takes packed ([`PackedLists`]), about.
    packed_about: u64,
    /// Whether and how its first merge is kept for later passes
    /// ([`RunsStream::keep_within`]): [`NOT_KEPT`], [`KEEP_PACKED`] or [`KEEP_MERGED`];
    /// [`NOT_KEPT`] once its first merge was kept or found not to fit.
    chosen: AtomicU8,
    /// Counted by the first pass that merges the window.
    counts: BuildOnce<Counts>,
    /// The window merged, when the stream keeps it.
    kept: OnceLock<Kept>,
}

/// [`WindowPlan::chosen`]: the window is merged again at every pass.
const NOT_KEPT: u8 = 0;
/// [`WindowPlan::chosen`]: its first merge is kept packed.
const KEEP_PACKED: u8 = 1;
/// [`WindowPlan::chosen`]: its first merge is kept as merged.
const KEEP_MERGED: u8 = 2;

/// A window kept for later passes.
enum Kept {
    /// As merged: every window of a stream merging runs from their mappings (they all
    /// fit), or one chosen to stay as merged.
    Plain(Merged),
    /// Packed: a stream from the files, in the DRAM left ([`super::kept`]).
    Packed(PackedLists),
}

/// A window's lists as a pass visits them.
enum Window<'m> {
    Plain(&'m Merged),
    Packed(&'m PackedLists),
}

impl Kept {
    fn window(&self) -> Window<'_> {
        match self {
            Kept::Plain(m) => Window::Plain(m),
            Kept::Packed(p) => Window::Packed(p),
        }
    }
}

/// The entries `idx` of run `run`'s index of the direction, and the bytes of their lists
/// `lists` in its list section (a compressed run's with the slack after them).
struct PartPlan {
    run: usize,
    idx: Range<usize>,
    lists: Range<u64>,
}

/// Bytes of lists of `dir` (index and lists) that the runs hold, if they can be
/// streamed: at least one file-backed, every compressed one checked (its streams are
/// decoded from the buffers without bounds checks).
pub(super) fn list_bytes(runs: &[Arc<Run>], dir: Dir) -> Option<u64> {
    let dirs = || runs.iter().map(|r| r.dir(dir));
    let unchecked = |d: &DirData| d.packed.as_ref().is_some_and(|p| !p.is_checked());
    if dirs().any(unchecked) || runs.iter().all(|r| r.in_dram()) {
        return None;
    }
    Some(dirs().map(|d| part_bytes(d, 0..d.n_index())).sum())
}

/// `d`'s index: where each entry's list starts in its list section, plus the end.
fn starts_of(d: &DirData) -> Starts<'_> {
    match d.packed.as_ref().map(|p| &p.index) {
        None => Starts::Ids(d.offs.get()),
        Some(PackedIndex::Narrow(s)) => Starts::Narrow(s.get()),
        Some(PackedIndex::Wide(s)) => Starts::Wide(s.get()),
    }
}

/// Bytes per entry of `d`'s index.
fn index_width(d: &DirData) -> u64 {
    match starts_of(d) {
        Starts::Narrow(_) => 4,
        Starts::Ids(_) | Starts::Wide(_) => 8,
    }
}

/// `d`'s list section: neighbor ids, or compressed streams and their slack.
fn list_section(d: &DirData) -> &[u8] {
    match &d.packed {
        None => bytemuck::cast_slice(d.adds.get()),
        Some(p) => p.bytes.get(),
    }
}

/// The bytes of the entries `idx`'s lists in `d`'s list section; a compressed run's with
/// the slack its decoder may read past the last.
fn list_range(d: &DirData, idx: Range<usize>) -> Range<u64> {
    let s = starts_of(d);
    let slack = if d.is_packed() { packed::SLACK } else { 0 };
    s.at(idx.start)..s.at(idx.end) + slack as u64
}

/// Bytes of the entries `idx` of `d`: their ids (sparse), index and lists.
fn part_bytes(d: &DirData, idx: Range<usize>) -> u64 {
    if idx.is_empty() {
        return 0;
    }
    let vids = if d.dense { 0 } else { ID_BYTES as u64 };
    let lists = list_range(d, idx.clone());
    lists.end - lists.start + idx.len() as u64 * vids + (idx.len() + 1) as u64 * index_width(d)
}

/// Entries of `d` for vertices below `v`.
fn entries_below(d: &DirData, v: usize) -> usize {
    d.index_range(0, v as VertexId).end
}

impl RunsStream {
    /// The lists of `dir` of `runs` (a snapshot's, over vertices `0..n`) opened for
    /// sweeps in windows of `window` bytes, read from `source`; `None` when they cannot be
    /// streamed ([`list_bytes`]) or a file cannot be opened for direct reads.
    pub(super) fn open(
        runs: &[Arc<Run>],
        n: usize,
        window: usize,
        source: Source,
        dir: Dir,
    ) -> Option<RunsStream> {
        list_bytes(runs, dir)?;
        let files = match source {
            Source::Files => (runs.iter())
                .map(|r| sections(r, dir))
                .collect::<Option<Vec<_>>>()?,
            Source::Mappings => runs.iter().map(|_| None).collect(),
        };
        let window = window.max(1);
        // Mapped parts are read where they are: the buffers only carry the windows.
        let size = match source {
            Source::Files => window + runs.len() * 3 * 2 * ALIGN,
            Source::Mappings => ALIGN,
        };
        Some(RunsStream {
            source,
            dir,
            files,
            plan: plan(runs, dir, n, window),
            window,
            fallbacks: AtomicU64::new(0),
            keep: AtomicBool::new(false),
            keep_left: AtomicU64::new(0),
            kept: AtomicU64::new(0),
            kept_packed: AtomicU64::new(0),
            buffers: Buffers::new(size),
            merged: Mutex::new((Vec::new(), Vec::new())),
        })
    }

    /// Where the stream reads from.
    pub(crate) fn source(&self) -> Source {
        self.source
    }

    /// A kernel will sweep the lists many times: a stream that merges from the mappings
    /// keeps every merged window from its first pass on, if they fit `budget` bytes
    /// (counted as every run's neighbors, tombstones ignored, plus an offset per vertex).
    /// Whether it keeps them.
    pub(crate) fn keep_merged_within(&self, runs: &[Arc<Run>], n: usize, budget: u64) -> bool {
        let ids: u64 = runs.iter().map(|r| r.dir(self.dir).n_adds()).sum();
        let need = ids * ID_BYTES as u64 + (n + self.plan.len()) as u64 * 8;
        let keep = self.source == Source::Mappings && need <= budget;
        self.keep.store(keep, Relaxed);
        keep
    }

    /// Whether merged windows are kept between passes.
    pub(crate) fn keeps_merged(&self) -> bool {
        self.keep.load(Relaxed)
    }

    /// A kernel will sweep lists streamed from the files many times: windows its first
    /// pass merges are kept in DRAM within `budget` bytes, and later passes neither read
    /// nor merge them. Lists that do not fit the DRAM left mostly do not miss it by all of
    /// it: under a 384 MiB cap a Kron22 PageRank over 11 runs read and merged every window
    /// each pass when 40 % of them fit beside its state. The windows kept are those whose
    /// reads cost most per byte kept: a window of many short lists is mostly index, one
    /// per run, which its merged form no longer holds (the hubs' windows, first in dense
    /// order, save the least).
    ///
    /// Windows are kept packed ([`super::kept`]) when that keeps most of them (their
    /// estimates within [`PACK_WITHIN`] times the budget), the ones that fit as merged
    /// too: a packed window costs its sweeps a decode at every visit, which pays where it
    /// spares the passes most of their reads, not a few more windows' (gap-pr's 20 passes,
    /// 5 interleaved rounds: Kron22 at a 64 MiB budget under a 384 MiB cap, where 126 MB
    /// hold 45 % of the lists as merged and all of them packed, 3.42 -> 2.95 s from start
    /// to exit; Kron24 at 64 MiB under 768 MiB, where 97 MB hold 8 % as merged and 17 %
    /// packed, 20.65 -> 21.19 s when packed).
    pub(crate) fn keep_within(&self, budget: u64) {
        if self.source != Source::Files {
            return;
        }
        self.keep_left.store(budget, Relaxed);
        let packed: u64 = self.plan.iter().map(|w| w.packed_about).sum();
        let pack = packed as f64 <= budget as f64 * PACK_WITHIN;
        let size = |w: &WindowPlan| match pack {
            true => w.packed_about,
            false => w.merged_at_most,
        };
        let mut by_gain: Vec<&WindowPlan> = self.plan.iter().collect();
        by_gain.sort_by(|a, b| {
            let gain = |w: &WindowPlan| w.read as f64 / size(w).max(1) as f64;
            gain(b).total_cmp(&gain(a))
        });
        let mut left = budget;
        let mut chosen = Vec::new();
        for w in by_gain {
            if let Some(rest) = left.checked_sub(size(w)) {
                left = rest;
                chosen.push(w);
            }
        }
        for w in chosen {
            let more = w.merged_at_most.saturating_sub(size(w));
            let merged = left
                .checked_sub(more)
                .inspect(|&rest| left = rest)
                .is_some();
            let how = if merged { KEEP_MERGED } else { KEEP_PACKED };
            w.chosen.store(how, Relaxed);
        }
    }

    /// Takes `bytes` from what is left to keep, if they fit.
    fn reserve_kept(&self, bytes: u64) -> bool {
        let took = (self.keep_left).fetch_update(Relaxed, Relaxed, |left| left.checked_sub(bytes));
        if took.is_ok() {
            self.kept.fetch_add(bytes, Relaxed);
        }
        took.is_ok()
    }

    /// What the stream read so far.
    pub(super) fn stats(&self) -> StreamStats {
        let files = || self.files.iter().flatten();
        StreamStats {
            direct: files().all(|f| f.file.is_direct()),
            bytes_read: files().map(|f| f.file.bytes_read()).sum(),
            fallbacks: self.fallbacks.load(Relaxed),
            window: self.window,
            kept: self.kept.load(Relaxed),
            kept_packed: self.kept_packed.load(Relaxed),
        }
    }

    /// One pass of `s` over the lists of `snap` (whose runs these are), window by window
    /// (see [`pipeline`]), each merged before `s` visits it.
    pub(crate) fn sweep<'s, S: SweepIn>(&'s self, snap: &Snapshot, s: &mut S) {
        let mut merged =
            std::mem::take(&mut *self.merged.lock().unwrap_or_else(|p| p.into_inner()));
        let jobs: Vec<&WindowPlan> = self.plan.iter().collect();
        let read = |w: &'s WindowPlan, buf| self.read(w, buf);
        pipeline(jobs, &self.buffers, read, |r: &RunsRead| match &r.at {
            Some(at) => {
                let vs = r.plan.vs.clone();
                match self.merged(snap, r, at, &mut merged) {
                    Window::Plain(m) => {
                        let w = MergedWindow {
                            dir: self.dir,
                            view: snap,
                            offs: &m.0,
                            ids: &m.1,
                            vs: vs.clone(),
                        };
                        s.visit(vs, &w);
                    }
                    Window::Packed(lists) => {
                        let w = PackedWindow {
                            dir: self.dir,
                            view: snap,
                            lists,
                            vs: vs.clone(),
                        };
                        s.visit(vs, &w);
                    }
                }
            }
            None => {
                if r.failed {
                    self.fallbacks.fetch_add(1, Relaxed);
                }
                s.visit(r.plan.vs.clone(), snap);
            }
        });
        *self.merged.lock().unwrap_or_else(|p| p.into_inner()) = merged;
    }

    /// Window `r`'s merged lists: kept by an earlier pass, or merged now from the parts
    /// read (`at`) into `scratch`, and kept if the stream keeps windows (as merged) or
    /// chose this one (packed, if it fits what is left).
    fn merged<'m>(
        &self,
        snap: &Snapshot,
        r: &'m RunsRead,
        at: &[Option<[Range<usize>; 3]>],
        scratch: &'m mut Merged,
    ) -> Window<'m> {
        if let Some(k) = r.plan.kept.get() {
            return k.window();
        }
        let parts = self.parts(snap, r.plan, &r.buf, at);
        let vs = r.plan.vs.clone();
        let own;
        let counts = match r.plan.counts.get_or_build(|| count(&parts, vs.clone())) {
            Some(c) => c,
            // Another pass counts it now: count it for this one (see `crate::build_once`).
            None => {
                own = count(&parts, vs.clone());
                &own
            }
        };
        // Only a stream from the files chooses windows (`keep_within`).
        let chosen = r.plan.chosen.swap(NOT_KEPT, Relaxed);
        let as_merged = chosen == KEEP_MERGED && self.reserve_kept(counts.merged_bytes());
        if self.keeps_merged() || as_merged {
            let mut m = Merged::default();
            merge(&parts, vs, counts, &mut m);
            return r.plan.kept.get_or_init(|| Kept::Plain(m)).window();
        }
        merge(&parts, vs, counts, scratch);
        if chosen != NOT_KEPT {
            let packed = PackedLists::pack(&scratch.0, &scratch.1);
            if let Some(p) = packed.filter(|p| self.reserve_kept(p.dram_bytes())) {
                self.kept_packed.fetch_add(p.dram_bytes(), Relaxed);
                return r.plan.kept.get_or_init(|| Kept::Packed(p)).window();
            }
        }
        Window::Plain(scratch)
    }

    /// Reads window `w`'s parts of the file-backed runs into `buf`, each section from a
    /// page boundary, [`super::READERS`] reads at a time. `at` is `None` when the window does
    /// not fit the buffer or a read failed: the window is then read through the mappings.
    fn read<'p>(&self, w: &'p WindowPlan, mut buf: AlignedBuf) -> RunsRead<'p> {
        if w.kept.get().is_some() {
            // Kept by an earlier pass: `merged` returns it before looking at any part.
            return RunsRead {
                plan: w,
                buf,
                at: Some(Vec::new()),
                failed: false,
            };
        }
        let mut at = Vec::with_capacity(w.parts.len());
        let mut reads = Vec::new();
        let mut pos = 0;
        for p in &w.parts {
            let Some(f) = &self.files[p.run] else {
                at.push(None);
                continue;
            };
            let (i, j) = (p.idx.start as u64, p.idx.end as u64);
            let (id, w) = (ID_BYTES as u64, f.width);
            let ranges = [
                f.vids.map(|v| v + i * id..v + j * id),
                Some(f.index + i * w..f.index + (j + 1) * w),
                Some(f.lists + p.lists.start..f.lists + p.lists.end),
            ];
            let mut got = [0..0, 0..0, 0..0];
            for (k, range) in ranges.into_iter().enumerate() {
                let Some(range) = range.filter(|r| !r.is_empty()) else {
                    continue;
                };
                let (r, landed) = SectionRead::place(&f.file, range, pos);
                (got[k], pos) = (landed, r.pos + r.len);
                reads.push(r);
            }
            at.push(Some(got));
        }
        // A window past the buffer is one vertex's lists longer than a window.
        let fits = pos <= buf.capacity();
        let done = fits && read_all(&reads, &mut buf);
        RunsRead {
            plan: w,
            buf,
            at: done.then_some(at),
            failed: fits && !done,
        }
    }

    /// The parts of window `w`, from the buffer (file-backed runs; `at` gives where each
    /// read landed) or from DRAM.
    fn parts<'a>(
        &self,
        snap: &'a Snapshot,
        w: &WindowPlan,
        buf: &'a AlignedBuf,
        at: &[Option<[Range<usize>; 3]>],
    ) -> Vec<Part<'a>> {
        let bytes = buf.bytes();
        (w.parts.iter().zip(at))
            .map(|(p, got)| {
                let d = snap.runs[p.run].dir(self.dir);
                let Some([v, i, l]) = got else {
                    return mapped_part(d, p);
                };
                let vids: &[VertexId] = bytemuck::cast_slice(&bytes[v.clone()]);
                Part {
                    dir: d,
                    first: p.idx.start,
                    vids: (!d.dense).then_some(vids),
                    lists: lists_of(d, &bytes[i.clone()], &bytes[l.clone()]),
                }
            })
            .collect()
    }
}

/// Part `p` of `d`, read where the run holds it (its mapping, or DRAM).
fn mapped_part<'a>(d: &'a DirData, p: &PartPlan) -> Part<'a> {
    let w = index_width(d) as usize;
    let l = p.lists.start as usize..p.lists.end as usize;
    Part {
        dir: d,
        first: p.idx.start,
        vids: (!d.dense).then(|| &d.vids.get()[p.idx.clone()]),
        lists: lists_of(
            d,
            &index_bytes(d)[p.idx.start * w..(p.idx.end + 1) * w],
            &list_section(d)[l],
        ),
    }
}

/// Every run's part of the lists of `dir` of vertices `vs`, read where the runs hold
/// them, for a merge of them all at once; `None` when a compressed direction is unchecked
/// (a merge decodes without bounds checks).
pub(super) fn mapped_parts(runs: &[Arc<Run>], dir: Dir, vs: Range<usize>) -> Option<Vec<Part<'_>>> {
    let dirs: Vec<&DirData> = runs.iter().map(|r| r.dir(dir)).collect();
    if (dirs.iter()).any(|d| d.packed.as_ref().is_some_and(|p| !p.is_checked())) {
        return None;
    }
    let w = window_plan(&dirs, vs);
    Some(
        (w.parts.iter())
            .map(|p| mapped_part(dirs[p.run], p))
            .collect(),
    )
}

/// `d`'s index section as bytes.
fn index_bytes(d: &DirData) -> &[u8] {
    match starts_of(d) {
        Starts::Ids(o) | Starts::Wide(o) => bytemuck::cast_slice(o),
        Starts::Narrow(o) => bytemuck::cast_slice(o),
    }
}

/// A part's lists of `d`, from its index entries and list bytes as read.
fn lists_of<'a>(d: &DirData, index: &'a [u8], bytes: &'a [u8]) -> Lists<'a> {
    let Some(p) = &d.packed else {
        return Lists::Plain {
            offs: bytemuck::cast_slice(index),
            adds: bytemuck::cast_slice(bytes),
        };
    };
    debug_assert!(p.is_checked(), "only checked streams are streamed");
    let starts = match starts_of(d) {
        Starts::Narrow(_) => Starts::Narrow(bytemuck::cast_slice(index)),
        _ => Starts::Wide(bytemuck::cast_slice(index)),
    };
    Lists::Packed {
        starts,
        bytes,
        weighted: p.weighted,
    }
}

/// What the reader hands over for one window: where each part landed in `buf` (`None`
/// per part for a DRAM run; `None` in all for a window read through the mappings).
struct RunsRead<'p> {
    plan: &'p WindowPlan,
    buf: AlignedBuf,
    at: Option<Vec<Option<[Range<usize>; 3]>>>,
    /// Whether a read failed or came back short (else the window did not fit).
    failed: bool,
}

impl Filled for RunsRead<'_> {
    fn into_buf(self) -> AlignedBuf {
        self.buf
    }
}

/// Run `run`'s sections of `dir` in its file; `Some(None)` for a DRAM run, `None`
/// when its file cannot be opened for sweeps.
fn sections(run: &Run, dir: Dir) -> Option<Option<RunSections>> {
    let Some(f) = &run.file else {
        return Some(None);
    };
    let d = run.dir(dir);
    let file = f.open_sweep().ok()??;
    // An empty section has no place in the file: its reads are empty too.
    let place = |s: &[u8]| match s.is_empty() {
        true => Some(0),
        false => run.file_offset(s),
    };
    Some(Some(RunSections {
        vids: match d.dense {
            true => None,
            false => Some(place(bytemuck::cast_slice(d.vids.get()))?),
        },
        index: place(index_bytes(d))?,
        width: index_width(d),
        lists: place(list_section(d))?,
        file,
    }))
}

/// The windows of a pass over vertices `0..n`: consecutive ranges each holding at most
/// `window` bytes of the runs' parts (or a single vertex's more).
fn plan(runs: &[Arc<Run>], dir: Dir, n: usize, window: usize) -> Vec<WindowPlan> {
    let dirs: Vec<&DirData> = runs.iter().map(|r| r.dir(dir)).collect();
    // A compressed part is counted at what it decodes to (the run's average), so that the
    // merged window, not only the read, stays near the window's size: under a 768 MiB cap
    // Afforest's two streams of Kron24's compressed runs, planned by bytes read, decoded
    // windows that overran the cap.
    let scale: Vec<f64> = dirs.iter().map(|d| expansion(d)).collect();
    let cost = |v: usize| -> u64 {
        (dirs.iter().zip(&scale))
            .map(|(d, s)| (part_bytes(d, 0..entries_below(d, v)) as f64 * s) as u64)
            .sum()
    };
    let mut out = Vec::new();
    let mut a = 0;
    while a < n {
        let limit = cost(a) + window as u64;
        // The last vertex end within the limit, at least `a + 1`: a binary search over
        // `a + 1..=n` for the first end past it.
        let (mut lo, mut hi) = (a + 1, n + 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match cost(mid) <= limit {
                true => lo = mid + 1,
                false => hi = mid,
            }
        }
        let b = (lo - 1).max(a + 1);
        out.push(window_plan(&dirs, a..b));
        a = b;
    }
    out
}

/// How many bytes of neighbor ids a byte of `d`'s lists holds, on average: 1 for plain
/// runs, the compression ratio for compressed ones.
fn expansion(d: &DirData) -> f64 {
    let bytes = list_section(d).len().max(1) as f64;
    match d.is_packed() {
        true => (d.n_adds() as f64 * ID_BYTES as f64 / bytes).max(1.0),
        false => 1.0,
    }
}

/// Window `vs`'s part of each run that holds any of its vertices.
fn window_plan(dirs: &[&DirData], vs: Range<usize>) -> WindowPlan {
    let parts: Vec<PartPlan> = (dirs.iter().enumerate())
        .filter_map(|(run, d)| {
            let idx = entries_below(d, vs.start)..entries_below(d, vs.end);
            (!idx.is_empty()).then(|| PartPlan {
                run,
                lists: list_range(d, idx.clone()),
                idx,
            })
        })
        .collect();
    let read = (parts.iter())
        .map(|p| part_bytes(dirs[p.run], p.idx.clone()))
        .sum();
    // Tombstones ignored: the ids the window's lists decode to at most, and an offset per
    // vertex; packed, about PACKED_ID_BYTES per id and PACKED_VERTEX_BYTES per vertex.
    let lists: f64 = (parts.iter())
        .map(|p| (p.lists.end - p.lists.start) as f64 * expansion(dirs[p.run]))
        .sum();
    let ids = lists / ID_BYTES as f64;
    WindowPlan {
        parts,
        read,
        merged_at_most: lists as u64 + (vs.len() as u64 + 1) * 8,
        packed_about: (ids * PACKED_ID_BYTES) as u64 + (vs.len() as u64 + 1) * PACKED_VERTEX_BYTES,
        chosen: AtomicU8::new(NOT_KEPT),
        vs,
        counts: BuildOnce::default(),
        kept: OnceLock::new(),
    }
}
