#!/usr/bin/env python3
"""Regenerates the tables of BENCHMARKS.md from the benches' own output.

Usage:
  scripts/bench-tables.py run [AREA...]     run the benches, keep their output, write the tables
  scripts/bench-tables.py write [AREA...]   write the tables from the output kept by `run`
  scripts/bench-tables.py list              the areas and their commands
  scripts/bench-tables.py selftest          the parsers and `write` on samples (scripts/book.sh)

With no AREA, every area that has a bench today. `run` keeps each bench's stdout and the run's
facts (commit, machine, load at the start and at the end, date, duration, command) in
target/bench-out/AREA.{txt,json} (CARGO_TARGET_DIR honoured), then `write` replaces the block
between `<!-- bench:AREA -->` and `<!-- /bench:AREA -->` in BENCHMARKS.md with a line of those
facts and the tables. Nothing else of BENCHMARKS.md changes; an area whose bench does not exist
yet (its command names a file that is missing) is reported and skipped.

Timings lie on a loaded machine: `run` refuses to start when the load average is above
B2_BENCH_MAX_LOAD (default 1.0), unless B2_BENCH_FORCE=1; the load at the start and the end of
each bench goes into its table's line either way. Set B2_BENCH_MEDIAN_RUNS (default 3) for the areas measured as medians of processes.
"""
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MD = os.path.join(ROOT, "BENCHMARKS.md")
OUT = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "bench-out")
RUNS = os.environ.get("B2_BENCH_MEDIAN_RUNS", "3")


def work(area):
    """A scratch directory for the scripts that want one."""
    return os.path.join(OUT, f"{area}-work")


# Each area: its bench command (argv, run from the repository root; `needs` is a file the command
# needs, so an area whose bench is still being written is skipped), and how its output becomes
# tables (`tables`: a function of the output giving markdown lines; default: every table in it).
AREAS = {}


def area(name, cmd, needs=None, env=None, tables=None, source=None):
    """`source`: the area whose output this one's tables come from (one bench run, two tables)."""
    AREAS[name] = dict(cmd=cmd, needs=needs, env=env or {}, tables=tables, source=source)


def md_tables(text):
    """The markdown tables of `text`, each a list of lines, with the header widened when rows
    have more cells than it (the benches put several `|`-separated fields in their first cell)."""
    out, cur = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cur.append(line.rstrip())
        elif cur:
            out.append(widen(cur))
            cur = []
    return out


def widen(lines):
    cells = lambda l: l.strip().strip("|").split("|")
    extra = max(len(cells(l)) for l in lines[2:]) - len(cells(lines[0])) if len(lines) > 2 else 0
    if extra <= 0:
        return lines
    head, rule = cells(lines[0]), cells(lines[1])
    head = [head[0]] + [" "] * extra + head[1:]
    rule = ["---"] * len(head)
    return ["|" + "|".join(head) + "|", "|" + "|".join(rule) + "|"] + lines[2:]


def all_tables(text):
    res = []
    for t in md_tables(text):
        res += t + [""]
    return res


def chunk_summary(text):
    """The chunk table, then the geometric mean of its compress and decompress ratios (`C x`,
    `D x`) per thread count, with the cells below 1.0 and the worst one."""
    t = md_tables(text)[0]
    head = [h.strip() for h in t[0].strip().strip("|").split("|")]
    col = {h: i for i, h in enumerate(head)}
    if not {"thr", "C x", "D x"} <= col.keys():
        return t + [""]
    by = {}
    for line in t[2:]:
        cells = [x.strip() for x in line.strip().strip("|").split("|")]
        for side in ("C x", "D x"):
            try:
                by.setdefault((side, cells[col["thr"]]), []).append(float(cells[col[side]].split()[0]))
            except ValueError:
                pass
    lines = ["| | " + " | ".join(f"{'compress' if s == 'C x' else 'decompress'}, {th} thread{'s' if th != '1' else ''}"
                                 for s, th in sorted(by)) + " |", "|---|" + "---|" * len(by)]
    cells = []
    for key in sorted(by):
        v = by[key]
        g = math.exp(sum(map(math.log, v)) / len(v))
        below = [x for x in v if x < 1.0]
        cells.append(f"{g:.2f} ({len(below)} of {len(v)} below{f', worst {min(v):.2f}' if below else ''})")
    lines.append("| all rows | " + " | ".join(cells) + " |")
    return t + ["", "Geometric mean of ours/reference, cells below 1.0, worst cell:", ""] + lines + [""]


