#!/usr/bin/env bash
# python-blosc2's own test suite on libb2frame: a stage of scripts/test.sh, also run by hand.
#
# Builds python-blosc2 4.14.1 from its source distribution against an install of libb2frame (its
# USE_SYSTEM_BLOSC2 build, which finds the compat `blosc2` pkg-config module), then runs
# `pytest tests -n 2` in the unpacked sdist with the suite's optional test packages
# (scripts/python-blosc2-requirements.txt, pinned). Fails on any failed or erroring test but the
# known ones (KNOWN_FAILURES below), and when more tests skip than on the reference (a missing
# optional package silently skips whole files). See docs/testing/python-blosc2.md.
#
# Sources: python-blosc2's sdist and the three sources its CMake fetches from GitHub (miniexpr,
# sleef, minicc: unreachable from CI), in a directory laid out like ../shared/pysrc (the four
# archives below): PYB2_SRC=DIR, else ../shared/pysrc beside the repository. With neither, the
# stage says so and exits 77 (skipped). Their digests are pinned here. Everything is unpacked and
# built outside the tree; nothing of them is ever copied into the project.
#
# Caches, outside the clone (CI runs on fresh clones), under
# ${PYB2_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/b2frame/python-blosc2}:
#   venv-KEY   the test venv: KEY hashes the requirements file and the interpreter;
#   wheel-KEY  python-blosc2 built against libb2frame: KEY hashes the four sources' digests, the
#              libb2frame headers the extension compiles against (every file `blosc2.h` and `b2nd.h`
#              include, comments left out), the `blosc2` pkg-config flags, the build packages' versions (numpy,
#              Cython, scikit-build-core, cmake, ninja) and the interpreter's, the C compiler's
#              version and this script's build function. The extension links
#              libb2frame.so.1 dynamically and every run checks that it loads the library of that
#              run, so a wheel stays valid for any build of the library with the same headers;
#   wheelhouse the registry's files the venvs were made from (a new venv downloads only what changed).
# Entries unused for 30 days go.
#
# Env: PYB2_SRC=DIR      the sources (see above);
#      PYB2_PREFIX=DIR   an existing install made with
#                        `scripts/install.sh DIR -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON` (default: install
#                        into the work directory, with B2FRAME_BUILD_DIR as the CMake build dir when set);
#      PYB2_RUN="libb2frame wheel"  which libraries to run the suite on (default `libb2frame`;
#                        `wheel` is the registry's wheel with its own c-blosc2, installed in the venv);
#      PYB2_PYTEST="ARGS" pytest arguments (default `tests -n 2`); the checks of counts apply only
#                        to the default;
#      PYB2_WORK=DIR     work directory (default: a new temporary one, removed at the end unless
#                        the stage failed); PYB2_CACHE=DIR the cache; PYB2_REBUILD=1 ignores a
#                        cached wheel; PYTHON=python3 the interpreter the venv is made from.
# Prints pytest's closing line and `LIB: N passed, N failed, N skipped, N errors` per library.
# Exit status: 0 pass, 1 unexpected failures, 2 setup error, 77 no sources.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=4.14.1
sdist_name="blosc2-$version.tar.gz"
# The sources, with their SHA-256 (the sdist is the registry's file; the others are `git archive`
# of the commits python-blosc2's CMakeLists.txt and miniexpr's cmake/MiniexprFetchDeps.cmake pin).
sources=(
  "b5adb408854260acf64aca5c351ab1307bcb7c71d112e3049d8541c1e2f9b222 $sdist_name"
  "bdb5eba38ac44eeaa62bcfb76d800daf46966048382f66b61d1aa9d404c7a163 miniexpr-f0b8c94771cd21d3c9029d6ccec204ab3a67584f.tar.gz"
  "05743e30bcc37fb0dfa436fc97b12e33031fbb00540076510512748159f6713d sleef-7623d6cfa2712462880fa63a4d0f0b5f775d1a83.tar.gz"
  "707b80a81dd7fab0d814c288db482b044f1e91a0bb851bfabb8b3fdec0559e38 minicc-695ad1e6b5c9a00875192ca1f3a9c4949dee4858.tar.gz"
)
# Failures of `pytest tests -n 2` that are not ours, with why (each also fails on the wheel).
KNOWN_FAILURES=(
  # Reads bench/ctable/parquet/metadata_benchmark.py, which the sdist does not ship (pyproject
  # excludes bench*): fails the same way on the wheel's c-blosc2.
  "tests/ctable/test_remote_ctable.py::test_parallel_metadata_benchmark"
)
# Tests that give a subprocess a few seconds (importing numpy and blosc2 in it): on a loaded
# machine they time out on both libraries. One that fails is run again alone, once; it fails the
# stage only if it fails again.
TIMING_SENSITIVE=(
  "tests/test_locking.py::test_open_locked_frame_releases_gil"
)
# Skips of `pytest tests -n 2` on the wheel with the pinned packages (reasons in the docs page);
# more means an optional package or tool went missing.
MAX_SKIPPED=38

