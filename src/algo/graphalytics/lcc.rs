//! Local clustering coefficient (Graphalytics LCC).
//!
//! Definition (spec §"Algorithms", LCC, and its pseudo-code; SPEC.md §2): let
//! `N(v) = N_in(v) ∪ N_out(v)`, each neighbour counted once. If `|N(v)| ≤ 1` then
//! `LCC(v) = 0`; otherwise
//!
//! ```text
//! LCC(v) = |{(u, w) : u, w ∈ N(v), (u, w) ∈ E}| / (|N(v)| · (|N(v)| − 1))
//! ```
//!
//! In a directed graph the numerator counts *directed* edges between neighbours (`u → w` and
//! `w → u` count one each); in an undirected graph each edge is stored both ways, which
//! gives the usual `2T / (k(k − 1))`. This is neither networkx's `clustering()` (Fagiolo)
//! nor the LCC of the undirected projection. Validation is relative, 1e-4.
//!
//! The numerator is a sum over triangles of the undirected projection: for a triangle
//! `{a, b, c}`, `a` gains the directed edges between `b` and `c` (1 or 2), and so on round.
//! So LCC enumerates triangles as TC does, once each, on the projection oriented by degree
//! (see `algo/oriented.rs`), with each edge's count of directions beside it: at `u`,
//! for `v` in `N+(u)` and `w` in both `N+(u)` and `N+(v)`, `u` gains `m(v, w)`, `v` gains
//! `m(u, w)` and `w` gains `m(u, v)`. A hub is never scanned for each of its many small
//! neighbours, which made the per-vertex neighbourhood intersection take 25 s at Kron20.
//! Each thread adds into its own counters (`w` is any vertex), summed at the end.
//!
//! Memory: the oriented projection is held in DRAM while the kernel runs (about 5 bytes
//! per undirected edge, after a build that holds every vertex's whole neighbourhood, about
//! 10 bytes per undirected edge), plus 8 bytes per vertex per thread. The per-vertex
//! intersection it replaced needed O(vertices) only; a store larger than DRAM would need
//! the projection built and enumerated a partition at a time.

use crate::algo::oriented::{Marks, Multiplicity, Oriented};
use crate::GraphView;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Per-thread counters of directed edges among each vertex's neighbours, by new id.
///
/// Concurrency: thread `t` of the pool only ever touches `per_thread[t]`, and a task runs
/// to its end on one thread (it makes no rayon call that could run another task meanwhile),
/// so a relaxed load and store is an exclusive add: atomics only to share the arrays safely.
struct Links {
    per_thread: Vec<Vec<AtomicU64>>,
}

impl Links {
    fn new(threads: usize, n: usize) -> Links {
        Links {
            per_thread: (0..threads)
                .map(|_| (0..n).map(|_| AtomicU64::new(0)).collect())
                .collect(),
        }
    }

    /// This thread's counters.
    fn mine(&self) -> &[AtomicU64] {
        let t = rayon::current_thread_index().unwrap_or(0);
        &self.per_thread[t % self.per_thread.len()]
    }

    /// Every thread's counts of new id `x`, summed.
    fn total(&self, x: usize) -> u64 {
        self.per_thread.iter().map(|c| c[x].load(Relaxed)).sum()
    }
}

#[inline]
fn add(c: &[AtomicU64], x: usize, d: u64) {
    c[x].store(c[x].load(Relaxed) + d, Relaxed);
}

