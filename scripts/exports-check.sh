#!/usr/bin/env bash
# Export check of libb2frame.so against the reference libblosc2.so.9 (pinned python-blosc2 wheel
# in .venv). Usage: scripts/exports-check.sh [path/to/libb2frame.so]
#                   (default: target/release/libb2frame.so)
#
# Required exports: every `blosc*` and `b2nd_*` function the reference exports (the b2nd
# array API and its metalayer helpers). tests/abi/exports-pending.txt lists the
# ones allowed to be missing while they are being implemented. The check fails when
#   * a required function is missing and not listed as pending,
#   * a pending function is exported now (remove it from the list, so the list only shrinks),
#   * libb2frame exports anything that is not API: only blosc*, b2nd_* and b2frame_* symbols
#     may be exported (no ZSTD_*, LZ4_*, zlib or Rust symbols).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-$root/target/release/libb2frame.so}
pending_file="$root/tests/abi/exports-pending.txt"

if [ ! -x "$root/.venv/bin/python" ]; then
  echo "exports-check: .venv is missing; running scripts/setup-env.sh" >&2
  "$root/scripts/setup-env.sh" >&2
fi
ref=""
for d in "$root"/.venv/lib/python3*/site-packages/blosc2/lib/libblosc2.so.9; do
  [ -f "$d" ] && ref=$d
done
if [ -z "$ref" ]; then
  echo "exports-check: FAIL: REFERENCE libblosc2.so.9 NOT FOUND under $root/.venv" >&2
  echo "exports-check: run scripts/setup-env.sh (installs the pinned python-blosc2 wheel)" >&2
  exit 2
fi
if [ ! -f "$lib" ]; then
  echo "exports-check: FAIL: $lib does not exist (build it first, e.g. cargo build --release)" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Defined dynamic symbols (functions and data), names only, without version suffixes.
defined() { nm -D --defined-only "$1" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u; }

defined "$ref" | grep -E '^(blosc|b2nd_)' >"$tmp/required"
defined "$lib" >"$tmp/ours"
{ grep -v -E '^[[:space:]]*(#|$)' "$pending_file" || true; } | sed 's/[[:space:]]*$//' | sort -u \
  >"$tmp/pending"

comm -23 "$tmp/required" "$tmp/ours" >"$tmp/missing"
comm -23 "$tmp/missing" "$tmp/pending" >"$tmp/missing_unlisted"
comm -12 "$tmp/pending" "$tmp/ours" >"$tmp/pending_but_exported"
comm -23 "$tmp/pending" "$tmp/required" >"$tmp/pending_unknown"
grep -v -E '^(blosc|b2nd_|b2frame_)' "$tmp/ours" >"$tmp/non_api" || true

nreq=$(wc -l <"$tmp/required")
nmiss=$(wc -l <"$tmp/missing")
echo "exports-check: reference: $ref"
echo "exports-check: ours:      $lib"
echo "exports-check: $nreq required functions, $((nreq - nmiss)) exported," \
  "$nmiss missing ($(wc -l <"$tmp/pending") listed as pending)"

failures=0
report() {  # $1 = file, $2 = message
  if [ -s "$1" ]; then
    echo "exports-check: FAIL: $2 ($(wc -l <"$1")):"
    sed 's/^/    /' "$1"
    failures=$((failures + 1))
  fi
}
report "$tmp/missing_unlisted" "missing and not in tests/abi/exports-pending.txt"
report "$tmp/pending_but_exported" "exported now: remove from tests/abi/exports-pending.txt"
report "$tmp/pending_unknown" "listed as pending but not exported by the reference"
report "$tmp/non_api" "non-API symbols exported by $(basename "$lib")"

if [ $failures -ne 0 ]; then
  exit 1
fi
echo "exports-check: ok"
