//! Weakly connected components kept current: each vertex labelled with the smallest dense
//! id in its component, the labels `wcc` computes.
//!
//! Besides the labels, every vertex keeps a *parent*: a neighbor (either direction) with
//! the same label, so that following parents leads to the component's smallest vertex,
//! which has none. The parents form a spanning forest, and a label depends only on the
//! tree path to its root, as KickStarter's dependency trees have it.
//!
//! - An inserted edge joining two components offers each end the other's label; the
//!   larger label gives way to the smaller, spreading through its component.
//! - A deleted edge that is not a tree edge changes nothing. A deleted tree edge (both
//!   directions gone) cuts its subtree off: *trimming* resets every vertex of the subtree
//!   to its own id, the only label it can be sure of, and the subtree then takes the
//!   smallest label among its own ids and its neighbors outside it.
//!
//! Both end in one propagation of smaller labels in increasing order of label (a heap), so
//! each vertex settles once. A vertex outside every cut subtree keeps a label that is still
//! right: its tree path to its root survives, and deleting edges cannot bring a smaller id
//! into its component.

use super::before::Old;
use super::changes::Changes;
use super::engine::Maintained;
use crate::snapshot::{Patched, Snapshot};
use crate::types::VertexId;
use crate::GraphView;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::forest::{self, NONE};

/// Labels and the spanning forest behind them (empty after a recompute, until a step
/// brings the labels forward).
#[derive(Default)]
pub(crate) struct Wcc {
    label: Vec<VertexId>,
    parent: Vec<VertexId>,
    /// Each vertex's depth in the forest: more than its parent's (not always by one).
    depth: Vec<u32>,
}

/// Calls `f` on every neighbor of `v`, either direction.
fn neighbors<G: GraphView>(g: &G, v: VertexId, mut f: impl FnMut(VertexId)) {
    g.for_each_out(v, &mut f);
    if !g.is_undirected() {
        g.for_each_in(v, f);
    }
}

impl Wcc {
    /// Labels from scratch, in parallel: Afforest's (each the smallest id of its
    /// component, as the standing labels are). The forest behind them waits for the next
    /// step that brings them forward, searched in the graph the labels are of
    /// ([`Wcc::forest_in`], before a patch changes it): a rolling wcc whose every step is
    /// large recomputes at each, and built at each recompute the forest took half of every
    /// step (35 of 75 ms at Kron20) and was never read.
    fn compute_on<G: GraphView>(&mut self, g: &G) {
        self.label = crate::algo::gap::cc::afforest(g);
        self.parent.clear();
        self.depth.clear();
    }

    /// The forest behind the labels, searched in `g` (the graph the labels are of) from
    /// every component's smallest vertex at once, unless it is kept already.
    fn forest_in(&mut self, g: &Patched) {
        if self.parent.len() == self.label.len() {
            return;
        }
        (self.parent, self.depth) = match g.is_patched() {
            true => forest::forest(g, &self.label),
            // A sealed graph is a snapshot: searched through its fastest view.
            false => crate::with_view!(g.base(), |view| forest::forest(view, &self.label)),
        };
    }

    /// Labels and forest from scratch on `g`; returns every vertex.
    fn recompute(&mut self, g: &Patched) -> Vec<VertexId> {
        self.compute_on(g);
        self.forest_in(g);
        (0..g.num_vertices() as VertexId).collect()
    }

    /// Grows the arrays to `n` vertices, each new one its own component.
    fn grow(&mut self, n: usize) {
        debug_assert_eq!(self.parent.len(), self.label.len(), "a forest to grow");
        let from = self.label.len() as VertexId;
        self.label.extend(from..n as VertexId);
        self.parent.resize(n, NONE);
        self.depth.resize(n, 0);
    }

    /// Spreads smaller labels from the `offers` (vertex, label, parent) through `g`,
    /// smallest label first; returns the vertices whose label was lowered.
    fn spread<G: GraphView>(
        &mut self,
        g: &G,
        offers: Vec<(VertexId, VertexId, VertexId)>,
    ) -> Vec<VertexId> {
        let mut heap = BinaryHeap::new();
        let mut lowered = Vec::new();
        for (v, l, p) in offers {
            if l < self.label[v as usize] {
                self.label[v as usize] = l;
                self.parent[v as usize] = p;
                self.depth[v as usize] = self.depth[p as usize] + 1;
                heap.push(Reverse((l, v)));
                lowered.push(v);
            }
        }
        while let Some(Reverse((l, v))) = heap.pop() {
            if self.label[v as usize] != l {
                continue;
            }
            let dv = self.depth[v as usize];
            neighbors(g, v, |y| {
                if l < self.label[y as usize] {
                    self.label[y as usize] = l;
                    self.parent[y as usize] = v;
                    self.depth[y as usize] = dv + 1;
                    heap.push(Reverse((l, y)));
                    lowered.push(y);
                }
            });
        }
        lowered
    }

