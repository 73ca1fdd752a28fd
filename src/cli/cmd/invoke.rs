//! `toolctl invoke`: call one tool with arguments checked against its schema.

use crate::catalog::Pick;
use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{self, Human, Output};
use crate::cli::view::clip;
use crate::error_code::ErrorCode;
use crate::invoke::{self, Failure, Options, batch};
use clap::Args;
use serde_json::Value;
use std::path::PathBuf;

/// Call a tool; print {"ok":true,"value":…} (with --json) or the value
///
/// The arguments are checked against the tool's argSchema before it runs and its value against
/// its outputSchema after. Exit 0 with a value; 3 invalid arguments; 4 unknown tool; 6 disabled
/// or refused by policy; 7 the tool ran and failed (the error's code says how).
///
/// `--batch FILE|-` runs several calls at once ({"calls":[{call_id,name,arguments}],"wait_ms"},
/// or a tool_calls array as OpenAI or Ollama send it) and prints every result and a
/// `role: tool` message per call; per-call errors are in the results (exit 0).
#[derive(Debug, Args)]
pub struct InvokeArgs {
    /// The tool: bundle/slug[@version], slug, or toolID
    #[arg(value_name = "TOOL", required_unless_present = "batch")]
    pub tool: Option<String>,
    /// Run a batch of calls read from FILE (`-`: standard input)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tool", "args", "args_file", "stdin"])]
    pub batch: Option<String>,
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
    let (Some(tool), None) = (&args.tool, &args.batch) else {
        return run_batch(ctx, args, args.batch.as_deref().unwrap_or("-"));
    };
    let raw = read_arguments(args)?;
    let catalog = ctx.catalog()?;
    let (entry, problems) = catalog.resolve_tool(tool, Pick::Default).map_err(|e| {
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
            .then_some(&confirm as &(dyn Fn(&str) -> bool + Sync)),
        approved: args.approve,
        hosts: catalog.config().hosts.clone(),
        deadline: None,
    };
    let outcome = invoke::invoke(&entry, raw, &options);
    if outcome.is_ok() || outcome.as_ref().is_err_and(|f| f.ran) {
        invoke::usage::record(&catalog, &entry.tool.tool_id.to_string());
    }
    let success = outcome.map_err(into_error)?;
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
            let text = crate::catalog::capped::read_stdin()?;
            (text, "standard input".to_owned())
        }
        (None, Some(text), _) => (text.clone(), "--args".to_owned()),
        (None, None, Some(path)) => {
            let text = crate::catalog::capped::read_input(path)?;
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
impl From<Failure> for CliError {
    fn from(failure: Failure) -> Self {
        into_error(failure)
    }
}

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

/// `--batch`: every call on its own thread, answers bound to their `call_id`, a `TIMEOUT` for
/// each call still running at `wait_ms` (see [`invoke::batch`]).
fn run_batch(ctx: &Ctx, args: &InvokeArgs, source: &str) -> Result<Output, CliError> {
    use std::sync::{Arc, mpsc};
    use std::time::{Duration, Instant};
    let (text, name) = super::read_text(source)?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        CliError::invalid(format!("{name}: not valid JSON: {e}")).with_details(
            serde_json::json!({ "file": name, "line": e.line(), "column": e.column() }),
        )
    })?;
    let request = batch::parse(&doc).map_err(into_error)?;
    let catalog = Arc::new(ctx.catalog()?);
    let deadline = Instant::now() + Duration::from_millis(request.wait_ms);
    let workspace = args.workspace.clone().unwrap_or_else(|| ctx.cwd.clone());
    let (tell, answers) = mpsc::channel();
    for (i, call) in request.calls.iter().enumerate() {
        let (tell, catalog, call) = (tell.clone(), Arc::clone(&catalog), call.clone());
        let options = Options {
            workspace: workspace.clone(),
            confirm: None,
            approved: args.approve,
            hosts: catalog.config().hosts.clone(),
            deadline: Some(deadline),
        };
        // Not scoped: a call still running at the deadline is left behind (its tool stops at
        // the deadline, and the process ends after printing).
        std::thread::spawn(move || {
            let _ = tell.send((i, call_one(&catalog, &call, &options)));
        });
    }
    drop(tell);
    let total = request.calls.len();
    let mut outcomes: Vec<Option<Result<Value, Failure>>> = vec![None; total];
    let mut progress = ctx.ui.progress(total as u64, "calls");
    let mut done = 0;
    while done < total {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((i, outcome)) = answers.recv_timeout(left) else {
            break;
        };
        outcomes[i] = Some(outcome);
        done += 1;
        progress.update(done, total);
    }
    drop(progress);
    // Calls still running were told the deadline and stop at it (an HTTP attempt's timeout,
    // exec's kill); wait a moment for them so that nothing they started outlives the command.
    // Their answers are late all the same: they stay TIMEOUT.
    let grace = Instant::now() + STRAGGLER_GRACE;
    let mut late = done;
    while late < total {
        let left = grace.saturating_duration_since(Instant::now());
        if answers.recv_timeout(left).is_err() {
            break;
        }
        late += 1;
    }
    let mut results = Vec::with_capacity(total);
    let mut messages = Vec::with_capacity(total);
    let mut table = output::table(["CALL", "TOOL", "RESULT"]);
    for (call, outcome) in request.calls.iter().zip(outcomes) {
        let outcome = outcome.unwrap_or_else(|| Err(batch::timed_out(request.wait_ms)));
        let summary = match &outcome {
            Ok(_) => "ok".to_owned(),
            Err(failure) => format!("{}: {}", failure.code.as_str(), failure.message()),
        };
        table.add_row([call.call_id.clone(), call.name.clone(), clip(&summary, 80)]);
        results.push(batch::result(call, &outcome));
        messages.push(batch::tool_message(call, &outcome));
    }
    let json = serde_json::json!({
        "ok": true,
        "results": results,
        "tool_messages": messages,
        "mode": "sync",
    });
    Ok(Output::new(json, Human::Text(table.trim_fmt())))
}

/// How long a batch waits, after `wait_ms`, for calls that are being stopped.
const STRAGGLER_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// One call of a batch: resolve its name, invoke, count the call.
fn call_one(
    catalog: &crate::catalog::Catalog,
    call: &batch::Call,
    options: &Options,
) -> Result<Value, Failure> {
    let (entry, _) = catalog
        .resolve_tool(&call.name, Pick::Default)
        .map_err(|e| match e {
            crate::catalog::Error::Ambiguous { ref candidates, .. } => {
                Failure::new(ErrorCode::ValidationError, e.to_string())
                    .with_details(serde_json::json!({ "candidates": candidates }))
            }
            _ => Failure::new(
                ErrorCode::UnknownTool,
                format!("Tool '{}' not found in the catalog", call.name),
            ),
        })?;
    let outcome = invoke::invoke(&entry, call.arguments.clone(), options);
    if outcome.is_ok() || outcome.as_ref().is_err_and(|f| f.ran) {
        invoke::usage::record(catalog, &entry.tool.tool_id.to_string());
    }
    outcome.map(|success| success.value)
}
