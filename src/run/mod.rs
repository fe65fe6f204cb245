//! Runs: immutable CSR segments, the on-medium form of the graph.
//!
//! A run holds, per direction, each vertex's neighbors sorted ascending and the tombstones
//! that cancel neighbors held by older runs. Runs are *resolved*: a run adds only edges that
//! did not exist in the runs before it and tombstones only edges that did, so a vertex's
//! degree is a plain sum over runs and merging never needs to look outside its inputs.
//!
//! - [`format`]: the byte layout and header.
//! - [`build`]: assembling a run from per-vertex output.
//! - [`file`]: writing a run to a medium and opening (and verifying) one.
//! - [`merge`]: compaction of consecutive runs.
//! - [`packed`]: the compressed form of a direction's neighbor lists.

pub mod build;
pub mod file;
pub mod format;
pub mod merge;
mod options;
pub mod packed;

use crate::medium::{Mapped, Medium};
use crate::types::{VertexId, ID_BYTES};
pub use format::RunHeader;
pub use options::{Compression, Verify};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Which adjacency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Out-neighbors (edge sources index them).
    Out,
    /// In-neighbors (edge destinations index them).
    In,
}

/// A typed, immutable section: owned in DRAM, or a view into a mapped file.
///
/// The slice is resolved once, at construction, so [`Sec::get`] on the hot paths of
/// kernels is a plain pointer and length, with no per-call checks.
pub struct Sec<T> {
    ptr: *const T,
    len: usize,
    _owner: Owner<T>,
}

