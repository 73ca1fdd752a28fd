//! MCP tools (`type: "mcp"`): a call of one tool of an MCP server declared in `mcpServers` of
//! `toolctl.json`, with the official SDK's client (`rmcp`).
//!
//! A stdio server is started (no shell, a cgroup of its own where `exec` would have one —
//! [`super::native::cgroup`] —, its own process group, an environment reduced to exec's
//! [`PASSED_ENV`] plus the entry's `env`, secrets expanded) and spoken to on its stdin and
//! stdout: for the one call, then killed with every process it started (its cgroup, then
//! exec's [`kill_tree`]); or, when the options carry [`Sessions`] (`mcp serve`,
//! `invoke --batch`), once for every call of the process, and killed so when the sessions
//! close or it is started again. A Streamable HTTP
//! server is reached at its `url` (host in `allowedHosts`, no redirects followed, `headers`
//! with secrets expanded): a session initialized for the one call and closed after it, or,
//! with [`Sessions`], one session for every call, initialized again when the server lost it. The whole
//! call — start, `initialize`, `tools/call` — is bounded by the tool's timeout (`impl.timeoutMs`,
//! else the server's `timeoutMs`, else 30 s, and a batch's deadline), so a server that never
//! answers is a `TIMEOUT`, never a hang. A server that does not start, exits or closes the
//! connection (seen at once, not at the timeout),
//! answers with a JSON-RPC error, or whose tool answers `isError: true`, is an
//! `UPSTREAM_ERROR`; every message names the server (and what its stderr said last).
//!
//! A result is the tool's `structuredContent` when it has one; else its text (the text blocks
//! joined by newlines); else (images, resources…) its `content` array as JSON.

use super::native::cgroup::{Cgroup, Handoff};
use super::native::exec::{PASSED_ENV, TAG_VARIABLE, kill_tree};
use super::{Failure, Options};
use crate::base::error_code::ErrorCode;
use crate::base::json_kind;
use crate::base::redact::Redactor;
use crate::base::secrets::{Secrets, Unset};
use crate::catalog::ToolEntry;
use crate::catalog::mcp_servers::{McpServer, Transport};
use crate::catalog::rules::{HostPolicy, PLACEHOLDER};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, Implementation,
    ServerResult,
};
use rmcp::service::{Peer, RunningService};
use rmcp::{RoleClient, ServiceExt};
use rustix::process::Pid;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::unix::pipe;
use tokio::process::ChildStdout;

/// How much of a server's stderr an error shows (its end).
const STDERR_TAIL: usize = 2048;

/// How long a finished session may take to close before the server is killed.
const CLOSE_GRACE: Duration = Duration::from_millis(300);

/// Call the MCP tool `entry` with checked `args`: its value as the server gave it, with the
/// secrets the call used, for the caller to redact (a failure comes redacted).
pub fn call(
    entry: &ToolEntry,
    args: Map<String, Value>,
    options: &Options,
) -> Result<(Value, Redactor), Failure> {
    let reference = entry.reference();
    let Some(mcp) = entry.tool.mcp_impl() else {
        return Err(Failure::new(
            ErrorCode::ToolDisabled,
            format!("{reference}: impl is not a valid MCP implementation"),
        ));
    };
    let Some(server) = options.mcp_servers.get(&mcp.server) else {
        return Err(Failure::new(
            ErrorCode::ToolDisabled,
            format!(
                "{reference}: MCP server '{}' is not declared in mcpServers of toolctl.json",
                mcp.server
            ),
        ));
    };
    let timeout = options.bounded(Duration::from_millis(server.timeout_ms(mcp.timeout_ms)));
    let request = Request::Call {
        tool: mcp.tool.clone(),
        args,
    };
    let sessions = options.mcp_sessions.as_deref();
    let (Answer::Called(result), redactor) = session(
        &mcp.server,
        server,
        &options.hosts,
        timeout,
        request,
        sessions,
    )?
    else {
        return Err(Failure::new(
            ErrorCode::Internal,
            "tools/call was answered by a list",
        ));
    };
    let content = result.get("content").cloned().unwrap_or(Value::Null);
    let structured = result.get("structuredContent").cloned();
    let text = text_of(&content);
    if result.get("isError") == Some(&Value::Bool(true)) {
        // Redacted before it is cut to an excerpt: a secret cut in two is not found.
        let said = redactor.text(&text.clone().unwrap_or_else(|| content.to_string()));
        let mut details = json!({ "server": mcp.server, "tool": mcp.tool, "content": content });
        if let Some(structured) = structured {
            details["structuredContent"] = structured;
        }
        return Err(Failure::new(
            ErrorCode::UpstreamError,
            format!(
                "MCP server '{}': tool '{}' failed: {}",
                mcp.server,
                mcp.tool,
                excerpt(&said)
            ),
        )
        .with_details(details)
        .ran()
        .redacted(&redactor)); // The details.
    }
    let value = match (structured, text) {
        (Some(structured), _) => structured,
        (None, Some(text)) => Value::String(text),
        (None, None) => content,
    };
    Ok((value, redactor))
}

/// The tools of server `name` (every page of `tools/list`), as the server sent them.
pub fn list_tools(
    name: &str,
    server: &McpServer,
    hosts: &HostPolicy,
    timeout: Duration,
) -> Result<Listing, Failure> {
    match session(name, server, hosts, timeout, Request::List, None)?.0 {
        Answer::Listed(listing) => Ok(listing),
        Answer::Called(_) => Err(Failure::new(
            ErrorCode::Internal,
            "tools/list was answered by a call result",
        )),
    }
}

/// The text blocks of `content` joined, when every block is text.
fn text_of(content: &Value) -> Option<String> {
    let blocks = content.as_array()?;
    let texts: Option<Vec<&str>> = blocks
        .iter()
        .map(|block| match block.get("type").and_then(Value::as_str) {
            Some("text") => block.get("text").and_then(Value::as_str),
            _ => None,
        })
        .collect();
    texts.map(|texts| texts.join("\n"))
}

