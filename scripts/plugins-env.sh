#!/usr/bin/env bash
# Makes (or reuses) the two virtual environments the dynamic-plugin tests run in: `new`, the
# reference python-blosc2 4.14.1 (c-blosc2 3.3.5) with the six plugin packages, and `old`,
# python-blosc2 4.1.2 (c-blosc2 2.23) with the three whose encoders need it. Each is kept under
# B2FRAME_PLUGINS_ENV (default ~/.cache/b2frame/plugins-env) and rebuilt only when its
# requirements file changes, so a second run costs nothing.
# Prints the directory holding them. Exit status: 0 ready, 3 the package registry cannot be
# reached (the caller skips its stage), 2 any other failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base="${B2FRAME_PLUGINS_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/b2frame/plugins-env}"
py="${PYTHON:-python3}"
mkdir -p "$base" || exit 2
# Two stages may ask at once (the python-blosc2 suite runs beside the plugin stage): one makes
# the venvs, the other waits for it.
exec 9>"$base/.lock" && flock 9 || exit 2
for which in new old; do
  req="$root/scripts/plugins/requirements-$which.txt"
  venv="$base/$which"
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/.requirements-installed"; then
    continue
  fi
  rm -rf "$venv"
  "$py" -m venv "$venv" >&2 || exit 2
  if ! "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >"$base/$which.log" 2>&1; then
    if grep -qiE "connection|network|resolve|temporary failure|timed out|unreachable" "$base/$which.log"; then
      echo "plugins-env: the package registry cannot be reached (see $base/$which.log)" >&2
      rm -rf "$venv"
      exit 3
    fi
    echo "plugins-env: installing $req failed (see $base/$which.log)" >&2
    rm -rf "$venv"
    exit 2
  fi
  cp "$req" "$venv/.requirements-installed"
done
echo "$base"
