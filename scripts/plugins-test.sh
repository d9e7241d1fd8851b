#!/usr/bin/env bash
# The dynamically loaded plugins (docs/plugins.md): frames written by the reference with each
# plugin package are read through our C API, frames we write with htj2k, j2k and openzl are
# read by the reference, and two JPEG 2000 plugins decode one after the other in one process.
# The packages come from the registry into the venvs of scripts/plugins-env.sh (cached).
#
# Usage: scripts/plugins-test.sh [TARGET_RELEASE_DIR]   (default target/release, built already)
# Exit status: 0 passed, 1 a check failed, 77 skipped (the package registry cannot be reached,
# or not on Linux x86-64, where the plugin wheels exist).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rel="${1:-${CARGO_TARGET_DIR:-$root/target}/release}"
[ "$(uname -sm)" = "Linux x86_64" ] || { echo "SKIPPED: the plugin wheels are for Linux x86-64"; exit 77; }
envs=$(bash "$root/scripts/plugins-env.sh")
case $? in
  0) ;;
  3) echo "SKIPPED: the package registry cannot be reached, so the plugin packages cannot be installed"; exit 77 ;;
  *) echo "FAILED: scripts/plugins-env.sh" >&2; exit 1 ;;
esac
new="$envs/new" old="$envs/old"
ref=$(ls -d "$root"/.venv/lib/python3*/site-packages/blosc2 2>/dev/null | head -n1)
[ -n "$ref" ] || { echo "FAILED: no reference c-blosc2 in .venv (scripts/setup-env.sh)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-plugins.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lib" && ln -s "$rel/libb2frame.so" "$work/lib/libb2frame.so.1"
cc -O1 -o "$work/ours" "$root/tests/plugins/plugin_frames.c" -I"$root/include" -L"$work/lib" -l:libb2frame.so.1 \
  || { echo "FAILED: cannot build the C driver" >&2; exit 1; }
cc -O1 -o "$work/ref" "$root/tests/plugins/plugin_frames.c" -I"$ref/include" -L"$ref/lib" -l:libblosc2.so.9 \
  -Wl,-rpath,"$ref/lib" || { echo "FAILED: cannot build the C driver for the reference" >&2; exit 1; }
site=$(ls -d "$new"/lib/python3*/site-packages | head -n1)
ours() { env LD_LIBRARY_PATH="$work/lib" B2FRAME_PLUGIN_PATH="$site" "$work/ours" "$@"; }
passed=0 failed=0
check() { # check NAME CMD...
  if "${@:2}"; then echo "ok: $1"; passed=$((passed + 1)); else echo "FAILED: $1"; failed=$((failed + 1)); fi
}
same() { cmp -s "$1" "$2"; }
cd "$work" || exit 1

# 1. Frames the reference writes: htj2k (40), j2k (39), openzl (38) with c-blosc2 3.3.5;
#    grok (37), openhtj2k (36) and a btune-tuned frame with c-blosc2 2.23 (their encoders
#    fail on 3.3.5). Each with its data, as the writer reads it back.
PATH="$new/bin:$PATH" "$new/bin/python" "$root/tests/plugins/write_frames.py" new "$work" \
  || { echo "FAILED: the reference could not write the plugin frames" >&2; exit 1; }
PATH="$old/bin:$PATH" BTUNE_TRADEOFF=0.5 "$old/bin/python" "$root/tests/plugins/write_frames.py" old "$work" \
  || { echo "FAILED: python-blosc2 4.1.2 could not write the plugin frames" >&2; exit 1; }

# 2. We read every one of them through the C API (plugins found through B2FRAME_PLUGIN_PATH).
reads() { ours read "$1.b2nd" && same "$1.b2nd.out" "$1.raw"; }
for n in htj2k j2k openzl grok openhtj2k btune; do
  check "ours reads the $n frame" reads "$n"
done
# ... and with the lookup c-blosc2 uses: the package's print_libpath() through python.
rm -f htj2k.b2nd.out
check "ours finds htj2k through python's print_libpath" sh -c \
  "PATH='$new/bin:$PATH' LD_LIBRARY_PATH='$work/lib' '$work/ours' read htj2k.b2nd && cmp -s htj2k.b2nd.out htj2k.raw"
# Without the package anywhere: an error code and trace lines, not a crash.
check "a missing plugin is CODEC_SUPPORT with a trace" sh -c \
  "env -u B2FRAME_PLUGIN_PATH PATH=/usr/bin:/bin BLOSC_TRACE=1 LD_LIBRARY_PATH='$work/lib' '$work/ours' read htj2k.b2nd 2>err.txt; \
   [ \$? = 1 ] && grep -q 'Could not find plugin .htj2k.' err.txt && grep -q -- '-7' err.txt"

# 3. We write htj2k, j2k and openzl frames; the reference reads them back to the same data.
writes() { ours write "$1" 64 64 1 image.raw "ours_$2.b2nd" && ours read "ours_$2.b2nd" \
  && same "ours_$2.b2nd.out" image.raw; }
for c in 40:htj2k 39:j2k 38:openzl; do
  id=${c%%:*} n=${c#*:}
  check "ours writes $n; ours reads it" writes "$id" "$n"
  rm -f "ours_$n.b2nd.out"
  check "the reference reads our $n frame" sh -c \
    "PATH='$new/bin:$PATH' '$work/ref' read ours_$n.b2nd && cmp -s ours_$n.b2nd.out image.raw"
done

# 4. Two JPEG 2000 plugins in one process, both orders (openhtj2k's decoder after htj2k's).
both() { rm -f ./*.out; ours read "$1.b2nd" "$2.b2nd" && same "$1.b2nd.out" "$1.raw" && same "$2.b2nd.out" "$2.raw"; }
check "htj2k then openhtj2k in one process" both htj2k openhtj2k
check "openhtj2k then htj2k in one process" both openhtj2k htj2k

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
