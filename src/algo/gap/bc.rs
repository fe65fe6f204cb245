//! Betweenness centrality by Brandes' algorithm from a sample of sources, as GAPBS does:
//! a level-synchronous BFS counts shortest paths, then dependencies flow back level by
//! level. Scores are normalized so the largest is 1.
//!
//! GAPBS's convention, not the textbook's: a source's own dependency δ_s(s) (the sum of
//! `σ_s/σ_w · (1 + δ_s(w))` over its BFS children `w`) is added to its score, where Brandes'
//! paper skips the source. So a source's score grows with its reach; every other vertex
//! scores the same either way, before normalization.

use crate::snapshot::GraphView;
use crate::types::VertexId;
use rayon::prelude::*;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

fn add_f64(a: &AtomicU64, x: f64) {
    let mut cur = a.load(Relaxed);
    loop {
        let new = (f64::from_bits(cur) + x).to_bits();
        match a.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
            Ok(_) => return,
            Err(c) => cur = c,
        }
    }
}

/// Betweenness scores from `sources`, normalized to a maximum of 1.
#[must_use = "the kernel's result is its return value"]
pub fn brandes<G: GraphView>(g: &G, sources: &[VertexId]) -> Vec<f64> {
    let n = g.num_vertices();
    let mut scores = vec![0.0f64; n];
    let depth: Vec<AtomicI64> = (0..n).map(|_| AtomicI64::new(-1)).collect();
    let sigma: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let mut delta = vec![0.0f64; n];
    for &s in sources {
        if (s as usize) >= n || !g.vertex_exists(s) {
            continue;
        }
        depth.par_iter().for_each(|d| d.store(-1, Relaxed));
        sigma.par_iter().for_each(|x| x.store(0, Relaxed));
        depth[s as usize].store(0, Relaxed);
        sigma[s as usize].store(1f64.to_bits(), Relaxed);
        // Forward: BFS levels with path counts.
        let mut levels: Vec<Vec<VertexId>> = vec![vec![s]];
        loop {
            let d = levels.len() as i64;
            let frontier = levels.last().unwrap();
            let next: Vec<VertexId> = frontier
                .par_iter()
                .with_min_len(64)
                .fold(Vec::new, |mut next, &u| {
                    let su = f64::from_bits(sigma[u as usize].load(Relaxed));
                    g.for_each_out(u, |v| {
                        let dv = &depth[v as usize];
                        if dv.load(Relaxed) < 0
                            && dv.compare_exchange(-1, d, Relaxed, Relaxed).is_ok()
                        {
                            next.push(v);
                        }
                        if dv.load(Relaxed) == d {
                            add_f64(&sigma[v as usize], su);
                        }
                    });
                    next
                })
                .reduce(Vec::new, |mut a, b| {
                    a.extend(b);
                    a
                });
            if next.is_empty() {
                break;
            }
            levels.push(next);
        }
        // Backward: dependencies, deepest level first.
        for level in levels.iter().rev() {
            let deltas: Vec<(VertexId, f64)> = level
                .par_iter()
                .with_min_len(64)
                .map(|&v| {
                    let dv = depth[v as usize].load(Relaxed);
                    let sv = f64::from_bits(sigma[v as usize].load(Relaxed));
                    let mut acc = 0.0;
                    g.for_each_out(v, |w| {
                        if depth[w as usize].load(Relaxed) == dv + 1 {
                            let sw = f64::from_bits(sigma[w as usize].load(Relaxed));
                            acc += sv / sw * (1.0 + delta[w as usize]);
                        }
                    });
                    (v, acc)
                })
                .collect();
            for (v, d) in deltas {
                delta[v as usize] = d;
                // The source too (GAPBS credits it; see the module documentation).
                scores[v as usize] += d;
            }
        }
        for level in &levels {
            for &v in level {
                delta[v as usize] = 0.0;
            }
        }
    }
    let max = scores.iter().cloned().fold(0.0, f64::max);
    if max > 0.0 {
        scores.iter_mut().for_each(|x| *x /= max);
    }
    scores
}

/// Serial Brandes from the same sources; scores must agree to a relative 1e-6.
pub fn verify<G: GraphView>(g: &G, sources: &[VertexId], scores: &[f64]) -> Result<(), String> {
    let n = g.num_vertices();
    let mut want = vec![0.0f64; n];
    for &s in sources {
        if (s as usize) >= n || !g.vertex_exists(s) {
            continue;
        }
        let mut depth = vec![-1i64; n];
        let mut sigma = vec![0.0f64; n];
        let mut order = Vec::new();
        depth[s as usize] = 0;
        sigma[s as usize] = 1.0;
        let mut q = std::collections::VecDeque::from([s]);
        while let Some(u) = q.pop_front() {
            order.push(u);
            g.for_each_out(u, |v| {
                if depth[v as usize] < 0 {
                    depth[v as usize] = depth[u as usize] + 1;
                    q.push_back(v);
                }
                if depth[v as usize] == depth[u as usize] + 1 {
                    sigma[v as usize] += sigma[u as usize];
                }
            });
        }
        let mut delta = vec![0.0f64; n];
        for &w in order.iter().rev() {
            let mut acc = 0.0;
            g.for_each_out(w, |x| {
                if depth[x as usize] == depth[w as usize] + 1 {
                    acc += sigma[w as usize] / sigma[x as usize] * (1.0 + delta[x as usize]);
                }
            });
            delta[w as usize] = acc;
            want[w as usize] += acc; // the source included, as GAPBS's verifier does
        }
    }
    let max = want.iter().cloned().fold(0.0, f64::max);
    if max > 0.0 {
        want.iter_mut().for_each(|x| *x /= max);
    }
    for v in 0..n {
        if (want[v] - scores[v]).abs() > 1e-6 * want[v].abs().max(1e-9)
            && (want[v] - scores[v]).abs() > 1e-12
        {
            return Err(format!(
                "vertex {}: score {} but serial Brandes gives {}",
                g.external_id(v as VertexId),
                scores[v],
                want[v]
            ));
        }
    }
    Ok(())
}
