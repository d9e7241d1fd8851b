#!/usr/bin/env bash
# Runs the Julia bindings' tests and examples/julia/hello.jl against an installed b2frame.
# Usage: bash bindings/julia/test.sh PREFIX
# Julia cannot be installed by this project's scripts; without `julia` on PATH this prints one
# line saying the tests were skipped and why, and exits 0.
set -euo pipefail
prefix="${1:?usage: bindings/julia/test.sh PREFIX}"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if ! command -v julia >/dev/null 2>&1; then
  echo "SKIPPED: Julia bindings tests (julia is not on PATH; install Julia >= 1.6 to run them)"
  exit 0
fi
lib=$(find "$prefix" -name 'libb2frame.so' -print -quit)
[ -n "$lib" ] || { echo "no libb2frame.so under $prefix" >&2; exit 1; }
export B2FRAME_LIB="$lib"
export B2FRAME_PYTHON="${B2FRAME_PYTHON:-$root/.venv/bin/python}"
julia --startup-file=no --project="$here" -e 'using Pkg; Pkg.instantiate(); Pkg.test()'
# examples/julia/hello.jl, the Julia example the README and the book show.
julia --startup-file=no --project="$here" "$root/examples/julia/hello.jl"
