#!/usr/bin/env bash
# What does `--profile` cost the run it profiles? Runs the same scenario on
# each reference app unprofiled, with `stampede run --profile` (perf's
# cpu-clock samples) and with `--profile --profile-off-cpu` (plus a sample
# with its stack at every context switch), ROUNDS times, rounds rotated so
# a busy machine slows all alike, and prints per app the median throughput
# of the closed loop (requests/s, /plaintext, 32 connections), the median
# p99 of an open loop at RATE req/s (/json, slow log on: what explain
# reads), and, a count that a busy machine blurs less, the server's CPU
# milliseconds per 1,000 requests of the closed loop (the probe's CPU of
# the server's process tree: what perf adds to the server's own work, not
# perf's CPU), each with its min-max over the rounds and its ratio to the
# unprofiled run.
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

# One round: each mode once, in rotating order; rows "mode app profile rps p99_us cpu_ms_per_1k".
for round in $(seq "$ROUNDS"); do
  case $((round % 3)) in
    1) modes="plain profiled offcpu" ;;
    2) modes="offcpu plain profiled" ;;
    0) modes="profiled offcpu plain" ;;
  esac
  for mode in $modes; do
    out="$WORK/$mode-$round"
    flag=()
    [ "$mode" = profiled ] && flag=(--profile)
    [ "$mode" = offcpu ] && flag=(--profile --profile-off-cpu)
    "$STAMPEDE" run "$WORK/cost.toml" --out "$out" "${flag[@]}" >/dev/null 2>"$out.log" || true
    results=$(find "$out" -name results.json | head -1)
    [ -n "$results" ] || { echo "no results.json for $mode round $round (see $out.log)" >&2; cat "$out.log" >&2; exit 2; }
    jq -r --arg mode "$mode" '.runs[] | select(.load != null)
      | [$mode, .app, .profile, (.load.rps), ((.latency // .load).latency_us.p99),
         (if .load.requests > 0 then .server.cpu_cores_avg * .load.duration_s * 1e6 / .load.requests else 0 end)]
      | @tsv' "$results" >>"$WORK/rows.tsv"
  done
done

# Median and min-max per app, profile and mode; then the ratio to plain.
python3 - "$WORK/rows.tsv" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    mode, app, profile, rps, p99, cpu = line.rstrip("\n").split("\t")
    rows[(app, profile, mode)].append((float(rps), float(p99), float(cpu)))
def fig(vals):
    return statistics.median(vals), min(vals), max(vals)
cell = lambda f: f"{f[0]:.0f} ({f[1]:.0f}-{f[2]:.0f})"
print(f"{'app':8} {'measure':28} {'unprofiled':>20} {'--profile':>20} {'ratio':>6} {'+off-CPU':>20} {'ratio':>6}")
for app, profile in sorted({(a, p) for a, p, _ in rows}):
    plain = rows.get((app, profile, "plain"), [])
    if not plain:
        continue
    if profile == "throughput":
        measures = [("throughput req/s", 0), ("server CPU ms / 1k requests", 2)]
    else:
        measures = [("p99 µs (open loop)", 1)]
    for what, k in measures:
        a = fig([r[k] for r in plain])
        line = f"{app:8} {what:28} {cell(a):>20}"
        for mode in ("profiled", "offcpu"):
            got = rows.get((app, profile, mode), [])
            if got:
                b = fig([r[k] for r in got])
                line += f" {cell(b):>20} {b[0] / a[0] if a[0] else float('nan'):6.2f}"
        print(line)
EOF
