//! Weakly connected components (Graphalytics WCC).
//!
//! Definition (spec §"Algorithms", WCC; SPEC.md §2): the graph is treated as undirected, and
//! two vertices get the same label exactly when they are in the same component. The spec's
//! pseudo-code labels a component with its smallest vertex id, but validation only tests
//! that the labels induce the same partition (equivalence rule), so any labelling passes.
//!
//! A concurrent union-find in the style of GAPBS's Afforest/Shiloach–Vishkin hooking: every
//! edge (seen once, from its source's out-list, which covers both directions) links the
//! roots of its endpoints, always hooking the larger root under the smaller one with a
//! compare-and-swap, with path halving on the way up. Because a root only ever gains a
//! smaller parent, `parent[x] <= x` always holds and the final root of each component is its
//! smallest dense id.

use crate::types::AtomicVertexId;
use crate::{GraphView, VertexId};
use rayon::prelude::*;
use std::sync::atomic::Ordering;

/// Follows parents to the root, halving the path as it goes.
fn find(parent: &[AtomicVertexId], mut x: VertexId) -> VertexId {
    loop {
        let p = parent[x as usize].load(Ordering::Relaxed);
        if p == x {
            return x;
        }
        let gp = parent[p as usize].load(Ordering::Relaxed);
        if gp != p {
            // Point x at its grandparent; losing this race to another thread is harmless.
            let _ = parent[x as usize].compare_exchange_weak(
                p,
                gp,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
        x = gp;
    }
}

/// Merges the components of `u` and `v`.
fn union(parent: &[AtomicVertexId], u: VertexId, v: VertexId) {
    let (mut a, mut b) = (u, v);
    loop {
        a = find(parent, a);
        b = find(parent, b);
        if a == b {
            return;
        }
        let (hi, lo) = if a > b { (a, b) } else { (b, a) };
        if parent[hi as usize]
            .compare_exchange(hi, lo, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        // `hi` got a parent meanwhile: retry from the new roots.
    }
}

/// Component label per dense id: the smallest dense id in the vertex's weakly connected
/// component.
///
/// Edge direction is ignored and self-loops change nothing. A deleted vertex has no edges,
/// so it is its own singleton component (label = its own id).
#[must_use = "the kernel's result is its return value"]
pub fn wcc<G: GraphView>(g: &G) -> Vec<u64> {
    let n = g.num_vertices();
    let parent: Vec<AtomicVertexId> = (0..n as VertexId).map(AtomicVertexId::new).collect();
    crate::types::par_vertices(n).for_each(|u| {
        g.for_each_out(u, |w| {
            if w != u {
                union(&parent, u, w);
            }
        })
    });
    crate::types::par_vertices(n)
        .map(|v| find(&parent, v) as u64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::graphalytics::testkit::{example, history, Model, Views};
    use crate::snapshot::Csr;
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
