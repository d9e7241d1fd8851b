"""Shared machinery for the interop matrix (test_interop_*.py): a ctypes view of the frame C API
that works on either library (libb2frame or the reference libblosc2.so.9), so that the same code
dumps what a library reads from a frame, and writes frames through the C API.

Struct offsets are the x86_64 ones of c-blosc2 3.3 (blosc2_schunk is 65840 bytes;
blosc2_meta_get is header-inline, so metalayers are read through the struct like a C caller does).
"""

import ctypes as C
import zlib

import msgpack
import numpy as np

# blosc2_schunk field offsets
OFF_TYPESIZE, OFF_CHUNKSIZE = 8, 16
OFF_NCHUNKS, OFF_NBYTES, OFF_CBYTES = 40, 56, 64
OFF_CCTX, OFF_DCTX = 104, 112
OFF_METALAYERS, OFF_NMETALAYERS = 120, 248
OFF_NVLMETALAYERS = 65792


class CParams(C.Structure):
    _fields_ = [
        ("compcode", C.c_uint8),
        ("compcode_meta", C.c_uint8),
        ("clevel", C.c_uint8),
        ("use_dict", C.c_int),
        ("typesize", C.c_int32),
        ("nthreads", C.c_int16),
        ("blocksize", C.c_int32),
        ("splitmode", C.c_int32),
        ("schunk", C.c_void_p),
        ("filters", C.c_uint8 * 6),
        ("filters_meta", C.c_uint8 * 6),
        ("prefilter", C.c_void_p),
        ("preparams", C.c_void_p),
        ("tuner_params", C.c_void_p),
        ("tuner_id", C.c_int),
        ("instr_codec", C.c_bool),
        ("codec_params", C.c_void_p),
        ("filter_params", C.c_void_p * 6),
    ]


class DParams(C.Structure):
    _fields_ = [
        ("nthreads", C.c_int16),
        ("schunk", C.c_void_p),
        ("postfilter", C.c_void_p),
        ("postparams", C.c_void_p),
        ("typesize", C.c_int32),
    ]


class Storage(C.Structure):
    _fields_ = [
        ("contiguous", C.c_bool),
        ("urlpath", C.c_char_p),
        ("cparams", C.POINTER(CParams)),
        ("dparams", C.POINTER(DParams)),
        ("io", C.c_void_p),
    ]


assert C.sizeof(CParams) == 136 and C.sizeof(DParams) == 40 and C.sizeof(Storage) == 40

