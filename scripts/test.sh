#!/usr/bin/env bash
# The whole b2frame test suite (the README's test command; .ci/run calls it).
# Stages run in order; a failed stage does not stop the later ones. Ends with
# `N passed, M failed, K skipped` (counting stages) and exits non-zero if any stage failed. A stage
# that exits with 77 (the automake convention) could not run here and counts as skipped.
#
# Environment: CARGO_TARGET_DIR is honoured (default target/); B2FRAME_TEST_BUILD_DIR overrides
# the CMake build dir (default build-test/); FUZZ_SMOKE_SECONDS is passed to scripts/fuzz-smoke.sh.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
lib="$target_dir/release/libb2frame.so"
build="${B2FRAME_TEST_BUILD_DIR:-$root/build-test}"
jobs=$(nproc 2>/dev/null || echo 2)

passed=0
failed=0
skipped=0
results=()
# Each stage's output is also kept in a log, so that the end of the run can repeat the last lines
# of every failed stage: a CI system that only shows the tail of the output then still shows why.
logdir=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-test-logs.XXXXXX")
# Removed however the run ends (the failed stages' tails are printed before that); an interrupted
# run too. Install prefixes of failed stages are kept for diagnosis (see the stages).
bg_pids=()
trap 'for p in ${bg_pids[@]+"${bg_pids[@]}"}; do kill -- -"$p" 2>/dev/null; done; rm -rf "$logdir"' EXIT
trap 'exit 130' INT TERM
failed_logs=()
stage() { # stage NAME CMD...: runs CMD, records the result
  local name=$1
  shift
  echo
  echo "=================== [$name] $(date -u +%H:%M:%S)"
  local t0=$SECONDS rc=0 log
  log="$logdir/$((passed + failed + skipped + 1)).log"
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  record "$name" "$rc" $((SECONDS - t0)) "$log"
}

# A stage that mostly waits (downloads, subprocesses) runs beside the later ones: stage_bg starts
# it with its output in a log (in its own process group, ended if the run is interrupted), and
# the summary waits for it and shows its output and result as those of any other stage.
bg_stages=()
stage_bg() { # stage_bg NAME CMD...
  local name=$1 log="$logdir/bg${#bg_stages[@]}.log"
  shift
  echo
  echo "=================== [$name] started beside the next stages $(date -u +%H:%M:%S); reported at the end"
  set -m
  (t0=$SECONDS; "$@" >"$log" 2>&1; echo "$? $((SECONDS - t0))" >"$log.rc") &
  bg_pids+=($!)
  set +m
  bg_stages+=("$name|$log|$!")
}
wait_bg_stages() {
  local entry name log pid rc dt
  for entry in ${bg_stages[@]+"${bg_stages[@]}"}; do
    IFS='|' read -r name log pid <<<"$entry"
    wait "$pid"
    echo
    echo "=================== [$name] (ran in the background) $(date -u +%H:%M:%S)"
    cat "$log"
    read -r rc dt <"$log.rc" 2>/dev/null || { rc=1; dt=0; }
    record "$name" "$rc" "$dt" "$log"
  done
}

record() { # record NAME RC SECONDS LOG
  local name=$1 rc=$2 dt=$3 log=$4
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    results+=("PASS  $name (${dt}s)")
  elif [ "$rc" = 77 ]; then
    skipped=$((skipped + 1))
    results+=("SKIP  $name (${dt}s)")
  else
    failed=$((failed + 1))
    results+=("FAIL  $name (exit $rc, ${dt}s)")
    failed_logs+=("$name|$log")
  fi
  local verdict="FAILED (exit $rc)"
  [ "$rc" = 0 ] && verdict=passed
  [ "$rc" = 77 ] && verdict=SKIPPED
  echo "=================== [$name] $verdict in ${dt}s"
}

# A script another part of the project provides: missing is a failure, not a skip.
required_script() { # required_script PATH ARGS...
  local script=$1
  shift
  if [ ! -f "$root/$script" ]; then
    echo "MISSING: $script does not exist yet; this stage cannot pass without it" >&2
    return 127
  fi
  bash "$root/$script" "$@"
}

