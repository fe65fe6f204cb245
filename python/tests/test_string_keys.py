"""Stores keyed by vertex names: writes from lists and numpy arrays of str, reads that give
names back, kernels checked against NetworkX, clear errors that store nothing, and the
command line reading what Python wrote (and the reverse)."""

from __future__ import annotations

import json
import threading

import networkx as nx
import numpy as np
import pytest

import evograph

# Package-like names: scopes, dots, dashes, spaces, non-ASCII letters, CJK, an emoji.
NAMES = [
    "curl", "openssl", "zlib", "zlib-ng", "@types/node", "lodash.merge", "requests",
    "urllib3", "ünïcødé", "日本語パッケージ", "café au lait", "pkg📦", "libc", "Ω",
]
# A small dependency graph over NAMES, with a second component and an isolated vertex.
EDGES = [
    ("curl", "openssl"), ("curl", "zlib"), ("openssl", "libc"), ("zlib", "libc"),
    ("zlib-ng", "zlib"), ("requests", "urllib3"), ("urllib3", "openssl"),
    ("ünïcødé", "日本語パッケージ"), ("日本語パッケージ", "café au lait"),
    ("café au lait", "ünïcødé"), ("@types/node", "lodash.merge"), ("pkg📦", "curl"),
]
ISOLATED = "Ω"


def edges_of(s: evograph.Snapshot) -> set:
    src, dst, _ = s._edge_columns(dedup_undirected=False)
    return set(zip(src.tolist(), dst.tolist()))


def named_store(path, edges=EDGES, **kw) -> evograph.Graph:
    g = evograph.open(path, create=True, keys="string", **kw)
    g.insert_edges([a for a, _ in edges], [b for _, b in edges])
    return g


def to_nx(edges, nodes=()) -> "nx.DiGraph":
    h = nx.DiGraph()
    h.add_nodes_from(nodes)
    h.add_edges_from(edges)
    return h


