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
//! For every vertex: build the sorted neighbourhood `N(v)` and mark it in a bitmap, then
//! for each `u ∈ N(v)` count `u`'s out-neighbours that are marked, either by scanning `u`'s
//! list (cost `d(u)`) or, when `u` is a hub next to a small neighbourhood, by probing `u`'s
//! sorted list for each member of `N(v)` (cost `k·log d(u)`; in compressed lists each block
//! that may hold a member is decoded once), whichever is cheaper. So a hub's list is never
//! copied or merged for each of its many small neighbours, which made the straightforward
//! merge quadratic on power-law graphs. Vertices are spread over
//! threads in small chunks (work stealing acts as dynamic scheduling for power-law
//! degrees), and a hub's own neighbourhood is itself split.

use crate::{GraphView, VertexId};
use rayon::prelude::*;

/// Vertices per work item: small, so that hubs do not leave one thread with a long tail.
const CHUNK: usize = 64;
/// Neighbourhoods at least this large are intersected in parallel.
const BIG: usize = 4096;

/// Sorted, deduplicated `N_in(v) ∪ N_out(v) \ {v}` into `out`.
fn neighbourhood<G: GraphView>(
    g: &G,
    v: VertexId,
    out: &mut Vec<VertexId>,
    tmp: &mut Vec<VertexId>,
) {
    g.out_neighbors_sorted(v, out);
    if !g.is_undirected() {
        g.in_neighbors_sorted(v, tmp);
        out.extend_from_slice(tmp);
        out.sort_unstable();
    }
    out.dedup();
    out.retain(|&u| u != v);
}

/// A set of dense ids as a bitmap over the whole id space.
struct Marks(Vec<u64>);

thread_local! {
    /// A cleared bitmap this thread can reuse: allocating one per work item would zero
    /// `n / 8` bytes thousands of times.
    static SPARE: std::cell::Cell<Option<Marks>> = const { std::cell::Cell::new(None) };
}

impl Marks {
    /// A cleared bitmap for `n` ids: this thread's spare, or a new one. (A hub's parallel
    /// part may run another vertex on this thread meanwhile; it then finds no spare and
    /// allocates, so the two never share.)
    fn take(n: usize) -> Marks {
        SPARE
            .take()
            .filter(|m| m.0.len() == n.div_ceil(64))
            .unwrap_or_else(|| Marks(vec![0; n.div_ceil(64)]))
    }
    /// Returns a bitmap, cleared by the caller, to this thread.
    fn give_back(self) {
        SPARE.set(Some(self));
    }
    fn set(&mut self, vs: &[VertexId], on: bool) {
        for &v in vs {
            let (w, b) = (v as usize / 64, v % 64);
            if on {
                self.0[w] |= 1 << b;
            } else {
                self.0[w] &= !(1 << b);
            }
        }
    }
    #[inline]
    fn has(&self, v: VertexId) -> bool {
        self.0[v as usize / 64] >> (v % 64) & 1 != 0
    }
}

/// Directed edges `u → w` with `u` in `part` (a slice of `nbrs`), `w ∈ nbrs`, `u ≠ w`;
/// `marks` holds exactly `nbrs`.
fn links_from<G: GraphView>(g: &G, part: &[VertexId], nbrs: &[VertexId], marks: &Marks) -> u64 {
    let k = nbrs.len();
    part.iter()
        .map(|&u| {
            let d = g.out_degree(u);
            if d > k.saturating_mul(g.lookup_cost(d)) {
                // `u` itself is in `nbrs`; a self-loop must not count.
                (g.count_out_among(u, nbrs) - usize::from(g.has_edge(u, u))) as u64
            } else {
                g.fold_out(u, 0, |c, w| c + u64::from(w != u && marks.has(w)))
            }
        })
        .sum()
}

/// Local clustering coefficient per dense id (directed definition; see the module docs).
///
/// Self-loops are ignored: `v` is never in its own neighbourhood, and an edge `u → u` never
/// counts in the numerator, so values stay within `[0, 1]`. Deleted vertices get 0.0.
#[must_use = "the kernel's result is its return value"]
pub fn lcc<G: GraphView>(g: &G) -> Vec<f64> {
    let n = g.num_vertices();
    crate::types::par_vertices(n)
        .with_max_len(CHUNK)
        .map_init(
            || (Vec::new(), Vec::new()),
            |(nbrs, tmp), v| {
                neighbourhood(g, v, nbrs, tmp);
                let k = nbrs.len();
                if k <= 1 {
                    return 0.0;
                }
                let mut m = Marks::take(n);
                m.set(nbrs, true);
                let links = if k >= BIG {
                    let (m, nbrs) = (&m, &nbrs[..]);
                    nbrs.par_chunks(CHUNK)
                        .map(|part| links_from(g, part, nbrs, m))
                        .sum()
                } else {
                    links_from(g, nbrs, nbrs, &m)
                };
                m.set(nbrs, false);
                m.give_back();
                links as f64 / (k as f64 * (k - 1) as f64)
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::graphalytics::testkit::{assert_close, by_id, example, history, Model, Views};
    use crate::snapshot::Csr;
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
    fn hub_takes_the_parallel_path() {
        // A wheel: hub 0 joined to a directed cycle of BIG + 10 rim vertices.
        let rim = (BIG + 10) as VertexId;
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
