//! The tool's documentation, checked against the tool: every command's `--help` shows examples;
//! the book's CLI reference (`docs/cli.md`, between the `cli-reference` markers) is exactly what
//! `--help` prints; `b2frame generate-man` writes a man page per command, with its examples.
//!
//! After changing a help text, `B2FRAME_BLESS=1 cargo test --release -p b2frame-cli --test
//! cli_docs` rewrites the reference in `docs/cli.md`.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

const BEGIN: &str =
    "<!-- cli-reference: generated from `b2frame --help` by cli/tests/cli_docs.rs; do not edit -->";
const END: &str = "<!-- /cli-reference -->";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// What `b2frame ARGS` prints on stdout; it must succeed. The program's file name is `b2frame`
/// everywhere but on Windows, whose `.exe` is dropped so the text is the same. Started through
/// the target's runner in cross builds (qemu-user), as the other CLI tests are.
fn run(args: &[&str]) -> String {
    let out = common::target_command(env!("CARGO_BIN_EXE_b2frame"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "b2frame {args:?}: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .replace("b2frame.exe", "b2frame")
}

/// The commands `b2frame --help` lists (not `help`).
fn commands() -> Vec<String> {
    let top = run(&["--help"]);
    let list = top
        .split("Commands:\n")
        .nth(1)
        .expect("no Commands: in --help");
    let cmds: Vec<String> = list
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .filter(|c| c != "help")
        .collect();
    assert!(cmds.len() >= 7, "commands: {cmds:?}");
    cmds
}

/// The reference as it must stand in docs/cli.md.
fn reference() -> String {
    let mut out = format!("{BEGIN}\n");
    let mut section = |title: &str, help: String| {
        out.push_str(&format!(
            "\n### `{title}`\n\n```text\n{}\n```\n",
            help.trim_end()
        ));
    };
    section("b2frame", run(&["--help"]));
    for c in commands() {
        section(&format!("b2frame {c}"), run(&[&c, "--help"]));
    }
    out.push_str(&format!("\n{END}"));
    out
}

#[test]
fn every_command_shows_examples() {
    for c in commands() {
        let help = run(&[&c, "--help"]);
        let examples = help
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("b2frame {c} --help has no Examples:\n{help}"));
        let prefix = format!("  b2frame {c} ");
        assert!(
            examples.lines().any(|l| l.starts_with(&prefix)),
            "b2frame {c} --help: no example starting with {prefix:?}:\n{help}"
        );
    }
}

#[test]
fn the_book_reference_is_the_help() {
    let path = root().join("docs/cli.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let (Some(b), Some(e)) = (page.find(BEGIN), page.find(END)) else {
        panic!("docs/cli.md has no {BEGIN} ... {END} block");
    };
    let now = &page[b..e + END.len()];
    let want = reference();
    if now == want {
        return;
    }
    if std::env::var_os("B2FRAME_BLESS").is_some() {
        let page = format!("{}{want}{}", &page[..b], &page[e + END.len()..]);
        std::fs::write(&path, page).unwrap();
        return;
    }
    panic!(
        "docs/cli.md's CLI reference differs from `b2frame --help`; rewrite it with\n  \
         B2FRAME_BLESS=1 cargo test --release -p b2frame-cli --test cli_docs\n\
         --- docs/cli.md\n{now}\n--- --help\n{want}"
    );
}

#[test]
fn man_pages_hold_every_command_and_its_examples() {
    let dir = std::env::temp_dir().join(format!("b2frame-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    run(&["generate-man", dir.to_str().unwrap()]);
    let tool = std::fs::read_to_string(dir.join("b2frame.1")).unwrap();
    assert!(
        tool.starts_with(".ie") || tool.contains(".TH b2frame 1"),
        "{tool}"
    );
    for c in commands() {
        let page = std::fs::read_to_string(dir.join(format!("b2frame-{c}.1")))
            .unwrap_or_else(|e| panic!("no man page for {c}: {e}"));
        assert!(
            page.contains(&format!(".TH b2frame-{c} 1")),
            "b2frame-{c}.1:\n{page}"
        );
        assert!(
            page.contains(&format!("b2frame {c} ")),
            "b2frame-{c}.1 has no example:\n{page}"
        );
        assert!(
            tool.contains(&format!("b2frame\\-{c}(1)")),
            "b2frame.1 does not name {c}"
        );
    }
    // Every page b2frame.1 names exists; the hidden generator is not a documented command.
    assert!(
        !tool.contains("b2frame\\-help(1)"),
        "b2frame.1 names a page for help"
    );
    assert!(!dir.join("b2frame-generate-man.1").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