py="${PYTHON:-python3}"
pytest_args="${PYB2_PYTEST:-tests -n 2}"
runs="${PYB2_RUN:-libb2frame}"
cache="${PYB2_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/b2frame/python-blosc2}"
die() { echo "python-blosc2-suite: $*" >&2; exit 2; }

# 1. The sources.
if [ -n "${PYB2_SRC:-}" ]; then
  srcdir=$(cd "$PYB2_SRC" 2>/dev/null && pwd) || die "PYB2_SRC=$PYB2_SRC is not a directory"
elif [ -d "$root/../shared/pysrc" ]; then
  srcdir=$(cd "$root/../shared/pysrc" && pwd)
else
  echo "SKIPPED: python-blosc2's suite needs its sources (the sdist of python-blosc2 $version and"
  echo "  the miniexpr, sleef and minicc archives its CMake would fetch from GitHub), and neither"
  echo "  ../shared/pysrc nor a PYB2_SRC directory exists. See docs/testing/python-blosc2.md."
  exit 77
fi
for s in "${sources[@]}"; do
  [ -f "$srcdir/${s#* }" ] || die "$srcdir lacks ${s#* }"
  (cd "$srcdir" && sha256sum -c --quiet - <<<"${s% *}  ${s#* }") || die "${s#* } in $srcdir has another digest"
done
src_digest=$(printf '%s\n' "${sources[@]}" | sha256sum | cut -c1-16)

work="${PYB2_WORK:-}"
keep_work=1
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-pyb2.XXXXXX")
  keep_work=0
fi
mkdir -p "$work" "$cache" && work=$(cd "$work" && pwd) && cache=$(cd "$cache" && pwd) || die "cannot make $work or $cache"
echo "python-blosc2 $version from $srcdir; work directory $work; cache $cache"

# 2. libb2frame, installed with the compat files (lib/pkgconfig/blosc2.pc).
prefix="${PYB2_PREFIX:-}"
if [ -z "$prefix" ]; then
  prefix="$work/prefix"
  B2FRAME_BUILD_DIR="${B2FRAME_BUILD_DIR:-$work/b2frame-build}" bash "$root/scripts/install.sh" "$prefix" \
    -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON >"$work/install.log" 2>&1 || { tail -n 30 "$work/install.log"; die "install failed"; }
fi
prefix=$(cd "$prefix" && pwd) || die "no prefix $prefix"
pc=$(find "$prefix" -name blosc2.pc -print -quit)
[ -n "$pc" ] || die "no blosc2.pc under $prefix (install with -DB2FRAME_INSTALL_BLOSC2_COMPAT=ON)"
pcdir=$(dirname "$pc")
libdir=$(cd "$pcdir/.." && pwd)
[ -e "$libdir/libb2frame.so.1" ] || die "no $libdir/libb2frame.so.1"

