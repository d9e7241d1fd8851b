"""Reads plugin frames with whatever python-blosc2 `import blosc2` finds, and checks each against
its data: `read_frames.py DIR NAME...` opens DIR/NAME.b2nd and compares it with DIR/NAME.raw
(written beside it by write_frames.py). The plugin packages are imported first, as their users
do. Run by scripts/python-blosc2-suite.sh with python-blosc2 built on libb2frame, and with the
reference python-blosc2 on frames the former wrote."""
import importlib
import os
import sys

import blosc2
import numpy as np

out, names = sys.argv[1], sys.argv[2:]
for name in names:
    plugin = "blosc2_openhtj2k" if name == "openhtj2k" else f"blosc2_{name}"
    importlib.import_module(plugin)
    arr = blosc2.open(f"{out}/{name}.b2nd")
    back = arr[:]
    want = np.fromfile(f"{out}/{name}.raw", dtype=back.dtype).reshape(back.shape)
    assert np.array_equal(back, want), f"{name}: the data read differs from what was written"
    print(f"read {name}: {arr.shape} {back.dtype}, codec {arr.schunk.cparams.codec}")

# With B2FRAME_EXPECT_LIB=libb2frame: the Blosc2 library this process mapped is libb2frame, and
# no c-blosc2 came in beside it (the plugins load a libblosc2.so* themselves).
if os.environ.get("B2FRAME_EXPECT_LIB") == "libb2frame":
    with open("/proc/self/maps") as f:
        libs = {os.path.basename(line.split()[-1]) for line in f if len(line.split()) > 5}
    assert any(n.startswith("libb2frame.so") for n in libs), f"libb2frame is not mapped: {sorted(libs)}"
    others = sorted(n for n in libs if n.startswith("libblosc2."))
    assert not others, f"another Blosc2 library is mapped: {others}"
    print("mapped: libb2frame, no other Blosc2 library")
