//! The GAP Benchmark Suite kernels (Beamer, Asanović, Patterson), as GAPBS defines them,
//! each in its own file with a verifier that recomputes the answer serially.
//!
//! Kernels take any [`crate::GraphView`]; vertex state lives in DRAM, edges are read from
//! the view. All use the current rayon pool's threads.

pub mod bc;
pub mod bfs;
pub mod cc;
pub mod pr;
pub mod sssp;
pub mod tc;

use crate::snapshot::GraphView;
use crate::types::VertexId;

/// The vertices `vs`, split as [`crate::types::par_vertices`] splits them all: a sweep's
/// window of vertices.
pub(crate) fn par_range(
    vs: std::ops::Range<usize>,
) -> impl rayon::iter::IndexedParallelIterator<Item = VertexId> {
    use rayon::iter::ParallelIterator;
    let first = vs.start as VertexId;
    crate::types::par_vertices(vs.len()).map(move |i| first + i)
}

/// Existing vertices of `g` (deleted ones have no edges and take no part).
pub(crate) fn existing<G: GraphView>(g: &G) -> Vec<VertexId> {
    (0..g.num_vertices() as VertexId)
        .filter(|&v| g.vertex_exists(v))
        .collect()
}

/// Sorted, deduplicated neighbors of `v` ignoring direction (out ∪ in), self-loops dropped.
pub(crate) fn undirected_neighbors<G: GraphView>(g: &G, v: VertexId, out: &mut Vec<VertexId>) {
    out.clear();
    g.for_each_out(v, |w| out.push(w));
    if !g.is_undirected() {
        g.for_each_in(v, |w| out.push(w));
    }
    out.retain(|&w| w != v);
    out.sort_unstable();
    out.dedup();
}
