//! Sweeps that stream a compacted run's in-lists from the medium, for graphs larger than
//! the memory left.
//!
//! PageRank reads every in-list once per pass. When those lists do not fit the DRAM
//! available (a memory cgroup below the store's size, or a store larger than the machine),
//! reading them through the run's mapping costs a page fault per page and fills the page
//! cache that the cap must then evict, every pass: 0.40 GB/s on this project's VM against
//! the disk's 1.6 GB/s with direct reads. So a streamed sweep reads the lists itself, in
//! file order, a **window** of vertices at a time, into one of two DRAM buffers, with
//! direct I/O ([`SweepFile`]): a reader thread fills the next window while the kernel's
//! threads work on the current one. What stays in DRAM is O(V): the kernel's vertex state
//! and the run's offsets (which are read through the mapping, 8 bytes per vertex), plus the
//! buffers.
//!
//! A compressed run streams the same way: its windows hold the vertices' packed streams,
//! decoded in the buffer as they would be in the mapping, so a pass reads as many fewer
//! bytes as compression saved.
//!
//! Chosen per snapshot by `Snapshot::plan_in_stream` ([`SweepReads`]). A read that fails
//! falls back to the mapping for that window, as does a single list longer than a window:
//! the bytes are the same, checked once by the run's checksums, and the kernel's result
//! does not depend on how they came.

use super::flat::{Adj, FlatView};
use super::packed::{PackedAdj, PackedView};
use super::{GraphView, Snapshot, SweepIn};
use crate::medium::{AlignedBuf, SweepFile, ALIGN};
use crate::run::{Dir, Run};
use crate::types::{VertexId, ID_BYTES};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Mutex};

/// How kernels read the lists they sweep pass after pass (PageRank's in-lists) from a
/// compacted, file-backed store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SweepReads {
    /// Streamed when the lists and the kernel's vertex state (about 48 B per vertex) do not
    /// fit the DRAM available (`MemAvailable`, or a memory cgroup's headroom when lower),
    /// else read through the mapping.
    #[default]
    Auto,
    /// Through the mapping, always.
    Mapped,
    /// Streamed whenever the medium can (a file-backed compacted run).
    Streamed,
}

/// Window sizes: a larger window costs DRAM twice (two buffers), a smaller one more reads
/// and more synchronisation per pass. 1 MiB reads already reach the disk's direct-read
/// bandwidth; 16-64 MiB windows keep a Kron24 pass at a few dozen windows.
const MIN_WINDOW: usize = 4 << 20;
const MAX_WINDOW: usize = 64 << 20;

/// Window buffers per stream: the one the kernel reads and the ones the reader fills
/// ahead of it. A third buffer (two windows ahead) measured -3 % on gap-pr on a
/// compressed Kron24 store under a 768 MiB cap and +2 % on a plain one (interleaved
/// rounds): noise, for a window more of DRAM.
const BUFFERS: usize = 2;

/// DRAM a sweeping kernel holds per vertex besides the lists, for [`SweepReads::Auto`]: the
/// README's memory model measured PageRank on a compacted store at 48-49 B per vertex
/// (scores, contributions, degrees, the output sorted by external id).
const STATE_PER_VERTEX: u64 = 48;

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
    buffers: Mutex<Vec<AlignedBuf>>,
}

/// What a snapshot's streamed sweeps read (see [`Snapshot::sweep_stream`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamStats {
    /// Whether the reads bypass the page cache (`O_DIRECT`); false where the file system
    /// refused that and plain reads filled the same buffers.
    pub direct: bool,
    /// Bytes read from the run's file so far.
    pub bytes_read: u64,
    /// Windows read through the mapping instead, because their read failed.
    pub fallbacks: u64,
    /// Bytes of lists a window holds at most.
    pub window: usize,
}

impl Snapshot {
    /// A kernel is about to sweep every in-list through [`GraphView::sweep_in`]: a
    /// compacted, file-backed run then opens them for streamed sweeps if the snapshot's
    /// [`SweepReads`] asks for it (by default, when they and the kernel's vertex state do
    /// not fit the DRAM available). Decided once per snapshot; other snapshots need nothing.
    pub(crate) fn plan_in_stream(&self) {
        self.in_stream
            .get_or_init(|| self.open_in_stream(self.sweep_reads));
    }

