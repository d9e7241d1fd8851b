"""`BLOSC_INFO` output: with the variable set, c-blosc2 prints one line on stderr when its
memory-mapped backend opens a file ("Opened memory-mapped file ... mapping size ..."), and
python-blosc2's tests look for it. Each library opens the same frame through
`blosc2_schunk_open_udio` with the mmap backend in a child process (stderr is the process's own);
the lines must be identical, and absent without `BLOSC_INFO`.
"""

import os
import subprocess
import sys

import blosc2
import numpy as np

from conftest import _find_ours, _find_ref

CHILD = r"""
import ctypes as C, sys
lib = C.CDLL(sys.argv[1])
lib.blosc2_init()
class MM(C.Structure):
    _fields_ = [("mode", C.c_char_p), ("initial_mapping_size", C.c_int64), ("rest", C.c_uint8 * 80)]
class IO(C.Structure):
    _fields_ = [("id", C.c_uint8), ("name", C.c_char_p), ("params", C.c_void_p)]
lib.blosc2_get_blosc2_stdio_mmap_defaults.restype = MM
mm = lib.blosc2_get_blosc2_stdio_mmap_defaults()
mm.mode = sys.argv[3].encode()
mm.initial_mapping_size = int(sys.argv[4])
io = IO(1, b"filesystem_mmap", C.cast(C.pointer(mm), C.c_void_p))
lib.blosc2_schunk_open_udio.restype = C.c_void_p
lib.blosc2_schunk_open_udio.argtypes = [C.c_char_p, C.c_void_p]
sc = lib.blosc2_schunk_open_udio(sys.argv[2].encode(), C.byref(io))
assert sc, "open failed"
lib.blosc2_schunk_free.argtypes = [C.c_void_p]
lib.blosc2_schunk_free(sc)
"""


def _stderr(lib, path, mode, initial, info):
    env = dict(os.environ)
    env.pop("BLOSC_INFO", None)
    env.pop("BLOSC_TRACE", None)
    if info:
        env["BLOSC_INFO"] = "1"
    r = subprocess.run([sys.executable, "-c", CHILD, str(lib), str(path), mode, str(initial)],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stderr.splitlines()


def test_mmap_open_info_line(tmp_path):
    ours, ref = _find_ours(), _find_ref()
    checked = 0
    for mode, initial in [("r", 1 << 30), ("r+", 1 << 20), ("c", 1 << 30), ("r+", 4096)]:
        path = tmp_path / f"f-{checked}.b2frame"
        s = blosc2.SChunk(chunksize=4000, urlpath=str(path), contiguous=True, mode="w")
        for k in range(checked + 1):
            s.append_data(np.arange(1000, dtype="i4") + k)
        del s
        theirs = _stderr(ref, path, mode, initial, True)
        mine = _stderr(ours, path, mode, initial, True)
        assert len(theirs) == 1 and theirs[0].startswith("[INFO] - Opened memory-mapped file "), theirs
        assert f" in mode {mode} with an mapping size of " in theirs[0]
        assert mine == theirs
        assert _stderr(ours, path, mode, initial, False) == []
        assert _stderr(ref, path, mode, initial, False) == []
        checked += 1
    print(f"BLOSC_INFO mmap line: {checked} opens, same line as c-blosc2")
