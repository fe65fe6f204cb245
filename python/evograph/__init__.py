"""evograph: a persistent store for evolving graphs, from Python.

Open a store, stream edges in from numpy arrays (durably, with the GIL released), take a
consistent snapshot while ingestion goes on, and run the GAP, Graphalytics and
vertex-program kernels on it, or hand it to SciPy, NetworkX or Arrow::

    import numpy as np, evograph
    with evograph.open("my-store", create=True) as g:
        g.insert_edges(np.array([1, 2, 3]), np.array([2, 3, 1]))
        s = g.snapshot()
        ranks = s.pr()                  # aligned with s.vertex_ids()
        m, ids = s.to_scipy()           # CSR matrix over positions, and their ids

Every per-vertex array a snapshot returns is aligned with ``Snapshot.vertex_ids()``: the
external ids of the existing vertices, in the store's (dense-id) order. Kernels that return
vertex ids as values (``wcc``, ``gap_cc``, ``pregel_cc`` and ``cdlp`` labels, ``gap_bfs``
parents) give them as int64, as ``evograph run`` prints them: ids of 2**63 and above
read as negative numbers there.

Errors raise ``ValueError`` (bad arguments, ids, dtypes), ``KeyError`` (a vertex that is
not in the graph), ``OSError`` (I/O), or a subclass of ``evograph.Error`` for the store's
own conditions, with the messages the ``evograph`` command prints.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _evograph
from ._evograph import (
    ID_WIDTH,
    ClosedError,
    CorruptError,
    Error,
    LockedError,
    NotAStoreError,
    __version__,
)

__all__ = [
    "open",
    "kernels",
    "Graph",
    "Snapshot",
    "Error",
    "NotAStoreError",
    "CorruptError",
    "LockedError",
    "ClosedError",
    "ID_WIDTH",
    "__version__",
]

ArrayLike = Union[np.ndarray, Sequence[int]]
PathLike = Union[str, "os.PathLike[str]"]

_MAX_ID = 2**64 - 1


def kernels() -> list:
    """Names of the kernels ``Snapshot.run`` accepts (``gap-bfs`` or ``gap_bfs`` alike)."""
    return list(_evograph.kernels())


def open(
    path: PathLike,
    create: bool = False,
    durability: str = "sync",
    undirected: bool = False,
    weighted: bool = False,
    memtable_mb: Optional[int] = None,
    threads: int = 0,
    read_only: bool = False,
) -> "Graph":
    """Opens the store at ``path``; with ``create=True``, creates it if there is none.

    Without ``create`` a missing path raises ``NotAStoreError`` (a typo never makes an
    empty store). ``durability`` is ``"sync"`` (an update returns once durable),
    ``"interval=<ms>"`` (a crash loses at most that window) or ``"none"`` (only flushed
    runs survive). ``undirected=True`` and ``weighted=True`` make a new store undirected or
    weighted, and opening an existing store of the other kind with them is an error;
    ``False`` means "directed/unweighted if new, whatever it is otherwise". ``memtable_mb`` is the DRAM budget for
    buffered updates (1024 by default), ``threads`` the workers (0: one per core), and
    ``read_only`` opens without changing any file (a reader beside another process's
    writer).
    """
    if not isinstance(durability, str):
        raise TypeError(f"durability must be a str, got {type(durability).__name__}")
    if memtable_mb is not None:
        memtable_mb = _count(memtable_mb, "memtable_mb")
    threads = _count(threads, "threads")
    inner = _evograph.open(
        os.fspath(path),
        bool(create),
        durability,
        bool(undirected),
        bool(weighted),
        memtable_mb,
        threads,
        bool(read_only),
    )
    return Graph(inner)


def _count(x: Any, what: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(x).__name__}")
    if x < 0:
        raise ValueError(f"{what} must not be negative, got {x}")
    return int(x)


def _id(v: Any, what: str = "vertex id") -> int:
    """One external id: a non-negative int below 2**64."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(v).__name__}")
    if not 0 <= int(v) <= _MAX_ID:
        raise ValueError(f"{what} {v} is out of range: ids are unsigned 64-bit integers")
    return int(v)


