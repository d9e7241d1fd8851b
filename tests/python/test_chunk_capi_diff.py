"""Chunk C API differential test: libb2frame against c-blosc2 through the same entry points.

Random but seeded parameters (codec, clevel, typesize incl. >255, filters incl. DELTA, split
mode, requested blocksize, nthreads, dictionaries) and data kinds. For every case:
* a chunk written by libb2frame decodes to the input with c-blosc2 (1 and 3 threads);
* a chunk written by c-blosc2 decodes to the input with libb2frame, whenever c-blosc2 itself
  decodes it correctly (c-blosc2 writes a few undecodable chunks, e.g. for requested blocksizes
  that are not multiples of the typesize; those are not held against us);
* both libraries fail, or neither does, and with the same code when they fail;
* chunk sizes stay close to c-blosc2's (they are equal in nearly all cases);
* getitem of a random item range of our chunk returns the right bytes.
"""

import ctypes as C
import random

import pytest


class CParams(C.Structure):
    _fields_ = [
        ("compcode", C.c_uint8), ("compcode_meta", C.c_uint8), ("clevel", C.c_uint8),
        ("use_dict", C.c_int), ("typesize", C.c_int32), ("nthreads", C.c_int16),
        ("blocksize", C.c_int32), ("splitmode", C.c_int32), ("schunk", C.c_void_p),
        ("filters", C.c_uint8 * 6), ("filters_meta", C.c_uint8 * 6), ("prefilter", C.c_void_p),
        ("preparams", C.c_void_p), ("tuner_params", C.c_void_p), ("tuner_id", C.c_int),
        ("instr_codec", C.c_bool), ("codec_params", C.c_void_p), ("filter_params", C.c_void_p * 6),
    ]


class DParams(C.Structure):
    _fields_ = [
        ("nthreads", C.c_int16), ("schunk", C.c_void_p), ("postfilter", C.c_void_p),
        ("postparams", C.c_void_p), ("typesize", C.c_int32),
    ]


def _bind(lib):
    lib.blosc2_create_cctx.restype = C.c_void_p
    lib.blosc2_create_cctx.argtypes = [CParams]
    lib.blosc2_create_dctx.restype = C.c_void_p
    lib.blosc2_create_dctx.argtypes = [DParams]
    lib.blosc2_free_ctx.argtypes = [C.c_void_p]
    lib.blosc2_compress_ctx.argtypes = [C.c_void_p, C.c_char_p, C.c_int32, C.c_void_p, C.c_int32]
    lib.blosc2_decompress_ctx.argtypes = [C.c_void_p, C.c_char_p, C.c_int32, C.c_void_p, C.c_int32]
    lib.blosc2_getitem_ctx.argtypes = [
        C.c_void_p, C.c_char_p, C.c_int32, C.c_int, C.c_int, C.c_void_p, C.c_int32,
    ]
    lib.blosc2_init()
    return lib


def _data(kind, n, ts, seed):
    r = random.Random(seed)
    if kind == 0:
        return r.randbytes(n)
    if kind == 1:
        return bytes(((i // ts) * 3) & 0xFF if i % ts == 0 else 0 for i in range(n))
    if kind == 2:
        return bytes(n)
    if kind == 3:
        return bytes(r.choice(b"abcdefgh   ") for _ in range(n))
    return bytes(((i * i) >> 5) & 0xFF for i in range(n))


def _cparams(r):
    cp = CParams()
    cp.compcode = r.choice([0, 1, 2, 4, 5])
    cp.clevel = r.randint(0, 9)
    cp.typesize = r.choice([1, 2, 4, 8, 3, 7, 16, 300])
    cp.nthreads = r.choice([1, 1, 2, 4])
    cp.blocksize = r.choice([0, 0, 0, 4096, 16384, 1000 * cp.typesize])
    cp.splitmode = r.choice([1, 2, 3, 4])
    filters = [0] * 6
    filters[5] = r.choice([0, 1, 2])
    if r.random() < 0.3:
        filters[4] = 3
    cp.filters = (C.c_uint8 * 6)(*filters)
    cp.use_dict = 1 if cp.compcode in (1, 2, 5) and r.random() < 0.2 else 0
    return cp


def _compress(lib, cp, src):
    ctx = lib.blosc2_create_cctx(cp)
    assert ctx
    dst = C.create_string_buffer(len(src) + 64)
    n = lib.blosc2_compress_ctx(ctx, src, len(src), dst, len(dst))
    lib.blosc2_free_ctx(ctx)
    return n, dst.raw[: max(n, 0)]


def _decompress(lib, chunk, nbytes, nthreads):
    dp = DParams()
    dp.nthreads = nthreads
    ctx = lib.blosc2_create_dctx(dp)
    assert ctx
    out = C.create_string_buffer(nbytes + 1)
    k = lib.blosc2_decompress_ctx(ctx, chunk, len(chunk), out, nbytes)
    lib.blosc2_free_ctx(ctx)
    return k, out.raw[: max(k, 0)]


def _getitem(lib, chunk, start, nitems, ts):
    dp = DParams()
    dp.nthreads = 1
    ctx = lib.blosc2_create_dctx(dp)
    out = C.create_string_buffer(nitems * ts)
    k = lib.blosc2_getitem_ctx(ctx, chunk, len(chunk), start, nitems, out, nitems * ts)
    lib.blosc2_free_ctx(ctx)
    return k, out.raw


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chunks_interoperate(ours, ref, seed):
    ours, ref = _bind(ours), _bind(ref)
    r = random.Random(seed)
    for case in range(80):
        cp = _cparams(r)
        n = r.choice([0, 1, 31, 32, 100, 1000, 5000, 65536, 200000])
        kind = r.randint(0, 4)
        src = _data(kind, n, cp.typesize, seed * 1000 + case)
        tag = (
            f"case {case}: codec {cp.compcode} clevel {cp.clevel} typesize {cp.typesize} "
            f"nthreads {cp.nthreads} blocksize {cp.blocksize} split {cp.splitmode} "
            f"filters {list(cp.filters)} dict {cp.use_dict} n {n} kind {kind}"
        )
        rn, rchunk = _compress(ref, cp, src)
        on, ochunk = _compress(ours, cp, src)
        assert (rn < 0) == (on < 0), tag
        if rn < 0:
            assert rn == on, tag
            continue
        if rn == 0:
            continue
        assert abs(rn - on) <= max(64, rn // 20), f"{tag}: sizes {rn} vs {on}"
        for nthreads in (1, 3):
            assert _decompress(ref, ochunk, n, nthreads) == (n, src), f"{tag}: ours -> ref"
        if _decompress(ref, rchunk, n, 1) == (n, src):
            for nthreads in (1, 3):
                assert _decompress(ours, rchunk, n, nthreads) == (n, src), f"{tag}: ref -> ours"
        ts = cp.typesize if cp.typesize <= 255 else 1
        if n >= 2 * ts:
            nitems = n // ts
            start = r.randint(0, nitems - 1)
            count = r.randint(1, nitems - start)
            k, got = _getitem(ours, ochunk, start, count, ts)
            assert k == count * ts, tag
            assert got == src[start * ts:(start + count) * ts], tag
