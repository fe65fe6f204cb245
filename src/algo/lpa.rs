//! Semi-synchronous label propagation (Cordasco and Gargano, "Community Detection via
//! Semi-Synchronous Label Propagation Algorithms", 2010), as NetworkX's
//! `label_propagation_communities` runs it.
//!
//! Every vertex starts with its own label. The vertices are coloured greedily, largest
//! degree first (ties in id order), so that no two neighbors share a colour; then, colour
//! after colour, each vertex of the colour takes a label that is most frequent among its
//! neighbors: its own if its own is one of them, else the largest (Prec-Max). Vertices of
//! one colour are never neighbors, so they update at once, in parallel, and the result is
//! what the sequential loop gives. Sweeps over the colours repeat until every vertex with
//! neighbors holds one of its most frequent labels; the paper proves that this ends.
//!
//! Neighbors are out-neighbors, plus in-neighbors in a directed graph; a self-loop makes a
//! vertex its own neighbor (and counts twice in its degree, as NetworkX counts it).
//! Deleted vertices keep their own label and take no part.

use crate::snapshot::GraphView;
use crate::types::VertexId;
use rayon::prelude::*;

/// Each vertex's label: the id of a vertex of its community.
#[must_use = "the kernel's result is its return value"]
pub fn communities<G: GraphView>(g: &G) -> Vec<VertexId> {
    let classes = colour_classes(g);
    let mut label: Vec<VertexId> = (0..g.num_vertices() as VertexId).collect();
    while !complete(g, &label) {
        for class in &classes {
            let changed: Vec<(VertexId, VertexId)> = class
                .par_iter()
                .map_init(Vec::new, |scratch, &v| (v, prec_max(g, &label, v, scratch)))
                .filter(|&(v, l)| l != label[v as usize])
                .collect();
            for (v, l) in changed {
                label[v as usize] = l;
            }
        }
    }
    label
}

/// The vertices of each colour, colour 0 first, ids ascending within one: a greedy
/// colouring in order of degree, largest first, ties by id (NetworkX's `largest_first`).
fn colour_classes<G: GraphView>(g: &G) -> Vec<Vec<VertexId>> {
    let n = g.num_vertices();
    let live: Vec<VertexId> = (0..n as VertexId).filter(|&v| g.vertex_exists(v)).collect();
    let degree: Vec<usize> = live.par_iter().map(|&v| degree(g, v)).collect();
    let mut order: Vec<usize> = (0..live.len()).collect();
    // Stable: equal degrees keep id order.
    order.sort_by_key(|&i| std::cmp::Reverse(degree[i]));
    const NONE: u32 = u32::MAX;
    let mut colour = vec![NONE; n];
    // taken[c] == v + 1: colour c is on a neighbor of v.
    let mut taken: Vec<usize> = Vec::new();
    let mut classes: Vec<Vec<VertexId>> = Vec::new();
    for i in order {
        let v = live[i];
        each_neighbor(g, v, |u| {
            let c = colour[u as usize];
            if c != NONE {
                taken[c as usize] = v as usize + 1;
            }
        });
        let c = (0..taken.len())
            .find(|&c| taken[c] != v as usize + 1)
            .unwrap_or(taken.len());
        if c == taken.len() {
            taken.push(0);
            classes.push(Vec::new());
        }
        colour[v as usize] = c as u32;
        classes[c].push(v);
    }
    classes.iter_mut().for_each(|c| c.sort_unstable());
    classes
}

/// Neighbors counted with a self-loop twice, as NetworkX's degree counts it.
fn degree<G: GraphView>(g: &G, v: VertexId) -> usize {
    let mut d = 0;
    each_neighbor(g, v, |u| d += 1 + usize::from(u == v));
    d
}

/// Calls `f` on each neighbor of `v`: out-neighbors, then in-neighbors in a directed graph.
fn each_neighbor<G: GraphView>(g: &G, v: VertexId, mut f: impl FnMut(VertexId)) {
    g.for_each_out(v, &mut f);
    if !g.is_undirected() {
        g.for_each_in(v, &mut f);
    }
}

/// The label `v` takes: its own if it is among the most frequent of its neighbors' (or
/// it has none), else the largest of those most frequent.
fn prec_max<G: GraphView>(
    g: &G,
    label: &[VertexId],
    v: VertexId,
    scratch: &mut Vec<VertexId>,
) -> VertexId {
    scratch.clear();
    each_neighbor(g, v, |u| scratch.push(label[u as usize]));
    let own = label[v as usize];
    if scratch.is_empty() {
        return own;
    }
    scratch.sort_unstable();
    let (mut best, mut most, mut own_count) = (own, 0, 0);
    for run in scratch.chunk_by(|a, b| a == b) {
        if run[0] == own {
            own_count = run.len();
        }
        // Ascending labels: `>=` leaves the largest of the most frequent.
        if run.len() >= most {
            (best, most) = (run[0], run.len());
        }
    }
    if own_count == most {
        own
    } else {
        best
    }
}

