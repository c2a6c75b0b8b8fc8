#!/usr/bin/env bash
# What does each load generator spend per request in open loop (a fixed
# request rate, latency from intended send times)?
#
# Starts nginx (Debian's nginx-light, installed if missing) on 127.0.0.1 with
# one worker pinned to CPU 0 answering a 13-byte body, then drives it at each
# asked rate with stampede (`--rate`), and beside it wrk2 (`-R`), oha (`-q`
# with `--latency-correction`) and vegeta (`-rate`), each pinned to CPU 1,
# 1 thread (where a tool has threads), 64 connections, for the same duration.
# Rounds are interleaved as in bench/loadgen.sh (round 1 of every tool, then
# round 2, ...), the reference first in each round and once more at the end,
# and each run's ratio is taken against the reference interpolated to that
# run's midpoint (bench/rounds.py). The reference is wrk2 when WRK2 names its
# binary, else stampede. Both CPU measures are printed (bench/lib.sh's
# `measure`: the process's user+sys, and the busy time of CPU 1).
#
# Peers, each skipped with a line saying so when missing:
#   WRK2=/path/to/wrk     wrk2 has no package; a binary built by hand
#   OHA=oha               default `oha` on PATH (`cargo install oha`)
#   VEGETA=vegeta         default ~/go/bin/vegeta (`go install github.com/tsenart/vegeta/v12@latest`)
# vegeta's cost includes `vegeta report`, the other end of its pipe.
#
# With BASE=<git revision>, that revision's stampede is built in
# target/bench-base and measured too, as `stampede-base` (BASE_BUILT=1: it
# is there already, measure it without building).
#
#   [WRK2=…] [BASE=rev] bench/openloop.sh [DURATION_S] [ROUNDS] [RATES...]
#       defaults: 8 s, 3 rounds, rates 20000 50000 80000 1000
#
# Last, the share of the asked rate each tool answered (median over rounds):
# a tool that could not keep up is cheap per request only because it sent less.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-8}
ROUNDS=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
if [ $# -gt 0 ]; then RATES=("$@"); else RATES=(20000 50000 80000 1000); fi
CONNS=64
PORT=${BENCH_PORT:-18481}
URL="http://127.0.0.1:$PORT/"
WORK=$(mktemp -d)
trap 'kill $(cat "$WORK/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need nginx; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
fi
. bench/lib.sh
use_stampede

serve_hello "$PORT"

OHA=${OHA:-oha}
VEGETA=${VEGETA:-$HOME/go/bin/vegeta}
p_vegeta() { python3 -c 'import json,sys; t=sys.stdin.read(); r=json.loads(t[t.index("{"):t.rindex("}")+1]); print(round(r["requests"]*r["success"]))'; }

TOOLS=(stampede)
REFERENCE=stampede
if [ -n "${WRK2:-}" ] && [ -x "$WRK2" ]; then
  TOOLS=(wrk2 stampede)
  REFERENCE=wrk2
else
  echo "wrk2: skipped (set WRK2=/path/to/wrk2's wrk)"
fi
if [ -n "${BASE:-}" ]; then
  [ "${BASE_BUILT:-0}" = 1 ] || build_base "$BASE" -p stampede
  TOOLS+=(stampede-base)
fi
if need "$OHA"; then TOOLS+=(oha); else echo "oha: skipped ($OHA not found; cargo install oha, or set OHA)"; fi
if need "$VEGETA"; then TOOLS+=(vegeta); else echo "vegeta: skipped ($VEGETA not found; set VEGETA)"; fi

# Records one run of tool $1 at rate $2 in round $3.
run_tool() {
  local r=$2 at=("r=$2" "$1" "$3" "$DURATION") d="${DURATION}s"
  case $1 in
    stampede)      record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c $CONNS --rate "$r" -d "$d" "$URL" ;;
    stampede-base) record "${at[@]}" p_stampede target/bench-base/release/stampede load -t 1 -c $CONNS --rate "$r" -d "$d" "$URL" ;;
    wrk2)          record "${at[@]}" p_wrk "$WRK2" -t 1 -c $CONNS -R "$r" -d "$d" "$URL" ;;
    oha)           record "${at[@]}" p_oha_json "$OHA" --no-tui --output-format json -c $CONNS -q "$r" --latency-correction -z "$d" "$URL" ;;
    vegeta)        record "${at[@]}" p_vegeta sh -c "echo 'GET $URL' | '$VEGETA' attack -rate $r -duration $d -max-workers $CONNS -connections $CONNS | '$VEGETA' report -type=json" ;;
  esac
}

echo "nginx 1 worker on CPU 0; each generator on CPU 1, 1 thread, $CONNS connections, ${DURATION}s per run, $ROUNDS interleaved round(s)"
echo "$(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)"
interleave "$REFERENCE" "${RATES[@]}"
python3 bench/rounds.py "$REFERENCE" <"$RECORDS"
echo
echo "share of the asked rate answered (median over rounds, min-max):"
python3 - "$RECORDS" <<'PY'
import statistics, sys
from collections import defaultdict
shares = defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) < 7 or p[2] == "end":
        continue
    rate = float(p[0].split("=")[1])
    shares[(p[0], p[1])].append(float(p[3]) / float(p[6]) / rate * 100)
for (group, tool), s in shares.items():
    print(f"{group:<10} {tool:<15} {statistics.median(s):6.1f}% ({min(s):.1f}-{max(s):.1f})")
PY
