#!/usr/bin/env bash
# The Rust comparison with blosc2-pure-rs 0.2.4: chunk compress and decompress, frame open plus
# read, and a b2nd slice, each run by both libraries in processes of their own (see Cargo.toml
# for why), alternating ours/theirs ROUNDS times; each process reports the median of REPS
# timed runs per case. Prints a markdown table of the medians over the rounds and the ratio
# theirs/ours (above 1: blosc2-frame is faster). scripts/bench-tables.py runs it.
# Usage: bash benches/pure-rs/run.sh [ROUNDS [REPS]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
rounds=${1:-5}
reps=${2:-9}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
# Its own lock file (Cargo.lock here) started as a copy of the repository's, so the crates both
# use keep their versions, completed with blosc2-pure-rs's dependencies.
cargo build --release --quiet --manifest-path "$here/Cargo.toml" --features ours --bin ours
cargo build --release --quiet --manifest-path "$here/Cargo.toml" --features theirs --bin theirs
bin="$CARGO_TARGET_DIR/release"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  "$bin/ours" "$reps" > "$out/ours.$r"
  "$bin/theirs" "$reps" > "$out/theirs.$r"
done
python3 - "$out" "$rounds" <<'PY'
import statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def runs(who):
    res = {}
    for r in range(1, rounds + 1):
        for line in open(f"{out}/{who}.{r}"):
            case, ns = line.rstrip("\n").split("\t")
            res.setdefault(case, []).append(int(ns))
    return res
ours, theirs = runs("ours"), runs("theirs")
print(f"| case (median of {rounds} paired rounds) | blosc2-frame ms | blosc2-pure-rs 0.2.4 ms | pure-rs / ours |")
print("|---|---|---|---|")
for case in ours:
    a, b = statistics.median(ours[case]), statistics.median(theirs[case])
    print(f"| {case} | {a / 1e6:.3f} | {b / 1e6:.3f} | {b / a:.2f} |")
PY
