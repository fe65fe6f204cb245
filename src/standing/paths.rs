//! Shortest paths from a source kept current: BFS depths (every edge of length 1) and SSSP
//! distances (edge weights), the values `bfs` and `sssp` compute.
//!
//! Every reached vertex but the source keeps a *parent*: the in-neighbor whose distance
//! plus the edge's length gave its own (computed exactly that way, so the sum can be checked
//! again bit for bit). The parents form a shortest-path tree.
//!
//! - An inserted edge, or one made shorter, is relaxed: if it gives its head a shorter
//!   distance, that spreads (Dijkstra's order, from a heap).
//! - A deleted tree edge, or one made longer, leaves its subtree without support:
//!   *trimming* (KickStarter) resets every vertex of the subtree to unreached. The subtree's
//!   vertices are then offered what their in-neighbors outside it give, and those offers
//!   spread like insertions.
//!
//! A vertex outside every trimmed subtree keeps its distance: its tree path from the
//! source survives, and deletions only make paths longer. Distances are sums along a path
//! from the source, as the full kernels compute them, so maintained and recomputed
//! distances agree exactly.

use super::before::Old;
use super::changes::Changes;
use super::engine::Maintained;
use crate::snapshot::{Patched, Snapshot};
use crate::types::VertexId;
use crate::GraphView;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

const NONE: VertexId = VertexId::MAX;

/// What a path's length is made of.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Length {
    /// Every edge counts 1 (BFS depths).
    Hops,
    /// An edge counts its weight (SSSP).
    Weights,
}

/// Distances from `source`, with the tree that gives them.
pub(crate) struct Paths {
    source: VertexId,
    length: Length,
    dist: Vec<f64>,
    parent: Vec<VertexId>,
}

/// A heap entry: nearest first.
#[derive(PartialEq)]
struct Near(f64, VertexId);
impl Eq for Near {}
impl PartialOrd for Near {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Near {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

impl Paths {
    pub(crate) fn new(source: VertexId, length: Length) -> Paths {
        Paths {
            source,
            length,
            dist: Vec::new(),
            parent: Vec::new(),
        }
    }

    /// Calls `f` on each out-edge of `v` with its length.
    fn out_edges<G: GraphView>(&self, g: &G, v: VertexId, mut f: impl FnMut(VertexId, f64)) {
        match self.length {
            Length::Hops => g.for_each_out(v, |y| f(y, 1.0)),
            Length::Weights => g.for_each_out_weighted(v, f),
        }
    }

    /// Lowers distances from the `offers` (vertex, distance, parent), spreading nearest
    /// first; returns the vertices lowered.
    fn spread<G: GraphView>(
        &mut self,
        g: &G,
        offers: Vec<(VertexId, f64, VertexId)>,
    ) -> Vec<VertexId> {
        let mut heap = BinaryHeap::new();
        let mut lowered = Vec::new();
        for (v, d, p) in offers {
            if d < self.dist[v as usize] && g.vertex_exists(v) {
                self.dist[v as usize] = d;
                self.parent[v as usize] = p;
                heap.push(Reverse(Near(d, v)));
                lowered.push(v);
            }
        }
        while let Some(Reverse(Near(d, v))) = heap.pop() {
            if self.dist[v as usize] != d {
                continue;
            }
            let mut better = Vec::new();
            self.out_edges(g, v, |y, w| {
                if d + w < self.dist[y as usize] {
                    better.push((y, d + w));
                }
            });
            for (y, dy) in better {
                if dy < self.dist[y as usize] {
                    self.dist[y as usize] = dy;
                    self.parent[y as usize] = v;
                    heap.push(Reverse(Near(dy, y)));
                    lowered.push(y);
                }
            }
        }
        lowered
    }

    /// The directed edges a change stands for: both directions in an undirected store.
    fn directed<G: GraphView>(
        g: &G,
        a: VertexId,
        b: VertexId,
    ) -> impl Iterator<Item = (VertexId, VertexId)> {
        let both = g.is_undirected() && a != b;
        std::iter::once((a, b)).chain(both.then_some((b, a)))
    }

    /// The vertices whose tree edge went or got longer: nearest first, each takes another
    /// in-neighbor as its parent if one gives the same distance over an edge of positive
    /// length (so it is nearer the source, and outside the vertex's subtree), else it and
    /// its subtree (found through `old`'s out-edges) are reset to unreached. Nearest first,
    /// an in-neighbor still reached then has a tree path that survives.
    fn trim(&mut self, old: &Old<'_>, new: &Patched, ch: &Changes) -> Vec<VertexId> {
        let mut cut = Vec::new();
        for e in &ch.edges {
            let weaker = ch.may_remove(e)
                || (self.length == Length::Weights && old.is_weighted() && ch.may_weaken(e));
            for (p, c) in Self::directed(old, e.src, e.dst).filter(|_| weaker) {
                if self.parent.get(c as usize) == Some(&p) {
                    cut.push(c);
                }
            }
        }
        cut.sort_by(|a, b| self.dist[*a as usize].total_cmp(&self.dist[*b as usize]));
        cut.dedup();
        let mut trimmed = Vec::new();
        for c in cut {
            if self.dist[c as usize].is_infinite() {
                continue;
            }
            match self.another_parent(new, c) {
                Some(w) => self.parent[c as usize] = w,
                None => self.cut_off(old, c, &mut trimmed),
            }
        }
        trimmed
    }

