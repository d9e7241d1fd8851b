#!/usr/bin/env bash
# Windows x86-64, cross-built here with the GNU target (x86_64-pc-windows-gnu, Debian's
# mingw-w64) and run under wine, against the Windows build of the reference c-blosc2
# (libblosc2.dll from the pinned python-blosc2 wheel for win_amd64, an MSVC build).
#
#   1. installs what it lacks: mingw-w64 and wine (apt-get), the rustup target, the win_amd64
#      wheel (pip download, unpacked under the cargo target dir), and a wine prefix under the
#      target dir with scripts/windows/bcryptprimitives.c in it (wine 8 lacks that DLL, which
#      Rust's standard library imports);
#   2. builds b2frame.dll with its import library libb2frame.dll.a, libb2frame.a and
#      b2frame.exe (the CLI);
#   3. Rust tests under wine (cargo's runner), every test binary; the tests that start Linux
#      programs (python-blosc2's Python, the C compiler) go through scripts/windows/unixrun.c;
#   4. every C test of ctests/, compiled with mingw-w64 against include/ and the import library
#      (scripts/windows/posix_compat.h maps the tests' own setenv/mkdir), run under wine;
#   5. frames: tests/dropin/dropin.c built for Windows writes every kind of frame on b2frame.dll
#      and on the reference libblosc2.dll, each reads the other's, and the frames b2frame writes
#      on Windows must be byte-identical to those it writes on Linux for the same calls;
#   6. layouts under LLP64: tests/abi/abi_dump.c against the Windows wheel's headers and ours;
#   7. the CMake package and the .pc file: a CMake build for Windows installed into a prefix, and
#      a find_package(B2frame) project and a pkg-config build against it, shared and static.
# Ends with `N passed, M failed` (one per step) and exits non-zero if a step failed.
#
# `--ci` (the Windows stage of scripts/test.sh) runs every step but only the Rust test binaries
# of WIN_CI below, which keeps the stage near 15 minutes on a fresh 2-core machine; the others
# (the crash-state enumerations, the python-blosc2 interop, the CLI, the fuzz regressions, ...)
# are left to a run without it.
# Every wine process is bounded: each Rust test binary runs through
# scripts/stall-runner.sh (a time bound, and one more run after a stall), every other
# program under `timeout`.
#
# Environment: CARGO_TARGET_DIR is honoured; B2FRAME_WINDOWS_SKIP and B2FRAME_WINDOWS_SKIP_TESTS
# replace the lists of Rust test binaries and test functions left out (see WIN_SKIP below);
# B2FRAME_WINDOWS_BINARY_TIMEOUT bounds one run of a Rust test binary (seconds, scripts/stall-runner.sh;
# default 600 with --ci, 3600 without).
set -uo pipefail
ci=0
[ "${1:-}" = "--ci" ] && ci=1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
triple=x86_64-pc-windows-gnu
target_dir="${CARGO_TARGET_DIR:-$root/target}"
# shellcheck source=scripts/cross-common.sh
. "$root/scripts/cross-common.sh"
out="$target_dir/$triple/release"
cross_begin windows

# The Rust tests run under wine: the unit tests and every integration test binary of tests/
# (tests/*.rs and the grouped tests/<layer>/main.rs) and cli/tests. Tests that start Linux
# programs (the Python of .venv with python-blosc2; the C compiler in capi reference_abi) reach
# them through scripts/windows/unixrun.c (see there why a Windows process under wine needs it).
# chunk_unit_fork is POSIX only (#![cfg(unix)]: no fork() on Windows) and runs no test here.
# B2FRAME_WINDOWS_SKIP names test binaries to leave out (none by default).
WIN_SKIP=(${B2FRAME_WINDOWS_SKIP-})
# Test functions left out by name (`--skip`; B2FRAME_WINDOWS_SKIP_TESTS names them; none by
# default).
WIN_SKIP_TESTS=(${B2FRAME_WINDOWS_SKIP_TESTS-})
# With --ci, the Rust test binaries run (besides the unit tests of every crate): the C facade
# against the Windows c-blosc2 (readers, ABI, user I/O), chunks, codecs, filters and the
# fingerprint switches, none slower than about 35 s under wine.
WIN_CI=(capi capi_reference_udio capi_unit_fingerprint_switches chunk chunk_reference_blosc1 codecs filters)