/// Local clustering coefficient per dense id (directed definition; see the module docs).
///
/// Self-loops are ignored: `v` is never in its own neighbourhood, and an edge `u → u` never
/// counts in the numerator, so values stay within `[0, 1]`. Deleted vertices get 0.0.
#[must_use = "the kernel's result is its return value"]
pub fn lcc<G: GraphView>(g: &G) -> Vec<f64> {
    let o = Oriented::build(g, Multiplicity::Keep);
    let n = o.len();
    let links = Links::new(rayon::current_num_threads(), n);
    (0..n)
        .into_par_iter()
        .with_max_len(crate::types::VERTEX_TASK)
        .for_each(|u| {
            let (nu, mu) = (o.up(u), o.up_mult(u));
            if nu.len() < 2 {
                return;
            }
            let c = links.mine();
            Marks::with(n, |m| {
                m.set(nu, mu);
                let mut at_u = 0u64;
                for (&v, &muv) in nu.iter().zip(mu).skip(1) {
                    let (nv, mv) = (o.up(v as usize), o.up_mult(v as usize));
                    let mut at_v = 0u64;
                    for (&w, &mvw) in nv.iter().zip(mv) {
                        let muw = m.get(w);
                        if muw != 0 {
                            at_u += u64::from(mvw);
                            at_v += u64::from(muw);
                            add(c, w as usize, u64::from(muv));
                        }
                    }
                    if at_v != 0 {
                        add(c, v as usize, at_v);
                    }
                }
                if at_u != 0 {
                    add(c, u, at_u);
                }
                m.clear(nu);
            });
        });
    let mut out = vec![0.0; n];
    for (r, &v) in o.order.iter().enumerate() {
        let k = o.degree[v as usize];
        if k > 1 {
            out[v as usize] = links.total(r) as f64 / (k as f64 * (k - 1) as f64);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::graphalytics::testkit::{assert_close, by_id, example, history, Model, Views};
    use crate::snapshot::Csr;
    use crate::VertexId;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// The spec's formula, literally (self-loops removed first), on the model.
    fn reference(m: &Model) -> BTreeMap<u64, f64> {
        let edges: BTreeSet<(u64, u64)> = m.edges.iter().copied().filter(|(a, b)| a != b).collect();
        m.vertices
            .iter()
            .map(|&v| {
                let nbrs: BTreeSet<u64> = edges
                    .iter()
                    .filter_map(|&(a, b)| match (a == v, b == v) {
                        (true, false) => Some(b),
                        (false, true) => Some(a),
                        _ => None,
                    })
                    .collect();
                let k = nbrs.len() as f64;
                if nbrs.len() <= 1 {
                    return (v, 0.0);
                }
                let mut links = 0;
                for &u in &nbrs {
                    for &w in &nbrs {
                        links += usize::from(edges.contains(&(u, w)));
                    }
                }
                (v, links as f64 / (k * (k - 1.0)))
            })
            .collect()
    }

    #[test]
    #[allow(clippy::excessive_precision)] // verbatim from the reference file
    fn example_directed_matches_the_spec() {
        let want = [
            6.666666666666666e-01,
            1.666666666666667e-01,
            1.500000000000000e-01,
            5.000000000000000e-02,
            2.500000000000000e-01,
            0.0,
            0.0,
            8.333333333333334e-01,
            0.0,
            0.0,
        ];
        let (g, first) = example(false);
        assert_close(
            &by_id(first, &lcc(&g)),
            &by_id(first, &want),
            "example-directed",
        );
    }

    #[test]
    #[allow(clippy::excessive_precision)] // verbatim from the reference file
    fn example_undirected_matches_the_spec() {
        let want = [
            1.0,
            3.333333333333333e-01,
            1.0,
            6.666666666666666e-01,
            2.000000000000000e-01,
            1.0,
            6.666666666666666e-01,
            1.0,
            0.0,
        ];
        let (g, first) = example(true);
        assert_close(
            &by_id(first, &lcc(&g)),
            &by_id(first, &want),
            "example-undirected",
        );
    }

    #[test]
    fn directed_counts_each_direction() {
        // N(0) = {1, 2}: one edge 1 -> 2 gives 1/2, both directions give 1.
        let g = Csr::from_edges(3, &[(0, 1), (2, 0), (1, 2)], false);
        assert_eq!(lcc(&g), [0.5, 0.5, 0.5]);
        let g = Csr::from_edges(3, &[(0, 1), (2, 0), (1, 2), (2, 1)], false);
        assert_eq!(lcc(&g)[0], 1.0);
        // A reciprocal pair is one neighbour: N(0) = {1}, so LCC(0) = 0.
        let g = Csr::from_edges(2, &[(0, 1), (1, 0)], false);
        assert_eq!(lcc(&g), [0.0, 0.0]);
    }

    #[test]
    fn undirected_is_two_t_over_k_k_minus_one() {
        // A triangle 0-1-2 plus a pendant 3 on 0: T(0) = 1, k(0) = 3 gives 2/6.
        let g = Csr::from_edges(4, &[(0, 1), (1, 2), (2, 0), (0, 3)], true);
        let got = lcc(&g);
        assert!((got[0] - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(&got[1..], [1.0, 1.0, 0.0]);
    }

    #[test]
    fn self_loops_are_ignored() {
        let g = Csr::from_edges(3, &[(0, 0), (0, 1), (0, 2), (1, 1), (1, 2)], false);
        assert_eq!(lcc(&g), [0.5, 0.5, 0.5]);
    }

    #[test]
    fn a_hub_next_to_thousands_of_small_vertices() {
        // A wheel: hub 0 joined to a directed cycle of 5000 rim vertices.
        let rim: VertexId = 5000;
        let mut edges: Vec<_> = (1..=rim).map(|i| (0, i)).collect();
        edges.extend((1..=rim).map(|i| (i, i % rim + 1)));
        let g = Csr::from_edges(rim as usize + 1, &edges, false);
        let got = lcc(&g);
        let k = rim as f64;
        // N(0) is the whole rim, with one cycle edge per rim vertex: k / (k (k - 1)).
        assert!((got[0] - 1.0 / (k - 1.0)).abs() <= 1e-12 * got[0]);
        // N(1) = {0, 2, rim}: links 0 -> 2 and 0 -> rim (rim -> 1 and 1 -> 2 touch 1 itself).
        assert!((got[1] - 2.0 / 6.0).abs() < 1e-15);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
        #[test]
        fn matches_sequential_reference((undirected, steps) in history()) {
            let v = Views::build(undirected, &steps);
            let want = reference(&v.model);
            assert_close(&v.csr_map(&lcc(&v.csr)), &want, "csr");
            assert_close(&v.snap_map(&lcc(&v.snap)), &want, "snapshot");
        }
    }
}