    /// Opens the in-lists for streamed sweeps if this snapshot is one compacted, file-backed
    /// run and `reads` asks for it (`Auto`: the lists and the kernel's state do not fit the
    /// DRAM available). `None` otherwise, and when the file cannot be opened: the mapping is
    /// read.
    fn open_in_stream(&self, reads: SweepReads) -> Option<InStream> {
        let [run] = &self.runs[..] else { return None };
        let section = in_lists(run)?;
        // What the pass must find in DRAM besides the lists: the kernel's vertex state.
        let need = section.len() as u64 + self.n as u64 * STATE_PER_VERTEX;
        let available = crate::medium::dram::available();
        let stream = match reads {
            SweepReads::Mapped => false,
            SweepReads::Streamed => true,
            SweepReads::Auto => available.is_some_and(|a| need > a),
        };
        if !stream || section.is_empty() {
            return None;
        }
        let window = (available.unwrap_or(0) / 16).clamp(MIN_WINDOW as u64, MAX_WINDOW as u64);
        InStream::open(run, section, window as usize)
    }

    /// Tests: streams the in-lists in windows of `window` bytes whatever the DRAM
    /// available; whether the medium could.
    #[cfg(test)]
    pub(crate) fn stream_in_windows(&self, window: usize) -> bool {
        let [run] = &self.runs[..] else { return false };
        let Some(section) = in_lists(run) else {
            return false;
        };
        self.in_stream
            .get_or_init(|| InStream::open(run, section, window))
            .is_some()
    }

    /// How this snapshot's sweeps read its in-lists: `None` through the mapping (the
    /// default in memory, and before a kernel that sweeps was prepared); else streamed, with
    /// what the streamed reads did so far.
    pub fn sweep_stream(&self) -> Option<StreamStats> {
        let st = self.in_stream.get()?.as_ref()?;
        Some(StreamStats {
            direct: st.file.is_direct(),
            bytes_read: st.file.bytes_read(),
            fallbacks: st.fallbacks.load(Relaxed),
            window: st.window,
        })
    }
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
    fn indexed(&self) -> usize {
        let n = match self {
            Starts::Ids(o) | Starts::Wide(o) => o.len(),
            Starts::Narrow(o) => o.len(),
        };
        n.saturating_sub(1)
    }

    /// Where vertex `v`'s list starts, in bytes (`v` up to the number indexed).
    #[inline]
    fn at(&self, v: usize) -> u64 {
        match self {
            Starts::Ids(o) => o[v] * ID_BYTES as u64,
            Starts::Narrow(o) => u64::from(o[v]),
            Starts::Wide(o) => o[v],
        }
    }
}

/// Run `run`'s in-direction lists as its file holds them, if it is dense and free of
/// tombstones: the neighbor ids of a plain run, the streams of a packed one.
fn in_lists(run: &Run) -> Option<&[u8]> {
    let d = run.dir(Dir::In);
    match &d.packed {
        Some(p) => PackedAdj::of(d).map(|_| p.bytes.get()),
        None => Adj::of(d).map(|a| bytemuck::cast_slice(a.ids())),
    }
}

