"""The Python API: writes, snapshots, conversions, errors, threads, and the command line
reading what Python wrote (and the reverse)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import scipy.sparse

import evograph


def edges_of(s: evograph.Snapshot) -> set:
    src, dst, _ = s._edge_columns(dedup_undirected=False)
    return set(zip(src.tolist(), dst.tolist()))


def parse_export(text: str) -> set:
    return {tuple(int(x) for x in line.split()[:2]) for line in text.splitlines()}


def test_write_read_and_aligned_arrays(store):
    with evograph.open(store, create=True) as g:
        g.insert_edges(np.array([10, 20, 30, 30]), np.array([20, 30, 10, 40]))
        s = g.snapshot()
        assert s.num_vertices == 4 and s.num_edges == 4
        ids = s.vertex_ids()
        assert ids.dtype == np.uint64 and sorted(ids.tolist()) == [10, 20, 30, 40]
        out = dict(zip(ids.tolist(), s.out_degrees().tolist()))
        inn = dict(zip(ids.tolist(), s.in_degrees().tolist()))
        assert out == {10: 1, 20: 1, 30: 2, 40: 0}
        assert inn == {10: 1, 20: 1, 30: 1, 40: 1}
        assert sorted(s.out_neighbors(30).tolist()) == [10, 40]
        assert s.in_neighbors(40).tolist() == [30]
        assert s.has_edge(30, 40) and not s.has_edge(40, 30) and not s.has_edge(1, 2)
        assert edges_of(s) == {(10, 20), (20, 30), (30, 10), (30, 40)}
        with pytest.raises(ValueError):
            ids[0] = 5  # a view of the snapshot's own ids: read-only


def test_open_never_creates_and_context_manager_closes(store):
    with pytest.raises(evograph.NotAStoreError, match="is not an evograph store"):
        evograph.open(store)
    assert not store.exists()
    with evograph.open(store, create=True) as g:
        g.insert_edges([1], [2])
        s = g.snapshot()
    assert g.closed
    with pytest.raises(evograph.ClosedError, match="is closed"):
        g.snapshot()
    with pytest.raises(evograph.ClosedError):
        g.insert_edges([3], [4])
    g.close()  # idempotent
    # A snapshot outlives its store's handle.
    assert s.num_edges == 1 and s.has_edge(1, 2)
    with evograph.open(store) as g:
        assert g.snapshot().num_edges == 1


def test_a_reader_that_only_counts_never_imports_numpy(store):
    # numpy is most of `import evograph`; a reader that opens, snapshots and counts (one
    # started beside a writer) does not wait for it, and numpy scalars still count as ints.
    with evograph.open(store, create=True) as g:
        g.insert_edges(np.array([1, 2]), np.array([2, 3]))
    code = (
        "import sys, evograph\n"
        "with evograph.open(sys.argv[1], read_only=True) as g:\n"
        "    s = g.snapshot()\n"
        "    print(s.num_vertices, s.num_edges, 'numpy' in sys.modules)\n"
        "import numpy\n"
        "print(evograph._id(numpy.uint64(7)), evograph._is_int(numpy.True_))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, store], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "2", "False", "7", "False"]


def test_second_writer_is_refused(store):
    with evograph.open(store, create=True) as g:
        g.insert_edges([1], [2])
        with pytest.raises(evograph.LockedError, match="locked by another writer"):
            evograph.open(store)
        with evograph.open(store, read_only=True) as r:
            assert r.snapshot().num_edges == 1


def test_a_reader_holds_what_a_writer_made_durable_unless_it_asks_for_more(store):
    # An hour between persists: a batch is written at once, durable only by a flush.
    with evograph.open(store, create=True, durability="interval=3600000") as g:
        g.insert_edges([1], [2])
        g.flush()
        g.insert_edges([3, 5], [4, 6])
        deadline = time.monotonic() + 20
        while True:
            with evograph.open(store, read_only=True, unacknowledged=True) as r:
                if r.snapshot().num_edges == 3:
                    break
            assert time.monotonic() < deadline, "the writer never wrote the batch"
            time.sleep(0.002)
        with evograph.open(store, read_only=True) as r:
            assert r.snapshot().num_edges == 1
    with evograph.open(store, read_only=True) as r:
        assert r.snapshot().num_edges == 3


@pytest.mark.parametrize(
    "src, dst, exc, msg",
    [
        ([1.5], [2], TypeError, "integer ids, got dtype float64"),
        ([-1], [2], ValueError, "negative id"),
        ([1, 2], [2], ValueError, "different lengths"),
        ([[1, 2]], [[2, 3]], ValueError, "one-dimensional"),
        (["a"], ["b"], TypeError, "strings"),
        (np.array([True]), np.array([False]), TypeError, "dtype bool"),
    ],
)
def test_bad_arrays_raise_clear_errors(store, src, dst, exc, msg):
    with evograph.open(store, create=True) as g:
        g.insert_edges([7], [8])
        with pytest.raises(exc, match=msg):
            g.insert_edges(src, dst)
        # Nothing already stored is lost, and nothing half-inserted.
        assert edges_of(g.snapshot()) == {(7, 8)}


def test_bad_ids_and_parameters(store):
    with evograph.open(store, create=True) as g:
        g.insert_edges([1, 2], [2, 3])
        s = g.snapshot()
        with pytest.raises(KeyError, match="vertex 99 is not in the graph"):
            s.out_neighbors(99)
        with pytest.raises(KeyError, match="vertex 99 is not in the graph"):
            s.bfs(99)
        with pytest.raises(ValueError, match="out of range"):
            s.out_neighbors(2**64)
        with pytest.raises(ValueError, match="out of range"):
            s.has_edge(-1, 2)
        with pytest.raises(TypeError, match="must be an int"):
            s.bfs("1")
        with pytest.raises(ValueError, match="unknown kernel 'nope'"):
            s.run("nope")
        with pytest.raises(TypeError, match="unknown parameter"):
            s.run("pr", itertions=3)
        with pytest.raises(ValueError, match=r"damping: 1.5 is not in \[0, 1\)"):
            s.pr(damping=1.5)
        with pytest.raises(ValueError, match="tolerance: -1 is not a finite number of 0 or more"):
            s.gap_pr(tolerance=-1.0)
        # 0 runs every sweep, as the command line's --tolerance 0 (GAPBS's -t 0).
        _, report = s.run("gap-pr", tolerance=0.0, iterations=7)
        assert report["iterations"] == 7
        with pytest.raises(ValueError, match="needs a source"):
            s.run("bfs")
        with pytest.raises(ValueError, match="is not a delivery mode"):
            s.pregel_cc(delivery="sideways")
        with pytest.raises(ValueError, match="unknown durability"):
            evograph.open(store, durability="maybe")
        with pytest.raises(ValueError, match="unweighted"):
            g.insert_edges([1], [2], weights=[2.0])
        with pytest.raises(ValueError, match="weights have different lengths"):
            g.insert_edges([1], [2], weights=[2.0, 3.0])
        with pytest.raises(ValueError, match=r"samples: 1000000000000 is not in 1..=1000000"):
            s.bc(samples=10**12)
        with pytest.raises(ValueError, match=r"threads: 1000000 is not in 0..=1024"):
            s.pr(threads=10**6)
        with pytest.raises(ValueError, match=r"iterations: 0 is not in 1..=1000000"):
            s.pr(iterations=0)
        with pytest.raises(ValueError, match="too large"):
            evograph.open(store, memtable_mb=2**50)


def test_nan_weights_and_empty_graphs(store, tmp_path):
    with evograph.open(store, create=True, weighted=True) as g:
        with pytest.raises(ValueError, match="finite"):
            g.insert_edges([1, 2], [2, 3], weights=[1.0, float("nan")])
        s = g.snapshot()
        assert s.num_vertices == 0 and s.vertex_ids().shape == (0,)
        # Kernels on an empty graph: empty results, or a clear error when they need a start.
        assert s.pr().shape == (0,) and s.wcc().shape == (0,)
        for k in (s.bc, s.gap_bfs, s.gap_sssp):
            with pytest.raises(ValueError, match="no vertices"):
                k()
        m, ids = s.to_scipy()
        assert m.shape == (0, 0)
        vt, et = s.to_arrow()
        assert vt.num_rows == 0 and et.column_names == ["src", "dst", "weight"]


def test_weights_deletions_and_alignment(store):
    with evograph.open(store, create=True, weighted=True) as g:
        g.insert_edges([1, 2, 3, 1], [2, 3, 4, 3], weights=np.array([1.0, 2.0, 0.5, 5.0]))
        g.delete_vertices([2])
        g.delete_edges([3], [4])
        g.insert_edges([4], [1], weights=[0.25])
        s = g.snapshot()
        ids = s.vertex_ids().tolist()
        assert sorted(ids) == [1, 3, 4]
        m, mids = s.to_scipy()
        assert mids.tolist() == ids and m.shape == (3, 3)
        pos = {v: i for i, v in enumerate(ids)}
        dense = m.toarray()
        assert dense[pos[1], pos[3]] == 5.0 and dense[pos[4], pos[1]] == 0.25
        assert np.count_nonzero(dense) == 2
        d = dict(zip(ids, s.sssp(4).tolist()))
        assert d == {4: 0.0, 1: 0.25, 3: 5.25}
        assert len(s.pr()) == len(ids) and len(s.out_degrees()) == len(ids)
        vt, et = s.to_arrow(kernels=["pr"])
        assert vt.column("id").to_pylist() == ids
        assert sorted(zip(et.column("src").to_pylist(), et.column("dst").to_pylist(),
                          et.column("weight").to_pylist())) == [(1, 3, 5.0), (4, 1, 0.25)]


def test_to_scipy_borrows_the_compacted_run(store):
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, 500, 4000), rng.integers(0, 500, 4000)
    with evograph.open(store, create=True) as g:
        g.insert_edges(src, dst)
        live = g.snapshot()
        g.compact()
        s = g.snapshot()
    assert s.runs == 1 and s._s.csr()[4] is True
    m, ids = s.to_scipy()
    assert isinstance(m, scipy.sparse.csr_matrix) and not m.indices.flags.writeable
    pos = {v: i for i, v in enumerate(ids.tolist())}
    want = scipy.sparse.csr_matrix(
        (np.ones(len(src)), ([pos[x] for x in src], [pos[x] for x in dst])), shape=m.shape
    )
    want.data[:] = 1.0  # duplicates summed: the store keeps an edge once
    assert (m != want).nnz == 0
    m8, _ = s.to_scipy(dtype=np.int8)
    assert m8.dtype == np.int8 and (m8 != m).nnz == 0
    m2, ids2 = live.to_scipy()  # the same graph through the general path
    assert ids2.tolist() == ids.tolist() and (m2 != m).nnz == 0
    del s, live  # the arrays keep the run alive on their own
    assert m.indptr[-1] == m.nnz and m.sum() == m.nnz


def test_networkx_matches(store):
    nx = pytest.importorskip("networkx")
    with evograph.open(store, create=True, undirected=True) as g:
        g.insert_edges([1, 2, 3], [2, 3, 1])
        g.insert_vertices([9])
        s = g.snapshot()
    h = s.to_networkx()
    assert isinstance(h, nx.Graph) and not h.is_directed()
    assert set(h.nodes) == {1, 2, 3, 9} and h.number_of_edges() == 3 == s.num_edges
    assert s.tc() == 1
    with pytest.raises(ValueError, match="max_edges"):
        s.to_networkx(max_edges=2)


def test_snapshot_stays_valid_while_another_thread_inserts(store):
    with evograph.open(store, create=True, durability="none") as g:
        g.insert_edges(np.arange(1000), np.arange(1, 1001))
        s = g.snapshot()
        before = (s.num_edges, s.pr().copy(), edges_of(s))
        done = threading.Event()
        reads = 0

        def writer() -> None:
            for k in range(20):
                base = 10_000 + k * 50_000
                g.insert_edges(np.arange(base, base + 50_000), np.arange(base + 1, base + 50_001))
            done.set()

        t = threading.Thread(target=writer)
        t.start()
        while not done.is_set():
            # Reads go on while the writer works: the GIL is released during inserts.
            assert s.num_edges == before[0]
            assert np.array_equal(s.pr(), before[1])
            reads += 1
        t.join()
        assert edges_of(s) == before[2]
        assert reads > 1, "the reader never ran while the writer held the GIL"
        assert g.snapshot().num_edges == 1000 + 20 * 50_000


def test_insert_returns_only_once_durable(store, tmp_path):
    """A process killed right after insert_edges returns keeps every edge it inserted."""
    code = f"""
