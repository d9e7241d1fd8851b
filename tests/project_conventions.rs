//! Conventions of the source tree that a tool checks rather than a reviewer's memory.
//!
//! * Every exported `extern "C"` function runs inside the panic guard of
//!   `src/capi/boundary.rs` (`guard`, or `caught` for bodies that report through out-pointers), directly or through one guarded helper it forwards to,
//!   or is on [`UNGUARDED`], a short list of bodies that hold no operation that can panic.
//! * Every `docs/<page>.md#<section>` a source file or test cites exists, and so does every
//!   link between the pages of `docs/`.
//! * The modules of the C facade (`src/capi/<module>`) import each other without a cycle, so
//!   that each can be read knowing only the ones below it.
//! * Every module of the safe core (`core/src`) and of the CLI (`cli/src`) that holds no
//!   `unsafe`, nor any module below it does, has `#![forbid(unsafe_code)]` (itself or through
//!   a module above it), so that `unsafe` cannot creep in unnoticed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Exported functions whose bodies are not guarded, and why that is safe.
const UNGUARDED: &[(&str, &str)] = &[
    ("blosc2_get_version_string", "returns a constant"),
    ("b2frame_version_string", "returns a constant"),
    ("blosc2_get_blosc2_cparams_defaults", "returns a constant"),
    ("blosc2_get_blosc2_dparams_defaults", "returns a constant"),
    ("blosc2_get_blosc2_storage_defaults", "returns a constant"),
    ("blosc2_get_blosc2_io_defaults", "returns a constant"),
    (
        "blosc2_get_blosc2_stdio_mmap_defaults",
        "returns a constant",
    ),
    ("blosc2_stdio_mmap_close", "returns 0"),
    ("blosc2_stdio_destroy", "returns 0"),
    (
        "blosc_set_timestamp",
        "a NULL check and one clock_gettime call",
    ),
    (
        "blosc_elapsed_nsecs",
        "float arithmetic on wrapping differences",
    ),
    ("blosc_elapsed_secs", "a product with blosc_elapsed_nsecs"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The body of the item whose `{` is the first one at or after byte `from` (braces balanced;
/// good enough for this tree, whose string literals hold no unbalanced braces in these bodies).
fn body_at(src: &str, from: usize) -> &str {
    let open = from + src[from..].find('{').unwrap();
    let mut depth = 0;
    for (i, c) in src[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &src[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces after byte {from}");
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Names of the functions `body` calls (`name(`), without duplicates.
fn calls(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, _) in body.match_indices('(') {
        let start = body[..i].rfind(|c: char| !is_ident(c)).map_or(0, |j| j + 1);
        let name = &body[start..i];
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn guarded(body: &str) -> bool {
    calls(body).iter().any(|&c| c == "guard" || c == "caught")
}

#[test]
fn every_exported_function_runs_inside_the_panic_guard() {
    let mut files = Vec::new();
    rust_files(&root().join("src/capi"), &mut files);
    files.sort();
    let sources: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|p| {
            let s = std::fs::read_to_string(&p).unwrap();
            (p, s)
        })
        .collect();
    // Every function of the C facade (exported or not) by name, with its body.
    let mut bodies: BTreeMap<&str, &str> = BTreeMap::new();
    let mut exported: Vec<(&str, &Path)> = Vec::new();
    for (path, src) in &sources {
        for (at, _) in src.match_indices("fn ") {
            if at > 0 && is_ident(src[..at].chars().last().unwrap()) {
                continue;
            }
            let rest = &src[at + 3..];
            let len = rest.find(|c: char| !is_ident(c)).unwrap_or(0);
            let name = &rest[..len];
            if name.is_empty() || !rest[len..].starts_with(['(', '<']) {
                continue;
            }
            // A declaration without a body (`fn f(...);` in an extern block or a trait).
            let head_end = at + rest.find(['{', ';']).map_or(0, |j| j + 3);
            if src.as_bytes().get(head_end) != Some(&b'{') {
                continue;
            }
            bodies.insert(name, body_at(src, at));
        }
        for (at, _) in src.match_indices("#[no_mangle]") {
            let rest = &src[at..];
            let f = rest.find("fn ").unwrap();
            assert!(
                rest[..f].contains("extern \"C\""),
                "{}: {}",
                path.display(),
                &rest[..f]
            );
            let name = &rest[f + 3..];
            exported.push((&name[..name.find('(').unwrap()], path.as_path()));
        }
    }
    assert!(
        exported.len() > 100,
        "found only {} exports",
        exported.len()
    );
    let allowed: BTreeMap<&str, &str> = UNGUARDED.iter().copied().collect();
    let mut bad = Vec::new();
    for (name, path) in &exported {
        let body = bodies[name];
        if guarded(body) {
            continue;
        }
        // Forwarding to one helper (or another export) whose own body is guarded.
        let forwards = calls(body)
            .iter()
            .any(|c| c != name && bodies.get(c).is_some_and(|b| guarded(b)));
        if forwards || allowed.contains_key(name) {
            continue;
        }
        bad.push(format!("{name} ({})", path.display()));
    }
    assert!(
        bad.is_empty(),
        "exported functions outside the panic guard (wrap the body in the guard of \
         src/capi/boundary.rs, or justify it in UNGUARDED): {bad:?}"
    );
    for name in allowed.keys() {
        let body = bodies
            .get(name)
            .unwrap_or_else(|| panic!("UNGUARDED names {name}, which is not exported any more"));
        assert!(
            !guarded(body),
            "{name} is guarded now: drop it from UNGUARDED"
        );
    }
}

/// The anchor GitHub gives a Markdown heading: lower case, punctuation other than `-` and `_`
/// dropped, spaces turned into `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of the headings of one Markdown file.
fn anchors(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
        // A page the book builds from another file (`{{#include ../BENCHMARKS.md}}`) has that
        // file's sections.
        if let Some(inc) = line
            .trim()
            .strip_prefix("{{#include ")
            .and_then(|r| r.strip_suffix("}}"))
        {
            let included = page.parent().unwrap().join(inc.trim());
            if included != page {
                out.extend(anchors(&included));
            }
        }
    }
    out
}

/// Checks one citation `page#anchor` (anchor optional), relative to `base`.
fn check_citation(base: &Path, target: &str, from: &str, bad: &mut Vec<String>) {
    let (page, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let path = base.join(page);
    if !path.is_file() {
        bad.push(format!("{from}: {target}: no such page"));
        return;
    }
    if let Some(a) = anchor {
        if !anchors(&path).iter().any(|x| x == a) {
            bad.push(format!("{from}: {target}: no such section"));
        }
    }
}

/// The citations of docs pages in `text`: `docs/<page>.md`, optionally with `#<section>`.
fn citations(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("docs/") {
        if at > 0 && is_ident(text[..at].chars().last().unwrap()) {
            continue;
        }
        let rest = &text[at..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-#".contains(c)))
            .unwrap_or(rest.len());
        let cite = rest[..end].trim_end_matches(['.', ',']);
        if cite.split('#').next().unwrap().ends_with(".md") {
            out.push(cite);
        }
    }
    out
}

#[test]
fn every_cited_docs_section_exists() {
    let root = root();
    let mut files = Vec::new();
    for dir in ["src", "core/src", "cli/src", "cli/tests", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut bad = Vec::new();
    let mut seen = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for c in citations(&text) {
            seen += 1;
            check_citation(&root, c, &f.display().to_string(), &mut bad);
        }
        // The notes the code cited before docs/ existed are not part of the project.
        for old in [concat!("cblosc2", "-notes"), "notes \u{a7}"] {
            assert!(!text.contains(old), "{}: cites {old}", f.display());
        }
    }
    assert!(seen > 20, "only {seen} citations found");
    // Links between the pages: `](page.md#anchor)`, relative to the linking page.
    let mut pages = Vec::new();
    let mut stack = vec![root.join("docs")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    assert!(pages.len() >= 8, "docs/ holds {} pages", pages.len());
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let target = &rest[..rest.find(')').unwrap()];
            if target.starts_with("http") {
                continue;
            }
            let base = page.parent().unwrap();
            let target = if let Some(a) = target.strip_prefix('#') {
                format!("{}#{a}", page.file_name().unwrap().to_str().unwrap())
            } else {
                target.to_string()
            };
            check_citation(base, &target, &page.display().to_string(), &mut bad);
        }
    }
    assert!(bad.is_empty(), "broken docs citations: {bad:#?}");
}

/// The path of the module a file of `src/` holds (`src/capi/handle/mod.rs` is `capi::handle`).
fn module_path_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root().join("src")).unwrap();
    let mut path: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    path
}

/// The source without comments and without its `#[cfg(test)] mod tests` (tests may reach
/// anywhere; the layering is about what the library's own code needs).
fn code_of(src: &str) -> String {
    let tests = src.match_indices("#[cfg(test)]\n").find(|(i, m)| {
        let next = src[i + m.len()..].lines().next().unwrap_or("");
        next.ends_with("mod tests {")
    });
    let src = match tests {
        Some((i, _)) => &src[..i],
        None => src,
    };
    src.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first names of the paths a `use` tree or a path expression starting at `rest` names:
/// `a::x` gives `a`, `{a::x, b, c::{..}}` gives `a`, `b`, `c`.
fn first_names(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('{') {
        let mut names = Vec::new();
        let mut depth = 0;
        let mut at_start = true;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => at_start = true,
                c if at_start && is_ident(c) => {
                    let name: String = inner[i..].chars().take_while(|&c| is_ident(c)).collect();
                    names.push(name);
                    at_start = false;
                }
                _ => {}
            }
        }
        names
    } else {
        vec![rest.chars().take_while(|&c| is_ident(c)).collect()]
    }
}

/// The modules directly under `crate::<top>` (its files and directories) that each of them
/// names, through `super::` or `crate::<top>::` paths.
fn module_graph(top: &str) -> BTreeMap<String, std::collections::BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&root().join("src").join(top), &mut files);
    let mut graph: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let here = module_path_of(&f);
        if here.len() < 2 {
            continue; // src/<top>/mod.rs itself: it declares the modules
        }
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        let edges = graph.entry(here[1].clone()).or_default();
        let full = format!("crate::{top}::");
        let mut i = 0;
        while i < code.len() {
            let rest = &code[i..];
            let (base, after) = if rest.starts_with(&full)
                && (i == 0 || !code[..i].ends_with(|c: char| is_ident(c) || c == ':'))
            {
                (vec![top.to_string()], &rest[full.len()..])
            } else if rest.starts_with("super::")
                && (i == 0 || !code[..i].ends_with(|c: char| is_ident(c) || c == ':'))
            {
                let mut n = 0;
                let mut r = rest;
                while let Some(t) = r.strip_prefix("super::") {
                    n += 1;
                    r = t;
                }
                (here[..here.len().saturating_sub(n)].to_vec(), r)
            } else {
                i += rest.chars().next().unwrap().len_utf8();
                continue;
            };
            i += rest.len() - after.len();
            for name in first_names(after) {
                let mut target = base.clone();
                target.push(name);
                if target.len() >= 2
                    && target[0] == top
                    && target[1] != here[1]
                    && !target[1].is_empty()
                {
                    edges.insert(target[1].clone());
                }
            }
        }
    }
    graph
}

