//! evograph: a persistent store for evolving graphs.
//!
//! The crate is layered as `../DESIGN.md` describes, bottom up:
//!
//! - [`medium`]: where bytes become durable (files with `fdatasync`, or volatile memory).
//! - [`wal`]: the checksummed, segmented edge log with group commit.
//! - [`memtable`]: per-vertex DRAM buffers that absorb random updates.
//! - [`run`]: immutable CSR segments, the on-medium form of the graph.
//! - [`manifest`]: the two-slot root that names the live runs; one atomic switch commits.
//! - [`dict`]: the persistent dictionary from external 64-bit ids to dense [`VertexId`]s.
//! - [`store`]: [`Graph`], tying the layers together: ingest, flush, compaction, recovery.
//! - [`snapshot`]: consistent read views implementing [`GraphView`].
//! - [`algo`] and [`pregel`]: hand-written kernels and the vertex-centric engine.
//! - [`io`] and [`gen`]: input formats and graph generators used by the command line.

pub mod algo;
pub mod batch;
pub mod dict;
pub mod error;
pub mod gen;
pub mod io;
pub mod manifest;
pub mod medium;
pub mod memtable;
mod prefetch;
pub mod pregel;
pub mod run;
pub mod snapshot;
pub mod store;
pub mod types;
pub mod wal;

pub use error::{Error, Result};
pub use snapshot::{GraphView, Snapshot};
pub use store::{Graph, Options, Verify};
pub use types::{Durability, Record, VertexId};

/// The README's Rust code blocks, compiled and run as doctests so the README cannot drift
/// from the API (blocks marked `ignore` are checked by `tests/readme.rs` instead).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