import os, signal, numpy as np, evograph
g = evograph.open({str(store)!r}, create=True, durability="sync")
for k in range(5):
    g.insert_edges(np.arange(k * 1000, (k + 1) * 1000), np.arange(k * 1000 + 1, (k + 1) * 1000 + 1))
print("inserted", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == -9 and "inserted" in r.stdout, r.stderr
    with evograph.open(store) as g:
        s = g.snapshot()
        assert s.num_edges == 5000
        assert s.has_edge(0, 1) and s.has_edge(4999, 5000)


def test_cli_reads_what_python_wrote_and_back(store, tmp_path, cli):
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 2**40, 3000), rng.integers(0, 2**40, 3000)
    with evograph.open(store, create=True) as g:
        g.insert_edges(src, dst)
        g.delete_edges(src[:100], dst[:100])
    want = set(zip(src[100:].tolist(), dst[100:].tolist())) - set(zip(src[:100].tolist(), dst[:100].tolist()))
    assert parse_export(cli("export", store).stdout) == want
    assert cli("check", store).returncode == 0
    # And the reverse: a store the command line ingested, read from Python.
    el = tmp_path / "g.el"
    el.write_text("".join(f"{a} {b}\n" for a, b in zip(dst.tolist(), src.tolist())))
    other = tmp_path / "other"
    cli("ingest", other, el)
    with evograph.open(other) as g:
        s = g.snapshot()
        assert edges_of(s) == set(zip(dst.tolist(), src.tolist()))
        wcc_cli = {int(a): int(b) for a, b in (l.split() for l in cli("run", other, "wcc").stdout.splitlines())}
        assert dict(zip(s.vertex_ids().tolist(), s.wcc().tolist())) == wcc_cli


