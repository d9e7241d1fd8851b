"""libb2frame writes frames through its C API; python-blosc2 (c-blosc2 3.3.5) reads them exactly.

Each case runs one history of C calls (the same ctypes code) twice: on libb2frame and on the
reference libblosc2.so.9. The frame libb2frame wrote is then read by python-blosc2 (blosc2.open,
blosc2.open(offset=), blosc2.schunk_from_cframe): every chunk, the metalayers and vlmetalayers must
be what the history put there, and the reference C library must read the same (incl. item ranges
through get_slice_buffer). The sizes of both libraries' frames are recorded and compared at the end
(test_zz_size_summary prints the table).
"""

import ctypes as C
import os

import blosc2
import msgpack
import numpy as np
import pytest
from test_interop_common import Writer, cparams, dump, open_frame, sample_data, seed_of

B = blosc2
CODECS = [0, 1, 2, 4, 5]  # blosclz lz4 lz4hc zlib zstd
CNAMES = {0: "blosclz", 1: "lz4", 2: "lz4hc", 4: "zlib", 5: "zstd"}
PIPELINES = {
    "none": [0],
    "shuffle": [1],
    "bitshuffle": [2],
    "delta+shuffle": [3, 1],
    "trunc+bitshuffle": [(4, 10), 2],
}
CLEVELS = [0, 1, 5, 9]
KINDS = ["cframe", "sframe", "memory", "offset"]
SIZES = []  # (case, ours bytes, reference bytes)


def frame_size(how):
    kind, where = how
    if kind == "buffer":
        return len(where)
    if kind == "offset":
        return os.path.getsize(where[0]) - where[1]
    if os.path.isdir(where):
        return sum(os.path.getsize(os.path.join(where, f)) for f in os.listdir(where))
    return os.path.getsize(where)


def write(api, tmp_path, kind, tag, cp, history):
    """Runs history(Writer) on api; returns how to open the result."""
    name = f"{tag}-{api.name}.b2frame"
    path = str(tmp_path / name)
    w = Writer(api, cp, contiguous=kind != "sframe", urlpath=path if kind in ("cframe", "sframe") else None)
    history(w)
    if kind == "memory":
        how = ("buffer", w.to_buffer())
    elif kind == "offset":
        with open(path, "wb") as f:
            f.write(b"prefix:" * 19)
        off = w.append_file(path)
        assert off == 7 * 19
        how = ("offset", (path, off))
    else:
        how = ("file", path)
    w.free()
    return how


def python_open(how):
    kind, where = how
    if kind == "buffer":
        return B.schunk_from_cframe(where, copy=True)
    if kind == "offset":
        return B.open(where[0], offset=where[1])
    return B.open(where)


