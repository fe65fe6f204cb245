//! A snapshot of several runs read in place, as one graph.
//!
//! This is the common shape of a live store: the runs ingest flushed (five of about 53 M
//! edges each for Kron24 at the default budget), or a compacted base plus the changes
//! since. Runs are resolved (see [`crate::run`]): a run adds only edges that were not live
//! before it and tombstones only edges that were. So a vertex's live list is the union of
//! its slices in every run, disjoint, less the positions that newer runs' tombstones
//! killed — and no neighbor has to be moved to read it.
//!
//! The index built here is therefore small and costs what the tombstones cost, not what
//! the graph does:
//! - per run and direction, nothing when it is dense (its offsets are by vertex), or, for
//!   a sparse run, a rank directory of the vertices it holds (two bits per vertex of its
//!   range, built in one pass over its index), through which its own offsets are read;
//! - per block of 4096 vertices, the runs whose range meets it (its **chain**): runs above
//!   level 0 each hold one partition, so a vertex reads only its partition's runs and
//!   the level-0 ones;
//! - for the vertices some newer run deletes from (the **cut** vertices), their dead
//!   positions, found by a galloping search per tombstone; every other vertex is
//!   **clean**, its slices read as they are.
//!
//! A kernel reads a clean vertex as one slice per run (a lookup of two offsets each), and a
//! cut vertex as the same slices broken at its dead positions. Neighbors come run by run,
//! each run's ascending: a view's order is unspecified, and sorted reads merge them.
//!
//! Reading several slices per vertex costs a sweep more than one: a branch per run
//! mispredicted at each short slice. A kernel that sweeps a direction pass after pass
//! (PageRank: 1.63x the compacted store's kernel time on Kron24's five runs) asks for that
//! direction's lists copied, run after run, into one DRAM array
//! ([`Snapshot::plan_sweeps`]), within the snapshot's copy budget; its passes then read
//! a CSR. The copy is not sorted across runs, so lookups and sorted reads keep to the
//! runs.

mod build;

use super::flat::{each_weighted, meta_methods, side_methods, Adj, Meta};
use super::{GraphView, Snapshot};
use crate::build_once::BuildOnce;
use crate::medium::dram::AnonArray;
use crate::run::Dir;
use crate::types::VertexId;
use std::sync::Arc;

/// Most runs a layered view reads in place. A vertex visits only its chain's runs (see
/// [`Chain`]), so the bound is what a view's slabs and a chain's run numbers (a `u8`)
/// hold: Kron24 ingested at a 64 MiB budget leaves 46 runs (4 at level 0, 42 partition
/// runs), of which a vertex reads about 10, and Kron26 at the default budget 81 (up to
/// 141 at smaller budgets). A snapshot of more is read through the general path.
pub(crate) const MAX_RUNS: usize = 255;

/// `cut_of` for a vertex no newer run deletes from.
const CLEAN: u32 = u32::MAX;

/// How a view finds a vertex's place in one run's index of one direction.
pub(crate) enum Offsets {
    /// The run's own offsets, by vertex: its direction is dense.
    Own,
    /// A sparse direction: its own offsets, by index entry, reached through a rank
    /// directory of the vertices it holds.
    Ranked(Ranks),
}

/// Which vertices from `lo` a sparse run holds, 64 to a word, with the number held before
/// each word: vertex `lo + i` is index entry `before + (bits below i % 64)` of word
/// `i / 64`. A quarter of a byte per vertex of the run's range, built in one pass over
/// the run's vertex ids, where offsets by vertex took 8 B (71 MB per direction for
/// Kron24's level-0 run, whose 1.4 M vertices are 16 % of its range, filled in 0.08 s,
/// and a miss on two of them for each vertex it does not hold).
pub(crate) struct Ranks {
    lo: VertexId,
    words: Vec<RankWord>,
}

/// 64 vertices of a [`Ranks`].
#[derive(Clone, Copy, Default)]
pub(crate) struct RankWord {
    /// Bit `j`: the run holds vertex `64 * word + j` (from `lo`).
    bits: u64,
    /// Vertices held before this word: the index entry of the word's first held vertex.
    before: u64,
}

