#!/usr/bin/env bash
# Where does a load generator's core go? The floor any client pays on
# loopback, and what is left above it.
#
# Starts nginx (one worker pinned to CPU 0, 13-byte body) and runs each tool
# pinned to CPU 1, 1 thread, CONNECTIONS connections, while `perf record -e
# cpu-clock -g -C 1` (itself pinned to CPU 0) samples everything that runs on
# CPU 1: the tool, and the kernel's softirq work that lands there. The
# samples are split by bench/breakdown.py into the kernel's TCP/IP path,
# the rest of the kernel (system-call entry, io_uring, epoll, scheduling,
# other) and user space, as shares of the core's busy time, next to the
# requests per core CPU-second of the same run.
#
# `cpu-clock` samples come from a timer, and on this project's VM a timer
# that falls due while a tool naps for a few microseconds is taken in the
# idle task: a tool that naps between bursts is sampled less than its busy
# time (docs/load.md, "two measures"). So the script also prints how many
# samples the core's measured busy time should have given at the sampling
# rate: the shares are of what was sampled.
#
#   bench/breakdown.sh [DURATION_S] [CONNECTIONS]     (defaults: 5 s, 32)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-5}
CONNS=${2:-32}
PORT=${BENCH_PORT:-18482}
URL="http://127.0.0.1:$PORT/"
WORK=$(mktemp -d)
trap 'kill $(cat "$WORK/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need nginx || ! need wrk || ! need perf; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light wrk linux-perf >/dev/null
fi
. bench/lib.sh
use_stampede

serve_hello "$PORT"

run_tool() {
  case $1 in
    stampede)       measure p_stampede "$STAMPEDE" load -t 1 -c "$CONNS" -d "${DURATION}s" "$URL" ;;
    stampede-epoll) measure p_stampede "$STAMPEDE" load --engine epoll -t 1 -c "$CONNS" -d "${DURATION}s" "$URL" ;;
    wrk)            measure p_wrk wrk -t 1 -c "$CONNS" -d "${DURATION}s" "$URL" ;;
  esac
}

HZ_PERF=4000
echo "nginx 1 worker on CPU 0; each tool on CPU 1, 1 thread, $CONNS connections, ${DURATION}s; perf cpu-clock at $HZ_PERF Hz on CPU 1"
for tool in stampede stampede-epoll wrk; do
  check_quiet
  taskset -c 0 perf record -q -e cpu-clock -F "$HZ_PERF" -g -C 1 -o "$WORK/$tool.data" -- sleep $((DURATION + 1)) 2>/dev/null &
  perf_pid=$!
  sleep 0.3
  read -r reqs proc core < <(run_tool "$tool")
  wait "$perf_pid" || true
  awk -v t="$tool" -v r="$reqs" -v p="$proc" -v c="$core" \
    'BEGIN { printf "%s: %.0f requests, %.0f per core CPU-s, %.0f per process CPU-s\n", t, r, r / c, r / p }'
  split=$(perf script -i "$WORK/$tool.data" -F comm,pid,ip,sym,dso 2>/dev/null | python3 bench/breakdown.py "$tool")
  echo "$split"
  awk -v n="$(echo "$split" | awk 'NR == 1 { print $2 }')" -v c="$core" -v f="$HZ_PERF" \
    'BEGIN { printf "  (%d busy samples where %.2f s busy at %d Hz would give %.0f: %.0f%% of the busy time sampled)\n", n, c, f, c * f, 100 * n / (c * f) }'
done
