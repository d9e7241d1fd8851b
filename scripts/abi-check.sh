#!/usr/bin/env bash
# ABI check of b2frame's C headers against the reference c-blosc2 3.3.5 headers (from the pinned
# python-blosc2 wheel in .venv; nothing of them is committed). Checks, in order:
#   1. hygiene: include/blosc2.h, b2nd.h and include/blosc2/*.h compile warning-free with
#      gcc -Wall -Wextra -Werror (-std=c99, -std=gnu11) and g++ (C++11 and the default);
#   2. layouts and values: tests/abi/abi_dump.c is built against each header set and run; the
#      outputs (struct sizes, field offsets/sizes/signedness, constants, default constants)
#      must be identical;
#   3. header-only helpers: tests/abi/inline_dump.c runs blosc2_meta_exists/blosc2_meta_get,
#      swap_store and the error macros against each header set; the outputs must be identical;
#   4. prototypes: every BLOSC_EXPORT function of the reference blosc2.h and blosc2-stdio.h
#      and b2nd.h must be declared by our headers, and the
#      reference prototypes, compiled in one translation unit after our headers, must not
#      conflict with ours (C: incompatible redeclaration; C++: conflicting extern "C").
#   5. (only when a library is given) link: tests/abi/link_smoke.c, built at -O0 against our
#      headers and linked with that libb2frame.so, runs and passes.
# Exits non-zero on any failure.
# Usage: scripts/abi-check.sh [path/to/libb2frame.so]   (CC/CXX may be overridden)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ours="$root/include"
lib=${1:-}
CC=${CC:-gcc}
CXX=${CXX:-g++}

