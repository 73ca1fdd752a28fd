//! `toolctl completions`: print the script a shell sources to complete `toolctl`.

use crate::cli::complete;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use clap::Args;
use clap_complete::Shell;

/// Print the completion script for a shell
///
/// The script runs `toolctl` at each TAB, so it completes values (--provider, --scorer, …) and
/// the catalog's tools, bundles and agents (honouring --catalog and $TOOLCTL_CATALOG). It calls
/// the `toolctl` on PATH; `COMPLETE=SHELL toolctl` prints the same script calling this binary by
/// its path.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct CompletionsArgs {
    /// The shell to complete for
    pub shell: Shell,
}

const EXAMPLES: &str = "\
Examples:
  # bash, zsh and fish: load them at each start (they follow upgrades)
  echo 'source <(COMPLETE=bash toolctl)' >> ~/.bashrc
  echo 'source <(COMPLETE=zsh toolctl)' >> ~/.zshrc
  echo 'COMPLETE=fish toolctl | source' >> ~/.config/fish/config.fish
  # A file for a package to install (here bash's)
  toolctl completions bash > toolctl.bash";

/// The completion script for `shell`, as committed under `completions/`.
pub fn script(shell: Shell) -> String {
    complete::registration(shell)
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

    /// The scripts under `completions/` (for packagers) are what the binary prints. They call
    /// `toolctl` at each TAB, so they change only with clap_complete's shell code. To refresh
    /// them: `UPDATE_COMPLETIONS=1 cargo test --lib completions`.
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
