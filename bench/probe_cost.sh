#!/usr/bin/env bash
# What does the probe cost? Samples an idle 11-thread process at 10 ms and at
# 100 ms for SECONDS, ROUNDS times each, and prints the probe's own CPU as a
# percentage of one core, then the spread over the rounds. The figure depends
# on the machine (a bare timer wake-up costs about 0.25 % of a core on a
# shared 2-core VM), so it is measured here and not asserted by a test.
#
#   bench/probe_cost.sh [SECONDS] [ROUNDS] [THREADS]   (defaults: 5 3 11)
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${1:-5}
ROUNDS=${2:-3}
THREADS=${3:-11}
cargo build --release -q -p stampede-probe --example probe_cost
BIN=target/release/examples/probe_cost

for interval in 10 100; do
  figures=()
  for _ in $(seq "$ROUNDS"); do
    line=$("$BIN" "$interval" "$SECONDS_EACH" "$THREADS")
    echo "$line"
    figures+=("$(echo "$line" | awk '{print $5}')")
  done
  printf '%s\n' "${figures[@]}" | awk -v i="$interval" '
    { v[NR] = $1; s += $1; if (NR == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
    END { printf "interval %s ms: mean %.3f %% of a core, min %.3f, max %.3f over %d rounds\n", i, s / NR, lo, hi, NR }'
done
