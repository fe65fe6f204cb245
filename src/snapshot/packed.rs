//! A compacted snapshot of a compressed store, read in place: each vertex's list is decoded
//! inside the kernel's scan, block by block, with no list materialised.

use super::flat::{meta_methods, Meta};
use super::stream::{window_view_methods, InStream, Starts};
use super::{GraphView, Snapshot, SweepIn};
use crate::run::packed::{self, Head};
use crate::run::{Dir, DirData, PackedIndex};
use crate::types::VertexId;
use std::ops::Range;

/// One packed direction of a dense, tombstone-free run, borrowed.
#[derive(Clone, Copy)]
pub(crate) struct PackedAdj<'a> {
    bytes: &'a [u8],
    /// Stream positions: one of the two is empty.
    narrow: &'a [u32],
    wide: &'a [u64],
    weighted: bool,
    wts: &'a [f64],
    /// The stream position of `bytes[0]`: 0, but in a streamed sweep's window, whose bytes
    /// start at its first vertex's stream.
    base: usize,
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
            base: 0,
        })
    }

    /// Where each indexed vertex's stream starts, plus the end.
    pub(crate) fn starts(&self) -> Starts<'a> {
        match self.wide.is_empty() {
            true => Starts::Narrow(self.narrow),
            false => Starts::Wide(self.wide),
        }
    }

    /// The same direction with `bytes`, the streams from position `base` on, in place of
    /// the run's.
    fn rebased<'b>(&self, bytes: &'b [u8], base: usize) -> PackedAdj<'b>
    where
        'a: 'b,
    {
        PackedAdj {
            bytes,
            base,
            ..*self
        }
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
        packed::head(self.bytes, s - self.base, e - self.base, self.weighted)
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
    pub(crate) inn: PackedAdj<'a>,
    /// The in-lists opened for streamed sweeps, when the snapshot planned them.
    stream: Option<&'a InStream>,
}

impl Snapshot {
    /// The snapshot read in place, when it is a single compressed run with dense indexes (a
    /// fully compacted store created with compression). `None` otherwise.
    pub fn packed_flat(&self) -> Option<PackedView<'_>> {
        let [r] = &*self.runs else { return None };
        if self.point.is_some() {
            return None;
        }
        Some(PackedView {
            meta: self.meta(),
            out: PackedAdj::of(r.dir(Dir::Out))?,
            inn: PackedAdj::of(r.dir(Dir::In))?,
            stream: self
                .stream
                .get()
                .and_then(Option::as_ref)
                .and_then(|s| s.one()),
        })
    }
}

impl<'a> PackedView<'a> {
    /// The weight of the edge `u -> v`, if it exists (1 in unweighted stores).
    pub fn edge_weight(&self, u: VertexId, v: VertexId) -> Option<f64> {
        self.out.weight(u, v)
    }

    /// A streamed sweep's window: the in-lists of the vertices `vs` decoded from `bytes`,
    /// the streams from position `base` on (with [`packed::SLACK`] readable bytes after
    /// the last); everything else read as this view reads it.
    ///
    /// The window's decoding reads without bounds checks, as the view's does: `bytes` are
    /// the checked streams read again from the run's file, which is never rewritten. That
    /// trusts the device to return what it returned to the check, as the view trusts it
    /// for every page the mapping reads again after an eviction.
    pub(crate) fn with_in_window<'v>(
        &'v self,
        bytes: &'v [u8],
        base: usize,
        vs: Range<usize>,
    ) -> PackedWindow<'v, 'a> {
        PackedWindow {
            view: self,
            win: self.inn.rebased(bytes, base),
            vs,
        }
    }
}

/// A streamed sweep's window of a packed run (see [`PackedView::with_in_window`]).
pub(crate) struct PackedWindow<'v, 'a> {
    view: &'v PackedView<'a>,
    win: PackedAdj<'v>,
    vs: Range<usize>,
}

impl PackedWindow<'_, '_> {
    /// The direction holding `v`'s in-list: the window's buffer inside it, the run's
    /// mapping outside.
    #[inline(always)]
    fn inn(&self, v: VertexId) -> &PackedAdj<'_> {
        match self.vs.contains(&(v as usize)) {
            true => &self.win,
            false => &self.view.inn,
        }
    }
}

impl GraphView for PackedWindow<'_, '_> {
    window_view_methods!();
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.inn(v).degree(v)
    }
    #[inline(always)]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.inn(v).find(v, |x| {
            f(x);
            false
        });
    }
    #[inline(always)]
    fn fold_in<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.inn(v).fold(v, init, f)
    }
    #[inline(always)]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.inn(v).find(v, f)
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.inn(v).sorted(v, out)
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
    fn sweep_in<S: SweepIn>(&self, s: &mut S) {
        match self.stream {
            Some(stream) => stream.sweep_packed(self, s),
            None => s.visit(0..self.meta.n, self),
        }
    }
}
