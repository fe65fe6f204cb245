"""The ``evograph`` NetworkX backend: NetworkX's functions on evograph's kernels.

NetworkX dispatches a call here when a graph argument names this backend (an evograph
``Snapshot`` or ``Graph``, which are read in place), or when the caller asks for it with
``backend="evograph"`` (a NetworkX graph is then converted into a store in a temporary
directory, durability ``none``, and removed when the converted graph is collected).

Each function takes NetworkX's parameters and returns what NetworkX returns, keyed by the
caller's own nodes. A call this backend cannot honour exactly (a parameter it does not
implement, a multigraph, a weight given as a function) is declined by ``can_run``, so
NetworkX runs it instead. On a store's snapshot, ``weight`` names nothing: a weighted
store's edges have one weight, and an unweighted store's weigh 1.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import weakref
from typing import Any, Dict, Iterator, List, Optional

import numpy as np

#: The depth the kernels give an unreachable vertex.
_UNREACHABLE = np.iinfo(np.int64).max


class NxGraph:
    """A NetworkX graph converted into an evograph store: what ``convert_from_nx``
    returns, and what the backend's functions read. Its store lives in a temporary
    directory that goes with it."""

    __networkx_backend__ = "evograph"

    def __init__(self, nodes: List[Any], directed: bool, weighted: bool, graph: Dict) -> None:
        from . import open as open_store

        self._dir = tempfile.mkdtemp(prefix="evograph-nx-")
        # The directory goes even if the store cannot be made.
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._dir, True)
        self.nodes = nodes
        #: Each node's place in ``nodes``: its external id in the store.
        self.index = {v: i for i, v in enumerate(nodes)}
        self.graph = graph
        self._directed = directed
        self.store = open_store(
            os.path.join(self._dir, "store"),
            create=True,
            durability="none",
            undirected=not directed,
            weighted=weighted,
        )
        weakref.finalize(self, self.store.close)
        self._snapshot = None
        self._array: Optional[np.ndarray] = None

    def node_array(self) -> np.ndarray:
        """The nodes as a numpy object array, by external id (made once)."""
        if self._array is None:
            self._array = np.empty(len(self.nodes), dtype=object)
            self._array[:] = self.nodes
        return self._array

    def is_directed(self) -> bool:
        return self._directed

    def is_multigraph(self) -> bool:
        return False

    def __len__(self) -> int:
        return len(self.nodes)

    def snapshot(self) -> Any:
        """The store's graph (taken once: the converted graph does not change)."""
        if self._snapshot is None:
            self._snapshot = self.store.snapshot()
        return self._snapshot


class _View:
    """A graph argument as the functions read it: a snapshot, the node at each of its
    positions, and each node's position."""

    def __init__(self, g: Any) -> None:
        from . import Graph, Snapshot

        if isinstance(g, NxGraph):
            self.s = g.snapshot()
            # External ids are the nodes' places in the NetworkX graph.
            self.array = g.node_array()[self.s.vertex_ids().astype(np.int64)]
            self._external = g.index
        elif isinstance(g, (Snapshot, Graph)):
            self.s = g.snapshot() if isinstance(g, Graph) else g
            self.array = self.s.vertex_ids()
            self._external = None
        else:
            raise TypeError(f"not a graph of the evograph backend: {type(g).__name__}")
        self._nodes: Optional[List[Any]] = None
        self._position: Optional[Dict[Any, int]] = None

    @property
    def nodes(self) -> List[Any]:
        """The node at each position, as a list (made on first use)."""
        if self._nodes is None:
            self._nodes = self.array.tolist()
        return self._nodes

    def at(self, positions: np.ndarray) -> List[Any]:
        """The nodes at ``positions``, as a list."""
        return self.array[positions].tolist()

    def __len__(self) -> int:
        return int(self.array.shape[0])

    def has(self, node: Any) -> bool:
        if self._external is not None:
            try:
                return node in self._external
            except TypeError:
                return False
        if self._position is None:
            # One lookup in the store, not a map of every node.
            try:
                self.s.out_neighbors(node)
                return True
            except (KeyError, TypeError, ValueError):
                return False
        return node in self._position

    def position(self, node: Any) -> int:
        """The position of ``node``; ``KeyError`` if the graph has none."""
        if self._position is None:
            self._position = {n: i for i, n in enumerate(self.nodes)}
        return self._position[node]

    def key(self, node: Any) -> Any:
        """``node`` as the store keys it (the ``source`` a kernel takes)."""
        if self._external is not None:
            return self._external[node]
        return node

    def by_node(self, values: np.ndarray, cast: Any = float) -> Dict[Any, Any]:
        return dict(zip(self.nodes, map(cast, values.tolist())))

    def matrix(self, weighted: bool) -> Any:
        """The out-adjacency over positions: weights if ``weighted`` (and the store has
        them), else ones."""
        import scipy.sparse

        indptr, indices, weights, _ids, _ = self.s._s.csr()
        n = len(self)
        data = weights if (weighted and weights is not None) else np.ones(len(indices))
        return scipy.sparse.csr_array((data, indices, indptr), shape=(n, n))


