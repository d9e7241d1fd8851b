#!/usr/bin/env bash
# Turns the kept campaign corpora (fuzz/corpus/<target>, not committed) into the committed
# minimised corpora (fuzz/minimised/<target>): libFuzzer's `-merge=1` keeps the fewest inputs
# that cover every feature the corpus, the old minimised corpus, the seeds and the regressions
# reach together, and the inputs that seeds and regressions already cover are left out (those
# stay where they are). Uses the binaries scripts/fuzz-campaign.sh built (run it first).
#
# Usage: scripts/fuzz-minimise.sh [--commit REV] [TARGET...]   (default: HEAD, every target)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rev=HEAD targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --commit) rev=$2; shift 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
cd "$root/fuzz"
commit=$(git rev-parse --short "$rev")
build="$root/fuzz/target-campaign/build"
[ ${#targets[@]} -gt 0 ] || targets=($(cd fuzz_targets && ls *.rs | sed 's/\.rs$//'))
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0"
for t in "${targets[@]}"; do
  bin="$build/x86_64-unknown-linux-gnu/release/$t"
  grep -qx "$t" sanitizer-none && bin="$build-nosan/x86_64-unknown-linux-gnu/release/$t"
  [ -x "$bin" ] || { echo "$t: no campaign binary at $bin (run scripts/fuzz-campaign.sh --commit $commit)" >&2; exit 1; }
  work=$(mktemp -d)
  mkdir -p "$work/merged"
  # The committed inputs go in first, so that the merge adds only what they do not cover.
  for d in seeds regressions; do
    [ -d "$d/$t" ] && cp "$d/$t"/* "$work/merged/" 2>/dev/null || true
  done
  ls "$work/merged" >"$work/committed"
  inputs=()
  for d in "minimised/$t" "corpus/$t"; do [ -d "$d" ] && inputs+=("$d"); done
  nice -n 19 "$bin" -merge=1 -rss_limit_mb=2048 -timeout=60 -artifact_prefix="$work/" "$work/merged" ${inputs[@]+"${inputs[@]}"} \
    >"$work/log" 2>&1 || { tail -n 20 "$work/log" >&2; exit 1; }
  (cd "$work/merged" && xargs -a "$work/committed" -d '\n' rm -f --)
  rm -rf "minimised/$t"
  mkdir -p "minimised/$t"
  cp "$work/merged"/* "minimised/$t/" 2>/dev/null || true
  echo "$t: $(ls "minimised/$t" | wc -l) inputs, $(du -sk "minimised/$t" | cut -f1) KiB ($(grep -o 'MERGE-OUTER: [0-9]* new files with [0-9]* new features' "$work/log" | tail -n1))"
  rm -rf "$work"
done
