#!/usr/bin/env bash
# cargo's runner for the Windows test binaries in scripts/cross-windows.sh: runs one test binary
# under wine with a time bound, and runs it a second time after a stall, the way
# scripts/aarch64-runner.sh does under qemu-user.
#
# A stall is told apart from a failing test by how the binary ends:
#   * the binary ran out of its time (exit 124 or 137 from `timeout`), or
#   * a test failed because a process it started did not start or exit in time (the bounded
#     waits of tests/common and the readers test: "did not start/exit/finish within").
# Only then are the wine processes left in the script's own prefix ended (`wineserver -k`: the
# test binaries run one at a time, so they are this binary's) and the binary is run once more,
# with a STALL line naming it that the script counts; a test that fails any other way, or fails
# again, fails the step.
#
# Environment: WINEPREFIX (the script's prefix), B2FRAME_WINDOWS_BINARY_TIMEOUT (seconds per run
# of one binary, default 900; scripts/cross-windows.sh sets 600 with --ci and 3600 without).
set -uo pipefail
limit=${B2FRAME_WINDOWS_BINARY_TIMEOUT:-900}
out=$(mktemp "${TMPDIR:-/tmp}/b2frame-wine-run.XXXXXX")
trap 'rm -f "$out"' EXIT

attempt() {
  timeout -k 10 "$limit" wine "$@" 2>&1 | tee "$out"
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
  echo "STALL windows: $(basename "$1"): $stalled${running:+ (still running: $running)}; running it again"
  timeout -k 5 60 wineserver -k >/dev/null 2>&1
  attempt "$@"
  rc=$?
fi
exit "$rc"
