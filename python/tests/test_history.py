"""History from Python: snapshots as of a commit, diffs as numpy arrays, the log."""

import numpy as np
import pytest

import evograph


def edges(s):
    out = []
    for v in s.vertex_ids().tolist():
        out.extend((v, int(x)) for x in s.out_neighbors(v))
    return sorted(out)


def test_snapshots_diffs_and_the_log(tmp_path):
    g = evograph.open(tmp_path / "s", create=True, history="all")
    assert g.history == "all"
    g.insert_edges(np.array([1, 2], dtype=np.uint64), np.array([2, 3], dtype=np.uint64))
    first = g.snapshot()
    g.delete_edges(np.array([1], dtype=np.uint64), np.array([2], dtype=np.uint64))
    g.insert_edges(np.array([3], dtype=np.uint64), np.array([4], dtype=np.uint64))
    log = g.log()
    assert log["history"] == "all"
    # Every call is a commit of its own.
    assert log["lsn"].tolist() == [2, 3, 4]
    assert log["records"].tolist() == [2, 1, 1]
    then = g.snapshot(at=2)
    assert then.commit[0] == 2
    assert edges(then) == edges(first) == [(1, 2), (2, 3)]
    assert edges(g.snapshot(at="3")) == [(2, 3)]
    assert g.snapshot(at="3").commit[0] == 3
    d = g.diff(2, 4)
    got = sorted(zip(d["op"].tolist(), d["src"].tolist(), d["dst"].tolist()))
    assert got == [(-1, 1, 2), (1, 3, 4), (2, 4, 4)]
    assert (d["from_lsn"], d["to_lsn"]) == (2, 4)
    back = g.diff(4, 2)
    assert sorted(zip(back["op"].tolist(), back["src"].tolist())) == [(-2, 4), (-1, 3), (1, 1)]
    with pytest.raises(ValueError, match="outside the history kept"):
        g.snapshot(at=1)
    with pytest.raises(TypeError):
        g.snapshot(at=True)
    g.set_history("none")
    assert g.history == "none"
    with pytest.raises(ValueError, match="keeps no history"):
        g.snapshot(at=2)
    g.close()


def test_compact_derives_run_versions_and_points_read_the_same(tmp_path):
    g = evograph.open(tmp_path / "s", create=True, history="all")
    for k in range(6):
        g.insert_edges(np.array([k], dtype=np.uint64), np.array([k + 1], dtype=np.uint64))
    g.delete_edges(np.array([2], dtype=np.uint64), np.array([3], dtype=np.uint64))
    before = [edges(g.snapshot(at=lsn)) for lsn in range(1, 8)]
    sizes = [g.size(lsn) for lsn in range(1, 8)]
    assert [z["edges"] for z in sizes] == [len(e) for e in before]
    assert g.stats()["versions_files"] == 0
    g.compact()
    assert g.stats()["versions_files"] == 1
    assert [edges(g.snapshot(at=lsn)) for lsn in range(1, 8)] == before
    # Counted from the versions now, without building the graph: the same sizes.
    assert [g.size(lsn) for lsn in range(1, 8)] == sizes
    assert sizes[2]["vertices"] == 4 and sizes[2]["lsn"] == 3
    assert before[2] == [(0, 1), (1, 2), (2, 3)]
    g.close()
    with pytest.raises(ValueError, match="compact, flush or never"):
        evograph.open(tmp_path / "s", run_versions="sometimes")
    with pytest.raises(TypeError):
        evograph.open(tmp_path / "s", run_versions=1)


def test_edge_and_vertex_lifetimes(tmp_path):
    g = evograph.open(tmp_path / "s", create=True, history="all")
    u = lambda *xs: np.array(xs, dtype=np.uint64)  # noqa: E731
    g.insert_edges(u(1, 2), u(2, 3))  # LSN 2
    g.delete_edges(u(1), u(2))  # 3
    g.insert_edges(u(1), u(2))  # 4
    g.delete_vertices(u(3))  # 5: removes (2, 3) too
    e = g.edge_history(1, 2)
    assert e["lsn"].tolist() == [2, 3, 4]
    assert e["op"].tolist() == ["add", "remove", "add"]
    assert e["unix_nanos"].dtype == np.int64 and len(e["unix_nanos"]) == 3
    assert e["existed_before"] is False and e["from_lsn"] == 2
    assert g.edge_history(2, 3)["op"].tolist() == ["add", "remove"]
    assert g.edge_history(2, 3)["lsn"].tolist() == [2, 5]
    v = g.vertex_history(3)
    assert (v["lsn"].tolist(), v["op"].tolist()) == ([2, 5], ["add", "remove"])
    assert g.vertex_history(99)["lsn"].tolist() == []
    g.set_history("none")
    with pytest.raises(ValueError, match="keeps no history"):
        g.edge_history(1, 2)
    g.close()


def test_a_window_is_a_snapshot_of_what_its_moments_held(tmp_path):
    g = evograph.open(tmp_path / "s", create=True, history="all")
    u = lambda *xs: np.array(xs, dtype=np.uint64)  # noqa: E731
    g.insert_edges(u(1, 2), u(2, 3))  # LSN 2
    g.delete_edges(u(1), u(2))  # 3
    g.insert_edges(u(3), u(4))  # 4
    g.delete_edges(u(2), u(3))  # 5
    assert g.log()["lsn"].tolist() == [2, 3, 4, 5]
    w = g.window(2, 5)
    assert edges(w) == [(1, 2), (2, 3), (3, 4)]
    assert w.window == (2, 4, 2) and w.commit[0] == 2
    assert edges(g.window(3, 100)) == [(2, 3), (3, 4)]
    assert len(set(w.wcc().tolist())) == 1
    with pytest.raises(ValueError, match="must come after its start"):
        g.window(4, 3)
    g.close()


