#!/usr/bin/env bash
# Append rate as frames grow, b2frame against c-blosc2 3.3.5 (benches/memory/append_scaling.c
# compiled once against each library). Usage (after `cargo build --release`):
#
#   bash benches/memory/append_scaling.sh [WORKDIR]
#
# Prints one line per measured block: "KIND LIBRARY CHUNKS_AT_END APPENDS_PER_S", with the load
# average before each run.
# 1. From zero: B2_AS_ZERO_OURS / B2_AS_ZERO_REF appends (defaults 200000 / 100000) to a new
#    cframe file, rate per block of 10,000; then B2_AS_ZERO_SMALL (default 50000) to a new
#    sframe (B2_AS_ZERO_SFRAME, 0 skips it) and to a new in-memory frame
#    (B2_AS_ZERO_MEM_OURS / B2_AS_ZERO_MEM_REF), both libraries.
# 2. Prebuilt frames of B2_AS_SIZES chunks (default "250000 500000 1000000"), built by b2frame
#    (a plain in-memory super-chunk of the same 4 KiB chunks, no offsets index, written once
#    with blosc2_schunk_to_file; c-blosc2's to_file of such a super-chunk appends chunk by
#    chunk to the new file frame, rewriting its index each time: 35 s for 50,000 chunks, and it
#    had not finished 1M after 16 minutes): B2_AS_BLOCK appends (default 2000) to a copy of the file
#    (opened with blosc2_schunk_open), to it in memory (blosc2_schunk_from_buffer, copy=false: an in-memory frame),
#    and to an sframe converted from it with `b2frame convert --sparse` (sizes up to
#    B2_AS_SFRAME_MAX, default 250000: one file per chunk; both libraries append to the same
#    directory, restored in between).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
work="${1:-$(mktemp -d)}"
mkdir -p "$work/lib-ours" "$work/lib-ref"
reflib=$(echo "$root"/.venv/lib/python3*/site-packages/blosc2/lib)
ln -sf "$target/release/libb2frame.so" "$work/lib-ours/libb2frame.so.1"
ln -sf "$target/release/libb2frame.so" "$work/lib-ours/libb2frame.so"
ln -sf "$reflib/libblosc2.so.9" "$work/lib-ref/libblosc2.so"
src="$root/benches/memory/append_scaling.c"
cc -O2 -I"$root/include" "$src" -o "$work/as_ours" -L"$work/lib-ours" -lb2frame -Wl,-rpath,"$work/lib-ours"
cc -O2 -I"$root/include" "$src" -o "$work/as_ref" -L"$work/lib-ref" -lblosc2 -Wl,-rpath,"$reflib"
cli="${B2FRAME_CLI:-$target/release/b2frame}"
block="${B2_AS_BLOCK:-2000}"

load() { cut -d' ' -f1-3 /proc/loadavg; }
run() { # run KIND LIB ARGS...
  local kind="$1" lib="$2"; shift 2
  echo "# $kind $lib load $(load)"
  "$work/as_$lib" "$@" | awk -v k="$kind" -v l="$lib" '$1 != "total" {print k, l, $1, $2} $1 == "total" {print k, l, "total", $2 " s"}'
}

run file-from-zero ours "${B2_AS_ZERO_OURS:-200000}" 10000 "$work/z_ours.b2frame" file
run file-from-zero ref "${B2_AS_ZERO_REF:-100000}" 10000 "$work/z_ref.b2frame" file
n=$(( ${B2_AS_ZERO_OURS:-200000} < ${B2_AS_ZERO_REF:-100000} ? ${B2_AS_ZERO_OURS:-200000} : ${B2_AS_ZERO_REF:-100000} ))
small="${B2_AS_ZERO_SMALL:-50000}"
sfz="${B2_AS_ZERO_SFRAME:-$small}"
if [ "$sfz" -gt 0 ]; then
  for lib in ours ref; do run sframe-from-zero $lib "$sfz" 10000 "$work/zs_$lib.b2frame" sframe; done
fi
run memory-from-zero ours "${B2_AS_ZERO_MEM_OURS:-$small}" 10000 x memory
run memory-from-zero ref "${B2_AS_ZERO_MEM_REF:-$small}" 10000 x memory
rm -rf "$work"/zs_*.b2frame

for size in ${B2_AS_SIZES:-250000 500000 1000000}; do
  pre="$work/pre$size.b2frame"
  [ -f "$pre" ] || "$work/as_ours" "$size" "$size" "$pre" build >/dev/null
  for lib in ours ref; do
    cp "$pre" "$work/app.b2frame"
    run "file-prebuilt-$size" $lib "$block" "$block" "$work/app.b2frame" open
  done
  for lib in ours ref; do run "memory-prebuilt-$size" $lib "$block" "$block" "$pre" frombuf; done
  if [ "$size" -le "${B2_AS_SFRAME_MAX:-250000}" ]; then
    # One sframe for both libraries (a copy of 1M chunk files is 4 GB more on disk): after
    # each run its index file is put back and the new chunk files removed.
    rm -rf "$work/pre_s"
    "$cli" convert --sparse "$pre" "$work/pre_s" >/dev/null
    cp "$work/pre_s/chunks.b2frame" "$work/pre_s.index"
    for lib in ours ref; do
      run "sframe-prebuilt-$size" $lib "$block" "$block" "$work/pre_s" open
      for ((i = size; i < size + block; i++)); do printf '%s/%08X.chunk\0' "$work/pre_s" "$i"; done | xargs -0 rm -f
      cp "$work/pre_s.index" "$work/pre_s/chunks.b2frame"
    done
    rm -rf "$work/pre_s" "$work/pre_s.index"
  fi
done