/// At most [`STDERR_TAIL`] characters of `text`, for a message.
fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(STDERR_TAIL) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

enum Request {
    Call {
        tool: String,
        args: Map<String, Value>,
    },
    List,
}

/// A `tools/call` result, or the tools of `tools/list`, as JSON.
enum Answer {
    Called(Value),
    Listed(Listing),
}

/// An rmcp error in words for a person: the transport's own error where rmcp wraps one (its
/// message names the transport's Rust type, "Transport [rmcp::transport::worker::…] error"),
/// else rmcp's message. Every rmcp error a message shows goes through here.
fn rmcp_words(error: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::service::{ClientInitializeError, ServiceError};
    use rmcp::transport::DynamicTransportError;
    let inner = |transport: &DynamicTransportError| rmcp_words(&*transport.error);
    if let Some(ClientInitializeError::TransportError { error, .. }) = error.downcast_ref() {
        return inner(error);
    }
    if let Some(ServiceError::TransportSend(error)) = error.downcast_ref() {
        return inner(error);
    }
    if let Some(error) = error.downcast_ref::<DynamicTransportError>() {
        return inner(error);
    }
    if let Some(
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_),
    ) = error.downcast_ref()
    {
        return "the answer to initialize is not an MCP initialize result".to_owned();
    }
    error.to_string()
}

/// What went wrong, before the server is named.
enum Trouble {
    /// The transport or handshake failed.
    Start(String),
    /// The server's host name resolved only to addresses it may not lead to; with the URL's
    /// port.
    Blocked(crate::base::http::Blocked),
    /// The request failed.
    Request(String),
}

/// The trouble of a session that did not start: [`Trouble::Blocked`] when the resolver refused
/// the server's address (`port` is its URL's, when known), else the error said.
fn start_trouble(e: &(dyn std::error::Error + 'static)) -> Trouble {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    // The SDK's errors do not give what they hold as their source (the transport's error in
    // `TransportError`, the HTTP client's in `Client`): it is looked for inside.
    let mut next = Some(e);
    while let Some(error) = next {
        if let Some(blocked) = crate::base::http::blocked_in(error) {
            return Trouble::Blocked(blocked.clone());
        }
        next = if let Some(ClientInitializeError::TransportError { error, .. }) =
            error.downcast_ref::<ClientInitializeError>()
        {
            Some(&*error.error as &(dyn std::error::Error + 'static))
        } else if let Some(StreamableHttpError::Client(client)) =
            error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            Some(client as &(dyn std::error::Error + 'static))
        } else {
            error.source()
        };
    }
    Trouble::Start(rmcp_words(e))
}

/// Reach server `name` and make `request`, the whole within `timeout`: a stdio server on its
/// session in `sessions` (started there if need be), else started for the request and ended
/// after it.
fn session(
    name: &str,
    server: &McpServer,
    hosts: &HostPolicy,
    timeout: Duration,
    request: Request,
    sessions: Option<&Sessions>,
) -> Result<(Answer, Redactor), Failure> {
    let transport = server.transport(hosts).map_err(|message| {
        let code = if message.contains("allowedHosts") {
            ErrorCode::HostNotAllowed
        } else {
            ErrorCode::ToolDisabled
        };
        Failure::new(code, format!("MCP server '{name}' {message}"))
    })?;
    let mut values = Expander::new(&server.secrets);
    let what = match &request {
        Request::Call { tool, .. } => format!("the call of tool '{tool}'"),
        Request::List => "tools/list".to_owned(),
    };
    let expanded = match &transport {
        Transport::Stdio { env, .. } => values.expand_all(env)?,
        Transport::Http { headers, .. } => values.expand_all(headers)?,
    };
    let call = Call {
        name,
        url: match &transport {
            Transport::Http { url, .. } => Some(url),
            Transport::Stdio { .. } => None,
        },
        what: &what,
        timeout,
        hosts,
        redactor: &values.redactor,
    };
    let single = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::new(ErrorCode::Internal, format!("cannot start a runtime: {e}")))
    };
    let reach = match &transport {
        Transport::Stdio { argv, cwd, .. } => Reach::Stdio(Launch {
            argv,
            env: expanded,
            cwd: cwd.as_deref(),
        }),
        Transport::Http { url, .. } => Reach::Http {
            url: url.clone(),
            headers: expanded,
        },
    };
    let answer = match (sessions, reach) {
        (Some(sessions), reach) => sessions.request(&call, &reach, request),
        (None, Reach::Stdio(launch)) => single()?.block_on(stdio(&call, &launch, request)),
        (None, Reach::Http { url, headers }) => {
            single()?.block_on(http(&call, url, headers, request))
        }
    }?;
    // A server may echo what it was given: the caller keeps the secrets out of what leaves
    // the call (a call's value once its output schema has checked it).
    Ok((answer, values.redactor))
}

/// One session's names, for its messages.
struct Call<'a> {
    name: &'a str,
    /// An HTTP server's URL, named when a session does not start.
    url: Option<&'a url::Url>,
    /// What the request is (`the call of tool 'x'`).
    what: &'a str,
    timeout: Duration,
    /// `allowedHosts`, whose addresses an HTTP server's host name may resolve to.
    hosts: &'a HostPolicy,
    redactor: &'a Redactor,
}

impl Call<'_> {
    /// The failure of a session that gave no answer: `trouble`, or `None` when the time ran out.
    fn failure(&self, trouble: Option<Trouble>, started: bool, stderr: &str) -> Failure {
        let (name, what) = (self.name, self.what);
        let ms = self.timeout.as_millis();
        let (code, mut message) = match trouble {
            None if started => (
                ErrorCode::Timeout,
                format!("MCP server '{name}' did not answer {what} within {ms} ms"),
            ),
            None => (
                ErrorCode::Timeout,
                format!("MCP server '{name}' did not answer initialize within {ms} ms"),
            ),
            Some(Trouble::Blocked(blocked)) => (
                ErrorCode::HostNotAllowed,
                format!(
                    "MCP server '{name}': {}",
                    super::http::blocked_message(&blocked)
                ),
            ),
            Some(Trouble::Start(e)) => (
                ErrorCode::UpstreamError,
                match self.url {
                    Some(url) => {
                        format!("MCP server '{name}': {e} from {url} when starting a session")
                    }
                    None => format!("MCP server '{name}' did not start a session: {e}"),
                },
            ),
            Some(Trouble::Request(e)) => (
                ErrorCode::UpstreamError,
                format!("MCP server '{name}' failed {what}: {e}"),
            ),
        };
        let stderr = excerpt(stderr);
        if !stderr.is_empty() {
            message.push_str(&format!("; its stderr ends: {stderr}"));
        }
        Failure::new(code, self.redactor.text(&message))
            .with_details(json!({ "server": name }))
            .ran()
    }
}

/// `${NAME}` of the server's declared secrets, expanded; each value used is redacted from
/// whatever leaves the call.
struct Expander<'a> {
    declared: &'a [String],
    secrets: Option<Secrets>,
    redactor: Redactor,
}

