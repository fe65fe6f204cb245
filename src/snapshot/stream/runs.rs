//! Streaming several plain runs' in-lists: a live store's, as ingest and merges leave it.
//!
//! Every run indexes its vertices in order, so the lists of a range of vertices are one
//! contiguous part of each run's index and neighbor sections. A window is a vertex range
//! holding at most a window's bytes of those parts across all runs; the reader thread reads
//! each file-backed run's parts with one direct read per section (the ids of a sparse
//! run's vertices, its offsets, its neighbors), in file order pass after pass. DRAM runs
//! (a reader's replayed log) are read where they are.
//!
//! The kernel's threads then **merge** the window: per vertex, its slices in every run,
//! oldest first, less what newer runs' tombstones killed (the rule of the general path),
//! into one CSR of the window's live lists, which the kernel sweeps as it would a compacted
//! run. The merge costs a copy of the window's lists in DRAM (buffers kept across passes),
//! which is cheap beside reading them; reading slices run by run in the kernel instead
//! would cost a mispredicted branch per run and vertex in every pass (see
//! `layered`). Tombstones are looked up through the runs' mappings: they are few, and
//! only vertices some run tombstones from pay for them. The first pass counts each
//! window's live degrees (and which vertices are cut) once for all later ones: 4 B per
//! vertex, which took a Kron24 PageRank under a 768 MiB cap from 20-23 s to 18 s.

use super::super::{GraphView, Snapshot, SweepIn};
use super::{pipeline, read_all, window_view_methods, Buffers, Filled, SectionRead, StreamStats};
use crate::medium::{AlignedBuf, SweepFile, ALIGN};
use crate::run::{Dir, DirData, Run};
use crate::types::{VertexId, ID_BYTES};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};

/// Vertices one task of the merge takes: enough to pay for its cursors' searches.
const MERGE_CHUNK: usize = 4096;

/// Offsets and neighbor ids of a merged window, kept between windows and passes.
type Merged = (Vec<u64>, Vec<VertexId>);

/// Several runs' in-lists, opened for streamed sweeps.
pub(crate) struct RunsStream {
    /// Per run of the snapshot (oldest first), its in-direction's sections in its file;
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
}

/// Where one run's in-direction sections start in its file.
struct RunSections {
    file: SweepFile,
    /// `None`: the run is dense, its entries are its vertices.
    vids: Option<u64>,
    offs: u64,
    adds: u64,
}

/// One window: its vertices, per run holding any of them which of its entries, and what
/// its merge counted.
struct WindowPlan {
    vs: Range<usize>,
    parts: Vec<PartPlan>,
    /// Counted by the first pass that merges the window.
    counts: OnceLock<Counts>,
}

/// The entries `idx` of run `run`'s in-direction index, and their neighbors `adds`.
struct PartPlan {
    run: usize,
    idx: Range<usize>,
    adds: Range<u64>,
}

/// Bytes of in-lists (index and neighbors) that the runs hold, if they can be streamed:
/// none compressed, at least one file-backed.
pub(super) fn in_bytes(runs: &[Arc<Run>]) -> Option<u64> {
    let dirs = || runs.iter().map(|r| r.dir(Dir::In));
    if dirs().any(DirData::is_packed) || runs.iter().all(|r| r.in_dram()) {
        return None;
    }
    Some(dirs().map(|d| part_bytes(d, 0..d.n_index())).sum())
}

/// Bytes of the entries `idx` of `d`: their ids (sparse), offsets and neighbors.
fn part_bytes(d: &DirData, idx: Range<usize>) -> u64 {
    if idx.is_empty() {
        return 0;
    }
    let o = d.offs.get();
    let vids = if d.dense { 0 } else { ID_BYTES };
    ((o[idx.end] - o[idx.start]) as usize * ID_BYTES + idx.len() * (vids + 8)) as u64
}

