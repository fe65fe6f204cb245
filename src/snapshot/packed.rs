//! A compacted snapshot of a compressed store, read in place: each vertex's list is decoded
//! inside the kernel's scan, block by block, with no list materialised.

use super::flat::{meta_methods, Meta};
use super::{GraphView, Snapshot};
use crate::run::packed::{self, Head};
use crate::run::{Dir, DirData, PackedIndex};
use crate::types::VertexId;

/// One packed direction of a dense, tombstone-free run, borrowed.
#[derive(Clone, Copy)]
pub(crate) struct PackedAdj<'a> {
    bytes: &'a [u8],
    /// Stream positions: one of the two is empty.
    narrow: &'a [u32],
    wide: &'a [u64],
    weighted: bool,
    wts: &'a [f64],
}

impl<'a> PackedAdj<'a> {
    /// The direction borrowed, if it is packed, dense, free of tombstones and checked.
    pub(crate) fn of(d: &'a DirData) -> Option<PackedAdj<'a>> {
        let p = d.packed.as_ref()?;
        if !d.dense || d.n_tombs() > 0 || !p.is_checked() {
            return None;
        }
        let (narrow, wide): (&[u32], &[u64]) = match &p.index {
            PackedIndex::Narrow(s) => (s.get(), &[]),
            PackedIndex::Wide(s) => (&[], s.get()),
        };
        Some(PackedAdj {
            bytes: p.bytes.get(),
            narrow,
            wide,
            weighted: p.weighted,
            wts: d.wts.get(),
        })
    }

    /// The head of `v`'s stream (`None`: no neighbors, or beyond the run's index).
    #[inline]
    fn head(&self, v: VertexId) -> Option<Head> {
        let v = v as usize;
        let (s, e) = if self.wide.is_empty() {
            let i = self.narrow.get(v..v + 2)?;
            (i[0] as usize, i[1] as usize)
        } else {
            let i = self.wide.get(v..v + 2)?;
            (i[0] as usize, i[1] as usize)
        };
        packed::head(self.bytes, s, e, self.weighted)
    }

    #[inline]
    fn degree(&self, v: VertexId) -> usize {
        self.head(v).map_or(0, |h| h.degree)
    }

    // Inlined into the kernel, so that its accumulators stay locals the compiler keeps in
    // registers (through a call they are memory the decoder's raw reads might alias).
    #[inline(always)]
    fn find<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        match self.head(v) {
            // SAFETY: `of` admits only checked directions, and `h` heads one of its streams.
            Some(h) => unsafe { packed::find(self.bytes, h, f) },
            None => false,
        }
    }

    #[inline(always)]
    fn fold<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        match self.head(v) {
            // SAFETY: as in `find`.
            Some(h) => unsafe { packed::fold(self.bytes, h, init, f) },
            None => init,
        }
    }

    #[inline(always)]
    fn find_weighted<F: FnMut(VertexId, f64) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        let Some(h) = self.head(v) else { return false };
        let w = if self.wts.is_empty() {
            &[][..]
        } else {
            &self.wts[h.eoff as usize..h.eoff as usize + h.degree]
        };
        let mut k = 0;
        // SAFETY: as in `find`.
        unsafe {
            packed::find(self.bytes, h, |x| {
                k += 1;
                f(x, w.get(k - 1).copied().unwrap_or(1.0))
            })
        }
    }

    #[inline]
    fn position(&self, v: VertexId, x: VertexId) -> Option<usize> {
        let h = self.head(v)?;
        // SAFETY: as in `find`.
        unsafe { packed::position(self.bytes, h, x) }
    }

    fn count_among(&self, v: VertexId, ids: &[VertexId]) -> usize {
        match self.head(v) {
            // SAFETY: as in `find`.
            Some(h) => unsafe { packed::count_among(self.bytes, h, ids) },
            None => 0,
        }
    }

    fn weight(&self, v: VertexId, x: VertexId) -> Option<f64> {
        let h = self.head(v)?;
        // SAFETY: as in `find`.
        let k = unsafe { packed::position(self.bytes, h, x) }?;
        Some(self.wts.get(h.eoff as usize + k).copied().unwrap_or(1.0))
    }

    fn sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        if let Some(h) = self.head(v) {
            // SAFETY: as in `find`.
            unsafe { packed::decode_into(self.bytes, h, out) };
        }
    }
}

/// A borrowed view of a snapshot that is one compressed, compacted run (see
/// [`Snapshot::packed_flat`]): kernels monomorphized over it decode each list as they scan it.
#[derive(Clone, Copy)]
pub struct PackedView<'a> {
    meta: Meta<'a>,
    out: PackedAdj<'a>,
    inn: PackedAdj<'a>,
}

impl Snapshot {
    /// The snapshot read in place, when it is a single compressed run with dense indexes (a
    /// fully compacted store created with compression). `None` otherwise.
    pub fn packed_flat(&self) -> Option<PackedView<'_>> {
        let [r] = &*self.runs else { return None };
        Some(PackedView {
            meta: self.meta(),
            out: PackedAdj::of(r.dir(Dir::Out))?,
            inn: PackedAdj::of(r.dir(Dir::In))?,
        })
    }
}

impl PackedView<'_> {
    /// The weight of the edge `u -> v`, if it exists (1 in unweighted stores).
    pub fn edge_weight(&self, u: VertexId, v: VertexId) -> Option<f64> {
        self.out.weight(u, v)
    }
}

impl GraphView for PackedView<'_> {
    meta_methods!();
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        self.out.degree(v)
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.inn.degree(v)
    }
    #[inline(always)]
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.out.find(v, |x| {
            f(x);
            false
        });
    }
    #[inline(always)]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.inn.find(v, |x| {
            f(x);
            false
        });
    }
    #[inline(always)]
    fn fold_out<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.out.fold(v, init, f)
    }
    #[inline(always)]
    fn fold_in<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.inn.fold(v, init, f)
    }
    #[inline(always)]
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.out.find(v, f)
    }
    #[inline(always)]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.inn.find(v, f)
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.out.position(u, v).is_some()
    }
    fn count_out_among(&self, u: VertexId, ids: &[VertexId]) -> usize {
        self.out.count_among(u, ids)
    }
    /// A lookup decodes the chunk that may hold the id: the whole list when it is short.
    fn lookup_cost(&self, d: usize) -> usize {
        d.min(packed::CHUNK)
    }
    #[inline(always)]
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        self.out.find_weighted(v, |x, w| {
            f(x, w);
            false
        });
    }
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.out.sorted(v, out)
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.inn.sorted(v, out)
    }
}