def test_vertex_program_stopped_at_its_limit_warns(store):
    with evograph.open(store, create=True) as g:
        g.insert_edges(np.arange(100), np.arange(1, 101))
        s = g.snapshot()
        with pytest.warns(RuntimeWarning, match="not final"):
            s.pregel_bfs(0, max_supersteps=3)
        values, report = s.run("pregel-bfs", source=0)
        assert report["halted"] is True and report["supersteps"] > 3
        assert values[s.vertex_ids().tolist().index(100)] == 100


def test_size_now_counts_what_a_snapshot_holds(store, tmp_path):
    # Directed (counted from the runs' headers, no snapshot) and undirected (its self loops
    # counted in the lists), across a flush, deletes in a run and in the memtable, a
    # deleted vertex, and a read-only handle.
    rng = np.random.default_rng(7)
    for undirected in (False, True):
        path = str(tmp_path / f"u{undirected}")
        with evograph.open(path, create=True, undirected=undirected) as g:
            for step in range(4):
                src = rng.integers(0, 60, 300, dtype=np.uint64)
                dst = rng.integers(0, 60, 300, dtype=np.uint64)
                g.insert_edges(src, dst)
                g.delete_edges(src[::7], dst[::7])
                if step == 1:
                    g.flush()
                    g.delete_vertices(np.array([5], dtype=np.uint64))
            s = g.snapshot()
            want = {"edges": s.num_edges, "adjacency_entries": int(s.out_degrees().sum()),
                    "vertices": s.num_vertices}
            assert g.size() == want and want["edges"] > 0
        with evograph.open(path, read_only=True) as r:
            assert r.size() == want


