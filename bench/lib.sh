# Shared by the bench scripts: one nginx worker pinned to CPU 0, the server
# every generator is measured against. Source it, then write
#   { nginx_head; cat <<EOF … EOF; } > "$WORK/nginx.conf"; start_nginx URL
# with WORK set to a scratch directory that the caller's trap removes.

# The stampede binary to measure, in $STAMPEDE: the one given, or this
# tree's release build, brought up to date first (a no-op when it is), so a
# bench never measures a binary older than the source beside it.
use_stampede() {
  if [ -z "${STAMPEDE:-}" ]; then
    cargo build --release -q -p stampede
    STAMPEDE=target/release/stampede
  fi
}

# Builds the git revision $1 in target/bench-base (its source extracted
# there, its own target dir) with the cargo arguments that follow, so a
# bench can measure an older build beside this tree's in the same rounds.
# The binaries land under target/bench-base/release.
build_base() {
  local rev=$1 src=target/bench-base/src
  shift
  rm -rf "$src"
  mkdir -p "$src"
  git archive "$rev" | tar -x -C "$src"
  CARGO_TARGET_DIR="$PWD/target/bench-base" cargo build --release -q --manifest-path "$src/Cargo.toml" "$@"
}

# The common head of the config: one worker on CPU 0, no logs, keep-alive
# that never ends during a run. The caller appends the rest of `http { … }`.
nginx_head() {
  cat <<EOF
worker_processes 1;
worker_cpu_affinity 01;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
EOF
}

# Starts nginx on $WORK/nginx.conf, pinned to CPU 0, and waits until URL answers.
start_nginx() {
  taskset -c 0 nginx -c "$WORK/nginx.conf" -p "$WORK" &
  for _ in $(seq 100); do curl -skf "$1" >/dev/null 2>&1 && return 0; sleep 0.05; done
  echo "nginx did not start" >&2
  cat "$WORK/error.log" >&2
  exit 2
}

# The clock and core N's idle time, in seconds since boot: "<uptime> <idle>".
# A core's busy time over an interval is the clock's advance less its idle
# time's. The idle time (/proc/stat's idle + iowait, and steal: time the
# core did no work for anyone on this machine) is measured at every idle
# entry and exit on a tickless kernel; the busy fields beside it (user,
# system, irq, softirq) are whole 10 ms ticks charged to whatever the tick
# interrupted, and a generator that naps for microseconds between bursts
# escapes many of them: on this VM they gave Stampede's HTTP/2 loop 1.7 s of
# a 4 s run that the idle time and its own process CPU put at 2.5-2.7 s
# (2026-11-25), and wrk, which never sleeps, its full 4 s. docs/load.md has
# the figures.
core_times() {
  awk -v c="cpu$1" -v hz="$HZ" 'FNR == NR { up = $1; next } $1 == c { printf "%s %.2f\n", up, ($5 + $6 + $9) / hz }' /proc/uptime /proc/stat
}
HZ=$(getconf CLK_TCK)

# Seconds a core was busy between two of its `core_times` readings $1 and $2.
core_busy_between() {
  awk -v b="$1" -v a="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.2f", (x[1] - y[1]) - (x[2] - y[2]) }'
}

# Percent of core N busy over half a second while the bench runs nothing:
# a check that the core a generator is pinned to is not shared.
core_idle_busy() {
  local b; b=$(core_times "$1"); sleep 0.5
  awk -v b="$b" -v a="$(core_times "$1")" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.1f", (1 - (x[2] - y[2]) / (x[1] - y[1])) * 100 }'
}

# Warns (on stderr) when core 1 is busy before a round: the figure of that
# round would include someone else's work.
check_quiet() {
  local busy; busy=$(core_idle_busy 1)
  if awk -v b="$busy" 'BEGIN { exit !(b > 5) }'; then
    echo "warning: core 1 was ${busy}% busy with the bench idle; its rounds measure someone else's work too" >&2
  fi
}

# Runs "$@" pinned to CPU 1; prints "<requests> <process CPU s> <core CPU s>".
# The process CPU is the child's user+sys from the shell's `times`, measured
# the same way for every tool, so none is trusted to report its own cost. The
# core CPU is the busy time of CPU 1 over the run (`core_times`: the clock
# less the core's measured idle time), which also counts the softirq work
# (loopback TCP) the kernel did on that core whether or not it charged the
# process for it. $1 is the function that reads the request count from the
# tool's output.
measure() {
  local parse=$1; shift
  local before; before=$(core_times 1)
  local out; out=$( { taskset -c 1 "$@" 2>&1; times; } )
  local after; after=$(core_times 1)
  local cpu; cpu=$(echo "$out" | tail -1 | awk '{ split($1,u,"m"); split($2,s,"m"); sub("s","",u[2]); sub("s","",s[2]); print u[1]*60+u[2]+s[1]*60+s[2] }')
  local core; core=$(core_busy_between "$before" "$after")
  local reqs; reqs=$(echo "$out" | $parse)
  if [ -z "$reqs" ] || [ "$reqs" = 0 ]; then echo "$* failed:" >&2; echo "$out" | tail -5 >&2; reqs=0; fi
  echo "$reqs $cpu $core"
}
# Runs `measure`'s arguments ("$@" after the first four) and appends its
# record to $RECORDS: GROUP TOOL ROUND, the requests, process CPU s and core
# CPU s, the duration in seconds, and the run's midpoint in epoch seconds, by
# which bench/rounds.py takes every ratio against the reference as it was at
# that moment (interpolated between the reference's runs either side). So a
# script runs the reference first in each round and once more at the end.
record() {
  local group=$1 tool=$2 round=$3 secs=$4; shift 4
  local t0; t0=$(date +%s.%N)
  local m; m=$(measure "$@")
  local t1; t1=$(date +%s.%N)
  echo "$group $tool $round $m $secs $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (a + b) / 2 }')" >>"$RECORDS"
}
# Runs the caller's `run_tool TOOL GROUP ROUND` for every tool of TOOLS in
# every group given ($2...), round by round ($ROUNDS of them, core 1 checked
# quiet before each group), then the reference $1 once more per group, so
# that every run has one of the reference's after it as well as before
# (bench/rounds.py interpolates between them). The records go to
# $RECORDS, $WORK/records.
interleave() {
  local ref=$1 round g tool; shift
  RECORDS="$WORK/records"
  : >"$RECORDS"
  for round in $(seq "$ROUNDS"); do
    for g in "$@"; do
      check_quiet
      for tool in "${TOOLS[@]}"; do
        run_tool "$tool" "$g" "$round"
      done
    done
  done
  for g in "$@"; do
    run_tool "$ref" "$g" end
  done
}
p_stampede() { grep -E 'requests in' | awk '{print $1}'; }
p_wrk()      { grep -E 'requests in' | awk '{print $1}'; }
p_h2load()   { grep -E '^requests:' | awk '{print $8}'; }
# oha's `--output-format json`: the responses, by status.
p_oha_json() { python3 -c 'import json,sys; t=sys.stdin.read(); r=json.loads(t[t.index("{"):t.rindex("}")+1]); print(sum(r["statusCodeDistribution"].values()))'; }

# nginx on 127.0.0.1:PORT answering every path with a 13-byte "Hello, World!",
# the server the generator benches measure against.
serve_hello() {
  { nginx_head; cat <<EOF
  server {
    listen 127.0.0.1:$1;
    location / { default_type text/plain; return 200 "Hello, World!"; }
  }
}
EOF
  } >"$WORK/nginx.conf"
  start_nginx "http://127.0.0.1:$1/"
}
