//! Agents on a Letta server, over its REST API (the routes of Letta 0.11 and later).
//!
//! - an agent's tools: `GET /v1/agents/{agent_id}/tools`, read in pages (`after`, `limit`)
//!   where the server pages them; a server that ignores `after` answers the first page again,
//!   which ends the reading (no tool is new);
//! - attach and detach: `PATCH /v1/agents/{agent_id}/tools/attach/{tool_id}` and
//!   `.../detach/{tool_id}`, answered with the agent's state or, by newer servers, `null`;
//! - the tools Letta has: `GET /v1/tools/?name=…`;
//! - registration of a catalog tool Letta lacks, as a tool of toolctl's own MCP server
//!   (`mcp serve --http`): `PUT /v1/tools/mcp/servers` (or `PATCH` when the server is known
//!   already), then `POST /v1/tools/mcp/servers/{server}/{tool}`.
//!
//! Letta's own tools (every `letta_*` tool type) are the attach contract's core tools; every
//! other tool is external (its "MCP" tools). The server's host must be in `allowedHosts`; its
//! token, when one is set, is a secret: sent as a bearer token and never shown.

use super::plan::Kind;
use crate::base::http::{CappedRead, GuardedDns, encode_component, read_capped};
use crate::base::secrets::{self, Secrets};
use crate::catalog::config::{AgentBackend, Config, LettaConfig, LettaMcpServer};
use crate::catalog::rules::{HostPolicy, check_server_url};
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;

/// How long a call to Letta may take, unless `agents.letta.timeoutMs` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer read from Letta (an agent's state carries its whole memory).
const MAX_ANSWER: u64 = 64 << 20;

/// Tools or agents asked for in one page.
const PAGE: usize = 100;

/// The name of toolctl's MCP server among Letta's, unless `agents.letta.mcpServer.name` says.
pub const DEFAULT_SERVER_NAME: &str = "toolctl";

/// A failed call to Letta, naming the route.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LettaError {
    /// 404: the agent or tool the route names does not exist.
    #[error("Letta has no {what} '{name}' ({route})")]
    NotFound {
        what: &'static str,
        name: String,
        route: String,
    },
    /// 401 or 403.
    #[error("Letta refused {route}: HTTP {status}{detail}")]
    Forbidden {
        route: String,
        status: u16,
        detail: String,
    },
    /// No answer in time.
    #[error("Letta did not answer {route} within {ms} ms")]
    Timeout { route: String, ms: u128 },
    /// Down, an error status, or an answer that is not what the route returns.
    #[error("Letta at {base}: {route}: {message}")]
    Upstream {
        base: String,
        route: String,
        message: String,
    },
    /// The configuration cannot name a server to call.
    #[error("{message}")]
    Config { message: String, hint: String },
}

/// A tool as Letta lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LettaTool {
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub tool_type: Option<String>,
}

impl LettaTool {
    /// Letta's own tools are the core ones; everything else is external.
    pub fn kind(&self) -> Kind {
        if self
            .tool_type
            .as_deref()
            .is_some_and(|t| t.starts_with("letta_"))
        {
            Kind::Core
        } else {
            Kind::External
        }
    }
}

/// An agent as Letta lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct LettaAgent {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    /// The agent's tools, when the listing carries them.
    #[serde(default)]
    pub tools: Vec<LettaTool>,
}

/// A Letta server to call.
#[derive(Debug)]
pub struct Letta {
    /// The server's URL, without a trailing `/`.
    base: String,
    token: Option<String>,
    client: reqwest::blocking::Client,
    timeout: Duration,
    /// Secrets no message shows: the token, and the MCP server's that Letta is told.
    secrets: Vec<String>,
}

/// Where toolctl's MCP server is, as Letta is told.
#[derive(Debug, Clone)]
pub struct McpServer {
    pub name: String,
    pub url: String,
    pub token: Option<String>,
}

impl McpServer {
    /// The server of `config`, its token `token` (the value of its `tokenSecret`).
    pub fn new(config: &LettaMcpServer, token: Option<String>) -> Self {
        Self {
            name: config
                .name
                .clone()
                .unwrap_or_else(|| DEFAULT_SERVER_NAME.to_owned()),
            url: config.url.clone(),
            token,
        }
    }
}