def test_stats_and_metadata(store):
    with evograph.open(store, create=True, memtable_mb=64, durability="interval=5") as g:
        g.insert_edges([1, 2], [2, 3])
        assert g.durability == "interval=5ms" or g.durability.startswith("interval=")
        st = g.stats()
        assert st["vertices"] == 3
        assert repr(g).startswith("<evograph.Graph")
        assert not g.undirected and not g.weighted
    assert "closed" in repr(g)
    assert os.path.isdir(g.path)
    assert "bfs" in evograph.kernels() and "pregel-cc" in evograph.kernels()


def test_to_arrow_matches_the_parquet_export(store, tmp_path, cli):
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(3)
    with evograph.open(store, create=True, undirected=True, weighted=True) as g:
        g.insert_edges(rng.integers(0, 300, 2000), rng.integers(0, 300, 2000),
                       weights=rng.random(2000))
        g.delete_vertices([5, 6])
    out = tmp_path / "pq"
    cli("export", store, "--format", "parquet", out, "--kernels", "pr,wcc", "--rows-per-file", "500")
    meta = json.loads((out / "evograph.json").read_text())
    assert len(meta["edge_files"]) > 1 and not meta["directed"] and meta["weighted"]
    with evograph.open(store, read_only=True) as g:
        vt, et = g.snapshot().to_arrow(kernels=["pr", "wcc"])
    pv = pq.read_table(out / "vertices")
    pe = pq.read_table(out / "edges")
    assert pv.schema.names == vt.schema.names and pe.schema.names == et.schema.names
    key = lambda t, cols: sorted(zip(*(t.column(c).to_pylist() for c in cols)))
    assert key(pv, pv.schema.names) == key(vt, vt.schema.names)
    assert key(pe, ["src", "dst", "weight"]) == key(et, ["src", "dst", "weight"])
    assert meta["edges"] == pe.num_rows == et.num_rows


