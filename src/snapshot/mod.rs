//! Snapshots: consistent, immutable views of a store at one moment.
//!
//! A snapshot is the list of runs live when it was taken (files and sealed memtables) plus
//! the vertex states of that moment. Ingestion continues while it is read; compaction never
//! changes a run a snapshot holds (it makes new ones), and retired run files are removed only
//! when the last snapshot holding them is dropped.

mod chains;
mod csr;
mod degrees;
mod export;
mod flat;
mod layered;
mod packed;
mod patch;
mod point;
mod point_copy;
#[cfg(test)]
mod shared_tests;
mod stream;
mod view;

pub use crate::medium::Access;
pub use crate::run::Dir;
pub use csr::Csr;
pub use export::{live_values, CsrArrays};
pub use flat::FlatView;
pub use layered::LayeredView;
#[cfg(test)]
pub(crate) use layered::MAX_RUNS as MAX_LAYERED_RUNS;
pub use packed::PackedView;
pub use patch::Patched;
pub use point::PointView;
pub(crate) use point::{point_reads, PointIndex, PointLists};
pub(crate) use stream::MergeInPlace;
pub use stream::{StreamStats, SweepReads};
pub use view::{GraphView, SweepIn};

pub use crate::keys::{KeyKind, Names};

use crate::build_once::BuildOnce;
use crate::dict::Externals;

use crate::run::{DirData, Run};
use crate::types::{bits, VertexId};
use std::sync::Arc;

/// A consistent view of the graph; implements [`GraphView`].
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) runs: Arc<[Arc<Run>]>,
    pub(crate) deleted: Arc<Vec<u64>>,
    pub(crate) n: usize,
    pub(crate) undirected: bool,
    pub(crate) externals: Externals,
    pub(crate) edges: u64,
    /// Whether any run holds tombstones, per direction (out, in).
    tombs: [bool; 2],
    /// The runs each vertex's partition reads.
    chains: Arc<chains::Chains>,
    /// The layered view's per-vertex index, built on first use and shared by clones.
    runs_index: Arc<BuildOnce<Option<layered::RunsIndex>>>,
    /// DRAM the layered view may spend on copies of neighbor lists for sweeps, in bytes;
    /// `None`: half the DRAM available when a copy is made.
    copy_budget: Option<usize>,
    /// How sweeps read a compacted run's in-lists.
    sweep_reads: SweepReads,
    /// The in-lists opened for streamed sweeps, decided on the first plan and shared by
    /// clones (`None` inside: read through the mappings).
    stream: Arc<BuildOnce<Option<stream::Streamed>>>,
    /// The out-lists of several runs opened for sweeps, likewise.
    stream_out: Arc<BuildOnce<Option<stream::RunsStream>>>,
    /// Every vertex's degree per direction (out, in), counted run by run for a kernel that
    /// looks up many degrees of several runs ([`Snapshot::count_degrees`]).
    counted: Arc<[BuildOnce<Option<Vec<u32>>>; 2]>,
    /// The lists of a direction (out, in) merged from every run, for a kernel that reads
    /// them in no order on runs no layered view reads ([`Snapshot::copy_runs`]); shared
    /// by clones.
    copies: Arc<[BuildOnce<Option<stream::RunsCopy>>; 2]>,
    /// Whether the store is weighted (known even before any run holds an edge) or a run
    /// holds weights: asked per edge lookup, so settled once.
    weighted: bool,
    /// The names of a string-keyed store as of this snapshot (external ids number them).
    names: Option<Names>,
    /// Set when the snapshot is a past graph read in place: its one run with the entries
    /// after the commit masked, which every read then goes through ([`Snapshot::point`]).
    point: Option<Arc<PointIndex>>,
}

/// A vertex's key as its user gave it: an integer id, or a name in a string-keyed store.
/// Keys of one store are all of one kind; they order by number or by name (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key<'a> {
    /// An external id of an integer-keyed store.
    Id(u64),
    /// A vertex name of a string-keyed store.
    Name(&'a str),
}

impl std::fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Id(x) => write!(f, "{x}"),
            Key::Name(s) => f.write_str(s),
        }
    }
}

