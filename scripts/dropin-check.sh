#!/usr/bin/env bash
# Proves that b2frame is a drop-in for c-blosc2 3.3.5 (the .venv python-blosc2 wheel's libblosc2.so.9).
#
# Usage: scripts/dropin-check.sh PREFIX [REFERENCE_BLOSC2_DIR]
#   PREFIX  an install of b2frame made with -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON (it provides
#           lib/b2frame-compat/libblosc2.so.9 -> libb2frame and lib/cmake/B2frame)
#
# 1. Binary drop-in: tests/dropin/dropin.c is compiled and linked ONCE against the reference headers
#    and libblosc2.so.9 (NEEDED libblosc2.so.9, no RPATH), then run unchanged twice: on the reference,
#    and with LD_LIBRARY_PATH=PREFIX/lib/b2frame-compat (libb2frame). Each run writes every kind of
#    frame and verifies it; then each library reads the frames the other one wrote.
# 2. CMake drop-in: tests/dropin/cmake (find_package(Blosc2) + Blosc2::blosc2_shared) is built against
#    the reference's lib/cmake/blosc2, then a copy differing only in its find_package line is built
#    against PREFIX; the diff is checked to be that one line, and the result runs and cross-reads.
# Prints one line per check and `dropin: N passed, M failed`. A missing reference is a failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(cd "${1:?usage: dropin-check.sh PREFIX [REFERENCE_BLOSC2_DIR]}" && pwd)
ref="${2:-$(ls -d "$root"/.venv/lib/python3*/site-packages/blosc2 2>/dev/null | head -n1)}"
# The steps' bookkeeping the cross stages use too: $work (removed when the script ends, early
# exits included, unless a check failed: then its logs stay for diagnosis), ok, bad, cross_end.
# shellcheck source=scripts/cross-common.sh
. "$root/scripts/cross-common.sh"
cross_begin dropin

if [ -z "$ref" ] || [ ! -f "$ref/lib/libblosc2.so.9" ] || [ ! -f "$ref/include/blosc2.h" ]; then
  echo "REFERENCE c-blosc2 UNREACHABLE: no libblosc2.so.9 + include/blosc2.h under '${ref}'." >&2
  echo "Run scripts/setup-env.sh. The drop-in cannot be proven without it: FAILING." >&2
  exit 2
fi
libdir="$prefix/lib"
[ -d "$libdir/b2frame-compat" ] || libdir=$(dirname "$(find "$prefix" -type d -name b2frame-compat -print -quit)")
compat="$libdir/b2frame-compat"
if [ ! -e "$compat/libblosc2.so.9" ]; then
  echo "no $compat/libblosc2.so.9: install with -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON" >&2
  exit 2
fi

# run NAME LIBPATTERN LD_LIBRARY_PATH BIN MODE DIR: the run must pass and load the expected library.
run() {
  local name=$1 pattern=$2 ldpath=$3 bin=$4 mode=$5 dir=$6 log="$work/$1.log"
  if LD_LIBRARY_PATH="$ldpath" "$bin" "$mode" "$dir" >"$log" 2>&1 && grep -q "^dropin $mode .*: ok$" "$log" &&
    grep -Eq "^library: $pattern " "$log"; then
    ok "$name ($(sed -n 's/^library: \([^ ]*\).*/\1/p' "$log"))"
  else
    bad "$name"
    sed 's/^/     | /' "$log"
  fi
}
ours_pat='.*/libb2frame\.so[.0-9]*'
ref_pat='.*/libblosc2\.so\.9'

# 1. One binary, two libraries.
bin="$work/dropin"
if gcc -std=gnu11 -O1 -Wall -Wextra -Werror -I"$ref/include" -o "$bin" "$root/tests/dropin/dropin.c" \
  -L"$ref/lib" -l:libblosc2.so.9 -ldl >"$work/build.log" 2>&1; then
  ok "built once against the reference ($(readelf -d "$bin" | grep -o 'NEEDED.*libblosc2[^]]*' | sed 's/.*\[//'))"