# 1. Tools, target, the reference wheel and a wine prefix.
need_apt=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need_apt+=(gcc-mingw-w64-x86-64)
# g++ too: zfp-sys (the default `zfp` feature) configures zfp with CMake, which wants a C++ compiler.
command -v x86_64-w64-mingw32-g++ >/dev/null 2>&1 || need_apt+=(g++-mingw-w64-x86-64)
command -v wine >/dev/null 2>&1 || need_apt+=(wine wine64)
cross_apt_install ${need_apt[@]+"${need_apt[@]}"}
cross_rust_target
cross_reference_wheel win_amd64 blosc2/lib/libblosc2.dll win_amd64
reflibdir="$refdir/blosc2/lib"
refinc="$refdir/blosc2/include"
echo "reference c-blosc2 for Windows: $reflibdir/libblosc2.dll"

export WINEPREFIX="$target_dir/wine-prefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "creating the wine prefix $WINEPREFIX"
  timeout -k 10 300 wineboot --init >/dev/null 2>&1
  timeout -k 10 300 wineserver -w
  [ -f "$WINEPREFIX/system.reg" ] || { echo "creating the wine prefix failed" >&2; exit 1; }
fi
shim="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$shim" ] || [ "$root/scripts/windows/bcryptprimitives.c" -nt "$shim" ]; then
  x86_64-w64-mingw32-gcc -O2 -shared -o "$shim" "$root/scripts/windows/bcryptprimitives.c" -ladvapi32 || {
    echo "building the bcryptprimitives.dll stand-in failed" >&2
    exit 1
  }
fi
# Every program but the Rust test binaries; those run through scripts/stall-runner.sh: wine with
# a time bound, and one more run after a stall, before which `wineserver -k` ends the wine
# processes left in the prefix (the script says which endings count as a stall and why). The bound
# on one run of one binary: 600 s with --ci (the slowest there took 35 s at load 9), an hour
# otherwise (frame_crash_states enumerates crash states through wine's file calls: over 20
# minutes at load 9).
runner="timeout -k 10 600 wine"
if [ "$ci" = 1 ]; then
  binary_timeout=${B2FRAME_WINDOWS_BINARY_TIMEOUT:-600}
else
  binary_timeout=${B2FRAME_WINDOWS_BINARY_TIMEOUT:-3600}
fi
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$root/scripts/stall-runner.sh windows $binary_timeout wineserver -k -- wine --"
export B2FRAME_REF_LIB="$reflibdir/libblosc2.dll"

# 2. The DLL, its import library and the CLI.
if cargo build --release --target "$triple" --lib --bins &&
  [ -f "$out/b2frame.dll" ] && [ -f "$out/libb2frame.dll.a" ] && [ -f "$out/b2frame.exe" ]; then
  ok "built b2frame.dll, libb2frame.dll.a (import library), libb2frame.a and b2frame.exe"
else
  bad "cargo build --target $triple"
fi

# 3. Rust tests, with Windows stand-ins for the Linux programs some tests start.
unix="$work/unix"
mkdir -p "$unix"
for name in python cc; do
  x86_64-w64-mingw32-gcc -std=gnu11 -O1 -Wall -Wextra -Werror -o "$unix/$name.exe" \
    "$root/scripts/windows/unixrun.c" || bad "building scripts/windows/unixrun.c"