def rows_where(pred):
    """The first table of the output, with only the rows whose first cell passes `pred`."""
    def pick(text):
        t = md_tables(text)[0]
        return t[:2] + [l for l in t[2:] if pred(l.strip().strip("|").split("|")[0].strip())] + [""]
    return pick


def append_scaling(text):
    """benches/memory/append_scaling.sh prints `KIND LIBRARY CHUNKS APPENDS_PER_S` lines; KIND is
    `FRAME-from-zero` (a rate per block of 10,000 appends to a new frame) or
    `FRAME-prebuilt-SIZE` (appends to a frame of SIZE chunks)."""
    zero, pre = {}, {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)-(from-zero|prebuilt-(\d+)) (ours|ref) (\d+) ([\d.]+)$", line.strip())
        if m and m[3]:
            pre[(m[1], int(m[3]), m[4])] = float(m[6])
        elif m:
            zero[(m[1], int(m[5]), m[4])] = float(m[6])

    def table(rates, first):
        kinds = sorted({k for k, _, _ in rates})
        lines = [f"| {first} | " + " | ".join(kinds) + " |", "|---|" + "---|" * len(kinds)]
        for n in sorted({n for _, n, _ in rates}):
            cells = []
            for k in kinds:
                o, r = rates.get((k, n, "ours")), rates.get((k, n, "ref"))
                cells.append(f"{r:.0f} / {o:.0f} ({o / r:.1f}x)" if o and r else "")
            lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
        return lines + [""]
    return (["Appends per second from an empty frame, per block of 10,000, c-blosc2 / ours (ours/reference):", ""]
            + table(zero, "chunks at the block's end")
            + ["Appends per second to a frame that already holds many chunks, c-blosc2 / ours:", ""]
            + table(pre, "chunks in the frame"))


def write_costs(text):
    """tests/frame_crash_states.rs `write_costs` prints one line per frame kind and mode."""
    lines = ["| frame | durable | appends/s | bytes written per append | writes per append | syncs per append |",
             "|---|---|---|---|---|---|"]
    pat = (r"^(cframe|sframe) durable=(true|false): (\d+) appends/s, (\d+) bytes written per append "
           r"\((\d+)-byte chunk\), ([\d.]+) writes and ([\d.]+) syncs per append")
    for line in text.splitlines():
        m = re.match(pat, line.strip())
        if m:
            lines.append(f"| {m[1]} | {'yes' if m[2] == 'true' else 'no'} | {m[3]} | {m[4]} ({m[5]}-byte chunk) | {m[6]} | {m[7]} |")
    return lines


bench = lambda name: ["cargo", "bench", "--bench", name]
median = lambda name: ["python3", "scripts/bench-median.py", RUNS, name]
area("chunk", median("chunk"), tables=chunk_summary)
area("codecs", median("codecs"), tables=all_tables)
def with_geomean(text):
    """Every table, then the bench's `geometric mean ...` line (benches/blosclz.rs)."""
    return all_tables(text) + [l.strip().capitalize() + "." for l in text.splitlines()
                               if l.startswith("geometric mean")]


area("blosclz", bench("blosclz"), tables=with_geomean)
area("filters", bench("filters"))
area("frame", bench("frame"), tables=rows_where(lambda op: not op.startswith("append")))
area("appends", bench("frame"), source="frame", tables=rows_where(lambda op: op.startswith("append")))
area("append-scaling", ["bash", "benches/memory/append_scaling.sh", work("append-scaling")],
     env={"B2_AS_ZERO_OURS": "50000", "B2_AS_ZERO_REF": "50000", "B2_AS_ZERO_SMALL": "20000",
          "B2_AS_SIZES": "250000 1000000"}, tables=append_scaling)
area("lazy", bench("lazy"))
area("memory", ["bash", "benches/memory/run.sh", work("memory")], env={"B2_MEM_EXACT": "1"})
area("b2nd", bench("b2nd"))
area("fingerprint", bench("fingerprint"))
area("crash", ["cargo", "test", "--release", "--test", "frame_crash_states", "--", "--ignored",
               "--nocapture", "write_costs"], tables=write_costs)
area("crash-durable", bench("frame"), env={"B2_BENCH_FILTER": "append_chunk", "B2FRAME_DURABLE": "1"},
     tables=rows_where(lambda op: op.startswith("append_chunk")))
