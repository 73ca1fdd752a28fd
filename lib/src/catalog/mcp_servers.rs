//! `mcpServers` of `toolctl.json`: the MCP servers whose tools the catalog holds (tools of
//! `type: "mcp"`, whose `impl` names a server and one of its tools).
//!
//! The shape is the one MCP clients' own config files use, so an entry can be copied over:
//! - stdio: `{"command": ["npx", "-y", "pkg"], "env": {...}, "cwd"?: "..."}` (or the common
//!   `{"command": "npx", "args": [...]}`), started for a call (`invoke`) or once for a whole
//!   process that makes many (`mcp serve`, `invoke --batch`). A relative `cwd`, and a relative
//!   program path (one with a `/`, like `./bin/server`), are taken from the catalog's root
//!   (the folder of `toolctl.json`), never from where toolctl runs; a bare program name is
//!   looked up in `PATH`;
//! - Streamable HTTP: `{"url": "https://host/mcp", "headers"?: {...}}`, whose host must be in
//!   `allowedHosts` like an HTTP tool's.
//!
//! Secrets work as in HTTP tools: a `${NAME}` in an `env` or `headers` value is the catalog
//! secret `NAME`, which the entry declares in its `"secrets"` list (values come from
//! `TOOLCTL_SECRET_<NAME>` or the user's secrets file, never from the catalog).
//!
//! A broken entry does not break the catalog: `validate` reports it (with its pointer), and
//! the tools that use it are unavailable, with the reason.

use super::error::Violation;
use super::rules::{self, HostPolicy};
use crate::base::pointer::join as pointer_join;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The declared servers by name.
pub type McpServers = Arc<BTreeMap<String, McpServer>>;

/// How long a call of an MCP tool may take (starting the server included), unless set.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// One entry of `mcpServers`.
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServer {
    #[serde(default)]
    pub command: Option<CommandLine>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Catalog secrets the `env` and `headers` values may name as `${NAME}`.
    #[serde(default)]
    pub secrets: Vec<String>,
    /// A default for the calls of this server's tools (a tool's `impl.timeoutMs` wins).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The catalog's root, which a relative `cwd` or program path is taken from (set when
    /// `toolctl.json` is read; not part of the file).
    #[serde(skip)]
    pub base: Option<PathBuf>,
}

/// `command`: an argv array, or a program whose arguments are in `args`.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(
    untagged,
    expecting = "expected a program (a string) or the program and its arguments (an array of strings)"
)]
pub enum CommandLine {
    Argv(Vec<String>),
    Program(String),
}

/// How a server is reached.
#[derive(Debug, Clone)]
pub enum Transport<'a> {
    /// A program started for the call, speaking on its stdin and stdout.
    Stdio {
        /// The program (a relative path made absolute from the catalog's root) and its
        /// arguments.
        argv: Vec<String>,
        env: &'a BTreeMap<String, String>,
        /// The folder it runs in (absolute when the catalog's root is known).
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        url: url::Url,
        headers: &'a BTreeMap<String, String>,
    },
}