/// Vertices share a [`Chain`] in blocks of `1 << CHAIN_SHIFT`.
const CHAIN_SHIFT: u32 = 12;

/// The runs whose vertex range meets one block of vertices, oldest first: a vertex reads
/// only these. A store's runs above level 0 each hold one partition's range, so a vertex
/// of Kron24 as ingest leaves it reads 2 of its 10 runs.
#[derive(Clone, Copy)]
pub(crate) struct Chain {
    len: u8,
    /// The runs, by their place in the snapshot: `runs[..len]`.
    runs: [u8; MAX_RUNS],
}

impl Default for Chain {
    fn default() -> Chain {
        Chain {
            len: 0,
            runs: [0; MAX_RUNS],
        }
    }
}

impl Chain {
    /// The runs, by their place in the snapshot, oldest first.
    #[inline(always)]
    fn runs(&self) -> &[u8] {
        &self.runs[..self.len as usize]
    }
}

/// A DRAM copy of one direction's live lists, each one's runs end to end: a CSR whose
/// lists are not sorted.
pub(crate) struct SweepCopy {
    offs: AnonArray<u64>,
    ids: AnonArray<VertexId>,
    /// Weights beside `ids` (empty when unweighted).
    wts: AnonArray<f64>,
}

impl SweepCopy {
    /// DRAM it holds, in bytes.
    fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&self.offs[..]) + size_of_val(&self.ids[..]) + size_of_val(&self.wts[..])
    }
}

/// One direction's index.
pub(crate) struct Layer {
    /// Per run of the snapshot, oldest first.
    runs: Vec<Offsets>,
    /// Where each run's neighbor array starts in the joint position space of all runs
    /// (the sum of the lengths before it), in which dead positions are given.
    at: Vec<u64>,
    /// Per vertex, its entry in `cuts`, or [`CLEAN`]; empty when no vertex is cut.
    cut_of: Vec<u32>,
    /// Cut vertex `k`'s dead positions are `dels[cuts[k]..cuts[k + 1]]`.
    cuts: Vec<u64>,
    /// Dead positions, joint, ascending per vertex.
    dels: Vec<u64>,
    /// Per block of vertices, its entry in `chains`: blocks of one partition share one.
    chain_of: Vec<u16>,
    /// The distinct chains.
    chains: Vec<Chain>,
    /// The live lists copied for a kernel's sweeps (`None` inside: they did not fit the
    /// copy budget).
    copy: BuildOnce<Option<SweepCopy>>,
}

impl Layer {
    /// Vertices read through the cut path.
    fn cut_vertices(&self) -> usize {
        self.cuts.len().saturating_sub(1)
    }

    /// The copy of the lists, if one was made.
    fn copied(&self) -> Option<&SweepCopy> {
        self.copy.get().and_then(Option::as_ref)
    }

    /// DRAM the index holds, in bytes.
    fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        let built: usize = (self.runs.iter())
            .map(|o| match o {
                Offsets::Own => 0,
                Offsets::Ranked(r) => size_of_val(&r.words[..]),
            })
            .sum();
        let copy = self.copied().map_or(0, SweepCopy::bytes);
        built
            + size_of_val(&self.at[..])
            + size_of_val(&self.cut_of[..])
            + size_of_val(&self.cuts[..])
            + size_of_val(&self.dels[..])
            + size_of_val(&self.chain_of[..])
            + size_of_val(&self.chains[..])
            + copy
    }
}

/// The index of both directions (`inn` unused in undirected stores), shared by every view
/// of one snapshot.
pub(crate) struct RunsIndex {
    out: Layer,
    inn: Option<Layer>,
}

