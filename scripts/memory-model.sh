#!/usr/bin/env bash
# The README's memory model, measured: peak anonymous memory (private DRAM: heap and
# anonymous mappings, not the page cache of mapped runs) of ingest and of each kernel, per
# vertex stored and per edge.
#
#   scripts/memory-model.sh [--scale 22] [--threads 2] [--work DIR] [--kernels "..."]
#
# Each command runs alone; its `RssAnon` (/proc/PID/status) is sampled every 10 ms and
# the largest sample counts, so a peak shorter than that can be missed. A process's
# baseline (the binary and its libraries, about 3 MB) is included. Ingest runs twice, with
# the default budget and with a 64 MiB one; kernels run on the compacted store (one run)
# and on the store as the default ingest leaves it (several runs: the layered view).
set -euo pipefail
cd "$(dirname "$0")/.."

scale=22 threads=2 work=${TMPDIR:-/tmp}/evograph-memory-model
kernels="pr gap-pr wcc gap-cc gap-bfs bfs sssp cdlp lcc"
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    *) echo "usage: $0 [--scale S] [--threads T] [--work DIR] [--kernels LIST]" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
if [ -z "${EVOGRAPH:-}" ]; then
  cargo build --release --locked -q -p evograph-cli
  EVOGRAPH=$PWD/target/release/evograph
fi
eg=$EVOGRAPH

# Runs "$@" with stdout discarded and prints its peak RssAnon in bytes.
peak_anon() {
  "$@" > /dev/null &
  local pid=$! peak=0 kb
  while kb=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status" 2> /dev/null) && [ -n "$kb" ]; do
    [ "$kb" -gt "$peak" ] && peak=$kb
    sleep 0.01
  done
  wait "$pid"
  echo $((peak * 1024))
}

g=$work/k$scale
[ -f "$g.bin" ] || "$eg" generate kron --scale "$scale" -o "$g.bin" >&2

row() { # label bytes vertices edges
  awk -v l="$1" -v b="$2" -v n="$3" -v m="$4" \
    'BEGIN { printf "%-22s %10.1f %12.1f %10.2f\n", l, b / 1048576, b / n, b / m }'
}

rm -rf "$g.live" "$g.small" "$g.one"
ingest=$(peak_anon "$eg" ingest "$g.live" "$g.bin" --threads "$threads" --durability sync)
small=$(peak_anon "$eg" ingest "$g.small" "$g.bin" --threads "$threads" --durability sync --memtable-mb 64)
cp -r "$g.live" "$g.one"
"$eg" compact "$g.one" > /dev/null
read -r n m runs < <("$eg" run "$g.live" wcc --json --output /dev/null --threads "$threads" |
  python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["vertices"], r["edges"], r["runs"])')

# A source for the traversals: the first vertex of the export (one with an out-edge).
src=$( ("$eg" export "$g.one" || true) | head -1 | cut -d' ' -f1)

echo "# Kron$scale: $n vertices, $m edges; store as ingest leaves it: $runs runs; $threads threads"
printf '%-22s %10s %12s %10s\n' command peak_MiB B_per_vertex B_per_edge
row "ingest (1024 MiB)" "$ingest" "$n" "$m"
row "ingest (64 MiB)" "$small" "$n" "$m"
for k in $kernels; do
  case $k in *bfs|*sssp|bc) from=(--source "$src") ;; *) from=() ;; esac
  for s in one live; do
    b=$(peak_anon "$eg" run "$g.$s" "$k" "${from[@]}" --threads "$threads" --output /dev/null)
    row "$k ($s)" "$b" "$n" "$m"
  done
done
