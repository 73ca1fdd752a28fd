//! `toolctl.json`: the catalog's configuration.
//!
//! It holds what the catalog (kept in git) shares with everyone who uses it: the hosts HTTP
//! tools may call, the built-in bundle's enabled flags, the reap grace period. Secrets never
//! live here. Like every other file it is kept as a raw document so a rewrite (enabling a
//! built-in) changes only the one flag.

use super::error::{Error, Result, Violation};
use super::model::{self, SCHEMA_VERSION};
use super::rules::HostPolicy;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The file name that marks a catalog's root.
pub const CONFIG_FILE: &str = "toolctl.json";

/// How long a soft-deleted bundle is kept before `reap` removes it, unless configured.
pub const DEFAULT_GRACE_PERIOD: Duration = Duration::from_secs(48 * 3600);

/// How long the index watcher waits for a command before it exits, unless configured.
pub const DEFAULT_WATCH_IDLE: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigView {
    #[serde(default)]
    allowed_hosts: Vec<String>,
    #[serde(default)]
    builtin: BuiltinView,
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "read from the document by Config::checked; a field so its type is checked"
    )]
    reap: ReapView,
    #[serde(default)]
    pick: PickConfig,
    #[serde(default)]
    attach: AttachConfig,
    #[serde(default)]
    agents: AgentsConfig,
    #[serde(default)]
    index: IndexConfig,
    #[serde(default)]
    mcp_servers: std::collections::BTreeMap<String, super::mcp_servers::McpServer>,
    #[serde(default)]
    http: HttpDefaults,
    #[serde(default)]
    serve: ServeConfig,
}

/// `serve`: who may call `toolctl serve`, and how many jobs run at once.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServeConfig {
    /// The API keys `x-api-key` may carry, each by the name of the secret that holds it.
    #[serde(default)]
    pub api_keys: Vec<ApiKeyConfig>,
    /// Jobs of one queue that run at once (4 unless set).
    pub workers: Option<usize>,
    /// How long a finished job is kept before `job prune` removes it (`7d` unless set).
    pub job_retention: Option<String>,
}

/// One API key of `serve.apiKeys`: its name (what logs and errors say), its role, and the
/// secret that holds its value (never the value: the catalog is kept in git).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiKeyConfig {
    pub name: String,
    pub role: Role,
    pub secret: String,
}

/// What a key may do: `read` every GET, `admin` also every write and invoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Read,
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Admin => "admin",
        }
    }
}

/// How long finished jobs are kept unless `serve.jobRetention` says.
pub const DEFAULT_JOB_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// What is wrong with `serve`: two keys of one name, no workers.
fn serve_problems(serve: &ServeConfig) -> Vec<Violation> {
    let mut problems = Vec::new();
    for (i, key) in serve.api_keys.iter().enumerate() {
        if key.name.is_empty() {
            problems.push(Violation::new(
                format!("/serve/apiKeys/{i}/name"),
                "a key's name must not be empty",
            ));
        } else if serve.api_keys[..i].iter().any(|k| k.name == key.name) {
            problems.push(Violation::new(
                format!("/serve/apiKeys/{i}/name"),
                format!("the key name '{}' is used twice", key.name),
            ));
        }
        if key.secret.is_empty() {
            problems.push(Violation::new(
                format!("/serve/apiKeys/{i}/secret"),
                "a key's secret must name the secret that holds it",
            ));
        }
    }
    if serve.workers == Some(0) {
        problems.push(Violation::new(
            "/serve/workers",
            "workers must be at least 1",
        ));
    }
    problems
}

/// `http`: catalog-wide defaults of HTTP tools; a tool's own field wins.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpDefaults {
    pub max_calls_per_minute: Option<u32>,
    pub max_request_bytes: Option<u64>,
    pub max_response_bytes: Option<u64>,
    pub max_retries: Option<u32>,
    pub timeout_ms: Option<u64>,
    /// The "minute" of `maxCallsPerMinute` (a duration, `60s` unless set): shorter in tests.
    #[allow(
        dead_code,
        reason = "read from the document by Config::checked; a field so its type is checked"
    )]
    rate_limit_window: Option<String>,
}

/// The window `maxCallsPerMinute` counts calls in, unless configured.
pub const DEFAULT_RATE_WINDOW: Duration = Duration::from_secs(60);

/// `index` settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexConfig {
    /// When a command starts the index watcher by itself (`$TOOLCTL_WATCH` overrides it).
    #[serde(default)]
    pub watch: WatchMode,
    /// How long the watcher waits for a command before it exits (a duration; see
    /// [`Config::watch_idle`]).
    #[allow(
        dead_code,
        reason = "read from the document by Config::checked; a field so its type is checked"
    )]
    watch_idle: Option<String>,
}