impl<'a> Expander<'a> {
    fn new(declared: &'a [String]) -> Self {
        Self {
            declared,
            secrets: None,
            redactor: Redactor::default(),
        }
    }

    fn expand_all(
        &mut self,
        values: &BTreeMap<String, String>,
    ) -> Result<Vec<(String, String)>, Failure> {
        values
            .iter()
            .map(|(key, value)| Ok((key.clone(), self.expand(value)?)))
            .collect()
    }

    fn expand(&mut self, template: &str) -> Result<String, Failure> {
        let mut out = String::new();
        let mut last = 0;
        for found in PLACEHOLDER.captures_iter(template) {
            let (Some(whole), Some(name)) = (found.get(0), found.get(1)) else {
                continue;
            };
            let name = name.as_str();
            if !self.declared.iter().any(|d| d == name) {
                return Err(Failure::new(
                    ErrorCode::ValidationError,
                    format!("${{{name}}} is not a secret the MCP server declares in \"secrets\""),
                ));
            }
            if self.secrets.is_none() {
                self.secrets = Some(Secrets::load()?);
            }
            let secret = self
                .secrets
                .as_ref()
                .map_or(Err(Unset::Missing), |s| s.get(name));
            let secret = match secret {
                Ok(secret) => secret,
                Err(unset) => return Err(Failure::new(
                    ErrorCode::ValidationError,
                    format!("${{{name}}} has no value: the MCP server's secret '{name}' {unset}"),
                )
                .with_hint(format!(
                    "set TOOLCTL_SECRET_{name}, or add \"{name}\" to the secrets file (secrets.json)"
                ))),
            };
            self.redactor.add(&secret);
            out.push_str(&template[last..whole.start()]);
            out.push_str(&secret);
            last = whole.end();
        }
        out.push_str(&template[last..]);
        Ok(out)
    }
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("toolctl", env!("CARGO_PKG_VERSION")),
    )
}

/// `initialize`, the request, and a close: `started` turns true once the handshake is over.
async fn exchange<T, E, A>(
    transport: T,
    request: Request,
    started: &AtomicBool,
) -> Result<Answer, Trouble>
where
    T: rmcp::transport::IntoTransport<rmcp::RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = client_config()
        .serve(transport)
        .await
        .map_err(|e| start_trouble(&e))?;
    started.store(true, Ordering::SeqCst);
    let answer = ask(client.peer(), request, None).await;
    let _ = tokio::time::timeout(CLOSE_GRACE, client.cancel()).await;
    answer
}

/// Make `request` of a connected server; a server that exits, or closes the connection,
/// before it answers fails the request at once (its children may keep the pipe open).
async fn ask(
    peer: &Peer<RoleClient>,
    request: Request,
    process: Option<Pid>,
) -> Result<Answer, Trouble> {
    tokio::select! {
        answer = ask_only(peer, request) => answer,
        () = until_gone(peer, process) => Err(Trouble::Request(
            "the server exited, or closed the connection, before it answered".to_owned(),
        )),
    }
}

/// Wait until the connection to `peer` is closed or `process` (a child of ours, not reaped
/// here) exited, checked every [`GONE_CHECK`].
async fn until_gone(peer: &Peer<RoleClient>, process: Option<Pid>) {
    use rustix::process::{WaitId, WaitIdOptions, waitid};
    let exited = || {
        process.is_some_and(|pid| {
            let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
            !matches!(waitid(WaitId::Pid(pid), options), Ok(None))
        })
    };
    while !peer.is_transport_closed() && !exited() {
        tokio::time::sleep(GONE_CHECK).await;
    }
}

/// How often a request in flight checks that its server is still there.
const GONE_CHECK: Duration = Duration::from_millis(20);

async fn ask_only(peer: &Peer<RoleClient>, request: Request) -> Result<Answer, Trouble> {
    match request {
        Request::Call { tool, args } => peer
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
            .await
            .map(|result| Answer::Called(serde_json::to_value(result).unwrap_or(Value::Null))),
        Request::List => return list_every_page(peer).await.map(Answer::Listed),
    }
    .map_err(|e| Trouble::Request(rmcp_words(&e)))
}

/// The most tools a server may list (as many as a bundle archive may hold files), and the most
/// pages toolctl reads.
pub const MAX_LISTED: usize = 20_000;

/// A server's `tools/list`, every page.
#[derive(Debug, Default)]
pub struct Listing {
    /// Its tools, as the SDK reads them, in list order.
    pub tools: Vec<Value>,
    /// What it listed that is no MCP tool (a name that is not a string, an `inputSchema` that
    /// is not an object…), in list order: left out, each with where and why.
    pub skipped: Vec<Skipped>,
}