done
export B2FRAME_UNIX_PYTHON="$root/.venv/bin/python"
export B2FRAME_UNIX_CC=x86_64-w64-mingw32-gcc
B2FRAME_PYTHON=$(timeout -k 5 120 winepath -w "$unix/python.exe" 2>/dev/null)
B2FRAME_TARGET_CC=$(timeout -k 5 120 winepath -w "$unix/cc.exe" 2>/dev/null)
export B2FRAME_PYTHON B2FRAME_TARGET_CC
test_args=(--lib)
ran=()
for f in "$root"/tests/*.rs "$root"/tests/*/main.rs "$root"/cli/tests/*.rs; do
  case "$f" in
    */main.rs) t=$(basename "$(dirname "$f")") ;;
    *) t=$(basename "$f" .rs) ;;
  esac
  [[ " ${WIN_SKIP[*]-} " == *" $t "* ]] && continue
  [ "$ci" = 1 ] && [[ " ${WIN_CI[*]} " != *" $t "* ]] && continue
  test_args+=(--test "$t")
  ran+=("$t")
done
skip_args=()
for t in ${WIN_SKIP_TESTS[@]+"${WIN_SKIP_TESTS[@]}"}; do skip_args+=(--skip "$t"); done
t0=$SECONDS
log="$work/rust-tests.log"
echo "Rust tests under wine: the unit tests and ${#ran[@]} binaries (${ran[*]})"
left_out=${WIN_SKIP[*]-none}
[ "$ci" = 1 ] && left_out="all but ${WIN_CI[*]} (--ci)"
if cross_rust_tests "$log" "${test_args[@]}" -- --nocapture ${skip_args[@]+"${skip_args[@]}"}; then
  ok "Rust tests under wine: $rust_summary, $((SECONDS - t0)) s with their build (binaries left out: $left_out; test functions left out: ${WIN_SKIP_TESTS[*]-none})"
else
  bad "Rust tests under wine"
  tail -n 40 "$log" | sed 's/^/     | /'
fi

# 4. The C tests, each in its own directory with b2frame.dll beside it.
c_ok=0
c_bad=0
mkdir -p "$work/ctests"
cp "$out/b2frame.dll" "$work/ctests/"
# The tests that use threads link mingw-w64's winpthread DLL.
cp /usr/x86_64-w64-mingw32/lib/libwinpthread-1.dll "$work/ctests/"
for src in "$root"/ctests/test_*.c; do
  name=$(basename "$src" .c)
  exe="$work/ctests/$name.exe"
  mkdir -p "$work/ctests/$name.work"
  # The two thread stress tests with fewer operations, as under ThreadSanitizer: every lock and
  # wait of theirs is a round trip to wineserver, so at their Linux sizes test_b2nd_threads took
  # 197 s and test_schunk_threads ran past the 600 s limit; so reduced they took 46 and 54 s
  # (the races they look for are the same at every size; the Linux stages run them whole).
  case $name in
    test_schunk_threads) fewer=(-DOPS=300) ;;
    test_b2nd_threads) fewer=(-DROUNDS=25) ;;
    *) fewer=() ;;
  esac
  if ! x86_64-w64-mingw32-gcc -std=gnu11 -O1 -Wall -Wextra -Werror -pthread -include "$root/scripts/windows/posix_compat.h" \
    ${fewer[@]+"${fewer[@]}"} -I"$root/include" -I"$root/ctests" -o "$exe" "$src" "$out/libb2frame.dll.a" \
    >"$work/ctests/$name.build.log" 2>&1; then
    echo "  FAIL $name (build)"
    head -n 20 "$work/ctests/$name.build.log" | sed 's/^/     | /'
    c_bad=$((c_bad + 1))
    continue
  fi
  c0=$SECONDS
  if (cd "$work/ctests/$name.work" && $runner "$exe") >"$work/ctests/$name.log" 2>&1; then
    echo "  ok $name ($((SECONDS - c0)) s)"
    c_ok=$((c_ok + 1))
  else
    echo "  FAIL $name"
    tail -n 20 "$work/ctests/$name.log" | sed 's/^/     | /'
    c_bad=$((c_bad + 1))
  fi
