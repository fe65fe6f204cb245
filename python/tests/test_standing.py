"""Standing kernels from Python: values kept current as batches commit, against recomputes."""

import numpy as np
import pytest

import evograph


def u64(*xs):
    return np.array(xs, dtype=np.uint64)


def by_id(s, values):
    return dict(zip(s.vertex_ids().tolist(), values.tolist()))


def test_components_follow_inserts_and_deletes(tmp_path):
    with evograph.open(tmp_path / "s", create=True) as g:
        g.insert_edges(u64(1, 3), u64(2, 4))
        with g.maintain("wcc") as cc:
            start = cc.lsn
            g.insert_edges(u64(2), u64(3))
            assert cc.wait(g.last_commit()[0], timeout=30)
            s, labels = cc.values()
            assert by_id(s, labels) == by_id(s, s.wcc()) == {1: 1, 2: 1, 3: 1, 4: 1}
            ch = cc.changes_since(start)
            assert sorted(ch["vertex"].tolist()) == [3, 4]
            assert ch["old"].tolist() == [3.0, 3.0] and ch["new"].tolist() == [1.0, 1.0]
            assert ch["old_exists"].all() and ch["new_exists"].all()
            g.delete_vertices(u64(2))
            assert cc.wait(g.last_commit()[0], timeout=30)
            s, labels = cc.values()
            assert by_id(s, labels) == by_id(s, s.wcc()) == {1: 1, 3: 3, 4: 3}
            assert cc.recomputes == 0
        with pytest.raises(evograph.ClosedError, match="stopped"):
            cc.values()


def test_pagerank_stays_within_its_tolerance(tmp_path):
    rng = np.random.default_rng(7)
    with evograph.open(tmp_path / "s", create=True) as g:
        g.insert_edges(rng.integers(0, 200, 2000, dtype=np.uint64), rng.integers(0, 200, 2000, dtype=np.uint64))
        with g.maintain("pr", tolerance=1e-6) as pr:
            assert pr.kernel == "pr-tol"
            for _ in range(5):
                g.insert_edges(rng.integers(0, 250, 50, dtype=np.uint64), rng.integers(0, 250, 50, dtype=np.uint64))
                g.delete_edges(rng.integers(0, 200, 50, dtype=np.uint64), rng.integers(0, 200, 50, dtype=np.uint64))
                assert pr.wait(g.last_commit()[0], timeout=30)
                s, scores = pr.values()
                exact, _ = s.run("pr-tol", tolerance=1e-12)
                assert np.abs(scores - exact).sum() <= 1e-6


def test_bfs_from_a_named_source(tmp_path):
    with evograph.open(tmp_path / "s", create=True, keys="string") as g:
        g.insert_edges(["a", "b"], ["b", "c"])
        with g.maintain("bfs", source="a") as bfs:
            g.insert_edges(["c"], ["d"])
            assert bfs.wait(g.last_commit()[0], timeout=30)
            s, depths = bfs.values()
            assert by_id(s, depths) == {"a": 0, "b": 1, "c": 2, "d": 3}
        with pytest.raises(KeyError):
            g.maintain("bfs", source="nobody")
        with pytest.raises(ValueError, match="cannot be kept current"):
            g.maintain("lcc")
