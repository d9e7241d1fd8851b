#!/usr/bin/env bash
# Regenerates the committed fuzz seed corpus in fuzz/seeds/<target>/: chunks and super-chunk
# scripts made by b2frame and the reference c-blosc2 (Rust test write_fuzz_seeds, which also
# checks each side decodes the other's chunks), and cframes written by python-blosc2.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo test --test fuzz_regressions -- --ignored --exact write_fuzz_seeds
py="${PYTHON:-$root/.venv/bin/python}"
"$py" - "$root/fuzz/seeds/frame_open" <<'PY'
import os, sys
import numpy as np
import blosc2
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
codecs = [blosc2.Codec.BLOSCLZ, blosc2.Codec.LZ4, blosc2.Codec.ZLIB, blosc2.Codec.ZSTD,
          blosc2.Codec.LZ4HC]
for i, codec in enumerate(codecs):
    s = blosc2.SChunk(chunksize=4000, cparams={"codec": codec, "typesize": 4, "clevel": 5},
                      meta={"m1": b"meta-%d" % i})
    for j in range(3):
        s.append_data(np.arange(j * 1000, j * 1000 + 1000, dtype=np.int32))
    s.append_data(np.arange(500, dtype=np.int32))
    s.vlmeta["user"] = {"k": i}
    open(f"{d}/cblosc2-{i}.b2frame", "wb").write(s.to_cframe())
a = blosc2.asarray(np.arange(3000, dtype=np.int16).reshape(30, 100), chunks=(10, 50),
                   blocks=(5, 25))
open(f"{d}/cblosc2-b2nd.b2frame", "wb").write(a.to_cframe())
z = blosc2.zeros((2000,), dtype=np.float64, chunks=(500,))
open(f"{d}/cblosc2-zeros.b2frame", "wb").write(z.to_cframe())
PY
du -sh fuzz/seeds
