#!/usr/bin/env bash
# Builds the Go bindings against an installed b2frame (through pkg-config), runs `go vet` and
# `go test`, then runs examples/go.
# Usage: bash bindings/go/test.sh PREFIX
# Installs Debian's golang-go (Go 1.19) when `go` is missing.
set -euo pipefail
# Name the command that failed: CI may show only the last lines of the run.
trap 'rc=$?; echo "bindings/go/test.sh: line $LINENO: \"$BASH_COMMAND\" failed (exit $rc)" >&2' ERR
prefix="${1:?usage: bindings/go/test.sh PREFIX}"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Settings inherited from the caller's environment or a user go.env must not steer this build.
unset GOROOT GOPATH GOBIN GOFLAGS GOOS GOARCH GOEXPERIMENT CGO_CFLAGS CGO_LDFLAGS
export GOENV=off GOTOOLCHAIN=local
go_works() { go version >/dev/null 2>&1 && [ -d "$(go env GOROOT 2>/dev/null)" ]; }
if ! go_works; then
  echo "no working go on PATH ($(command -v go || echo none)): installing Debian's golang-go"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq golang-go >/dev/null 2>&1 || {
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq golang-go >/dev/null
  }
  # Debian's go, whatever else is earlier on PATH.
  [ -x /usr/lib/go/bin/go ] && export PATH="/usr/lib/go/bin:$PATH"
  hash -r
  if ! go_works; then
    # Installed but damaged (e.g. files of the Go tree missing): reinstall every golang package.
    pkgs=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 'golang*' 2>/dev/null | awk '$1 == "ii" {print $2}')
    echo "go still does not work; reinstalling:" ${pkgs:-golang-go}
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --reinstall ${pkgs:-golang-go} >/dev/null
    hash -r
  fi
  go_works || { echo "go still does not work after installing golang-go" >&2; go version >&2 || true; exit 1; }
fi
go version
go env GOROOT CGO_ENABLED CC
pc=$(find "$prefix" -name b2frame.pc -print -quit)
[ -n "$pc" ] || { echo "no b2frame.pc under $prefix" >&2; exit 1; }
libdir=$(cd "$(dirname "$pc")/.." && pwd)
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# The test binaries find the installed library at run time through LD_LIBRARY_PATH.
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "pkg-config b2frame: $(pkg-config --cflags --libs b2frame)"
export B2FRAME_PYTHON="${B2FRAME_PYTHON:-$root/.venv/bin/python}"
# No network: the bindings have no third-party modules.
export GOFLAGS="-mod=mod -buildvcs=false" GOPROXY=off CGO_ENABLED=1
# A build cache of its own for each run, unless the caller chose one: Go's cache key for a cgo
# package leaves out the `pkg-config` output, so a cache shared between runs links this run's test
# binary with an earlier run's -L (a prefix since deleted): "cannot find -lb2frame".
if [ -z "${GOCACHE:-}" ]; then
  GOCACHE=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-go-cache.XXXXXX")
  trap 'rm -rf "$GOCACHE"' EXIT
fi
export GOCACHE
export GOPATH="${TMPDIR:-/tmp}/b2frame-gopath"
cd "$here"
go vet ./...
go test -count=1 -v ./...
# examples/go, the Go example the README and the book show: a module of its own over these
# bindings (its go.mod replaces the module with bindings/go). Its first line of output is checked.
out=$(cd "$root/examples/go" && go run .)
printf '%s\n' "$out"
first=$(printf '%s\n' "$out" | head -n1)
[ "$first" = "3 [998 999 1000 1001] m" ] || { echo "examples/go printed '$first', not '3 [998 999 1000 1001] m'" >&2; exit 1; }
