//! A snapshot of a compacted base plus the runs written since, seen as a CSR with patches.
//!
//! This is the common shape of a live store: everything up to the last compaction in one
//! dense run (the base), and the changes since then in newer runs (the memtable sealed when
//! the snapshot was taken, runs flushed and merged since). Runs are resolved (see
//! [`crate::run`]), so against the base the newer runs amount to, per vertex, some base
//! neighbors deleted and some neighbors added.
//!
//! The index built here gives every vertex one of three readings, a per-vertex dirty bit
//! with a fallback:
//! - **clean** (the newer runs did not touch it): its slice of the base, in place;
//! - **copied** (touched, and its list fit the copy budget): its live list, merged once
//!   into a DRAM array when the index is built;
//! - **cut** (touched, past the budget): its base slice cut at the dead positions, then
//!   its added neighbors.
//!
//! Clean and copied vertices are one `(start, end)` pair into the base's neighbor array or
//! the copies, chosen without a branch: a kernel reads them as on a CSR, one 8-byte entry
//! and one slice per vertex. Only cut vertices, which a budget leaves for graphs whose
//! changes outgrow DRAM, take the slower path. The layout that only cut vertices (dead
//! positions read per vertex, three loops per list) cost gap-pr 1.4-1.5x a CSR with 10%
//! unflushed deletes on Kron20: per-vertex work, not the cuts themselves, was the price.

mod build;

use super::flat::{each_weighted, meta_methods, Adj, Meta};
use super::{FlatView, GraphView, Snapshot};
use crate::run::Dir;
use crate::types::VertexId;

/// Set in a span's start when the vertex is cut; the rest of the start is its entry in
/// [`Layer::cuts`].
const CUT: u32 = 1 << 31;

/// A cut vertex: where its lists start. Its lists end where the next entry's start (the
/// table has an end entry), but for the base, whose end it keeps.
#[derive(Clone, Copy, Default, Debug)]
#[repr(C)]
pub(crate) struct Cut {
    base: u32,
    base_end: u32,
    dels: u32,
    adds: u32,
}

/// One direction's index.
#[derive(Default)]
pub(crate) struct Layer {
    /// Per vertex, `[start, end)` in the joint position space: below `split` the base's
    /// neighbor array, from `split` on the copies; or `[CUT | k, 0]` for cut vertex `k`.
    spans: Vec<[u32; 2]>,
    /// The base's neighbor count: where copies start in the joint space.
    split: u32,
    /// When every vertex's list is copied: CSR offsets into the copies (one per vertex and
    /// an end), so that kernels read the view as a [`FlatView`]. Empty otherwise.
    offs: Vec<u64>,
    /// The live lists of copied vertices, each sorted, in vertex order.
    copy_ids: Vec<VertexId>,
    /// Weights beside `copy_ids` (empty when unweighted).
    copy_wts: Vec<f64>,
    /// Cut vertices in vertex order, then an end entry.
    cuts: Vec<Cut>,
    /// Dead positions of cut vertices in the base's neighbor array, ascending.
    dels: Vec<u32>,
    /// Surviving additions of cut vertices, sorted per vertex.
    add_ids: Vec<VertexId>,
    /// Weights beside `add_ids` (empty when unweighted).
    add_wts: Vec<f64>,
}

impl Layer {
    /// Vertices read through the cut path.
    fn cut_vertices(&self) -> usize {
        self.cuts.len().saturating_sub(1)
    }

    /// DRAM the index holds, in bytes.
    fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&self.spans[..])
            + size_of_val(&self.offs[..])
            + size_of_val(&self.copy_ids[..])
            + size_of_val(&self.copy_wts[..])
            + size_of_val(&self.cuts[..])
            + size_of_val(&self.dels[..])
            + size_of_val(&self.add_ids[..])
            + size_of_val(&self.add_wts[..])
    }
}

/// The index of both directions (`inn` unused in undirected stores), shared by every view
/// of one snapshot.
#[derive(Default)]
pub(crate) struct SpanIndex {
    out: Layer,
    inn: Layer,
}

