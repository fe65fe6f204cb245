//! The read interface every kernel is written against.

use crate::types::VertexId;
use std::ops::Range;

/// The work of one pass over every vertex's lists of one direction (in-lists through
/// [`GraphView::sweep_in`], out-lists through [`GraphView::sweep_out`]), handed the
/// vertices a range at a time.
pub trait SweepIn {
    /// Does the pass's work for the vertices `vs`, reading their lists of the direction
    /// swept from `g`. Other reads of `g` (degrees, the other direction, other vertices'
    /// lists) work too, at the cost of the view `g` came from.
    fn visit<W: GraphView>(&mut self, vs: Range<usize>, g: &W);
}

/// A directed graph to read: counts, degrees, neighbors, edge lookup.
///
/// Neighbor iteration is closure-based so implementations can stream from several parts
/// without allocating, and kernels are monomorphized per implementation. Undirected graphs
/// report each edge in both directions and have equal out- and in-adjacency.
pub trait GraphView: Sync {
    /// Size of the dense id space: vertices are `0..num_vertices()` (some may be deleted).
    fn num_vertices(&self) -> usize;
    /// Number of directed edges (an undirected edge between two vertices counts twice).
    fn num_edges(&self) -> u64;
    /// Whether the graph is undirected.
    fn is_undirected(&self) -> bool;
    /// Whether `v` exists (was not deleted).
    fn vertex_exists(&self, v: VertexId) -> bool;
    /// Out-degree of `v`.
    fn out_degree(&self, v: VertexId) -> usize;
    /// Every vertex's out-degree, by dense id: [`GraphView::out_degree`] of each, for
    /// kernels that need them all. A snapshot of many runs counts them run by run instead
    /// of searching each run for each vertex.
    fn out_degrees(&self) -> Vec<usize>
    where
        Self: Sized,
    {
        use rayon::prelude::*;
        crate::types::par_vertices(self.num_vertices())
            .map(|v| self.out_degree(v))
            .collect()
    }
    /// In-degree of `v`.
    fn in_degree(&self, v: VertexId) -> usize;
    /// Calls `f` for each out-neighbor of `v` (order unspecified).
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, f: F);
    /// Calls `f` for each in-neighbor of `v` (order unspecified).
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, f: F);
    /// Folds the out-neighbors of `v` into `init` (order unspecified). Views may decode
    /// compressed lists a block at a time for it, where [`GraphView::for_each_out`] hands
    /// each id over as it is decoded: prefer it for scans whose work per neighbor is small.
    fn fold_out<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, mut f: F) -> A {
        let mut acc = Some(init);
        self.for_each_out(v, |u| acc = acc.take().map(|a| f(a, u)));
        acc.expect("the fold keeps its value")
    }
    /// Folds the in-neighbors of `v` into `init`, as [`GraphView::fold_out`].
    fn fold_in<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, mut f: F) -> A {
        let mut acc = Some(init);
        self.for_each_in(v, |u| acc = acc.take().map(|a| f(a, u)));
        acc.expect("the fold keeps its value")
    }
    /// One pass over every vertex's in-list: calls `s.visit` on consecutive ranges of
    /// vertices covering `0..num_vertices()`, in order. A view that streams its lists from
    /// the medium (a store larger than the memory left) hands over one window of vertices at
    /// a time, its lists in DRAM; every other view hands itself over once.
    fn sweep_in<S: SweepIn>(&self, s: &mut S)
    where
        Self: Sized,
    {
        s.visit(0..self.num_vertices(), self)
    }
    /// One pass over every vertex's out-list, as [`GraphView::sweep_in`] over in-lists.
    fn sweep_out<S: SweepIn>(&self, s: &mut S)
    where
        Self: Sized,
    {
        s.visit(0..self.num_vertices(), self)
    }
    /// Calls `f` on out-neighbors of `v` until it returns true; returns whether it did.
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        let mut found = false;
        self.for_each_out(v, |w| found = found || f(w));
        found
    }
    /// Calls `f` on in-neighbors of `v` until it returns true; returns whether it did
    /// (bottom-up BFS stops at the first parent it finds).
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        let mut found = false;
        self.for_each_in(v, |w| found = found || f(w));
        found
    }
    /// Whether edges carry weights (else every weight reads as 1).
    fn is_weighted(&self) -> bool {
        false
    }
    /// Calls `f` for each out-neighbor of `v` with the edge's weight.
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        self.for_each_out(v, |w| f(w, 1.0));
    }
    /// The user's id of `v`, for messages (verifiers name vertices by it); the dense id
    /// itself in views that carry no dictionary.
    fn external_id(&self, v: VertexId) -> u64 {
        u64::from(v)
    }
    /// Whether the edge `u -> v` exists.
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool;
    /// How many of `ids` (ascending, no repeats) are out-neighbors of `u`: a lookup per id
    /// unless the view knows better (compressed lists decode each block once for all the ids
    /// it may hold).
    fn count_out_among(&self, u: VertexId, ids: &[VertexId]) -> usize {
        ids.iter().filter(|&&w| self.has_edge(u, w)).count()
    }
    /// About how many neighbors one lookup in a list of `d` reads, for kernels that choose
    /// between looking ids up and scanning the list: a binary search's `log2 d`, unless the
    /// view's lookups read more.
    fn lookup_cost(&self, d: usize) -> usize {
        (usize::BITS - d.leading_zeros()) as usize
    }
    /// Out-neighbors of `v`, sorted ascending, into `out` (cleared first).
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        self.for_each_out(v, |w| out.push(w));
        out.sort_unstable();
    }
    /// In-neighbors of `v`, sorted ascending, into `out` (cleared first).
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        self.for_each_in(v, |w| out.push(w));
        out.sort_unstable();
    }
}
