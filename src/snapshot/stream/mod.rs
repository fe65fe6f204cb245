//! Sweeps that stream in-lists from the medium, for graphs larger than the memory left.
//!
//! PageRank reads every in-list once per pass. When those lists do not fit the DRAM
//! available (a memory cgroup below the store's size, or a store larger than the machine),
//! reading them through the runs' mappings costs a page fault per page and fills the page
//! cache that the cap must then evict, every pass: 0.40 GB/s on this project's VM against
//! the disk's 1.6 GB/s with direct reads. So a streamed sweep reads the lists itself, in
//! file order, a **window** of vertices at a time, into one of two DRAM buffers, with
//! direct I/O ([`SweepFile`](crate::medium::SweepFile)): a reader thread fills the next
//! window while the kernel's threads work on the current one ([`pipeline`]). What stays in
//! DRAM is O(V): the kernel's vertex state, what the view reads of other lists, plus the
//! buffers.
//!
//! Two shapes of snapshot stream:
//! - **one compacted run** ([`one`]): a window is one read of the run's lists, plain ids or
//!   compressed streams, read by the kernel in the buffer as it would read the mapping;
//! - **several runs** ([`runs`]), a live store: a window is one read per run of the part
//!   of its index and lists that the window's vertices own, and the kernel's threads first
//!   merge those parts into one CSR of the window's live lists (newer runs' tombstones
//!   applied, compressed streams decoded), then sweep it as they would a compacted run.
//!
//! Chosen per snapshot by `Snapshot::plan_streams` ([`SweepReads`]). A read that fails
//! falls back to the mapping for that window, as does a window that does not fit a buffer
//! (one vertex's lists past the window size): the bytes are the same, checked once by the
//! run's checksums, and the kernel's result does not depend on how they came.

mod copy;
mod kept;
mod merge;
mod one;
mod runs;

pub(crate) use copy::{merge_lists, RunsCopy};
pub(crate) use one::{
    window_dir_methods, window_meta_methods, window_view_methods, InStream, Starts,
};
pub(crate) use runs::{RunsStream, Source};

use super::{layered, Snapshot};
use crate::medium::{AlignedBuf, SweepFile, ALIGN};
use crate::run::Dir;
use std::ops::Range;
use std::sync::{mpsc, Mutex};

/// How kernels read the lists they sweep pass after pass (PageRank's in-lists) from a
/// file-backed store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SweepReads {
    /// Streamed when the lists and the kernel's vertex state (about 48 B per vertex) do not
    /// fit the DRAM available (`MemAvailable`, or a memory cgroup's headroom when lower),
    /// else read through the mapping.
    #[default]
    Auto,
    /// Through the mapping, always.
    Mapped,
    /// Streamed whenever the medium can (file-backed runs).
    Streamed,
}

/// Window sizes: a larger window costs DRAM twice (two buffers), a smaller one more reads
/// and more synchronisation per pass. 1 MiB reads already reach the disk's direct-read
/// bandwidth; 16-64 MiB windows keep a Kron24 pass at a few dozen windows.
const MIN_WINDOW: usize = 4 << 20;
const MAX_WINDOW: usize = 64 << 20;

/// Window size when runs are merged from their mappings: nothing is read, so only the
/// merged window's size matters (a compressed window decodes to about twice its bytes).
const IN_PLACE_WINDOW: usize = 16 << 20;

/// Window buffers per stream: the one the kernel reads and the ones the reader fills
/// ahead of it. A third buffer (two windows ahead) measured -3 % on gap-pr on a
/// compressed Kron24 store under a 768 MiB cap and +2 % on a plain one (interleaved
/// rounds): noise, for a window more of DRAM.
const BUFFERS: usize = 2;

/// DRAM a sweeping kernel holds per vertex besides the lists, for [`SweepReads::Auto`]: the
/// README's memory model measured PageRank on a compacted store at 48-49 B per vertex
/// (scores, contributions, degrees, the output sorted by external id).
const STATE_PER_VERTEX: u64 = 48;