/// Entries of `d` for vertices below `v`.
fn entries_below(d: &DirData, v: usize) -> usize {
    d.index_range(0, v as VertexId).end
}

impl RunsStream {
    /// The in-lists of `runs` (a snapshot's, over vertices `0..n`) opened for streaming in
    /// windows of `window` bytes; `None` when one is compressed or a file cannot be opened.
    pub(super) fn open(runs: &[Arc<Run>], n: usize, window: usize) -> Option<RunsStream> {
        in_bytes(runs)?;
        let files = (runs.iter())
            .map(|r| sections(r))
            .collect::<Option<Vec<_>>>()?;
        let window = window.max(1);
        let slack = runs.len() * 3 * 2 * ALIGN;
        Some(RunsStream {
            files,
            plan: plan(runs, n, window),
            window,
            fallbacks: AtomicU64::new(0),
            buffers: Buffers::new(window + slack),
            merged: Mutex::new((Vec::new(), Vec::new())),
        })
    }

    /// What the stream read so far.
    pub(super) fn stats(&self) -> StreamStats {
        let files = || self.files.iter().flatten();
        StreamStats {
            direct: files().all(|f| f.file.is_direct()),
            bytes_read: files().map(|f| f.file.bytes_read()).sum(),
            fallbacks: self.fallbacks.load(Relaxed),
            window: self.window,
        }
    }

    /// One pass of `s` over the in-lists of `snap` (whose runs these are), window by window
    /// (see [`pipeline`]), each merged before `s` visits it.
    pub(crate) fn sweep<'s, S: SweepIn>(&'s self, snap: &Snapshot, s: &mut S) {
        let mut merged =
            std::mem::take(&mut *self.merged.lock().unwrap_or_else(|p| p.into_inner()));
        let jobs: Vec<&WindowPlan> = self.plan.iter().collect();
        let read = |w: &'s WindowPlan, buf| self.read(w, buf);
        pipeline(jobs, &self.buffers, read, |r: &RunsRead| match &r.at {
            Some(at) => {
                let parts = self.parts(snap, r.plan, &r.buf, at);
                let vs = r.plan.vs.clone();
                let counts = r.plan.counts.get_or_init(|| count(&parts, vs.clone()));
                merge(&parts, vs, counts, &mut merged);
                let w = MergedWindow {
                    view: snap,
                    offs: &merged.0,
                    ids: &merged.1,
                    vs: r.plan.vs.clone(),
                };
                s.visit(r.plan.vs.clone(), &w);
            }
            None => {
                self.fallbacks.fetch_add(1, Relaxed);
                s.visit(r.plan.vs.clone(), snap);
            }
        });
        *self.merged.lock().unwrap_or_else(|p| p.into_inner()) = merged;
    }

    /// Reads window `w`'s parts of the file-backed runs into `buf`, each section from a
    /// page boundary. `at` is `None` when the window does not fit the buffer or a read
    /// failed: the window is then read through the mappings.
    fn read<'p>(&self, w: &'p WindowPlan, mut buf: AlignedBuf) -> RunsRead<'p> {
        let mut at = Vec::with_capacity(w.parts.len());
        let mut reads = Vec::new();
        let mut pos = 0;
        for p in &w.parts {
            let Some(f) = &self.files[p.run] else {
                at.push(None);
                continue;
            };
            let (i, j) = (p.idx.start as u64, p.idx.end as u64);
            let id = ID_BYTES as u64;
            let ranges = [
                f.vids.map(|v| v + i * id..v + j * id),
                Some(f.offs + i * 8..f.offs + (j + 1) * 8),
                Some(f.adds + p.adds.start * id..f.adds + p.adds.end * id),
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
        let done = pos <= buf.capacity() && read_all(&reads, &mut buf);
        RunsRead {
            plan: w,
            buf,
            at: done.then_some(at),
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
                let d = snap.runs[p.run].dir(Dir::In);
                let (vids, offs, adds): (&[VertexId], &[u64], &[VertexId]) = match got {
                    Some([v, o, a]) => (
                        bytemuck::cast_slice(&bytes[v.clone()]),
                        bytemuck::cast_slice(&bytes[o.clone()]),
                        bytemuck::cast_slice(&bytes[a.clone()]),
                    ),
                    None => (
                        if d.dense {
                            &[]
                        } else {
                            &d.vids.get()[p.idx.clone()]
                        },
                        &d.offs.get()[p.idx.start..p.idx.end + 1],
                        &d.adds.get()[p.adds.start as usize..p.adds.end as usize],
                    ),
                };
                Part {
                    dir: d,
                    first: p.idx.start,
                    vids: (!d.dense).then_some(vids),
                    offs,
                    adds,
                }
            })
            .collect()
    }
}