    /// The children whose tree edge went (both directions gone), shallowest first: each
    /// takes another neighbor of its label as its parent if one is shallower (so outside
    /// its subtree; shallowest first, such a neighbor's own tree path survives), else it
    /// and its subtree (found through `old`'s edges: an edge to a parent may be gone in the
    /// new graph) are reset to their own ids.
    fn trim(&mut self, old: &Old<'_>, new: &Patched, ch: &Changes) -> Vec<VertexId> {
        let mut cut = Vec::new();
        for e in (ch.edges.iter()).filter(|e| ch.may_remove(e)) {
            let (a, b) = (e.src, e.dst);
            let child = |c: VertexId, p: VertexId| self.parent.get(c as usize) == Some(&p);
            let (ab, ba) = (child(a, b), child(b, a));
            // The parents first: most deleted edges are not tree edges, and whether the
            // reverse is left is a search of a list (most of a step's time when it came
            // first, 0.5-0.8 µs a change).
            if a == b || !(ab || ba) || new.has_edge(a, b) || new.has_edge(b, a) {
                continue;
            }
            cut.extend(ab.then_some(a).into_iter().chain(ba.then_some(b)));
        }
        cut.sort_by_key(|&c| self.depth[c as usize]);
        cut.dedup();
        let mut trimmed = Vec::new();
        for c in cut {
            if self.label[c as usize] == c {
                continue; // trimmed already, with a subtree cut before it
            }
            match self.another_parent(new, c) {
                Some(w) => self.parent[c as usize] = w,
                None => self.cut_off(old, c, &mut trimmed),
            }
        }
        trimmed
    }

    /// A neighbor of `c` in `new` with `c`'s label, shallower than `c`.
    fn another_parent(&self, new: &Patched, c: VertexId) -> Option<VertexId> {
        if (c as usize) >= new.num_vertices() {
            return None;
        }
        let (l, d) = (self.label[c as usize], self.depth[c as usize]);
        let fits = |w: VertexId| self.label[w as usize] == l && self.depth[w as usize] < d;
        let mut found = None;
        let mut look = |w: VertexId| {
            let ok = fits(w);
            if ok {
                found = Some(w);
            }
            ok
        };
        if !new.find_out(c, &mut look) && !new.is_undirected() {
            new.find_in(c, &mut look);
        }
        found
    }

    /// Resets `c` and its subtree (through `old`'s edges) to their own ids.
    fn cut_off(&mut self, old: &Old<'_>, c: VertexId, trimmed: &mut Vec<VertexId>) {
        let mut stack = vec![c];
        while let Some(x) = stack.pop() {
            if self.label[x as usize] == x {
                continue;
            }
            self.label[x as usize] = x;
            self.parent[x as usize] = NONE;
            self.depth[x as usize] = 0;
            trimmed.push(x);
            if (x as usize) < old.num_vertices() {
                neighbors(old, x, |y| {
                    if self.parent[y as usize] == x && self.label[y as usize] != y {
                        stack.push(y);
                    }
                });
            }
        }
    }
}

impl Maintained for Wcc {
    /// Reads the snapshot through its fastest view: a past graph is runs with an undo run
    /// over them, and a search per vertex through each (the plain view) made the first
    /// step of a rolling wcc at Kron20 take 1.9 s.
    fn compute(&mut self, g: &Snapshot) {
        crate::with_view!(g, |view| self.compute_on(view))
    }

    fn update(&mut self, old: &Old<'_>, new: &Patched, ch: &Changes) -> Vec<VertexId> {
        match old {
            Old::Was(g) => self.forest_in(g),
            // A patched step's old graph reads every changed edge as it is after: the
            // forest was searched before the patch ([`Maintained::before_patch`]), or the
            // labels are computed again.
            Old::Undone(_) if self.parent.len() != self.label.len() => return self.recompute(new),
            Old::Undone(_) => {}
        }
        self.grow(new.num_vertices());
        let trimmed = self.trim(old, new, ch);
        let mut offers = Vec::new();
        for &x in &trimmed {
            neighbors(new, x, |y| offers.push((x, self.label[y as usize], y)));
        }
        for e in ch.edges.iter().filter(|e| ch.may_add(e)) {
            let (a, b) = (e.src, e.dst);
            offers.push((a, self.label[b as usize], b));
            offers.push((b, self.label[a as usize], a));
        }
        let mut touched = trimmed;
        touched.extend(self.spread(new, offers));
        touched
    }

    fn patches(&self) -> bool {
        true
    }

    fn before_patch(&mut self, g: &Patched) {
        self.forest_in(g);
    }

