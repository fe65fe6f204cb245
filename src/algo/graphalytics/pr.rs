//! PageRank (Graphalytics PR).
//!
//! Definition (spec §"Algorithms", PageRank, and its pseudo-code; SPEC.md §2):
//! `PR_0(v) = 1/|V|`, then for a fixed number of synchronous iterations
//!
//! ```text
//! PR_i(v) = (1 − d)/|V| + d · Σ_{u ∈ N_in(v)} PR_{i−1}(u)/|N_out(u)| + (d/|V|) · Σ_{w ∈ D} PR_{i−1}(w)
//! ```
//!
//! where `D` is the set of sinks (out-degree 0): their rank is spread evenly over *all*
//! vertices, sinks included, so the ranks always sum to 1. There is no convergence test.
//! An undirected edge counts as two directed edges. Validation is relative, 1e-4.
//!
//! Pull-based like GAPBS's `PageRankPull`: each round first computes every vertex's outgoing
//! contribution `PR(u)/|N_out(u)|` and the sinks' total, then every vertex sums the
//! contributions of its in-neighbours, in parallel over vertices.
//!
//! Ranks and sums are `f64`; the contributions are stored as `f32`, as GAPBS stores its
//! scores. The random reads of the pull loop are the kernel's cost, and 4-byte
//! contributions halve the bytes they touch (4 MB instead of 8 MB at a million vertices,
//! past a 1 MB L2 either way): with `f64` contributions this kernel took 1.1-1.4x the time
//! of as many GAP PageRank sweeps on Kron20, with `f32` 0.92-1.0x. The price is a rounding of 2^-24 (relative) per
//! contribution, which the damping factor `d` passes on shrunk: ranks are within
//! 2^-24 · min(iterations, 1/(1 − d)) relative of an all-`f64` computation (4e-7 at
//! d = 0.85; 3.8e-8 measured on Kron20 after 20 iterations), far inside the validation
//! tolerance. Results stay deterministic: every sum runs in a fixed order.
//!
//! Tried and slower: one pass per iteration that pulls, sets the rank and writes the next
//! contribution into a second buffer: 1.35x this kernel when the vertices of a task ran in
//! a plain loop, 1.05-1.1x as rayon items (in-process, Kron20).

use crate::snapshot::SweepIn;
use crate::types::par_vertex_chunks_mut;
use crate::{GraphView, VertexId};
use rayon::prelude::*;
use std::ops::Range;

/// Vertices per chunk of the contribution pass (fixed, so the sink-mass sum is
/// deterministic).
const CHUNK: usize = 4096;

/// How far (relative) the ranks may be from ranks computed with `f64` contributions, for
/// damping up to 0.85 or up to 16 iterations: what the tests hold the kernel to.
#[cfg(test)]
pub(crate) const RELATIVE_ERROR: f64 = 1e-6;

/// PageRank with damping factor `damping` after exactly `iterations` rounds, per dense id.
///
/// |V| counts existing vertices only; a deleted vertex gets 0.0. A self-loop is an ordinary
/// edge: it counts in the vertex's out-degree and hands that share of its rank back to
/// itself (a vertex whose only edge is a self-loop is therefore not a sink). With no existing
/// vertex the result is all zeros. Contributions are rounded to `f32` (a relative error
/// below 1e-6 in the ranks at the usual damping; see the module documentation).
#[must_use = "the kernel's result is its return value"]
pub fn pagerank<G: GraphView>(g: &G, damping: f64, iterations: u32) -> Vec<f64> {
    let n = g.num_vertices();
    let exists = crate::algo::vertex_arrays::exists_flags(g);
    let live = exists.iter().filter(|&&e| e).count();
    if live == 0 {
        return vec![0.0; n];
    }
    let nv = live as f64;
    let inv_degree = crate::algo::vertex_arrays::inverse_out_degrees(g);
    let mut rank: Vec<f64> = exists
        .iter()
        .map(|&e| if e { 1.0 / nv } else { 0.0 })
        .collect();
    let mut contrib = vec![0.0f32; n];
    for _ in 0..iterations {
        let sink_mass = contribute(&rank, &inv_degree, &mut contrib);
        let base = (1.0 - damping) / nv + damping * sink_mass / nv;
        g.sweep_in(&mut Pull {
            rank: &mut rank,
            contrib: &contrib,
            exists: &exists,
            base,
            damping,
        });
    }
    rank
}

/// One iteration's pull, over the vertices a view hands over (all at once, or a window at
/// a time when it streams its lists).
struct Pull<'a> {
    rank: &'a mut [f64],
    contrib: &'a [f32],
    exists: &'a [bool],
    base: f64,
    damping: f64,
}

impl SweepIn for Pull<'_> {
    fn visit<W: GraphView>(&mut self, vs: Range<usize>, g: &W) {
        let Pull {
            contrib,
            exists,
            base,
            damping,
            ..
        } = *self;
        par_vertex_chunks_mut(&mut self.rank[vs.clone()]).for_each(|(first, chunk)| {
            for (v, r) in (vs.start + first..).zip(chunk.iter_mut()) {
                if exists[v] {
                    let mut incoming = 0.0;
                    g.for_each_in(v as VertexId, |u| {
                        incoming += f64::from(contrib[u as usize])
                    });
                    *r = base + damping * incoming;
                }
            }
        });
    }
}

