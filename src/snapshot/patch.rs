//! A snapshot with edge changes patched over it in DRAM: the graph a standing kernel reads
//! between two seals.
//!
//! A kernel kept current reads, per batch, the lists of the few vertices the batch reaches.
//! Sealing every batch into a run to read them costs more than that (a sort, a resolution
//! against the older runs, a merge of small runs now and then, a new snapshot). [`Patched`]
//! instead keeps each updated edge's state in a list per vertex and direction, and reads a
//! vertex's lists as the snapshot's less the patched neighbors, plus the patched neighbors
//! that are present. A vertex without a patch reads as in the snapshot, after one probe of
//! a map of the patched vertices.
//!
//! Patching an edge does not look at the snapshot: whether the update changed anything
//! (an insert of an edge already there, a delete of one never there) is not resolved. That
//! lookup, a search of a long hub list for most of a Kron graph's updates, was most of a
//! step's cost; degrees and the edge count, which need it, resolve on demand instead.
//!
//! Edges are patched, vertices new since the snapshot added (with their external ids), and
//! vertices deleted or brought back marked (a delete's edge deletes are patched with it).

use super::{GraphView, Key, Snapshot};
use crate::build_once::BuildOnce;
use crate::types::VertexId;
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// Lists up to this long are scanned for a neighbor; longer ones (hubs') get a hash index.
const SCAN_MOST: usize = 16;

/// A patched neighbor and its state: its weight if present, `None` if absent.
type Slot = (VertexId, Option<f64>);

/// One direction's patched neighbors of a vertex: a range of its side's arena.
#[derive(Clone, Default)]
struct List {
    /// Where its range starts, how much of it is used, how long it is.
    start: u32,
    len: u32,
    cap: u32,
    /// Each neighbor's position in the range, once there are more than [`SCAN_MOST`].
    index: Option<Box<FxHashMap<VertexId, u32>>>,
}

/// A list as read: its neighbors in order of first patch, and their index.
#[derive(Clone, Copy)]
struct ListRef<'a> {
    entries: &'a [Slot],
    index: Option<&'a FxHashMap<VertexId, u32>>,
}

impl ListRef<'_> {
    /// The position of neighbor `x`, if patched.
    #[inline]
    fn find(&self, x: VertexId) -> Option<usize> {
        match self.index {
            Some(ix) => ix.get(&x).map(|&i| i as usize),
            None => self.entries.iter().position(|e| e.0 == x),
        }
    }
}

/// One direction's patch lists.
#[derive(Clone, Default)]
struct Side {
    /// The list of each vertex that has one: a map, not an array per vertex, as a patch
    /// reaches few of a large graph's vertices (an array took 4 B per vertex and
    /// direction, 134 MB at Kron24, whatever the patch held). The list's header sits in
    /// the map itself: a put is one probe there and one in the arena, each a cache miss
    /// once the patch outgrows the caches.
    lists: FxHashMap<VertexId, List>,
    /// Every list's entries, each list in a range of its own. A list that fills moves to
    /// the end, in a range twice as long; the range it leaves is not reused. One
    /// allocation for all: a `Vec` per list cost a free per list when a patch was
    /// dropped, 70 % of a seal's step while a Kron22 ingest was followed.
    arena: Vec<Slot>,
}

impl Side {
    /// The list of `v`, if it has one.
    #[inline]
    fn list(&self, v: VertexId) -> Option<ListRef<'_>> {
        match self.lists.is_empty() {
            true => None,
            false => (self.lists.get(&v)).map(|l| self.read(l)),
        }
    }

    #[inline]
    fn read<'a>(&'a self, l: &'a List) -> ListRef<'a> {
        let at = l.start as usize;
        ListRef {
            entries: &self.arena[at..at + l.len as usize],
            index: l.index.as_deref(),
        }
    }

    /// Each vertex with a list, and the list.
    fn each(&self) -> impl Iterator<Item = (VertexId, ListRef<'_>)> {
        (self.lists.iter()).map(|(&v, l)| (v, self.read(l)))
    }

    /// Applies `puts` (vertex, neighbor, state; no two for one neighbor of a vertex), one
    /// vertex's after another's; returns how many list entries are new. Grouped by vertex,
    /// a list is found and grown once per batch.
    fn put_all(&mut self, mut puts: Vec<(VertexId, VertexId, Option<f64>)>) -> usize {
        puts.sort_unstable_by_key(|p| p.0);
        let mut fresh = 0;
        for group in puts.chunk_by(|a, b| a.0 == b.0) {
            let list = self.lists.entry(group[0].0).or_default();
            if list.len as usize + group.len() > list.cap as usize {
                grow(list, &mut self.arena, list.len as usize + group.len());
            }
            fresh += (group.iter())
                .filter(|&&(_, x, state)| set(list, &mut self.arena, x, state))
                .count();
        }
        fresh
    }

    /// Forgets every list, keeping the DRAM.
    fn clear(&mut self) {
        self.lists.clear();
        self.arena.clear();
    }

    fn bytes(&self) -> usize {
        let indexed = |l: &List| l.index.as_ref().map_or(0, |ix| ix.capacity() * 16);
        self.lists.capacity() * (std::mem::size_of::<(VertexId, List)>() + 1)
            + self.arena.capacity() * std::mem::size_of::<Slot>()
            + self.lists.values().map(indexed).sum::<usize>()
    }
}

