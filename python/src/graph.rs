//! `Graph`: an open store, written from numpy arrays with the GIL released.

use crate::errors::{ClosedError, IntoPy};
use crate::names::NameBuf;
use crate::snapshot::Snapshot;
use evograph::store::{Point, Ticket};
use evograph::{Durability, KeyKind, Names, Options, Record};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::ops::Range;
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

/// Opens (or, with `create`, creates) the store at `path`; `keys` (`"u64"`, `"string"`)
/// keys a new store, and is checked against an existing one; `compress` makes a new store
/// write compressed runs.
#[pyfunction]
#[pyo3(signature = (path, create, durability, undirected, weighted, memtable_mb, threads, read_only,
    keys=None, compress=false, history=None, run_versions=None, unacknowledged=false))]
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
    keys: Option<&str>,
    compress: bool,
    history: Option<&str>,
    run_versions: Option<&str>,
    unacknowledged: bool,
) -> PyResult<Graph> {
    let durability: Durability = durability.parse().map_err(PyValueError::new_err)?;
    let keys = match keys {
        Some(k) => Some(k.parse::<KeyKind>().map_err(PyValueError::new_err)?),
        None => None,
    };
    let mut opts = Options::new()
        .keys(keys)
        .compression(compress.then_some(evograph::Compression::Packed))
        .undirected(undirected.then_some(true))
        .weighted(weighted.then_some(true))
        .durability(durability)
        .threads(threads)
        .create(create)
        .read_only(read_only)
        .log_reach(match unacknowledged {
            true => evograph::LogReach::Written,
            false => evograph::LogReach::Durable,
        });
    if let Some(h) = history {
        opts = opts.history(h.parse().map_err(PyValueError::new_err)?);
    }
    if let Some(v) = run_versions {
        opts = opts.run_versions(v.parse().map_err(PyValueError::new_err)?);
    }
    if let Some(mb) = memtable_mb {
        if mb == 0 {
            return Err(PyValueError::new_err("memtable_mb must be at least 1"));
        }
        let bytes = mb
            .checked_mul(1 << 20)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| PyValueError::new_err(format!("memtable_mb {mb} is too large")))?;
        opts = opts.memtable_bytes(bytes);
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

    /// Submits items `0..n` in batches of [`BATCH`] (`submit` takes one batch's range and
    /// its commit time), one batch in flight while the next is applied (as `evograph
    /// ingest` does), acknowledged durable (per the store's durability) when it returns.
    /// With `times` (Unix nanoseconds per item, never decreasing), each run of equal times
    /// commits at its time, in batches of at most [`BATCH`], as `--time-column` does.
    fn pipeline(
        &self,
        py: Python<'_>,
        n: usize,
        times: Option<&[i64]>,
        submit: impl Fn(&evograph::Graph, Range<usize>, Option<i64>) -> evograph::Result<Ticket> + Sync,
    ) -> PyResult<()> {
        self.with(py, |g| {
            let mut pending = None;
            for (r, at) in batches(n, times) {
                let t = submit(g, r, at)?;
                if let Some(p) = pending.replace(t) {
                    g.wait(p)?;
                }
            }
            pending.map_or(Ok(()), |p| g.wait(p))
        })
    }

    /// Streams `n` records made by `make(i)` into the store (see [`Graph::pipeline`]).
    fn stream(
        &self,
        py: Python<'_>,
        n: usize,
        times: Option<&[i64]>,
        make: impl Fn(usize) -> Record + Sync,
    ) -> PyResult<()> {
        self.pipeline(py, n, times, |g, r, at| {
            let batch: Vec<Record> = r.map(&make).collect();
            match at {
                Some(t) => g.submit_at(&batch, t),
                None => g.submit(&batch),
            }
        })
    }

    /// Streams `n` records over named vertices into a string-keyed store: record `i` names
    /// the vertices `name(i, 0..width)`, and `make(i, p)` makes it given the position `p` of
    /// its first name in its batch's names (the second is at `p + 1`).
    fn stream_named<'n>(
        &self,
        py: Python<'_>,
        n: usize,
        width: usize,
        times: Option<&[i64]>,
        name: impl Fn(usize, usize) -> &'n str + Sync,
        make: impl Fn(usize, u64) -> Record + Sync,
    ) -> PyResult<()> {
        self.pipeline(py, n, times, |g, r, at| {
            let names: Names = r
                .clone()
                .flat_map(|i| (0..width).map(move |j| (i, j)))
                .map(|(i, j)| name(i, j))
                .collect();
            let start = r.start;
            let batch: Vec<Record> = r.map(|i| make(i, ((i - start) * width) as u64)).collect();
            match at {
                Some(t) => g.submit_named_at(&batch, &names, t),
                None => g.submit_named(&batch, &names),
            }
        })
    }

    /// Refuses weights for an unweighted store before any name is interned.
    fn check_weighted(&self, py: Python<'_>, src: &NameBuf, dst: &NameBuf) -> PyResult<()> {
        if src.len() == 0 || self.with(py, |g| Ok(g.is_weighted()))? {
            return Ok(());
        }
        Err(PyValueError::new_err(format!(
            "edge '{}' -> '{}' has a weight but the store is unweighted (weights are chosen at creation: evograph.open(..., weighted=True))",
            src.get(0),
            dst.get(0)
        )))
    }
}