def _source(view: _View, source: Any) -> Any:
    import networkx as nx

    if not view.has(source):
        raise nx.NodeNotFound(f"Source {source} is not in G")
    return view.key(source)


def _groups(labels: np.ndarray, view: _View) -> Iterator[set]:
    """The nodes of each label, a set per label."""
    if labels.shape[0] == 0:
        return
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    # Slices of one list of nodes, not an array per component: most of a large sparse
    # graph's components are single vertices.
    sorted_nodes = view.at(order)
    starts = [0, *bounds.tolist()]
    ends = [*bounds.tolist(), len(sorted_nodes)]
    for a, b in zip(starts, ends):
        yield set(sorted_nodes[a:b])


# --- the functions ----------------------------------------------------------------------


def pagerank(
    G: Any,
    alpha: float = 0.85,
    personalization: Optional[Dict] = None,
    max_iter: int = 100,
    tol: float = 1.0e-6,
    nstart: Optional[Dict] = None,
    weight: Optional[str] = "weight",
    dangling: Optional[Dict] = None,
) -> Dict[Any, float]:
    """NetworkX's power iteration (its SciPy form, step for step) on the store's
    adjacency: the same fixed point, the same stopping rule (an L1 change below
    ``N * tol``) and ``PowerIterationFailedConvergence`` after ``max_iter``."""
    import networkx as nx

    view = _View(G)
    n = len(view)
    if n == 0:
        return {}
    A = view.matrix(weight is not None)
    S = np.asarray(A.sum(axis=1), dtype=float)
    nz = S != 0
    S[nz] = 1.0 / S[nz]
    import scipy.sparse

    A = scipy.sparse.dia_array((S[np.newaxis, :], 0), shape=A.shape).tocsr() @ A

    def vector(d: Optional[Dict]) -> Optional[np.ndarray]:
        if d is None:
            return None
        return np.array([d.get(v, 0) for v in view.nodes], dtype=float)

    x = vector(nstart)
    x = np.repeat(1.0 / n, n) if x is None else x / x.sum()
    p = vector(personalization)
    if p is None:
        p = np.repeat(1.0 / n, n)
    else:
        if p.sum() == 0:
            raise ZeroDivisionError
        p /= p.sum()
    dw = vector(dangling)
    dw = p if dw is None else dw / dw.sum()
    is_dangling = np.where(S == 0)[0]
    for _ in range(max_iter):
        xlast = x
        x = alpha * (x @ A + sum(x[is_dangling]) * dw) + (1 - alpha) * p
        if np.absolute(x - xlast).sum() < n * tol:
            return view.by_node(x)
    raise nx.PowerIterationFailedConvergence(max_iter)


def _components(G: Any) -> Iterator[set]:
    view = _View(G)
    labels = np.asarray(view.s.run("wcc")[0])
    return _groups(labels, view)


def connected_components(G: Any) -> Iterator[set]:
    """The components, a set of nodes each, from evograph's WCC."""
    return _components(G)


def weakly_connected_components(G: Any) -> Iterator[set]:
    """The weak components of a directed graph, a set of nodes each."""
    return _components(G)


def _count_components(G: Any) -> int:
    view = _View(G)
    return int(np.unique(np.asarray(view.s.run("wcc")[0])).shape[0])


def number_connected_components(G: Any) -> int:
    return _count_components(G)


def number_weakly_connected_components(G: Any) -> int:
    return _count_components(G)


def is_connected(G: Any) -> bool:
    import networkx as nx

    if len(_View(G)) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return _count_components(G) == 1


