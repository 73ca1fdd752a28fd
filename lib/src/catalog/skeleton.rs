//! `tool new`: a `tool.json` to start from, valid as it is and showing by example what each
//! part is for (JSON has no comments, so the values say it).
//!
//! The skeleton is created **disabled**: its description and arguments are placeholders that
//! no model should see until someone has written the real ones. It points at the catalog's
//! copy of the tool schema (`schemas/tool.schema.json`, written next to `bundles/`) with
//! `"$schema"`, so editors check the file while it is edited.

use super::rules::HostPolicy;
use serde_json::{Value, json};

/// From a tool's folder (`bundles/<id>/tools/<slug>/<version>/`) to the catalog's schemas.
pub const SCHEMA_REF: &str = "../../../../../schemas/tool.schema.json";

/// The folder of the schemas inside a catalog.
pub const SCHEMAS_DIR: &str = "schemas";

/// How the new tool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skeleton {
    /// A native function compiled into toolctl.
    Native { func: String },
    /// An HTTP request to `url` (a template).
    Http { url: String },
}

/// A starting URL on the first host `allowedHosts` lets tools call, if any.
pub fn example_url(hosts: &HostPolicy, entries: &[String]) -> Option<String> {
    entries.iter().find_map(|entry| {
        let entry = entry.trim();
        let host = entry
            .strip_prefix("*.")
            .map_or_else(|| entry.to_owned(), |rest| format!("api.{rest}"));
        let bare = host.split(':').next().unwrap_or_default();
        let local = bare.parse::<std::net::IpAddr>().is_ok()
            || bare.starts_with('[')
            || bare == "localhost";
        let scheme = if local { "http" } else { "https" };
        let url = format!("{scheme}://{host}/v1/search?q=${{query}}");
        let parsed = url::Url::parse(&url).ok()?;
        hosts.allows(&parsed).then_some(url)
    })
}

/// The skeleton of tool `slug@version`.
pub fn tool(slug: &str, version: &str, how: &Skeleton) -> Value {
    let display: String = slug
        .split('-')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars
                .next()
                .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
        })
        .collect::<Vec<_>>()
        .join(" ");
    let (kind, arg_schema, implementation) = match how {
        Skeleton::Native { func } => (
            "native",
            json!({ "type": "object", "properties": {}, "additionalProperties": false }),
            json!({ "func": func }),
        ),
        Skeleton::Http { url } => (
            "http",
            json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What to look up. Give every argument a type and a description: models fill arguments in from them."
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            json!({
                "method": "GET",
                "urlTemplate": url,
                "headers": { "Accept": "application/json" },
                "timeoutMs": 10000,
                "responseEncoding": "json"
            }),
        ),
    };
    json!({
        "$schema": SCHEMA_REF,
        "schemaVersion": super::model::SCHEMA_VERSION,
        "slug": slug,
        "version": version,
        "displayName": display,
        "description": "Say what the tool does and when to use it, in a sentence or two: models choose tools by this text.",
        "type": kind,
        "isEnabled": false,
        "tags": [],
        "safe": true,
        "argSchema": arg_schema,
        "impl": implementation
    })
}