/// Whether every vertex with neighbors holds one of its most frequent labels.
fn complete<G: GraphView>(g: &G, label: &[VertexId]) -> bool {
    (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .filter(|&v| g.vertex_exists(v))
        .map_init(Vec::new, |scratch, v| {
            prec_max(g, label, v, scratch) == label[v as usize]
        })
        .all(|held| held)
}

/// Checks `label` against the state the propagation stops in: one label per vertex,
/// each a vertex id, deleted vertices with their own, and every other vertex holding a
/// most frequent label of its neighbors (its own when it has none).
pub fn verify<G: GraphView>(g: &G, label: &[VertexId]) -> Result<(), String> {
    let n = g.num_vertices();
    if label.len() != n {
        return Err(format!("{} labels for {n} vertices", label.len()));
    }
    let mut scratch = Vec::new();
    for v in 0..n as VertexId {
        let l = label[v as usize];
        if l as usize >= n {
            return Err(format!("vertex {v}: label {l} is no vertex"));
        }
        let want = if g.vertex_exists(v) {
            prec_max(g, label, v, &mut scratch)
        } else {
            v
        };
        if want != l {
            return Err(format!(
                "vertex {v}: label {l}, a most frequent one is {want}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testkit::graph;

    #[test]
    fn two_triangles_joined_by_a_path_are_two_communities() {
        let e = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3)];
        let s = graph(true, &e);
        let l = communities(&s);
        assert_eq!(verify(&s, &l), Ok(()));
        let ext = |v: usize| s.external_id(v as VertexId);
        let of = |x: u64| l[(0..6).find(|&v| ext(v) == x).unwrap()];
        assert_eq!(of(0), of(1));
        assert_eq!(of(1), of(2));
        assert_eq!(of(3), of(4));
        assert_eq!(of(4), of(5));
        assert_ne!(of(0), of(3));
    }

    /// NetworkX's loop read literally: one vertex at a time, colour after colour.
    fn sequential(s: &crate::Snapshot) -> Vec<VertexId> {
        use std::collections::HashMap;
        let n = s.num_vertices() as VertexId;
        let nbrs = |v: VertexId| {
            let mut x = Vec::new();
            each_neighbor(s, v, |u| x.push(u));
            x
        };
        let mut order: Vec<VertexId> = (0..n).collect();
        order.sort_by_key(|&v| std::cmp::Reverse(degree(s, v)));
        let mut colour: HashMap<VertexId, usize> = HashMap::new();
        for &v in &order {
            let used: Vec<usize> = nbrs(v)
                .iter()
                .filter_map(|u| colour.get(u).copied())
                .collect();
            colour.insert(v, (0..).find(|c| !used.contains(c)).unwrap());
        }
        let colours = colour.values().max().map_or(0, |c| c + 1);
        let mut label: Vec<VertexId> = (0..n).collect();
        let most = |label: &[VertexId], v: VertexId| {
            let mut freq: HashMap<VertexId, usize> = HashMap::new();
            nbrs(v)
                .iter()
                .for_each(|u| *freq.entry(label[*u as usize]).or_default() += 1);
            let top = freq.values().copied().max().unwrap_or(0);
            let high: Vec<VertexId> = freq.iter().filter(|e| *e.1 == top).map(|e| *e.0).collect();
            high
        };
        let done = |label: &[VertexId]| {
            (0..n).all(|v| nbrs(v).is_empty() || most(label, v).contains(&label[v as usize]))
        };
        while !done(&label) {
            for c in 0..colours {
                for v in (0..n).filter(|v| colour[v] == c) {
                    let high = most(&label, v);
                    if !high.is_empty() && !high.contains(&label[v as usize]) {
                        label[v as usize] = *high.iter().max().unwrap();
                    }
                }
            }
        }
        label
    }

    #[test]
    fn equals_the_sequential_loop_and_the_verifier_catches_a_wrong_label() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for undirected in [true, false] {
            let edges: Vec<(u64, u64)> = (0..2000)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 500, (x >> 32) % 500)
                })
                .collect();
            let s = graph(undirected, &edges);
            let l = communities(&s);
            assert_eq!(verify(&s, &l), Ok(()), "undirected {undirected}");
            assert_eq!(l, sequential(&s), "undirected {undirected}");
            let mut wrong = l.clone();
            let v = (0..wrong.len())
                .find(|&v| wrong[v] != v as VertexId)
                .unwrap();
            wrong[v] = v as VertexId;
            assert!(
                verify(&s, &wrong).is_err(),
                "a vertex taken out of its community"
            );
        }
    }
}