def _depths(view: _View, source: Any) -> np.ndarray:
    return np.asarray(view.s.run("bfs", source=_source(view, source))[0])


def single_source_shortest_path_length(
    G: Any, source: Any, cutoff: Optional[int] = None
) -> Dict[Any, int]:
    """Hops from ``source`` to each node it reaches (out-edges), within ``cutoff``."""
    view = _View(G)
    d = _depths(view, source)
    keep = d != _UNREACHABLE
    if cutoff is not None:
        keep &= d <= cutoff
    at = np.flatnonzero(keep)
    return dict(zip(view.at(at), d[at].tolist()))


def single_source_dijkstra_path_length(
    G: Any, source: Any, cutoff: Optional[float] = None, weight: Any = "weight"
) -> Dict[Any, float]:
    """Weighted distances from ``source`` (evograph's SSSP: non-negative weights)."""
    view = _View(G)
    key = _source(view, source)
    kernel = "sssp" if weight is not None else "bfs"
    d = np.asarray(view.s.run(kernel, source=key)[0])
    keep = np.isfinite(d) if d.dtype.kind == "f" else d != _UNREACHABLE
    if cutoff is not None:
        keep &= d <= cutoff
    at = np.flatnonzero(keep)
    return dict(zip(view.at(at), d[at].tolist()))


def has_path(G: Any, source: Any, target: Any) -> bool:
    import networkx as nx

    view = _View(G)
    if not view.has(target):
        raise nx.NodeNotFound(f"Target {target} is not in G")
    return bool(_depths(view, source)[view.position(target)] != _UNREACHABLE)


def shortest_path_length(
    G: Any,
    source: Any = None,
    target: Any = None,
    weight: Any = None,
    method: str = "dijkstra",
) -> Any:
    """Hops from ``source`` (``can_run`` declines other forms): a dict by node, or to
    ``target`` alone."""
    import networkx as nx

    view = _View(G)
    if target is None:
        return single_source_shortest_path_length(G, source)
    if not view.has(target):
        raise nx.NodeNotFound(f"Target {target} is not in G")
    d = _depths(view, source)[view.position(target)]
    if d == _UNREACHABLE:
        raise nx.NetworkXNoPath(f"Target {target} cannot be reached from given sources")
    return int(d)


def _lcc(view: _View) -> np.ndarray:
    return np.asarray(view.s.run("lcc")[0], dtype=float)


def _selected(view: _View, nodes: Any, values: np.ndarray, cast: Any) -> Any:
    """NetworkX's ``nodes`` argument: one node's value, or a dict over the nodes."""
    if nodes is not None and not isinstance(nodes, (list, tuple, set, frozenset)) and view.has(nodes):
        return cast(values[view.position(nodes)])
    if nodes is None:
        return view.by_node(values, cast)
    return {v: cast(values[view.position(v)]) for v in nodes}


def clustering(G: Any, nodes: Any = None, weight: Any = None) -> Any:
    """The local clustering coefficient of an undirected graph (evograph's LCC)."""
    view = _View(G)
    return _selected(view, nodes, _lcc(view), float)


def _degrees_without_loops(view: _View) -> np.ndarray:
    indptr, indices, _, _, _ = view.s._s.csr()
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    loops = np.bincount(rows[indices == rows], minlength=len(indptr) - 1)
    return np.diff(indptr) - loops


def triangles(G: Any, nodes: Any = None) -> Any:
    """Triangles through each node of an undirected graph: its LCC times the pairs of its
    neighbors (self-loops aside), which is exact in a double."""
    view = _View(G)
    d = _degrees_without_loops(view).astype(float)
    t = np.rint(_lcc(view) * d * (d - 1) / 2).astype(np.int64)
    return _selected(view, nodes, t, int)


def average_clustering(
    G: Any, nodes: Any = None, weight: Any = None, count_zeros: bool = True
) -> float:
    view = _View(G)
    c = _lcc(view)
    if nodes is not None:
        c = np.array([c[view.position(v)] for v in nodes])
    if not count_zeros:
        c = c[c != 0]
    if c.shape[0] == 0:
        raise ZeroDivisionError("float division by zero")
    return float(c.sum() / c.shape[0])