/// When several runs that fit in DRAM are merged window by window from their mappings
/// for a kernel's sweeps, rather than read where they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MergeInPlace {
    /// Whenever no layered view reads them (compressed runs, or more than it takes): the
    /// kernel reads every list each pass (PageRank), and the general path searches every
    /// run per vertex and pass.
    Unlayered,
    /// Only beyond the runs a layered view takes: the kernel reads a few ids of most
    /// lists (Afforest's sampling), so a merge, which decodes and copies every list, pays
    /// only where the general path searches many runs per vertex. Kron24 in DRAM: 5
    /// compressed runs 0.55 s (general path) against 1.7 s merged; 47 plain runs 1.8 s
    /// against 0.8 s.
    ManyRuns,
    /// Never: the kernel sweeps only in some of its steps and reads a few ids of most
    /// lists (BFS's bottom-up steps), so in DRAM the runs are read where they are.
    Never,
}

/// A snapshot's in-lists opened for streamed sweeps.
pub(crate) enum Streamed {
    /// Its one compacted run's.
    One(InStream),
    /// Its several runs'.
    Runs(RunsStream),
}

impl Streamed {
    /// The stream of a one-run snapshot.
    pub(crate) fn one(&self) -> Option<&InStream> {
        match self {
            Streamed::One(s) => Some(s),
            Streamed::Runs(_) => None,
        }
    }

    /// The stream of a several-run snapshot.
    pub(crate) fn runs(&self) -> Option<&RunsStream> {
        match self {
            Streamed::Runs(s) => Some(s),
            Streamed::One(_) => None,
        }
    }
}

/// What a snapshot's streamed sweeps read (see [`Snapshot::sweep_stream`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamStats {
    /// Whether the reads bypass the page cache (`O_DIRECT`); false where the file system
    /// refused that and plain reads filled the same buffers.
    pub direct: bool,
    /// Bytes read from the runs' files so far.
    pub bytes_read: u64,
    /// Windows read through the mapping instead, because their read failed.
    pub fallbacks: u64,
    /// Bytes a window holds at most.
    pub window: usize,
    /// Bytes of windows kept in DRAM after their first pass, which later passes neither
    /// read nor merge (several runs' streams, within the DRAM left beside the kernel).
    pub kept: u64,
    /// Of `kept`, the bytes of windows kept packed (compressed), which hold more of them
    /// where the DRAM left would not hold them all as merged.
    pub kept_packed: u64,
}

/// The window buffers of one stream, kept between passes: zeroing new windows of 64 MiB
/// each pass costs more than the pass's synchronisation.
pub(super) struct Buffers {
    size: usize,
    kept: Mutex<Vec<AlignedBuf>>,
}

impl Buffers {
    /// Buffers of `size` usable bytes each, made on the first pass.
    pub(super) fn new(size: usize) -> Buffers {
        Buffers {
            size,
            kept: Mutex::new(Vec::new()),
        }
    }

    /// The pass's buffers: the last pass's, or new ones.
    fn take(&self) -> Vec<AlignedBuf> {
        let mut bufs = std::mem::take(&mut *self.kept.lock().unwrap_or_else(|p| p.into_inner()));
        bufs.resize_with(BUFFERS, || AlignedBuf::new(self.size));
        bufs
    }

    /// Keeps `bufs` for the next pass.
    fn keep(&self, bufs: impl Iterator<Item = AlignedBuf>) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.extend(bufs);
        kept.truncate(BUFFERS);
    }
}

/// Carries a filled buffer from the reader thread to the pass, and back.
pub(super) trait Filled: Send {
    /// The buffer, once the pass is done with it.
    fn into_buf(self) -> AlignedBuf;
}

