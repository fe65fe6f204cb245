//! PageRank, pull direction, as GAPBS computes it: iterate until the L1 change of the
//! scores drops below `tolerance` or `max_iters` rounds ran. No dangling-mass correction
//! (unlike Graphalytics PR, see `algo::graphalytics`).

use crate::snapshot::GraphView;
use crate::types::VertexId;
use rayon::prelude::*;

/// Scores and the number of iterations run.
#[must_use = "the kernel's result is its return value"]
pub fn pagerank<G: GraphView>(
    g: &G,
    damping: f64,
    tolerance: f64,
    max_iters: u32,
) -> (Vec<f64>, u32) {
    let n = g.num_vertices();
    let live = super::existing(g).len().max(1) as f64;
    let base = (1.0 - damping) / live;
    let exists: Vec<bool> = crate::types::par_vertices(n)
        .map(|v| g.vertex_exists(v))
        .collect();
    let out_deg: Vec<f64> = crate::types::par_vertices(n)
        .map(|v| g.out_degree(v) as f64)
        .collect();
    let mut scores: Vec<f64> = exists
        .iter()
        .map(|&e| if e { 1.0 / live } else { 0.0 })
        .collect();
    // Contributions are f32, as GAPBS's scores are: the pull loop's random reads then
    // touch half the bytes (4 MB instead of 8 MB at a million vertices). Scores and sums
    // stay f64.
    let mut contrib = vec![0.0f32; n];
    let mut iters = 0;
    while iters < max_iters {
        iters += 1;
        contrib
            .par_iter_mut()
            .zip(scores.par_iter().zip(out_deg.par_iter()))
            .for_each(|(c, (&s, &d))| *c = if d > 0.0 { (s / d) as f32 } else { 0.0 });
        let error: f64 = scores
            .par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .map(|(v, s)| {
                if !exists[v] {
                    return 0.0;
                }
                let mut sum = 0.0;
                g.for_each_in(v as VertexId, |u| sum += contrib[u as usize] as f64);
                let old = *s;
                *s = base + damping * sum;
                (*s - old).abs()
            })
            .sum();
        if error < tolerance {
            break;
        }
    }
    (scores, iters)
}

/// GAPBS's check: one more serial iteration from `scores` changes them by less than
/// `tolerance` in total (when the run converged).
pub fn verify<G: GraphView>(
    g: &G,
    scores: &[f64],
    damping: f64,
    tolerance: f64,
) -> Result<(), String> {
    let n = g.num_vertices();
    let live = super::existing(g).len().max(1) as f64;
    let base = (1.0 - damping) / live;
    let mut error = 0.0;
    for v in 0..n as VertexId {
        if !g.vertex_exists(v) {
            continue;
        }
        let mut sum = 0.0;
        g.for_each_in(v, |u| sum += scores[u as usize] / g.out_degree(u) as f64);
        error += (base + damping * sum - scores[v as usize]).abs();
    }
    if error < tolerance {
        Ok(())
    } else {
        Err(format!(
            "one more iteration changes the scores by {error:.3e} (tolerance {tolerance:.1e})"
        ))
    }
}
