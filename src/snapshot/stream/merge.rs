//! Merging a window of several runs' parts into one CSR of its live lists.
//!
//! Per vertex, its slices in every run, oldest first, less what newer runs' tombstones
//! killed (the rule of the general path). Part by part over chunks of vertices, in
//! parallel, so the work is the entries and the neighbors, not vertices times runs. The
//! kernel then sweeps the window ([`MergedWindow`]) as it would a compacted run.

use super::super::{GraphView, Snapshot};
use super::{window_dir_methods, window_meta_methods, Starts};
use crate::run::packed;
use crate::run::Dir;
use crate::run::DirData;
use crate::types::{task_starts, VertexId, ID_BYTES};
use rayon::prelude::*;
use std::ops::Range;

/// Vertices one task of the count takes: enough to pay for its cursors' searches.
const MERGE_CHUNK: usize = 4096;

/// Offsets and neighbor ids of a merged window, kept between windows and passes.
pub(super) type Merged = (Vec<u64>, Vec<VertexId>);

/// One run's part of a window, wherever it was read: entries `first..` of `dir`.
pub(super) struct Part<'a> {
    pub(super) dir: &'a DirData,
    pub(super) first: usize,
    /// The entries' vertices (`None`: dense, entry `i` is vertex `i`).
    pub(super) vids: Option<&'a [VertexId]>,
    pub(super) lists: Lists<'a>,
}

/// A part's neighbor lists, as its run holds them.
pub(super) enum Lists<'a> {
    /// Plain ids: the entries' offsets into `dir`'s neighbors (one more than entries), and
    /// the neighbors from `offs[0]` on.
    Plain {
        offs: &'a [u64],
        adds: &'a [VertexId],
    },
    /// Compressed streams ([`crate::run::packed`]): the entries' stream positions (one more
    /// than entries), and the streams from the first entry's on, with
    /// [`packed::SLACK`] readable bytes after the last. Only checked directions become
    /// packed parts: decoding reads without bounds checks.
    Packed {
        starts: Starts<'a>,
        bytes: &'a [u8],
        weighted: bool,
    },
}