/// One pass over `jobs` (windows, in file order), double-buffered: a reader thread runs
/// `read` on each job with a free buffer of `buffers` while `consume` works on the one
/// read before it, on the calling thread (whose kernel work fans out to the thread pool).
pub(super) fn pipeline<J, R, F, C>(jobs: Vec<J>, buffers: &Buffers, read: F, mut consume: C)
where
    J: Send,
    R: Filled,
    F: Fn(J, AlignedBuf) -> R + Sync,
    C: FnMut(&R),
{
    // The channels live inside the scope: if `consume` panics, dropping them ends the
    // reader (its `recv` or `send` fails), which the scope waits for.
    let kept = std::thread::scope(|scope| {
        let (full_tx, full_rx) = mpsc::sync_channel::<R>(1);
        let (free_tx, free_rx) = mpsc::channel::<AlignedBuf>();
        for buf in buffers.take() {
            let _ = free_tx.send(buf);
        }
        let read = &read;
        let reader = scope.spawn(move || {
            for job in jobs {
                let Ok(buf) = free_rx.recv() else { break };
                if full_tx.send(read(job, buf)).is_err() {
                    break;
                }
            }
            free_rx
        });
        for filled in full_rx {
            consume(&filled);
            let _ = free_tx.send(filled.into_buf());
        }
        reader.join().ok()
    });
    if let Some(free) = kept {
        buffers.keep(free.try_iter());
    }
}

/// Reads in flight at once while a window is read: one at a time, each waits out the
/// device's latency. A window of Kron24's 47 runs is about 140 reads, many small, and a
/// pass read 1.0 GB/s of what `dd` reads at 1.1-1.6; four at a time cut the pass by 10 %.
const READERS: usize = 4;

/// The pieces a one-section window is read in, so that [`READERS`] of them are in flight.
pub(super) const PIECE: usize = 4 << 20;

/// One read of a window: from `first` (a multiple of [`ALIGN`]) in `file`, `len` bytes (a
/// multiple too) into the window's buffer at `pos`, of which the first `need` must come
/// back (the rest is past the end of the file, or of what the window wants).
pub(super) struct SectionRead<'f> {
    file: &'f SweepFile,
    first: u64,
    pub(super) len: usize,
    pub(super) pos: usize,
    need: usize,
}

impl<'f> SectionRead<'f> {
    /// The read of `range` of `file` into the buffer from `pos` (a multiple of [`ALIGN`]),
    /// from the page boundary below it; and where the range lands in the buffer.
    pub(super) fn place(
        file: &'f SweepFile,
        range: Range<u64>,
        pos: usize,
    ) -> (SectionRead<'f>, Range<usize>) {
        let first = range.start - range.start % ALIGN as u64;
        let need = (range.end - first) as usize;
        let skip = (range.start - first) as usize;
        let r = SectionRead {
            file,
            first,
            len: need.next_multiple_of(ALIGN),
            pos,
            need,
        };
        (r, pos + skip..pos + need)
    }

    /// The same read in pieces of at most `piece` bytes (a multiple of [`ALIGN`]).
    pub(super) fn split(self, piece: usize) -> Vec<SectionRead<'f>> {
        (0..self.len)
            .step_by(piece)
            .map(|k| SectionRead {
                file: self.file,
                first: self.first + k as u64,
                len: piece.min(self.len - k),
                pos: self.pos + k,
                need: self.need.saturating_sub(k).min(piece),
            })
            .collect()
    }
}

/// Performs `reads` (in buffer order, disjoint, within it) into `buf`, [`READERS`] at a
/// time; whether every one read what it needs.
pub(super) fn read_all(reads: &[SectionRead], buf: &mut AlignedBuf) -> bool {
    let mut rest = buf.bytes_mut();
    let mut cut = 0;
    let mut jobs: Vec<Vec<(&SectionRead, &mut [u8])>> = (0..READERS).map(|_| Vec::new()).collect();
    for (k, r) in reads.iter().enumerate() {
        let (_, tail) = rest.split_at_mut(r.pos - cut);
        let (mine, tail) = tail.split_at_mut(r.len);
        jobs[k % READERS].push((r, mine));
        (rest, cut) = (tail, r.pos + r.len);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (jobs.into_iter())
            .filter(|job| !job.is_empty())
            .map(|job| {
                scope.spawn(move || {
                    (job.into_iter())
                        .all(|(r, dst)| r.file.read_at(r.first, dst).is_ok_and(|got| got >= r.need))
                })
            })
            .collect();
        handles.into_iter().all(|h| h.join().unwrap_or(false))
    })
}

/// The window size for streams when `available` bytes of DRAM are left: a sixteenth of it,
/// within [`MIN_WINDOW`]..=[`MAX_WINDOW`].
fn window_for(available: Option<u64>) -> usize {
    (available.unwrap_or(0) / 16).clamp(MIN_WINDOW as u64, MAX_WINDOW as u64) as usize
}

