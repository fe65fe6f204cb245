//! A small graph in DRAM for the kernels' unit tests.

use crate::{Graph, Options, Snapshot};

/// A snapshot of a DRAM store holding `edges` (external ids), directed or not.
pub(crate) fn graph(undirected: bool, edges: &[(u64, u64)]) -> Snapshot {
    let g = Graph::in_memory(Options::new().undirected(Some(undirected))).unwrap();
    g.insert_edges(edges).unwrap();
    g.snapshot().unwrap()
}
