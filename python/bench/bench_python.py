"""Python against the command line, in one script: ingest, to_scipy and kernels.

    python python/bench/bench_python.py --graph k20.bin [--evograph target/release/evograph]

``--graph`` is a binary edge list (``evograph generate kron --scale 20 --format bin``).
Rounds alternate the two sides so that a noisy machine slows both alike; the report
gives medians and ratios (Python / command line; below 1 means Python is faster).

- ingest: ``evograph ingest STORE GRAPH --durability sync`` from start to exit, against
  ``evograph.open(create=True)`` + ``insert_edges`` + ``close()`` from numpy arrays
  already in memory (reading the file into numpy is reported apart).
- to_scipy: on the store compacted.
- kernels: the time the kernel itself takes inside ``evograph run --json`` (its
  ``seconds``), against the wall time of the Python call, numpy result included.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np

import evograph


def cli(binary: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True)


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", required=True, help="binary edge list (u32 src, u32 dst)")
    ap.add_argument("--evograph", default="target/release/evograph")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--kernels", default="pr,wcc,bfs,gap-pr,gap-cc,gap-bfs,pregel-cc")
    ap.add_argument("--dir", default=None, help="where to put the stores (a temp dir)")
    ap.add_argument("--json", default=None, help="write the figures here too")
    a = ap.parse_args()

    work = tempfile.mkdtemp(dir=a.dir, prefix="evograph-pybench-")
    res: dict = {"graph": a.graph, "threads": a.threads, "rounds": a.rounds}
    try:
        t_load, edges = timed(lambda: np.fromfile(a.graph, dtype=np.uint32).reshape(-1, 2))
        src = edges[:, 0].astype(np.uint64)
        dst = edges[:, 1].astype(np.uint64)
        res["records"] = int(src.shape[0])
        res["numpy_load_seconds"] = t_load
        ingest_cli, ingest_py = [], []
        for r in range(a.rounds):
            store = os.path.join(work, f"cli{r}")
            t, _ = timed(lambda: cli(a.evograph, "ingest", store, a.graph, "--format", "bin",
                                     "--durability", "sync", "--threads", str(a.threads)))
            ingest_cli.append(t)
            shutil.rmtree(store)
            store = os.path.join(work, f"py{r}")

            def py_ingest() -> None:
                g = evograph.open(store, create=True, durability="sync", threads=a.threads)
                g.insert_edges(src, dst)
                g.close()

            t, _ = timed(py_ingest)
            ingest_py.append(t)
            if r < a.rounds - 1:
                shutil.rmtree(store)
        store = os.path.join(work, f"py{a.rounds - 1}")
        med_cli, med_py = statistics.median(ingest_cli), statistics.median(ingest_py)
        res["ingest"] = {
            "cli_seconds": ingest_cli, "python_seconds": ingest_py,
            "cli_Medges_per_s": src.shape[0] / med_cli / 1e6,
            "python_Medges_per_s": src.shape[0] / med_py / 1e6,
            "python_speed_over_cli": med_cli / med_py,
        }
        # The copying path: a copy of the store with one vertex deleted (unflushed), so
        # that positions are renumbered and the view is not one plain run.
        copy = store + "-deleted"
        shutil.copytree(store, copy)
        g = evograph.open(copy, threads=a.threads)
        g.delete_vertices(np.array([int(src[0])], dtype=np.uint64))
        s = g.snapshot()
        live_t = [timed(s.to_scipy)[0] for _ in range(a.rounds)]
        res["to_scipy_copy"] = {"seconds": live_t, "median": statistics.median(live_t),
                                "runs": s.runs, "borrowed": bool(s._s.csr()[4])}
        del s
        g.close()
        shutil.rmtree(copy)
        cli(a.evograph, "compact", store)
        g = evograph.open(store, read_only=True, threads=a.threads)
        s = g.snapshot()
        scipy_t = [timed(s.to_scipy)[0] for _ in range(max(a.rounds, 5))]
        m, _ids = s.to_scipy()
        res["to_scipy"] = {"seconds": scipy_t, "median": statistics.median(scipy_t),
                           "borrowed": bool(s._s.csr()[4]), "nnz": int(m.nnz)}
        source = int(s.vertex_ids()[int(np.argmax(s.out_degrees()))])
        res["kernels"] = {}
        for k in a.kernels.split(","):
            args = ["run", store, k, "--json", "--threads", str(a.threads)]
            params = {"threads": a.threads}
            if k in ("bfs", "sssp", "pregel-bfs", "pregel-sssp", "gap-bfs", "gap-sssp"):
                args += ["--source", str(source)]
                params["source"] = source
            c, p = [], []
            for _ in range(a.rounds):
                c.append(json.loads(cli(a.evograph, *args).stdout)["seconds"])
                p.append(timed(lambda: s.run(k, **params))[0])
            res["kernels"][k] = {"cli_seconds": c, "python_seconds": p,
                                 "python_over_cli": statistics.median(p) / statistics.median(c)}
        g.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    print(f"ingest: python {res['ingest']['python_Medges_per_s']:.2f} M edges/s, "
          f"cli {res['ingest']['cli_Medges_per_s']:.2f}: python/cli speed "
          f"{res['ingest']['python_speed_over_cli']:.2f}")
    print(f"to_scipy: {res['to_scipy']['median']:.4f} s (borrowed: {res['to_scipy']['borrowed']}); "
          f"copied (one vertex deleted, {res['to_scipy_copy']['runs']} runs): "
          f"{res['to_scipy_copy']['median']:.4f} s")
    for k, v in res["kernels"].items():
        print(f"{k}: python/cli time {v['python_over_cli']:.3f} "
              f"(cli {statistics.median(v['cli_seconds']):.4f} s, "
              f"python {statistics.median(v['python_seconds']):.4f} s)")


if __name__ == "__main__":
    main()