/// A cycle of `graph` as `a -> b -> .. -> a`, if it has one.
fn find_cycle(graph: &BTreeMap<String, std::collections::BTreeSet<String>>) -> Option<String> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, std::collections::BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<String> {
        if let Some(at) = stack.iter().position(|s| s == n) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle.join(" -> "));
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_c_facade_modules_import_each_other_without_a_cycle() {
    let graph = module_graph("capi");
    // The graph is read at all: the facade's modules name the panic guard and the C types.
    assert!(
        graph.get("handle").is_some_and(|e| e.contains("boundary")),
        "{graph:?}"
    );
    if let Some(cycle) = find_cycle(&graph) {
        panic!("the modules of src/capi import each other in a cycle: {cycle}");
    }
}

/// `text` without `//` comments.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `text` (a Rust file) holds the `unsafe` keyword outside comments.
fn holds_unsafe(text: &str) -> bool {
    without_comments(text)
        .split(|c: char| !is_ident(c))
        .any(|w| w == "unsafe")
}

fn forbids_unsafe(file: &Path) -> bool {
    std::fs::read_to_string(file)
        .is_ok_and(|t| t.lines().any(|l| l.trim() == "#![forbid(unsafe_code)]"))
}

#[test]
fn every_module_without_unsafe_forbids_it() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for (krate, top) in [("core/src", "lib.rs"), ("cli/src", "main.rs")] {
        let base = root().join(krate);
        let mut files = Vec::new();
        rust_files(&base, &mut files);
        let unsafe_files: Vec<&PathBuf> = files
            .iter()
            .filter(|f| holds_unsafe(&std::fs::read_to_string(f).unwrap()))
            .collect();
        for f in &files {
            let name = f.file_name().unwrap().to_string_lossy();
            // The directory of the modules this file declares.
            let below = if name == "mod.rs" || name == top {
                f.parent().unwrap().to_path_buf()
            } else {
                f.with_extension("")
            };
            if unsafe_files
                .iter()
                .any(|u| *u == f || u.starts_with(&below))
            {
                continue;
            }
            checked += 1;
            // This file or a module above it: `<dir>/mod.rs` or `<dir>.rs` of each directory up
            // to the crate root.
            let mut above = vec![f.clone(), base.join(top)];
            let mut d = f.parent().unwrap();
            while d.starts_with(&base) && d != base {
                above.push(d.join("mod.rs"));
                above.push(d.with_extension("rs"));
                d = d.parent().unwrap();
            }
            if !above.iter().any(|a| forbids_unsafe(a)) {
                bad.push(f.strip_prefix(root()).unwrap().display().to_string());
            }
        }
    }
    // The walk sees the tree: most of the core's modules hold no unsafe.
    assert!(checked > 50, "only {checked} files checked");
    assert!(
        bad.is_empty(),
        "modules without unsafe that do not #![forbid(unsafe_code)]: {bad:?}"
    );
}