/// When a command starts the index watcher (`toolctl index watch`) by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchMode {
    /// When the catalog is big enough for the change check to cost, on a local filesystem.
    #[default]
    Auto,
    /// Always (the user vouches for the filesystem).
    Always,
    /// Never; a watcher started by hand is still used.
    Never,
}

impl WatchMode {
    /// Parse `auto`, `always` or `never`.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        match text {
            "auto" => Ok(Self::Auto),
            "always" => Ok(Self::Always),
            "never" => Ok(Self::Never),
            other => Err(format!(
                "{other:?} is not a watch mode: use auto, always or never"
            )),
        }
    }
}

/// `attach` settings: an agent's limits and protected tools. Each has an environment variable
/// of the attach contract's name that overrides it (see [`crate::attach::Limits`]).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachConfig {
    /// `MAX_TOTAL_TOOLS`
    pub max_total_tools: Option<usize>,
    /// `MAX_MCP_TOOLS`: external tools, every tool but the built-in ones.
    pub max_mcp_tools: Option<usize>,
    /// `MIN_MCP_TOOLS`
    pub min_mcp_tools: Option<usize>,
    /// `DEFAULT_DROP_RATE`
    pub default_drop_rate: Option<f64>,
    /// `NEVER_DETACH_TOOLS` / `PROTECTED_TOOLS`
    pub protected_tools: Option<Vec<String>>,
    /// `EXCLUDE_LETTA_CORE_TOOLS`
    pub exclude_core_tools: Option<bool>,
    /// `FIND_TOOLS_MAX_LIMIT`
    pub find_tools_max_limit: Option<usize>,
}

/// `agents`: where the agents `attach` and `agent` work on live.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentsConfig {
    #[serde(default)]
    pub backend: AgentBackend,
    pub letta: Option<LettaConfig>,
}

/// The kinds of place agents live in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentBackend {
    /// `agents/<agentID>.json` in the catalog.
    #[default]
    Files,
    /// A Letta server's agents, over its REST API.
    Letta,
}

impl AgentBackend {
    /// Parse `files` or `letta`.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        match text {
            "files" => Ok(Self::Files),
            "letta" => Ok(Self::Letta),
            other => Err(format!(
                "{other:?} is not an agents backend: use files or letta"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Files => "files",
            Self::Letta => "letta",
        }
    }
}

/// `agents.letta`: the Letta server, and the MCP server Letta calls for the tools `attach`
/// registers. Tokens are never here (the catalog is kept in git): `tokenSecret` names the
/// catalog secret that holds one.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LettaConfig {
    pub url: String,
    pub token_secret: Option<String>,
    pub timeout_ms: Option<u64>,
    pub mcp_server: Option<LettaMcpServer>,
}

/// `agents.letta.mcpServer`: toolctl's own `mcp serve --http` as Letta reaches it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LettaMcpServer {
    /// Its name among Letta's MCP servers (`toolctl` unless set).
    pub name: Option<String>,
    pub url: String,
    pub token_secret: Option<String>,
}

/// `pick` settings: the endpoints of the `embed` and `llm` scorers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PickConfig {
    #[serde(default)]
    pub embed: EndpointConfig,
    #[serde(default)]
    pub llm: EndpointConfig,
}

/// An OpenAI-compatible endpoint as `toolctl.json` names it. The API key is never here (the
/// catalog is kept in git): `apiKeySecret` names a catalog secret that holds it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointConfig {
    /// E.g. `http://127.0.0.1:11434/v1` (`/embeddings` or `/chat/completions` is appended).
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_secret: Option<String>,
    pub timeout_ms: Option<u64>,
    /// Texts per embeddings request.
    pub batch_size: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BuiltinView {
    is_enabled: Option<bool>,
    #[serde(default)]
    tools: BTreeMap<String, FlagView>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FlagView {
    is_enabled: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReapView {
    #[allow(
        dead_code,
        reason = "read from the document by Config::checked; a field so its type is checked"
    )]
    grace_period: Option<String>,
}

