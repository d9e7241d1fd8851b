"""b2nd_serialize_meta / b2nd_deserialize_meta: libb2frame against c-blosc2, byte for byte."""

import ctypes as C

import pytest

CASES = [
    ([400, 3], [110, 3], [57, 3], b"<f8", 0),
    ([], [], [], b"<f8", 0),
    ([10], [5], [2], None, 0),
    ([10], [5], [2], b"", 3),
    ([7] * 16, [3] * 16, [1] * 16, b"|u1", 0),
    ([-10, 2**40], [-5, 2**31 - 1], [0, 7], b"<i4" * 50, 127),
]


def serialize(lib, libc, shape, cs, bs, dtype, fmt):
    n = len(shape)
    out = C.POINTER(C.c_uint8)()
    sh = (C.c_int64 * max(1, n))(*shape)
    c = (C.c_int32 * max(1, n))(*cs)
    b = (C.c_int32 * max(1, n))(*bs)
    rc = lib.b2nd_serialize_meta(C.c_int8(n), sh, c, b, dtype, C.c_int8(fmt), C.byref(out))
    if rc <= 0:
        return rc, None
    data = bytes(out[:rc])
    libc.free(out)
    return rc, data


def deserialize(lib, libc, buf, want_dtype=True):
    nd = C.c_int8(-1)
    sh, cs, bs = (C.c_int64 * 16)(), (C.c_int32 * 16)(), (C.c_int32 * 16)()
    dt, fmt = C.c_char_p(), C.c_int8(9)
    args = (C.byref(dt), C.byref(fmt)) if want_dtype else (None, None)
    rc = lib.b2nd_deserialize_meta(buf, C.c_int32(len(buf)), C.byref(nd), sh, cs, bs, *args)
    if rc < 0:
        return (rc,)
    n = nd.value
    d = dt.value if want_dtype else None
    return rc, n, list(sh[:n]), list(cs[:n]), list(bs[:n]), d, fmt.value if want_dtype else None


@pytest.mark.parametrize("case", CASES)
def test_serialize_matches_reference(ours, ref, libc, case):
    assert serialize(ours, libc, *case) == serialize(ref, libc, *case)


@pytest.mark.parametrize("case", CASES)
def test_deserialize_matches_reference(ours, ref, libc, case):
    _, buf = serialize(ref, libc, *case)
    for want_dtype in (True, False):
        assert deserialize(ours, libc, buf, want_dtype) == deserialize(ref, libc, buf, want_dtype)


def test_truncated_and_forged_metalayers_fail_like_reference(ours, ref, libc):
    _, buf = serialize(ref, libc, *CASES[0])
    for cut in range(1, len(buf)):
        assert deserialize(ours, libc, buf[:cut]) == deserialize(ref, libc, buf[:cut]), cut
    for pos, val in [(2, 17), (2, 0xFF), (45, 0xD9), (46, 0x80), (46, 0x7F)]:
        forged = bytearray(buf)
        forged[pos] = val
        assert deserialize(ours, libc, bytes(forged)) == deserialize(ref, libc, bytes(forged)), (pos, val)