/// Moves `list` to the end of `arena` in a range of at least `need` entries (twice its
/// length, at least 4).
fn grow(list: &mut List, arena: &mut Vec<Slot>, need: usize) {
    let cap = need.max(2 * list.cap as usize).max(4);
    let (from, start) = (list.start as usize, arena.len());
    assert!(
        start + cap <= u32::MAX as usize,
        "a patch's arena fits u32 positions"
    );
    arena.extend_from_within(from..from + list.len as usize);
    arena.resize(start + cap, (0, None));
    (list.start, list.cap) = (start as u32, cap as u32);
}

/// Sets neighbor `x` of `list` (with room for one more) to `state`; whether it is a new
/// entry.
fn set(list: &mut List, arena: &mut [Slot], x: VertexId, state: Option<f64>) -> bool {
    let at = list.start as usize;
    let found = match &mut list.index {
        // One probe of the index: the entry is found or its place taken.
        Some(ix) => match ix.entry(x) {
            Entry::Occupied(o) => Some(*o.get() as usize),
            Entry::Vacant(v) => {
                v.insert(list.len);
                None
            }
        },
        None => (arena[at..at + list.len as usize].iter()).position(|e| e.0 == x),
    };
    if let Some(i) = found {
        arena[at + i].1 = state;
        return false;
    }
    debug_assert!(list.len < list.cap, "room was made for the group");
    arena[at + list.len as usize] = (x, state);
    list.len += 1;
    if list.index.is_none() && list.len as usize > SCAN_MOST {
        let used = &arena[at..at + list.len as usize];
        let ix = (used.iter().enumerate())
            .map(|(i, e)| (e.0, i as u32))
            .collect();
        list.index = Some(Box::new(ix));
    }
    true
}

/// A snapshot and edge changes over it; implements [`GraphView`].
#[derive(Clone)]
pub struct Patched {
    base: Snapshot,
    /// Per direction: out, in (unused in an undirected graph, whose lists are all out).
    sides: [Side; 2],
    /// Edges patched (each direction of an undirected edge counts), for a patch budget.
    entries: usize,
    /// [`GraphView::num_edges`], resolved on first use after a patch.
    edges: BuildOnce<u64>,
    /// The external ids of the vertices added since the snapshot, which follow its own.
    added: Vec<u64>,
    /// Vertices deleted or brought back since the snapshot: whether each exists now. A
    /// vertex delete reaches the patch as the deletes of its edges and this mark.
    live: FxHashMap<VertexId, bool>,
}

impl Patched {
    /// `base` with nothing patched.
    pub(crate) fn new(base: Snapshot) -> Patched {
        Patched {
            base,
            sides: Default::default(),
            entries: 0,
            edges: BuildOnce::default(),
            added: Vec::new(),
            live: FxHashMap::default(),
        }
    }

    /// Patches over `base` from nothing, in the DRAM the patch has: freeing a full patch
    /// and faulting in a new one cost more than reusing it (an unmap of its arena, and a
    /// fault per page touched again).
    pub(crate) fn rebase(&mut self, base: Snapshot) {
        self.sides.iter_mut().for_each(Side::clear);
        self.entries = 0;
        self.edges = BuildOnce::default();
        self.added.clear();
        self.live.clear();
        self.base = base;
    }