# Entries of the cache unused for 30 days go (each use touches its entry).
find "$cache" -mindepth 1 -maxdepth 1 \( -name 'venv-*' -o -name 'wheel-*' \) -mtime +30 \
  -exec rm -rf {} + 2>/dev/null
find "$cache/wheelhouse" -type f -mtime +90 -delete 2>/dev/null

# 3. The test venv: build packages, python-blosc2's dependencies and its optional test packages.
# Made once per requirements file and interpreter, under a lock (two runs may share the cache),
# then only read: python-blosc2 itself is never installed into it (each run puts its own build on
# PYTHONPATH), so runs against different libraries can share it.
reqs="$root/scripts/python-blosc2-requirements.txt"
venv_key=$( { cat "$reqs"; "$py" -c 'import sys, platform; print(sys.version, platform.machine())'; } | sha256sum | cut -c1-16)
venv="$cache/venv-$venv_key"
(
  flock 9
  if [ ! -f "$venv/.complete" ]; then
    rm -rf "$venv"
    echo "making the test venv $venv (pip install -r scripts/python-blosc2-requirements.txt) ..."
    # Through a wheelhouse: the next venv (other requirements) downloads only what changed.
    "$py" -m venv "$venv" &&
      "$venv/bin/python" -m pip download -q --disable-pip-version-check --only-binary :all: \
        -d "$cache/wheelhouse" -r "$reqs" >"$work/pip.log" 2>&1 &&
      "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-index \
        --find-links "$cache/wheelhouse" -r "$reqs" >>"$work/pip.log" 2>&1 ||
      { tail -n 30 "$work/pip.log"; exit 1; }
    touch "$venv/.complete"
  fi
) 9>"$cache/venv-$venv_key.lock" || die "pip failed, see $work/pip.log"
touch "$venv"
vpy="$venv/bin/python"

unpack() { # unpack ARCHIVE DIR: the archive's single top-level folder, unpacked into DIR
  mkdir -p "$2" && tar -xzf "$srcdir/$1" -C "$2" || return 1
  local d
  d=$(find "$2" -mindepth 1 -maxdepth 1 -type d | head -n1)
  [ -n "$d" ] && echo "$d"
}
src=$(unpack "$sdist_name" "$work/src") || die "cannot unpack $sdist_name"
[ -f "$src/pyproject.toml" ] || die "no pyproject.toml in $src"

# 4. python-blosc2 built against libb2frame, or the cached wheel of the same inputs.
build_wheel() { # build_wheel OUTDIR: pip wheel of the sdist, FetchContent given the local sources
  local deps="$work/deps" miniexpr sleef tinycc
  miniexpr=$(unpack "${sources[1]#* }" "$deps/miniexpr") &&
    sleef=$(unpack "${sources[2]#* }" "$deps/sleef") &&
    tinycc=$(unpack "${sources[3]#* }" "$deps/minicc") || return 1
  # The venv's bin first: miniexpr configures tinycc in a sub-CMake that looks for ninja on PATH.
  PATH="$venv/bin:$PATH" USE_SYSTEM_BLOSC2=1 PKG_CONFIG_PATH="$pcdir" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" \
    CMAKE_ARGS="-DFETCHCONTENT_FULLY_DISCONNECTED=ON -DFETCHCONTENT_SOURCE_DIR_MINIEXPR=$miniexpr -DFETCHCONTENT_SOURCE_DIR_SLEEF=$sleef -DFETCHCONTENT_SOURCE_DIR_TINYCC=$tinycc" \
    "$vpy" -m pip wheel --no-build-isolation --no-deps --disable-pip-version-check -v -w "$1" "$src"
}
# The headers the extension compiles against: what blosc2.h and b2nd.h include from the prefix.
headers=$(printf '#include <blosc2.h>\n#include <b2nd.h>\n' | cc -M -I"$prefix/include" -x c - 2>/dev/null |
  tr ' \\' '\n\n' | grep "^$prefix/include/" | sort -u) || die "cannot preprocess $prefix/include/blosc2.h"