impl McpServer {
    /// How the server is reached, if the entry says it clearly (`check` says why not).
    pub fn transport(&self, hosts: &HostPolicy) -> Result<Transport<'_>, String> {
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Err("has both command and url: give one".to_owned()),
            (None, None) => Err("has neither command (stdio) nor url (Streamable HTTP)".to_owned()),
            (Some(command), None) => {
                let mut argv: Vec<&str> = match command {
                    CommandLine::Argv(argv) => argv.iter().map(String::as_str).collect(),
                    CommandLine::Program(program) => vec![program.as_str()],
                };
                argv.extend(self.args.iter().map(String::as_str));
                match argv.first() {
                    None => Err("command is empty: it needs at least the program".to_owned()),
                    Some(program) if program.trim().is_empty() => {
                        Err("command names no program".to_owned())
                    }
                    Some(program) => {
                        let program = match Path::new(program) {
                            path if path.is_relative() && program.contains('/') => {
                                self.in_catalog(path).display().to_string()
                            }
                            _ => (*program).to_owned(),
                        };
                        let rest = argv[1..].iter().map(|arg| (*arg).to_owned());
                        Ok(Transport::Stdio {
                            argv: std::iter::once(program).chain(rest).collect(),
                            env: &self.env,
                            cwd: self
                                .cwd
                                .as_deref()
                                .map(|cwd| self.in_catalog(Path::new(cwd))),
                        })
                    }
                }
            }
            (None, Some(url)) => {
                let shape =
                    rules::check_url_shape(url).map_err(|m| m.replacen("urlTemplate", "url", 1))?;
                if !hosts.allows(&shape) {
                    return Err(hosts.refusal(&shape, Some("url")));
                }
                let url = url::Url::parse(url).map_err(|e| format!("url '{url}': {e}"))?;
                Ok(Transport::Http {
                    url,
                    headers: &self.headers,
                })
            }
        }
    }

    /// `path` taken from the catalog's root when it is relative.
    fn in_catalog(&self, path: &Path) -> PathBuf {
        match &self.base {
            Some(base) if path.is_relative() => base.join(path),
            _ => path.to_owned(),
        }
    }

    /// The timeout of a call of one of its tools whose `impl` sets `tool_ms` (or not).
    pub fn timeout_ms(&self, tool_ms: Option<u64>) -> u64 {
        tool_ms.or(self.timeout_ms).unwrap_or(DEFAULT_TIMEOUT_MS)
    }

    /// The rule of a server's name (a slug), whatever its entry holds.
    pub fn check_name(name: &str, out: &mut Vec<Violation>) {
        if let Err(message) = rules::check_name(rules::NameKind::Slug, name) {
            out.push(
                Violation::new(
                    pointer_join("/mcpServers", name),
                    format!("server name: {message}"),
                )
                .rule("mcp"),
            );
        }
    }

    /// Every rule of the entry `name`, with pointers into `toolctl.json`.
    pub fn check(&self, name: &str, hosts: &HostPolicy, out: &mut Vec<Violation>) {
        let at = pointer_join("/mcpServers", name);
        Self::check_name(name, out);
        if let Err(message) = self.transport(hosts) {
            let field = match (&self.command, &self.url) {
                (Some(_), None) => "/command",
                (None, Some(_)) => "/url",
                _ => "",
            };
            let rule = if message.contains("allowedHosts") {
                "host"
            } else {
                "mcp"
            };
            out.push(
                Violation::new(
                    format!("{at}{field}"),
                    format!("MCP server '{name}' {message}"),
                )
                .rule(rule),
            );
        }
        if self.url.is_some() && (!self.env.is_empty() || self.cwd.is_some()) {
            out.push(
                Violation::new(
                    &at,
                    "env and cwd are for a server started with command, not one reached by url",
                )
                .rule("mcp"),
            );
        }
        if self.command.is_some() && !self.headers.is_empty() {
            out.push(
                Violation::new(
                    pointer_join(&at, "headers"),
                    "headers are for a server reached by url, not one started with command",
                )
                .rule("mcp"),
            );
        }
        if self.timeout_ms == Some(0) {
            out.push(Violation::new(
                format!("{at}/timeoutMs"),
                "timeoutMs must be more than 0",
            ));
        }
        for (i, name) in self.secrets.iter().enumerate() {
            if let Some(first) = self.secrets[..i].iter().position(|s| s == name) {
                out.push(Violation::new(
                    format!("{at}/secrets/{i}"),
                    format!("'{name}' is declared twice (first at {at}/secrets/{first}); list each secret once"),
                ));
            }
        }
        for (field, values) in [("env", &self.env), ("headers", &self.headers)] {
            for (key, value) in values {
                let pointer = pointer_join(&pointer_join(&at, field), key);
                if field == "headers"
                    && let Err(message) = rules::check_header_name(key)
                {
                    out.push(Violation::new(&pointer, message).rule("mcp"));
                }
                if value.contains(['\r', '\n', '\0']) {
                    out.push(Violation::new(
                        &pointer,
                        "a value must not contain CR, LF or NUL",
                    ));
                }
                for secret in rules::placeholder_names(value) {
                    if !self.secrets.iter().any(|s| s == secret) {
                        out.push(
                            Violation::new(
                                &pointer,
                                format!(
                                    "${{{secret}}} is not a secret of this server: add \"{secret}\" to its \"secrets\""
                                ),
                            )
                            .rule("placeholder"),
                        );
                    }
                }
            }
        }
        for (field, value) in [("url", &self.url), ("cwd", &self.cwd)] {
            if let Some(value) = value
                && rules::placeholder_names(value).next().is_some()
            {
                out.push(
                    Violation::new(
                        pointer_join(&at, field),
                        format!("{field} cannot hold ${{…}}: secrets go in env or headers"),
                    )
                    .rule("placeholder"),
                );
            }
        }
    }

    /// Why its tools cannot be called (the first broken rule), if they cannot.
    pub fn unavailable(&self, name: &str, hosts: &HostPolicy) -> Option<String> {
        let mut out = Vec::new();
        self.check(name, hosts, &mut out);
        out.into_iter().next().map(|v| v.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(doc: serde_json::Value) -> McpServer {
        serde_json::from_value(doc).unwrap_or_default()
    }

    fn messages(doc: serde_json::Value, hosts: &[&str]) -> Vec<String> {
        let policy = HostPolicy::new(hosts.iter().copied()).unwrap_or_default();
        let mut out = Vec::new();
        server(doc).check("srv", &policy, &mut out);
        out.into_iter().map(|v| v.to_string()).collect()
    }

    #[test]
    fn a_command_array_or_a_program_with_args_is_a_stdio_server() {
        let hosts = HostPolicy::default();
        for doc in [
            json!({"command": ["python3", "-m", "srv"]}),
            json!({"command": "python3", "args": ["-m", "srv"]}),
        ] {
            let server = server(doc);
            match server.transport(&hosts) {
                Ok(Transport::Stdio { argv, .. }) => assert_eq!(argv, ["python3", "-m", "srv"]),
                other => panic!("not stdio: {other:?}"),
            }
        }
        assert!(messages(json!({"command": []}), &[])[0].contains("command is empty"));
    }

    #[test]
    fn a_relative_cwd_or_program_path_is_the_catalogs_and_a_bare_name_is_left_to_path() {
        let hosts = HostPolicy::default();
        let mut entry = server(json!({"command": ["./bin/srv", "x"], "cwd": "work"}));
        entry.base = Some(PathBuf::from("/cat"));
        match entry.transport(&hosts) {
            Ok(Transport::Stdio { argv, cwd, .. }) => {
                assert_eq!(argv, ["/cat/./bin/srv", "x"]);
                assert_eq!(cwd, Some(PathBuf::from("/cat/work")));
            }
            other => panic!("not stdio: {other:?}"),
        }
        let mut entry = server(json!({"command": ["python3", "s.py"], "cwd": "/abs"}));
        entry.base = Some(PathBuf::from("/cat"));
        match entry.transport(&hosts) {
            Ok(Transport::Stdio { argv, cwd, .. }) => {
                assert_eq!(argv, ["python3", "s.py"]);
                assert_eq!(cwd, Some(PathBuf::from("/abs")));
            }
            other => panic!("not stdio: {other:?}"),
        }
    }

    #[test]
    fn a_url_needs_an_allowed_host() {
        let doc = json!({"url": "http://127.0.0.1:9/mcp"});
        assert_eq!(
            messages(doc.clone(), &[]),
            [
                "/mcpServers/srv/url: MCP server 'srv' host '127.0.0.1' of url is not in allowedHosts of toolctl.json"
            ]
        );
        assert!(messages(doc, &["127.0.0.1"]).is_empty());
    }

    #[test]
    fn both_or_neither_transport_and_undeclared_secrets_are_violations() {
        assert!(messages(json!({}), &[])[0].contains("neither command"));
        assert!(
            messages(json!({"command": ["x"], "url": "http://a/"}), &["a"])[0].contains("both")
        );
        let found = messages(
            json!({"command": ["x"], "env": {"TOKEN": "${API_TOKEN}"}}),
            &[],
        );
        assert_eq!(
            found,
            [
                "/mcpServers/srv/env/TOKEN: ${API_TOKEN} is not a secret of this server: add \"API_TOKEN\" to its \"secrets\""
            ]
        );
        assert!(
            messages(
                json!({"command": ["x"], "env": {"TOKEN": "${API_TOKEN}"}, "secrets": ["API_TOKEN"]}),
                &[]
            )
            .is_empty()
        );
    }
}