/// The out-lists' entries of `runs` (resolved: each run's adds less its tombstones, summed),
/// from their headers alone.
pub(crate) fn out_entries(runs: &[Arc<Run>]) -> u64 {
    runs.iter()
        .map(|r| r.out.n_adds() as i64 - r.out.n_tombs() as i64)
        .sum::<i64>()
        .max(0) as u64
}

/// The vertices of `0..n` that exist, less those `deleted` (a bit per vertex) marks.
pub(crate) fn live_vertices(n: usize, deleted: &[u64]) -> usize {
    n - deleted
        .iter()
        .map(|w| w.count_ones() as usize)
        .sum::<usize>()
}

impl Snapshot {
    pub(crate) fn new(
        runs: Arc<[Arc<Run>]>,
        deleted: Arc<Vec<u64>>,
        n: usize,
        undirected: bool,
        externals: Externals,
    ) -> Snapshot {
        let edges = out_entries(&runs);
        let tombs = [Dir::Out, Dir::In].map(|d| runs.iter().any(|r| r.dir(d).n_tombs() > 0));
        let chains = Arc::new(chains::Chains::new(&runs, n));
        let weighted = (runs.iter()).any(|r| r.header.flags & crate::run::format::WEIGHTED != 0);
        Snapshot {
            chains,
            runs,
            deleted,
            n,
            undirected,
            externals,
            edges,
            tombs,
            runs_index: Default::default(),
            copy_budget: None,
            sweep_reads: SweepReads::Auto,
            stream: Default::default(),
            stream_out: Default::default(),
            counted: Default::default(),
            copies: Default::default(),
            weighted,
            names: None,
            point: None,
        }
    }

    /// Makes the snapshot, of one plain dense run, the past graph `idx` reads in place:
    /// `None` when the run is not one the mask can read.
    pub(crate) fn with_point(mut self, idx: Arc<PointIndex>) -> Option<Snapshot> {
        let [run] = &self.runs[..] else { return None };
        let entries = run.out.adds.get().len() as u64;
        if run.out.n_tombs() > 0 || self.weighted {
            return None;
        }
        self.edges = idx.edges(entries);
        self.point = Some(idx);
        self.point().is_some().then_some(self)
    }

    /// Gives the snapshot the names of a string-keyed store; they must cover every
    /// external id it holds.
    pub(crate) fn with_names(mut self, names: Option<Names>) -> Snapshot {
        if let Some(n) = &names {
            // O(vertices): checked in debug builds; `Graph::snapshot` takes the names after
            // the ids, and names are stored before ids number them.
            debug_assert!(
                self.externals.iter().all(|&e| e < n.len() as u64),
                "a snapshot's names cover its external ids"
            );
        }
        self.names = names;
        self
    }

    /// Sets the DRAM the layered view may spend on copies for sweeps (see
    /// [`Snapshot::plan_sweeps`]); `None`: half the DRAM available then.
    pub(crate) fn with_copy_budget(mut self, bytes: Option<usize>) -> Snapshot {
        self.copy_budget = bytes;
        self
    }

    /// Sets how sweeps read a compacted run's in-lists (see [`SweepReads`]).
    pub(crate) fn with_sweep_reads(mut self, reads: SweepReads) -> Snapshot {
        self.sweep_reads = reads;
        self
    }

    /// Marks the snapshot as one of a weighted store (which its runs alone cannot tell
    /// while they hold no edge).
    pub(crate) fn of_weighted_store(mut self, weighted: bool) -> Snapshot {
        self.weighted |= weighted;
        self
    }

    /// The runs the snapshot reads, oldest first.
    pub fn runs(&self) -> &[Arc<Run>] {
        &self.runs
    }

    /// Hints how a kernel is about to read the snapshot's run files: `Sequential` for
    /// sweeps over every vertex (PageRank, CC, CDLP), `Normal` for traversals. It matters
    /// when the graph does not fit in the page cache.
    pub fn advise(&self, access: Access) {
        for r in self.runs.iter() {
            r.advise(access);
        }
    }

    /// The runs that can hold `v`, oldest first.
    #[inline]
    fn runs_of(&self, v: VertexId) -> impl DoubleEndedIterator<Item = &Run> {
        (self.chains.of(v).iter()).map(|&i| &*self.runs[i as usize])
    }

