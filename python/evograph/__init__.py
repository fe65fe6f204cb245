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

A store created with ``keys="string"`` is keyed by vertex names (package names, user
names, URLs: non-empty str of at most 65,535 UTF-8 bytes) instead of integers::

    with evograph.open("deps", create=True, keys="string") as g:
        g.insert_edges(["curl", "curl"], ["openssl", "zlib"])
        s = g.snapshot()
        s.vertex_ids()                  # array(['curl', 'openssl', 'zlib'], dtype=object)
        s.wcc()                         # labels are names too
        s.bfs("curl")

There writes take lists or tuples of str or numpy ``U`` (or object) arrays, reads take a
str wherever a vertex is expected, and vertices come back as object arrays of str: from
``vertex_ids()``, neighbours, ``khop``, and the kernels whose values are vertices
(``gap_bfs`` gives ``None`` where there is no parent). ``to_scipy`` pairs its matrix with
the names, ``to_networkx`` uses them as nodes, and ``to_arrow`` writes them as
``large_string`` columns, as ``evograph export --format parquet`` does.

Errors raise ``ValueError`` (bad arguments, ids, names, dtypes), ``TypeError`` (a value of
the wrong type, such as integer ids for a store keyed by strings), ``KeyError`` (a vertex
that is not in the graph), ``OSError`` (I/O), or a subclass of ``evograph.Error`` for the
store's own conditions, with the messages the ``evograph`` command prints.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

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


class _Numpy:
    """numpy, imported on first use and then bound as ``np`` itself: importing numpy is
    most of ``import evograph`` (50 of 64 ms), which a process that only opens a store and
    counts (a reader beside a writer, a script's check) need not wait for."""

    def __getattr__(self, name: str) -> Any:
        import numpy

        globals()["np"] = numpy
        return getattr(numpy, name)


np: Any = _Numpy()

