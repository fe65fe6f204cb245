//! The native half of the `evograph` Python module (`evograph._evograph`): a store and its
//! snapshots, numpy in and out. The Python half (`python/evograph/__init__.py`) checks
//! arguments, converts dtypes and builds SciPy, NetworkX and Arrow objects from these
//! arrays.
//!
//! Concurrency contract: every call that does real work releases the GIL (`Python::detach`)
//! so other Python threads run meanwhile. A [`Graph`]'s store sits in an `RwLock`: every
//! operation holds it shared for its duration (the store itself is safe to use from many
//! threads), and `close` takes it exclusively, so it waits for operations in flight and
//! later calls get "the store is closed". The lock is never taken with the GIL held
//! across a wait: both are acquired inside `detach`. A [`Snapshot`] owns its runs and
//! needs no lock; it stays valid while other threads insert, and after the store closes.

mod errors;
mod graph;
mod names;
mod rolling;
mod snapshot;
mod standing;

use pyo3::prelude::*;

/// The native core of the `evograph` package; use the package itself.
#[pymodule]
fn _evograph(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<graph::Graph>()?;
    m.add_class::<snapshot::Snapshot>()?;
    m.add_class::<standing::Standing>()?;
    m.add_function(wrap_pyfunction!(graph::open, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot::kernels, m)?)?;
    errors::register(m)?;
    m.add("ID_WIDTH", evograph::types::ID_WIDTH)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
