#!/usr/bin/env bash
# evograph's GAP kernels side by side with GAPBS (github.com/sbeamer/gapbs) on the same
# graph and thread count, printing evograph's time over GAPBS's for each kernel.
#
# Not part of the build: GAPBS is fetched and built outside the tree, in WORK/gapbs, or
# taken from GAPBS=DIR (a checkout, built here with make if its binaries are missing).
#
#   scripts/vs-gapbs.sh [--scale 20] [--threads 2] [--trials 5] [--sources 4]
#                       [--kernels "pr cc bfs bc sssp tc"] [--ids both] [--work DIR]
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
#
# --ids picks the vertex ids both tools see. `generated`: the Kronecker ids, of which about
# 40 % name no edge; GAPBS carries them in every array and every sweep, evograph never
# stores them. `relabelled`: the same edges with ids renumbered 0..n-1 over the vertices
# that have edges (in order of first appearance in the export, which is the order evograph
# numbers them in), so both tools hold the same vertex set in the same order and the ratio
# is the kernels' alone. `both` (the default) prints one table for each.
set -euo pipefail
cd "$(dirname "$0")/.."

scale=20 threads=2 trials=5 nsrc=4 work=${TMPDIR:-/tmp}/evograph-vs-gapbs
kernels="pr cc bfs bc sssp tc" ids=both
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --sources) nsrc=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --ids) ids=$2; shift 2 ;;
    *) echo "usage: $0 [--scale S] [--threads T] [--trials N] [--sources K] [--kernels LIST] [--ids generated|relabelled|both] [--work DIR]" >&2; exit 2 ;;
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

case $ids in
  generated) modes=generated ;;
  relabelled) modes=relabelled ;;
  both) modes="generated relabelled" ;;
  *) echo "--ids takes generated, relabelled or both" >&2; exit 2 ;;
esac

# Writes the edge list $1 with its ids renumbered 0..n-1 in order of first appearance,
# the order evograph's dictionary numbers them in: ingesting the result maps each id to
# itself, so both tools lay out the same arrays.
relabel() {
  awk '!($1 in id) { id[$1] = n++ } !($2 in id) { id[$2] = n++ } { print id[$1], id[$2] }' "$1" > "$2"
}

# Builds, once, $g.store and $g.el (by $1), then GAPBS's graphs of $g.el.
prepare() {
  if [ -f "$g.sg" ] && [ -f "$g-sym.sg" ] && [ -f "$g.wsg" ] && [ -d "$g.store" ]; then
    return
  fi
  echo "preparing $(basename "$g") in $work ..." >&2
  rm -rf "$g.store"
  "$1"
  "$eg" compact "$g.store" >&2
  awk '{ print $1, $2, 1 }' "$g.el" > "$g.wel"
  "$gapbs/converter" -f "$g.el" -b "$g.sg.tmp" > /dev/null
  "$gapbs/converter" -f "$g.el" -s -b "$g-sym.sg" > /dev/null
  "$gapbs/converter" -f "$g.wel" -wb "$g.wsg" > /dev/null
  mv "$g.sg.tmp" "$g.sg"
}
# The generated graph, ingested in its shuffled order; the edge list is its export.
generated() {
  "$eg" generate kron --scale "$scale" --shuffle -o "$g.bin" >&2
  "$eg" ingest "$g.store" "$g.bin" >&2
  "$eg" export "$g.store" > "$g.el"
}
# The generated graph's export relabelled; the store ingests that edge list.
relabelled() {
  local from=$work/k$scale
  g=$from prepare generated
  relabel "$from.el" "$g.el"
  "$eg" ingest "$g.store" "$g.el" >&2
}

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

# The table of one graph: each kernel's evograph and GAPBS times and their ratio.
compare() {
  # Sources: sources of edges spread evenly over the sorted export (vertices with an out-edge).
  local lines srcs
  lines=$(wc -l < "$g.el")
  srcs=$(awk -v n="$lines" -v k="$nsrc" 'BEGIN { for (i = 0; i < k; i++) want[int((i + 0.5) * n / k) + 1] = 1 }
    (NR in want) { print $1 }' "$g.el")
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
}

for mode in $modes; do
  case $mode in
    generated) g=$work/k$scale; prepare generated ;;
    relabelled) g=$work/k${scale}r; prepare relabelled ;;
  esac
  echo "# Kron$scale, ids $mode: $(wc -l < "$g.el") edges, $threads threads"
  compare
done
