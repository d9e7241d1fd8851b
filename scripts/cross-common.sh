# Sourced by scripts/cross-aarch64.sh and scripts/cross-windows.sh (after they set root, triple
# and target_dir): installing the cross tools and the rustup target, and fetching the reference
# c-blosc2 (python-blosc2's wheel for the target platform). Each function exits the script on a
# failure.

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
