"""NetworkX's functions on evograph's kernels, each with NetworkX's parameters and return
types."""

from __future__ import annotations

import math
from typing import Any, Dict, Iterator, List, Optional

import numpy as np

from .graph import _UNREACHABLE, NxGraph, _directed, _groups, _source, _View

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
    rows, cols, _ = view.arcs()
    n = len(view)
    return np.bincount(rows, minlength=n) - np.bincount(rows[cols == rows], minlength=n)


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
    rows, cols, _ = view.arcs()
    if np.any(cols == rows):
        raise nx.NetworkXNotImplemented(
            "Input graph has self loops which is not permitted; "
            "Consider using G.remove_edges_from(nx.selfloop_edges(G))."
        )
    return view.by_node(np.asarray(view.s.run("kcore")[0]), int)


#: ``core_number`` under a name ``k_core``'s parameter does not hide.
_core_numbers = core_number


def _bfs_rows(view: _View, reverse: bool) -> Any:
    """The lists a BFS follows, as CSR over positions with each row ascending:
    out-lists, or in-lists when ``reverse`` in a directed graph."""
    indptr, indices, _, _, _ = view.s._s.csr()
    indptr, indices = np.asarray(indptr), np.asarray(indices)
    if not (reverse and _directed(view.g)):
        return indptr, indices
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    order = np.lexsort((rows, indices))
    counts = np.bincount(indices, minlength=len(indptr) - 1)
    return np.concatenate(([0], np.cumsum(counts))), rows[order]


def _bfs_steps(
    indptr: np.ndarray, indices: np.ndarray, sources: np.ndarray, depth_limit: Optional[int]
) -> Iterator[tuple]:
    """Breadth-first from ``sources`` (positions, in order), a layer at a time:
    ``(parents, children)``, each child with the first parent in layer order that
    reaches it, the children in the order NetworkX's loop discovers them (parents in
    order, each one's list in order)."""
    seen = np.zeros(len(indptr) - 1, dtype=bool)
    seen[sources] = True
    layer, depth = sources, 0
    while layer.shape[0] and (depth_limit is None or depth < depth_limit):
        starts, counts = indptr[layer], indptr[layer + 1] - indptr[layer]
        total = int(counts.sum())
        # Each parent's list, end to end, in layer order.
        shift = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        children = indices[np.arange(total) + shift]
        parents = np.repeat(layer, counts)
        fresh = ~seen[children]
        children, parents = children[fresh], parents[fresh]
        _, first = np.unique(children, return_index=True)
        first.sort()
        children, parents = children[first], parents[first]
        seen[children] = True
        yield parents, children
        layer, depth = children, depth + 1


def bfs_edges(
    G: Any,
    source: Any,
    reverse: bool = False,
    depth_limit: Optional[int] = None,
    sort_neighbors: Any = None,
) -> Iterator[tuple]:
    """The edges of a breadth-first search from ``source``, in the order NetworkX's loop
    yields them with each node's neighbors in the graph's node order (``can_run``
    declines a NetworkX graph whose adjacency is in another order, and
    ``sort_neighbors``)."""
    import networkx as nx

    view = _View(G)
    if not view.has(source):
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    indptr, indices = _bfs_rows(view, reverse)
    start = np.array([view.position(source)])
    for parents, children in _bfs_steps(indptr, indices, start, depth_limit):
        yield from zip(view.at(parents), view.at(children))


def bfs_layers(G: Any, sources: Any) -> Iterator[List[Any]]:
    """The nodes at each distance from ``sources``, a list per layer, each in the order
    NetworkX's loop finds them (the graph's node order within each node's neighbors)."""
    import networkx as nx

    view = _View(G)
    if view.has(sources):
        sources = [sources]
    first = list(set(sources))
    for s in first:
        if not view.has(s):
            raise nx.NetworkXError(f"The node {s} is not in the graph.")
    if not first:
        return
    yield first
    indptr, indices = _bfs_rows(view, False)
    start = np.array([view.position(s) for s in first])
    for _, children in _bfs_steps(indptr, indices, start, None):
        if children.shape[0]:
            yield view.at(children)


def label_propagation_communities(G: Any) -> Any:
    """NetworkX's semi-synchronous label propagation (evograph's lpa kernel: the same
    colouring, order and tie rule, so the same communities), as a ``dict_values`` of
    sets."""
    import networkx as nx

    if _directed(G):
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    view = _View(G)
    labels = np.asarray(view.s.run("lpa")[0])
    clusters: Dict[Any, set] = {}
    for node, label in zip(view.nodes, labels.tolist()):
        clusters.setdefault(label, set()).add(node)
    return clusters.values()


def k_core(G: Any, k: Optional[int] = None, core_number: Optional[Dict] = None) -> Any:
    """The subgraph of the nodes whose core number is at least ``k`` (the largest by
    default), as a NetworkX graph: nodes in the graph's order, weights as ``weight``."""
    view = _View(G)
    core = core_number if core_number is not None else _core_numbers(G)
    if k is None:
        k = max(core.values()) if core else 0
    keep = np.array([core[v] >= k for v in view.nodes], dtype=bool)
    out = view.networkx(keep)
    out.graph.update(getattr(G, "graph", {}))
    return out
