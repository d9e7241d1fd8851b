"""b2nd arrays between python-blosc2 (on the reference c-blosc2) and libb2frame's b2nd API.

python-blosc2 writes NDArrays (cframe files and sframe directories; shapes 1-D to 4-D, chunk and
block shapes that do and do not divide the shape, numeric and structured dtypes, after a resize)
that libb2frame opens with `b2nd_open` and slices with `b2nd_get_slice_cbuffer`; libb2frame writes
arrays with `b2nd_from_cbuffer` that python-blosc2 opens and slices. Every slice must equal NumPy's.
"""

import ctypes as C

import blosc2
import numpy as np
import pytest

CASES = [
    ((1000,), (100,), (25,), np.float64),
    ((1001,), (130,), (17,), np.int32),
    ((40, 60), (10, 20), (5, 10), np.float32),
    ((41, 59), (13, 20), (6, 7), np.uint16),
    ((10, 11, 12), (4, 5, 6), (2, 3, 3), np.uint8),
    ((9, 8, 7, 6), (4, 4, 4, 4), (2, 2, 2, 2), np.complex128),
    ((50, 7), (16, 7), (4, 7), np.dtype([("a", "<i4"), ("b", "<f8")])),
]


class Array(C.Structure):
    """The head of b2nd_array_t (c-blosc2's layout): enough to read the shape back."""

    _fields_ = [("sc", C.c_void_p), ("shape", C.c_int64 * 16)]


class Cparams(C.Structure):
    """blosc2_cparams."""

    _fields_ = [
        ("compcode", C.c_uint8), ("compcode_meta", C.c_uint8), ("clevel", C.c_uint8),
        ("use_dict", C.c_int), ("typesize", C.c_int32), ("nthreads", C.c_int16),
        ("blocksize", C.c_int32), ("splitmode", C.c_int32), ("schunk", C.c_void_p),
        ("filters", C.c_uint8 * 6), ("filters_meta", C.c_uint8 * 6), ("prefilter", C.c_void_p),
        ("preparams", C.c_void_p), ("tuner_params", C.c_void_p), ("tuner_id", C.c_int),
        ("instr_codec", C.c_bool), ("codec_params", C.c_void_p), ("filter_params", C.c_void_p * 6),
    ]


class Storage(C.Structure):
    """blosc2_storage."""

    _fields_ = [
        ("contiguous", C.c_bool), ("urlpath", C.c_char_p), ("cparams", C.POINTER(Cparams)),
        ("dparams", C.c_void_p), ("io", C.c_void_p),
    ]


def declare(lib):
    lib.b2nd_open.argtypes = [C.c_char_p, C.POINTER(C.POINTER(Array))]
    lib.b2nd_get_slice_cbuffer.argtypes = [
        C.POINTER(Array), C.POINTER(C.c_int64), C.POINTER(C.c_int64), C.c_void_p,
        C.POINTER(C.c_int64), C.c_int64,
    ]
    lib.b2nd_free.argtypes = [C.POINTER(Array)]
    lib.b2nd_create_ctx.restype = C.c_void_p
    lib.b2nd_create_ctx.argtypes = [
        C.c_void_p, C.c_int8, C.POINTER(C.c_int64), C.POINTER(C.c_int32), C.POINTER(C.c_int32),
        C.c_char_p, C.c_int8, C.c_void_p, C.c_int32,
    ]
    lib.b2nd_from_cbuffer.argtypes = [C.c_void_p, C.POINTER(C.POINTER(Array)), C.c_void_p, C.c_int64]
    lib.b2nd_free_ctx.argtypes = [C.c_void_p]
    return lib


def data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype.names:
        a = np.zeros(n, dtype=dtype)
        a["a"] = rng.integers(0, 50, n)
        a["b"] = np.arange(n) * 0.5
        return a.reshape(shape)
    return (rng.integers(0, 20, n) + np.arange(n) // 7).astype(dtype).reshape(shape)


def slices(shape, chunks):
    full = tuple(slice(0, s) for s in shape)
    inner = tuple(slice(s // 3, s - s // 4) for s in shape)
    last = tuple(slice(s - 1, s) for s in shape)
    across = tuple(slice(c - 1, min(s, c + 1)) for s, c in zip(shape, chunks))
    return [full, inner, last, across]


def read_slice(lib, arr, sl, dtype):
    start = [s.start for s in sl]
    stop = [s.stop for s in sl]
    bshape = [b - a for a, b in zip(start, stop)]
    out = np.empty(bshape, dtype=dtype)
    n = len(sl)
    rc = lib.b2nd_get_slice_cbuffer(
        arr, (C.c_int64 * n)(*start), (C.c_int64 * n)(*stop), out.ctypes.data,
        (C.c_int64 * n)(*bshape), out.nbytes,
    )
    assert rc == 0
    return out


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_python_blosc2_writes_libb2frame_reads(ours, tmp_path, case, contiguous):
    lib = declare(ours)
    shape, chunks, blocks, dtype = CASES[case]
    dtype = np.dtype(dtype)
    a = data(shape, dtype, case)
    path = str(tmp_path / ("a.b2nd" if contiguous else "a.b2frame"))
    arr = blosc2.asarray(a, chunks=chunks, blocks=blocks, urlpath=path, contiguous=contiguous)
    # Grow the first dimension by one chunk and a bit, then fill the new part.
    grown = (shape[0] + chunks[0] + 1,) + shape[1:]
    arr.resize(grown)
    extra = data(grown, dtype, case + 100)[shape[0]:]
    arr[shape[0]:] = extra
    want = np.concatenate([a, extra])
    del arr
    p = C.POINTER(Array)()
    assert lib.b2nd_open(path.encode(), C.byref(p)) == 0
    assert list(p.contents.shape[: len(shape)]) == list(grown)
    for sl in slices(grown, chunks):
        np.testing.assert_array_equal(read_slice(lib, p, sl, dtype), want[sl])
    assert lib.b2nd_free(p) == 0


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_libb2frame_writes_python_blosc2_reads(ours, tmp_path, case, contiguous):
    lib = declare(ours)
    shape, chunks, blocks, dtype = CASES[case]
    dtype = np.dtype(dtype)
    a = np.ascontiguousarray(data(shape, dtype, case + 7))
    path = str(tmp_path / ("b.b2nd" if contiguous else "b.b2frame")).encode()

    cp = Cparams(compcode=0, clevel=5, typesize=dtype.itemsize, nthreads=1, splitmode=4)
    cp.filters[5] = 1  # BLOSC_SHUFFLE
    storage = Storage(contiguous=contiguous, urlpath=path, cparams=C.pointer(cp))
    n = len(shape)
    dt = dtype.str.encode() if not dtype.names else str(dtype.descr).encode()
    ctx = lib.b2nd_create_ctx(
        C.byref(storage), n, (C.c_int64 * n)(*shape), (C.c_int32 * n)(*chunks),
        (C.c_int32 * n)(*blocks), dt, 0, None, 0,
    )
    assert ctx
    p = C.POINTER(Array)()
    assert lib.b2nd_from_cbuffer(ctx, C.byref(p), a.ctypes.data, a.nbytes) == 0
    assert lib.b2nd_free(p) == 0
    assert lib.b2nd_free_ctx(ctx) == 0
    arr = blosc2.open(path.decode())
    assert arr.shape == shape
    assert arr.chunks == chunks and arr.blocks == blocks
    for sl in slices(shape, chunks):
        np.testing.assert_array_equal(arr[sl], a[sl])
