"""Writes a seeded set of frames with python-blosc2 (c-blosc2 3.3.x) into a directory and
prints, for each frame, what the reference reads back: every chunk as get_chunk() returns it,
its decompressed bytes, and the raw metalayer / decoded vlmetalayer contents.

Usage: python make_frames.py OUTDIR > expected.txt

Output lines:  frame <path> <offset> <nchunks> | chunk <i> <hex|ERR> <decompressed hex|ERR> |
               meta <name> <hex> | vlmeta <name> <hex> | end
               op chunksize <n> | op append <chunk hex> | op insert|update <i> <chunk hex> |
               op delete <i> | op snapshot <copy of the frame at this point>
               (the mutations that produced the frame, for replaying)
"""

import os
import shutil
import sys

import blosc2
import numpy as np
from blosc2 import blosc2_ext

out = sys.argv[1]
OPS = []
rng = np.random.default_rng(20240611)


def p(name):
    return os.path.join(out, name)


def data(n, kind="int", dtype=np.int32):
    if kind == "int":
        return rng.integers(0, 100, n, dtype=dtype)
    if kind == "rand":
        return rng.integers(0, 2**31 - 1, n, dtype=dtype)
    return np.linspace(0, 1000, n).astype(dtype)


def schunk_of(obj):
    return obj.schunk if hasattr(obj, "schunk") else obj


def record(path, offset=0):
    obj = blosc2.open(path, mode="r", offset=offset)  # keeps the C super-chunk alive
    s = schunk_of(obj)
    print(f"frame {path} {offset} {s.nchunks}")
    for line in OPS:
        print(line)
    OPS.clear()
    for i in range(s.nchunks):
        try:
            c = bytes(s.get_chunk(i)).hex()
        except Exception:
            c = "ERR"
        try:
            d = bytes(s.decompress_chunk(i)).hex()
        except Exception:
            d = "ERR"
        print(f"chunk {i} {c} {d}")
    for name in s.meta.keys():
        print(f"meta {name} {bytes(blosc2_ext.meta__getitem__(s, name)).hex()}")
    for name in list(s.vlmeta.getall().keys()):
        raw = blosc2_ext.vlmeta.get_vlmeta(s.vlmeta, name)
        print(f"vlmeta {name} {bytes(raw).hex()}")
    print("end")


def fresh(path):
    blosc2.remove_urlpath(path)
    return path


codecs = [
    (blosc2.Codec.BLOSCLZ, 5, [blosc2.Filter.SHUFFLE]),
    (blosc2.Codec.LZ4, 9, [blosc2.Filter.BITSHUFFLE]),
    (blosc2.Codec.LZ4HC, 4, [blosc2.Filter.SHUFFLE]),
    (blosc2.Codec.ZLIB, 1, []),
    (blosc2.Codec.ZSTD, 3, [blosc2.Filter.SHUFFLE]),
]

# 1. cframes and sframes with each codec, 5 chunks (last one short).
for k, (codec, clevel, filters) in enumerate(codecs):
    for contiguous in (True, False):
        name = fresh(p(f"codec{k}_{'c' if contiguous else 's'}.b2frame"))
        cparams = {"codec": codec, "clevel": clevel, "filters": filters, "typesize": 4}
        s = blosc2.SChunk(chunksize=16000, urlpath=name, contiguous=contiguous, cparams=cparams)
        for _ in range(4):
            s.append_data(data(4000, "int" if k % 2 else "lin"))
        s.append_data(data(300))
        record(name)

# 2. metalayers + vlmetalayers, in a cframe and an sframe.
for contiguous in (True, False):
    name = fresh(p(f"meta_{'c' if contiguous else 's'}.b2frame"))
    s = blosc2.SChunk(chunksize=4000, urlpath=name, contiguous=contiguous,
                      meta={"m1": b"abc", "nums": [1, 2, 3], "empty": b""})
    s.vlmeta["units"] = "m/s"
    s.vlmeta["attrs"] = {"scale": 0.5, "k": [1, 2]}
    s.append_data(data(1000))
    s.vlmeta["late"] = b"x" * 300
    record(name)

# 3. b2nd arrays (NDArray frames).
a = blosc2.asarray(np.arange(400 * 3, dtype=np.float64).reshape(400, 3),
                   urlpath=fresh(p("b2nd_f8.b2nd")), chunks=(110, 3), blocks=(57, 3))
a.vlmeta["note"] = "b2nd"
record(p("b2nd_f8.b2nd"))
blosc2.zeros((30, 40), dtype=np.int16, urlpath=fresh(p("b2nd_zeros.b2nd")), chunks=(15, 20))
record(p("b2nd_zeros.b2nd"))

