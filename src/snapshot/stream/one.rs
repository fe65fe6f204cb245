//! Streaming one compacted run's in-lists: a window is one read of consecutive lists.

use super::super::flat::{Adj, FlatView};
use super::super::packed::{PackedAdj, PackedView};
use super::super::{GraphView, SweepIn};
use super::{pipeline, read_all, Buffers, Filled, SectionRead, StreamStats, PIECE};
use crate::medium::{AlignedBuf, SweepFile, ALIGN};
use crate::run::{Dir, Run};
use crate::types::{VertexId, ID_BYTES};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One run's in-lists, opened for streamed sweeps.
pub(crate) struct InStream {
    file: SweepFile,
    /// Where the run's in-direction lists (neighbor ids, or packed streams) start in its
    /// file.
    at: u64,
    /// Bytes of lists a window holds at most (a single longer list gets a window of its
    /// own, read through the mapping).
    window: usize,
    /// Windows read through the mapping after their read failed.
    fallbacks: AtomicU64,
    /// The window buffers between passes.
    buffers: Buffers,
}

/// Where each indexed vertex's in-list starts in its section, in bytes, plus the end.
#[derive(Clone, Copy)]
pub(crate) enum Starts<'a> {
    /// A plain run's offsets, in ids.
    Ids(&'a [u64]),
    /// A packed run's stream positions.
    Narrow(&'a [u32]),
    /// A packed run's stream positions, past 4 GiB.
    Wide(&'a [u64]),
}

impl Starts<'_> {
    /// Vertices indexed.
    pub(super) fn indexed(&self) -> usize {
        let n = match self {
            Starts::Ids(o) | Starts::Wide(o) => o.len(),
            Starts::Narrow(o) => o.len(),
        };
        n.saturating_sub(1)
    }

    /// Where vertex `v`'s list starts, in bytes (`v` up to the number indexed).
    #[inline]
    pub(super) fn at(&self, v: usize) -> u64 {
        match self {
            Starts::Ids(o) => o[v] * ID_BYTES as u64,
            Starts::Narrow(o) => u64::from(o[v]),
            Starts::Wide(o) => o[v],
        }
    }
}

/// Run `run`'s in-direction lists as its file holds them, if it is dense and free of
/// tombstones: the neighbor ids of a plain run, the streams of a packed one.
pub(super) fn in_lists(run: &Run) -> Option<&[u8]> {
    let d = run.dir(Dir::In);
    match &d.packed {
        Some(p) => PackedAdj::of(d).map(|_| p.bytes.get()),
        None => Adj::of(d).map(|a| bytemuck::cast_slice(a.ids())),
    }
}

impl InStream {
    /// `run`'s in-lists opened for streaming in windows of `window` bytes, if it is dense,
    /// free of tombstones and file-backed.
    pub(super) fn open(run: &Run, window: usize) -> Option<InStream> {
        let section = in_lists(run)?;
        let at = run.file_offset(section)?;
        let file = run.file.as_ref()?.open_sweep().ok()??;
        let window = window.max(1);
        Some(InStream {
            file,
            at,
            window,
            fallbacks: AtomicU64::new(0),
            buffers: Buffers::new(window + 2 * ALIGN),
        })
    }

    /// What the stream read so far.
    pub(super) fn stats(&self) -> StreamStats {
        StreamStats {
            direct: self.file.is_direct(),
            bytes_read: self.file.bytes_read(),
            fallbacks: self.fallbacks.load(Relaxed),
            window: self.window,
            kept: 0,
            kept_packed: 0,
        }
    }

    /// One pass of `s` over the in-lists of `view`, a plain run's, window by window.
    pub(crate) fn sweep_flat<S: SweepIn>(&self, view: &FlatView, s: &mut S) {
        let offs = view.inn.offsets();
        self.sweep(Starts::Ids(offs), view, s, |bytes, vs, s| {
            let ids: &[VertexId] = bytemuck::cast_slice(bytes);
            s.visit(vs.clone(), &Window::new(view, ids, offs[vs.start], vs))
        })
    }

    /// One pass of `s` over the in-lists of `view`, a packed run's, window by window.
    pub(crate) fn sweep_packed<S: SweepIn>(&self, view: &PackedView, s: &mut S) {
        let starts = view.inn.starts();
        self.sweep(starts, view, s, |bytes, vs, s| {
            let base = starts.at(vs.start) as usize;
            s.visit(vs.clone(), &view.with_in_window(bytes, base, vs))
        })
    }

    /// One pass of `s` over the lists that `starts` places, window by window (see
    /// [`pipeline`]). `visit` hands `s` a window's view, made from its lists' bytes (the
    /// first list first, at least [`crate::run::packed::SLACK`] readable bytes after the
    /// last) and its vertices.
    fn sweep<V, S, F>(&self, starts: Starts, view: &V, s: &mut S, visit: F)
    where
        V: GraphView,
        S: SweepIn,
        F: Fn(&[u8], Range<usize>, &mut S),
    {
        let n = view.num_vertices();
        let indexed = starts.indexed().min(n);
        let jobs = windows(starts, indexed, self.window);
        let read = |vs: Range<usize>, buf| self.read(starts, vs, buf);
        pipeline(jobs, &self.buffers, read, |r: &Read| match r {
            Read::Filled { buf, skip, vs } => visit(&buf.bytes()[*skip..], vs.clone(), s),
            Read::Mapped { failed, vs, .. } => {
                if *failed {
                    self.fallbacks.fetch_add(1, Relaxed);
                }
                s.visit(vs.clone(), view)
            }
        });
        if indexed < n {
            // Vertices past the run's index have no lists: nothing to read.
            s.visit(indexed..n, view);
        }
    }

    /// Reads the lists of vertices `vs` into `buf`, with a page to spare after them. A
    /// window longer than the buffer (one vertex's list past the window size) and a read
    /// that fails or comes back short are read through the mapping instead.
    fn read(&self, starts: Starts, vs: Range<usize>, mut buf: AlignedBuf) -> Read {
        let range = self.at + starts.at(vs.start)..self.at + starts.at(vs.end);
        let (whole, landed) = SectionRead::place(&self.file, range, 0);
        if buf.capacity() < whole.len + ALIGN {
            return Read::Mapped {
                buf,
                failed: false,
                vs,
            };
        }
        match read_all(&whole.split(PIECE), &mut buf) {
            true => Read::Filled {
                buf,
                skip: landed.start,
                vs,
            },
            false => Read::Mapped {
                buf,
                failed: true,
                vs,
            },
        }
    }
}

/// What the reader hands over for the window of vertices `vs`.
enum Read {
    /// The window's lists, in `buf` from byte `skip` on (the read starts at a page
    /// boundary).
    Filled {
        buf: AlignedBuf,
        skip: usize,
        vs: Range<usize>,
    },
    /// The window is read through the mapping: its lists do not fit a buffer, or their read
    /// `failed`. The buffer goes back for the next window.
    Mapped {
        buf: AlignedBuf,
        failed: bool,
        vs: Range<usize>,
    },
}

impl Filled for Read {
    fn into_buf(self) -> AlignedBuf {
        match self {
            Read::Filled { buf, .. } | Read::Mapped { buf, .. } => buf,
        }
    }
}

/// Consecutive ranges of the vertices `0..indexed`, each holding at most `window` bytes
/// of lists (or a single vertex's longer list).
fn windows(starts: Starts, indexed: usize, window: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut a = 0;
    while a < indexed {
        let limit = starts.at(a) + window as u64;
        // The last vertex whose list ends within the limit, at least `a` itself: a binary
        // search over `a + 1..=indexed` for the first end past it.
        let (mut lo, mut hi) = (a + 1, indexed + 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match starts.at(mid) <= limit {
                true => lo = mid + 1,
                false => hi = mid,
            }
        }
        let b = (lo - 1).max(a + 1);
        out.push(a..b);
        a = b;
    }
    out
}

/// A streamed sweep's window of a plain run: the in-lists of the vertices `vs` from a
/// buffer, everything else from the view the window belongs to.
struct Window<'v, 'a> {
    view: &'v FlatView<'a>,
    /// The lists of `vs`, end to end; list `v` is at `offs[v] - base`.
    ids: &'v [VertexId],
    base: u64,
    vs: Range<usize>,
}

impl<'v, 'a> Window<'v, 'a> {
    fn new(view: &'v FlatView<'a>, ids: &'v [VertexId], base: u64, vs: Range<usize>) -> Self {
        Window {
            view,
            ids,
            base,
            vs,
        }
    }

    /// `v`'s in-list: from the buffer inside the window, through the mapping outside it.
    #[inline]
    fn inn(&self, v: VertexId) -> &[VertexId] {
        if !self.vs.contains(&(v as usize)) {
            return self.view.inn(v);
        }
        let offs = self.view.inn.offsets();
        let v = v as usize;
        &self.ids[(offs[v] - self.base) as usize..(offs[v + 1] - self.base) as usize]
    }
}

/// The [`GraphView`] methods a streamed sweep's window answers as the view it belongs to
/// (its `view` field) does, whichever direction it streams: counts, vertices, weights,
/// ids and edge lookups.
macro_rules! window_meta_methods {
    () => {
        fn num_vertices(&self) -> usize {
            self.view.num_vertices()
        }
        fn num_edges(&self) -> u64 {
            self.view.num_edges()
        }
        fn is_undirected(&self) -> bool {
            self.view.is_undirected()
        }
        #[inline]
        fn vertex_exists(&self, v: VertexId) -> bool {
            self.view.vertex_exists(v)
        }
        fn is_weighted(&self) -> bool {
            self.view.is_weighted()
        }
        fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, f: F) {
            self.view.for_each_out_weighted(v, f)
        }
        fn external_id(&self, v: VertexId) -> u64 {
            self.view.external_id(v)
        }
        fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
            self.view.has_edge(u, v)
        }
        fn count_out_among(&self, u: VertexId, ids: &[VertexId]) -> usize {
            self.view.count_out_among(u, ids)
        }
        fn lookup_cost(&self, d: usize) -> usize {
            self.view.lookup_cost(d)
        }
    };
}
pub(crate) use window_meta_methods;

