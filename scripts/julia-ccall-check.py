#!/usr/bin/env python3
"""Checks the Julia bindings' @ccall lines against include/blosc2.h, without Julia.

Usage: python3 scripts/julia-ccall-check.py [LIB]

Every `@ccall libb2frame.NAME(arg::T, ...)::R` in bindings/julia must name a function that
include/blosc2.h declares with BLOSC_EXPORT, with as many arguments as its prototype and with
Julia types that match the C types one by one (and the return type). With LIB (a libb2frame.so),
NAME must also be a function the library exports (`nm -D --defined-only`). Prints one line per
mismatch and `julia @ccall check: N calls, M mismatches`; exits 1 on any mismatch.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Julia type -> predicate over the normalised C type (no `const`, no spaces around `*`).
SCALARS = {
    "Cint": {"int"},
    "Cuint": {"unsigned int"},
    "Int32": {"int32_t"},
    "Int64": {"int64_t"},
    "UInt8": {"uint8_t"},
    "UInt32": {"uint32_t"},
    "UInt64": {"uint64_t"},
    "Csize_t": {"size_t"},
    "Bool": {"bool"},
    "Cvoid": {"void"},
    "Cchar": {"char"},
    "Cstring": {"char*"},
    # Julia structs of bindings/julia/src/B2frame.jl that mirror C structs.
    "CParams": {"blosc2_cparams"},
    "DParams": {"blosc2_dparams"},
    "Storage": {"blosc2_storage"},
}


def c_matches(jt, ct):
    """Whether Julia type `jt` can be passed for (or returned as) C type `ct`."""
    if jt in SCALARS:
        return ct in SCALARS[jt]
    m = re.fullmatch(r"Ptr\{(.+)\}", jt)
    if not m or not ct.endswith("*"):
        return False
    inner, cinner = m.group(1), ct[:-1]
    if inner == "Cvoid":
        # An opaque pointer: any single-level pointer (void *, blosc2_schunk *, ...).
        return not cinner.endswith("*")
    if inner == "UInt8" and cinner == "void":
        return True
    return c_matches(inner, cinner)


def normalise(ctype):
    ctype = re.sub(r"\bconst\b", " ", ctype)
    ctype = re.sub(r"\s*\*\s*", "*", ctype)
    return " ".join(ctype.split())


def split_top(s):
    """Splits `s` on commas outside parentheses and braces."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [x.strip() for x in out]


def header_prototypes(path):
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    protos = {}
    for m in re.finditer(r"BLOSC_EXPORT\s+([^;{]*?)\(([^;{]*?)\)\s*;", text, flags=re.S):
        head, args = " ".join(m.group(1).split()), " ".join(m.group(2).split())
        hm = re.fullmatch(r"(.*?[\s*])(\w+)", head)
        if not hm:
            continue
        ret, name = normalise(hm.group(1)), hm.group(2)
        params = []
        if args not in ("", "void"):
            for a in split_top(args):
                am = re.fullmatch(r"(.*?[\s*])(\w+)(\s*\[\s*\w*\s*\])?", a)
                if am is None:  # an unnamed parameter
                    params.append(normalise(a))
                else:
                    params.append(normalise(am.group(1) + ("*" if am.group(3) else "")))
        protos[name] = (ret, params)
    return protos


def ccalls(files):
    for path in files:
        for lineno, line in enumerate(open(path), 1):
            for m in re.finditer(r"@ccall\s+libb2frame\.(\w+)\(", line):
                depth, i = 1, m.end()
                while i < len(line) and depth:
                    depth += {"(": 1, ")": -1}.get(line[i], 0)
                    i += 1
                if depth:
                    yield path, lineno, m.group(1), None, None
                    continue
                args = split_top(line[m.end():i - 1])
                rm = re.match(r"::\s*([\w{}]+)", line[i:])
                types = [a.rsplit("::", 1)[1].strip() if "::" in a else None for a in args]
                yield path, lineno, m.group(1), types, rm.group(1) if rm else None


def main():
    lib = sys.argv[1] if len(sys.argv) > 1 else None
    protos = header_prototypes(os.path.join(ROOT, "include", "blosc2.h"))
    exported = None
    if lib:
        nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True)
        exported = {l.split()[-1] for l in nm.stdout.splitlines() if re.search(r"\s[TW]\s", l)}
    files = []
    for d, _, names in os.walk(os.path.join(ROOT, "bindings", "julia")):
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".jl")]
    n = bad = 0
    for path, lineno, name, types, ret in ccalls(sorted(files)):
        n += 1
        where = f"{os.path.relpath(path, ROOT)}:{lineno}: {name}"
        problems = []
        if types is None or ret is None:
            problems.append("cannot parse the @ccall (it must fit on one line with its return type)")
        elif name not in protos:
            problems.append("no BLOSC_EXPORT prototype in include/blosc2.h")
        else:
            cret, cparams = protos[name]
            if len(types) != len(cparams):
                problems.append(f"{len(types)} arguments, the prototype has {len(cparams)}")
            for k, (jt, ct) in enumerate(zip(types, cparams)):
                if jt is None or not c_matches(jt, ct):
                    problems.append(f"argument {k + 1} is {jt}, the prototype says {ct}")
            if not c_matches(ret, cret):
                problems.append(f"returns {ret}, the prototype says {cret}")
        if exported is not None and name not in exported:
            problems.append(f"{os.path.basename(lib)} does not export it")
        for p in problems:
            print(f"MISMATCH {where}: {p}")
        bad += bool(problems)
    print(f"julia @ccall check: {n} calls, {bad} mismatches")
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
