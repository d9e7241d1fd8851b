#!/usr/bin/env bash
# Builds and runs the consumer projects against an INSTALLED b2frame.
# Usage: tests/consumers/run.sh PREFIX [REFERENCE_BLOSC2_DIR]
#   PREFIX                 an install prefix of b2frame (cmake --install build --prefix PREFIX)
#   REFERENCE_BLOSC2_DIR   the python-blosc2 package dir holding the reference c-blosc2 (lib/, include/,
#                          lib/cmake/blosc2); default: .venv's. Used to prove cmake-blosc2 is a genuine
#                          c-blosc2 project, and that a binary built against c-blosc2 runs unchanged on
#                          b2frame through PREFIX/lib/b2frame-compat (when installed).
# Prints one line per check and `consumers: N passed, M failed`; exits non-zero on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=$(cd "${1:?usage: run.sh PREFIX [REFERENCE_BLOSC2_DIR]}" && pwd)
ref="${2:-$root/.venv/lib/python3.11/site-packages/blosc2}"
work=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-consumers.XXXXXX")
# $work is removed when the script ends, unless a check failed: then its logs stay for diagnosis.
keep_work=0
trap '[ "$keep_work" = 1 ] || rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
libdir="$prefix/lib"
[ -d "$libdir/pkgconfig" ] || libdir=$(dirname "$(find "$prefix" -name b2frame.pc -print -quit)")/..
libdir=$(cd "$libdir" && pwd)

passed=0
failed=0
ok() { echo "PASS consumers: $1"; passed=$((passed + 1)); }
bad() { echo "FAIL consumers: $1"; failed=$((failed + 1)); }

# After a failed build: name the blosc2_* functions the linker could not find (not yet implemented
# in libb2frame) so the failure reads as what it is.
explain_link_failure() {
  local missing
  missing=$(grep -o "undefined reference to \`[A-Za-z0-9_]*'" "$1" | sed "s/.*\`\(.*\)'/\1/" | sort -u | tr '\n' ' ')
  if [ -n "$missing" ]; then
    echo "     -> libb2frame does not export (yet): $missing"
  else
    tail -n 20 "$1" | sed 's/^/     | /'
  fi
}

# run_check NAME EXPECTED_LIB_PATTERN CMD...: runs CMD, which must exit 0, print "roundtrip: ... ok"
# and report a providing library matching the pattern.
run_check() {
  local name=$1 pattern=$2
  shift 2
  local log="$work/$name.run.log"
  if "$@" >"$log" 2>&1 && grep -q "^roundtrip: .* ok$" "$log" && grep -Eq "^library: $pattern" "$log"; then
    ok "$name ($(grep '^library:' "$log"))"
  else
    bad "$name"
    sed 's/^/     | /' "$log"
  fi
}

cmake_build() { # NAME SRC_DIR BUILD_DIR extra cmake args...
  local name=$1 src=$2 bdir=$3
  shift 3
  local log="$work/$name.build.log"
  if cmake -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=Release "$@" >"$log" 2>&1 && cmake --build "$bdir" >>"$log" 2>&1; then
    return 0
  fi
  bad "$name: build"
  explain_link_failure "$log"
  return 1
}

# 1. find_package(B2frame) + B2frame::b2frame / B2frame::b2frame_static.
if cmake_build cmake-b2frame "$here/cmake-b2frame" "$work/cmake-b2frame" -DCMAKE_PREFIX_PATH="$prefix"; then
  ok "cmake-b2frame: build"
  run_check cmake-b2frame-shared ".*/libb2frame\.so\." "$work/cmake-b2frame/consumer_shared"
  run_check cmake-b2frame-static ".*/consumer_static$" "$work/cmake-b2frame/consumer_static"
  if readelf -d "$work/cmake-b2frame/consumer_static" | grep -q 'NEEDED.*libb2frame'; then
    bad "cmake-b2frame-static links libb2frame.so instead of the archive"
  fi
fi

# 2. A c-blosc2 project; only its find_package line changes.
mkdir -p "$work/src-blosc2/cmake-blosc2" "$work/src-blosc2/common"
cp "$here/common/consumer.c" "$work/src-blosc2/common/"
sed 's/^find_package(Blosc2 REQUIRED)$/find_package(B2frame REQUIRED)/' "$here/cmake-blosc2/CMakeLists.txt" \
  >"$work/src-blosc2/cmake-blosc2/CMakeLists.txt"
ndiff=$(diff "$here/cmake-blosc2/CMakeLists.txt" "$work/src-blosc2/cmake-blosc2/CMakeLists.txt" | grep -c '^[<>]')
if [ "$ndiff" = 2 ]; then
  ok "cmake-blosc2: the switch is exactly one changed line"
else
  bad "cmake-blosc2: expected exactly the find_package line to change (diff has $ndiff lines)"
fi
if cmake_build cmake-blosc2 "$work/src-blosc2/cmake-blosc2" "$work/cmake-blosc2" -DCMAKE_PREFIX_PATH="$prefix"; then
  ok "cmake-blosc2: build against b2frame"
  run_check cmake-blosc2-shared ".*/libb2frame\.so\." "$work/cmake-blosc2/consumer"
  run_check cmake-blosc2-static ".*/consumer_static$" "$work/cmake-blosc2/consumer_static"
fi

# The same project, untouched, against the reference c-blosc2 (no RPATH, so LD_LIBRARY_PATH decides
# which libblosc2.so.9 it gets at run time).
if [ -f "$ref/lib/cmake/blosc2/Blosc2Config.cmake" ]; then
  if cmake_build cmake-blosc2-reference "$here/cmake-blosc2" "$work/cmake-blosc2-ref" \
      -DBlosc2_DIR="$ref/lib/cmake/blosc2" -DCMAKE_SKIP_BUILD_RPATH=ON; then
    ok "cmake-blosc2: unchanged project builds against the reference c-blosc2"
    run_check cmake-blosc2-reference ".*/libblosc2\.so\.9" env LD_LIBRARY_PATH="$ref/lib" "$work/cmake-blosc2-ref/consumer"
    if [ -e "$libdir/b2frame-compat/libblosc2.so.9" ]; then
      # A binary linked against c-blosc2, run unchanged on b2frame.
      run_check compat-libblosc2.so.9 ".*/libb2frame\.so\." \
        env LD_LIBRARY_PATH="$libdir/b2frame-compat" "$work/cmake-blosc2-ref/consumer"
    else
      echo "note: $libdir/b2frame-compat not installed (-DB2FRAME_INSTALL_BLOSC2_COMPAT=ON); compat run skipped"
    fi
  fi
else
  bad "reference c-blosc2 not found at $ref (run scripts/setup-env.sh)"
fi

# 3. Plain Makefile + pkg-config.
mkdir -p "$work/pkgconfig"
log="$work/pkgconfig.build.log"
if PKG_CONFIG_PATH="$libdir/pkgconfig" make -C "$here/pkgconfig" OUT="$work/pkgconfig" all >"$log" 2>&1; then
  ok "pkgconfig: build ($(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --libs b2frame))"
  run_check pkgconfig-shared ".*/libb2frame\.so\." env LD_LIBRARY_PATH="$libdir" "$work/pkgconfig/consumer_shared"
  run_check pkgconfig-static ".*/consumer_static$" "$work/pkgconfig/consumer_static"
else
  bad "pkgconfig: build"
  explain_link_failure "$log"
fi

if [ "$failed" = 0 ]; then
  echo "consumers: $passed passed, $failed failed"
  exit 0
fi
keep_work=1
echo "consumers: $passed passed, $failed failed (logs kept in $work)"
exit 1
