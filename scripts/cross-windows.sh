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
#   3. Rust tests under wine (cargo's runner; tests that start processes read the same runner
#      from CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER), the binaries WIN_TESTS names (see there);
#   4. every C test of ctests/, compiled with mingw-w64 against include/ and the import library
#      (scripts/windows/posix_compat.h maps the tests' own setenv/mkdir), run under wine;
#   5. frames: tests/dropin/dropin.c built for Windows writes every kind of frame on b2frame.dll
#      and on the reference libblosc2.dll, each reads the other's, and the frames b2frame writes
#      on Windows must be byte-identical to those it writes on Linux for the same calls.
# Ends with `N passed, M failed` (one per step) and exits non-zero if a step failed.
#
# Environment: CARGO_TARGET_DIR is honoured; B2FRAME_WINDOWS_TESTS replaces the list of Rust test
# binaries.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
triple=x86_64-pc-windows-gnu
target_dir="${CARGO_TARGET_DIR:-$root/target}"
out="$target_dir/$triple/release"
work=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-windows.XXXXXX")
keep_work=0
trap '[ "$keep_work" = 1 ] || rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
passed=0
failed=0
ok() { echo "PASS windows: $1"; passed=$((passed + 1)); }
bad() { echo "FAIL windows: $1"; failed=$((failed + 1)); keep_work=1; }

# The Rust test binaries run under wine: the unit tests plus those that exercise what differs on
# Windows (file I/O, mappings, locking, paths, the C boundary's structs) or compare with the
# Windows c-blosc2 (codecs, filters, chunks, info). Not run: binaries that start the Linux Python
# of .venv (cli, frame_python_interop, schunk_python; wine cannot start a Linux executable), those
# that free buffers of the reference library through shared helpers written for one C runtime
# (frame_reference_reads, schunk_interop, schunk_min_header_chunk: the Windows DLL allocates on
# the UCRT heap, the test binary frees on msvcrt's), chunk_fork (no fork on Windows) and
# header_drift (a host tool).
WIN_TESTS=(filters codecs codecs_reference blosclz_reference chunk_basic chunk_differential
  chunk_instr chunk_robustness frame_rw info_vs_reference io_reference concurrent_readers
  reentrant_compress udio_backends fuzz_regressions)
if [ -n "${B2FRAME_WINDOWS_TESTS:-}" ]; then
  read -r -a WIN_TESTS <<<"$B2FRAME_WINDOWS_TESTS"
fi

# 1. Tools, target, the reference wheel and a wine prefix.
need_apt=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need_apt+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null 2>&1 || need_apt+=(wine wine64)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]} with apt-get"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null || {
    echo "apt-get install ${need_apt[*]} failed" >&2
    exit 1
  }
fi
if ! rustup target list --installed 2>/dev/null | grep -qx "$triple"; then
  rustup target add "$triple" || { echo "rustup target add $triple failed" >&2; exit 1; }
