#!/usr/bin/env bash
# Kernels on a store larger than the memory they may use: a memory cgroup of --cap MiB
# (page cache included, no swap) against the same work uncapped, interleaved round by round
# (uncapped, capped with the default reads, capped read through the mapping, ...), each
# round from a cold page cache. Needs root (cgroups, drop_caches).
#
#   scripts/beyond-memory.sh STORE [--cap 768] [--rounds 5] [--threads 2] [--kernels "gap-pr pr"]
#
# The device's direct-read bandwidth is measured first (`dd iflag=direct` over the store's
# run files, 1 MiB and 64 MiB reads) and again in every round beside the legs (64 MiB
# reads, a streamed sweep's window at most): a shared disk's speed moves by 2x within
# minutes here, so the fraction of the device a sweep reached is taken against the median
# of the rounds' figures. Then per kernel and leg: the median wall time from start to exit (output written
# to /dev/null, close included), the bytes the process read from the device (its rusage
# block input), the kernel's time per pass, and for the sweeping kernels the in-lists'
# bytes over the time per pass as a fraction of the device's bandwidth.
set -euo pipefail

store=$(realpath "${1:?usage: $0 STORE [--cap MiB] [--rounds N] [--threads T] [--kernels LIST]}")
shift
ls "$store"/run-*.run > /dev/null || { echo "$store holds no run files" >&2; exit 1; }
cap=768 rounds=5 threads=2 kernels="gap-pr pr"
while [ $# -gt 0 ]; do
  case "$1" in
    --cap) cap=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "${EVOGRAPH:-}" ]; then
  (cd "$(dirname "$0")/.." && cargo build --release --locked -q -p evograph-cli)
  EVOGRAPH=$(realpath "$(dirname "$0")/../target/release/evograph")
fi
root=/sys/fs/cgroup/memory
[ -d "$root" ] || { echo "needs cgroup v1's memory hierarchy at $root" >&2; exit 1; }
cg=$root/evograph-beyond-$$
mkdir "$cg"
# A capped leg's processes are gone once it returns; an interrupted one's are killed, so
# that the cgroup can go.
trap 'xargs -r kill -KILL < "$cg/cgroup.procs" 2> /dev/null; sleep 0.5; rmdir "$cg" 2> /dev/null || true' EXIT
echo $((cap << 20)) > "$cg/memory.limit_in_bytes"

# The device's direct-read bandwidth over the store's run files, in GB/s, with reads of $1.
device() {
  sync
  echo 3 > /proc/sys/vm/drop_caches
  for f in "$store"/run-*.run; do
    dd if="$f" of=/dev/null bs="$1" iflag=direct 2>&1 | awk '/copied/ { print $1, $(NF-3) }'
  done | awk '{ b += $1; t += $2 } END { printf "%.3f", b / t / 1e9 }'
}
small=$(device 1M) bw=$(device 64M)
echo "device: O_DIRECT reads of 1 MiB ${small} GB/s, of 64 MiB (a window's) ${bw} GB/s;" \
  "store $(du -sh "$store" | cut -f1), cap ${cap} MiB"

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# Runs one leg cold; prints "wall_s read_bytes kernel_s passes view stream_bytes".
leg() { # capped(0|1) reads kernel
  sync
  echo 3 > /proc/sys/vm/drop_caches
  python3 - "$1" "$cg" "$EVOGRAPH" "$store" "$3" "$threads" "$2" <<'EOF'
import json, os, resource, subprocess, sys, time
capped, cg, eg, store, kernel, threads, reads = sys.argv[1:]
def enter():
    if capped == "1":
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
t = time.monotonic()
p = subprocess.Popen([eg, "run", store, kernel, "--threads", threads, "--json",
                      "--output", "/dev/null", "--sweep-reads", reads],
                     stdout=subprocess.PIPE, preexec_fn=enter)
out = p.stdout.read()
_, status, ru = os.wait4(p.pid, 0)
wall = time.monotonic() - t
if status != 0:
    sys.exit(f"{kernel} ({'capped' if capped == '1' else 'uncapped'}, {reads}) failed: status {status}")
r = json.loads(out)
passes = r.get("iterations", 1)
stream = (r.get("stream") or {}).get("bytes_read", 0)
print(wall, ru.ru_inblock * 512, r["seconds"], passes, r["view"], stream)
EOF
}

for k in $kernels; do
  declare -A rows=()
  devs=""
  for ((i = 0; i < rounds; i++)); do
    devs+="$(device 64M)"$'\n'
    rows[uncapped]+="$(leg 0 auto "$k")"$'\n'
    rows[capped]+="$(leg 1 auto "$k")"$'\n'
    rows[mapped]+="$(leg 1 mapped "$k")"$'\n'
  done
  base=$(printf '%s' "${rows[uncapped]}" | median)
  bw=$(printf '%s' "$devs" | median)
  echo "$k: device ${bw} GB/s (median of the rounds' 64 MiB direct reads: $(echo $devs))"
  for leg in uncapped capped mapped; do
    printf '%s' "${rows[$leg]}" | python3 -c '
import statistics, sys
k, leg, bw, base = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
rows = [l.split() for l in sys.stdin if l.strip()]
med = lambda i: statistics.median(float(r[i]) for r in rows)
wall, read, kern, passes = med(0), med(1), med(2), med(3)
per_pass = kern / passes
stream = med(5)
frac = f"{stream / passes / per_pass / 1e9 / bw * 100:5.1f} % of the device" if stream else ""
print(f"{k:7} {leg:9} view {rows[0][4]:14} wall {wall:7.2f} s ({wall / base:4.2f}x uncapped)  "
      f"read {read / 1e9:6.2f} GB  kernel {kern:6.2f} s  {passes:.0f} passes, "
      f"{per_pass:.3f} s/pass  {frac}")
' "$k" "$leg" "$bw" "$base"
  done
  unset rows
done
