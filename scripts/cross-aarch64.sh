#!/usr/bin/env bash
# aarch64 Linux as a tested platform: cross-builds b2frame (library, CLI, Rust tests, C tests) for
# aarch64-unknown-linux-gnu here and runs them under qemu-user, against the aarch64 build of the
# reference c-blosc2 (libblosc2.so.9 from the pinned python-blosc2 wheel for manylinux_2_28_aarch64).
#
#   1. installs what it lacks: Debian's gcc- and g++-aarch64-linux-gnu and qemu-user (apt-get),
#      the rustup target, and the aarch64 wheel (pip download, unpacked under the cargo target dir);
#   2. Rust tests under qemu (each test binary through scripts/stall-runner.sh; tests that start
#      processes run them under the bare emulator, B2FRAME_CHILD_RUNNER): every unit and
#      integration test but the test functions SKIP below names, for the reasons given there;
#   3. which SIMD kernels ran: the filters tests print the levels they compared (NEON must be one);
#   4. every C test of ctests/, compiled with the cross gcc and run under qemu in its own directory;
#   5. frames: tests/dropin/dropin.c, built once for aarch64 against the reference headers and
#      library, writes every kind of frame with b2frame and with the aarch64 c-blosc2, each reads
#      the other's, and the frames b2frame writes on aarch64 must be byte-identical to those it
#      writes on x86-64 for the same calls.
# Ends with `N passed, M failed` (one per step) and exits non-zero if a step failed.
#
# Environment: CARGO_TARGET_DIR is honoured; B2FRAME_AARCH64_SKIP replaces the list of Rust test
# functions left out (see SKIP below); B2FRAME_AARCH64_BINARY_TIMEOUT bounds one run of a Rust test
# binary (seconds, default 600; scripts/stall-runner.sh).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
triple=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu
target_dir="${CARGO_TARGET_DIR:-$root/target}"
# shellcheck source=scripts/cross-common.sh
. "$root/scripts/cross-common.sh"
out="$target_dir/$triple/release"
cross_begin aarch64

# The Rust tests run under qemu: every unit and integration test of the workspace (`--lib
# --tests`, so renamed or regrouped test files need no change here) but the test functions SKIP
# names (passed as `--skip`; B2FRAME_AARCH64_SKIP replaces the list, empty runs them all):
#  * pools_survive_fork: qemu-user cannot start threads in the child of a fork() made by a
#    multithreaded process (the child exits with 127 before running any of our code), so it
#    cannot pass there;
#  * b2frame_h_is_up_to_date, b2frame_h_declares_the_functions_of_this_crate: they regenerate
#    include/b2frame.h with cbindgen, a host tool; nothing in them depends on the target.
SKIP=(${B2FRAME_AARCH64_SKIP-pools_survive_fork b2frame_h_is_up_to_date b2frame_h_declares_the_functions_of_this_crate})

# 1. Tools, target and the reference wheel.
need_apt=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need_apt+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
# g++ too: zfp-sys (the default `zfp` feature) configures zfp with CMake, which wants a C++ compiler.
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need_apt+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null 2>&1 || need_apt+=(qemu-user)
cross_apt_install ${need_apt[@]+"${need_apt[@]}"}
cross_rust_target
cross_reference_wheel manylinux_2_28_aarch64 blosc2/lib/libblosc2.so.9 aarch64
reflib="$refdir/blosc2/lib/libblosc2.so.9"
refinc="$refdir/blosc2/include"
readelf -h "$reflib" 2>/dev/null | grep -q 'Machine:.*AArch64' || { echo "$reflib is not an aarch64 library" >&2; exit 1; }
echo "reference c-blosc2 for aarch64: $reflib"

runner="qemu-aarch64 -L $sysroot"
# cargo starts every test binary through scripts/stall-runner.sh: qemu-user with a time bound
# (the slowest binary takes about 110 s on a loaded machine), and one more run after an emulator
# stall (the script says which endings count as one and why). Processes the tests start themselves
# go through the bare emulator (B2FRAME_CHILD_RUNNER, read by tests/common): a kill test must kill
# the emulator, not the wrapper.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$root/scripts/stall-runner.sh aarch64 ${B2FRAME_AARCH64_BINARY_TIMEOUT:-600} -- $runner --"
export B2FRAME_CHILD_RUNNER="$runner"
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export B2FRAME_REF_LIB="$reflib"

# 2. The library, the CLI and the Rust tests.
if cargo build --release --target "$triple" --lib --bins; then
  ok "cross-built libb2frame.so and the b2frame CLI ($(readelf -h "$out/libb2frame.so" | sed -n 's/.*Machine: *//p'))"
