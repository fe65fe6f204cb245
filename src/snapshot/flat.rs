//! A compacted snapshot seen as a plain CSR: borrowed slices, no per-vertex lookup.

use super::{GraphView, Snapshot};
use crate::run::Dir;
use crate::types::VertexId;

/// A borrowed CSR view of a snapshot that is one run (see [`Snapshot::flat`]). Kernels
/// monomorphized over it run the same inner loops as on an in-memory CSR.
#[derive(Clone, Copy)]
pub struct FlatView<'a> {
    n: usize,
    undirected: bool,
    edges: u64,
    deleted: &'a [u64],
    out_offs: &'a [u64],
    out_adds: &'a [u32],
    out_wts: &'a [f64],
    in_offs: &'a [u64],
    in_adds: &'a [u32],
}

impl Snapshot {
    /// The snapshot as a plain CSR, when it is a single run with dense indexes (a fully
    /// compacted store). `None` otherwise: use the snapshot itself.
    pub fn flat(&self) -> Option<FlatView<'_>> {
        let [r] = &*self.runs else { return None };
        let (o, i) = (r.dir(Dir::Out), r.dir(Dir::In));
        if !o.dense || !i.dense || o.n_tombs() > 0 || i.n_tombs() > 0 {
            return None;
        }
        Some(FlatView {
            n: self.n,
            undirected: self.undirected,
            edges: self.edges,
            deleted: &self.deleted,
            out_offs: o.offs.get(),
            out_adds: o.adds.get(),
            out_wts: o.wts.get(),
            in_offs: i.offs.get(),
            in_adds: i.adds.get(),
        })
    }
}

impl FlatView<'_> {
    #[inline]
    fn slice<'b>(offs: &'b [u64], adds: &'b [u32], v: VertexId) -> &'b [u32] {
        let v = v as usize;
        if v + 1 >= offs.len() {
            return &[];
        }
        &adds[offs[v] as usize..offs[v + 1] as usize]
    }

    /// Sorted out-neighbors of `v`.
    #[inline]
    pub fn out(&self, v: VertexId) -> &[VertexId] {
        Self::slice(self.out_offs, self.out_adds, v)
    }

    /// Sorted in-neighbors of `v`.
    #[inline]
    pub fn inn(&self, v: VertexId) -> &[VertexId] {
        Self::slice(self.in_offs, self.in_adds, v)
    }
}

impl GraphView for FlatView<'_> {
    fn num_vertices(&self) -> usize {
        self.n
    }
    fn num_edges(&self) -> u64 {
        self.edges
    }
    fn is_undirected(&self) -> bool {
        self.undirected
    }
    #[inline]
    fn vertex_exists(&self, v: VertexId) -> bool {
        super::exists(self.n, self.deleted, v)
    }
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
    fn is_weighted(&self) -> bool {
        !self.out_wts.is_empty()
    }
    #[inline]
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        let ids = self.out(v);
        if self.out_wts.is_empty() {
            ids.iter().for_each(|&x| f(x, 1.0));
            return;
        }
        let o = self.out_offs[v as usize] as usize;
        let w = &self.out_wts[o..o + ids.len()];
        ids.iter().zip(w).for_each(|(&x, &w)| f(x, w));
    }
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        out.extend_from_slice(self.out(v));
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        out.extend_from_slice(self.inn(v));
    }
}

/// Runs `$body` with `$g` bound to the fastest view of snapshot `$s`: its [`FlatView`] when
/// it is one compacted run, else the snapshot itself. The body is compiled for both.
#[macro_export]
macro_rules! with_view {
    ($s:expr, |$g:ident| $body:expr) => {
        match $s.flat() {
            Some(flat) => {
                let $g = &flat;
                $body
            }
            None => {
                let $g = $s;
                $body
            }
        }
    };
}
