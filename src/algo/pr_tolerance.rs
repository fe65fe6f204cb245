//! PageRank to a tolerance (`pr-tol`): Graphalytics' PageRank equation, iterated until the
//! scores are provably within `tolerance` (L1) of its fixed point, with a result that
//! depends only on the graph and the parameters.
//!
//! `pr` runs a fixed number of iterations and says nothing of how far from the fixed point
//! it stops; `gap-pr` sweeps Gauss-Seidel style, so its result depends on how threads
//! interleave. This kernel is Jacobi iteration of
//!
//! ```text
//! x'(v) = (1 − d)/|V| + d · Σ_{u ∈ N_in(v)} x(u)/|N_out(u)| + (d/|V|) · Σ_{w ∈ D} x(w)
//! ```
//!
//! (`D` the sinks), a contraction by `d` in L1 on score vectors summing to 1, so once a
//! sweep moves the scores by `δ` in total, they are within `d/(1 − d) · δ` of the fixed
//! point. It stops when that bound is at most the tolerance.
//!
//! Deterministic: every sum is taken in 2^-62 fixed point, where addition is exact and so
//! independent of order, threads and how the store lays its lists out. The rounding costs
//! at most 2^-62 per contribution.
//!
//! Started from earlier scores instead of the uniform vector (a standing kernel after a
//! batch, `crate::standing`), it needs only the sweeps the change calls for, and its
//! bound holds just the same.

use crate::snapshot::SweepIn;
use crate::types::par_vertex_chunks_mut;
use crate::{GraphView, VertexId};
use rayon::prelude::*;
use std::ops::Range;

/// Fixed-point scale: scores and contributions are at most 1, their sums at most 2.
const ONE: f64 = (1u64 << 62) as f64;

/// Sweeps at most, whatever the tolerance: a tolerance below the rounding floor (about
/// |V| · 2^-62) is never reached, and this ends the run instead.
pub const MAX_SWEEPS: u32 = 10_000;

/// What [`pagerank_to`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct Scores {
    /// Score per dense id (0 for a deleted vertex), summing to 1.
    pub scores: Vec<f64>,
    /// Sweeps run.
    pub sweeps: u32,
    /// The bound on the L1 distance from the fixed point reached (at most the tolerance
    /// unless [`MAX_SWEEPS`] ran out).
    pub bound: f64,
}

/// PageRank within `tolerance` (L1, above 0) of its fixed point, started from the uniform
/// vector over the existing vertices.
#[must_use = "the kernel's result is its return value"]
pub fn pagerank_to<G: GraphView>(g: &G, damping: f64, tolerance: f64) -> Scores {
    pagerank_from(g, damping, tolerance, Vec::new())
}

/// [`pagerank_to`] started from `start` (scores by dense id, for example those of an
/// earlier graph): new vertices start at 1/|V|, deleted ones at 0, and the rest is scaled
/// to sum to 1 before the first sweep.
#[must_use = "the kernel's result is its return value"]
pub fn pagerank_from<G: GraphView>(g: &G, damping: f64, tolerance: f64, start: Vec<f64>) -> Scores {
    let n = g.num_vertices();
    let exists = crate::algo::vertex_arrays::exists_flags(g);
    let live = exists.iter().filter(|&&e| e).count();
    if live == 0 {
        return Scores {
            scores: vec![0.0; n],
            sweeps: 0,
            bound: 0.0,
        };
    }
    let inv_degree = crate::algo::vertex_arrays::inverse_out_degrees(g);
    let mut x = starting_scores(start, &exists, live);
    let mut contrib = vec![0u64; n];
    let mut next = vec![0.0; n];
    let ratio = damping / (1.0 - damping);
    let (mut sweeps, mut bound) = (0, f64::INFINITY);
    while bound > tolerance && sweeps < MAX_SWEEPS {
        let sinks = contribute(&x, &inv_degree, &mut contrib);
        let nv = live as f64;
        let base = (1.0 - damping) / nv + damping * (sinks as f64 / ONE) / nv;
        g.sweep_in(&mut Pull {
            next: &mut next,
            contrib: &contrib,
            exists: &exists,
            base,
            damping,
        });
        bound = ratio * l1(&x, &next);
        std::mem::swap(&mut x, &mut next);
        sweeps += 1;
    }
    Scores {
        scores: x,
        sweeps,
        bound,
    }
}