    /// External id of dense id `v`.
    pub fn external_id(&self, v: VertexId) -> u64 {
        self.externals[v as usize]
    }

    /// External ids indexed by dense id.
    pub fn external_ids(&self) -> &[u64] {
        &self.externals
    }

    /// How the store's vertices are keyed.
    pub fn key_kind(&self) -> KeyKind {
        match self.names {
            Some(_) => KeyKind::String,
            None => KeyKind::U64,
        }
    }

    /// The names of a string-keyed store (external id `e` is name `e`); `None` for an
    /// integer-keyed store.
    pub fn names(&self) -> Option<&Names> {
        self.names.as_ref()
    }

    /// A number per dense id that orders vertices as their keys do: the external id in an
    /// integer-keyed store, the rank of the name (bytewise) in a string-keyed one. Sorting
    /// vertices or edges by it is sorting them by key at the price of integers (comparing
    /// names reads them from all over memory: sorting Kron24's 5.9 M names that way took
    /// 13 s of a `run` that printed them).
    pub fn key_order(&self) -> std::borrow::Cow<'_, [u64]> {
        use rayon::prelude::*;
        let Some(names) = &self.names else {
            return std::borrow::Cow::Borrowed(&self.externals);
        };
        // The first 8 bytes, big-endian, settle most comparisons without a second read.
        let prefix = |n: &str| {
            let mut b = [0u8; 8];
            let k = n.len().min(8);
            b[..k].copy_from_slice(&n.as_bytes()[..k]);
            u64::from_be_bytes(b)
        };
        let mut by_name: Vec<(u64, &str, usize)> = (0..self.n)
            .into_par_iter()
            .map(|v| {
                let n = names
                    .get(self.externals[v])
                    .expect("a snapshot's names cover its external ids");
                (prefix(n), n, v)
            })
            .collect();
        by_name.par_sort_unstable();
        let mut rank = vec![0u64; self.n];
        for (r, &(_, _, v)) in by_name.iter().enumerate() {
            rank[v] = r as u64;
        }
        std::borrow::Cow::Owned(rank)
    }

    /// The key of dense id `v`, as the user gave it.
    #[inline]
    pub fn key(&self, v: VertexId) -> Key<'_> {
        let ext = self.externals[v as usize];
        self.key_of_external(ext)
            .expect("a snapshot's names cover its external ids")
    }

    /// The key of external id `ext` (for kernel outputs that are vertices, such as
    /// component labels); `None` in a string-keyed store if no name has that number.
    #[inline]
    pub fn key_of_external(&self, ext: u64) -> Option<Key<'_>> {
        match &self.names {
            Some(n) => n.get(ext).map(Key::Name),
            None => Some(Key::Id(ext)),
        }
    }

    /// Edges as a user counts them, and as `evograph export` lists them: every directed
    /// edge of a directed store; each edge once in an undirected store, where
    /// [`GraphView::num_edges`] counts both directions (and a self-loop once). O(vertices)
    /// for an undirected store, which has to find its self-loops.
    pub fn edge_count(&self) -> u64 {
        if !self.undirected {
            return self.edges;
        }
        use rayon::prelude::*;
        let loops: u64 = crate::types::par_vertices(self.n)
            .filter(|&v| self.vertex_exists(v) && GraphView::has_edge(self, v, v))
            .count() as u64;
        (self.edges + loops) / 2
    }

    /// Number of vertices that exist (the id space minus deleted vertices).
    pub fn live_vertices(&self) -> usize {
        live_vertices(self.n, &self.deleted)
    }

    fn degree(&self, d: Dir, v: VertexId) -> usize {
        if let Some(p) = self.point_dir(d) {
            return p.degree(v);
        }
        if let Some(c) = self.runs_copy(d) {
            return c.list(v).len();
        }
        if let Some(deg) = self.counted_degree(d, v) {
            return deg;
        }
        let mut n = 0i64;
        for r in self.runs_of(v) {
            let dd = r.dir(d);
            if let Some(i) = dd.index_of(v) {
                n += dd.degree_at(i) as i64 - dd.tombs_at(i).len() as i64;
            }
        }
        n.max(0) as usize
    }

    /// Calls `f` on each neighbor of `v` in direction `d` until it returns true; returns
    /// whether it did. Without tombstones in the direction (always true of a compacted
    /// store), this is a plain walk over each run's slice for `v`.
    #[inline]
    fn find<F: FnMut(VertexId) -> bool>(&self, d: Dir, v: VertexId, mut f: F) -> bool {
        if let Some(p) = self.point_dir(d) {
            return p.find(v, f);
        }
        if let Some(c) = self.runs_copy(d) {
            return c.list(v).iter().any(|&x| f(x));
        }
        if !self.tombs[dir_index(d)] {
            for r in self.runs_of(v) {
                let dd = r.dir(d);
                if let Some(i) = dd.index_of(v) {
                    if dd.find_at(i, &mut f) {
                        return true;
                    }
                }
            }
            return false;
        }
        self.find_resolving(d, v, f)
    }

    /// Like [`Snapshot::find`], with each neighbor's weight (1 in unweighted stores).
    fn find_weighted<F: FnMut(VertexId, f64) -> bool>(
        &self,
        d: Dir,
        v: VertexId,
        mut f: F,
    ) -> bool {
        if let Some(p) = self.point_dir(d) {
            // A point's store is unweighted.
            return p.find(v, |x| f(x, 1.0));
        }
        if let Some(c) = self.runs_copy(d) {
            let w = c.weights(v);
            return (c.list(v).iter().enumerate())
                .any(|(k, &x)| f(x, w.get(k).copied().unwrap_or(1.0)));
        }
        if !self.tombs[dir_index(d)] {
            for r in self.runs_of(v) {
                let dd = r.dir(d);
                if let Some(i) = dd.index_of(v) {
                    let w = dd.wts_at(i);
                    let mut k = 0;
                    let stop = dd.find_at(i, |x| {
                        k += 1;
                        f(x, w.get(k - 1).copied().unwrap_or(1.0))
                    });
                    if stop {
                        return true;
                    }
                }
            }
            return false;
        }
        self.find_weighted_resolving(d, v, f)
    }

    /// [`Snapshot::find_weighted`] when tombstones must be resolved: an add survives unless
    /// a newer run tombstones it (a re-add there is reported from that newer run).
    #[cold]
    fn find_weighted_resolving<F: FnMut(VertexId, f64) -> bool>(
        &self,
        d: Dir,
        v: VertexId,
        mut f: F,
    ) -> bool {
        // Runs are few (the compaction policy bounds them): no allocation per vertex, but
        // for the lists of packed runs, decoded here.
        let mut buf: [(&[VertexId], &[f64], &[VertexId]); 32] = [(&[], &[], &[]); 32];
        let mut k = 0;
        let mut spill = Vec::new();
        let decoded: Vec<Vec<VertexId>> = self
            .runs_of(v)
            .map(|r| r.dir(d))
            .filter(|dd| dd.is_packed())
            .map(|dd| {
                let mut out = Vec::new();
                if let Some(i) = dd.index_of(v) {
                    dd.adds_into(i, &mut out);
                }
                out
            })
            .collect();
        let mut next_decoded = decoded.iter();
        for r in self.runs_of(v) {
            let dd = r.dir(d);
            let lists: &[VertexId] = if dd.is_packed() {
                next_decoded.next().expect("one per packed run")
            } else {
                &[]
            };
            if let Some(i) = dd.index_of(v) {
                let adds = if dd.is_packed() { lists } else { dd.adds_at(i) };
                let p = (adds, dd.wts_at(i), dd.tombs_at(i));
                if k < buf.len() {
                    buf[k] = p;
                    k += 1;
                } else {
                    spill.push(p);
                }
            }
        }
        if !spill.is_empty() {
            spill.splice(0..0, buf.iter().copied());
        }
        let parts: &[(&[VertexId], &[f64], &[VertexId])] =
            if spill.is_empty() { &buf[..k] } else { &spill };
        let tombs = self.tombs[dir_index(d)];
        for (i, (a, w, _)) in parts.iter().enumerate() {
            for (k, &x) in a.iter().enumerate() {
                let dead = tombs
                    && parts[i + 1..]
                        .iter()
                        .any(|(_, _, t)| t.binary_search(&x).is_ok());
                if !dead && f(x, w.get(k).copied().unwrap_or(1.0)) {
                    return true;
                }
            }
        }
        false
    }

    /// The general case: an add survives unless a newer run tombstones it (a re-add there
    /// is reported from that newer run).
    #[cold]
    fn find_resolving<F: FnMut(VertexId) -> bool>(&self, d: Dir, v: VertexId, mut f: F) -> bool {
        self.find_weighted_resolving(d, v, |x, _| f(x))
    }
}