cmake_build_and_ctest() {
  cmake -S "$root" -B "$build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
    -DB2FRAME_BUILD_TESTS=ON -DB2FRAME_CTEST_ASAN=ON -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON || return 1
  local rc=0
  # -k: one test that does not compile or link must not hide the others; ctest then reports it.
  cmake --build "$build" --parallel "$jobs" -- -k || rc=1
  (cd "$build" && ctest -L '^c$' --output-on-failure --parallel "$jobs") || rc=1
  return $rc
}

ctest_asan() {
  [ -f "$build/CTestTestfile.cmake" ] || { echo "no CMake test build (the previous stage failed early)" >&2; return 1; }
  (cd "$build" && ctest -L '^asan$' --output-on-failure --parallel "$jobs")
}

install_and_consumers() {
  local prefix
  prefix=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-prefix.XXXXXX")
  # Through the README's install command (own build dir; cargo has nothing left to build), which
  # also compiles and runs examples/hello.c against the installed copy.
  B2FRAME_BUILD_DIR="$build-install" bash "$root/scripts/install.sh" "$prefix" -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON || return 1
  echo "installed into $prefix:"
  (cd "$prefix" && find . \( -type f -o -type l \) | sort | sed 's/^/  /')
  local rc=0
  # The documented layout and soname.
  local realname
  realname=$(cd "$prefix/lib" && ls libb2frame.so.*.*.* 2>/dev/null | head -n1)
  for f in "lib/$realname" lib/libb2frame.so.1 lib/libb2frame.so lib/libb2frame.a include/blosc2.h \
           lib/pkgconfig/b2frame.pc lib/cmake/B2frame/B2frameConfig.cmake \
           lib/cmake/B2frame/B2frameConfigVersion.cmake lib/b2frame-compat/libblosc2.so.9 \
           bin/b2frame share/man/man1/b2frame.1 share/man/man1/b2frame-info.1; do
    [ -e "$prefix/$f" ] || { echo "install is missing $f" >&2; rc=1; }
  done
  if ! readelf -d "$prefix/lib/libb2frame.so.1" | grep -q 'SONAME.*\[libb2frame\.so\.1\]'; then
    echo "libb2frame.so.1 does not carry SONAME libb2frame.so.1" >&2
    rc=1
  fi
  bash "$root/tests/consumers/run.sh" "$prefix" || rc=1
  # A failed stage keeps its install prefix for diagnosis.
  [ "$rc" = 0 ] && rm -rf "$prefix"
  return $rc
}

# Drop-in proof against the reference c-blosc2 (owned by conformance; see scripts/dropin-check.sh).
dropin_stage() {
  local prefix rc=0
  prefix=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-dropin-prefix.XXXXXX")
  B2FRAME_BUILD_DIR="$build-install" bash "$root/scripts/install.sh" "$prefix" -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON \
    >"$prefix.install.log" 2>&1 || { tail -n 30 "$prefix.install.log"; return 1; }
  required_script scripts/dropin-check.sh "$prefix" || rc=$?
  # A failed stage keeps its install prefix and log for diagnosis.
  [ "$rc" = 0 ] && rm -rf "$prefix" "$prefix.install.log"
  return $rc
}

# Consumers' bindings (bindings/LANG/test.sh) against a fresh install; Julia's script prints one
# SKIPPED line when julia is not on PATH, and the stage then counts as skipped (exit 77).
bindings_stage() { # bindings_stage LANG
  local prefix rc=0
  if [ "$1" = julia ] && ! command -v julia >/dev/null 2>&1; then
    bash "$root/bindings/julia/test.sh" /nonexistent || return
    return 77
  fi
  prefix=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-$1-prefix.XXXXXX")
  B2FRAME_BUILD_DIR="$build-install" bash "$root/scripts/install.sh" "$prefix" \
    >"$prefix.install.log" 2>&1 || { tail -n 30 "$prefix.install.log"; return 1; }
  bash "$root/bindings/$1/test.sh" "$prefix" || rc=$?
  [ "$rc" = 0 ] && rm -rf "$prefix" "$prefix.install.log"
  return $rc
}

