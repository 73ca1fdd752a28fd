//! `bundle.json` and `tool.json`: typed views over the raw documents.
//!
//! A file is kept as the raw JSON document it was read from (`serde_json` with
//! `preserve_order`), and every write edits that document. So unknown fields, the key order of
//! `argSchema`/`outputSchema` and everything else a user wrote survive any rewrite by
//! construction. The typed structs below are read-only views used to check and use a file;
//! they ignore fields they do not know.

use super::error::{Error, Result, Violation};
use super::rules::{self, NameKind};
use jiff::Timestamp;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Unexpected};
use serde_json::{Map, Value};
use uuid::Uuid;

/// The `schemaVersion` toolctl writes.
pub const SCHEMA_VERSION: &str = "1";

/// A raw JSON object as read from (and written to) a file.
pub type Doc = Map<String, Value>;

fn yes() -> bool {
    true
}

/// `bundle.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    #[serde(rename = "bundleID")]
    pub bundle_id: Uuid,
    pub slug: String,
    #[serde(default)]
    pub display_name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "yes")]
    pub is_enabled: bool,
    #[serde(default)]
    pub is_built_in: bool,
    pub created_at: Timestamp,
    pub modified_at: Timestamp,
    #[serde(default)]
    pub soft_deleted_at: Option<Timestamp>,
}

/// How a tool runs. `go` is the legacy name of `native` and means the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolType {
    Native,
    Go,
    Http,
    /// A tool of an MCP server declared in `mcpServers` of `toolctl.json`.
    Mcp,
}

impl ToolType {
    pub fn is_native(self) -> bool {
        matches!(self, Self::Native | Self::Go)
    }

    /// The name shown to users: `go` tools are native tools.
    pub fn label(self) -> &'static str {
        match self {
            Self::Native | Self::Go => "native",
            Self::Http => "http",
            Self::Mcp => "mcp",
        }
    }
}

/// What a tool without an `argSchema` may do (only with `allowNoSchema: true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoSchemaMode {
    ReadOnly,
    HumanApproval,
    Full,
}

/// MCP-style behaviour hints.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

/// `tool.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    #[serde(rename = "toolID")]
    pub tool_id: Uuid,
    #[serde(rename = "bundleID")]
    pub bundle_id: Uuid,
    pub slug: String,
    pub version: String,
    #[serde(default)]
    pub display_name: String,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "type")]
    pub kind: ToolType,
    #[serde(default = "yes")]
    pub is_enabled: bool,
    #[serde(default)]
    pub is_built_in: bool,
    #[serde(default)]
    pub arg_schema: Option<Value>,
    #[serde(default)]
    pub output_schema: Option<Value>,
    #[serde(rename = "impl", default)]
    pub implementation: Option<Value>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub safe: Option<bool>,
    #[serde(default)]
    pub annotations: Option<Annotations>,
    #[serde(default)]
    pub strict: Option<bool>,
    #[serde(default)]
    pub allow_no_schema: bool,
    #[serde(default)]
    pub no_schema_mode: Option<NoSchemaMode>,
    #[serde(default)]
    pub max_response_bytes: Option<u64>,
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// The catalog secrets its templates may name (`${NAME}`); see [`super::templates`].
    #[serde(default)]
    pub secrets: Vec<String>,
    #[serde(default)]
    pub max_calls_per_minute: Option<u32>,
    /// The most bytes a call may send (the body); see [`crate::invoke::limits`].
    #[serde(default)]
    pub max_request_bytes: Option<u64>,
    pub created_at: Timestamp,
    pub modified_at: Timestamp,
}

/// `impl` of a native tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NativeImpl {
    pub func: Option<String>,
    pub go_func: Option<String>,
}

/// `impl` of an MCP tool: the server (a key of `mcpServers`) and its tool's own name.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpImpl {
    pub server: String,
    pub tool: String,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// `impl` of an HTTP tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpImpl {
    #[serde(default = "default_method")]
    pub method: String,
    pub url_template: String,
    #[serde(default)]
    pub headers: Map<String, Value>,
    #[serde(default)]
    pub body_template: Option<Value>,
    #[serde(default)]
    pub success_codes: Option<Vec<u16>>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub response_encoding: Option<ResponseEncoding>,
    #[serde(default)]
    pub extract_expr: Option<String>,
    #[serde(default)]
    pub error_mode: Option<ErrorMode>,
    /// How a call authenticates ([`super::auth`]).
    #[serde(default)]
    pub auth: Option<super::auth::Auth>,
    /// `responseEncoding: "sse"`: an event whose name, or whose whole data, is this ends the
    /// stream (`[DONE]`, `message_stop`).
    #[serde(default)]
    pub sse_terminal: Option<String>,
}

