//! `Graph`: an open store, written from numpy arrays with the GIL released.

use crate::errors::{ClosedError, IntoPy};
use crate::snapshot::Snapshot;
use evograph::{Durability, Options, Record};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::RwLock;

/// Records per batch handed to the store: the command line's `ingest --batch` default.
const BATCH: usize = 65536;

/// An open evograph store. Create one with `evograph.open`.
#[pyclass(module = "evograph._evograph", frozen)]
pub struct Graph {
    /// `None` once closed. Held shared by every operation, exclusively by `close` (see the
    /// crate's concurrency contract).
    inner: RwLock<Option<evograph::Graph>>,
    path: PathBuf,
}

/// Opens (or, with `create`, creates) the store at `path`.
#[pyfunction]
#[pyo3(signature = (path, create, durability, undirected, weighted, memtable_mb, threads, read_only))]
#[allow(clippy::too_many_arguments)]
pub fn open(
    py: Python<'_>,
    path: PathBuf,
    create: bool,
    durability: &str,
    undirected: bool,
    weighted: bool,
    memtable_mb: Option<u64>,
    threads: usize,
    read_only: bool,
) -> PyResult<Graph> {
    let durability: Durability = durability.parse().map_err(PyValueError::new_err)?;
    let mut opts = Options {
        undirected: undirected.then_some(true),
        weighted: weighted.then_some(true),
        durability,
        threads,
        create,
        read_only,
        ..Options::default()
    };
    if let Some(mb) = memtable_mb {
        if mb == 0 {
            return Err(PyValueError::new_err("memtable_mb must be at least 1"));
        }
        opts.memtable_bytes = mb
            .checked_mul(1 << 20)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| PyValueError::new_err(format!("memtable_mb {mb} is too large")))?;
    }
    let p = path.clone();
    let g = py
        .detach(move || evograph::Graph::open(&p, opts))
        .py_err()?;
    Ok(Graph {
        inner: RwLock::new(Some(g)),
        path,
    })
}

impl Graph {
    /// Runs `f` on the open store with the GIL released.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&evograph::Graph) -> evograph::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let guard = self.inner.read().unwrap_or_else(|e| e.into_inner());
            match guard.as_ref() {
                Some(g) => f(g).py_err(),
                None => Err(closed(&self.path)),
            }
        })
    }

    /// Streams `n` records made by `make(i)` into the store in batches, one batch in
    /// flight while the next is applied (as `evograph ingest` does), acknowledged durable
    /// (per the store's durability) when it returns.
    fn stream(
        &self,
        py: Python<'_>,
        n: usize,
        make: impl Fn(usize) -> Record + Sync,
    ) -> PyResult<()> {
        self.with(py, |g| {
            let mut pending = None;
            let mut batch = Vec::with_capacity(BATCH.min(n));
            for start in (0..n).step_by(BATCH) {
                batch.clear();
                batch.extend((start..(start + BATCH).min(n)).map(&make));
                let t = g.submit(&batch)?;
                if let Some(p) = pending.replace(t) {
                    g.wait(p)?;
                }
            }
            pending.map_or(Ok(()), |p| g.wait(p))
        })
    }
}

fn closed(path: &std::path::Path) -> PyErr {
    ClosedError::new_err(format!("store {} is closed", path.display()))
}

fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, what: &str) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| PyValueError::new_err(format!("{what} must be a contiguous array")))
}

fn same_len(a: usize, b: usize, what: &str) -> PyResult<()> {
    if a != b {
        return Err(PyValueError::new_err(format!(
            "{what} have different lengths ({a} and {b})"
        )));
    }
    Ok(())
}

#[pymethods]
impl Graph {
    /// Inserts the edges `src[i] -> dst[i]` (uint64 arrays), with `weights[i]` (float64)
    /// when given; durable as the store's durability says when this returns.
    #[pyo3(signature = (src, dst, weights=None))]
    fn insert_edges(
        &self,
        py: Python<'_>,
        src: PyReadonlyArray1<'_, u64>,
        dst: PyReadonlyArray1<'_, u64>,
        weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<()> {
        let (s, d) = (slice(&src, "src")?, slice(&dst, "dst")?);
        same_len(s.len(), d.len(), "src and dst")?;
        match &weights {
            None => self.stream(py, s.len(), |i| Record::Insert(s[i], d[i])),
            Some(w) => {
                let w = slice(w, "weights")?;
                same_len(s.len(), w.len(), "src and weights")?;
                self.stream(py, s.len(), |i| Record::InsertWeighted(s[i], d[i], w[i]))
            }
        }
    }

    /// Deletes the edges `src[i] -> dst[i]` (absent ones are no-ops).
    fn delete_edges(
        &self,
        py: Python<'_>,
        src: PyReadonlyArray1<'_, u64>,
        dst: PyReadonlyArray1<'_, u64>,
    ) -> PyResult<()> {
        let (s, d) = (slice(&src, "src")?, slice(&dst, "dst")?);
        same_len(s.len(), d.len(), "src and dst")?;
        self.stream(py, s.len(), |i| Record::Delete(s[i], d[i]))
    }

    /// Makes the vertices exist (isolated if new).
    fn insert_vertices(&self, py: Python<'_>, ids: PyReadonlyArray1<'_, u64>) -> PyResult<()> {
        let ids = slice(&ids, "ids")?;
        self.stream(py, ids.len(), |i| Record::InsertVertex(ids[i]))
    }

    /// Deletes the vertices and every edge touching them.
    fn delete_vertices(&self, py: Python<'_>, ids: PyReadonlyArray1<'_, u64>) -> PyResult<()> {
        let ids = slice(&ids, "ids")?;
        self.stream(py, ids.len(), |i| Record::DeleteVertex(ids[i]))
    }

    /// A consistent view of the graph as of now.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        self.with(py, |g| g.snapshot()).map(Snapshot::new)
    }

    /// Writes the buffered updates into a run.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |g| g.flush())
    }

    /// Merges every run into one (the fastest layout to read).
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |g| g.compact())
    }

    /// What `evograph stats --json` reports, as a JSON text.
    fn stats_json(&self, py: Python<'_>) -> PyResult<String> {
        let stats = self.with(py, |g| g.stats())?;
        serde_json::to_string(&stats).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Closes the store (waiting for calls in flight in other threads); closing twice is
    /// a no-op.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let g = py.detach(|| self.inner.write().unwrap_or_else(|e| e.into_inner()).take());
        match g {
            Some(g) => py.detach(|| g.close()).py_err(),
            None => Ok(()),
        }
    }

    /// Whether the store has been closed.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        // Waits (without the GIL) for a `close` in progress rather than stalling Python.
        py.detach(|| {
            self.inner
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .is_none()
        })
    }

    /// The store's directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Whether the store is undirected.
    #[getter]
    fn undirected(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |g| Ok(g.is_undirected()))
    }

    /// Whether edges carry weights.
    #[getter]
    fn weighted(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |g| Ok(g.is_weighted()))
    }

    /// When updates are acknowledged: `sync`, `interval=<ms>` or `none`.
    #[getter]
    fn durability(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |g| Ok(g.durability().to_string()))
    }
}
