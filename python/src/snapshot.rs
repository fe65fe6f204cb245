//! `Snapshot`: a consistent view, read into numpy arrays aligned with `vertex_ids()`.
//!
//! In a string-keyed store, vertices go out as numpy object arrays of `str` (and come in
//! as `str`); values that are vertices (labels, parents) go out as names too.

use crate::errors::IntoPy;
use crate::names::type_name;
use evograph::algo::kernel::{self, Kernel, Params, Values};
use evograph::types::par_vertices;
use evograph::{GraphView, Key, Names, VertexId};
use numpy::ndarray::ArrayView1;
use numpy::PyArray1;
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// A numpy object array (of `str`, or `None` where there is no vertex).
type Objects<'py> = Bound<'py, PyArray1<Py<PyAny>>>;

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
    /// Dense ids of the existing vertices sorted by name (a string-keyed store), built on
    /// the first lookup by name: a binary search over it costs 4 bytes per vertex where a
    /// hash map would copy every name.
    by_name: OnceLock<Vec<VertexId>>,
    /// `vertex_ids()` of a string-keyed store: made once, as it takes a `str` per vertex.
    key_array: PyOnceLock<Py<PyArray1<Py<PyAny>>>>,
}

impl Snapshot {
    pub(crate) fn new(s: evograph::Snapshot) -> Snapshot {
        Snapshot {
            s,
            live: OnceLock::new(),
            index: OnceLock::new(),
            by_name: OnceLock::new(),
            key_array: PyOnceLock::new(),
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

    /// The dense id of the existing vertex named `name` (a string-keyed store).
    fn dense_named(&self, name: &str) -> Option<VertexId> {
        let s = &self.s;
        let sorted = self.by_name.get_or_init(|| {
            let mut v: Vec<VertexId> = match self.live() {
                Some(live) => live.to_vec(),
                None => par_vertices(s.num_vertices()).collect(),
            };
            v.par_sort_unstable_by(|&a, &b| s.key(a).cmp(&s.key(b)));
            v
        });
        let at = sorted.binary_search_by(|&d| s.key(d).cmp(&Key::Name(name)));
        at.ok().map(|i| sorted[i])
    }

    /// The dense id of the existing vertex `v` names: an int, or a str in a string-keyed
    /// store (a key of the other kind is a `TypeError`).
    fn lookup(&self, py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<Option<VertexId>> {
        if self.s.names().is_some() {
            let name = v.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "vertex must be a str: this store is keyed by strings (vertex names), got {}",
                    type_name(v)
                ))
            })?;
            let name = name.to_str()?;
            return Ok(py.detach(|| self.dense_named(name)));
        }
        let id: u64 = v.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "vertex must be an unsigned 64-bit int: this store is keyed by integers, got {}",
                type_name(v)
            ))
        })?;
        Ok(self.dense(id))
    }

    /// [`Snapshot::lookup`], with a `KeyError` for a vertex that does not exist.
    fn must(&self, py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<VertexId> {
        self.lookup(py, v)?.ok_or_else(|| {
            let shown = match v.cast::<PyString>() {
                Ok(name) => format!("'{name}'"),
                Err(_) => v.to_string(),
            };
            PyKeyError::new_err(format!("vertex {shown} is not in the graph"))
        })
    }

    /// The names of the existing vertices (string-keyed store), in `vertex_ids()` order: a
    /// fresh read-only view of one array made on first use, so that no caller can change
    /// what the next one gets.
    fn key_view<'py>(&self, py: Python<'py>, names: &Names) -> PyResult<Bound<'py, PyAny>> {
        let a = self.key_array.get_or_try_init(py, || -> PyResult<_> {
            let ext = self.s.external_ids();
            let a = match self.live() {
                None => key_objects(py, names, ext.iter().copied()),
                Some(live) => key_objects(py, names, live.iter().map(|&d| ext[d as usize])),
            };
            read_only(a.as_any())?;
            Ok(a.unbind())
        })?;
        a.bind(py).call_method0("view")
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

    /// The out- (or in-) neighbours of `v`, sorted by dense id: ids, or names.
    fn neighbors<'py>(
        &self,
        py: Python<'py>,
        v: &Bound<'py, PyAny>,
        out: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let d = self.must(py, v)?;
        let ext: Vec<u64> = py.detach(|| {
            let s = &self.s;
            let mut buf = Vec::new();
            if out {
                s.out_neighbors_sorted(d, &mut buf);
            } else {
                s.in_neighbors_sorted(d, &mut buf);
            }
            buf.iter().map(|&w| s.external_id(w)).collect()
        });
        Ok(match self.s.names() {
            Some(names) => key_objects(py, names, ext.into_iter()).into_any(),
            None => PyArray1::from_vec(py, ext).into_any(),
        })
    }
}