_P = C.c_void_p
_U8P = C.POINTER(C.c_uint8)
_SIGS = {
    "blosc2_init": (None, []),
    "blosc2_get_blosc2_cparams_defaults": (CParams, []),
    "blosc2_get_blosc2_dparams_defaults": (DParams, []),
    "blosc2_schunk_new": (_P, [C.POINTER(Storage)]),
    "blosc2_schunk_free": (C.c_int, [_P]),
    "blosc2_schunk_open": (_P, [C.c_char_p]),
    "blosc2_schunk_open_offset": (_P, [C.c_char_p, C.c_int64]),
    "blosc2_schunk_from_buffer": (_P, [C.c_char_p, C.c_int64, C.c_bool]),
    "blosc2_schunk_to_buffer": (C.c_int64, [_P, C.POINTER(_U8P), C.POINTER(C.c_bool)]),
    "blosc2_schunk_append_file": (C.c_int64, [_P, C.c_char_p]),
    "blosc2_schunk_append_buffer": (C.c_int64, [_P, C.c_char_p, C.c_int32]),
    "blosc2_schunk_append_chunk": (C.c_int64, [_P, C.c_char_p, C.c_bool]),
    "blosc2_schunk_insert_chunk": (C.c_int64, [_P, C.c_int64, C.c_char_p, C.c_bool]),
    "blosc2_schunk_update_chunk": (C.c_int64, [_P, C.c_int64, C.c_char_p, C.c_bool]),
    "blosc2_schunk_delete_chunk": (C.c_int64, [_P, C.c_int64]),
    "blosc2_schunk_reorder_offsets": (C.c_int, [_P, C.POINTER(C.c_int64)]),
    "blosc2_schunk_fill_special": (C.c_int64, [_P, C.c_int64, C.c_int, C.c_int32]),
    "blosc2_schunk_get_chunk": (C.c_int, [_P, C.c_int64, C.POINTER(_U8P), C.POINTER(C.c_bool)]),
    "blosc2_schunk_decompress_chunk": (C.c_int, [_P, C.c_int64, C.c_void_p, C.c_int32]),
    "blosc2_schunk_get_slice_buffer": (C.c_int, [_P, C.c_int64, C.c_int64, C.c_void_p]),
    "blosc2_cbuffer_sizes": (C.c_int, [_U8P, C.POINTER(C.c_int32), C.POINTER(C.c_int32), C.POINTER(C.c_int32)]),
    "blosc2_compress_ctx": (C.c_int, [_P, C.c_char_p, C.c_int32, C.c_void_p, C.c_int32]),
    "blosc2_chunk_zeros": (C.c_int, [CParams, C.c_int32, C.c_void_p, C.c_int32]),
    "blosc2_chunk_nans": (C.c_int, [CParams, C.c_int32, C.c_void_p, C.c_int32]),
    "blosc2_chunk_uninit": (C.c_int, [CParams, C.c_int32, C.c_void_p, C.c_int32]),
    "blosc2_chunk_repeatval": (C.c_int, [CParams, C.c_int32, C.c_void_p, C.c_int32, C.c_void_p]),
    "blosc2_meta_add": (C.c_int, [_P, C.c_char_p, C.c_char_p, C.c_int32]),
    "blosc2_meta_update": (C.c_int, [_P, C.c_char_p, C.c_char_p, C.c_int32]),
    "blosc2_vlmeta_add": (C.c_int, [_P, C.c_char_p, C.c_char_p, C.c_int32, C.c_void_p]),
    "blosc2_vlmeta_update": (C.c_int, [_P, C.c_char_p, C.c_char_p, C.c_int32, C.c_void_p]),
    "blosc2_vlmeta_delete": (C.c_int, [_P, C.c_char_p]),
    "blosc2_vlmeta_get": (C.c_int, [_P, C.c_char_p, C.POINTER(_U8P), C.POINTER(C.c_int32)]),
    "blosc2_vlmeta_get_names": (C.c_int, [_P, C.POINTER(C.c_char_p)]),
}

_libc = C.CDLL(None)
_libc.free.argtypes = [C.c_void_p]


class Api:
    """The frame C API of one library (ours or the reference), typed."""

    def __init__(self, cdll, name):
        self.name = name
        self.lib = cdll
        for fn, (res, args) in _SIGS.items():
            f = getattr(cdll, fn)
            f.restype, f.argtypes = res, args
            setattr(self, fn.replace("blosc2_", "", 1), f)
        self.init()


# ---------------------------------------------------------------- reading
def _i64(p, off):
    return C.c_int64.from_address(p + off).value


def _i32(p, off):
    return C.c_int32.from_address(p + off).value


def header(sc):
    return {
        "typesize": _i32(sc, OFF_TYPESIZE),
        "chunksize": _i32(sc, OFF_CHUNKSIZE),
        "nchunks": _i64(sc, OFF_NCHUNKS),
        "nbytes": _i64(sc, OFF_NBYTES),
    }


def metalayers(sc):
    """{name: raw content} from schunk->metalayers[] (what the inline blosc2_meta_get reads)."""
    n = C.c_uint16.from_address(sc + OFF_NMETALAYERS).value
    out = {}
    for i in range(n):
        m = C.c_void_p.from_address(sc + OFF_METALAYERS + 8 * i).value
        name = C.c_char_p.from_address(m).value
        content = C.c_void_p.from_address(m + 8).value
        out[name.decode()] = C.string_at(content, _i32(m, 16))
    return out


