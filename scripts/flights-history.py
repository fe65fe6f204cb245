#!/usr/bin/env python3
"""History on a real timestamped stream: the 3 million US flights of January-June 2001.

The flights (`data/flights-3m.parquet` of the npm package `vega-datasets`) become a sliding
window of routes: on day D a route ORIGIN -> DESTINATION exists when it was flown on one of
the WINDOW days up to D, and an airport exists while a route of the window touches it. The
script writes that evolution as one `ops` stream, a batch per day behind an `@ DAY` line
(routes and airports that came into the window or left it), ingests it a month at a time
into a string-keyed store keeping all history (compacted after March), and then, for
every day:

- `evograph run STORE pr --at DAY` must give the PageRank of a store built from that day's
  routes alone (same airports, values within 1e-9 relative: the two stores sum in
  different orders);
- `evograph stats STORE --at DAY --json` must count that day's airports and routes;
- every 7th day, `evograph diff STORE --from DAY-1 --to DAY` must be that day's records
  exactly, and `--from DAY --to DAY-1` the records that undo them.

Usage: scripts/flights-history.py [--bin target/release/evograph] [--parquet PATH]
       [--window 7] [--work DIR]. Where the parquet file is not (by default in the work
directory), it is downloaded there from the npm registry (vega-datasets 3.2.1). Needs pyarrow and numpy. Exit 0 when every day matches.
"""

import argparse
import datetime as dt
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request

TARBALL = "https://registry.npmjs.org/vega-datasets/-/vega-datasets-3.2.1.tgz"
MEMBER = "package/data/flights-3m.parquet"


def parquet_path(work, given):
    """The flights file: `given`, downloaded there first if it is not there yet."""
    path = given or os.path.join(work, "flights-3m.parquet")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with urllib.request.urlopen(TARBALL) as r:
            tar = tarfile.open(fileobj=io.BytesIO(r.read()), mode="r:gz")
        with open(path, "wb") as f:
            f.write(tar.extractfile(MEMBER).read())
    return path


def routes_by_day(path):
    """{day (date): set of (origin, destination)} of the flights."""
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["date", "origin", "destination"])
    days = {}
    dates = t.column("date").to_pylist()
    for d, o, e in zip(dates, t.column("origin").to_pylist(), t.column("destination").to_pylist()):
        days.setdefault(d.date(), set()).add((o, e))
    return days


def windows(days, width):
    """[(day, routes in the window ending that day)] for every day from the first to the last."""
    first, last = min(days), max(days)
    out, d = [], first
    while d <= last:
        live = set()
        for k in range(width):
            live |= days.get(d - dt.timedelta(days=k), set())
        out.append((d, live))
        d += dt.timedelta(days=1)
    return out


def airports(routes):
    return {a for r in routes for a in r}


def stamp(day):
    return day.strftime("%Y-%m-%dT00:00:00Z")


def day_ops(before, after):
    """The records that turn the window `before` into `after`, in the order a diff lists
    them: routes out, airports out, airports in, routes in."""
    lines = [f"- {o} {d}" for o, d in sorted(before - after)]
    lines += [f"- {a}" for a in sorted(airports(before) - airports(after))]
    lines += [f"+ {a}" for a in sorted(airports(after) - airports(before))]
    lines += [f"+ {o} {d}" for o, d in sorted(after - before)]
    return lines


def write_streams(work, evolution):
    """One ops stream a month, named in order."""
    before, paths = set(), []
    for day, live in evolution:
        path = os.path.join(work, day.strftime("flights-%Y-%m.ops"))
        if not paths or paths[-1] != path:
            paths.append(path)
            open(path, "w").close()
        with open(path, "a") as f:
            f.write(f"@ {stamp(day)}\n")
            f.writelines(line + "\n" for line in day_ops(before, live))
        before = live
    return paths


