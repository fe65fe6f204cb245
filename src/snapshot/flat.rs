//! A compacted snapshot seen as a plain CSR: borrowed slices, no per-vertex lookup.

use super::stream::InStream;
use super::{GraphView, Snapshot, SweepIn};
use crate::run::{Dir, DirData};
use crate::types::VertexId;

/// One direction of one dense, tombstone-free run, borrowed: offsets, neighbor ids and
/// (in weighted stores) weights.
#[derive(Clone, Copy)]
pub(crate) struct Adj<'a> {
    offs: &'a [u64],
    adds: &'a [VertexId],
    wts: &'a [f64],
}

impl<'a> Adj<'a> {
    /// The direction's slices, if it is dense and holds no tombstones.
    pub(crate) fn of(d: &'a DirData) -> Option<Adj<'a>> {
        (d.dense && d.n_tombs() == 0 && !d.is_packed()).then(|| Adj {
            offs: d.offs.get(),
            adds: d.adds.get(),
            wts: d.wts.get(),
        })
    }

    /// The offsets: one per vertex the run indexes, plus one.
    #[inline]
    pub(crate) fn offsets(&self) -> &'a [u64] {
        self.offs
    }

    /// Every indexed vertex's neighbors, end to end.
    pub(crate) fn ids(&self) -> &'a [VertexId] {
        self.adds
    }

    /// Sorted neighbors of `v` (empty beyond the run's index).
    #[inline]
    pub(crate) fn at(&self, v: VertexId) -> &'a [VertexId] {
        let v = v as usize;
        if v >= self.offs.len().saturating_sub(1) {
            return &[];
        }
        &self.adds[self.offs[v] as usize..self.offs[v + 1] as usize]
    }

    /// Where `v`'s neighbors start in `adds` (the end of `adds` beyond the index).
    #[inline]
    pub(crate) fn start(&self, v: VertexId) -> u64 {
        let last = self.offs.len().saturating_sub(1);
        self.offs.get((v as usize).min(last)).copied().unwrap_or(0)
    }

    /// CSR arrays: `v`'s neighbors are `adds[offs[v]..offs[v + 1]]`, weights beside them
    /// (empty when unweighted).
    pub(crate) fn new(offs: &'a [u64], adds: &'a [VertexId], wts: &'a [f64]) -> Adj<'a> {
        debug_assert_eq!(offs.last().copied().unwrap_or(0), adds.len() as u64);
        Adj { offs, adds, wts }
    }

    /// The weights beside [`Adj::ids`] (empty when unweighted).
    pub(crate) fn weights(&self) -> &'a [f64] {
        self.wts
    }

    /// The neighbor ids at positions `start..end` of `adds`.
    #[inline]
    pub(crate) fn slice(&self, start: u64, end: u64) -> &'a [VertexId] {
        &self.adds[start as usize..end as usize]
    }

    /// Calls `f` on each neighbor of `v` with its weight (1 when unweighted).
    #[inline]
    pub(crate) fn for_each_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, f: F) {
        let start = self.start(v);
        self.for_each_weighted_in(start, start + self.at(v).len() as u64, f)
    }

    /// Calls `f` on the neighbors at positions `start..end` with their weights (1 when
    /// unweighted).
    #[inline]
    pub(crate) fn for_each_weighted_in<F: FnMut(VertexId, f64)>(&self, start: u64, end: u64, f: F) {
        let wts = match self.wts.is_empty() {
            true => &[][..],
            false => &self.wts[start as usize..end as usize],
        };
        each_weighted(self.slice(start, end), wts, f)
    }
}

