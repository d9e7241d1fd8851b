#!/usr/bin/env bash
# The runner of the cross stages' Rust test binaries (cargo's CARGO_TARGET_<TRIPLE>_RUNNER in
# scripts/cross-aarch64.sh and scripts/cross-windows.sh): runs one test binary under an emulator
# (qemu-user, wine) with a time bound, and runs it a second time after an emulator stall.
#
#   stall-runner.sh LABEL SECONDS [RESET...] -- [EMULATOR...] -- PROGRAM [ARGS...]
#
# LABEL names the platform in the STALL line; SECONDS bounds each run (`timeout -k 10`); RESET,
# when given, is a command run (bounded to 60 s, its output dropped) before the second run; the
# command run is EMULATOR PROGRAM ARGS, its output printed as it comes. Cargo appends PROGRAM (the
# test binary) and ARGS to the runner's words, so the cross scripts set the runner to everything
# up to the second `--`, e.g.
#   stall-runner.sh aarch64 600 -- qemu-aarch64 -L /usr/aarch64-linux-gnu --
#   stall-runner.sh windows 600 wineserver -k -- wine --
# (cargo splits the variable's value at whitespace: no word may contain a space).
#
# Why a second run: qemu-user (7.2, Debian's) can leave the child of a fork() made by a
# multithreaded emulated process stuck before it reaches exec, and the emulated parent then waits
# for it forever (a sporadic hang reported for other programs that start processes under
# qemu-user). A CI run hung in the aarch64 stage until the run's overall limit, with no output
# naming a test; this was the likeliest cause, and the bound and the STALL line now name the
# binary. Our tests start processes from the multithreaded test harness (the kill tests' writers,
# the python-blosc2 interop tests, the CLI tests), so such a stall can hit any of them, under wine
# as under qemu. It is told apart from a failing test by how the binary ends:
#   * the binary ran out of its time (exit 124 or 137 from `timeout`), or
#   * a test failed because a process it started did not start or exit in time (the bounded
#     waits of tests/common and the readers test: "did not start/exit/finish within"; keep those
#     panic texts as they are).
# Only then is RESET run (wine: `wineserver -k` ends the wine processes left in the script's own
# prefix; the test binaries run one at a time, so they are this binary's) and the binary run once
# more, after a line `STALL LABEL: BINARY: WHY; running it again` that the cross scripts count
# and print. The exit status is that of the last run: a test that fails any other way, or fails
# again, fails the stage. Natively (the cargo test stage) nothing is re-run.
set -uo pipefail
usage() {
  echo "usage: $0 LABEL SECONDS [RESET...] -- [EMULATOR...] -- PROGRAM [ARGS...]" >&2
  exit 2
}
[ $# -ge 2 ] || usage
label=$1
limit=$2
shift 2
reset=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do reset+=("$1"); shift; done
[ $# -gt 0 ] || usage
shift
emulator=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do emulator+=("$1"); shift; done
[ $# -gt 1 ] || usage
shift
program=$1

out=$(mktemp "${TMPDIR:-/tmp}/b2frame-$label-run.XXXXXX")
trap 'rm -f "$out"' EXIT

attempt() {
  timeout -k 10 "$limit" ${emulator[@]+"${emulator[@]}"} "$@" 2>&1 | tee "$out"
  return "${PIPESTATUS[0]}"
}

attempt "$@"
rc=$?
stalled=""
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  stalled="no end within ${limit} s"
elif [ "$rc" != 0 ] && grep -qE 'did not (start|exit|finish) within' "$out"; then
  stalled="a process it started did not start or exit in time"
fi
if [ -n "$stalled" ]; then
  running=$(grep -oE 'test [^ ]+ has been running for over 60 seconds' "$out" | sed 's/ has been.*//' | sort -u | tr '\n' ' ')
  echo "STALL $label: $(basename "$program"): $stalled${running:+ (still running: $running)}; running it again"
  [ ${#reset[@]} = 0 ] || timeout -k 5 60 "${reset[@]}" >/dev/null 2>&1
  attempt "$@"
  rc=$?
fi
exit "$rc"