def vlmetalayers(api, sc):
    n = C.c_int16.from_address(sc + OFF_NVLMETALAYERS).value
    names = (C.c_char_p * max(n, 1))()
    assert api.vlmeta_get_names(sc, names) == n
    out = {}
    for nm in names[:n]:
        p, ln = _U8P(), C.c_int32()
        rc = api.vlmeta_get(sc, nm, C.byref(p), C.byref(ln))
        assert rc >= 0, (api.name, nm, rc)
        out[nm.decode()] = C.string_at(p, ln.value)
        _libc.free(p)
    return out


def chunk_nbytes(api, sc, i):
    p, nf = _U8P(), C.c_bool()
    cb = api.schunk_get_chunk(sc, i, C.byref(p), C.byref(nf))
    assert cb > 0, (api.name, "get_chunk", i, cb)
    nb, cbytes, bs = C.c_int32(), C.c_int32(), C.c_int32()
    assert api.cbuffer_sizes(p, C.byref(nb), C.byref(cbytes), C.byref(bs)) >= 0
    if nf.value:
        _libc.free(p)
    return nb.value


def chunks(api, sc):
    out = []
    for i in range(_i64(sc, OFF_NCHUNKS)):
        nb = chunk_nbytes(api, sc, i)
        buf = C.create_string_buffer(max(nb, 1))
        n = api.schunk_decompress_chunk(sc, i, buf, nb)
        assert n == nb, (api.name, "decompress_chunk", i, n, nb)
        out.append(buf.raw[:nb])
    return out


def slices(api, sc, ranges):
    """get_slice_buffer over item ranges (fixed-chunksize frames only)."""
    ts = _i32(sc, OFF_TYPESIZE)
    out = []
    for a, b in ranges:
        buf = C.create_string_buffer(max((b - a) * ts, 1))
        rc = api.schunk_get_slice_buffer(sc, a, b, buf)
        assert rc >= 0, (api.name, "get_slice_buffer", a, b, rc)
        out.append(buf.raw[: (b - a) * ts])
    return out


def dump(api, sc, ranges=()):
    assert sc, f"{api.name}: could not open the frame"
    try:
        return {
            "header": header(sc),
            "chunks": chunks(api, sc),
            "slices": slices(api, sc, ranges),
            "meta": metalayers(sc),
            "vlmeta": vlmetalayers(api, sc),
        }
    finally:
        api.schunk_free(sc)


def open_frame(api, kind, where):
    """kind: 'file' (cframe or sframe path), ('offset', path, off), or 'buffer' (bytes)."""
    if kind == "buffer":
        return api.schunk_from_buffer(where, len(where), True)
    if kind == "offset":
        path, off = where
        return api.schunk_open_offset(path.encode(), off)
    return api.schunk_open(str(where).encode())


def unpack_vlmeta(d):
    return {k: msgpack.unpackb(v) for k, v in d.items()}


# ---------------------------------------------------------------- writing
def cparams(api, codec, filters, clevel, typesize, use_dict=False, blocksize=0, nthreads=1, codec_meta=0):
    cp = api.get_blosc2_cparams_defaults()
    cp.compcode, cp.clevel, cp.typesize = codec, clevel, typesize
    cp.compcode_meta = codec_meta
    cp.use_dict, cp.blocksize, cp.nthreads = int(use_dict), blocksize, nthreads
    fl = [0] * 6
    fm = [0] * 6
    for i, f in enumerate(filters):
        slot = 6 - len(filters) + i
        if isinstance(f, tuple):
            f, meta = f
            fm[slot] = meta
        fl[slot] = f
    cp.filters[:] = fl
    cp.filters_meta[:] = fm
    return cp


