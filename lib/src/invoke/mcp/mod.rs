//! MCP tools (`type: "mcp"`): a call of one tool of an MCP server declared in `mcpServers` of
//! `toolctl.json`, with the official SDK's client (`rmcp`).
//!
//! A stdio server is started (no shell, a cgroup of its own where `exec` would have one —
//! [`super::native::cgroup`] —, its own process group, an environment reduced to exec's
//! [`PASSED_ENV`](super::native::exec::PASSED_ENV) plus the entry's `env`, secrets expanded)
//! and spoken to on its stdin and stdout: for the one call, then killed with every process it
//! started (its cgroup, then exec's [`kill_tree`](super::native::exec::kill_tree)); or, when
//! the options carry [`Sessions`] (`mcp serve`, `invoke --batch`), once for every call of the
//! process, and killed so when the sessions close or it is started again. A Streamable HTTP
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
//!
//! Here: the call, the request made of a server and the failures it names. `process` starts
//! and ends a stdio server, `lines` checks what it writes on stdout, `session` keeps the
//! [`Sessions`], and `list` reads every page of `tools/list`.

mod lines;
mod list;
mod process;
mod session;

pub use list::{Listing, Skipped};
pub use session::Sessions;

use super::{Failure, Options};
use crate::base::error_code::ErrorCode;
use crate::base::redact::Redactor;
use crate::base::secrets::{Secrets, Unset};
use crate::catalog::ToolEntry;
use crate::catalog::mcp_servers::{McpServer, Transport};
use crate::catalog::rules::{HostPolicy, PLACEHOLDER};
use process::{Launch, Process};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{Peer, RunningService};
use rmcp::{RoleClient, ServiceExt};
use rustix::process::Pid;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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
        (None, Reach::Stdio(launch)) => single()?.block_on(process::stdio(&call, &launch, request)),
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
        Request::List => return list::every_page(peer).await.map(Answer::Listed),
    }
    .map_err(|e| Trouble::Request(rmcp_words(&e)))
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
                let (process, client) = process::connect(call, launch, deadline).await?;
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
