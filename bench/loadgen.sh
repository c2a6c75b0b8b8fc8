#!/usr/bin/env bash
# How much CPU does each load generator spend per request?
#
# Starts nginx (Debian's nginx-light, installed if missing) on 127.0.0.1 with
# one worker pinned to CPU 0 answering a 13-byte body, then runs stampede
# (io_uring and epoll), wrk and, when installed, oha and h2load --h1, each
# pinned to CPU 1 with 1 thread, at each connection count, for the same
# duration. Tools are interleaved round by round (round 1 of every tool, then
# round 2, ...), wrk first in each round and once more at the end, and each
# run's ratio is taken against wrk's figure interpolated to that run's
# midpoint (bench/rounds.py): a machine that drifts mid-bench moves the
# reference with the tool it is compared to.
#
# Each tool's cost is measured twice, from outside, so no tool is trusted to
# report its own: the process's user+sys (`times` of the child) and the busy
# time of the core it is pinned to (the clock less the core's measured idle
# time, bench/lib.sh's `core_times`), which also counts the loopback TCP work
# the kernel does in softirq context on that core. docs/load.md says what
# each measure misses.
# Before every round the bench checks that core 1 is idle and warns if not.
#
# With BASE=<git revision>, that revision's stampede (io_uring) is built in
# target/bench-base and measured too, as `stampede-base`, in the same
# interleaved rounds: the before and after of a change on the same machine
# under the same load.
#
#   [BASE=rev] bench/loadgen.sh [DURATION_S] [ROUNDS] [CONNECTIONS...]
#       defaults: 5 s, 5 rounds, 32 connections; e.g. bench/loadgen.sh 5 5 32 256 1000
#
# The table shows per tool the median over rounds and the min-max, the
# ratio to wrk (median and range over rounds), and how much wrk's own figure
# moved between its consecutive runs: the noise the ratios were taken in.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-5}
ROUNDS=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
CONNS=("${@:-32}")
[ ${#CONNS[@]} -eq 0 ] && CONNS=(32)
PORT=${BENCH_PORT:-18480}
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

# `stampede` is the default engine (io_uring where the kernel allows it);
# `stampede-epoll` is the same binary on its epoll loop, for comparison.
TOOLS=(wrk stampede stampede-epoll)
if [ -n "${BASE:-}" ]; then
  build_base "$BASE" -p stampede
  TOOLS=(wrk stampede-base "${TOOLS[@]:1}")
fi
need oha && TOOLS+=(oha)
need h2load && TOOLS+=(h2load)

# Records one run of tool $1 at $2 connections in round $3.
run_tool() {
  local c=$2 at=("c=$2" "$1" "$3" "$DURATION")
  case $1 in
    stampede) record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c "$c" -d "${DURATION}s" "$URL" ;;
    stampede-base) record "${at[@]}" p_stampede target/bench-base/release/stampede load -t 1 -c "$c" -d "${DURATION}s" "$URL" ;;
    stampede-epoll) record "${at[@]}" p_stampede "$STAMPEDE" load --engine epoll -t 1 -c "$c" -d "${DURATION}s" "$URL" ;;
    wrk)      record "${at[@]}" p_wrk wrk -t 1 -c "$c" -d "${DURATION}s" "$URL" ;;
    oha)      record "${at[@]}" p_oha_json oha --no-tui --output-format json -c "$c" -z "${DURATION}s" "$URL" ;;
    h2load)   record "${at[@]}" p_h2load h2load --h1 -t 1 -c "$c" -D "$DURATION" "$URL" ;;
  esac
}

echo "nginx 1 worker on CPU 0; each generator on CPU 1, 1 thread, ${DURATION}s per run, $ROUNDS interleaved round(s)"
echo "$(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)"
interleave wrk "${CONNS[@]}"
python3 bench/rounds.py wrk <"$RECORDS"
