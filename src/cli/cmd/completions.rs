//! `toolctl completions`: print a shell completion script.

use crate::cli::Cli;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Print the completion script for a shell
///
/// For example: toolctl completions bash > ~/.local/share/bash-completion/completions/toolctl
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    pub shell: Shell,
}

/// The completion script for `shell`, as committed under `completions/`.
pub fn script(shell: Shell) -> String {
    let mut command = Cli::command();
    let mut bytes = Vec::new();
    clap_complete::generate(shell, &mut command, "toolctl", &mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

pub fn run(args: &CompletionsArgs) -> Result<Output, CliError> {
    let text = script(args.shell);
    Ok(Output::new(
        serde_json::json!({ "shell": args.shell.to_string(), "script": text }),
        Human::Text(text),
    ))
}
