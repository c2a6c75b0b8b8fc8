#!/usr/bin/env bash
# Does `stampede explain` tell the truth on the main job? Runs the shootout
# (scenarios/shootout.toml, or the scenario given) into a fresh folder, then
# explains it and prints how many runs name a lock and how many blame the
# load generator (bench/verdicts.py), how many `stampede run` judged valid,
# the main job's duration and the sizes of results.json and report.html.
# The reference apps hold no lock on their request path and the generator
# is pinned apart: on a quiet machine both counts should be 0 among valid runs.
#
#   bench/verdicts.sh [SCENARIO] [-- extra stampede run flags]
#
# Takes as long as the main job (about 5 minutes on the 2-core dev machine).
# Run it on a quiet machine: a build beside it makes generators late for real.
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIO=${1:-scenarios/shootout.toml}
shift || true
[ "${1:-}" = "--" ] && shift
STAMPEDE=${STAMPEDE:-target/release/stampede}
OUT=$(mktemp -d /tmp/stampede-verdicts.XXXXXX)

start=$(date +%s)
"$STAMPEDE" run "$SCENARIO" --out "$OUT" "$@" >"$OUT/run.log" 2>&1 || echo "stampede run exited $?: see $OUT/run.log"
took=$(( $(date +%s) - start ))
results=$(ls "$OUT"/*/results.json | head -1)
dir=$(dirname "$results")
echo "main job: $SCENARIO, $((took / 60)) min $((took % 60)) s, results in $dir"
size() { [ -f "$1" ] && du -h "$1" | cut -f1 || echo "none"; }
echo "results.json $(size "$results"), report.html $(size "$dir/report.html")"
"$STAMPEDE" explain --json "$results" >"$dir/explain.json"
python3 bench/verdicts.py <"$dir/explain.json"
