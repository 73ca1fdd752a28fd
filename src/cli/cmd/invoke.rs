//! `toolctl invoke`: call one tool with arguments checked against its schema.

use crate::catalog::Pick;
use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use crate::error_code::ErrorCode;
use crate::invoke::{self, Failure, Options};
use clap::Args;
use serde_json::Value;
use std::path::PathBuf;

/// Call a tool; print {"ok":true,"value":…} (with --json) or the value
///
/// The arguments are checked against the tool's argSchema before it runs and its value against
/// its outputSchema after. Exit 0 with a value; 3 invalid arguments; 4 unknown tool; 6 disabled
/// or refused by policy; 7 the tool ran and failed (the error's code says how).
#[derive(Debug, Args)]
pub struct InvokeArgs {
    /// The tool: bundle/slug[@version], slug, or toolID
    #[arg(value_name = "TOOL")]
    pub tool: String,
    /// `-`: read the arguments from standard input
    #[arg(value_name = "-", conflicts_with_all = ["args", "args_file"])]
    pub stdin: Option<String>,
    /// The arguments: a JSON object, or a JSON string holding one (as OpenAI sends them)
    #[arg(long, value_name = "JSON", conflicts_with = "args_file")]
    pub args: Option<String>,
    /// Read the arguments from a file
    #[arg(long, value_name = "FILE")]
    pub args_file: Option<PathBuf>,
    /// The folder file tools work in (default: the current folder); they cannot leave it
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Approve in advance a run that needs a person's approval (noSchemaMode human-approval)
    #[arg(long)]
    pub approve: bool,
}

pub fn run(ctx: &Ctx, args: &InvokeArgs) -> Result<Output, CliError> {
    let raw = read_arguments(args)?;
    let catalog = ctx.catalog()?;
    let (entry, problems) = catalog
        .resolve_tool(&args.tool, Pick::Default)
        .map_err(|e| {
            let mut error = CliError::from(e);
            if error.code == ErrorCode::NotFound {
                error.code = ErrorCode::UnknownTool;
            }
            error
        })?;
    ctx.warn_problems(&problems);
    let confirm = |question: &str| ctx.ui.confirm(question);
    let options = Options {
        workspace: args.workspace.clone().unwrap_or_else(|| ctx.cwd.clone()),
        confirm: ctx
            .ui
            .can_confirm()
            .then_some(&confirm as &dyn Fn(&str) -> bool),
        approved: args.approve,
        hosts: catalog.config().hosts.clone(),
    };
    let success = invoke::invoke(&entry, raw, &options).map_err(into_error)?;
    let human = serde_json::to_string_pretty(&success.value).unwrap_or_default();
    Ok(Output::new(success.envelope(), Human::Text(human)))
}

/// The arguments as given: `--args`, `--args-file`, `-` (stdin), or none (`{}`).
fn read_arguments(args: &InvokeArgs) -> Result<Value, CliError> {
    let (text, source) = match (&args.stdin, &args.args, &args.args_file) {
        (Some(dash), ..) if dash != "-" => {
            let mut error = CliError::invalid(format!(
                "unexpected argument '{dash}': arguments go in --args, --args-file or '-' (stdin)"
            ));
            error.usage = true;
            return Err(error);
        }
        (Some(_), ..) => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|e| CliError::invalid(format!("cannot read standard input: {e}")))?;
            (text, "standard input".to_owned())
        }
        (None, Some(text), _) => (text.clone(), "--args".to_owned()),
        (None, None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::invalid(format!("--args-file {}: {e}", path.display())))?;
            (text, path.display().to_string())
        }
        (None, None, None) => return Ok(Value::Object(Default::default())),
    };
    serde_json::from_str(&text).map_err(|e| {
        CliError::invalid(format!("{source}: not valid JSON: {e}"))
            .with_details(
                serde_json::json!({ "source": source, "line": e.line(), "column": e.column() }),
            )
            .with_hint(r#"arguments are a JSON object, e.g. --args '{"path":"README.md"}'"#)
    })
}

/// A failed call as the CLI reports it: the call's code, and exit 7 when the tool ran.
fn into_error(failure: Failure) -> CliError {
    let (code, ran) = (failure.code, failure.ran);
    let text = failure.into_text();
    let mut error = CliError::new(code, text.message).with_details(text.details);
    if let Some(hint) = text.hint {
        error = error.with_hint(hint);
    }
    if ran {
        error = error.tool_failed();
    }
    error
}
