#!/usr/bin/env bash
# ThreadSanitizer over the concurrency stress tests; fails on any reported race.
#
# * libb2frame.so built by nightly rustc with -Zsanitizer=thread and -Zbuild-std: the standard
#   library must be instrumented too, or TSan cannot see the atomics of its locks (std's Mutex
#   parks threads with raw futex calls) and reports false races between any two critical
#   sections. The C codecs it compiles (zstd, lz4) get -fsanitize=thread as well. Built as the
#   cdylib only, without the ZFP codecs (no thread test uses them; zfp would add a cmake build).
# * The C stress tests (ctests/test_schunk_threads.c, ctests/test_b2nd_threads.c) compiled by gcc
#   with -fsanitize=thread and linked with the TSan runtime of that same rustc (one runtime in
#   the process: gcc's own libtsan next to it would be a second copy), fewer operations each.
# * The core's Rust stress test (core/tests/threads.rs) built the same way.
#
# Usage: scripts/tsan.sh            (the README's test command runs it as a stage)
# Environment: CARGO_TARGET_DIR (the build goes to its tsan/ subdirectory, default target/tsan).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
triple=x86_64-unknown-linux-gnu
if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "ThreadSanitizer stage: only on x86-64 Linux" >&2
  exit 77
fi
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "installing the nightly toolchain (ThreadSanitizer needs -Zsanitizer and -Zbuild-std)" >&2
  rustup toolchain install nightly --profile minimal --component rust-src
fi
if ! rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
  echo "installing the nightly rust-src component (needed by -Zbuild-std)" >&2
  rustup component add rust-src --toolchain nightly
fi
tdir="${CARGO_TARGET_DIR:-$root/target}/tsan"
export RUSTFLAGS="-Zsanitizer=thread"
export RUSTDOCFLAGS="-Zsanitizer=thread"
export CFLAGS="-fsanitize=thread"
# Release builds (the thread tests are long), with debug info for the reports' stacks.
export CARGO_PROFILE_RELEASE_DEBUG=line-tables-only
t0=$SECONDS
cargo +nightly rustc -Zbuild-std --target "$triple" --target-dir "$tdir" --release --lib \
  --no-default-features --crate-type cdylib
echo "built libb2frame.so with ThreadSanitizer in $((SECONDS - t0)) s"
lib="$tdir/$triple/release"
work=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-tsan.XXXXXX")
trap 'rm -rf "$work"' EXIT
ln -s "$lib/libb2frame.so" "$work/libb2frame.so.1"
rt=$(ls "$(rustc +nightly --print sysroot)/lib/rustlib/$triple/lib/"librustc-nightly_rt.tsan.a)

export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
rc=0
for t in test_schunk_threads:-DOPS=300 test_b2nd_threads:-DROUNDS=25; do
  name=${t%%:*}
  gcc -std=gnu11 -O1 -g -fsanitize=thread -Wall -Wextra -Werror ${t#*:} -I include -I ctests \
    -c "ctests/$name.c" -o "$work/$name.o"
  # Linked without -fsanitize (which would add gcc's libtsan): rustc's runtime, whole.
  gcc "$work/$name.o" -o "$work/$name" -L "$lib" -Wl,-rpath,"$work" -lb2frame \
    -Wl,--whole-archive "$rt" -Wl,--no-whole-archive -lpthread -lm -ldl -lrt -lstdc++
  mkdir -p "$work/run-$name"
  t1=$SECONDS
  if (cd "$work/run-$name" && "$work/$name"); then
    echo "$name under ThreadSanitizer: no race ($((SECONDS - t1)) s)"
  else
    echo "$name under ThreadSanitizer: FAILED (exit $?)" >&2
    rc=1
  fi
done

# The Rust side: the core's stress test, instrumented like the library (same target dir: the
# standard library and the dependencies are not built again).
t1=$SECONDS
if B2FRAME_THREADS_ROUNDS=60 cargo +nightly test -Zbuild-std --target "$triple" --target-dir "$tdir" \
  --release -p blosc2-frame --no-default-features --test threads; then
  echo "core/tests/threads.rs under ThreadSanitizer: no race ($((SECONDS - t1)) s)"
else
  echo "core/tests/threads.rs under ThreadSanitizer: FAILED" >&2
  rc=1
fi
echo "ThreadSanitizer stage: $((SECONDS - t0)) s"
exit $rc
