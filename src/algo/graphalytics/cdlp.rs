//! Community detection by label propagation (Graphalytics CDLP).
//!
//! Definition (spec §"Algorithms", CDLP, and its pseudo-code; SPEC.md §2): `L_0(v)` is `v`'s
//! own vertex id. In each of exactly `max-iterations` synchronous rounds (no early stop), a
//! vertex counts the labels of `N_in(v)` and, separately, of `N_out(v)`, and adds the two
//! counts, so in a directed graph a neighbour joined by edges in both directions counts
//! twice. The new label is the *smallest* of the most frequent labels; a vertex without
//! neighbours keeps its label. Validation is exact, so labels must be real vertex ids.
//!
//! In an undirected graph `N_in(v) = N_out(v)`: counting both would double every count,
//! which cannot change the winner, so each neighbour is counted once there.

use crate::GraphView;
use rayon::prelude::*;

/// The most frequent label in `labels` (sorted here), the smallest among ties.
fn most_frequent(labels: &mut [u64]) -> Option<u64> {
    labels.sort_unstable();
    let mut best: Option<(usize, u64)> = None;
    for run in labels.chunk_by(|a, b| a == b) {
        // Runs come in ascending label order, so `>` keeps the smallest label of a tie.
        if best.is_none_or(|(count, _)| run.len() > count) {
            best = Some((run.len(), run[0]));
        }
    }
    best.map(|(_, label)| label)
}

/// Labels after exactly `iterations` rounds, per dense id, starting from `label_of[v]`.
///
/// Pass each vertex's *external* id as its initial label: the validation is exact on real
/// vertex ids. A self-loop is an ordinary edge: `v` is then its own in- and out-neighbour,
/// so its current label counts twice in a directed graph and once in an undirected one.
/// Deleted vertices have no edges, so they keep their initial label.
///
/// # Panics
///
/// If `label_of.len() != g.num_vertices()`.
#[must_use = "the kernel's result is its return value"]
pub fn cdlp<G: GraphView>(g: &G, iterations: u32, label_of: &[u64]) -> Vec<u64> {
    let n = g.num_vertices();
    assert_eq!(label_of.len(), n, "cdlp: one initial label per dense id");
    let directed = !g.is_undirected();
    let mut labels = label_of.to_vec();
    let mut next = Vec::with_capacity(n);
    for _ in 0..iterations {
        crate::types::par_vertices(n)
            .map_init(Vec::new, |seen: &mut Vec<u64>, v| {
                seen.clear();
                g.for_each_out(v, |w| seen.push(labels[w as usize]));
                if directed {
                    g.for_each_in(v, |u| seen.push(labels[u as usize]));
                }
                most_frequent(seen).unwrap_or(labels[v as usize])
            })
            .collect_into_vec(&mut next);
        std::mem::swap(&mut labels, &mut next);
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::graphalytics::testkit::{example, history, Model, Views};
    use crate::snapshot::Csr;
    use crate::VertexId;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// The spec's pseudo-code on the model: count labels over N_in and N_out separately and
    /// add (in an undirected graph both are N(v), which doubles every count).
    fn reference(m: &Model, iterations: u32) -> BTreeMap<u64, u64> {
        let mut label: BTreeMap<u64, u64> = m.vertices.iter().map(|&v| (v, v)).collect();
        for _ in 0..iterations {
            label = m
                .vertices
                .iter()
                .map(|&v| {
                    let mut count: BTreeMap<u64, usize> = BTreeMap::new();
                    for u in m.inn(v).into_iter().chain(m.out(v)) {
                        *count.entry(label[&u]).or_default() += 1;
                    }
                    let max = count.values().copied().max();
                    // BTreeMap iterates labels in ascending order: the first maximum wins.
                    let new = count.iter().find(|c| Some(*c.1) == max).map(|c| *c.0);
                    (v, new.unwrap_or(label[&v]))
                })
                .collect();
        }
        label
    }

    fn externals(first: VertexId, n: usize) -> Vec<u64> {
        (first as u64..).take(n).collect()
    }

    #[test]
    fn example_directed_matches_the_spec() {
        let (g, first) = example(false);
        let got = cdlp(&g, 2, &externals(first, 10));
        assert_eq!(got, [1, 2, 3, 4, 1, 1, 2, 3, 2, 1]);
    }

    #[test]
    fn example_undirected_matches_the_spec() {
        let (g, first) = example(true);
        let got = cdlp(&g, 2, &externals(first, 9));
        assert_eq!(got, [2, 3, 2, 2, 6, 5, 2, 5, 5]);
    }

    #[test]
    fn reciprocal_edges_count_twice_when_directed() {
        // 0 <-> 1, 2 -> 0, 3 -> 0, labels 10, 30, 20, 20: vertex 0 sees 30 twice (1 is an in-
        // and an out-neighbour) and 20 twice; the tie goes to the smaller label, 20.
        let g = Csr::from_edges(4, &[(0, 1), (1, 0), (2, 0), (3, 0)], false);
        assert_eq!(cdlp(&g, 1, &[10, 30, 20, 20]), [20, 10, 10, 10]);
        // Without 3 -> 0, the reciprocal neighbour's double count wins (counted once, 20
        // would win the tie); 3 has no neighbours and keeps its label.
        let g = Csr::from_edges(4, &[(0, 1), (1, 0), (2, 0)], false);
        assert_eq!(cdlp(&g, 1, &[10, 30, 20, 20]), [30, 10, 10, 20]);
    }

    #[test]
    fn rounds_are_synchronous_and_exact_in_number() {
        // An undirected edge swaps the two labels every round (no early stop).
        let g = Csr::from_edges(3, &[(0, 1)], true);
        assert_eq!(cdlp(&g, 0, &[5, 9, 7]), [5, 9, 7]);
        assert_eq!(cdlp(&g, 1, &[5, 9, 7]), [9, 5, 7]);
        assert_eq!(cdlp(&g, 2, &[5, 9, 7]), [5, 9, 7]);
        assert_eq!(cdlp(&g, 3, &[5, 9, 7]), [9, 5, 7]);
    }

    #[test]
    fn self_loop_counts_own_label() {
        // 0 -> 0, 0 -> 1: vertex 0 sees its own label 4 twice and 1's label 8 once.
        let g = Csr::from_edges(2, &[(0, 0), (0, 1)], false);
        assert_eq!(cdlp(&g, 1, &[4, 8]), [4, 4]);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
        #[test]
        fn matches_sequential_reference((undirected, steps) in history(), iterations in 0u32..6) {
            let v = Views::build(undirected, &steps);
            let want = reference(&v.model, iterations);
            let csr_labels: Vec<u64> = (0..v.csr.num_vertices() as VertexId).map(|d| v.csr_ext(d)).collect();
            let csr = cdlp(&v.csr, iterations, &csr_labels);
            prop_assert_eq!(v.csr_map(&csr), want.clone());
            let snap = cdlp(&v.snap, iterations, v.snap.external_ids());
            prop_assert_eq!(v.snap_map(&snap), want);
        }
    }
}