/// The catalog configuration, read and checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// The document as stored (the initial document when there is no file yet).
    pub doc: Value,
    pub hosts: HostPolicy,
    pub allowed_hosts: Vec<String>,
    pub grace_period: Duration,
    /// How long the index watcher waits for a command before it exits (`index.watchIdle`).
    pub watch_idle: Duration,
    pub pick: PickConfig,
    pub attach: AttachConfig,
    pub agents: AgentsConfig,
    pub index: IndexConfig,
    /// `mcpServers`: the servers `mcp` tools name (checked by [`problems`], which `config` and
    /// `validate` use, not here: a broken entry makes its tools unavailable, not the catalog).
    pub mcp_servers: super::mcp_servers::McpServers,
    pub http: HttpDefaults,
    /// `http.rateLimitWindow`: the "minute" of `maxCallsPerMinute`.
    pub rate_limit_window: Duration,
    pub serve: ServeConfig,
    /// `serve.jobRetention`: how long finished jobs are kept.
    pub job_retention: Duration,
    builtin_enabled: Option<bool>,
    builtin_tools: BTreeMap<String, bool>,
}

/// What is wrong with `agents`: a Letta backend without a server, a URL that is not http(s)
/// or whose host `allowedHosts` does not allow.
fn agents_problems(agents: &AgentsConfig, hosts: &HostPolicy) -> Vec<Violation> {
    let mut problems = Vec::new();
    let Some(letta) = &agents.letta else {
        if agents.backend == AgentBackend::Letta {
            problems.push(Violation::new(
                "/agents/letta",
                "the agents backend is letta, but agents.letta (its url) is not set",
            ));
        }
        return problems;
    };
    match super::rules::check_server_url("agents.letta.url", &letta.url) {
        Err(m) => problems.push(Violation::new("/agents/letta/url", m)),
        Ok(url) if !hosts.allows(&url) => problems.push(Violation::new(
            "/agents/letta/url",
            hosts.refusal(&url, Some("agents.letta.url")),
        )),
        Ok(_) => {}
    }
    if let Some(server) = &letta.mcp_server {
        // Letta calls this URL, not toolctl: its host need not be one toolctl may call.
        if let Err(m) = super::rules::check_server_url("agents.letta.mcpServer.url", &server.url) {
            problems.push(Violation::new("/agents/letta/mcpServer/url", m));
        }
    }
    problems
}

impl Config {
    /// The document `init` writes.
    pub fn initial_doc() -> Value {
        json!({
            "schemaVersion": SCHEMA_VERSION,
            "allowedHosts": [],
            "builtin": { "isEnabled": true, "tools": { "exec": { "isEnabled": false } } },
            "reap": { "gracePeriod": "48h" }
        })
    }

    /// Read `toolctl.json` in `root`; a catalog without one has the defaults.
    pub fn load(root: &Path) -> Result<Self> {
        let path = root.join(CONFIG_FILE);
        match crate::base::capped::read_text(&path, Some(root)) {
            Ok(text) => Self::from_doc(model::parse_doc(&text, &path)?, &path),
            // No file yet: the defaults, as the file `init` would write.
            Err(crate::base::capped::ReadError::Missing) => {
                Self::from_doc(Self::initial_doc(), &path)
            }
            Err(e) => Err(Error::unreadable(&path, e)),
        }
    }

    pub(crate) fn from_doc(doc: Value, path: &Path) -> Result<Self> {
        Self::checked(doc, path).map_err(|violations| {
            let violations = violations
                .into_iter()
                .map(|mut v| {
                    v.rule = v.rule.filter(|r| *r != TYPED);
                    v
                })
                .collect();
            Error::invalid(path.display().to_string(), violations)
        })
    }

    /// Read `toolctl.json` in `root` as it is, for the commands that repair it (`config`): a
    /// document toolctl's rules refuse is kept, with the default settings beside it (see
    /// [`problems`] for what is wrong). A file that is not a JSON object is still an error.
    pub fn load_as_is(root: &Path) -> Result<Self> {
        let path = root.join(CONFIG_FILE);
        let doc = match crate::base::capped::read_text(&path, Some(root)) {
            Ok(text) => model::parse_doc(&text, &path)?,
            Err(crate::base::capped::ReadError::Missing) => Self::initial_doc(),
            Err(e) => return Err(Error::unreadable(&path, e)),
        };
        match Self::checked(doc.clone(), &path) {
            Ok(config) => Ok(config),
            Err(_) => {
                let mut config = Self::checked(Self::initial_doc(), &path)
                    .map_err(|v| Error::invalid(path.display().to_string(), v))?;
                config.doc = doc;
                Ok(config)
            }
        }
    }

