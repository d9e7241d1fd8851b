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

# The targets fuzz/sanitizer-none names build without a sanitizer, in a target directory of
# their own (so the ASan build of the others is not redone). That build runs in the background
# while the ASan targets fuzz (each on one core), and those targets run last.
asan=() none=()
for f in fuzz_targets/*.rs; do
    t="$(basename "$f" .rs)"
    if grep -qx "$t" sanitizer-none; then none+=("$t"); else asan+=("$t"); fi
done
nosan=(-s none --target-dir target/nosan)
cargo +nightly fuzz build "${asan[0]}"
nosan_log=$(mktemp)
nosan_pid=
if [ ${#none[@]} -gt 0 ]; then
    nice -n 10 cargo +nightly fuzz build "${nosan[@]}" "${none[@]}" >"$nosan_log" 2>&1 &
    nosan_pid=$!
fi

status=0
run_target() { # run_target TARGET [BUILD FLAGS...]
    local t=$1 seeds=() d
    shift
    echo "=== fuzz target $t (${secs}s)"
    mkdir -p "corpus/$t"
    for d in seeds regressions minimised; do  # committed inputs, read only
        if [ -d "$d/$t" ]; then seeds+=("$d/$t"); fi
    done
    if ! cargo +nightly fuzz run "$@" "$t" "corpus/$t" ${seeds[@]+"${seeds[@]}"} -- -max_total_time="$secs" -print_final_stats=1; then
        echo "!!! fuzz target $t FAILED (see fuzz/artifacts/$t)" >&2
        status=1
    fi
}
for t in "${asan[@]}"; do run_target "$t"; done
if [ -n "$nosan_pid" ] && ! wait "$nosan_pid"; then
    cat "$nosan_log" >&2
    echo "!!! the build without a sanitizer failed" >&2
    status=1
fi
rm -f "$nosan_log"
for t in ${none[@]+"${none[@]}"}; do run_target "$t" "${nosan[@]}"; done
exit $status