else
  bad "cargo build --target $triple"
fi
skip_args=()
for t in ${SKIP[@]+"${SKIP[@]}"}; do skip_args+=(--skip "$t"); done
log="$work/rust-tests.log"
t0=$SECONDS
if cross_rust_tests "$log" --lib --tests -- --nocapture ${skip_args[@]+"${skip_args[@]}"}; then
  ok "Rust tests under qemu-aarch64: $rust_summary, $((SECONDS - t0)) s with their build (not run: ${SKIP[*]:-none})"
else
  bad "Rust tests under qemu-aarch64"
  tail -n 40 "$log" | sed 's/^/     | /'
fi

# 3. The NEON kernels ran (named by the filters tests).
if grep -q '^SIMD levels checked against the portable kernels: .*"neon"' "$log" &&
  grep -q '^shuffle/bitshuffle level compared with the reference: neon ' "$log"; then
  ok "NEON shuffle/bitshuffle kernels equal the portable ones and the aarch64 c-blosc2"
else
  bad "the NEON kernels were not exercised (no neon level in the filters output)"
fi

# 4. The C tests.
cflags=(-std=gnu11 -O1 -Wall -Wextra -Werror -I"$root/include" -I"$root/ctests")
# The programs load the library by its soname, libb2frame.so.1, as an installed copy has it.
mkdir -p "$work/lib"
ln -sf "$out/libb2frame.so" "$work/lib/libb2frame.so.1"
c_ok=0
c_bad=0
for src in "$root"/ctests/test_*.c; do
  name=$(basename "$src" .c)
  exe="$work/ctests/$name"
  mkdir -p "$work/ctests/$name.work"
  if ! aarch64-linux-gnu-gcc "${cflags[@]}" -o "$exe" "$src" -L"$out" -lb2frame -lm -lpthread \
    -Wl,-rpath,"$work/lib" >"$work/ctests/$name.build.log" 2>&1; then
    echo "  FAIL $name (build)"
    sed 's/^/     | /' "$work/ctests/$name.build.log"
    c_bad=$((c_bad + 1))
    continue
  fi
  if (cd "$work/ctests/$name.work" && timeout -k 10 600 $runner "$exe") >"$work/ctests/$name.log" 2>&1; then
    c_ok=$((c_ok + 1))
  else
    echo "  FAIL $name"
    tail -n 20 "$work/ctests/$name.log" | sed 's/^/     | /'
    c_bad=$((c_bad + 1))
  fi
done
if [ "$c_bad" = 0 ] && [ "$c_ok" -gt 0 ]; then
  ok "C tests under qemu-aarch64: $c_ok programs"
else
  bad "C tests under qemu-aarch64: $c_bad of $((c_ok + c_bad)) failed"
fi

# 5. Frames: one aarch64 binary on both aarch64 libraries, and the same frames as on x86-64.
mkdir -p "$work/dropin/compat"
ln -sf "$out/libb2frame.so" "$work/dropin/compat/libblosc2.so.9"
dropin="$work/dropin/dropin"
if aarch64-linux-gnu-gcc -std=gnu11 -O1 -Wall -Wextra -Werror -I"$refinc" -o "$dropin" \
  "$root/tests/dropin/dropin.c" -L"$(dirname "$reflib")" -l:libblosc2.so.9 -ldl >"$work/dropin/build.log" 2>&1; then
  run_dropin() { # run_dropin LIBDIR MODE DIR
    timeout -k 10 600 $runner -E LD_LIBRARY_PATH="$1" "$dropin" "$2" "$3" >"$3.$2.log" 2>&1 && grep -q "^dropin $2 .*: ok$" "$3.$2.log"
  }
  d="$work/dropin"
  if run_dropin "$(dirname "$reflib")" write "$d/ref" && run_dropin "$d/compat" write "$d/ours" &&
    run_dropin "$d/compat" read "$d/ref" && run_dropin "$(dirname "$reflib")" read "$d/ours"; then
    ok "drop-in on aarch64: b2frame and c-blosc2 each write every kind of frame and read the other's"
  else
    bad "drop-in on aarch64"
    tail -n 5 "$d"/*.log | sed 's/^/     | /'
  fi
  # The same program natively, on the x86-64 b2frame, then the two sets of frames compared.
  cross_same_frames_as_native "$d" "$d/ours" "on aarch64" "x86-64's"
else
  bad "building tests/dropin/dropin.c for aarch64"
  sed 's/^/     | /' "$work/dropin/build.log"
fi

cross_end
