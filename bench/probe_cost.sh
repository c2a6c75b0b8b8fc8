#!/usr/bin/env bash
# What does the probe cost? Samples a target process of THREADS threads (31
# by default, a server with a thread pool) with the probe's thread
# microstates on, at 10 ms and at the default 100 ms, ROUNDS times for SECONDS
# each, and prints the probe's own CPU (its sampling thread's scheduler
# runtime) as a percentage of one core: the median over the rounds and the
# min-max. Rows: the target's threads parked (the probe reads each thread's
# `schedstat` every sample), or waking every 5 ms like a busy server's (the
# microstates also read the `syscall` file of every thread that ran), each
# with microstates on and off: the difference is what the microstates cost.
#
# With BASE=<git revision>, the same rows (parked, microstates on) are
# measured for that revision too, built in target/bench-base, rounds
# interleaved with this tree's, to show the old figure beside the new one
# on the same machine under the same load.
#
# The figure depends on the machine (a bare timer wake-up every 10 ms costs
# 0.25-0.4 % of a core on a shared 2-core VM), so it is measured here and not
# asserted by a test.
#
#   [BASE=rev] bench/probe_cost.sh [SECONDS] [ROUNDS] [THREADS]   (defaults: 4 5 31)
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${1:-4}
ROUNDS=${2:-5}
THREADS=${3:-31}
cargo build --release -q -p stampede-probe --example probe_cost
NEW=target/release/examples/probe_cost

OLD=
if [ -n "${BASE:-}" ]; then
  . bench/lib.sh
  build_base "$BASE" -p stampede-probe --example probe_cost
  OLD=target/bench-base/release/examples/probe_cost
fi

# figure BIN INTERVAL_MS MICROSTATES WAKE_MS: one round's percentage.
figure() {
  "$1" "$2" "$SECONDS_EACH" "$THREADS" "$3" "$4" | awk '{print $5}'
}

# summary LABEL FIGURES...: median (min-max).
summary() {
  local label=$1
  shift
  printf '%s\n' "$@" | sort -g | awk -v l="$label" '
    { v[NR] = $1 }
    END {
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "  %-34s %6.3f %% of a core (%.3f-%.3f, %d rounds)\n", l, m, v[1], v[NR], NR
    }'
}

echo "probe cost, $THREADS-thread target, $SECONDS_EACH s a round, $(nproc) cores, kernel $(uname -r), $(date +%F)"
rows=("10 1 0" "10 0 0" "10 1 5" "10 0 5" "100 1 0" "100 0 0" "100 1 5" "100 0 5")
for row in "${rows[@]}"; do
  read -r interval micro wake <<<"$row"
  label="${interval} ms, microstates $([ "$micro" = 1 ] && echo on || echo off), $([ "$wake" = 0 ] && echo parked || echo "waking every ${wake} ms")"
  new=()
  old=()
  for _ in $(seq "$ROUNDS"); do
    if [ -n "$OLD" ] && [ "$micro" = 1 ] && [ "$wake" = 0 ]; then
      old+=("$(figure "$OLD" "$interval" 1 0)")
    fi
    new+=("$(figure "$NEW" "$interval" "$micro" "$wake")")
  done
  echo "$label"
  if [ ${#old[@]} -gt 0 ]; then
    summary "base $BASE:" "${old[@]}"
  fi
  summary "this tree:" "${new[@]}"
done
