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

/// Labels and the spanning forest behind them.
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
    /// Labels, parents and depths from scratch, in parallel: Afforest's labels (each the
    /// smallest id of its component, as the standing labels are), then a forest searched
    /// from every component's smallest vertex at once.
    fn compute_on<G: GraphView>(&mut self, g: &G) {
        self.label = crate::algo::gap::cc::afforest(g);
        (self.parent, self.depth) = forest::forest(g, &self.label);
    }

    /// Grows the arrays to `n` vertices, each new one its own component.
    fn grow(&mut self, n: usize) {
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

    /// The recompute is parallel (Afforest and a forest search, about 5 ns an edge on two
    /// threads at Kron20), a step sequential (about 0.27 µs a change at Kron20 since only
    /// tree edges look up their reverse, 0.47 µs before; with the patch and the changes
    /// read, a step of 65,536 deletions took 0.79x a fresh wcc): past about one change in
    /// 128 edges the recompute is the cheaper (at one in 32, a 1 % round took 4-7x). Below 4,096 changes a step costs a few
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