def _ids(a: Any, what: str) -> np.ndarray:
    """A contiguous uint64 array of external ids from any 1-D integer array or sequence."""
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.uint64)
    kind = arr.dtype.kind
    if kind == "u":
        return np.require(arr, dtype=np.uint64, requirements=["C", "A"])
    if kind == "i":
        low = arr.min()
        if low < 0:
            raise ValueError(
                f"{what} holds a negative id ({low}): ids are unsigned 64-bit integers"
            )
        return np.require(arr, dtype=np.uint64, requirements=["C", "A"])
    if kind in "USO":
        raise TypeError(
            f"{what} holds strings (dtype {arr.dtype}): this store takes integer ids"
        )
    raise TypeError(f"{what} must be an array of integer ids, got dtype {arr.dtype}")


def _weights(a: Any, n: int) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"weights must be one-dimensional, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iuf":
        raise TypeError(f"weights must be numbers, got dtype {arr.dtype}")
    if arr.shape[0] != n:
        raise ValueError(f"src and weights have different lengths ({n} and {arr.shape[0]})")
    out = np.require(arr, dtype=np.float64, requirements=["C", "A"])
    if out.size and not np.isfinite(out).all():
        bad = out[~np.isfinite(out)][0]
        raise ValueError(f"weights must be finite numbers, got {bad}")
    return out


def _pair(src: Any, dst: Any) -> Tuple[np.ndarray, np.ndarray]:
    s, d = _ids(src, "src"), _ids(dst, "dst")
    if s.shape[0] != d.shape[0]:
        raise ValueError(f"src and dst have different lengths ({s.shape[0]} and {d.shape[0]})")
    return s, d


class Graph:
    """An open store. Use it as a context manager, or call ``close()``.

    Writes are safe from several Python threads; each call releases the GIL while the
    store works, and a snapshot taken earlier stays valid and unchanged meanwhile.
    """

    def __init__(self, inner: "_evograph.Graph") -> None:
        self._g = inner

    def insert_edges(self, src: ArrayLike, dst: ArrayLike, weights: Optional[ArrayLike] = None) -> None:
        """Inserts the edges ``src[i] -> dst[i]`` (with ``weights[i]`` in a weighted store).

        Missing endpoints are created; inserting an existing edge is a no-op, or sets its
        weight: to ``weights[i]``, or to 1 in a weighted store when ``weights`` is None.
        Weights must be finite. Returns once durable, as the store's durability says. The
        arrays are read while the GIL is released: do not modify them from another thread
        until the call returns.
        """
        s, d = _pair(src, dst)
        w = None if weights is None else _weights(weights, s.shape[0])
        self._g.insert_edges(s, d, w)

    def delete_edges(self, src: ArrayLike, dst: ArrayLike) -> None:
        """Deletes the edges ``src[i] -> dst[i]``; deleting a missing edge is a no-op."""
        s, d = _pair(src, dst)
        self._g.delete_edges(s, d)

    def insert_vertices(self, ids: ArrayLike) -> None:
        """Makes the vertices exist (isolated if new)."""
        self._g.insert_vertices(_ids(ids, "ids"))

    def delete_vertices(self, ids: ArrayLike) -> None:
        """Deletes the vertices and every edge that touches them."""
        self._g.delete_vertices(_ids(ids, "ids"))

    def snapshot(self) -> "Snapshot":
        """A consistent view of the graph as of now; later writes do not change it."""
        return Snapshot(self._g.snapshot())

    def flush(self) -> None:
        """Writes the buffered updates into a run on the medium."""
        self._g.flush()

    def compact(self) -> None:
        """Merges every run into one, the fastest layout to read (``to_scipy`` then copies
        nothing)."""
        self._g.compact()

    def stats(self) -> Dict[str, Any]:
        """What ``evograph stats --json`` reports: vertices, edges, runs, bytes."""
        return json.loads(self._g.stats_json())

    def close(self) -> None:
        """Flushes and closes the store; later calls raise ``ClosedError``. Idempotent."""
        self._g.close()

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has been called."""
        return self._g.closed

    @property
    def path(self) -> str:
        """The store's directory."""
        return os.fspath(self._g.path)

    @property
    def undirected(self) -> bool:
        """Whether the store is undirected."""
        return self._g.undirected

    @property
    def weighted(self) -> bool:
        """Whether edges carry weights."""
        return self._g.weighted

    @property
    def durability(self) -> str:
        """``sync``, ``interval=<ms>`` or ``none``."""
        return self._g.durability

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<evograph.Graph {self.path!r} ({state})>"


