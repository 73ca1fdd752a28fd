//! `toolctl invoke`: call one tool with arguments checked against its schema.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::clip;
use crate::cli::output::{self, Human, Output};
use clap::Args;
use serde_json::Value;
use std::path::PathBuf;
use toolctl_lib::base::error_code::ErrorCode;
use toolctl_lib::catalog::{Catalog, VersionChoice};
use toolctl_lib::invoke::{self, Failure, Options, Remedy, batch};
use toolctl_lib::provider::Provider;

/// What `--help` shows after the options: command lines that work (a test runs them on a copy
/// of fixtures/catalog).
const EXAMPLES: &str = "\
Examples:
  # A tool without arguments
  toolctl invoke builtin/now
  # Arguments as JSON
  toolctl invoke builtin/readfile --args '{\"path\": \"docs/examples/batch/note.txt\"}'
  # Arguments on standard input
  echo '{\"path\": \"docs/examples/batch/note.txt\"}' | toolctl invoke builtin/readfile -
  # The tool calls of a model's message, answered in its provider's shape
  toolctl invoke --batch docs/examples/batch/anthropic.json
  # Calls on standard input (a file of them: --batch FILE), answered as OpenAI tool messages
  echo '{\"calls\": [{\"call_id\": \"c1\", \"name\": \"now\", \"arguments\": {}}]}' |
    toolctl invoke --batch - --provider openai";

/// Call a tool; print {"ok":true,"value":…} (with --json) or the value
///
/// The arguments are checked against the tool's argSchema before it runs and its value against
/// its outputSchema after. Exit 0 with a value; 3 invalid arguments; 4 unknown tool; 6 disabled
/// or refused by policy; 7 the tool ran and failed (the error's code says how).
///
/// `--batch FILE|-` runs several calls at once ({"calls":[{call_id,name,arguments}],"wait_ms"},
/// or the calls as a model sends them: OpenAI or Ollama tool_calls, OpenAI Responses
/// function_call items, Anthropic tool_use blocks, Gemini functionCall parts, or the whole
/// assistant message) and prints every result and `tool_messages` answering the calls in their
/// provider's shape (or --provider's); per-call errors are in the results (exit 0).
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct InvokeArgs {
    /// The tool: bundle/slug[@version], slug, or toolID
    #[arg(value_name = "TOOL", add = crate::cli::complete::tools(), required_unless_present = "batch")]
    pub tool: Option<String>,
    /// Run a batch of calls read from FILE (`-`: standard input)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tool", "args", "args_file", "stdin"])]
    pub batch: Option<String>,
    /// With --batch: answer in this provider's shape (default: the shape of the calls)
    #[arg(long, value_name = "PROVIDER", requires = "batch", conflicts_with = "tool", value_parser = crate::cli::values::provider())]
    pub provider: Option<toolctl_lib::provider::Provider>,
    /// `-`: read the arguments from standard input
    #[arg(value_name = "-", conflicts_with_all = ["args", "args_file"])]
    pub stdin: Option<String>,
    /// The arguments: a JSON object, or a JSON string holding one (as OpenAI sends them)
    #[arg(long, value_name = "JSON", conflicts_with = "args_file")]
    pub args: Option<String>,
    /// Read the arguments from a file (`-`: standard input)
    #[arg(long, value_name = "FILE")]
    pub args_file: Option<PathBuf>,
    /// The folder file tools work in (default: the current folder); they cannot leave it
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Approve in advance a run that needs a person's approval (noSchemaMode human-approval)
    #[arg(long)]
    pub approve: bool,
    /// Print each event of a streamed (SSE) response as it comes (one JSON line each with --json)
    #[arg(long, conflicts_with = "batch")]
    pub stream: bool,
    /// With --batch: queue the calls as jobs and print their ids at once (as mode "async" in the
    /// document); a background worker runs them and exits when none are left
    #[arg(long = "async", requires = "batch", conflicts_with = "tool")]
    pub run_async: bool,
}

pub fn run(ctx: &Ctx, args: &InvokeArgs) -> Result<Output, CliError> {
    let (Some(tool), None) = (&args.tool, &args.batch) else {
        return run_batch(ctx, args, args.batch.as_deref().unwrap_or("-"));
    };
    let raw = read_arguments(args)?;
    let catalog = ctx.catalog()?;
    let (entry, problems) = catalog
        .resolve_tool(tool, VersionChoice::Default)
        .map_err(|e| {
            let mut error = crate::cli::shared::tool_lookup_error(&catalog, tool, e);
            if error.code == ErrorCode::NotFound {
                error.code = ErrorCode::UnknownTool;
            }
            error
        })?;
    ctx.warn_problems(&problems);
    let confirm = |question: &str| ctx.ui.confirm(question);
    let json = ctx.global.json;
    let print_event = move |event: &Value| print_event(event, json);
    let options = Options {
        confirm: ctx
            .ui
            .can_confirm()
            .then_some(&confirm as &(dyn Fn(&str) -> bool + Sync)),
        approved: args.approve,
        on_event: args
            .stream
            .then_some(&print_event as &(dyn Fn(&Value) + Sync)),
        ..Options::new(
            &catalog,
            args.workspace.clone().unwrap_or_else(|| ctx.cwd.clone()),
        )
    };
    let success = invoke::call_and_record(&catalog, &entry, raw, &options).map_err(into_error)?;
    let human = serde_json::to_string_pretty(&success.value).unwrap_or_default();
    // `--json --stream`: JSON Lines, one event a line, the result last.
    Ok(Output::new(success.envelope(), Human::Text(human)).on_one_line(args.stream))
}

