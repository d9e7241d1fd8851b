#!/usr/bin/env bash
# Runs the README's command-line example (between the cli-example markers) in a scratch dir, with
# the built b2frame and the project's python-blosc2 first on PATH.
# Usage: bash tests/cli-example.sh [DIR-WITH-b2frame]   (default: $CARGO_TARGET_DIR or target/, release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bindir=$(cd "${1:-${CARGO_TARGET_DIR:-$root/target}/release}" && pwd)
[ -x "$bindir/b2frame" ] || { echo "no b2frame binary in $bindir (cargo build --release)" >&2; exit 1; }
export PATH="$bindir:$root/.venv/bin:$PATH"
ex=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-cli-example.XXXXXX")
trap 'rm -rf "$ex"' EXIT
awk '/<!-- cli-example -->/{f=1;next} /<!-- \/cli-example -->/{f=0} f && !/^```/' "$root/README.md" > "$ex/example.sh"
[ -s "$ex/example.sh" ] || { echo "README has no cli-example block" >&2; exit 1; }
cd "$ex"
bash -euo pipefail -x example.sh