def test_two_threads_run_kernels_on_one_snapshot_at_once(store):
    # Views a kernel builds on first use (a layered index, a copy of the in-lists for
    # PageRank's sweeps) are shared by the snapshot's users: a second thread that finds
    # one under way reads without it and must neither wait forever nor see other values.
    rng = np.random.default_rng(7)
    with evograph.open(store, create=True) as g:
        for _ in range(4):
            g.insert_edges(rng.integers(0, 3000, 20_000), rng.integers(0, 3000, 20_000))
            g.flush()
        g.delete_edges(rng.integers(0, 3000, 2_000), rng.integers(0, 3000, 2_000))
        g.flush()
        s = g.snapshot()
        assert s.runs >= 2, "a layered view is what this test is about"
        source = int(s.vertex_ids()[0])
        alone = {
            "pr": s.run("gap-pr", iterations=30, tolerance=0.0)[0],
            "wcc": s.wcc(),
            "bfs": s.bfs(source),
        }
        for _ in range(3):
            s = g.snapshot()  # fresh: its views are built again, by whichever thread is first
            got: dict = {}

            def go(name: str, f) -> None:
                got[name] = f()

            calls = {
                "pr": lambda: s.run("gap-pr", iterations=30, tolerance=0.0)[0],
                "wcc": s.wcc,
                "bfs": lambda: s.bfs(source),
            }
            threads = [threading.Thread(target=go, args=kv) for kv in calls.items()]
            threads += [threading.Thread(target=go, args=("pr2", calls["pr"]))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
                assert not t.is_alive(), "a kernel waited forever beside another"
            assert np.array_equal(got["wcc"], alone["wcc"])
            assert np.array_equal(got["bfs"], alone["bfs"])
            # Gauss-Seidel PageRank's last digits depend on how its threads interleave.
            np.testing.assert_allclose(got["pr"], alone["pr"], rtol=1e-6, atol=1e-12)
            np.testing.assert_allclose(got["pr2"], alone["pr"], rtol=1e-6, atol=1e-12)


def test_two_threads_write_at_once(store):
    with evograph.open(store, create=True, durability="sync") as g:
        def writer(base: int) -> None:
            for k in range(10):
                lo = base + k * 1000
                g.insert_edges(np.arange(lo, lo + 1000), np.arange(lo + 1, lo + 1001))

        threads = [threading.Thread(target=writer, args=(b,)) for b in (0, 1_000_000)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        s = g.snapshot()
        assert s.num_edges == 20_000
        assert s.has_edge(0, 1) and s.has_edge(1_009_999, 1_010_000)
