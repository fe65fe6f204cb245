//! Connected components by Afforest (Sutton, Ben-Nun, Barak, IPDPS'18), as in GAPBS:
//! link each vertex to a couple of its neighbors, compress, guess the largest component
//! by sampling, then finish linking only vertices outside it. Directions are ignored
//! (weak connectivity).

use crate::snapshot::GraphView;
use crate::types::AtomicVertexId;
use crate::types::VertexId;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;

const NEIGHBOR_ROUNDS: usize = 2;
const SAMPLES: usize = 1024;

/// Lock-free union: hook the larger root under the smaller.
fn link(u: VertexId, v: VertexId, comp: &[AtomicVertexId]) {
    let mut p1 = comp[u as usize].load(Relaxed);
    let mut p2 = comp[v as usize].load(Relaxed);
    while p1 != p2 {
        let (high, low) = if p1 > p2 { (p1, p2) } else { (p2, p1) };
        let p_high = comp[high as usize].load(Relaxed);
        if p_high == low
            || (p_high == high
                && comp[high as usize]
                    .compare_exchange(high, low, Relaxed, Relaxed)
                    .is_ok())
        {
            break;
        }
        p1 = comp[comp[high as usize].load(Relaxed) as usize].load(Relaxed);
        p2 = comp[low as usize].load(Relaxed);
    }
}

fn compress(comp: &[AtomicVertexId]) {
    (0..comp.len())
        .into_par_iter()
        .with_min_len(4096)
        .for_each(|v| {
            while comp[v].load(Relaxed) != comp[comp[v].load(Relaxed) as usize].load(Relaxed) {
                let gp = comp[comp[v].load(Relaxed) as usize].load(Relaxed);
                comp[v].store(gp, Relaxed);
            }
        });
}

/// Component id of every vertex (the smallest dense id in its component after compression).
#[must_use = "the kernel's result is its return value"]
pub fn afforest<G: GraphView>(g: &G) -> Vec<VertexId> {
    let n = g.num_vertices();
    let comp: Vec<AtomicVertexId> = (0..n as VertexId).map(AtomicVertexId::new).collect();
    // Sample: link each vertex to its r-th out-neighbor.
    for r in 0..NEIGHBOR_ROUNDS {
        crate::types::par_vertices(n)
            .with_min_len(1024)
            .for_each(|u| {
                let mut i = 0;
                g.find_out(u, |v| {
                    if i == r {
                        link(u, v, &comp);
                        return true;
                    }
                    i += 1;
                    false
                });
            });
        compress(&comp);
    }
    // The most frequent component in a sample is probably the giant one.
    let giant = {
        let mut counts = std::collections::HashMap::new();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x2545_f491_4f6c_dd1d);
        for _ in 0..SAMPLES.min(n) {
            let v = rng.random_range(0..n);
            *counts.entry(comp[v].load(Relaxed)).or_insert(0) += 1;
        }
        counts
            .into_iter()
            .max_by_key(|&(c, k)| (k, std::cmp::Reverse(c)))
            .map(|(c, _)| c)
    };
    // Finish: remaining out-neighbors, and in-neighbors for directed graphs.
    crate::types::par_vertices(n)
        .with_min_len(256)
        .for_each(|u| {
            if Some(comp[u as usize].load(Relaxed)) == giant {
                return;
            }
            let mut i = 0;
            g.for_each_out(u, |v| {
                if i >= NEIGHBOR_ROUNDS {
                    link(u, v, &comp);
                }
                i += 1;
            });
            if !g.is_undirected() {
                g.for_each_in(u, |v| link(u, v, &comp));
            }
        });
    compress(&comp);
    comp.into_iter().map(|c| c.into_inner()).collect()
}

/// GAPBS's check: labels agree with a serial BFS over the undirected view, in both
/// directions (same label exactly when connected).
pub fn verify<G: GraphView>(g: &G, comp: &[VertexId]) -> Result<(), String> {
    let n = g.num_vertices();
    let mut seen = vec![false; n];
    let mut label_owner: std::collections::HashMap<VertexId, VertexId> = Default::default();
    let mut nbrs = Vec::new();
    for s in 0..n as VertexId {
        if seen[s as usize] {
            continue;
        }
        let label = comp[s as usize];
        if let Some(&other) = label_owner.get(&label) {
            return Err(format!(
                "vertices {} and {} share label {} but are not connected",
                g.external_id(other),
                g.external_id(s),
                g.external_id(label)
            ));
        }
        label_owner.insert(label, s);
        seen[s as usize] = true;
        let mut stack = vec![s];
        while let Some(u) = stack.pop() {
            if comp[u as usize] != label {
                return Err(format!(
                    "vertices {} and {} are connected but labelled apart",
                    g.external_id(s),
                    g.external_id(u)
                ));
            }
            super::undirected_neighbors(g, u, &mut nbrs);
            for &w in &nbrs {
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    stack.push(w);
                }
            }
        }
    }
    Ok(())
}
