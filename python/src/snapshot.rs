//! `Snapshot`: a consistent view, read into numpy arrays aligned with `vertex_ids()`.

use crate::errors::IntoPy;
use evograph::algo::kernel::{self, Kernel, Params, Values};
use evograph::types::par_vertices;
use evograph::{GraphView, VertexId};
use numpy::ndarray::ArrayView1;
use numpy::PyArray1;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// A consistent, immutable view of a store at one moment. Vertices are reported in one
/// order everywhere: the order of `vertex_ids()`.
#[pyclass(module = "evograph._evograph", frozen)]
pub struct Snapshot {
    s: evograph::Snapshot,
    /// Dense ids of the existing vertices, when some are deleted (else positions are dense
    /// ids).
    live: OnceLock<Option<Vec<VertexId>>>,
    /// External id to dense id, built on the first lookup by id.
    index: OnceLock<FxHashMap<u64, VertexId>>,
}

impl Snapshot {
    pub(crate) fn new(s: evograph::Snapshot) -> Snapshot {
        Snapshot {
            s,
            live: OnceLock::new(),
            index: OnceLock::new(),
        }
    }

    fn live(&self) -> Option<&[VertexId]> {
        self.live.get_or_init(|| self.s.live_ids()).as_deref()
    }

    /// Per-vertex values (indexed by dense id) in `vertex_ids()` order.
    fn aligned<T: Copy + Send + Sync>(&self, v: Vec<T>) -> Vec<T> {
        evograph::snapshot::live_values(self.live(), v)
    }

    /// The dense id of external id `ext`, if that vertex exists in the snapshot.
    fn dense(&self, ext: u64) -> Option<VertexId> {
        let index = self.index.get_or_init(|| {
            let ext = self.s.external_ids();
            (0..ext.len())
                .filter(|&v| self.s.vertex_exists(v as VertexId))
                .map(|v| (ext[v], v as VertexId))
                .collect()
        });
        index.get(&ext).copied()
    }

    fn must_dense(&self, ext: u64) -> PyResult<VertexId> {
        self.dense(ext)
            .ok_or_else(|| PyKeyError::new_err(format!("vertex {ext} is not in the graph")))
    }

    fn degrees(&self, py: Python<'_>, out: bool) -> Vec<u64> {
        py.detach(|| {
            let s = &self.s;
            let all: Vec<u64> = evograph::with_view!(s, |g| par_vertices(g.num_vertices())
                .map(|v| if out { g.out_degree(v) } else { g.in_degree(v) } as u64)
                .collect());
            self.aligned(all)
        })
    }

    fn neighbors(&self, py: Python<'_>, v: u64, out: bool) -> PyResult<Vec<u64>> {
        let d = self.must_dense(v)?;
        Ok(py.detach(|| {
            let s = &self.s;
            let mut buf = Vec::new();
            if out {
                s.out_neighbors_sorted(d, &mut buf);
            } else {
                s.in_neighbors_sorted(d, &mut buf);
            }
            buf.iter().map(|&w| s.external_id(w)).collect()
        }))
    }
}

/// A read-only numpy array over `data`, which `owner` keeps alive.
///
/// # Safety
/// `data` must stay valid and unchanged for as long as `owner` lives.
unsafe fn borrowed<'py, T: numpy::Element>(
    owner: &Bound<'py, PyAny>,
    data: &[T],
) -> PyResult<Bound<'py, PyArray1<T>>> {
    // SAFETY: the caller guarantees `data` lives and stays unchanged as long as `owner`,
    // which the array holds as its base object.
    let a = unsafe { PyArray1::borrow_from_array(&ArrayView1::from(data), owner.clone()) };
    // Run files are mapped read-only: a write through the array would fault.
    let kwargs = PyDict::new(owner.py());
    kwargs.set_item("write", false)?;
    a.call_method("setflags", (), Some(&kwargs))?;
    Ok(a)
}

#[pymethods]
impl Snapshot {
    /// Number of existing vertices.
    #[getter]
    fn num_vertices(&self) -> usize {
        self.s.live_vertices()
    }

    /// Number of edges as the command line counts them (each undirected edge once).
    #[getter]
    fn num_edges(&self, py: Python<'_>) -> u64 {
        py.detach(|| self.s.edge_count())
    }

    /// Whether the graph is undirected.
    #[getter]
    fn undirected(&self) -> bool {
        self.s.is_undirected()
    }