impl Snapshot {
    /// The snapshot as a compacted base plus the changes of the runs written since (see the
    /// module doc), when its oldest run is a dense, plain, tombstone-free base, it has newer
    /// runs, none of them compressed, and every position fits 31 bits. `None` otherwise: use
    /// [`Snapshot::flat`] or the snapshot itself.
    ///
    /// The first call builds the index, in parallel: O(vertices), plus per vertex the newer
    /// runs touch a search of its base list per deleted neighbor, a sort of its added ones
    /// and a copy of its live list while the copies fit the snapshot's copy budget (the
    /// store's `Options::view_copy_bytes`). Later calls and clones of the snapshot share it.
    pub fn layered(&self) -> Option<LayeredView<'_>> {
        if self.runs.len() < 2 || self.runs[1..].iter().any(|r| is_packed(r)) {
            return None;
        }
        let base = self.flat_of(0)?;
        let idx = self
            .spans
            .get_or_init(|| {
                // Undirected stores index one direction, which may spend the whole budget.
                let share = if self.undirected { 1 } else { 2 };
                let budget = self.copy_budget / share;
                let out = self.layer(Dir::Out, &base.out, budget)?;
                let inn = if self.undirected {
                    Layer::default()
                } else {
                    self.layer(Dir::In, &base.inn, budget)?
                };
                Some(SpanIndex { out, inn })
            })
            .as_ref()?;
        let out = Side::new(&idx.out, base.out);
        let inn = if self.undirected {
            out
        } else {
            Side::new(&idx.inn, base.inn)
        };
        Some(LayeredView {
            meta: base.meta(),
            out,
            inn,
            idx,
        })
    }
}

/// Whether any direction of run `r` is compressed.
fn is_packed(r: &crate::run::Run) -> bool {
    r.out.is_packed() || r.inn.as_ref().is_some_and(|d| d.is_packed())
}

/// How one vertex is read.
enum Read {
    /// Positions `start..end` of list `0` (the base) or `1` (the copies).
    List(usize, usize, usize),
    /// Cut vertex `k`.
    Cut(usize),
}

