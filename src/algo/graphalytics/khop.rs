//! k-hop neighbourhood queries (not a Graphalytics kernel; the LDBC SNB "friends of
//! friends" shape).
//!
//! `one_hop(v)` is `N_out(v)`; `two_hop(v)` is every vertex reachable from `v` in exactly one
//! or two out-hops, i.e. `N_out(v) ∪ ⋃_{u ∈ N_out(v)} N_out(u)`, without `v` itself. Both
//! return sorted, distinct dense ids, computed sequentially (one query is small work).

use crate::{GraphView, VertexId};

/// Sorted, distinct out-neighbours of `v`; empty for a deleted or out-of-range vertex.
///
/// This is the adjacency as stored: a self-loop puts `v` in its own one-hop list.
#[must_use = "the kernel's result is its return value"]
pub fn one_hop<G: GraphView>(g: &G, v: VertexId) -> Vec<VertexId> {
    let mut out = Vec::new();
    if g.vertex_exists(v) {
        g.out_neighbors_sorted(v, &mut out);
        out.dedup();
    }
    out
}

/// Sorted, distinct vertices reachable from `v` in one or two out-hops, excluding `v`.
///
/// `v` is left out even when a self-loop or a cycle `v → u → v` reaches it: the question is
/// "who is near `v`", and `v` is not its own neighbour. (A one-hop neighbour stays in even
/// if it is also two hops away.) Empty for a deleted or out-of-range vertex.
#[must_use = "the kernel's result is its return value"]
pub fn two_hop<G: GraphView>(g: &G, v: VertexId) -> Vec<VertexId> {
    let first = one_hop(g, v);
    let mut out = first.clone();
    for &u in &first {
        if u != v {
            g.for_each_out(u, |w| out.push(w));
        }
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|&w| w != v);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::graphalytics::testkit::{example, history, Model, Views};
    use crate::snapshot::Csr;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// One- and two-hop sets on the model, from the definitions.
    fn reference(m: &Model, v: u64) -> (BTreeSet<u64>, BTreeSet<u64>) {
        let one = m.out(v);
        let mut two: BTreeSet<u64> = one.iter().flat_map(|&u| m.out(u)).collect();
        two.extend(one.iter().copied());
        two.remove(&v);
        (one, two)
    }

    #[test]
    fn example_directed_neighbourhoods() {
        // Dense id = vertex - 1. 1 -> {3, 5}; 3 -> {1, 5, 8, 10}; 5 -> {3, 4, 8}.
        let (g, first) = example(false);
        let ext = |vs: Vec<VertexId>| vs.into_iter().map(|x| x + first).collect::<Vec<_>>();
        assert_eq!(ext(one_hop(&g, 0)), [3, 5]);
        assert_eq!(ext(two_hop(&g, 0)), [3, 4, 5, 8, 10]);
        assert_eq!(
            ext(two_hop(&g, 3)),
            Vec::<VertexId>::new(),
            "vertex 4 is a sink"
        );
    }

    #[test]
    fn self_loops_and_cycles_do_not_return_v() {
        let g = Csr::from_edges(4, &[(0, 0), (0, 1), (1, 0), (1, 2), (2, 3)], false);
        assert_eq!(one_hop(&g, 0), [0, 1]);
        assert_eq!(two_hop(&g, 0), [1, 2]);
        assert_eq!(two_hop(&g, 1), [0, 2, 3]);
        assert!(one_hop(&g, 9).is_empty() && two_hop(&g, 9).is_empty());
        let g = Csr::from_edges(3, &[(0, 1), (1, 2)], true);
        assert_eq!(two_hop(&g, 1), [0, 2]);
        assert_eq!(two_hop(&g, 0), [1, 2]);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
        #[test]
        fn matches_sequential_reference((undirected, steps) in history()) {
            let v = Views::build(undirected, &steps);
            for &x in &v.model.vertices {
                let (one, two) = reference(&v.model, x);
                let csr = |vs: Vec<VertexId>| vs.into_iter().map(|d| v.csr_ext(d)).collect::<BTreeSet<_>>();
                let snap = |vs: Vec<VertexId>| vs.into_iter().map(|d| v.snap.external_id(d)).collect::<BTreeSet<_>>();
                let (c1, c2) = (one_hop(&v.csr, v.csr_dense(x)), two_hop(&v.csr, v.csr_dense(x)));
                let (s1, s2) = (one_hop(&v.snap, v.snap_dense(x)), two_hop(&v.snap, v.snap_dense(x)));
                for list in [&c1, &c2, &s1, &s2] {
                    prop_assert!(list.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
                }
                prop_assert_eq!(csr(c1), one.clone());
                prop_assert_eq!(csr(c2), two.clone());
                prop_assert_eq!(snap(s1), one);
                prop_assert_eq!(snap(s2), two);
            }
        }
    }
}