impl Snapshot {
    /// The snapshot's runs read in place as one graph (see the module doc), when it has
    /// at least two and at most 255 runs and none is compressed. `None`
    /// otherwise: use [`Snapshot::flat`], [`Snapshot::packed_flat`] or the snapshot
    /// itself.
    ///
    /// The first call builds the index, in parallel: the offsets of sparse runs, O(the
    /// vertex range each holds), and per tombstone a galloping search of the older runs'
    /// lists of its vertex. Later calls and clones of the snapshot share it; a call made
    /// while another thread builds it gets `None` rather than wait (see
    /// `crate::build_once`).
    pub fn layered(&self) -> Option<LayeredView<'_>> {
        let idx = self.runs_index()?;
        let out = Side::new(self, Dir::Out, &idx.out);
        let inn = match &idx.inn {
            Some(l) => Side::new(self, Dir::In, l),
            None => out,
        };
        Some(LayeredView {
            meta: self.meta(),
            out,
            inn,
            idx,
        })
    }

    /// A kernel is about to read every list of the directions `dirs`, pass after pass or in
    /// no order (`Kernel::sweeps`, `Kernel::reads_at_random`).
    /// A layered view then copies them, run after run, into one DRAM array per direction,
    /// if that fits the copy budget (the store's `Options::view_copy_bytes`; by default
    /// half the DRAM available), and every later [`Snapshot::layered`] view reads them
    /// as a CSR. Runs merged window by window from their mappings (in-lists of runs no
    /// layered view reads) keep each merged window within the same budget; other runs no
    /// layered view reads are merged into one copy per direction, likewise (the
    /// `runs-copy` view of `kernel::prepare`). Other views need nothing; a copy is made
    /// once per snapshot.
    pub fn plan_sweeps(&self, dirs: &[Dir]) {
        if let Some(r) = self.runs_stream().filter(|_| dirs.contains(&Dir::In)) {
            r.keep_merged_within(&self.runs, self.n, self.copy_budget_now());
        }
        let idx = match self.runs_index_state() {
            Index::Built(idx) => idx,
            Index::NotRead => return self.copy_runs(dirs, self.copy_budget_now()),
            // Another kernel builds it: this one reads without (see `crate::build_once`).
            Index::Building => return,
        };
        // Read only when a copy is to be decided: a planned snapshot's later runs
        // (`kernel::run` after `kernel::prepare`) find their copies made.
        let mut left: Option<u64> = None;
        for &d in dirs {
            let l = match (d, &idx.inn) {
                (Dir::In, Some(l)) => l,
                _ => &idx.out,
            };
            if l.copy.get().is_some() {
                continue;
            }
            let budget = *left.get_or_insert_with(|| self.copy_budget_now());
            let made = l.copy.get_or_build(|| {
                // A copy that cannot be mapped is left out: the runs are read in place.
                (self.copy_bytes(d) <= budget)
                    .then(|| super::stream::merge_lists(&self.runs, d, self.n, self.weighted))
                    .flatten()
                    .map(|(offs, ids, wts)| SweepCopy { offs, ids, wts })
            });
            let bytes = super::budget_taken(made, |c| c.bytes() as u64, || self.copy_bytes(d));
            left = Some(budget.saturating_sub(bytes));
        }
    }

    /// Bytes a sweep copy may take now: the store's `Options::view_copy_bytes`, by default
    /// half the DRAM available.
    pub(super) fn copy_budget_now(&self) -> u64 {
        match self.copy_budget {
            Some(b) => b as u64,
            None => crate::medium::dram::available().unwrap_or(0) / 2,
        }
    }

    /// The layered view's index, built on first use; `None` when the snapshot is not
    /// read that way, or while another caller builds it.
    fn runs_index(&self) -> Option<&RunsIndex> {
        match self.runs_index_state() {
            Index::Built(idx) => Some(idx),
            Index::NotRead | Index::Building => None,
        }
    }

    /// The layered view's index, built now if nobody has begun it.
    fn runs_index_state(&self) -> Index<'_> {
        if !layers(&self.runs) {
            return Index::NotRead;
        }
        if self.runs_stream().is_some() || self.runs_stream_out().is_some() {
            // Its sweeps stream the runs and merge each window: the snapshot reads them.
            return Index::NotRead;
        }
        if self.streams_pending() {
            // The runs may stream because they do not fit: no index or copy until decided.
            return Index::Building;
        }
        match self.runs_index.get_or_build(|| self.build_index()) {
            Some(Some(idx)) => Index::Built(idx),
            Some(None) => Index::NotRead,
            None => Index::Building,
        }
    }

    /// The layered view's index, built now (in parallel).
    pub(super) fn build_index(&self) -> Option<RunsIndex> {
        let out = self.layer(Dir::Out)?;
        let inn = match self.undirected {
            true => None,
            false => Some(self.layer(Dir::In)?),
        };
        Some(RunsIndex { out, inn })
    }
}

