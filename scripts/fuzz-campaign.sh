#!/usr/bin/env bash
# A fuzzing campaign: builds the cargo-fuzz targets once from a snapshot of a commit (so that
# the work tree can change meanwhile), then runs targets one after another, each for a fixed
# time at nice 19, on a corpus kept between runs (fuzz/corpus/<target>, not committed) plus the
# committed seeds and regressions. Each run appends one line to fuzz/campaign.log (not
# committed): time, commit, target, executions, coverage (cov, ft: libFuzzer's last status
# line), corpus size, peak RSS, result. docs/fuzzing.md turns that log into its table.
#
# Usage: scripts/fuzz-campaign.sh [--commit REV] [--seconds S] [--rounds N] [TARGET...]
#   (default: HEAD, 1200 s per run, 1 round, every target in fuzz/fuzz_targets)
# Environment: FUZZ_JOBS (default 1): targets run at the same time (at most two on a shared
# 2-core machine, and only while its load is low).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rev=HEAD secs=1200 rounds=1 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --commit) rev=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
cd "$root"
commit=$(git rev-parse --short "$rev") || exit 2
snap="$root/fuzz/target-campaign/src-$commit"
if [ ! -f "$snap/fuzz/Cargo.toml" ]; then
  mkdir -p "$snap"
  git archive "$commit" | tar -x -C "$snap"
fi
[ ${#targets[@]} -gt 0 ] || targets=($(cd "$snap/fuzz/fuzz_targets" && ls *.rs | sed 's/\.rs$//'))
# gcc-built ASan reports a false stack-use-after-scope inside zstd and a false odr-violation
# for libdeflate (see scripts/fuzz-smoke.sh).
export CFLAGS="${CFLAGS:-} -fno-sanitize-address-use-after-scope"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0"
build="$root/fuzz/target-campaign/build"
(cd "$snap/fuzz" && nice -n 19 cargo +nightly fuzz build --target-dir "$build") || exit 1
# The targets fuzz/sanitizer-none names are built again without a sanitizer, in a directory of
# their own, and run from there.
nosan="$build-nosan"
none=()
[ -f "$snap/fuzz/sanitizer-none" ] && none=($(grep -v '^#' "$snap/fuzz/sanitizer-none"))
for t in ${none[@]+"${none[@]}"}; do
  (cd "$snap/fuzz" && nice -n 19 cargo +nightly fuzz build -s none --target-dir "$nosan" "$t") || exit 1
done
bin_of() { # bin_of TARGET: the binary to run
  if printf '%s\n' ${none[@]+"${none[@]}"} | grep -qx "$1"; then
    echo "$nosan/x86_64-unknown-linux-gnu/release/$1"
  else
    echo "$build/x86_64-unknown-linux-gnu/release/$1"
  fi
}
log="$root/fuzz/campaign.log"

run_one() { # run_one TARGET: one timed run; appends its line to the log
  local t=$1 out corpus extra=()
  corpus="$root/fuzz/corpus/$t"
  mkdir -p "$corpus" "$root/fuzz/artifacts/$t"
  [ -d "$snap/fuzz/seeds/$t" ] && extra+=("$snap/fuzz/seeds/$t")
  [ -d "$snap/fuzz/regressions/$t" ] && extra+=("$snap/fuzz/regressions/$t")
  [ -d "$snap/fuzz/minimised/$t" ] && extra+=("$snap/fuzz/minimised/$t")
  out="$root/fuzz/artifacts/$t/run-$(date -u +%Y%m%dT%H%M%S).log"
  local t0=$SECONDS
  nice -n 19 "$(bin_of "$t")" "$corpus" ${extra[@]+"${extra[@]}"} -max_total_time="$secs" \
    -print_final_stats=1 -rss_limit_mb=2048 -timeout=60 -artifact_prefix="$root/fuzz/artifacts/$t/" \
    >"$out" 2>&1
  local rc=$? execs cov ft units rss result=ok
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out" | grep -o '[0-9]*$' | tail -n1)
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$out" | grep -o '[0-9]*$' | tail -n1)
  cov=$(grep -o ' cov: [0-9]*' "$out" | tail -n1 | grep -o '[0-9]*')
  ft=$(grep -o ' ft: [0-9]*' "$out" | tail -n1 | grep -o '[0-9]*')
  units=$(grep -o ' corp: [0-9]*' "$out" | tail -n1 | grep -o '[0-9]*')
  if [ -z "$execs" ]; then # a crash ends the run before the final stats: the last status line
    execs=$(grep -o '^#[0-9]*' "$out" | tail -n1 | tr -d '#')
  fi
  [ "$rc" = 0 ] || result="FINDING(exit $rc: $(grep -m1 -o 'ERROR: [^ ]*\( [^ ]*\)\?\|panicked at [^ ]*\|out-of-memory\|timeout' "$out" | head -n1), see $out)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%ss\t%s\n' "$(date -u +%FT%TZ)" "$commit" "$t" \
    "${execs:-0}" "${cov:-?}" "${ft:-?}" "${units:-?}" "${rss:-?}" "$((SECONDS - t0))" "$result" >>"$log"
  tail -n1 "$log"
}

jobs=${FUZZ_JOBS:-1}
for ((r = 0; r < rounds; r++)); do
  for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run_one "$t" &
  done
done
wait