    /// The recompute is parallel (Afforest, about 2.5 ns an edge on two threads at Kron20;
    /// the next step brought forward adds a forest search of as much), a step sequential
    /// (about 0.27 µs a change at Kron20 since only tree edges look up their reverse, 0.47
    /// µs before; with the patch and the changes read, a step of 65,536 deletions took
    /// 0.79x a fresh wcc): past about one change in 128 edges the recompute is the cheaper
    /// (at one in 32, a 2 % round took 4-7x). Below 4,096 changes a step costs a few
    /// milliseconds at most, and a patched step seals nothing.
    fn large_batch(&self, edges: u64) -> u64 {
        (edges / 128).max(4096)
    }

    fn value(&self, v: VertexId) -> super::Value {
        super::Value::Vertex(self.label[v as usize])
    }

    fn len(&self) -> usize {
        self.label.len()
    }

    fn bytes(&self) -> usize {
        (self.label.capacity() + self.parent.capacity()) * std::mem::size_of::<VertexId>()
            + self.depth.capacity() * 4
    }

    fn kind(&self) -> super::Kind {
        super::Kind::Vertex
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::standing::before::Before;
    use crate::{Graph, Options, Record};

    /// Labels as a recompute gives them, and a forest behind them: every vertex's parent a
    /// shallower vertex of its label, every root its label.
    fn check(w: &Wcc, g: &Patched, ctx: &str) {
        assert_eq!(w.label, crate::algo::gap::cc::afforest(g), "{ctx}: labels");
        assert_eq!(w.parent.len(), w.label.len(), "{ctx}: a forest");
        for (v, &p) in w.parent.iter().enumerate() {
            match p {
                NONE => assert_eq!(w.label[v], v as VertexId, "{ctx}: root {v}"),
                p => {
                    assert_eq!(w.label[p as usize], w.label[v], "{ctx}: parent of {v}");
                    assert!(w.depth[p as usize] < w.depth[v], "{ctx}: depth of {v}");
                }
            }
        }
    }

    /// How a step after a recompute reads the old graph.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Way {
        /// A sealed step: the old graph itself.
        Sealed,
        /// A patched step, the forest searched before the patch.
        PatchedAfterHook,
        /// A patched step without it.
        PatchedWithout,
    }

    /// A recompute leaves the forest to the next step, which searches it in the old graph:
    /// a sealed step's, or a patched step's before the patch changes it (else that step
    /// recomputes). Either way the labels and the forest are a recompute's.
    #[test]
    fn a_step_after_a_recompute_finds_or_recomputes_the_forest() {
        let g = Graph::in_memory(Options::new().threads(2)).unwrap();
        g.insert_edges(&[(1, 2), (2, 3), (4, 5), (6, 6), (7, 8), (8, 9)])
            .unwrap();
        // Components no batch touches: a step brought forward leaves them be.
        let far: Vec<(u64, u64)> = (20..40).step_by(2).map(|u| (u, u + 1)).collect();
        g.insert_edges(&far).unwrap();
        let far = g.dense_id(20).unwrap().expect("a far vertex");
        let f = g.follow().unwrap();
        let (mut old, mut lsn) = f.snapshot().unwrap();
        let batches: Vec<Vec<Record>> = vec![
            vec![Record::Insert(3, 4)],
            vec![Record::Delete(2, 3), Record::Insert(9, 1)],
            vec![Record::Delete(8, 9), Record::Delete(7, 8)],
            vec![Record::DeleteVertex(1), Record::Insert(10, 2)],
        ];
        for (i, b) in batches.into_iter().enumerate() {
            g.apply(&b).unwrap();
            let (snap, l) = f.snapshot().unwrap();
            let ch = Changes::from(f.changes(lsn, l).unwrap().unwrap());
            let (was, new) = (Patched::new(old.clone()), Patched::new(snap.clone()));
            for way in [Way::Sealed, Way::PatchedAfterHook, Way::PatchedWithout] {
                let mut w = Wcc::default();
                w.compute(&old);
                assert!(w.parent.is_empty(), "a recompute searches no forest");
                if way == Way::PatchedAfterHook {
                    w.before_patch(&was);
                    check(&w, &was, &format!("batch {i}, before the patch"));
                }
                let before = Before::new(&new, &ch, was.num_vertices());
                let o = match way {
                    Way::Sealed => Old::Was(&was),
                    _ => Old::Undone(before),
                };
                let touched = w.update(&o, &new, &ch);
                check(&w, &new, &format!("batch {i}, {way:?}"));
                let reached = touched.contains(&far);
                assert_eq!(
                    reached,
                    way == Way::PatchedWithout,
                    "batch {i}, {way:?}: only a step without the forest recomputes"
                );
            }
            (old, lsn) = (snap, l);
        }
    }
}