/// One direction as a view reads it.
#[derive(Clone, Copy)]
struct Side<'a> {
    spans: &'a [[u32; 2]],
    /// The base's neighbor ids and the copies, indexed by [`Read::List`]'s list.
    lists: [&'a [VertexId]; 2],
    /// Their weights (each empty when unweighted).
    weights: [&'a [f64]; 2],
    /// Where each list starts in the joint position space (the copies at the split).
    at: [u32; 2],
    base: Adj<'a>,
    cuts: &'a [Cut],
    dels: &'a [u32],
    add_ids: &'a [VertexId],
    add_wts: &'a [f64],
}

impl<'a> Side<'a> {
    /// The side of index `l` over `base`.
    fn new(l: &'a Layer, base: Adj<'a>) -> Side<'a> {
        Side {
            spans: &l.spans,
            lists: [base.ids(), &l.copy_ids],
            weights: [base.weights(), &l.copy_wts],
            at: [0, l.split],
            base,
            cuts: &l.cuts,
            dels: &l.dels,
            add_ids: &l.add_ids,
            add_wts: &l.add_wts,
        }
    }

    /// How `v` is read; an empty list past the index.
    #[inline(always)]
    fn read(&self, v: VertexId) -> Read {
        let Some(&[s, e]) = self.spans.get(v as usize) else {
            return Read::List(0, 0, 0);
        };
        if s & CUT != 0 {
            return Read::Cut((s & !CUT) as usize);
        }
        // Indexing by the comparison, not branching on it: clean and copied vertices
        // interleave without a pattern a predictor could learn.
        let c = (s >= self.at[1]) as usize;
        let o = self.at[c];
        Read::List(c, (s - o) as usize, (e - o) as usize)
    }

    /// The list of a clean or copied vertex.
    #[inline(always)]
    fn list(&self, c: usize, s: usize, e: usize) -> &'a [VertexId] {
        &self.lists[c][s..e]
    }

    /// Cut vertex `k`'s base range, dead positions and additions.
    #[inline(always)]
    fn cut(&self, k: usize) -> (Cut, &'a [u32], std::ops::Range<usize>) {
        let (c, n) = (self.cuts[k], self.cuts[k + 1]);
        (
            c,
            &self.dels[c.dels as usize..n.dels as usize],
            c.adds as usize..n.adds as usize,
        )
    }

    #[inline(always)]
    fn degree(&self, v: VertexId) -> usize {
        match self.read(v) {
            Read::List(_, s, e) => e - s,
            Read::Cut(k) => {
                let (c, dead, adds) = self.cut(k);
                (c.base_end - c.base) as usize - dead.len() + adds.len()
            }
        }
    }

    /// Folds `v`'s neighbors.
    #[inline(always)]
    fn fold<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, mut f: F) -> A {
        match self.read(v) {
            Read::List(c, s, e) => self.list(c, s, e).iter().fold(init, |a, &x| f(a, x)),
            Read::Cut(k) => self.fold_cut(k, init, f),
        }
    }

    /// Folds cut vertex `k`'s live base neighbors, then its additions.
    ///
    /// Always inlined: a kernel's closure typically holds `&mut` to its accumulator, and
    /// passing it to an outlined call makes the accumulator's address escape, so the list
    /// path's loop stored it to the stack on every neighbor (gap-pr 1.24x a CSR, every
    /// changed list copied).
    #[inline(always)]
    fn fold_cut<A, F: FnMut(A, VertexId) -> A>(&self, k: usize, init: A, mut f: F) -> A {
        let (c, dead, adds) = self.cut(k);
        let mut acc = init;
        let mut at = c.base;
        for &p in dead {
            acc = (self.base.slice(at as u64, p as u64).iter()).fold(acc, |a, &x| f(a, x));
            at = p + 1;
        }
        acc = (self.base.slice(at as u64, c.base_end as u64).iter()).fold(acc, |a, &x| f(a, x));
        self.add_ids[adds].iter().fold(acc, |a, &x| f(a, x))
    }

    /// Calls `f` on `v`'s neighbors until it returns true; returns whether it did.
    #[inline(always)]
    fn find<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        match self.read(v) {
            Read::List(c, s, e) => self.list(c, s, e).iter().any(|&x| f(x)),
            Read::Cut(k) => {
                let (c, dead, adds) = self.cut(k);
                let mut at = c.base;
                for &p in dead {
                    if self.base.slice(at as u64, p as u64).iter().any(|&x| f(x)) {
                        return true;
                    }
                    at = p + 1;
                }
                (self.base.slice(at as u64, c.base_end as u64).iter()).any(|&x| f(x))
                    || self.add_ids[adds].iter().any(|&x| f(x))
            }
        }
    }

    /// Calls `f` on `v`'s neighbors with their weights (1 when unweighted), from one call
    /// site (see [`each_weighted`]): a cut vertex's list is gathered into a buffer first.
    #[inline(always)]
    fn for_each_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, f: F) {
        let (mut ids, mut wts) = (Vec::new(), Vec::new());
        let (ids, wts) = match self.read(v) {
            Read::List(c, s, e) => {
                let w = self.weights[c];
                (self.list(c, s, e), if w.is_empty() { w } else { &w[s..e] })
            }
            Read::Cut(k) => {
                self.cut_weighted(k, &mut ids, &mut wts);
                (&ids[..], &wts[..])
            }
        };
        each_weighted(ids, wts, f)
    }

    /// Cut vertex `k`'s neighbors into `ids` and, when weighted, their weights into `wts`.
    fn cut_weighted(&self, k: usize, ids: &mut Vec<VertexId>, wts: &mut Vec<f64>) {
        let (c, dead, adds) = self.cut(k);
        let (bw, aw) = (self.weights[0], self.add_wts);
        let weighted = !bw.is_empty() || !aw.is_empty();
        // Appends `w[r]`, or ones where `w` is empty (a side without weights).
        let put = |wts: &mut Vec<f64>, w: &[f64], r: std::ops::Range<usize>| match w.is_empty() {
            true => wts.resize(wts.len() + r.len(), 1.0),
            false => wts.extend_from_slice(&w[r]),
        };
        let mut at = c.base;
        let mut take = |from: u32, to: u32| {
            ids.extend_from_slice(self.base.slice(from as u64, to as u64));
            if weighted {
                put(wts, bw, from as usize..to as usize);
            }
        };
        for &p in dead {
            take(at, p);
            at = p + 1;
        }
        take(at, c.base_end);
        ids.extend_from_slice(&self.add_ids[adds.clone()]);
        if weighted {
            put(wts, aw, adds);
        }
    }

    /// Whether `w` is a neighbor of `v`.
    fn has(&self, v: VertexId, w: VertexId) -> bool {
        match self.read(v) {
            Read::List(c, s, e) => self.list(c, s, e).binary_search(&w).is_ok(),
            Read::Cut(k) => {
                let (c, dead, adds) = self.cut(k);
                let base = self.base.slice(c.base as u64, c.base_end as u64);
                if let Ok(i) = base.binary_search(&w) {
                    if dead.binary_search(&(c.base + i as u32)).is_err() {
                        return true;
                    }
                }
                self.add_ids[adds].binary_search(&w).is_ok()
            }
        }
    }

    /// `v`'s neighbors, sorted, into `out`.
    fn sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        match self.read(v) {
            Read::List(c, s, e) => out.extend_from_slice(self.list(c, s, e)),
            Read::Cut(k) => {
                out.reserve(self.degree(v));
                self.fold_cut(k, (), |(), x| out.push(x));
                let (_, _, adds) = self.cut(k);
                if !adds.is_empty() {
                    // Two ascending runs: the stable sort finds them and merges in one pass.
                    out.sort();
                }
            }
        }
    }
}

