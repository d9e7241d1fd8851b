#!/usr/bin/env bash
# cargo's runner for the aarch64 test binaries in scripts/cross-aarch64.sh: runs one test binary
# under qemu-user, with a time bound, and runs it a second time after an emulator stall.
#
# Why a second run: qemu-user (7.2, Debian's) can leave the child of a fork() made by a
# multithreaded emulated process stuck before it reaches exec, and the emulated parent then waits
# for it forever (a sporadic hang reported for other programs that start processes under
# qemu-user). A CI run hung in this stage until the run's overall limit, with no output naming a
# test; this was the likeliest cause, and the bound and the STALL line now name the binary.
# Our tests start processes from the multithreaded test harness (the kill tests' writers, the
# python-blosc2 interop tests, the CLI tests), so such a stall can hit any of them. It is told
# apart from a failing test by how the binary ends:
#   * the binary ran out of its time (exit 124 or 137 from `timeout`), or
#   * a test failed because a process it started did not start or exit in time (the bounded
#     waits of tests/common and the readers test: "did not start/exit/finish within").
# Only then is the binary run once more, with a STALL line naming it that the stage counts and
# prints; a test that fails any other way, or fails again, fails the stage. Natively (the cargo
# test stage) nothing is re-run.
#
# Environment: B2FRAME_AARCH64_BINARY_TIMEOUT (seconds per run of one binary, default 600; the
# slowest binary takes about 110 s on a loaded machine), B2FRAME_AARCH64_SYSROOT (default
# /usr/aarch64-linux-gnu).
set -uo pipefail
limit=${B2FRAME_AARCH64_BINARY_TIMEOUT:-600}
sysroot=${B2FRAME_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
out=$(mktemp "${TMPDIR:-/tmp}/b2frame-aarch64-run.XXXXXX")
trap 'rm -f "$out"' EXIT

attempt() {
  timeout -k 10 "$limit" qemu-aarch64 -L "$sysroot" "$@" 2>&1 | tee "$out"
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
  echo "STALL aarch64: $(basename "$1"): $stalled${running:+ (still running: $running)}; running it again"
  attempt "$@"
  rc=$?
fi
exit "$rc"
