//! MCP tools (`type: "mcp"`): a call of one tool of an MCP server declared in `mcpServers` of
//! `toolctl.json`, with the official SDK's client (`rmcp`).
//!
//! Each call reaches the server afresh: a stdio server is started (no shell, its own process
//! group, an environment reduced to exec's [`PASSED_ENV`] plus the entry's `env`, secrets
//! expanded), spoken to on its stdin and stdout, and killed with every process it started once
//! the call is over (exec's [`kill_tree`]); a Streamable HTTP server is reached at its `url`
//! (host in `allowedHosts`, no redirects followed, `headers` with secrets expanded). The whole
//! call — start, `initialize`, `tools/call` — is bounded by the tool's timeout (`impl.timeoutMs`,
//! else the server's `timeoutMs`, else 30 s, and a batch's deadline), so a server that never
//! answers is a `TIMEOUT`, never a hang. A server that does not start, closes the connection,
//! answers with a JSON-RPC error, or whose tool answers `isError: true`, is an
//! `UPSTREAM_ERROR`; every message names the server (and what its stderr said last).
//!
//! A result is the tool's `structuredContent` when it has one; else its text (the text blocks
//! joined by newlines); else (images, resources…) its `content` array as JSON.

use super::native::exec::{PASSED_ENV, TAG_VARIABLE, kill_tree};
use super::{Failure, Options};
use crate::base::error_code::ErrorCode;
use crate::base::redact::Redactor;
use crate::base::secrets::Secrets;
use crate::catalog::ToolEntry;
use crate::catalog::mcp_servers::{McpServer, Transport};
use crate::catalog::rules::{HostPolicy, PLACEHOLDER};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How much of a server's stderr an error shows (its end).
const STDERR_TAIL: usize = 2048;

/// How long a finished session may take to close before the server is killed.
const CLOSE_GRACE: Duration = Duration::from_millis(300);

/// Call the MCP tool `entry` with checked `args`.
pub fn call(
    entry: &ToolEntry,
    args: Map<String, Value>,
    options: &Options,
) -> Result<Value, Failure> {
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
    let Answer::Called(result) = session(&mcp.server, server, &options.hosts, timeout, request)?
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
        let said = text.clone().unwrap_or_else(|| content.to_string());
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
        .ran());
    }
    Ok(match (structured, text) {
        (Some(structured), _) => structured,
        (None, Some(text)) => Value::String(text),
        (None, None) => content,
    })
}

/// The tools of server `name` (every page of `tools/list`), as the server sent them.
pub fn list_tools(
    name: &str,
    server: &McpServer,
    hosts: &HostPolicy,
    timeout: Duration,
) -> Result<Vec<Value>, Failure> {
    match session(name, server, hosts, timeout, Request::List)? {
        Answer::Listed(tools) => Ok(tools),
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
    Listed(Vec<Value>),
}

/// What went wrong, before the server is named.
enum Trouble {
    /// The transport or handshake failed.
    Start(String),
    /// The request failed.
    Request(String),
}

/// Reach server `name`, make `request`, and close: the whole within `timeout`.
fn session(
    name: &str,
    server: &McpServer,
    hosts: &HostPolicy,
    timeout: Duration,
    request: Request,
) -> Result<Answer, Failure> {
    let transport = server.transport(hosts).map_err(|message| {
        let code = if message.contains("allowedHosts") {
            ErrorCode::HostNotAllowed
        } else {
            ErrorCode::ToolDisabled
        };
        Failure::new(code, format!("MCP server '{name}' {message}"))
    })?;
    let mut values = Expander::new(&server.secrets);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(ErrorCode::Internal, format!("cannot start a runtime: {e}")))?;
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
        what: &what,
        timeout,
        redactor: &values.redactor,
    };
    let answer = match transport {
        Transport::Stdio { argv, cwd, .. } => {
            runtime.block_on(stdio(&call, &argv, expanded, cwd, request))
        }
        Transport::Http { url, .. } => runtime.block_on(http(&call, url, expanded, request)),
    }?;
    // A server may echo what it was given: secrets stay out of what leaves the call.
    Ok(match answer {
        Answer::Called(value) => Answer::Called(values.redactor.value(value)),
        listed => listed,
    })
}