    /// The configuration `doc` states, or every rule of toolctl's it breaks (not only the
    /// first, so a user sees them all and can fix them one at a time).
    fn checked(doc: Value, path: &Path) -> std::result::Result<Self, Vec<Violation>> {
        // toolctl's rules read the document itself, so a value serde cannot read elsewhere in
        // it hides none of their problems.
        let mut problems: Vec<Violation> =
            model::schema_version_violation(&doc).into_iter().collect();
        let hosts = host_entries(&doc);
        // Each entry on its own, so a second bad entry is a problem of its own.
        for host in &hosts {
            if let Err(m) = HostPolicy::new([*host]) {
                problems.push(Violation::new("/allowedHosts", m));
            }
        }
        let hosts = HostPolicy::new(hosts).unwrap_or_default();
        let mut duration =
            |pointer: &str, default| match doc.pointer(pointer).and_then(Value::as_str) {
                None => default,
                Some(text) => crate::base::time::parse_duration(text).unwrap_or_else(|m| {
                    problems.push(Violation::new(pointer, m));
                    default
                }),
            };
        let grace_period = duration("/reap/gracePeriod", DEFAULT_GRACE_PERIOD);
        let watch_idle = duration("/index/watchIdle", DEFAULT_WATCH_IDLE);
        let rate_limit_window = duration("/http/rateLimitWindow", DEFAULT_RATE_WINDOW);
        let job_retention = duration("/serve/jobRetention", DEFAULT_JOB_RETENTION);
        if rate_limit_window.is_zero() {
            problems.push(Violation::new(
                "/http/rateLimitWindow",
                "the rate-limit window must be longer than 0",
            ));
        }
        let view = match model::typed::<ConfigView>(&doc, &path.display().to_string()) {
            Ok(view) => Some(view),
            Err(e) => {
                for violation in e.violations() {
                    if !problems.iter().any(|p| p.pointer == violation.pointer) {
                        problems.push(violation.clone().rule(TYPED));
                    }
                }
                None
            }
        };
        if let Some(view) = &view {
            problems.extend(agents_problems(&view.agents, &hosts));
            problems.extend(serve_problems(&view.serve));
        }
        let Some(view) = view.filter(|_| problems.is_empty()) else {
            return Err(problems);
        };
        // A relative `cwd` or program path of a server is the catalog's (the file's folder).
        let mut mcp_servers = view.mcp_servers;
        for server in mcp_servers.values_mut() {
            server.base = path.parent().map(Path::to_path_buf);
        }
        Ok(Self {
            doc,
            hosts,
            allowed_hosts: view.allowed_hosts,
            grace_period,
            watch_idle,
            pick: view.pick,
            attach: view.attach,
            agents: view.agents,
            index: view.index,
            mcp_servers: std::sync::Arc::new(mcp_servers),
            http: view.http,
            rate_limit_window,
            serve: view.serve,
            job_retention,
            builtin_enabled: view.builtin.is_enabled,
            builtin_tools: view
                .builtin
                .tools
                .into_iter()
                .map(|(k, v)| (k, v.is_enabled))
                .collect(),
        })
    }

    /// Whether the built-in bundle is enabled (it is unless turned off).
    pub fn builtin_bundle_enabled(&self) -> bool {
        self.builtin_enabled.unwrap_or(true)
    }

    /// The enabled flag of built-in tool `slug`, when the configuration sets one.
    pub fn builtin_tool_enabled(&self, slug: &str) -> Option<bool> {
        self.builtin_tools.get(slug).copied()
    }

    /// Whether this catalog's policy lets the native function `exec` run: while the built-in
    /// `builtin/exec` is enabled (off unless `tool enable builtin/exec` turned it on). It holds
    /// for every tool that names the function, not only the built-in one.
    pub fn exec_allowed(&self) -> bool {
        self.builtin_bundle_enabled()
            && self
                .builtin_tool_enabled(super::builtin::EXEC)
                .unwrap_or(false)
    }

    /// The document with the built-in bundle's (`slug: None`) or a built-in tool's flag set.
    pub fn with_builtin_flag(&self, slug: Option<&str>, enabled: bool) -> Value {
        let mut doc = self.doc.clone();
        let root = object_at(&mut doc, &[]);
        if !root.contains_key("schemaVersion") {
            root.insert("schemaVersion".into(), SCHEMA_VERSION.into());
        }
        match slug {
            None => {
                object_at(&mut doc, &["builtin"]).insert("isEnabled".into(), enabled.into());
            }
            Some(slug) => {
                object_at(&mut doc, &["builtin", "tools", slug])
                    .insert("isEnabled".into(), enabled.into());
            }
        }
        doc
    }
}

