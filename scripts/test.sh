#!/usr/bin/env bash
# The tests of `make test` after lint: every Rust test binary built once
# (the release build of `make build` with the test harnesses beside it),
# then run side by side, because most of their time is waiting (loads of a
# fixed duration, servers starting, apps building) and cargo would run them
# one after the other. Two jobs that need none of those binaries start
# first and run beside the build: the fuzz minute (scripts/fuzz.sh, its own
# nightly build) and the tonic app's unit tests (building tonic takes the
# longest). Beside the test binaries: the doc tests, the reference apps'
# own unit tests (the HTTP apps' and the gRPC apps') and the bench scripts'
# tests. The binaries that judge timing or sample this machine (ALONE) run
# afterwards, one at a time, with the machine to themselves. Each job
# writes its own log; the logs are printed in a fixed order and end with
# tally.sh's line for the whole suite. Exit status: 0 when every job passed.
#
#   scripts/test.sh            everything
#   JOBS=1 scripts/test.sh     the side-by-side jobs one at a time (to compare)
#   PLAN=1 scripts/test.sh     build, then print which job runs where, run nothing
#   FUZZ_SECONDS=0 scripts/test.sh   without the fuzz minute
set -uo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
JOBS=${JOBS:-0}   # side-by-side jobs at once; 0: all of them
# Test binaries (cargo target names) that must run alone: tests/serial/ (CPU
# pinning, latency against a computed truth), the probe's sampling interval
# and microstates, and the off-CPU profile.
ALONE=(serial probe microstates offcpu)
# Test binaries that build and start the reference apps in apps/ (go build
# -o server, mvn package, a venv): one at a time, followed by the apps' own
# unit tests, so that no two write the same app's build output at once.
APPS=(apps profile)
logs=target/test-logs
rm -rf "$logs" && mkdir -p "$logs"

# in_list NAME LIST...: whether the binary of job NAME is one of LIST.
in_list() {
  local job=${1%-*} item
  shift
  for item in "$@"; do [[ $job == "$item" ]] && return 0; done
  return 1
}

# run JOB DIR COMMAND...: one job, its output in $logs/JOB.log, its exit
# status in $logs/JOB.rc. Test binaries run where cargo runs them: in their
# package's directory.
run() {
  local job=$1 dir=$2
  shift 2
  (cd "$dir" && "$@") >"$logs/$job.log" 2>&1
  echo $? >"$logs/$job.rc"
}

# Started before the build, beside it: they need no test binary, and
# their own builds and the fuzz minute's single core fill the CPU the
# build's serial stretches (linking) leave idle.
early=()
if [[ ${PLAN:-0} != 1 ]]; then
  if ((${FUZZ_SECONDS:-60} > 0)); then
    run fuzz . scripts/fuzz.sh "${FUZZ_SECONDS:-60}" &
    early+=($!)
  fi
  run grpc-rust-unit-tests . make --no-print-directory grpc-rust-unit-tests &
  early+=($!)
fi

# Build once: every test binary of the workspace in the release profile,
# and with them the `stampede` binary the integration tests run (the same
# artifacts as `make build`: only the test harnesses are new).
if ! $CARGO test --release --workspace --no-run --message-format=json-render-diagnostics >"$logs/build.json"; then
  echo "tests: 0 passed, 1 failed (the test build)"
  wait "${early[@]}"
  exit 1
fi
# One line per test binary: job name, package directory, executable.
mapfile -t binaries < <(python3 -c '
import json, os, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["profile"]["test"] and m.get("executable"):
        name, exe = m["target"]["name"], m["executable"]
        print(name + "-" + os.path.basename(exe).rsplit("-", 1)[-1], os.path.dirname(m["manifest_path"]), exe)
' "$logs/build.json")

# The apps lane: the test binaries in APPS, then the apps' unit tests.
apps_lane() {
  local line job dir exe
  for line in "${binaries[@]}"; do
    read -r job dir exe <<<"$line"
    if in_list "$job" "${APPS[@]}"; then run "$job" "$dir" "$exe"; fi
  done
  run app-unit-tests . make --no-print-directory app-unit-tests
  run grpc-app-unit-tests . make --no-print-directory grpc-app-unit-tests
}

if [[ ${PLAN:-0} == 1 ]]; then
  for line in "${binaries[@]}"; do
    read -r job _ <<<"$line"
    if in_list "$job" "${APPS[@]}"; then echo "apps lane:    $job"
    elif in_list "$job" "${ALONE[@]}"; then echo "alone, after: $job"
    else echo "side by side: $job"; fi
  done
  echo "apps lane:    app-unit-tests grpc-app-unit-tests"
  echo "beside the build: fuzz grpc-rust-unit-tests"
  echo "side by side: doc-tests bench-tests"
  exit 0
fi

started=0
side() {
  "$@" &
  started=$((started + 1))
  if ((JOBS > 0 && started % JOBS == 0)); then wait; fi
}
side apps_lane
for line in "${binaries[@]}"; do
  read -r job dir exe <<<"$line"
  in_list "$job" "${ALONE[@]}" "${APPS[@]}" || side run "$job" "$dir" "$exe"
done
side run doc-tests . $CARGO test --release --workspace --doc -q
side run bench-tests . make --no-print-directory bench-tests
wait

for line in "${binaries[@]}"; do
  read -r job dir exe <<<"$line"
  if in_list "$job" "${ALONE[@]}"; then run "$job" "$dir" "$exe"; fi
done

# The logs, in a fixed order: the apps' and bench scripts' tests first (their
# own formats, not counted), then every Rust test binary and the doc tests,
# whose "test result:" lines tally.sh adds up into the last line.
status=0
for job in app-unit-tests grpc-app-unit-tests grpc-rust-unit-tests bench-tests; do
  [[ -f $logs/$job.log ]] || continue
  echo "==> $job"
  cat "$logs/$job.log"
done
# The fuzz minute's log is libFuzzer's thousands of status lines: its last
# lines when it passed, all of it when it did not.
if [[ -f $logs/fuzz.log ]]; then
  echo "==> fuzz"
  if [[ $(cat "$logs/fuzz.rc") == 0 ]]; then tail -n 5 "$logs/fuzz.log"; else cat "$logs/fuzz.log"; fi
fi
{
  for line in "${binaries[@]}" "doc-tests"; do
    read -r job _ <<<"$line"
    echo "==> $job"
    cat "$logs/$job.log"
  done
  for rc in "$logs"/*.rc; do
    [[ $(cat "$rc") == 0 ]] || echo "FAILED: $(basename "$rc" .rc) (log: ${rc%.rc}.log)"
  done
} | scripts/tally.sh
for rc in "$logs"/*.rc; do [[ $(cat "$rc") == 0 ]] || status=1; done
exit $status
