#!/usr/bin/env bash
# How often does `stampede compare` call noise a change (false-positive rate)
# and how often does it find a known small slowdown (power), on results of
# the main job's shape (scenarios/shootout.toml: 3 server starts, 1 s warmup,
# 2 s closed loop, 2 s open loop at 70%, server on CPU 0, load on CPU 1)?
#
# The server is the Go reference app on `/cpu/N` (N rounds of the contract's
# xorshift loop per request). First it calibrates: one start each on
# `/cpu/0` and `/cpu/N` gives the CPU per request as a + b·N (from
# requests/s per server core), and N' is chosen so `/cpu/N'` costs 10% more
# CPU per request than `/cpu/N`. Then it makes RESULTS results of A (`/cpu/N`)
# and RESULTS of B (`/cpu/N'`), interleaved (A, B, A, B, …) so drift in the
# machine's load falls on both, and compares:
#   A/A: every pair of A results (RESULTS·(RESULTS−1)/2 comparisons);
#   A/B: every A against every B (RESULTS² comparisons).
# For requests/s, requests/s per server core, server CPU and p99 it prints
# the share of A/A comparisons with a significant verdict (the false-positive
# rate, 5% stated) and the share of A/B comparisons that say "slower"
# (requests/s, per core) or "more" (CPU), with the measured slowdown of B.
#
#   bench/compare_power.sh [RESULTS] [N]
#       defaults: 4 results a side, N = 20000
#
# About 25 s a result once the Go app is built (3 starts of ~7 s and a
# contract check): 4 a side take about 4 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

RESULTS=${1:-4}
ITERS=${2:-20000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
. bench/lib.sh
use_stampede

# A scenario of the main job's shape on one path, under profile name "cpu".
scenario() { # NAME ITERATIONS PATH...
  local name=$1 iterations=$2
  shift 2
  {
    echo "name = \"$name\""
    echo 'apps = ["go"]'
    echo "iterations = $iterations"
    local i=0
    for path in "$@"; do
      i=$((i + 1))
      cat <<EOF
[[profiles]]
name = "cpu$([ $# -gt 1 ] && echo "-$i" || true)"
path = "$path"
connections = 32
threads = 1
duration = "2s"
warmup = "1s"
latency = { fraction = 0.7, duration = "2s" }
EOF
    done
    printf '[pinning]\nserver = "0"\nloadgen = "1"\n'
  } > "$WORK/$name.toml"
}

# Runs a scenario quietly; prints the path of its results.json. Exit code 1
# (some runs invalid) is kept: compare counts each figure where it is valid.
results() { # NAME
  local rc=0
  "$STAMPEDE" run "$WORK/$1.toml" --out "$WORK/out-$1" >"$WORK/$1.log" 2>&1 || rc=$?
  if [ "$rc" -gt 1 ] || ! ls "$WORK"/out-"$1"/*/results.json >/dev/null 2>&1; then
    echo "stampede run $1 failed (exit $rc):" >&2
    tail -5 "$WORK/$1.log" >&2
    exit 2
  fi
  ls "$WORK"/out-"$1"/*/results.json
}

# Calibration: CPU per request is a + b·N; N' costs 10% more than N.
scenario calibrate 1 /cpu/0 "/cpu/$ITERS"
CAL=$(results calibrate)
SLOW=$(python3 - "$CAL" "$ITERS" <<'EOF'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
n = int(sys.argv[2])
per_core = {r["profile"]: r["rps_per_server_core"] for r in runs if r.get("rps_per_server_core")}
c0, cn = 1 / per_core["cpu-1"], 1 / per_core["cpu-2"]
b = (cn - c0) / n
print(round(n + 0.1 * cn / b) if b > 0 else 0)
EOF
)
if [ "$SLOW" -gt "$ITERS" ]; then
  echo "A: /cpu/$ITERS, B: /cpu/$SLOW (calibrated to 10% more CPU per request)"
else
  # A machine too busy to calibrate on: 10% more loop, at most 10% more CPU.
  SLOW=$((ITERS * 11 / 10))
  echo "calibration gave no cost per loop round (busy machine?); B: /cpu/$SLOW, at most 10% more CPU per request"
fi

scenario a 3 "/cpu/$ITERS"
scenario b 3 "/cpu/$SLOW"
A=() B=()
for i in $(seq "$RESULTS"); do
  cp "$WORK/a.toml" "$WORK/a$i.toml"
  cp "$WORK/b.toml" "$WORK/b$i.toml"
  A+=("$(results "a$i")")
  B+=("$(results "b$i")")
  echo "result $i of $RESULTS a side done"
done

for a in "${A[@]}" "${B[@]}"; do echo "$a"; done > "$WORK/files"
python3 - "$WORK/files" <<'EOF'
import json, sys
runs = [r for f in open(sys.argv[1]).read().split() for r in json.load(open(f))["runs"]]
print(f"{len(runs)} runs: {sum(r['valid'] for r in runs)} valid, "
      f"{sum(bool(r.get('load_valid')) for r in runs)} invalid in their latency phase only")
EOF
python3 - "$STAMPEDE" "$RESULTS" "$WORK/files" <<'EOF'
import itertools, json, subprocess, sys
stampede, k = sys.argv[1], int(sys.argv[2])
files = open(sys.argv[3]).read().split()
a, b = files[:k], files[k:]

def compare(base, cand):
    out = subprocess.run([stampede, "compare", base, cand, "--json"], capture_output=True, check=True)
    return {m["metric"]: m for m in json.loads(out.stdout)["pairs"][0]["metrics"]}

aa = [compare(x, y) for x, y in itertools.combinations(a, 2)]
ab = [compare(x, y) for x in a for y in b]
slowdowns = [m["rps_per_core"]["change"] for m in ab if m["rps_per_core"]["change"] is not None]
slowdowns.sort()
print(f"B's requests/s per server core against A's: median {100 * slowdowns[len(slowdowns) // 2]:+.1f}%")
print(f"{'metric':<14} {'A/A significant':>18} {'A/B found':>14} {'A/B too few':>12}")
for metric, found in [("rps", "worse"), ("rps_per_core", "worse"), ("cpu", None), ("p99", "worse")]:
    fp = sum(m[metric]["significant"] for m in aa)
    hit = sum(m[metric]["verdict"] == found for m in ab) if found else 0
    few = sum(m[metric]["verdict"] == "too_few_iterations" for m in ab)
    power = f"{hit}/{len(ab)} ({100 * hit / len(ab):.0f}%)" if found else "–"
    print(f"{metric:<14} {f'{fp}/{len(aa)} ({100 * fp / len(aa):.0f}%)':>18} {power:>14} {few:>12}")
print("A/B found: 'slower' (requests/s, per core, p99). Server CPU is the same at saturation: no direction expected.")
EOF