# 4. special chunks in a fixed-chunksize frame: zeros, NaN, uninit, a repeated value.
name = fresh(p("special.b2frame"))
s = blosc2.SChunk(chunksize=8000, urlpath=name, cparams={"typesize": 8})
s.append_data(np.zeros(1000, dtype=np.float64))
s.append_data(data(1000, "lin", np.float64))
for special_id in (2, 4, 1, 3):
    # A hand-built 32-byte special chunk (zeros 1, NaN 2, VALUE 3 + 8 value bytes, uninit 4).
    value = np.float64(2.5).tobytes() if special_id == 3 else b""
    hdr = bytes([5, 1, 5, 8]) + (8000).to_bytes(4, "little") + (8000).to_bytes(4, "little")
    hdr += (32 + len(value)).to_bytes(4, "little") + bytes(15) + bytes([special_id << 4])
    s.append_chunk(hdr + value)
s.append_data(np.zeros(500, dtype=np.float64))
record(name)

# 5. variable-size chunks.
for contiguous in (True, False):
    name = fresh(p(f"varlen_{'c' if contiguous else 's'}.b2frame"))
    s = blosc2.SChunk(chunksize=4000, urlpath=name, contiguous=contiguous, cparams={"typesize": 4})
    for n in (1000, 250, 2000, 10, 777):
        s.append_chunk(blosc2.compress2(data(n), typesize=4))
    record(name)

# 6. inserts, updates and deletes (cframe, sframe, in-memory cframe written out), logged as
#    "op" lines (with the exact chunks) so that a reader can replay them.
OPS = []


def op_append(s, arr):
    s.append_data(arr)
    OPS.append(f"op append {bytes(s.get_chunk(s.nchunks - 1)).hex()}")


def op_chunk(s, kind, i, chunk):
    getattr(s, f"{kind}_chunk")(i, chunk)
    OPS.append(f"op {kind} {i} {bytes(chunk).hex()}")


def op_delete(s, i):
    s.delete_chunk(i)
    OPS.append(f"op delete {i}")


def zeros_chunk(n):
    return blosc2.compress2(np.zeros(n, dtype=np.int32), typesize=4)


for variant in ("fixed", "variable"):
    for mode in ("c", "s", "m"):
        name = fresh(p(f"ops_{variant}_{mode}.b2frame"))
        kw = {"urlpath": name, "contiguous": mode != "s"} if mode != "m" else {"contiguous": True}
        s = blosc2.SChunk(chunksize=4000, cparams={"typesize": 4}, **kw)
        OPS.append("op chunksize 4000")
        for i in range(6):
            op_append(s, data(1000))
        if mode != "m":
            # A copy of the frame as it is now, for replaying the remaining ops in place.
            snap = p(f"ops_{variant}_{mode}.snapshot")
            blosc2.remove_urlpath(snap)
            if mode == "c":
                shutil.copyfile(name, snap)
            else:
                shutil.copytree(name, snap)
            OPS.append(f"op snapshot {snap}")
        op_chunk(s, "insert", 2, blosc2.compress2(data(1000), typesize=4))
        op_chunk(s, "update", 0, blosc2.compress2(data(1000, "rand"), typesize=4))
        if variant == "fixed":
            op_chunk(s, "update", 4, zeros_chunk(1000))
            op_chunk(s, "insert", 1, zeros_chunk(1000))
            op_delete(s, 2)
            op_chunk(s, "update", 1, blosc2.compress2(data(1000, "lin"), typesize=4))
            op_chunk(s, "update", 4, blosc2.compress2(data(1000), typesize=4))
        else:
            op_chunk(s, "insert", 3, blosc2.compress2(data(250), typesize=4))
            op_chunk(s, "update", 5, blosc2.compress2(data(700, "rand"), typesize=4))
            op_delete(s, 1)
            op_append(s, data(100))
        op_delete(s, 5)
        if mode == "m":
            with open(name, "wb") as f:
                f.write(s.to_cframe())
        record(name)

# 7. a frame inside a larger file (prefix + frame + another frame).
f0 = blosc2.SChunk(chunksize=1600, cparams={"typesize": 2}, meta={"part": 0})
f0.append_data(data(400, dtype=np.int16))
f0.vlmeta["part"] = "zero"
f1 = blosc2.SChunk(chunksize=1600, cparams={"typesize": 2}, meta={"part": 1})
f1.append_data(data(800, dtype=np.int16))
f1.append_data(data(100, dtype=np.int16))
prefix = b"not a frame " * 7
b0, b1 = f0.to_cframe(), f1.to_cframe()
with open(p("glued.bin"), "wb") as f:
    f.write(prefix + b0 + b1)
record(p("glued.bin"), len(prefix))
record(p("glued.bin"), len(prefix) + len(b0))

# 8. an empty frame with only metadata.
name = fresh(p("empty.b2frame"))
s = blosc2.SChunk(chunksize=100, urlpath=name, meta={"only": b"meta"})
s.vlmeta["v"] = 1
record(name)