/// Every field of `doc`'s `impl` that the schema's definition `def` (`httpImpl`, …) of
/// `tool.schema.json` does not name, refused at its pointer: nothing reads it (a limit written
/// there, beside `timeoutMs`, would have no effect). A top-level field of `tool.json` written
/// inside `impl` is named as such, a misspelling gets the field it resembles.
fn check_impl_fields(doc: &Value, kind: &str, def: &str, out: &mut Vec<Violation>) {
    let Some(fields) = doc.get("impl").and_then(Value::as_object) else {
        return;
    };
    // The schema's text alone, parsed once: no validator is compiled for this.
    static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
        serde_json::from_str(super::schemas::Kind::Tool.text()).unwrap_or_default()
    });
    let known: Vec<&str> = SCHEMA
        .pointer(&format!("/$defs/{def}/properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for key in fields.keys().filter(|key| !known.contains(&key.as_str())) {
        let message = if super::schemas::Kind::Tool
            .known_fields()
            .any(|field| field == key)
        {
            format!(
                "\"{key}\" is not a field of impl: did you mean the top-level \"{key}\"? It goes beside \"impl\" in tool.json, where toolctl reads it"
            )
        } else if let Some(close) = crate::base::suggest::closest(key, known.iter().copied()) {
            format!("\"{key}\" is not a field of impl (did you mean \"{close}\"?)")
        } else {
            format!(
                "\"{key}\" is not a field of impl; the impl of {kind} tool holds {}",
                known.join(", ")
            )
        };
        out.push(Violation::new(
            crate::base::pointer::join("/impl", key),
            message,
        ));
    }
}

fn default_method() -> String {
    "GET".to_owned()
}

/// The HTTP methods an HTTP tool may use.
pub const HTTP_METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseEncoding {
    Json,
    Text,
    /// Server-Sent Events, read as they come ([`crate::invoke::sse`]).
    Sse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorMode {
    Fail,
    Empty,
}

/// Turn a serde path (`impl.method`, `tags[0]`) into a JSON pointer (`/impl/method`, `/tags/0`).
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        pointer = match segment {
            Segment::Seq { index } => format!("{pointer}/{index}"),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                crate::base::pointer::join(&pointer, key)
            }
            Segment::Unknown => format!("{pointer}/?"),
        };
    }
    pointer
}

/// `message` about the value at `pointer` of `doc`, naming the number there as serde_json did
/// before numbers kept their text. With `arbitrary_precision` its `Value` words a number that a
/// field cannot take without the number ("invalid type: number, expected a boolean") or without
/// what was expected ("invalid number"); reading the document's text says both, as before
/// ("invalid type: floating point `1.5`, expected u64").
fn number_message<T: DeserializeOwned>(doc: &Value, pointer: &str, message: String) -> String {
    let Some(Value::Number(n)) = doc.pointer(pointer) else {
        return message;
    };
    if let Some(expected) = message.strip_prefix("invalid type: number, expected ") {
        let unexpected = if let Some(u) = n.as_u64() {
            Unexpected::Unsigned(u)
        } else if let Some(i) = n.as_i64() {
            Unexpected::Signed(i)
        } else if let Some(f) = n.as_f64() {
            Unexpected::Float(f)
        } else {
            return message;
        };
        // serde_json's own wording (its floats as it prints them: `1e+20`).
        return <serde_json::Error as serde::de::Error>::invalid_type(unexpected, &expected)
            .to_string();
    }
    if message != "invalid number" {
        return message;
    }
    // A number field (the message says neither which): the text's reader says both. Only on
    // this path, which is rare, so reading a document stays one pass.
    let text = doc.to_string();
    match serde_path_to_error::deserialize::<_, T>(&mut serde_json::Deserializer::from_str(&text)) {
        Err(e) if pointer_of(e.path()) == pointer => {
            crate::base::syntax::SyntaxError::of(&e.into_inner()).message
        }
        _ => message,
    }
}