/// Sets every vertex's contribution from its rank; returns the sinks' ranks summed (a
/// deleted vertex has rank 0, so it adds nothing). One pass over the ranks for both, in
/// chunks of [`CHUNK`] whose partial sums are added in order.
fn contribute(rank: &[f64], inv_degree: &[f64], contrib: &mut [f32]) -> f64 {
    contrib
        .par_chunks_mut(CHUNK)
        .zip(rank.par_chunks(CHUNK))
        .zip(inv_degree.par_chunks(CHUNK))
        .map(|((contrib, ranks), inv)| {
            let mut sink = 0.0;
            for ((c, &r), &inv) in contrib.iter_mut().zip(ranks).zip(inv) {
                *c = (r * inv) as f32;
                if inv == 0.0 {
                    sink += r;
                }
            }
            sink
        })
        .collect::<Vec<f64>>()
        .iter()
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::graphalytics::testkit::{
        assert_within, by_id, example, history, Model, Views,
    };
    use crate::snapshot::Csr;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// The spec's formula, literally, on the model.
    fn reference(m: &Model, d: f64, iterations: u32) -> BTreeMap<u64, f64> {
        let nv = m.vertices.len() as f64;
        let mut pr: BTreeMap<u64, f64> = m.vertices.iter().map(|&v| (v, 1.0 / nv)).collect();
        for _ in 0..iterations {
            let sinks: f64 = m
                .vertices
                .iter()
                .filter(|&&w| m.out(w).is_empty())
                .map(|w| pr[w])
                .sum();
            pr = m
                .vertices
                .iter()
                .map(|&v| {
                    let pull: f64 = m
                        .inn(v)
                        .iter()
                        .map(|u| pr[u] / m.out(*u).len() as f64)
                        .sum();
                    (v, (1.0 - d) / nv + d * pull + d / nv * sinks)
                })
                .collect();
        }
        pr
    }

    #[test]
    #[allow(clippy::excessive_precision)] // verbatim from the reference file
    fn example_directed_matches_the_spec() {
        // example-directed-PR (damping 0.85, 2 iterations): sinks 4 and 10.
        let want = [
            1.477629166666667e-01,
            4.753375000000000e-02,
            1.550469444444444e-01,
            1.597573611111111e-01,
            1.462400000000000e-01,
            4.753375000000000e-02,
            4.753375000000000e-02,
            1.135740277777778e-01,
            4.753375000000000e-02,
            8.748375000000001e-02,
        ];
        let (g, first) = example(false);
        let got = pagerank(&g, 0.85, 2);
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= RELATIVE_ERROR * w,
                "vertex {}: {g} vs {w}",
                i as VertexId + first
            );
        }
        assert_within(
            &by_id(first, &got),
            &by_id(first, &want),
            RELATIVE_ERROR,
            "example-directed",
        );
    }

    #[test]
    #[allow(clippy::excessive_precision)] // verbatim from the reference file
    fn example_undirected_matches_the_spec() {
        let want = [
            9.084490740740739e-02,
            1.424089506172839e-01,
            9.084490740740739e-02,
            1.249891975308642e-01,
            1.686172839506173e-01,
            9.749537037037037e-02,
            1.249891975308642e-01,
            9.749537037037037e-02,
            6.231481481481481e-02,
        ];
        let (g, first) = example(true);
        let got = pagerank(&g, 0.85, 2);
        assert_within(
            &by_id(first, &got),
            &by_id(first, &want),
            RELATIVE_ERROR,
            "example-undirected",
        );
    }

    #[test]
    fn sink_mass_goes_to_every_vertex() {
        // 0 -> 1; vertex 1 is a sink. By hand: PR_1(0) = 0.15/2 + 0.85/2 · 0.5 = 0.2875,
        // PR_1(1) = 0.15/2 + 0.85 · 0.5 + 0.85/2 · 0.5 = 0.7125.
        let g = Csr::from_edges(2, &[(0, 1)], false);
        assert_eq!(pagerank(&g, 0.85, 0), [0.5, 0.5]);
        let got = pagerank(&g, 0.85, 1);
        assert!((got[0] - 0.2875).abs() < 1e-15 && (got[1] - 0.7125).abs() < 1e-15);
        // Isolated vertices are sinks too: with no edges the ranks stay uniform.
        assert_eq!(
            pagerank(&Csr::from_edges(4, &[], false), 0.85, 7),
            [0.25; 4]
        );
        assert!(pagerank(&Csr::from_edges(0, &[], false), 0.85, 3).is_empty());
    }

    #[test]
    fn self_loop_keeps_rank_at_home() {
        // 0 -> 0, 0 -> 1, 1 -> 0: no sinks.
        let g = Csr::from_edges(2, &[(0, 0), (0, 1), (1, 0)], false);
        let got = pagerank(&g, 0.85, 1);
        // PR_1(0) = 0.075 + 0.85 (0.5/2 + 0.5), PR_1(1) = 0.075 + 0.85 · 0.5/2.
        assert!((got[0] - 0.7125).abs() < 1e-15 && (got[1] - 0.2875).abs() < 1e-15);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
        #[test]
        fn matches_sequential_reference(
            (undirected, steps) in history(),
            iterations in 0u32..6,
            d in prop_oneof![Just(0.85), 0.0..=1.0f64],
        ) {
            let v = Views::build(undirected, &steps);
            let want = reference(&v.model, d, iterations);
            let csr = v.csr_map(&pagerank(&v.csr, d, iterations));
            let snap = v.snap_map(&pagerank(&v.snap, d, iterations));
            assert_within(&csr, &want, RELATIVE_ERROR, "csr");
            assert_within(&snap, &want, RELATIVE_ERROR, "snapshot");
            if !want.is_empty() {
                let total: f64 = snap.values().sum();
                prop_assert!((total - 1.0).abs() < RELATIVE_ERROR, "ranks sum to {}", total);
            }
        }
    }
}
