#!/usr/bin/env bash
# Peak RSS and wall time of whole-frame operations, b2frame against c-blosc2 3.3.5: one
# process per operation (benches/memory/frame_ops.c, compiled once against each library),
# `/usr/bin/time -v` for the maximum resident set size. Both libraries work on the same frame
# files. Usage (after `cargo build --release`):
#
#   bash benches/memory/run.sh [WORKDIR]
#
# Env: B2_MEM_REPEAT (runs per row, median time and median RSS; default 3), B2_MEM_FILL (chunks of
# the fill_special frame, default 200000000), B2_MEM_BIG_CHUNKS
# (chunks of 4 MiB in the large frame, default 256: 1 GiB of data), B2_MEM_1M (chunks of the
# 1M-chunk frame, default 1048576), B2_MEM_FILTER (only rows whose op contains it),
# B2_MEM_EXACT=1 (two more columns: the exact peak RSS of each side, KiB, median over
# B2_MEM_REPEAT more runs under benches/memory/peak.c, which says why `/usr/bin/time`'s can be
# ~250 KiB off on Linux 6.2 and later), CARGO_TARGET_DIR. `b2frame convert` / `compact` rows need the CLI binary (target/release/b2frame,
# or B2FRAME_CLI); they are compared with what a c-blosc2 program does for the same job
# (open + blosc2_schunk_copy to a cframe file; open + blosc2_schunk_to_file).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
work="${1:-$(mktemp -d)}"
mkdir -p "$work/lib-ours" "$work/lib-ref"
repeat="${B2_MEM_REPEAT:-3}"
filter="${B2_MEM_FILTER:-}"
reflib=$(echo "$root"/.venv/lib/python3*/site-packages/blosc2/lib)
ln -sf "$target/release/libb2frame.so" "$work/lib-ours/libb2frame.so.1"
ln -sf "$target/release/libb2frame.so" "$work/lib-ours/libb2frame.so"
ln -sf "$reflib/libblosc2.so.9" "$work/lib-ref/libblosc2.so"
cc -O2 -I"$root/include" "$root/benches/memory/frame_ops.c" -o "$work/ops_ours" \
  -L"$work/lib-ours" -lb2frame -Wl,-rpath,"$work/lib-ours"
cc -O2 -I"$root/include" "$root/benches/memory/frame_ops.c" -o "$work/ops_ref" \
  -L"$work/lib-ref" -lblosc2 -Wl,-rpath,"$reflib"
cli="${B2FRAME_CLI:-$target/release/b2frame}"
exact="${B2_MEM_EXACT:-}"
[ -z "$exact" ] || cc -O2 -shared -fPIC "$root/benches/memory/peak.c" -o "$work/peak.so" -ldl

# Source frames (written by b2frame through a plain super-chunk; c-blosc2 reads them too).
mk() { [ -f "$work/$1" ] || "$work/ops_ours" make "$2" "$3" "$work/$1" >/dev/null; }
mk small.b2frame 16 $((4 << 20))                        # 64 MiB of data, 4 MiB chunks
mk big.b2frame "${B2_MEM_BIG_CHUNKS:-256}" $((4 << 20)) # 1 GiB of data by default
mk m1.b2frame "${B2_MEM_1M:-1048576}" 1024              # 1M chunks of 1 KiB

# median of a list of numbers
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# run LABEL CMD...: prints "seconds rss_kib" medians over $repeat runs
measure() {
  local ts=() rs=() out
  for _ in $(seq "$repeat"); do
    rm -rf "$work/out"
    out=$( { /usr/bin/time -v "$@" >"$work/stdout" 2>"$work/err" ; } 2>&1; cat "$work/err")
    if ! grep -q "Exit status: 0" <<<"$out"; then echo "FAILED: $*" >&2; cat "$work/err" >&2; return 1; fi
    # The driver prints the operation's own time; the CLI does not: then the process's.
    if [[ "$(cat "$work/stdout")" =~ ^[0-9.]+$ ]]; then
      ts+=("$(cat "$work/stdout")")
    else
      ts+=("$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; print s}' <<<"$out")")
    fi
    rs+=("$(awk -F': ' '/Maximum resident set size/ {print $2}' <<<"$out")")
  done
  local ex=()
  if [ -n "$exact" ]; then
    for _ in $(seq "$repeat"); do
      rm -rf "$work/out" "$work/peak"
      B2_PEAK_OUT="$work/peak" LD_PRELOAD="$work/peak.so" "$@" >/dev/null 2>&1
      # One line per process (a `bash -c` row has several): the largest.
      ex+=("$(sort -g "$work/peak" | tail -1)")
    done
  fi
  echo "$(printf '%s\n' "${ts[@]}" | median) $(printf '%s\n' "${rs[@]}" | median) $(printf '%s\n' "${ex[@]:-0}" | median)"
}

