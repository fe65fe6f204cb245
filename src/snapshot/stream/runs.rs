//! Streaming several plain runs' in-lists: a live store's, as ingest and merges leave it.
//!
//! Every run indexes its vertices in order, so the lists of a range of vertices are one
//! contiguous part of each run's index and neighbor sections. A window is a vertex range
//! holding at most a window's bytes of those parts across all runs; the reader thread reads
//! each file-backed run's parts with one direct read per section (the ids of a sparse
//! run's vertices, its offsets, its neighbors), in file order pass after pass. DRAM runs
//! (a reader's replayed log) are read where they are.
//!
//! The kernel's threads then **merge** the window ([`super::merge`]): per vertex, its
//! slices in every run, oldest first, less what newer runs' tombstones killed, into one CSR
//! of the window's live lists, which the kernel sweeps as it would a compacted run. The merge costs a copy of the window's lists in DRAM (buffers kept across passes),
//! which is cheap beside reading them; reading slices run by run in the kernel instead
//! would cost a mispredicted branch per run and vertex in every pass (see
//! `layered`). Tombstones are looked up through the runs' mappings: they are few, and
//! only vertices some run tombstones from pay for them. The first pass counts each
//! window's live degrees (and which vertices are cut) once for all later ones: 4 B per
//! vertex, which took a Kron24 PageRank under a 768 MiB cap from 20-23 s to 18 s.

use super::super::{Snapshot, SweepIn};
use super::merge::{count, merge, Counts, Merged, MergedWindow, Part};
use super::{pipeline, read_all, Buffers, Filled, SectionRead, StreamStats};
use crate::medium::{AlignedBuf, SweepFile, ALIGN};
use crate::run::{Dir, DirData, Run};
use crate::types::{VertexId, ID_BYTES};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};

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
                if r.failed {
                    self.fallbacks.fetch_add(1, Relaxed);
                }
                s.visit(r.plan.vs.clone(), snap);
            }
        });
        *self.merged.lock().unwrap_or_else(|p| p.into_inner()) = merged;
    }

    /// Reads window `w`'s parts of the file-backed runs into `buf`, each section from a
    /// page boundary, [`super::READERS`] reads at a time. `at` is `None` when the window does
    /// not fit the buffer or a read failed: the window is then read through the mappings.
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
    /// Whether a read failed or came back short (else the window did not fit).
    failed: bool,
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
