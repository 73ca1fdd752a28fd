//! `toolctl man`: man pages made from the command line's own definition (clap_mangen), so they
//! never drift from `--help`.
//!
//! A command rather than files kept in the repository: the pages follow every help text that
//! changes, and a packager makes them at build time with the binary they ship
//! (`toolctl man --out DIR`).

use crate::cli::Cli;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use clap::{Args, CommandFactory};
use serde_json::json;
use std::path::PathBuf;
use toolctl_lib::catalog::store;

/// Print a command's man page, or write one page per command with --out
///
/// Without --out, the page of COMMAND (default: toolctl itself) is printed as roff; read it with
/// `toolctl man search | man -l -`. With --out DIR, every command gets its page in DIR
/// (toolctl.1, toolctl-search.1, toolctl-tool-get.1, …), DIR is created if needed, and the
/// files written are listed; with COMMAND too, only that command's pages.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct ManArgs {
    /// The command whose page to print (e.g. search, or tool get)
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Write the pages into DIR instead
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub out: Option<PathBuf>,
}

const EXAMPLES: &str = "\
Examples:
  # Read a command's page
  toolctl man invoke
  # Install every page for your user (man finds ~/.local/share/man)
  toolctl man --out ~/.local/share/man/man1";

/// One page: the command's full name (`toolctl tool get`) and its roff text.
struct Page {
    name: String,
    file: String,
    roff: Vec<u8>,
}

/// The pages of `command` and of every command under it, parents first.
fn pages(command: &clap::Command, out: &mut Vec<Page>) -> Result<(), CliError> {
    let man = clap_mangen::Man::new(command.clone())
        .source(format!("toolctl {}", env!("CARGO_PKG_VERSION")))
        .manual("toolctl manual");
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    out.push(Page {
        name: command
            .get_bin_name()
            .unwrap_or(command.get_name())
            .to_owned(),
        file: man.get_filename(),
        roff,
    });
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub, out)?;
    }
    Ok(())
}

pub fn run(args: &ManArgs) -> Result<Output, CliError> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let mut command = &root;
    for (i, word) in args.command.iter().enumerate() {
        command = command.find_subcommand(word).ok_or_else(|| {
            let known = args.command[..i].join(" ");
            CliError::invalid(format!(
                "no command '{}' in toolctl{}{known}",
                word,
                if known.is_empty() { "" } else { " " }
            ))
            .with_hint(format!(
                "`toolctl {known}{}--help` lists the commands",
                if known.is_empty() { "" } else { " " }
            ))
            .usage()
        })?;
    }
    let mut all = Vec::new();
    pages(command, &mut all)?;
    let Some(dir) = &args.out else {
        let page = all.swap_remove(0);
        let text = String::from_utf8_lossy(&page.roff).into_owned();
        return Ok(Output::new(
            json!({ "command": page.name, "page": text }),
            Human::Text(text),
        ));
    };
    store::ensure_dir(dir)?;
    let mut items = Vec::new();
    let mut lines = Vec::new();
    for page in &all {
        let path = dir.join(&page.file);
        store::write_atomic(&path, &page.roff)?;
        lines.push(path.display().to_string());
        items.push(json!({ "command": page.name, "file": path }));
    }
    Ok(Output::new(
        json!({ "dir": dir, "items": items }),
        Human::Text(lines.join("\n")),
    ))
}
