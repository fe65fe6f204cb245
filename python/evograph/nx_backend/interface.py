"""What NetworkX asks of a backend: conversions, `can_run`, and the functions by name."""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from . import functions
from .graph import NxGraph, _directed, _View

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
    "bfs_edges": "Layer by layer over the store's lists, neighbors in node order.",
    "bfs_layers": "Layer by layer over the store's lists, neighbors in node order.",
    "label_propagation_communities": "evograph's lpa (the same semi-synchronous rule).",
    "k_core": "evograph's kcore, the core as a NetworkX graph.",
}


def _declines(name: str, args: tuple, kwargs: dict) -> Optional[str]:
    """Why the backend cannot run ``name`` with these arguments exactly; None if it can."""
    import networkx as nx
    import inspect

    fn = getattr(functions, name)
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
    if name == "bfs_edges" and a.get("sort_neighbors") is not None:
        return "sort_neighbors"
    if name in ("bfs_edges", "bfs_layers") and isinstance(G, nx.Graph):
        if not _adjacency_in_node_order(G, name == "bfs_edges" and a.get("reverse", False)):
            return "a NetworkX graph whose neighbors are not in node order"
    if name == "k_core" and isinstance(G, nx.Graph) and _has_attributes(G):
        return "node or edge attributes (the k-core keeps them; a store does not)"
    if name == "shortest_path_length":
        if a.get("source") is None or weight is not None or a.get("method", "dijkstra") != "dijkstra":
            return "only hops from a source"
    return None


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


def _adjacency_in_node_order(G: Any, reverse: bool) -> bool:
    """Whether each node's neighbors (predecessors when ``reverse`` in a directed graph)
    come in the graph's node order, the order a store's sorted lists give a traversal."""
    index = {v: i for i, v in enumerate(G)}
    adj = G.pred if reverse and G.is_directed() else G.adj
    for nbrs in adj.values():
        last = -1
        for v in nbrs:
            if index[v] <= last:
                return False
            last = index[v]
    return True


def _has_attributes(G: Any) -> bool:
    """Whether any node or edge of ``G`` carries data."""
    return any(d for _, d in G.nodes(data=True)) or any(d for *_, d in G.edges(data=True))


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
        from .. import Graph, Snapshot

        if isinstance(obj, Graph):
            obj = obj.snapshot()
        if isinstance(obj, Snapshot):
            return obj.to_networkx()
        if isinstance(obj, NxGraph):
            return _View(obj).networkx()
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
    setattr(BackendInterface, _name, staticmethod(getattr(functions, _name)))


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
