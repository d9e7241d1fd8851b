#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/fuzz_targets for a few seconds each; fails on any crash.
# Usage: scripts/fuzz-smoke.sh [seconds-per-target]   (default 10)
set -euo pipefail
secs="${1:-10}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz missing: installing it" >&2
    cargo install cargo-fuzz --locked
fi

# gcc-built ASan reports a false stack-use-after-scope inside zstd (see zstd_decompress.rs).
export CFLAGS="${CFLAGS:-} -fno-sanitize-address-use-after-scope"
# gcc-built ASan also reports a false odr-violation at start-up for libdeflate (the zlib decoder):
# its decode template, compiled twice into one object, has a function-local static array.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0"

status=0
for f in fuzz_targets/*.rs; do
    t="$(basename "$f" .rs)"
    echo "=== fuzz target $t (${secs}s)"
    mkdir -p "corpus/$t"
    seeds=()
    for d in seeds regressions minimised; do  # committed inputs, read only
        if [ -d "$d/$t" ]; then seeds+=("$d/$t"); fi
    done
    # The targets fuzz/sanitizer-none names build without a sanitizer, in a target directory
    # of their own (so the ASan build of the others is not redone).
    build=()
    if grep -qx "$t" sanitizer-none; then build=(-s none --target-dir target/nosan); fi
    if ! cargo +nightly fuzz run ${build[@]+"${build[@]}"} "$t" "corpus/$t" ${seeds[@]+"${seeds[@]}"} -- -max_total_time="$secs" -print_final_stats=1; then
        echo "!!! fuzz target $t FAILED (see fuzz/artifacts/$t)" >&2
        status=1
    fi
done
exit $status
