//! The spanning forest behind standing wcc's labels, built in parallel once the labels are
//! known: a breadth-first search over both directions from every component's root (its
//! smallest id, which the labels name) at once, level by level.
//!
//! A recompute used to be one sequential BFS per component, labels and forest together:
//! 0.28 s at Kron20, where Afforest labels the graph in about 45 ms on two threads. The
//! forest needs no particular tree, only parents with the vertex's label at a smaller
//! depth, so any BFS from the roots gives one.
//!
//! A level from a small frontier is top-down (each frontier vertex claims its unseen
//! neighbors by a compare-and-swap on their depth); from a large one it is bottom-up (each
//! unseen vertex looks for a neighbor in the frontier and stops at the first), as in
//! Beamer's direction-optimizing BFS: the first levels from a million roots, and the giant
//! component's middle levels, would otherwise read every edge of their frontier.

use crate::types::{AtomicVertexId, VertexId};
use crate::GraphView;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// No parent: a root.
pub(super) const NONE: VertexId = VertexId::MAX;
const UNSEEN: u32 = u32::MAX;
/// A level whose frontier holds more than n / BOTTOM_UP vertices is searched bottom-up.
const BOTTOM_UP: usize = 20;

/// Parents and depths of a BFS forest of `g` from each vertex `v` with `label[v] == v`.
///
/// Panics if a vertex is left unreached: its label was not the smallest id of a component
/// holding it, which no labelling of components can leave.
pub(super) fn forest<G: GraphView>(g: &G, label: &[VertexId]) -> (Vec<VertexId>, Vec<u32>) {
    let n = label.len();
    assert!(n <= g.num_vertices(), "a label per vertex of the graph");
    let is_root = |v: usize| label[v] == v as VertexId;
    let depth: Vec<AtomicU32> = (0..n)
        .into_par_iter()
        .map(|v| AtomicU32::new(if is_root(v) { 0 } else { UNSEEN }))
        .collect();
    let parent: Vec<AtomicVertexId> = (0..n)
        .into_par_iter()
        .map(|_| AtomicVertexId::new(NONE))
        .collect();
    let search = Search {
        g,
        label,
        depth: &depth,
        parent: &parent,
    };
    // Roots without an edge are components of their own, and no search starts there: at
    // Kron20 they are most of the roots, and counted in the first frontier they sent the
    // first level bottom-up, a pass over every list that found the giant's one root.
    let mut frontier: Vec<VertexId> = (0..n as VertexId)
        .into_par_iter()
        .filter(|&v| is_root(v as usize) && search.has_neighbor(v))
        .collect();
    let mut level = 0;
    while !frontier.is_empty() {
        level += 1;
        frontier = match frontier.len() > n / BOTTOM_UP {
            true => search.bottom_up(level),
            false => search.top_down(&frontier, level),
        };
    }
    let depth: Vec<u32> = depth.into_iter().map(AtomicU32::into_inner).collect();
    assert!(
        depth.par_iter().all(|&d| d != UNSEEN),
        "every vertex is reached from its component's root"
    );
    (
        parent.into_iter().map(AtomicVertexId::into_inner).collect(),
        depth,
    )
}

/// One forest search: the graph, the labels and what has been reached so far.
struct Search<'a, G> {
    g: &'a G,
    label: &'a [VertexId],
    depth: &'a [AtomicU32],
    parent: &'a [AtomicVertexId],
}

