//! Analytics on a [`crate::GraphView`]: vertex state in DRAM, edges read from the view
//! (iPregel's read/write split), all threads of the current rayon pool.
//!
//! - [`gap`]: the GAP Benchmark Suite kernels, each with a GAPBS-style verifier.
//! - [`graphalytics`]: the LDBC Graphalytics kernels, exactly as its specification defines them.
//! - [`kcore`]: core numbers, with a verifier that peels again from a heap.
//! - [`lpa`]: semi-synchronous label propagation (NetworkX's communities), with the
//!   fixed point as its verifier.
//! - [`kernel`]: every kernel by name, as `evograph run` and the Python module call them.
pub mod gap;
pub mod graphalytics;
pub mod kcore;
pub mod kernel;
pub mod lpa;
pub(crate) mod oriented;
pub mod pr_tolerance;
#[cfg(test)]
mod streamed_tests;
#[cfg(test)]
mod testkit;
pub(crate) mod vertex_arrays;
