#!/usr/bin/env bash
# Passes test output through and ends it with one line for the whole suite:
# "tests: N passed, M failed". cargo prints one "test result:" line per test
# binary (the last one often a doc-test binary with 0 tests), so without this
# the run's closing line would describe only its last binary.
set -uo pipefail
passed=0 failed=0
while IFS= read -r line; do
  printf '%s\n' "$line"
  if [[ $line =~ ^test\ result:\ [A-Za-z]+\.\ ([0-9]+)\ passed\;\ ([0-9]+)\ failed ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
  fi
done
echo "tests: $passed passed, $failed failed"