/// A numpy object array of the names of external ids `ext`: a `str` for each, or `None`
/// for one no name has (kernels mark "no vertex" with -1, which arrives as `u64::MAX`).
/// External ids as a uint64 array, or as names (an object array) in a string-keyed store.
pub(crate) fn ids_or_names<'py>(
    py: Python<'py>,
    s: &evograph::Snapshot,
    ext: Vec<u64>,
) -> Bound<'py, PyAny> {
    match s.names() {
        Some(names) => key_objects(py, names, ext.into_iter()).into_any(),
        None => PyArray1::from_vec(py, ext).into_any(),
    }
}

pub(crate) fn key_objects<'py>(
    py: Python<'py>,
    names: &Names,
    ext: impl Iterator<Item = u64>,
) -> Objects<'py> {
    let objs: Vec<Py<PyAny>> = ext
        .map(|e| match names.get(e) {
            Some(name) => PyString::new(py, name).into_any().unbind(),
            None => py.None(),
        })
        .collect();
    PyArray1::from_vec(py, objs)
}

/// Marks a numpy array read-only.
fn read_only(a: &Bound<'_, PyAny>) -> PyResult<()> {
    let kwargs = PyDict::new(a.py());
    kwargs.set_item("write", false)?;
    a.call_method("setflags", (), Some(&kwargs))?;
    Ok(())
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
    read_only(a.as_any())?;
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

    /// How vertices are keyed: `u64` or `string`.
    #[getter]
    fn keys(&self) -> &'static str {
        self.s.key_kind().as_str()
    }

    /// Number of runs the snapshot reads (1 once compacted).
    #[getter]
    fn runs(&self) -> usize {
        self.s.runs().len()
    }

    /// External ids (uint64; names, as a read-only object array of str, in a string-keyed
    /// store) of the existing vertices, in dense-id order: the order of every per-vertex
    /// array. Read-only, and without a copy when no vertex is deleted.
    fn vertex_ids<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let me = slf.get();
        if let Some(names) = me.s.names() {
            return me.key_view(slf.py(), names);
        }
        match me.live() {
            // SAFETY: the snapshot owns its id array (an `Arc`), immutable and alive as
            // long as the snapshot object, which the array keeps as its base.
            None => unsafe { borrowed(slf.as_any(), me.s.external_ids()) }.map(Bound::into_any),
            Some(live) => {
                let ext = me.s.external_ids();
                let ids: Vec<u64> = live.iter().map(|&d| ext[d as usize]).collect();
                Ok(PyArray1::from_vec(slf.py(), ids).into_any())
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

    /// External ids (names) of `v`'s out-neighbors, sorted by dense id.
    fn out_neighbors<'py>(
        &self,
        py: Python<'py>,
        v: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.neighbors(py, v, true)
    }

    /// External ids (names) of `v`'s in-neighbors, sorted by dense id.
    fn in_neighbors<'py>(
        &self,
        py: Python<'py>,
        v: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.neighbors(py, v, false)
    }

    /// Whether the edge `u -> v` exists (false when either vertex does not).
    fn has_edge(
        &self,
        py: Python<'_>,
        u: &Bound<'_, PyAny>,
        v: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        Ok(match (self.lookup(py, u)?, self.lookup(py, v)?) {
            (Some(u), Some(v)) => self.s.has_edge(u, v),
            _ => false,
        })
    }

    /// The out-adjacency as CSR arrays over positions in `vertex_ids()` order:
    /// `(indptr int64, indices int32 or int64, weights float64 or None, ids, borrowed)`,
    /// `ids` as `vertex_ids()` gives them (uint64, or names). `borrowed` says the arrays
    /// are read-only views of the compacted run itself, with no copy.
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
                let (indptr, indices, weights, ext) = unsafe {
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
                let ids = match me.s.names() {
                    Some(names) => me.key_view(py, names)?,
                    None => ext.into_any(),
                };
                return (indptr, indices, weights, ids, true).into_pyobject(py);
            }
        }
        let a = py.detach(|| me.s.csr_arrays());
        let offs: Vec<i64> = bytemuck::cast_vec(a.offsets);
        let targets: Vec<SignedId> = bytemuck::cast_vec(a.targets);
        let weights = (me.s.is_weighted()).then(|| PyArray1::from_vec(py, a.weights));
        let ids = match me.s.names() {
            Some(names) => me.key_view(py, names)?,
            None => PyArray1::from_vec(py, a.ids).into_any(),
        };
        (
            PyArray1::from_vec(py, offs),
            PyArray1::from_vec(py, targets),
            weights,
            ids,
            false,
        )
            .into_pyobject(py)
    }

    /// Brandes' betweenness sums from the vertices at positions `sources` (of
    /// `vertex_ids()`), a source's own dependency not counted and nothing normalized,
    /// aligned with `vertex_ids()`: what NetworkX's `betweenness_centrality` sums before
    /// it rescales (unweighted shortest paths along out-edges).
    #[pyo3(signature = (sources, threads=0))]
    fn brandes_sums<'py>(
        &self,
        py: Python<'py>,
        sources: Vec<usize>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        check_threads(threads)?;
        let live = self.live();
        let count = live.map_or(self.s.num_vertices(), |l| l.len());
        if let Some(&bad) = sources.iter().find(|&&p| p >= count) {
            return Err(PyValueError::new_err(format!(
                "source position {bad} is past the {count} vertices"
            )));
        }
        let dense: Vec<VertexId> = (sources.iter())
            .map(|&p| live.map_or(p as VertexId, |l| l[p]))
            .collect();
        let sums = py.detach(|| {
            in_pool(threads, || {
                Ok(evograph::algo::gap::bc::dependencies(
                    &self.s,
                    &dense,
                    evograph::algo::gap::bc::Credit::NotSource,
                ))
            })
        })?;
        Ok(PyArray1::from_vec(py, self.aligned(sums)))
    }

    /// Runs kernel `name` (see `kernels()`); returns `(values, report)`: values aligned with
    /// `vertex_ids()` (a number for tc; `(ids, hops)` for khop) and the JSON summary that
    /// `evograph run --json` prints. `source` is a vertex as `vertex_ids()` gives them. In a
    /// string-keyed store, values that are vertices (labels, parents) are names, `None`
    /// where there is none.
    #[pyo3(signature = (name, source=None, iterations=None, damping=0.85, tolerance=1e-4,
        delta=1.0, samples=4, delivery=None, max_supersteps=10_000, verify=false, threads=0))]
    #[allow(clippy::too_many_arguments)]
    fn kernel<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        source: Option<&Bound<'py, PyAny>>,
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
            Some(v) => Some(self.must(py, v)?),
            None if k.needs_source() => {
                return Err(PyValueError::new_err(format!("{k} needs a source vertex")))
            }
            None => None,
        };
        check_threads(threads)?;
        (p.iterations, p.damping, p.tolerance, p.delta) = (iterations, damping, tolerance, delta);
        (p.samples, p.verify, p.max_supersteps) = (samples, verify, max_supersteps);
        // The ranges are the library's, as for `evograph run`.
        p.check().py_err()?;
        p.delivery = match delivery {
            Some(d) => Some(d.parse().map_err(PyValueError::new_err)?),
            None => None,
        };
        let out = py.detach(|| in_pool(threads, || kernel::run(&self.s, k, &p)))?;
        let mut report = out.report.clone();
        report.insert("kernel".into(), k.name().into());
        report.insert("seconds".into(), out.seconds.into());
        let report = serde_json::Value::Object(report).to_string();
        Ok((self.values(py, k, out.values)?, report))
    }
}

