//! One call of a tool, as `toolctl invoke` makes it:
//!
//! 1. the tool must be callable: enabled, in an enabled bundle that is not soft-deleted, and
//!    available (its native function exists, its hosts are allowed) — else `TOOL_DISABLED`;
//! 2. the arguments are parsed: a JSON object, or a JSON string holding one (what OpenAI
//!    sends); anything else is a `VALIDATION_ERROR` that says where the text went wrong;
//!    A `null` given for an optional argument whose schema refuses null is dropped first: it is
//!    how an OpenAI strict-mode model says "not given" ([`crate::schema::strict`]);
//! 3. they are checked against the tool's `argSchema` (every error with its JSON pointer and
//!    keyword). A tool without one is refused ("fail closed") unless it has `allowNoSchema`
//!    with a `noSchemaMode`: `read-only` runs only read-only tools, `human-approval` asks on a
//!    terminal (or takes `--approve`), `full` runs; such runs are marked `validated: false`;
//! 4. the tool runs (native functions: [`native`]; HTTP tools: [`http`]);
//! 5. its value is checked against `outputSchema` (`OUTPUT_INVALID` with pointers).
//!
//! A [`Failure`] says whether the tool ran: a tool that ran and failed ends `invoke` with exit
//! 7 whatever its code; a call refused before running ends with its code's exit (3, 4, 6).

pub mod auth;
pub mod batch;
pub mod http;
pub mod limits;
pub mod mcp;
pub mod native;
pub mod sse;
pub mod usage;

use crate::base::error_code::ErrorCode;
use crate::base::json_kind;
use crate::base::redact::Redactor;
use crate::catalog::config::HttpDefaults;
use crate::catalog::model::{NoSchemaMode, ToolType};
use crate::catalog::rules::HostPolicy;
use crate::catalog::{Catalog, ToolEntry, builtin};
use crate::schema::check::{self as schema, CompileError, Schema};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Why a call did not give a value.
#[derive(Debug, Clone)]
pub struct Failure {
    pub code: ErrorCode,
    /// The tool ran (and failed), as opposed to a call refused before it ran.
    pub ran: bool,
    /// Boxed so `Result<_, Failure>` stays small.
    text: Box<FailureText>,
}

#[derive(Debug, Clone)]
pub struct FailureText {
    pub message: String,
    pub details: Value,
    pub hint: Option<String>,
    /// What the caller can do, when an interface says it in its own words (a command, a flag).
    pub remedy: Option<Remedy>,
}

/// A way out of a refused call that only an interface can word: the CLI says it as a command
/// or a flag (see `cli::cmd::invoke`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Remedy {
    /// Restore the soft-deleted bundle with this slug.
    RestoreBundle(String),
    /// Enable the disabled bundle with this slug.
    EnableBundle(String),
    /// Enable the disabled tool with this reference.
    EnableTool(String),
    /// Look at the tool's status.
    ShowTool,
    /// Give the arguments as a JSON object.
    ArgumentsAsObject,
    /// Ask a person at a terminal, or approve the run in advance.
    Approve,
    /// Choose another workspace folder.
    OtherWorkspace,
}

/// A schema that does not compile is the tool's fault: a validation error naming the schema.
impl From<CompileError> for Failure {
    fn from(e: CompileError) -> Self {
        Failure::new(ErrorCode::ValidationError, e.message)
            .with_details(json!({ "schema": e.schema, "pointer": e.pointer }))
    }
}

