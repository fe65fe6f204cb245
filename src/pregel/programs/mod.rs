//! The vertex programs evograph ships, each as short as the paper's pseudocode and each
//! giving the same results as the hand-written kernel it mirrors (`evograph run pregel-*`).

mod bfs;
mod components;
mod pagerank;
mod sssp;

pub use bfs::Bfs;
pub use components::Components;
pub use pagerank::PageRank;
pub use sssp::Sssp;