/// An entry of a `tools/list` page that is no MCP tool.
#[derive(Debug)]
pub struct Skipped {
    /// Its `name`, when that is a string.
    pub name: Option<String>,
    /// The page it is on (1 for the first).
    pub page: usize,
    /// Where in that page's result (`/tools/3/inputSchema`).
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl Skipped {
    /// `tool 'x' (tools/list page 1, /tools/0/inputSchema): must be an object, and is a string`.
    pub fn describe(&self) -> String {
        let tool = match &self.name {
            Some(name) => format!("tool '{name}'"),
            None => "a tool".to_owned(),
        };
        format!(
            "{tool} (tools/list page {}, {}): {}",
            self.page, self.pointer, self.message
        )
    }
}

/// Every page of the server's `tools/list`. A server that sends a cursor it sent before, or
/// more than [`MAX_LISTED`] tools or pages, is refused at once: its pages would otherwise go on (and
/// fill memory) until the timeout.
///
/// Each page is read as JSON, not as the SDK's list type, so that one tool the SDK cannot read
/// (which would fail the page as an "unexpected response type", naming nothing) is left out
/// and named ([`Listing::skipped`]) rather than losing the server's other tools.
async fn list_every_page(peer: &Peer<RoleClient>) -> Result<Listing, Trouble> {
    let mut listing = Listing::default();
    let mut listed = 0;
    let mut cursors = std::collections::HashSet::new();
    let mut cursor = None;
    let mut page = 0;
    loop {
        page += 1;
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
        let answer = peer
            .send_request(ClientRequest::ListToolsRequest(
                rmcp::model::ListToolsRequest::with_param(params),
            ))
            .await
            .map_err(|e| Trouble::Request(rmcp_words(&e)))?;
        let result = match answer {
            ServerResult::CustomResult(custom) => custom.0,
            typed => serde_json::to_value(typed).unwrap_or(Value::Null),
        };
        let (tools, next) = page_of(&result).map_err(|e| {
            Trouble::Request(format!(
                "its tools/list page {page} is no list of tools: {e}"
            ))
        })?;
        listed += tools.len();
        if listed > MAX_LISTED {
            return Err(Trouble::Request(format!(
                "it listed more than {MAX_LISTED} tools, the most toolctl takes"
            )));
        }
        for (at, raw) in tools.iter().enumerate() {
            match tool_of(raw) {
                Ok(tool) => listing.tools.push(tool),
                Err((field, message)) => listing.skipped.push(Skipped {
                    name: raw.get("name").and_then(Value::as_str).map(str::to_owned),
                    page,
                    pointer: format!("/tools/{at}{field}"),
                    message,
                }),
            }
        }
        // Empty pages, each with a new cursor, would go on as well: no more pages than tools
        // toolctl takes.
        if cursors.len() >= MAX_LISTED {
            return Err(Trouble::Request(format!(
                "it sent more than {MAX_LISTED} pages, the most toolctl reads"
            )));
        }
        match next {
            None => return Ok(listing),
            Some(next) if !cursors.insert(next.clone()) => {
                return Err(Trouble::Request(format!(
                    "it sent the cursor '{}' a second time, so its pages would never end",
                    next.chars().take(64).collect::<String>()
                )));
            }
            Some(next) => cursor = Some(next),
        }
    }
}

/// The tools of a `tools/list` result, and its `nextCursor`.
fn page_of(result: &Value) -> Result<(&[Value], Option<String>), String> {
    let Some(result) = result.as_object() else {
        return Err(format!("the result is {}", json_kind(result)));
    };
    let tools = match result.get("tools") {
        Some(Value::Array(tools)) => tools,
        Some(other) => {
            return Err(format!(
                "/tools must be an array, and is {}",
                json_kind(other)
            ));
        }
        None => return Err("it has no /tools".to_owned()),
    };
    let next = match result.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(next)) => Some(next.clone()),
        Some(other) => {
            return Err(format!(
                "/nextCursor must be a string, and is {}",
                json_kind(other)
            ));
        }
    };
    Ok((tools, next))
}

/// One listed tool as the SDK reads it, or where (a pointer inside the tool) and why it is no
/// MCP tool. The fields toolctl uses are named; anything else the SDK refuses is its message.
fn tool_of(raw: &Value) -> Result<Value, (String, String)> {
    let must = |field: &str, what: &str, value: &Value| {
        (
            format!("/{field}"),
            format!("must be {what}, and is {}", json_kind(value)),
        )
    };
    let Some(fields) = raw.as_object() else {
        return Err((
            String::new(),
            format!("must be an object, and is {}", json_kind(raw)),
        ));
    };
    for (field, what, required, fits) in [
        (
            "name",
            "a string",
            true,
            Value::is_string as fn(&Value) -> bool,
        ),
        ("inputSchema", "an object", true, Value::is_object),
        ("outputSchema", "an object", false, Value::is_object),
        ("annotations", "an object", false, Value::is_object),
        ("title", "a string", false, Value::is_string),
        ("description", "a string", false, Value::is_string),
    ] {
        match fields.get(field) {
            None if required => {
                return Err((format!("/{field}"), format!("is missing ({what})")));
            }
            Some(value) if !fits(value) && (required || !value.is_null()) => {
                return Err(must(field, what, value));
            }
            _ => {}
        }
    }
    let tool: rmcp::model::Tool = serde_json::from_value(raw.clone()).map_err(|e| {
        (
            String::new(),
            format!("is no MCP tool the SDK can read: {e}"),
        )
    })?;
    serde_json::to_value(tool).map_err(|e| (String::new(), e.to_string()))
}

/// How a stdio server is started.
struct Launch<'a> {
    argv: &'a [String],
    env: Vec<(String, String)>,
    cwd: Option<&'a Path>,
}