/// serde's message with the Rust number types it expected said in words
/// ("invalid type: floating point `1.5`, expected u64" → "…, expected a whole number, 0 or
/// more"): a user writes JSON, not Rust.
fn plain_types(message: &str) -> String {
    let Some((head, expected)) = message.rsplit_once("expected ") else {
        return message.to_owned();
    };
    let words = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        _ => return message.to_owned(),
    };
    format!("{head}expected {words}")
}

/// Read the typed view `T` of a document; a field of the wrong type or a missing required field
/// is reported with its JSON pointer.
pub fn typed<T: DeserializeOwned>(doc: &Value, source_name: &str) -> Result<T> {
    serde_path_to_error::deserialize(doc).map_err(|e| {
        let pointer = pointer_of(e.path());
        let message = plain_types(&number_message::<T>(
            doc,
            &pointer,
            e.into_inner().to_string(),
        ));
        // A missing field is reported by its parent; name the field itself.
        let (pointer, message) = match message.strip_prefix("missing field `") {
            Some(rest) => {
                let field = rest.split('`').next().unwrap_or_default();
                (
                    format!(
                        "{}/{field}",
                        pointer.trim_end_matches('/').trim_end_matches('?')
                    ),
                    format!("required field '{field}' is missing"),
                )
            }
            None => (pointer, message),
        };
        Error::invalid(source_name, vec![Violation::new(pointer, message)])
    })
}

/// A UTF-8 byte order mark, which some editors (Windows Notepad) put first in a file.
pub const BOM: char = '\u{feff}';

/// Why a document that starts with [`BOM`] is refused: JSON does not allow one (RFC 8259
/// §8.1), and serde_json alone would say only "expected value".
pub const BOM_PROBLEM: &str = "the document starts with a byte order mark (U+FEFF), which JSON does not allow; save it as UTF-8 without BOM";

/// Parse JSON text into a document that must be an object; syntax errors carry line and column.
pub fn parse_doc(text: &str, path: &std::path::Path) -> Result<Value> {
    if text.starts_with(BOM) {
        return Err(Error::Parse {
            path: path.to_owned(),
            line: 1,
            column: 1,
            message: format!("{BOM_PROBLEM} at line 1 column 1"),
        });
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let syntax = crate::base::syntax::SyntaxError::of(&e);
        Error::Parse {
            path: path.to_owned(),
            line: syntax.line,
            column: syntax.column,
            // Ends with "at line L column C", as the BOM's message does.
            message: syntax.to_string(),
        }
    })?;
    if !value.is_object() {
        return Err(Error::invalid(
            path.display().to_string(),
            vec![Violation::new("", "the document must be a JSON object")],
        ));
    }
    Ok(value)
}

impl Bundle {
    /// The rules a `bundle.json` must meet: its IDs, slug and format version, and that it is
    /// not the built-in bundle. (Its folder, and the order of its timestamps, are checked by
    /// `validate`.)
    pub fn check(&self, doc: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        check_document(doc, &["bundleID"], &mut out);
        rules::check_name_at(NameKind::Slug, &self.slug, "/slug", &mut out);
        if self.slug == super::builtin::SLUG || self.is_built_in {
            out.push(Violation::new(
                if self.is_built_in { "/isBuiltIn" } else { "/slug" },
                "a bundle on disk cannot be the built-in bundle (slug 'builtin' or isBuiltIn: true)",
            ));
        }
        out
    }
}

/// `createdAt` must not be after `modifiedAt`.
pub fn check_timestamps(created: Timestamp, modified: Timestamp, out: &mut Vec<Violation>) {
    if created > modified {
        out.push(
            Violation::new(
                "/modifiedAt",
                format!("modifiedAt {modified} is before createdAt {created}"),
            )
            .rule("timestamps"),
        );
    }
}

