//! The checks of one file: its JSON, its schema, the store's rules, and what only code can say
//! about one file (folders, hosts, placeholders, native functions, argument schemas,
//! descriptions, what providers would refuse).

use super::{About, Constraints, Place, Severity};
use crate::attach::AgentFile;
use crate::base::pointer::join as pointer_join;
use crate::catalog::config::Config;
use crate::catalog::model::{self, Bundle, Tool, ToolType};
use crate::catalog::names;
use crate::catalog::rules::HostPolicy;
use crate::catalog::schemas::{self, Kind};
use crate::catalog::{ToolEntry, Violation};
use crate::provider::{self, Provider};
use serde_json::Value;
use std::path::Path;

/// Descriptions longer than this are cut or refused by providers (OpenAI takes 1,024
/// characters for a function's description) and cost every request tokens.
pub const MAX_DESCRIPTION: usize = 1024;

/// What one file's checks need to know about the catalog.
#[derive(Debug)]
pub struct Context<'a> {
    /// The catalog's host policy; `None` when `toolctl.json` is unusable (reported itself).
    pub hosts: Option<&'a HostPolicy>,
    /// `mcpServers` of `toolctl.json`; `None` when it is unusable (reported itself).
    pub mcp_servers: Option<&'a crate::catalog::mcp_servers::McpServers>,
    /// Whether the catalog's policy lets `exec` run; `None` when `toolctl.json` is unusable.
    pub exec_allowed: Option<bool>,
    pub providers: &'a [Provider],
}

/// One problem, before it is placed in its file.
#[derive(Debug, Clone)]
pub struct Note {
    pub severity: Severity,
    pub rule: &'static str,
    pub pointer: String,
    pub message: String,
    pub about: Option<About>,
}

impl Note {
    pub fn error(
        rule: &'static str,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity: Severity::Error,
            rule,
            pointer: pointer.into(),
            message: message.into(),
            about: None,
        }
    }

    /// The same note, about `about` (for a caller that words it).
    pub fn about(mut self, about: About) -> Self {
        self.about = Some(about);
        self
    }

    pub fn warning(
        rule: &'static str,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(rule, pointer, message)
        }
    }

    fn from_violation(violation: Violation) -> Self {
        Self::error(
            violation.rule.unwrap_or("schema"),
            violation.pointer,
            violation.message,
        )
    }
}

/// The checks of one parsed document: its notes and what the checks across files need.
pub fn check(
    kind: Kind,
    doc: &Value,
    path: &Path,
    place: &Place,
    cx: &Context,
) -> (Vec<Note>, Constraints) {
    let schema = schemas::violations(kind, doc);
    let mut notes = Vec::new();
    let facts = match kind {
        Kind::Config => {
            check_config(doc, path, &mut notes);
            Constraints::None
        }
        Kind::Bundle => match model::typed::<Bundle>(doc, "") {
            Ok(bundle) => check_bundle(&bundle, doc, place, &mut notes),
            Err(e) => {
                typed_failure(&e, &schema, &mut notes);
                Constraints::None
            }
        },
        Kind::Tool => match model::typed::<Tool>(doc, "") {
            // The store's rules (`Tool::check`) include the schemas' and placeholders'.
            Ok(tool) => check_tool(tool, doc, path, place, cx, &mut notes),
            Err(e) => {
                typed_failure(&e, &schema, &mut notes);
                let mut schemas = Vec::new();
                crate::catalog::tool_rules::check_schemas(doc, &mut schemas);
                notes.extend(schemas.into_iter().map(Note::from_violation));
                Constraints::None
            }
        },
    };
    if kind == Kind::Tool {
        check_tool_descriptions(doc, &mut notes);
    }
    unknown_fields(kind, doc, &mut notes);
    // The store's rules say what is wrong in the user's terms; the schema's message at the
    // same place (or above it) says less.
    let covered = |pointer: &str| {
        notes.iter().any(|n| {
            n.severity == Severity::Error
                && (n.pointer == pointer
                    || (n.rule == "no-schema"
                        && matches!(pointer, "/allowNoSchema" | "/noSchemaMode"))
                    || pointer.is_empty()
                    || n.pointer.starts_with(&format!("{pointer}/")))
        })
    };
    let schema: Vec<Note> = schema
        .into_iter()
        .filter(|v| !covered(&v.pointer))
        .map(Note::from_violation)
        .collect();
    notes.extend(schema);
    (notes, facts)
}

