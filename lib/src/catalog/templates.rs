//! The rules of an HTTP tool's templates, checked when a tool is put, imported, listed and
//! validated (one set of rules: [`super::model::Tool::check`]), so what `invoke` later does with
//! a placeholder is decided here, never by what happens to be in the environment:
//!
//! - every `${name}` in `urlTemplate`, `headers` and `bodyTemplate` is an argument (a property
//!   of `argSchema`; any name when the tool has no schema) or a secret the tool declares in
//!   `"secrets"` — not both;
//! - a placeholder in the URL's path must be a required argument, one with a `default`, or a
//!   secret: an absent value cannot be left out of a path the way a query pair can;
//! - a JSON body template (no `Content-Type` header, or one naming JSON) must be JSON itself,
//!   each placeholder inside a string (`"${n}"`), so a value can only ever be a value;
//! - `maxRetries` is at most [`MAX_RETRIES`].

use super::error::Violation;
use super::model::{HttpImpl, Tool};
use crate::base::pointer::join as pointer_join;
use serde_json::Value;
use std::collections::BTreeSet;

/// The most retries a tool may ask for.
pub const MAX_RETRIES: u32 = 10;

/// How a body template is written out, from the `Content-Type` header the tool sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// No `Content-Type`, or one naming JSON: a JSON template filled in as a tree.
    Json,
    /// `application/x-www-form-urlencoded`: `name=value` pairs, values percent-encoded.
    Form,
    /// Any other type (`text/plain`, `application/xml`, …): values as text.
    Text,
}

impl BodyKind {
    pub fn of(http: &HttpImpl) -> Self {
        let content_type = http
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
            .and_then(|(_, value)| value.as_str())
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if content_type.starts_with("application/x-www-form-urlencoded") {
            Self::Form
        } else if content_type.is_empty() || content_type.contains("json") {
            Self::Json
        } else {
            Self::Text
        }
    }
}

/// The path of a URL template: after its scheme and host, before its query or fragment. A `\\`
/// ends the host as `/` does (URL parsers read it so in `http`/`https` URLs).
pub fn url_path_part(template: &str) -> &str {
    let end = template.find(['?', '#']).unwrap_or(template.len());
    let before = &template[..end];
    let host_start = before.find("://").map_or(0, |i| i + 3);
    before[host_start..]
        .find(['/', '\\'])
        .map_or("", |i| &before[host_start + i..])
}

/// Check the templates of HTTP tool `tool` (whose `impl` parsed as `http`).
pub fn check(tool: &Tool, http: &HttpImpl, doc: &Value, out: &mut Vec<Violation>) {
    let declared: BTreeSet<&str> = tool.secrets.iter().map(String::as_str).collect();
    let properties = tool.arg_schema.as_ref().map(|schema| {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect::<BTreeSet<_>>())
            .unwrap_or_default()
    });
    let required: BTreeSet<&str> = tool
        .arg_schema
        .as_ref()
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (i, name) in tool.secrets.iter().enumerate() {
        let pointer = format!("/secrets/{i}");
        if let Some(first) = tool.secrets[..i].iter().position(|s| s == name) {
            out.push(Violation::new(
                pointer,
                format!(
                    "'{name}' is declared twice (first at /secrets/{first}); list each secret once"
                ),
            ));
        } else if !is_name(name) {
            out.push(
                Violation::new(
                    pointer,
                    format!(
                        "'{name}' is not a secret name: letters, digits, '_', '.' and '-' only"
                    ),
                )
                .rule("placeholder"),
            );
        } else if properties
            .as_ref()
            .is_some_and(|p| p.contains(name.as_str()))
        {
            out.push(
                Violation::new(
                    pointer,
                    format!(
                        "'{name}' is both an argument (a property of argSchema) and a declared secret; rename one"
                    ),
                )
                .rule("placeholder"),
            );
        }
    }

    let mut templates = Vec::new();
    if let Some(imp) = doc.get("impl") {
        for field in ["urlTemplate", "headers", "bodyTemplate"] {
            if let Some(value) = imp.get(field) {
                strings_in(value, &format!("/impl/{field}"), &mut templates);
            }
        }
    }
    for (pointer, text) in templates {
        for name in super::rules::placeholder_names(text) {
            let argument = properties.as_ref().is_none_or(|p| p.contains(name));
            if !declared.contains(name) && !argument {
                out.push(
                    Violation::new(
                        pointer.clone(),
                        format!(
                            "${{{name}}} is neither an argument (a property of argSchema) nor a secret the tool declares (add \"{name}\" to \"secrets\")"
                        ),
                    )
                    .rule("placeholder"),
                );
            }
        }
    }

    // A path segment cannot be left out: its placeholder must always have a value.
    if tool.arg_schema.is_some() {
        for name in super::rules::placeholder_names(url_path_part(&http.url_template)) {
            let known = properties.as_ref().is_some_and(|p| p.contains(name));
            let has_default = tool
                .arg_schema
                .as_ref()
                .and_then(|s| s.pointer(&pointer_join("/properties", name)))
                .is_some_and(|p| p.get("default").is_some());
            if known && !required.contains(name) && !declared.contains(name) && !has_default {
                out.push(
                    Violation::new(
                        "/impl/urlTemplate",
                        format!(
                            "${{{name}}} stands in the URL's path, so it must be a required argument (add \"{name}\" to argSchema's \"required\") or have a default, or move it to the query"
                        ),
                    )
                    .rule("placeholder"),
                );
            }
        }
    }

    if let Some(Value::String(body)) = &http.body_template
        && !body.is_empty()
        && BodyKind::of(http) == BodyKind::Json
        && let Err(e) = serde_json::from_str::<Value>(body)
    {
        out.push(
            Violation::new(
                "/impl/bodyTemplate",
                format!(
                    "a JSON body template must be valid JSON, with every placeholder inside a string (\"limit\": \"${{n}}\" takes the argument's JSON value): {e}"
                ),
            )
            .rule("body-template"),
        );
    }

    if let Some(retries) = tool.max_retries
        && retries > MAX_RETRIES
    {
        out.push(Violation::new(
            "/maxRetries",
            format!("maxRetries is {retries}; at most {MAX_RETRIES} are allowed"),
        ));
    }
}

/// A placeholder name: what `${…}` may hold.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Every string inside `value`, with its pointer.
fn strings_in<'a>(value: &'a Value, pointer: &str, out: &mut Vec<(String, &'a str)>) {
    match value {
        Value::String(text) => out.push((pointer.to_owned(), text)),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings_in(item, &format!("{pointer}/{i}"), out);
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                strings_in(item, &pointer_join(pointer, key), out);
            }
        }
        _ => {}
    }
}
