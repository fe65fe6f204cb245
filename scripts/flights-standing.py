#!/usr/bin/env python3
"""Standing kernels on a real timestamped stream: daily PageRank and components of the US
flights of January-June 2001, kept current against recomputed every day.

The stream is `flights-history.py`'s: on day D a route ORIGIN -> DESTINATION exists when it
was flown in the WINDOW days up to D, and an airport exists while a route touches it. Each
day commits one batch (routes out, airports out, airports in, routes in) into a
string-keyed store, with `pr-tol` (PageRank within --tolerance of its fixed point) and
`wcc` kept current by `Graph.maintain`. For every day the script records:

- the seconds from the batch's commit until both results reflect it (`Standing.wait`);
- the seconds a recompute of the same results takes on that day's snapshot: `pr-tol` from
  the uniform vector and `gap-cc` (the fastest components kernel), snapshot included;
- that the kept results are right: the components as a recompute's partition, exactly, and
  PageRank within the tolerance of a tight recompute (L1).

It prints medians and totals over the days (the note's figures) and exits 0 when every day
is right. Usage: scripts/flights-standing.py [--parquet PATH] [--window 7]
[--tolerance 1e-6] [--work DIR]; needs the module (`pip install ./python`), pyarrow and
numpy. The parquet file is downloaded as `flights-history.py` does.
"""

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import evograph

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("flights_history", os.path.join(HERE, "flights-history.py"))
fh = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fh)


def apply_day(g, before, after):
    """Commits one day's changes: routes out, airports out, airports in, routes in (each a
    call of its own; the last one's commit is the day's)."""
    gone_routes = sorted(before - after)
    came_routes = sorted(after - before)
    gone_airports = sorted(fh.airports(before) - fh.airports(after))
    if gone_routes:
        g.delete_edges([r[0] for r in gone_routes], [r[1] for r in gone_routes])
    if gone_airports:
        g.delete_vertices(gone_airports)
    if came_routes:
        g.insert_edges([r[0] for r in came_routes], [r[1] for r in came_routes])
    return len(gone_routes) + len(came_routes) + len(gone_airports)


def same_partition(a, b):
    """Whether two labellings (aligned) induce the same partition."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parquet")
    ap.add_argument("--window", type=int, default=7)
    ap.add_argument("--tolerance", type=float, default=1e-6)
    ap.add_argument("--work", default=os.path.join("target", "data"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    days = fh.routes_by_day(fh.parquet_path(a.work, a.parquet))
    evolution = fh.windows(days, a.window)
    store = tempfile.mkdtemp(prefix="flights-standing-")
    kept_s, re_s, wrong, changes = [], [], [], 0
    with evograph.open(os.path.join(store, "S"), create=True, keys="string") as g:
        before = set()
        first_day, live = evolution[0]
        apply_day(g, before, live)
        before = live
        with g.maintain("pr-tol", tolerance=a.tolerance) as pr, g.maintain("wcc") as cc:
            for day, live in evolution[1:]:
                t0 = time.perf_counter()
                n = apply_day(g, before, live)
                before = live
                last = g.last_commit()
                if last is None or n == 0:
                    continue
                t1 = time.perf_counter()
                assert pr.wait(last[0], timeout=600) and cc.wait(last[0], timeout=600)
                kept_s.append(time.perf_counter() - t1)
                changes += n
                t2 = time.perf_counter()
                s = g.snapshot()
                fresh_pr = s.run("pr-tol", tolerance=a.tolerance)[0]
                fresh_cc = s.gap_cc()
                re_s.append(time.perf_counter() - t2)
                ps, scores = pr.values()
                cs, labels = cc.values()
                exact = ps.run("pr-tol", tolerance=1e-12)[0]
                err = float(np.abs(scores - exact).sum())
                ok_cc = same_partition(labels, cs.gap_cc()) and same_partition(fresh_cc, s.wcc())
                if err > a.tolerance or not ok_cc or float(np.abs(fresh_pr - s.run("pr-tol", tolerance=1e-12)[0]).sum()) > a.tolerance:
                    wrong.append((str(day), err, ok_cc))
    med_k, med_r = statistics.median(kept_s), statistics.median(re_s)
    print(f"flights {evolution[0][0]}..{evolution[-1][0]}, window {a.window} days, "
          f"{len(kept_s)} daily commits, {changes} changes ({changes / max(1, len(kept_s)):.0f} a day)")
    print(f"kept current (pr-tol {a.tolerance:g} and wcc): median {med_k * 1e3:.2f} ms a day, "
          f"total {sum(kept_s):.2f} s")
    print(f"recomputed (pr-tol and gap-cc, snapshot included): median {med_r * 1e3:.2f} ms a day, "
          f"total {sum(re_s):.2f} s; ratio of medians {med_r / med_k:.1f}x")
    print(f"days right: {len(kept_s) - len(wrong)} of {len(kept_s)}")
    for w in wrong[:10]:
        print("wrong:", w)
    return 0 if not wrong else 1


if __name__ == "__main__":
    sys.exit(main())