[ -n "$headers" ] || die "no headers under $prefix/include"
wheel_key=$( {
  echo "$src_digest"
  "$vpy" -m pip freeze --disable-pip-version-check 2>/dev/null | grep -i -E '^(numpy|cython|scikit.build.core|cmake|ninja)=='
  "$vpy" -c 'import sys; print(sys.version)'
  # Without their comments (include/b2frame.h is generated from doc comments that change often):
  # every directive and declaration, in every conditional branch, stays.
  for h in $headers; do
    echo "${h#"$prefix"/} $(cc -fpreprocessed -dD -E -P -x c "$h" | sha256sum | cut -c1-64)"
  done
  PKG_CONFIG_PATH="$pcdir" pkg-config --modversion --cflags --libs blosc2 | sed "s|$prefix|PREFIX|g"
  cc --version | head -n1
  declare -f build_wheel
} | sha256sum | cut -c1-16)
wheel_dir="$cache/wheel-$wheel_key"
(
  flock 9
  if [ "${PYB2_REBUILD:-0}" = 1 ] || ! ls "$wheel_dir"/blosc2-*.whl >/dev/null 2>&1; then
    echo "building python-blosc2 against $libdir/libb2frame.so.1 (cache key $wheel_key) ..."
    t0=$SECONDS
    rm -rf "$work/wheel" && mkdir -p "$work/wheel"
    build_wheel "$work/wheel" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
    rm -rf "$wheel_dir.tmp" && mv "$work/wheel" "$wheel_dir.tmp" && rm -rf "$wheel_dir" && mv "$wheel_dir.tmp" "$wheel_dir" || exit 1
    echo "built in $((SECONDS - t0))s"
  else
    echo "python-blosc2 built against the same headers is cached: $wheel_dir"
  fi
) 9>"$wheel_dir.lock" || die "build failed, see $work/build.log"
touch "$wheel_dir"

# A wheel unpacked into DIR is what PYTHONPATH gives the tests (metadata included).
unzip_to() { "$vpy" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"; }
site="$work/site-libb2frame"
unzip_to "$(ls "$wheel_dir"/blosc2-*.whl | head -n1)" "$site" || die "cannot unpack the wheel"

# 5. The extension must load this run's libb2frame, and the package carry no libblosc2 of its own.
ext=$(ls "$site"/blosc2/blosc2_ext*.so | head -n1)
[ -n "$ext" ] || die "no blosc2_ext in the wheel"
# (Outputs are read whole: with pipefail, `grep -q` ending a pipe early would fail it.)
bundled=$(find "$site/blosc2" -name 'libblosc2*')
[ -z "$bundled" ] || die "the package bundles a libblosc2: $bundled"
deps=$(LD_LIBRARY_PATH="$libdir" ldd "$ext")
case "$deps" in
  *"libb2frame.so.1 => $libdir/libb2frame.so.1 "*) ;;
  *) die "$ext does not load $libdir/libb2frame.so.1: $(grep -i -E 'blosc|b2frame' <<<"$deps")" ;;
esac
maps() { # maps SITE [LD_LIBRARY_PATH]: the blosc2 libraries `import blosc2` maps
  (cd "$work" && PYTHONPATH="$1" LD_LIBRARY_PATH="${2:-}" "$vpy" -c '
import blosc2, os
maps = {l.split()[-1] for l in open("/proc/self/maps") if len(l.split()) > 5}
print(" ".join(sorted(m for m in maps if os.path.basename(m).startswith(("libb2frame", "libblosc2")))))')
}
loaded=$(maps "$site" "$libdir")
case "$loaded" in
  "$libdir"/libb2frame.so*) echo "import blosc2 maps $loaded" ;;
  *) die "import blosc2 maps '$loaded', not $libdir/libb2frame.so.1" ;;
