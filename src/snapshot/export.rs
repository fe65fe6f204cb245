//! A snapshot's out-adjacency as plain arrays, for exporters (Parquet, SciPy, Arrow): the
//! existing vertices numbered by position, in dense-id order.

use super::{GraphView, Snapshot};
use crate::types::{par_vertices, VertexId};
use rayon::prelude::*;

/// The out-adjacency of a snapshot's existing vertices in CSR form. Rows are *positions*:
/// the existing vertices in dense-id order, so that without deleted vertices a position is
/// the dense id itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsrArrays {
    /// The external id of each position.
    pub ids: Vec<u64>,
    /// Row `p`'s edges are `targets[offsets[p]..offsets[p + 1]]` (`ids.len() + 1` entries).
    pub offsets: Vec<u64>,
    /// Target positions, sorted within each row.
    pub targets: Vec<VertexId>,
    /// The weight of each edge beside `targets`; empty in an unweighted store.
    pub weights: Vec<f64>,
}

/// Per-vertex values indexed by dense id, kept for the existing vertices only, in the
/// order of [`Snapshot::live_ids`] (`live`); unchanged when `live` is `None` (nothing
/// deleted).
pub fn live_values<T: Copy + Send + Sync>(live: Option<&[VertexId]>, values: Vec<T>) -> Vec<T> {
    match live {
        None => values,
        Some(live) => live.par_iter().map(|&d| values[d as usize]).collect(),
    }
}

/// Vertices per parallel task when filling rows.
const BLOCK: usize = 4096;

impl Snapshot {
    /// Dense ids of the existing vertices, in order (position to dense id), or `None` when
    /// no vertex is deleted (positions are dense ids).
    pub fn live_ids(&self) -> Option<Vec<VertexId>> {
        if self.live_vertices() == self.n {
            return None;
        }
        let live = par_vertices(self.n).filter(|&v| self.vertex_exists(v));
        Some(live.collect())
    }

    /// The out-adjacency as [`CsrArrays`], built in parallel through the fastest view.
    pub fn csr_arrays(&self) -> CsrArrays {
        let live = self.live_ids();
        crate::with_view!(self, |g| build(g, self, live.as_deref()))
    }
}

fn build<G: GraphView>(g: &G, s: &Snapshot, live: Option<&[VertexId]>) -> CsrArrays {
    let rows = live.map_or(s.num_vertices(), <[VertexId]>::len);
    let dense = |p: usize| live.map_or(p as VertexId, |l| l[p]);
    // Positions of dense ids, only needed when some are deleted (their entries unused).
    let pos: Option<Vec<VertexId>> = live.map(|l| {
        let mut pos = vec![0 as VertexId; s.num_vertices()];
        for (p, &v) in l.iter().enumerate() {
            pos[v as usize] = p as VertexId;
        }
        pos
    });
    let ids: Vec<u64> = (0..rows)
        .into_par_iter()
        .map(|p| s.external_id(dense(p)))
        .collect();
    let mut offsets: Vec<u64> = Vec::with_capacity(rows + 1);
    offsets.push(0);
    let degrees: Vec<u64> = (0..rows)
        .into_par_iter()
        .map(|p| g.out_degree(dense(p)) as u64)
        .collect();
    offsets.extend(degrees.iter().scan(0u64, |acc, &d| {
        *acc += d;
        Some(*acc)
    }));
    let edges = offsets[rows] as usize;
    let weighted = g.is_weighted();
    let mut targets = vec![0 as VertexId; edges];
    let mut weights = vec![0f64; if weighted { edges } else { 0 }];
    // Hand each block of rows its own disjoint part of the outputs.
    let mut parts = Vec::new();
    let (mut t_rest, mut w_rest) = (&mut targets[..], &mut weights[..]);
    for b in (0..rows).step_by(BLOCK) {
        let end = (b + BLOCK).min(rows);
        let len = (offsets[end] - offsets[b]) as usize;
        let (t, tr) = t_rest.split_at_mut(len);
        let (w, wr) = w_rest.split_at_mut(if weighted { len } else { 0 });
        parts.push((b..end, t, w));
        (t_rest, w_rest) = (tr, wr);
    }
    let pos = pos.as_deref();
    parts.into_par_iter().for_each(|(range, t, w)| {
        let mut at = 0;
        let mut row: Vec<(VertexId, f64)> = Vec::new();
        for p in range {
            row.clear();
            g.for_each_out_weighted(dense(p), |x, wt| row.push((x, wt)));
            row.sort_unstable_by_key(|&(x, _)| x);
            for &(x, wt) in &row {
                t[at] = pos.map_or(x, |pos| pos[x as usize]);
                if weighted {
                    w[at] = wt;
                }
                at += 1;
            }
        }
        debug_assert_eq!(at, t.len(), "a block's rows fill exactly its part");
    });
    CsrArrays {
        ids,
        offsets,
        targets,
        weights,
    }
}
