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

use super::engine::{Changes, Maintained};
use crate::snapshot::Snapshot;
use crate::types::VertexId;
use crate::GraphView;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const NONE: VertexId = VertexId::MAX;

/// Labels and the spanning forest behind them.
#[derive(Default)]
pub(crate) struct Wcc {
    label: Vec<VertexId>,
    parent: Vec<VertexId>,
}

/// Calls `f` on every neighbor of `v`, either direction.
fn neighbors(g: &Snapshot, v: VertexId, mut f: impl FnMut(VertexId)) {
    g.for_each_out(v, &mut f);
    if !g.is_undirected() {
        g.for_each_in(v, f);
    }
}

impl Wcc {
    /// Grows the arrays to `n` vertices, each new one its own component.
    fn grow(&mut self, n: usize) {
        let from = self.label.len() as VertexId;
        self.label.extend(from..n as VertexId);
        self.parent.resize(n, NONE);
    }

    /// Spreads smaller labels from the `offers` (vertex, label, parent) through `g`,
    /// smallest label first; returns the vertices whose label was lowered.
    fn spread(
        &mut self,
        g: &Snapshot,
        offers: Vec<(VertexId, VertexId, VertexId)>,
    ) -> Vec<VertexId> {
        let mut heap = BinaryHeap::new();
        let mut lowered = Vec::new();
        for (v, l, p) in offers {
            if l < self.label[v as usize] {
                self.label[v as usize] = l;
                self.parent[v as usize] = p;
                heap.push(Reverse((l, v)));
                lowered.push(v);
            }
        }
        while let Some(Reverse((l, v))) = heap.pop() {
            if self.label[v as usize] != l {
                continue;
            }
            neighbors(g, v, |y| {
                if l < self.label[y as usize] {
                    self.label[y as usize] = l;
                    self.parent[y as usize] = v;
                    heap.push(Reverse((l, y)));
                    lowered.push(y);
                }
            });
        }
        lowered
    }

    /// The subtrees cut off by the deleted tree edges: found through `old`'s edges (a
    /// child's edge to its parent may itself be gone in the new graph), then reset.
    fn trim(&mut self, old: &Snapshot, new: &Snapshot, ch: &Changes) -> Vec<VertexId> {
        let mut cut = Vec::new();
        for e in ch
            .edges
            .iter()
            .filter(|e| e.before.is_some() && e.after.is_none())
        {
            let (a, b) = (e.src, e.dst);
            if a == b || new.has_edge(a, b) || new.has_edge(b, a) {
                continue;
            }
            for (c, p) in [(a, b), (b, a)] {
                if self.parent.get(c as usize) == Some(&p) {
                    cut.push(c);
                }
            }
        }
        let mut seen = vec![false; 0];
        let mut trimmed = Vec::new();
        let mut stack = cut;
        while let Some(x) = stack.pop() {
            if (x as usize) < seen.len() && seen[x as usize] {
                continue;
            }
            if seen.is_empty() {
                seen = vec![false; self.label.len()];
            }
            seen[x as usize] = true;
            trimmed.push(x);
            if (x as usize) < old.num_vertices() {
                neighbors(old, x, |y| {
                    if self.parent[y as usize] == x && !seen[y as usize] {
                        stack.push(y);
                    }
                });
            }
        }
        for &x in &trimmed {
            self.label[x as usize] = x;
            self.parent[x as usize] = NONE;
        }
        trimmed
    }
}

impl Maintained for Wcc {
    fn compute(&mut self, g: &Snapshot) {
        let n = g.num_vertices();
        self.label = (0..n as VertexId).collect();
        self.parent = vec![NONE; n];
        // Vertices in increasing order: the first of a component reached is its smallest.
        let mut queue = Vec::new();
        for s in 0..n as VertexId {
            if self.parent[s as usize] != NONE || self.label[s as usize] != s {
                continue;
            }
            queue.clear();
            queue.push(s);
            let mut i = 0;
            while let Some(&v) = queue.get(i) {
                i += 1;
                neighbors(g, v, |y| {
                    if y != s && self.parent[y as usize] == NONE && self.label[y as usize] == y {
                        self.label[y as usize] = s;
                        self.parent[y as usize] = v;
                        queue.push(y);
                    }
                });
            }
        }
    }

    fn update(&mut self, old: &Snapshot, new: &Snapshot, ch: &Changes) -> Vec<VertexId> {
        self.grow(new.num_vertices());
        let trimmed = self.trim(old, new, ch);
        let mut offers = Vec::new();
        for &x in &trimmed {
            neighbors(new, x, |y| offers.push((x, self.label[y as usize], y)));
        }
        for e in ch
            .edges
            .iter()
            .filter(|e| e.after.is_some() && e.before.is_none())
        {
            let (a, b) = (e.src, e.dst);
            offers.push((a, self.label[b as usize], b));
            offers.push((b, self.label[a as usize], a));
        }
        let mut touched = trimmed;
        touched.extend(self.spread(new, offers));
        touched
    }

    fn value(&self, v: VertexId) -> super::Value {
        super::Value::Vertex(self.label[v as usize])
    }

    fn len(&self) -> usize {
        self.label.len()
    }

    fn bytes(&self) -> usize {
        (self.label.capacity() + self.parent.capacity()) * std::mem::size_of::<VertexId>()
    }

    fn kind(&self) -> super::Kind {
        super::Kind::Vertex
    }
}