/// Where a snapshot's layered index stands for a caller.
enum Index<'a> {
    Built(&'a RunsIndex),
    /// No layered view reads these runs (or its index could not be built).
    NotRead,
    /// Another caller is building it; this one reads the snapshot without it.
    Building,
}

/// Whether a layered view reads `runs`: two to [`MAX_RUNS`] of them, none compressed.
pub(crate) fn layers(runs: &[Arc<crate::run::Run>]) -> bool {
    (2..=MAX_RUNS).contains(&runs.len()) && !runs.iter().any(|r| is_packed(r))
}

/// Whether any direction of run `r` is compressed.
fn is_packed(r: &crate::run::Run) -> bool {
    r.out.is_packed() || r.inn.as_ref().is_some_and(|d| d.is_packed())
}

/// One run's lists of one direction, as a view reads them.
#[derive(Clone, Copy, Default)]
struct Slab<'a> {
    /// The first vertex the run's index covers.
    lo: VertexId,
    /// The run's offsets: by vertex from `lo` when `ranks` is empty, else by index entry.
    offs: &'a [u64],
    /// The rank directory of a sparse run (see [`Ranks`]); empty for a dense one (and for
    /// a sparse run that holds no vertex, whose one offset reads as a dense run of none).
    ranks: &'a [RankWord],
    ids: &'a [VertexId],
    /// Weights beside `ids` (empty when the run is unweighted).
    wts: &'a [f64],
    /// Where `ids` starts in the joint position space.
    at: u64,
}

impl Slab<'_> {
    /// `v`'s positions in `ids` (an empty range when the run holds nothing for it).
    #[inline(always)]
    fn range(&self, v: VertexId) -> (usize, usize) {
        // One unsigned comparison rejects vertices on either side of the range.
        let i = v.wrapping_sub(self.lo) as usize;
        let k = if self.ranks.is_empty() {
            if i >= self.offs.len().saturating_sub(1) {
                return (0, 0);
            }
            i
        } else {
            let Some(w) = self.ranks.get(i / 64) else {
                return (0, 0);
            };
            let bit = 1u64 << (i % 64);
            if w.bits & bit == 0 {
                return (0, 0);
            }
            w.before as usize + (w.bits & (bit - 1)).count_ones() as usize
        };
        (self.offs[k] as usize, self.offs[k + 1] as usize)
    }
}

/// One direction as a view reads it.
#[derive(Clone, Copy)]
struct Side<'a> {
    slabs: [Slab<'a>; MAX_RUNS],
    runs: usize,
    chain_of: &'a [u16],
    chains: &'a [Chain],
    cut_of: &'a [u32],
    cuts: &'a [u64],
    dels: &'a [u64],
    /// The lists copied for sweeps, which every read but lookups and sorted lists takes.
    copy: Option<Adj<'a>>,
    /// Every vertex's degree, if a kernel that looks many up had them counted
    /// ([`Snapshot::count_degrees`]): one read instead of a search of each run of the chain.
    counted: Option<&'a [u32]>,
}