/// The checks of an agent file's document: the rules attach and `agent` read it by
/// ([`AgentFile::from_doc`]), with the agent its file name says it is when it is in a
/// catalog's `agents/`.
/// A file that reads without a problem is kept, for the check of its tools against the
/// catalog ([`Constraints::Agent`]).
pub fn check_agent(doc: &Value, place: &Place) -> (Vec<Note>, Constraints) {
    let named = match place {
        Place::Agent { named } => *named,
        _ => None,
    };
    match AgentFile::from_doc(doc, "", named) {
        Ok(file) => (Vec::new(), Constraints::Agent(Box::new(file))),
        Err(e) => (
            e.violations()
                .iter()
                .cloned()
                .map(Note::from_violation)
                .collect(),
            Constraints::None,
        ),
    }
}

/// The typed view could not be read: its one error, unless the schema said it already.
fn typed_failure(error: &crate::catalog::Error, schema: &[Violation], notes: &mut Vec<Note>) {
    if schema.is_empty() {
        notes.extend(error.violations().iter().cloned().map(Note::from_violation));
    }
}

/// The problems of `toolctl.json`: the list `config` refuses to add to and a refused command
/// names ([`crate::catalog::config::problems`]), and the attach settings attach would refuse.
fn check_config(doc: &Value, path: &Path, notes: &mut Vec<Note>) {
    let problems = crate::catalog::config::problems(doc, path);
    notes.extend(problems.into_iter().map(Note::from_violation));
    if let Ok(config) = Config::from_doc(doc.clone(), path)
        && let Err(e) = crate::attach::Settings::resolve(&config.attach, &|_| None)
    {
        notes.push(Note::error("schema", "/attach", e.to_string()));
    }
}

fn check_bundle(bundle: &Bundle, doc: &Value, place: &Place, notes: &mut Vec<Note>) -> Constraints {
    notes.extend(bundle.check(doc).into_iter().map(Note::from_violation));
    let mut timestamps = Vec::new();
    model::check_timestamps(bundle.created_at, bundle.modified_at, &mut timestamps);
    notes.extend(timestamps.into_iter().map(Note::from_violation));
    if let Place::Bundle { dir } = place
        && bundle.bundle_id.to_string() != *dir
    {
        notes.push(Note::error(
            "folder",
            "/bundleID",
            format!(
                "bundleID {} does not match its folder name '{dir}'",
                bundle.bundle_id
            ),
        ));
    }
    Constraints::Bundle {
        id: bundle.bundle_id,
        slug: bundle.slug.clone(),
        live: bundle.is_enabled && bundle.soft_deleted_at.is_none(),
        deleted: bundle.soft_deleted_at.is_some(),
    }
}

fn check_tool(
    tool: Tool,
    doc: &Value,
    path: &Path,
    place: &Place,
    cx: &Context,
    notes: &mut Vec<Note>,
) -> Constraints {
    notes.extend(tool.check(doc).into_iter().map(Note::from_violation));
    if let Place::Tool { dir, slug, version } = place {
        let folder = |pointer: &str, what: &str, value: &str, folder: &str| {
            Note::error(
                "folder",
                pointer,
                format!("{what} '{value}' does not match its folder '{folder}'"),
            )
        };
        if tool.bundle_id.to_string() != *dir {
            notes.push(folder(
                "/bundleID",
                "bundleID",
                &tool.bundle_id.to_string(),
                dir,
            ));
        }
        if tool.slug != *slug {
            notes.push(folder("/slug", "slug", &tool.slug, slug));
        }
        if tool.version != *version {
            notes.push(folder("/version", "version", &tool.version, version));
        }
    }
    match tool.kind {
        ToolType::Native | ToolType::Go => {
            notes.extend(tool.function_violation().map(Note::from_violation));
            if let Some(v) = cx
                .exec_allowed
                .and_then(|allowed| tool.exec_violation(allowed))
            {
                notes.push(Note::error("exec", v.pointer, v.message));
            }
        }
        ToolType::Http => check_http(&tool, cx, notes),
        ToolType::Mcp => {
            if let Some(servers) = cx.mcp_servers {
                notes.extend(tool.server_violation(servers).map(Note::from_violation));
            }
        }
    }
    if !cx.providers.is_empty() {
        check_providers(&tool, doc, path, cx.providers, notes);
    }
    let usable = !notes.iter().any(|n| n.severity == Severity::Error);
    Constraints::Tool {
        id: tool.tool_id,
        bundle_id: tool.bundle_id,
        slug: tool.slug,
        version: tool.version,
        enabled: tool.is_enabled && usable,
    }
}

fn check_http(tool: &Tool, cx: &Context, notes: &mut Vec<Note>) {
    let Some(http) = tool.http_impl() else {
        return;
    };
    // The URL's shape is `Tool::check`'s (reported with the tool's other rules); the host
    // policy is the catalog's, as `tool put` applies it.
    if let Some(hosts) = cx.hosts {
        for v in tool.host_violations(hosts) {
            notes.push(Note::error("host", v.pointer, v.message));
        }
    }
    // Annotations that speak of side effects say it as clearly as `safe` does.
    let said = tool.safe.is_some()
        || tool
            .annotations
            .as_ref()
            .is_some_and(|a| a.read_only_hint.is_some() || a.destructive_hint.is_some());
    if !said && !matches!(http.method.as_str(), "GET" | "HEAD") {
        notes.push(Note::warning(
            "unsafe-method",
            "/impl/method",
            format!(
                "a {} tool is taken to change things, so pick hides it unless unsafe tools are allowed; say so with \"safe\": false (or true if it is harmless)",
                http.method
            ),
        ).about(About::UnsafeMethod { method: http.method.clone() }));
    }
}

