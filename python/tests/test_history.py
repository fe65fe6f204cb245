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
