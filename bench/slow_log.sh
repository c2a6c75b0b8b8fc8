#!/usr/bin/env bash
# What does the default slow log of `stampede run` cost? Loads one nginx
# worker (CPU 0, bench/lib.sh) with `stampede load` pinned to CPU 1, closed
# loop at 32 connections, SECONDS a round, with no slow log and with a slow
# log of SLOW requests (default 20,000: what `stampede run` keeps for a phase
# of about 670k requests, 1.5% + 100, or twice a warmup rate of 80k/s over
# 4 s), the two interleaved for ROUNDS rounds. Prints, median (min-max) over
# the rounds: the generator's CPU seconds per million requests (its own
# getrusage, in the JSON) and its peak RSS (MiB), and the ratio with/without.
#
# Figures depend on the machine and how busy it is: they are measured here,
# never asserted by a test; docs/run.md quotes them.
#
#   bench/slow_log.sh [SECONDS] [ROUNDS] [SLOW]   (defaults: 4 5 20000)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

SECS=${1:-4}
ROUNDS=${2:-5}
SLOW=${3:-20000}
use_stampede
WORK=$(mktemp -d)
trap 'kill $(cat "$WORK/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
serve_hello "$PORT"
check_quiet

# one N: "<cpu s per million requests> <max rss MiB> <slow requests kept>"
one() {
  taskset -c 1 "$STAMPEDE" load "http://127.0.0.1:$PORT/" -c 32 -d "${SECS}s" --slow-log "$1" --json |
    python3 -c 'import json,sys; d=json.load(sys.stdin); l=d["loadgen"]
print("%.4f %.1f %d" % ((l["cpu_user_s"]+l["cpu_sys_s"])/max(d["requests"],1)*1e6, l["max_rss_kib"]/1024, len(d["slow_requests"])))'
}

echo "slow log cost: stampede load -c 32, ${SECS}s a round, $ROUNDS rounds, $(nproc) cores, kernel $(uname -r), $(date -u '+%F %H:%M UTC')"
: >"$WORK/off"; : >"$WORK/on"
for _ in $(seq "$ROUNDS"); do
  one 0 >>"$WORK/off"
  one "$SLOW" >>"$WORK/on"
done
python3 - "$WORK/off" "$WORK/on" "$SLOW" <<'PY'
import statistics, sys
rows = [[list(map(float, l.split())) for l in open(p)] for p in sys.argv[1:3]]
def show(label, col, unit):
    off = [r[col] for r in rows[0]]; on = [r[col] for r in rows[1]]
    m = lambda v: "%.3f (%.3f-%.3f)" % (statistics.median(v), min(v), max(v))
    print(f"  {label:<28} no slow log {m(off)}  slow log {sys.argv[3]} {m(on)}  ratio {statistics.median(on)/statistics.median(off):.3f} {unit}")
show("CPU s per million requests", 0, "")
show("peak RSS (MiB)", 1, "")
print(f"  slow requests kept: {int(statistics.median(r[2] for r in rows[1]))}")
PY