impl Snapshot {
    /// Neighbors of `v` sorted: a copy when one run holds them all (runs keep each vertex's
    /// neighbors sorted), else gathered and sorted.
    fn sorted(&self, d: Dir, v: VertexId, out: &mut Vec<VertexId>) {
        if let Some(p) = self.point_dir(d) {
            return p.sorted(v, out);
        }
        out.clear();
        if let Some(c) = self.runs_copy(d) {
            out.extend_from_slice(c.list(v));
            out.sort_unstable();
            return;
        }
        let mut holders = 0;
        let mut only: Option<(&DirData, usize)> = None;
        if !self.tombs[dir_index(d)] {
            for r in self.runs_of(v) {
                let dd = r.dir(d);
                if let Some(i) = dd.index_of(v) {
                    if dd.degree_at(i) > 0 {
                        holders += 1;
                        only = Some((dd, i));
                    }
                }
            }
            if holders <= 1 {
                if let Some((dd, i)) = only {
                    out.reserve(dd.degree_at(i));
                    dd.find_at(i, |x| {
                        out.push(x);
                        false
                    });
                }
                return;
            }
        }
        self.find(d, v, |w| {
            out.push(w);
            false
        });
        out.sort_unstable();
    }
}

/// Whether `v` is below `n` and not marked in the `deleted` bitmap.
#[inline]
pub(crate) fn exists(n: usize, deleted: &[u64], v: VertexId) -> bool {
    (v as usize) < n && !bits::get(deleted, v)
}