class Writer:
    """A schunk being written through one library's C API."""

    def __init__(self, api, cp, contiguous=True, urlpath=None):
        self.api = api
        self.cp = cp
        self.dp = api.get_blosc2_dparams_defaults()
        self.st = Storage(contiguous, urlpath.encode() if urlpath else None, C.pointer(self.cp), C.pointer(self.dp), None)
        self.sc = api.schunk_new(C.byref(self.st))
        assert self.sc, f"{api.name}: schunk_new failed"

    def compress(self, data):
        out = C.create_string_buffer(len(data) + 32 + 64)
        n = self.api.compress_ctx(C.c_void_p.from_address(self.sc + OFF_CCTX).value, data, len(data), out, len(out))
        assert n > 0, (self.api.name, "compress_ctx", n)
        return out.raw[:n]

    def append(self, data):
        assert self.api.schunk_append_buffer(self.sc, data, len(data)) > 0, self.api.name

    def append_chunk(self, data):
        assert self.api.schunk_append_chunk(self.sc, self.compress(data), True) > 0, self.api.name

    def insert(self, i, data):
        assert self.api.schunk_insert_chunk(self.sc, i, self.compress(data), True) > 0, self.api.name

    def update(self, i, data):
        assert self.api.schunk_update_chunk(self.sc, i, self.compress(data), True) > 0, self.api.name

    def delete(self, i):
        assert self.api.schunk_delete_chunk(self.sc, i) >= 0, self.api.name

    def reorder(self, order):
        arr = (C.c_int64 * len(order))(*order)
        assert self.api.schunk_reorder_offsets(self.sc, arr) >= 0, self.api.name

    def fill_special(self, nitems, kind, chunksize):
        rc = self.api.schunk_fill_special(self.sc, nitems, kind, chunksize)
        assert rc >= 0, (self.api.name, "fill_special", rc)

    def append_special(self, kind, nbytes, value=None):
        """Appends a special chunk made by blosc2_chunk_zeros (kind 1), _nans (2), _repeatval (3,
        with `value` bytes of one item) or _uninit (4)."""
        out = C.create_string_buffer(64 + self.cp.typesize)
        if kind == 3:
            n = self.api.chunk_repeatval(self.cp, nbytes, out, len(out), value)
            assert n == 32 + self.cp.typesize, (self.api.name, "repeatval chunk", n)
        else:
            make = {1: self.api.chunk_zeros, 2: self.api.chunk_nans, 4: self.api.chunk_uninit}[kind]
            n = make(self.cp, nbytes, out, len(out))
            assert n == 32, (self.api.name, "special chunk", n)
        assert self.api.schunk_append_chunk(self.sc, out.raw[:n], True) > 0, self.api.name

    def meta(self, name, content):
        assert self.api.meta_add(self.sc, name.encode(), content, len(content)) >= 0, self.api.name

    def vlmeta(self, name, content):
        assert self.api.vlmeta_add(self.sc, name.encode(), content, len(content), None) >= 0, self.api.name

    def cbytes(self):
        return _i64(self.sc, OFF_CBYTES)

    def to_buffer(self):
        p, nf = _U8P(), C.c_bool()
        n = self.api.schunk_to_buffer(self.sc, C.byref(p), C.byref(nf))
        assert n > 0, (self.api.name, "to_buffer", n)
        data = C.string_at(p, n)
        if nf.value:
            _libc.free(p)
        return data

    def append_file(self, path):
        off = self.api.schunk_append_file(self.sc, path.encode())
        assert off >= 0, (self.api.name, "append_file", off)
        return off

    def free(self):
        self.api.schunk_free(self.sc)
        self.sc = None


def seed_of(*parts):
    """A seed fixed by the test case's parameters, so every run makes the same frames."""
    return zlib.crc32(repr(parts).encode())


def sample_data(rng, nitems, typesize):
    """Compressible but not trivial bytes: a slow ramp, small noise, and some runs."""
    if typesize in (4, 8):
        dt = np.float32 if typesize == 4 else np.float64
        x = np.cumsum(rng.normal(0, 1, nitems)).astype(dt)
        x[rng.integers(0, nitems, nitems // 50)] = 0
        return x.tobytes()
    ramp = (np.arange(nitems * typesize) // (typesize * 7)).astype(np.uint8)
    noise = rng.integers(0, 4, nitems * typesize, dtype=np.uint8)
    return (ramp + noise).tobytes()