row() { # row OP FRAME OURS_CMD... -- REF_CMD...
  local op="$1" frame="$2"; shift 2
  [[ -z "$filter" || "$op" == *"$filter"* ]] || return 0
  local ours=() ref=() side=0
  for a in "$@"; do
    if [ "$a" = "--" ]; then side=1; continue; fi
    if [ $side = 0 ]; then ours+=("$a"); else ref+=("$a"); fi
  done
  read -r to ro xo < <(measure "${ours[@]}")
  read -r tr rr xr < <(measure "${ref[@]}")
  printf '| %s | %s | %.1f | %.1f | %.2f | %.4f | %.4f | %.2f |' "$op" "$frame" \
    "$(echo "$ro / 1024" | bc -l)" "$(echo "$rr / 1024" | bc -l)" "$(echo "$ro / $rr" | bc -l)" \
    "$to" "$tr" "$(echo "$tr / $to" | bc -l)"
  if [ -n "$exact" ]; then printf ' %s | %s |' "$xo" "$xr"; fi
  echo
}

if [ -n "$exact" ]; then
  echo "| operation | frame | ours max RSS MiB | c-blosc2 max RSS MiB | RSS ours/ref | ours s | c-blosc2 s | x time (ref/ours) | ours exact peak KiB | c-blosc2 exact peak KiB |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
else
  echo "| operation | frame | ours max RSS MiB | c-blosc2 max RSS MiB | RSS ours/ref | ours s | c-blosc2 s | x time (ref/ours) |"
  echo "|---|---|---|---|---|---|---|---|"
fi
for f in small big; do
  src="$work/$f.b2frame"
  desc="$f ($(du -m "$src" | cut -f1) MiB file)"
  for op in to_file append_file to_buffer copy_cframe copy_recode copy_sframe copy_memory copy_plain from_buffer to_file_mem; do
    [ "$f" = big ] && [[ "$op" == copy_memory || "$op" == copy_plain || "$op" == to_buffer || "$op" == from_buffer || "$op" == to_file_mem ]] && continue
    row "$op" "$desc" "$work/ops_ours" "$op" "$src" "$work/out" -- "$work/ops_ref" "$op" "$src" "$work/out"
  done
  if [ -x "$cli" ]; then
    row "b2frame convert (ref: open+copy to cframe)" "$desc" "$cli" convert "$src" "$work/out" -- \
      "$work/ops_ref" copy_cframe "$src" "$work/out"
    row "b2frame convert --sparse (ref: open+copy to sframe)" "$desc" "$cli" convert "$src" "$work/out" --sparse -- \
      "$work/ops_ref" copy_sframe "$src" "$work/out"
    cp "$src" "$work/compact.b2frame"
    row "b2frame compact (ref: open+to_file)" "$desc" "$cli" compact "$work/compact.b2frame" -- \
      "$work/ops_ref" to_file "$src" "$work/out"
  fi
done
src="$work/m1.b2frame"
desc="1M chunks ($(du -m "$src" | cut -f1) MiB file)"
for op in open slice; do
  row "$op" "$desc" "$work/ops_ours" "$op" "$src" "$work/out" -- "$work/ops_ref" "$op" "$src" "$work/out"
done

# A fill_special frame (c-blosc2's, a few hundred bytes) claiming B2_MEM_FILL chunks (default 200M,
# one float64 each): open, slice, and an append to a fresh copy (c-blosc2 decodes and re-encodes
# the whole index: 1.6 GB and seconds at 200M).
nfill="${B2_MEM_FILL:-200000000}"
src="$work/fill.b2frame"
[ -f "$src" ] || "$work/ops_ref" fill "$nfill" "$src" >/dev/null
desc="fill_special, $nfill chunks ($(wc -c <"$src") bytes)"
for op in open slice; do
  row "$op" "$desc" "$work/ops_ours" "$op" "$src" "$work/out" -- "$work/ops_ref" "$op" "$src" "$work/out"
done
append_copy() { cp "$src" "$work/fill-append.b2frame" && "$work/ops_$1" append1 "$work/fill-append.b2frame" "$work/out"; }
export -f append_copy
export src work
row append1 "$desc" bash -c 'append_copy ours' -- bash -c 'append_copy ref'
