"""python-blosc2 (c-blosc2 3.3.5) writes frames; libb2frame reads them through its C API.

Every frame is read three ways and all must agree exactly: by python-blosc2 itself (chunks,
metalayers, vlmetalayers), by the reference libblosc2.so.9 through the C API, and by libb2frame
through the same C API (every chunk, item ranges through get_slice_buffer, the raw metalayers read
through schunk->metalayers[], the raw vlmetalayers through blosc2_vlmeta_get).
Frames come as cframe files, sframe directories, in-memory cframes (to_cframe -> from_buffer) and
cframes stored at an offset inside a file. Seeded: the same frames on every run.
"""

import os

import blosc2
import msgpack
import numpy as np
import pytest
from test_interop_common import dump, open_frame, sample_data, seed_of, unpack_vlmeta

B = blosc2
CODECS = [B.Codec.BLOSCLZ, B.Codec.LZ4, B.Codec.LZ4HC, B.Codec.ZLIB, B.Codec.ZSTD]
PIPELINES = {
    "none": [B.Filter.NOFILTER],
    "shuffle": [B.Filter.SHUFFLE],
    "bitshuffle": [B.Filter.BITSHUFFLE],
    "delta+shuffle": [B.Filter.DELTA, B.Filter.SHUFFLE],
    "trunc+bitshuffle": [B.Filter.TRUNC_PREC, B.Filter.BITSHUFFLE],
}
CLEVELS = [0, 1, 5, 9]
KINDS = ["cframe", "sframe", "memory", "offset"]


def cp(codec, filters, clevel, typesize, **kw):
    fm = [10 if f == B.Filter.TRUNC_PREC else 0 for f in filters]
    return B.CParams(codec=codec, clevel=clevel, typesize=typesize, filters=list(filters), filters_meta=fm, nthreads=1, **kw)


def new_schunk(tmp_path, kind, name, chunksize, cparams, meta=None):
    kw = {"cparams": cparams}
    if meta:
        kw["meta"] = meta
    if kind in ("cframe", "sframe"):
        path = str(tmp_path / name)
        kw["urlpath"] = path
        kw["contiguous"] = kind == "cframe"
        kw["mode"] = "w"
    return B.SChunk(chunksize=chunksize, **kw)


def finish(tmp_path, kind, name, sc):
    """(how to open, where) for the C readers and the python-blosc2 re-read of the frame."""
    if kind in ("cframe", "sframe"):
        path = sc.urlpath
        del sc
        return ("file", path), B.open(path)
    cframe = sc.to_cframe()
    if kind == "memory":
        return ("buffer", cframe), B.schunk_from_cframe(cframe, copy=True)
    path = str(tmp_path / (name + ".bin"))
    prefix = bytes(range(256)) * 3 + b"tail"
    with open(path, "wb") as f:
        f.write(prefix + cframe)
    return ("offset", (path, len(prefix))), B.open(path, offset=len(prefix))


def append_all(sc, data):
    """append_data takes one chunk at a time; the last one may be short."""
    data = data if isinstance(data, bytes) else np.ascontiguousarray(data).tobytes()
    cs = sc.chunksize
    for a in range(0, len(data), cs):
        sc.append_data(data[a : a + cs])


def python_view(sc):
    return {
        "nchunks": sc.nchunks,
        "chunks": [sc.decompress_chunk(i) for i in range(sc.nchunks)],
        "meta": {k: sc.meta[k] for k in sc.meta.keys()},
        "vlmeta": dict(sc.vlmeta.getall()),
    }


def ranges_for(rng, sc_header):
    cs, ts = sc_header["chunksize"], sc_header["typesize"]
    total = sc_header["nbytes"] // ts
    if cs <= 0 or total == 0:
        return []
    out = [(0, total), (total - 1, total)]
    for _ in range(4):
        a = int(rng.integers(0, total))
        out.append((a, int(rng.integers(a, total + 1))))
    return out


