//! `Standing`: a kernel kept current on a store as batches commit (`Graph.maintain`).

use crate::errors::{ClosedError, IntoPy};
use crate::snapshot::Snapshot;
use evograph::algo::kernel::{Kernel, Values};
use evograph::standing::{Change, Value};
use evograph::{GraphView, VertexId};
use numpy::PyArray1;
use pyo3::prelude::*;
use std::sync::Mutex;
use std::time::Duration;

/// A kernel's result kept current by a thread of the library's (see
/// `evograph::standing::Standing`). Make one with `Graph.maintain`.
#[pyclass(module = "evograph._evograph", frozen)]
pub struct Standing {
    /// `None` once stopped.
    inner: Mutex<Option<evograph::standing::Standing>>,
    kernel: Kernel,
}

impl Standing {
    pub(crate) fn new(inner: evograph::standing::Standing, kernel: Kernel) -> Standing {
        Standing {
            inner: Mutex::new(Some(inner)),
            kernel,
        }
    }

    /// Runs `f` on the running handle, without the GIL.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&evograph::standing::Standing) -> evograph::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            match guard.as_ref() {
                Some(h) => f(h).py_err(),
                None => Err(ClosedError::new_err(format!(
                    "the standing {} was stopped",
                    self.kernel
                ))),
            }
        })
    }
}

/// Maintained values as the kernel's `Values` (labels as external ids), 0 where a vertex
/// does not exist: what `Snapshot.kernel` returns for the same kernel.
fn as_values(s: &evograph::Snapshot, vals: &[Option<Value>], kind: Kernel) -> Values {
    let float = matches!(kind, Kernel::Sssp | Kernel::PrTol | Kernel::PregelSssp);
    match float {
        true => Values::Float(vals.iter().map(|v| float_of(*v)).collect()),
        false => Values::Int(vals.iter().map(|v| int_of(s, *v)).collect()),
    }
}

fn float_of(v: Option<Value>) -> f64 {
    match v {
        Some(Value::Float(x)) => x,
        Some(Value::Int(x)) => x as f64,
        Some(Value::Vertex(x)) => x as f64,
        None => 0.0,
    }
}

fn int_of(s: &evograph::Snapshot, v: Option<Value>) -> i64 {
    match v {
        Some(Value::Int(x)) => x,
        Some(Value::Vertex(l)) => s.external_id(l as VertexId) as i64,
        Some(Value::Float(x)) => x as i64,
        None => 0,
    }
}

#[pymethods]
impl Standing {
    /// The LSN of the commit the values reflect.
    #[getter]
    fn lsn(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |h| Ok(h.lsn()))
    }

    /// The kernel kept current.
    #[getter]
    fn kernel(&self) -> &'static str {
        self.kernel.name()
    }

    /// Steps that recomputed because the changes they needed were no longer held.
    #[getter]
    fn recomputes(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |h| Ok(h.recomputes()))
    }

    /// Waits until the values reflect the commit at `lsn` or later, at most `timeout`
    /// seconds (forever when None); whether they do.
    #[pyo3(signature = (lsn, timeout=None))]
    fn wait(&self, py: Python<'_>, lsn: u64, timeout: Option<f64>) -> PyResult<bool> {
        let t = match timeout {
            Some(s) if s.is_finite() && s >= 0.0 => Duration::from_secs_f64(s),
            Some(s) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "timeout {s} is not a number of seconds, 0 or more"
                )))
            }
            None => Duration::MAX,
        };
        self.with(py, |h| h.wait(lsn, t))
    }

    /// `(snapshot, values, lsn)`: the snapshot the values were computed on, the values in
    /// its `vertex_ids()` order (as `Snapshot.run` returns them for the kernel), and the
    /// commit's LSN.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<(Snapshot, Bound<'py, PyAny>, u64)> {
        let (vals, snap, lsn) = self.with(py, |h| h.values())?;
        let v = as_values(&snap, &vals, self.kernel);
        let s = Snapshot::new(snap);
        let arr = s.values_of(py, self.kernel, v)?;
        Ok((s, arr, lsn))
    }

    /// The vertices whose values changed after the commit at `lsn` up to the one
    /// reflected: `(ids, old, new, old_exists, new_exists)`, ids as external ids (names in
    /// a string-keyed store), values as floats (labels as external ids), `*_exists` false
    /// where the vertex did not exist on that side.
    #[allow(clippy::type_complexity)]
    fn changes_since<'py>(
        &self,
        py: Python<'py>,
        lsn: u64,
    ) -> PyResult<(
        Bound<'py, PyAny>,
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<bool>>,
    )> {
        let (changes, graph): (Vec<Change>, _) =
            self.with(py, |h| Ok((h.changes_since(lsn)?, h.graph().0)))?;
        let label = |v: Option<Value>| match v {
            Some(Value::Vertex(l)) => graph.external_id(l) as f64,
            other => float_of(other),
        };
        let ext: Vec<u64> = changes
            .iter()
            .map(|c| graph.external_id(c.vertex))
            .collect();
        // A string-keyed store's names are the snapshot's: a patch adds no vertex there.
        let ids = crate::snapshot::ids_or_names(py, graph.base(), ext);
        Ok((
            ids,
            PyArray1::from_vec(py, changes.iter().map(|c| label(c.old)).collect()),
            PyArray1::from_vec(py, changes.iter().map(|c| label(c.new)).collect()),
            PyArray1::from_vec(py, changes.iter().map(|c| c.old.is_some()).collect()),
            PyArray1::from_vec(py, changes.iter().map(|c| c.new.is_some()).collect()),
        ))
    }

    /// Stops the thread; stopping twice is a no-op.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let h = py.detach(|| self.inner.lock().unwrap_or_else(|e| e.into_inner()).take());
        match h {
            Some(h) => py.detach(|| h.stop()).py_err(),
            None => Ok(()),
        }
    }
}