find_ref() {
  local d
  for d in "$root"/.venv/lib/python3*/site-packages/blosc2/include; do
    if [ -f "$d/blosc2.h" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

if [ ! -x "$root/.venv/bin/python" ]; then
  echo "abi-check: .venv is missing; running scripts/setup-env.sh" >&2
  "$root/scripts/setup-env.sh" >&2
fi
if ! ref=$(find_ref); then
  echo "abi-check: FAIL: REFERENCE c-blosc2 HEADERS NOT FOUND under $root/.venv" >&2
  echo "abi-check: run scripts/setup-env.sh (installs the pinned python-blosc2 wheel)" >&2
  exit 2
fi
py="$root/.venv/bin/python"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "abi-check: FAIL: $*"
  failures=$((failures + 1))
}

# --- 1. header hygiene -------------------------------------------------------------------------
cat >"$tmp/hygiene.c" <<'EOF'
#include <blosc2.h>
#include <b2nd.h>
#include <blosc2/blosc2-common.h>
#include <blosc2/blosc2-export.h>
#include <blosc2/blosc2-stdio.h>
#include <blosc2/codecs-registry.h>
#include <blosc2/filters-registry.h>
#include <blosc2/tuners-registry.h>
#include <b2frame.h>
int main(void) { return BLOSC2_CPARAMS_DEFAULTS.clevel == 5 ? 0 : 1; }
EOF
cp "$tmp/hygiene.c" "$tmp/hygiene.cpp"
hygiene=0
for std in c99 gnu11; do
  if ! $CC -Wall -Wextra -Werror -std=$std -I"$ours" -c "$tmp/hygiene.c" -o "$tmp/h.o" \
      2>"$tmp/hyg.err"; then
    fail "headers do not compile cleanly with $CC -std=$std"; cat "$tmp/hyg.err"; hygiene=1
  fi
done
for std in "" "-std=c++11"; do
  if ! $CXX -Wall -Wextra -Werror $std -I"$ours" -c "$tmp/hygiene.cpp" -o "$tmp/h.o" \
      2>"$tmp/hyg.err"; then
    fail "headers do not compile cleanly with $CXX $std"; cat "$tmp/hyg.err"; hygiene=1
  fi
done
[ $hygiene = 0 ] && echo "abi-check: ok: headers compile warning-free (C99, GNU11, C++11, C++ default)"

# --- 2. layouts, constants, defaults --------------------------------------------------------
dump() {  # $1 = include dir, $2 = output name
  $CC -std=gnu11 -O1 -w -I"$1" "$root/tests/abi/abi_dump.c" -o "$tmp/$2" \
    -Wl,--unresolved-symbols=ignore-all && "$tmp/$2" >"$tmp/$2.txt"
}
if ! dump "$ref" ref; then
  fail "abi_dump.c does not build against the reference headers"
elif ! dump "$ours" ours; then
  fail "abi_dump.c does not build against b2frame's headers"
else
  total=$(wc -l <"$tmp/ref.txt")
  if diff -u "$tmp/ref.txt" "$tmp/ours.txt" >"$tmp/dump.diff"; then
    echo "abi-check: ok: $total layout/constant/default facts identical" \
      "($(grep -c '^struct' "$tmp/ref.txt") structs," \
      "$(grep -c '^field' "$tmp/ref.txt") fields," \
      "$(grep -c -E '^(const|string)' "$tmp/ref.txt") constants," \
      "$(grep -c '^default' "$tmp/ref.txt") default fields)"
  else
    cat "$tmp/dump.diff"
    fail "$(grep -c '^[-+][a-z]' "$tmp/dump.diff") differing lines out of $total (- reference, + ours)"
  fi
fi

# --- 3. header-only helpers (meta_exists/meta_get, swap_store, BLOSC_ERROR, print_error) ------
inline_dump() {  # $1 = include dir, $2 = output name
  $CC -std=gnu11 -O0 -w -I"$1" "$root/tests/abi/inline_dump.c" -o "$tmp/$2" \
    && env -u BLOSC_TRACE "$tmp/$2" >"$tmp/$2.txt" 2>/dev/null
}
if ! inline_dump "$ref" iref; then
  fail "inline_dump.c does not build or run against the reference headers"
elif ! inline_dump "$ours" iours; then
  fail "inline_dump.c does not build or run against b2frame's headers"
elif diff -u "$tmp/iref.txt" "$tmp/iours.txt" >"$tmp/inline.diff"; then
  echo "abi-check: ok: header-only helpers behave identically ($(wc -l <"$tmp/iref.txt") results)"
else
  cat "$tmp/inline.diff"
  fail "header-only helpers differ (- reference, + ours)"
fi

# --- 4. prototypes ----------------------------------------------------------------------------
"$py" - "$ref" "$tmp" <<'PY'
import re, sys, pathlib
ref, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def exported(path, only=None):
    text = path.read_text()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    protos = []
    for m in re.finditer(r"BLOSC_EXPORT\s+([^;{}#]*?\([^;{}#]*\))\s*;", text, flags=re.S):
        decl = " ".join(m.group(1).split())
        name = re.search(r"(\w+)\s*\(", decl).group(1)
        if only is None or name in only:
            protos.append((name, decl))
    return protos
protos = exported(ref / "blosc2.h") + exported(ref / "blosc2" / "blosc2-stdio.h")
protos += exported(ref / "b2nd.h")
head = "#include <blosc2.h>\n#include <b2nd.h>\n"
(out / "names.txt").write_text("".join(n + "\n" for n, _ in protos))
(out / "declared.c").write_text(head + "void b2frame_uses(void);\nvoid b2frame_uses(void) {\n"
    + "".join(f"  (void)&{n};\n" for n, _ in protos) + "}\n")
body = "".join(f"{d};\n" for _, d in protos)
(out / "compat.c").write_text(head + body)
(out / "compat.cpp").write_text(head + 'extern "C" {\n' + body + "}\n")
PY
nproto=$(wc -l <"$tmp/names.txt")
# (b2nd_copy_buffer is declared deprecated, as in c-blosc2: taking its address may warn.)
if $CC -std=gnu11 -Wall -Wextra -Werror -Wno-deprecated-declarations -I"$ours" -c "$tmp/declared.c" -o "$tmp/d.o" \
    2>"$tmp/decl.err"; then
  echo "abi-check: ok: all $nproto reference prototypes are declared by include/blosc2.h and b2nd.h"
else
  grep -E "error" "$tmp/decl.err" | head -40
  fail "$(grep -c "error:.*undeclared" "$tmp/decl.err" || true) reference function(s) not declared"
fi
if $CC -std=gnu11 -Wall -Wextra -Werror -I"$ours" -c "$tmp/compat.c" -o "$tmp/c.o" \
    2>"$tmp/compat.err" \
  && $CXX -Wall -Wextra -Werror -I"$ours" -c "$tmp/compat.cpp" -o "$tmp/c.o" \
    2>>"$tmp/compat.err"; then
  echo "abi-check: ok: the $nproto reference prototypes are compatible with ours (C and C++)"
else
  grep -E "error|note: previous" "$tmp/compat.err" | head -40
  fail "$(grep -c "error" "$tmp/compat.err" || true) conflicting prototype(s)"
fi

# --- 5. link a consumer against the built library ---------------------------------------------
if [ -n "$lib" ]; then
  if [ ! -f "$lib" ]; then
    fail "library $lib does not exist"
  else
    # The library's SONAME is libb2frame.so.<major>: give the loader that name.
    mkdir -p "$tmp/lib"
    soname=$(objdump -p "$lib" 2>/dev/null | awk '/SONAME/ { print $2 }')
    cp "$lib" "$tmp/lib/libb2frame.so"
    [ -n "$soname" ] && [ "$soname" != libb2frame.so ] && cp "$lib" "$tmp/lib/$soname"
    if $CC -std=gnu11 -O0 -Wall -Wextra -Werror -I"$ours" "$root/tests/abi/link_smoke.c" \
        -L"$tmp/lib" -lb2frame -o "$tmp/link_smoke" 2>"$tmp/link.err" \
      && LD_LIBRARY_PATH="$tmp/lib" "$tmp/link_smoke"; then
      echo "abi-check: ok: a c-blosc2-style program builds at -O0, links and runs against $lib"
    else
      cat "$tmp/link.err"
      fail "linking/running tests/abi/link_smoke.c against $lib"
    fi
  fi
fi

if [ $failures -ne 0 ]; then
  echo "abi-check: $failures check(s) FAILED"
  exit 1
fi
echo "abi-check: all checks passed"