#[inline]
fn dir_index(d: Dir) -> usize {
    match d {
        Dir::Out => 0,
        Dir::In => 1,
    }
}

impl GraphView for Snapshot {
    fn num_vertices(&self) -> usize {
        self.n
    }
    fn external_id(&self, v: VertexId) -> u64 {
        self.externals[v as usize]
    }
    fn num_edges(&self) -> u64 {
        self.edges
    }
    fn is_undirected(&self) -> bool {
        self.undirected
    }
    fn vertex_exists(&self, v: VertexId) -> bool {
        exists(self.n, &self.deleted, v)
    }
    fn out_degree(&self, v: VertexId) -> usize {
        self.degree(Dir::Out, v)
    }
    fn in_degree(&self, v: VertexId) -> usize {
        self.degree(Dir::In, v)
    }
    fn out_degrees(&self) -> Vec<usize> {
        self.degrees(Dir::Out)
    }
    // A list copied out of the runs is read here, in the method the kernel calls, rather
    // than in `find`: a kernel's closure called from `find`'s several loops was compiled
    // as a call per edge, which made gap-sssp's relaxations on the copy slower than on
    // a compacted store's compressed run.
    #[inline]
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        if let Some(c) = self.runs_copy(Dir::Out) {
            return c.list(v).iter().copied().for_each(f);
        }
        self.find(Dir::Out, v, |x| {
            f(x);
            false
        });
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        if let Some(c) = self.runs_copy(Dir::In) {
            return c.list(v).iter().copied().for_each(f);
        }
        self.find(Dir::In, v, |x| {
            f(x);
            false
        });
    }
    #[inline]
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        if let Some(c) = self.runs_copy(Dir::Out) {
            return c.list(v).iter().copied().any(f);
        }
        self.find(Dir::Out, v, f)
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        if let Some(c) = self.runs_copy(Dir::In) {
            return c.list(v).iter().copied().any(f);
        }
        self.find(Dir::In, v, f)
    }
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.sorted(Dir::Out, v, out)
    }
    fn is_weighted(&self) -> bool {
        self.weighted
    }
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        if let Some(c) = self.runs_copy(Dir::Out) {
            return flat::each_weighted(c.list(v), c.weights(v), f);
        }
        self.find_weighted(Dir::Out, v, |x, w| {
            f(x, w);
            false
        });
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.sorted(Dir::In, v, out)
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.has_dir_edge(Dir::Out, u, v)
    }
    fn sweep_in<S: SweepIn>(&self, s: &mut S) {
        match self.runs_stream() {
            Some(stream) => stream.sweep(self, s),
            None => s.visit(0..self.n, self),
        }
    }
    fn sweep_out<S: SweepIn>(&self, s: &mut S) {
        match self.runs_stream_out() {
            Some(stream) => stream.sweep(self, s),
            None => s.visit(0..self.n, self),
        }
    }
}