/// Both directions' list methods of a window that answers its own direction's lists
/// itself: `$per_dir!` (one of its macros) called with each direction and the names of
/// that direction's [`GraphView`] methods (degree, for-each, fold, find, sorted).
macro_rules! window_dir_methods {
    ($per_dir:ident) => {
        $per_dir!(
            Dir::Out,
            out_degree,
            for_each_out,
            fold_out,
            find_out,
            out_neighbors_sorted
        );
        $per_dir!(
            Dir::In,
            in_degree,
            for_each_in,
            fold_in,
            find_in,
            in_neighbors_sorted
        );
    };
}
pub(crate) use window_dir_methods;

/// The [`GraphView`] methods a window of in-lists answers as its view does: everything
/// but the in-lists, which each window reads from its buffer.
macro_rules! window_view_methods {
    () => {
        $crate::snapshot::stream::window_meta_methods!();
        #[inline]
        fn out_degree(&self, v: VertexId) -> usize {
            self.view.out_degree(v)
        }
        #[inline(always)]
        fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
            self.view.for_each_out(v, f)
        }
        #[inline(always)]
        fn fold_out<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
            self.view.fold_out(v, init, f)
        }
        #[inline(always)]
        fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
            self.view.find_out(v, f)
        }
        fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
            self.view.out_neighbors_sorted(v, out)
        }
    };
}
pub(crate) use window_view_methods;