/// Rules on the raw document that its typed view does not see: the format version is one
/// this toolctl reads, each ID field is a UUIDv7 written in the usual hyphenated form, and each
/// timestamp is RFC 3339 as the schema says (the typed view reads more, e.g. no seconds).
/// A `schemaVersion` this toolctl does not read, in any of its files (`toolctl.json`,
/// `bundle.json`, `tool.json`): a file a newer toolctl wrote is refused, never misread.
pub fn schema_version_violation(doc: &Value) -> Option<Violation> {
    let version = doc.get("schemaVersion")?;
    if version.as_str() == Some(SCHEMA_VERSION) {
        return None;
    }
    let message = if version.is_string() {
        format!("schemaVersion {version} is not one this toolctl reads (\"{SCHEMA_VERSION}\")")
    } else {
        format!("schemaVersion must be the string \"{SCHEMA_VERSION}\", not {version}")
    };
    Some(Violation::new("/schemaVersion", message))
}

fn check_document(doc: &Value, id_fields: &[&str], out: &mut Vec<Violation>) {
    for field in ["createdAt", "modifiedAt", "softDeletedAt"] {
        if let Some(text) = doc.get(field).and_then(Value::as_str)
            && !super::schemas::is_date_time(text)
        {
            out.push(Violation::new(
                format!("/{field}"),
                format!("'{text}' is not an RFC 3339 date-time (e.g. 2026-01-31T12:00:00Z)"),
            ));
        }
    }
    out.extend(schema_version_violation(doc));
    for field in id_fields {
        let Some(text) = doc.get(*field).and_then(Value::as_str) else {
            continue;
        };
        let problem = match Uuid::try_parse(text) {
            Err(e) => Some(format!("'{text}' is not a UUID: {e}")),
            Ok(id) if id.hyphenated().to_string() != text.to_ascii_lowercase() => Some(format!(
                "'{text}' is not written as a hyphenated UUID ({})",
                id.hyphenated()
            )),
            Ok(id) if id.get_version_num() != 7 => Some(format!(
                "'{text}' is a version {} UUID; IDs are UUIDv7",
                id.get_version_num()
            )),
            // RFC 9562's variant (the first digit of the fourth group is 8, 9, a or b), as the
            // schema's pattern says: the fuzzer found an ID put took and validate refused.
            Ok(id) if id.get_variant() != uuid::Variant::RFC4122 => Some(format!(
                "'{text}' is not an RFC 9562 UUID: the fourth group must start with 8, 9, a or b"
            )),
            Ok(_) => None,
        };
        if let Some(message) = problem {
            out.push(Violation::new(format!("/{field}"), message).rule("id"));
        }
    }
}

impl Tool {
    /// The native function this tool names (`impl.func`, or `impl.goFunc`).
    pub fn native_func(&self) -> Option<String> {
        self.native_field().map(|(func, _)| func)
    }

