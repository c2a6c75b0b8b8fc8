#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ (cargo-fuzz, libFuzzer, nightly Rust) for
# SECONDS in all, split evenly, from the seed corpus in fuzz/seeds/<target>
# plus what earlier runs found (fuzz/corpus/<target>, not committed).
# Exits non-zero on the first crash, leak or timeout; libFuzzer leaves the
# reproducer in fuzz/artifacts/<target>/ and prints it.
#
#   scripts/fuzz.sh 60        # CI: one minute in all
#   scripts/fuzz.sh 600       # a longer look
#
# Installs cargo-fuzz (cargo install --locked) when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:?usage: scripts/fuzz.sh SECONDS}
targets=(response_h1 h2_client h3_response chunked_check)
per=$(( seconds / ${#targets[@]} ))
(( per >= 1 )) || per=1

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: the nightly toolchain is needed: rustup toolchain install nightly" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

cd fuzz
# -s none: no AddressSanitizer. The code under fuzzing (http1/response.rs,
# http2/session.rs, http2/block.rs, http3/frame.rs, the HPACK and QPACK
# decoders, and the checker's wire.rs) is safe Rust, where ASan
# has nothing to find that a panic would not show, and its instrumentation of
# every Rust crate made this build one of the longest steps of CI. Coverage
# guidance (SanitizerCoverage) stays on. Build and run take the same flags,
# or the run would rebuild.
flags=(-O -s none)
cargo +nightly fuzz build "${flags[@]}"
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    echo "fuzz.sh: $target for ${per}s"
    # -max_total_time bounds the run; -timeout flags one input slower than 10 s
    # (the HTTP/2 target's own bound is 1 s of paused clock, so real seconds
    # mean a hang); -rss_limit_mb keeps a leak from taking the machine.
    cargo +nightly fuzz run "${flags[@]}" "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
done
echo "fuzz.sh: no crash in ${seconds}s"
