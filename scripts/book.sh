#!/usr/bin/env bash
# Builds the book (docs/, with mdBook) into target/book and checks its links
# (scripts/book-check.py), then runs the self-test of the script that writes BENCHMARKS.md's
# tables (scripts/bench-tables.py selftest). A stage of scripts/test.sh.
# Usage: bash scripts/book.sh [--open]
#
# mdBook is installed at the pinned version below with `cargo install --locked` into cargo's bin
# directory ($CARGO_HOME/bin, default ~/.cargo/bin: outside the clone, so later runs and fresh
# clones on the same machine find it), only when that version is not already there. Without the
# serve and watch features, which the build does not use.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
MDBOOK_VERSION=0.5.4
bindir="${CARGO_HOME:-$HOME/.cargo}/bin"
mdbook="$bindir/mdbook"

if ! { [ -x "$mdbook" ] && "$mdbook" --version 2>/dev/null | grep -qx "mdbook v$MDBOOK_VERSION"; }; then
  echo "installing mdbook $MDBOOK_VERSION into $bindir"
  cargo install --locked --quiet "mdbook@$MDBOOK_VERSION" --no-default-features --features search
fi
"$mdbook" --version

out="${CARGO_TARGET_DIR:-$root/target}/book"
rm -rf "$out"
"$mdbook" build "$root/docs" --dest-dir "$out"
python3 "$root/scripts/book-check.py" "$out"
echo "book: $out/index.html"
python3 "$root/scripts/bench-tables.py" selftest
if [ "${1:-}" = --open ]; then
  xdg-open "$out/index.html" 2>/dev/null || true
fi
