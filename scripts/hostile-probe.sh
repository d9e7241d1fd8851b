#!/usr/bin/env bash
# Hostile-frame probe (tests/hostile/probe.c): deterministic mutants of the c-blosc2 corpus
# (../shared/corpus) and of the frames of fuzz/seeds/frame_open, each opened
# and read whole in a child process under RLIMIT_AS and RLIMIT_CPU, through every reading path
# (in-memory frames, cframe files, frames at an offset, sframes; lazy chunks, getitem, VL blocks,
# metalayers, vlmetalayers, b2nd). Fails when any mutant crashes, runs out of memory or time.
#
# Usage: scripts/hostile-probe.sh [--per-base N] [--as-mib M] [--cpu S]    check libb2frame
#        scripts/hostile-probe.sh --only B:K        one mutant (kept in target/hostile-failures/)
#        scripts/hostile-probe.sh --compare [--per-base N]                  libb2frame vs c-blosc2
# --compare runs the same mutants on both libraries without the address-space limit (CPU limit
# 20 s) and reports, per library, the peak RSS and CPU time of each mutant and where libb2frame
# needs more than c-blosc2 (docs/hostile-input.md has the figures and the command).
# Environment: CARGO_TARGET_DIR (libb2frame is built with cargo build --release first).
set -euo pipefail
shopt -s nullglob
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
per_base=300 as_mib=256 cpu=1 compare=0 seed=1 only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --per-base) per_base=$2; shift 2 ;;
    --as-mib) as_mib=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --compare) compare=1; shift ;;
    --only) only=(--only "$2"); shift 2 ;; # one mutant, B:K as a failure names it
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
# The c-blosc2 corpus: B2FRAME_CORPUS, else ../shared/corpus beside the repository (or beside
# the main checkout, for a git worktree).
corpus="${B2FRAME_CORPUS:-}"
if [ -z "$corpus" ]; then
  common=$(cd "$(git rev-parse --git-common-dir 2>/dev/null || echo .git)/.." && pwd)
  for c in "$root/../shared/corpus" "$common/../shared/corpus"; do
    [ -f "$c/manifest.txt" ] && { corpus=$(cd "$c" && pwd); break; }
  done
fi
if [ -z "$corpus" ] || [ ! -f "$corpus/manifest.txt" ]; then
  # A clone without the corpus beside it still probes the project's own bases.
  echo "hostile probe: the c-blosc2 corpus (../shared/corpus, or B2FRAME_CORPUS) is missing;" \
    "probing the project's own bases only" >&2
  corpus=
fi
cargo build --release --quiet
work=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The bases: every corpus frame (at its offset) and the frames of the frame_open fuzz seeds
# (c-blosc2's and b2frame's); mutants 1-16 of each forge its chunks' claims.
: >"$work/bases"
[ -z "$corpus" ] || awk '/^path /{p=$2} /^kind /{k=$2} /^offset /{o=$2} /^end/{print k, "'"$corpus"'/" p, o}' \
  "$corpus/manifest.txt" >"$work/bases"
for f in "$root"/fuzz/seeds/frame_open/*; do
  case "$f" in
    *.b2sframe) echo "sframe $f 0" ;;
    *) echo "cframe $f 0" ;;
  esac
done >>"$work/bases"
echo "$(wc -l <"$work/bases") bases, $per_base mutants each"

cc_probe() { # cc_probe OUT INCLUDE LIBDIR LIBNAME
  cc -O1 -g -std=c11 -Wall -Wno-format-truncation -I "$2" "$root/tests/hostile/probe.c" -o "$1" \
    -L "$3" -Wl,-rpath,"$3" -l"$4"
}
# cargo leaves libb2frame.so without its soname link (libb2frame.so.1); the probe gets both.
mkdir -p "$work/lib"
ln -s "$target_dir/release/libb2frame.so" "$work/lib/libb2frame.so"
ln -s "$target_dir/release/libb2frame.so" "$work/lib/libb2frame.so.1"
cc_probe "$work/probe-b2frame" "$root/include" "$work/lib" b2frame
mkdir -p "$work/w" "$work/keep"

# One shard of the bases per core (each in its own scratch directory).
shards=$(nproc 2>/dev/null || echo 2)
[ ${#only[@]} = 0 ] || shards=1
run_shards() { # run_shards PROBE TSV-PREFIX ARGS...: all shards in parallel; fails if one fails
  local probe=$1 tsv=$2 rc=0 pids=() i
  shift 2
  for ((i = 0; i < shards; i++)); do
    mkdir -p "$work/w$i"
    "$probe" --shard "$i/$shards" --per-base "$per_base" --seed "$seed" --work "$work/w$i" \
      ${tsv:+--tsv "$tsv.$i"} "$@" "$work/bases" >"$work/out.$i" 2>"$work/err.$i" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || rc=1; done
  return $rc
}

if [ "$compare" = 0 ]; then
  t0=$SECONDS
  rc=0
  run_shards "$work/probe-b2frame" "" --as-mib "$as_mib" --cpu "$cpu" --keep "$work/keep" \
    ${only[@]+"${only[@]}"} || rc=$?
  cat "$work"/err.* | grep -v '^ \+at \|^ \+[0-9]\+: ' | tail -n 60 || true
  cat "$work"/out.*
  echo "hostile probe: $((SECONDS - t0)) s, $shards shards, RLIMIT_AS $as_mib MiB, RLIMIT_CPU $cpu s"
  if [ "$rc" != 0 ] || [ ${#only[@]} != 0 ]; then
    mkdir -p "$root/target/hostile-failures"
    cp "$work"/keep/* "$root/target/hostile-failures/" 2>/dev/null || true
    echo "failing mutants kept in target/hostile-failures/" >&2
  fi
  exit $rc
fi

# Compare mode: the same mutants on the reference c-blosc2.
ref=$(ls "$root"/.venv/lib/python3*/site-packages/blosc2/lib/libblosc2.so.9 2>/dev/null | head -n1)
[ -n "$ref" ] || { echo "reference c-blosc2 not found (scripts/setup-env.sh)" >&2; exit 1; }
refdir=$(dirname "$ref")
ln -sf "$ref" "$work/libblosc2.so"
cc_probe "$work/probe-cblosc2" "$root/include" "$work" blosc2
# The reference's loader needs its own directory (its libblosc2.so.9 is found there by rpath).
export LD_LIBRARY_PATH="$refdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for lib in b2frame cblosc2; do
  run_shards "$work/probe-$lib" "$work/$lib.tsv" --as-mib 0 --cpu 20 || true
  cat "$work"/$lib.tsv.* >"$work/$lib.tsv"
  echo "$lib: $(cat "$work"/err.* | grep -c '^FAIL' || true) failing mutants"
