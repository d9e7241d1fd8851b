#!/usr/bin/env bash
# Builds python-blosc2 from its source distribution against libb2frame (its USE_SYSTEM_BLOSC2=1
# build, which finds a `blosc2` pkg-config module) and runs python-blosc2's own test suite on it.
# A manual check, not a stage of scripts/test.sh: python-blosc2's CMake always pulls miniexpr,
# which pulls sleef and minicc (a tinycc fork), from GitHub, so their sources must be given here.
# Everything is built OUTSIDE the project, in a temporary directory; nothing of python-blosc2,
# miniexpr, sleef or tinycc is ever copied into the tree. See README, "Conformance".
#
# Usage: scripts/python-blosc2-suite.sh SDIST MINIEXPR_DIR SLEEF_DIR TINYCC_DIR
#   SDIST         python-blosc2's sdist (blosc2-X.Y.Z.tar.gz) or its unpacked directory
#                 (`pip download blosc2==4.14.1 --no-binary blosc2 --no-deps`)
#   MINIEXPR_DIR  github.com/Blosc/miniexpr at the commit python-blosc2's CMakeLists.txt pins
#   SLEEF_DIR     github.com/shibatch/sleef at the commit miniexpr's cmake/MiniexprFetchDeps.cmake pins
#   TINYCC_DIR    github.com/Blosc/minicc at the commit miniexpr's cmake/MiniexprFetchDeps.cmake pins
# Env: PYB2_WORK=DIR       work directory (default: a new mktemp -d; kept at the end, it holds the
#                          venvs and the logs);
#      PYB2_PREFIX=DIR     use an existing libb2frame install made with
#                          `scripts/install.sh DIR -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON` (default: make
#                          one in the work directory);
#      PYB2_PYTEST="ARGS"  pytest arguments (default: `tests -n 2`), run in the unpacked sdist;
#      PYB2_WHEEL=1        also run the same pytest arguments on the registry's wheel of the same
#                          version (its bundled c-blosc2) in a venv with the same test packages,
#                          for the baseline counts;
#      PYTHON=python3      the interpreter the venvs are made from.
# Prints `libb2frame: N passed, N failed, N skipped` (and `wheel: ...` with PYB2_WHEEL=1).
# Exit status: 0 when the suite ran on libb2frame (whatever its counts), 2 on a setup error.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: python-blosc2-suite.sh SDIST MINIEXPR_DIR SLEEF_DIR TINYCC_DIR"
sdist="${1:?$usage}"
miniexpr=$(cd "${2:?$usage}" && pwd) || exit 2
sleef=$(cd "${3:?$usage}" && pwd) || exit 2
tinycc=$(cd "${4:?$usage}" && pwd) || exit 2
py="${PYTHON:-python3}"
pytest_args="${PYB2_PYTEST:-tests -n 2}"
work="${PYB2_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/b2frame-pyb2.XXXXXX")}"
mkdir -p "$work" && work=$(cd "$work" && pwd)
die() { echo "python-blosc2-suite: $*" >&2; exit 2; }
for d in "$miniexpr" "$sleef" "$tinycc"; do [ -f "$d/CMakeLists.txt" ] || die "no CMakeLists.txt in $d"; done

# 1. The python-blosc2 sources.
if [ -d "$sdist" ]; then
  src=$(cd "$sdist" && pwd)
