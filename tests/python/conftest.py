"""Fixtures for interop tests between libb2frame and the real c-blosc2.

`ours` is libb2frame.so: $B2FRAME_LIB, else target/release/libb2frame.so, else any
target-*/release/libb2frame.so (build it with `cargo build --release`). `ref` is the
libblosc2.so.9 shipped in the project's .venv python-blosc2 wheel ($B2FRAME_REF_LIB overrides).
A missing library fails the tests instead of skipping them.
"""

import ctypes
import glob
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _find_ours():
    env = os.environ.get("B2FRAME_LIB")
    if env:
        return pathlib.Path(env)
    cands = [ROOT / "target" / "release" / "libb2frame.so"]
    cands += [pathlib.Path(p) for p in sorted(glob.glob(str(ROOT / "target-*" / "release" / "libb2frame.so")))]
    for c in cands:
        if c.exists():
            return c
    pytest.fail("libb2frame.so not found: run `cargo build --release` or set B2FRAME_LIB")


def _find_ref():
    env = os.environ.get("B2FRAME_REF_LIB")
    if env:
        return pathlib.Path(env)
    hits = glob.glob(str(ROOT / ".venv" / "lib" / "python3*" / "site-packages" / "blosc2" / "lib" / "libblosc2.so.9"))
    if not hits:
        pytest.fail("reference libblosc2.so.9 not found in .venv (run scripts/setup-env.sh)")
    return pathlib.Path(hits[0])


@pytest.fixture(scope="session")
def ours():
    lib = ctypes.CDLL(str(_find_ours()))
    return lib


@pytest.fixture(scope="session")
def ref():
    return ctypes.CDLL(str(_find_ref()))


@pytest.fixture(scope="session")
def libc():
    return ctypes.CDLL(None)


@pytest.fixture(scope="module")
def apis(ours, ref):
    """The interop matrix's C API view (test_interop_common.Api) of both libraries."""
    from test_interop_common import Api

    return Api(ours, "b2frame"), Api(ref, "reference")