/// How a server is reached: started (stdio), or at its URL with its headers (secrets in).
enum Reach<'a> {
    Stdio(Launch<'a>),
    Http {
        url: url::Url,
        headers: Vec<(String, String)>,
    },
}

impl Reach<'_> {
    /// What tells two entries apart: a pooled session whose entry changed is made again.
    fn key(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        match self {
            Self::Stdio(launch) => (launch.argv, &launch.env, launch.cwd).hash(&mut hasher),
            Self::Http { url, headers } => (url.as_str(), headers).hash(&mut hasher),
        }
        hasher.finish()
    }

    /// Start the server (stdio) or open a session with it (HTTP), by `deadline`.
    async fn connect(
        &self,
        call: &Call<'_>,
        deadline: tokio::time::Instant,
    ) -> Result<(Option<Process>, RunningService<RoleClient, ClientConfig>), Failure> {
        match self {
            Self::Stdio(launch) => {
                let (process, client) = connect(call, launch, deadline).await?;
                Ok((Some(process), client))
            }
            Self::Http { url, headers } => {
                let transport = http_transport(call, url, headers.clone())?;
                match tokio::time::timeout_at(deadline, client_config().serve(transport)).await {
                    Ok(Ok(client)) => Ok((None, client)),
                    Ok(Err(e)) => Err(call.failure(Some(start_trouble(&e)), false, "")),
                    Err(_) => Err(call.failure(None, false, "")),
                }
            }
        }
    }
}

/// A started stdio server: its cgroup (where it has one), its process group, and the end of
/// what it wrote on stderr.
struct Process {
    child: tokio::process::Child,
    group: Option<Pid>,
    tag: String,
    cgroup: Option<Arc<Cgroup>>,
    tail: Arc<std::sync::Mutex<Vec<u8>>>,
    /// Why a line it wrote on stdout could not be read as JSON, once one could not.
    unreadable: Unreadable,
}

impl Process {
    /// Start the program (no shell, its own cgroup where there can be one, its own process
    /// group, a reduced environment).
    async fn spawn(
        call: &Call<'_>,
        launch: &Launch<'_>,
    ) -> Result<(Self, Lines<ChildStdout>, pipe::Sender), Failure> {
        use std::process::Stdio;
        use tokio::io::AsyncReadExt;
        let name = call.name;
        let (program, rest) = match launch.argv.split_first() {
            Some((program, rest)) => (program.as_str(), rest),
            None => ("", &[][..]),
        };
        let cannot_run = |e: std::io::Error| {
            let place = launch
                .cwd
                .map(|cwd| format!(" in {}", cwd.display()))
                .unwrap_or_default();
            Failure::new(
                ErrorCode::UpstreamError,
                format!("MCP server '{name}' did not start: cannot run '{program}'{place}: {e}"),
            )
            .with_details(json!({ "server": name }))
            .ran()
        };
        let tag = format!("{:016x}", fastrand::u64(..));
        // The server's standard input: a pipe of ours, handed to the launcher when there is
        // a cgroup (its own standard input tells toolctl whether the exec worked).
        let (reader, writer) = std::io::pipe().map_err(cannot_run)?;
        let stdin = pipe::Sender::from_owned_fd(writer.into()).map_err(cannot_run)?;
        let cgroup = Cgroup::for_server();
        let (mut command, handoff) = match &cgroup {
            Some(cgroup) => {
                let (handoff, launcher_stdin) =
                    Handoff::new(Some(reader.into())).map_err(cannot_run)?;
                let mut command = tokio::process::Command::from(cgroup.command(program, rest));
                command.stdin(launcher_stdin);
                (command, Some(handoff))
            }
            None => {
                let mut command = tokio::process::Command::new(program);
                command.args(rest).stdin(reader);
                (command, None)
            }
        };
        command
            .env_clear()
            .envs(
                PASSED_ENV
                    .iter()
                    .filter_map(|name| Some((*name, std::env::var_os(name)?))),
            )
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .env(TAG_VARIABLE, &tag)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = launch.cwd {
            command.current_dir(cwd);
        }
        let spawned = command.spawn();
        // The command holds the launcher's end of the handoff: its exec is seen once that
        // copy is gone too.
        drop(command);
        let mut child = spawned.map_err(cannot_run)?;
        if let Some(handoff) = handoff
            && let Err(e) = handoff.wait_async().await
        {
            let _ = child.wait().await;
            return Err(cannot_run(e));
        }
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        let Some(stdout) = child.stdout.take() else {
            return Err(Failure::new(
                ErrorCode::Internal,
                format!("MCP server '{name}': no pipes to the started program"),
            ));
        };
        // The end of its stderr, for the message of a failure.
        let tail = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        if let Some(mut stderr) = child.stderr.take() {
            let tail = Arc::clone(&tail);
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut kept) = tail.lock() {
                        kept.extend_from_slice(&buffer[..n]);
                        let over = kept.len().saturating_sub(4 * STDERR_TAIL);
                        kept.drain(..over);
                    }
                }
            });
        }
        let unreadable = Unreadable::default();
        let stdout = Lines::new(stdout, Arc::clone(&unreadable));
        let process = Self {
            child,
            group,
            tag,
            cgroup: cgroup.map(Arc::new),
            tail,
            unreadable,
        };
        Ok((process, stdout, stdin))
    }

    /// What it wrote on stderr lately.
    async fn stderr(&self) -> String {
        // Let the stderr reader take what the program wrote last.
        tokio::task::yield_now().await;
        self.tail
            .lock()
            .map(|kept| String::from_utf8_lossy(&kept).into_owned())
            .unwrap_or_default()
    }

    /// A server that ends by itself (its stdin closed) goes quietly for [`CLOSE_GRACE`];
    /// then it, and whatever it started, is killed. Its exit status, when it ended by itself.
    async fn end(&mut self) -> Option<std::process::ExitStatus> {
        let exited = tokio::time::timeout(CLOSE_GRACE, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok);
        self.reaper().kill();
        let _ = self.child.wait().await;
        exited
    }

    /// What kills it and whatever it started, also from elsewhere ([`Sessions::close`]).
    fn reaper(&self) -> Reaper {
        Reaper {
            cgroup: self.cgroup.clone(),
            group: self.group,
            tag: self.tag.clone(),
        }
    }

    /// Whether it still runs.
    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// What kills a started server and everything it started: its cgroup's processes, then its
