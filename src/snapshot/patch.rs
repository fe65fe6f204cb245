//! A snapshot with edge changes patched over it in DRAM: the graph a standing kernel reads
//! between two seals.
//!
//! A kernel kept current reads, per batch, the lists of the few vertices the batch reaches.
//! Sealing every batch into a run to read them costs more than that (a sort, a resolution
//! against the older runs, a merge of small runs now and then, a new snapshot). [`Patched`]
//! instead keeps each changed edge's state in a sorted list per vertex and direction, and
//! reads a vertex's lists as the snapshot's less the patched neighbors, plus the patched
//! neighbors that are present. A vertex without a patch reads as in the snapshot, after one
//! lookup in a slot array.
//!
//! Edges are patched, and vertices new since the snapshot added (with their external ids);
//! vertex inserts and deletes of other kinds go through a seal (whoever keeps a `Patched`
//! starts over from a new snapshot then).

use super::{GraphView, Key, Snapshot};
use crate::types::VertexId;

/// No patch list: the slot's value for a vertex without one.
const NO_LIST: u32 = u32::MAX;

/// One direction's patched neighbors of a vertex.
#[derive(Clone, Default)]
struct List {
    /// Neighbors, ascending, each with its state: its weight if present, `None` if absent.
    entries: Vec<(VertexId, Option<f64>)>,
    /// The degree change against the snapshot.
    degree: i64,
}

impl List {
    fn find(&self, x: VertexId) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&x, |e| e.0)
    }
}

/// A snapshot and edge changes over it; implements [`GraphView`].
#[derive(Clone)]
pub struct Patched {
    base: Snapshot,
    /// Per direction (out, in; in is unused in an undirected graph), per vertex: its index in
    /// `lists`, or [`NO_LIST`]. Empty until the first patch.
    slots: [Vec<u32>; 2],
    lists: Vec<List>,
    /// Edges patched (each direction of an undirected edge counts), for a patch budget.
    entries: usize,
    /// The change to [`GraphView::num_edges`].
    edges: i64,
    /// The external ids of the vertices added since the snapshot, which follow its own.
    added: Vec<u64>,
}

impl Patched {
    /// `base` with nothing patched.
    pub(crate) fn new(base: Snapshot) -> Patched {
        Patched {
            base,
            slots: [Vec::new(), Vec::new()],
            lists: Vec::new(),
            entries: 0,
            edges: 0,
            added: Vec::new(),
        }
    }

