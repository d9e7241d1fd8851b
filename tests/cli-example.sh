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

# Then every example the commands' --help shows (cli/src/main.rs), each in a fresh directory
# holding the files they name: the frames above, a cframe at byte 4096 of a larger file, and a
# cframe cut short. An example must exit 0; one that pipes into `head` may also end with the
# SIGPIPE status (141) of the command before `head`.
set +x
mkdir base
cp data.b2frame base/ && cp data.b2frame base/floats.b2frame && cp -r data.b2sframe base/
{ head -c 4096 /dev/zero; cat data.b2frame; } >base/container.bin
head -c "$(($(wc -c <data.b2frame) - 50))" data.b2frame >base/damaged.b2frame
cmds=$(b2frame --help | awk '/^Commands:/{f=1; next} f && /^  [a-z]/{print $1} f && /^$/{exit}' | grep -vx help)
n=0
for c in $cmds; do
  while IFS= read -r example; do
    n=$((n + 1))
    rm -rf run && cp -r base run
    echo "+ $example"
    rc=0
    (cd run && bash -o pipefail -c "$example" >/dev/null </dev/null) || rc=$?
    if [ "$rc" != 0 ] && ! { [ "$rc" = 141 ] && [[ "$example" == *"| head"* ]]; }; then
      echo "the example of b2frame $c --help failed (exit $rc): $example" >&2
      exit 1
    fi
  done < <(b2frame "$c" --help | awk '/^Examples:/{f=1; next} f && /^  b2frame /{sub(/^  /, ""); print; next} f && !/^  /{exit}')
done
[ "$n" -ge 14 ] || { echo "found only $n examples in the commands' --help" >&2; exit 1; }
echo "$n examples of the commands' --help ran"