impl Failure {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            ran: false,
            text: Box::new(FailureText {
                message: message.into(),
                details: json!({}),
                hint: None,
                remedy: None,
            }),
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.text.details = details;
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.text.hint = Some(hint.into());
        self
    }

    pub fn with_remedy(mut self, remedy: Remedy) -> Self {
        self.text.remedy = Some(remedy);
        self
    }

    /// Mark the failure as the tool's own (it ran).
    pub fn ran(mut self) -> Self {
        self.ran = true;
        self
    }

    pub fn message(&self) -> &str {
        &self.text.message
    }

    pub fn details(&self) -> &Value {
        &self.text.details
    }

    /// The message, details and hint.
    pub fn into_text(self) -> FailureText {
        *self.text
    }

    /// The same failure with `redactor`'s secrets out of its message, details and hint.
    pub fn redacted(self, redactor: &Redactor) -> Self {
        let (code, ran) = (self.code, self.ran);
        let text = self.into_text();
        let mut out = Failure::new(code, redactor.text(&text.message))
            .with_details(redactor.value(text.details));
        if let Some(hint) = text.hint {
            out = out.with_hint(redactor.text(&hint));
        }
        if let Some(remedy) = text.remedy {
            out = out.with_remedy(remedy);
        }
        if ran { out.ran() } else { out }
    }
}

/// What a call may use beyond its arguments.
pub struct Options<'a> {
    /// The folder file tools work in; they can never reach outside it.
    pub workspace: PathBuf,
    /// Asks a person whether a `human-approval` tool may run without a schema (the question
    /// is the argument); `None` when nobody can be asked.
    pub confirm: Option<&'a (dyn Fn(&str) -> bool + Sync)>,
    /// `--approve`: runs of `human-approval` tools are approved in advance.
    pub approved: bool,
    /// Where HTTP tools may send requests (`allowedHosts` of `toolctl.json`).
    pub hosts: HostPolicy,
    /// The MCP servers `mcp` tools name (`mcpServers` of `toolctl.json`).
    pub mcp_servers: crate::catalog::mcp_servers::McpServers,
    /// Stdio MCP servers kept running between calls (`mcp serve`, `invoke --batch`); `None`:
    /// each call starts its server and ends it.
    pub mcp_sessions: Option<Arc<mcp::Sessions>>,
    /// When the call must be over (a batch's `wait_ms`): tools stop their work by then.
    pub deadline: Option<Instant>,
    /// Set when whoever asked for the call no longer waits for it (`mcp serve`: the client
    /// cancelled it, left, or the server is stopping): `exec` then kills its program with
    /// everything it started at once, as at its `timeout_ms`.
    pub cancel: Option<Cancel>,
    /// The catalog's state folder (`.toolctl/`): rate-limit counts, OAuth2 tokens.
    pub state_dir: PathBuf,
    /// `http` of `toolctl.json`: defaults of HTTP tools.
    pub http: HttpDefaults,
    /// The window `maxCallsPerMinute` counts in (`http.rateLimitWindow`, a minute by default).
    pub rate_window: std::time::Duration,
    /// `invoke --stream`: told each event of a streamed (SSE) response as it comes, redacted.
    pub on_event: Option<&'a (dyn Fn(&Value) + Sync)>,
    /// The catalog's notes, where state made again (a damaged file) is told.
    pub notes: crate::catalog::CheckNote,
}

impl Options<'static> {
    /// The options of a call in `catalog` working in `workspace`: nobody to ask, nothing
    /// approved in advance, no deadline, no stream.
    pub fn new(catalog: &Catalog, workspace: PathBuf) -> Self {
        let config = catalog.config();
        Self {
            workspace,
            confirm: None,
            approved: false,
            hosts: config.hosts.clone(),
            deadline: None,
            cancel: None,
            mcp_servers: config.mcp_servers.clone(),
            mcp_sessions: None,
            // `.toolctl/`, or the user's cache folder of a catalog this process cannot write.
            state_dir: crate::catalog::state::dir(catalog.root()),
            http: config.http.clone(),
            rate_window: config.rate_limit_window,
            on_event: None,
            notes: catalog.check_note().clone(),
        }
    }
}

impl Options<'_> {
    /// `limit`, shortened to what is left before the deadline.
    pub fn bounded(&self, limit: std::time::Duration) -> std::time::Duration {
        match self.deadline {
            Some(deadline) => limit.min(deadline.saturating_duration_since(Instant::now())),
            None => limit,
        }
    }

    /// Whoever asked for the call no longer waits for it ([`Options::cancel`]).
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(Cancel::is_cancelled)
    }
}