impl Letta {
    /// A client of the server at `url` (checked against `hosts`), authenticated by `token`.
    pub fn new(
        url: &str,
        token: Option<String>,
        timeout: Duration,
        hosts: &HostPolicy,
    ) -> Result<Self, LettaError> {
        let parsed =
            check_server_url("the Letta URL", url).map_err(|message| LettaError::Config {
                message,
                hint: "set agents.letta.url in toolctl.json to the server's URL".to_owned(),
            })?;
        if !hosts.allows(&parsed) {
            return Err(LettaError::Config {
                message: hosts.refusal(&parsed, Some("the Letta URL")),
                hint: format!(
                    "add '{}' to allowedHosts of toolctl.json to let toolctl call it",
                    parsed.host_str().unwrap_or_default()
                ),
            });
        }
        let client = crate::base::http::shared_client(GuardedDns {
            allowed: hosts.addresses(),
        })
        .map_err(|e| LettaError::Upstream {
            base: url.to_owned(),
            route: "(client)".to_owned(),
            message: e.to_string(),
        })?;
        Ok(Self {
            base: url.trim_end_matches('/').to_owned(),
            secrets: token.iter().cloned().collect(),
            token,
            client,
            timeout,
        })
    }

    /// The timeout of `config`.
    pub fn timeout_of(config: Option<&LettaConfig>) -> Duration {
        config
            .and_then(|c| c.timeout_ms)
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
    }

    /// The server's URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Call `method path` with `query` and `body`; `what` names what a 404 means is missing.
    /// `Ok(Value::Null)` for an empty or `null` answer.
    fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
        what: (&'static str, &str),
    ) -> Result<Value, LettaError> {
        let route = format!("{method} {path}");
        let upstream = |message: String| LettaError::Upstream {
            base: self.base.clone(),
            route: route.clone(),
            message,
        };
        let mut url = url::Url::parse(&format!("{}{path}", self.base))
            .map_err(|e| upstream(format!("not a URL: {e}")))?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut request = self
            .client
            .request(method.clone(), url)
            .timeout(self.timeout)
            .header("Accept", "application/json");
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let retry = (method == Method::GET)
            .then(|| request.try_clone())
            .flatten();
        let sent = match request.send() {
            // A kept-alive connection the server had closed: a GET is sent once more.
            Err(e) if !e.is_timeout() && retry.is_some() && is_reset(&e) => {
                retry.map_or(Err(e), reqwest::blocking::RequestBuilder::send)
            }
            other => other,
        };
        let response = sent.map_err(|e| {
            if e.is_timeout() {
                LettaError::Timeout {
                    route: route.clone(),
                    ms: self.timeout.as_millis(),
                }
            } else if e.is_connect() {
                upstream(format!("cannot connect: {}", root_cause(&e)))
            } else {
                upstream(root_cause(&e))
            }
        })?;
        let status = response.status();
        let bytes = read_capped(response, MAX_ANSWER).map_err(|e| match e {
            CappedRead::TooLarge => upstream(format!("the answer is over {MAX_ANSWER} bytes")),
            CappedRead::Failed(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                LettaError::Timeout {
                    route: route.clone(),
                    ms: self.timeout.as_millis(),
                }
            }
            CappedRead::Failed(e) => upstream(format!("reading the answer failed: {e}")),
        })?;
        let excerpt = || {
            let text = String::from_utf8_lossy(&bytes);
            let mut text: String = text.chars().take(300).collect();
            for secret in self.secrets.iter().filter(|s| !s.is_empty()) {
                text = text.replace(secret.as_str(), "[REDACTED]");
            }
            text
        };
        match status.as_u16() {
            200..=299 => {}
            404 => {
                return Err(LettaError::NotFound {
                    what: what.0,
                    name: what.1.to_owned(),
                    route,
                });
            }
            401 | 403 => {
                return Err(LettaError::Forbidden {
                    route,
                    status: status.as_u16(),
                    detail: format!(": {}", excerpt()),
                });
            }
            code => return Err(upstream(format!("HTTP {code}: {}", excerpt()))),
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| upstream(format!("the answer is not JSON ({e}): {}", excerpt())))
    }

    /// Read `value` as `T`, or an upstream error naming the route.
    fn read<T: serde::de::DeserializeOwned>(
        &self,
        route: &str,
        value: Value,
    ) -> Result<T, LettaError> {
        serde_json::from_value(value).map_err(|e| LettaError::Upstream {
            base: self.base.clone(),
            route: route.to_owned(),
            message: format!("the answer is not what Letta's API returns: {e}"),
        })
    }

