//! evograph: a persistent store for evolving graphs.
//!
//! Open or create a store with [`Graph::open`] / [`Graph::create`], stream
//! [`Record`]s into it, take a [`Snapshot`] and run the kernels in [`algo`] or a
//! vertex program ([`pregel`]) on it. The public modules are:
//!
//! - [`store`]: [`Graph`], [`Options`] and what a store reports about itself.
//! - [`snapshot`]: consistent read views implementing [`GraphView`], and [`snapshot::Csr`].
//! - [`algo`] and [`pregel`]: hand-written kernels and the vertex-centric engine.
//! - [`io`] and [`gen`]: input formats and graph generators.
//! - [`types`] and [`error`]: ids, records, durability levels, errors.
//!
//! Beneath them, the engine is layered as `ARCHITECTURE.md` describes, bottom up, one private
//! module per layer: `medium` (where bytes become durable: files with `fdatasync`,
//! persistent memory, volatile memory, a simulated medium that loses power), `wal` (the
//! checksummed, segmented edge log with group commit), `memtable` (per-vertex DRAM
//! buffers), `run` (immutable CSR segments), `manifest` (the two-slot root whose atomic
//! switch commits), `dict` (external ids to dense [`VertexId`]s). The `store` module ties
//! them together: ingest, flush, compaction, recovery. The on-medium format is in
//! `FORMAT.md`.

// Control flow in short functions (the threshold is in clippy.toml); tests may run long.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod algo;
mod batch;
mod build_once;
mod checksum;
mod dict;
pub mod error;
pub mod gen;
pub mod history;
pub mod io;
mod keys;
mod manifest;
mod medium;
mod memtable;
mod prefetch;
pub mod pregel;
mod run;
pub mod snapshot;
mod stamp;
pub mod standing;
pub mod store;
pub mod time;
pub mod types;
mod wal;

pub use error::{Error, Result};
pub use keys::{check_name, KeyKind, Names, MAX_NAME_BYTES};
pub use snapshot::{GraphView, Key, Snapshot, SweepReads};
pub use store::{Compression, Graph, LogReach, Options, RunVersions, Tails, Verify};
pub use types::{Durability, Record, VertexId};

/// The engine's layers, for evograph's own benchmarks and its crash and corruption tests.
/// Not part of the API: anything here may change in any release.
#[doc(hidden)]
pub mod internals {
    /// Opens (or creates) the store held by a medium built by the caller, such as the sim
    /// medium of the crash tests. No lock file is taken: the caller keeps to one writer.
    pub fn open_on(
        medium: std::sync::Arc<dyn crate::medium::Medium>,
        opts: crate::Options,
    ) -> crate::Result<crate::Graph> {
        crate::Graph::open_on(medium, opts)
    }

    /// Whether a file name is a WAL spare: a retired segment kept for the next writer to
    /// overwrite, which holds no data (the benchmark leaves it out of bytes at rest).
    pub fn is_wal_spare(name: &str) -> bool {
        crate::wal::segment::is_spare(name)
    }

    /// See the crate's `batch` layer.
    pub mod batch {
        pub use crate::batch::*;
    }
    /// See the crate's `dict` layer.
    pub mod dict {
        pub use crate::dict::*;
    }
    /// See the crate's `manifest` layer.
    pub mod manifest {
        pub use crate::manifest::*;
    }
    /// See the crate's `medium` layer.
    pub mod medium {
        pub use crate::medium::*;
    }
    /// See the crate's `memtable` layer.
    pub mod memtable {
        pub use crate::memtable::*;
    }
    /// See the crate's `run` layer.
    pub mod run {
        pub use crate::run::*;
    }
    /// See the crate's `stamp` module.
    pub mod stamp {
        pub use crate::stamp::*;
    }
    /// See the crate's `wal` layer.
    pub mod wal {
        pub use crate::wal::*;
    }
}

/// The README's Rust code blocks, compiled and run as doctests so the README cannot drift
/// from the API (blocks marked `ignore` are checked by `tests/readme.rs` instead).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
