#!/usr/bin/env bash
# Ingest on every medium, side by side: `evograph bench` (no kernels) for file, pmem,
# battery and memory, ROUNDS rounds in rotation so that machine noise spreads over all
# media; then, per medium, the median of each figure and its ratio to the file medium's
# median of the same rounds.
# Usage: scripts/bench-media.sh [SCALE] [DIR] [ROUNDS] [BATCH]   defaults: 20 /dev/shm 3 65536
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
B=$PWD/target/release/evograph
SCALE=${1:-20}
DIR=${2:-/dev/shm}
ROUNDS=${3:-3}
BATCH=${4:-65536}
OUT=$(mktemp -d)
for r in $(seq 1 "$ROUNDS"); do
  for m in file pmem battery memory; do
    echo "round $r: $m" >&2
    $B bench --scale "$SCALE" --threads 2 --kernels "" --medium "$m" --batch "$BATCH" \
      --dir "$DIR/evograph-media-$m" --json "$OUT/$m-$r.json" >/dev/null 2>"$OUT/$m-$r.log"
    rm -rf "$DIR/evograph-media-$m"
  done
done
python3 - "$OUT" "$ROUNDS" "$SCALE" "$DIR" "$BATCH" <<'PY'
import json, statistics, sys
out, rounds, scale, d, batch = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
keys = ["ingest.meps", "ingest.batch_p50_ms", "ingest.batch_p99_ms",
        "bytes_per_edge.written", "restart.crash_seconds"]
media = ["file", "pmem", "battery", "memory"]
def get(j, k):
    for part in k.split("."):
        j = j.get(part) if isinstance(j, dict) else None
    return j
fig = {}
for m in media:
    runs = [json.load(open(f"{out}/{m}-{r}.json")) for r in range(1, rounds + 1)]
    fig[m] = {}
    for k in keys:
        vals = [get(x, k) for x in runs if get(x, k) is not None]
        fig[m][k] = statistics.median(vals) if vals else None
print(f"Kron{scale}, --threads 2, --batch {batch}, sync durability, store under {d}, median of {rounds} rounds")
print("| figure | " + " | ".join(media) + " |")
print("|---|" + "---|" * len(media))
for k in keys:
    cells = []
    for m in media:
        v, f = fig[m][k], fig["file"][k]
        if v is None:
            cells.append("-")
        elif m == "file" or not f:
            cells.append(f"{v:.3g}")
        else:
            cells.append(f"{v:.3g} ({v / f:.2f}x)")
    print(f"| {k} | " + " | ".join(cells) + " |")
PY