    /// Marks vertex `v` (of the graph) as existing or deleted, whatever it was. Its
    /// edges are the caller's to patch: a delete's edge deletes come with it.
    pub(crate) fn set_vertex(&mut self, v: VertexId, exists: bool) {
        assert!(
            (v as usize) < self.num_vertices(),
            "a patched vertex is the graph's"
        );
        self.live.insert(v, exists);
    }

    /// Adds vertices after the ones the graph has, with these external ids; each exists,
    /// without edges.
    pub(crate) fn add_vertices(&mut self, externals: &[u64]) {
        self.added.extend_from_slice(externals);
        self.edges = BuildOnce::default();
    }

    /// The external ids of the vertices added since the snapshot.
    pub fn added_vertices(&self) -> &[u64] {
        &self.added
    }

    /// The key of vertex `v` (see [`Snapshot::key`]).
    pub fn key(&self, v: VertexId) -> Key<'_> {
        match self.in_base(v) {
            true => self.base.key(v),
            // Added vertices come from integer-keyed stores only (whoever patches seals when
            // a string-keyed store names a new vertex).
            false => Key::Id(self.external_id(v)),
        }
    }

    /// Every patched edge with its state, once per edge (an undirected one by its smaller
    /// end first), for sealing the patch into a run: present edges with their weight,
    /// absent ones `None` (whether or not the snapshot has them).
    pub(crate) fn patched_edges(&self) -> Vec<(VertexId, VertexId, Option<f64>)> {
        let mut out = Vec::with_capacity(self.entries);
        for (v, list) in self.sides[0].each() {
            for &(x, s) in list.entries {
                if !self.base.is_undirected() || v <= x {
                    out.push((v, x, s));
                }
            }
        }
        out
    }

    /// The vertices deleted or brought back since the snapshot, and whether each exists.
    pub(crate) fn vertex_marks(&self) -> impl Iterator<Item = (VertexId, bool)> + '_ {
        self.live.iter().map(|(&v, &exists)| (v, exists))
    }

    /// Whether `v` is one of the snapshot's vertices.
    #[inline]
    fn in_base(&self, v: VertexId) -> bool {
        (v as usize) < self.base.num_vertices()
    }

    /// The snapshot patched over.
    pub fn base(&self) -> &Snapshot {
        &self.base
    }

    /// Whether any edge is patched.
    pub fn is_patched(&self) -> bool {
        self.entries > 0 || !self.added.is_empty() || !self.live.is_empty()
    }

    /// How many list entries the patch holds (an undirected edge counts twice).
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// DRAM the patch takes, in bytes.
    pub fn bytes(&self) -> usize {
        self.sides.iter().map(Side::bytes).sum::<usize>() + self.added.capacity() * 8
    }

    /// The state of the edge `u -> v`: its weight (1 in unweighted graphs) if present.
    pub(crate) fn edge(&self, u: VertexId, v: VertexId) -> Option<f64> {
        match self
            .list(0, u)
            .and_then(|l| l.find(v).map(|i| l.entries[i].1))
        {
            Some(state) => state,
            None => self.base_edge(u, v),
        }
    }

    /// The state of `u -> v` in the snapshot.
    fn base_edge(&self, u: VertexId, v: VertexId) -> Option<f64> {
        match self.in_base(u) && self.in_base(v) {
            true => self.base.edge_state(u, v),
            false => None,
        }
    }

    /// How far patching moved the degree of `v` in direction `d`: each entry's state now
    /// against the snapshot's.
    fn degree_change(&self, d: usize, v: VertexId, list: ListRef<'_>) -> i64 {
        let was = |x: VertexId| match d {
            0 => self.base_edge(v, x),
            _ => self.base_edge(x, v),
        };
        (list.entries.iter())
            .map(|&(x, s)| s.is_some() as i64 - was(x).is_some() as i64)
            .sum()
    }

    /// The degree of `v` in direction `d` (out for 0).
    fn degree(&self, d: usize, v: VertexId) -> usize {
        let base = match (self.in_base(v), d) {
            (false, _) => 0,
            (true, 0) => self.base.out_degree(v),
            (true, _) => self.base.in_degree(v),
        };
        let change = self.list(d, v).map_or(0, |l| self.degree_change(d, v, l));
        (base as i64 + change) as usize
    }

    /// The edge count: the snapshot's, moved by every out-list's degree change (an
    /// undirected edge is in two lists, as it counts twice; a loop in one).
    fn count_edges(&self) -> u64 {
        use rayon::prelude::*;
        let lists: Vec<(VertexId, ListRef<'_>)> = self.sides[0].each().collect();
        let change: i64 = (lists.par_iter())
            .map(|&(v, list)| self.degree_change(0, v, list))
            .sum();
        (self.base.num_edges() as i64 + change) as u64
    }

    /// The weight of the edge `u -> v` if it exists (1 in unweighted graphs), as
    /// [`Snapshot::edge_weight`].
    pub fn edge_weight(&self, u: VertexId, v: VertexId) -> Option<f64> {
        self.edge(u, v)
    }

    /// Sets edges: `(u, v, state)` sets `u -> v` (both directions in an undirected graph)
    /// to `state`, a weight if present, `None` if absent, whatever it was. Both ends are
    /// vertices of the graph; an edge appears at most once (in an undirected graph, by one
    /// end only). In a directed graph the
    /// out-lists and the in-lists are set in parallel.
    pub(crate) fn set_edges(&mut self, edges: &[(VertexId, VertexId, Option<f64>)]) {
        let n = self.num_vertices();
        let undirected = self.base.is_undirected();
        self.edges = BuildOnce::default();
        assert!(
            (edges.iter()).all(|&(u, v, _)| (u as usize) < n && (v as usize) < n),
            "patched edges join vertices"
        );
        let flipped = |&(u, v, s): &(VertexId, VertexId, Option<f64>)| (v, u, s);
        let [out, inn] = &mut self.sides;
        let fresh = match undirected {
            true => {
                let loops = |e: &&(VertexId, VertexId, Option<f64>)| e.0 != e.1;
                let both = (edges.iter().copied()).chain(edges.iter().filter(loops).map(flipped));
                out.put_all(both.collect())
            }
            false => {
                let (a, b) = rayon::join(
                    || out.put_all(edges.to_vec()),
                    || inn.put_all(edges.iter().map(flipped).collect()),
                );
                a + b
            }
        };
        self.entries += fresh;
    }

    /// The patch list of `v` in direction `d` (out for 0), if it has one.
    #[inline]
    fn list(&self, d: usize, v: VertexId) -> Option<ListRef<'_>> {
        let d = if self.base.is_undirected() { 0 } else { d };
        self.sides[d].list(v)
    }

    /// Calls `f` on each neighbor of `v` in direction `d` with its weight, until it
    /// returns true; whether it did.
    #[inline]
    fn find_dir<F: FnMut(VertexId, f64) -> bool>(&self, d: usize, v: VertexId, mut f: F) -> bool {
        let Some(list) = self.list(d, v) else {
            return self.base_find(d, v, f);
        };
        let found = self.base_find(d, v, |x, w| list.find(x).is_none() && f(x, w));
        found || (list.entries.iter()).any(|&(x, s)| s.is_some_and(|w| f(x, w)))
    }

    /// [`Patched::find_dir`] on the snapshot alone.
    #[inline]
    fn base_find<F: FnMut(VertexId, f64) -> bool>(&self, d: usize, v: VertexId, mut f: F) -> bool {
        if !self.in_base(v) {
            return false;
        }
        match d {
            0 if self.base.is_weighted() => {
                let mut found = false;
                self.base.for_each_out_weighted(v, |x, w| {
                    found = found || f(x, w);
                });
                found
            }
            0 => self.base.find_out(v, |x| f(x, 1.0)),
            _ => self.base.find_in(v, |x| f(x, 1.0)),
        }
    }
}

