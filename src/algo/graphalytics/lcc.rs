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
//! For every vertex: build the sorted neighbourhood `N(v)`, then for each `u ∈ N(v)`
//! intersect `u`'s sorted out-list with `N(v)` (merge, or binary search when the sizes are
//! far apart). Vertices are spread over threads in small chunks (work stealing acts as
//! dynamic scheduling for power-law degrees), and a hub's neighbourhood is itself split.

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

/// `|a ∩ b \ {skip}|` for sorted, duplicate-free `a` and `b`.
fn count_common(a: &[VertexId], b: &[VertexId], skip: VertexId) -> u64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut common = 0;
    if small.len() * 32 < large.len() {
        let mut rest = large;
        for &x in small {
            let i = rest.partition_point(|&y| y < x);
            if rest.get(i) == Some(&x) {
                common += u64::from(x != skip);
                rest = &rest[i + 1..];
            } else {
                rest = &rest[i..];
            }
        }
    } else {
        let (mut i, mut j) = (0, 0);
        while i < small.len() && j < large.len() {
            match small[i].cmp(&large[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    common += u64::from(small[i] != skip);
                    i += 1;
                    j += 1;
                }
            }
        }
    }
    common
}

/// Directed edges `u → w` with `u, w ∈ nbrs`, `u ≠ w`.
fn links_within<G: GraphView>(g: &G, nbrs: &[VertexId], adj: &mut Vec<VertexId>) -> u64 {
    let mut links = 0;
    for &u in nbrs {
        g.out_neighbors_sorted(u, adj);
        adj.dedup();
        links += count_common(adj, nbrs, u);
    }
    links
}

/// Local clustering coefficient per dense id (directed definition; see the module docs).
///
/// Self-loops are ignored: `v` is never in its own neighbourhood, and an edge `u → u` never
/// counts in the numerator, so values stay within `[0, 1]`. Deleted vertices get 0.0.
pub fn lcc<G: GraphView>(g: &G) -> Vec<f64> {
    (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .with_max_len(CHUNK)
        .map_init(
            || (Vec::new(), Vec::new(), Vec::new()),
            |(nbrs, tmp, adj), v| {
                neighbourhood(g, v, nbrs, tmp);
                let k = nbrs.len();
                if k <= 1 {
                    return 0.0;
                }
                let links = if k >= BIG {
                    nbrs.par_chunks(CHUNK)
                        .map_init(Vec::new, |adj, part| {
                            part.iter()
                                .map(|&u| {
                                    g.out_neighbors_sorted(u, adj);
                                    adj.dedup();
                                    count_common(adj, nbrs, u)
                                })
                                .sum::<u64>()
                        })
                        .sum()
                } else {
                    links_within(g, nbrs, adj)
                };
                links as f64 / (k as f64 * (k - 1) as f64)
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::graphalytics::testkit::{assert_close, example, history, Model, Views};
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

    fn by_id(first: u32, vals: &[f64]) -> BTreeMap<u64, f64> {
        (first as u64..).zip(vals.iter().copied()).collect()
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
        let rim = (BIG + 10) as u32;
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

    #[test]
    fn count_common_merges_and_gallops() {
        let big: Vec<u32> = (0..1000).map(|i| i * 3).collect();
        assert_eq!(count_common(&[3, 4, 9, 2997, 5000], &big, u32::MAX), 3);
        assert_eq!(count_common(&big, &[3, 4, 9, 2997, 5000], 9), 2);
        assert_eq!(count_common(&[1, 2, 3], &[2, 3, 4], 7), 2);
        assert_eq!(count_common(&[], &big, 0), 0);
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