    /// The JSON pointer of the field that names this tool's native function, as the file has
    /// it: `/impl/goFunc` for a legacy `go` tool, else `/impl/func` (also where a
    /// missing name goes).
    pub fn native_func_pointer(&self) -> &'static str {
        self.native_field()
            .map_or("/impl/func", |(_, pointer)| pointer)
    }

    /// The native function this tool names, and the pointer of the field naming it.
    fn native_field(&self) -> Option<(String, &'static str)> {
        let native: NativeImpl = serde_json::from_value(self.implementation.clone()?).ok()?;
        match (native.func, native.go_func) {
            (Some(func), _) => Some((func, "/impl/func")),
            (None, Some(func)) => Some((func, "/impl/goFunc")),
            (None, None) => None,
        }
    }

    /// The HTTP implementation block, if this is an HTTP tool with a readable one.
    pub fn http_impl(&self) -> Option<HttpImpl> {
        serde_json::from_value(self.implementation.clone()?).ok()
    }

    /// The MCP implementation block, if this is an MCP tool with a readable one.
    pub fn mcp_impl(&self) -> Option<McpImpl> {
        serde_json::from_value(self.implementation.clone()?).ok()
    }

    /// Whether `pick` may show the tool without `--allow-unsafe`: `safe` when set; else the
    /// MCP-style annotations when they say anything about side effects (safe when read-only or not
    /// destructive; a tool that says it is not read-only, and not that it is harmless, is
    /// destructive by MCP's defaults); else, for an HTTP tool, its method (GET and HEAD are safe);
    /// a native tool is safe; an MCP tool that says nothing is not (MCP's defaults: not read-only,
    /// destructive).
    pub fn is_safe(&self) -> bool {
        // A tool is no safer than the native function it runs: `exec` runs any command,
        // whatever the tool's own `safe` says.
        if self.runs_exec() {
            return false;
        }
        if let Some(safe) = self.safe {
            return safe;
        }
        if let Some(hints) = &self.annotations
            && (hints.read_only_hint.is_some() || hints.destructive_hint.is_some())
        {
            return hints.read_only_hint == Some(true) || hints.destructive_hint == Some(false);
        }
        match self.kind {
            ToolType::Native | ToolType::Go => true,
            ToolType::Http => self
                .http_impl()
                .is_some_and(|http| matches!(http.method.as_str(), "GET" | "HEAD")),
            ToolType::Mcp => false,
        }
    }

    /// The rules a tool must meet whatever the catalog's configuration: names, timestamps,
    /// schema presence and the shape of `impl`.
    pub fn check(&self, doc: &Value) -> Vec<Violation> {
        self.check_with(doc, true)
    }

    /// [`check`](Self::check) without the rules on its JSON Schemas (meta-validated and
    /// compiled, which costs more than reading the file): for a file the index checked whole
    /// and lists as usable now, read again only to be shown.
    pub fn check_listed(&self, doc: &Value) -> Vec<Violation> {
        self.check_with(doc, false)
    }

    fn check_with(&self, doc: &Value, schemas: bool) -> Vec<Violation> {
        let mut out = Vec::new();
        check_document(doc, &["toolID", "bundleID"], &mut out);
        rules::check_name_at(NameKind::Slug, &self.slug, "/slug", &mut out);
        rules::check_name_at(NameKind::Version, &self.version, "/version", &mut out);
        check_timestamps(self.created_at, self.modified_at, &mut out);
        for (field, schema) in [
            ("argSchema", &self.arg_schema),
            ("outputSchema", &self.output_schema),
        ] {
            if let Some(schema) = schema
                && !(schema.is_object() || schema.is_boolean())
            {
                out.push(Violation::new(
                    format!("/{field}"),
                    format!("{field} must be a JSON Schema (an object or a boolean)"),
                ));
            }
        }
        if self.arg_schema.is_none() {
            if !self.allow_no_schema {
                out.push(Violation::new(
                    "/argSchema",
                    "argSchema is missing; give the tool a JSON Schema for its arguments, or set allowNoSchema: true with a noSchemaMode",
                ).rule("no-schema"));
            } else if self.no_schema_mode.is_none() {
                out.push(
                    Violation::new(
                        "/noSchemaMode",
                        "allowNoSchema needs a noSchemaMode: read-only, human-approval or full",
                    )
                    .rule("no-schema"),
                );
            }
        }
        for (i, tag) in self.tags.iter().enumerate() {
            if tag.trim().is_empty() {
                out.push(Violation::new(
                    format!("/tags/{i}"),
                    "a tag must not be empty",
                ));
            }
        }
        match self.kind {
            ToolType::Native | ToolType::Go => check_native_impl(doc, &mut out),
            ToolType::Http => check_http_impl(self, doc, &mut out),
            ToolType::Mcp => check_mcp_impl(doc, &mut out),
        }
        if schemas {
            super::tool_rules::check(self, doc, &mut out);
        }
        out
    }

    /// The catalog's host policy applied to an HTTP tool: where its `urlTemplate` and its
    /// OAuth2 `tokenUrl` lead that `allowedHosts` does not allow, each at its pointer. One set
    /// of rules: `tool put` refuses these, `validate` reports them (rule `host`).
    pub fn host_violations(&self, hosts: &rules::HostPolicy) -> Vec<Violation> {
        let Some(http) = self.http_impl() else {
            return Vec::new();
        };
        let url = rules::host_policy_problem(&http.url_template, hosts)
            .map(|message| Violation::new("/impl/urlTemplate", message));
        let token = super::auth::host_problem(&http, hosts)
            .map(|message| Violation::new("/impl/auth/tokenUrl", message));
        url.into_iter().chain(token).collect()
    }

    /// Whether this is a native tool that runs the `exec` function.
    pub fn runs_exec(&self) -> bool {
        self.kind.is_native() && self.native_func().as_deref() == Some(super::builtin::EXEC)
    }

    /// The catalog's `exec` policy applied to a tool of a user's: one that names the native
    /// function `exec` while `builtin/exec` is disabled. One set of rules: `tool put` refuses
    /// it, `validate` reports it (rule `exec`), and a tool that came in another way (an
    /// archive, a hand edit, a policy turned off later) is unavailable for this reason.
    pub fn exec_violation(&self, exec_allowed: bool) -> Option<Violation> {
        (self.runs_exec() && !self.is_built_in && !exec_allowed).then(|| {
            Violation::new(
                self.native_func_pointer(),
                format!(
                    "it runs the native function '{}', which this catalog allows only while builtin/exec, the catalog's policy switch for running commands, is enabled",
                    super::builtin::EXEC
                ),
            )
        })
    }

    /// `validate`'s rule `native`: the native function this tool names must be one this
    /// toolctl has. `tool put` refuses one it lacks, as `validate` reports it; a tool copied in
    /// by hand or brought by an archive is kept and listed as unavailable (one catalog may be
    /// shared by builds with other functions).
    pub fn function_violation(&self) -> Option<Violation> {
        if !self.kind.is_native() {
            return None;
        }
        let func = self.native_func().filter(|func| !func.is_empty())?;
        (!super::builtin::has_function(&func)).then(|| {
            Violation::new(
                self.native_func_pointer(),
                format!(
                    "native function '{func}' is not in this toolctl (it has {})",
                    super::builtin::FUNCTIONS.join(", ")
                ),
            )
            .rule("native")
        })
    }

    /// `validate`'s rule `mcp`: the MCP server an `mcp` tool names must be declared in
    /// `mcpServers` of `toolctl.json` (`servers`), for `tool put` as for `validate`.
    pub fn server_violation(&self, servers: &super::mcp_servers::McpServers) -> Option<Violation> {
        let mcp = self.mcp_impl().filter(|_| self.kind == ToolType::Mcp)?;
        if mcp.server.is_empty() || servers.contains_key(&mcp.server) {
            return None;
        }
        let declared: Vec<&str> = servers.keys().map(String::as_str).collect();
        Some(
            Violation::new(
                "/impl/server",
                format!(
                    "MCP server '{}' is not declared in mcpServers of toolctl.json ({})",
                    mcp.server,
                    if declared.is_empty() {
                        "it declares none".to_owned()
                    } else {
                        format!("it has {}", declared.join(", "))
                    }
                ),
            )
            .rule("mcp"),
        )
    }

    /// Why this tool cannot be used by this binary with this configuration, if it cannot.
    pub fn unavailable_reason(&self, config: &super::config::Config) -> Option<String> {
        let hosts = &config.hosts;
        if self.kind == ToolType::Mcp {
            let Some(mcp) = self.mcp_impl() else {
                return Some("impl is not a valid MCP implementation".to_owned());
            };
            return match config.mcp_servers.get(&mcp.server) {
                None => Some(format!(
                    "MCP server '{}' is not declared in mcpServers of toolctl.json",
                    mcp.server
                )),
                Some(server) => server.unavailable(&mcp.server, hosts),
            };
        }
        if self.kind.is_native() {
            return match self.native_func() {
                None => Some("impl.func names no native function".to_owned()),
                Some(func) if !crate::catalog::builtin::has_function(&func) => {
                    Some(format!("native function '{func}' is not in this binary"))
                }
                Some(_) => self
                    .exec_violation(config.exec_allowed())
                    .map(|v| v.message),
            };
        }
        let Some(http) = self.http_impl() else {
            return Some("impl is not a valid HTTP implementation".to_owned());
        };
        rules::check_url_template(&http.url_template, hosts)
            .err()
            .or_else(|| super::auth::host_problem(&http, hosts))
    }
}

