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
# The CPU of both is measured from outside the same two ways (bench/lib.sh's
# `measure`: process user+sys, and the busy time of its core), in
# interleaved rounds with oha first in each and once more at the end; the
# table shows medians with min-max and the ratio to oha (bench/rounds.py).
# An h2load built with HTTP/3 by hand (outside the repository) joins when
# H2LOAD_H3 names its binary.
#
#   bench/h3.sh [DURATION_S] [ROUNDS]     (defaults: 5 s, 5 rounds)
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
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
TOOLS=(oha stampede)
if [ ! -x "$OHA" ] || ! "$OHA" --help 2>&1 | grep -q -- '--http-version'; then
  echo "warning: no oha with HTTP/3 (cargo install oha --features http3, or OHA=/path/to/oha): stampede alone" >&2
  TOOLS=(stampede)
fi
(cd apps/rust && CARGO_TARGET_DIR=target cargo build --release -q)
PORT=$PORT HTTP3=1 TOKIO_FLAVOR=current taskset -c 0 apps/rust/target/release/stampede-app-rust &
APP=$!
URL="https://127.0.0.1:$PORT/plaintext"
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PORT/plaintext" >/dev/null && break
  sleep 0.1
done

p_oha() { grep -E '^ *\[[0-9]+\] [0-9]+ responses' | awk '{s+=$2} END{print s+0}'; }

[ -n "${H2LOAD_H3:-}" ] && TOOLS+=(h2load)
D=$DURATION

# Records one run of scenario $1 with tool $2 in round $3.
run() {
  local at=("$1" "$2" "$3" "$D")
  case "$1/$2" in
    h3-10/stampede)   record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c 4 --http3 --streams 10 -d "${D}s" -k "$URL" ;;
    h3-10/oha)        record "${at[@]}" p_oha "$OHA" --no-tui --insecure --http-version 3 -c 4 -p 10 -z "${D}s" "$URL" ;;
    h3-10/h2load)     record "${at[@]}" p_h2load "$H2LOAD_H3" --alpn-list=h3 -t 1 -c 4 -m 10 -D "$D" "$URL" ;;
    h3-rate/stampede) record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c 4 --http3 --streams 10 -R "$RATE" -d "${D}s" -k "$URL" ;;
    h3-rate/oha)      record "${at[@]}" p_oha "$OHA" --no-tui --insecure --http-version 3 -c 4 -p 10 -q "$RATE" -z "${D}s" "$URL" ;;
    h3-rate/h2load)   record "${at[@]}" p_h2load "$H2LOAD_H3" --alpn-list=h3 -t 1 -c 4 -m 10 --rps "$((RATE / 4))" -D "$D" "$URL" ;;
  esac
}

echo "apps/rust (HTTP3=1, current-thread tokio) on CPU 0; each generator on CPU 1, 1 thread, ${D}s per run, $ROUNDS round(s)"
echo "4 connections x 10 streams; h3-rate offers $RATE req/s"
RECORDS="$WORK/records"
: >"$RECORDS"
for round in $(seq "$ROUNDS"); do
  check_quiet
  for scenario in h3-10 h3-rate; do
    for tool in "${TOOLS[@]}"; do
      run "$scenario" "$tool" "$round"
    done
  done
done
# The reference once more, so every run has one of its after it as well as before.
for scenario in h3-10 h3-rate; do
  run "$scenario" "${TOOLS[0]}" end
done
python3 bench/rounds.py "${TOOLS[0]}" <"$RECORDS"
