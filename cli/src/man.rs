//! The man pages, made from the same clap definitions as `--help` (so they cannot drift from
//! it): `b2frame.1` for the tool and `b2frame-COMMAND.1` for each command, in the git style.
//! `b2frame generate-man DIR` writes them; the install runs it (CMakeLists.txt) and puts the
//! pages into `share/man/man1`.

use crate::{CliResult, Failure};
use clap::CommandFactory;
use std::path::Path;

/// Writes every page into `dir`, creating it if needed.
pub fn generate(dir: &Path) -> CliResult<()> {
    std::fs::create_dir_all(dir).map_err(|e| Failure::new(dir, e))?;
    let tool = crate::Cli::command();
    // The page lists one b2frame-COMMAND(1) per command; `help` has no page of its own.
    write(dir, "b2frame", tool.clone().disable_help_subcommand(true))?;
    for sub in tool.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("b2frame-{}", sub.get_name());
        // The page's title is its file name; the synopsis shows the command as typed.
        let page = sub
            .clone()
            .display_name(&name)
            .bin_name(format!("b2frame {}", sub.get_name()))
            .version(env!("CARGO_PKG_VERSION"));
        write(dir, &name, page)?;
    }
    Ok(())
}

fn write(dir: &Path, name: &str, cmd: clap::Command) -> CliResult<()> {
    let mut page = Vec::new();
    let path = dir.join(format!("{name}.1"));
    clap_mangen::Man::new(cmd)
        .render(&mut page)
        .and_then(|_| std::fs::write(&path, page))
        .map_err(|e| Failure::new(&path, e))
}