else
  bad "build against the reference"
  sed 's/^/     | /' "$work/build.log"
fi
if readelf -d "$bin" 2>/dev/null | grep -Eq 'R(UN)?PATH'; then bad "the binary carries an RPATH/RUNPATH"; fi
sum_before=$(sha256sum "$bin" | cut -d' ' -f1)
run bin-write-reference "$ref_pat" "$ref/lib" "$bin" write "$work/w-ref"
run bin-write-b2frame "$ours_pat" "$compat" "$bin" write "$work/w-ours"
run bin-b2frame-reads-reference-frames "$ours_pat" "$compat" "$bin" read "$work/w-ref"
run bin-reference-reads-b2frame-frames "$ref_pat" "$ref/lib" "$bin" read "$work/w-ours"
[ "$(sha256sum "$bin" | cut -d' ' -f1)" = "$sum_before" ] || bad "the binary changed between runs"

# 2. A c-blosc2 CMake project; only its find_package line changes.
cm_log="$work/cmake-ref.log"
mkdir -p "$work/src-b2frame/cmake"
cp "$root/tests/dropin/dropin.c" "$work/src-b2frame/"
sed 's/^find_package(Blosc2 REQUIRED)$/find_package(B2frame REQUIRED)/' "$root/tests/dropin/cmake/CMakeLists.txt" \
  >"$work/src-b2frame/cmake/CMakeLists.txt"
diff -u "$root/tests/dropin/cmake/CMakeLists.txt" "$work/src-b2frame/cmake/CMakeLists.txt" >"$work/cmake.diff"
echo "     the whole change to the project:"
sed -n '/^@@/,$p' "$work/cmake.diff" | grep '^[-+]' | sed 's/^/     | /'
if [ "$(grep -c '^[-+][^-+]' "$work/cmake.diff")" = 2 ] && grep -q '^+find_package(B2frame REQUIRED)$' "$work/cmake.diff"; then
  ok "cmake: the switch is exactly one changed line"
else
  bad "cmake: the copy differs by more than the find_package line"
fi
if cmake -S "$root/tests/dropin/cmake" -B "$work/cmake-ref" -DCMAKE_BUILD_TYPE=Release \
  -DBlosc2_DIR="$ref/lib/cmake/blosc2" -DCMAKE_SKIP_BUILD_RPATH=ON >"$cm_log" 2>&1 &&
  cmake --build "$work/cmake-ref" >>"$cm_log" 2>&1; then
  ok "cmake: unchanged project builds against the reference's lib/cmake/blosc2"
  run cmake-ref-write "$ref_pat" "$ref/lib" "$work/cmake-ref/dropin" write "$work/c-ref"
else
  bad "cmake: build against the reference"
  tail -n 30 "$cm_log" | sed 's/^/     | /'
fi
cm_log="$work/cmake-ours.log"
if cmake -S "$work/src-b2frame/cmake" -B "$work/cmake-ours" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$cm_log" 2>&1 && cmake --build "$work/cmake-ours" >>"$cm_log" 2>&1; then
  ok "cmake: find_package(B2frame) copy builds against $prefix"
  # The installed B2frame targets carry the library's location; LD_LIBRARY_PATH only as a fallback.
  run cmake-b2frame-write "$ours_pat" "$libdir" "$work/cmake-ours/dropin" write "$work/c-ours"
  run cmake-b2frame-reads-reference-frames "$ours_pat" "$libdir" "$work/cmake-ours/dropin" read "$work/c-ref"
  run cmake-reference-reads-b2frame-frames "$ref_pat" "$ref/lib" "$work/cmake-ref/dropin" read "$work/c-ours"
else
  bad "cmake: build against b2frame"
  tail -n 30 "$cm_log" | sed 's/^/     | /'
fi

cross_end
