#!/usr/bin/env bash
# evograph's GAP kernels side by side with GAPBS (github.com/sbeamer/gapbs) on the same
# graph and thread count, printing evograph's time over GAPBS's for each kernel.
#
# Not part of the build: GAPBS is fetched and built outside the tree, in WORK/gapbs, or
# taken from GAPBS=DIR (a checkout, built here with make if its binaries are missing).
#
#   scripts/vs-gapbs.sh [--scale 20] [--threads 2] [--trials 5] [--sources 4]
#                       [--kernels "pr cc bfs bc sssp tc"] [--work DIR]
#
# The graph is evograph's Kronecker generator (shuffled, as `evograph bench` uses),
# ingested and compacted into a store, exported as an edge list and converted with
# GAPBS's converter: GAPBS sees the exported (external) ids, evograph its own dense ids,
# the same edges. PageRank runs 20 sweeps on both sides with no early stop (a tolerance
# would mean less to GAPBS, whose |V| counts the ids no edge names); SSSP weighs every
# edge 1 on both sides (delta 1); TC runs on the symmetrised graph. Times are kernel times, graph loading excluded on both sides: each
# tool runs --trials trials in one process (GAPBS -n, `evograph run --trials`) and the
# median trial counts. BFS, BC and SSSP take the same --sources sources on both sides and
# report the sum of the per-source medians. Set OMP_PROC_BIND etc. yourself if wanted.
set -euo pipefail
cd "$(dirname "$0")/.."

scale=20 threads=2 trials=5 nsrc=4 work=${TMPDIR:-/tmp}/evograph-vs-gapbs
kernels="pr cc bfs bc sssp tc"
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --sources) nsrc=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "usage: $0 [--scale S] [--threads T] [--trials N] [--sources K] [--kernels LIST] [--work DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"

gapbs=${GAPBS:-$work/gapbs}
if [ ! -d "$gapbs" ]; then
  git clone -q https://github.com/sbeamer/gapbs "$gapbs"
fi
(cd "$gapbs" && make -s bc bfs cc pr sssp tc converter >/dev/null)

if [ -z "${EVOGRAPH:-}" ]; then
  cargo build --release --locked -q -p evograph-cli
  EVOGRAPH=$PWD/target/release/evograph
fi
eg=$EVOGRAPH

g=$work/k$scale
if [ ! -f "$g.sg" ] || [ ! -f "$g-sym.sg" ] || [ ! -f "$g.wsg" ]; then
  echo "preparing Kron$scale in $work ..." >&2
  rm -rf "$g.store"
  "$eg" generate kron --scale "$scale" --shuffle -o "$g.bin" >&2
  "$eg" ingest "$g.store" "$g.bin" >&2
  "$eg" compact "$g.store" >&2
  "$eg" export "$g.store" > "$g.el"
  awk '{ print $1, $2, 1 }' "$g.el" > "$g.wel"
  "$gapbs/converter" -f "$g.el" -b "$g.sg.tmp" > /dev/null
  "$gapbs/converter" -f "$g.el" -s -b "$g-sym.sg" > /dev/null
  "$gapbs/converter" -f "$g.wel" -wb "$g.wsg" > /dev/null
  mv "$g.sg.tmp" "$g.sg"
fi

# Sources: sources of edges spread evenly over the sorted export (vertices with an out-edge).
lines=$(wc -l < "$g.el")
srcs=$(awk -v n="$lines" -v k="$nsrc" 'BEGIN { for (i = 0; i < k; i++) want[int((i + 0.5) * n / k) + 1] = 1 }
  (NR in want) { print $1 }' "$g.el")

median() { sort -g | awk '{ x[NR] = $1 } END { print (NR % 2) ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2 }'; }

# One GAPBS run: the median of its trial times.
gap() {
  OMP_NUM_THREADS=$threads "$gapbs/$1" "${@:2}" | awk '/^Trial Time:/ { print $3 }' | median
}
# One evograph run: the median of its trial times.
evo() {
  "$eg" run "$g.store" "$1" --json --threads "$threads" --trials "$trials" "${@:2}" |
    sed 's/.*"seconds":\([0-9.e+-]*\).*/\1/'
}
add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }

printf '%-6s %12s %12s %8s\n' kernel evograph_s gapbs_s ratio
for k in $kernels; do
  e=0 b=0
  case $k in
    pr) e=$(evo gap-pr --iterations 20 --tolerance 1e-300); b=$(gap pr -f "$g.sg" -n "$trials" -i 20 -t 0) ;;
    cc) e=$(evo gap-cc); b=$(gap cc -f "$g.sg" -n "$trials") ;;
    tc) e=$(evo tc); b=$(gap tc -f "$g-sym.sg" -n "$trials") ;;
    bfs|bc|sssp)
      for s in $srcs; do
        case $k in
          bfs) x=$(evo gap-bfs --source "$s"); y=$(gap bfs -f "$g.sg" -r "$s" -n "$trials") ;;
          bc) x=$(evo bc --source "$s" --samples 1); y=$(gap bc -f "$g.sg" -r "$s" -i 1 -n "$trials") ;;
          sssp) x=$(evo gap-sssp --source "$s" --delta 1); y=$(gap sssp -f "$g.wsg" -r "$s" -d 1 -n "$trials") ;;
        esac
        e=$(add "$e" "$x") b=$(add "$b" "$y")
      done ;;
    *) echo "unknown kernel $k" >&2; exit 2 ;;
  esac
  awk -v k="$k" -v e="$e" -v b="$b" 'BEGIN { printf "%-6s %12.4f %12.4f %8.2f\n", k, e, b, e / b }'
done