# The C API decompression benchmark with threads (benches/threads/).
area("threads", ["bash", "benches/threads/run.sh", work("threads")])
# The Rust comparison with blosc2-pure-rs, a bench process of its own: its run script, when the
# Rust API work lands it, is benches/pure-rs/run.sh and prints markdown tables.
area("rust", ["bash", "benches/pure-rs/run.sh"], needs="benches/pure-rs/run.sh")


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def machine():
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def load():
    return os.getloadavg()[0]


def available(name):
    a = AREAS[name]
    need = a["needs"] or next((p for p in a["cmd"] if p.endswith((".sh", ".py"))), None)
    return need is None or os.path.exists(os.path.join(ROOT, need))


def run(names):
    os.makedirs(OUT, exist_ok=True)
    # Checked once, before the first bench: the benches themselves then raise the load average.
    limit = float(os.environ.get("B2_BENCH_MAX_LOAD", "1.0"))
    if load() > limit and os.environ.get("B2_BENCH_FORCE") != "1":
        sys.exit(f"load average {load():.2f} is above {limit} (B2_BENCH_MAX_LOAD): timings would "
                 "be noise. Wait for a quiet machine, or set B2_BENCH_FORCE=1.")
    for name in dict.fromkeys(AREAS[n]["source"] or n for n in names):
        a = AREAS[name]
        if not available(name):
            print(f"{name}: skipped, {a['needs']} does not exist yet")
            continue
        l0 = load()
        env = dict(os.environ, **a["env"])
        # The settings that steer the benches, from the caller's environment too, so the
        # command in the table's line reproduces it.
        steer = {k: v for k, v in env.items() if k.startswith(("B2_", "B2FRAME_"))
                 and k not in ("B2_BENCH_FORCE", "B2_BENCH_MAX_LOAD", "B2_BENCH_MEDIAN_RUNS", "B2FRAME_REF_LIB")}
        shown = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(steer.items()))
        shown = (shown + " " if shown else "") + " ".join(shlex.quote(c) for c in a["cmd"])
        shown = shown.replace(OUT, "target/bench-out")
        print(f"=== {name}: {shown} (load {l0:.2f})", flush=True)
        t0 = time.time()
        p = subprocess.run(a["cmd"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        secs = time.time() - t0
        sys.stdout.write(p.stdout)
        if p.returncode != 0:
            sys.exit(f"{name}: the bench failed (exit {p.returncode}); its table is left as it was")
        dirty = "+changes" if git("status", "--porcelain", "--untracked-files=no") else ""
        facts = dict(commit=git("rev-parse", "--short", "HEAD") + dirty, machine=machine(),
                     load_start=round(l0, 2), load_end=round(load(), 2), seconds=round(secs),
                     date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t0)), command=shown)
        with open(os.path.join(OUT, f"{name}.txt"), "w") as f:
            f.write(p.stdout)
        with open(os.path.join(OUT, f"{name}.json"), "w") as f:
            json.dump(facts, f, indent=1)
        print(f"=== {name}: {secs:.0f} s", flush=True)


def block(name):
    src = AREAS[name]["source"] or name
    with open(os.path.join(OUT, f"{src}.txt")) as f:
        text = f.read()
    with open(os.path.join(OUT, f"{src}.json")) as f:
        facts = json.load(f)
    tables = (AREAS[name]["tables"] or all_tables)(text)
    if not any(l.startswith("|") for l in tables):
        # A bench whose output format changed must not leave an empty block behind.
        sys.exit(f"{name}: no table in the kept output of {src}; BENCHMARKS.md left as it was")
    head = (f"Measured at {facts['commit']} on {facts['date']} ({facts['machine']}; load average "
            f"{facts['load_start']} at the start, {facts['load_end']} at the end; {facts['seconds']} s): "
            f"`{facts['command']}`.")
    return "\n".join([head, ""] + tables).rstrip() + "\n"


def write(names):
    with open(MD) as f:
        md = f.read()
    for name in names:
        if not os.path.exists(os.path.join(OUT, f"{AREAS[name]['source'] or name}.json")):
            print(f"{name}: no output kept (run it first); table left as it was")
            continue
        begin, end = f"<!-- bench:{name} -->\n", f"<!-- /bench:{name} -->"
        i, j = md.find(begin), md.find(end)
        if i < 0 or j < i:
            sys.exit(f"BENCHMARKS.md has no {begin.strip()} ... {end} block")
        md = md[: i + len(begin)] + block(name) + md[j:]
        print(f"{name}: table written")
    with open(MD, "w") as f:
        f.write(md)