impl GraphView for Window<'_, '_> {
    window_view_methods!();
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.view.in_degree(v)
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        self.inn(v).iter().copied().for_each(f)
    }
    #[inline]
    fn fold_in<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.inn(v).iter().copied().fold(init, f)
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.inn(v).iter().copied().any(f)
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        out.extend_from_slice(self.inn(v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows cover every indexed vertex once, in order, each within the limit unless it
    /// is a single vertex whose list alone passes it; empty lists ride along.
    #[test]
    fn windows_cover_the_vertices_within_the_limit() {
        let degrees = [3u64, 0, 0, 9, 1, 1, 1, 0, 4, 2];
        let offs: Vec<u64> = std::iter::once(0)
            .chain(degrees.iter().scan(0, |s, &d| {
                *s += d;
                Some(*s)
            }))
            .collect();
        for limit in 1..12 {
            let ws = windows(Starts::Ids(&offs), degrees.len(), limit * ID_BYTES);
            let covered: Vec<usize> = ws.iter().flat_map(|w| w.clone()).collect();
            assert_eq!(covered, (0..degrees.len()).collect::<Vec<_>>(), "{limit}");
            for w in &ws {
                let ids = offs[w.end] - offs[w.start];
                assert!(ids <= limit as u64 || w.len() == 1, "{w:?} holds {ids}");
            }
        }
        assert!(windows(Starts::Ids(&offs), 0, 4).is_empty());
    }
}
