#!/usr/bin/env python3
"""Runs one of the project's benches several times and prints its markdown table with the
median of every numeric cell over the runs (and how many runs put each ratio below 1.0).

Why: on a shared or virtual machine a single bench process can land on a lucky or unlucky
memory placement for either library (both libraries' speeds move by up to ~20% from one
process to the next, see BENCHMARKS.md), so one run's row can read 0.9 or 1.1 for the same
code. The median over separate processes is the number to compare.

Usage: scripts/bench-median.py RUNS BENCH [ENV=VALUE ...]
  e.g. scripts/bench-median.py 3 chunk B2_BENCH_FILTER='| 1'
Runs `cargo bench --bench BENCH` (CARGO_TARGET_DIR honoured) RUNS times.
"""
import os
import statistics
import subprocess
import sys


def table_rows(text):
    """(header, rows) of the first markdown table in `text`; rows are lists of cells."""
    header, rows = None, []
    for line in text.splitlines():
        if not line.startswith("|"):
            if header and rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif set("".join(cells)) <= set("-:"):
            continue
        else:
            rows.append(cells)
    return header, rows


def number(cell):
    try:
        return float(cell.split()[0])
    except (ValueError, IndexError):
        return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs, bench = int(sys.argv[1]), sys.argv[2]
    env = dict(os.environ)
    for kv in sys.argv[3:]:
        k, _, v = kv.partition("=")
        env[k] = v
    tables = []
    for i in range(runs):
        out = subprocess.run(
            ["cargo", "bench", "--bench", bench],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        header, rows = table_rows(out)
        if not rows:
            sys.exit(f"run {i + 1}: no table in the output of `cargo bench --bench {bench}`")
        tables.append(rows)
        print(f"run {i + 1} of {runs}: {len(rows)} rows", file=sys.stderr)
    # Ratio columns ("C x", "C ours/ref", "ours/reference", ...) and other measured columns
    # (GB/s, compression ratios); everything else is a row label, kept from the first run.
    def is_ratio(h):
        return h.endswith(" x") or h.endswith("ours/ref") or h.startswith("ours/")

    measured = [is_ratio(h) or "GB/s" in h or h.endswith("ratio") for h in header]
    print("| " + " | ".join(header) + " | runs below 1.0 |")
    print("|" + "---|" * (len(header) + 1))
    for r, row in enumerate(tables[0]):
        cells, below = [], []
        for j, cell in enumerate(row):
            vals = [number(t[r][j]) for t in tables]
            if not measured[j] or any(v is None for v in vals):
                cells.append(cell)
                continue
            m = statistics.median(vals)
            cells.append(f"{m:.2f}" if is_ratio(header[j]) or m >= 10 else f"{m:.3g}")
            if is_ratio(header[j]):
                below.append(f"{header[j]} {sum(v < 1.0 for v in vals)}/{len(vals)}")
        print("| " + " | ".join(cells) + " | " + ", ".join(below) + " |")


if __name__ == "__main__":
    main()