/// One event of a streamed response, as it comes: its data (a JSON line with `--json`).
fn print_event(event: &Value, json: bool) {
    use std::io::Write;
    let line = if json {
        event.to_string()
    } else {
        // A server's text, shown as all human output is: its control characters visible.
        crate::cli::output::visible(event["data"].as_str().unwrap_or_default()).into_owned()
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe ends the stream's printing, not the call.
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// The arguments as given: `--args`, `--args-file`, `-` (stdin), or none (`{}`).
fn read_arguments(args: &InvokeArgs) -> Result<Value, CliError> {
    let (text, source) = match (&args.stdin, &args.args, &args.args_file) {
        (Some(dash), ..) if dash != "-" => {
            let mut error = CliError::invalid(format!(
                "unexpected argument '{dash}': arguments go in --args, --args-file or '-' (stdin)"
            ));
            error = error.usage();
            return Err(error);
        }
        (Some(_), ..) => {
            let text = toolctl_lib::catalog::read_stdin()?;
            (text, "standard input".to_owned())
        }
        (None, Some(text), _) => (text.clone(), "--args".to_owned()),
        (None, None, Some(path)) if path.as_os_str() == "-" => {
            let text = toolctl_lib::catalog::read_stdin()?;
            (text, "standard input".to_owned())
        }
        (None, None, Some(path)) => {
            let text = toolctl_lib::catalog::read_input(path)?;
            (text, path.display().to_string())
        }
        (None, None, None) => return Ok(Value::Object(Default::default())),
    };
    serde_json::from_str(&text).map_err(|e| {
        let e = toolctl_lib::base::syntax::SyntaxError::of(&e);
        CliError::invalid(format!("{source}: not valid JSON: {e}"))
            .with_details(
                serde_json::json!({ "source": source, "line": e.line, "column": e.column }),
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
    if let Some(remedy) = text.remedy {
        error = error.with_hint(remedy_hint(&remedy));
    }
    if ran {
        error = error.tool_failed();
    }
    error
}

/// A refused call's way out, as a command or a flag of this command line.
fn remedy_hint(remedy: &Remedy) -> String {
    match remedy {
        Remedy::RestoreBundle(slug) => format!("restore it with `toolctl bundle restore {slug}`"),
        Remedy::EnableBundle(slug) => format!("enable it with `toolctl bundle enable {slug}`"),
        Remedy::EnableTool(reference) => {
            format!("enable it with `toolctl tool enable {reference}`")
        }
        Remedy::ShowTool => "see `toolctl tool get` for the tool's status".to_owned(),
        Remedy::ArgumentsAsObject => {
            r#"pass them as an object, e.g. --args '{"city":"Oslo"}'"#.to_owned()
        }
        Remedy::Approve => "run it on a terminal to be asked, or pass --approve".to_owned(),
        Remedy::OtherWorkspace => "choose another with --workspace DIR".to_owned(),
    }
}

/// The answer's shape `--provider` asks for; MCP clients call tools through `mcp serve`.
fn shape_of(provider: Provider) -> Result<batch::Shape, CliError> {
    use batch::Shape;
    Ok(match provider {
        Provider::Openai => Shape::Openai,
        Provider::OpenaiResponses => Shape::OpenaiResponses,
        Provider::Anthropic => Shape::Anthropic,
        Provider::Gemini => Shape::Gemini,
        Provider::Ollama => Shape::Ollama,
        Provider::Mcp => {
            return Err(CliError::invalid(
                "--provider mcp: MCP clients call tools through `toolctl mcp serve`, not in batches; choose openai, openai-responses, anthropic, gemini or ollama",
            )
            .with_details(serde_json::json!({ "flag": "--provider" })));
        }
    })
}

/// `--batch`: the calls run by [`batch::run`], answered as one document bound to `call_id`s.
fn run_batch(ctx: &Ctx, args: &InvokeArgs, source: &str) -> Result<Output, CliError> {
    let (text, name) = crate::cli::shared::read_text(source)?;
    batch::check_size(text.len()).map_err(into_error)?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        let e = toolctl_lib::base::syntax::SyntaxError::of(&e);
        CliError::invalid(format!("{name}: not valid JSON: {e}"))
            .with_details(serde_json::json!({ "file": name, "line": e.line, "column": e.column }))
    })?;
    let mut request =
        batch::parse(&doc, args.provider.map(shape_of).transpose()?).map_err(into_error)?;
    if args.run_async {
        request.mode = batch::Mode::Async;
    }
    if request.mode == batch::Mode::Async {
        return run_async(ctx, args, &request);
    }
    let catalog = std::sync::Arc::new(ctx.catalog()?);
    let workspace = args.workspace.clone().unwrap_or_else(|| ctx.cwd.clone());
    let resolve = std::sync::Arc::new(|catalog: &Catalog, name: &str| {
        catalog
            .resolve_tool(name, VersionChoice::Default)
            .map(|(entry, _)| entry)
            .map_err(|e| batch::not_resolved(name, e))
    });
    let total = request.calls.len();
    let mut progress = ctx.ui.progress(total as u64, "calls");
    let outcomes = batch::run(
        &request,
        catalog,
        resolve,
        workspace,
        args.approve,
        &mut |done, total| progress.update(done, total),
    );
    drop(progress);
    let mut results = Vec::with_capacity(total);
    let messages = batch::tool_messages(&request, &outcomes);
    let mut table = output::table(["CALL", "TOOL", "RESULT"]);
    for (call, outcome) in request.calls.iter().zip(&outcomes) {
        let summary = match outcome {
            Ok(_) => "ok".to_owned(),
            Err(failure) => format!("{}: {}", failure.code.as_str(), failure.message()),
        };
        table.add_row([call.call_id.clone(), call.name.clone(), clip(&summary, 80)]);
        results.push(batch::result(call, outcome));
    }
    let json = serde_json::json!({
        "ok": true,
        "results": results,
        "tool_messages": messages,
        "mode": "sync",
    });
    Ok(Output::new(json, Human::Text(table.trim_fmt())))
}

/// An async batch: each call that can run queued as a job in `.toolctl/jobs.db`, and a
/// background worker started to run them (`toolctl job work`, which exits when the queue is
/// empty, or at once when another worker runs; its messages go to `.toolctl/jobs-worker.log`).
fn run_async(ctx: &Ctx, args: &InvokeArgs, request: &batch::Request) -> Result<Output, CliError> {
    use toolctl_lib::jobs::{Store, enqueue};
    let catalog = ctx.catalog()?;
    let workspace = args.workspace.clone().unwrap_or_else(|| ctx.cwd.clone());
    // The worker runs elsewhere: the folder as an absolute path.
    let workspace = std::fs::canonicalize(&workspace).unwrap_or(workspace);
    let state = toolctl_lib::catalog::state::dir(catalog.root());
    let internal = |e: &dyn std::fmt::Display| CliError::new(ErrorCode::Internal, e.to_string());
    let store = Store::open(&state).map_err(|e| internal(&e))?;
    let slots = enqueue::enqueue(&store, &catalog, request, Some(workspace.clone()))
        .map_err(|e| internal(&e))?;
    let mut json = enqueue::async_answer(request, &slots);
    let mut table = output::table(["CALL", "TOOL", "JOB"]);
    for (call, slot) in request.calls.iter().zip(&slots) {
        let job = match slot {
            enqueue::Slot::Queued(job) => job.id.clone(),
            enqueue::Slot::Refused(error) => clip(
                &format!(
                    "{}: {}",
                    error["code"].as_str().unwrap_or_default(),
                    error["message"].as_str().unwrap_or_default()
                ),
                80,
            ),
        };
        table.add_row([call.call_id.clone(), call.name.clone(), job]);
    }
    let queued = slots
        .iter()
        .filter(|slot| matches!(slot, enqueue::Slot::Queued(_)))
        .count();
    let mut output_note = None;
    if queued > 0 {
        // A server or worker that holds the lock sees these jobs before it lets it go.
        if toolctl_lib::jobs::worker::held(&state).map_err(|e| internal(&e))? {
            json["worker"] = serde_json::json!({ "started": false, "pid": null });
            output_note = Some(format!(
                "queued {queued} job(s); the server or worker running on this catalog runs them: `toolctl job wait ID…` waits for them"
            ));
        } else {
            let pid = start_worker(catalog.root(), &workspace, &state)?;
            json["worker"] = serde_json::json!({ "started": true, "pid": pid });
            output_note = Some(format!(
                "queued {queued} job(s); a background worker (pid {pid}) runs them and exits when none are left: `toolctl job wait ID…` waits for them"
            ));
        }
    }
    Ok(Output::new(json, Human::Text(table.trim_fmt())).with_note(output_note))
}

/// Start `toolctl job work` in the background, detached from this terminal (its own process
/// group: a Ctrl-C here does not stop it); its pid.
fn start_worker(
    root: &std::path::Path,
    workspace: &std::path::Path,
    state: &std::path::Path,
) -> Result<u32, CliError> {
    let failed = |e: std::io::Error| {
        CliError::new(
            ErrorCode::Internal,
            format!("cannot start the background worker: {e}"),
        )
    };
    let program = std::env::current_exe().map_err(failed)?;
    let log = std::fs::File::options()
        .create(true)
        .append(true)
        .open(state.join("jobs-worker.log"))
        .map_err(failed)?;
    let mut command = std::process::Command::new(program);
    command
        .arg("--catalog")
        .arg(root)
        .args(["job", "work", "--workspace"])
        .arg(workspace)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command.spawn().map_err(failed)?;
    Ok(child.id())
}
