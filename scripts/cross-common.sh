# Sourced by scripts/cross-aarch64.sh and scripts/cross-windows.sh (after they set root, triple
# and target_dir): what the two cross stages share. The steps' bookkeeping (cross_begin, ok, bad,
# cross_end; scripts/dropin-check.sh uses it too); installing the cross tools and the rustup target, and fetching the reference
# c-blosc2 (python-blosc2's wheel for the target platform), each of which exits the script on a
# failure; running the Rust tests (cross_rust_tests, through scripts/stall-runner.sh, which the
# calling script sets as cargo's runner); and comparing the frames written on the target with
# those written natively (cross_same_frames_as_native).

# cross_begin LABEL: starts the steps of the platform LABEL: sets work to a fresh temporary
# directory (removed at exit unless a step failed) and the counters ok and bad update.
cross_begin() {
  cross_label=$1
  work=$(mktemp -d "${TMPDIR:-/tmp}/b2frame-$cross_label.XXXXXX")
  keep_work=0
  trap '[ "$keep_work" = 1 ] || rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM
  passed=0
  failed=0
}
# ok TEXT / bad TEXT: one step passed / failed (a failure keeps the work directory).
ok() { echo "PASS $cross_label: $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $cross_label: $1"; failed=$((failed + 1)); keep_work=1; }
# cross_end: the summary line `LABEL: N passed, M failed`; fails if a step failed (the calling
# script ends with it, so that is its exit status).
cross_end() {
  echo
  [ "$keep_work" = 1 ] && echo "logs kept in $work"
  echo "$cross_label: $passed passed, $failed failed"
  [ "$failed" = 0 ]
}

# cross_apt_install PKG...: installs the packages with apt-get (through sudo unless root);
# nothing to do without arguments.
cross_apt_install() {
  [ $# -gt 0 ] || return 0
  echo "installing $* with apt-get"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null || {
    echo "apt-get install $* failed" >&2
    exit 1
  }
}

# cross_rust_target: adds the rustup target $triple unless it is installed.
cross_rust_target() {
  if ! rustup target list --installed 2>/dev/null | grep -qx "$triple"; then
    rustup target add "$triple" || { echo "rustup target add $triple failed" >&2; exit 1; }
  fi
}

# cross_reference_wheel PLATFORM FILE NAME: sets refdir to python-blosc2's wheel for the pip
# platform tag PLATFORM (the version scripts/requirements-test.txt pins), unpacked under
# $target_dir/reference-wheels; downloads it unless FILE (relative to refdir) is there. NAME
# names the platform in the error message.
cross_reference_wheel() {
  local platform=$1 file=$2 name=$3 version
  version=$(sed -n 's/^blosc2==//p' "$root/scripts/requirements-test.txt")
  refdir="$target_dir/reference-wheels/$platform-$version"
  if [ ! -f "$refdir/$file" ]; then
    rm -rf "$refdir" && mkdir -p "$refdir/wheel"
    "$root/.venv/bin/pip" download -q --disable-pip-version-check "blosc2==$version" \
      --platform "$platform" --only-binary :all: --no-deps -d "$refdir/wheel" &&
      "$root/.venv/bin/python" -m zipfile -e "$refdir"/wheel/*.whl "$refdir" || {
      echo "could not fetch the $name python-blosc2 $version wheel" >&2
      exit 1
    }
  fi
}

# cross_rust_tests LOG CARGO-TEST-ARGS...: `cargo test --release --target $triple --no-fail-fast
# CARGO-TEST-ARGS...` with the whole output in LOG and the lines that show progress (each binary
# as it starts, the harness's notice of a test running for over 60 s, results, failures, the
# runner's STALL lines, the SIMD levels the filters tests compared; a panic's location and the
# message on the line after it) printed as they come. Returns
# cargo's exit status and sets rust_summary to "N tests in M binaries, K binaries run again after
# an emulator stall" (N counts the passed tests of the binaries that passed).
cross_rust_tests() {
  local log=$1 rc ntests nbins stalls
  shift
  cargo test --release --target "$triple" --no-fail-fast "$@" 2>&1 | tee "$log" |
    awk '/^(test result|     Running|SIMD levels|shuffle\/bitshuffle level|VL dict chunk|STALL)|FAILED|panicked|^error|running for over/ || after { print; fflush() }
      { after = /panicked at/ }'
  rc=${PIPESTATUS[0]}
  ntests=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
  nbins=$(grep -c '^     Running ' "$log")
  stalls=$(grep -c "^STALL $cross_label" "$log")
  rust_summary="$ntests tests in $nbins binaries, $stalls binaries run again after an emulator stall"
  [ "$rc" = 0 ] && grep -q '^test result: ok' "$log"
}

# cross_same_frames_as_native DIR FRAMES WHERE NATIVE: builds tests/dropin/dropin.c natively
# against the x86-64 reference's headers, runs it on the native libb2frame.so (built or found
# current here: a stale library from an older checkout would write older frames) and passes the
# step if the frames it writes under DIR/native-frames are byte-identical to FRAMES, those the
# same program wrote on the target. WHERE ("on aarch64") and NATIVE ("x86-64's") name the two.
cross_same_frames_as_native() {
  local d=$1 frames=$2 where=$3 native=$4 x86ref
  x86ref=$(ls -d "$root"/.venv/lib/python3*/site-packages/blosc2 2>/dev/null | head -n1)
  if ! cargo build --release --lib -p b2frame >"$d/native-build.log" 2>&1; then
    bad "cargo build --release --lib (the native library to compare the frames with)"
    tail -n 20 "$d/native-build.log" | sed "s/^/     | /"
    return
  fi
  mkdir -p "$d/native-compat"
  ln -sf "$target_dir/release/libb2frame.so" "$d/native-compat/libblosc2.so.9"
  if gcc -std=gnu11 -O1 -I"$x86ref/include" -o "$d/dropin-native" "$root/tests/dropin/dropin.c" \
    -L"$x86ref/lib" -l:libblosc2.so.9 -ldl &&
    LD_LIBRARY_PATH="$d/native-compat" "$d/dropin-native" write "$d/native-frames" >"$d/native-frames.log" 2>&1 &&
    diff -r "$frames" "$d/native-frames" >"$d/diff.log" 2>&1; then
    ok "frames written $where are byte-identical to $native ($(find "$frames" -type f | wc -l) files)"
  else
    bad "frames written $where differ from $native"
    head -n 20 "$d/diff.log" "$d/native-frames.log" 2>/dev/null | sed 's/^/     | /'
  fi
}
