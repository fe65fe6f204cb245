//! The vertex programs evograph ships, each as short as the paper's pseudocode and each
//! giving the same results as the hand-written kernel it mirrors (`evograph run pregel-*`).
//!
//! Their `init` and `compute` are `#[inline]`: the engine calls them once per vertex per
//! superstep, and without the hint a release build's codegen units can place a program's
//! `compute` out of the engine loop's reach: `pregel-pr` on Kron20 then ran 2.84 G
//! instructions instead of 2.63 G (cachegrind), a call per vertex with its context in memory.

mod bfs;
mod components;
mod pagerank;
mod sssp;

pub use bfs::Bfs;
pub use components::Components;
pub use pagerank::PageRank;
pub use sssp::Sssp;