/// One session's names, for its messages.
struct Call<'a> {
    name: &'a str,
    /// What the request is (`the call of tool 'x'`).
    what: &'a str,
    timeout: Duration,
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
            Some(Trouble::Start(e)) => (
                ErrorCode::UpstreamError,
                format!("MCP server '{name}' did not start a session: {e}"),
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
            let Some(secret) = self.secrets.as_ref().and_then(|s| s.get(name)) else {
                return Err(Failure::new(
                    ErrorCode::ValidationError,
                    format!("${{{name}}} has no value: the MCP server's secret '{name}' is not set"),
                )
                .with_hint(format!(
                    "set TOOLCTL_SECRET_{name}, or add \"{name}\" to the secrets file (secrets.json)"
                )));
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
        .map_err(|e| Trouble::Start(e.to_string()))?;
    started.store(true, Ordering::SeqCst);
    let answer = match request {
        Request::Call { tool, args } => client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
            .await
            .map(|result| Answer::Called(serde_json::to_value(result).unwrap_or(Value::Null))),
        Request::List => client.list_all_tools().await.map(|tools| {
            Answer::Listed(
                tools
                    .into_iter()
                    .filter_map(|tool| serde_json::to_value(tool).ok())
                    .collect(),
            )
        }),
    }
    .map_err(|e| Trouble::Request(e.to_string()));
    let _ = tokio::time::timeout(CLOSE_GRACE, client.cancel()).await;
    answer
}

async fn stdio(
    call: &Call<'_>,
    argv: &[&str],
    env: Vec<(String, String)>,
    cwd: Option<&str>,
    request: Request,
) -> Result<Answer, Failure> {
    let name = call.name;
    use std::process::Stdio;
    use tokio::io::AsyncReadExt;
    let (program, rest) = argv.split_first().unwrap_or((&"", &[]));
    let tag = format!("{:016x}", fastrand::u64(..));
    let mut command = tokio::process::Command::new(program);
    command
        .args(rest)
        .env_clear()
        .envs(
            PASSED_ENV
                .iter()
                .filter_map(|name| Some((*name, std::env::var_os(name)?))),
        )
        .envs(env)
        .env(TAG_VARIABLE, &tag)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let mut child = command.spawn().map_err(|e| {
        Failure::new(
            ErrorCode::UpstreamError,
            format!("MCP server '{name}' did not start: cannot run '{program}': {e}"),
        )
        .with_details(json!({ "server": name }))
        .ran()
    })?;
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw);
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
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
    let started = AtomicBool::new(false);
    let outcome =
        tokio::time::timeout(call.timeout, exchange((stdout, stdin), request, &started)).await;
    // A server that ends by itself (stdin closed) goes quietly; then it, and whatever it
    // started, is killed.
    let exited = tokio::time::timeout(CLOSE_GRACE, child.wait()).await.ok();
    if let Some(group) = group {
        kill_tree(group, &tag);
    }
    let _ = child.wait().await;
    let trouble = match outcome {
        Ok(Ok(answer)) => return Ok(answer),
        Ok(Err(trouble)) => Some(trouble),
        Err(_) => None,
    };
    // Let the stderr reader take what the program wrote last.
    tokio::task::yield_now().await;
    let stderr = tail
        .lock()
        .map(|kept| String::from_utf8_lossy(&kept).into_owned())
        .unwrap_or_default();
    let failure = call.failure(trouble, started.load(Ordering::SeqCst), &stderr);
    Err(match exited {
        Some(Ok(status)) if !status.success() => {
            let message = format!("{} (it exited: {status})", failure.message());
            Failure::new(failure.code, call.redactor.text(&message))
                .with_details(json!({ "server": name }))
                .ran()
        }
        _ => failure,
    })
}

async fn http(
    call: &Call<'_>,
    url: url::Url,
    headers: Vec<(String, String)>,
    request: Request,
) -> Result<Answer, Failure> {
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
    // No redirects: the host allowed is the host called.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| {
            Failure::new(
                ErrorCode::Internal,
                format!("cannot make an HTTP client: {e}"),
            )
        })?;
    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let started = AtomicBool::new(false);
    match tokio::time::timeout(call.timeout, exchange(transport, request, &started)).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(trouble)) => Err(call.failure(Some(trouble), started.load(Ordering::SeqCst), "")),
        Err(_) => Err(call.failure(None, started.load(Ordering::SeqCst), "")),
    }
}
