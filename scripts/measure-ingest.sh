#!/usr/bin/env bash
# Ingest figures for the persistent-store issue: for each scale and medium, durable ingest
# rate, peak RSS, bytes written and stored per edge, and reopen time (clean and after kill -9).
# Usage: scripts/measure-ingest.sh [SCALES] [DIRS]   e.g. scripts/measure-ingest.sh "20 22" "/dev/shm /var/tmp"
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
B=$PWD/target/release/evograph
SCALES=${1:-"20 22"}
DIRS=${2:-"/dev/shm /var/tmp"}
DATA=${DATA:-/dev/shm/evograph-measure}
mkdir -p "$DATA"
ms() { python3 -c "import sys,time; print(f'{(time.time()-float(sys.argv[1]))*1000:.0f}')" "$1"; }
for s in $SCALES; do
  in=$DATA/k$s.bin
  [ -f "$in" ] || $B generate kron --scale "$s" --edge-factor 16 --shuffle --format bin -o "$in" 2>/dev/null
  for d in $DIRS; do
    st=$d/evograph-measure-s$s
    rm -rf "$st"
    sync
    line=$( { /usr/bin/time -f "RSS_KB %M" $B ingest "$st" "$in" --threads 2 --batch 65536 --durability sync; } 2>&1 )
    rss=$(echo "$line" | awk '/RSS_KB/ {print $2}')
    csr=$(cargo run --release -q --example static_csr -- "$in")
    summary=$(echo "$line" | grep ingested)
    js=$($B stats "$st" --json)
    clean=$($B stats "$st" --json | python3 -c "import json,sys; print(round(json.load(sys.stdin)['open_seconds']*1000))")
    # Crash: kill -9 at about 70% of the ingest time measured above.
    secs=$(echo "$summary" | sed -E 's/.* in ([0-9.]+) s:.*/\1/')
    rm -rf "$st.crash"
    $B ingest "$st.crash" "$in" --threads 2 --batch 65536 --durability sync >/dev/null 2>&1 &
    pid=$!
    sleep "$(python3 -c "print($secs*0.5)")"
    kill -9 $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    cjs=$($B stats "$st.crash" --json)
    crash=$(echo "$cjs" | python3 -c "import json,sys; print(round(json.load(sys.stdin)['open_seconds']*1000))")
    python3 - "$s" "$d" "$rss" "$clean" "$crash" "$summary" "$js" "$cjs" "$csr" <<'PY'
import json, sys
s, d, rss, clean, crash, summary, js, cjs, csr = sys.argv[1:]
j, c = json.loads(js), json.loads(cjs)
e = j["edges"]
print(f"kron{s} on {d}: {summary}")
secs = float(summary.split(" in ")[1].split(" s")[0])
print(f"  same edges to a static in-memory out+in CSR in this script: {csr}; ingest time / CSR build time = {secs/float(csr.split()[0]):.2f}")
print(f"  peak RSS {int(rss)/1024:.0f} MiB; {e} edges; written {j['bytes_written_total']/e:.2f} B/edge; "
      f"at rest {j['medium_bytes']/e:.2f} B/edge (ratio {j['bytes_written_total']/j['medium_bytes']:.2f}); "
      f"runs {[ (l['level'], l['runs']) for l in j['levels']]}")
print(f"  reopen clean {clean} ms; after kill -9 {crash} ms (WAL replayed {c['wal_bytes_replayed']/2**20:.0f} MiB, "
      f"{c['memtable_updates']} updates)")
PY
    rm -rf "$st" "$st.crash"
  done
done
