#!/usr/bin/env bash
# Why the benches take a core's busy time from its idle time: how much of a
# pinned tool's work /proc/stat's busy fields (user, nice, system, irq,
# softirq: whole ticks charged to whatever each tick interrupted) miss when
# the tool naps between bursts, beside the clock less the core's measured
# idle time (bench/lib.sh's `core_times`, what `measure` uses) and the
# process's own user+sys (`times`, the scheduler's runtime).
#
# Runs, each pinned to CPU 1 for the same duration, ROUNDS times
# interleaved: stampede and wrk against nginx on CPU 0 (13-byte body, 32
# connections), and a ten-line C loop that does W µs of work and then
# sleeps S µs (compiled here with cc), for W/S = 1000/0, 200/20 and 50/20.
# Prints each case's median seconds under the three measures and the busy
# fields as a share of the idle-based figure.
#
#   bench/accounting.sh [DURATION_S] [ROUNDS]     (defaults: 4 s, 3 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-4}
ROUNDS=${2:-3}
PORT=${BENCH_PORT:-18484}
URL="http://127.0.0.1:$PORT/"
WORK=$(mktemp -d)
trap 'kill $(cat "$WORK/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need nginx || ! need wrk; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light wrk >/dev/null
fi
. bench/lib.sh
use_stampede
serve_hello "$PORT"

cat >"$WORK/loop.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
  double work = atof(argv[1]) * 1e-6, end = now() + atof(argv[3]);
  struct timespec nap = { 0, atol(argv[2]) * 1000 };
  long n = 0;
  for (; now() < end; n++) { double until = now() + work; while (now() < until) {} if (nap.tv_nsec) nanosleep(&nap, 0); }
  printf("%ld requests in\n", n);
  return 0;
}
C
cc -O2 -o "$WORK/loop" "$WORK/loop.c"

# Busy ticks of core 1 since boot from /proc/stat's busy fields, in seconds.
busy_fields() { awk -v hz="$HZ" '$1 == "cpu1" { printf "%.2f", ($2 + $3 + $4 + $7 + $8) / hz }' /proc/stat; }

# One run of "$@" on CPU 1 (`measure`, bracketed by the busy fields):
# "<busy fields s> <requests> <process s> <clock less idle s>".
accounts() {
  local f0 m
  f0=$(busy_fields)
  m=$(measure p_stampede "$@")
  echo "$(awk -v a="$(busy_fields)" -v b="$f0" 'BEGIN { printf "%.2f", a - b }') $m"
}

CASES=("stampede-c32" "wrk-c32" "loop-1000/0" "loop-200/20" "loop-50/20")
run_case() {
  case $1 in
    stampede-c32) accounts "$STAMPEDE" load -t 1 -c 32 -d "${DURATION}s" "$URL" ;;
    wrk-c32)      accounts wrk -t 1 -c 32 -d "${DURATION}s" "$URL" ;;
    loop-*)       local ws=${1#loop-}; accounts "$WORK/loop" "${ws%/*}" "${ws#*/}" "$DURATION" ;;
  esac
}

echo "each case on CPU 1 for ${DURATION}s, $ROUNDS interleaved round(s); $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
for round in $(seq "$ROUNDS"); do
  check_quiet
  for c in "${CASES[@]}"; do
    echo "$c $(run_case "$c")"
  done
done | python3 -c '
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for line in sys.stdin:
    case, fields, _requests, process, idle = line.split()
    runs[case].append([float(fields), float(idle), float(process)])
print("{:<14} {:>14} {:>13} {:>10} {:>12}".format("case", "busy fields s", "clock-idle s", "process s", "fields/idle"))
for case, rows in runs.items():
    f, i, p = (statistics.median(col) for col in zip(*rows))
    print(f"{case:<14} {f:>14.2f} {i:>13.2f} {p:>10.2f} {100 * f / i:>11.0f}%")
print("medians over rounds; busy fields: /proc/stat user+nice+system+irq+softirq ticks; clock-idle: bench/lib.sh core_times")
'
