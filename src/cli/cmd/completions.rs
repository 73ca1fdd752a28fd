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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The scripts under `completions/` are what the binary generates. To refresh them after
    /// changing the command line: `UPDATE_COMPLETIONS=1 cargo test completions`.
    #[test]
    fn committed_completions_match_the_binary() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
        for (shell, file) in [
            (Shell::Bash, "toolctl.bash"),
            (Shell::Zsh, "_toolctl"),
            (Shell::Fish, "toolctl.fish"),
        ] {
            let path = dir.join(file);
            let generated = script(shell);
            if std::env::var_os("UPDATE_COMPLETIONS").is_some() {
                #[allow(clippy::disallowed_methods)]
                std::fs::write(&path, &generated).unwrap();
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == generated,
                "completions/{file} is out of date: run `UPDATE_COMPLETIONS=1 cargo test completions`"
            );
        }
    }
}