    /// Every page of the list at `path`, read with `after` and `limit`; `id_of` gives an
    /// item's ID. A page with nothing new ends the reading: the end of the list, or a server
    /// that does not page and answers the whole list again.
    fn pages<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        what: (&'static str, &str),
        id_of: impl Fn(&T) -> &str,
    ) -> Result<Vec<T>, LettaError> {
        let mut items: Vec<T> = Vec::new();
        let mut seen = HashSet::new();
        let limit = PAGE.to_string();
        let mut after: Option<String> = None;
        loop {
            let mut query = vec![("limit", limit.as_str())];
            if let Some(after) = &after {
                query.push(("after", after.as_str()));
            }
            let page = self.call(Method::GET, path, &query, None, what)?;
            let page: Vec<T> = self.read(&format!("GET {path}"), page)?;
            let mut new = 0;
            for item in page {
                if seen.insert(id_of(&item).to_owned()) {
                    new += 1;
                    items.push(item);
                }
            }
            // A server may cap a page below `limit`, so only a page with nothing new (empty,
            // or the first page again from a server that does not page) ends the list.
            if new == 0 {
                return Ok(items);
            }
            after = items.last().map(|item| id_of(item).to_owned());
        }
    }

    /// Every agent of the server.
    pub fn agents(&self) -> Result<Vec<LettaAgent>, LettaError> {
        self.pages("/v1/agents/", ("agents", ""), |a: &LettaAgent| &a.id)
    }

    /// Agent `id`.
    pub fn agent(&self, id: &str) -> Result<LettaAgent, LettaError> {
        let path = format!("/v1/agents/{}", encode_component(id));
        let value = self.call(Method::GET, &path, &[], None, ("agent", id))?;
        self.read(&format!("GET {path}"), value)
    }

    /// The tools agent `id` holds, in Letta's order.
    pub fn agent_tools(&self, id: &str) -> Result<Vec<LettaTool>, LettaError> {
        self.pages(
            &format!("/v1/agents/{}/tools", encode_component(id)),
            ("agent", id),
            |t: &LettaTool| &t.id,
        )
    }

    /// Attach tool `tool` to agent `agent`.
    pub fn attach(&self, agent: &str, tool: &str) -> Result<(), LettaError> {
        self.change(agent, tool, "attach")
    }

    /// Detach tool `tool` from agent `agent`.
    pub fn detach(&self, agent: &str, tool: &str) -> Result<(), LettaError> {
        self.change(agent, tool, "detach")
    }

    fn change(&self, agent: &str, tool: &str, how: &str) -> Result<(), LettaError> {
        let path = format!(
            "/v1/agents/{}/tools/{how}/{}",
            encode_component(agent),
            encode_component(tool)
        );
        // The agent's state (0.11) or null (newer servers): either is a success.
        self.call(
            Method::PATCH,
            &path,
            &[],
            None,
            ("agent or tool", &format!("{agent}, {tool}")),
        )
        .map(drop)
    }

    /// The tool Letta has under `name`, if any.
    pub fn tool_named(&self, name: &str) -> Result<Option<LettaTool>, LettaError> {
        let path = "/v1/tools/";
        let value = self.call(Method::GET, path, &[("name", name)], None, ("tool", name))?;
        let tools: Vec<LettaTool> = self.read(&format!("GET {path}"), value)?;
        Ok(tools.into_iter().find(|t| t.name == name))
    }

    /// Tell Letta where `server` is: add it, or update its URL and token when Letta keeps
    /// others. Letta stores the token as `Authorization: Bearer …`; an update is read back, so
    /// a server that ignores it is an error rather than a registration that cannot call.
    pub fn register_server(&self, server: &McpServer) -> Result<(), LettaError> {
        let path = "/v1/tools/mcp/servers";
        let auth = server.token.as_ref().map(|t| format!("Bearer {t}"));
        let matches = |known: &Value| {
            let entry = known.get(&server.name).cloned().or_else(|| {
                known.as_array().and_then(|a| {
                    a.iter()
                        .find(|s| s["server_name"] == server.name.as_str())
                        .cloned()
                })
            });
            entry.map(|e| {
                e["server_url"] == server.url.as_str()
                    && e["auth_token"].as_str() == auth.as_deref()
            })
        };
        let known = self.call(Method::GET, path, &[], None, ("MCP servers", ""))?;
        match matches(&known) {
            Some(true) => Ok(()),
            None => {
                let mut body = json!({
                    "server_name": server.name,
                    "type": "streamable_http",
                    "server_url": server.url,
                });
                if let Some(auth) = &auth {
                    body["auth_header"] = "Authorization".into();
                    body["auth_token"] = auth.clone().into();
                }
                self.call(Method::PUT, path, &[], Some(&body), ("MCP servers", ""))
                    .map(drop)
            }
            Some(false) => {
                // Letta 0.11 reads an update's token from `token` (it adds "Bearer ").
                let mut body = json!({ "server_url": server.url });
                if let Some(token) = &server.token {
                    body["token"] = token.clone().into();
                }
                let one = format!("{path}/{}", encode_component(&server.name));
                self.call(
                    Method::PATCH,
                    &one,
                    &[],
                    Some(&body),
                    ("MCP server", &server.name),
                )?;
                let known = self.call(Method::GET, path, &[], None, ("MCP servers", ""))?;
                if matches(&known) == Some(true) {
                    Ok(())
                } else {
                    Err(LettaError::Upstream {
                        base: self.base.clone(),
                        route: format!("PATCH {one}"),
                        message: format!(
                            "Letta keeps its MCP server '{}' with another URL or token after the update; change it in Letta, or name another server in agents.letta.mcpServer.name",
                            server.name
                        ),
                    })
                }
            }
        }
    }

