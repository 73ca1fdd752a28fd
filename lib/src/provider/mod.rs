//! What each LLM provider accepts, and the translation of catalog tools into it.
//!
//! The canonical `argSchema` of a tool is never changed. Where a provider takes JSON Schema as
//! it is (OpenAI without strict mode, Anthropic without a tool's own `"strict": true`, Ollama,
//! MCP) the schema goes out verbatim, key order and all. Where it does not (OpenAI strict mode,
//! Anthropic's strict tool use, Gemini's OpenAPI subset) the schema
//! sent is a computed copy ([`strict`](crate::schema::strict), [`gemini`](crate::schema::gemini)), and whatever the copy cannot say with the
//! same meaning is an [`Unexpressible`] naming the keyword and its JSON pointer — never a
//! silent change. The manual's `docs/export.md` lists what each provider takes.

pub mod export;

use crate::catalog::ToolEntry;
use crate::catalog::model::ToolType;
pub use crate::schema::Unexpressible;
use crate::schema::{gemini, strict};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The providers `export` and `pick --emit` write for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// OpenAI Chat Completions: `{"type":"function","function":{…}}`.
    Openai,
    /// OpenAI Responses API: flat `{"type":"function","name",…}`.
    OpenaiResponses,
    /// Anthropic Messages: `{"name","description","input_schema"}`.
    Anthropic,
    /// Ollama `/api/chat`: the OpenAI Chat wrapper.
    Ollama,
    /// Gemini `functionDeclarations` entries.
    Gemini,
    /// MCP `tools/list` entries.
    Mcp,
}

impl Provider {
    pub const ALL: [Self; 6] = [
        Self::Openai,
        Self::OpenaiResponses,
        Self::Anthropic,
        Self::Ollama,
        Self::Gemini,
        Self::Mcp,
    ];

    /// The name on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::OpenaiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Ollama => "ollama",
            Self::Gemini => "gemini",
            Self::Mcp => "mcp",
        }
    }

    /// The most tools one request may carry, where the provider has a limit.
    pub fn max_tools(self) -> Option<usize> {
        match self {
            Self::Openai | Self::OpenaiResponses => Some(128),
            _ => None,
        }
    }
}

