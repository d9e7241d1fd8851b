#!/usr/bin/env bash
# Builds b2frame, installs it into PREFIX, then compiles examples/hello.c and examples/b2nd.c
# against the installed copy (through pkg-config) and runs them: each writes a frame (a
# super-chunk, a b2nd array), reopens it and reads it back.
# Usage: bash scripts/install.sh PREFIX [extra cmake configure args, e.g. -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON]
set -euo pipefail
prefix="${1:?usage: scripts/install.sh PREFIX [cmake args...]}"
shift
root=$(cd "$(dirname "$0")/.." && pwd)
build="${B2FRAME_BUILD_DIR:-$root/build}"

bash "$root/scripts/setup-env.sh" --tools-only
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)"
cmake --install "$build" --prefix "$prefix"

libdir=$(dirname "$(find "$prefix" -name b2frame.pc -print -quit)")/..
libdir=$(cd "$libdir" && pwd)
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
out=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-hello.XXXXXX")
# shellcheck disable=SC2046
for ex in hello b2nd; do
  cc -O2 -Wall -Wextra "$root/examples/$ex.c" -o "$out/$ex" $(pkg-config --cflags --libs b2frame) -Wl,-rpath,"$libdir"
  "$out/$ex" "$out/$ex.b2frame"
done
rm -rf "$out"
echo
echo "b2frame installed in $prefix. Use it with:"
echo "  pkg-config:  PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs b2frame"
echo "  CMake:       -DCMAKE_PREFIX_PATH=$prefix, then find_package(B2frame) and B2frame::b2frame"
echo "  run time:    the library is $libdir/libb2frame.so.1 (add $libdir to LD_LIBRARY_PATH or an rpath)"
if [ -x "$prefix/bin/b2frame" ]; then
  echo "  the tool:    $prefix/bin/b2frame (man pages: MANPATH=$prefix/share/man man b2frame)"
fi