enum Owner<T> {
    Owned(#[allow(dead_code)] Vec<T>),
    Anon(#[allow(dead_code)] crate::medium::dram::AnonArray<T>),
    Mapped(#[allow(dead_code)] Mapped),
}

// SAFETY: a Sec is immutable after construction and owns (or shares, through the
// reference-counted Mapped) the memory its pointer refers to; sharing it across threads is
// sharing `&[T]`, which is safe for `T: Sync`.
unsafe impl<T: Sync> Send for Sec<T> {}
// SAFETY: as above: only shared, read-only access is ever handed out.
unsafe impl<T: Sync> Sync for Sec<T> {}

impl<T: bytemuck::Pod> Sec<T> {
    /// A section that owns `v`.
    pub fn owned(v: Vec<T>) -> Self {
        Sec {
            ptr: v.as_ptr(),
            len: v.len(),
            _owner: Owner::Owned(v),
        }
    }

    /// A section that owns the DRAM array `a` (one mapping, its pointer stable however the
    /// section moves).
    pub(crate) fn anon(a: crate::medium::dram::AnonArray<T>) -> Self {
        Sec {
            ptr: a.as_ptr(),
            len: a.len(),
            _owner: Owner::Anon(a),
        }
    }

    /// `len` elements at byte offset `off` of a mapped file. Panics if that range is not
    /// inside the mapping or misaligned: callers check layouts against file sizes first.
    pub fn mapped(m: Mapped, off: usize, len: usize) -> Self {
        let s: &[T] = bytemuck::cast_slice(&m.bytes()[off..off + len * std::mem::size_of::<T>()]);
        Sec {
            ptr: s.as_ptr(),
            len: s.len(),
            _owner: Owner::Mapped(m),
        }
    }

    /// Another handle on the same elements of a mapped section (the mapping is shared,
    /// nothing is copied); `None` for a section in DRAM, which has one owner.
    pub(crate) fn shared(&self) -> Option<Self> {
        match &self._owner {
            Owner::Mapped(m) => Some(Sec {
                ptr: self.ptr,
                len: self.len,
                _owner: Owner::Mapped(m.clone()),
            }),
            Owner::Owned(_) | Owner::Anon(_) => None,
        }
    }

    /// The elements.
    #[inline]
    pub fn get(&self) -> &[T] {
        // SAFETY: `ptr`/`len` were taken from a slice of memory that `_owner` keeps alive
        // and never changes (a Vec that is never touched again, or a read-only mapping that
        // lives as long as its Mapped handle); alignment was checked at construction.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: bytemuck::Pod> Default for Sec<T> {
    fn default() -> Self {
        Sec::owned(Vec::new())
    }
}

/// The byte index of a packed direction: where each indexed vertex's stream starts, plus
/// the end. 32-bit while the streams fit in 4 GiB.
pub enum PackedIndex {
    /// Positions below 2^32.
    Narrow(Sec<u32>),
    /// Any positions.
    Wide(Sec<u64>),
}

impl PackedIndex {
    /// Number of entries (indexed vertices plus one).
    pub fn len(&self) -> usize {
        match self {
            PackedIndex::Narrow(s) => s.get().len(),
            PackedIndex::Wide(s) => s.get().len(),
        }
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `i`.
    #[inline]
    pub fn at(&self, i: usize) -> usize {
        match self {
            PackedIndex::Narrow(s) => s.get()[i] as usize,
            PackedIndex::Wide(s) => s.get()[i] as usize,
        }
    }
}

/// A direction whose neighbor lists are compressed ([`packed`]).
pub struct Packed {
    /// The vertices' streams, then [`packed::SLACK`] zero bytes.
    pub bytes: Sec<u8>,
    /// Stream positions.
    pub index: PackedIndex,
    /// Whether streams carry the position of their weights.
    pub weighted: bool,
    /// Set once every stream passed [`packed::check_stream`] (or this process wrote them):
    /// decoding reads without bounds checks and relies on it.
    checked: AtomicBool,
}

impl Packed {
    /// A packed direction; `checked` says its streams are known good.
    pub fn new(bytes: Sec<u8>, index: PackedIndex, weighted: bool, checked: bool) -> Packed {
        Packed {
            bytes,
            index,
            weighted,
            checked: AtomicBool::new(checked),
        }
    }

    /// Whether the streams were checked.
    pub fn is_checked(&self) -> bool {
        self.checked.load(Ordering::Acquire)
    }

    /// The head of indexed vertex `i`'s stream (`None` when it holds no neighbors).
    #[inline]
    pub fn head(&self, i: usize) -> Option<packed::Head> {
        debug_assert!(
            self.is_checked(),
            "a packed direction read before its check"
        );
        let b = self.bytes.get();
        packed::head(b, self.index.at(i), self.index.at(i + 1), self.weighted)
    }

    /// Calls `f` on the neighbors of indexed vertex `i`, ascending, until it returns true.
    #[inline]
    pub fn find_at<F: FnMut(VertexId) -> bool>(&self, i: usize, f: F) -> bool {
        match self.head(i) {
            // SAFETY: the streams were checked (`checked`, asserted in `head`) and `h` is
            // the head of one of them.
            Some(h) => unsafe { packed::find(self.bytes.get(), h, f) },
            None => false,
        }
    }
}

/// One direction of a run: a vertex index, sorted neighbors, tombstones.
///
/// Neighbor lists are plain (`offs` and `adds`) or, in compressed runs, packed (`packed`,
/// with `offs` and `adds` empty). Readers that do not care which go through
/// [`DirData::degree_at`], [`DirData::find_at`] and [`DirData::adds_into`].
#[derive(Default)]
pub struct DirData {
    /// Whether index `i` is vertex `i` (else `vids` names the indexed vertices).
    pub dense: bool,
    /// Sorted ids of the indexed vertices (sparse only).
    pub vids: Sec<VertexId>,
    /// Neighbor offsets, one more than indexed vertices.
    pub offs: Sec<u64>,
    /// Neighbor ids, sorted per vertex.
    pub adds: Sec<VertexId>,
    /// Weights parallel to `adds` (empty in unweighted stores).
    pub wts: Sec<f64>,
    /// Tombstone offsets (empty when the run has no tombstones).
    pub toffs: Sec<u64>,
    /// Tombstoned neighbor ids, sorted per vertex.
    pub tombs: Sec<VertexId>,
    /// Number of neighbor ids (kept apart from `adds`, which is empty while a merge
    /// streams them to the file).
    pub n_adds: u64,
    /// Self loops, added less tombstoned (the same in either direction); `None` where
    /// nobody counted them (runs written before the count, runs a history view built).
    pub loops: Option<i64>,
    /// The compressed neighbor lists of a packed direction.
    pub packed: Option<Packed>,
    /// Where each stretch of ids starts in a sparse index, once
    /// [`DirData::build_directory`] made them.
    pub(crate) directory: OnceLock<IndexDirectory>,
}

/// A directory of a sparse index: the ids from `base` cut into stretches of `2^shift`,
/// and for each stretch the position of its first indexed vertex (`first` has one more
/// entry, the index's length). A lookup reads two adjacent entries, then searches one
/// stretch of [`PER_STRETCH`] / 2 to [`PER_STRETCH`] ids on average (two cache lines at most), where a
/// search of the whole index (2 M ids in a run of Kron24 at a 64 MiB budget) misses the
/// cache at most of its 21 steps. Indexes whose ids crowd in places have longer stretches
/// there: a lookup is never worse than a search of one stretch.
pub(crate) struct IndexDirectory {
    base: VertexId,
    shift: u32,
    first: Box<[u64]>,
}

/// Indexed vertices per stretch of [`IndexDirectory`], on average at most (half that at least).
const PER_STRETCH: u64 = 32;

impl IndexDirectory {
    /// The directory of `vids` (sorted, at least one).
    fn new(vids: &[VertexId]) -> IndexDirectory {
        let base = vids[0];
        let span = (vids[vids.len() - 1] - base) as u64 + 1;
        let per = (span * PER_STRETCH).div_ceil(vids.len() as u64);
        let shift = per.next_power_of_two().trailing_zeros().saturating_sub(1);
        let stretches = (span >> shift) as usize + 1;
        let mut first = Vec::with_capacity(stretches + 1);
        let mut i = 0;
        for j in 0..stretches as u64 {
            let start = base as u64 + (j << shift);
            while i < vids.len() && (vids[i] as u64) < start {
                i += 1;
            }
            first.push(i as u64);
        }
        first.push(vids.len() as u64);
        IndexDirectory {
            base,
            shift,
            first: first.into_boxed_slice(),
        }
    }

    /// The positions of the stretch that can hold `v`.
    #[inline]
    fn stretch(&self, v: VertexId) -> Option<std::ops::Range<usize>> {
        let j = ((v.checked_sub(self.base)?) as u64 >> self.shift) as usize;
        let end = *self.first.get(j + 1)?;
        Some(self.first[j] as usize..end as usize)
    }
}

impl DirData {
    /// Index of `v` in this direction, if it holds anything for it.
    #[inline]
    pub fn index_of(&self, v: VertexId) -> Option<usize> {
        if self.dense {
            let n = self.n_index();
            return ((v as usize) < n).then_some(v as usize);
        }
        let vids = self.vids.get();
        let Some(dir) = self.directory.get() else {
            return vids.binary_search(&v).ok();
        };
        let r = dir.stretch(v)?;
        let lo = r.start;
        vids[r].binary_search(&v).ok().map(|i| lo + i)
    }

    /// Makes [`DirData::index_of`] read a directory first, in a sparse index long enough for
    /// that to pay: for readers that look up vertices at random many times (a kernel on
    /// the general path), not for a point lookup, which would read the whole index to
    /// spare itself a search. 8 to 16 B per [`PER_STRETCH`] indexed vertices.
    pub(crate) fn build_directory(&self) {
        let vids = self.vids.get();
        if !self.dense && vids.len() as u64 >= PER_STRETCH * PER_STRETCH {
            self.directory.get_or_init(|| IndexDirectory::new(vids));
        }
    }

    /// Index of `v`, searching sparse indexes forward from position `from` by galloping.
    /// Returns where to search from next, and the index if `v` is held. Lookups in
    /// increasing vertex order then cost O(log distance) each and touch memory near the
    /// last one, where [`DirData::index_of`] binary-searches the whole index every time.
    #[inline]
    pub fn seek(&self, from: usize, v: VertexId) -> (usize, Option<usize>) {
        if self.dense {
            return (from, self.index_of(v));
        }
        let (pos, found) = crate::types::gallop(self.vids.get(), from, v);
        (pos, found.then_some(pos))
    }

    /// Number of indexed vertices.
    #[inline]
    pub fn n_index(&self) -> usize {
        match &self.packed {
            Some(p) => p.index.len().saturating_sub(1),
            None => self.offs.get().len().saturating_sub(1),
        }
    }

    /// Whether the neighbor lists are compressed.
    #[inline]
    pub fn is_packed(&self) -> bool {
        self.packed.is_some()
    }

    /// Number of neighbors at index `i`.
    #[inline]
    pub fn degree_at(&self, i: usize) -> usize {
        match &self.packed {
            Some(p) => p.head(i).map_or(0, |h| h.degree),
            None => {
                let o = self.offs.get();
                (o[i + 1] - o[i]) as usize
            }
        }
    }

    /// Calls `f` on the neighbors at index `i`, ascending, until it returns true; returns
    /// whether it did.
    #[inline]
    pub fn find_at<F: FnMut(VertexId) -> bool>(&self, i: usize, mut f: F) -> bool {
        match &self.packed {
            Some(p) => p.find_at(i, f),
            None => self.adds_at(i).iter().any(|&x| f(x)),
        }
    }

    /// The neighbors at index `i`: borrowed from a plain run, decoded into `buf` from a
    /// packed one.
    #[inline]
    pub fn adds_into<'a>(&'a self, i: usize, buf: &'a mut Vec<VertexId>) -> &'a [VertexId] {
        match &self.packed {
            Some(p) => {
                buf.clear();
                if let Some(h) = p.head(i) {
                    // SAFETY: as in `Packed::find_at`.
                    unsafe { packed::decode_into(p.bytes.get(), h, buf) };
                }
                buf
            }
            None => self.adds_at(i),
        }
    }

    /// The position of `x` among the neighbors at index `i`, if it is one: a binary search
    /// (plain), or a skip-table search and one chunk decoded (packed).
    #[inline]
    pub fn position_at(&self, i: usize, x: VertexId) -> Option<usize> {
        match &self.packed {
            Some(p) => {
                let h = p.head(i)?;
                // SAFETY: as in `Packed::find_at`.
                unsafe { packed::position(p.bytes.get(), h, x) }
            }
            None => self.adds_at(i).binary_search(&x).ok(),
        }
    }

    /// Vertex id at index `i`.
    #[inline]
    pub fn vid_at(&self, i: usize) -> VertexId {
        if self.dense {
            i as VertexId
        } else {
            self.vids.get()[i]
        }
    }

    /// Neighbors at index `i` of a plain direction (see [`DirData::adds_into`] for either).
    #[inline]
    pub fn adds_at(&self, i: usize) -> &[VertexId] {
        debug_assert!(self.packed.is_none(), "adds_at on a packed direction");
        let o = self.offs.get();
        &self.adds.get()[o[i] as usize..o[i + 1] as usize]
    }

    /// Weights of the neighbors at index `i` (empty when unweighted).
    #[inline]
    pub fn wts_at(&self, i: usize) -> &[f64] {
        let w = self.wts.get();
        if w.is_empty() {
            return &[];
        }
        if let Some(p) = &self.packed {
            return p
                .head(i)
                .map_or(&[], |h| &w[h.eoff as usize..h.eoff as usize + h.degree]);
        }
        let o = self.offs.get();
        &w[o[i] as usize..o[i + 1] as usize]
    }

    /// Tombstones at index `i`.
    #[inline]
    pub fn tombs_at(&self, i: usize) -> &[VertexId] {
        let t = self.toffs.get();
        if t.is_empty() {
            return &[];
        }
        &self.tombs.get()[t[i] as usize..t[i + 1] as usize]
    }

    /// Neighbors this run adds for `v` (plain directions).
    #[inline]
    pub fn adds(&self, v: VertexId) -> &[VertexId] {
        self.index_of(v).map_or(&[], |i| self.adds_at(i))
    }

    /// Tombstones this run holds for `v`.
    #[inline]
    pub fn tombs(&self, v: VertexId) -> &[VertexId] {
        if self.toffs.get().is_empty() {
            return &[];
        }
        self.index_of(v).map_or(&[], |i| self.tombs_at(i))
    }

    /// Index range of the vertices in `lo..hi`.
    pub fn index_range(&self, lo: VertexId, hi: VertexId) -> std::ops::Range<usize> {
        if self.dense {
            let n = self.n_index();
            (lo as usize).min(n)..(hi as usize).min(n)
        } else {
            let v = self.vids.get();
            v.partition_point(|&x| x < lo)..v.partition_point(|&x| x < hi)
        }
    }

    /// About how many neighbor ids and tombstones indexes `r` hold, for sizing work: exact
    /// for plain lists; for packed ones, the range's share of the stream bytes at the
    /// run's average bytes per id, doubled, because hubs (dense lists, narrow gaps) pack
    /// tighter than the average and a merge must not under-count them.
    pub fn load(&self, r: std::ops::Range<usize>) -> u64 {
        if r.is_empty() {
            return 0;
        }
        let t = self.toffs.get();
        let tombs = if t.is_empty() {
            0
        } else {
            t[r.end] - t[r.start]
        };
        let ids = match &self.packed {
            Some(p) => {
                let total = p.index.at(p.index.len() - 1) as u128;
                let bytes = (p.index.at(r.end) - p.index.at(r.start)) as u128;
                (2 * bytes * self.n_adds as u128)
                    .div_ceil(total.max(1))
                    .min(u64::MAX as u128) as u64
            }
            None => {
                let o = self.offs.get();
                o[r.end] - o[r.start]
            }
        };
        ids + tombs
    }

    /// Total neighbor ids.
    pub fn n_adds(&self) -> u64 {
        self.n_adds
    }

    /// Total tombstones.
    pub fn n_tombs(&self) -> u64 {
        self.tombs.get().len() as u64
    }

    /// DRAM or medium bytes the direction occupies.
    pub fn bytes(&self) -> u64 {
        let lists = match &self.packed {
            Some(p) => {
                p.bytes.get().len()
                    + p.index.len()
                        * match p.index {
                            PackedIndex::Narrow(_) => 4,
                            PackedIndex::Wide(_) => 8,
                        }
            }
            None => self.offs.get().len() * 8 + self.n_adds as usize * ID_BYTES,
        };
        (self.vids.get().len() * ID_BYTES
            + lists
            + self.wts.get().len() * 8
            + self.toffs.get().len() * 8
            + self.tombs.get().len() * ID_BYTES) as u64
    }
}

/// The file behind a run; removed when the run is both obsolete and no longer referenced.
pub struct RunFile {
    /// Segment name.
    pub name: String,
    medium: Arc<dyn Medium>,
    obsolete: AtomicBool,
    /// The outcome of checking the body (checksums and offsets), once it was checked: a run
    /// opened from the medium is checked on first use, not at open.
    verified: OnceLock<std::result::Result<(), String>>,
    /// The mapping the sections point into.
    map: Mapped,
}

impl RunFile {
    /// The file's bytes as the medium holds them now.
    pub fn medium_bytes(&self) -> crate::Result<Option<Mapped>> {
        self.medium.open(&self.name)?.map().map(Some)
    }

    /// The file opened for sweeps past the page cache; `None` on media without one.
    pub fn open_sweep(&self) -> crate::Result<Option<crate::medium::SweepFile>> {
        self.medium.open_sweep(&self.name)
    }
}

impl Drop for RunFile {
    fn drop(&mut self) {
        if self.obsolete.load(Ordering::Acquire) {
            // A leftover file is harmless: open deletes runs the manifest does not name.
            let _ = self.medium.remove(&self.name);
            // The run's versions go with it (`history::versions_file`), if it had any.
            if let Some(id) = Run::parse_file_name(&self.name) {
                let ver = Run::versions_file_name(id);
                if self.medium.exists(&ver) {
                    let _ = self.medium.remove(&ver);
                }
            }
        }
    }
}

/// An immutable run: in DRAM (sealed, not yet flushed) or backed by a file.
pub struct Run {
    /// Identity, LSN range, counts.
    pub header: RunHeader,
    /// Out-adjacency.
    pub out: DirData,
    /// In-adjacency; `None` for undirected stores, whose in-adjacency is the out-adjacency.
    pub inn: Option<DirData>,
    /// Vertex states set in this run: id, bit 31 set when deleted.
    pub vertex_ops: Sec<VertexId>,
    /// The backing file, if flushed.
    pub file: Option<RunFile>,
}

impl Run {
    /// One direction.
    #[inline]
    pub fn dir(&self, d: Dir) -> &DirData {
        match (d, &self.inn) {
            (Dir::In, Some(i)) => i,
            _ => &self.out,
        }
    }

    /// Checks the run's block checksums and offsets if that was not done yet; every later
    /// call returns the first outcome. Whoever reads a run opened from the medium calls this
    /// first: snapshots, seals resolving against it, merges.
    ///
    /// The check runs outside the `OnceLock`, so two callers may both do it (the outcome
    /// is the same: the bytes do not change). Holding the lock across it deadlocked: the
    /// check is parallel, and a pool thread waiting in its join can pick up another
    /// caller's task for the same run, which then waits on the lock its own stack holds
    /// (a read-only open checks ahead while its first snapshot checks too).
    pub fn verify(&self) -> crate::Result<()> {
        let Some(f) = &self.file else { return Ok(()) };
        if f.verified.get().is_none() {
            let outcome = file::verify_blocks(f.map.bytes(), &self.header)
                .and_then(|()| file::check_offsets(self));
            let _ = f.verified.set(outcome);
        }
        let outcome = f.verified.get().expect("set above if it was not");
        outcome
            .clone()
            .map_err(|m| crate::Error::corrupt(format!("run {}: {m}", f.name)))
    }

    /// Whether [`Run::verify`] already succeeded (DRAM runs need none).
    pub fn is_verified(&self) -> bool {
        self.file
            .as_ref()
            .is_none_or(|f| matches!(f.verified.get(), Some(Ok(()))))
    }

    /// Hints how the run's file pages are about to be read (nothing for DRAM runs).
    pub fn advise(&self, access: crate::medium::Access) {
        if let Some(f) = &self.file {
            f.map.advise(access);
        }
    }

    /// Where section `s` (one of this run's, read through its mapping) starts in the
    /// file; `None` for a DRAM run or a slice outside the mapping.
    pub fn file_offset<T>(&self, s: &[T]) -> Option<u64> {
        let map = self.file.as_ref()?.map.bytes();
        let (base, at) = (map.as_ptr() as usize, s.as_ptr() as usize);
        let end = at.checked_add(std::mem::size_of_val(s))?;
        (at >= base && end <= base + map.len()).then(|| (at - base) as u64)
    }

    /// Whether the run lives in DRAM only.
    pub fn in_dram(&self) -> bool {
        self.file.is_none()
    }

    /// Marks the file for removal once the last reader lets go of the run.
    pub fn retire(&self) {
        if let Some(f) = &self.file {
            f.obsolete.store(true, Ordering::Release);
        }
    }

    /// Bytes the run's sections occupy.
    pub fn bytes(&self) -> u64 {
        self.out.bytes()
            + self.inn.as_ref().map_or(0, |d| d.bytes())
            + (self.vertex_ops.get().len() * ID_BYTES) as u64
    }

    /// Name of the file of run `id`.
    pub fn file_name(id: u64) -> String {
        format!("run-{id:016x}.run")
    }

    /// The id in a run file name, if it is one.
    pub fn parse_file_name(name: &str) -> Option<u64> {
        let hex = name.strip_prefix("run-")?.strip_suffix(".run")?;
        (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok())?
    }

    /// Name of the file of run `id`'s versions (`history::versions_file`): named here,
    /// where the run's file is, so that the run's file takes it when it goes.
    pub(crate) fn versions_file_name(id: u64) -> String {
        format!("ver-{id:016x}.ver")
    }

    /// The run id in a versions file name, if it is one.
    pub(crate) fn parse_versions_file_name(name: &str) -> Option<u64> {
        let hex = name.strip_prefix("ver-")?.strip_suffix(".ver")?;
        (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok())?
    }

    /// The name run `id` is written under until it is durable (see [`file`]).
    pub fn tmp_name(id: u64) -> String {
        format!("{}.tmp", Run::file_name(id))
    }

    /// The id in a temporary run file name, if it is one.
    pub fn parse_tmp_name(name: &str) -> Option<u64> {
        Run::parse_file_name(name.strip_suffix(".tmp")?)
    }
}

/// Verifies every run of `runs` not verified yet ([`Run::verify`]), in parallel.
pub fn verify_all(runs: &[Arc<Run>]) -> crate::Result<()> {
    use rayon::prelude::*;
    runs.par_iter().try_for_each(|r| r.verify())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lookups through a directory find exactly what a search of the whole index finds: every
    /// held vertex at its index, and nothing for ids below, between or past the held ones.
    #[test]
    fn directory_lookups_agree_with_whole_index_searches() {
        let vids: Vec<VertexId> = (0..20_000 as VertexId)
            .map(|i| 5 + 4 * i + (i % 3) + (i / 5000) * 7000)
            .collect();
        let dd = DirData {
            vids: Sec::owned(vids.clone()),
            offs: Sec::owned(vec![0; vids.len() + 1]),
            ..Default::default()
        };
        let probes: Vec<VertexId> = (0..vids[vids.len() - 1] + 10).collect();
        let plain: Vec<Option<usize>> = probes.iter().map(|&v| dd.index_of(v)).collect();
        dd.build_directory();
        assert!(
            dd.directory.get().is_some(),
            "an index this long gets a directory"
        );
        for (&v, &want) in probes.iter().zip(&plain) {
            assert_eq!(dd.index_of(v), want, "vertex {v}");
        }
        for (i, &v) in vids.iter().enumerate() {
            assert_eq!(dd.index_of(v), Some(i));
        }
        assert_eq!(dd.index_of(4), None);
    }
}
