//! Core numbers (Batagelj and Zaversnik, "An O(m) Algorithm for Cores Decomposition of
//! Networks", 2003): the core number of `v` is the largest `k` such that `v` belongs to a
//! subgraph in which every vertex has degree at least `k`.
//!
//! Vertices are peeled in order of their current degree, kept in degree buckets: taking
//! the next vertex `v` fixes its core number at its degree, and each neighbor of higher
//! degree loses one (it moves to the front of its bucket, which then starts one later).
//!
//! The degree of a vertex is its in-degree plus its out-degree, and its neighbors are its
//! in- and out-neighbors (a neighbor both ways counts twice), as NetworkX's `core_number`
//! reads a directed graph; an undirected graph's lists are its edges once each. Self-loops
//! are not counted. Deleted vertices get 0.

use crate::snapshot::GraphView;
use crate::types::VertexId;
use rayon::prelude::*;

/// Each vertex's core number.
#[must_use = "the kernel's result is its return value"]
pub fn core_numbers<G: GraphView>(g: &G) -> Vec<i64> {
    let n = g.num_vertices();
    let mut deg: Vec<usize> = (0..n as VertexId)
        .into_par_iter()
        .map(|v| degree(g, v))
        .collect();
    let most = deg.iter().copied().max().unwrap_or(0);
    // bin[d]: where the vertices of degree d start in `vert`, sorted by degree.
    let mut bin = vec![0usize; most + 2];
    deg.iter().for_each(|&d| bin[d + 1] += 1);
    for d in 1..bin.len() {
        bin[d] += bin[d - 1];
    }
    let mut vert = vec![0 as VertexId; n];
    let mut pos = vec![0usize; n];
    let mut next = bin.clone();
    for v in 0..n {
        pos[v] = next[deg[v]];
        vert[pos[v]] = v as VertexId;
        next[deg[v]] += 1;
    }
    for i in 0..n {
        let v = vert[i];
        let dv = deg[v as usize];
        each_neighbor(g, v, |u| {
            let du = deg[u as usize];
            if du > dv {
                // Swap u with the first vertex of its bucket, then shrink the bucket by one.
                let (pu, pw) = (pos[u as usize], bin[du]);
                let w = vert[pw];
                vert.swap(pu, pw);
                pos[u as usize] = pw;
                pos[w as usize] = pu;
                bin[du] += 1;
                deg[u as usize] = du - 1;
            }
        });
    }
    deg.into_iter().map(|d| d as i64).collect()
}

/// The degree the peeling starts from: in plus out, self-loops aside (in an undirected
/// graph, the edges once each).
fn degree<G: GraphView>(g: &G, v: VertexId) -> usize {
    if !g.vertex_exists(v) {
        return 0;
    }
    let mut d = 0;
    each_neighbor(g, v, |_| d += 1);
    d
}

/// Calls `f` on each neighbor of `v` other than itself: out-neighbors, then in-neighbors
/// in a directed graph.
fn each_neighbor<G: GraphView>(g: &G, v: VertexId, mut f: impl FnMut(VertexId)) {
    g.for_each_out(v, |u| {
        if u != v {
            f(u)
        }
    });
    if !g.is_undirected() {
        g.for_each_in(v, |u| {
            if u != v {
                f(u)
            }
        });
    }
}

/// Checks `core` against a second peeling, one vertex at a time from a heap keyed by
/// current degree (the definition read directly), and that each vertex has at least its
/// core number of neighbors whose core numbers are as high.
pub fn verify<G: GraphView>(g: &G, core: &[i64]) -> Result<(), String> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = g.num_vertices();
    if core.len() != n {
        return Err(format!("{} core numbers for {n} vertices", core.len()));
    }
    let mut deg: Vec<usize> = (0..n as VertexId).map(|v| degree(g, v)).collect();
    let mut heap: BinaryHeap<Reverse<(usize, VertexId)>> = (0..n as VertexId)
        .map(|v| Reverse((deg[v as usize], v)))
        .collect();
    let mut done = vec![false; n];
    let mut k = 0;
    while let Some(Reverse((d, v))) = heap.pop() {
        if done[v as usize] || d != deg[v as usize] {
            continue;
        }
        done[v as usize] = true;
        k = k.max(d);
        if core[v as usize] != k as i64 {
            return Err(format!(
                "vertex {v}: core number {}, peeling gives {k}",
                core[v as usize]
            ));
        }
        each_neighbor(g, v, |u| {
            if !done[u as usize] && deg[u as usize] > 0 {
                deg[u as usize] -= 1;
                heap.push(Reverse((deg[u as usize], u)));
            }
        });
    }
    for v in 0..n as VertexId {
        let mut at_least = 0;
        each_neighbor(g, v, |u| {
            at_least += (core[u as usize] >= core[v as usize]) as i64
        });
        if at_least < core[v as usize] {
            return Err(format!(
                "vertex {v}: core number {} with {at_least} such neighbors",
                core[v as usize]
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
    fn a_clique_with_a_tail_and_a_loop() {
        // 0-1-2-3 a 4-clique, 4 hangs on 3, 5 on 4, 6 alone with a self-loop.
        let mut e = vec![
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 2),
            (1, 3),
            (2, 3),
            (3, 4),
            (4, 5),
        ];
        e.push((6, 6));
        let s = graph(true, &e);
        let core = core_numbers(&s);
        let by_ext = |x: u64| core[(0..7).find(|&v| s.external_id(v) == x).unwrap() as usize];
        let got: Vec<i64> = (0..7).map(by_ext).collect();
        assert_eq!(got, vec![3, 3, 3, 3, 1, 1, 0]);
        assert_eq!(verify(&s, &core), Ok(()));
    }

    #[test]
    fn matches_the_heap_peeling_on_random_graphs() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for undirected in [true, false] {
            let edges: Vec<(u64, u64)> = (0..3000)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 400, (x >> 32) % 400)
                })
                .collect();
            let s = graph(undirected, &edges);
            let core = core_numbers(&s);
            assert_eq!(verify(&s, &core), Ok(()), "undirected {undirected}");
            assert!(core.iter().any(|&c| c >= 5), "a dense enough core");
            let mut wrong = core.clone();
            wrong[7] += 1;
            assert!(
                verify(&s, &wrong).is_err(),
                "the verifier catches a wrong number"
            );
        }
    }
}
