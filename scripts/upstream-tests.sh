#!/usr/bin/env bash
# Runs c-blosc2's own public-API test programs (its repository's tests/ folder) against libb2frame
# and, for comparison, against the reference c-blosc2 3.3.5 of the .venv wheel. Everything happens
# in a temporary directory OUTSIDE the project: this script fetches nothing and the upstream sources
# are never copied into the tree (see docs/conformance.md for how to obtain them).
#
# Usage: scripts/upstream-tests.sh UPSTREAM_TESTS_DIR [OURS_LIB]
#   UPSTREAM_TESTS_DIR  c-blosc2's tests/ folder (e.g. `git archive HEAD tests | tar -x -C /tmp/up`)
#   OURS_LIB            libb2frame.so (default: $CARGO_TARGET_DIR/release or target/release)
# Env: UPSTREAM_ONLY="test_a b2nd/test_b" restricts the run; UPSTREAM_TIMEOUT (seconds, default 120);
#      UPSTREAM_B2ND=0 leaves out tests/b2nd/test_*.c (run by default, with a context.h shim);
#      UPSTREAM_EXAMPLES_DIR=<c-blosc2>/examples also runs the examples on both libraries;
#      UPSTREAM_KEEP=1 keeps the work directory (results.tsv, logs) after a passing run too.
#
# Each top-level tests/test_*.c is compiled with `gcc -std=gnu11 -I<include> -I<tests> -I<shim>`
# (public headers plus a shim of format constants for frame.h/blosc-private.h/config.h; no
# -DBLOSC_TESTING, no real private headers) once per library and linked against
# it; CSV-driven tests run once per CSV line (header dropped, commas -> argv). A program passes when
# every run exits 0. Prints one line per program and library and `ours: N of M pass` / `reference:
# N of M pass`; the table is also written to $work/results.tsv. Exit status: 0 when every program
# that passes against the reference also passes against libb2frame. The temporary $work is
# removed at the end of a passing run; a failing run keeps it (and says where) for diagnosis.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
up=$(cd "${1:?usage: upstream-tests.sh UPSTREAM_TESTS_DIR [OURS_LIB]}" && pwd)
ours="${2:-${CARGO_TARGET_DIR:-$root/target}/release/libb2frame.so}"
refpkg=$(ls -d "$root"/.venv/lib/python3*/site-packages/blosc2 2>/dev/null | head -n1)
timeout_s="${UPSTREAM_TIMEOUT:-120}"
if [ -z "$refpkg" ] || [ ! -f "$refpkg/lib/libblosc2.so.9" ]; then
  echo "REFERENCE MISSING: no .venv python-blosc2 wheel with lib/libblosc2.so.9 (run scripts/setup-env.sh)" >&2
  exit 2
fi
[ -f "$ours" ] || { echo "libb2frame not found at $ours (cargo build --release)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-upstream.XXXXXX")
# Removed when the script ends, interrupted runs included, unless keep_work is set below.
keep_work="${UPSTREAM_KEEP:-0}"
trap '[ "$keep_work" = 1 ] || rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# One private lib dir per library, so that LD_LIBRARY_PATH picks exactly that one.
mkdir -p "$work/ours/lib" "$work/ref/lib"
ours_real=$(readlink -f "$ours")
for n in libb2frame.so libb2frame.so.1 libblosc2.so libblosc2.so.9; do ln -sf "$ours_real" "$work/ours/lib/$n"; done
for n in libblosc2.so libblosc2.so.9; do ln -sf "$refpkg/lib/libblosc2.so.9" "$work/ref/lib/$n"; done
inc_ours="$root/include"

