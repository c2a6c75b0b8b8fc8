#!/usr/bin/env bash
# How much CPU does each load generator spend per request?
#
# Starts nginx (Debian's nginx-light, installed if missing) on 127.0.0.1 with
# one worker pinned to CPU 0 answering a 13-byte body, then runs stampede,
# wrk and, when installed, oha and h2load --h1 one after another, each pinned
# to CPU 1 with 1 thread and 32 connections for the same duration. The CPU of
# every generator is measured the same way, from outside (the shell's `times`
# of the child), so no tool is trusted to report its own cost.
#
#   bench/loadgen.sh [DURATION_S] [ROUNDS]     (defaults: 10 s, 1 round)
#
# With ROUNDS > 1 the tools are interleaved round by round and the table
# shows the median of each tool's requests per CPU-second.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-10}
ROUNDS=${2:-1}
CONNS=32
PORT=${BENCH_PORT:-18480}
URL="http://127.0.0.1:$PORT/"
WORK=$(mktemp -d)
trap 'kill $(cat "$WORK/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need nginx || ! need wrk; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light wrk >/dev/null
fi
STAMPEDE=${STAMPEDE:-target/release/stampede}
[ -x "$STAMPEDE" ] || cargo build --release -q -p stampede

. bench/lib.sh
serve_hello "$PORT"


p_oha() { python3 -c 'import json,sys; t=sys.stdin.read(); r=json.loads(t[t.index("{"):t.rindex("}")+1]); print(sum(r["statusCodeDistribution"].values()))'; }

# `stampede` is the default engine (io_uring where the kernel allows it);
# `stampede-epoll` is the same binary on its epoll loop, for comparison.
TOOLS=(stampede stampede-epoll wrk)
need oha && TOOLS+=(oha)
need h2load && TOOLS+=(h2load)

run_tool() {
  case $1 in
    stampede) measure p_stampede "$STAMPEDE" load -t 1 -c $CONNS -d "${DURATION}s" "$URL" ;;
    stampede-epoll) measure p_stampede "$STAMPEDE" load --engine epoll -t 1 -c $CONNS -d "${DURATION}s" "$URL" ;;
    wrk)      measure p_wrk wrk -t 1 -c $CONNS -d "${DURATION}s" "$URL" ;;
    oha)      measure p_oha oha --no-tui --output-format json -c $CONNS -z "${DURATION}s" "$URL" ;;
    h2load)   measure p_h2load h2load --h1 -t 1 -c $CONNS -D "$DURATION" "$URL" ;;
  esac
}

declare -A RESULTS
for round in $(seq "$ROUNDS"); do
  for tool in "${TOOLS[@]}"; do
    RESULTS[$tool]+="$(run_tool "$tool")"$'\n'
  done
done

echo "nginx 1 worker on CPU 0; each generator on CPU 1, 1 thread, $CONNS connections, ${DURATION}s, $ROUNDS round(s); medians"
printf '%-15s %12s %14s %18s %10s\n' tool "req/s" "loadgen CPU s" "req per CPU-s" "vs wrk"
declare -A PER
for tool in "${TOOLS[@]}"; do
  read -r reqs cpu per < <(echo -n "${RESULTS[$tool]}" | awk -v d="$DURATION" 'NF==2 && $2>0 {print $1, $2, $1/$2}' | sort -k3 -g | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}')
  PER[$tool]=$per
  RESULTS[$tool]="$reqs $cpu"
done
for tool in "${TOOLS[@]}"; do
  read -r reqs cpu <<<"${RESULTS[$tool]}"
  awk -v t="$tool" -v r="$reqs" -v c="$cpu" -v p="${PER[$tool]}" -v w="${PER[wrk]}" -v d="$DURATION" \
    'BEGIN{printf "%-15s %12.0f %14.2f %18.0f %9.2fx\n", t, r/d, c, p, p/w}'
done
awk -v s="${PER[stampede]}" -v w="${PER[wrk]}" 'BEGIN{printf "stampede/wrk requests per CPU-second: %.2f\n", s/w}'
