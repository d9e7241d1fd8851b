"""Writes the frames of the dynamic-plugin stage (scripts/plugins-test.sh) with python-blosc2 and
the plugin packages: `new` (python-blosc2 4.14.1, c-blosc2 3.3.5) writes htj2k, j2k and openzl
frames, `old` (python-blosc2 4.1.2, c-blosc2 2.23) grok, openhtj2k and a Btune-tuned one
(BTUNE_TRADEOFF set by the caller). Each NAME.b2nd comes with NAME.raw, the data as the writer
reads it back, and image.raw is the 64 x 64 test image."""
import sys

import blosc2
import numpy as np

which, out = sys.argv[1], sys.argv[2]
img = (np.add.outer(np.arange(64), np.arange(64)) % 256).astype(np.uint8)
img.tofile(f"{out}/image.raw")


def write(name, codec, data):
    cp = {"codec": codec, "nthreads": 1, "splitmode": blosc2.SplitMode.NEVER_SPLIT,
          "filters": [], "filters_meta": []}
    blosc2.asarray(data, chunks=data.shape, blocks=data.shape, cparams=cp,
                   urlpath=f"{out}/{name}.b2nd", mode="w")
    back = blosc2.open(f"{out}/{name}.b2nd")[:]
    assert np.array_equal(back, data), f"{name} is not lossless here"
    back.tofile(f"{out}/{name}.raw")


if which == "new":
    import blosc2_htj2k, blosc2_j2k, blosc2_openzl  # noqa: F401 (they register the codecs)
    write("htj2k", blosc2.Codec.HTJ2K, img)
    write("j2k", blosc2.Codec.J2K, img)
    write("openzl", blosc2.Codec.OPENZL, img)
else:
    import blosc2_grok, blosc2_openhtj2k  # noqa: F401
    write("grok", blosc2.Codec.GROK, img)
    # openhtj2k takes (components, rows, columns); other layouts crash its 0.1.2 encoder.
    blosc2_openhtj2k.set_params_defaults(transformation=1)
    write("openhtj2k", blosc2.Codec.OPENHTJ2K,
          (np.arange(3 * 64 * 64) % 251).astype(np.uint8).reshape(3, 64, 64))
    data = np.linspace(0, 100, 400_000)
    blosc2.asarray(data, chunks=(100_000,), urlpath=f"{out}/btune.b2nd", mode="w")
    data.tofile(f"{out}/btune.raw")