fn check_native_impl(doc: &Value, out: &mut Vec<Violation>) {
    check_impl_fields(doc, "a native", "nativeImpl", out);
    let Some(imp) = doc.get("impl") else {
        out.push(Violation::new(
            "/impl",
            "a native tool needs impl.func naming its function",
        ));
        return;
    };
    match typed::<NativeImpl>(imp, "") {
        Ok(native)
            if native
                .func
                .as_deref()
                .or(native.go_func.as_deref())
                .is_some_and(|f| !f.is_empty()) => {}
        Ok(_) => out.push(Violation::new(
            "/impl/func",
            "a native tool needs impl.func naming its function",
        )),
        Err(e) => out.extend(
            e.violations()
                .iter()
                .map(|v| Violation::new("/impl", v.message.clone())),
        ),
    }
}

/// The typed `impl` of a tool, or the violations that say why there is none (`missing` when
/// the document has no `impl`).
fn typed_impl<T: DeserializeOwned>(
    doc: &Value,
    missing: &str,
    out: &mut Vec<Violation>,
) -> Option<T> {
    let Some(imp) = doc.get("impl") else {
        out.push(Violation::new("/impl", missing));
        return None;
    };
    match typed(imp, "") {
        Ok(typed) => Some(typed),
        Err(e) => {
            for v in e.violations() {
                out.push(Violation::new(
                    format!("/impl{}", v.pointer),
                    v.message.clone(),
                ));
            }
            None
        }
    }
}