    /// An in-neighbor of `c` in `new`, still reached, that gives `c` its distance over an
    /// edge of positive length.
    fn another_parent(&self, new: &Patched, c: VertexId) -> Option<VertexId> {
        if (c as usize) >= new.num_vertices() || !new.vertex_exists(c) {
            return None;
        }
        let dc = self.dist[c as usize];
        let weighted = self.length == Length::Weights && new.is_weighted();
        let mut found = None;
        new.find_in(c, |w| {
            let dw = self.dist[w as usize];
            if !dw.is_finite() || dw >= dc {
                return false;
            }
            let len = match weighted {
                true => new.edge_weight(w, c).unwrap_or(f64::INFINITY),
                false => 1.0,
            };
            let gives = len > 0.0 && dw + len == dc;
            if gives {
                found = Some(w);
            }
            gives
        });
        found
    }

    /// Resets `c` and its subtree (through `old`'s out-edges) to unreached.
    fn cut_off(&mut self, old: &Old<'_>, c: VertexId, trimmed: &mut Vec<VertexId>) {
        let mut stack = vec![c];
        while let Some(x) = stack.pop() {
            if self.dist[x as usize].is_infinite() {
                continue;
            }
            self.dist[x as usize] = f64::INFINITY;
            self.parent[x as usize] = NONE;
            trimmed.push(x);
            if (x as usize) < old.num_vertices() {
                old.for_each_out(x, |y| {
                    if self.parent[y as usize] == x {
                        stack.push(y);
                    }
                });
            }
        }
    }

    /// What the in-neighbors of the trimmed vertices offer them: every out-edge of each
    /// reached in-neighbor is relaxed (its weight is read from its out-list).
    fn offers_to(&self, new: &Patched, trimmed: &[VertexId]) -> Vec<(VertexId, f64, VertexId)> {
        let mut from = Vec::new();
        for &x in trimmed {
            if (x as usize) < new.num_vertices() && new.vertex_exists(x) {
                new.for_each_in(x, |u| {
                    if self.dist[u as usize].is_finite() {
                        from.push(u);
                    }
                });
            }
        }
        from.sort_unstable();
        from.dedup();
        let mut offers = Vec::new();
        for u in from {
            let du = self.dist[u as usize];
            self.out_edges(new, u, |y, w| {
                if self.dist[y as usize].is_infinite() {
                    offers.push((y, du + w, u));
                }
            });
        }
        offers
    }

    /// Resets everything to unreached but the source (when it exists).
    fn reset<G: GraphView>(&mut self, g: &G) {
        let n = g.num_vertices();
        self.dist = vec![f64::INFINITY; n];
        self.parent = vec![NONE; n];
        if (self.source as usize) < n && g.vertex_exists(self.source) {
            self.dist[self.source as usize] = 0.0;
        }
    }
}

impl Maintained for Paths {
    fn compute(&mut self, g: &Snapshot) {
        self.reset(g);
        let s = self.source;
        let offers = match self.dist.get(s as usize) {
            Some(d) if d.is_finite() => {
                self.dist[s as usize] = f64::INFINITY;
                vec![(s, 0.0, NONE)]
            }
            _ => Vec::new(),
        };
        // Through the fastest view, as wcc's compute (a past graph's runs searched one
        // by one per vertex cost several times a flat read).
        crate::with_view!(g, |view| {
            self.spread(view, offers);
        })
    }

    fn update(&mut self, old: &Old<'_>, new: &Patched, ch: &Changes) -> Vec<VertexId> {
        let n = new.num_vertices();
        self.dist.resize(n, f64::INFINITY);
        self.parent.resize(n, NONE);
        let s = self.source as usize;
        let source_back = s < n && new.vertex_exists(self.source) && self.dist[s].is_infinite();
        let mut touched = self.trim(old, new, ch);
        let mut offers = self.offers_to(new, &touched);
        if source_back {
            offers.push((self.source, 0.0, NONE));
        }
        for e in &ch.edges {
            let Some(w) = e.after else { continue };
            let w = match self.length == Length::Hops || !new.is_weighted() {
                true => 1.0,
                false => w,
            };
            for (a, b) in Self::directed(new, e.src, e.dst) {
                let da = self.dist[a as usize];
                if da.is_finite() {
                    offers.push((b, da + w, a));
                }
            }
        }
        touched.extend(self.spread(new, offers));
        touched
    }

    fn patches(&self) -> bool {
        true
    }

    fn value(&self, v: VertexId) -> super::Value {
        let d = self.dist[v as usize];
        match self.length {
            Length::Hops if d.is_infinite() => {
                super::Value::Int(crate::algo::graphalytics::UNREACHABLE)
            }
            Length::Hops => super::Value::Int(d as i64),
            Length::Weights => super::Value::Float(d),
        }
    }

    fn len(&self) -> usize {
        self.dist.len()
    }

    fn bytes(&self) -> usize {
        self.dist.capacity() * 8 + self.parent.capacity() * std::mem::size_of::<VertexId>()
    }

    fn kind(&self) -> super::Kind {
        match self.length {
            Length::Hops => super::Kind::Int,
            Length::Weights => super::Kind::Float,
        }
    }
}