/// process group and whatever carries its tag (which also catches a process that moved
/// itself out of the cgroup but kept the tag).
struct Reaper {
    cgroup: Option<Arc<Cgroup>>,
    group: Option<Pid>,
    tag: String,
}

impl Reaper {
    fn kill(&self) {
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill();
        }
        if let Some(group) = self.group {
            kill_tree(group, &self.tag);
        }
    }
}

/// The failure of a server that gave no answer: `trouble` (`None`: the time ran out), with the
/// end of its stderr and how it exited, after it is ended.
async fn ended(
    call: &Call<'_>,
    process: &mut Process,
    trouble: Option<Trouble>,
    started: bool,
) -> Failure {
    let exited = process.end().await;
    let unreadable = process.unreadable.lock().ok().and_then(|e| e.clone());
    let trouble = match unreadable {
        Some(e) => Some(Trouble::Request(format!(
            "its answer could not be read as JSON ({e})"
        ))),
        None => trouble,
    };
    let failure = call.failure(trouble, started, &process.stderr().await);
    match exited {
        Some(status) if !status.success() => {
            let message = format!("{} (it exited: {status})", failure.message());
            Failure::new(failure.code, call.redactor.text(&message))
                .with_details(json!({ "server": call.name }))
                .ran()
        }
        _ => failure,
    }
}

/// Start a stdio server and make the handshake, by `deadline`.
async fn connect(
    call: &Call<'_>,
    launch: &Launch<'_>,
    deadline: tokio::time::Instant,
) -> Result<(Process, RunningService<RoleClient, ClientConfig>), Failure> {
    let (mut process, stdout, stdin) = Process::spawn(call, launch).await?;
    match tokio::time::timeout_at(deadline, client_config().serve((stdout, stdin))).await {
        Ok(Ok(client)) => Ok((process, client)),
        Ok(Err(e)) => Err(ended(
            call,
            &mut process,
            Some(Trouble::Start(rmcp_words(&e))),
            false,
        )
        .await),
        Err(_) => Err(ended(call, &mut process, None, false).await),
    }
}

/// One call of a stdio server started for it alone, and ended after it.
async fn stdio(call: &Call<'_>, launch: &Launch<'_>, request: Request) -> Result<Answer, Failure> {
    let deadline = tokio::time::Instant::now() + call.timeout;
    let (mut process, client) = connect(call, launch, deadline).await?;
    let outcome =
        tokio::time::timeout_at(deadline, ask(client.peer(), request, process.group)).await;
    let _ = tokio::time::timeout(CLOSE_GRACE, client.cancel()).await;
    match outcome {
        Ok(Ok(answer)) => {
            process.end().await;
            Ok(answer)
        }
        Ok(Err(trouble)) => Err(ended(call, &mut process, Some(trouble), true).await),
        Err(_) => Err(ended(call, &mut process, None, true).await),
    }
}

/// MCP sessions kept for a process that makes many calls (`mcp serve`, `invoke --batch`): one
/// per server, made at its first call (a stdio server started, an HTTP server's session
/// initialized) and used by every call after it (concurrent calls share it). A stdio server
/// found dead at a call is started again; an HTTP session whose connection ended is opened
/// again, and one the server says is gone (HTTP 404 on its session ID, as after a restart) is
/// initialized again by the SDK's transport, the call retried once. A session that fails a call
/// by dying, or lets it time out, is ended (the next call makes it again); one whose
/// `mcpServers` entry changed is replaced. [`Sessions::close`] (also on drop) ends every server
/// it started, with whatever they started.
#[derive(Default)]
pub struct Sessions {
    runtime: std::sync::Mutex<Option<Arc<tokio::runtime::Runtime>>>,
    slots: std::sync::Mutex<HashMap<String, Slot>>,
    /// Every server running now, by connection: what kills it.
    running: Arc<std::sync::Mutex<HashMap<u64, Reaper>>>,
    next_id: AtomicU64,
}

type Slot = Arc<tokio::sync::Mutex<Option<Connection>>>;

/// A server's open session.
struct Connection {
    id: u64,
    key: u64,
    client: RunningService<RoleClient, ClientConfig>,
    /// The started server (none over HTTP).
    process: Option<Process>,
}

impl Connection {
    fn alive(&mut self) -> bool {
        !self.client.is_transport_closed() && self.process.as_mut().is_none_or(Process::alive)
    }
}

impl Sessions {
    pub fn new() -> Self {
        Self::default()
    }