    /// Adds vertices after the ones the graph has, with these external ids; each exists,
    /// without edges.
    pub(crate) fn add_vertices(&mut self, externals: &[u64]) {
        self.added.extend_from_slice(externals);
        let n = self.num_vertices();
        for s in self.slots.iter_mut().filter(|s| !s.is_empty()) {
            s.resize(n, NO_LIST);
        }
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
    /// absent ones `None`.
    pub(crate) fn patched_edges(&self) -> Vec<(VertexId, VertexId, Option<f64>)> {
        let mut out = Vec::with_capacity(self.entries);
        for (v, &li) in self.slots[0].iter().enumerate() {
            if li == NO_LIST {
                continue;
            }
            let v = v as VertexId;
            for &(x, s) in &self.lists[li as usize].entries {
                if !self.base.is_undirected() || v <= x {
                    out.push((v, x, s));
                }
            }
        }
        out
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
        self.entries > 0 || !self.added.is_empty()
    }

    /// How many list entries the patch holds (an undirected edge counts twice).
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// DRAM the patch takes, in bytes.
    pub fn bytes(&self) -> usize {
        let per_entry = std::mem::size_of::<(VertexId, Option<f64>)>();
        (self.slots[0].capacity() + self.slots[1].capacity()) * 4
            + self.lists.capacity() * std::mem::size_of::<List>()
            + self.entries * per_entry
            + self.added.capacity() * 8
    }

    /// The state of the edge `u -> v`: its weight (1 in unweighted graphs) if present.
    pub(crate) fn edge(&self, u: VertexId, v: VertexId) -> Option<f64> {
        match self.list(0, u).map(|l| (l, l.find(v))) {
            Some((l, Ok(i))) => l.entries[i].1,
            _ if self.in_base(u) && self.in_base(v) => self.base.edge_state(u, v),
            _ => None,
        }
    }

    /// The weight of the edge `u -> v` if it exists (1 in unweighted graphs), as
    /// [`Snapshot::edge_weight`].
    pub fn edge_weight(&self, u: VertexId, v: VertexId) -> Option<f64> {
        self.edge(u, v)
    }

    /// Sets edges: `(u, v, before, after)` sets `u -> v` (both directions in an undirected
    /// graph) from `before`, its state now as [`Patched::edge`] gives it, to `after` (a
    /// weight if present, `None` if absent). An edge appears once; both ends are vertices
    /// of the graph. New entries are merged into each list once, sorted:
    /// a hub's list takes one merge per call, not a shift per entry.
    pub(crate) fn set_edges(&mut self, edges: &[(VertexId, VertexId, Option<f64>, Option<f64>)]) {
        use rayon::prelude::*;
        let n = self.num_vertices();
        if self.slots[0].is_empty() {
            self.slots[0] = vec![NO_LIST; n];
            if !self.base.is_undirected() {
                self.slots[1] = vec![NO_LIST; n];
            }
        }
        let mut fresh: Vec<(u32, VertexId, Option<f64>)> = Vec::new();
        for &(u, v, before, after) in edges {
            assert!(
                (u as usize) < n && (v as usize) < n,
                "patched edges join vertices"
            );
            let step = after.is_some() as i64 - before.is_some() as i64;
            self.put(0, u, v, after, step, &mut fresh);
            match self.base.is_undirected() {
                true if u != v => {
                    self.put(0, v, u, after, step, &mut fresh);
                    self.edges += 2 * step;
                }
                true => self.edges += step,
                false => {
                    self.put(1, v, u, after, step, &mut fresh);
                    self.edges += step;
                }
            }
        }
        fresh.par_sort_unstable_by_key(|e| (e.0, e.1));
        self.entries += fresh.len();
        for group in fresh.chunk_by(|a, b| a.0 == b.0) {
            merge_into(&mut self.lists[group[0].0 as usize].entries, group);
        }
    }

    /// Sets `x` in the list of `v` in direction `d` to `state` if it is there, else queues
    /// it in `fresh`; the degree moves by `step`.
    fn put(
        &mut self,
        d: usize,
        v: VertexId,
        x: VertexId,
        state: Option<f64>,
        step: i64,
        fresh: &mut Vec<(u32, VertexId, Option<f64>)>,
    ) {
        let slot = self.slots[d][v as usize];
        let li = if slot == NO_LIST {
            self.lists.push(List::default());
            let li = (self.lists.len() - 1) as u32;
            self.slots[d][v as usize] = li;
            li
        } else {
            slot
        };
        let list = &mut self.lists[li as usize];
        list.degree += step;
        match list.find(x) {
            Ok(i) => list.entries[i].1 = state,
            Err(_) => fresh.push((li, x, state)),
        }
    }

    /// The patch list of `v` in direction `d` (out for 0), if it has one.
    #[inline]
    fn list(&self, d: usize, v: VertexId) -> Option<&List> {
        let d = if self.base.is_undirected() { 0 } else { d };
        match self.slots[d].get(v as usize) {
            Some(&li) if li != NO_LIST => Some(&self.lists[li as usize]),
            _ => None,
        }
    }

    /// Calls `f` on each neighbor of `v` in direction `d` with its weight, until it
    /// returns true; whether it did.
    #[inline]
    fn find_dir<F: FnMut(VertexId, f64) -> bool>(&self, d: usize, v: VertexId, mut f: F) -> bool {
        let Some(list) = self.list(d, v) else {
            return self.base_find(d, v, f);
        };
        let found = self.base_find(d, v, |x, w| list.find(x).is_err() && f(x, w));
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

/// Merges `new` (ascending by neighbor, none already in `list`) into `list`.
fn merge_into(list: &mut Vec<(VertexId, Option<f64>)>, new: &[(u32, VertexId, Option<f64>)]) {
    let old = std::mem::take(list);
    let mut out = Vec::with_capacity(old.len() + new.len());
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        let take_old = j == new.len() || (i < old.len() && old[i].0 < new[j].1);
        if take_old {
            out.push(old[i]);
            i += 1;
        } else {
            out.push((new[j].1, new[j].2));
            j += 1;
        }
    }
    *list = out;
}

impl GraphView for Patched {
    fn num_vertices(&self) -> usize {
        self.base.num_vertices() + self.added.len()
    }
    fn num_edges(&self) -> u64 {
        (self.base.num_edges() as i64 + self.edges) as u64
    }
    fn is_undirected(&self) -> bool {
        self.base.is_undirected()
    }
    fn vertex_exists(&self, v: VertexId) -> bool {
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
    fn out_degree(&self, v: VertexId) -> usize {
        let d = self.list(0, v).map_or(0, |l| l.degree);
        let base = if self.in_base(v) {
            self.base.out_degree(v)
        } else {
            0
        };
        (base as i64 + d) as usize
    }
    fn in_degree(&self, v: VertexId) -> usize {
        let d = self.list(1, v).map_or(0, |l| l.degree);
        let base = if self.in_base(v) {
            self.base.in_degree(v)
        } else {
            0
        };
        (base as i64 + d) as usize
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
                    .map(|(&(u, v), &on)| (u, v, p.edge(u, v), on.then_some(1.0)))
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