/// A borrowed view of a compacted base plus newer runs (see [`Snapshot::layered`]).
#[derive(Clone, Copy)]
pub struct LayeredView<'a> {
    meta: Meta<'a>,
    out: Side<'a>,
    inn: Side<'a>,
    idx: &'a SpanIndex,
}

impl<'a> LayeredView<'a> {
    /// The view as a CSR over its copies, when it copied every list (the whole graph fit
    /// the copy budget): kernels then run the compacted store's loops on it.
    pub fn as_flat(&self) -> Option<FlatView<'a>> {
        let csr = |l: &'a Layer| {
            (!l.offs.is_empty()).then(|| Adj::new(&l.offs, &l.copy_ids, &l.copy_wts))
        };
        let out = csr(&self.idx.out)?;
        let inn = if self.meta.undirected {
            out
        } else {
            csr(&self.idx.inn)?
        };
        Some(FlatView::of_parts(self.meta, out, inn))
    }

    /// Vertex lists (out and in) read through the cut path because their copies did not
    /// fit the copy budget: 0 when every changed vertex reads as on a CSR.
    pub fn cut_lists(&self) -> usize {
        self.idx.out.cut_vertices() + self.idx.inn.cut_vertices()
    }

    /// DRAM the view's index holds (spans, copies and patches of both directions), in
    /// bytes.
    pub fn index_bytes(&self) -> usize {
        self.idx.out.bytes() + self.idx.inn.bytes()
    }
}

impl GraphView for LayeredView<'_> {
    meta_methods!();
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        self.out.degree(v)
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.inn.degree(v)
    }
    #[inline]
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.out.fold(v, (), |(), x| f(x))
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.inn.fold(v, (), |(), x| f(x))
    }
    #[inline]
    fn fold_out<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.out.fold(v, init, f)
    }
    #[inline]
    fn fold_in<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.inn.fold(v, init, f)
    }
    #[inline]
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.out.find(v, f)
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.inn.find(v, f)
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.out.has(u, v)
    }
    #[inline]
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, f: F) {
        self.out.for_each_weighted(v, f)
    }
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.out.sorted(v, out)
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.inn.sorted(v, out)
    }
}
