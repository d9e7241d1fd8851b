#!/usr/bin/env bash
# Installs what a fresh machine lacks for building and testing b2frame:
#   * cmake, pkg-config, make, g++ (Debian packages) for the install step, CTest, the consumer
#     builds and the header checks;
#   * libclang-dev: the zfp-sys crate (ZFP codecs, the default `zfp` feature) builds zfp with
#     cmake and generates its bindings with bindgen, which loads libclang;
#   * a Python venv in .venv with the pinned reference c-blosc2 (python-blosc2 wheel) and pytest.
# Idempotent: does nothing that is already done. Prints where the reference library is.
# `setup-env.sh --tools-only` installs just the build tools (what scripts/install.sh needs).
set -euo pipefail
tools_only=0
[ "${1:-}" = "--tools-only" ] && tools_only=1
here=$(cd "$(dirname "$0")/.." && pwd)

need_apt=()
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v make >/dev/null 2>&1 || need_apt+=(make)
# g++: scripts/abi-check.sh also compiles the headers as C++.
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
# libclang and clang's own headers (stddef.h) for bindgen (zfp-sys); LIBCLANG_PATH, when set,
# points to one the user provides.
if [ -z "${LIBCLANG_PATH:-}" ] && ! { ls /usr/lib/llvm-*/lib/libclang.so* \
    /usr/lib/llvm-*/lib/libclang-[0-9]*.so* >/dev/null 2>&1 \
    && ls /usr/lib/llvm-*/lib/clang/*/include/stddef.h >/dev/null 2>&1; }; then
  need_apt+=(libclang-dev)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup-env: installing ${need_apt[*]} with apt-get"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

[ "$tools_only" = 1 ] && exit 0

# rustfmt and clippy, for the format and lint stage of scripts/test.sh.
if command -v rustup >/dev/null 2>&1; then
  cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
  cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
fi

venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "setup-env: creating $venv"
  if ! python3 -m venv "$venv"; then
    # Debian/Ubuntu ship venv/ensurepip separately from python3.
    echo "setup-env: python3 -m venv failed; installing python3-venv with apt-get"
    rm -rf "$venv"
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    pyver=$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "python${pyver}-venv" >/dev/null \
      || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
fi
if ! "$venv/bin/python" -c "import blosc2, pytest" >/dev/null 2>&1 \
   || ! cmp -s "$here/scripts/requirements-test.txt" "$venv/.requirements-installed"; then
  echo "setup-env: installing the pinned reference c-blosc2 and test tools"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/scripts/requirements-test.txt"
  cp "$here/scripts/requirements-test.txt" "$venv/.requirements-installed"
fi
"$venv/bin/python" - <<'PY'
import os, blosc2
d = os.path.dirname(blosc2.__file__)
lib = os.path.join(d, "lib", "libblosc2.so.9")
if not os.path.exists(lib):
    raise SystemExit(f"setup-env: the reference library is missing at {lib}")
print(f"setup-env: reference c-blosc2 at {d}")
PY
