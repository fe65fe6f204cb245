"""The graphs the backend's functions read: a NetworkX graph converted into a store
(`NxGraph`), and any graph argument as a snapshot with its nodes by position (`_View`)."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

#: The depth the kernels give an unreachable vertex.
_UNREACHABLE = np.iinfo(np.int64).max


class NxGraph:
    """A NetworkX graph converted into an evograph store: what ``convert_from_nx``
    returns, and what the backend's functions read. Its store lives in a temporary
    directory that goes with it."""

    __networkx_backend__ = "evograph"

    def __init__(self, nodes: List[Any], directed: bool, weighted: bool, graph: Dict) -> None:
        from .. import open as open_store

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
        from .. import Graph, Snapshot

        #: The graph argument itself.
        self.g = g
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

    def arcs(self) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        """Every out-edge as source and target positions, with the weights (``None`` in an
        unweighted store); an undirected edge both ways."""
        indptr, indices, weights, _, _ = self.s._s.csr()
        rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        return rows, np.asarray(indices), weights

    def networkx(self, keep: Optional[np.ndarray] = None) -> Any:
        """The graph as a NetworkX graph, or the subgraph induced by the positions where
        ``keep`` is true: each undirected edge once, weights as ``weight``."""
        import networkx as nx

        directed = _directed(self.g)
        g = nx.DiGraph() if directed else nx.Graph()
        rows, cols, weights = self.arcs()
        inside = np.ones(rows.shape[0], dtype=bool) if keep is None else keep[rows] & keep[cols]
        if not directed:
            inside &= rows <= cols
        g.add_nodes_from(self.nodes if keep is None else self.at(np.flatnonzero(keep)))
        ends = zip(self.at(rows[inside]), self.at(cols[inside]))
        if weights is None:
            g.add_edges_from(ends)
        else:
            w = np.asarray(weights)[inside].tolist()
            g.add_weighted_edges_from((u, v, x) for (u, v), x in zip(ends, w))
        return g

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


def _directed(G: Any) -> bool:
    try:
        return bool(G.is_directed())
    except AttributeError:
        return not G.undirected
