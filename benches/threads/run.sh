#!/usr/bin/env bash
# Super-chunk compression and decompression through the public C API: benches/threads/schunk.c
# compiled against b2frame and against c-blosc2 3.3.5 (the venv's copy), one process per
# (library, setting), the two libraries back to back in alternating order, B2_THR_REPEAT
# (default 2) processes each; each process keeps the best of B2_THR_ROUNDS (default 3) rounds of
# nthreads 1 and 2. Prints two tables: per setting, throughput ours/c-blosc2 (C compression,
# D decompression, at 1 and 2 threads), t2/t1 of each library's decompression, our
# decompression against a memcpy of the same bytes (copied chunks) and the codec alone decoding
# the same streams against the whole call; then the geomeans. The best over the processes
# counts (B2_THR_STAT=median: the median).
#   bash benches/threads/run.sh [WORKDIR]          (after `cargo build --release`)
# B2_THR_ONLY=REGEX keeps the settings whose "data codec clevel filter" line matches;
# B2_THR_CHUNKS=N appends N 4 MiB chunks per setting instead of 16 (schunk.c).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
work="${1:-$(mktemp -d)}"
mkdir -p "$work/lib-ours" "$work/lib-ref"
reflib=$(echo "$root"/.venv/lib/python3*/site-packages/blosc2/lib)
ln -sf "$target/release/libb2frame.so" "$work/lib-ours/libb2frame.so.1"
ln -sf "$target/release/libb2frame.so" "$work/lib-ours/libb2frame.so"
ln -sf "$reflib/libblosc2.so.9" "$work/lib-ref/libblosc2.so"
src="$root/benches/threads/schunk.c"
cc -O2 -I"$root/include" "$src" -o "$work/ours" -L"$work/lib-ours" -lb2frame \
  -Wl,-rpath,"$work/lib-ours" -lm -ldl
cc -O2 -I"$root/include" "$src" -o "$work/ref" -L"$work/lib-ref" -lblosc2 \
  -Wl,-rpath,"$reflib" -lm -ldl
settings="f64_smooth blosclz 5 shuffle
f64_smooth lz4 5 shuffle
f64_smooth zstd 1 shuffle
f64_smooth zstd 5 shuffle
f64_smooth zstd 1 bitshuffle
i32_small blosclz 5 shuffle
i32_small lz4 5 shuffle
i32_small zstd 1 shuffle
i32_small zstd 5 shuffle
f64_random blosclz 5 shuffle
f64_random lz4 5 shuffle
f64_random zstd 1 shuffle
f64_random zstd 5 shuffle"
if [ -n "${B2_THR_ONLY:-}" ]; then
  settings=$(grep -E -- "$B2_THR_ONLY" <<<"$settings")
fi
rounds="${B2_THR_ROUNDS:-3}"
out="$work/runs.txt"
: >"$out"
for r in $(seq "${B2_THR_REPEAT:-2}"); do
  while read -r data codec clevel filter; do
    # Alternate which library goes first.
    if [ $((r % 2)) = 1 ]; then order="ours ref"; else order="ref ours"; fi
    for lib in $order; do
      echo "$lib $data $codec $clevel $filter $(B2_CODEC_LIB="$reflib/libblosc2.so.9" "$work/$lib" "$data" "$codec" "$clevel" "$filter" "$rounds")" >>"$out"
    done
  done <<<"$settings"
done
python3 - "$out" "${B2_THR_STAT:-best}" "${B2_THR_CHUNKS:-16}" <<'PY'
import collections, math, statistics, sys
runs = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    lib, data, codec, clevel, filt, *v = line.split()
    key = (data, codec, clevel, filt)
    if key not in order:
        order.append(key)
    runs[(lib, key)].append([float(x) for x in v[:6]] + [int(v[6]), int(v[7])])
pick = min if sys.argv[2] == "best" else statistics.median
GB = int(sys.argv[3]) * 4 * 2**20 / 1e9
gm = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
print("| setting | blocks | C t1 | C t2 | D t1 | D t2 | D t2/t1 ours (ref) | ours D GB/s t1, t2 "
      "| D / memcpy t1, t2 | codec alone / D t1 ours (ref) |")
print("|---|---|---|---|---|---|---|---|---|---|")
g = collections.defaultdict(list)
for key in order:
    data, codec, clevel, filt = key
    c = lambda lib, i: pick([x[i] for x in runs[(lib, key)]])
    r = {k: c("ref", i) / c("ours", i) for k, i in (("c1", 0), ("c2", 1), ("d1", 2), ("d2", 3))}
    for k, v in r.items():
        g[k].append(v)
    o1, o2 = c("ours", 2), c("ours", 3)
    mem = c("ours", 4)
    memtxt = f"{mem / o1:.2f}, {mem / o2:.2f}" if data == "f64_random" else "-"
    alone = c("ours", 5)
    alonetxt = f"{alone / o1:.2f} ({c('ref', 5) / c('ref', 2):.2f})" if alone > 0 else "-"
    print(f"| {data} {codec} {clevel} {filt} | {runs[('ours', key)][0][6]} | {r['c1']:.2f} | "
          f"{r['c2']:.2f} | {r['d1']:.2f} | {r['d2']:.2f} | {o1 / o2:.2f} ({c('ref', 2) / c('ref', 3):.2f}) | "
          f"{GB / o1:.1f}, {GB / o2:.1f} | {memtxt} | {alonetxt} |")
print()
print("| geomean ours/c-blosc2 | t1 | t2 | all |")
print("|---|---|---|---|")
for side, a, b in (("compression", "c1", "c2"), ("decompression", "d1", "d2")):
    print(f"| {side} | {gm(g[a]):.2f} | {gm(g[b]):.2f} | {gm(g[a] + g[b]):.2f} |")
PY
