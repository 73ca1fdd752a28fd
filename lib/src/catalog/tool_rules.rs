//! The rules of one `tool.json` that need more than its typed view: its JSON Schemas are valid
//! and usable (patterns compile, no remote `$ref`). An HTTP tool's templates (every
//! `${placeholder}` an argument or a declared secret, …) are checked by [`super::templates`].
//!
//! An HTTP tool's `extractExpr` is parsed here too ([`extractor`]): `invoke` uses the parse
//! this module checks, so a file `tool put` accepts never fails every call on it.
//!
//! [`check`] is the one entry point: [`Tool::check`](super::model::Tool::check) runs it, so
//! `tool put`, `tool new`, `bundle import`, `validate` and the index (which lists a hand-edited
//! file that breaks a rule as unavailable, with the reason) all apply the same rules. A new
//! rule about one tool document goes here.

use super::error::Violation;
use super::model::{HttpImpl, Tool};
use crate::base::pointer::join as pointer_join;
use crate::base::schema_build::{self, build_error};
use serde_json::Value;

/// Every rule of this module on `tool` and its document. (The rules of an HTTP tool's
/// templates, placeholders included, are [`super::templates::check`], which `Tool::check`
/// runs too.)
pub fn check(_tool: &Tool, doc: &Value, out: &mut Vec<Violation>) {
    check_schemas(doc, out);
}

/// `argSchema` and `outputSchema`, when present, must be usable JSON Schemas. Run on the raw
/// document, so `validate` can say it of a file whose typed view does not read.
pub fn check_schemas(doc: &Value, out: &mut Vec<Violation>) {
    for field in ["argSchema", "outputSchema"] {
        if let Some(schema) = doc.get(field) {
            check_json_schema(schema, &format!("/{field}"), out);
        }
    }
}

/// A schema must be JSON Schema (checked against its meta-schema), use no remote `$ref`, and
/// compile (patterns are regular expressions, …). Compiling checks the meta-schema too, so a
/// schema that compiles is valid; only one that does not is checked again, for every error
/// the meta-schema finds rather than compiling's first.
fn check_json_schema(schema: &Value, at: &str, out: &mut Vec<Violation>) {
    if !(schema.is_object() || schema.is_boolean()) {
        return; // The tool's schema says so.
    }
    let note =
        |pointer: String, message: String| Violation::new(pointer, message).rule("arg-schema");
    let before = out.len();
    remote_refs(schema, at, out);
    if out.len() > before {
        return; // Compiling would fetch them.
    }
    let Err(compiled) = compile(schema) else {
        return;
    };
    match jsonschema::meta::validator_for(schema) {
        Err(e) => out.push(note(
            format!("{at}/$schema"),
            format!("not a JSON Schema dialect toolctl knows: {e}"),
        )),
        Ok(meta) => {
            for error in meta.iter_errors(schema) {
                out.push(note(
                    format!("{at}{}", error.instance_path().as_str()),
                    format!("not valid JSON Schema: {error}"),
                ));
            }
        }
    }
    if out.len() == before {
        out.push(note(
            format!("{at}{}", compiled.schema_path().as_str()),
            format!("not a usable JSON Schema: {}", build_error(&compiled)),
        ));
    }
}

/// Compile `schema`, or say that an identical one compiled before in this process.
///
/// Compiling is most of what checking a tool costs, and a catalog repeats schemas: the
/// versions of one tool, the tools an import or a template made. The memo holds the
/// [`schema_build::key`] of every schema that compiled, up to [`COMPILED_MAX`] of them, then
/// starts again.
fn compile(schema: &Value) -> Result<(), jsonschema::ValidationError<'static>> {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static COMPILED: Mutex<Option<HashSet<[u8; 32]>>> = Mutex::new(None);
    let Some(key) = schema_build::key(schema) else {
        return jsonschema::options().build(schema).map(drop);
    };
    let known = |memo: &mut Option<HashSet<[u8; 32]>>| memo.get_or_insert_default().contains(&key);
    if COMPILED.lock().is_ok_and(|mut memo| known(&mut memo)) {
        return Ok(());
    }
    jsonschema::options().build(schema)?;
    if let Ok(mut memo) = COMPILED.lock() {
        let memo = memo.get_or_insert_default();
        if memo.len() >= COMPILED_MAX {
            memo.clear();
        }
        memo.insert(key);
    }
    Ok(())
}