else
  mkdir -p "$work/src" && tar -xzf "$sdist" -C "$work/src" || die "cannot unpack $sdist"
  src=$(ls -d "$work"/src/*/ | head -n1) && src=${src%/}
fi
[ -f "$src/pyproject.toml" ] || die "no pyproject.toml in $src"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/pyproject.toml" | head -n1)
echo "python-blosc2 $version from $src; work directory $work"

# 2. libb2frame, installed with the compat files (lib/pkgconfig/blosc2.pc).
prefix="${PYB2_PREFIX:-}"
if [ -z "$prefix" ]; then
  prefix="$work/prefix"
  B2FRAME_BUILD_DIR="$work/b2frame-build" bash "$root/scripts/install.sh" "$prefix" \
    -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON >"$work/install.log" 2>&1 || die "install failed, see $work/install.log"
fi
prefix=$(cd "$prefix" && pwd)
pcdir=$(dirname "$(find "$prefix" -name blosc2.pc -print -quit)")
[ -f "$pcdir/blosc2.pc" ] || die "no blosc2.pc under $prefix (install with -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON)"
libdir=$(cd "$pcdir/.." && pwd)

# 3. A venv with the build and test packages (the same test packages as the wheel's venv below).
test_pkgs=(pytest pytest-xdist psutil)
make_venv() { # make_venv DIR PACKAGES...
  local dir=$1; shift
  [ -x "$dir/bin/python" ] || "$py" -m venv "$dir" || return 1
  "$dir/bin/python" -m pip install -q "$@" >>"$work/pip.log" 2>&1
}
make_venv "$work/venv" scikit-build-core cython numpy ninja cmake "${test_pkgs[@]}" \
  ndindex msgpack numexpr pydantic "httpx[http2]" rich threadpoolctl || die "pip failed, see $work/pip.log"

# 4. Build python-blosc2 against libb2frame; FetchContent gets the three local source trees.
echo "building python-blosc2 against $libdir/libb2frame.so ..."
# The venv's bin first: miniexpr configures tinycc in a sub-CMake that looks for ninja on PATH.
if ! PATH="$work/venv/bin:$PATH" USE_SYSTEM_BLOSC2=1 PKG_CONFIG_PATH="$pcdir" \
  CMAKE_ARGS="-DFETCHCONTENT_FULLY_DISCONNECTED=ON -DFETCHCONTENT_SOURCE_DIR_MINIEXPR=$miniexpr -DFETCHCONTENT_SOURCE_DIR_SLEEF=$sleef -DFETCHCONTENT_SOURCE_DIR_TINYCC=$tinycc" \
  "$work/venv/bin/python" -m pip install --no-build-isolation --no-deps --force-reinstall -v "$src" >"$work/build.log" 2>&1; then
  die "build failed, see $work/build.log"
fi

# 5. The extension must load libb2frame, and the package must not carry a libblosc2 of its own.
sp=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
ext=$(ls "$sp"/blosc2/blosc2_ext*.so | head -n1)
if ! LD_LIBRARY_PATH="$libdir" ldd "$ext" | grep -q "libb2frame.so.1 => $libdir/"; then
  die "$ext does not link $libdir/libb2frame.so.1: $(ldd "$ext" | grep -i -E 'blosc|b2frame')"
fi
if find "$sp/blosc2" -name 'libblosc2*' | grep -q .; then die "the package bundles a libblosc2"; fi
loaded=$(cd "$work" && LD_LIBRARY_PATH="$libdir" "$work/venv/bin/python" -c '
import blosc2
print(" ".join(sorted({l.split()[-1] for l in open("/proc/self/maps") if "b2frame" in l or "libblosc2" in l})))')
case "$loaded" in
  "$libdir"/libb2frame.so*) echo "blosc2_ext loads: $loaded" ;;
  *) die "python -c 'import blosc2' loads: '$loaded'" ;;
esac

# 6. The suite, in the unpacked sdist (its conftest.py and pytest.ini); counts from the last line.
summary() { # summary LOG -> pytest's closing line (`N failed, N passed, ... in Ts`)
  grep -E '(passed|failed|skipped|errors?|no tests ran).* in [0-9.]+s' "$1" | tail -n1
}
counts() { # counts LOG -> "N passed, N failed, N skipped" (missing kinds are 0)
  local last
  last=$(summary "$1")
  printf '%s passed, %s failed, %s skipped, %s errors' \
    "$(grep -oE '[0-9]+ passed' <<<"$last" | grep -oE '[0-9]+' || echo 0)" \
    "$(grep -oE '[0-9]+ failed' <<<"$last" | grep -oE '[0-9]+' || echo 0)" \
    "$(grep -oE '[0-9]+ skipped' <<<"$last" | grep -oE '[0-9]+' || echo 0)" \
    "$(grep -oE '[0-9]+ errors?' <<<"$last" | grep -oE '[0-9]+' || echo 0)"
}
run_suite() { # run_suite TAG PYTHON [LD_LIBRARY_PATH]
  local tag=$1 python=$2 ldp=${3:-} log="$work/pytest-$1.log"
  echo "running python-blosc2's suite on $tag: pytest $pytest_args (log: $log) ..."
  # shellcheck disable=SC2086
  (cd "$src" && LD_LIBRARY_PATH="$ldp" "$python" -m pytest $pytest_args -q -rfE \
    --junitxml="$work/pytest-$tag.xml" >"$log" 2>&1)
  grep -E '^(FAILED|ERROR) ' "$log" | sed "s/^/  $tag: /"
  echo "$tag: $(counts "$log") ($(summary "$log" | grep -oE 'in [0-9.]+s'))"
}
run_suite libb2frame "$work/venv/bin/python" "$libdir"

if [ "${PYB2_WHEEL:-0}" = 1 ]; then
  make_venv "$work/venv-wheel" "blosc2==$version" "${test_pkgs[@]}" || die "pip failed, see $work/pip.log"
  run_suite wheel "$work/venv-wheel/bin/python"
fi
echo "work directory (venvs, logs, junit xml): $work"