impl std::str::FromStr for Provider {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|p| p.as_str()).collect();
                format!("unknown provider '{text}'; one of: {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The arguments schema sent for a tool without one (`allowNoSchema`): any object. It says
/// what is true (the tool takes an object, unchecked), where MCP's "no parameters" form
/// (`additionalProperties: false`) would say the tool takes nothing.
fn any_object() -> Value {
    json!({ "type": "object" })
}

/// `tool` as one entry of `provider`'s tool list, under the exported `name`. `strict` asks for
/// OpenAI strict mode (a tool's own `"strict": true` asks for it too). Pointers in the errors
/// are into `tool.json` (`/argSchema/properties/when/format`); each problem is listed once,
/// however many ways the provider's rules find it.
pub fn tool_definition(
    provider: Provider,
    name: &str,
    tool: &ToolEntry,
    strict: bool,
) -> Result<Value, Vec<Unexpressible>> {
    definition(provider, name, tool, strict).map_err(|problems| {
        let mut unique: Vec<Unexpressible> = Vec::with_capacity(problems.len());
        for problem in problems {
            if !unique.contains(&problem) {
                unique.push(problem);
            }
        }
        unique
    })
}

/// Whether `provider` gets `tool` in a strict mode that closes every object: OpenAI's (asked
/// for by `strict`, the caller's, or by the tool's own `"strict": true`) or Anthropic's
/// strict tool use (the tool's own `"strict": true` only).
fn closes_objects(provider: Provider, tool: &ToolEntry, strict: bool) -> bool {
    let own = tool.tool.strict == Some(true);
    match provider {
        Provider::Openai | Provider::OpenaiResponses => strict || own,
        Provider::Anthropic => own,
        Provider::Ollama | Provider::Gemini | Provider::Mcp => false,
    }
}

/// The refusal of a tool without `argSchema` in a strict mode. It is exported as taking any
/// object, and strict mode closes every object: the provider would be told the tool takes no
/// arguments at all, and the model would never send one. (A tool whose `argSchema` is
/// `{"type":"object"}` says that it takes nothing, so closing it is right; without a schema
/// the tool has not said so.) `flag` is whether strict mode was asked for by the caller.
fn no_schema_under_strict(provider: Provider, tool: &ToolEntry, flag: bool) -> Unexpressible {
    let own = tool.tool.strict == Some(true);
    let mode = match provider {
        Provider::Anthropic => "Anthropic's strict tool use",
        _ => "strict mode",
    };
    let way_out = match (own, flag) {
        (true, false) => "remove the tool's own `\"strict\": true` (or set it to false)",
        (true, true) => {
            "remove the tool's own `\"strict\": true` (or set it to false) and export it \
                without strict mode"
        }
        (false, _) => "export it without strict mode",
    };
    Unexpressible::new(
        "argSchema",
        "/argSchema",
        format!(
            "the tool has no argSchema (allowNoSchema), so it is exported as taking any object, \
                and {mode} would close that object, telling the model the tool takes no \
                arguments; give the tool an argSchema that declares its arguments, or {way_out}"
        ),
    )
}

fn definition(
    provider: Provider,
    name: &str,
    tool: &ToolEntry,
    strict: bool,
) -> Result<Value, Vec<Unexpressible>> {
    let view = &tool.tool;
    let canonical = match &view.arg_schema {
        Some(schema) => schema.clone(),
        None if view.allow_no_schema && view.no_schema_mode.is_some() => {
            if closes_objects(provider, tool, strict) {
                return Err(vec![no_schema_under_strict(provider, tool, strict)]);
            }
            any_object()
        }
        None => {
            return Err(vec![Unexpressible::new(
                "argSchema",
                "/argSchema",
                "the tool has no argSchema; give it one, or set allowNoSchema with a noSchemaMode to export it unchecked",
            )]);
        }
    };
    let in_tool = |problems: Vec<Unexpressible>| {
        problems
            .into_iter()
            .map(|p| Unexpressible {
                pointer: format!("/argSchema{}", p.pointer),
                ..p
            })
            .collect::<Vec<_>>()
    };
    let description = if view.description.is_empty() {
        view.display_name.clone()
    } else {
        view.description.clone()
    };
    // OpenAI's strict mode and Anthropic's strict tool use take the same shape: a computed
    // copy in which every object is closed, or the keyword and pointer that keep the schema
    // from having one (Anthropic's rules are taken to be OpenAI's, the safe side: a schema sent
    // as it is would be refused, or followed loosely).
    let strict = closes_objects(provider, tool, strict);
    let mut def = Map::new();
    match provider {
        Provider::Openai | Provider::OpenaiResponses => {
            let parameters = if strict {
                strict::openai_strict(&canonical).map_err(in_tool)?
            } else {
                let mut problems = object_root("OpenAI", &canonical).err().unwrap_or_default();
                arrays_without_items(&canonical, "", &mut problems);
                if !problems.is_empty() {
                    return Err(in_tool(problems));
                }
                canonical
            };
            def.insert("name".into(), name.into());
            def.insert("description".into(), description.into());
            def.insert("parameters".into(), parameters);
            // The Responses API turns strict mode on unless told otherwise; Chat Completions
            // leaves it off.
            if strict || provider == Provider::OpenaiResponses {
                def.insert("strict".into(), strict.into());
            }
            if provider == Provider::OpenaiResponses {
                let mut flat = Map::new();
                flat.insert("type".into(), "function".into());
                flat.extend(def);
                return Ok(Value::Object(flat));
            }
            Ok(json!({ "type": "function", "function": def }))
        }
        Provider::Ollama => {
            def.insert("name".into(), name.into());
            def.insert("description".into(), description.into());
            def.insert("parameters".into(), canonical);
            Ok(json!({ "type": "function", "function": def }))
        }
        Provider::Anthropic => {
            let mut problems = object_root("Anthropic", &canonical)
                .err()
                .unwrap_or_default();
            problems.extend(draft_2020_12(&canonical));
            problems.extend(anthropic_argument_names(&canonical));
            if !problems.is_empty() {
                return Err(in_tool(problems));
            }
            // Anthropic's strict tool use: the tool's own `strict` carries over, with the
            // strict copy of its schema.
            let input_schema = if strict {
                strict::openai_strict(&canonical).map_err(in_tool)?
            } else {
                canonical
            };
            def.insert("name".into(), name.into());
            def.insert("description".into(), description.into());
            def.insert("input_schema".into(), input_schema);
            if strict {
                def.insert("strict".into(), true.into());
            }
            Ok(Value::Object(def))
        }
        Provider::Gemini => {
            let parameters = gemini::gemini_schema(&canonical).map_err(in_tool)?;
            def.insert("name".into(), name.into());
            def.insert("description".into(), description.into());
            // Gemini refuses an OBJECT without properties: a tool that takes nothing is
            // declared without parameters.
            let takes_something = parameters
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty());
            if takes_something {
                def.insert("parameters".into(), parameters);
            }
            Ok(Value::Object(def))
        }
        Provider::Mcp => {
            def.insert("name".into(), name.into());
            if !view.display_name.is_empty() {
                def.insert("title".into(), view.display_name.clone().into());
            }
            def.insert("description".into(), description.into());
            object_root("MCP", &canonical).map_err(in_tool)?;
            def.insert("inputSchema".into(), canonical);
            // MCP's outputSchema describes structuredContent, which is always an object.
            if let Some(output) = &view.output_schema
                && output.get("type").and_then(Value::as_str) == Some("object")
            {
                def.insert("outputSchema".into(), output.clone());
            }
            if let Some(annotations) = mcp_annotations(tool) {
                def.insert("annotations".into(), annotations);
            }
            Ok(Value::Object(def))
        }
    }
}