fn closed(path: &std::path::Path) -> PyErr {
    ClosedError::new_err(format!("store {} is closed", path.display()))
}

fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, what: &str) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| PyValueError::new_err(format!("{what} must be a contiguous array")))
}

/// The batches of `n` items: ranges of at most [`BATCH`], cut where `times` changes, each
/// with its time.
fn batches(n: usize, times: Option<&[i64]>) -> Vec<(Range<usize>, Option<i64>)> {
    let Some(times) = times else {
        let starts = (0..n).step_by(BATCH);
        return starts.map(|a| (a..(a + BATCH).min(n), None)).collect();
    };
    let mut out = Vec::new();
    let mut start = 0;
    while start < n {
        let t = times[start];
        let end = start + times[start..].partition_point(|&x| x == t);
        for a in (start..end).step_by(BATCH) {
            out.push((a..(a + BATCH).min(end), Some(t)));
        }
        start = end;
    }
    out
}

/// Per-item commit times, one per record, never decreasing.
fn times_of<'a>(
    times: &'a Option<PyReadonlyArray1<'_, i64>>,
    n: usize,
) -> PyResult<Option<&'a [i64]>> {
    let Some(t) = times else {
        return Ok(None);
    };
    let t = slice(t, "times")?;
    same_len(n, t.len(), "src and times")?;
    if let Some(i) = (1..t.len()).find(|&i| t[i] < t[i - 1]) {
        return Err(PyValueError::new_err(format!(
            "times[{i}] ({}) is before times[{}] ({}): commit times never go backwards",
            t[i],
            i - 1,
            t[i - 1]
        )));
    }
    Ok(Some(t))
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
    /// With `times` (int64 Unix nanoseconds, never decreasing), each run of equal times
    /// commits at that time.
    #[pyo3(signature = (src, dst, weights=None, times=None))]
    fn insert_edges(
        &self,
        py: Python<'_>,
        src: PyReadonlyArray1<'_, u64>,
        dst: PyReadonlyArray1<'_, u64>,
        weights: Option<PyReadonlyArray1<'_, f64>>,
        times: Option<PyReadonlyArray1<'_, i64>>,
    ) -> PyResult<()> {
        let (s, d) = (slice(&src, "src")?, slice(&dst, "dst")?);
        same_len(s.len(), d.len(), "src and dst")?;
        let t = times_of(&times, s.len())?;
        match &weights {
            None => self.stream(py, s.len(), t, |i| Record::Insert(s[i], d[i])),
            Some(w) => {
                let w = slice(w, "weights")?;
                same_len(s.len(), w.len(), "src and weights")?;
                self.stream(py, s.len(), t, |i| Record::InsertWeighted(s[i], d[i], w[i]))
            }
        }
    }

    /// Deletes the edges `src[i] -> dst[i]` (absent ones are no-ops).
    /// With `times` as [`Graph::insert_edges`] takes them.
    #[pyo3(signature = (src, dst, times=None))]
    fn delete_edges(
        &self,
        py: Python<'_>,
        src: PyReadonlyArray1<'_, u64>,
        dst: PyReadonlyArray1<'_, u64>,
        times: Option<PyReadonlyArray1<'_, i64>>,
    ) -> PyResult<()> {
        let (s, d) = (slice(&src, "src")?, slice(&dst, "dst")?);
        same_len(s.len(), d.len(), "src and dst")?;
        let t = times_of(&times, s.len())?;
        self.stream(py, s.len(), t, |i| Record::Delete(s[i], d[i]))
    }

    /// Makes the vertices exist (isolated if new).
    fn insert_vertices(&self, py: Python<'_>, ids: PyReadonlyArray1<'_, u64>) -> PyResult<()> {
        let ids = slice(&ids, "ids")?;
        self.stream(py, ids.len(), None, |i| Record::InsertVertex(ids[i]))
    }

    /// Deletes the vertices and every edge touching them.
    fn delete_vertices(&self, py: Python<'_>, ids: PyReadonlyArray1<'_, u64>) -> PyResult<()> {
        let ids = slice(&ids, "ids")?;
        self.stream(py, ids.len(), None, |i| Record::DeleteVertex(ids[i]))
    }

    /// Inserts the edges `src[i] -> dst[i]` between named vertices of a string-keyed store
    /// (lists or tuples of str, or numpy `U` arrays), with `weights[i]` when given. Every
    /// name is checked before anything is stored.
    #[pyo3(signature = (src, dst, weights=None, times=None))]
    fn insert_named_edges(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        dst: &Bound<'_, PyAny>,
        weights: Option<PyReadonlyArray1<'_, f64>>,
        times: Option<PyReadonlyArray1<'_, i64>>,
    ) -> PyResult<()> {
        let (s, d) = (NameBuf::read(src, "src")?, NameBuf::read(dst, "dst")?);
        same_len(s.len(), d.len(), "src and dst")?;
        let t = times_of(&times, s.len())?;
        let name = |i: usize, j: usize| if j == 0 { s.get(i) } else { d.get(i) };
        match &weights {
            None => self.stream_named(py, s.len(), 2, t, name, |_, p| Record::Insert(p, p + 1)),
            Some(w) => {
                let w = slice(w, "weights")?;
                same_len(s.len(), w.len(), "src and weights")?;
                self.check_weighted(py, &s, &d)?;
                self.stream_named(py, s.len(), 2, t, name, |i, p| {
                    Record::InsertWeighted(p, p + 1, w[i])
                })
            }
        }
    }

    /// Deletes the edges `src[i] -> dst[i]` between named vertices (edges naming unknown
    /// vertices are no-ops).
    #[pyo3(signature = (src, dst, times=None))]
    fn delete_named_edges(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        dst: &Bound<'_, PyAny>,
        times: Option<PyReadonlyArray1<'_, i64>>,
    ) -> PyResult<()> {
        let (s, d) = (NameBuf::read(src, "src")?, NameBuf::read(dst, "dst")?);
        same_len(s.len(), d.len(), "src and dst")?;
        let t = times_of(&times, s.len())?;
        let name = |i: usize, j: usize| if j == 0 { s.get(i) } else { d.get(i) };
        self.stream_named(py, s.len(), 2, t, name, |_, p| Record::Delete(p, p + 1))
    }

    /// Makes the named vertices exist (isolated if new).
    fn insert_named_vertices(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        let ids = NameBuf::read(ids, "ids")?;
        let name = |i: usize, _: usize| ids.get(i);
        self.stream_named(py, ids.len(), 1, None, name, |_, p| Record::InsertVertex(p))
    }

    /// Deletes the named vertices (unknown ones are no-ops) and every edge touching them.
    fn delete_named_vertices(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        let ids = NameBuf::read(ids, "ids")?;
        let name = |i: usize, _: usize| ids.get(i);
        self.stream_named(py, ids.len(), 1, None, name, |_, p| Record::DeleteVertex(p))
    }

    /// A consistent view of the graph as of now.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        self.with(py, |g| g.snapshot()).map(Snapshot::new)
    }

    /// The graph right after the commit `at` names (an LSN, or `@SECONDS` / RFC 3339 text),
    /// with that commit's LSN and time (Unix nanoseconds).
    fn snapshot_at(&self, py: Python<'_>, at: &str) -> PyResult<(Snapshot, u64, i64)> {
        let p: Point = at.parse().map_err(PyValueError::new_err)?;
        let (s, c) = self.with(py, |g| g.snapshot_at(p))?;
        Ok((Snapshot::new(s), c.lsn, c.unix_nanos))
    }

    /// The size of the graph now (edges, adjacency entries, vertices), as `Graph::size`
    /// counts it: from the runs' headers in a directed store, without a snapshot.
    fn size(&self, py: Python<'_>) -> PyResult<(u64, u64, u64)> {
        let z = self.with(py, |g| g.size())?;
        Ok((z.edges, z.entries, z.vertices))
    }

    /// The size of the graph right after the commit `at` names (edges, adjacency entries,
    /// vertices), counted without building it where the runs have versions, with that
    /// commit's LSN and time.
    fn size_at(&self, py: Python<'_>, at: &str) -> PyResult<((u64, u64, u64), u64, i64)> {
        let p: Point = at.parse().map_err(PyValueError::new_err)?;
        let (z, c) = self.with(py, |g| g.size_at(p))?;
        Ok(((z.edges, z.entries, z.vertices), c.lsn, c.unix_nanos))
    }

    /// The graph over the window from `start` to `end` (points as `snapshot_at` takes
    /// them), with the start's LSN and time, the last commit's LSN and the moments counted.
    fn snapshot_window(
        &self,
        py: Python<'_>,
        start: &str,
        end: &str,
    ) -> PyResult<(Snapshot, u64, i64, u64, usize)> {
        let (a, b): (Point, Point) = (
            start.parse().map_err(PyValueError::new_err)?,
            end.parse().map_err(PyValueError::new_err)?,
        );
        let (s, w) = self.with(py, |g| g.snapshot_window(a, b))?;
        Ok((
            Snapshot::new(s),
            w.start.lsn,
            w.start.unix_nanos,
            w.last.lsn,
            w.moments,
        ))
    }

    /// `kernel` (wcc, bfs, sssp or pr-tol) at each commit of `lsns` (ascending), brought forward
    /// from one to the next as `evograph run --every` brings it: per commit, the keys of
    /// the vertices then (ids, or names) and their values as `Snapshot.kernel` gives them
    /// (labels as keys), or `None` where the commit's graph lacks `source` (a key as text,
    /// as the command line takes it).
    #[pyo3(signature = (kernel, lsns, source=None))]
    #[allow(clippy::type_complexity)]
    fn roll_forward<'py>(
        &self,
        py: Python<'py>,
        kernel: &str,
        lsns: Vec<u64>,
        source: Option<String>,
    ) -> PyResult<Vec<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>>> {
        let k: evograph::algo::kernel::Kernel = kernel.parse().py_err()?;
        if !crate::rolling::rolls_forward(k) {
            return Err(PyValueError::new_err(format!("{k} is not brought forward")));
        }
        let (steps, names) = self.with(py, |g| {
            let names = g.snapshot()?.names().cloned();
            let src = match &source {
                None => None,
                Some(key) => match g.dense_id_of(key)? {
                    Some(v) => Some(v),
                    // A vertex the store never had: no step's graph has it.
                    None => return Ok(((0..lsns.len()).map(|_| None).collect(), names)),
                },
            };
            Ok((crate::rolling::roll(g, k, src, &lsns)?, names))
        })?;
        let keys = |py: Python<'py>, ext: Vec<u64>| -> Bound<'py, PyAny> {
            match &names {
                Some(n) => crate::snapshot::key_objects(py, n, ext.into_iter()).into_any(),
                None => PyArray1::from_vec(py, ext).into_any(),
            }
        };
        let out = steps.into_iter().map(|step| {
            step.map(|(ext, values)| {
                let vals = match values {
                    crate::rolling::StepValues::Float(v) => PyArray1::from_vec(py, v).into_any(),
                    crate::rolling::StepValues::Int(v)
                        if k == evograph::algo::kernel::Kernel::Wcc =>
                    {
                        match &names {
                            Some(_) => keys(py, v.into_iter().map(|l| l as u64).collect()),
                            None => PyArray1::from_vec(py, v).into_any(),
                        }
                    }
                    crate::rolling::StepValues::Int(v) => PyArray1::from_vec(py, v).into_any(),
                };
                (keys(py, ext), vals)
            })
        });
        Ok(out.collect())
    }

    /// The steps of a rolling computation (`Graph::rolling_steps`): for each, its point's
    /// time (Unix nanoseconds), the LSN of the commit it reads, and the points to read it
    /// at (`(at, None)`) or over (`(start, end)`), as text `snapshot_at` and
    /// `snapshot_window` take.
    #[pyo3(signature = (from, to, every, width=None))]
    #[allow(clippy::type_complexity)]
    fn rolling_steps(
        &self,
        py: Python<'_>,
        from: &str,
        to: &str,
        every: &str,
        width: Option<&str>,
    ) -> PyResult<Vec<(i64, u64, String, Option<String>)>> {
        use evograph::store::Stride;
        let (a, b): (Point, Point) = (
            from.parse().map_err(PyValueError::new_err)?,
            to.parse().map_err(PyValueError::new_err)?,
        );
        let every: Stride = every.parse().map_err(PyValueError::new_err)?;
        let width: Option<Stride> = width
            .map(|w| w.parse().map_err(PyValueError::new_err))
            .transpose()?;
        let steps = self.with(py, |g| g.rolling_steps(a, b, every, width))?;
        let text = |p: Point| match p {
            Point::Lsn(k) => k.to_string(),
            Point::Time(t) => evograph::time::show(t),
        };
        Ok((steps.iter())
            .map(|st| {
                let time = match st.at {
                    Point::Time(t) => t,
                    Point::Lsn(_) => st.commit.unix_nanos,
                };
                match st.window {
                    Some((x, y)) => (time, st.commit.lsn, text(x), Some(text(y))),
                    None => (time, st.commit.lsn, text(st.at), None),
                }
            })
            .collect())
    }

    /// The net changes between two commits as numpy arrays: `op` (int8: 1 adds an edge or
    /// sets its weight, -1 removes one, 2 adds a vertex, -2 deletes one), `src`, `dst`
    /// (external ids; `dst` = `src` for vertices), `weight` (0 but for additions in
    /// weighted stores), and the two commits' LSNs.
    #[allow(clippy::type_complexity)]
    fn diff<'py>(
        &self,
        py: Python<'py>,
        from: &str,
        to: &str,
    ) -> PyResult<(
        Bound<'py, PyArray1<i8>>,
        Bound<'py, PyArray1<u64>>,
        Bound<'py, PyArray1<u64>>,
        Bound<'py, PyArray1<f64>>,
        u64,
        u64,
    )> {
        let (a, b): (Point, Point) = (
            from.parse().map_err(PyValueError::new_err)?,
            to.parse().map_err(PyValueError::new_err)?,
        );
        let d = self.with(py, |g| g.diff(a, b))?;
        let n = d.records.len();
        let (mut op, mut src, mut dst, mut w) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for r in &d.records {
            let (o, s, t, x) = match *r {
                Record::Insert(s, t) => (1, s, t, 0.0),
                Record::InsertWeighted(s, t, x) => (1, s, t, x),
                Record::Delete(s, t) => (-1, s, t, 0.0),
                Record::InsertVertex(v) => (2, v, v, 0.0),
                Record::DeleteVertex(v) => (-2, v, v, 0.0),
            };
            op.push(o);
            src.push(s);
            dst.push(t);
            w.push(x);
        }
        Ok((
            op.into_pyarray(py),
            src.into_pyarray(py),
            dst.into_pyarray(py),
            w.into_pyarray(py),
            d.from.lsn,
            d.to.lsn,
        ))
    }

    /// The commits in the history kept: (LSN, Unix nanoseconds, records) each, the setting,
    /// segments and their bytes.
    #[allow(clippy::type_complexity)]
    fn log(&self, py: Python<'_>) -> PyResult<(Vec<(u64, i64, u64)>, String, usize, u64)> {
        let l = self.with(py, |g| g.log())?;
        let commits = (l.commits.iter())
            .map(|(c, n)| (c.lsn, c.unix_nanos, *n))
            .collect();
        Ok((commits, l.setting.to_string(), l.segments, l.segment_bytes))
    }

    /// When an edge (`dst` given) or a vertex, by its key as text, lived within the history
    /// kept: `(existed_before, from_lsn, from_nanos, [(lsn, unix_nanos, added)])`; no event
    /// for a key the store never saw.
    #[pyo3(signature = (src, dst=None))]
    #[allow(clippy::type_complexity)]
    fn lifetime(
        &self,
        py: Python<'_>,
        src: &str,
        dst: Option<&str>,
    ) -> PyResult<(bool, u64, i64, Vec<(u64, i64, bool)>)> {
        let life = self.with(py, |g| {
            let (u, v) = (
                g.dense_id_of(src)?,
                dst.map(|d| g.dense_id_of(d)).transpose()?,
            );
            match (u, dst, v) {
                (Some(u), None, _) => g.vertex_history(u).map(Some),
                (Some(u), Some(_), Some(Some(v))) => g.edge_history(u, v).map(Some),
                _ => Ok(None),
            }
        })?;
        let Some(l) = life else {
            let log = self.with(py, |g| g.log())?;
            let Some((c, _)) = log.commits.first() else {
                return Err(PyValueError::new_err(format!(
                    "the store keeps no history (history: {})",
                    log.setting
                )));
            };
            return Ok((false, c.lsn, c.unix_nanos, Vec::new()));
        };
        let events = (l.events.iter())
            .map(|e| {
                let added = e.op == evograph::store::LifeOp::Add;
                (e.commit.lsn, e.commit.unix_nanos, added)
            })
            .collect();
        Ok((l.existed_before, l.from.lsn, l.from.unix_nanos, events))
    }

    /// What history the store keeps (`none`, `all`, `7d`, `100`).
    fn history(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |g| Ok(g.history().to_string()))
    }

    /// Changes what history the store keeps.
    fn set_history(&self, py: Python<'_>, setting: &str) -> PyResult<()> {
        let h: evograph::history::History = setting.parse().map_err(PyValueError::new_err)?;
        self.with(py, |g| g.set_history(h))
    }

    /// Keeps `kernel` (wcc, bfs, sssp, pr-tol, pregel-cc, pregel-bfs, pregel-sssp; pr is
    /// kept as pr-tol) current as batches commit; `source` is a vertex key as text.
    #[pyo3(signature = (kernel, source=None, damping=0.85, tolerance=1e-4))]
    fn maintain(
        &self,
        py: Python<'_>,
        kernel: &str,
        source: Option<String>,
        damping: f64,
        tolerance: f64,
    ) -> PyResult<crate::standing::Standing> {
        let k: evograph::algo::kernel::Kernel = kernel.parse().py_err()?;
        let mut p = evograph::algo::kernel::Params::default();
        (p.damping, p.tolerance) = (damping, tolerance);
        if let Some(key) = &source {
            let found = self.with(py, |g| {
                let s = g.snapshot()?;
                Ok(g.dense_id_of(key)?
                    .filter(|&v| evograph::GraphView::vertex_exists(&s, v)))
            })?;
            let v = found.ok_or_else(|| {
                pyo3::exceptions::PyKeyError::new_err(format!("vertex {key} is not in the graph"))
            })?;
            p.source = Some(v);
        }
        let h = self.with(py, |g| evograph::standing::maintain(g, k, &p))?;
        let kept = match k {
            evograph::algo::kernel::Kernel::Pr => evograph::algo::kernel::Kernel::PrTol,
            k => k,
        };
        Ok(crate::standing::Standing::new(h, kept))
    }

    /// The newest commit as `(lsn, unix_nanos)`, or None in a store without one.
    fn last_commit(&self, py: Python<'_>) -> PyResult<Option<(u64, i64)>> {
        self.with(py, |g| Ok(g.last_commit().map(|c| (c.lsn, c.unix_nanos))))
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

    /// How vertices are keyed: `u64` or `string`.
    #[getter]
    fn keys(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.with(py, |g| Ok(g.key_kind().as_str()))
    }

    /// When updates are acknowledged: `sync`, `interval=<ms>` or `none`.
    #[getter]
    fn durability(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |g| Ok(g.durability().to_string()))
    }
}