impl<'a> Side<'a> {
    /// Direction `d` of snapshot `s`, read through its index `l`.
    fn new(s: &'a Snapshot, d: Dir, l: &'a Layer) -> Side<'a> {
        let mut slabs = [Slab::default(); MAX_RUNS];
        for (k, (run, o)) in s.runs.iter().zip(&l.runs).enumerate() {
            let dd = run.dir(d);
            let (lo, ranks) = match o {
                Offsets::Own => (0, &[][..]),
                Offsets::Ranked(r) => (r.lo, &r.words[..]),
            };
            let (ids, wts) = (dd.adds.get(), dd.wts.get());
            slabs[k] = Slab {
                lo,
                offs: dd.offs.get(),
                ranks,
                ids,
                wts,
                at: l.at[k],
            };
        }
        Side {
            slabs,
            runs: s.runs.len(),
            chain_of: &l.chain_of,
            chains: &l.chains,
            cut_of: &l.cut_of,
            cuts: &l.cuts,
            dels: &l.dels,
            copy: l.copied().map(|c| Adj::new(&c.offs, &c.ids, &c.wts)),
            counted: s.counted_degrees(d),
        }
    }

    #[inline(always)]
    fn slabs(&self) -> &[Slab<'a>] {
        &self.slabs[..self.runs]
    }

    /// The slabs that may hold `v`'s lists (see [`Chain`]), oldest first.
    #[inline(always)]
    fn chain(&self, v: VertexId) -> impl Iterator<Item = &Slab<'a>> + '_ {
        let c = (self.chain_of.get((v >> CHAIN_SHIFT) as usize))
            .map_or(&[][..], |&k| self.chains[k as usize].runs());
        c.iter().map(|&k| &self.slabs[k as usize])
    }

    /// `v`'s dead positions if it is cut.
    #[inline(always)]
    fn dead(&self, v: VertexId) -> Option<&'a [u64]> {
        let k = *self.cut_of.get(v as usize)?;
        if k == CLEAN {
            return None;
        }
        let k = k as usize;
        Some(&self.dels[self.cuts[k] as usize..self.cuts[k + 1] as usize])
    }

    #[inline(always)]
    fn degree(&self, v: VertexId) -> usize {
        if let Some(c) = &self.copy {
            return c.at(v).len();
        }
        if let Some(deg) = self.counted {
            return deg[v as usize] as usize;
        }
        let n: usize = self.chain(v).map(|s| s.range(v)).map(|(a, b)| b - a).sum();
        n - self.dead(v).map_or(0, <[u64]>::len)
    }

    /// Folds `v`'s neighbors.
    ///
    /// Always inlined, as the cut path: a kernel's closure typically holds `&mut` to its
    /// accumulator, and passing it to an outlined call makes the accumulator's address
    /// escape, so the loop stored it to the stack on every neighbor.
    #[inline(always)]
    fn fold<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, mut f: F) -> A {
        if let Some(c) = &self.copy {
            return c.at(v).iter().fold(init, |a, &x| f(a, x));
        }
        if let Some(dead) = self.dead(v) {
            return self.fold_cut(v, dead, init, f);
        }
        let mut acc = init;
        for s in self.chain(v) {
            let (a, b) = s.range(v);
            acc = s.ids[a..b].iter().fold(acc, |a, &x| f(a, x));
        }
        acc
    }

    /// Folds cut vertex `v`'s neighbors: each run's slice broken at the `dead` positions.
    #[inline(always)]
    fn fold_cut<A, F: FnMut(A, VertexId) -> A>(
        &self,
        v: VertexId,
        dead: &[u64],
        init: A,
        mut f: F,
    ) -> A {
        let mut acc = init;
        let mut d = 0;
        for s in self.chain(v) {
            let (mut at, b) = s.range(v);
            while d < dead.len() && dead[d] < s.at + b as u64 {
                let p = (dead[d] - s.at) as usize;
                debug_assert!(
                    at <= p && p < b,
                    "a dead position lies in its vertex's slice"
                );
                acc = s.ids[at..p].iter().fold(acc, |a, &x| f(a, x));
                at = p + 1;
                d += 1;
            }
            acc = s.ids[at..b].iter().fold(acc, |a, &x| f(a, x));
        }
        acc
    }

    /// Calls `f` on `v`'s live stretches of neighbors with their weights (empty when the
    /// run is unweighted) until it returns true; returns whether it did.
    #[inline(always)]
    fn find_stretch<F: FnMut(&'a [VertexId], &'a [f64]) -> bool>(
        &self,
        v: VertexId,
        mut f: F,
    ) -> bool {
        if let Some(c) = &self.copy {
            let (a, b) = (c.start(v), c.start(v + 1));
            let w = c.weights();
            let w = if w.is_empty() {
                w
            } else {
                &w[a as usize..b as usize]
            };
            return a < b && f(c.slice(a, b), w);
        }
        self.find_stretch_in_runs(v, f)
    }

    /// [`Side::find_stretch`] over the runs.
    #[inline(always)]
    fn find_stretch_in_runs<F: FnMut(&'a [VertexId], &'a [f64]) -> bool>(
        &self,
        v: VertexId,
        mut f: F,
    ) -> bool {
        let dead = self.dead(v).unwrap_or(&[]);
        let mut d = 0;
        for s in self.chain(v) {
            let (mut at, b) = s.range(v);
            let w = |a: usize, b: usize| {
                if s.wts.is_empty() {
                    &[][..]
                } else {
                    &s.wts[a..b]
                }
            };
            while d < dead.len() && dead[d] < s.at + b as u64 {
                let p = (dead[d] - s.at) as usize;
                if at < p && f(&s.ids[at..p], w(at, p)) {
                    return true;
                }
                at = p + 1;
                d += 1;
            }
            if at < b && f(&s.ids[at..b], w(at, b)) {
                return true;
            }
        }
        false
    }

    /// Calls `f` on `v`'s neighbors until it returns true; returns whether it did.
    #[inline(always)]
    fn find<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        self.find_stretch(v, |ids, _| ids.iter().any(|&x| f(x)))
    }

    /// Calls `f` on `v`'s neighbors with their weights (1 when unweighted), from one call
    /// site per path (see [`each_weighted`]). The copy is read as a `FlatView` reads its
    /// lists, not through [`Side::find_stretch`]: its three calls of the closure left it
    /// outlined, a call per vertex with the kernel's state behind pointers, and gap-sssp
    /// on a copy 1.25-1.4x the compacted run's time.
    #[inline(always)]
    fn for_each_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        if let Some(c) = &self.copy {
            return c.for_each_weighted(v, f);
        }
        self.find_stretch_in_runs(v, |ids, wts| {
            each_weighted(ids, wts, &mut f);
            false
        });
    }

    /// Whether `w` is a live neighbor of `v`: a run may hold it at a dead position and
    /// again, re-added, in a newer run.
    fn has(&self, v: VertexId, w: VertexId) -> bool {
        let dead = self.dead(v).unwrap_or(&[]);
        self.chain(v).any(|s| {
            let (a, b) = s.range(v);
            s.ids[a..b]
                .binary_search(&w)
                .is_ok_and(|i| dead.binary_search(&(s.at + (a + i) as u64)).is_err())
        })
    }

    /// `v`'s neighbors, sorted, into `out`.
    fn sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        let mut parts = 0;
        self.find_stretch_in_runs(v, |ids, _| {
            out.extend_from_slice(ids);
            parts += 1;
            false
        });
        if parts > 1 {
            // Ascending runs end to end: the stable sort finds them and merges.
            out.sort();
        }
    }
}

