#!/usr/bin/env bash
# Regenerates link/hot-text.ld, the order in which build.rs has the linker put the functions
# that frame operations run (x86_64 Linux only; BENCHMARKS.md, "Memory").
# Builds the library twice (CMake's `cargo build -p b2frame --lib`, then the workspace's
# `cargo build --release`) and profiles benches/memory/frame_ops.c linked against each under
# callgrind, one process per operation, on small frames. Run after `cargo build --release`
# when the frame code changed much (a stale list costs memory, never correctness):
#
#   bash scripts/hot-text.sh [WORKDIR]
#
# Needs valgrind, nm and python3.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
lib="$target/release/libb2frame.so"
work="${1:-$(mktemp -d)}"
mkdir -p "$work/lib"
ln -sf "$lib" "$work/lib/libb2frame.so.1"
ln -sf "$lib" "$work/lib/libb2frame.so"
cc -O2 -I"$root/include" "$root/benches/memory/frame_ops.c" -o "$work/ops" \
  -L"$work/lib" -lb2frame -Wl,-rpath,"$work/lib"
# The frames of benches/memory/run.sh, smaller: its 16 chunks of 4 MiB (a compressed offsets
# index) and, for open/slice/append1, 2048 chunks of 1 KiB.
"$work/ops" make 16 $((4 << 20)) "$work/small.b2frame" >/dev/null
"$work/ops" make 2048 1024 "$work/many.b2frame" >/dev/null
args=()
# profile TAG LIBDIR: every operation under callgrind against LIBDIR/libb2frame.so.1.
profile() {
  args+=("$2/libb2frame.so.1")
  for op in open to_buffer copy_memory copy_plain from_buffer to_file_mem to_file copy_cframe \
    copy_sframe append_file slice append1; do
    src="$work/small.b2frame"
    case "$op" in open | slice | append1)
      cp "$work/many.b2frame" "$work/src-$op.b2frame"
      src="$work/src-$op.b2frame"
      ;;
    esac
    rm -rf "$work/out"
    LD_LIBRARY_PATH="$2" valgrind --tool=callgrind --demangle=no \
      --callgrind-out-file="$work/$1-$op.cg" "$work/ops" "$op" "$src" "$work/out" \
      >/dev/null 2>"$work/$op.log" ||
      { echo "callgrind $op failed:" >&2; cat "$work/$op.log" >&2; exit 1; }
    args+=("$op=$work/$1-$op.cg")
  done
  args+=(--)
}
# The symbol hashes of generic instances depend on the crates' metadata, which differs between
# a workspace build and CMake's `cargo build -p b2frame --lib` (features are unified over other
# packages): profile both, the workspace build last (it stays in target/release).
mkdir -p "$work/lib-cmake"
(cd "$root" && cargo build --release -p b2frame --lib)
cp "$lib" "$work/lib-cmake/libb2frame.so.1"
profile cmake "$work/lib-cmake"
(cd "$root" && cargo build --release)
profile workspace "$work/lib"
mkdir -p "$root/link"
python3 "$root/scripts/hot-text.py" "$root/link/hot-text.ld" "${args[@]}"
