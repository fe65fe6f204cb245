#!/usr/bin/env python3
"""Readers beside a busy writer: how long a reader started during an ingest takes, and
what the readers cost the writer.

Each round ingests the same edge file into a fresh store twice, interleaved: once alone
and once with a reader started every --every seconds from --every on until the ingest
ends (each reader a separate process, timed start to exit). Reports, per start time, the
median reader time over the rounds, and the ingest's median start-to-exit time with and
without readers (their ratio is what the readers cost the writer).

  scripts/readers-beside.py --input k22.bin --rounds 5 --reader stats
  scripts/readers-beside.py --input k22.bin --reader wcc      # `run STORE wcc -o /dev/null`
  scripts/readers-beside.py --input k22.bin --reader export   # `export STORE | head`
  scripts/readers-beside.py --input k22.bin --reader python --python .venv/bin/python
      # a Python process: evograph.open(STORE, read_only=True).snapshot(), its counts
  scripts/readers-beside.py --input k22.bin --until 3   # readers started up to 3 s only

--until caps the start times, for quick comparisons of two builds: readers started late
pile up on a small machine (each replays millions of updates), which makes a 5-round run
take minutes. The ingest ratio then covers only the readers started before the cap.

A wcc reader reports its kernel's own seconds (`run --json`) beside its start-to-exit
time, so the figure to judge is the difference; a stats reader the updates it replayed
from the log (its `memtable` line).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


# A Python reader: open read-only beside the writer, take a snapshot, print what it holds.
PY_READER = """
import sys, evograph
s = evograph.open(sys.argv[1], read_only=True).snapshot()
print(s.num_vertices, s.num_edges)
"""


def reader_cmd(exe, store, kind, python="python3"):
    if kind == "python":
        return [python, "-c", PY_READER, store]
    if kind == "stats":
        return [exe, "stats", store]
    if kind == "wcc":
        return [exe, "run", store, "wcc", "--json", "-o", "/dev/null"]
    if kind == "export":
        return ["sh", "-c", f'"{exe}" export "{store}" | head -n 10']
    sys.exit(f"unknown reader {kind}")


def ingest(exe, store, inp, extra):
    shutil.rmtree(store, ignore_errors=True)
    return subprocess.Popen(
        [exe, "ingest", store, inp] + extra,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def alone(exe, store, inp, extra):
    t0 = time.monotonic()
    p = ingest(exe, store, inp, extra)
    _, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"ingest failed ({p.returncode}): {err}")
    return time.monotonic() - t0


def beside(exe, store, inp, extra, kind, every, python, until):
    """The ingest's start-to-exit time and, per start offset, the reader's (readers start
    at offsets up to `until`)."""
    t0 = time.monotonic()
    w = ingest(exe, store, inp, extra)
    readers = []  # (offset, start, process)
    k = 1
    while w.poll() is None:
        reap(readers)
        due = t0 + k * every
        now = time.monotonic()
        if k * every > until:
            time.sleep(0.01)
            continue
        if now < due:
            time.sleep(min(due - now, 0.01))
            continue
        if w.poll() is not None:
            break
        p = subprocess.Popen(
            reader_cmd(exe, store, kind, python),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        readers.append((round(k * every, 3), time.monotonic(), p))
        k += 1
    ingest_s = time.monotonic() - t0
    _, err = w.communicate()
    if w.returncode != 0:
        sys.exit(f"ingest failed ({w.returncode}): {err}")
    return ingest_s, finish(readers, kind)


def reap(readers):
    """Notes the exit time of readers that have ended (so a slow poll does not inflate them)."""
    for i, (off, start, p) in enumerate(readers):
        if not isinstance(p, tuple) and p.poll() is not None:
            readers[i] = (off, start, (p, time.monotonic()))


def finish(readers, kind):
    while any(not isinstance(p, tuple) for _, _, p in readers):
        reap(readers)
        time.sleep(0.002)
    out = {}
    for off, start, p in readers:
        p, end = p
        stdout, stderr = p.communicate()
        if p.returncode != 0:
            sys.exit(f"reader at {off} s failed: {stderr}")
        kernel, replayed = 0.0, 0
        if kind == "wcc":
            kernel = json.loads(stdout.strip().splitlines()[-1]).get("seconds", 0.0)
        if kind == "stats":
            line = next((l for l in stdout.splitlines() if l.startswith("memtable")), "")
            replayed = int(line.split()[1]) if line else 0
        out[off] = (end - start, kernel, replayed)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evograph", default=os.environ.get("EVOGRAPH", "target/release/evograph"))
    ap.add_argument("--input", required=True, help="edge file (e.g. a Kron22 .bin)")
    ap.add_argument("--work", default="/tmp/readers-beside")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--every", type=float, default=0.5)
    ap.add_argument("--until", type=float, default=float("inf"),
                    help="start no reader later than this many seconds into the ingest")
    ap.add_argument("--reader", default="stats", choices=["stats", "wcc", "export", "python"])
    ap.add_argument("--python", default="python3", help="the interpreter a python reader runs "
                    "(one where the evograph module is installed)")
    ap.add_argument("--ingest-args", default="", help="extra arguments for ingest")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    store = os.path.join(a.work, "store")
    extra = a.ingest_args.split()
    alone_s, beside_s, per_off = [], [], {}
    for r in range(a.rounds):
        alone_s.append(alone(a.evograph, store, a.input, extra))
        s, readers = beside(a.evograph, store, a.input, extra, a.reader, a.every, a.python,
                            a.until)
        beside_s.append(s)
        for off, v in readers.items():
            per_off.setdefault(off, []).append(v)
        print(f"round {r + 1}: alone {alone_s[-1]:.2f} s, with readers {s:.2f} s, "
              f"readers {len(readers)}", file=sys.stderr)
    ma, mb = statistics.median(alone_s), statistics.median(beside_s)
    print(f"ingest alone {ma:.2f} s, with a {a.reader} reader every {a.every} s "
          f"{mb:.2f} s: {mb / ma:.3f}x (medians of {a.rounds})")
    print("start_s  rounds  reader_median_s  kernel_median_s  minus_kernel_s  replayed_median")
    for off in sorted(per_off):
        v = per_off[off]
        t = statistics.median(x for x, _, _ in v)
        k = statistics.median(y for _, y, _ in v)
        d = statistics.median(x - y for x, y, _ in v)
        r = statistics.median(z for _, _, z in v)
        print(f"{off:7.2f}  {len(v):6d}  {t:15.3f}  {k:15.3f}  {d:14.3f}  {r:15.0f}")


if __name__ == "__main__":
    main()