/// The first sweep's input: `start` where it has a live vertex's score, 1/|V| for the rest,
/// 0 for deleted vertices, scaled to sum to 1 (the sum taken in fixed point).
fn starting_scores(mut start: Vec<f64>, exists: &[bool], live: usize) -> Vec<f64> {
    let uniform = 1.0 / live as f64;
    let have = start.len();
    start.resize(exists.len(), uniform);
    (start.par_iter_mut().enumerate()).for_each(|(v, x)| match exists[v] {
        false => *x = 0.0,
        true if v >= have || !x.is_finite() || *x < 0.0 => *x = uniform,
        true => {}
    });
    let total = start.par_iter().map(|&x| (x * ONE) as u64).sum::<u64>() as f64 / ONE;
    if total > 0.0 && total != 1.0 {
        start.par_iter_mut().for_each(|x| *x /= total);
    }
    start
}

/// Sets each vertex's contribution `x/out-degree` in fixed point; returns the sinks' total.
fn contribute(x: &[f64], inv_degree: &[f64], contrib: &mut [u64]) -> u64 {
    (contrib.par_iter_mut().zip(x).zip(inv_degree))
        .map(|((c, &x), &inv)| {
            *c = (x * inv * ONE) as u64;
            match inv == 0.0 {
                true => (x * ONE) as u64,
                false => 0,
            }
        })
        .sum()
}

/// The L1 distance of two score vectors, in fixed point.
fn l1(a: &[f64], b: &[f64]) -> f64 {
    let d: u64 = (a.par_iter().zip(b))
        .map(|(&x, &y)| ((x - y).abs() * ONE) as u64)
        .sum();
    d as f64 / ONE
}

/// One sweep's pull into `next`.
struct Pull<'a> {
    next: &'a mut [f64],
    contrib: &'a [u64],
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
        par_vertex_chunks_mut(&mut self.next[vs.clone()]).for_each(|(first, chunk)| {
            for (v, r) in (vs.start + first..).zip(chunk.iter_mut()) {
                *r = match exists[v] {
                    true => {
                        let mut sum = 0u64;
                        g.for_each_in(v as VertexId, |u| sum += contrib[u as usize]);
                        base + damping * (sum as f64 / ONE)
                    }
                    false => 0.0,
                };
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Csr;

    fn graph() -> Csr {
        let edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (4, 2)];
        Csr::from_edges(5, &edges, false)
    }

    #[test]
    fn the_bound_holds_against_a_much_tighter_run() {
        let g = graph();
        let exact = pagerank_to(&g, 0.85, 1e-14).scores;
        for tol in [1e-2, 1e-4, 1e-7] {
            let s = pagerank_to(&g, 0.85, tol);
            assert!(s.bound <= tol, "{tol}: bound {}", s.bound);
            let err: f64 = s
                .scores
                .iter()
                .zip(&exact)
                .map(|(a, b)| (a - b).abs())
                .sum();
            assert!(err <= tol, "{tol}: {err}");
            assert!((s.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn the_result_does_not_depend_on_threads() {
        let g = graph();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let a = one.install(|| pagerank_to(&g, 0.85, 1e-9));
        let b = pagerank_to(&g, 0.85, 1e-9);
        assert_eq!(a, b);
    }

    #[test]
    fn a_warm_start_ends_within_the_tolerance_in_fewer_sweeps() {
        let g = graph();
        let cold = pagerank_to(&g, 0.85, 1e-9);
        let warm = pagerank_from(&g, 0.85, 1e-9, cold.scores.clone());
        assert!(warm.sweeps < 3, "{}", warm.sweeps);
        let exact = pagerank_to(&g, 0.85, 1e-14).scores;
        let err: f64 = warm
            .scores
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a - b).abs())
            .sum();
        assert!(err <= 1e-9, "{err}");
    }
}
