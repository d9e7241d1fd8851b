#!/usr/bin/env bash
# 1- and 2-thread decompression of 4 MiB chunks, b2frame against c-blosc2 3.3.5, one process
# per (library, setting), alternating; median over B2_THR_REPEAT (default 3) runs of the best of
# B2_THR_ITERS (default 40) decompressions. Usage (after `cargo build --release`):
#   bash benches/threads/run.sh [WORKDIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
work="${1:-$(mktemp -d)}"
mkdir -p "$work/lib-ours" "$work/lib-ref"
reflib=$(echo "$root"/.venv/lib/python3*/site-packages/blosc2/lib)
ln -sf "$target/release/libb2frame.so" "$work/lib-ours/libb2frame.so.1"
ln -sf "$target/release/libb2frame.so" "$work/lib-ours/libb2frame.so"
ln -sf "$reflib/libblosc2.so.9" "$work/lib-ref/libblosc2.so"
src="$root/benches/threads/decompress.c"
cc -O2 -I"$root/include" "$src" -o "$work/ours" -L"$work/lib-ours" -lb2frame -Wl,-rpath,"$work/lib-ours" -lm
cc -O2 -I"$root/include" "$src" -o "$work/ref" -L"$work/lib-ref" -lblosc2 -Wl,-rpath,"$reflib" -lm
iters="${B2_THR_ITERS:-40}"
out="$work/runs.txt"
: >"$out"
for _ in $(seq "${B2_THR_REPEAT:-3}"); do
  for codec in 0 1 5; do for filt in 1 2; do for kind in 0 1 2; do for t in 1 2; do
    echo "$codec $filt $kind $t $("$work/ours" $codec $filt $kind $t "$iters") $("$work/ref" $codec $filt $kind $t "$iters")" >>"$out"
  done; done; done; done
done
python3 - "$out" <<'PY'
import collections, math, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    c, f, k, t, ow, oc, rw, rc = line.split()
    d[(c, f, k, t)].append((float(ow), float(rw)))
codec = {"0": "blosclz", "1": "lz4", "5": "zstd"}
filt = {"1": "shuffle", "2": "bitshuffle"}
data = {"0": "float64 series", "1": "int32 < 100", "2": "random"}
print("| codec | filter | data | ours 1T µs | ref 1T µs | x 1T | ours 2T µs | ref 2T µs | x 2T | ours 2T gain | ref 2T gain |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
g = {"1": [], "2": []}
for c in "015":
    for f in "12":
        for k in "012":
            m = lambda t, i: statistics.median(v[i] for v in d[(c, f, k, t)])
            o1, r1, o2, r2 = m("1", 0), m("1", 1), m("2", 0), m("2", 1)
            g["1"].append(r1 / o1)
            g["2"].append(r2 / o2)
            print(f"| {codec[c]} | {filt[f]} | {data[k]} | {o1:.0f} | {r1:.0f} | {r1/o1:.2f} | "
                  f"{o2:.0f} | {r2:.0f} | {r2/o2:.2f} | {o1/o2:.2f} | {r1/r2:.2f} |")
gm = lambda v: math.exp(sum(map(math.log, v)) / len(v))
print(f"\ngeomean ref/ours: 1 thread {gm(g['1']):.3f}, 2 threads {gm(g['2']):.3f}")
PY