fi
version=$(sed -n 's/^blosc2==//p' "$root/scripts/requirements-test.txt")
refdir="$target_dir/reference-wheels/win_amd64-$version"
if [ ! -f "$refdir/blosc2/lib/libblosc2.dll" ]; then
  rm -rf "$refdir" && mkdir -p "$refdir/wheel"
  "$root/.venv/bin/pip" download -q --disable-pip-version-check "blosc2==$version" \
    --platform win_amd64 --only-binary :all: --no-deps -d "$refdir/wheel" &&
    "$root/.venv/bin/python" -m zipfile -e "$refdir"/wheel/*.whl "$refdir" || {
    echo "could not fetch the win_amd64 python-blosc2 $version wheel" >&2
    exit 1
  }
fi
reflibdir="$refdir/blosc2/lib"
refinc="$refdir/blosc2/include"
echo "reference c-blosc2 for Windows: $reflibdir/libblosc2.dll"

export WINEPREFIX="$target_dir/wine-prefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "creating the wine prefix $WINEPREFIX"
  wineboot --init >/dev/null 2>&1
  wineserver -w
fi
shim="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$shim" ] || [ "$root/scripts/windows/bcryptprimitives.c" -nt "$shim" ]; then
  x86_64-w64-mingw32-gcc -O2 -shared -o "$shim" "$root/scripts/windows/bcryptprimitives.c" -ladvapi32 || {
    echo "building the bcryptprimitives.dll stand-in failed" >&2
    exit 1
  }
fi
runner=wine
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$runner"
export B2FRAME_REF_LIB="$reflibdir/libblosc2.dll"

# 2. The DLL, its import library and the CLI.
if cargo build --release --target "$triple" --lib --bins &&
  [ -f "$out/b2frame.dll" ] && [ -f "$out/libb2frame.dll.a" ] && [ -f "$out/b2frame.exe" ]; then
  ok "built b2frame.dll, libb2frame.dll.a (import library), libb2frame.a and b2frame.exe"
else
  bad "cargo build --target $triple"
fi

# 3. Rust tests.
test_args=(--lib)
for t in "${WIN_TESTS[@]}"; do test_args+=(--test "$t"); done
log="$work/rust-tests.log"
cargo test --release --target "$triple" --no-fail-fast "${test_args[@]}" -- --nocapture >"$log" 2>&1
rc=$?
grep -E '^(test result|     Running|SIMD levels|shuffle/bitshuffle level)|FAILED|panicked|^error' "$log"
if [ "$rc" = 0 ] && grep -q '^test result: ok' "$log"; then
  ntests=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | awk '{s += $1} END {print s}')
  ok "Rust tests under wine: $ntests tests (unit tests and ${WIN_TESTS[*]})"
else
  bad "Rust tests under wine"
  tail -n 40 "$log" | sed 's/^/     | /'
fi

# 4. The C tests, each in its own directory with b2frame.dll beside it.
c_ok=0
c_bad=0
mkdir -p "$work/ctests"
cp "$out/b2frame.dll" "$work/ctests/"
for src in "$root"/ctests/test_*.c; do
  name=$(basename "$src" .c)
  exe="$work/ctests/$name.exe"
  mkdir -p "$work/ctests/$name.work"
  if ! x86_64-w64-mingw32-gcc -std=gnu11 -O1 -Wall -Wextra -Werror -include "$root/scripts/windows/posix_compat.h" \
    -I"$root/include" -I"$root/ctests" -o "$exe" "$src" "$out/libb2frame.dll.a" \
    >"$work/ctests/$name.build.log" 2>&1; then
    echo "  FAIL $name (build)"
    head -n 20 "$work/ctests/$name.build.log" | sed 's/^/     | /'
    c_bad=$((c_bad + 1))
    continue
  fi
  if (cd "$work/ctests/$name.work" && $runner "$exe") >"$work/ctests/$name.log" 2>&1; then
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
  native_lib="$target_dir/release/libb2frame.so"
  x86ref=$(ls -d "$root"/.venv/lib/python3*/site-packages/blosc2 2>/dev/null | head -n1)
  if [ -f "$native_lib" ] || cargo build --release --lib >/dev/null 2>&1; then
    mkdir -p "$d/native-compat"
    ln -sf "$native_lib" "$d/native-compat/libblosc2.so.9"
    if gcc -std=gnu11 -O1 -I"$x86ref/include" -o "$d/dropin-linux" "$root/tests/dropin/dropin.c" \
      -L"$x86ref/lib" -l:libblosc2.so.9 -ldl &&
      LD_LIBRARY_PATH="$d/native-compat" "$d/dropin-linux" write "$d/w-linux" >"$d/w-linux.log" 2>&1 &&
      diff -r "$d/w-ours" "$d/w-linux" >"$d/diff.log" 2>&1; then
      ok "frames written on Windows are byte-identical to Linux's ($(find "$d/w-ours" -type f | wc -l) files)"
    else
      bad "frames written on Windows differ from Linux's"
      head -n 20 "$d/diff.log" "$d/w-linux.log" 2>/dev/null | sed 's/^/     | /'
    fi
  else
    bad "no native libb2frame.so to compare the frames with"
  fi
else
  bad "building tests/dropin/dropin.c for Windows"
  sed 's/^/     | /' "$d/build.log"
fi

echo
[ "$keep_work" = 1 ] && echo "logs kept in $work"
echo "windows: $passed passed, $failed failed"
[ "$failed" = 0 ]
