//! The read interface every kernel is written against.

use crate::types::VertexId;

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
    /// In-degree of `v`.
    fn in_degree(&self, v: VertexId) -> usize;
    /// Calls `f` for each out-neighbor of `v` (order unspecified).
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, f: F);
    /// Calls `f` for each in-neighbor of `v` (order unspecified).
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, f: F);
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
