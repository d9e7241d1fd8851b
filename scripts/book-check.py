#!/usr/bin/env python3
"""Checks the built book and the top-level pages for broken links.

Usage: scripts/book-check.py BOOK_DIR   (the HTML mdBook wrote, e.g. target/book)

1. Every page of docs/ is in docs/SUMMARY.md: mdBook renders only the pages listed there, so a
   page left out would be missing from the book and every link to it broken.
2. Every relative link of the built HTML (href and src) names a file of the book, and its
   #anchor an id in that file: this is what a reader clicks, after mdBook rewrote the .md links.
   A link from a page to a file outside docs/ fails here, since the book does not hold it.
3. Every relative link of README.md and BENCHMARKS.md, which are read outside the book, names a
   file of the repository, and its #anchor a heading of that page (GitHub's anchors).
4. README.md stays the front door (at most 250 lines: the rest goes into the book) and
   BENCHMARKS.md holds current figures only (at most 800 lines: the history stays in git).

Web links are not followed (the machines this runs on may have no network). Our own checker
rather than mdbook-linkcheck: that crate brings an HTTP client stack to check web links we
cannot reach, and it follows mdBook's releases with a lag; relative links and anchors, which we
do check, need only this file. Prints one line per problem; exits 1 if there is one.
"""
import html.parser
import os
import re
import sys
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
# Pages mdBook writes itself; their links are mdBook's, not ours.
GENERATED = {"print.html", "toc.html", "404.html"}


class Links(html.parser.HTMLParser):
    """The ids and the link targets of one HTML file."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            elif name in ("href", "src"):
                self.links.append(value)


def parse(path, cache={}):
    if path not in cache:
        p = Links()
        with open(path, encoding="utf-8") as f:
            p.feed(f.read())
        cache[path] = p
    return cache[path]


def is_external(target):
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target)) or target.startswith("//")


def summary_pages():
    """The pages SUMMARY.md links, relative to docs/."""
    with open(os.path.join(DOCS, "SUMMARY.md"), encoding="utf-8") as f:
        text = f.read()
    return {os.path.normpath(m) for m in re.findall(r"\]\(([^)#\s]+\.md)\)", text)}


def check_summary(bad):
    listed = summary_pages()
    for dirpath, _, files in os.walk(DOCS):
        for name in files:
            if not name.endswith(".md") or name == "SUMMARY.md":
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), DOCS)
            if rel not in listed:
                bad.append(f"docs/{rel}: not in docs/SUMMARY.md, so not in the book")
    for rel in sorted(listed):
        if not os.path.isfile(os.path.join(DOCS, rel)):
            bad.append(f"docs/SUMMARY.md: lists {rel}, which does not exist")


def check_html(book, bad):
    pages = 0
    for dirpath, _, files in os.walk(book):
        for name in files:
            if not name.endswith(".html") or (dirpath == book and name in GENERATED):
                continue
            pages += 1
            page = os.path.join(dirpath, name)
            for target in parse(page).links:
                if is_external(target):
                    continue
                path, _, anchor = target.partition("#")
                path = urllib.parse.unquote(path.split("?")[0])
                dest = os.path.normpath(os.path.join(dirpath, path)) if path else page
                where = os.path.relpath(page, book)
                if os.path.isdir(dest):
                    dest = os.path.join(dest, "index.html")
                if not os.path.isfile(dest):
                    bad.append(f"{where}: link {target}: no such file in the book")
                elif anchor and dest.endswith(".html") and anchor not in parse(dest).ids:
                    bad.append(f"{where}: link {target}: no such anchor")
    if pages == 0:
        bad.append(f"{book}: no HTML pages (was the book built?)")
    return pages


def slug(heading):
    """GitHub's anchor for a heading."""
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def md_anchors(path):
    out, seen, fenced = set(), {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"^#{1,6} ", line):
                s = slug(line.lstrip("#"))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else f"{s}-{n}")
    return out


def check_markdown(rel, bad):
    path = os.path.join(ROOT, rel)
    fenced, n = False, 0
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    for lineno, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", line)):
            n += 1
            if is_external(target):
                continue
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                bad.append(f"{rel}:{lineno}: link {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in md_anchors(dest):
                bad.append(f"{rel}:{lineno}: link {target}: no such section")
    return n


LIMITS = {"README.md": 250, "BENCHMARKS.md": 800}


def check_lengths(bad):
    for rel, most in LIMITS.items():
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > most:
            bad.append(f"{rel}: {n} lines, more than {most}: move the detail into the book (docs/)"
                       if rel == "README.md" else
                       f"{rel}: {n} lines, more than {most}: keep current figures only (history is in git)")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    book = os.path.abspath(sys.argv[1])
    bad = []
    check_summary(bad)
    pages = check_html(book, bad)
    links = sum(check_markdown(rel, bad) for rel in ("README.md", "BENCHMARKS.md"))
    check_lengths(bad)
    for b in bad:
        print(b)
    print(f"book links: {pages} pages, {len(summary_pages())} in SUMMARY.md, "
          f"{links} links in README.md and BENCHMARKS.md; {len(bad)} problems")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