def betweenness_centrality(
    G: Any,
    k: Optional[int] = None,
    normalized: bool = True,
    weight: Any = None,
    endpoints: bool = False,
    seed: Any = None,
) -> Dict[Any, float]:
    """Brandes' betweenness from every node, or from ``k`` nodes sampled as NetworkX
    samples them (``seed.sample`` of the nodes in the graph's order), summed by evograph
    (unweighted paths, all threads) and rescaled as NetworkX rescales."""
    view = _View(G)
    n = len(view)
    if k == n:
        k = None
    if k is None:
        sources = list(range(n))
    else:
        order = list(G.nodes) if isinstance(G, NxGraph) else view.nodes
        picked = seed.sample(order, k)
        sources = [view.position(v) for v in picked]
    sums = view.s._s.brandes_sums(sources)
    out = view.by_node(sums)
    sampled = None if k is None else [view.nodes[p] for p in sources]
    return _rescaled(out, n, normalized, _directed(G), sampled)


def _rescaled(
    b: Dict[Any, float], n: int, normalized: bool, directed: bool, sampled: Optional[List[Any]]
) -> Dict[Any, float]:
    """NetworkX's rescaling of Brandes' sums (endpoints excluded): by the (s, t) pairs a
    path through a node can join, an undirected pair once, and with sampled sources by how
    many of them could pass through it (a source cannot pass through itself)."""
    N = n - 1
    if N < 2:
        return b
    correction = 1 if directed else 2
    if sampled is None:
        scale = 1 / (N * (N - 1)) if normalized else 1 / correction
        return {v: x * scale for v, x in b.items()} if scale != 1 else b
    k = len(sampled)
    if normalized:
        source = 1 / ((k - 1) * (N - 1)) if k > 1 else math.nan
        other = 1 / (k * (N - 1))
    else:
        source = N / ((k - 1) * correction) if k > 1 else math.nan
        other = N / (k * correction)
    picked = set(sampled)
    return {v: x * (source if v in picked else other) for v, x in b.items()}


def core_number(G: Any) -> Dict[Any, int]:
    """Each node's core number (evograph's kcore: in- plus out-neighbors in a directed
    graph, as NetworkX counts them); a graph with self-loops is refused as NetworkX
    refuses it."""
    import networkx as nx

    view = _View(G)
    indptr, indices, _, _, _ = view.s._s.csr()
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if np.any(indices == rows):
        raise nx.NetworkXNotImplemented(
            "Input graph has self loops which is not permitted; "
            "Consider using G.remove_edges_from(nx.selfloop_edges(G))."
        )
    return view.by_node(np.asarray(view.s.run("kcore")[0]), int)


# --- what NetworkX asks of a backend ----------------------------------------------------

_FUNCTIONS = {
    "pagerank": "Power iteration over the store's adjacency, as NetworkX's SciPy form.",
    "connected_components": "evograph's WCC (Afforest).",
    "weakly_connected_components": "evograph's WCC (Afforest).",
    "number_connected_components": "evograph's WCC (Afforest).",
    "number_weakly_connected_components": "evograph's WCC (Afforest).",
    "is_connected": "evograph's WCC (Afforest).",
    "single_source_shortest_path_length": "evograph's BFS.",
    "single_source_dijkstra_path_length": "evograph's SSSP (non-negative weights).",
    "has_path": "evograph's BFS.",
    "shortest_path_length": "evograph's BFS, from a source (weight=None).",
    "clustering": "evograph's LCC (undirected, unweighted).",
    "triangles": "evograph's LCC times each node's neighbor pairs.",
    "average_clustering": "evograph's LCC (undirected, unweighted).",
    "core_number": "evograph's kcore (Batagelj and Zaversnik's peeling).",
    "betweenness_centrality": "Brandes' sums from evograph's BC (unweighted, no endpoints).",
}


def _declines(name: str, args: tuple, kwargs: dict) -> Optional[str]:
    """Why the backend cannot run ``name`` with these arguments exactly; None if it can."""
    import networkx as nx
    import inspect

    fn = globals()[name]
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        return str(e)
    a = bound.arguments
    G = a.get("G")
    if isinstance(G, nx.Graph):
        if G.is_multigraph():
            return "multigraphs are not stored"
        why = _weights_decline(G, a.get("weight"), name)
        if why:
            return why
    weight = a.get("weight")
    if callable(weight):
        return "weight as a function"
    if name in ("clustering", "average_clustering") and weight is not None:
        return "weighted clustering"
    if name in ("clustering", "average_clustering", "triangles") and _directed(G):
        return "directed clustering is not evograph's LCC"
    if name == "betweenness_centrality" and (weight is not None or a.get("endpoints")):
        return "weighted paths or endpoints"
    if name == "shortest_path_length":
        if a.get("source") is None or weight is not None or a.get("method", "dijkstra") != "dijkstra":
            return "only hops from a source"
    return None