/// The whole list as the provider's request takes it: the entries themselves, except Gemini,
/// whose `tools` holds one object of `functionDeclarations`.
pub fn tool_list(provider: Provider, definitions: Vec<Value>) -> Value {
    match provider {
        Provider::Gemini => json!([{ "functionDeclarations": definitions }]),
        _ => Value::Array(definitions),
    }
}

/// The root of a tool's arguments as OpenAI, Anthropic and MCP take it: `type: "object"`, and
/// no `oneOf`/`anyOf`/`allOf`/`not`/`enum` beside it — each answers a schema with alternatives at
/// the root with a 400 for the whole request (MCP clients pass the schema on to such APIs).
fn object_root(provider: &str, schema: &Value) -> Result<(), Vec<Unexpressible>> {
    let mut problems = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        problems.push(Unexpressible::new(
            "type",
            "",
            format!("{provider} needs the arguments' schema to have type \"object\" at the root"),
        ));
    }
    for keyword in ["oneOf", "anyOf", "allOf", "not", "enum"] {
        if schema.get(keyword).is_some() {
            problems.push(Unexpressible::new(
                keyword,
                "",
                format!(
                    "{provider} refuses {keyword} at the root of the arguments' schema; describe the alternatives as properties (checked by the canonical schema when the call comes back), or split the tool"
                ),
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The most characters Anthropic takes in an argument name.
const ANTHROPIC_MAX_ARGUMENT: usize = 64;

/// Whether Anthropic takes `name` as an argument name: `^[a-zA-Z0-9_.-]{1,64}$` (all ASCII,
/// so bytes are characters).
fn anthropic_argument_name(name: &str) -> bool {
    (1..=ANTHROPIC_MAX_ARGUMENT).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The top-level argument names Anthropic refuses. The Messages API (and Claude behind
/// Bedrock's Converse) checks the keys of `input_schema.properties` against
/// `^[a-zA-Z0-9_.-]{1,64}$` and answers the whole request with a 400 (`Property keys should
/// match pattern …`), so one such tool would break every tool sent with it. Nested objects'
/// keys are not checked by the API, so they are not here either. The way out is a rename; the
/// suggestion is the name transliterated to ASCII with every other character made `_`, unless
/// the schema already has an argument of that name.
/// Every array schema in `schema` (at `ptr`) without `items`: OpenAI refuses such a tool even
/// outside strict mode ("array schema missing items", the whole request), where JSON Schema
/// reads it as an array of anything.
fn arrays_without_items(schema: &Value, ptr: &str, out: &mut Vec<Unexpressible>) {
    let Value::Object(map) = schema else {
        return;
    };
    let is_array = match map.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
        _ => false,
    };
    if is_array && !map.contains_key("items") {
        out.push(Unexpressible::new(
            "items",
            ptr,
            "OpenAI needs `items` on every array, and this one has none (any items); add \
                `items` saying what the array holds",
        ));
    }
    let join = crate::base::pointer::join;
    for (key, value) in map {
        let here = join(ptr, key);
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(schemas) = value {
                    for (name, sub) in schemas {
                        arrays_without_items(sub, &join(&here, name), out);
                    }
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(schemas) = value {
                    for (i, sub) in schemas.iter().enumerate() {
                        arrays_without_items(sub, &join(&here, &i.to_string()), out);
                    }
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => {
                arrays_without_items(value, &here, out);
            }
            _ => {}
        }
    }
}

fn anthropic_argument_names(schema: &Value) -> Vec<Unexpressible> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .keys()
        .filter(|name| !anthropic_argument_name(name))
        .map(|name| {
            let suggestion: String = crate::catalog::names::ascii(name)
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-') {
                        b as char
                    } else {
                        '_'
                    }
                })
                .take(ANTHROPIC_MAX_ARGUMENT)
                .collect();
            let example = if suggestion.is_empty() || properties.contains_key(&suggestion) {
                String::new()
            } else {
                format!(" (such as '{suggestion}')")
            };
            Unexpressible::new(
                "properties",
                crate::base::pointer::join("/properties", name),
                format!(
                    "the argument name '{name}' does not match ^[a-zA-Z0-9_.-]{{1,64}}$, which \
                        Anthropic requires (one such tool makes it refuse the whole request); \
                        rename the argument{example}"
                ),
            )
        })
        .collect()
}

/// Anthropic takes JSON Schema draft 2020-12 only, and answers anything else with a 400.
fn draft_2020_12(schema: &Value) -> Vec<Unexpressible> {
    let meta = jsonschema::draft202012::meta::validator();
    meta.iter_errors(schema)
        .map(|error| {
            // The failing value is a keyword's (`/properties/x/type`): name that keyword and
            // point at the schema holding it, as the other checks do.
            let full = error.instance_path().as_str().to_owned();
            // An entry of a keyword's array (`/required/0`) is that keyword's fault.
            let mut at = full.as_str();
            while let Some((parent, last)) = at.rsplit_once('/')
                && !last.is_empty()
                && last.bytes().all(|b| b.is_ascii_digit())
            {
                at = parent;
            }
            let at = at.to_owned();
            // The last token is a keyword unless it is an array index or a name under
            // `properties`/`$defs` (then the meta-schema's keyword says what failed).
            let holder = |parent: &str| {
                let key = parent.rsplit('/').next().unwrap_or_default();
                [
                    "properties",
                    "$defs",
                    "definitions",
                    "patternProperties",
                    "dependentSchemas",
                ]
                .contains(&key)
            };
            let (pointer, keyword) = match at.rsplit_once('/') {
                Some((parent, last)) if !holder(parent) => {
                    (parent.to_owned(), crate::base::pointer::unescape(last))
                }
                _ => (full.clone(), error.kind().keyword().to_owned()),
            };
            Unexpressible::new(
                keyword,
                pointer,
                format!("not valid JSON Schema draft 2020-12, which Anthropic requires: {error}"),
            )
        })
        .collect()
}

/// MCP annotations: the tool's own, else what its HTTP method says (GET/HEAD read-only and
/// idempotent; PUT/DELETE destructive and idempotent; POST and PATCH not read-only, with
/// `destructiveHint` left to MCP's default, true). `safe: true` adds `destructiveHint: false`;
/// a tool `pick` holds unsafe ([`Tool::is_safe`](crate::catalog::model::Tool::is_safe)) is
/// never shown as read-only or harmless, whatever its own annotations say. So OPTIONS, which
/// the method table reads as read-only, comes out idempotent but not read-only: `is_safe`
/// makes only GET and HEAD safe (unless the tool says `safe: true`).
/// A native tool that says nothing gets none: MCP's defaults (destructive, open world) are
/// the cautious reading.
fn mcp_annotations(tool: &ToolEntry) -> Option<Value> {
    let mut hints = hints_of(tool)?;
    // Never harmless-looking where `pick` would hide the tool (an OPTIONS call, or a tool
    // whose own annotations say read-only while its `safe` says no).
    if !tool.tool.is_safe() {
        hints["readOnlyHint"] = false.into();
        if let Some(map) = hints.as_object_mut()
            && map.get("destructiveHint") == Some(&Value::Bool(false))
        {
            map.remove("destructiveHint");
        }
    }
    Some(hints)
}

fn hints_of(tool: &ToolEntry) -> Option<Value> {
    if let Some(own) = tool.doc.get("annotations") {
        return Some(own.clone());
    }
    let by_method = match tool.tool.kind {
        ToolType::Http => tool.tool.http_impl().map(|http| match http.method.as_str() {
            "GET" | "HEAD" | "OPTIONS" => {
                json!({ "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true })
            }
            "PUT" | "DELETE" => {
                json!({ "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true })
            }
            _ => json!({ "readOnlyHint": false, "idempotentHint": false }),
        }),
        ToolType::Native | ToolType::Go | ToolType::Mcp => None,
    };
    match (tool.tool.safe, by_method) {
        (Some(false), hints) => Some(hints.unwrap_or_else(|| json!({}))),
        (Some(true), hints) => {
            let mut hints = hints.unwrap_or_else(|| json!({}));
            hints["destructiveHint"] = false.into();
            Some(hints)
        }
        (None, hints) => hints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draft_errors_name_the_keyword_and_the_schema_holding_it() {
        let found = |schema: Value| -> Vec<(String, String)> {
            draft_2020_12(&schema)
                .into_iter()
                .map(|p| (p.keyword, p.pointer))
                .collect()
        };
        let bad_type = json!({ "type": "object", "properties": { "x": { "type": "strnig" } } });
        assert!(found(bad_type).contains(&("type".into(), "/properties/x".into())));
        let bad_required = json!({ "type": "object", "required": [1] });
        assert_eq!(
            found(bad_required),
            [("required".to_owned(), String::new())]
        );
        let bad_property = found(json!({ "type": "object", "properties": { "a": 5 } }));
        assert!(
            bad_property
                .iter()
                .all(|(_, pointer)| pointer == "/properties/a"),
            "{bad_property:?}"
        );
    }
}