/// Calls `f` on each of `ids` with its weight in `wts` (each 1 when `wts` is empty), from
/// one call site: a kernel's closure called from two loops (one per case) was compiled as
/// a call per edge in some builds instead of inlined, which made gap-sssp 1.6x slower.
#[inline(always)]
pub(crate) fn each_weighted<F: FnMut(VertexId, f64)>(ids: &[VertexId], wts: &[f64], mut f: F) {
    debug_assert!(wts.is_empty() || wts.len() == ids.len());
    let weighted = !wts.is_empty();
    for (i, &x) in ids.iter().enumerate() {
        f(x, if weighted { wts[i] } else { 1.0 });
    }
}

/// What a single-run view knows besides the lists: counts, kind, deleted vertices and
/// external ids (shared by [`FlatView`] and [`super::PackedView`]).
#[derive(Clone, Copy)]
pub(crate) struct Meta<'a> {
    pub(crate) n: usize,
    pub(crate) undirected: bool,
    pub(crate) weighted: bool,
    pub(crate) edges: u64,
    pub(crate) deleted: &'a [u64],
    /// External ids by dense id; empty for a bare CSR (ids are then their own names).
    pub(crate) externals: &'a [u64],
}

impl Snapshot {
    /// The snapshot's [`Meta`].
    pub(crate) fn meta(&self) -> Meta<'_> {
        Meta {
            n: self.n,
            undirected: self.undirected,
            weighted: self.is_weighted(),
            edges: self.edges,
            deleted: &self.deleted,
            externals: self.external_ids(),
        }
    }
}

/// The [`GraphView`] methods a view answers from its `meta` field.
macro_rules! meta_methods {
    () => {
        fn num_vertices(&self) -> usize {
            self.meta.n
        }
        fn external_id(&self, v: VertexId) -> u64 {
            self.meta
                .externals
                .get(v as usize)
                .copied()
                .unwrap_or(u64::from(v))
        }
        fn num_edges(&self) -> u64 {
            self.meta.edges
        }
        fn is_undirected(&self) -> bool {
            self.meta.undirected
        }
        fn is_weighted(&self) -> bool {
            self.meta.weighted
        }
        #[inline]
        fn vertex_exists(&self, v: VertexId) -> bool {
            super::exists(self.meta.n, self.meta.deleted, v)
        }
    };
}
pub(crate) use meta_methods;

/// The neighbor methods of [`GraphView`] for a view whose directions, `self.out` and
/// `self.inn`, each answer `degree`, `fold`, `find`, `has` and `sorted` (the layered and
/// point views): what reads a vertex's lists lives in the direction, once.
macro_rules! side_methods {
    () => {
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
        fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
            self.out.sorted(v, out)
        }
        fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
            self.inn.sorted(v, out)
        }
    };
}
pub(crate) use side_methods;

/// A borrowed CSR view of a snapshot that is one run (see [`Snapshot::flat`]). Kernels
/// monomorphized over it run the same inner loops as on an in-memory CSR.
#[derive(Clone, Copy)]
pub struct FlatView<'a> {
    meta: Meta<'a>,
    pub(crate) out: Adj<'a>,
    pub(crate) inn: Adj<'a>,
    /// The in-lists opened for streamed sweeps, when the snapshot planned them.
    stream: Option<&'a InStream>,
}

impl Snapshot {
    /// The snapshot as a plain CSR, when it is a single run with dense indexes (a fully
    /// compacted store). `None` otherwise: use the snapshot itself.
    pub fn flat(&self) -> Option<FlatView<'_>> {
        // A point's run holds entries the point leaves out.
        if self.runs.len() != 1 || self.point.is_some() {
            return None;
        }
        self.flat_of(0)
    }

    /// Run `i` read as a plain CSR carrying the snapshot's counts, if it is dense and holds
    /// no tombstones.
    pub(crate) fn flat_of(&self, i: usize) -> Option<FlatView<'_>> {
        let r = &self.runs[i];
        Some(FlatView {
            meta: self.meta(),
            out: Adj::of(r.dir(Dir::Out))?,
            inn: Adj::of(r.dir(Dir::In))?,
            stream: self
                .stream
                .get()
                .and_then(Option::as_ref)
                .and_then(|s| s.one()),
        })
    }
}

