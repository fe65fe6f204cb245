"""The NetworkX backend: NetworkX's own tests with it, dispatch on snapshots, results keyed
by the caller's nodes, and calls it declines."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

import networkx as nx
import numpy as np
import pytest

import evograph
from evograph import nx_backend

# NetworkX's tests of the functions the backend implements.
NX_MODULES = [
    "networkx.algorithms.link_analysis.tests.test_pagerank",
    "networkx.algorithms.components.tests.test_connected",
    "networkx.algorithms.components.tests.test_weakly_connected",
    "networkx.algorithms.shortest_paths.tests.test_unweighted",
    "networkx.algorithms.shortest_paths.tests.test_weighted",
    "networkx.algorithms.shortest_paths.tests.test_generic",
    "networkx.algorithms.tests.test_cluster",
    "networkx.algorithms.tests.test_core",
    "networkx.algorithms.centrality.tests.test_betweenness_centrality",
    "networkx.algorithms.traversal.tests.test_bfs",
    "networkx.algorithms.community.tests.test_label_propagation",
]


def test_networkx_own_tests_pass_through_the_backend():
    """NETWORKX_TEST_BACKEND=evograph converts each test's graphs into stores and calls the
    backend wherever it accepts the call: nothing fails, nothing of ours is xfailed as not
    implemented, and every function the backend lists ran in it."""
    env = {
        "NETWORKX_TEST_BACKEND": "evograph",
        "NETWORKX_FALLBACK_TO_NX": "True",
    }
    import os

    cmd = [sys.executable, "-m", "pytest", "-q", "-rx", "-p", "no:cacheprovider", "-W", "ignore"]
    cmd += ["-o", "log_cli=true", "--log-cli-level=DEBUG", "--pyargs", *NX_MODULES]
    out = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
    summary = out.stdout.strip().splitlines()[-1]
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "failed" not in summary and "error" not in summary, summary
    assert re.search(r"\d+ passed", summary), summary
    xfailed = [l for l in out.stdout.splitlines() if l.startswith("XFAIL") and "evograph" in l]
    assert xfailed == [], xfailed
    used = Counter(re.findall(r"Using backend 'evograph' for call to '(\w+)'", out.stdout))
    missing = [f for f in nx_backend._FUNCTIONS if used[f] == 0]
    assert missing == [], f"never run in the backend: {missing}; ran {dict(used)}"


def _store(tmp_path, edges, undirected=True, weights=None, name="s"):
    g = evograph.open(tmp_path / name, create=True, undirected=undirected, weighted=weights is not None)
    e = np.array(edges, dtype=np.uint64)
    g.insert_edges(e[:, 0], e[:, 1], weights)
    return g


def _random_edges(n, m, seed):
    rng = np.random.default_rng(seed)
    return [(int(u), int(v)) for u, v in rng.integers(0, n, size=(m, 2)) if u != v]


def test_a_snapshot_names_its_backend_and_is_read_in_place(tmp_path):
    """nx.f(s) with no backend= runs on the snapshot, and equals NetworkX on the same
    graph; so does nx.f(g) on the open store."""
    edges = _random_edges(300, 900, 1)
    g = _store(tmp_path, edges)
    s = g.snapshot()
    G = s.to_networkx()
    want = nx.pagerank(G, backend="networkx")
    got = nx.pagerank(s)
    assert set(got) == set(want)
    assert max(abs(got[v] - want[v]) for v in want) < 1e-12
    assert sorted(map(sorted, nx.connected_components(g))) == sorted(
        map(sorted, nx.connected_components(G, backend="networkx"))
    )
    source = edges[0][0]
    assert nx.single_source_shortest_path_length(s, source) == nx.single_source_shortest_path_length(
        G, source, backend="networkx"
    )
    assert nx.triangles(s) == nx.triangles(G, backend="networkx")
    assert nx.average_clustering(s) == pytest.approx(nx.average_clustering(G, backend="networkx"))
    g.close()


def test_a_past_snapshot_works_with_the_backend(tmp_path):
    """Every snapshot, a past one included: the components as of the first commit."""
    g = evograph.open(tmp_path / "h", create=True, undirected=True, history="all")
    g.insert_edges(np.array([1, 3], dtype=np.uint64), np.array([2, 4], dtype=np.uint64))
    first = g.last_commit()[0]
    g.insert_edges(np.array([2], dtype=np.uint64), np.array([3], dtype=np.uint64))
    assert nx.number_connected_components(g.snapshot()) == 1
    assert sorted(map(sorted, nx.connected_components(g.at(first)))) == [[1, 2], [3, 4]]
    g.close()


def test_a_networkx_graph_keeps_its_nodes_weights_and_isolated_nodes():
    """Any hashable node comes back as itself; an isolated node is kept; weights weigh."""
    G = nx.DiGraph()
    G.add_node(("iso", 0))
    G.add_edge("a", frozenset({1}), weight=2.0)
    G.add_edge(frozenset({1}), 3.5, weight=0.5)
    G.add_edge("a", 3.5, weight=10.0)
    got = nx.single_source_dijkstra_path_length(G, "a", backend="evograph")
    assert got == {"a": 0, frozenset({1}): 2.0, 3.5: 2.5}
    pr = nx.pagerank(G, backend="evograph")
    want = nx.pagerank(G, backend="networkx")
    assert set(pr) == set(want) and ("iso", 0) in pr
    assert max(abs(pr[v] - want[v]) for v in want) < 1e-12
    assert sorted(map(len, nx.weakly_connected_components(G, backend="evograph"))) == [1, 3]


def test_pagerank_honours_networkx_parameters_and_fails_as_it_does():
    G = nx.gnp_random_graph(60, 0.08, seed=3, directed=True)
    p = {v: (v % 3) for v in G}
    for kw in [
        dict(alpha=0.7),
        dict(personalization=p),
        dict(dangling={0: 1, 1: 3}),
        dict(nstart={v: 1.0 + v for v in G}),
        dict(tol=1e-10, max_iter=500),
    ]:
        got = nx.pagerank(G, backend="evograph", **kw)
        want = nx.pagerank(G, backend="networkx", **kw)
        assert max(abs(got[v] - want[v]) for v in G) < 1e-12, kw
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(G, backend="evograph", max_iter=2)
    with pytest.raises(ZeroDivisionError):
        nx.pagerank(G, backend="evograph", personalization={0: 0})


def test_calls_it_cannot_honour_are_declined():
    """A multigraph, a weight function, weighted or directed clustering: `can_run` says
    why, and NetworkX runs the call when allowed to fall back."""
    G = nx.gnp_random_graph(30, 0.2, seed=4)
    nx.set_edge_attributes(G, 2.0, "weight")
    can = nx_backend.BackendInterface.can_run
    assert can("clustering", (G,), {"weight": "weight"}) == "weighted clustering"
    assert "function" in can("single_source_dijkstra_path_length", (G, 0), {"weight": lambda u, v, d: 1})
    assert "multigraph" in can("pagerank", (nx.MultiGraph(G),), {})
    assert "directed" in can("clustering", (G.to_directed(),), {})
    assert can("louvain_communities", (G,), {}) != True  # noqa: E712 (a reason, not True)
    assert can("bfs_edges", (G, 0), {"sort_neighbors": sorted}) == "sort_neighbors"
    shuffled = nx.Graph()
    shuffled.add_nodes_from([0, 1, 2])
    shuffled.add_edges_from([(0, 2), (0, 1)])  # 0's neighbors: 2 before 1
    assert "node order" in can("bfs_edges", (shuffled, 0), {})
    assert "node order" in can("bfs_layers", (shuffled, 0), {})
    assert can("bfs_edges", (nx.Graph([(0, 1), (0, 2)]), 0), {}) is True
    assert "attributes" in can("k_core", (G,), {})
    with pytest.raises(NotImplementedError):
        list(nx.bfs_edges(shuffled, 0, backend="evograph"))
    assert can("pagerank", (G,), {}) is True
    with pytest.raises(NotImplementedError):
        nx.clustering(G, weight="weight", backend="evograph")


def test_string_keyed_stores_key_results_by_name(tmp_path):
    g = evograph.open(tmp_path / "n", create=True, undirected=True, keys="string")
    g.insert_edges(["ann", "bob", "cy"], ["bob", "cy", "dee"])
    s = g.snapshot()
    assert nx.single_source_shortest_path_length(s, "ann") == {"ann": 0, "bob": 1, "cy": 2, "dee": 3}
    assert nx.has_path(s, "ann", "dee")
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(s, "zed")
    g.close()


def test_a_converted_graph_converts_back_to_the_same_graph():
    """convert_from_nx then convert_to_nx: the same nodes, edges and weights, directed and
    undirected (each undirected edge once), isolated nodes kept."""
    for G in (nx.gnp_random_graph(40, 0.1, seed=5), nx.gnp_random_graph(40, 0.1, seed=6, directed=True)):
        for u, v in G.edges():
            G[u][v]["weight"] = float(u + v) / 2
        G.add_node("alone")
        H = nx_backend.BackendInterface.convert_from_nx(G, edge_attrs={"weight": 1})
        back = nx_backend.BackendInterface.convert_to_nx(H)
        assert back.is_directed() == G.is_directed()
        assert set(back.nodes) == set(G.nodes)
        assert back.number_of_edges() == G.number_of_edges()
        def edges(g):
            key = (lambda u, v: (u, v)) if g.is_directed() else (lambda u, v: tuple(sorted((u, v))))
            return {(*key(u, v), d["weight"]) for u, v, d in g.edges(data=True)}

        assert edges(back) == edges(G)


def test_traversals_communities_and_cores_on_a_store_equal_networkx(tmp_path):
    """On a snapshot, bfs_edges (both ways), bfs_layers, label propagation and k_core
    give exactly what NetworkX gives on the same graph, whose lists are in node order."""
    from evograph.nx_backend.interface import _adjacency_in_node_order

    for undirected in (True, False):
        edges = _random_edges(400, 1200, 7 + undirected)
        s = _store(tmp_path, edges, undirected=undirected, name=f"t{undirected}").snapshot()
        G = s.to_networkx()
        assert _adjacency_in_node_order(G, False) and _adjacency_in_node_order(G, True)
        src = edges[0][0]
        for reverse in (False, True):
            want = list(nx.bfs_edges(G, src, reverse=reverse, backend="networkx"))
            assert list(nx.bfs_edges(s, src, reverse=reverse)) == want
        want = list(nx.bfs_edges(G, src, depth_limit=2, backend="networkx"))
        assert list(nx.bfs_edges(s, src, depth_limit=2)) == want
        sources = [src, edges[1][1]]
        assert list(nx.bfs_layers(s, sources)) == list(nx.bfs_layers(G, sources, backend="networkx"))
        a, b = nx.k_core(G, 3, backend="networkx"), nx.k_core(s, 3)
        assert set(a.nodes) == set(b.nodes) and set(a.edges) == set(b.edges)
        assert b.is_directed() == (not undirected)
        if undirected:
            want = {frozenset(c) for c in nx.community.label_propagation_communities(G, backend="networkx")}
            got = nx.community.label_propagation_communities(s)
            assert {frozenset(c) for c in got} == want and len(want) > 1
        else:
            with pytest.raises(nx.NetworkXNotImplemented):
                nx.community.label_propagation_communities(s)
    with pytest.raises(nx.NetworkXError):
        next(nx.bfs_edges(s, 10**9))