impl Snapshot {
    /// A kernel is about to sweep every list of the directions `sweeps` pass after pass
    /// ([`GraphView::sweep_in`](super::GraphView::sweep_in),
    /// [`GraphView::sweep_out`](super::GraphView::sweep_out)): a file-backed snapshot then
    /// opens them for streamed sweeps if its [`SweepReads`] asks for it (by default, when
    /// they and the kernel's vertex state do not fit the DRAM available), one compacted
    /// run's in-lists or several runs' lists of each direction; streams of two directions
    /// share the DRAM left. Several runs that fit are merged from their mappings as
    /// `merge` says. Decided once per snapshot and direction; other snapshots need nothing.
    pub(crate) fn plan_streams(&self, sweeps: &[Dir], merge: MergeInPlace) {
        if self.point.is_some() {
            // A point's mask reads its run through the mapping.
            return;
        }
        let share = sweeps.len().max(1) as u64;
        for &dir in sweeps {
            match dir {
                Dir::In => {
                    self.stream.get_or_build(|| self.open_in(share, merge));
                }
                Dir::Out => {
                    (self.stream_out).get_or_build(|| self.open_runs(Dir::Out, share, merge));
                }
            }
        }
    }

    /// The in-lists opened for sweeps (see [`Snapshot::plan_streams`]); `None` when they
    /// are read through the mappings.
    fn open_in(&self, share: u64, merge: MergeInPlace) -> Option<Streamed> {
        match &self.runs[..] {
            [] => None,
            [run] => {
                let lists = one::in_lists(run)?.len() as u64;
                let window = self.stream_window(lists, share)??;
                InStream::open(run, window).map(Streamed::One)
            }
            _ => self.open_runs(Dir::In, share, merge).map(Streamed::Runs),
        }
    }

    /// Whether sweeps over `lists` bytes of lists stream them, as the snapshot's
    /// [`SweepReads`] asks (`Auto`: when they and the kernel's state do not fit the DRAM
    /// available): `Some(Some(window size))` if so (`share` streams sharing the DRAM),
    /// `Some(None)` if they are read in DRAM, `None` if there is nothing to sweep.
    fn stream_window(&self, lists: u64, share: u64) -> Option<Option<usize>> {
        if lists == 0 {
            return None;
        }
        // What the pass must find in DRAM besides the lists: the kernel's vertex state.
        let need = lists + self.n as u64 * STATE_PER_VERTEX;
        let available = crate::medium::dram::available();
        let stream = match self.sweep_reads {
            SweepReads::Mapped => false,
            SweepReads::Streamed => true,
            SweepReads::Auto => available.is_some_and(|a| need > a),
        };
        Some(stream.then(|| window_for(available.map(|a| a / share))))
    }

    /// Several runs' lists of `dir`: streamed if [`Snapshot::stream_window`] says so, else,
    /// for `Auto` sweeps, merged window by window from their mappings where `merge` asks
    /// for it; `None` for fewer than two runs, and where the lists are read in place.
    fn open_runs(&self, dir: Dir, share: u64, merge: MergeInPlace) -> Option<RunsStream> {
        if self.runs.len() < 2 {
            return None;
        }
        let lists = runs::list_bytes(&self.runs, dir)?;
        if let Some(w) = self.stream_window(lists, share)? {
            return RunsStream::open(&self.runs, self.n, w, Source::Files, dir);
        }
        let wanted = match merge {
            MergeInPlace::Unlayered => !layered::layers(&self.runs),
            MergeInPlace::ManyRuns => self.runs.len() > layered::MAX_RUNS,
            MergeInPlace::Never => false,
        };
        if self.sweep_reads != SweepReads::Auto || !wanted {
            return None;
        }
        RunsStream::open(&self.runs, self.n, IN_PLACE_WINDOW, Source::Mappings, dir)
    }