    /// The runtime the servers' sessions run on (one worker thread), made at the first call.
    fn runtime(&self) -> Result<Arc<tokio::runtime::Runtime>, Failure> {
        let mut held = self.runtime.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(runtime) = &*held {
            return Ok(Arc::clone(runtime));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolctl-mcp-client")
            .enable_all()
            .build()
            .map(Arc::new)
            .map_err(|e| {
                Failure::new(ErrorCode::Internal, format!("cannot start a runtime: {e}"))
            })?;
        *held = Some(Arc::clone(&runtime));
        Ok(runtime)
    }

    fn slot(&self, server: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(slots.entry(server.to_owned()).or_default())
    }

    /// How many servers run now (for tests and logs).
    pub fn running(&self) -> usize {
        self.running.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// End every server started here, and whatever they started.
    pub fn close(&self) {
        let running = std::mem::take(&mut *self.running.lock().unwrap_or_else(|e| e.into_inner()));
        for reaper in running.values() {
            reaper.kill();
            // Removed now: a session still in use is dropped only with the runtime.
            if let Some(cgroup) = &reaper.cgroup {
                cgroup.remove();
            }
        }
        let runtime = self
            .runtime
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let slots = std::mem::take(&mut *self.slots.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(runtime) = runtime {
            // HTTP sessions are ended as the protocol says (DELETE), each briefly.
            let open: Vec<Connection> = slots
                .values()
                .filter_map(|slot| slot.try_lock().ok()?.take_if(|c| c.process.is_none()))
                .collect();
            if !open.is_empty() {
                let closing = async {
                    for mut connection in open {
                        let _ = tokio::time::timeout(CLOSE_GRACE, connection.client.close()).await;
                    }
                };
                // On a thread of its own: `close` may be called from within another runtime.
                std::thread::scope(|scope| {
                    scope.spawn(|| runtime.block_on(closing));
                });
            }
            // Their sessions and processes are dropped on the runtime they belong to.
            let entered = runtime.enter();
            drop(slots);
            drop(entered);
            if let Ok(runtime) = Arc::try_unwrap(runtime) {
                runtime.shutdown_background();
            }
        }
    }

    /// `request` of the server `call.name`, on its pooled session.
    fn request(
        &self,
        call: &Call<'_>,
        reach: &Reach<'_>,
        request: Request,
    ) -> Result<Answer, Failure> {
        let runtime = self.runtime()?;
        runtime.block_on(self.pooled(call, reach, request))
    }

    async fn pooled(
        &self,
        call: &Call<'_>,
        reach: &Reach<'_>,
        request: Request,
    ) -> Result<Answer, Failure> {
        let deadline = tokio::time::Instant::now() + call.timeout;
        let slot = self.slot(call.name);
        let (id, peer, group) = {
            let Ok(mut held) = tokio::time::timeout_at(deadline, slot.lock()).await else {
                return Err(call.failure(None, false, ""));
            };
            let key = reach.key();
            if let Some(connection) = held.as_mut()
                && (connection.key != key || !connection.alive())
                && let Some(old) = held.take()
            {
                self.end(old).await;
            }
            let connection = match held.take() {
                Some(connection) => connection,
                None => {
                    let (process, client) = reach.connect(call, deadline).await?;
                    let id = self.next_id.fetch_add(1, Ordering::SeqCst);
                    if let Some(process) = &process {
                        self.running
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .insert(id, process.reaper());
                    }
                    Connection {
                        id,
                        key,
                        client,
                        process,
                    }
                }
            };
            let peer = connection.client.peer().clone();
            let group = connection.process.as_ref().and_then(|p| p.group);
            let id = connection.id;
            *held = Some(connection);
            (id, peer, group)
        };
        let trouble = match tokio::time::timeout_at(deadline, ask(&peer, request, group)).await {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(trouble)) => Some(trouble),
            Err(_) => None,
        };
        // A server that let the time run out, or died, is ended; one that refused the request
        // (a JSON-RPC error) is kept.
        let mut held = slot.lock().await;
        let gone = held
            .as_mut()
            .is_some_and(|c| c.id == id && (trouble.is_none() || !c.alive()));
        match held.take_if(|_| gone) {
            Some(mut connection) => {
                self.forget(connection.id);
                let failure = match &mut connection.process {
                    Some(process) => ended(call, process, trouble, true).await,
                    None => call.failure(trouble, true, ""),
                };
                let _ = tokio::time::timeout(CLOSE_GRACE, connection.client.cancel()).await;
                Err(failure)
            }
            _ => Err(call.failure(trouble, true, "")),
        }
    }

    fn forget(&self, id: u64) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }

    /// Close a connection and end its server.
    async fn end(&self, mut connection: Connection) {
        self.forget(connection.id);
        let _ = tokio::time::timeout(CLOSE_GRACE, connection.client.close()).await;
        if let Some(process) = &mut connection.process {
            process.end().await;
        }
    }
}

impl Drop for Sessions {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("running", &self.running())
            .finish()
    }
}

/// One call of an HTTP server in a session opened for it alone, and closed after it.
async fn http(
    call: &Call<'_>,
    url: url::Url,
    headers: Vec<(String, String)>,
    request: Request,
) -> Result<Answer, Failure> {
    let transport = http_transport(call, &url, headers)?;
    let started = AtomicBool::new(false);
    match tokio::time::timeout(call.timeout, exchange(transport, request, &started)).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(blocked @ Trouble::Blocked(_))) => Err(call.failure(Some(blocked), false, "")),
        Ok(Err(trouble)) => Err(call.failure(Some(trouble), started.load(Ordering::SeqCst), "")),
        Err(_) => Err(call.failure(None, started.load(Ordering::SeqCst), "")),
    }
}