esac

# 6. The suite, in the unpacked sdist (its conftest.py and pytest.ini).
counts() { # counts LOG -> "N passed, N failed, N skipped, N errors" from pytest's closing line
  local last n k out=()
  last=$(grep -E '(passed|failed|skipped|errors?|no tests ran).* in [0-9.]+s' "$1" | tail -n1)
  for k in passed failed skipped error; do
    n=$(grep -oE "[0-9]+ $k" <<<"$last" | grep -oE '^[0-9]+' || echo 0)
    out+=("$n ${k/error/errors}")
  done
  local IFS=,
  echo "${out[*]}" | sed 's/,/, /g'
}
status=0
run_suite() { # run_suite TAG SITE [LD_LIBRARY_PATH]
  local tag=$1 log="$work/pytest-$1.log" t0=$SECONDS
  echo "running python-blosc2's suite on $tag: pytest $pytest_args (log: $log) ..."
  # shellcheck disable=SC2086
  (cd "$src" && PYTHONPATH="$2" LD_LIBRARY_PATH="${3:-}" "$vpy" -m pytest $pytest_args -q -rfEs \
    -p no:cacheprovider >"$log" 2>&1)
  grep -E '(passed|failed|skipped|errors?|no tests ran).* in [0-9.]+s' "$log" | tail -n1 | sed "s/^/  $tag: /"
  local c
  c=$(counts "$log")
  echo "$tag: $c ($((SECONDS - t0))s)"
  [ -n "${PYB2_PYTEST:-}" ] && return 0
  # Failures and errors beyond the known ones fail the stage.
  local bad=0 id known k
  while read -r id; do
    known=0
    for k in "${KNOWN_FAILURES[@]}"; do [ "$id" = "$k" ] && known=1; done
    for k in "${TIMING_SENSITIVE[@]}"; do [ "${id%%\[*}" = "$k" ] && known=2; done
    if [ "$known" = 1 ]; then
      echo "  $tag: known failure (fails on the wheel too): $id"
    elif [ "$known" = 2 ] && (cd "$src" && PYTHONPATH="$2" LD_LIBRARY_PATH="${3:-}" "$vpy" -m pytest \
        -q -n 0 -p no:cacheprovider "$id" >>"$log.rerun" 2>&1); then
      echo "  $tag: $id failed, then passed when run again alone (a subprocess timeout under load)"
    else
      echo "  $tag: UNEXPECTED: $id"
      bad=1
    fi
  done < <(grep -E '^(FAILED|ERROR) ' "$log" | sed -E 's/^(FAILED|ERROR) //; s/ - .*//')
  local skipped
  skipped=$(grep -oE '[0-9]+ skipped' <<<"$c" | grep -oE '^[0-9]+')
  if [ "${skipped:-0}" -gt "$MAX_SKIPPED" ]; then
    echo "  $tag: UNEXPECTED: $skipped skipped, the reference skips $MAX_SKIPPED (a missing optional package?):"
    grep -E '^SKIPPED ' "$log" | sed "s/^/    /"
    bad=1
  fi
  if ! grep -qE '[0-9]+ passed' "$log"; then
    echo "  $tag: UNEXPECTED: no test passed; last lines of the log:"
    tail -n 30 "$log" | sed 's/^/    /'
    bad=1
  fi
  [ "$bad" = 0 ] || status=1
}
for r in $runs; do
  case "$r" in
    libb2frame) run_suite libb2frame "$site" "$libdir" ;;
    wheel)
      # The venv's own blosc2: the registry's wheel of the same version, whose blosc2_ext has
      # c-blosc2 linked in (it maps no libblosc2, and must map no libb2frame).
      loaded=$(maps "")
      [ -z "$loaded" ] || die "the wheel's import blosc2 maps $loaded"
      echo "the wheel: $(cd "$work" && "$vpy" -c 'import blosc2; print("python-blosc2", blosc2.__version__, "with c-blosc2", blosc2.blosclib_version, "from", blosc2.__file__)')"
      run_suite wheel ""
      ;;
    *) die "unknown PYB2_RUN entry $r (libb2frame, wheel)" ;;
  esac