    /// Register tool `name` of MCP server `server` as a Letta tool.
    pub fn register_tool(&self, server: &str, name: &str) -> Result<LettaTool, LettaError> {
        let path = format!(
            "/v1/tools/mcp/servers/{}/{}",
            encode_component(server),
            encode_component(name)
        );
        let value = self.call(
            Method::POST,
            &path,
            &[],
            None,
            ("tool of MCP server", &format!("{server}/{name}")),
        )?;
        self.read(&format!("POST {path}"), value)
    }
}

/// The Letta server the agent commands use, and toolctl's MCP server as Letta reaches it:
/// `toolctl.json`'s `agents`, with `backend` and `url` (the command's choice) overriding it;
/// `None` when agents are files. A URL alone means the Letta backend. The MCP server (and
/// its token) is read only `with_server`: `attach` registers tools, the others do not.
pub fn connect(
    config: &Config,
    backend: Option<AgentBackend>,
    url: Option<&str>,
    with_server: bool,
) -> Result<Option<(Letta, Option<McpServer>)>, LettaError> {
    let agents = &config.agents;
    let backend = backend
        .or(url.map(|_| AgentBackend::Letta))
        .unwrap_or(agents.backend);
    if backend == AgentBackend::Files {
        return Ok(None);
    }
    let letta = agents.letta.as_ref();
    let Some(url) = url.or(letta.map(|l| l.url.as_str())) else {
        return Err(LettaError::Config {
            message: "the agents backend is letta, but no Letta server is named".to_owned(),
            hint: "set agents.letta.url in toolctl.json (its host in allowedHosts)".to_owned(),
        });
    };
    let secret = |field: &str, name: &Option<String>| -> Result<Option<String>, LettaError> {
        let Some(name) = name else { return Ok(None) };
        let store = Secrets::load().map_err(|e| LettaError::Config {
            message: e.to_string(),
            hint: e
                .hint
                .clone()
                .unwrap_or_else(|| "make the secrets file readable by its owner only".to_owned()),
        })?;
        store
            .get(name)
            .map(Some)
            .map_err(|unset| LettaError::Config {
                message: format!("{field} names the secret '{name}', which {unset}"),
                hint: format!(
                    "set TOOLCTL_SECRET_{name}, or add \"{name}\" to the secrets file ({})",
                    secrets::file().map_or_else(
                        || "~/.config/toolctl/secrets.json".to_owned(),
                        |p| p.display().to_string()
                    )
                ),
            })
    };
    let token = secret(
        "agents.letta.tokenSecret",
        &letta.and_then(|l| l.token_secret.clone()),
    )?;
    let mut client = Letta::new(url, token, Letta::timeout_of(letta), &config.hosts)?;
    let server = match letta
        .and_then(|l| l.mcp_server.as_ref())
        .filter(|_| with_server)
    {
        None => None,
        Some(server) => Some(McpServer::new(
            server,
            secret("agents.letta.mcpServer.tokenSecret", &server.token_secret)?,
        )),
    };
    if let Some(token) = server.as_ref().and_then(|s| s.token.clone()) {
        client.secrets.push(token);
    }
    Ok(Some((client, server)))
}

/// Whether `error` is a connection the other side reset or closed.
fn is_reset(error: &reqwest::Error) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            );
        }
        next = e.source();
    }
    error.is_request() && !error.is_connect()
}

/// The innermost cause of `error`: what went wrong, without reqwest's wrapping.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut last = error;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string()
}
