#!/usr/bin/env python3
"""Writes link/hot-text.ld from callgrind profiles of benches/memory/frame_ops.c (see
scripts/hot-text.sh, which runs them): the functions of libb2frame.so that the profiled frame
operations execute, as name patterns, in an order that keeps what every operation needs together.

    hot-text.py OUT.ld LIBB2FRAME.so OP=CALLGRIND_FILE... [-- LIBB2FRAME.so OP=CALLGRIND_FILE...]

A pattern drops the parts of a symbol that change between builds (the legacy mangling's hash,
the crate disambiguators of v0 names), unless that would also take instantiations of a generic
function that no profiled operation runs: those are listed by their names with the hash, for
each profiled build (a hash depends on the crate's metadata, which differs between a workspace
`cargo build` and CMake's `cargo build -p b2frame --lib`, and with the toolchain, but not on the
code), and their hash-less patterns go into a section of their own, between .text and the hot
one, with the other instances (and all of them in a build whose hashes were not profiled).
The list stays valid while the code changes; functions added or instantiated later simply stay
in the rest of .text.
"""
import re
import subprocess
import sys

# Paths the profile does not see, found from the page faults of native runs (`perf record -e
# page-faults -d`): callgrind's CPU has no AVX-512, so the AVX-512 kernels chosen at run time on
# such machines (shuffle dispatch, CRC), and calls that depend on the frame's content.
EXTRA = [
    "_ZN12blosc2_frame7filters7shuffle8dispatch6avx512*",
    "_ZN12blosc2_frame7filters7shuffle6avx5121*",
    "_ZN12blosc2_frame3crc*",
    "_ZN9crc32fast11specialized9pclmulqdq16calculate_avx512*",
    "_ZN12blosc2_frame5frame7offsets8specials18synthesise_special17h*",
    "_RNv*_3std*9try_clone",
    # The staging loops of the AVX2 (un)shuffle kernels, for element sizes the profiled frames
    # (typesize 4) do not stage.
    "_ZN12blosc2_frame7filters7shuffle8dispatch4avx214shuffle_staged17h*",
    "_ZN12blosc2_frame7filters7shuffle8dispatch4avx216unshuffle_staged17h*",
]

# Operations in the order their code is laid out before the part they all share (the list is
# written backwards): the ones whose whole working set should fit in the fewest 64 KiB windows
# first (the kernel maps file pages
# around each fault in 64 KiB windows, so one call into a window costs the whole window).
ORDER = ["from_buffer", "to_file_mem", "copy_plain", "open", "to_buffer", "copy_memory",
         "to_file", "copy_cframe", "append_file", "slice", "append1", "copy_sframe"]


def executed(path, lib_names):
    """Names of the functions of libb2frame.so that callgrind saw run."""
    obs, fns, out, cur = {}, {}, set(), None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                obs[m.group(2)] = m.group(3)
            if m.group(1) == "ob":
                cur = obs[m.group(2)]
            continue
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                fns[m.group(2)] = m.group(3)
            name = re.sub(r"'\d+$", "", fns[m.group(2)])
            if m.group(1) == "fn" and name in lib_names and ("b2frame" in (cur or "") or cur == "???"):
                out.add(name)
    return out


def pattern(name):
    name = re.sub(r"\.llvm\.\d+$", "", name)
    if name.startswith("_ZN"):
        m = re.match(r"^(.*)17h[0-9a-f]{16}E$", name)
        p = m.group(1) + "17h*" if m else name
    elif name.startswith("_R"):
        p = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name) + "*"
    else:
        p = name
    # Characters a linker-script name cannot hold unquoted match any character.
    return re.sub(r"[^A-Za-z0-9_$.*]", "?", p)


def main():
    out_path = sys.argv[1]
    # Groups "LIB OP=CALLGRIND_FILE..." separated by "--": the same operations profiled on
    # builds with other symbol hashes (see hot-text.sh).
    groups, cur = [], None
    for arg in sys.argv[2:]:
        if arg == "--":
            cur = None
        elif cur is None:
            cur = (arg, {})
            groups.append(cur)
        else:
            op, path = arg.split("=", 1)
            cur[1][op] = path
    users = {}  # hash-less pattern -> operations that run it
    exact = {}  # hash-less pattern of a generic function -> the instances that run, by hash
    ops = set()
    for lib, profiles in groups:
        nm = subprocess.run(["nm", "--defined-only", lib], capture_output=True, text=True,
                            check=True).stdout
        names = {p[2] for p in (l.split() for l in nm.splitlines())
                 if len(p) == 3 and p[1] in "tTwW"}
        # A legacy-mangled pattern that also matches instantiations nobody profiled runs
        # (generic wrappers: guard, read_op, bracket ... have dozens) is written as the
        # symbol's own names with their hashes, so that only the instances that run are
        # gathered.
        matches = {}
        for n in names:
            if n.startswith("_ZN"):
                p = pattern(n)
                matches[p] = matches.get(p, 0) + 1
        for op, path in profiles.items():
            ops.add(op)
            for f in executed(path, names):
                p = pattern(f)
                users.setdefault(p, set()).add(op)
                if matches.get(p, 0) > 1:
                    name = re.sub(r"\.llvm\.\d+$", "", f)
                    e = exact.setdefault(p, [])
                    q = re.sub(r"[^A-Za-z0-9_$.*]", "?", name) + "*"
                    if q not in e:
                        e.append(q)
    order, seen = [], set()

    def put(ps):
        for p in ps:
            if p not in seen:
                seen.add(p)
                order.append(p)

    put(sorted(p for p, u in users.items() if len(u) == len(ops)))
    put(EXTRA)
    for op in [o for o in ORDER if o in ops] + sorted(ops - set(ORDER)):
        put(sorted((p for p, u in users.items() if op in u), key=lambda p: (-len(users[p]), p)))
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(
            "/* Generated by scripts/hot-text.sh (BENCHMARKS.md, \"Peak memory: code pages\").\n"
            " * The functions of libb2frame.so that frame operations run, gathered in one output\n"
            " * section next to the PLT, so that a process touches few 64 KiB windows of\n"
            " * the library's code (each first call into a window maps the whole window). Only the\n"
            " * order of functions changes; a pattern that matches nothing is ignored. */\n"
            "SECTIONS\n{\n  .text.b2hot :\n  {\n")
        # Reversed: the part every operation runs ends next to the PLT (after .text), which
        # every call into the C library goes through, so both share one window.
        for p in reversed(order):
            for q in exact.get(p, [p]):
                f.write(f"    *(.text.{q} .text.unlikely.{q})\n")
        f.write("  }\n}\nINSERT AFTER .text;\n")
        # The hash-less patterns of the generic functions listed above by hash, in a section of
        # their own written after (a linker script puts a section where the first pattern that
        # matches it is) and placed before (each INSERT AFTER .text goes right after .text):
        # they gather the instances nobody profiled runs away from the rest, and all instances
        # of a build whose hashes were not profiled (another toolchain) in one place.
        f.write("SECTIONS\n{\n  .text.b2gen :\n  {\n")
        for p in sorted(exact):
            f.write(f"    *(.text.{p} .text.unlikely.{p})\n")
        f.write("  }\n}\nINSERT AFTER .text;\n")
    print(f"{len(order)} functions from {len(ops)} operations on {len(groups)} builds -> {out_path}")


if __name__ == "__main__":
    main()