impl Snapshot {
    /// A kernel's values as Python objects, as [`Snapshot::kernel`] returns them.
    pub(crate) fn values_of<'py>(
        &self,
        py: Python<'py>,
        k: Kernel,
        v: Values,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.values(py, k, v)
    }

    /// A kernel's values as Python objects (see [`Snapshot::kernel`]).
    fn values<'py>(&self, py: Python<'py>, k: Kernel, v: Values) -> PyResult<Bound<'py, PyAny>> {
        let names = self.s.names();
        Ok(match v {
            Values::Int(v) => match names {
                // A negative value (no parent) becomes a huge id, which no name has: `None`.
                Some(names) if k.values_are_vertices() => {
                    key_objects(py, names, self.aligned(v).into_iter().map(|l| l as u64)).into_any()
                }
                _ => PyArray1::from_vec(py, self.aligned(v)).into_any(),
            },
            Values::Float(v) => PyArray1::from_vec(py, self.aligned(v)).into_any(),
            Values::Scalar(n) => n.into_pyobject(py)?.into_any(),
            Values::Hops(h) => {
                let ext = h.iter().map(|&(v, _)| self.s.external_id(v));
                let ids = match names {
                    Some(names) => key_objects(py, names, ext).into_any(),
                    None => PyArray1::from_vec(py, ext.collect()).into_any(),
                };
                let hops: Vec<u8> = h.iter().map(|&(_, d)| d).collect();
                (ids, PyArray1::from_vec(py, hops))
                    .into_pyobject(py)?
                    .into_any()
            }
        })
    }
}

/// The signed integer of the build's id width (numpy and SciPy index with signed ints).
#[cfg(not(feature = "wide-ids"))]
type SignedId = i32;
/// The signed integer of the build's id width (numpy and SciPy index with signed ints).
#[cfg(feature = "wide-ids")]
type SignedId = i64;

/// The bound `evograph run` puts on --threads (the kernel's own parameters are checked by
/// the library: `Params::check`).
fn check_threads(threads: usize) -> PyResult<()> {
    if threads > 1024 {
        return Err(PyValueError::new_err(format!(
            "invalid argument: threads: {threads} is not in 0..=1024"
        )));
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