/// The Streamable HTTP transport to `url`, with `headers`; no redirects followed.
fn http_transport(
    call: &Call<'_>,
    url: &url::Url,
    headers: Vec<(String, String)>,
) -> Result<rmcp::transport::StreamableHttpClientTransport<reqwest::Client>, Failure> {
    let name = call.name;
    use reqwest::header::{HeaderName, HeaderValue};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let bad = |message: String| {
        Failure::new(ErrorCode::ValidationError, call.redactor.text(&message))
            .with_details(json!({ "server": name }))
    };
    let mut custom = HashMap::new();
    for (key, value) in headers {
        let header = HeaderName::from_bytes(key.as_bytes())
            .map_err(|e| bad(format!("MCP server '{name}': header '{key}': {e}")))?;
        let value = HeaderValue::from_str(&value)
            .map_err(|e| bad(format!("MCP server '{name}': header '{key}': {e}")))?;
        custom.insert(header, value);
    }
    // No redirects: the host allowed is the host called; and its name may not lead to this
    // machine or its link.
    let client =
        crate::base::http::async_client(super::http::guarded_dns(call.hosts)).map_err(|e| {
            Failure::new(
                ErrorCode::Internal,
                format!("cannot make an HTTP client: {e}"),
            )
        })?;
    // A session the server no longer knows (404) is initialized again and the call retried
    // (the SDK's default, said here because pooled sessions rely on it).
    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
        .custom_headers(custom)
        .reinit_on_expired_session(true);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// Why a stdio server's line could not be read, once one could not.
type Unreadable = Arc<std::sync::Mutex<Option<String>>>;

/// The longest line [`Lines`] checks; a longer one is passed on unchecked.
const MAX_CHECKED_LINE: usize = 16 << 20;

/// A stdio server's stdout as the SDK reads it, each line checked on the way: the SDK drops a
/// line that is not JSON (`rmcp` 3.11, `transport/async_rw.rs`, so as not to answer a server's
/// log lines), so an answer it cannot parse — 100,000 nested arrays pass serde_json's depth
/// limit — would leave the request waiting for the whole timeout. A line that reads as a
/// JSON-RPC message (see [`unreadable`]) and does not parse is kept in `unreadable` and ends
/// the stream, so the call fails at once and says why.
struct Lines<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line is past [`MAX_CHECKED_LINE`]: passed on unchecked up to its end.
    skipping: bool,
    unreadable: Unreadable,
    ended: bool,
}

impl<R> Lines<R> {
    fn new(inner: R, unreadable: Unreadable) -> Self {
        Self {
            inner,
            line: Vec::new(),
            skipping: false,
            unreadable,
            ended: false,
        }
    }

    /// Takes `bytes` read; whether a line in them could not be read.
    fn check(&mut self, bytes: &[u8]) -> bool {
        for part in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, end) = match part.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (part, false),
            };
            if !self.skipping {
                self.line.extend_from_slice(body);
                if self.line.len() > MAX_CHECKED_LINE {
                    self.line = Vec::new();
                    self.skipping = true;
                }
            }
            if end {
                let line = std::mem::take(&mut self.line);
                let skipped = std::mem::replace(&mut self.skipping, false);
                if !skipped && let Some(e) = unreadable(&line) {
                    if let Ok(mut kept) = self.unreadable.lock() {
                        *kept = Some(e);
                    }
                    return true;
                }
            }
        }
        false
    }
}

/// Why `line` (a JSON-RPC message) cannot be parsed, if it cannot. Only a line that reads as
/// a message is checked: an object with a quoted key that names `"jsonrpc"`. A server's log
/// line (Python's `{'debug': True}`, Node's `{ a: 1 }`) is left for the SDK to drop, as it
/// drops any line it cannot read.
fn unreadable(line: &[u8]) -> Option<String> {
    let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
    if line[start] != b'{' {
        return None;
    }
    let key = line[start + 1..]
        .iter()
        .position(|b| !b.is_ascii_whitespace())?;
    if line[start + 1 + key] != b'"' || !line.windows(9).any(|w| w == b"\"jsonrpc\"") {
        return None;
    }
    // Parsed as the SDK parses it, depth limit included (`IgnoredAny` skips without one).
    match serde_json::from_slice::<Value>(line) {
        Err(e) if e.is_syntax() || e.is_eof() => Some(e.to_string()),
        _ => None,
    }
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Lines<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if self.ended {
            return std::task::Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = polled {
            let this = &mut *self;
            if this.check(&buf.filled()[before..]) {
                // The line is still handed on (the SDK drops it); the end of the stream after
                // it fails the call waiting for an answer.
                this.ended = true;
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_tool_is_checked_field_by_field_and_null_is_an_absent_optional_field() {
        let ok = json!({
            "name": "t", "inputSchema": { "type": "object" },
            "outputSchema": null, "annotations": null, "title": null, "description": null,
        });
        let read = tool_of(&ok).unwrap();
        assert_eq!(read["name"], "t");
        assert_eq!(read["inputSchema"], json!({ "type": "object" }));
        let wrong = |tool: Value| tool_of(&tool).unwrap_err();
        assert_eq!(
            wrong(json!({ "name": "t", "inputSchema": {}, "outputSchema": [] })),
            (
                "/outputSchema".to_owned(),
                "must be an object, and is an array".to_owned()
            )
        );
        assert_eq!(
            wrong(json!({ "inputSchema": {} })),
            ("/name".to_owned(), "is missing (a string)".to_owned())
        );
        assert_eq!(
            wrong(json!({ "name": "t", "inputSchema": null })),
            (
                "/inputSchema".to_owned(),
                "must be an object, and is null".to_owned()
            )
        );
        assert_eq!(
            wrong(json!({ "name": "t", "inputSchema": {}, "description": 3 })),
            (
                "/description".to_owned(),
                "must be a string, and is a number".to_owned()
            )
        );
    }

    #[test]
    fn a_page_without_a_tools_array_or_with_a_cursor_that_is_no_string_is_refused() {
        let tools = json!([{ "name": "t" }]);
        let page = json!({ "tools": tools, "nextCursor": "2" });
        let (listed, next) = page_of(&page).unwrap();
        assert_eq!((listed.len(), next.as_deref()), (1, Some("2")));
        let (_, next) = page_of(&json!({ "tools": [], "nextCursor": null })).unwrap();
        assert_eq!(next, None);
        assert_eq!(page_of(&json!({})).unwrap_err(), "it has no /tools");
        assert_eq!(
            page_of(&json!({ "tools": {} })).unwrap_err(),
            "/tools must be an array, and is an object"
        );
        assert_eq!(
            page_of(&json!({ "tools": [], "nextCursor": 2 })).unwrap_err(),
            "/nextCursor must be a string, and is a number"
        );
        assert_eq!(page_of(&json!([])).unwrap_err(), "the result is an array");
    }
}