impl GraphView for Patched {
    fn num_vertices(&self) -> usize {
        self.base.num_vertices() + self.added.len()
    }
    /// Resolves the patch against the snapshot on first use after a patch: a lookup per
    /// patched edge (counted again by a caller that finds another counting).
    fn num_edges(&self) -> u64 {
        let counted = self.edges.get_or_build(|| self.count_edges()).copied();
        counted.unwrap_or_else(|| self.count_edges())
    }
    fn is_undirected(&self) -> bool {
        self.base.is_undirected()
    }
    fn vertex_exists(&self, v: VertexId) -> bool {
        if let Some(&exists) = self.live.get(&v) {
            return exists;
        }
        match self.in_base(v) {
            true => self.base.vertex_exists(v),
            false => (v as usize) < self.num_vertices(),
        }
    }
    fn external_id(&self, v: VertexId) -> u64 {
        match self.in_base(v) {
            true => self.base.external_id(v),
            false => self.added[v as usize - self.base.num_vertices()],
        }
    }
    /// Costs a lookup in the snapshot per patched neighbor of `v`.
    fn out_degree(&self, v: VertexId) -> usize {
        self.degree(0, v)
    }
    /// Costs a lookup in the snapshot per patched neighbor of `v`.
    fn in_degree(&self, v: VertexId) -> usize {
        self.degree(1, v)
    }
    #[inline]
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.find_dir(0, v, |x, _| {
            f(x);
            false
        });
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.find_dir(1, v, |x, _| {
            f(x);
            false
        });
    }
    #[inline]
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        self.find_dir(0, v, |x, _| f(x))
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        self.find_dir(1, v, |x, _| f(x))
    }
    fn is_weighted(&self) -> bool {
        self.base.is_weighted()
    }
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        self.find_dir(0, v, |x, w| {
            f(x, w);
            false
        });
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.edge(u, v).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Graph, Options};
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    /// Random edge changes patched over a snapshot read as the graph they make.
    #[test]
    fn a_patched_snapshot_reads_as_the_graph_it_stands_for() {
        for undirected in [false, true] {
            let g = Graph::in_memory(Options::new().undirected(Some(undirected))).unwrap();
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
            let n = 40u64;
            let first: Vec<(u64, u64)> = (0..300)
                .map(|_| (rng.random_range(0..n), rng.random_range(0..n)))
                .chain((0..n).map(|i| (i, i)))
                .collect();
            g.insert_edges(&first).unwrap();
            let s = g.snapshot().unwrap();
            let id = |x: u64| g.dense_id(x).unwrap().unwrap();
            let mut want: BTreeMap<(VertexId, VertexId), bool> = BTreeMap::new();
            for (u, v) in &first {
                want.insert((id(*u), id(*v)), true);
                if undirected {
                    want.insert((id(*v), id(*u)), true);
                }
            }
            let mut p = Patched::new(s);
            for _ in 0..20 {
                let mut batch = BTreeMap::new();
                for _ in 0..30 {
                    let (u, v) = (id(rng.random_range(0..n)), id(rng.random_range(0..n)));
                    let (u, v) = if undirected {
                        (u.min(v), u.max(v))
                    } else {
                        (u, v)
                    };
                    batch.insert((u, v), rng.random_bool(0.5));
                }
                let edges: Vec<_> = (batch.iter())
                    .map(|(&(u, v), &on)| (u, v, on.then_some(1.0)))
                    .collect();
                p.set_edges(&edges);
                for (&(u, v), &on) in &batch {
                    want.insert((u, v), on);
                    if undirected {
                        want.insert((v, u), on);
                    }
                }
                check(&p, &want);
            }
        }
    }

    fn check(p: &Patched, want: &BTreeMap<(VertexId, VertexId), bool>) {
        let live: Vec<(VertexId, VertexId)> =
            (want.iter()).filter(|e| *e.1).map(|e| *e.0).collect();
        let directed_count = match p.is_undirected() {
            true => live
                .iter()
                .filter(|e| e.0 <= e.1)
                .map(|e| 1 + (e.0 != e.1) as u64)
                .sum(),
            false => live.len() as u64,
        };
        assert_eq!(p.num_edges(), directed_count);
        for v in 0..p.num_vertices() as VertexId {
            let mut out = Vec::new();
            p.for_each_out(v, |x| out.push(x));
            out.sort_unstable();
            let want_out: Vec<_> = live.iter().filter(|e| e.0 == v).map(|e| e.1).collect();
            assert_eq!(out, want_out, "out-list of {v}");
            assert_eq!(p.out_degree(v), want_out.len());
            let mut inn = Vec::new();
            p.for_each_in(v, |x| inn.push(x));
            inn.sort_unstable();
            let mut want_in: Vec<_> = live.iter().filter(|e| e.1 == v).map(|e| e.0).collect();
            want_in.sort_unstable();
            assert_eq!(inn, want_in, "in-list of {v}");
            assert_eq!(p.in_degree(v), want_in.len());
            for &x in &want_out {
                assert!(p.has_edge(v, x));
            }
        }
    }
}
