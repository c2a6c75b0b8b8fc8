#!/usr/bin/env bash
# How much CPU does each load generator spend per request over HTTPS/1.1,
# HTTP/2 and pipelined HTTP/1.1?
#
# Generates a throw-away EC P-256 certificate, starts nginx (Debian's
# nginx-light has the ssl and http2 modules; installed if missing) on
# 127.0.0.1 with one worker pinned to CPU 0 answering a 13-byte body, then
# runs stampede, h2load and, when installed, oha side by side in three
# scenarios, each tool pinned to CPU 1 with one thread for the same duration:
#
#   https-h1   HTTPS/1.1, 32 keep-alive connections (TLS 1.3, session resumed)
#   h2-10      HTTP/2 over TLS (ALPN h2), 4 connections x 10 concurrent streams
#   pipe-16    cleartext HTTP/1.1, 32 connections, 16 requests pipelined on each
#
# The CPU of every generator is measured the same two ways, from outside, so
# no tool is trusted to report its own cost (bench/lib.sh's `measure`: the
# process's user+sys, and the busy time of its core: `core_times`). Rounds
# are interleaved, h2load first in each and once more at the end; the table
# shows medians with min-max and the ratio to h2load as it was at each run
# (interpolated between its runs either side: bench/rounds.py). oha cannot
# pipeline: no pipe-16 entry.
#
#   bench/protocols.sh [DURATION_S] [ROUNDS]     (defaults: 5 s, 5 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-5}
ROUNDS=${2:-5}
PORT_H1=${BENCH_PORT:-18490}
PORT_TLS=$((PORT_H1 + 1))
WORK=$(mktemp -d)
trap 'kill $(cat "$WORK/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need nginx || ! need h2load || ! need openssl; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light nghttp2-client openssl >/dev/null
fi
nginx -V 2>&1 | grep -q http_v2_module || { echo "this nginx has no http_v2_module; install nginx-full" >&2; exit 2; }
. bench/lib.sh
use_stampede
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

# `listen ... ssl http2` works on every nginx with the module (1.25+ only
# warns that `http2 on;` is the newer spelling).
{ nginx_head; cat <<EOF
  ssl_certificate $WORK/cert.pem;
  ssl_certificate_key $WORK/key.pem;
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_session_cache shared:SSL:1m;
  server {
    listen 127.0.0.1:$PORT_H1;
    listen 127.0.0.1:$PORT_TLS ssl http2;
    location / { default_type text/plain; return 200 "Hello, World!"; }
  }
}
EOF
} >"$WORK/nginx.conf"
start_nginx "https://127.0.0.1:$PORT_TLS/"
curl -sf "http://127.0.0.1:$PORT_H1/" >/dev/null

H1="http://127.0.0.1:$PORT_H1/"
TLS="https://127.0.0.1:$PORT_TLS/"

# oha's "Total:" switches between ms and s; its status-code counts do not.
p_oha()      { grep -E '^ *\[[0-9]+\] [0-9]+ responses' | awk '{s+=$2} END{print s+0}'; }

TOOLS=(h2load stampede)
[ -x "$OHA" ] && TOOLS+=(oha)
D=$DURATION

# Records one run of scenario $1 with tool $2 in round $3.
run() {
  local at=("$1" "$2" "$3" "$D")
  case "$1/$2" in
    https-h1/stampede) record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c 32 -d "${D}s" --insecure "$TLS" ;;
    https-h1/h2load)   record "${at[@]}" p_h2load h2load --h1 -t 1 -c 32 -D "$D" "$TLS" ;;
    https-h1/oha)      record "${at[@]}" p_oha "$OHA" --no-tui --insecure -c 32 -z "${D}s" "$TLS" ;;
    h2-10/stampede)    record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c 4 --http2 --streams 10 -d "${D}s" --insecure "$TLS" ;;
    h2-10/h2load)      record "${at[@]}" p_h2load h2load -t 1 -c 4 -m 10 -D "$D" "$TLS" ;;
    h2-10/oha)         record "${at[@]}" p_oha "$OHA" --no-tui --insecure --http2 -c 4 -p 10 -z "${D}s" "$TLS" ;;
    pipe-16/stampede)  record "${at[@]}" p_stampede "$STAMPEDE" load -t 1 -c 32 --pipeline 16 -d "${D}s" "$H1" ;;
    pipe-16/h2load)    record "${at[@]}" p_h2load h2load --h1 -t 1 -c 32 -m 16 -D "$D" "$H1" ;;
    pipe-16/oha)       ;;
  esac
}

echo "nginx $(nginx -v 2>&1 | sed 's/.*\///') 1 worker on CPU 0; each generator on CPU 1, 1 thread, ${D}s per run, $ROUNDS round(s)"
echo "HTTP/1.1: 32 connections; HTTP/2: 4 connections x 10 streams; oha cannot pipeline"
RECORDS="$WORK/records"
: >"$RECORDS"
for round in $(seq "$ROUNDS"); do
  check_quiet
  for scenario in https-h1 h2-10 pipe-16; do
    for tool in "${TOOLS[@]}"; do
      run "$scenario" "$tool" "$round"
    done
  done
done
# h2load once more, so every run has one of h2load's after it as well as before.
for scenario in https-h1 h2-10 pipe-16; do
  run "$scenario" h2load end
done
python3 bench/rounds.py h2load <"$RECORDS"