/// The tool's description and its arguments' are what a model picks and calls it by.
fn check_tool_descriptions(doc: &Value, notes: &mut Vec<Note>) {
    match doc
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
    {
        None | Some("") => notes.push(Note::warning(
            "description",
            "/description",
            "the tool has no description; models choose tools by what it says",
        )),
        Some(text) => too_long(text, "/description", "the tool's description", notes),
    }
    if let Some(schema) = doc.get("argSchema") {
        argument_descriptions(schema, "/argSchema", notes);
    }
}

fn too_long(text: &str, pointer: &str, what: &str, notes: &mut Vec<Note>) {
    let count = text.chars().count();
    if count > MAX_DESCRIPTION {
        notes.push(Note::warning(
            "description",
            pointer,
            format!(
                "{what} is {count} characters long; providers take at most {MAX_DESCRIPTION}, and every request pays for it"
            ),
        ));
    }
}

/// Every property of every object in an argument schema should say what it is for.
fn argument_descriptions(schema: &Value, at: &str, notes: &mut Vec<Note>) {
    let Value::Object(fields) = schema else {
        return;
    };
    for (key, value) in fields {
        let pointer = pointer_join(at, key);
        match (key.as_str(), value) {
            ("properties", Value::Object(properties)) => {
                for (name, property) in properties {
                    let here = pointer_join(&pointer, name);
                    match property.get("description").and_then(Value::as_str) {
                        // A `$ref` carries its description where it points.
                        None if property.get("$ref").is_some() => {}
                        None if property.is_object() => notes.push(Note::warning(
                            "description",
                            here.clone(),
                            format!("argument '{name}' has no description"),
                        )),
                        Some(text) if text.trim().is_empty() => notes.push(Note::warning(
                            "description",
                            format!("{here}/description"),
                            format!("argument '{name}' has an empty description"),
                        )),
                        Some(text) => too_long(
                            text,
                            &format!("{here}/description"),
                            &format!("the description of argument '{name}'"),
                            notes,
                        ),
                        None => {}
                    }
                    argument_descriptions(property, &here, notes);
                }
            }
            ("const" | "enum" | "default" | "examples" | "example", _) => {}
            (_, Value::Object(_)) => argument_descriptions(value, &pointer, notes),
            (_, Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    argument_descriptions(item, &format!("{pointer}/{i}"), notes);
                }
            }
            _ => {}
        }
    }
}

/// What each asked-for provider would refuse, as warnings.
fn check_providers(
    tool: &Tool,
    doc: &Value,
    path: &Path,
    providers: &[Provider],
    notes: &mut Vec<Note>,
) {
    if tool.arg_schema.is_none() && !tool.allow_no_schema {
        return; // An error already.
    }
    let entry = ToolEntry {
        tool: tool.clone(),
        doc: doc.clone(),
        path: Some(path.to_owned()),
        bundle_slug: String::new(),
        bundle_enabled: true,
        bundle_deleted: false,
        is_enabled: tool.is_enabled,
        unavailable: None,
    };
    let name = names::sanitize(&tool.slug);
    for provider in providers {
        if let Err(problems) = provider::tool_definition(*provider, &name, &entry, false) {
            for problem in problems {
                notes.push(Note::warning(
                    "provider",
                    problem.pointer.clone(),
                    format!(
                        "{provider} would refuse this tool ({}): {}",
                        problem.keyword, problem.message
                    ),
                ));
            }
        }
    }
}

/// Fields the schema does not name are kept, but are most often a misspelling.
fn unknown_fields(kind: Kind, doc: &Value, notes: &mut Vec<Note>) {
    let Some(fields) = doc.as_object() else {
        return;
    };
    let known: Vec<&str> = kind.known_fields().collect();
    for key in fields.keys() {
        if known.contains(&key.as_str()) {
            continue;
        }
        let message = match crate::base::suggest::closest(key, known.iter().copied()) {
            Some(known) => {
                format!(
                    "unknown field '{key}' (did you mean '{known}'?); it is kept but toolctl does not read it"
                )
            }
            _ => format!("unknown field '{key}'; it is kept but toolctl does not read it"),
        };
        notes.push(Note::warning(
            "unknown-field",
            pointer_join("", key),
            message,
        ));
    }
}