/// The object at `path` inside `doc`, created (or replacing a non-object) as needed.
fn object_at<'a>(doc: &'a mut Value, path: &[&str]) -> &'a mut serde_json::Map<String, Value> {
    let mut node = doc;
    for key in path {
        if !node.is_object() {
            *node = Value::Object(Default::default());
        }
        node = match node {
            Value::Object(map) => map
                .entry((*key).to_owned())
                .or_insert_with(|| Value::Object(Default::default())),
            _ => unreachable!("made an object above"),
        };
    }
    if !node.is_object() {
        *node = Value::Object(Default::default());
    }
    match node {
        Value::Object(map) => map,
        _ => unreachable!("made an object above"),
    }
}

/// Marks, inside this module, a problem serde met reading the typed view: it stops at the first,
/// so [`problems`] prefers the schema's word where the schema names that place.
const TYPED: &str = "typed";

/// Every problem of a `toolctl.json` document: toolctl's own rules (what [`Config::load`]
/// refuses by), its `mcpServers` entries' rules (what makes a server's tools unavailable) and
/// its JSON Schema's (what editors check), each place once: what `validate` reports, what
/// `config` refuses to add, and what a command refused for the file lists.
///
/// The list is the same whatever else the document holds (the schema names every problem, where
/// serde would name only its first), so `config` can tell a problem an edit adds from one that
/// was there.
pub fn problems(doc: &Value, path: &Path) -> Vec<Violation> {
    let found = match Config::checked(doc.clone(), path) {
        Ok(_) => Vec::new(),
        Err(violations) => violations,
    };
    let (mut typed, mut found): (Vec<Violation>, Vec<Violation>) =
        found.into_iter().partition(|v| v.rule == Some(TYPED));
    let (server_typed, servers): (Vec<Violation>, Vec<Violation>) = server_problems(doc)
        .into_iter()
        .partition(|v| v.rule == Some(TYPED));
    for violation in server_typed {
        if !typed.iter().any(|v| v.pointer == violation.pointer) {
            typed.push(violation);
        }
    }
    let schema = super::schemas::violations(super::schemas::Kind::Config, doc);
    let named = |list: &[Violation], pointer: &str| list.iter().any(|v| v.pointer == pointer);
    // The schema's word for a place, but where it only says no branch of a `oneOf` or `anyOf`
    // fits (`42 is not valid under any of the schemas listed…`): serde's, in words, says what
    // the value should be.
    let vague = |v: &Violation| v.message.contains("is not valid under any of the schemas");
    // toolctl's words for a server's place first too (`timeoutMs must be more than 0`).
    found.extend(servers);
    let schema: Vec<Violation> = schema
        .into_iter()
        .filter(|v| !named(&found, &v.pointer))
        .filter(|v| !(vague(v) && named(&typed, &v.pointer)))
        .collect();
    let typed: Vec<Violation> = typed
        .into_iter()
        .filter(|v| !named(&schema, &v.pointer))
        .map(|mut v| {
            v.rule = None;
            v
        })
        .collect();
    found.extend(schema);
    found.extend(typed);
    found
}

/// The string entries of `allowedHosts` (the others are the schema's problems).
fn host_entries(doc: &Value) -> Vec<&str> {
    doc.get("allowedHosts")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The rules of each `mcpServers` entry ([`McpServer::check`]): a broken entry makes only its
/// own tools unavailable, so [`Config::load`] does not refuse the catalog for it, but `config`
/// refuses to write one and `validate` reports it. An entry serde cannot read gives serde's
/// first problem in it (marked [`TYPED`]; in words where the schema would only say no branch
/// of a `oneOf` fits). Hosts are judged by the entries of `allowedHosts` toolctl takes (a bad
/// entry is a problem of its own, not one of every server's).
///
/// [`McpServer::check`]: super::mcp_servers::McpServer::check
fn server_problems(doc: &Value) -> Vec<Violation> {
    let Some(servers) = doc.get("mcpServers").and_then(Value::as_object) else {
        return Vec::new();
    };
    let hosts = host_entries(doc)
        .into_iter()
        .filter(|host| HostPolicy::new([*host]).is_ok());
    let hosts = HostPolicy::new(hosts).unwrap_or_default();
    let mut out = Vec::new();
    for (name, entry) in servers {
        match model::typed::<super::mcp_servers::McpServer>(entry, "") {
            Ok(server) => server.check(name, &hosts, &mut out),
            Err(e) => {
                super::mcp_servers::McpServer::check_name(name, &mut out);
                let at = crate::base::pointer::join("/mcpServers", name);
                out.extend(e.violations().iter().map(|v| {
                    Violation::new(format!("{at}{}", v.pointer), v.message.clone()).rule(TYPED)
                }));
            }
        }
    }
    out
}
