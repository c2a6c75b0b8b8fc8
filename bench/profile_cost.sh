#!/usr/bin/env bash
# What does `--profile` cost the run it profiles? Runs the same scenario on
# each reference app with and without `stampede run --profile` (perf on and
# off the CPU), ROUNDS times, rounds interleaved so a busy machine slows both
# alike, and prints per app the median throughput of the closed loop
# (requests/s, /plaintext, 32 connections) and the median p99 of an open
# loop at RATE req/s (/json, slow log on: what explain reads), with and
# without the profiler, the ratio and the min-max over the rounds.
#
# The figures depend on the machine and what else runs on it: take them on a
# quiet machine (the lead does; see README). Needs perf (`perf record -e
# cpu-clock -g` must work) and the apps' toolchains (scripts/deps.sh).
#
#   bench/profile_cost.sh [APPS] [ROUNDS] [SECONDS] [RATE]   (defaults: "go rust" 3 3 500)
set -euo pipefail
cd "$(dirname "$0")/.."

APPS=${1:-go rust}
ROUNDS=${2:-3}
SECONDS_EACH=${3:-3}
RATE=${4:-500}
. bench/lib.sh
use_stampede
perf record -e cpu-clock -g -o /dev/null true >/dev/null 2>&1 || { echo "perf record does not work here" >&2; exit 2; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

apps_list=$(printf '"%s",' $APPS)
cat >"$WORK/cost.toml" <<EOF
name = "profile-cost"
description = "bench/profile_cost.sh: throughput and p99 with and without --profile"
apps = [${apps_list%,}]
iterations = 1
check = false

[[profiles]]
name = "throughput"
path = "/plaintext"
connections = 32
duration = "${SECONDS_EACH}s"
warmup = "1s"

[[profiles]]
name = "latency"
path = "/json"
connections = 32
duration = "${SECONDS_EACH}s"
warmup = "1s"
rate = $RATE
slow_log = 200

[pinning]
server = "0"
loadgen = "1"
EOF

# One round: each mode once, in alternating order; rows "mode app profile rps p99_us".
for round in $(seq "$ROUNDS"); do
  modes="plain profiled"
  [ $((round % 2)) -eq 0 ] && modes="profiled plain"
  for mode in $modes; do
    out="$WORK/$mode-$round"
    flag=()
    [ "$mode" = profiled ] && flag=(--profile)
    "$STAMPEDE" run "$WORK/cost.toml" --out "$out" "${flag[@]}" >/dev/null 2>"$out.log" || true
    results=$(find "$out" -name results.json | head -1)
    [ -n "$results" ] || { echo "no results.json for $mode round $round (see $out.log)" >&2; cat "$out.log" >&2; exit 2; }
    jq -r --arg mode "$mode" '.runs[] | select(.load != null)
      | [$mode, .app, .profile, (.load.rps), ((.latency // .load).latency_us.p99)] | @tsv' "$results" >>"$WORK/rows.tsv"
  done
done

# Median and min-max per app, profile and mode; then the ratio profiled/plain.
python3 - "$WORK/rows.tsv" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    mode, app, profile, rps, p99 = line.rstrip("\n").split("\t")
    rows[(app, profile, mode)].append((float(rps), float(p99)))
def fig(vals):
    return statistics.median(vals), min(vals), max(vals)
print(f"{'app':8} {'measure':22} {'unprofiled':>22} {'profiled':>22} {'ratio':>6}")
for app, profile in sorted({(a, p) for a, p, _ in rows}):
    plain, prof = rows.get((app, profile, "plain"), []), rows.get((app, profile, "profiled"), [])
    if not plain or not prof:
        continue
    what, k = ("throughput req/s", 0) if profile == "throughput" else ("p99 µs (open loop)", 1)
    a, b = fig([r[k] for r in plain]), fig([r[k] for r in prof])
    cell = lambda f: f"{f[0]:.0f} ({f[1]:.0f}-{f[2]:.0f})"
    print(f"{app:8} {what:22} {cell(a):>22} {cell(b):>22} {b[0] / a[0] if a[0] else float('nan'):6.2f}")
EOF
