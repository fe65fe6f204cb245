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
use rayon::prelude::*;

/// Where one vertex's neighbors start in the base and in the delta run of one direction.
///
/// Both layers' offsets for a vertex sit in one 8-byte entry, a CSR offset array for two
/// (a vertex's lists end where the next vertex's start): a kernel that jumps to a random
/// vertex (BFS, SSSP, BC pushing along edges) takes one cache miss for the index, not one
/// per layer, and a pass over all vertices reads as many index bytes as on a plain CSR.
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub(crate) struct Span {
    base: u32,
    delta: u32,
}

/// The spans of every vertex plus one end entry, per direction (`inn` empty in undirected
/// stores).
#[derive(Default)]
pub(crate) struct SpanIndex {
    out: Vec<Span>,
    inn: Vec<Span>,
}

/// The spans of vertices `0..n` and the end entry; `None` if either run holds 2^32 or more
/// neighbor ids in this direction (offsets are 32-bit; such a snapshot is read through the
/// general path).
fn spans(n: usize, base: &Adj, delta: &Adj) -> Option<Vec<Span>> {
    if base.len() > u32::MAX as u64 || delta.len() > u32::MAX as u64 {
        return None;
    }
    Some(
        (0..n + 1)
            .into_par_iter()
            .with_min_len(4096)
            .map(|v| Span {
                base: base.start(v as VertexId) as u32,
                delta: delta.start(v as VertexId) as u32,
            })
            .collect(),
    )
}

/// A borrowed two-layer view of a snapshot (see [`Snapshot::layered`]).
#[derive(Clone, Copy)]
pub struct LayeredView<'a> {
    base: FlatView<'a>,
    d_out: Adj<'a>,
    d_inn: Adj<'a>,
    out: &'a [Span],
    inn: &'a [Span],
}

impl Snapshot {
    /// The snapshot as a compacted base plus one delta, when it is exactly two runs with
    /// dense indexes and no tombstones. `None` otherwise: use [`Snapshot::flat`] or the
    /// snapshot itself. The first call builds the per-vertex span index (O(vertices), in
    /// parallel); later calls and clones of the snapshot share it.
    pub fn layered(&self) -> Option<LayeredView<'_>> {
        let [_, delta] = &*self.runs else {
            return None;
        };
        let base = self.flat_of(0)?;
        let d_out = Adj::of(delta.dir(Dir::Out))?;
        let d_inn = Adj::of(delta.dir(Dir::In))?;
        let idx = self
            .spans
            .get_or_init(|| {
                Some(SpanIndex {
                    out: spans(self.n, &base.out, &d_out)?,
                    inn: if self.undirected {
                        Vec::new()
                    } else {
                        spans(self.n, &base.inn, &d_inn)?
                    },
                })
            })
            .as_ref()?;
        let inn = if self.undirected { &idx.out } else { &idx.inn };
        Some(LayeredView {
            base,
            d_out,
            d_inn,
            out: &idx.out,
            inn,
        })
    }
}

impl<'a> LayeredView<'a> {
    /// `v`'s neighbors in the base and in the delta, in one direction.
    #[inline]
    fn parts(
        spans: &[Span],
        base: &Adj<'a>,
        delta: &Adj<'a>,
        v: VertexId,
    ) -> (&'a [VertexId], &'a [VertexId]) {
        match (spans.get(v as usize), spans.get(v as usize + 1)) {
            (Some(s), Some(next)) => (
                base.slice(s.base as u64, next.base as u64),
                delta.slice(s.delta as u64, next.delta as u64),
            ),
            _ => (&[], &[]),
        }
    }

    /// Out- or in-degree from the spans.
    #[inline]
    fn degree(spans: &[Span], v: VertexId) -> usize {
        match (spans.get(v as usize), spans.get(v as usize + 1)) {
            (Some(s), Some(next)) => (next.base - s.base + next.delta - s.delta) as usize,
            _ => 0,
        }
    }

    #[inline]
    fn out(&self, v: VertexId) -> (&'a [VertexId], &'a [VertexId]) {
        Self::parts(self.out, &self.base.out, &self.d_out, v)
    }

    #[inline]
    fn inn(&self, v: VertexId) -> (&'a [VertexId], &'a [VertexId]) {
        Self::parts(self.inn, &self.base.inn, &self.d_inn, v)
    }
}

/// The neighbors of `v` in two sorted, disjoint slices, merged into `out`.
fn merge_sorted(a: &[VertexId], b: &[VertexId], out: &mut Vec<VertexId>) {
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
    fn external_id(&self, v: VertexId) -> u64 {
        self.base.external_id(v)
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
        Self::degree(self.out, v)
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        Self::degree(self.inn, v)
    }
    #[inline]
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        let (b, d) = self.out(v);
        b.iter().for_each(|&x| f(x));
        d.iter().for_each(|&x| f(x));
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        let (b, d) = self.inn(v);
        b.iter().for_each(|&x| f(x));
        d.iter().for_each(|&x| f(x));
    }
    #[inline]
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        let (b, d) = self.out(v);
        b.iter().any(|&x| f(x)) || d.iter().any(|&x| f(x))
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        let (b, d) = self.inn(v);
        b.iter().any(|&x| f(x)) || d.iter().any(|&x| f(x))
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        let (b, d) = self.out(u);
        b.binary_search(&v).is_ok() || d.binary_search(&v).is_ok()
    }
    fn is_weighted(&self) -> bool {
        self.base.is_weighted()
    }
    #[inline]
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        let (Some(s), Some(next)) = (self.out.get(v as usize), self.out.get(v as usize + 1)) else {
            return;
        };
        self.base
            .out
            .for_each_weighted_in(s.base as u64, next.base as u64, &mut f);
        self.d_out
            .for_each_weighted_in(s.delta as u64, next.delta as u64, f);
    }
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        let (b, d) = self.out(v);
        merge_sorted(b, d, out)
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        let (b, d) = self.inn(v);
        merge_sorted(b, d, out)
    }
}