/// What the reader hands over for one window: where each part landed in `buf` (`None`
/// per part for a DRAM run; `None` in all for a window read through the mappings).
struct RunsRead<'p> {
    plan: &'p WindowPlan,
    buf: AlignedBuf,
    at: Option<Vec<Option<[Range<usize>; 3]>>>,
}

impl Filled for RunsRead<'_> {
    fn into_buf(self) -> AlignedBuf {
        self.buf
    }
}

/// Run `run`'s in-direction sections in its file; `Some(None)` for a DRAM run, `None`
/// when its file cannot be opened for sweeps.
fn sections(run: &Run) -> Option<Option<RunSections>> {
    let Some(f) = &run.file else {
        return Some(None);
    };
    let d = run.dir(Dir::In);
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
        offs: place(bytemuck::cast_slice(d.offs.get()))?,
        adds: place(bytemuck::cast_slice(d.adds.get()))?,
        file,
    }))
}

/// The windows of a pass over vertices `0..n`: consecutive ranges each holding at most
/// `window` bytes of the runs' parts (or a single vertex's more).
fn plan(runs: &[Arc<Run>], n: usize, window: usize) -> Vec<WindowPlan> {
    let dirs: Vec<&DirData> = runs.iter().map(|r| r.dir(Dir::In)).collect();
    let cost = |v: usize| -> u64 {
        (dirs.iter())
            .map(|d| part_bytes(d, 0..entries_below(d, v)))
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

/// Window `vs`'s part of each run that holds any of its vertices.
fn window_plan(dirs: &[&DirData], vs: Range<usize>) -> WindowPlan {
    let parts = (dirs.iter().enumerate())
        .filter_map(|(run, d)| {
            let idx = entries_below(d, vs.start)..entries_below(d, vs.end);
            let o = d.offs.get();
            (!idx.is_empty()).then(|| PartPlan {
                run,
                adds: o[idx.start]..o[idx.end],
                idx,
            })
        })
        .collect();
    WindowPlan {
        vs,
        parts,
        counts: OnceLock::new(),
    }
}

/// One run's part of a window, wherever it was read: entries `first..` of `dir`.
struct Part<'a> {
    dir: &'a DirData,
    first: usize,
    /// The entries' vertices (`None`: dense, entry `i` is vertex `i`).
    vids: Option<&'a [VertexId]>,
    /// Their offsets into `dir`'s neighbors, one more than entries.
    offs: &'a [u64],
    /// Their neighbors, from `offs[0]` on.
    adds: &'a [VertexId],
}

impl Part<'_> {
    /// Entries held.
    fn len(&self) -> usize {
        self.offs.len() - 1
    }

    /// The entry of the first vertex at or after `v`.
    fn seek(&self, v: usize) -> usize {
        match self.vids {
            None => v.saturating_sub(self.first).min(self.len()),
            Some(ids) => ids.partition_point(|&x| (x as usize) < v),
        }
    }

    /// The vertex of entry `e`.
    #[inline]
    fn vertex(&self, e: usize) -> usize {
        match self.vids {
            None => self.first + e,
            Some(ids) => ids[e] as usize,
        }
    }

    /// Whether entry `e` (if any) is vertex `v`.
    #[inline]
    fn holds(&self, e: usize, v: usize) -> bool {
        e < self.len()
            && match self.vids {
                None => self.first + e == v,
                Some(ids) => ids[e] as usize == v,
            }
    }

    /// Entry `e`'s neighbors.
    #[inline]
    fn list(&self, e: usize) -> &[VertexId] {
        let base = self.offs[0];
        &self.adds[(self.offs[e] - base) as usize..(self.offs[e + 1] - base) as usize]
    }

    /// Entry `e`'s tombstones (through the mapping; none in most runs).
    #[inline]
    fn tombs(&self, e: usize) -> &[VertexId] {
        self.dir.tombs_at(self.first + e)
    }
}

