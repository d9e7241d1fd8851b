#!/usr/bin/env bash
# Regenerates include/b2frame.h from src/capi with cbindgen 0.29.4 (the version pinned as a
# dev-dependency, which tests/capi/conventions.rs uses to detect a stale header). Uses the cbindgen
# CLI when exactly that version is installed
# (cargo install cbindgen --version 0.29.4 --locked), else the pinned crate through the test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
want="0.29.4"
if command -v cbindgen >/dev/null 2>&1 && [ "$(cbindgen --version)" = "cbindgen $want" ]; then
  cbindgen --quiet --config cbindgen.toml --output include/b2frame.h src/capi/mod.rs
else
  echo "gen-header: cbindgen $want CLI not found; generating through the pinned crate" >&2
  B2FRAME_WRITE_HEADER=1 cargo test --quiet --test capi conventions::b2frame_h_is_up_to_date >/dev/null
fi
echo "gen-header: wrote include/b2frame.h"
