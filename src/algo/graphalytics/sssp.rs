//! SSSP as Graphalytics defines it: the length of a shortest path from the source along
//! out-edges, summing 64-bit edge weights; unreachable vertices get infinity. Computed by
//! parallel delta-stepping (the distances are Dijkstra's).

use crate::algo::gap::sssp::delta_stepping;
use crate::snapshot::GraphView;
use crate::types::VertexId;

/// Distance of every vertex from `source` (`f64::INFINITY` when unreachable; deleted
/// vertices read as unreachable and must not be printed).
#[must_use = "the kernel's result is its return value"]
pub fn sssp<G: GraphView>(g: &G, source: VertexId, delta: f64) -> Vec<f64> {
    delta_stepping(g, source, delta)
}