def run_case(apis, tmp_path, kind, tag, cp_args, history, expected_chunks, meta=None, vlmeta=None, slices=True):
    ours, ref = apis
    how_o = write(ours, tmp_path, kind, tag, cparams(ours, *cp_args[0], **cp_args[1]), history)
    how_r = write(ref, tmp_path, kind, tag, cparams(ref, *cp_args[0], **cp_args[1]), history)
    SIZES.append((tag, frame_size(how_o), frame_size(how_r)))
    # python-blosc2 reads libb2frame's frame
    obj = python_open(how_o)  # keep it alive: an NDArray owns the schunk its .schunk views
    sc = obj.schunk if hasattr(obj, "schunk") else obj
    assert sc.nchunks == len(expected_chunks)
    for i, want in enumerate(expected_chunks):
        if want is not None:
            assert sc.decompress_chunk(i) == want, f"python-blosc2: chunk {i} of {tag}"
    assert {k: sc.meta[k] for k in sc.meta.keys()} == (meta or {})
    assert dict(sc.vlmeta.getall()) == (vlmeta or {})
    # the reference C library reads it too, ranges included
    total = sum(len(c) for c in expected_chunks if c is not None) // cp_args[0][3]
    rngs = [(0, total), (total // 3, total // 2 + 1), (total - 1, total)] if slices and total else []
    d = dump(ref, open_frame(ref, *how_o), rngs)
    for i, want in enumerate(expected_chunks):
        if want is not None:
            assert d["chunks"][i] == want
    if rngs and None not in expected_chunks:
        joined = b"".join(expected_chunks)
        ts = cp_args[0][3]
        assert d["slices"] == [joined[a * ts : b * ts] for a, b in rngs]
    return how_o, how_r


MATRIX = [(c, p, l) for c in CODECS for p in PIPELINES for l in CLEVELS]


@pytest.mark.parametrize("codec,pipe,clevel", MATRIX, ids=[f"{CNAMES[c]}-{p}-{l}" for c, p, l in MATRIX])
def test_codec_pipeline_clevel(apis, tmp_path, codec, pipe, clevel):
    i = MATRIX.index((codec, pipe, clevel))
    kind = KINDS[i % 4]
    rng = np.random.default_rng(seed_of(codec, pipe, clevel))
    ts = 8 if i % 2 else 4
    data = sample_data(rng, 4096 * 3 + 1234, ts)
    cs = 4096 * ts
    pieces = [data[a : a + cs] for a in range(0, len(data), cs)]
    if pipe == "trunc+bitshuffle":
        expected = [None] * len(pieces)  # lossy: compared between the three readers in test_interop_read
    else:
        expected = pieces
    meta = {"info": {"i": i}}
    vlm = {"params": [codec, clevel, pipe]}

    def history(w):
        w.meta("info", msgpack.packb(meta["info"]))
        for p in pieces:
            w.append(p)
        w.vlmeta("params", msgpack.packb(vlm["params"]))

    run_case(apis, tmp_path, kind, f"{CNAMES[codec]}-{pipe}-{clevel}-{kind}", ((codec, PIPELINES[pipe], clevel, ts), {}),
             history, expected, meta, vlm)


TYPESIZES = list(range(1, 17)) + [255, 256, 300, 1000]


@pytest.mark.parametrize("ts", TYPESIZES)
def test_typesizes(apis, tmp_path, ts):
    rng = np.random.default_rng(seed_of("ts", ts))
    kind = KINDS[ts % 4]
    codec = CODECS[ts % 5]
    nitems = 3000 if ts < 100 else 300
    data = sample_data(rng, nitems * 2 + nitems // 3, ts)
    cs = nitems * ts
    pieces = [data[a : a + cs] for a in range(0, len(data), cs)]

    def history(w):
        for p in pieces:
            w.append(p)

    run_case(apis, tmp_path, kind, f"typesize{ts}-{CNAMES[codec]}-{kind}", ((codec, [1], 5, ts), {}), history, pieces)


@pytest.mark.parametrize("seed", range(8))
def test_histories(apis, tmp_path, seed):
    """Seeded append/insert/update/delete/reorder/special histories with meta and vlmeta edits."""
    rng = np.random.default_rng(seed_of("hist", seed))
    kind = KINDS[seed % 4]
    ts, n = 4, 2000
    cs = n * ts
    codec = CODECS[seed % 5]
    ops = []
    model = []  # expected decompressed chunks
    vlm = {}
    specials = {1: bytes(cs), 2: np.full(n, np.nan, np.float32).tobytes(), 3: None}
    if seed % 2 == 0:  # fill_special works on an empty schunk only
        kind_fill = 1 + seed % 4 // 2  # ZERO or NAN
        ops.append(("fill", 3 * n, kind_fill))
        model += [specials[kind_fill]] * 3
    for _ in range(5):
        d = sample_data(rng, n, ts)
        ops.append(("append", d))
        model.append(d)
    for step in range(14):
        op = int(rng.integers(0, 7))
        nc = len(model)
        d = sample_data(rng, n, ts)
        if op == 0 or nc < 2:
            i = int(rng.integers(0, nc + 1))
            ops.append(("insert", i, d))
            model.insert(i, d)
        elif op == 1:
            i = int(rng.integers(0, nc))
            ops.append(("update", i, d))
            model[i] = d
        elif op == 2:
            i = int(rng.integers(0, nc))
            ops.append(("delete", i))
            del model[i]
        elif op == 3 and kind != "sframe":
            order = [int(x) for x in rng.permutation(nc)]
            ops.append(("reorder", order))
            model = [model[o] for o in order]  # position i gets the chunk that was at order[i]
        elif op == 4:
            s = int(rng.integers(1, 3))
            ops.append(("special", s))
            model.append(specials[s])
            model.append(specials[s])
        else:
            v = rng.integers(0, 1000, int(rng.integers(1, 300))).tolist()
            ops.append(("vlmeta", f"v{step}", v))
            vlm[f"v{step}"] = v

    def history(w):
        w.meta("hist", msgpack.packb(seed))
        for op in ops:
            if op[0] == "append":
                w.append(op[1])
            elif op[0] == "insert":
                w.insert(op[1], op[2])
            elif op[0] == "update":
                w.update(op[1], op[2])
            elif op[0] == "delete":
                w.delete(op[1])
            elif op[0] == "reorder":
                w.reorder(op[1])
            elif op[0] == "fill":
                w.fill_special(op[1], op[2], cs)
            elif op[0] == "special":
                w.append_special(op[1], cs)
                w.append_special(op[1], cs)
            else:
                w.vlmeta(op[1], msgpack.packb(op[2]))

    run_case(apis, tmp_path, kind, f"history{seed}-{CNAMES[codec]}-{kind}", ((codec, [1], 5, ts), {}), history, model,
             {"hist": seed}, vlm)


@pytest.mark.parametrize("kind", KINDS)
def test_special_chunks(apis, tmp_path, kind):
    """Every special-chunk constructor, between regular chunks; uninit contents are not compared."""
    ts, n = 8, 1500
    rng = np.random.default_rng(seed_of("special", kind))
    regular = [sample_data(rng, n, ts) for _ in range(2)]
    value = np.float64(-2.75).tobytes()

    def history(w):
        w.append(regular[0])
        for k in (1, 2, 3, 4):
            w.append_special(k, n * ts, value if k == 3 else None)
        w.append(regular[1])

    model = [regular[0], bytes(n * ts), np.full(n, np.nan).tobytes(), value * n, None, regular[1]]
    run_case(apis, tmp_path, kind, f"special-{kind}", ((0, [1], 5, ts), {}), history, model)


def test_reorder_semantics(apis, tmp_path):
    """Pins what blosc2_schunk_reorder_offsets means (chunk i moves to position order[i]?) on both."""
    ts, n = 4, 100
    chunks = [np.full(n, k, np.int32).tobytes() for k in range(4)]
    order = [2, 0, 3, 1]
    res = {}
    for api in apis:
        w = Writer(api, cparams(api, 0, [1], 5, ts))
        for c in chunks:
            w.append(c)
        w.reorder(order)
        res[api.name] = dump(api, api.schunk_from_buffer(w.to_buffer(), len(w.to_buffer()), True))["chunks"]
        w.free()
    assert res["b2frame"] == res["reference"]


@pytest.mark.parametrize("kind", ["memory", "offset"])
def test_variable_length_chunks(apis, tmp_path, kind):
    rng = np.random.default_rng(seed_of("var", kind))
    ts = 2
    pieces = [sample_data(rng, k, ts) for k in [1000, 37, 5000, 1, 2048, 999]]
    extra = sample_data(rng, 777, ts)

    def history(w):
        for p in pieces:
            w.append_chunk(p)
        w.insert(2, extra)
        w.delete(0)
        w.vlmeta("sizes", msgpack.packb("variable"))

    model = pieces[:2] + [extra] + pieces[2:]
    run_case(apis, tmp_path, kind, f"variable-{kind}", ((5, [2], 3, ts), {}), history, model[1:], None,
             {"sizes": "variable"}, slices=False)


@pytest.mark.parametrize("codec", [5, 1, 2])
@pytest.mark.parametrize("kind", ["cframe", "memory"])
def test_dictionaries(apis, tmp_path, codec, kind):
    rng = np.random.default_rng(seed_of("dict", codec, kind))
    words = [bytes(rng.integers(97, 123, int(rng.integers(3, 12)), dtype=np.uint8)) for _ in range(300)]
    text = b" ".join(words[int(rng.integers(0, 300))] for _ in range(40000))
    text = text[: len(text) // 4 * 4]
    pieces = [text[a : a + 32768] for a in range(0, len(text), 32768)]

    def history(w):
        for p in pieces:
            w.append(p)

    run_case(apis, tmp_path, kind, f"dict-{CNAMES[codec]}-{kind}", ((codec, [0], 5, 4), {"use_dict": True, "blocksize": 4096}),
             history, pieces, slices=False)


def test_dictionary_slices_ours(apis, tmp_path):
    """get_slice_buffer on dictionary chunks: the reference returns -1 (a 3.3.5 limitation); ours reads them."""
    ours, ref = apis
    data = b"".join(b"word%d " % (i % 97) for i in range(20000))[:100000]
    w = Writer(ours, cparams(ours, 5, [0], 5, 4, use_dict=True, blocksize=4096))
    for a in range(0, len(data), 32768):
        w.append(data[a : a + 32768])
    buf = w.to_buffer()
    w.free()
    d = dump(ours, ours.schunk_from_buffer(buf, len(buf), True), [(1000, 20000)])
    assert d["slices"] == [data[4000:80000]]


B2ND_CASES = [((6000,), (1000,), (250,), "<i4", 4), ((90, 40), (30, 40), (10, 40), "<f8", 8), ((64, 3), (16, 3), (4, 3), "|u1", 1)]


@pytest.mark.parametrize("case", range(len(B2ND_CASES)))
def test_b2nd_arrays(apis, tmp_path, case):
    """A b2nd array written through the C API (b2nd metalayer + chunks whose blocks are whole rows):
    blosc2.open gives back an NDArray equal to the source."""
    shape, chunks, blocks, dtype, ts = B2ND_CASES[case]
    rng = np.random.default_rng(seed_of("b2nd", case))
    arr = rng.integers(0, 50, shape).astype(dtype)
    ours, _ = apis
    nd = len(shape)
    out = C.POINTER(C.c_uint8)()
    n = ours.lib.b2nd_serialize_meta(C.c_int8(nd), (C.c_int64 * nd)(*shape), (C.c_int32 * nd)(*chunks),
                                     (C.c_int32 * nd)(*blocks), dtype.encode(), C.c_int8(0), C.byref(out))
    assert n > 0
    meta_b2nd = C.string_at(out, n)
    rows = chunks[0]
    flat = arr.tobytes()
    per_chunk = int(np.prod(chunks)) * ts
    pieces = [flat[a : a + per_chunk] for a in range(0, len(flat), per_chunk)]
    blocksize = int(np.prod(blocks)) * ts

    def history(w):
        w.meta("b2nd", meta_b2nd)
        for p in pieces:
            w.append(p)
        w.vlmeta("rows", msgpack.packb(rows))

    how_o, _ = run_case(apis, tmp_path, "cframe", f"b2nd{case}", ((0, [1], 5, ts), {"blocksize": blocksize}), history,
                        pieces, {"b2nd": msgpack.unpackb(meta_b2nd)}, {"rows": rows})
    back = B.open(how_o[1])
    assert isinstance(back, B.NDArray)
    np.testing.assert_array_equal(back[...], arr)


def test_zz_size_summary(capsys):
    """Prints our frame sizes against the reference's for the same data and parameters."""
    assert SIZES, "run with the other tests of this module"
    tot_o = sum(o for _, o, _ in SIZES)
    tot_r = sum(r for _, _, r in SIZES)
    worst = sorted(SIZES, key=lambda s: abs(s[1] / s[2] - 1), reverse=True)
    within = sum(1 for _, o, r in SIZES if o <= r * 1.02)
    lines = [f"frame sizes, b2frame vs c-blosc2 3.3.5 ({len(SIZES)} frames): total {tot_o} vs {tot_r} bytes "
             f"({100.0 * (tot_o / tot_r - 1):+.2f}%); {within} of {len(SIZES)} within +2%"]
    by_codec = {}
    for tag, o, r in SIZES:
        key = tag.split("-")[0] if tag.split("-")[0] in CNAMES.values() else tag.split("-")[0].rstrip("0123456789")
        a = by_codec.setdefault(key, [0, 0])
        a[0] += o
        a[1] += r
    for k, (o, r) in sorted(by_codec.items()):
        lines.append(f"  {k:12s} {o:9d} vs {r:9d}  {100.0 * (o / r - 1):+7.2f}%")
    lines.append("  largest differences: " + ", ".join(f"{t} {100.0 * (o / r - 1):+.1f}%" for t, o, r in worst[:6]))
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    # The overall goal is +-2%; the hard bound only catches a real regression (e.g. a codec falling back to memcpy).
    assert tot_o <= tot_r * 1.10


# libb2frame writes b2nd arrays with the codecs and filters c-blosc2 registers in blosc2_init
# (chunks and blocks span the trailing dimensions, so the array's bytes cut in order are the
# chunks): (tag, codec, codec_meta, filters, shape, chunks, blocks, dtype, lossless)
PLUGIN_CASES = [
    ("bytedelta", 5, 0, [1, 35], (90, 40), (30, 40), (10, 40), "<f8", True),
    ("bytedelta_buggy", 1, 0, [1, (34, 4)], (6000,), (1000,), (250,), "<f4", True),
    ("int_trunc", 5, 0, [(36, 22), 1], (6000,), (1000,), (250,), "<i4", False),
    ("ndcell", 0, 0, [(32, 4), 1], (64, 64), (32, 64), (16, 64), "<f4", True),
    ("ndmean", 5, 0, [(33, 4), 1], (32, 16, 8), (16, 16, 8), (8, 16, 8), "<f8", False),
    ("ndlz", 32, 4, [0], (128, 128), (64, 128), (32, 128), "|u1", True),
    ("ndlz8", 32, 8, [0], (96, 60), (48, 60), (24, 60), "|u1", True),
    ("zfp_acc", 33, (-3) % 256, [0], (64, 48), (32, 48), (16, 48), "<f8", False),
    ("zfp_prec", 34, 14, [0], (16, 16, 16), (8, 16, 16), (4, 16, 16), "<f4", False),
    ("zfp_rate", 35, 30, [0], (8000,), (2000,), (500,), "<f4", False),
]


@pytest.mark.parametrize("case", range(len(PLUGIN_CASES)), ids=[c[0] for c in PLUGIN_CASES])
def test_plugin_codecs_and_filters(apis, tmp_path, case):
    """Our frames open in python-blosc2 as NDArrays equal to what c-blosc2's own frame (same
    history) gives: byte-identical chunks, so the same values, lossy ones included."""
    tag, codec, cmeta, filters, shape, chunks, blocks, dtype, lossless = PLUGIN_CASES[case]
    rng = np.random.default_rng(seed_of("plugin-write", case))
    n = int(np.prod(shape))
    if dtype.startswith("<f"):
        arr = (np.sin(np.arange(n) * 0.02) * 30 + rng.normal(0, 0.01, n)).astype(dtype).reshape(shape)
    elif dtype == "|u1":
        arr = (((np.arange(n).reshape(shape) // 8) % 4) * 50 + (rng.random(shape) < 0.03)).astype(dtype)
    else:
        arr = (np.arange(n) // 3 * 5 + rng.integers(0, 3, n)).astype(dtype).reshape(shape)
    ts = arr.dtype.itemsize
    ours, ref = apis
    nd = len(shape)
    out = C.POINTER(C.c_uint8)()
    m = ours.lib.b2nd_serialize_meta(C.c_int8(nd), (C.c_int64 * nd)(*shape), (C.c_int32 * nd)(*chunks),
                                     (C.c_int32 * nd)(*blocks), dtype.encode(), C.c_int8(0), C.byref(out))
    assert m > 0
    meta_b2nd = C.string_at(out, m)
    flat = arr.tobytes()
    per_chunk = int(np.prod(chunks)) * ts
    pieces = [flat[a : a + per_chunk] for a in range(0, len(flat), per_chunk)]
    blocksize = int(np.prod(blocks)) * ts

    def history(w):
        w.meta("b2nd", meta_b2nd)
        for p in pieces:
            w.append(p)

    hows = {}
    for api in (ours, ref):
        cp = cparams(api, codec, filters, 5, ts, blocksize=blocksize, codec_meta=cmeta)
        hows[api.name] = write(api, tmp_path, "cframe", f"{tag}-plugin", cp, history)
    how_o, how_r = hows[ours.name], hows[ref.name]
    SIZES.append((f"{tag}-plugin", frame_size(how_o), frame_size(how_r)))
    assert frame_size(how_o) == frame_size(how_r)
    a, b = python_open(how_o), python_open(how_r)
    assert isinstance(a, B.NDArray)
    for i in range(a.schunk.nchunks):
        assert a.schunk.get_chunk(i) == b.schunk.get_chunk(i), f"chunk {i} of {tag}"
    np.testing.assert_array_equal(a[...], b[...])
    if lossless:
        np.testing.assert_array_equal(a[...], arr)
    # c-blosc2's C API reads our frame like its own.
    d_o, d_r = dump(ref, open_frame(ref, *how_o)), dump(ref, open_frame(ref, *how_r))
    assert d_o["chunks"] == d_r["chunks"]