impl<'a> FlatView<'a> {
    /// A view of plain CSR arrays (offsets and neighbor ids per direction), every id
    /// existing and unweighted.
    pub(crate) fn from_csr(
        n: usize,
        undirected: bool,
        edges: u64,
        out: (&'a [u64], &'a [VertexId]),
        inn: (&'a [u64], &'a [VertexId]),
    ) -> FlatView<'a> {
        let adj = |(offs, adds): (&'a [u64], &'a [VertexId])| Adj {
            offs,
            adds,
            wts: &[],
        };
        FlatView {
            meta: Meta {
                n,
                undirected,
                weighted: false,
                edges,
                deleted: &[],
                externals: &[],
            },
            out: adj(out),
            inn: adj(inn),
            stream: None,
        }
    }

    /// Sorted out-neighbors of `v`.
    #[inline]
    pub fn out(&self, v: VertexId) -> &[VertexId] {
        self.out.at(v)
    }

    /// Sorted in-neighbors of `v`.
    #[inline]
    pub fn inn(&self, v: VertexId) -> &[VertexId] {
        self.inn.at(v)
    }

    /// The out-direction arrays as the run stores them: offsets (one per vertex the run
    /// indexes, plus one: vertices past its index have no edges), the neighbor ids of every
    /// vertex in order, each vertex's sorted, and the weights beside them (empty when
    /// unweighted). Exporters hand these to other libraries without a copy.
    pub fn out_arrays(&self) -> (&'a [u64], &'a [VertexId], &'a [f64]) {
        (self.out.offs, self.out.adds, self.out.wts)
    }
}

impl GraphView for FlatView<'_> {
    meta_methods!();
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        self.out(v).len()
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.inn(v).len()
    }
    #[inline]
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        self.out(v).iter().copied().for_each(f)
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        self.inn(v).iter().copied().for_each(f)
    }
    // A slice fold rather than the trait's default, which goes through `for_each` with the
    // accumulator in an `Option` (measured: 1.01-1.13x a `for_each` sum over every
    // in-list; a slice fold matches it).
    #[inline]
    fn fold_out<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.out(v).iter().copied().fold(init, f)
    }
    #[inline]
    fn fold_in<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.inn(v).iter().copied().fold(init, f)
    }
    #[inline]
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.out(v).iter().copied().any(f)
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.inn(v).iter().copied().any(f)
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.out(u).binary_search(&v).is_ok()
    }
    #[inline]
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, f: F) {
        self.out.for_each_weighted(v, f)
    }
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        out.extend_from_slice(self.out(v));
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        out.extend_from_slice(self.inn(v));
    }
    fn sweep_in<S: SweepIn>(&self, s: &mut S) {
        match self.stream {
            Some(stream) => stream.sweep_flat(self, s),
            None => s.visit(0..self.meta.n, self),
        }
    }
}

/// Runs `$body` with `$g` bound to the fastest view of snapshot `$s`: its [`FlatView`] when
/// it is one compacted run, its [`PointView`](crate::snapshot::PointView) when it is a past
/// graph read in place, its [`PackedView`](crate::snapshot::PackedView) when that run is
/// compressed, its [`LayeredView`](crate::snapshot::LayeredView) when it is a few plain
/// runs (deletes included), else the snapshot itself. The body is compiled for all five.
#[macro_export]
macro_rules! with_view {
    ($s:expr, |$g:ident| $body:expr) => {
        if let Some(flat) = $s.flat() {
            let $g = &flat;
            $body
        } else if let Some(point) = $s.point() {
            let $g = &point;
            $body
        } else if let Some(packed) = $s.packed_flat() {
            let $g = &packed;
            $body
        } else if let Some(layered) = $s.layered() {
            let $g = &layered;
            $body
        } else {
            let $g = $s;
            $body
        }
    };
}
