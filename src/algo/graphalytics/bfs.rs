//! Breadth-first search (Graphalytics BFS).
//!
//! Definition (spec §"Algorithms", BFS; SPEC.md §2): for every vertex, the number of hops on
//! a shortest path from the root following out-edges only; the root has depth 0 and an
//! unreachable vertex gets `9223372036854775807` (2^63 − 1). Validation is exact.
//!
//! Computed by GAPBS's direction-optimizing search ([`crate::algo::gap::bfs`]), recording
//! each vertex's depth where the GAP kernel records its parent: top-down steps while the
//! frontier is small, bottom-up steps (each unreached vertex looks for an in-neighbor in the
//! frontier) while it is large. A top-down-only search read every edge of the big levels
//! and took 4.5x the GAP kernel's time on Kron20.

use crate::{GraphView, VertexId};

/// Depth of a vertex the root does not reach.
pub use crate::types::UNREACHABLE;

/// Hop distance from `source` along out-edges, per dense id; [`UNREACHABLE`] where none.
///
/// Self-loops are harmless (they reach nothing new). A deleted vertex has no edges, so it is
/// [`UNREACHABLE`]; if `source` itself is deleted or out of range, every vertex is.
#[must_use = "the kernel's result is its return value"]
pub fn bfs<G: GraphView>(g: &G, source: VertexId) -> Vec<i64> {
    crate::algo::gap::bfs::search(g, source, UNREACHABLE, |_, depth| depth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::graphalytics::testkit::{example, history, Model, Views};
    use crate::snapshot::Csr;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, VecDeque};

    /// Textbook sequential BFS on the model, in external ids.
    fn reference(m: &Model, source: u64) -> BTreeMap<u64, i64> {
        let mut depth: BTreeMap<u64, i64> = m.vertices.iter().map(|&v| (v, UNREACHABLE)).collect();
        depth.insert(source, 0);
        let mut queue = VecDeque::from([source]);
        while let Some(u) = queue.pop_front() {
            for w in m.out(u) {
                if depth[&w] == UNREACHABLE {
                    depth.insert(w, depth[&u] + 1);
                    queue.push_back(w);
                }
            }
        }
        depth
    }

    #[test]
    fn example_directed_matches_the_spec() {
        let (g, first) = example(false);
        let got = bfs(&g, 1 - first);
        let u = UNREACHABLE;
        assert_eq!(got, [0, u, 1, 2, 1, u, u, 2, u, 2]);
    }

    #[test]
    fn example_undirected_matches_the_spec() {
        let (g, first) = example(true);
        assert_eq!(bfs(&g, 2 - first), [0, 1, 1, 2, 3, 4, 2, 4, 4]);
    }

    #[test]
    fn follows_out_edges_only_and_ignores_self_loops() {
        // 0 -> 1 -> 2, 3 -> 0, 1 -> 1, 4 isolated.
        let g = Csr::from_edges(5, &[(0, 1), (1, 2), (3, 0), (1, 1)], false);
        let u = UNREACHABLE;
        assert_eq!(bfs(&g, 0), [0, 1, 2, u, u]);
        assert_eq!(bfs(&g, 4), [u, u, u, u, 0]);
        assert_eq!(bfs(&g, 9), [u; 5], "a source out of range reaches nothing");
        let g = Csr::from_edges(5, &[(0, 1), (1, 2), (3, 0), (1, 1)], true);
        assert_eq!(bfs(&g, 2), [2, 1, 0, 3, u]);
        assert!(bfs(&Csr::from_edges(0, &[], false), 0).is_empty());
    }

    #[test]
    fn long_path_has_one_level_per_vertex() {
        let n: VertexId = 2000;
        let edges: Vec<_> = (0..n - 1).map(|i| (i, i + 1)).collect();
        let g = Csr::from_edges(n as usize, &edges, false);
        assert!(bfs(&g, 0).into_iter().eq(0..n as i64));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
        #[test]
        fn matches_sequential_reference((undirected, steps) in history(), pick in any::<prop::sample::Index>()) {
            let v = Views::build(undirected, &steps);
            let ids: Vec<u64> = v.model.vertices.iter().copied().collect();
            prop_assume!(!ids.is_empty());
            let src = ids[pick.index(ids.len())];
            let want = reference(&v.model, src);
            prop_assert_eq!(v.csr_map(&bfs(&v.csr, v.csr_dense(src))), want.clone());
            prop_assert_eq!(v.snap_map(&bfs(&v.snap, v.snap_dense(src))), want);
        }
    }
}
