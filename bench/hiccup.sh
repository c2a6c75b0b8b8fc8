#!/usr/bin/env bash
# Coordinated omission, side by side: what p99 does each tool report for a
# server that stalls STALL ms of every PERIOD ms, next to the true value?
#
# The server (bench/hiccup_server.py, pinned to CPU 0) answers at once except
# during its stalls. Requests arriving uniformly have a known latency
# distribution: P(latency > x) = (STALL - x) / PERIOD, so the true p99 is
# STALL - PERIOD/100 and the true p99.9 is STALL - PERIOD/1000. Each tool
# runs pinned to CPU 1:
#   stampede --rate   open loop, latency from the intended send time
#   oha -q --latency-correction   open loop with oha's correction
#   stampede, wrk     closed loop (no rate), 8 connections: the classic under-report
#
#   bench/hiccup.sh [DURATION_S] [RATE] [STALL_MS] [PERIOD_MS]   (defaults: 10 1000 100 1000)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-10}
RATE=${2:-1000}
STALL=${3:-100}
PERIOD=${4:-1000}
CONNS=64
PORT=${BENCH_PORT:-18481}
URL="http://127.0.0.1:$PORT/"
. bench/lib.sh
use_stampede
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

taskset -c 0 python3 bench/hiccup_server.py "$PORT" "$STALL" "$PERIOD" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "$URL" >/dev/null 2>&1 && break; sleep 0.05; done

ms() { awk -v v="$1" -v unit="$2" 'BEGIN{ f = unit=="us" ? 0.001 : unit=="s" ? 1000 : 1; printf "%.1f", v*f }'; }

# exit 1 is a result with a stall in it (a STALL_MS of a second or more)
s_json=$(taskset -c 1 "$STAMPEDE" load --json --rate "$RATE" -c $CONNS -d "${DURATION}s" "$URL") || [ $? -eq 1 ]
s_p99=$(echo "$s_json" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["latency_us"]["p99"]/1000, r["latency_us"]["p999"]/1000, r["service_time_us"]["p99"]/1000)')
read -r s99 s999 sserv <<<"$s_p99"

o99=n/a; o999=n/a
if command -v oha >/dev/null; then
  o_json=$(taskset -c 1 oha --no-tui --output-format json -q "$RATE" --latency-correction -c $CONNS -z "${DURATION}s" "$URL")
  read -r o99 o999 <<<"$(echo "$o_json" | python3 -c 'import json,sys; r=json.load(sys.stdin)["latencyPercentiles"]; print("%.1f %.1f" % (r["p99"]*1000, r["p99.9"]*1000))')"
fi

c_json=$(taskset -c 1 "$STAMPEDE" load --json -c 8 -d "${DURATION}s" "$URL") || [ $? -eq 1 ]
read -r c99 c999 <<<"$(echo "$c_json" | python3 -c 'import json,sys; r=json.load(sys.stdin)["latency_us"]; print("%.1f %.1f" % (r["p99"]/1000, r["p999"]/1000))')"

w_out=$(taskset -c 1 wrk -t1 -c 8 -d "${DURATION}s" --latency "$URL")
w99=$(echo "$w_out" | awk '$1=="99%"{print $2}')
w99=$(ms "${w99%[a-z]*}" "$(echo "$w99" | sed 's/[0-9.]*//')")

t99=$(awk -v s="$STALL" -v p="$PERIOD" 'BEGIN{print s - p/100}')
t999=$(awk -v s="$STALL" -v p="$PERIOD" 'BEGIN{print s - p/1000}')
echo "server stalls ${STALL} ms every ${PERIOD} ms; ${RATE} req/s for ${DURATION} s (wrk: closed loop, 8 connections, as fast as the server answers)"
printf '%-34s %10s %10s\n' tool "p99 ms" "p99.9 ms"
printf '%-34s %10.1f %10.1f\n' "true (computed)" "$t99" "$t999"
printf '%-34s %10.1f %10.1f\n' "stampede --rate (intended time)" "$s99" "$s999"
printf '%-34s %10.1f %10s\n' "stampede service time (actual)" "$sserv" "-"
printf '%-34s %10s %10s\n' "oha -q --latency-correction" "$o99" "$o999"
printf '%-34s %10s %10s\n' "stampede closed loop (8 conns)" "$c99" "$c999"
printf '%-34s %10s %10s\n' "wrk closed loop (8 conns)" "$w99" "-"
