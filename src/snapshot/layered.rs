//! A snapshot of a compacted base plus one run of newer edges, seen as two plain CSRs.
//!
//! This is the common shape of a live store: everything up to the last compaction in one
//! dense run, and the edges since then in a second (the memtable sealed when the snapshot
//! was taken, or one flushed run). Because runs are resolved and neither holds tombstones,
//! a vertex's neighbors are exactly its base slice followed by its delta slice, so kernels
//! read two borrowed slices per vertex with no run list to walk and nothing to cancel.

use super::flat::Adj;
use super::{FlatView, GraphView, Snapshot};
use crate::run::Dir;
use crate::types::VertexId;

/// A borrowed two-layer view of a snapshot (see [`Snapshot::layered`]).
#[derive(Clone, Copy)]
pub struct LayeredView<'a> {
    base: FlatView<'a>,
    out: Adj<'a>,
    inn: Adj<'a>,
}

impl Snapshot {
    /// The snapshot as a compacted base plus one delta, when it is exactly two runs with
    /// dense indexes and no tombstones. `None` otherwise: use [`Snapshot::flat`] or the
    /// snapshot itself.
    pub fn layered(&self) -> Option<LayeredView<'_>> {
        let [_, delta] = &*self.runs else {
            return None;
        };
        let base = self.flat_of(0)?;
        let out = Adj::of(delta.dir(Dir::Out))?;
        let inn = Adj::of(delta.dir(Dir::In))?;
        Some(LayeredView { base, out, inn })
    }
}

/// The neighbors of `v` in two sorted, disjoint slices, merged into `out`.
fn merge_sorted(a: &[u32], b: &[u32], out: &mut Vec<VertexId>) {
    out.clear();
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

impl GraphView for LayeredView<'_> {
    fn num_vertices(&self) -> usize {
        self.base.num_vertices()
    }
    fn num_edges(&self) -> u64 {
        self.base.num_edges()
    }
    fn is_undirected(&self) -> bool {
        self.base.is_undirected()
    }
    #[inline]
    fn vertex_exists(&self, v: VertexId) -> bool {
        self.base.vertex_exists(v)
    }
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        self.base.out(v).len() + self.out.at(v).len()
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.base.inn(v).len() + self.inn.at(v).len()
    }
    #[inline]
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.base.out(v).iter().for_each(|&x| f(x));
        self.out.at(v).iter().for_each(|&x| f(x));
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.base.inn(v).iter().for_each(|&x| f(x));
        self.inn.at(v).iter().for_each(|&x| f(x));
    }
    #[inline]
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        self.base.out(v).iter().any(|&x| f(x)) || self.out.at(v).iter().any(|&x| f(x))
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        self.base.inn(v).iter().any(|&x| f(x)) || self.inn.at(v).iter().any(|&x| f(x))
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.base.has_edge(u, v) || self.out.at(u).binary_search(&v).is_ok()
    }
    fn is_weighted(&self) -> bool {
        self.base.is_weighted()
    }
    #[inline]
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        self.base.for_each_out_weighted(v, &mut f);
        self.out.for_each_weighted(v, f);
    }
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        merge_sorted(self.base.out(v), self.out.at(v), out)
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        merge_sorted(self.base.inn(v), self.inn.at(v), out)
    }
}