/// What the merge of one window counts once and every later pass reuses: each vertex's
/// live in-degree, and which vertices are cut (some part tombstones from them). 4 B per
/// vertex (8 with 64-bit ids), kept for the snapshot's life.
struct Counts {
    degrees: Vec<VertexId>,
    /// The cut vertices, as indices into the window, ascending.
    cut: Vec<u32>,
}

/// Counts window `vs` from its parts, in parallel over chunks of vertices, part by part
/// (so the work is the entries, not vertices times runs): neighbors less tombstones, each
/// of which kills one older run's neighbor.
fn count(parts: &[Part], vs: Range<usize>) -> Counts {
    let mut degrees: Vec<VertexId> = vec![0; vs.len()];
    let cut: Vec<Vec<u32>> = (degrees.par_chunks_mut(MERGE_CHUNK).enumerate())
        .map(|(k, lens)| {
            let c = vs.start + k * MERGE_CHUNK..vs.start + k * MERGE_CHUNK + lens.len();
            let mut cut = Vec::new();
            for p in parts {
                for e in p.seek(c.start)..p.seek(c.end) {
                    let i = p.vertex(e) - c.start;
                    let (adds, dead) = (p.list(e).len() as VertexId, p.tombs(e).len());
                    // A run's tombstones kill older runs' neighbors: only the sum over the
                    // parts is a degree, so the parts' terms wrap on the way.
                    lens[i] = lens[i].wrapping_add(adds).wrapping_sub(dead as VertexId);
                    if dead > 0 {
                        cut.push((c.start - vs.start + i) as u32);
                    }
                }
            }
            cut.sort_unstable();
            cut.dedup();
            cut
        })
        .collect();
    Counts {
        degrees,
        cut: cut.concat(),
    }
}

/// Merges the parts' lists of vertices `vs` (counted in `counts`) into `out`: offsets
/// (relative, one more than vertices) and neighbor ids, each vertex's live neighbors run by
/// run, oldest first. In parallel over chunks of vertices, part by part; a cut vertex is
/// copied apart, its lists resolved neighbor by neighbor.
fn merge(parts: &[Part], vs: Range<usize>, counts: &Counts, out: &mut Merged) {
    let (offs, ids) = out;
    offs.clear();
    offs.reserve(vs.len() + 1);
    offs.push(0);
    let mut total = 0u64;
    offs.extend(counts.degrees.iter().map(|&d| {
        total += d as u64;
        total
    }));
    ids.resize(total as usize, 0);
    let chunks: Vec<Range<usize>> = (vs.clone().step_by(MERGE_CHUNK))
        .map(|a| a..(a + MERGE_CHUNK).min(vs.end))
        .collect();
    let offs = &offs[..];
    let mut rest = &mut ids[..];
    let mut slots = Vec::with_capacity(chunks.len());
    for c in &chunks {
        let len = offs[c.end - vs.start] - offs[c.start - vs.start];
        let (mine, tail) = rest.split_at_mut(len as usize);
        slots.push(mine);
        rest = tail;
    }
    slots.into_par_iter().zip(&chunks).for_each(|(slot, c)| {
        let local = c.start - vs.start..c.end - vs.start;
        let base = offs[local.start];
        let mut at: Vec<usize> = (offs[local.clone()].iter())
            .map(|&o| (o - base) as usize)
            .collect();
        let cut = cut_in(&counts.cut, local.clone());
        let mut is_cut = vec![false; c.len()];
        cut.iter()
            .for_each(|&i| is_cut[i as usize - local.start] = true);
        for p in parts {
            for e in p.seek(c.start)..p.seek(c.end) {
                let i = p.vertex(e) - c.start;
                if !is_cut[i] {
                    let list = p.list(e);
                    slot[at[i]..at[i] + list.len()].copy_from_slice(list);
                    at[i] += list.len();
                }
            }
        }
        for &i in cut {
            let i = i as usize - local.start;
            let end = (offs[local.start + i + 1] - base) as usize;
            at[i] += copy_resolved(parts, c.start + i, &mut slot[at[i]..end]);
            assert_eq!(
                at[i], end,
                "a cut vertex's copy fills what the count measured"
            );
        }
    });
}

