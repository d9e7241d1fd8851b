#!/usr/bin/env bash
# Regenerates the committed fuzz seed corpus in fuzz/seeds/<target>/: chunks, codec streams
# and super-chunk scripts made by b2frame and the reference c-blosc2 (Rust test
# write_fuzz_seeds, which also checks each side decodes the other's chunks and streams), and
# cframes written by python-blosc2.
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
# b2nd_open: the two b2nd frames above plus a 4-D, a resized and a 0-D array.
rm -rf "$root/fuzz/seeds/b2nd_open"
mkdir -p "$root/fuzz/seeds/b2nd_open"
cp "$root/fuzz/seeds/frame_open/cblosc2-b2nd.b2frame" "$root/fuzz/seeds/frame_open/cblosc2-zeros.b2frame" \
  "$root/fuzz/seeds/b2nd_open/"
"$py" - "$root/fuzz/seeds/b2nd_open" <<'PY'
import sys
import numpy as np
import blosc2
d = sys.argv[1]
a = blosc2.asarray(np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5), chunks=(1, 2, 3, 4),
                   blocks=(1, 1, 2, 3))
open(f"{d}/cblosc2-4d.b2frame", "wb").write(a.to_cframe())
b = blosc2.asarray(np.arange(100, dtype=np.int64), chunks=(30,), blocks=(7,))
b.resize((130,))
open(f"{d}/cblosc2-resized.b2frame", "wb").write(b.to_cframe())
open(f"{d}/cblosc2-0d.b2frame", "wb").write(blosc2.full((), 3.5).to_cframe())
PY
# frame_mutate: each frame_open seed (2-byte length, the frame) followed by two op scripts
# (fuzz/checks/frame_mutate.rs) with chunks of the frame's typesize and chunksize.
rm -rf "$root/fuzz/seeds/frame_mutate"
"$py" - "$root/fuzz/seeds/frame_open" "$root/fuzz/seeds/frame_mutate" <<'PY'
import os, sys, struct
import numpy as np
import blosc2
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)

def op(code, idx, payload=b""):
    assert len(payload) < 256
    return bytes([code, idx, len(payload)]) + payload

for name in sorted(os.listdir(src)):
    frame = open(os.path.join(src, name), "rb").read()
    if len(frame) > 0xFFFF:
        continue
    s = blosc2.schunk_from_cframe(frame, copy=True)
    cs, typesize = s.chunksize, s.typesize
    full = max(cs, typesize) if cs > 0 else 4000
    def chunk(nbytes, fill=None):
        n = max(nbytes // typesize, 1) * typesize
        data = np.zeros(n, np.uint8) if fill == 0 else (np.arange(n) % 7).astype(np.uint8)
        return blosc2.compress2(data.tobytes(), typesize=typesize, clevel=9,
                                filters=[blosc2.Filter.SHUFFLE], codec=blosc2.Codec.BLOSCLZ)
    same, short, zero = chunk(full), chunk(full // 2), chunk(full, 0)
    scripts = {
        # every op once, on chunks of the frame's own chunksize
        "all-ops": [op(0, 0, same), op(1, 1, zero), op(2, 0, same), op(3, 1), op(4, 1),
                    op(5, 0, b"\x00" * 8), op(6, 0), op(7, 0, b"\x01")],
        # a short chunk then more mutations: the switch to variable chunk sizes
        "variable": [op(0, 0, short), op(1, 0, zero), op(4, 1), op(2, 1, same), op(0, 0, zero),
                     op(5, 0, b"abc"), op(3, 0), op(4, 2)],
    }
    for tag, ops in scripts.items():
        if any(len(c) > 255 for c in (same, short, zero)):
            continue
        data = struct.pack("<H", len(frame)) + frame + b"".join(ops)
        base = os.path.splitext(name)[0]
        open(os.path.join(dst, f"{base}-{tag}"), "wb").write(data)
PY
du -sh fuzz/seeds
# frame_lazy: each frame_open seed (2-byte length, the frame), alone and followed by forging
# bytes (fuzz/checks/frame_lazy.rs: 5-byte records, u16 position + 3 bytes written over the
# lazy chunk).
rm -rf "$root/fuzz/seeds/frame_lazy"
"$py" - "$root/fuzz/seeds/frame_open" "$root/fuzz/seeds/frame_lazy" <<'PY'
import os, sys, struct
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
for name in sorted(os.listdir(src)):
    frame = open(os.path.join(src, name), "rb").read()
    if len(frame) > 0xFFFF:
        continue
    base = struct.pack("<H", len(frame)) + frame
    open(os.path.join(dst, name), "wb").write(base)
    # trailer-ish positions of small chunks, then a block start
    forge = b"".join(struct.pack("<H", p) + v for p, v in
                     [(44, b"\xff\xff\xff"), (40, b"\x00\x00\x00"), (36, b"\x01\x00\x00"), (32, b"\x10\x00\x00")])
    open(os.path.join(dst, name.replace(".b2frame", "-forged.b2frame")), "wb").write(base + forge)
PY