def check(apis, how, pyview, rng, with_slices=True):
    ours, ref = apis
    d_ref = dump(ref, open_frame(ref, *how))
    rngs = ranges_for(rng, d_ref["header"]) if with_slices else []
    d_ref = dump(ref, open_frame(ref, *how), rngs)
    d_ours = dump(ours, open_frame(ours, *how), rngs)
    assert d_ours["header"] == d_ref["header"]
    assert d_ours["header"]["nchunks"] == pyview["nchunks"]
    for i, (a, b, p) in enumerate(zip(d_ours["chunks"], d_ref["chunks"], pyview["chunks"])):
        assert a == b == p, f"chunk {i} differs"
    assert d_ours["slices"] == d_ref["slices"]
    joined = b"".join(d_ref["chunks"])
    ts = d_ref["header"]["typesize"]
    for (a, b), s in zip(rngs, d_ours["slices"]):
        assert s == joined[a * ts : b * ts]
    assert d_ours["meta"] == d_ref["meta"]
    assert {k: msgpack.unpackb(v) for k, v in d_ours["meta"].items()} == pyview["meta"]
    assert d_ours["vlmeta"] == d_ref["vlmeta"]
    assert unpack_vlmeta(d_ours["vlmeta"]) == pyview["vlmeta"]
    return d_ours


MATRIX = [(c, p, l) for c in CODECS for p in PIPELINES for l in CLEVELS]


@pytest.mark.parametrize("codec,pipe,clevel", MATRIX, ids=[f"{c.name}-{p}-{l}" for c, p, l in MATRIX])
def test_codec_pipeline_clevel(apis, tmp_path, codec, pipe, clevel):
    i = MATRIX.index((codec, pipe, clevel))
    kind = KINDS[i % 4]
    rng = np.random.default_rng(seed_of(codec, pipe, clevel))
    ts = 8 if i % 2 else 4
    chunksize = 4096 * ts
    sc = new_schunk(tmp_path, kind, "m.b2frame", chunksize, cp(codec, PIPELINES[pipe], clevel, ts), {"info": {"i": i}})
    append_all(sc, sample_data(rng, 4096 * 3 + 1234, ts))  # short last chunk
    sc.vlmeta["params"] = {"codec": codec.value, "clevel": clevel, "pipe": pipe}
    how, back = finish(tmp_path, kind, "m.b2frame", sc)
    check(apis, how, python_view(back), rng)


TYPESIZES = list(range(1, 17)) + [255, 256, 300, 1000]


