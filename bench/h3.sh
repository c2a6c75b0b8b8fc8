#!/usr/bin/env bash
# How much CPU does each load generator spend per request over HTTP/3?
#
# Starts the Rust reference app (apps/rust, hyper + h3 on quinn, HTTP3=1,
# one current-thread tokio runtime) pinned to CPU 0, then runs stampede's
# --http3 and oha's (`oha --http-version 3`, built with
# `cargo install oha --features http3`) side by side, each pinned to CPU 1
# with one thread for the same duration, in two scenarios:
#
#   h3-10     as fast as possible: 4 connections x 10 concurrent streams
#   h3-rate   the same connections at a fixed offered rate (RATE, 2000/s)
#
# The CPU of every tool is measured from outside the same two ways
# (bench/lib.sh's `measure`: process user+sys, and the busy time of its
# core), in interleaved rounds with oha first in each and once more at the
# end; the table shows requests per core-second, medians with min-max, and
# the ratio to oha (bench/rounds.py). An h2load with HTTP/3 (Debian's has
# none; one built by hand, outside the repository) joins when H2LOAD names
# its binary.
#
#   bench/h3.sh [DURATION_S] [ROUNDS]     (defaults: 5 s, 5 rounds)
#   OHA=~/.cargo/bin/oha   oha with HTTP/3 (default: that path, else oha on PATH)
#   H2LOAD=/path/h2load    h2load built with ngtcp2 + nghttp3 (default: none)
#   RATE=2000              h3-rate's offered requests per second
#   SPLIT=1                then one more h3-10 and h3-rate run of each tool under
#                          `perf record -e cpu-clock -g -C 1`, the core's busy
#                          samples split by bench/breakdown.py (QUIC crypto,
#                          quinn-proto, allocator, the rest of user space, the
#                          kernel's UDP/IP path, system calls, scheduling)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-5}
ROUNDS=${2:-5}
RATE=${RATE:-2000}
PORT=${BENCH_PORT:-18497}
WORK=$(mktemp -d)
trap '[ -n "${APP:-}" ] && kill "$APP" 2>/dev/null; rm -rf "$WORK"' EXIT

. bench/lib.sh
use_stampede
OHA=${OHA:-$( [ -x "$HOME/.cargo/bin/oha" ] && echo "$HOME/.cargo/bin/oha" || command -v oha || echo oha)}
TOOLS=()
if [ -x "$(command -v "$OHA" || true)" ] && "$OHA" --help 2>&1 | grep -q -- '--http-version'; then
  TOOLS+=(oha)
else
  echo "oha: skipped (no oha with HTTP/3 at $OHA; cargo install oha --features http3, or set OHA)" >&2
fi
TOOLS+=(stampede)
if [ -n "${H2LOAD:-}" ]; then
  if "$H2LOAD" --help 2>&1 | grep -q -- '--alpn-list'; then TOOLS+=(h2load); else echo "h2load: skipped ($H2LOAD does not run)" >&2; fi
fi
(cd apps/rust && CARGO_TARGET_DIR=target cargo build --release -q)
PORT=$PORT HTTP3=1 TOKIO_FLAVOR=current taskset -c 0 apps/rust/target/release/stampede-app-rust &
APP=$!
URL="https://127.0.0.1:$PORT/plaintext"
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PORT/plaintext" >/dev/null && break
  sleep 0.1
done
# The app's HTTP/3 listener answers: otherwise every round would fail the same way.
"$STAMPEDE" load --http3 -k -n 1 "$URL" >/dev/null

D=$DURATION
# Runs tool $1 in scenario $2, round $3 (bench/lib.sh's `interleave` calls it).
run_tool() {
  local at=("$2" "$1" "$3" "$D")
  case "$2/$1" in
    h3-10/stampede)   record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c 4 --http3 --streams 10 -d "${D}s" -k "$URL" ;;
    h3-10/oha)        record "${at[@]}" p_oha_json "$OHA" --no-tui --output-format json --insecure --http-version 3 -c 4 -p 10 -z "${D}s" "$URL" ;;
    h3-10/h2load)     record "${at[@]}" p_h2load "$H2LOAD" --alpn-list=h3 -t 1 -c 4 -m 10 -D "$D" "$URL" ;;
    h3-rate/stampede) record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c 4 --http3 --streams 10 -R "$RATE" -d "${D}s" -k "$URL" ;;
    h3-rate/oha)      record "${at[@]}" p_oha_json "$OHA" --no-tui --output-format json --insecure --http-version 3 -c 4 -p 10 -q "$RATE" --latency-correction -z "${D}s" "$URL" ;;
    h3-rate/h2load)   record "${at[@]}" p_h2load "$H2LOAD" --alpn-list=h3 -t 1 -c 4 -m 10 --rps "$((RATE / 4))" -D "$D" "$URL" ;;
  esac
}

echo "apps/rust (HTTP3=1, current-thread tokio) on CPU 0; each generator on CPU 1, 1 thread, ${D}s per run, $ROUNDS round(s)"
echo "4 connections x 10 streams; h3-rate offers $RATE req/s; tools: ${TOOLS[*]}"
interleave "${TOOLS[0]}" h3-10 h3-rate
python3 bench/rounds.py "${TOOLS[0]}" <"$RECORDS"

if [ "${SPLIT:-0}" = 1 ]; then
  echo
  echo "Where each generator's core goes (perf cpu-clock at 4000 Hz on CPU 1, one ${D}s run each):"
  for group in h3-10 h3-rate; do
    for tool in "${TOOLS[@]}"; do
      check_quiet
      taskset -c 0 perf record -q -e cpu-clock -F 4000 -g -C 1 -o "$WORK/split.data" -- sleep $((D + 1)) 2>/dev/null &
      perf_pid=$!
      sleep 0.3
      RECORDS=$WORK/split.records run_tool "$tool" "$group" 0
      wait "$perf_pid" || true
      perf script -i "$WORK/split.data" -F comm,pid,ip,sym,dso 2>/dev/null | python3 bench/breakdown.py "$group $tool"
    done
  done
fi