impl<G: GraphView> Search<'_, G> {
    /// Calls `f` on every neighbor of `v`, either direction, until it returns true.
    fn find(&self, v: VertexId, mut f: impl FnMut(VertexId) -> bool) -> bool {
        self.g.find_out(v, &mut f) || (!self.g.is_undirected() && self.g.find_in(v, f))
    }

    /// Whether `v` has an edge, either direction.
    fn has_neighbor(&self, v: VertexId) -> bool {
        self.find(v, |_| true)
    }

    /// Every neighbor of the frontier not reached yet is claimed by the first frontier
    /// vertex to reach it; returns those claimed.
    fn top_down(&self, frontier: &[VertexId], level: u32) -> Vec<VertexId> {
        frontier
            .par_iter()
            .fold(Vec::new, |mut next, &v| {
                self.find(v, |y| {
                    let d = &self.depth[y as usize];
                    if d.load(Relaxed) == UNSEEN
                        && d.compare_exchange(UNSEEN, level, Relaxed, Relaxed).is_ok()
                    {
                        debug_assert_eq!(self.label[y as usize], self.label[v as usize]);
                        self.parent[y as usize].store(v, Relaxed);
                        next.push(y);
                    }
                    false
                });
                next
            })
            .reduce(Vec::new, |mut a, mut b| {
                a.append(&mut b);
                a
            })
    }

    /// Every vertex not reached yet takes the first neighbor it finds at the level before
    /// as its parent. Only a vertex's own iteration writes its depth, and to `level`,
    /// which no other iteration looks for: the pass reads the frontier as it was.
    fn bottom_up(&self, level: u32) -> Vec<VertexId> {
        (0..self.depth.len() as VertexId)
            .into_par_iter()
            .filter(|&y| {
                if self.depth[y as usize].load(Relaxed) != UNSEEN {
                    return false;
                }
                let mut found = NONE;
                self.find(y, |x| {
                    let hit = self.depth[x as usize].load(Relaxed) == level - 1;
                    if hit {
                        found = x;
                    }
                    hit
                });
                if found == NONE {
                    return false;
                }
                debug_assert_eq!(self.label[y as usize], self.label[found as usize]);
                self.parent[y as usize].store(found, Relaxed);
                self.depth[y as usize].store(level, Relaxed);
                true
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Csr;
    use proptest::prelude::*;

    /// The forest's invariants: roots are their labels, every other vertex's parent is a
    /// neighbor (either direction) with its label one level up.
    fn check(g: &Csr, label: &[VertexId], parent: &[VertexId], depth: &[u32]) {
        for v in 0..label.len() {
            let p = parent[v];
            if label[v] == v as VertexId {
                assert_eq!((p, depth[v]), (NONE, 0), "root {v}");
                continue;
            }
            assert_ne!(p, NONE, "vertex {v} has a parent");
            assert_eq!(
                label[p as usize], label[v],
                "parent of {v} in its component"
            );
            assert_eq!(depth[v], depth[p as usize] + 1, "depth of {v}");
            let adjacent = g.has_edge(v as VertexId, p) || g.has_edge(p, v as VertexId);
            assert!(adjacent, "parent {p} of {v} is a neighbor");
        }
    }

    proptest! {
        #[test]
        fn forest_spans_each_component_from_its_smallest_vertex(
            n in 1usize..200,
            raw in proptest::collection::vec((0..200 as VertexId, 0..200 as VertexId), 0..400),
            undirected: bool,
        ) {
            let edges: Vec<_> = raw.into_iter()
                .map(|(a, b)| (a % n as VertexId, b % n as VertexId))
                .collect();
            let g = Csr::from_edges(n, &edges, undirected);
            let label = crate::algo::gap::cc::afforest(&g);
            let (parent, depth) = forest(&g, &label);
            check(&g, &label, &parent, &depth);
        }
    }

    #[test]
    fn a_long_path_is_searched_level_by_level() {
        // A path of 1,000 vertices numbered from its middle: half the levels top-down from
        // one root, each a frontier of one or two.
        let n: VertexId = 1000;
        let order: Vec<VertexId> = (0..n).map(|i| (i + n / 2) % n).collect();
        let edges: Vec<_> = order.windows(2).map(|w| (w[1], w[0])).collect();
        let g = Csr::from_edges(n as usize, &edges, false);
        let label = crate::algo::gap::cc::afforest(&g);
        assert!(label.iter().all(|&l| l == 0));
        let (parent, depth) = forest(&g, &label);
        check(&g, &label, &parent, &depth);
        assert_eq!(depth.iter().max(), Some(&(n as u32 / 2)));
    }
}
