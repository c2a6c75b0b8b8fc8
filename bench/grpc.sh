#!/usr/bin/env bash
# How much CPU does each gRPC load generator spend per call?
#
# Starts the Go gRPC reference server (apps/grpc/go, grpc-go, THREADS=1)
# pinned to CPU 0, then runs stampede's --grpc, ghz and h2load side by side,
# each pinned to CPU 1 with one thread for the same duration, calling
# stampede.bench.v1.Bench/Unary, in two scenarios:
#
#   grpc-max   as fast as possible: 4 connections x 10 concurrent streams
#   grpc-rate  the same connections at a fixed offered rate (RATE, 2000/s)
#
# h2load cannot speak gRPC: it posts the same request pre-encoded (the
# 5-byte prefix and the message, written here once) with content-type
# application/grpc and te: trailers, and counts every HTTP 200 as a success,
# whatever grpc-status its trailers say. ghz builds each request from the
# .proto and JSON as its users run it (--cpus 1: one OS thread's worth).
# The CPU of every tool is measured from outside the same two ways
# (bench/lib.sh's `measure`: process user+sys, and the busy time of its
# core), in interleaved rounds with ghz first in each and once more at the
# end; the table shows calls per core-second, medians with min-max, and the
# ratio to ghz (bench/rounds.py).
#
#   bench/grpc.sh [DURATION_S] [ROUNDS]     (defaults: 5 s, 5 rounds)
#   GHZ=~/go/bin/ghz    ghz (go install github.com/bojand/ghz/cmd/ghz@latest;
#                       default: that path, else ghz on PATH)
#   RATE=2000           grpc-rate's offered calls per second
#   RATE_GRANULARITY=   stampede's --max-granularity in grpc-rate (e.g. 4ms,
#                       about h2load's wake-up rate; default: its own 1 ms)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-5}
ROUNDS=${2:-5}
RATE=${RATE:-2000}
GRAN=(${RATE_GRANULARITY:+--max-granularity "$RATE_GRANULARITY"})
PORT=${BENCH_PORT:-18511}
WORK=$(mktemp -d)
trap '[ -n "${APP:-}" ] && kill "$APP" 2>/dev/null; rm -rf "$WORK"' EXIT

. bench/lib.sh
use_stampede
GHZ=${GHZ:-$( [ -x "$HOME/go/bin/ghz" ] && echo "$HOME/go/bin/ghz" || command -v ghz || echo ghz)}
TOOLS=()
if [ -x "$(command -v "$GHZ" || true)" ]; then
  TOOLS+=(ghz)
else
  echo "ghz: skipped (not at $GHZ; go install github.com/bojand/ghz/cmd/ghz@latest, or set GHZ)" >&2
fi
TOOLS+=(stampede)
if command -v h2load >/dev/null; then TOOLS+=(h2load); else echo "h2load: skipped (apt-get install nghttp2-client)" >&2; fi

(cd apps/grpc/go && go generate && go build -o server .)
PORT=$PORT THREADS=1 taskset -c 0 apps/grpc/go/server &
APP=$!
TARGET="127.0.0.1:$PORT"
PROTO=contracts/grpc/bench.proto
CALL=stampede.bench.v1.Bench/Unary
DATA='{"text":"hello","a":1,"b":2}'
for _ in $(seq 100); do
  "$STAMPEDE" load --proto "$PROTO" --call "$CALL" -n 1 "$TARGET" >/dev/null 2>&1 && break
  sleep 0.1
done
# The same Request{text: "hello", a: 1, b: 2}, length-prefixed, for h2load:
# text = field 1 (5 bytes), a = field 2 (varint 1), b = field 3 (varint 2).
printf '\x00\x00\x00\x00\x0b\x0a\x05hello\x10\x01\x18\x02' >"$WORK/request.bin"

p_ghz() { grep -E '^[[:space:]]*Count:' | awk '{print $2}'; }
D=$DURATION
H2=(-d "$WORK/request.bin" -H 'content-type: application/grpc' -H 'te: trailers')
# Runs tool $1 in scenario $2, round $3 (bench/lib.sh's `interleave` calls it).
run_tool() {
  local at=("$2" "$1" "$3" "$D")
  case "$2/$1" in
    grpc-max/stampede)  record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c 4 --streams 10 -d "${D}s" --proto "$PROTO" --call "$CALL" --data "$DATA" "$TARGET" ;;
    grpc-max/ghz)       record "${at[@]}" p_ghz "$GHZ" --insecure --cpus 1 --connections 4 -c 40 -z "${D}s" --proto "$PROTO" --call "$CALL" -d "$DATA" "$TARGET" ;;
    grpc-max/h2load)    record "${at[@]}" p_h2load h2load -t 1 -c 4 -m 10 -D "$D" "${H2[@]}" "http://$TARGET/$CALL" ;;
    grpc-rate/stampede) record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c 4 --streams 10 -R "$RATE" "${GRAN[@]}" -d "${D}s" --proto "$PROTO" --call "$CALL" --data "$DATA" "$TARGET" ;;
    grpc-rate/ghz)      record "${at[@]}" p_ghz "$GHZ" --insecure --cpus 1 --connections 4 -c 40 --rps "$RATE" -z "${D}s" --proto "$PROTO" --call "$CALL" -d "$DATA" "$TARGET" ;;
    grpc-rate/h2load)   record "${at[@]}" p_h2load h2load -t 1 -c 4 -m 10 --rps "$((RATE / 4))" -D "$D" "${H2[@]}" "http://$TARGET/$CALL" ;;
  esac
}

echo "apps/grpc/go (grpc-go, THREADS=1) on CPU 0; each generator on CPU 1, 1 thread, ${D}s per run, $ROUNDS round(s)"
echo "4 connections x 10 streams; grpc-rate offers $RATE calls/s${RATE_GRANULARITY:+ (stampede --max-granularity $RATE_GRANULARITY)}; tools: ${TOOLS[*]}"
interleave "${TOOLS[0]}" grpc-max grpc-rate
python3 bench/rounds.py "${TOOLS[0]}" <"$RECORDS"