impl Part<'_> {
    /// Entries held.
    fn len(&self) -> usize {
        match &self.lists {
            Lists::Plain { offs, .. } => offs.len() - 1,
            Lists::Packed { starts, .. } => starts.indexed(),
        }
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

    /// The head of packed entry `e`'s stream, in `bytes` (`None`: no neighbors).
    #[inline]
    fn head(starts: &Starts, bytes: &[u8], weighted: bool, e: usize) -> Option<packed::Head> {
        let base = starts.at(0);
        let (s, t) = (
            (starts.at(e) - base) as usize,
            (starts.at(e + 1) - base) as usize,
        );
        packed::head(bytes, s, t, weighted)
    }

    /// Entry `e`'s number of neighbors.
    #[inline]
    fn degree(&self, e: usize) -> usize {
        match &self.lists {
            Lists::Plain { offs, .. } => (offs[e + 1] - offs[e]) as usize,
            Lists::Packed {
                starts,
                bytes,
                weighted,
            } => Self::head(starts, bytes, *weighted, e).map_or(0, |h| h.degree),
        }
    }

    /// Calls `f` on entry `e`'s neighbors, ascending.
    #[inline]
    fn for_each(&self, e: usize, mut f: impl FnMut(VertexId)) {
        match &self.lists {
            Lists::Plain { offs, adds } => {
                let base = offs[0];
                let l = &adds[(offs[e] - base) as usize..(offs[e + 1] - base) as usize];
                l.iter().for_each(|&x| f(x));
            }
            Lists::Packed {
                starts,
                bytes,
                weighted,
            } => {
                if let Some(h) = Self::head(starts, bytes, *weighted, e) {
                    // SAFETY: a packed part is made only of a checked direction's streams
                    // (`Lists::Packed`), read again from the run's file, which is never
                    // rewritten, with the slack after the last; `h` heads one of them.
                    unsafe { packed::fold(bytes, h, (), |(), x| f(x)) }
                }
            }
        }
    }

    /// Copies entry `e`'s neighbors to the front of `out`; returns how many.
    #[inline]
    fn copy_to(&self, e: usize, out: &mut [VertexId]) -> usize {
        match &self.lists {
            Lists::Plain { offs, adds } => {
                let base = offs[0];
                let l = &adds[(offs[e] - base) as usize..(offs[e + 1] - base) as usize];
                out[..l.len()].copy_from_slice(l);
                l.len()
            }
            Lists::Packed { .. } => {
                let mut n = 0;
                self.for_each(e, |x| {
                    out[n] = x;
                    n += 1;
                });
                n
            }
        }
    }

    /// Copies entry `e`'s weights (through the mapping) into `out`, as long as its list;
    /// 1 each when the run holds none.
    #[inline]
    fn weights_to(&self, e: usize, out: &mut [f64]) {
        let w = self.dir.wts_at(self.first + e);
        match w.is_empty() {
            true => out.fill(1.0),
            false => out.copy_from_slice(w),
        }
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
pub(super) struct Counts {
    degrees: Vec<VertexId>,
    /// The cut vertices, as indices into the window, ascending.
    cut: Vec<u32>,
}

impl Counts {
    /// Fills `offs` (one more than the window's vertices) with where each vertex's merged
    /// list starts, from 0, and where the last ends.
    pub(super) fn offsets_into(&self, offs: &mut [u64]) {
        assert_eq!(
            offs.len(),
            self.degrees.len() + 1,
            "an offset per vertex and one more"
        );
        offs[0] = 0;
        let mut total = 0u64;
        for (o, &d) in offs[1..].iter_mut().zip(&self.degrees) {
            total += d as u64;
            *o = total;
        }
    }

    /// Bytes of the window merged ([`Merged`]): an offset per vertex and one more, and
    /// the live neighbors.
    pub(super) fn merged_bytes(&self) -> u64 {
        let ids: u64 = self.degrees.iter().map(|&d| d as u64).sum();
        (self.degrees.len() as u64 + 1) * 8 + ids * ID_BYTES as u64
    }
}

/// Counts window `vs` from its parts, in parallel over chunks of vertices, part by part
/// (so the work is the entries, not vertices times runs): neighbors less tombstones, each
/// of which kills one older run's neighbor.
pub(super) fn count(parts: &[Part], vs: Range<usize>) -> Counts {
    let mut degrees: Vec<VertexId> = vec![0; vs.len()];
    let cut: Vec<Vec<u32>> = (degrees.par_chunks_mut(MERGE_CHUNK).enumerate())
        .map(|(k, lens)| {
            let c = vs.start + k * MERGE_CHUNK..vs.start + k * MERGE_CHUNK + lens.len();
            let mut cut = Vec::new();
            for p in parts {
                for e in p.seek(c.start)..p.seek(c.end) {
                    let i = p.vertex(e) - c.start;
                    let (adds, dead) = (p.degree(e) as VertexId, p.tombs(e).len());
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
/// run, oldest first (see [`merge_into`]).
pub(super) fn merge(parts: &[Part], vs: Range<usize>, counts: &Counts, out: &mut Merged) {
    let (offs, ids) = out;
    offs.clear();
    offs.resize(vs.len() + 1, 0);
    counts.offsets_into(offs);
    ids.resize(offs[vs.len()] as usize, 0);
    merge_into(parts, vs, counts, offs, (ids, &mut []));
}

/// Merges the parts' lists of vertices `vs` (counted in `counts`, laid out by `offs`, see
/// [`Counts::offsets_into`]) into `ids`, and their weights into `wts` (empty: none kept;
/// else as long as `ids`, 1 for a run that holds none): each vertex's live neighbors run
/// by run, oldest first. In parallel over tasks of vertices ([`task_starts`]: a hub's list
/// is a task of its own), part by part; a cut vertex is copied apart, its lists resolved
/// neighbor by neighbor.
pub(super) fn merge_into(
    parts: &[Part],
    vs: Range<usize>,
    counts: &Counts,
    offs: &[u64],
    (ids, wts): (&mut [VertexId], &mut [f64]),
) {
    assert_eq!(
        offs.len(),
        vs.len() + 1,
        "an offset per vertex and one more"
    );
    assert_eq!(
        offs[vs.len()],
        ids.len() as u64,
        "the ids hold what was counted"
    );
    let weighted = !wts.is_empty();
    assert!(!weighted || wts.len() == ids.len(), "a weight per id");
    let starts = task_starts(offs, vs.len());
    let chunks: Vec<Range<usize>> = (starts.windows(2))
        .map(|w| vs.start + w[0]..vs.start + w[1])
        .collect();
    let (mut rest, mut wrest) = (ids, wts);
    let mut slots = Vec::with_capacity(chunks.len());
    for c in &chunks {
        let len = (offs[c.end - vs.start] - offs[c.start - vs.start]) as usize;
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(len);
        let (wmine, wtail) =
            std::mem::take(&mut wrest).split_at_mut(if weighted { len } else { 0 });
        slots.push((mine, wmine));
        (rest, wrest) = (tail, wtail);
    }
    slots
        .into_par_iter()
        .zip(&chunks)
        .for_each(|((slot, wslot), c)| {
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
                        let n = p.copy_to(e, &mut slot[at[i]..]);
                        if weighted {
                            p.weights_to(e, &mut wslot[at[i]..at[i] + n]);
                        }
                        at[i] += n;
                    }
                }
            }
            for &i in cut {
                let i = i as usize - local.start;
                let end = (offs[local.start + i + 1] - base) as usize;
                let wout = match weighted {
                    true => &mut wslot[at[i]..end],
                    false => &mut [][..],
                };
                at[i] += copy_resolved(parts, c.start + i, &mut slot[at[i]..end], wout);
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

/// Copies cut vertex `v`'s live neighbors, run by run, into `out`, and their weights into
/// `wts` unless it is empty; returns how many.
#[cold]
fn copy_resolved(parts: &[Part], v: usize, out: &mut [VertexId], wts: &mut [f64]) -> usize {
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
        let w = parts[p].dir.wts_at(parts[p].first + e);
        let mut j = 0;
        parts[p].for_each(e, |x| {
            if !dead(&x) {
                out[n] = x;
                if !wts.is_empty() {
                    wts[n] = w.get(j).copied().unwrap_or(1.0);
                }
                n += 1;
            }
            j += 1;
        });
    }
    n
}

/// A streamed sweep's merged window: the lists of direction `dir` of the vertices `vs`
/// from the merged CSR, everything else from the snapshot.
pub(super) struct MergedWindow<'v> {
    pub(super) dir: Dir,
    pub(super) view: &'v Snapshot,
    /// List `v` is `ids[offs[v - vs.start]..offs[v - vs.start + 1]]`.
    pub(super) offs: &'v [u64],
    pub(super) ids: &'v [VertexId],
    pub(super) vs: Range<usize>,
}

impl MergedWindow<'_> {
    /// `v`'s list of direction `d`, if the window holds it (an undirected store's lists
    /// are both directions').
    #[inline]
    fn list(&self, d: Dir, v: VertexId) -> Option<&[VertexId]> {
        if d != self.dir && !self.view.is_undirected() {
            return None;
        }
        let i = (v as usize).checked_sub(self.vs.start)?;
        let (a, b) = (*self.offs.get(i)?, *self.offs.get(i + 1)?);
        Some(&self.ids[a as usize..b as usize])
    }
}

/// The [`GraphView`] methods of direction `$dir` that a merged window answers from its
/// lists for its vertices, and through the snapshot for the rest.
macro_rules! merged_dir_methods {
    ($dir:expr, $degree:ident, $each:ident, $fold:ident, $find:ident, $sorted:ident) => {
        #[inline]
        fn $degree(&self, v: VertexId) -> usize {
            match self.list($dir, v) {
                Some(l) => l.len(),
                None => self.view.$degree(v),
            }
        }
        #[inline]
        fn $each<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
            match self.list($dir, v) {
                Some(l) => l.iter().copied().for_each(f),
                None => self.view.$each(v, f),
            }
        }
        #[inline]
        fn $fold<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
            match self.list($dir, v) {
                Some(l) => l.iter().copied().fold(init, f),
                None => self.view.$fold(v, init, f),
            }
        }
        #[inline]
        fn $find<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
            match self.list($dir, v) {
                Some(l) => l.iter().copied().any(f),
                None => self.view.$find(v, f),
            }
        }
        fn $sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
            match self.list($dir, v) {
                Some(l) => {
                    out.clear();
                    out.extend_from_slice(l);
                    out.sort_unstable();
                }
                None => self.view.$sorted(v, out),
            }
        }
    };
}

impl GraphView for MergedWindow<'_> {
    window_dir_methods!(merged_dir_methods);
    window_meta_methods!();
}
