//! JSON Schema checks of a call's arguments and of a tool's output (`invoke` runs them and
//! turns a [`CompileError`] or the listed [`SchemaError`]s into its failures).
//!
//! Schemas are compiled once per call with the `jsonschema` crate, built without its remote
//! resolving features (`resolve-http`, `resolve-file`): a `$ref` to anything outside the schema
//! is a compile error, never a fetch. Every error is listed with the JSON pointer of the value
//! that failed and the keyword that failed it, so a model (or a person) can fix the call.

use crate::base::schema_build::build_error;
use serde_json::Value;
#[cfg(test)]
use serde_json::json;

/// A schema that does not compile: what is wrong, and where in the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// Which schema ("argSchema", "outputSchema").
    pub schema: String,
    /// "the tool's argSchema is not a usable JSON Schema: …".
    pub message: String,
    /// JSON pointer into the schema.
    pub pointer: String,
}

/// One reason a value does not match its schema.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SchemaError {
    /// JSON pointer into the checked value ("" for the value itself).
    pub pointer: String,
    /// The schema keyword that failed (`required`, `type`, `additionalProperties`, …).
    pub keyword: String,
    pub message: String,
}

/// A compiled schema.
#[derive(Debug)]
pub struct Schema(jsonschema::Validator);

impl Schema {
    /// Compile `schema`; `what` names it in errors ("argSchema", "outputSchema").
    pub fn compile(schema: &Value, what: &str) -> Result<Self, CompileError> {
        jsonschema::options()
            .build(schema)
            .map(Self)
            .map_err(|e| CompileError {
                schema: what.to_owned(),
                message: format!(
                    "the tool's {what} is not a usable JSON Schema: {}",
                    build_error(&e)
                ),
                pointer: e.schema_path().as_str().to_owned(),
            })
    }

    /// Every way `value` breaks the schema (empty when it matches).
    pub fn errors(&self, value: &Value) -> Vec<SchemaError> {
        self.0
            .iter_errors(value)
            .map(|e| SchemaError {
                pointer: e.instance_path().as_str().to_owned(),
                keyword: e.kind().keyword().to_owned(),
                message: e.to_string(),
            })
            .collect()
    }
}

/// The message of a failed check of `what` ("the arguments", "the output"): the first error,
/// and how many more there are.
pub fn summary(what: &str, errors: &[SchemaError]) -> String {
    let Some(first) = errors.first() else {
        return format!("{what}: no schema errors");
    };
    let at = if first.pointer.is_empty() {
        String::new()
    } else {
        format!(" at {}", first.pointer)
    };
    let more = match errors.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    format!("schema check of {what} failed{at}: {}{more}", first.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_pointer_and_keyword() {
        let schema = Schema::compile(
            &json!({
                "type": "object",
                "properties": { "city": { "type": "string" }, "days": { "type": "integer", "maximum": 7 } },
                "required": ["city"],
                "additionalProperties": false
            }),
            "argSchema",
        )
        .unwrap();
        let errors = schema.errors(&json!({ "days": 9, "x": 1 }));
        let found: Vec<(&str, &str)> = errors
            .iter()
            .map(|e| (e.pointer.as_str(), e.keyword.as_str()))
            .collect();
        assert!(found.contains(&("", "required")), "{found:?}");
        assert!(found.contains(&("/days", "maximum")), "{found:?}");
        assert!(found.contains(&("", "additionalProperties")), "{found:?}");
        assert!(schema.errors(&json!({ "city": "Oslo" })).is_empty());
    }

    #[test]
    fn a_remote_ref_is_never_fetched() {
        let failure = Schema::compile(
            &json!({ "$ref": "https://example.com/schema.json" }),
            "argSchema",
        )
        .expect_err("a remote $ref cannot compile without the resolving features");
        assert!(failure.message.contains("argSchema"), "{failure:?}");
    }

    #[test]
    fn local_refs_and_defs_work() {
        let schema = Schema::compile(
            &json!({
                "$defs": { "unit": { "enum": ["c", "f"] } },
                "type": "object",
                "properties": { "unit": { "$ref": "#/$defs/unit" } }
            }),
            "argSchema",
        )
        .unwrap();
        assert!(schema.errors(&json!({ "unit": "c" })).is_empty());
        assert_eq!(schema.errors(&json!({ "unit": "k" }))[0].keyword, "enum");
    }
}