/// A call's cancellation: a flag its caller sets (from any thread), which a tool that runs a
/// long time (`exec`) looks at while it waits.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl std::fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("workspace", &self.workspace)
            .field("can_confirm", &self.confirm.is_some())
            .field("approved", &self.approved)
            .field("deadline", &self.deadline)
            .field("cancel", &self.cancel)
            .field("state_dir", &self.state_dir)
            .field("streams", &self.on_event.is_some())
            .finish()
    }
}

/// A value the tool gave.
#[derive(Debug, Clone)]
pub struct Success {
    pub value: Value,
    /// `false` when the arguments were not checked (a tool without `argSchema`).
    pub validated: bool,
    pub no_schema_mode: Option<NoSchemaMode>,
}

impl Success {
    /// The `{"ok":true,"value":…}` envelope; runs without a schema carry
    /// `details: {validated: false, noSchemaMode}`.
    pub fn envelope(&self) -> Value {
        let mut envelope = json!({ "ok": true, "value": self.value });
        if !self.validated {
            envelope["details"] =
                json!({ "validated": false, "noSchemaMode": self.no_schema_mode });
        }
        envelope
    }
}

/// Call `entry` with `raw_args` (see the module comment).
pub fn invoke(entry: &ToolEntry, raw_args: Value, options: &Options) -> Result<Success, Failure> {
    check_callable(entry, &options.hosts)?;
    let mut args = parse_arguments(raw_args)?;
    if let Some(schema) = &entry.tool.arg_schema {
        // A strict-mode model sends null for the optional arguments it leaves out.
        let mut object = Value::Object(std::mem::take(&mut args));
        crate::schema::strict::drop_unset_nulls(schema, &mut object);
        if let Value::Object(map) = object {
            args = map;
        }
    }
    let (validated, no_schema_mode) = check_arguments(entry, &args, options)?;
    // Compiled before the tool runs: a schema that cannot be used is found before any effect.
    let output_schema = entry
        .tool
        .output_schema
        .as_ref()
        .map(|schema| Schema::compile(schema, "outputSchema"))
        .transpose()?;
    let (value, redactor) = dispatch(entry, args, options)?;
    // The schema checks what the tool returned (a secret it echoes keeps its type); then the
    // secrets leave the value, and a failure's every part (message, errors, value).
    if let Some(output_schema) = output_schema {
        check_output(entry, &output_schema, &value).map_err(|f| f.redacted(&redactor))?;
    }
    let value = redactor.value(value);
    Ok(Success {
        value,
        validated,
        no_schema_mode,
    })
}

/// What to do when a tool's host is not allowed: its entry, with the URL's port when the
/// message says the host is listed only with others.
const HOST_HINT: &str = "add the host (with the URL's port, if allowedHosts lists it with other ports) to allowedHosts in toolctl.json";

