#!/usr/bin/env bash
# What a request mix costs the load generator, against one URL.
#
# Starts nginx (one worker pinned to CPU 0, answering every path with a
# 13-byte body) and runs stampede pinned to CPU 1, 1 thread, 32 connections,
# with: one URL; the sequence benchmark's /api/fib/{1..100} cycle (100
# prepared requests); a weighted three-target file whose third target is
# {rand:1..100000000} (too many combinations to prepare: written per
# request). Rounds are interleaved; each figure is the median of the rounds
# of requests per load-generator CPU-second (both measures of bench/lib.sh's
# `measure`: the process's user+sys and its core's busy time), with min-max,
# and the ratio to the single URL as it was at each run (run first in each
# round and once more at the end: bench/rounds.py). The issue's goal:
# at most 5% fewer requests per CPU-second for a mix.
#
#   bench/mix.sh [DURATION_S] [ROUNDS]     (defaults: 5 s, 5 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-5}
ROUNDS=${2:-5}
CONNS=32
PORT=${BENCH_PORT:-18481}
BASE="http://127.0.0.1:$PORT"
WORK=$(mktemp -d)
trap 'kill $(cat "$WORK/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT

command -v nginx >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; }
. bench/lib.sh
use_stampede

serve_hello "$PORT"

cat >"$WORK/targets.txt" <<EOF
GET $BASE/api/count/35 weight=3
POST $BASE/items
Content-Type: application/json
body {"name": "stampede"}
GET $BASE/values/{rand:1..100000000}
EOF

VARIANTS=(single fib-cycle targets-file)
# Records one run of variant $1 in round $2.
run_variant() {
  local common=(load -t 1 -c $CONNS -d "${DURATION}s") at=(mix "$1" "$2" "$DURATION")
  case $1 in
    single)       record "${at[@]}" p_stampede "$STAMPEDE" "${common[@]}" "$BASE/api/fib/50" ;;
    fib-cycle)    record "${at[@]}" p_stampede "$STAMPEDE" "${common[@]}" "$BASE/api/fib/{1..100}" ;;
    targets-file) record "${at[@]}" p_stampede "$STAMPEDE" "${common[@]}" --targets "$WORK/targets.txt" --seed 1 ;;
  esac
}

RECORDS="$WORK/records"
: >"$RECORDS"
for round in $(seq "$ROUNDS"); do
  check_quiet
  for v in "${VARIANTS[@]}"; do
    run_variant "$v" "$round"
  done
done
# The reference once more, so every run has one of its runs after it too.
run_variant single end

echo "nginx 1 worker on CPU 0; stampede on CPU 1, 1 thread, $CONNS connections, ${DURATION}s, $ROUNDS round(s)"
python3 bench/rounds.py single <"$RECORDS"