pytest_stage() {
  local files
  files=$(find "$root/tests/python" -name 'test_*.py' -o -name '*_test.py' 2>/dev/null | head -n1)
  if [ -z "$files" ]; then
    echo "tests/python has no test files: nothing to run"
    return 0
  fi
  B2FRAME_LIB="$lib" "$root/.venv/bin/python" -m pytest -q "$root/tests/python"
}

lint_stage() { # the format and the lints every commit must pass (see Cargo.toml [lints])
  cargo fmt --all --check && cargo clippy --release --all-targets -- -D warnings
}

stage "setup-env" bash "$root/scripts/setup-env.sh"
stage "cargo build --release" cargo build --release
stage "cargo fmt --check + clippy -D warnings" lint_stage
stage "cargo test --release" cargo test --release --no-fail-fast
# Deterministic mutants of the c-blosc2 corpus and of the project's hostile frames, each read
# through every path in a child process, under memory and CPU limits no valid frame reaches.
stage "hostile probe (RLIMIT_AS 256 MiB, RLIMIT_CPU 1 s per mutant)" bash "$root/scripts/hostile-probe.sh"
# The API docs build without a warning (broken or private intra-doc links).
stage "cargo doc" env RUSTDOCFLAGS="-D warnings" cargo doc --no-deps
stage "abi-check" required_script scripts/abi-check.sh "$lib"
stage "exports-check" required_script scripts/exports-check.sh "$lib"
stage "cmake build + ctest" cmake_build_and_ctest
stage "ctest under AddressSanitizer" ctest_asan
stage "install + consumer builds" install_and_consumers
# python-blosc2's whole suite on a fresh install (skipped without its sources: see the script).
stage_bg "python-blosc2's suite on libb2frame" env B2FRAME_BUILD_DIR="$build-python" bash "$root/scripts/python-blosc2-suite.sh"
# The thread stress tests (C and Rust) under ThreadSanitizer, nightly rustc; any race fails
# (after the python-blosc2 stage has started, whose downloads and builds it overlaps).
stage "ThreadSanitizer" bash "$root/scripts/tsan.sh"
stage "drop-in: one c-blosc2 binary on both libraries" dropin_stage
stage "pytest tests/python" pytest_stage
stage "CLI README example" bash "$root/tests/cli-example.sh" "$target_dir/release"
# Dynamically loaded plugins from their PyPI packages (cached venvs; skipped offline).
stage "dynamic plugins" bash "$root/scripts/plugins-test.sh" "$target_dir/release"
# The book (docs/, mdBook at a pinned version installed once into cargo's bin dir) and its links.
stage "book" bash "$root/scripts/book.sh"
stage "Go bindings" bindings_stage go
# Without Julia: every @ccall of bindings/julia against include/blosc2.h and the library's exports.
stage "Julia @ccall prototypes" python3 "$root/scripts/julia-ccall-check.py" "$lib"
stage "Julia bindings" bindings_stage julia
if [ -f "$root/scripts/fuzz-smoke.sh" ]; then
  stage "fuzz smoke" bash "$root/scripts/fuzz-smoke.sh" ${FUZZ_SMOKE_SECONDS:+"$FUZZ_SMOKE_SECONDS"}
fi
# aarch64 Linux under qemu-user (docs/platforms.md): the cross toolchain, qemu and the aarch64
# reference wheel are installed by the script itself.
stage "aarch64 Linux under qemu" bash "$root/scripts/cross-aarch64.sh"
# Windows x86-64 under wine (docs/platforms.md): mingw-w64, wine, the rustup target and the
# win_amd64 reference wheel are installed by the script itself; --ci runs a subset of the Rust
# test binaries (the whole script is run by hand).
stage "Windows x86-64 under wine" bash "$root/scripts/cross-windows.sh" --ci

wait_bg_stages
echo
echo "=================== summary"
printf '  %s\n' "${results[@]}"
for entry in ${failed_logs[@]+"${failed_logs[@]}"}; do
  echo
  echo "=================== last lines of the failed stage [${entry%%|*}]"
  tail -n 20 "${entry#*|}"
done
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