/// The entries of `cut` (ascending) inside `local`.
fn cut_in(cut: &[u32], local: Range<usize>) -> &[u32] {
    let a = cut.partition_point(|&i| (i as usize) < local.start);
    let b = cut.partition_point(|&i| (i as usize) < local.end);
    &cut[a..b]
}

/// Copies cut vertex `v`'s live neighbors, run by run, into `out`; returns how many.
#[cold]
fn copy_resolved(parts: &[Part], v: usize, out: &mut [VertexId]) -> usize {
    let held: Vec<(usize, usize)> = (parts.iter().enumerate())
        .map(|(k, p)| (k, p.seek(v)))
        .filter(|&(k, e)| parts[k].holds(e, v))
        .collect();
    let mut n = 0;
    for k in 0..held.len() {
        let (p, e) = held[k];
        let newer = &held[k + 1..];
        let dead =
            |x: &VertexId| (newer.iter()).any(|&(q, f)| parts[q].tombs(f).binary_search(x).is_ok());
        for &x in parts[p].list(e).iter().filter(|x| !dead(x)) {
            out[n] = x;
            n += 1;
        }
    }
    n
}

/// A streamed sweep's merged window: the in-lists of the vertices `vs` from the merged
/// CSR, everything else from the snapshot.
struct MergedWindow<'v> {
    view: &'v Snapshot,
    /// List `v` is `ids[offs[v - vs.start]..offs[v - vs.start + 1]]`.
    offs: &'v [u64],
    ids: &'v [VertexId],
    vs: Range<usize>,
}

impl MergedWindow<'_> {
    /// `v`'s in-list: merged inside the window, through the snapshot outside it.
    #[inline]
    fn inn(&self, v: VertexId) -> Option<&[VertexId]> {
        let i = (v as usize).checked_sub(self.vs.start)?;
        let (a, b) = (*self.offs.get(i)?, *self.offs.get(i + 1)?);
        Some(&self.ids[a as usize..b as usize])
    }
}

impl GraphView for MergedWindow<'_> {
    window_view_methods!();
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        match self.inn(v) {
            Some(l) => l.len(),
            None => self.view.in_degree(v),
        }
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        match self.inn(v) {
            Some(l) => l.iter().copied().for_each(f),
            None => self.view.for_each_in(v, f),
        }
    }
    #[inline]
    fn fold_in<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        match self.inn(v) {
            Some(l) => l.iter().copied().fold(init, f),
            None => self.view.fold_in(v, init, f),
        }
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        match self.inn(v) {
            Some(l) => l.iter().copied().any(f),
            None => self.view.find_in(v, f),
        }
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        match self.inn(v) {
            Some(l) => {
                out.clear();
                out.extend_from_slice(l);
                out.sort_unstable();
            }
            None => self.view.in_neighbors_sorted(v, out),
        }
    }
}
