//! Weakly connected components (Graphalytics WCC).
//!
//! Definition (spec §"Algorithms", WCC; SPEC.md §2): the graph is treated as undirected, and
//! two vertices get the same label exactly when they are in the same component. The spec's
//! pseudo-code labels a component with its smallest vertex id, but validation only tests
//! that the labels induce the same partition (equivalence rule), so any labelling passes.
//!
//! Computed by the GAP kernel, Afforest ([`crate::algo::gap::cc::afforest`]): it samples a
//! couple of edges per vertex, guesses the giant component and skips the giant's edges in
//! the final linking pass, where a plain union over every edge would read them all (on
//! Kron20 that pass took 2.8x Afforest's time). Afforest always hooks the larger root under
//! the smaller, so each final label is the component's smallest dense id, as the spec's
//! pseudo-code has it.

use crate::GraphView;

/// Component label per dense id: the smallest dense id in the vertex's weakly connected
/// component.
///
/// Edge direction is ignored and self-loops change nothing. A deleted vertex has no edges,
/// so it is its own singleton component (label = its own id).
#[must_use = "the kernel's result is its return value"]
pub fn wcc<G: GraphView>(g: &G) -> Vec<u64> {
    crate::algo::gap::cc::afforest(g)
        .into_iter()
        .map(u64::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::graphalytics::testkit::{example, history, Model, Views};
    use crate::snapshot::Csr;
    use crate::VertexId;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// Sequential flood fill over both directions, labelling with the smallest external id.
    fn reference(m: &Model) -> BTreeMap<u64, u64> {
        let mut label: BTreeMap<u64, u64> = BTreeMap::new();
        for &s in &m.vertices {
            if label.contains_key(&s) {
                continue;
            }
            // Vertices are visited in ascending order, so `s` is its component's minimum.
            let mut stack = vec![s];
            label.insert(s, s);
            while let Some(u) = stack.pop() {
                for w in m.out(u).into_iter().chain(m.inn(u)) {
                    if label.insert(w, s).is_none() {
                        stack.push(w);
                    }
                }
            }
        }
        label
    }

    /// Whether two labellings induce the same partition (the validator's equivalence rule).
    fn same_partition(a: &BTreeMap<u64, u64>, b: &BTreeMap<u64, u64>) -> bool {
        let mut ab = BTreeMap::new();
        let mut ba = BTreeMap::new();
        a.keys().eq(b.keys())
            && a.iter().all(|(v, la)| {
                let lb = b[v];
                *ab.entry(*la).or_insert(lb) == lb && *ba.entry(lb).or_insert(*la) == *la
            })
    }

    #[test]
    fn examples_are_one_component() {
        for undirected in [false, true] {
            let (g, _) = example(undirected);
            assert!(wcc(&g).iter().all(|&l| l == 0));
        }
    }

    #[test]
    fn direction_is_ignored_and_labels_are_minimum_ids() {
        // {0, 3, 5} joined only by edges pointing away from 0; {1, 4} via a reverse edge;
        // 2 isolated with a self-loop; 6 alone.
        let g = Csr::from_edges(7, &[(5, 3), (3, 0), (4, 1), (2, 2)], false);
        assert_eq!(wcc(&g), [0, 1, 2, 0, 1, 0, 6]);
        assert!(wcc(&Csr::from_edges(0, &[], false)).is_empty());
    }

    #[test]
    fn long_chain_built_backwards_is_one_component() {
        let n: VertexId = 3000;
        let edges: Vec<_> = (1..n).rev().map(|i| (i, i - 1)).collect();
        let g = Csr::from_edges(n as usize, &edges, false);
        assert!(wcc(&g).iter().all(|&l| l == 0));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
        #[test]
        fn matches_sequential_reference((undirected, steps) in history()) {
            let v = Views::build(undirected, &steps);
            let want = reference(&v.model);
            let csr = wcc(&v.csr);
            let snap = wcc(&v.snap);
            prop_assert!(same_partition(&v.csr_map(&csr), &want));
            prop_assert!(same_partition(&v.snap_map(&snap), &want));
            // Labels are the components' smallest dense ids.
            for (u, &l) in csr.iter().enumerate() {
                prop_assert!(l <= u as u64 && csr[l as usize] == l);
            }
            for (u, &l) in snap.iter().enumerate() {
                prop_assert!(l <= u as u64 && snap[l as usize] == l);
            }
        }
    }
}
