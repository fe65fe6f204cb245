//! A plain in-memory CSR: the baseline kernels are compared against, and a reference view
//! for tests.

use super::{FlatView, GraphView};
use crate::types::VertexId;
use rayon::prelude::*;

/// Compressed sparse rows for out- and in-adjacency, neighbors sorted and deduplicated.
pub struct Csr {
    n: usize,
    undirected: bool,
    out_off: Vec<u64>,
    out: Vec<VertexId>,
    in_off: Vec<u64>,
    inn: Vec<VertexId>,
}

fn build(n: usize, mut pairs: Vec<(VertexId, VertexId)>) -> (Vec<u64>, Vec<VertexId>) {
    pairs.par_sort_unstable();
    pairs.dedup();
    let mut off = vec![0u64; n + 1];
    for &(s, _) in &pairs {
        off[s as usize + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    (off, pairs.into_iter().map(|(_, d)| d).collect())
}

impl Csr {
    /// Builds from edges over vertices `0..n`; undirected graphs store both directions.
    /// Duplicate edges collapse (set semantics).
    pub fn from_edges(n: usize, edges: &[(VertexId, VertexId)], undirected: bool) -> Csr {
        let mut fwd: Vec<(VertexId, VertexId)> = edges.to_vec();
        if undirected {
            fwd.extend(edges.iter().filter(|(s, d)| s != d).map(|&(s, d)| (d, s)));
        }
        let rev: Vec<(VertexId, VertexId)> = fwd.iter().map(|&(s, d)| (d, s)).collect();
        let (out_off, out) = build(n, fwd);
        let (in_off, inn) = build(n, rev);
        Csr {
            n,
            undirected,
            out_off,
            out,
            in_off,
            inn,
        }
    }

    /// The CSR as a [`FlatView`]: kernels read it through the same code as a compacted
    /// store, so the two differ only in where the bytes live.
    #[inline]
    pub fn view(&self) -> FlatView<'_> {
        FlatView::from_csr(
            self.n,
            self.undirected,
            self.out.len() as u64,
            (&self.out_off, &self.out),
            (&self.in_off, &self.inn),
        )
    }

    /// Sorted out-neighbors of `v` (empty for ids out of range).
    pub fn out(&self, v: VertexId) -> &[VertexId] {
        self.view().out.at(v)
    }

    /// Sorted in-neighbors of `v` (empty for ids out of range).
    pub fn inn(&self, v: VertexId) -> &[VertexId] {
        self.view().inn.at(v)
    }

    /// DRAM bytes held.
    pub fn bytes(&self) -> u64 {
        ((self.out_off.len() + self.in_off.len()) * 8 + (self.out.len() + self.inn.len()) * 4)
            as u64
    }
}

/// Every method is the flat view's.
impl GraphView for Csr {
    fn num_vertices(&self) -> usize {
        self.n
    }
    fn num_edges(&self) -> u64 {
        self.out.len() as u64
    }
    fn is_undirected(&self) -> bool {
        self.undirected
    }
    #[inline]
    fn vertex_exists(&self, v: VertexId) -> bool {
        (v as usize) < self.n
    }
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        self.view().out_degree(v)
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.view().in_degree(v)
    }
    #[inline]
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        self.view().for_each_out(v, f)
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        self.view().for_each_in(v, f)
    }
    #[inline]
    fn fold_out<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.view().fold_out(v, init, f)
    }
    #[inline]
    fn fold_in<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.view().fold_in(v, init, f)
    }
    #[inline]
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.view().find_out(v, f)
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.view().find_in(v, f)
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.view().has_edge(u, v)
    }
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.view().out_neighbors_sorted(v, out)
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.view().in_neighbors_sorted(v, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sets_and_answers_out_of_range_ids_with_nothing() {
        let g = Csr::from_edges(4, &[(0, 1), (0, 1), (2, 0), (1, 3)], false);
        assert_eq!(g.num_edges(), 3);
        assert_eq!(g.out(0), [1]);
        assert_eq!(g.inn(0), [2]);
        assert_eq!((g.out_degree(1), g.in_degree(1)), (1, 1));
        assert!(g.has_edge(2, 0) && !g.has_edge(0, 2));
        // Past the id space: empty, never a panic.
        assert!(g.out(4).is_empty() && g.inn(99).is_empty());
        assert_eq!(g.out_degree(VertexId::MAX), 0);
        assert!(!g.vertex_exists(4) && !g.has_edge(7, 0));
        let u = Csr::from_edges(3, &[(0, 1), (1, 1)], true);
        assert_eq!(u.out(1), [0, 1]);
        assert_eq!(u.inn(0), [1]);
    }
}