/// How many compiled schemas [`compile`] remembers (32 bytes each).
const COMPILED_MAX: usize = 100_000;

/// A `$ref` outside the schema would be fetched (or fail) when a call is checked.
fn remote_refs(schema: &Value, at: &str, out: &mut Vec<Violation>) {
    match schema {
        Value::Object(fields) => {
            for (key, value) in fields {
                match (key.as_str(), value) {
                    ("$ref" | "$dynamicRef", Value::String(target)) if !target.starts_with('#') => {
                        out.push(
                            Violation::new(
                                pointer_join(at, key),
                                format!(
                                    "{key} '{target}' points outside the schema; toolctl never fetches schemas: put the definition in $defs and use '#/$defs/…'"
                                ),
                            )
                            .rule("remote-ref"),
                        );
                    }
                    // Values of these keywords are data, not schemas.
                    ("const" | "enum" | "default" | "examples" | "example", _) => {}
                    (_, Value::Object(_) | Value::Array(_)) => {
                        remote_refs(value, &pointer_join(at, key), out);
                    }
                    _ => {}
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if item.is_object() || item.is_array() {
                    remote_refs(item, &format!("{at}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}

/// What an HTTP tool's response must become, read from its `extractExpr`.
#[derive(Debug)]
pub enum Extract {
    /// No `extractExpr` (or an empty one): the response as it is.
    None,
    /// An expression starting with `$`: a JSONPath (RFC 9535) over the JSON response.
    Path(serde_json_path::JsonPath),
    /// Any other expression: a regular expression over the response's text.
    Regex(regex::Regex),
}

/// Parse `http`'s `extractExpr`; the error says why it is not a JSONPath or a regex. The one
/// parse `tool put`, `validate` and `invoke` share.
pub fn extractor(http: &HttpImpl) -> Result<Extract, String> {
    Ok(match http.extract_expr.as_deref() {
        None | Some("") => Extract::None,
        Some(expr) if expr.starts_with('$') => Extract::Path(
            serde_json_path::JsonPath::parse(expr)
                .map_err(|e| format!("extractExpr '{expr}' is not a JSONPath: {e}"))?,
        ),
        Some(expr) => Extract::Regex(regex::Regex::new(expr).map_err(|e| {
            format!(
                "extractExpr '{}' is not a regex: {}",
                schema_build::shorten(expr),
                schema_build::regex_error(expr, &e)
            )
        })?),
    })
}

/// `impl.extractExpr` must parse ([`extractor`]).
pub fn check_extract(http: &HttpImpl, out: &mut Vec<Violation>) {
    if let Err(message) = extractor(http) {
        out.push(Violation::new("/impl/extractExpr", message).rule("extract"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(doc: &Value) -> Vec<(String, String)> {
        let mut out = Vec::new();
        check_schemas(doc, &mut out);
        out.into_iter().map(|v| (v.pointer, v.message)).collect()
    }

    #[test]
    fn a_schema_checked_again_gets_the_same_answer() {
        let good = json!({ "argSchema": {
            "type": "object",
            "properties": { "q": { "type": "string", "pattern": "^[a-z]+$" } },
        } });
        let bad = json!({ "outputSchema": {
            "type": "object",
            "properties": { "q": { "type": "string", "pattern": "([a-z]" } },
        } });
        let remote = json!({ "argSchema": { "$ref": "https://example.com/s.json" } });
        for _ in 0..2 {
            assert!(problems(&good).is_empty());
            let found = problems(&bad);
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(found[0].0.starts_with("/outputSchema"), "{found:?}");
            assert_eq!(problems(&remote)[0].0, "/argSchema/$ref");
        }
        // The same schema under another field is the same schema.
        let moved = json!({ "argSchema": bad["outputSchema"] });
        assert!(problems(&moved)[0].0.starts_with("/argSchema"));
    }
}