    /// Whether edges carry weights.
    #[getter]
    fn weighted(&self) -> bool {
        self.s.is_weighted()
    }

    /// Number of runs the snapshot reads (1 once compacted).
    #[getter]
    fn runs(&self) -> usize {
        self.s.runs().len()
    }

    /// External ids of the existing vertices, in dense-id order: the order of every
    /// per-vertex array. Read-only, and without a copy when no vertex is deleted.
    fn vertex_ids<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let me = slf.get();
        match me.live() {
            // SAFETY: the snapshot owns its id array (an `Arc`), immutable and alive as
            // long as the snapshot object, which the array keeps as its base.
            None => unsafe { borrowed(slf.as_any(), me.s.external_ids()) },
            Some(live) => {
                let ext = me.s.external_ids();
                let ids: Vec<u64> = live.iter().map(|&d| ext[d as usize]).collect();
                Ok(PyArray1::from_vec(slf.py(), ids))
            }
        }
    }

    /// Out-degree of each vertex, aligned with `vertex_ids()`.
    fn out_degrees<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_vec(py, self.degrees(py, true))
    }

    /// In-degree of each vertex, aligned with `vertex_ids()`.
    fn in_degrees<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_vec(py, self.degrees(py, false))
    }

    /// External ids of `v`'s out-neighbors, sorted by dense id.
    fn out_neighbors<'py>(&self, py: Python<'py>, v: u64) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(PyArray1::from_vec(py, self.neighbors(py, v, true)?))
    }

    /// External ids of `v`'s in-neighbors, sorted by dense id.
    fn in_neighbors<'py>(&self, py: Python<'py>, v: u64) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(PyArray1::from_vec(py, self.neighbors(py, v, false)?))
    }

    /// Whether the edge `u -> v` exists (false when either vertex does not).
    fn has_edge(&self, u: u64, v: u64) -> bool {
        match (self.dense(u), self.dense(v)) {
            (Some(u), Some(v)) => self.s.has_edge(u, v),
            _ => false,
        }
    }

    /// The out-adjacency as CSR arrays over positions in `vertex_ids()` order:
    /// `(indptr int64, indices int32 or int64, weights float64 or None, ids uint64,
    /// borrowed)`. `borrowed` says the arrays are read-only views of the compacted run
    /// itself, with no copy.
    fn csr<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let me = slf.get();
        let owner = slf.as_any();
        if let Some(f) = me.s.flat().filter(|_| me.live().is_none()) {
            let (offs, adds, wts) = f.out_arrays();
            if offs.len() == me.s.num_vertices() + 1 {
                // SAFETY: the run's mapped arrays are immutable and live as long as the
                // snapshot (it holds the run), which each array keeps as its base. Offsets
                // and ids are below 2^63 and 2^31 (or 2^63), so the signed reading of the
                // same bytes is the same numbers.
                let (indptr, indices, weights, ids) = unsafe {
                    let offs: &[i64] = bytemuck::cast_slice(offs);
                    let adds: &[SignedId] = bytemuck::cast_slice(adds);
                    let w = if me.s.is_weighted() {
                        Some(borrowed(owner, wts)?)
                    } else {
                        None
                    };
                    (
                        borrowed(owner, offs)?,
                        borrowed(owner, adds)?,
                        w,
                        borrowed(owner, me.s.external_ids())?,
                    )
                };
                return (indptr, indices, weights, ids, true).into_pyobject(py);
            }
        }
        let a = py.detach(|| me.s.csr_arrays());
        let offs: Vec<i64> = bytemuck::cast_vec(a.offsets);
        let targets: Vec<SignedId> = bytemuck::cast_vec(a.targets);
        let weights = (me.s.is_weighted()).then(|| PyArray1::from_vec(py, a.weights));
        (
            PyArray1::from_vec(py, offs),
            PyArray1::from_vec(py, targets),
            weights,
            PyArray1::from_vec(py, a.ids),
            false,
        )
            .into_pyobject(py)
    }

    /// Runs kernel `name` (see `kernels()`); returns `(values, report)`: values aligned with
    /// `vertex_ids()` (a number for tc; `(ids, hops)` for khop) and the JSON summary that
    /// `evograph run --json` prints.
    #[pyo3(signature = (name, source=None, iterations=None, damping=0.85, tolerance=1e-4,
        delta=1.0, samples=4, delivery=None, max_supersteps=10_000, verify=false, threads=0))]
    #[allow(clippy::too_many_arguments)]
    fn kernel<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        source: Option<u64>,
        iterations: Option<u32>,
        damping: f64,
        tolerance: f64,
        delta: f64,
        samples: usize,
        delivery: Option<&str>,
        max_supersteps: u32,
        verify: bool,
        threads: usize,
    ) -> PyResult<(Bound<'py, PyAny>, String)> {
        let k: Kernel = name.parse().py_err()?;
        let mut p = Params::default();
        p.source = match source {
            Some(v) => Some(self.must_dense(v)?),
            None if k.needs_source() => {
                return Err(PyValueError::new_err(format!("{k} needs a source vertex")))
            }
            None => None,
        };
        check_params(damping, tolerance, delta, samples, max_supersteps)?;
        check_counts(iterations, threads)?;
        (p.iterations, p.damping, p.tolerance, p.delta) = (iterations, damping, tolerance, delta);
        (p.samples, p.verify, p.max_supersteps) = (samples, verify, max_supersteps);
        p.delivery = match delivery {
            Some(d) => Some(d.parse().map_err(PyValueError::new_err)?),
            None => None,
        };
        let out = py.detach(|| in_pool(threads, || kernel::run(&self.s, k, &p)))?;
        let mut report = out.report.clone();
        report.insert("kernel".into(), k.name().into());
        report.insert("seconds".into(), out.seconds.into());
        let report = serde_json::Value::Object(report).to_string();
        let values = match out.values {
            Values::Int(v) => PyArray1::from_vec(py, self.aligned(v)).into_any(),
            Values::Float(v) => PyArray1::from_vec(py, self.aligned(v)).into_any(),
            Values::Scalar(n) => n.into_pyobject(py)?.into_any(),
            Values::Hops(h) => {
                let ids: Vec<u64> = h.iter().map(|&(v, _)| self.s.external_id(v)).collect();
                let hops: Vec<u8> = h.iter().map(|&(_, d)| d).collect();
                (PyArray1::from_vec(py, ids), PyArray1::from_vec(py, hops))
                    .into_pyobject(py)?
                    .into_any()
            }
        };
        Ok((values, report))
    }
}