def sh(*args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout


def pagerank(binary, store, out, at=None):
    cmd = [binary, "run", store, "pr", "--output", out]
    sh(*(cmd + (["--at", at] if at else [])))
    with open(out) as f:
        return {k: float(v) for k, v in (line.rstrip("\n").split("\t") for line in f)}


def same_ranks(got, want):
    if got.keys() != want.keys():
        return f"airports differ: {sorted(got.keys() ^ want.keys())[:5]}"
    worst = max((abs(got[k] - want[k]) / max(abs(want[k]), 1e-300) for k in want), default=0.0)
    return None if worst <= 1e-9 else f"PageRank differs by {worst:.3g} relative"


def check_day(binary, work, store, day, live):
    """Problems with the history's view of `day`, as text (empty when it matches)."""
    alone = os.path.join(work, "alone")
    el = os.path.join(work, "day.el")
    with open(el, "w") as f:
        f.writelines(f"{o} {d}\n" for o, d in sorted(live))
    sh(binary, "ingest", alone, el, "--keys", "string")
    want = pagerank(binary, alone, os.path.join(work, "want.txt"))
    shutil.rmtree(alone)
    got = pagerank(binary, store, os.path.join(work, "got.txt"), stamp(day))
    problems = [p for p in [same_ranks(got, want)] if p]
    st = json.loads(sh(binary, "stats", store, "--at", stamp(day), "--json"))
    if (st["vertices"], st["edges"]) != (len(airports(live)), len(live)):
        problems.append(
            f"stats counts {st['vertices']} airports and {st['edges']} routes, the day has "
            f"{len(airports(live))} and {len(live)}"
        )
    return problems


def check_diff(binary, store, prev, day, before, after):
    problems = []
    for a, b, x, y in [(prev, day, before, after), (day, prev, after, before)]:
        got = sh(binary, "diff", store, "--from", stamp(a), "--to", stamp(b)).splitlines()
        want = day_ops(x, y)
        if sorted(got) != sorted(want):
            problems.append(f"diff {a} -> {b}: {len(got)} lines, expected {len(want)}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release/evograph")
    ap.add_argument("--parquet")
    ap.add_argument("--window", type=int, default=7)
    ap.add_argument("--work")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="flights-")
    os.makedirs(work, exist_ok=True)
    evolution = windows(routes_by_day(parquet_path(work, a.parquet)), a.window)
    store = os.path.join(work, "S")
    shutil.rmtree(store, ignore_errors=True)
    # A month an ingest: each leaves a history segment, and March is merged into the
    # months before it by a compaction, which keeps the history.
    for month in write_streams(work, evolution):
        sh(a.bin, "ingest", store, month, "--format", "ops", "--keys", "string", "--history", "all")
        if "-03." in month:
            sh(a.bin, "compact", store)
    print(sh(a.bin, "log", store).splitlines()[0])
    # A day that changes nothing commits nothing: its point is the day before's commit.
    changed = [d for (d, after), (_, before) in zip(evolution, [(None, set())] + evolution) if after != before]
    log = json.loads(sh(a.bin, "log", store, "--json"))
    times = [c["time"] for c in log["commits"]]
    if times != [stamp(d) for d in changed]:
        sys.exit(f"log lists {len(times)} commits for {len(changed)} days with changes")
    failed = 0
    for i, (day, live) in enumerate(evolution):
        problems = check_day(a.bin, work, store, day, live)
        if i > 0 and i % 7 == 0:
            prev, before = evolution[i - 1]
            problems += check_diff(a.bin, store, prev, day, before, live)
        for p in problems:
            print(f"{day}: {p}")
        failed += bool(problems)
    routes = [len(live) for _, live in evolution]
    print(
        f"{len(evolution)} days ({evolution[0][0]} to {evolution[-1][0]}), window {a.window} days, "
        f"{min(routes)}-{max(routes)} routes a day, {len(changed)} days with changes: "
        f"{len(evolution) - failed} days match, {failed} differ"
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