ArrayLike = Union["np.ndarray", Sequence[int]]
#: Vertices for a write: integer ids, or names (str) in a string-keyed store.
Vertices = Union["np.ndarray", Sequence[int], Sequence[str]]
#: One vertex: an integer id, or a name (str) in a string-keyed store.
Vertex = Union[int, str]
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
    keys: Optional[str] = None,
    compress: bool = False,
    history: Optional[str] = None,
    run_versions: str = "compact",
    unacknowledged: bool = False,
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
    writer). Such a reader holds the batches that writer has made durable: under
    ``"sync"``, every batch acknowledged before it opened and none still in flight;
    ``unacknowledged=True`` also reads the batches written but not yet durable (newer, but
    a power cut may still take them back).

    ``keys`` says how vertices are keyed: ``"u64"`` (unsigned 64-bit integers) or
    ``"string"`` (names); a new store is keyed by integers unless told otherwise, and
    ``None`` opens an existing store whatever it is keyed by, while asking for the other
    kind raises ``ValueError``.

    ``compress=True`` creates the store with compressed runs (neighbor lists delta-encoded
    and bit-packed, about 2.4x smaller, read in place by every kernel). It is recorded in
    the store; opening a plain store with it raises ``ValueError``.

    ``history`` is what history a new store keeps: ``"none"`` (the default), ``"all"``, a
    duration counted back from the newest commit (``"7d"``, ``"12h"``) or a number of
    commits (``"100"``); ``Graph.set_history`` changes it later.

    ``run_versions`` says when this handle derives the versions of runs in a store keeping
    history (when each entry came, and every earlier change apart), which a past graph
    inside a run's range reads instead of undoing later changes: ``"compact"`` (by
    ``Graph.compact``, the default), ``"flush"`` (after every flush too; each waits for
    them) or ``"never"``.
    """
    if not isinstance(durability, str):
        raise TypeError(f"durability must be a str, got {type(durability).__name__}")
    if keys is not None and not isinstance(keys, str):
        raise TypeError(f"keys must be None, 'u64' or 'string', got {type(keys).__name__}")
    if not isinstance(run_versions, str):
        raise TypeError(f"run_versions must be a str, got {type(run_versions).__name__}")
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
        keys,
        bool(compress),
        history,
        run_versions,
        bool(unacknowledged),
    )
    return Graph(inner)


def _pandas(what: str) -> Any:
    """pandas, which the table forms need (an optional dependency)."""
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - pandas is an optional dependency
        raise ImportError(f"{what} as a table needs pandas: pip install pandas") from e
    return pandas


def _is_bool(x: Any) -> bool:
    """A bool, Python's or numpy's (numpy's exists only once numpy is imported)."""
    npm = sys.modules.get("numpy")
    return isinstance(x, bool) or (npm is not None and isinstance(x, npm.bool_))


def _is_int(x: Any) -> bool:
    """An int, Python's or a numpy integer, and not a bool."""
    if isinstance(x, bool):
        return False
    npm = sys.modules.get("numpy")
    return isinstance(x, int) or (npm is not None and isinstance(x, npm.integer))


def _point(at: Union[int, str]) -> str:
    if _is_bool(at):
        raise TypeError("a point is an LSN (int) or a time (str), not a bool")
    if _is_int(at):
        if at < 0:
            raise ValueError(f"an LSN is never negative, got {at}")
        return str(int(at))
    if isinstance(at, str):
        return at
    raise TypeError(f"a point is an LSN (int) or a time (str), got {type(at).__name__}")


def _count(x: Any, what: str) -> int:
    if not _is_int(x):
        raise TypeError(f"{what} must be an int, got {type(x).__name__}")
    if x < 0:
        raise ValueError(f"{what} must not be negative, got {x}")
    return int(x)


def _id(v: Any, what: str = "vertex id") -> int:
    """One external id: a non-negative int below 2**64."""
    if not _is_int(v):
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
        if arr.dtype.itemsize == 8 and arr.dtype.isnative:
            # Non-negative int64 (pandas' integers) has uint64's bits: a view, not a copy.
            return np.require(arr, requirements=["C", "A"]).view(np.uint64)
        return np.require(arr, dtype=np.uint64, requirements=["C", "A"])
    if kind in "USO":
        raise TypeError(
            f"{what} holds strings (dtype {arr.dtype}): this store takes integer ids"
        )
    raise TypeError(f"{what} must be an array of integer ids, got dtype {arr.dtype}")


def _names(a: Any, what: str) -> Union[list, np.ndarray]:
    """Vertex names for the native layer: a list of objects (it checks each is a str) or a
    contiguous, aligned, native-order ``U`` array (read from its buffer)."""
    if isinstance(a, (str, bytes)):
        raise TypeError(f"{what} must be a sequence of names, not a single {type(a).__name__}")
    if isinstance(a, list):
        return a
    if isinstance(a, tuple):
        return list(a)
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        return []
    kind = arr.dtype.kind
    if kind == "U":
        if not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        return np.require(arr, requirements=["C", "A"])
    if kind == "O":
        return arr.tolist()
    if kind in "iub":
        raise TypeError(
            f"{what} holds integers (dtype {arr.dtype}): this store is keyed by strings "
            "(vertex names); pass str names"
        )
    if kind == "S":
        raise TypeError(f"{what} holds bytes (dtype {arr.dtype}): vertex names are str; decode them")
    raise TypeError(f"{what} must be an array of str names, got dtype {arr.dtype}")


def _name(v: Any, what: str = "vertex") -> str:
    """One vertex of a string-keyed store: a str (the store checks it exists)."""
    if not isinstance(v, str):
        raise TypeError(
            f"{what} must be a str: this store is keyed by strings (vertex names), "
            f"got {type(v).__name__}"
        )
    return v


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


def _times(a: Any, n: int) -> Optional[np.ndarray]:
    """Commit times as int64 Unix nanoseconds: from Unix seconds (int or float), numpy
    datetime64, or pandas / pyarrow timestamps (timezone-aware ones in UTC)."""
    if a is None:
        return None
    tz = getattr(getattr(a, "dtype", None), "tz", None)
    if tz is not None:
        # pandas' timezone-aware timestamps: their UTC instants.
        a = a.dt.tz_convert("UTC").dt.tz_localize(None)
    if hasattr(a, "type") and str(getattr(a, "type", "")).startswith("timestamp"):
        import pyarrow.compute as pc

        a = pc.cast(a, "timestamp[ns]")
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"times must be one-dimensional, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"src and times have different lengths ({n} and {arr.shape[0]})")
    kind = arr.dtype.kind
    if kind == "M":
        if np.isnat(arr).any():
            raise ValueError("times hold a missing time (NaT)")
        return np.require(arr.astype("datetime64[ns]").view(np.int64), requirements=["C", "A"])
    if kind in "iu":
        big = np.abs(arr.astype(np.float64)).max(initial=0) > 9.2e9
        if big:
            raise ValueError("times are Unix seconds; a time past the year 2262 is out of range")
        return np.require(arr.astype(np.int64) * 1_000_000_000, requirements=["C", "A"])
    if kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError("times must be finite")
        if np.abs(arr).max(initial=0) > 9.2e9:
            raise ValueError("times are Unix seconds; a time past the year 2262 is out of range")
        return np.require(np.rint(arr * 1e9).astype(np.int64), requirements=["C", "A"])
    raise TypeError(f"times must be Unix seconds or timestamps, got dtype {arr.dtype}")


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

    #: NetworkX dispatches its functions on an open store to the ``evograph`` backend,
    #: which reads its latest graph (``nx.pagerank(g)``).
    __networkx_backend__ = "evograph"

    def __init__(self, inner: "_evograph.Graph") -> None:
        self._g = inner
        # Fixed at creation: read once, so writes can pick their path without a call.
        self._keys: str = inner.keys

    def insert_edges(
        self,
        src: Vertices,
        dst: Vertices,
        weights: Optional[ArrayLike] = None,
        times: Optional[ArrayLike] = None,
    ) -> None:
        """Inserts the edges ``src[i] -> dst[i]`` (with ``weights[i]`` in a weighted store).

        Missing endpoints are created; inserting an existing edge is a no-op, or sets its
        weight: to ``weights[i]``, or to 1 in a weighted store when ``weights`` is None.
        Weights must be finite. Returns once durable, as the store's durability says. The
        arrays are read while the GIL is released: do not modify them from another thread
        until the call returns.

        In a string-keyed store ``src`` and ``dst`` are names: lists or tuples of str, or
        numpy ``U`` (or object) arrays. Every name is checked (a str, not empty, at most
        65,535 UTF-8 bytes) before anything is stored, so a bad one stores none of the
        call's edges; new names are numbered and made durable with their edges.

        Columns of a pandas DataFrame or a pyarrow Table serve as they are (``df.src``,
        ``table["dst"]``). ``times`` gives each edge's commit time: Unix seconds (int or
        float), or datetime64 / pandas or pyarrow timestamps (a timezone-aware one is read
        in UTC). Consecutive edges of one time commit as one batch (or more, of at most
        65,536 edges), as ``evograph ingest --time-column`` commits them; times must not
        decrease, nor start before the store's last commit. Without ``times`` each batch
        commits at the wall clock's time.
        """
        if self._keys == "string":
            s, d = _names(src, "src"), _names(dst, "dst")
            w = None if weights is None else _weights(weights, len(s))
            self._g.insert_named_edges(s, d, w, _times(times, len(s)))
            return
        s, d = _pair(src, dst)
        w = None if weights is None else _weights(weights, s.shape[0])
        self._g.insert_edges(s, d, w, _times(times, s.shape[0]))

    def delete_edges(self, src: Vertices, dst: Vertices, times: Optional[ArrayLike] = None) -> None:
        """Deletes the edges ``src[i] -> dst[i]``; deleting a missing edge (or, in a
        string-keyed store, one naming an unknown vertex) is a no-op. ``times`` as
        ``insert_edges`` takes them."""
        if self._keys == "string":
            s, d = _names(src, "src"), _names(dst, "dst")
            self._g.delete_named_edges(s, d, _times(times, len(s)))
            return
        s, d = _pair(src, dst)
        self._g.delete_edges(s, d, _times(times, s.shape[0]))

    def insert_vertices(self, ids: Vertices) -> None:
        """Makes the vertices (ids, or names in a string-keyed store) exist, isolated if
        new."""
        if self._keys == "string":
            self._g.insert_named_vertices(_names(ids, "ids"))
            return
        self._g.insert_vertices(_ids(ids, "ids"))

    def delete_vertices(self, ids: Vertices) -> None:
        """Deletes the vertices and every edge that touches them (unknown names are
        no-ops)."""
        if self._keys == "string":
            self._g.delete_named_vertices(_names(ids, "ids"))
            return
        self._g.delete_vertices(_ids(ids, "ids"))

    def snapshot(self, at: Union[int, str, None] = None) -> "Snapshot":
        """A consistent view of the graph as of now; later writes do not change it.

        With ``at``, the graph right after that commit, if the store keeps that history: an
        LSN (int, or its digits), ``"@SECONDS"`` or RFC 3339 text such as
        ``"2002-01-01T00:00:00Z"`` (the last commit at or before it). ``snapshot.commit``
        then says which commit it is, as ``(lsn, unix_nanos)``.
        """
        if at is None:
            return Snapshot(self._g.snapshot())
        inner, lsn, nanos = self._g.snapshot_at(_point(at))
        s = Snapshot(inner)
        s.commit = (lsn, nanos)
        return s

    def at(self, at: Union[int, str]) -> "Snapshot":
        """The graph right after the commit ``at`` names: ``snapshot(at=at)``, for any form
        ``--at`` takes (an LSN, ``"@SECONDS"``, RFC 3339, or a date alone such as
        ``"2024-01-01"``, its midnight UTC)."""
        return self.snapshot(at=at)

    def size(self, at: Optional[Union[int, str]] = None) -> Dict[str, int]:
        """How big the graph is: ``{"edges", "adjacency_entries", "vertices"}``, as
        ``evograph stats`` counts them. Without ``at``, the graph now, counted from its
        runs' headers without taking a snapshot (a snapshot first checks every run's lists:
        0.42 s against 0.12 s at Kron24), so a damaged list is reported by the next
        snapshot, not here. With ``at`` (any form ``at()`` takes), the graph
        right after the commit it names, as ``evograph stats --at`` counts it, with that
        commit's ``"lsn"`` and ``"unix_nanos"``: counted from the runs' versions without
        building the graph where ``compact`` derived them (a pass over their columns),
        else from the graph as ``at()`` builds it."""
        if at is None:
            edges, entries, vertices = self._g.size()
            return {"edges": edges, "adjacency_entries": entries, "vertices": vertices}
        (edges, entries, vertices), lsn, nanos = self._g.size_at(_point(at))
        return {"edges": edges, "adjacency_entries": entries, "vertices": vertices,
                "lsn": lsn, "unix_nanos": nanos}

    def window(self, start: Union[int, str], end: Union[int, str]) -> "Snapshot":
        """The graph over a window of history: every edge and vertex present as of
        ``start`` (as ``snapshot(at=start)`` reads it) or after any later commit before
        ``end`` (a time: commits timed before it; an LSN: commits below it); commits that
        share one time count once, as the state after the last of them (Raphtory's
        persistent-graph ``window``). ``snapshot.commit`` is the start's commit and
        ``snapshot.window`` says ``(start_lsn, last_lsn, moments)``."""
        inner, start_lsn, nanos, last_lsn, moments = self._g.snapshot_window(_point(start), _point(end))
        s = Snapshot(inner)
        s.commit = (start_lsn, nanos)
        s.window = (start_lsn, last_lsn, moments)
        return s

    def rolling(
        self,
        kernel: str,
        from_: Union[int, str],
        to: Union[int, str],
        every: Union[int, str],
        width: Union[int, str, None] = None,
        **params: Any,
    ) -> Any:
        """``kernel`` at every step from ``from_`` to ``to`` as ``evograph run --every``
        computes it: ``every`` a duration (``"1d"``, ``"12h"``) or a number of commits, each
        step over the window of ``width`` that ends with it when given. Returns a pandas
        DataFrame with columns ``time`` (the step's point, UTC), ``lsn`` (the commit it
        read), ``vertex`` and ``value``, one row per vertex per step (one row with vertex
        None for a kernel with one value, such as ``tc``). A step whose graph lacks
        ``source`` has no rows. ``params`` are :meth:`Snapshot.run`'s. ``wcc``, ``bfs``,
        ``sssp`` and ``pr-tol`` over points (no ``width``, no other parameter than
        ``source``) are brought forward from the step before, as the command line brings
        them (``pr-tol``'s scores within its tolerance of the fixed point, as a recompute's
        are); other kernels, and windows, are computed afresh at each step."""
        pd = _pandas("rolling")
        w = None if width is None else str(width)
        steps = self._g.rolling_steps(_point(from_), _point(to), str(every), w)
        name = kernel.replace("_", "-").lower()
        if w is None and name in ("wcc", "bfs", "sssp", "pr-tol") and set(params) <= {"source"}:
            return self._roll_forward(pd, name, steps, params.get("source"))
        frames = []
        for nanos, lsn, a, b in steps:
            s = self.snapshot(at=a) if b is None else self.window(a, b)
            try:
                t = s.run(kernel, as_table=True, **dict(params))
            except KeyError:
                if params.get("source") is None:
                    raise
                continue  # this step's graph lacks the source
            n = len(t)
            frames.append(pd.DataFrame({
                "time": pd.to_datetime(np.full(n, nanos, dtype=np.int64), unit="ns", utc=True),
                "lsn": np.full(n, lsn, dtype=np.uint64),
                "vertex": t["vertex"].to_numpy(),
                "value": t[kernel].to_numpy(),
            }))
        if not frames:
            return pd.DataFrame({"time": [], "lsn": [], "vertex": [], "value": []})
        return pd.concat(frames, ignore_index=True)

    def _roll_forward(self, pd: Any, kernel: str, steps: list, source: Any) -> Any:
        """:meth:`rolling` brought forward from step to step (``Graph.roll_forward``)."""
        key = None if source is None else str(self._key(source, "source"))
        rolled = self._g.roll_forward(kernel, [lsn for _, lsn, _, _ in steps], key)
        frames = []
        for (nanos, lsn, _, _), step in zip(steps, rolled):
            if step is None:
                continue  # this step's graph lacks the source
            ids, values = step
            n = len(ids)
            frames.append(pd.DataFrame({
                "time": pd.to_datetime(np.full(n, nanos, dtype=np.int64), unit="ns", utc=True),
                "lsn": np.full(n, lsn, dtype=np.uint64),
                "vertex": ids,
                "value": values,
            }))
        if not frames:
            return pd.DataFrame({"time": [], "lsn": [], "vertex": [], "value": []})
        return pd.concat(frames, ignore_index=True)

    def diff(self, from_: Union[int, str], to: Union[int, str], as_table: bool = False) -> Any:
        """The net changes from commit ``from_`` to commit ``to`` (points as ``snapshot(at=)``
        takes them; ``from_`` may come after ``to``: then they undo): numpy arrays ``op``
        (int8: 1 adds an edge or sets its weight, -1 removes one, 2 adds a vertex, -2
        deletes one), ``src`` and ``dst`` (external ids; ``dst == src`` for vertices) and
        ``weight``, with the commits ``from_lsn`` and ``to_lsn``. With ``as_table=True``, a
        pandas DataFrame of the four columns, the commits in ``df.attrs``."""
        op, src, dst, weight, a, b = self._g.diff(_point(from_), _point(to))
        if as_table:
            df = _pandas("diff").DataFrame({"op": op, "src": src, "dst": dst, "weight": weight})
            df.attrs.update(from_lsn=a, to_lsn=b)
            return df
        return {"op": op, "src": src, "dst": dst, "weight": weight, "from_lsn": a, "to_lsn": b}

    def maintain(
        self,
        kernel: str,
        source: Optional[Vertex] = None,
        damping: float = 0.85,
        tolerance: float = 1e-4,
    ) -> "Standing":
        """Keeps ``kernel`` current as batches commit, by a thread of the library's: each
        commit's changes bring the values forward instead of a recompute. Kernels: ``wcc``,
        ``bfs`` and ``sssp`` from ``source``, ``pr-tol`` (PageRank within ``tolerance``, L1,
        of its fixed point; ``pr`` is kept as ``pr-tol``), and the vertex programs
        ``pregel-cc``, ``pregel-bfs``, ``pregel-sssp``. The values are computed before this
        returns. Stop it with ``Standing.stop()`` (or a ``with`` block)."""
        key = None if source is None else self._key(source, "source")
        return Standing(self._g.maintain(kernel, key, float(damping), float(tolerance)))

    def last_commit(self) -> Optional[Tuple[int, int]]:
        """The newest commit as ``(lsn, unix_nanos)``, or None in a store without one."""
        return self._g.last_commit()

    def log(self, as_table: bool = False) -> Any:
        """The commits in the history kept (``lsn``, ``unix_nanos``, ``records`` arrays), the
        ``history`` setting, and the ``segments`` and ``segment_bytes`` it takes. With
        ``as_table=True``, a pandas DataFrame with columns ``lsn``, ``time`` (UTC),
        ``unix_nanos`` and ``records``, the rest in ``df.attrs``."""
        commits, setting, segments, nbytes = self._g.log()
        if as_table:
            pd = _pandas("log")
            nanos = np.array([c[1] for c in commits], dtype=np.int64)
            df = pd.DataFrame({
                "lsn": np.array([c[0] for c in commits], dtype=np.uint64),
                "time": pd.to_datetime(nanos, unit="ns", utc=True),
                "unix_nanos": nanos,
                "records": np.array([c[2] for c in commits], dtype=np.uint64),
            })
            df.attrs.update(history=setting, segments=segments, segment_bytes=nbytes)
            return df
        return {
            "lsn": np.array([c[0] for c in commits], dtype=np.uint64),
            "unix_nanos": np.array([c[1] for c in commits], dtype=np.int64),
            "records": np.array([c[2] for c in commits], dtype=np.uint64),
            "history": setting,
            "segments": segments,
            "segment_bytes": nbytes,
        }

    def edge_history(self, src: Vertex, dst: Vertex) -> Dict[str, Any]:
        """When the edge ``src -> dst`` lived within the history kept, as ``evograph history
        STORE edge`` says: numpy arrays ``lsn`` (uint64), ``unix_nanos`` (int64) and ``op``
        (``"add"`` or ``"remove"``) of the commits that added and removed it, oldest first;
        ``existed_before`` (whether it existed before the oldest commit kept) and that
        commit's ``from_lsn``. A weight change is no event. Reads the history's change
        lists, never a past graph."""
        return self._lifetime(self._key(src, "src"), self._key(dst, "dst"))

    def vertex_history(self, v: Vertex) -> Dict[str, Any]:
        """When vertex ``v`` lived within the history kept, as :meth:`edge_history` says of
        an edge."""
        return self._lifetime(self._key(v, "v"), None)

    def _key(self, v: Vertex, what: str) -> str:
        return _name(v, what) if self._keys == "string" else str(_id(v, what))

    def _lifetime(self, src: str, dst: Optional[str]) -> Dict[str, Any]:
        existed, from_lsn, _, events = self._g.lifetime(src, dst)
        return {
            "lsn": np.array([e[0] for e in events], dtype=np.uint64),
            "unix_nanos": np.array([e[1] for e in events], dtype=np.int64),
            "op": np.array(["add" if e[2] else "remove" for e in events], dtype="<U6"),
            "existed_before": existed,
            "from_lsn": from_lsn,
        }

    @property
    def history(self) -> str:
        """What history the store keeps (``"none"``, ``"all"``, ``"7d"``, ``"100"``)."""
        return self._g.history()

    def set_history(self, setting: str) -> None:
        """Changes what history the store keeps; history starts at the next commit."""
        self._g.set_history(str(setting))

    def flush(self) -> None:
        """Writes the buffered updates into a run on the medium."""
        self._g.flush()

    def compact(self) -> None:
        """Merges every run into one, the fastest layout to read (``to_scipy`` then copies
        nothing). In a store keeping history it also derives the versions of each run
        without them (``open``'s ``run_versions``), so past graphs read in place."""
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

    @property
    def keys(self) -> str:
        """How vertices are keyed: ``"u64"`` (integers) or ``"string"`` (names); fixed when
        the store was created, and known after ``close()`` too."""
        return self._keys

    def is_directed(self) -> bool:
        """Whether the store is directed (NetworkX asks, as of its own graphs)."""
        return not self.undirected

    def is_multigraph(self) -> bool:
        """False: a store holds an edge at most once (NetworkX asks)."""
        return False

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<evograph.Graph {self.path!r} ({state})>"


class Standing:
    """A kernel's result kept current as batches commit (``Graph.maintain``)."""

    def __init__(self, inner: "_evograph.Standing") -> None:
        self._h = inner

    @property
    def lsn(self) -> int:
        """The LSN of the commit the values reflect."""
        return self._h.lsn

    @property
    def kernel(self) -> str:
        """The kernel kept current."""
        return self._h.kernel

    @property
    def recomputes(self) -> int:
        """Steps that recomputed because the changes they needed were no longer held."""
        return self._h.recomputes

    def wait(self, lsn: int, timeout: Optional[float] = None) -> bool:
        """Waits until the values reflect the commit at ``lsn`` (``Graph.last_commit()[0]``
        after a write, say) or a later one, at most ``timeout`` seconds; whether they do."""
        return self._h.wait(_count(lsn, "lsn"), None if timeout is None else float(timeout))

    def values(self) -> Tuple["Snapshot", Any]:
        """``(snapshot, values)``: the values aligned with ``snapshot.vertex_ids()``, as
        ``snapshot.run(kernel)`` returns them; ``snapshot.commit`` is ``(lsn, None)``."""
        inner, values, lsn = self._h.values()
        s = Snapshot(inner)
        s.commit = (lsn, None)
        return s, values

    def changes_since(self, lsn: int) -> Dict[str, np.ndarray]:
        """The vertices whose values changed after the commit at ``lsn``: ``vertex`` (ids,
        or names), ``old`` and ``new`` (float64; labels as external ids), ``old_exists`` and
        ``new_exists`` (False where the vertex did not exist on that side)."""
        ids, old, new, old_e, new_e = self._h.changes_since(_count(lsn, "lsn"))
        return {"vertex": ids, "old": old, "new": new, "old_exists": old_e, "new_exists": new_e}

    def stop(self) -> None:
        """Stops keeping the values current (the store stays open)."""
        self._h.stop()

    def __enter__(self) -> "Standing":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<evograph.Standing {self.kernel} at LSN {self.lsn}>"


class Snapshot:
    """A consistent, immutable view of a store at one moment.

    Per-vertex arrays are aligned with ``vertex_ids()``. Kernels run on all cores (or
    ``threads``) with the GIL released.
    """

    #: NetworkX dispatches its functions on a snapshot to the ``evograph`` backend
    #: (``nx.pagerank(s)``), which reads it in place.
    __networkx_backend__ = "evograph"

    def __init__(self, inner: "_evograph.Snapshot") -> None:
        self._s = inner
        self._keys: str = inner.keys
        #: For a snapshot as of a commit (``Graph.snapshot(at=...)``): ``(lsn, unix_nanos)``.
        self.commit: Optional[Tuple[int, int]] = None
        #: For a window (``Graph.window(start, end)``): ``(start_lsn, last_lsn, moments)``.
        self.window: Optional[Tuple[int, int, int]] = None

    def _vertex(self, v: Any, what: Optional[str] = None) -> Vertex:
        """One vertex as the store keys them: an id, or a name."""
        if self._keys == "string":
            return _name(v, what or "vertex")
        return _id(v, what or "vertex id")

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

    @property
    def keys(self) -> str:
        """How vertices are keyed: ``"u64"`` or ``"string"``."""
        return self._keys

    def vertex_ids(self) -> np.ndarray:
        """External ids (uint64, read-only) of the existing vertices: the order of every
        per-vertex array. In a string-keyed store, their names: a read-only object array
        of str."""
        return self._s.vertex_ids()

    def out_degrees(self) -> np.ndarray:
        """Out-degree of each vertex (uint64)."""
        return self._s.out_degrees()

    def in_degrees(self) -> np.ndarray:
        """In-degree of each vertex (uint64)."""
        return self._s.in_degrees()

    def out_neighbors(self, v: Vertex) -> np.ndarray:
        """External ids (names, in a string-keyed store) of ``v``'s out-neighbors;
        ``KeyError`` if ``v`` is not in the graph."""
        return self._s.out_neighbors(self._vertex(v))

    def in_neighbors(self, v: Vertex) -> np.ndarray:
        """External ids (names) of ``v``'s in-neighbors; ``KeyError`` if ``v`` is not in
        the graph."""
        return self._s.in_neighbors(self._vertex(v))

    def has_edge(self, u: Vertex, v: Vertex) -> bool:
        """Whether the edge ``u -> v`` exists (False when either vertex does not)."""
        return self._s.has_edge(self._vertex(u), self._vertex(v))

    def is_directed(self) -> bool:
        """Whether the graph is directed (NetworkX asks, as of its own graphs)."""
        return not self.undirected

    def is_multigraph(self) -> bool:
        """False: a store holds an edge at most once (NetworkX asks)."""
        return False

    # --- other libraries -------------------------------------------------------------

    def to_scipy(self, dtype: Any = "float64") -> Tuple[Any, np.ndarray]:
        """``(matrix, ids)``: the out-adjacency as a ``scipy.sparse.csr_matrix`` over
        positions, and the external id (name, in a string-keyed store) of each position
        (``vertex_ids()``).

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
        """A ``networkx.DiGraph`` (``Graph`` when undirected) with external ids (names, in
        a string-keyed store) as nodes and ``weight`` attributes in a weighted store.
        NetworkX holds a few hundred bytes per edge, so graphs above ``max_edges`` are
        refused."""
        import networkx as nx

        if self.num_edges > max_edges:
            raise ValueError(
                f"the graph has {self.num_edges} edges, more than max_edges={max_edges}: "
                "NetworkX takes hundreds of bytes per edge; raise max_edges to insist"
            )
        g = nx.Graph() if self.undirected else nx.DiGraph()
        indptr, indices, w, ids, _ = self._s.csr()
        g.add_nodes_from(ids.tolist())
        # Row after row, each ascending (an undirected edge in the row of its earlier
        # end): every node's neighbors then come in node order, as the store's lists do,
        # so a traversal of this graph visits them as one of the store does.
        rows = np.repeat(np.arange(ids.shape[0], dtype=np.int64), np.diff(indptr))
        if self.undirected:
            keep = rows <= indices
            rows, indices = rows[keep], indices[keep]
            w = None if w is None else np.asarray(w)[keep]
        src, dst = ids[rows], ids[indices]
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
        edge appears once, smaller id first. In a string-keyed store ``id``, ``src``,
        ``dst`` and the columns of kernels whose values are vertices are ``large_string``
        names (an undirected edge once, smaller name first).
        """
        import pyarrow as pa

        ids = self.vertex_ids()
        cols: Dict[str, Any] = {
            "id": self._key_column(ids),
            "out_degree": self.out_degrees(),
            "in_degree": self.in_degrees(),
        }
        for k in kernels:
            name = k.replace("-", "_")
            vals = self.run(k)[0]
            if not isinstance(vals, np.ndarray):
                raise ValueError(f"kernel {k} gives no per-vertex values to put in a column")
            cols[name] = self._key_column(vals) if vals.dtype == object else vals
        for name, vals in (columns or {}).items():
            arr = np.asarray(vals)
            if arr.shape != ids.shape:
                raise ValueError(
                    f"column {name!r} has shape {arr.shape}, the vertices {ids.shape}"
                )
            cols[name] = arr
        vertices = pa.table(cols)
        src, dst, w = self._edge_columns(dedup_undirected=self.undirected)
        edge_cols: Dict[str, Any] = {"src": self._key_column(src), "dst": self._key_column(dst)}
        if w is not None:
            edge_cols["weight"] = w
        return vertices, pa.table(edge_cols)

    def _key_column(self, keys: np.ndarray) -> Any:
        """Vertex keys for Arrow: ids as they are, names as ``large_string``."""
        if self._keys != "string":
            return keys
        import pyarrow as pa

        return pa.array(keys, type=pa.large_string())

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

    def run(self, kernel: str, as_table: bool = False, **params: Any) -> Any:
        """Runs ``kernel`` (a name from ``evograph.kernels()``) and returns
        ``(values, report)``: values as its method returns them, and the summary
        ``evograph run --json`` prints (seconds, iterations, components, supersteps, ...).
        With ``as_table=True``, a pandas DataFrame instead: columns ``vertex`` (the ids or
        names of ``vertex_ids()``) and one named after the kernel, the report in
        ``df.attrs``; a kernel of one value (``tc``) gives one row, vertex None.

        Parameters: ``source`` (an external id, or a name in a string-keyed store),
        ``iterations``, ``damping``, ``tolerance``, ``delta``, ``samples``, ``delivery``
        (``"push"``/``"pull"``), ``max_supersteps``, ``verify``, ``threads``.
        """
        allowed = {
            "source", "iterations", "damping", "tolerance", "delta", "samples",
            "delivery", "max_supersteps", "verify", "threads",
        }
        unknown = set(params) - allowed
        if unknown:
            raise TypeError(f"unknown parameter(s) for run(): {', '.join(sorted(unknown))}")
        if params.get("source") is not None:
            params["source"] = self._vertex(params["source"], "source")
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
        if as_table:
            ids = self.vertex_ids()
            if np.ndim(values) == 0 or len(values) != len(ids):
                ids, values = [None], [values]
            df = _pandas("run").DataFrame({"vertex": ids, kernel: values})
            df.attrs.update(report)
            return df
        return values, report

    def _k(self, kernel: str, **params: Any) -> Any:
        return self.run(kernel, **{k: v for k, v in params.items() if v is not None})[0]

    def bfs(self, source: Vertex, threads: int = 0) -> np.ndarray:
        """Graphalytics BFS: hops from ``source`` (int64; 2**63-1 when unreachable)."""
        return self._k("bfs", source=source, threads=threads)

    def pr(self, iterations: int = 10, damping: float = 0.85, threads: int = 0) -> np.ndarray:
        """Graphalytics PageRank, a fixed number of iterations (float64)."""
        return self._k("pr", iterations=iterations, damping=damping, threads=threads)

    def wcc(self, threads: int = 0) -> np.ndarray:
        """Weakly connected components: each vertex's label is the external id of a member
        (int64; the member's name, in a string-keyed store)."""
        return self._k("wcc", threads=threads)

    def cdlp(self, iterations: int = 10, threads: int = 0) -> np.ndarray:
        """Community detection by label propagation (Graphalytics; int64 labels, names in a
        string-keyed store)."""
        return self._k("cdlp", iterations=iterations, threads=threads)

    def lcc(self, threads: int = 0) -> np.ndarray:
        """Local clustering coefficient (float64; 0 below degree 2)."""
        return self._k("lcc", threads=threads)

    def sssp(self, source: Vertex, delta: float = 1.0, threads: int = 0) -> np.ndarray:
        """Shortest-path distances from ``source`` (float64; inf when unreachable)."""
        return self._k("sssp", source=source, delta=delta, threads=threads)

    def gap_bfs(self, source: Optional[Vertex] = None, threads: int = 0) -> np.ndarray:
        """GAP direction-optimising BFS: each vertex's parent (external id; -1 when
        unreached). In a string-keyed store, the parent's name (``None`` when unreached).
        Picks a source when none is given."""
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
        """GAP connected components (Afforest): a member's external id (name) per vertex."""
        return self._k("gap-cc", threads=threads)

    def gap_sssp(self, source: Optional[Vertex] = None, delta: float = 1.0, threads: int = 0) -> np.ndarray:
        """GAP delta-stepping SSSP distances (float64)."""
        return self._k("gap-sssp", source=source, delta=delta, threads=threads)

    def bc(self, samples: int = 4, source: Optional[Vertex] = None, threads: int = 0) -> np.ndarray:
        """Betweenness centrality from ``samples`` sources, normalised to a maximum of 1."""
        return self._k("bc", samples=samples, source=source, threads=threads)

    def tc(self, threads: int = 0) -> int:
        """Number of triangles of the undirected graph."""
        return int(self._k("tc", threads=threads))

    def kcore(self, threads: int = 0) -> np.ndarray:
        """Each vertex's core number (int64): in- plus out-neighbors in a directed graph,
        self-loops aside."""
        return self._k("kcore", threads=threads)

    def lpa(self, threads: int = 0) -> np.ndarray:
        """Each vertex's community by semi-synchronous label propagation (NetworkX's
        ``label_propagation_communities``): the id (or name) of a vertex of it."""
        return self._k("lpa", threads=threads)

    def khop(self, source: Optional[Vertex] = None, threads: int = 0) -> Tuple[np.ndarray, np.ndarray]:
        """``(ids, hops)``: the vertices (ids, or names) one or two out-hops from ``source``."""
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
        """Connected components as a vertex program (the labels of ``wcc``, names in a
        string-keyed store)."""
        return self._k("pregel-cc", delivery=delivery, max_supersteps=max_supersteps, threads=threads)

    def pregel_bfs(
        self, source: Vertex, delivery: Optional[str] = None, max_supersteps: int = 10_000, threads: int = 0
    ) -> np.ndarray:
        """BFS depths as a vertex program (the values of ``bfs``)."""
        return self._k(
            "pregel-bfs", source=source, delivery=delivery, max_supersteps=max_supersteps, threads=threads
        )

    def pregel_sssp(
        self, source: Vertex, delivery: Optional[str] = None, max_supersteps: int = 10_000, threads: int = 0
    ) -> np.ndarray:
        """SSSP distances as a vertex program (the values of ``sssp``)."""
        return self._k(
            "pregel-sssp", source=source, delivery=delivery, max_supersteps=max_supersteps, threads=threads
        )

    def __repr__(self) -> str:
        kind = "undirected" if self.undirected else "directed"
        if self._keys == "string":
            kind += ", string keys"
        return f"<evograph.Snapshot {self.num_vertices} vertices, {self.num_edges} edges, {kind}>"