# A shim for the private headers that some frame tests include only for format constants and
# byte-order helpers (the values are cframe format facts: field offsets in the header, the trailer's
# minimum length and where trailer_len sits, the flag bits). Tests that need private structs or
# symbols still do not compile and are reported as such.
mkdir -p "$work/shim"
cat >"$work/shim/frame.h" <<'SHIM'
#ifndef B2FRAME_UPSTREAM_SHIM_H
#define B2FRAME_UPSTREAM_SHIM_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#define FRAME_HEADER_MAGIC 2
#define FRAME_HEADER_LEN 11
#define FRAME_LEN 16
#define FRAME_FLAGS 25
#define FRAME_CBYTES 39
#define FRAME_HEADER_MINLEN 87
#define FRAME_VARIABLE_CHUNKS (1U << 6)
#define FRAME_VL_BLOCKS (1U << 7)
#define FRAME_TRAILER_VERSION (1U)
#define FRAME_TRAILER_MINLEN 25
#define FRAME_TRAILER_LEN_OFFSET 22
static inline void shim_swap(void *dest, const void *src, int32_t n) {
  const uint8_t *s = src;
  uint8_t *d = dest;
  for (int32_t i = 0; i < n; i++) d[i] = s[n - 1 - i];
}
static inline void from_big(void *dest, const void *src, int32_t n) { shim_swap(dest, src, n); }
static inline void to_big(void *dest, const void *src, int32_t n) { shim_swap(dest, src, n); }
static inline bool blosc2_nchunks_to_offsets_nbytes(int64_t nchunks, int32_t *nbytes) {
  if (nchunks < 0 || nchunks > INT32_MAX / 8) return false;
  *nbytes = (int32_t)(nchunks * 8);
  return true;
}
#endif
SHIM
echo '#include "frame.h"' >"$work/shim/blosc-private.h"
printf '#define HAVE_ZLIB 1\n#define HAVE_ZSTD 1\n' >"$work/shim/config.h"
inc_ref="$refpkg/include"

# tests/b2nd/*: their test_common.h includes c-blosc2's private context.h only for the
# definition of b2nd_context_t (opaque in the public b2nd.h); this shim of ours defines that struct
# with c-blosc2's layout (which libb2frame's contexts have too). Only the b2nd tests see it.
mkdir -p "$work/shim-b2nd"
cat >"$work/shim-b2nd/context.h" <<'SHIM'
#ifndef B2FRAME_UPSTREAM_B2ND_CONTEXT_SHIM_H
#define B2FRAME_UPSTREAM_B2ND_CONTEXT_SHIM_H
#include <b2nd.h>
struct b2nd_context_s {
  int8_t ndim;
  int64_t shape[B2ND_MAX_DIM];
  int32_t chunkshape[B2ND_MAX_DIM];
  int32_t blockshape[B2ND_MAX_DIM];
  char *dtype;
  int8_t dtype_format;
  blosc2_storage *b2_storage;
  blosc2_metalayer metalayers[B2ND_MAX_METALAYERS];
  int32_t nmetalayers;
};
#endif
SHIM

tests=()
if [ -n "${UPSTREAM_ONLY:-}" ]; then
  for t in $UPSTREAM_ONLY; do tests+=("$up/$t.c"); done
else
  for f in "$up"/test_*.c; do tests+=("$f"); done
  # c-blosc2's b2nd tests (UPSTREAM_B2ND=0 leaves them out).
  if [ "${UPSTREAM_B2ND:-1}" = 1 ]; then
    for f in "$up"/b2nd/test_*.c; do [ -f "$f" ] && tests+=("$f"); done
  fi
fi