fn check_callable(entry: &ToolEntry, hosts: &HostPolicy) -> Result<(), Failure> {
    let reference = entry.reference();
    let refused = |message: String, remedy: Remedy| {
        Err(Failure::new(ErrorCode::ToolDisabled, message).with_remedy(remedy))
    };
    if entry.bundle_deleted {
        return refused(
            format!("{reference}: its bundle is soft-deleted"),
            Remedy::RestoreBundle(entry.bundle_slug.clone()),
        );
    }
    if !entry.bundle_enabled {
        return refused(
            format!("{reference}: its bundle is disabled"),
            Remedy::EnableBundle(entry.bundle_slug.clone()),
        );
    }
    if !entry.is_enabled {
        return refused(
            format!("{reference} is disabled"),
            Remedy::EnableTool(reference.clone()),
        );
    }
    if let Some(reason) = &entry.unavailable {
        // The catalog lists a tool without argSchema as unavailable; the call is refused for
        // what it is: a call that cannot be checked.
        if entry.tool.arg_schema.is_none() && !entry.tool.allow_no_schema {
            return Err(no_schema_refusal(&reference));
        }
        // An HTTP tool whose host is not (or no longer) allowed: say so in its own code.
        if let Some(spec) = entry.tool.http_impl()
            && let Err(message) =
                crate::catalog::rules::check_url_template(&spec.url_template, hosts).and_then(
                    |_| crate::catalog::auth::host_problem(&spec, hosts).map_or(Ok(()), Err),
                )
        {
            return Err(
                Failure::new(ErrorCode::HostNotAllowed, format!("{reference}: {message}"))
                    .with_hint(HOST_HINT),
            );
        }
        if entry.tool.kind == ToolType::Mcp && reason.contains("allowedHosts") {
            return Err(
                Failure::new(ErrorCode::HostNotAllowed, format!("{reference}: {reason}"))
                    .with_hint(HOST_HINT),
            );
        }
        // A tool of a user's that runs `exec` while the catalog's policy forbids it.
        if entry.tool.runs_exec() {
            return refused(
                format!("{reference} is unavailable: {reason}"),
                Remedy::EnableTool(format!("{}/{}", builtin::SLUG, builtin::EXEC)),
            );
        }
        return refused(
            format!("{reference} is unavailable: {reason}"),
            Remedy::ShowTool,
        );
    }
    Ok(())
}

/// A secrets file that cannot be used fails the call that needed it: `FORBIDDEN`.
impl From<crate::base::secrets::SecretsError> for Failure {
    fn from(error: crate::base::secrets::SecretsError) -> Self {
        let failure = Failure::new(ErrorCode::Forbidden, error.to_string())
            .with_details(json!({ "path": error.path }));
        match error.hint {
            Some(hint) => failure.with_hint(hint),
            None => failure,
        }
    }
}

/// Run `entry` and count the call in the catalog's usage record when the tool ran (a call
/// refused before it ran is not a use).
pub fn call_and_record(
    catalog: &Catalog,
    entry: &ToolEntry,
    raw_args: Value,
    options: &Options,
) -> Result<Success, Failure> {
    let outcome = invoke(entry, raw_args, options);
    if outcome.is_ok() || outcome.as_ref().is_err_and(|f| f.ran) {
        usage::record(catalog, &entry.tool.tool_id.to_string());
    }
    outcome
}

/// The arguments of a call: a JSON object, or a string holding one (OpenAI sends
/// `"arguments": "{\"city\":\"Oslo\"}"`). An empty string is no arguments.
pub fn parse_arguments(raw: Value) -> Result<Map<String, Value>, Failure> {
    let value = match raw {
        Value::String(text) if text.trim().is_empty() => return Ok(Map::new()),
        Value::String(text) => serde_json::from_str(&text).map_err(|e| {
            let e = crate::base::syntax::SyntaxError::of(&e);
            Failure::new(
                ErrorCode::ValidationError,
                format!("the arguments are not valid JSON: {e}"),
            )
            .with_details(json!({ "line": e.line, "column": e.column }))
        })?,
        other => other,
    };
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(Failure::new(
            ErrorCode::ValidationError,
            format!(
                "the arguments must be a JSON object, not {}",
                json_kind(&other)
            ),
        )
        .with_remedy(Remedy::ArgumentsAsObject)),
    }
}