impl Snapshot {
    /// Whether the edge `u -> v` exists, by dense ids (see [`crate::Graph::dense_id`]; ids
    /// past [`GraphView::num_vertices`] have no edges). Each run holding `u` answers with a
    /// binary search of `u`'s sorted list, or in compressed runs a search of the list's skip
    /// table and one block of at most 129 ids decoded: O(log d) per run, newest run first.
    pub fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.has_dir_edge(Dir::Out, u, v)
    }

    /// The weight of the edge `u -> v` by dense ids, if it exists: 1 in unweighted stores.
    /// O(log d) per run holding `u`, as [`Snapshot::has_edge`].
    pub fn edge_weight(&self, u: VertexId, v: VertexId) -> Option<f64> {
        if self.point.is_some() {
            // A point's store is unweighted.
            return self.has_dir_edge(Dir::Out, u, v).then_some(1.0);
        }
        let (d, i, k) = self.find_edge(Dir::Out, u, v)?;
        Some(d.wts_at(i).get(k).copied().unwrap_or(1.0))
    }

    /// [`Snapshot::edge_weight`], searching the shorter of `u`'s out-list and `v`'s in-list
    /// where the store is unweighted (a hub's list is long, and most edges have an end
    /// that is not a hub).
    pub(crate) fn edge_state(&self, u: VertexId, v: VertexId) -> Option<f64> {
        if self.is_weighted() || self.undirected || self.point.is_some() {
            return self.edge_weight(u, v);
        }
        match self.degree(Dir::Out, u) <= self.degree(Dir::In, v) {
            true => self.find_edge(Dir::Out, u, v).map(|_| 1.0),
            false => self.find_edge(Dir::In, v, u).map(|_| 1.0),
        }
    }

    /// Whether `v` is in `u`'s adjacency in direction `d`.
    pub(crate) fn has_dir_edge(&self, dir: Dir, u: VertexId, v: VertexId) -> bool {
        if let Some(p) = self.point_dir(dir) {
            return p.has(u, v);
        }
        self.find_edge(dir, u, v).is_some()
    }

    /// Where the live edge `u -> v` of direction `dir` is held: the newest run that
    /// mentions it decides, and `(direction, index of u, position of v)` is returned if that
    /// run adds it.
    fn find_edge(&self, dir: Dir, u: VertexId, v: VertexId) -> Option<(&DirData, usize, usize)> {
        for r in self.runs_of(u).rev() {
            let d = r.dir(dir);
            if let Some(i) = d.index_of(u) {
                // An add beside a tombstone in one run is a weight update: the edge exists.
                if let Some(k) = d.position_at(i, v) {
                    return Some((d, i, k));
                }
                if d.tombs_at(i).binary_search(&v).is_ok() {
                    return None;
                }
            }
        }
        None
    }
}

/// Bytes a copy takes from a kernel's copy budget: its own once made (none if it did not
/// fit), or `under_way`'s estimate while another caller makes it (`crate::build_once`):
/// counted as made, as waiting for it would have.
fn budget_taken<T>(
    made: Option<&Option<T>>,
    bytes: impl FnOnce(&T) -> u64,
    under_way: impl FnOnce() -> u64,
) -> u64 {
    match made {
        Some(c) => c.as_ref().map_or(0, bytes),
        None => under_way(),
    }
}
