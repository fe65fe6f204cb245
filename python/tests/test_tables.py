"""Tables in: pandas and pyarrow columns as they are, and commit times per edge as
``evograph ingest --time-column`` takes them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import evograph

T0 = 1_700_000_000


def _commits(g):
    return [(int(t), n) for t, n in zip(*np.unique(g.log(as_table=True)["unix_nanos"], return_counts=True))]


def test_dataframe_and_arrow_columns_insert_as_numpy_arrays_do(tmp_path):
    df = pd.DataFrame({"src": [1, 2, 3], "dst": [2, 3, 4], "w": [0.5, 1.0, 2.0]})
    table = pa.table({"src": pa.array([5, 6], pa.uint32()), "dst": pa.array([6, 7], pa.int64())})
    with evograph.open(tmp_path / "t", create=True, weighted=True) as g:
        g.insert_edges(df.src, df.dst, df.w)
        g.insert_edges(table["src"], table["dst"])
        g.delete_edges(df.src.iloc[:1], df.dst.iloc[:1])
        s = g.snapshot()
        assert s.num_edges == 4
        assert not s.has_edge(1, 2) and s.has_edge(6, 7)


def test_times_commit_one_batch_per_run_of_equal_times(tmp_path, cli):
    """Seconds, datetime64, timezone-aware pandas and pyarrow timestamps: the same commits,
    at the same times, as the command line's --time-column makes from the same rows."""
    n = 70_000  # the middle time's run is longer than a batch: two commits at one time
    times = np.repeat(np.array([T0, T0 + 60, T0 + 3600]), [10, n, 5])
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, 1000, times.shape[0]), rng.integers(0, 1000, times.shape[0])
    csv = tmp_path / "edges.csv"
    csv.write_text("".join(f"{s},{d},{t}\n" for s, d, t in zip(src, dst, times)))
    cli("ingest", str(tmp_path / "cli"), str(csv), "--format", "csv", "--time-column", "3",
        "--history", "all")
    want = _commits(evograph.open(tmp_path / "cli", read_only=True))
    assert [t for t, _ in want] == [t * 10**9 for t in (T0, T0 + 60, T0 + 3600)]
    ts = pd.Series(pd.to_datetime(times, unit="s", utc=True)).dt.tz_convert("America/New_York")
    forms = {
        "seconds": times,
        "float seconds": times.astype(float),
        "datetime64": times.astype("datetime64[s]"),
        "pandas tz-aware": ts,
        "pyarrow": pa.array(times * 10**9, pa.timestamp("ns", tz="UTC")),
    }
    for name, t in forms.items():
        with evograph.open(tmp_path / name, create=True, history="all") as g:
            g.insert_edges(src, dst, times=t)
            assert _commits(g) == want, name
            assert g.snapshot().num_edges == evograph.open(tmp_path / "cli", read_only=True).snapshot().num_edges


def test_times_that_go_backwards_store_nothing(tmp_path):
    with evograph.open(tmp_path / "b", create=True, history="all") as g:
        with pytest.raises(ValueError, match=r"times\[2\].*before times\[1\]"):
            g.insert_edges([1, 2, 3], [2, 3, 4], times=[T0, T0 + 5, T0 + 1])
        assert g.snapshot().num_edges == 0 and g.last_commit() is None
        g.insert_edges([1], [2], times=[T0 + 10])
        with pytest.raises(ValueError, match="before the store's last commit"):
            g.insert_edges([3], [4], times=[T0])
        with pytest.raises(ValueError, match="NaT"):
            g.insert_edges([3], [4], times=np.array(["NaT"], dtype="datetime64[s]"))
        with pytest.raises(ValueError, match="different lengths"):
            g.insert_edges([3, 4], [4, 5], times=[T0 + 20])
        assert g.snapshot().num_edges == 1
