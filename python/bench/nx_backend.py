"""NetworkX alone against the ``evograph`` backend, in one script.

    python python/bench/nx_backend.py --graph k20.bin [--rounds 3] [--threads 2]

``--graph`` is a binary edge list (``evograph generate kron --scale 20 --edge-factor 16
--seed 1 --format bin``), read as an undirected graph. For each function (``pagerank``,
``connected_components`` consumed whole, ``single_source_shortest_path_length`` from the
first edge's source by default; ``--functions`` adds ``bfs_layers``, ``core_number``,
``k_core`` and ``label_propagation_communities``; Kronecker graphs have self-loops, which
NetworkX's ``core_number`` and ``k_core`` refuse, so time those with
``--drop-self-loops``), each round times, one after another so that a noisy machine slows
all alike:

- ``networkx``: NetworkX alone on its graph;
- ``from-nx``: ``backend="evograph"`` on the NetworkX graph with its cache cleared, so the
  conversion into a store is paid (its cost per edge is reported apart; NaN where the
  backend declines the call);
- ``cached``: the same call again, on the converted graph NetworkX keeps;
- ``store``: the function on an evograph snapshot of the same graph (compacted), which
  NetworkX dispatches to the backend with no ``backend=``.

The report gives medians and speedups (NetworkX's median over each side's).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import networkx as nx
import numpy as np

import evograph


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def declinable(f):
    """Seconds of ``f``, or NaN when the backend declines the call (bfs_layers on a
    NetworkX graph whose adjacency is not in node order)."""
    try:
        return timed(f)
    except NotImplementedError:
        return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph", required=True, help="binary edge list (u32 src, u32 dst)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--drop-self-loops", action="store_true",
                    help="leave self-loops out of both graphs (NetworkX's core_number and k_core refuse them)")
    ap.add_argument("--functions", default="pagerank,connected_components,single_source_shortest_path_length",
                    help="comma-separated: which functions to time")
    a = ap.parse_args()
    nx.config.warnings_to_ignore.add("cache")
    edges = np.fromfile(a.graph, dtype=np.uint32).reshape(-1, 2).astype(np.uint64)
    if a.drop_self_loops:
        edges = edges[edges[:, 0] != edges[:, 1]]
    with tempfile.TemporaryDirectory() as d:
        g = evograph.open(os.path.join(d, "s"), create=True, undirected=True,
                          durability="none", threads=a.threads)
        g.insert_edges(edges[:, 0], edges[:, 1])
        g.compact()
        s = g.snapshot()
        t0 = time.perf_counter()
        G = nx.Graph()
        G.add_nodes_from(s.vertex_ids().tolist())
        G.add_edges_from(edges.tolist())
        print(f"graph: {G.number_of_nodes()} nodes, {G.number_of_edges()} edges "
              f"(NetworkX built it in {time.perf_counter() - t0:.1f} s)", flush=True)
        source = int(edges[0, 0])
        functions = {
            "pagerank": lambda H, **kw: nx.pagerank(H, **kw),
            "connected_components": lambda H, **kw: list(nx.connected_components(H, **kw)),
            "single_source_shortest_path_length":
                lambda H, **kw: nx.single_source_shortest_path_length(H, source, **kw),
            "bfs_layers": lambda H, **kw: list(nx.bfs_layers(H, source, **kw)),
            "core_number": lambda H, **kw: nx.core_number(H, **kw),
            "k_core": lambda H, **kw: nx.k_core(H, **kw),
            "label_propagation_communities":
                lambda H, **kw: list(nx.community.label_propagation_communities(H, **kw)),
        }
        for name in a.functions.split(","):
            f = functions[name]
            times = {k: [] for k in ("networkx", "from-nx", "cached", "store")}
            for r in range(a.rounds):
                times["networkx"].append(timed(lambda: f(G, backend="networkx")))

                def fresh() -> None:
                    G.__networkx_cache__.clear()
                    f(G, backend="evograph")

                times["from-nx"].append(declinable(fresh))
                times["cached"].append(declinable(lambda: f(G, backend="evograph")))
                times["store"].append(timed(lambda: f(s)))
                print(f"  {name} round {r + 1}: " + ", ".join(
                    f"{k} {v[-1]:.3f} s" for k, v in times.items()), flush=True)
            med = {k: statistics.median(v) for k, v in times.items()}
            per_edge = (med["from-nx"] - med["cached"]) / max(G.number_of_edges(), 1)
            print(f"{name}: median networkx {med['networkx']:.3f} s | "
                  + " | ".join(f"{k} {med[k]:.3f} s ({med['networkx'] / med[k]:.1f}x)"
                               for k in ("from-nx", "cached", "store"))
                  + f" | conversion {per_edge * 1e9:.0f} ns per edge", flush=True)
        g.close()


if __name__ == "__main__":
    main()
