//! PageRank, pull direction, as GAPBS computes it (`PageRankPullGS`): Gauss-Seidel sweeps
//! until the L1 change of the scores in a sweep drops below `tolerance` or `max_iters`
//! sweeps ran. No dangling-mass correction (unlike Graphalytics PR, see
//! `algo::graphalytics`).
//!
//! Gauss-Seidel: a vertex's new contribution (score over out-degree) is published as soon
//! as its score is, so vertices pulled later in the same sweep, in any thread, already read
//! it. That converges in fewer sweeps than Jacobi's (all contributions from the previous
//! sweep) and spares Jacobi's separate pass that recomputes every contribution. The price
//! is that the last digits of the scores depend on how the threads interleaved.

use crate::snapshot::{GraphView, SweepIn};
use crate::types::{par_vertex_chunks_mut, VertexId};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Scores and the number of sweeps run.
#[must_use = "the kernel's result is its return value"]
pub fn pagerank<G: GraphView>(
    g: &G,
    damping: f64,
    tolerance: f64,
    max_iters: u32,
) -> (Vec<f64>, u32) {
    let exists = crate::algo::vertex_arrays::exists_flags(g);
    let live = exists.iter().filter(|&&e| e).count().max(1) as f64;
    let base = (1.0 - damping) / live;
    let inv_deg = crate::algo::vertex_arrays::inverse_out_degrees(g);
    let mut scores: Vec<f64> = exists
        .iter()
        .map(|&e| if e { 1.0 / live } else { 0.0 })
        .collect();
    // Contributions are f32, as GAPBS's scores are: the pull loop's random reads then
    // touch half the bytes (4 MB instead of 8 MB at a million vertices). Scores and sums
    // stay f64. They are atomics only because other threads read them mid-sweep; relaxed
    // loads and stores of a u32 are plain moves.
    let contrib: Vec<AtomicU32> = scores
        .iter()
        .zip(&inv_deg)
        .map(|(&s, &i)| AtomicU32::new(((s * i) as f32).to_bits()))
        .collect();
    let mut iters = 0;
    while iters < max_iters {
        iters += 1;
        let mut sweep = Sweep {
            scores: &mut scores,
            contrib: &contrib,
            exists: &exists,
            inv_deg: &inv_deg,
            base,
            damping,
            error: 0.0,
        };
        g.sweep_in(&mut sweep);
        if sweep.error < tolerance {
            break;
        }
    }
    (scores, iters)
}

/// One Gauss-Seidel sweep, over the vertices a view hands over (all at once, or a window
/// at a time when it streams its lists).
struct Sweep<'a> {
    scores: &'a mut [f64],
    contrib: &'a [AtomicU32],
    exists: &'a [bool],
    inv_deg: &'a [f64],
    base: f64,
    damping: f64,
    /// The L1 change of the scores so far in this sweep.
    error: f64,
}

impl SweepIn for Sweep<'_> {
    fn visit<W: GraphView>(&mut self, vs: Range<usize>, g: &W) {
        let Sweep {
            contrib,
            exists,
            inv_deg,
            base,
            damping,
            ..
        } = *self;
        self.error += par_vertex_chunks_mut(&mut self.scores[vs.clone()])
            .map(|(first, chunk)| {
                let mut error = 0.0;
                for (v, s) in (vs.start + first..).zip(chunk.iter_mut()) {
                    if !exists[v] {
                        continue;
                    }
                    let mut sum = 0.0;
                    g.for_each_in(v as VertexId, |u| {
                        sum += f32::from_bits(contrib[u as usize].load(Relaxed)) as f64
                    });
                    let old = *s;
                    *s = base + damping * sum;
                    contrib[v].store(((*s * inv_deg[v]) as f32).to_bits(), Relaxed);
                    error += (*s - old).abs();
                }
                error
            })
            .sum::<f64>();
    }
}

/// How far (L1) one more iteration, in f64, would move `scores`. The iteration contracts
/// by `damping` in L1, so the fixed point lies within `residual / (1 − damping)` of
/// `scores`, however the sweeps that made them interleaved: two runs' scores, each within
/// that of the one fixed point, are within the sum of theirs of each other.
pub fn residual<G: GraphView>(g: &G, scores: &[f64], damping: f64) -> f64 {
    let n = g.num_vertices();
    let live = super::existing(g).len().max(1) as f64;
    let base = (1.0 - damping) / live;
    (0..n)
        .into_par_iter()
        .with_min_len(1 << 12)
        .map(|i| i as VertexId)
        .filter(|&v| g.vertex_exists(v))
        .map(|v| {
            let mut sum = 0.0;
            g.for_each_in(v, |u| sum += scores[u as usize] / g.out_degree(u) as f64);
            (base + damping * sum - scores[v as usize]).abs()
        })
        .sum()
}

/// GAPBS's check: one more iteration from `scores` changes them by less than `tolerance`
/// in total (when the run converged).
pub fn verify<G: GraphView>(
    g: &G,
    scores: &[f64],
    damping: f64,
    tolerance: f64,
) -> Result<(), String> {
    let error = residual(g, scores, damping);
    if error < tolerance {
        Ok(())
    } else {
        Err(format!(
            "one more iteration changes the scores by {error:.3e} (tolerance {tolerance:.1e})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Csr;

    /// On a chain whose edges run up the ids, one thread's first ascending sweep already
    /// reads each predecessor's new score, so the second sweep changes nothing. Jacobi
    /// sweeps would need one per link.
    #[test]
    fn gauss_seidel_sweeps_read_this_sweeps_contributions() {
        let k = 50;
        let edges: Vec<(VertexId, VertexId)> = (1..k as VertexId).map(|v| (v - 1, v)).collect();
        let g = Csr::from_edges(k, &edges, false);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let (scores, sweeps) = pool.install(|| pagerank(&g.view(), 0.85, 1e-12, 100));
        assert_eq!(sweeps, 2);
        verify(&g.view(), &scores, 0.85, 1e-6).unwrap();
        // The chain's closed form, score(i) = base * (1 + d + ... + d^i), up to the f32
        // rounding of the contributions.
        let base = 0.15 / k as f64;
        let mut want = 0.0;
        for (i, s) in scores.iter().enumerate() {
            want = base + if i == 0 { 0.0 } else { 0.85 * want };
            assert!(
                (s - want).abs() < 1e-6 * want,
                "vertex {i}: {s} against {want}"
            );
        }
    }
}