/// Check the arguments against `argSchema`, or apply the no-schema policy. Returns whether
/// they were checked, and the mode that let an unchecked call through.
fn check_arguments(
    entry: &ToolEntry,
    args: &Map<String, Value>,
    options: &Options,
) -> Result<(bool, Option<NoSchemaMode>), Failure> {
    let tool = &entry.tool;
    let reference = entry.reference();
    if let Some(arg_schema) = &tool.arg_schema {
        let errors = Schema::compile(arg_schema, "argSchema")?.errors(&Value::Object(args.clone()));
        if errors.is_empty() {
            return Ok((true, None));
        }
        return Err(Failure::new(
            ErrorCode::ValidationError,
            format!("{reference}: {}", schema::summary("the arguments", &errors)),
        )
        .with_details(json!({ "errors": errors })));
    }
    let mode = match (tool.allow_no_schema, tool.no_schema_mode) {
        (true, Some(mode)) => mode,
        _ => return Err(no_schema_refusal(&reference)),
    };
    match mode {
        NoSchemaMode::Full => {}
        NoSchemaMode::ReadOnly => {
            if !is_read_only(entry) {
                return Err(Failure::new(
                    ErrorCode::Forbidden,
                    format!(
                        "{reference} has no argSchema and noSchemaMode read-only, but it is not a read-only tool"
                    ),
                )
                .with_hint(
                    "give the tool an argSchema, or mark it read-only (annotations.readOnlyHint: true)",
                ));
            }
        }
        NoSchemaMode::HumanApproval => {
            // The person decides on what will run: the arguments themselves, cut if long.
            let shown = Value::Object(args.clone()).to_string();
            let shown = match shown.char_indices().nth(2000) {
                Some((cut, _)) => format!("{}…", &shown[..cut]),
                None => shown,
            };
            let question = format!(
                "{reference} has no argSchema: nothing has checked these arguments:\n  {shown}\nRun it?"
            );
            let asked = !options.approved && options.confirm.is_some();
            let approved = options.approved || options.confirm.is_some_and(|ask| ask(&question));
            if !approved && asked {
                return Err(Failure::new(
                    ErrorCode::Forbidden,
                    format!(
                        "{reference}: the run was declined at the approval question (noSchemaMode human-approval)"
                    ),
                ));
            }
            if !approved {
                return Err(Failure::new(
                    ErrorCode::Forbidden,
                    format!(
                        "{reference} has no argSchema and needs a person's approval to run (noSchemaMode human-approval)"
                    ),
                )
                .with_remedy(Remedy::Approve));
            }
        }
    }
    Ok((false, Some(mode)))
}

/// The refusal of a tool without `argSchema` that did not opt in (fail closed).
fn no_schema_refusal(reference: &str) -> Failure {
    Failure::new(
        ErrorCode::Forbidden,
        format!("{reference} has no argSchema, so its arguments cannot be checked"),
    )
    .with_hint(
        "give the tool an argSchema (or, deliberately, allowNoSchema: true with a noSchemaMode)",
    )
}

/// A tool that only reads: its annotations say so, or it is an HTTP GET/HEAD.
fn is_read_only(entry: &ToolEntry) -> bool {
    let tool = &entry.tool;
    if let Some(read_only) = tool.annotations.as_ref().and_then(|a| a.read_only_hint) {
        return read_only;
    }
    tool.kind == ToolType::Http
        && tool
            .http_impl()
            .is_some_and(|h| matches!(h.method.to_ascii_uppercase().as_str(), "GET" | "HEAD"))
}

/// Run the tool: its value as it returned it (not yet redacted), with the secrets the call
/// used; a failure comes redacted already.
fn dispatch(
    entry: &ToolEntry,
    args: Map<String, Value>,
    options: &Options,
) -> Result<(Value, Redactor), Failure> {
    let tool = &entry.tool;
    if tool.kind.is_native() {
        let func = tool.native_func().unwrap_or_default();
        return native::call(&func, args, options)
            .map(|value| (value, Redactor::default()))
            .map_err(Failure::ran);
    }
    if tool.kind == ToolType::Mcp {
        return mcp::call(entry, args, options);
    }
    http::call(entry, &args, options)
}

fn check_output(entry: &ToolEntry, output_schema: &Schema, value: &Value) -> Result<(), Failure> {
    let errors = output_schema.errors(value);
    if errors.is_empty() {
        return Ok(());
    }
    Err(Failure::new(
        ErrorCode::OutputInvalid,
        format!(
            "{}: {}",
            entry.reference(),
            schema::summary("the output", &errors)
        ),
    )
    .with_details(json!({ "errors": errors, "value": value }))
    .ran())
}