def _directed(G: Any) -> bool:
    try:
        return bool(G.is_directed())
    except AttributeError:
        return not G.undirected


def _weights_decline(G: Any, weight: Any, name: str) -> Optional[str]:
    """A NetworkX graph with weights evograph's SSSP cannot take (negative ones), looked
    for on every call of it; pagerank's weights are read once, at conversion (a weight
    that is not a finite number is refused there)."""
    if weight is None or callable(weight) or name != "single_source_dijkstra_path_length":
        return None
    for _, _, w in G.edges(data=weight, default=1):
        if not isinstance(w, (int, float)) or not np.isfinite(w) or w < 0:
            return "weights that are not non-negative finite numbers"
    return None


class BackendInterface:
    """What NetworkX loads from the ``networkx.backends`` entry point."""

    @staticmethod
    def convert_from_nx(
        G: Any,
        edge_attrs: Optional[Dict] = None,
        node_attrs: Any = None,
        preserve_edge_attrs: bool = False,
        preserve_node_attrs: bool = False,
        preserve_graph_attrs: bool = False,
        name: Optional[str] = None,
        graph_name: Optional[str] = None,
    ) -> NxGraph:
        """``G`` as a store: every node (isolated ones too) and every edge, with the one
        weight the call reads (``edge_attrs``), or none."""
        weight = None
        if edge_attrs:
            weight, default = next(iter(edge_attrs.items()))
        nodes = list(G)
        out = NxGraph(nodes, G.is_directed(), weight is not None, dict(G.graph))
        index = out.index
        out.store.insert_vertices(np.arange(len(nodes), dtype=np.uint64))
        m = G.number_of_edges()
        ends = (index[x] for e in G.edges() for x in e[:2])
        e = np.fromiter(ends, dtype=np.uint64, count=2 * m).reshape(-1, 2)
        w = None
        if weight is not None:
            ws = (1.0 if d is None else d for _, _, d in G.edges(data=weight, default=default))
            w = np.fromiter(ws, dtype=float, count=m)
        if m:
            out.store.insert_edges(e[:, 0], e[:, 1], w)
        return out

    @staticmethod
    def convert_to_nx(obj: Any, *, name: Optional[str] = None) -> Any:
        """Results are NetworkX's types already; a graph goes back as a NetworkX graph (a
        store's for NetworkX to run what this backend declines)."""
        from . import Graph, Snapshot

        if isinstance(obj, Graph):
            obj = obj.snapshot()
        if isinstance(obj, Snapshot):
            return obj.to_networkx()
        if isinstance(obj, NxGraph):
            import networkx as nx

            g = nx.DiGraph() if obj.is_directed() else nx.Graph()
            g.add_nodes_from(obj.nodes)
            view = _View(obj)
            indptr, indices, weights, _, _ = view.s._s.csr()
            rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
            for i, (r, c) in enumerate(zip(rows.tolist(), indices.tolist())):
                attrs = {} if weights is None else {"weight": float(weights[i])}
                g.add_edge(view.nodes[r], view.nodes[c], **attrs)
            return g
        return obj

    @staticmethod
    def can_run(name: str, args: tuple, kwargs: dict) -> Any:
        if name not in _FUNCTIONS:
            return f"evograph does not implement {name}"
        why = _declines(name, args, kwargs)
        return True if why is None else why

    @staticmethod
    def should_run(name: str, args: tuple, kwargs: dict) -> bool:
        return True


for _name in _FUNCTIONS:
    setattr(BackendInterface, _name, staticmethod(globals()[_name]))


def get_info() -> Dict[str, Any]:
    """What NetworkX shows of the backend (the ``networkx.backend_info`` entry point)."""
    return {
        "backend_name": "evograph",
        "project": "evograph",
        "package": "evograph",
        "short_summary": "A persistent store for evolving graphs: NetworkX on its kernels.",
        "functions": {name: {"additional_docs": doc} for name, doc in _FUNCTIONS.items()},
        "default_config": {},
    }
