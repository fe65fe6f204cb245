#!/usr/bin/env bash
# How much a machine's device I/O slows CPU work running beside it: the bound on how close a
# durable ingest to a disk can come to the same ingest on /dev/shm there.
#
# Two threads do a fixed amount of random stores into 64 MiB arrays (memory-bound, like the
# memtable's scatter) and report the CPU time they took (CLOCK_THREAD_CPUTIME_ID), while a
# third thread does one of:
#   none  - nothing;
#   disk  - 512 KiB O_DIRECT writes, each followed by fdatasync, into a file under --dir
#           (a sync ingest's WAL, at whatever rate the device takes);
#   tmpfs - the same writes and fdatasyncs buffered into /dev/shm, 1.5 ms apart (as many
#           system calls and wake-ups, no device).
# The same work taking more CPU time beside `disk` than beside `none` and `tmpfs` is time the
# virtual CPU lost to the device's I/O (interrupts, VM exits, a host I/O thread on the same
# core): no change to the ingest's code can win it back, only fewer bytes written.
#
#   scripts/io-cpu-penalty.sh [--dir DIR] [--rounds N]
#
# Not part of the build; needs a C compiler. Prints the median over rounds of each case.
set -euo pipefail
dir=${TMPDIR:-/tmp} rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: $0 [--dir DIR] [--rounds N]" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/probe.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { WRITE = 512 << 10, SPAN = 256 << 20 };
static volatile int stop;
static const char *path;
static int direct;
static double loop_cpu[2];

static double thread_cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *writer(void *unused) {
  (void)unused;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
  void *buf;
  if (fd < 0 || posix_memalign(&buf, 4096, WRITE)) { perror(path); exit(1); }
  memset(buf, 7, WRITE);
  for (off_t off = 0; !stop; off = (off + WRITE) % SPAN) {
    if (pwrite(fd, buf, WRITE, off) != WRITE) { perror("pwrite"); exit(1); }
    fdatasync(fd);
    if (!direct) usleep(1500);
  }
  close(fd);
  unlink(path);
  return 0;
}

static void *loop(void *arg) {
  long id = (long)arg;
  size_t n = 16 << 20;
  uint32_t *a = calloc(n, 4), x = 12345 + id;
  for (size_t i = 0; i < n; i++) a[i] = 1; /* fault the pages in before timing */
  double s = thread_cpu();
  for (int r = 0; r < 6; r++)
    for (size_t i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; a[x & (n - 1)]++; }
  loop_cpu[id] = thread_cpu() - s;
  return 0;
}

int main(int argc, char **argv) {
  path = argc > 1 ? argv[1] : 0;
  direct = argc > 2 && atoi(argv[2]);
  pthread_t w, l[2];
  if (path) pthread_create(&w, 0, writer, 0);
  for (long i = 0; i < 2; i++) pthread_create(&l[i], 0, loop, (void *)i);
  for (int i = 0; i < 2; i++) pthread_join(l[i], 0);
  stop = 1;
  if (path) pthread_join(w, 0);
  printf("%.3f\n", loop_cpu[0] + loop_cpu[1]);
  return 0;
}
EOF
cc -O2 -pthread -o "$work/probe" "$work/probe.c"
median() { sort -g | awk '{ x[NR] = $1 } END { print (NR % 2) ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2 }'; }
: > "$work/none"; : > "$work/disk"; : > "$work/tmpfs"
for _ in $(seq "$rounds"); do
  "$work/probe" >> "$work/none"
  "$work/probe" "$dir/io-cpu-penalty.$$" 1 >> "$work/disk"
  "$work/probe" "/dev/shm/io-cpu-penalty.$$" 0 >> "$work/tmpfs"
done
none=$(median < "$work/none") disk=$(median < "$work/disk") tmpfs=$(median < "$work/tmpfs")
awk -v n="$none" -v d="$disk" -v t="$tmpfs" -v r="$rounds" -v dir="$dir" 'BEGIN {
  printf "CPU seconds for the same work, median of %d rounds (writes into %s):\n", r, dir
  printf "  none  %.3f\n  tmpfs %.3f  (%.2fx)\n  disk  %.3f  (%.2fx)\n", n, t, t / n, d, d / n
}'