class Snapshot:
    """A consistent, immutable view of a store at one moment.

    Per-vertex arrays are aligned with ``vertex_ids()``. Kernels run on all cores (or
    ``threads``) with the GIL released.
    """

    def __init__(self, inner: "_evograph.Snapshot") -> None:
        self._s = inner

    # --- shape -----------------------------------------------------------------------

    @property
    def num_vertices(self) -> int:
        """Number of existing vertices."""
        return self._s.num_vertices

    @property
    def num_edges(self) -> int:
        """Number of edges (each undirected edge once, as ``evograph export`` lists them)."""
        return self._s.num_edges

    @property
    def undirected(self) -> bool:
        """Whether the graph is undirected."""
        return self._s.undirected

    @property
    def weighted(self) -> bool:
        """Whether edges carry weights."""
        return self._s.weighted

    @property
    def runs(self) -> int:
        """Number of runs the snapshot reads (1 when the store is compacted)."""
        return self._s.runs

    def vertex_ids(self) -> np.ndarray:
        """External ids (uint64, read-only) of the existing vertices: the order of every
        per-vertex array."""
        return self._s.vertex_ids()

    def out_degrees(self) -> np.ndarray:
        """Out-degree of each vertex (uint64)."""
        return self._s.out_degrees()

    def in_degrees(self) -> np.ndarray:
        """In-degree of each vertex (uint64)."""
        return self._s.in_degrees()

    def out_neighbors(self, v: int) -> np.ndarray:
        """External ids of ``v``'s out-neighbors; ``KeyError`` if ``v`` is not in the graph."""
        return self._s.out_neighbors(_id(v))

    def in_neighbors(self, v: int) -> np.ndarray:
        """External ids of ``v``'s in-neighbors; ``KeyError`` if ``v`` is not in the graph."""
        return self._s.in_neighbors(_id(v))

    def has_edge(self, u: int, v: int) -> bool:
        """Whether the edge ``u -> v`` exists."""
        return self._s.has_edge(_id(u), _id(v))

    # --- other libraries -------------------------------------------------------------

    def to_scipy(self, dtype: Any = np.float64) -> Tuple[Any, np.ndarray]:
        """``(matrix, ids)``: the out-adjacency as a ``scipy.sparse.csr_matrix`` over
        positions, and the external id of each position (``vertex_ids()``).

        Entry ``[i, j]`` is the weight of edge ``ids[i] -> ids[j]`` (1 when unweighted);
        an undirected store gives a symmetric matrix. On a compacted store the neighbour
        ids (``indices``) are a read-only view of the run itself, not a copy (SciPy narrows
        ``indptr`` to int32 when it can, which copies its n+1 entries). ``dtype`` is the type
        of the entries of an unweighted store (``np.float32`` or ``np.int8`` halve or
        eighth the 8 bytes per edge of the default); weights are always float64.
        """
        import scipy.sparse

        indptr, indices, weights, ids, _borrowed = self._s.csr()
        data = weights if weights is not None else np.ones(indices.shape[0], dtype=dtype)
        n = ids.shape[0]
        m = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n, n), copy=False)
        m.has_sorted_indices = True
        return m, ids

    def to_networkx(self, max_edges: int = 10_000_000) -> Any:
        """A ``networkx.DiGraph`` (``Graph`` when undirected) with external ids as nodes and
        ``weight`` attributes in a weighted store. NetworkX holds a few hundred bytes per
        edge, so graphs above ``max_edges`` are refused."""
        import networkx as nx

        if self.num_edges > max_edges:
            raise ValueError(
                f"the graph has {self.num_edges} edges, more than max_edges={max_edges}: "
                "NetworkX takes hundreds of bytes per edge; raise max_edges to insist"
            )
        g = nx.Graph() if self.undirected else nx.DiGraph()
        ids = self.vertex_ids()
        g.add_nodes_from(ids.tolist())
        src, dst, w = self._edge_columns(dedup_undirected=self.undirected)
        if w is None:
            g.add_edges_from(zip(src.tolist(), dst.tolist()))
        else:
            g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
        return g

    def to_arrow(
        self,
        kernels: Sequence[str] = (),
        columns: Optional[Mapping[str, ArrayLike]] = None,
    ) -> Tuple[Any, Any]:
        """``(vertices, edges)`` as ``pyarrow.Table``s, the layout of
        ``evograph export --format parquet``.

        ``vertices`` has ``id`` (uint64), ``out_degree`` and ``in_degree``, then one column
        per kernel named in ``kernels`` (run with defaults, e.g. ``["pr", "wcc"]``) and per
        entry of ``columns`` (arrays aligned with ``vertex_ids()``). ``edges`` has ``src``
        and ``dst`` (uint64 external ids) and ``weight`` in a weighted store; an undirected
        edge appears once, smaller id first.
        """
        import pyarrow as pa

        ids = self.vertex_ids()
        cols: Dict[str, Any] = {
            "id": ids,
            "out_degree": self.out_degrees(),
            "in_degree": self.in_degrees(),
        }
        for k in kernels:
            name = k.replace("-", "_")
            vals = self.run(k)[0]
            if not isinstance(vals, np.ndarray):
                raise ValueError(f"kernel {k} gives no per-vertex values to put in a column")
            cols[name] = vals
        for name, vals in (columns or {}).items():
            arr = np.asarray(vals)
            if arr.shape != ids.shape:
                raise ValueError(
                    f"column {name!r} has shape {arr.shape}, the vertices {ids.shape}"
                )
            cols[name] = arr
        vertices = pa.table(cols)
        src, dst, w = self._edge_columns(dedup_undirected=self.undirected)
        edge_cols: Dict[str, Any] = {"src": src, "dst": dst}
        if w is not None:
            edge_cols["weight"] = w
        return vertices, pa.table(edge_cols)

    def _edge_columns(self, dedup_undirected: bool) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        indptr, indices, weights, ids, _ = self._s.csr()
        rows = np.repeat(np.arange(ids.shape[0], dtype=np.int64), np.diff(indptr))
        src, dst = ids[rows], ids[indices]
        if dedup_undirected:
            keep = src <= dst
            src, dst = src[keep], dst[keep]
            weights = None if weights is None else weights[keep]
        return src, dst, (None if weights is None else np.asarray(weights))

    # --- kernels ---------------------------------------------------------------------

    def run(self, kernel: str, **params: Any) -> Tuple[Any, Dict[str, Any]]:
        """Runs ``kernel`` (a name from ``evograph.kernels()``) and returns
        ``(values, report)``: values as its method returns them, and the summary
        ``evograph run --json`` prints (seconds, iterations, components, supersteps, ...).

        Parameters: ``source`` (an external id), ``iterations``, ``damping``,
        ``tolerance``, ``delta``, ``samples``, ``delivery`` (``"push"``/``"pull"``),
        ``max_supersteps``, ``verify``, ``threads``.
        """
        allowed = {
            "source", "iterations", "damping", "tolerance", "delta", "samples",
            "delivery", "max_supersteps", "verify", "threads",
        }
        unknown = set(params) - allowed
        if unknown:
            raise TypeError(f"unknown parameter(s) for run(): {', '.join(sorted(unknown))}")
        if params.get("source") is not None:
            params["source"] = _id(params["source"], "source")
        for k in ("iterations", "samples", "max_supersteps", "threads"):
            if params.get(k) is not None:
                params[k] = _count(params[k], k)
        values, report = self._s.kernel(kernel, **params)
        report = json.loads(report)
        if report.get("halted") is False:
            warnings.warn(
                f"{report['kernel']} {report.get('stop', '')}: its values are not final",
                RuntimeWarning,
                stacklevel=3,
            )
        return values, report

    def _k(self, kernel: str, **params: Any) -> Any:
        return self.run(kernel, **{k: v for k, v in params.items() if v is not None})[0]

    def bfs(self, source: int, threads: int = 0) -> np.ndarray:
        """Graphalytics BFS: hops from ``source`` (int64; 2**63-1 when unreachable)."""
        return self._k("bfs", source=source, threads=threads)

    def pr(self, iterations: int = 10, damping: float = 0.85, threads: int = 0) -> np.ndarray:
        """Graphalytics PageRank, a fixed number of iterations (float64)."""
        return self._k("pr", iterations=iterations, damping=damping, threads=threads)

    def wcc(self, threads: int = 0) -> np.ndarray:
        """Weakly connected components: each vertex's label is the external id of a member
        (int64)."""
        return self._k("wcc", threads=threads)

    def cdlp(self, iterations: int = 10, threads: int = 0) -> np.ndarray:
        """Community detection by label propagation (Graphalytics; int64 labels)."""
        return self._k("cdlp", iterations=iterations, threads=threads)

    def lcc(self, threads: int = 0) -> np.ndarray:
        """Local clustering coefficient (float64; 0 below degree 2)."""
        return self._k("lcc", threads=threads)

    def sssp(self, source: int, delta: float = 1.0, threads: int = 0) -> np.ndarray:
        """Shortest-path distances from ``source`` (float64; inf when unreachable)."""
        return self._k("sssp", source=source, delta=delta, threads=threads)

    def gap_bfs(self, source: Optional[int] = None, threads: int = 0) -> np.ndarray:
        """GAP direction-optimising BFS: each vertex's parent (external id; -1 when
        unreached). Picks a source when none is given."""
        return self._k("gap-bfs", source=source, threads=threads)

    def gap_pr(
        self,
        tolerance: float = 1e-4,
        max_iterations: int = 20,
        damping: float = 0.85,
        threads: int = 0,
    ) -> np.ndarray:
        """GAP PageRank until the scores change by less than ``tolerance`` (L1)."""
        return self._k(
            "gap-pr", tolerance=tolerance, iterations=max_iterations, damping=damping, threads=threads
        )

    def gap_cc(self, threads: int = 0) -> np.ndarray:
        """GAP connected components (Afforest): a member's external id per vertex."""
        return self._k("gap-cc", threads=threads)

    def gap_sssp(self, source: Optional[int] = None, delta: float = 1.0, threads: int = 0) -> np.ndarray:
        """GAP delta-stepping SSSP distances (float64)."""
        return self._k("gap-sssp", source=source, delta=delta, threads=threads)

    def bc(self, samples: int = 4, source: Optional[int] = None, threads: int = 0) -> np.ndarray:
        """Betweenness centrality from ``samples`` sources, normalised to a maximum of 1."""
        return self._k("bc", samples=samples, source=source, threads=threads)

    def tc(self, threads: int = 0) -> int:
        """Number of triangles of the undirected graph."""
        return int(self._k("tc", threads=threads))

    def khop(self, source: Optional[int] = None, threads: int = 0) -> Tuple[np.ndarray, np.ndarray]:
        """``(ids, hops)``: the vertices one or two out-hops from ``source``."""
        return self._k("khop", source=source, threads=threads)

    def pregel_pr(
        self, iterations: int = 10, damping: float = 0.85, delivery: Optional[str] = None,
        max_supersteps: int = 10_000, threads: int = 0,
    ) -> np.ndarray:
        """PageRank as a vertex program (the values of ``pr``)."""
        return self._k(
            "pregel-pr", iterations=iterations, damping=damping, delivery=delivery,
            max_supersteps=max_supersteps, threads=threads,
        )

    def pregel_cc(
        self, delivery: Optional[str] = None, max_supersteps: int = 10_000, threads: int = 0
    ) -> np.ndarray:
        """Connected components as a vertex program (the labels of ``wcc``)."""
        return self._k("pregel-cc", delivery=delivery, max_supersteps=max_supersteps, threads=threads)

    def pregel_bfs(
        self, source: int, delivery: Optional[str] = None, max_supersteps: int = 10_000, threads: int = 0
    ) -> np.ndarray:
        """BFS depths as a vertex program (the values of ``bfs``)."""
        return self._k(
            "pregel-bfs", source=source, delivery=delivery, max_supersteps=max_supersteps, threads=threads
        )

    def pregel_sssp(
        self, source: int, delivery: Optional[str] = None, max_supersteps: int = 10_000, threads: int = 0
    ) -> np.ndarray:
        """SSSP distances as a vertex program (the values of ``sssp``)."""
        return self._k(
            "pregel-sssp", source=source, delivery=delivery, max_supersteps=max_supersteps, threads=threads
        )

    def __repr__(self) -> str:
        kind = "undirected" if self.undirected else "directed"
        return f"<evograph.Snapshot {self.num_vertices} vertices, {self.num_edges} edges, {kind}>"