printf 'test\tlibrary\tstatus\tdetail\n' >"$work/results.tsv"
declare -A status
run_one() { # run_one LIBTAG TESTNAME -> sets status[LIB,NAME], prints a line
  local lib=$1 name=$2 src="$up/$2.c" bin="$work/$1/$2" log="$work/$1/$2.log"
  local inc=$inc_ours link=(-L"$work/ours/lib" -lb2frame)
  [ "$lib" = ref ] && inc=$inc_ref && link=(-L"$work/ref/lib" -lblosc2)
  local st detail="" extra=()
  # b2nd/NAME: its own folder first (its test_common.h and cutest.h), then the context shim.
  case "$name" in b2nd/*) extra=(-I"$up/b2nd" -I"$work/shim-b2nd"); mkdir -p "$work/$lib/b2nd" ;; esac
  if ! gcc -std=gnu11 -O1 -w "${extra[@]}" -I"$inc" -I"$up" -I"$work/shim" -o "$bin" "$src" "${link[@]}" -lm -lpthread >"$log" 2>&1; then
    if grep -q 'No such file or directory' "$log" && grep -q '#include' "$log"; then
      st=NOCOMPILE
      detail="private header: $(grep -o '[A-Za-z0-9_./-]*\.h: No such file' "$log" | head -n1 | cut -d: -f1)"
    elif grep -q 'undefined reference' "$log"; then
      st=NOLINK
      detail="missing: $(grep -o "undefined reference to \`[A-Za-z0-9_]*'" "$log" | sed "s/.*\`\(.*\)'/\1/" | sort -u | tr '\n' ' ')"
    else
      st=NOCOMPILE
      detail=$(grep -m1 'error' "$log")
    fi
  else
    local csv="$up/$name.csv" nrun=0 nfail=0 firstfail=""
    local -a lines=("")
    if [ -f "$csv" ]; then mapfile -t lines < <(tail -n +2 "$csv" | tr -d '\r' | grep -v '^$'); fi
    for line in "${lines[@]}"; do
      local -a args=()
      [ -n "$line" ] && IFS=, read -r -a args <<<"$line"
      nrun=$((nrun + 1))
      local rc=0
      (cd "$work/$lib" && LD_LIBRARY_PATH="$work/$lib/lib" timeout "$timeout_s" "$bin" "${args[@]}") \
        >"$log.run" 2>&1 || rc=$?
      if [ "$rc" != 0 ]; then
        nfail=$((nfail + 1))
        if [ -z "$firstfail" ]; then
          firstfail="exit $rc${line:+ (args $line)}: $(grep -v '^[.]*$' "$log.run" | grep -iE 'error|fail|assert|abort|fault' | head -n 2 | tr '\n\t' '  ' | cut -c1-300)"
          cp "$log.run" "$log.fail"
        fi
      fi
    done
    if [ "$nfail" = 0 ]; then
      st=PASS
      [ "$nrun" -gt 1 ] && detail="$nrun CSV cases"
    else
      st=FAIL
      detail="$nfail of $nrun runs failed; first: $firstfail"
    fi
  fi
  status[$lib,$name]=$st
  printf '%s\t%s\t%s\t%s\n' "$name" "$lib" "$st" "$detail" >>"$work/results.tsv"
  printf '%-42s %-4s %-9s %s\n' "$name" "$lib" "$st" "$detail"
}

names=()
for f in "${tests[@]}"; do
  name=$(basename "$f" .c)
  [ "$(basename "$(dirname "$f")")" = b2nd ] && name="b2nd/$name"
  names+=("$name")
  run_one ref "$name"
  run_one ours "$name"
done

# Optional: c-blosc2's examples/ (UPSTREAM_EXAMPLES_DIR), built the same way and run without
# arguments (compress_file gets a generated input; decompress_file then cross-decompresses each
# library's output); an example passes when both libraries give the same exit status and the same
# output apart from timing lines.
ex_pass=0 ex_total=0 ex_bad=()
if [ -n "${UPSTREAM_EXAMPLES_DIR:-}" ]; then
  exdir=$(cd "$UPSTREAM_EXAMPLES_DIR" && pwd)
  # Not a multiple of compress_file's 1 MB chunks: a final empty append makes c-blosc2 write a frame
  # it cannot reopen itself (a zero-byte chunk), which libb2frame refuses (docs/conformance.md).
  head -c 2345678 "$ours_real" >"$work/ex-input.bin"
  for f in "$exdir"/*.c; do
    n=$(basename "$f" .c)
    ok_both=1
    declare -A exrc=()
    for lib in ref ours; do
      inc=$inc_ours link=(-L"$work/ours/lib" -lb2frame)
      [ "$lib" = ref ] && inc=$inc_ref && link=(-L"$work/ref/lib" -lblosc2)
      mkdir -p "$work/ex-$lib"
      if ! gcc -std=gnu11 -O1 -w -I"$inc" -o "$work/ex-$lib/$n" "$f" "${link[@]}" -lm -lpthread -ldl >"$work/ex-$lib/$n.build" 2>&1; then
        ok_both=2
        continue
      fi
      args=()
      [ "$n" = compress_file ] && args=("$work/ex-input.bin" "$work/ex-$lib/out.b2frame")
      rc=0
      (cd "$work/ex-$lib" && LD_LIBRARY_PATH="$work/$lib/lib" timeout "$timeout_s" ./"$n" "${args[@]}") \
        >"$work/ex-$lib/$n.out" 2>&1 || rc=$?
      exrc[$lib]=$rc
    done
    # Same exit status (decompress_file without arguments fails on both) and same output.
    [ "$ok_both" = 1 ] && [ "${exrc[ref]}" != "${exrc[ours]}" ] && ok_both=0
    [ "$ok_both" = 2 ] && { echo "example $n: does not build (against one or both libraries)"; continue; }
    ex_total=$((ex_total + 1))
    if [ "$ok_both" = 1 ] && diff <(grep -viE 'time|speed|[kmg]b/s|seconds' "$work/ex-ref/$n.out") \
        <(grep -viE 'time|speed|[kmg]b/s|seconds' "$work/ex-ours/$n.out") >/dev/null; then
      ex_pass=$((ex_pass + 1))
    else
      ex_bad+=("$n")
    fi
  done
  if [ -x "$work/ex-ref/decompress_file" ] && [ -x "$work/ex-ours/decompress_file" ]; then
    ex_total=$((ex_total + 1))
    if LD_LIBRARY_PATH="$work/ours/lib" "$work/ex-ours/decompress_file" "$work/ex-ref/out.b2frame" "$work/ex-o.bin" >/dev/null 2>&1 &&
      LD_LIBRARY_PATH="$work/ref/lib" "$work/ex-ref/decompress_file" "$work/ex-ours/out.b2frame" "$work/ex-r.bin" >/dev/null 2>&1 &&
      cmp -s "$work/ex-o.bin" "$work/ex-input.bin" && cmp -s "$work/ex-r.bin" "$work/ex-input.bin"; then
      ex_pass=$((ex_pass + 1))
    else
      ex_bad+=("decompress_file(cross)")
    fi
  fi
  echo "examples: $ex_pass of $ex_total behave the same on both libraries; different: ${ex_bad[*]:-none}"
fi

total=${#names[@]}
np_ref=0 np_ours=0 regress=()
for n in "${names[@]}"; do
  [ "${status[ref,$n]}" = PASS ] && np_ref=$((np_ref + 1))
  [ "${status[ours,$n]}" = PASS ] && np_ours=$((np_ours + 1))
  if [ "${status[ref,$n]}" = PASS ] && [ "${status[ours,$n]}" != PASS ]; then regress+=("$n"); fi
done
echo
echo "reference c-blosc2 ($refpkg/lib/libblosc2.so.9): $np_ref of $total pass"
echo "ours ($ours_real): $np_ours of $total pass"
echo "pass on the reference but not on libb2frame (${#regress[@]}): ${regress[*]:-none}"
if [ "${#regress[@]}" = 0 ] && [ "${#ex_bad[@]}" = 0 ]; then
  [ "$keep_work" = 1 ] && echo "results: $work/results.tsv (logs: $work/{ours,ref}/*.log*)"
  exit 0
fi
# A failed run keeps its results and logs for diagnosis.
keep_work=1
echo "results kept: $work/results.tsv (logs: $work/{ours,ref}/*.log*)"
exit 1
