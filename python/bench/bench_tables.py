"""Inserting from pandas and pyarrow columns against numpy arrays, in one script.

    python python/bench/bench_tables.py --graph k20.bin [--rounds 5]

``--graph`` is a binary edge list (u32 src, u32 dst). Each round inserts every edge into a
new store (durability ``none``, from open to close) from numpy arrays, from the columns of
a pandas DataFrame (int64, as pandas makes them) and of a pyarrow Table, one after
another (each round starting with the next side, each store removed after its round) so
that a noisy machine slows all alike; then the same with a ``times`` column of
one time per 65,536 edges. The report gives medians and ratios against numpy.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

import numpy as np
import pandas as pd
import pyarrow as pa

import evograph


def insert(d: str, src, dst, times=None) -> float:
    t = time.perf_counter()
    with evograph.open(d, create=True, durability="none", threads=2) as g:
        g.insert_edges(src, dst, times=times)
    took = time.perf_counter() - t
    # Stores left behind would fill the page cache with dirty pages for later rounds.
    shutil.rmtree(d)
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    e = np.fromfile(a.graph, dtype=np.uint32).reshape(-1, 2)
    src, dst = e[:, 0].astype(np.uint64), e[:, 1].astype(np.uint64)
    df = pd.DataFrame({"src": e[:, 0].astype(np.int64), "dst": e[:, 1].astype(np.int64)})
    table = pa.table({"src": e[:, 0], "dst": e[:, 1]})
    times = 1_700_000_000 + np.arange(src.shape[0]) // 65536
    df["time"] = pd.to_datetime(times, unit="s")
    sides = {
        "numpy": lambda d: insert(d, src, dst),
        "pandas": lambda d: insert(d, df.src, df.dst),
        "pyarrow": lambda d: insert(d, table["src"], table["dst"]),
        "numpy+times": lambda d: insert(d, src, dst, times),
        "pandas+times": lambda d: insert(d, df.src, df.dst, df.time),
    }
    got = {k: [] for k in sides}
    with tempfile.TemporaryDirectory() as tmp:
        names = list(sides)
        for r in range(a.rounds):
            # Each round starts with another side, so that no side always runs first.
            for k in names[r % len(names):] + names[:r % len(names)]:
                got[k].append(sides[k](os.path.join(tmp, f"{k}-{r}")))
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in got.items()),
                  flush=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    print(f"{src.shape[0]} edges, medians: " + " | ".join(
        f"{k} {med[k]:.2f} s ({med[k] / med['numpy' if 'times' not in k else 'numpy+times']:.2f}x)"
        for k in sides))


if __name__ == "__main__":
    main()
