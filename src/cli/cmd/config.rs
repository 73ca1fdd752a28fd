//! `toolctl config`: read or change one key of the catalog's `toolctl.json`.

use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use crate::cli::{Ctx, config_fix_hints};
use clap::{Args, Subcommand};
use serde_json::Value;
use toolctl_lib::catalog::config::{self, CONFIG_FILE};
use toolctl_lib::catalog::{Error, Violation};
use toolctl_lib::ops::config::{ConfigChange, ConfigKey, Edit};

/// What `--help` shows after the options: command lines that work (a test runs them on a copy
/// of fixtures/catalog).
const EXAMPLES: &str = "\
Examples:
  # Let HTTP tools call a host
  toolctl config add allowedHosts api.example.com
  toolctl config get allowedHosts
  toolctl config remove allowedHosts api.example.com
  # Reap soft-deleted bundles after a week
  toolctl config set reap.gracePeriod 7d
  # Allow the built-in exec tool
  toolctl config set builtin.tools.exec.isEnabled true";

/// Read or change toolctl.json one key at a time (checked against its schema, written atomically)
///
/// KEY is a dotted path (allowedHosts, reap.gracePeriod, builtin.tools.exec.isEnabled,
/// pick.llm.timeoutMs) or a JSON pointer (/reap/gracePeriod); `toolctl schema config` lists
/// them all. A string key takes VALUE as it is; any other key takes JSON (true, 20, ["a","b"]).
#[derive(Debug, Subcommand)]
#[command(after_long_help = EXAMPLES)]
pub enum ConfigCommand {
    /// Print a key's value (strings as they are, anything else as JSON), or the whole file
    Get(GetArgs),
    /// Set a key to VALUE
    Set(SetArgs),
    /// Add VALUE to a list key (nothing changes when it is there already)
    Add(ListArgs),
    /// Remove VALUE from a list key, or without VALUE the key itself
    Remove(RemoveArgs),
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// The key; without one, the whole toolctl.json
    key: Option<String>,
}

#[derive(Debug, Args)]
pub struct SetArgs {
    key: String,
    #[arg(allow_hyphen_values = true)]
    value: String,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    key: String,
    #[arg(allow_hyphen_values = true)]
    value: String,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    key: String,
    value: Option<String>,
}

pub fn run(ctx: &Ctx, command: &ConfigCommand) -> Result<Output, CliError> {
    let (key, edit) = match command {
        ConfigCommand::Get(args) => return get(ctx, args),
        ConfigCommand::Set(args) => (&args.key, Edit::Set(args.value.clone())),
        ConfigCommand::Add(args) => (&args.key, Edit::Add(args.value.clone())),
        ConfigCommand::Remove(args) => (&args.key, Edit::Remove(args.value.clone())),
    };
    let key = parse_key(key)?;
    let change = ctx.write_on(ctx.catalog_as_is()?, |catalog| {
        catalog.edit_config(&key, &edit)
    })?;
    let status = describe(&change, &edit);
    if !change.problems.is_empty() {
        // Fixed one problem of several, or changed a key beside them: say what is left.
        let doc = ctx.catalog_as_is()?.config().doc.clone();
        warn_problems(ctx, &doc, &change.problems, "still has");
    }
    Ok(Output::new(
        serde_json::to_value(&change).unwrap_or_default(),
        Human::Status(status),
    ))
}

fn parse_key(key: &str) -> Result<ConfigKey, CliError> {
    ConfigKey::parse(key).map_err(|e| {
        let unknown = matches!(e, Error::NotFound { .. });
        let error = CliError::from(e);
        if unknown {
            error.with_hint("see every key with `toolctl schema config`")
        } else {
            error
        }
    })
}

/// Say on stderr that toolctl.json has `problems`, each with what would fix it.
fn warn_problems(ctx: &Ctx, doc: &Value, problems: &[Violation], has: &str) {
    let count = match problems.len() {
        1 => "a problem".to_owned(),
        n => format!("{n} problems"),
    };
    // Some problems only the schema sees (editors, `validate`); others make toolctl refuse.
    let refused = if ctx
        .location()
        .is_ok_and(|l| toolctl_lib::catalog::Config::load(l.path()).is_err())
    {
        "; other commands refuse the catalog until it is fixed"
    } else {
        ""
    };
    let mut lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
    lines.extend(config_fix_hints(doc, problems));
    ctx.ui
        .warn_list(&format!("{CONFIG_FILE} {has} {count}{refused}:"), &lines);
}

fn get(ctx: &Ctx, args: &GetArgs) -> Result<Output, CliError> {
    let catalog = ctx.catalog_as_is()?;
    let doc = &catalog.config().doc;
    let problems = config::problems(doc, &catalog.root().join(CONFIG_FILE));
    if !problems.is_empty() {
        warn_problems(ctx, doc, &problems, "has");
    }
    let value = match &args.key {
        None => doc.clone(),
        Some(key) => {
            let key = parse_key(key)?;
            key.get(doc).cloned().ok_or_else(|| {
                CliError::from(Error::NotFound {
                    what: "config value",
                    name: key.name.clone(),
                    hint: Some(format!(
                        "{} is not set in toolctl.json, so toolctl uses its default; set it with `toolctl config set {} VALUE`",
                        key.name, key.name
                    ).into()),
                })
            })?
        }
    };
    let text = match &value {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    Ok(Output::new(value, Human::Text(text)))
}

fn describe(change: &ConfigChange, edit: &Edit) -> String {
    let key = &change.key;
    if !change.changed {
        return match edit {
            Edit::Add(value) => format!("{key} already holds {value}: unchanged"),
            Edit::Remove(Some(value)) => format!("{key} does not hold {value}: unchanged"),
            Edit::Remove(None) => format!("{key} is not set: unchanged"),
            Edit::Set(_) => format!("{key} is {} already: unchanged", change.value),
        };
    }
    match edit {
        Edit::Add(value) => format!("Added {value} to {key}"),
        Edit::Remove(Some(value)) => format!("Removed {value} from {key}"),
        Edit::Remove(None) => format!("Removed {key}"),
        Edit::Set(_) => format!("Set {key} to {}", change.value),
    }
}