/// The signed integer of the build's id width (numpy and SciPy index with signed ints).
#[cfg(not(feature = "wide-ids"))]
type SignedId = i32;
/// The signed integer of the build's id width (numpy and SciPy index with signed ints).
#[cfg(feature = "wide-ids")]
type SignedId = i64;

/// The range checks `evograph run` applies to its flags.
fn check_params(
    damping: f64,
    tolerance: f64,
    delta: f64,
    samples: usize,
    max_supersteps: u32,
) -> PyResult<()> {
    let bad = |m: &str| Err(PyValueError::new_err(m.to_string()));
    if !(0.0..1.0).contains(&damping) {
        return bad("damping must be in [0, 1)");
    }
    if !(tolerance > 0.0 && tolerance.is_finite()) {
        return bad("tolerance must be positive");
    }
    if !(delta > 0.0 && delta.is_finite()) {
        return bad("delta must be positive");
    }
    if !(1..=1_000_000).contains(&samples) {
        return bad("samples must be in [1, 1000000]");
    }
    if max_supersteps == 0 {
        return bad("max_supersteps must be at least 1");
    }
    Ok(())
}

/// The bounds `evograph run` puts on --iterations and --threads.
fn check_counts(iterations: Option<u32>, threads: usize) -> PyResult<()> {
    if iterations.is_some_and(|i| !(1..=1_000_000).contains(&i)) {
        return Err(PyValueError::new_err("iterations must be in [1, 1000000]"));
    }
    if threads > 1024 {
        return Err(PyValueError::new_err("threads must be in [0, 1024]"));
    }
    Ok(())
}

/// Runs `f` on `threads` workers (0: rayon's global pool, one per core).
fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> evograph::Result<T> + Send) -> PyResult<T> {
    if threads == 0 {
        return f().py_err();
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    pool.install(f).py_err()
}

/// Names of the kernels `Snapshot.kernel` runs.
#[pyfunction]
pub fn kernels() -> Vec<&'static str> {
    Kernel::ALL.iter().map(|k| k.name()).collect()
}