done

# 7. The dynamic plugins through python-blosc2 on libb2frame (docs/c-api/plugins.md), with the
# plugin packages of scripts/plugins-env.sh (skipped when the registry cannot be reached): the
# frames the reference writes with each plugin read here, and htj2k, j2k and openzl frames
# written here read by the reference. Only the plugin packages join PYTHONPATH (links to them),
# so numpy and the rest stay this venv's. The plugins make the Blosc2 library's symbols global by
# loading a libblosc2.so* from LD_LIBRARY_PATH: the compat link to libb2frame, as a user of the
# binary swap has it (read_frames.py checks no other Blosc2 library is mapped).
plugins_step() {
  local envs rc pw new old newsite d
  envs=$(bash "$root/scripts/plugins-env.sh"); rc=$?
  [ "$rc" = 3 ] && { echo "plugins through python-blosc2: SKIPPED (the package registry cannot be reached)"; return 0; }
  [ "$rc" = 0 ] || { echo "plugins through python-blosc2: UNEXPECTED: scripts/plugins-env.sh failed"; return 1; }
  new="$envs/new" old="$envs/old" pw="$work/plugins"
  newsite=$(ls -d "$new"/lib/python3*/site-packages | head -n1)
  mkdir -p "$pw/ref" "$pw/ours" "$pw/site" || return 1
  for d in "$newsite"/blosc2_*; do ln -sfn "$d" "$pw/site/"; done
  PATH="$new/bin:$PATH" "$new/bin/python" "$root/tests/plugins/write_frames.py" new "$pw/ref" &&
    PATH="$old/bin:$PATH" BTUNE_TRADEOFF=0.5 "$old/bin/python" "$root/tests/plugins/write_frames.py" old "$pw/ref" ||
    { echo "plugins through python-blosc2: UNEXPECTED: the reference could not write the frames"; return 1; }
  # python-blosc2 on libb2frame reads the six, then writes the three whose encoders c-blosc2
  # 3.3.5 runs (write_frames.py reads each back and checks it is lossless).
  (cd "$pw" && PYTHONPATH="$site:$pw/site" LD_LIBRARY_PATH="$libdir:$libdir/b2frame-compat" \
    B2FRAME_PLUGIN_PATH="$newsite" B2FRAME_EXPECT_LIB=libb2frame "$vpy" "$root/tests/plugins/read_frames.py" "$pw/ref" htj2k j2k openzl grok openhtj2k btune &&
   PYTHONPATH="$site:$pw/site" LD_LIBRARY_PATH="$libdir:$libdir/b2frame-compat" \
    B2FRAME_PLUGIN_PATH="$newsite" "$vpy" "$root/tests/plugins/write_frames.py" new "$pw/ours") ||
    { echo "plugins through python-blosc2: UNEXPECTED: python-blosc2 on libb2frame failed"; return 1; }
  # The reference reads what python-blosc2 on libb2frame wrote.
  (cd "$pw" && PATH="$new/bin:$PATH" "$new/bin/python" "$root/tests/plugins/read_frames.py" "$pw/ours" htj2k j2k openzl) ||
    { echo "plugins through python-blosc2: UNEXPECTED: the reference could not read them"; return 1; }
  echo "plugins through python-blosc2: ok (6 reference frames read on libb2frame, 3 written there read by the reference)"
}
if [ -z "${PYB2_PYTEST:-}" ] && [[ " $runs " == *" libb2frame "* ]]; then
  plugins_step || status=1
fi

if [ "$status" = 0 ] && [ "$keep_work" = 0 ]; then
  rm -rf "$work"
else
  echo "work directory (logs): $work"
fi
exit $status