def random_named_edges(n_names: int, n_edges: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    names = [f"pkg-{i}-ß" if i % 3 else f"lib/{i}" for i in range(n_names)]
    pairs = rng.integers(0, n_names, (n_edges, 2))
    return [(names[a], names[b]) for a, b in pairs.tolist()]


# --- writing and reading back ----------------------------------------------------------


def test_create_reopen_and_read_back(store):
    with named_store(store) as g:
        g.insert_vertices([ISOLATED])
        assert g.keys == "string"
    assert g.keys == "string"  # known after close too
    with evograph.open(store) as g:
        assert g.keys == "string"
        s = g.snapshot()
    assert s.keys == "string"
    ids = s.vertex_ids()
    assert ids.dtype == object and sorted(ids.tolist()) == sorted(NAMES)
    assert all(type(x) is str for x in ids.tolist())
    with pytest.raises(ValueError):
        ids[0] = "changed"  # read-only, like the ids of an integer store
    assert sorted(s.vertex_ids().tolist()) == sorted(NAMES)
    assert edges_of(s) == set(EDGES) and s.num_edges == len(EDGES)
    out = dict(zip(ids.tolist(), s.out_degrees().tolist()))
    assert out["curl"] == 2 and out[ISOLATED] == 0 and out["libc"] == 0
    inn = dict(zip(ids.tolist(), s.in_degrees().tolist()))
    assert inn["openssl"] == 2 and inn["libc"] == 2
    on = s.out_neighbors("curl")
    assert on.dtype == object and sorted(on.tolist()) == ["openssl", "zlib"]
    assert sorted(s.in_neighbors("openssl").tolist()) == ["curl", "urllib3"]
    assert s.out_neighbors(ISOLATED).tolist() == []
    assert s.has_edge("ünïcødé", "日本語パッケージ") and not s.has_edge("日本語パッケージ", "ünïcødé")
    assert not s.has_edge("curl", "no-such-package")  # as for unknown ids: False
    assert "string keys" in repr(s)
    h = s.to_networkx()
    assert isinstance(h, nx.DiGraph) and set(h.nodes) == set(NAMES) and set(h.edges) == set(EDGES)
    m, mids = s.to_scipy()
    assert mids.tolist() == ids.tolist() and m.nnz == len(EDGES)
    with pytest.raises(evograph.ClosedError):
        g.insert_edges(["x"], ["y"])
    assert s.out_neighbors("pkg📦").tolist() == ["curl"]  # a snapshot outlives its handle


@pytest.mark.parametrize(
    "convert",
    [
        pytest.param(list, id="list"),
        pytest.param(tuple, id="tuple"),
        pytest.param(np.array, id="numpy-U"),
        pytest.param(lambda x: np.array(x, dtype=object), id="numpy-object"),
        pytest.param(lambda x: np.array(x, dtype=">U20"), id="numpy-U-big-endian"),
        pytest.param(lambda x: np.repeat(np.array(x), 2)[::2], id="numpy-U-strided"),
        pytest.param(lambda x: np.array([np.str_(v) for v in x], dtype=object), id="np.str_"),
    ],
)
def test_every_kind_of_name_array_writes_the_same_edges(store, convert):
    src, dst = [a for a, _ in EDGES], [b for _, b in EDGES]
    with evograph.open(store, create=True, keys="string") as g:
        g.insert_edges(convert(src), convert(dst))
        g.insert_vertices(convert([ISOLATED]))
        s = g.snapshot()
        assert edges_of(s) == set(EDGES)
        assert sorted(s.vertex_ids().tolist()) == sorted(NAMES)
        g.delete_edges(convert(src[:3]), convert(dst[:3]))
        g.delete_vertices(convert([ISOLATED]))
        s = g.snapshot()
        assert edges_of(s) == set(EDGES[3:]) and ISOLATED not in s.vertex_ids().tolist()


def test_deletes_including_unknown_names(store):
    with named_store(store) as g:
        # Unknown names delete nothing and are not errors; known ones go.
        g.delete_edges(["curl", "nobody", "curl"], ["openssl", "curl", "never-seen"])
        g.delete_vertices(["ghost", "zlib-ng", "phantom"])
        s = g.snapshot()
        want = set(EDGES) - {("curl", "openssl"), ("zlib-ng", "zlib")}
        assert edges_of(s) == want
        ids = s.vertex_ids().tolist()
        assert "zlib-ng" not in ids and "ghost" not in ids and "nobody" not in ids
        with pytest.raises(KeyError, match="vertex 'zlib-ng' is not in the graph"):
            s.out_neighbors("zlib-ng")
        # A deleted vertex comes back, under its name, with a new edge.
        g.insert_edges(["zlib-ng"], ["curl"])
        s2 = g.snapshot()
        assert s2.out_neighbors("zlib-ng").tolist() == ["curl"]
        assert ("zlib-ng", "zlib") not in edges_of(s2)
        # Deleting nothing, and inserting nothing, are no-ops.
        g.delete_edges([], [])
        g.insert_edges(np.array([], dtype=str), np.array([], dtype=str))
        g.insert_vertices(np.array([]))
    with evograph.open(store) as g:
        assert edges_of(g.snapshot()) == want | {("zlib-ng", "curl")}


def test_weighted_undirected_named_store(store):
    with evograph.open(store, create=True, keys="string", undirected=True, weighted=True) as g:
        g.insert_edges(["a", "b", "c"], ["b", "c", "a"], weights=[1.0, 2.5, 4.0])
        s = g.snapshot()
        assert s.num_edges == 3 and s.has_edge("b", "a")
        d = dict(zip(s.vertex_ids().tolist(), s.sssp("a").tolist()))
        assert d == {"a": 0.0, "b": 1.0, "c": 3.5}
        m, ids = s.to_scipy()
        pos = {v: i for i, v in enumerate(ids.tolist())}
        assert m[pos["c"], pos["a"]] == 4.0 and m[pos["a"], pos["c"]] == 4.0
        h = s.to_networkx()
        assert isinstance(h, nx.Graph) and h["b"]["c"]["weight"] == 2.5
        assert set(h.nodes) == {"a", "b", "c"}


# --- errors ----------------------------------------------------------------------------

LONG = "x" * 65536
BAD_INSERTS = [
    ([1, 2], [3, 4], TypeError, r"src\[0\] is an int, not a str: this store is keyed by strings"),
    (np.array([1, 2]), np.array([3, 4]), TypeError, "holds integers .*keyed by strings"),
    (np.array([1, 2], dtype=np.uint64), ["a", "b"], TypeError, "keyed by strings"),
    (np.array(["a", 5], dtype=object), ["b", "c"], TypeError, r"src\[1\] is an int, not a str"),
    (["a", None], ["b", "c"], TypeError, r"src\[1\] is None, not a str"),
    (["a", b"b"], ["b", "c"], TypeError, r"src\[1\] is a bytes, not a str"),
    (np.array([b"a"]), ["b"], TypeError, "holds bytes"),
    (np.array([1.5]), ["b"], TypeError, "must be an array of str names, got dtype float64"),
    (["a", ""], ["b", "c"], ValueError, r"src\[1\] is an empty name: vertex names may not be empty"),
    (np.array(["a", ""]), np.array(["b", "c"]), ValueError, r"src\[1\] is an empty name"),
    (["a"], [LONG], ValueError, r"dst\[0\] is a name of 65536 bytes, longer than the 65535 allowed"),
    (np.array(["a"]), np.array([LONG]), ValueError, "longer than the 65535 allowed"),
    (["é" * 40000], ["b"], ValueError, "name of 80000 bytes"),
    (["a\ud800"], ["b"], ValueError, r"src\[0\] is not valid Unicode"),
    (np.array(["a\ud800"]), np.array(["b"]), ValueError, r"src\[0\] is not valid Unicode"),
    (["a", "b"], ["c"], ValueError, r"src and dst have different lengths \(2 and 1\)"),
    (np.array([["a", "b"]]), np.array([["c", "d"]]), ValueError, "one-dimensional"),
    ("ab", ["c", "d"], TypeError, "must be a sequence of names, not a single str"),
]


@pytest.mark.parametrize("src, dst, exc, msg", BAD_INSERTS)
def test_bad_names_raise_clear_errors_and_store_nothing(store, src, dst, exc, msg):
    with named_store(store) as g:
        before = g.snapshot()
        keys_bytes = (store / "KEYS").stat().st_size
        with pytest.raises(exc, match=msg):
            g.insert_edges(src, dst)
        s = g.snapshot()
        assert edges_of(s) == set(EDGES)
        assert sorted(s.vertex_ids().tolist()) == sorted(before.vertex_ids().tolist())
        assert (store / "KEYS").stat().st_size == keys_bytes, "no name was numbered"


def test_a_bad_name_in_a_later_batch_stores_none_of_the_call(store):
    """Calls are cut into batches of 65,536; every name is checked before the first."""
    n = 150_000
    src = [f"s{i}" for i in range(n)]
    dst = [f"d{i}" for i in range(n)]
    with named_store(store) as g:
        keys_bytes = (store / "KEYS").stat().st_size
        for bad in ("", LONG, 7):
            dst[-1] = bad
            with pytest.raises((TypeError, ValueError), match=rf"dst\[{n - 1}\]"):
                g.insert_edges(src, dst)
            with pytest.raises((TypeError, ValueError), match=rf"ids\[{n - 1}\]"):
                g.insert_vertices(src[:-1] + [bad])
            with pytest.raises((TypeError, ValueError), match=rf"dst\[{n - 1}\]"):
                g.delete_edges(src, dst)
            with pytest.raises((TypeError, ValueError), match=rf"ids\[{n - 1}\]"):
                g.delete_vertices(src[:-1] + [bad])
        with pytest.raises(ValueError, match="unweighted"):
            g.insert_edges(src[:-1], dst[:-1], weights=np.ones(n - 1))
        with pytest.raises(ValueError, match="finite"):
            g.insert_edges(src[:2], dst[:2], weights=[1.0, float("inf")])
        with pytest.raises(ValueError, match="weights have different lengths"):
            g.insert_edges(src[:2], dst[:2], weights=[1.0])
        s = g.snapshot()
        assert edges_of(s) == set(EDGES) and s.num_vertices == len(NAMES) - 1
        assert (store / "KEYS").stat().st_size == keys_bytes, "no name was numbered"
    # Nothing of the refused calls was numbered either: a reopened store holds the same.
    with evograph.open(store) as g:
        assert edges_of(g.snapshot()) == set(EDGES)


def test_reads_take_names_and_refuse_ids(store):
    with named_store(store) as g:
        s = g.snapshot()
        for call in (s.out_neighbors, s.in_neighbors, s.bfs, s.khop, s.gap_bfs):
            with pytest.raises(KeyError, match="vertex 'left-pad' is not in the graph"):
                call("left-pad")
        with pytest.raises(KeyError, match="vertex 'left-pad' is not in the graph"):
            s.run("sssp", source="left-pad")
        with pytest.raises(TypeError, match="must be a str: this store is keyed by strings"):
            s.out_neighbors(0)
        with pytest.raises(TypeError, match="source must be a str"):
            s.bfs(3)
        with pytest.raises(TypeError, match="must be a str"):
            s.has_edge(1, 2)
        with pytest.raises(TypeError, match="keyed by strings"):
            s._s.out_neighbors(0)  # the native layer checks too
        with pytest.raises(TypeError, match="keyed by strings"):
            g.delete_vertices(np.arange(3))


def test_keys_option_is_checked(store, tmp_path):
    with pytest.raises(ValueError, match="unknown key kind 'text': want u64 or string"):
        evograph.open(store, create=True, keys="text")
    with pytest.raises(TypeError, match="keys must be None, 'u64' or 'string'"):
        evograph.open(store, create=True, keys=1)
    assert not store.exists()
    named_store(store).close()
    # The library's own message, as ValueError (what errors.rs maps Error::Invalid to).
    with pytest.raises(ValueError, match="is keyed by string names; it cannot be opened as keyed by integer ids") as e:
        evograph.open(store, keys="u64")
    assert not isinstance(e.value, evograph.Error)
    with evograph.open(store, keys="string") as g, evograph.open(store, read_only=True) as r:
        assert g.keys == r.keys == "string"
        with pytest.raises(ValueError, match="read-only"):
            r.insert_edges(["x"], ["y"])
        assert edges_of(r.snapshot()) == set(EDGES)
    ints = tmp_path / "ints"
    with evograph.open(ints, create=True, keys="u64") as g:
        assert g.keys == "u64" and g.snapshot().keys == "u64"
        g.insert_edges([1], [2])
        # A store keyed by integers keeps refusing names as it always has.
        with pytest.raises(TypeError, match="holds strings"):
            g.insert_edges(["a"], ["b"])
    with pytest.raises(ValueError, match="keyed by"):
        evograph.open(ints, keys="string")
    with evograph.open(ints) as g:
        assert g.keys == "u64" and edges_of(g.snapshot()) == {(1, 2)}


# --- kernels ---------------------------------------------------------------------------


def test_kernels_match_networkx(store):
    edges = random_named_edges(120, 300, seed=5) + EDGES
    with named_store(store, edges=edges) as g:
        g.insert_vertices([ISOLATED])
        s = g.snapshot()
    ids = s.vertex_ids().tolist()
    h = to_nx(edges, ids)

    labels = s.wcc()
    assert labels.dtype == object
    comps = {}
    for v, l in zip(ids, labels.tolist()):
        comps.setdefault(l, set()).add(v)
    assert all(l in members for l, members in comps.items())  # a label is a member's name
    assert sorted(map(sorted, comps.values())) == sorted(map(sorted, nx.weakly_connected_components(h)))
    assert _same_partition(s.gap_cc(), labels)
    assert _same_partition(s.pregel_cc(), labels)

    depth = dict(nx.single_source_shortest_path_length(h, "curl"))
    got = dict(zip(ids, s.bfs("curl").tolist()))
    assert {v: d for v, d in got.items() if d != 2**63 - 1} == depth

    pr = dict(zip(ids, s.pr(iterations=200).tolist()))
    want = nx.pagerank(h, alpha=0.85, tol=1e-12, max_iter=1000)
    # evograph's pr rounds contributions to float32: within 1e-6 relative.
    assert pr == pytest.approx(want, rel=1e-6, abs=1e-12)

    parents = dict(zip(ids, s.gap_bfs("curl").tolist()))
    assert parents["curl"] == "curl"
    for v, p in parents.items():
        if v not in depth:
            assert p is None
        elif v != "curl":
            assert h.has_edge(p, v) and depth[p] == depth[v] - 1

    hop_ids, hops = s.khop("curl")
    assert hop_ids.dtype == object
    assert dict(zip(hop_ids.tolist(), hops.tolist())) == {
        v: d for v, d in depth.items() if d in (1, 2)
    }
    values, report = s.run("gap-bfs", source="curl")
    assert values.tolist() == list(parents.values()) and report["kernel"] == "gap-bfs"
    assert s.run("bc", source="curl", samples=1)[1]["sources"] == ["curl"]
    assert s.lcc().dtype == np.float64 and s.tc() >= 0


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len({x for x, _ in pairs}) == len({y for _, y in pairs})


def test_labels_are_the_names_of_the_integer_stores_labels(store, tmp_path):
    """Names are numbered by first appearance: the same edges over those numbers in an
    integer store give the same labels, as numbers."""
    edges = random_named_edges(80, 200, seed=9)
    order = list(dict.fromkeys(v for e in edges for v in e))
    number = {v: i for i, v in enumerate(order)}
    with named_store(store, edges=edges) as g:
        s = g.snapshot()
    with evograph.open(tmp_path / "ints", create=True) as g:
        g.insert_edges([number[a] for a, _ in edges], [number[b] for _, b in edges])
        t = g.snapshot()
    by_id = {order[i]: k for i, k in enumerate(t.vertex_ids().tolist())}
    assert set(by_id) == set(s.vertex_ids().tolist())
    for kernel in ("cdlp", "wcc", "gap-cc", "pregel-cc"):
        named = dict(zip(s.vertex_ids().tolist(), s.run(kernel)[0].tolist()))
        numbered = dict(zip(t.vertex_ids().tolist(), t.run(kernel)[0].tolist()))
        assert named == {v: order[numbered[by_id[v]]] for v in named}, kernel
    named_pr = dict(zip(s.vertex_ids().tolist(), s.pr().tolist()))
    numbered_pr = dict(zip(t.vertex_ids().tolist(), t.pr().tolist()))
    assert named_pr == pytest.approx({v: numbered_pr[by_id[v]] for v in named_pr})


# --- the command line ------------------------------------------------------------------


def test_cli_reads_what_python_wrote(store, cli):
    # `evograph run` separates name and label by a space: names here hold none.
    edges = [e for e in random_named_edges(60, 150, seed=2) + EDGES if " " not in "".join(e)]
    with named_store(store, edges=edges) as g:
        g.delete_edges([edges[0][0]], [edges[0][1]])
        s = g.snapshot()
    want_edges = set(edges) - {edges[0]}
    lines = cli("export", store).stdout.splitlines()
    assert lines == sorted(f"{a}\t{b}" for a, b in want_edges)
    wcc_cli = dict(line.split("\t", 1) for line in cli("run", store, "wcc").stdout.splitlines())
    assert wcc_cli == dict(zip(s.vertex_ids().tolist(), s.wcc().tolist()))
    bfs_cli = dict(line.split("\t", 1) for line in cli("run", store, "bfs", "--source", "curl").stdout.splitlines())
    assert bfs_cli == {v: str(d) for v, d in zip(s.vertex_ids().tolist(), s.bfs("curl").tolist())}
    cdlp_cli = dict(line.split("\t", 1) for line in cli("run", store, "cdlp").stdout.splitlines())
    assert cdlp_cli == dict(zip(s.vertex_ids().tolist(), s.cdlp().tolist()))
    assert cli("check", store).returncode == 0


def test_python_reads_what_the_cli_ingested(tmp_path, cli):
    edges = random_named_edges(50, 120, seed=4) + EDGES
    tsv = tmp_path / "deps.tsv"
    tsv.write_text("".join(f"{a}\t{b}\n" for a, b in edges), encoding="utf-8")
    other = tmp_path / "other"
    cli("ingest", other, tsv, "--keys", "string", "--delimiter", "tab")
    with evograph.open(other) as g:
        assert g.keys == "string"
        s = g.snapshot()
        assert edges_of(s) == set(edges)
        # And Python's writes land in the store the command line made.
        g.insert_edges(["from-python"], ["curl"])
    assert "from-python\tcurl" in cli("export", other).stdout.splitlines()


def test_to_arrow_matches_the_parquet_export(store, tmp_path, cli):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(3)
    edges = random_named_edges(200, 1500, seed=3) + EDGES
    with evograph.open(store, create=True, keys="string", undirected=True, weighted=True) as g:
        g.insert_edges([a for a, _ in edges], [b for _, b in edges], weights=rng.random(len(edges)))
        g.delete_vertices(["lib/3", "pkg-4-ß"])
    out = tmp_path / "pq"
    cli("export", store, "--format", "parquet", out, "--kernels", "pr,wcc,cdlp", "--rows-per-file", "500")
    meta = json.loads((out / "evograph.json").read_text())
    assert meta["keys"] == "string" and len(meta["edge_files"]) > 1
    with evograph.open(store, read_only=True) as g:
        vt, et = g.snapshot().to_arrow(kernels=["pr", "wcc", "cdlp"])
    pv, pe = pq.read_table(out / "vertices"), pq.read_table(out / "edges")
    assert pv.schema.names == vt.schema.names and pe.schema.names == et.schema.names
    for t in (vt, pv):
        for c in ("id", "wcc", "cdlp"):
            assert t.schema.field(c).type == pa.large_string()
    for t in (et, pe):
        assert t.schema.field("src").type == t.schema.field("dst").type == pa.large_string()
    key = lambda t, cols: sorted(zip(*(t.column(c).to_pylist() for c in cols)))
    assert key(pv, pv.schema.names) == key(vt, vt.schema.names)
    assert key(pe, ["src", "dst", "weight"]) == key(et, ["src", "dst", "weight"])
    assert meta["edges"] == pe.num_rows == et.num_rows
    assert all(a <= b for a, b in zip(et.column("src").to_pylist(), et.column("dst").to_pylist()))


# --- threads ---------------------------------------------------------------------------


def test_snapshot_stays_unchanged_while_another_thread_inserts_names(store):
    with named_store(store, durability="none") as g:
        s = g.snapshot()
        before = (s.vertex_ids().tolist(), edges_of(s), s.wcc().tolist())
        done = threading.Event()
        reads = 0

        def writer() -> None:
            for k in range(10):
                src = np.array([f"w{k}-{i}" for i in range(20_000)])
                g.insert_edges(src, np.roll(src, 1))
                g.insert_edges(["curl"], [f"new-dep-{k}"])
            done.set()

        t = threading.Thread(target=writer)
        t.start()
        while not done.is_set():
            assert s.vertex_ids().tolist() == before[0]
            assert s.out_neighbors("curl").tolist() == ["openssl", "zlib"]
            reads += 1
        t.join()
        assert (s.vertex_ids().tolist(), edges_of(s), s.wcc().tolist()) == before
        assert reads > 1, "the reader never ran while the writer held the GIL"
        now = g.snapshot()
        assert now.num_edges == len(EDGES) + 10 * 20_001
        assert sorted(now.out_neighbors("curl").tolist())[-1] == "zlib"
        assert len(now.out_neighbors("curl")) == 12