/// A borrowed view of a snapshot's runs read in place (see [`Snapshot::layered`]).
#[derive(Clone, Copy)]
pub struct LayeredView<'a> {
    meta: Meta<'a>,
    out: Side<'a>,
    inn: Side<'a>,
    idx: &'a RunsIndex,
}

impl<'a> LayeredView<'a> {
    /// Vertex lists (out and in) that newer runs delete from, read with their dead
    /// positions skipped.
    pub fn cut_lists(&self) -> usize {
        self.idx.out.cut_vertices() + self.idx.inn.as_ref().map_or(0, Layer::cut_vertices)
    }

    /// DRAM the view's index holds (built offsets, dead positions and copies for sweeps,
    /// of both directions), in bytes.
    pub fn index_bytes(&self) -> usize {
        self.idx.out.bytes() + self.idx.inn.as_ref().map_or(0, Layer::bytes)
    }

    /// Whether a direction's lists were copied for a kernel's sweeps (see
    /// [`Snapshot::plan_sweeps`]).
    pub fn copied(&self) -> bool {
        self.out.copy.is_some() || self.inn.copy.is_some()
    }
}

impl GraphView for LayeredView<'_> {
    meta_methods!();
    side_methods!();
    #[inline]
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, f: F) {
        self.out.for_each_weighted(v, f)
    }
}