done
if [ "$c_bad" = 0 ] && [ "$c_ok" -gt 0 ]; then
  ok "C tests under wine: $c_ok programs"
else
  bad "C tests under wine: $c_bad of $((c_ok + c_bad)) failed"
fi

# 5. Frames: the drop-in program on both Windows libraries, and the same frames as on Linux.
d="$work/dropin"
mkdir -p "$d/ours" "$d/ref"
cp "$out/b2frame.dll" "$d/ours/"
cp "$reflibdir"/*.dll "$d/ref/"
build_dropin() { # build_dropin OUT LIB...
  local exe=$1
  shift
  x86_64-w64-mingw32-gcc -std=gnu11 -O1 -Wall -Wextra -Werror -I"$refinc" -o "$exe" \
    "$root/tests/dropin/dropin.c" "$@" >>"$d/build.log" 2>&1
}
# The same source against each library (a DLL binds its imports by DLL name, so one binary
# cannot switch between b2frame.dll and libblosc2.dll the way LD_LIBRARY_PATH does on Linux).
if build_dropin "$d/ours/dropin.exe" "$out/libb2frame.dll.a" &&
  build_dropin "$d/ref/dropin.exe" "$reflibdir/libblosc2.dll"; then
  run_dropin() { # run_dropin WHICH MODE DIR
    (cd "$d/$1" && $runner ./dropin.exe "$2" "$3") >"$d/$1.$2.$(basename "$3").log" 2>&1 &&
      grep -q "^dropin $2 .*: ok" "$d/$1.$2.$(basename "$3").log"
  }
  if run_dropin ref write "$d/w-ref" && run_dropin ours write "$d/w-ours" &&
    run_dropin ours read "$d/w-ref" && run_dropin ref read "$d/w-ours"; then
    ok "drop-in on Windows: b2frame.dll and c-blosc2's libblosc2.dll each write every kind of frame and read the other's"
  else
    bad "drop-in on Windows"
    tail -n 5 "$d"/*.log | sed 's/^/     | /'
  fi
  # The same program on Linux x86-64, then the two sets of frames compared.
  cross_same_frames_as_native "$d" "$d/w-ours" "on Windows" "Linux's"
else
  bad "building tests/dropin/dropin.c for Windows"
  sed 's/^/     | /' "$d/build.log"
fi

# 6. Layouts under LLP64: tests/abi/abi_dump.c (struct sizes, field offsets and
#    sizes, constants, default values) built with mingw-w64 once against the Windows wheel's own
#    headers (those MSVC users compile against) and once against ours, run under wine; the two
#    outputs must be identical.
a="$work/abi"
mkdir -p "$a"
abi_dump() { # abi_dump INCLUDE NAME
  x86_64-w64-mingw32-gcc -std=gnu11 -O1 -w -I"$1" "$root/tests/abi/abi_dump.c" -o "$a/$2.exe" >"$a/$2.build.log" 2>&1 &&
    $runner "$a/$2.exe" >"$a/$2.txt" 2>"$a/$2.err"
}
if abi_dump "$refinc" ref && abi_dump "$root/include" ours && diff -u "$a/ref.txt" "$a/ours.txt" >"$a/diff.log"; then
  ok "ABI under LLP64: our headers and the Windows c-blosc2's give the same $(grep -c '^struct' "$a/ref.txt") struct sizes, $(grep -c '^field' "$a/ref.txt") field offsets/sizes, $(grep -c -E '^(const|string)' "$a/ref.txt") constants and $(grep -c '^default' "$a/ref.txt") default fields"
else
  bad "ABI under LLP64 (abi_dump.c against the Windows wheel's headers and ours)"
  head -n 30 "$a/diff.log" "$a"/*.build.log "$a"/*.err 2>/dev/null | sed 's/^/     | /'
fi

# 7. The CMake package and the .pc file: the Windows build through CMake (with the mingw-w64
#    toolchain file), installed into a prefix; then a find_package(B2frame) project and a plain
#    pkg-config build, each shared and static, are built against the prefix and run under wine.
prefix="$work/prefix"
toolchain="$root/cmake/toolchains/x86_64-w64-mingw32.cmake"
if cmake -S "$root" -B "$work/cmake-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
  >"$work/cmake.log" 2>&1 && cmake --build "$work/cmake-build" >>"$work/cmake.log" 2>&1 &&
  cmake --install "$work/cmake-build" --prefix "$prefix" >>"$work/cmake.log" 2>&1; then
  missing=()
  for f in bin/b2frame.dll lib/libb2frame.dll.a lib/libb2frame.a include/blosc2.h include/b2nd.h \
    include/blosc2/blosc2-stdio.h lib/pkgconfig/b2frame.pc lib/cmake/B2frame/B2frameConfig.cmake \
    lib/cmake/B2frame/B2frameConfigVersion.cmake; do
    [ -e "$prefix/$f" ] || missing+=("$f")
  done
  if [ ${#missing[@]} = 0 ]; then
    ok "CMake install for Windows: bin/b2frame.dll, lib/libb2frame.dll.a, lib/libb2frame.a, headers, b2frame.pc, B2frameConfig.cmake"
  else
    bad "the Windows install lacks ${missing[*]}"
  fi
  consumer_runs() { # consumer_runs EXE LIBRARY-PATTERN: exits 0, round trip ok, the expected library
    (cd "$(dirname "$1")" && WINEPATH="$(timeout -k 5 120 winepath -w "$prefix/bin" 2>/dev/null)" $runner "./$(basename "$1")") >"$1.log" 2>&1 &&
      grep -q '^roundtrip: .* ok' "$1.log" && grep -Eq "^library: $2" "$1.log"
  }
  c="$work/consumer-cmake"
  if cmake -S "$root/tests/consumers/cmake-b2frame" -B "$c" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer-cmake.log" 2>&1 &&
    cmake --build "$c" >>"$work/consumer-cmake.log" 2>&1 &&
    consumer_runs "$c/consumer_shared.exe" '.*b2frame\.dll' &&
    consumer_runs "$c/consumer_static.exe" '\(linked statically\)' &&
    ! x86_64-w64-mingw32-objdump -p "$c/consumer_static.exe" | grep -qi 'DLL Name: b2frame.dll'; then
    ok "find_package(B2frame) on Windows: B2frame::b2frame (b2frame.dll) and B2frame::b2frame_static build and run"
  else
    bad "find_package(B2frame) consumer on Windows"
    tail -n 20 "$work/consumer-cmake.log" "$c"/*.exe.log 2>/dev/null | sed 's/^/     | /'
  fi
  pc="$work/consumer-pc"
  mkdir -p "$pc"
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
  if x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror $(pkg-config --cflags b2frame) -o "$pc/consumer_shared.exe" \
    "$root/tests/consumers/common/consumer.c" $(pkg-config --libs b2frame) >"$pc/build.log" 2>&1 &&
    x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror $(pkg-config --cflags b2frame) -o "$pc/consumer_static.exe" \
      "$root/tests/consumers/common/consumer.c" $(pkg-config --static --libs b2frame | sed 's/-lb2frame/-l:libb2frame.a/') >>"$pc/build.log" 2>&1 &&
    consumer_runs "$pc/consumer_shared.exe" '.*b2frame\.dll' &&
    consumer_runs "$pc/consumer_static.exe" '\(linked statically\)'; then
    ok "pkg-config b2frame on Windows: shared ($(pkg-config --libs b2frame)) and static build and run"
  else
    bad "pkg-config consumer on Windows"
    tail -n 20 "$pc/build.log" "$pc"/*.exe.log 2>/dev/null | sed 's/^/     | /'
  fi
  unset PKG_CONFIG_PATH
else
  bad "CMake build and install for Windows"
  tail -n 30 "$work/cmake.log" | sed 's/^/     | /'
fi

cross_end