def test_rolling_gives_each_steps_values_as_a_dataframe(tmp_path):
    g = evograph.open(tmp_path / "s", create=True, history="all")
    u = lambda *xs: np.array(xs, dtype=np.uint64)  # noqa: E731
    g.insert_edges(u(1, 2), u(2, 3))  # LSN 2
    g.delete_edges(u(1), u(2))  # 3
    g.insert_edges(u(3), u(4))  # 4
    df = g.rolling("wcc", 2, 4, 1)
    assert sorted(set(df["lsn"].tolist())) == [2, 3, 4]
    for lsn in (2, 3, 4):
        s = g.snapshot(at=lsn)
        rows = df[df["lsn"] == lsn]
        assert rows["vertex"].tolist() == s.vertex_ids().tolist()
        assert rows["value"].tolist() == s.wcc().tolist()
    assert str(df["time"].dtype).startswith("datetime64[ns")
    # Windows of one commit back: LSN 3's window still holds 1 -> 2.
    w = g.rolling("wcc", 2, 4, 1, width=1)
    at3 = w[w["lsn"] == 3]
    assert len(set(at3["value"].tolist())) == 1
    # A source a step lacks: no rows for it.
    b = g.rolling("bfs", 2, 4, 1, source=4)
    assert sorted(set(b["lsn"].tolist())) == [4]
    assert g.rolling("tc", 2, 4, 2)["vertex"].tolist() == [None, None]
    g.close()


@pytest.mark.parametrize("keys", ["u64", "string"])
def test_rolling_brought_forward_equals_each_step_afresh(tmp_path, keys):
    """wcc, bfs and sssp roll forward from step to step; each step's rows are what the
    snapshot as of its commit gives, over a history that deletes vertices and names new
    ones."""
    rng = np.random.default_rng(7)
    g = evograph.open(tmp_path / "r", create=True, history="all", keys=keys, undirected=True)
    key = (lambda x: f"v{x}") if keys == "string" else (lambda x: int(x))  # noqa: E731
    for day in range(10):
        ids = 40 + 4 * day
        src, dst = rng.integers(0, ids, 30), rng.integers(0, ids, 30)
        g.insert_edges([key(x) for x in src], [key(x) for x in dst])
        gone = rng.integers(0, ids, 8)
        g.delete_edges([key(x) for x in gone], [key(x) for x in rng.integers(0, ids, 8)])
        if day % 3 == 1:
            g.delete_vertices([key(rng.integers(1, ids))])
    lsns = g.log(as_table=True)["lsn"].tolist()
    for kernel, params in [("wcc", {}), ("bfs", {"source": key(0)}), ("sssp", {"source": key(0)})]:
        df = g.rolling(kernel, lsns[0], lsns[-1], 1, **params)
        steps = 0
        for lsn in lsns:
            s = g.snapshot(at=lsn)
            rows = df[df["lsn"] == lsn]
            try:
                want = s.run(kernel, as_table=True, **params)
            except KeyError:
                assert len(rows) == 0, f"{kernel} at {lsn}: the source is not in this graph"
                continue
            assert rows["vertex"].tolist() == want["vertex"].tolist(), f"{kernel} at {lsn}"
            assert rows["value"].tolist() == want[kernel].tolist(), f"{kernel} at {lsn}"
            steps += 1
        assert steps >= 8, kernel
    g.close()


def test_time_reads_short_and_as_tables(tmp_path):
    g = evograph.open(tmp_path / "s", create=True, history="all")
    u = lambda *xs: np.array(xs, dtype=np.uint64)  # noqa: E731
    g.insert_edges(u(1, 2), u(2, 3))  # LSN 2
    g.delete_edges(u(1), u(2))  # 3
    assert edges(g.at(2)) == edges(g.snapshot(at=2)) == [(1, 2), (2, 3)]
    assert g.at("2").commit[0] == 2
    log = g.log(as_table=True)
    assert log["lsn"].tolist() == [2, 3] and log["records"].tolist() == [2, 1]
    assert str(log["time"].dtype).startswith("datetime64[ns")
    assert log.attrs["history"] == "all"
    d = g.diff(2, 3, as_table=True)
    assert d[["op", "src", "dst"]].values.tolist() == [[-1, 1, 2]]
    assert (d.attrs["from_lsn"], d.attrs["to_lsn"]) == (2, 3)
    # A date alone names its midnight UTC: every commit here is later.
    with pytest.raises(ValueError, match="outside the history kept"):
        g.at("2001-01-01")
    g.close()


def test_a_kernel_as_a_table(tmp_path):
    g = evograph.open(tmp_path / "s", create=True)
    g.insert_edges(np.array([1, 2, 5], dtype=np.uint64), np.array([2, 3, 6], dtype=np.uint64))
    s = g.snapshot()
    t = s.run("wcc", as_table=True)
    assert list(t.columns) == ["vertex", "wcc"]
    assert t["vertex"].tolist() == s.vertex_ids().tolist()
    assert t["wcc"].tolist() == s.wcc().tolist()
    assert t.attrs["kernel"] == "wcc"
    bfs = s.run("bfs", as_table=True, source=1)
    assert dict(zip(bfs["vertex"], bfs["bfs"]))[3] == 2
    tc = s.run("tc", as_table=True)
    assert tc["vertex"].tolist() == [None] and tc["tc"].tolist() == [0]
    g.close()
