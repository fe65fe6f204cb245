//! Per-vertex arrays that more than one kernel builds from a view, built once here so the
//! kernels agree on their meaning.

use crate::snapshot::GraphView;
use crate::types::{par_vertices, VertexId};
use rayon::prelude::*;

/// Whether each dense id is an existing vertex of `g` (false for a deleted or never-used id).
pub(crate) fn exists_flags<G: GraphView>(g: &G) -> Vec<bool> {
    par_vertices(g.num_vertices())
        .map(|v: VertexId| g.vertex_exists(v))
        .collect()
}

/// 1 / out-degree per dense id, 0 for a vertex without out-edges: PageRank multiplies by
/// it instead of dividing, and a 0 marks a sink (whose contribution nobody reads).
pub(crate) fn inverse_out_degrees<G: GraphView>(g: &G) -> Vec<f64> {
    g.out_degrees()
        .into_par_iter()
        .map(|d| match d {
            0 => 0.0,
            d => 1.0 / d as f64,
        })
        .collect()
}