@pytest.mark.parametrize("ts", TYPESIZES)
def test_typesizes(apis, tmp_path, ts):
    rng = np.random.default_rng(seed_of("ts", ts))
    kind = KINDS[ts % 4]
    codec = CODECS[ts % 5]
    nitems = 3000 if ts < 100 else 300
    sc = new_schunk(tmp_path, kind, "t.b2frame", nitems * ts, cp(codec, [B.Filter.SHUFFLE], 5, ts))
    append_all(sc, sample_data(rng, nitems * 2 + nitems // 3, ts))
    how, back = finish(tmp_path, kind, "t.b2frame", sc)
    d = check(apis, how, python_view(back), rng)
    assert d["header"]["typesize"] == ts


@pytest.mark.parametrize("kind", KINDS)
def test_special_chunks(apis, tmp_path, kind):
    rng = np.random.default_rng(seed_of("special", kind))
    ts = 8
    sc = new_schunk(tmp_path, kind, "s.b2frame", 1000 * ts, cp(B.Codec.LZ4, [B.Filter.SHUFFLE], 5, ts))
    append_all(sc, sample_data(rng, 1000, ts))
    append_all(sc, np.zeros(1000, np.float64))  # detected as zeros when compressing
    append_all(sc, np.full(1000, 3.25))  # a run of one value
    nc = sc.nchunks
    sc2 = new_schunk(tmp_path, kind, "s2.b2frame", 1000 * ts, cp(B.Codec.LZ4, [B.Filter.SHUFFLE], 5, ts))
    for j, special in enumerate([B.SpecialValue.ZERO, B.SpecialValue.NAN, B.SpecialValue.VALUE, B.SpecialValue.UNINIT]):
        tmp = B.SChunk(chunksize=1000 * ts, cparams=cp(B.Codec.LZ4, [B.Filter.SHUFFLE], 5, ts))
        if special == B.SpecialValue.VALUE:
            tmp.fill_special(3000, special, value=np.float64(-1.5))
        else:
            tmp.fill_special(3000, special)
        for k in range(tmp.nchunks):
            ch = tmp.get_chunk(k)
            if special == B.SpecialValue.UNINIT:
                continue  # content undefined: store it, but python's and C's reads need not agree
            sc.append_chunk(ch)
        if j == 0:
            sc2.fill_special(2500, special)
    assert sc.nchunks > nc
    how, back = finish(tmp_path, kind, "s.b2frame", sc)
    check(apis, how, python_view(back), rng)
    how2, back2 = finish(tmp_path, kind, "s2.b2frame", sc2)
    check(apis, how2, python_view(back2), rng)


@pytest.mark.parametrize("kind", ["cframe", "sframe"])
def test_uninit_chunks(apis, tmp_path, kind):
    """fill_special(UNINIT): contents are undefined, so only the structure and both C readers' sizes
    are compared (python-blosc2's buffers are not initialised)."""
    ours, ref = apis
    sc = new_schunk(tmp_path, kind, "u.b2frame", 8000, cp(B.Codec.LZ4, [B.Filter.SHUFFLE], 5, 8))
    sc.fill_special(3500, B.SpecialValue.UNINIT)
    how, back = finish(tmp_path, kind, "u.b2frame", sc)
    d_o = dump(ours, open_frame(ours, *how))
    d_r = dump(ref, open_frame(ref, *how))
    assert d_o["header"] == d_r["header"] and d_o["header"]["nchunks"] == back.nchunks == 4
    assert [len(c) for c in d_o["chunks"]] == [len(c) for c in d_r["chunks"]] == [8000, 8000, 8000, 4000]


def _chunk(rng, ts, nitems, cparams):
    return B.compress2(sample_data(rng, nitems, ts), cparams=cparams)


@pytest.mark.parametrize("seed", range(8))
def test_histories(apis, tmp_path, seed):
    """Random insert/update/delete/reorder histories (python-blosc2's own mutation paths)."""
    rng = np.random.default_rng(seed_of("hist", seed))
    kind = KINDS[seed % 4]
    ts, n = 4, 2000
    cparams = cp(CODECS[seed % 5], [B.Filter.SHUFFLE], 5, ts)
    sc = new_schunk(tmp_path, kind, "h.b2frame", n * ts, cparams, {"hist": seed})
    append_all(sc, sample_data(rng, n * 5, ts))
    for step in range(12):
        op = rng.integers(0, 5)
        nc = sc.nchunks
        if op == 0 or nc < 2:
            sc.insert_chunk(int(rng.integers(0, nc + 1)), _chunk(rng, ts, n, cparams))
        elif op == 1:
            sc.update_chunk(int(rng.integers(0, nc)), _chunk(rng, ts, n, cparams))
        elif op == 2:
            sc.delete_chunk(int(rng.integers(0, nc)))
        elif op == 3 and kind != "sframe":
            sc.reorder_offsets(list(rng.permutation(nc)))
        else:
            sc.vlmeta[f"v{step}"] = rng.integers(0, 1000, int(rng.integers(1, 500))).tolist()
            if step % 3 == 0 and f"v{step - 1}" in sc.vlmeta:
                del sc.vlmeta[f"v{step - 1}"]
    how, back = finish(tmp_path, kind, "h.b2frame", sc)
    check(apis, how, python_view(back), rng)


# c-blosc2 refuses chunks of a new size once a file-backed frame has a chunksize, so python-blosc2
# builds variable-length frames in memory.
@pytest.mark.parametrize("kind", ["memory", "offset"])
def test_variable_length_chunks(apis, tmp_path, kind):
    rng = np.random.default_rng(seed_of("var", kind))
    ts = 2
    cparams = cp(B.Codec.ZSTD, [B.Filter.BITSHUFFLE], 3, ts)
    sc = new_schunk(tmp_path, kind, "v.b2frame", None, cparams)
    for n in [1000, 37, 5000, 1, 2048, 999]:
        sc.append_chunk(_chunk(rng, ts, n, cparams))
    sc.insert_chunk(2, _chunk(rng, ts, 777, cparams))
    sc.delete_chunk(0)
    sc.vlmeta["sizes"] = "variable"
    assert sc.chunksize == 0
    how, back = finish(tmp_path, kind, "v.b2frame", sc)
    d = check(apis, how, python_view(back), rng)
    assert d["header"]["chunksize"] == 0


@pytest.mark.parametrize("codec", [B.Codec.ZSTD, B.Codec.LZ4, B.Codec.LZ4HC])
@pytest.mark.parametrize("kind", ["cframe", "memory"])
def test_dictionaries(apis, tmp_path, codec, kind):
    rng = np.random.default_rng(seed_of("dict", codec, kind))
    ts = 4
    words = [bytes(rng.integers(97, 123, int(rng.integers(3, 12)), dtype=np.uint8)) for _ in range(300)]
    text = b" ".join(words[int(rng.integers(0, 300))] for _ in range(40000))
    text = text[: len(text) // 4 * 4]
    cparams = cp(codec, [B.Filter.NOFILTER], 5, ts, use_dict=True, blocksize=4096)
    sc = new_schunk(tmp_path, kind, "d.b2frame", 32768, cparams)
    append_all(sc, text)
    how, back = finish(tmp_path, kind, "d.b2frame", sc)
    # The reference's get_slice_buffer fails (-1) on dictionary chunks: test_interop_write pins ours.
    check(apis, how, python_view(back), rng, with_slices=False)


B2ND_CASES = [
    ("zeros", (100, 50), np.float64, (30, 20), (10, 10)),
    ("asarray", (57, 33, 4), np.int16, (20, 11, 4), (5, 11, 2)),
    ("asarray", (1000,), np.dtype("S7"), (300,), (64,)),
    ("full", (40, 40), np.complex128, (16, 16), (8, 8)),
    ("asarray", (3, 5, 7, 11), np.uint8, (2, 5, 7, 3), (1, 5, 7, 3)),
]


@pytest.mark.parametrize("case", range(len(B2ND_CASES)))
def test_b2nd_arrays(apis, tmp_path, case):
    how_made, shape, dtype, chunks, blocks = B2ND_CASES[case]
    rng = np.random.default_rng(seed_of("b2nd", case))
    path = str(tmp_path / f"a{case}.b2nd")
    kw = dict(urlpath=path, chunks=chunks, blocks=blocks, mode="w")
    if how_made == "zeros":
        arr = B.zeros(shape, dtype=dtype, **kw)
    elif how_made == "full":
        arr = B.full(shape, 1.5 - 2j, dtype=dtype, **kw)
    else:
        if np.dtype(dtype).kind == "S":
            src = np.array([bytes(rng.integers(65, 90, 7, dtype=np.uint8)) for _ in range(shape[0])], dtype=dtype)
        else:
            src = rng.integers(0, 100, shape).astype(dtype)
        arr = B.asarray(src, **kw)
    arr.schunk.vlmeta["units"] = {"case": case, "name": how_made}
    arr.vlmeta["more"] = list(range(case * 10))
    del arr
    back = B.open(path)
    d = check(apis, ("file", path), python_view(back.schunk), rng)
    assert "b2nd" in d["meta"]
    assert back.schunk.nbytes == d["header"]["nbytes"]
    expected = np.ascontiguousarray(back[...])
    assert expected.shape == shape


def test_many_vlmetalayers_and_meta(apis, tmp_path):
    rng = np.random.default_rng(seed_of("vlmeta"))
    meta = {f"m{i}": (list(range(i)) if i % 2 else "x" * i) for i in range(1, 9)}
    sc = new_schunk(tmp_path, "cframe", "vl.b2frame", 4000, cp(B.Codec.BLOSCLZ, [B.Filter.SHUFFLE], 5, 4), meta)
    append_all(sc, sample_data(rng, 3000, 4))
    for i in range(14):
        sc.vlmeta[f"vl{i}"] = os.urandom(0) + bytes(rng.integers(0, 256, int(rng.integers(0, 3000)), dtype=np.uint8))
    del sc.vlmeta["vl3"]
    sc.vlmeta["vl5"] = "updated"
    how, back = finish(tmp_path, "cframe", "vl.b2frame", sc)
    d = check(apis, how, python_view(back), rng)
    assert len(d["meta"]) == 8 and len(d["vlmeta"]) == 13


# The codecs and filters c-blosc2 registers in blosc2_init (BYTEDELTA_BUGGY has no name in
# python-blosc2: id 34). INT_TRUNC keeps bits (positive meta): python-blosc2 4.14.1 cannot reopen
# a frame whose filters_meta holds a negative value (it converts the stored byte to int8_t and
# raises OverflowError), whoever wrote it. (how made, codec, codec_meta, filters, filters_meta, shape, chunks,
# blocks, dtype)
PLUGIN_CASES = [
    ("shuffle+bytedelta", B.Codec.ZSTD, 0, [B.Filter.SHUFFLE, B.Filter.BYTEDELTA], [0, 0],
     (120, 90), (60, 45), (20, 45), np.float64),
    ("bytedelta_buggy", B.Codec.LZ4, 0, [B.Filter.SHUFFLE, 34], [0, 4], (3001,), (1000,), (250,), np.float32),
    ("int_trunc", B.Codec.ZSTD, 0, [B.Filter.INT_TRUNC, B.Filter.SHUFFLE], [20, 0], (5000,), (1200,), (300,), np.int32),
    ("ndcell", B.Codec.BLOSCLZ, 0, [B.Filter.NDCELL, B.Filter.SHUFFLE], [4, 0], (64, 64), (32, 32), (16, 16), np.float32),
    ("ndmean", B.Codec.ZSTD, 0, [B.Filter.NDMEAN, B.Filter.SHUFFLE], [4, 0], (40, 40, 8), (20, 20, 8), (8, 8, 8), np.float64),
    ("ndlz4", B.Codec.NDLZ, 4, [B.Filter.NOFILTER], [0], (256, 256), (128, 128), (64, 64), np.uint8),
    ("ndlz8", B.Codec.NDLZ, 8, [B.Filter.NOFILTER], [0], (100, 90), (50, 90), (25, 45), np.uint8),
    ("zfp_acc", B.Codec.ZFP_ACC, (-4) % 256, [B.Filter.NOFILTER], [0], (64, 48), (32, 24), (16, 8), np.float64),
    ("zfp_prec", B.Codec.ZFP_PREC, 12, [B.Filter.NOFILTER], [0], (20, 20, 20), (10, 10, 10), (5, 10, 10), np.float32),
    ("zfp_rate", B.Codec.ZFP_RATE, 40, [B.Filter.NOFILTER], [0], (4000,), (1000,), (256,), np.float32),
]


def plugin_source(rng, shape, dtype):
    n = int(np.prod(shape))
    if np.dtype(dtype).kind == "f":
        x = np.sin(np.arange(n) * 0.01) * 50 + rng.normal(0, 0.01, n)
        return x.astype(dtype).reshape(shape)
    if np.dtype(dtype).itemsize == 1:
        cells = (np.arange(n).reshape(shape) // 8) % 4
        return (cells * 60 + (rng.random(shape) < 0.02)).astype(dtype)
    return (np.arange(n) // 3 * 7 + rng.integers(0, 4, n)).astype(dtype).reshape(shape)


@pytest.mark.parametrize("case", range(len(PLUGIN_CASES)), ids=[c[0] for c in PLUGIN_CASES])
def test_plugin_codecs_and_filters(apis, tmp_path, case):
    """b2nd arrays python-blosc2 writes with the plugin codecs and filters: every chunk, range
    and metalayer reads the same through libb2frame, c-blosc2's C API and python-blosc2."""
    name, codec, cmeta, filters, fmeta, shape, chunks, blocks, dtype = PLUGIN_CASES[case]
    rng = np.random.default_rng(seed_of("plugin", case))
    src = plugin_source(rng, shape, dtype)
    path = str(tmp_path / f"p{case}.b2nd")
    cparams = B.CParams(codec=codec, codec_meta=cmeta, clevel=5, filters=filters, filters_meta=fmeta,
                        typesize=src.dtype.itemsize, nthreads=1)
    arr = B.asarray(src, urlpath=path, mode="w", chunks=chunks, blocks=blocks, cparams=cparams)
    del arr
    back = B.open(path)
    d = check(apis, ("file", path), python_view(back.schunk), rng)
    assert "b2nd" in d["meta"]
    if name.startswith(("shuffle+bytedelta", "bytedelta", "ndcell", "ndlz")):
        np.testing.assert_array_equal(back[...], src)


def test_bytedelta_schunk_without_b2nd(apis, tmp_path):
    """BYTEDELTA with meta 0 takes the element size from the super-chunk's typesize."""
    rng = np.random.default_rng(seed_of("bytedelta-schunk"))
    for kind in KINDS:
        sc = new_schunk(tmp_path, kind, f"bd-{kind}.b2frame", 8000 * 4,
                        B.CParams(codec=B.Codec.ZSTD, typesize=4, nthreads=1,
                                  filters=[B.Filter.SHUFFLE, B.Filter.BYTEDELTA], filters_meta=[0, 0]))
        append_all(sc, sample_data(rng, 8000 * 3 + 77, 4))
        how, back = finish(tmp_path, kind, f"bd-{kind}.b2frame", sc)
        check(apis, how, python_view(back), rng)