impl InStream {
    /// `section`, one of `run`'s, opened for streaming in windows of `window` bytes.
    fn open(run: &Run, section: &[u8], window: usize) -> Option<InStream> {
        let at = run.file_offset(section)?;
        let file = run.file.as_ref()?.open_sweep().ok()??;
        Some(InStream {
            file,
            at,
            window: window.max(1),
            fallbacks: AtomicU64::new(0),
            buffers: Mutex::new(Vec::new()),
        })
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

    /// One pass of `s` over the lists that `starts` places, window by window: a reader
    /// thread fills one buffer while `s` works on the other. `visit` hands `s` a window's
    /// view, made from its lists' bytes (the first list first, at least
    /// [`crate::run::packed::SLACK`] readable bytes after the last) and its vertices.
    fn sweep<V, S, F>(&self, starts: Starts, view: &V, s: &mut S, visit: F)
    where
        V: GraphView,
        S: SweepIn,
        F: Fn(&[u8], Range<usize>, &mut S),
    {
        let n = view.num_vertices();
        let indexed = starts.indexed().min(n);
        let windows = windows(starts, indexed, self.window);
        // The channels live inside the scope: if `s` panics, dropping them ends the reader
        // (its `recv` or `send` fails), which the scope waits for.
        let kept = std::thread::scope(|scope| {
            let (full_tx, full_rx) = mpsc::sync_channel::<(Range<usize>, Read)>(1);
            let (free_tx, free_rx) = mpsc::channel::<AlignedBuf>();
            for buf in self.take_buffers() {
                let _ = free_tx.send(buf);
            }
            let reader = scope.spawn(move || {
                for vs in windows {
                    let Ok(buf) = free_rx.recv() else { break };
                    let read = self.read(starts, vs.clone(), buf);
                    if full_tx.send((vs, read)).is_err() {
                        break;
                    }
                }
                free_rx
            });
            for (vs, read) in full_rx {
                let buf = match read {
                    Read::Filled { buf, skip } => {
                        visit(&buf.bytes()[skip..], vs, s);
                        buf
                    }
                    Read::Mapped { buf, failed } => {
                        if failed {
                            self.fallbacks.fetch_add(1, Relaxed);
                        }
                        s.visit(vs, view);
                        buf
                    }
                };
                let _ = free_tx.send(buf);
            }
            reader.join().ok()
        });
        if let Some(free) = kept {
            self.keep_buffers(free.try_iter());
        }
        if indexed < n {
            // Vertices past the run's index have no lists: nothing to read.
            s.visit(indexed..n, view);
        }
    }

    /// The pass's buffers: the last pass's, or new ones.
    fn take_buffers(&self) -> Vec<AlignedBuf> {
        let mut bufs = std::mem::take(&mut *self.buffers.lock().unwrap_or_else(|p| p.into_inner()));
        bufs.resize_with(BUFFERS, || AlignedBuf::new(self.window + 2 * ALIGN));
        bufs
    }

    /// Keeps `bufs` for the next pass: zeroing new windows of 64 MiB each pass costs
    /// more than the pass's synchronisation.
    fn keep_buffers(&self, bufs: impl Iterator<Item = AlignedBuf>) {
        let mut kept = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
        kept.extend(bufs);
        kept.truncate(BUFFERS);
    }

    /// Reads the lists of vertices `vs` into `buf`, with a page to spare after them. A
    /// window longer than the buffer (one vertex's list past the window size) and a read
    /// that fails or comes back short are read through the mapping instead.
    fn read(&self, starts: Starts, vs: Range<usize>, mut buf: AlignedBuf) -> Read {
        let start = self.at + starts.at(vs.start);
        let end = self.at + starts.at(vs.end);
        let first = start - start % ALIGN as u64;
        let len = ((end - first) as usize).next_multiple_of(ALIGN);
        if buf.capacity() < len + ALIGN {
            return Read::Mapped { buf, failed: false };
        }
        match self.file.read_at(first, &mut buf.bytes_mut()[..len]) {
            Ok(got) if got as u64 >= end - first => Read::Filled {
                buf,
                skip: (start - first) as usize,
            },
            _ => Read::Mapped { buf, failed: true },
        }
    }
}

/// What the reader hands over for one window.
enum Read {
    /// The window's lists, in `buf` from byte `skip` on (the read starts at a page
    /// boundary).
    Filled { buf: AlignedBuf, skip: usize },
    /// The window is read through the mapping: its lists do not fit a buffer, or their read
    /// `failed`. The buffer goes back for the next window.
    Mapped { buf: AlignedBuf, failed: bool },
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
/// (its `view` field) does: everything but the in-lists, which each window reads from its
/// buffer.
macro_rules! window_view_methods {
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
        fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
            self.view.out_neighbors_sorted(v, out)
        }
    };
}
pub(super) use window_view_methods;

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