fn check_mcp_impl(doc: &Value, out: &mut Vec<Violation>) {
    check_impl_fields(doc, "an MCP", "mcpImpl", out);
    let Some(mcp) = typed_impl::<McpImpl>(
        doc,
        "an MCP tool needs impl with server (a key of mcpServers in toolctl.json) and tool",
        out,
    ) else {
        return;
    };
    for (field, value) in [("server", &mcp.server), ("tool", &mcp.tool)] {
        if value.trim().is_empty() {
            out.push(Violation::new(
                format!("/impl/{field}"),
                format!("impl.{field} must not be empty"),
            ));
        }
    }
    if mcp.timeout_ms == Some(0) {
        out.push(Violation::new(
            "/impl/timeoutMs",
            "timeoutMs must be more than 0",
        ));
    }
}

fn check_http_impl(tool: &Tool, doc: &Value, out: &mut Vec<Violation>) {
    check_impl_fields(doc, "an HTTP", "httpImpl", out);
    let Some(http) = typed_impl::<HttpImpl>(doc, "an HTTP tool needs impl with urlTemplate", out)
    else {
        return;
    };
    if !HTTP_METHODS.contains(&http.method.as_str()) {
        out.push(Violation::new(
            "/impl/method",
            format!(
                "method '{}' is not one of {}",
                http.method,
                HTTP_METHODS.join(", ")
            ),
        ));
    }
    let lower = http.url_template.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        out.push(
            Violation::new(
                "/impl/urlTemplate",
                "urlTemplate must start with http:// or https://",
            )
            .rule("url"),
        );
    } else if let Err(message) = rules::check_url_shape(&http.url_template) {
        // A placeholder in the host, user info, a host that does not parse.
        out.push(Violation::new("/impl/urlTemplate", message).rule("url"));
    }
    for (name, value) in &http.headers {
        if let Err(message) = rules::check_header_name(name) {
            out.push(Violation::new(
                crate::base::pointer::join("/impl/headers", name),
                message,
            ));
        }
        match value.as_str() {
            None => out.push(Violation::new(
                crate::base::pointer::join("/impl/headers", name),
                "a header value must be a string",
            )),
            Some(v) if v.contains(['\r', '\n']) => out.push(Violation::new(
                crate::base::pointer::join("/impl/headers", name),
                "a header value must not contain CR or LF",
            )),
            Some(_) => {}
        }
    }
    if let Some(codes) = &http.success_codes {
        if codes.is_empty() {
            out.push(Violation::new(
                "/impl/successCodes",
                "successCodes is empty, so no answer would count as a success; leave it out for any 2xx, or list the codes",
            ));
        }
        for (i, code) in codes.iter().enumerate() {
            if !(100..=599).contains(code) {
                out.push(Violation::new(
                    format!("/impl/successCodes/{i}"),
                    format!("{code} is not an HTTP status code"),
                ));
            }
        }
    }
    if http.timeout_ms == Some(0) {
        out.push(Violation::new(
            "/impl/timeoutMs",
            "timeoutMs must be more than 0",
        ));
    }
    super::tool_rules::check_extract(&http, out);
    super::templates::check(tool, &http, doc, out);
    if let Some(auth) = &http.auth {
        super::auth::check(tool, auth, out);
    }
}
