//! Triangle counting, ordered (GAPBS's OrderedCount): on the undirected view, each
//! triangle w < v < u is counted once, at u. Vertices are renumbered by degree, highest
//! first, when degrees are skewed, as GAPBS decides, and each keeps only its neighbors of
//! smaller new id (see `algo/oriented.rs`), so a hub is scanned only for the few
//! vertices of still higher degree.
//!
//! GAPBS merges N(u) with each N(v); here N(u) is marked in a per-thread table and each w of
//! each N(v) is looked up in it: the same ids are read, without the merge's unpredictable
//! branches.

use crate::algo::oriented::{Marks, Multiplicity, Oriented};
use crate::snapshot::GraphView;
use crate::types::VertexId;
use rayon::prelude::*;

/// Number of triangles in the undirected view of `g`.
#[must_use = "the kernel's result is its return value"]
pub fn ordered_count<G: GraphView>(g: &G) -> u64 {
    let o = Oriented::build(g, Multiplicity::Ignore);
    let n = o.len();
    (0..n)
        .into_par_iter()
        .with_max_len(crate::types::VERTEX_TASK)
        .map(|u| {
            let nu = o.up(u);
            if nu.len() < 2 {
                return 0;
            }
            Marks::with(n, |m| {
                m.set(nu, &[]);
                // (N(v) for the smallest v of N(u) holds nothing marked.)
                let count: u64 = (nu[1..].iter())
                    .map(|&v| {
                        let nv = o.up(v as usize);
                        nv.iter().map(|&w| u64::from(m.get(w))).sum::<u64>()
                    })
                    .sum();
                m.clear(nu);
                count
            })
        })
        .sum()
}

/// Serial count by neighbor-set intersection over each edge u < v (every triangle is seen
/// three times).
pub fn verify<G: GraphView>(g: &G, count: u64) -> Result<(), String> {
    let n = g.num_vertices();
    let sets: Vec<std::collections::HashSet<VertexId>> = (0..n as VertexId)
        .map(|v| {
            let mut b = Vec::new();
            super::undirected_neighbors(g, v, &mut b);
            b.into_iter().collect()
        })
        .collect();
    let mut total = 0u64;
    for u in 0..n {
        for &v in &sets[u] {
            if (v as usize) > u {
                total += sets[u].intersection(&sets[v as usize]).count() as u64;
            }
        }
    }
    let want = total / 3;
    if want == count {
        Ok(())
    } else {
        Err(format!(
            "counted {count} triangles, serial count gives {want}"
        ))
    }
}