    /// A kernel will sweep the lists of `dirs` pass after pass: several runs' streams from
    /// the files keep windows they merged in the DRAM left beside the kernel's state and
    /// the streams' buffers (three quarters of it, the rest left to the page cache the
    /// kernel's other reads need), shared by the directions streamed, within the copy
    /// budget when the store sets one. One compacted run's stream keeps none: its passes
    /// are bound by the kernel, not the reads (Kron22 under a 384 MiB cap, 20 passes:
    /// keeping 100 MB of windows read 37 % fewer bytes in the same time).
    pub(crate) fn keep_streamed_windows(&self, dirs: &[Dir]) {
        let streams: Vec<&RunsStream> = (dirs.iter())
            .filter_map(|d| match d {
                Dir::In => self.runs_stream(),
                Dir::Out => self.runs_stream_out(),
            })
            .filter(|r| r.source() == runs::Source::Files)
            .collect();
        if streams.is_empty() {
            return;
        }
        let windows: u64 = (streams.iter())
            .map(|r| (BUFFERS as u64 + 1) * r.stats().window as u64)
            .sum();
        let state = self.n as u64 * STATE_PER_VERTEX;
        let available = crate::medium::dram::available().unwrap_or(0);
        let mut budget = available.saturating_sub(state + windows) / 4 * 3;
        if let Some(cap) = self.copy_budget {
            budget = budget.min(cap as u64);
        }
        for r in &streams {
            r.keep_within(budget / streams.len() as u64);
        }
    }

    /// The snapshot's in-lists opened for streaming in windows of `window` bytes.
    #[cfg(test)]
    fn open_stream_in(&self, window: usize) -> Option<Streamed> {
        match &self.runs[..] {
            [run] => InStream::open(run, window).map(Streamed::One),
            runs => {
                RunsStream::open(runs, self.n, window, Source::Files, Dir::In).map(Streamed::Runs)
            }
        }
    }

    /// Tests: streams the in-lists in windows of `window` bytes whatever the DRAM
    /// available; whether the medium could.
    #[cfg(test)]
    pub(crate) fn stream_in_windows(&self, window: usize) -> bool {
        self.stream
            .get_or_build(|| self.open_stream_in(window))
            .is_some_and(Option::is_some)
    }

    /// Tests: streams the out-lists of several runs in windows of `window` bytes whatever
    /// the DRAM available; whether the medium could.
    #[cfg(test)]
    pub(crate) fn stream_out_in_windows(&self, window: usize) -> bool {
        self.stream_out
            .get_or_build(|| RunsStream::open(&self.runs, self.n, window, Source::Files, Dir::Out))
            .is_some_and(Option::is_some)
    }

    /// Whether another caller is deciding this snapshot's streams now: until it has, no
    /// kernel copies the lists (they may stream because they do not fit the DRAM).
    pub(crate) fn streams_pending(&self) -> bool {
        self.stream.building() || self.stream_out.building()
    }

    /// The several-run stream of in-lists, when one was opened.
    pub(crate) fn runs_stream(&self) -> Option<&RunsStream> {
        self.stream.get()?.as_ref()?.runs()
    }

    /// The several-run stream of out-lists, when one was opened.
    pub(crate) fn runs_stream_out(&self) -> Option<&RunsStream> {
        self.stream_out.get()?.as_ref()
    }

    /// How this snapshot's sweeps read its in-lists: `None` through the mappings (the
    /// default in memory, and before a kernel that sweeps was prepared); else streamed, with
    /// what the streamed reads did so far.
    pub fn sweep_stream(&self) -> Option<StreamStats> {
        let files = |r: &&RunsStream| r.source() == Source::Files;
        let inn = match self.stream.get().and_then(Option::as_ref) {
            Some(Streamed::One(s)) => Some(s.stats()),
            Some(Streamed::Runs(r)) => Some(r).filter(files).map(|r| r.stats()),
            None => None,
        };
        let out = self.runs_stream_out().filter(files).map(|r| r.stats());
        match (inn, out) {
            (Some(a), Some(b)) => Some(StreamStats {
                direct: a.direct && b.direct,
                bytes_read: a.bytes_read + b.bytes_read,
                fallbacks: a.fallbacks + b.fallbacks,
                window: a.window.max(b.window),
                kept: a.kept + b.kept,
                kept_packed: a.kept_packed + b.kept_packed,
            }),
            (a, b) => a.or(b),
        }
    }
}
