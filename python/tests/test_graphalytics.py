"""Every LDBC Graphalytics validation graph, ingested by the command line and read from
Python: each kernel gives the command line's values, passes the official check.py against
the reference output, and agrees with SciPy and NetworkX where they compute the same
thing."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.csgraph as csgraph

import evograph

from conftest import graphalytics_dir

GRAPHS = sorted(p.name for p in (graphalytics_dir() or Path("/nonexistent")).glob("*") if p.is_dir())
KERNELS = {"BFS": "bfs", "PR": "pr", "WCC": "wcc", "CDLP": "cdlp", "LCC": "lcc", "SSSP": "sssp"}
INF = 2**63 - 1


def properties(d: Path) -> dict:
    out = {}
    for line in (d / f"{d.name}.properties").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip().removeprefix(f"graph.{d.name}.")] = v.strip()
    return out


def params(kernel: str, p: dict) -> dict:
    if kernel == "bfs":
        return {"source": int(p["bfs.source-vertex"])}
    if kernel == "sssp":
        return {"source": int(p["sssp.source-vertex"])}
    if kernel == "pr":
        return {"iterations": int(p.get("pr.num-iterations", 10)),
                "damping": float(p.get("pr.damping-factor", 0.85))}
    if kernel == "cdlp":
        return {"iterations": int(p.get("cdlp.max-iterations", 10))}
    return {}


def cli_flags(kernel: str, prm: dict) -> list:
    flags = []
    for k, v in prm.items():
        flags += [f"--{k}", str(v)]
    return flags


def fmt(x) -> str:
    """A value as `evograph run` prints it."""
    if isinstance(x, (float, np.floating)):
        return "Infinity" if math.isinf(x) else f"{x:.15e}"
    return str(int(x))


@pytest.fixture(scope="module")
def stores(tmp_path_factory, graphalytics, cli):
    """Each graph ingested once by the command line, opened read-only from Python."""
    root = tmp_path_factory.mktemp("graphalytics")
    out = {}
    for name in GRAPHS:
        d = graphalytics / name
        s = root / name
        cli("ingest", s, d / f"{name}.properties", "--format", "ldbc")
        out[name] = (d, s)
    return out


def test_every_graph_is_found(graphalytics):
    assert len(GRAPHS) >= 14, GRAPHS


@pytest.mark.parametrize("name", GRAPHS)
def test_kernels_match_cli_and_references(name, stores, cli, tmp_path):
    d, path = stores[name]
    p = properties(d)
    checked = 0
    with evograph.open(path, read_only=True) as g:
        s = g.snapshot()
        ids = s.vertex_ids()
        for suffix, kernel in KERNELS.items():
            ref = d / f"{name}-{suffix}"
            if not ref.exists():
                continue
            prm = params(kernel, p)
            values = getattr(s, kernel)(**prm)
            assert values.shape == ids.shape
            order = np.argsort(ids, kind="stable")
            lines = [f"{ids[i]} {fmt(values[i])}" for i in order]
            # The command line prints the same lines, sorted by id.
            want = cli("run", path, kernel, *cli_flags(kernel, prm)).stdout.splitlines()
            assert lines == want, f"{name} {kernel}: Python and the command line differ"
            out = tmp_path / f"{kernel}.out"
            out.write_text("\n".join(lines) + "\n")
            r = subprocess.run([sys.executable, str(d.parent / "check.py"), suffix.lower(), str(ref), str(out)],
                               capture_output=True, text=True)
            assert r.returncode == 0, f"{name} {kernel}: check.py: {r.stdout} {r.stderr}"
            checked += 1
    assert checked >= 1


def scipy_graph(s: evograph.Snapshot):
    m, ids = s.to_scipy()
    return m, ids.tolist()


@pytest.mark.parametrize("name", GRAPHS)
def test_against_scipy_and_networkx(name, stores):
    nx = pytest.importorskip("networkx")
    d, path = stores[name]
    p = properties(d)
    with evograph.open(path, read_only=True) as g:
        s = g.snapshot()
    m, ids = scipy_graph(s)
    pos = {v: i for i, v in enumerate(ids)}
    # The matrix holds exactly the input's edges (both ways when undirected).
    edges = np.loadtxt(d / f"{name}.e", dtype=np.float64, ndmin=2)
    want = set()
    for row in edges:
        a, b = int(row[0]), int(row[1])
        want.add((pos[a], pos[b]))
        if s.undirected:
            want.add((pos[b], pos[a]))
    coo = m.tocoo()
    assert set(zip(coo.row.tolist(), coo.col.tolist())) == want

    # Components: the same partition as SciPy's weak components, by every kernel.
    _, comp = csgraph.connected_components(m, directed=True, connection="weak")
    for labels in (s.wcc(), s.gap_cc(), s.pregel_cc()):
        pairs = set(zip(comp.tolist(), labels.tolist()))
        assert len(pairs) == len(set(comp.tolist())) == len(set(labels.tolist()))

    # Traversals from the graph's source (or the first vertex): SciPy's hop counts.
    src = int(p.get("bfs.source-vertex", p.get("sssp.source-vertex", ids[0])))
    hops = csgraph.shortest_path(m, directed=True, unweighted=True, indices=pos[src])
    depth = s.bfs(src)
    for i in range(len(ids)):
        assert (depth[i] == INF) == math.isinf(hops[i]) and (math.isinf(hops[i]) or depth[i] == hops[i])
    assert np.array_equal(s.pregel_bfs(src), depth)
    parent = s.gap_bfs(src)
    for i, v in enumerate(ids):
        if math.isinf(hops[i]):
            assert parent[i] == -1
        elif v != src:
            assert hops[pos[int(parent[i])]] == hops[i] - 1, f"{name}: parent of {v} is not one hop nearer"

    # Weighted distances: SciPy's Dijkstra on the stored weights.
    if s.weighted:
        dist = csgraph.dijkstra(m, directed=True, indices=pos[src])
        for got in (s.sssp(src), s.gap_sssp(src), s.pregel_sssp(src)):
            assert np.allclose(got, dist, rtol=1e-12, atol=0, equal_nan=False)

    # Undirected graphs: NetworkX's clustering and triangles, and PageRank at convergence.
    if s.undirected:
        h = s.to_networkx()
        assert h.number_of_edges() == s.num_edges
        cc = nx.clustering(h)
        assert np.allclose(s.lcc(), [cc[v] for v in ids], rtol=1e-12)
        assert s.tc() == sum(nx.triangles(h).values()) // 3
    h = s.to_networkx()
    pr_nx = nx.pagerank(h, alpha=0.85, tol=1e-13, max_iter=1000, weight=None)
    pr = s.pr(iterations=300)
    assert np.allclose(pr, [pr_nx[v] for v in ids], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", GRAPHS)
def test_networkx_backend_equals_networkx(name, stores):
    """NetworkX's functions on the store (the evograph backend) equal NetworkX's own on
    the same graph, for every function the backend has that applies to it."""
    nx = pytest.importorskip("networkx")
    d, path = stores[name]
    p = properties(d)
    with evograph.open(path, read_only=True) as g:
        s = g.snapshot()
    h = s.to_networkx()
    ours = lambda f, *a, **kw: f(s, *a, **kw)  # noqa: E731
    theirs = lambda f, *a, **kw: f(h, *a, backend="networkx", **kw)  # noqa: E731
    want, got = theirs(nx.pagerank), ours(nx.pagerank)
    assert set(got) == set(want)
    assert max(abs(got[v] - want[v]) for v in want) <= 1e-12 * max(want.values())
    parts = nx.weakly_connected_components if s.is_directed() else nx.connected_components
    assert sorted(map(sorted, ours(parts))) == sorted(map(sorted, theirs(parts)))
    src = int(p.get("bfs.source-vertex", p.get("sssp.source-vertex", s.vertex_ids()[0])))
    f = nx.single_source_shortest_path_length
    assert ours(f, src) == theirs(f, src)
    if s.weighted:
        f = nx.single_source_dijkstra_path_length
        want, got = theirs(f, src), ours(f, src)
        assert set(got) == set(want)
        assert all(math.isclose(got[v], want[v], rel_tol=1e-12) for v in want)
    if nx.number_of_selfloops(h) == 0:
        assert ours(nx.core_number) == theirs(nx.core_number)
        want, got = theirs(nx.k_core), ours(nx.k_core)
        assert set(got.nodes) == set(want.nodes) and got.number_of_edges() == want.number_of_edges()
    # to_networkx lists neighbors in node order, the order the store's traversals take.
    assert list(nx.bfs_edges(s, src)) == list(theirs(nx.bfs_edges, src))
    assert list(nx.bfs_layers(s, src)) == list(theirs(nx.bfs_layers, src))
    if s.num_vertices <= 2000:
        want, got = theirs(nx.betweenness_centrality), ours(nx.betweenness_centrality)
        assert all(math.isclose(got[v], want[v], rel_tol=1e-9, abs_tol=1e-12) for v in want)
    if not s.is_directed():
        assert ours(nx.triangles) == theirs(nx.triangles)
        lpa = nx.community.label_propagation_communities
        assert {frozenset(c) for c in ours(lpa)} == {frozenset(c) for c in theirs(lpa)}
        want, got = theirs(nx.clustering), ours(nx.clustering)
        assert all(math.isclose(got[v], want[v], rel_tol=1e-12, abs_tol=1e-15) for v in want)


@pytest.fixture(scope="module")
def packed_stores(tmp_path_factory, graphalytics, cli):
    """Each graph ingested into a store with compressed runs, then compacted (one run)."""
    root = tmp_path_factory.mktemp("graphalytics-packed")
    out = {}
    for name in GRAPHS:
        d = graphalytics / name
        s = root / name
        cli("ingest", s, d / f"{name}.properties", "--format", "ldbc", "--compress")
        cli("compact", s)
        out[name] = s
    return out


@pytest.mark.parametrize("name", GRAPHS)
def test_compressed_store_matches_plain(name, stores, packed_stores):
    d, plain_path = stores[name]
    p = properties(d)
    with evograph.open(plain_path, read_only=True) as g, \
            evograph.open(packed_stores[name], read_only=True) as c:
        assert c.stats()["compression"] == "packed"
        s, t = g.snapshot(), c.snapshot()
        ids = s.vertex_ids()
        assert np.array_equal(ids, t.vertex_ids())
        for suffix, kernel in KERNELS.items():
            if not (d / f"{name}-{suffix}").exists():
                continue
            prm = params(kernel, p)
            a, b = getattr(s, kernel)(**prm), getattr(t, kernel)(**prm)
            assert np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True), f"{name} {kernel}"
        m1, _ = s.to_scipy()
        m2, _ = t.to_scipy()
        assert (m1 != m2).nnz == 0
        coo = m1.tocoo()
        for i, j in list(zip(coo.row.tolist(), coo.col.tolist()))[:200]:
            assert t.has_edge(ids[i], ids[j])
        assert t.has_edge(ids[0], ids[0]) == s.has_edge(ids[0], ids[0])