def selftest():
    """Each parser on a sample of its bench's output, and `write` on a copy of BENCHMARKS.md
    (scripts/book.sh runs this, so a change to a bench's output format shows at once)."""
    import tempfile
    frame = ("| row | ours CPU | ref CPU | x CPU |\n|---|---|---|---|\n"
             "| open+free | cframe | 4K x 1000 | ref-written | 11.6 µs | 22.2 µs | 1.91 |\n"
             "| append_chunk blosclz/5 shuf | cframe | 4K x 10000 | new+appends+free | 24981 /s | 6293 /s | 3.97 |\n")
    t = md_tables(frame)[0]
    assert t[0].count("|") == t[2].count("|"), t
    assert [l for l in rows_where(lambda op: op.startswith("append"))(frame) if l.startswith("| append")]
    assert not [l for l in AREAS["frame"]["tables"](frame) if l.startswith("| append")]
    a = append_scaling("file-from-zero ours 10000 17749\nfile-from-zero ref 10000 1123\n"
                       "file-from-zero ours total 3.2 s\nfile-prebuilt-250000 ours 252000 2971\n"
                       "file-prebuilt-250000 ref 252000 436\n")
    assert "| 10,000 | 1123 / 17749 (15.8x) |" in a and "| 250,000 | 436 / 2971 (6.8x) |" in a, a
    w = write_costs("cframe durable=true: 222 appends/s, 5704 bytes written per append "
                    "(4032-byte chunk), 7.0 writes and 4.0 syncs per append\n")
    assert w[-1] == "| cframe | yes | 222 | 5704 (4032-byte chunk) | 7.0 | 4.0 |", w
    b = with_geomean("| data | block | C x |\n|---|---|---|\n| text | 64K | 1.20 |\n\n"
                     "geometric mean over 1 coded cases, ours/reference: compress 1.200, decompress 1.100\n")
    assert b[0].startswith("| data") and b[-1].startswith("Geometric mean over 1"), b
    chunk = ("| codec/filter | data | chunk | thr | C x | D x |\n|---|---|---|---|---|---|\n"
             "| lz4 | text | 64K | 1 | 1.21 | 0.81 |\n| lz4 | text | 1M | 1 | 1.21 | 1.25 |\n")
    s = chunk_summary(chunk)
    assert "| all rows | 1.21 (0 of 2 below) | 1.01 (1 of 2 below, worst 0.81) |" in s, s
    global OUT, MD
    with tempfile.TemporaryDirectory() as d:
        OUT, MD = d, os.path.join(d, "BENCHMARKS.md")
        with open(os.path.join(ROOT, "BENCHMARKS.md")) as f:
            before = f.read()
        with open(MD, "w") as f:
            f.write(before)
        with open(os.path.join(d, "filters.txt"), "w") as f:
            f.write("noise\n| a | b |\n|---|---|\n| 1 | 2 |\nlowest 1.0\n")
        with open(os.path.join(d, "filters.json"), "w") as f:
            json.dump(dict(commit="abc1234", machine="m", load_start=0.1, load_end=0.2,
                           seconds=9, date="d", command="cargo bench --bench filters"), f)
        write(["filters"])
        with open(MD) as f:
            after = f.read()
    begin, end = "<!-- bench:filters -->\n", "<!-- /bench:filters -->"
    assert after.split(begin)[0] == before.split(begin)[0] and after.split(end)[1] == before.split(end)[1]
    got = after.split(begin)[1].split(end)[0]
    assert got.startswith("Measured at abc1234 on d (m; load average 0.1 at the start, 0.2 at the end; 9 s)"), got
    assert "| 1 | 2 |" in got and "noise" not in got, got
    print("bench-tables selftest: ok")


def main():
    cmd, names = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    for n in names:
        if n not in AREAS:
            sys.exit(f"unknown area {n}; areas: {', '.join(AREAS)}")
    names = names or list(AREAS)
    if cmd == "run":
        run(names)
        write([n for n in names if available(n)])
    elif cmd == "write":
        write(names)
    elif cmd == "selftest":
        selftest()
    elif cmd == "list":
        for n in AREAS:
            a = AREAS[n]
            env = " ".join(f"{k}={v}" for k, v in a["env"].items())
            how = f"the output of {a['source']}" if a["source"] else (env + " " if env else "") + " ".join(a["cmd"])
            print(f"{n:15} {how}{'' if available(n) else '  (not there yet)'}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