done
python3 - "$work/b2frame.tsv" "$work/cblosc2.tsv" <<'PY'
import sys
def load(p):
    rows = {}
    for line in open(p):
        f = line.rstrip("\n").split("\t")
        rows[f[0]] = (f[1], f[2], int(f[3]), int(f[4]), f[5], f[6], "/".join(f[7:10]))
    return rows
ours, ref = load(sys.argv[1]), load(sys.argv[2])
both = [k for k in ours if k in ref]
def top(rows, i, n=5):
    return sorted(rows.items(), key=lambda kv: -kv[1][i])[:n]
for name, rows in (("b2frame", ours), ("c-blosc2", ref)):
    print(f"{name}: max peak RSS {max(r[2] for r in rows.values())} KiB, "
          f"max CPU {max(r[3] for r in rows.values())} ms, "
          f"total CPU {sum(r[3] for r in rows.values())} ms, "
          f"not ok {sum(r[1] != 'ok' for r in rows.values())}")
    for k, r in top(rows, 2, 3):
        print(f"  RSS {r[2]:>8} KiB  CPU {r[3]:>6} ms  {k} {r[0]} {r[1]} file {r[4]} {r[5]}")
    for k, r in top(rows, 3, 3):
        print(f"  CPU {r[3]:>6} ms  RSS {r[2]:>8} KiB  {k} {r[0]} {r[1]} file {r[4]} {r[5]}")
# Where ours needs more: RSS above the reference's by over 4 MiB (and over 1.5 times), CPU by
# over 100 ms (and over 1.5 times); the reference's crashed mutants count as its own numbers.
# Compared where both libraries reached the same (opened as many frames and read as many
# chunks): elsewhere one of them refused what the other read, and the work differs.
same = [k for k in both if ours[k][6] == ref[k][6]]
more_rss = [k for k in same if ours[k][2] > ref[k][2] + 4096 and ours[k][2] > 1.5 * ref[k][2]]
more_cpu = [k for k in same if ours[k][3] > ref[k][3] + 100 and ours[k][3] > 1.5 * ref[k][3]]
print(f"mutants: {len(both)}, {len(same)} where both reached the same; there b2frame needs more "
      f"memory than c-blosc2 on {len(more_rss)}, more CPU time on {len(more_cpu)}")
forged = [k for k in both if "forge" in ours[k][5]]
for name, rows in (("b2frame", ours), ("c-blosc2", ref)):
    print(f"forged claims ({len(forged)} mutants), {name}: max peak RSS "
          f"{max(rows[k][2] for k in forged)} KiB, max CPU {max(rows[k][3] for k in forged)} ms, "
          f"not ok {sum(rows[k][1] != 'ok' for k in forged)}")
for k in (more_rss + more_cpu)[:20]:
    print(f"  {k}: b2frame {ours[k][1]} {ours[k][2]} KiB {ours[k][3]} ms reached {ours[k][6]}, "
          f"c-blosc2 {ref[k][1]} {ref[k][2]} KiB {ref[k][3]} ms reached {ref[k][6]} "
          f"({ours[k][0]}, file {ours[k][4]}, {ours[k][5]})")
print("(reached: frames opened / chunks read / lazy chunks read)")
PY
