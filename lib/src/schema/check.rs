//! JSON Schema checks of a call's arguments and of a tool's output (`invoke` runs them and
//! turns a [`CompileError`] or the listed [`SchemaError`]s into its failures).
//!
//! Schemas are compiled with the `jsonschema` crate (a process keeps the last
//! [`COMPILED_KEPT`] it compiled, by [`schema_build::key`], so the calls of a batch or a server
//! to one tool compile its schemas once), built without its remote
//! resolving features (`resolve-http`, `resolve-file`): a `$ref` to anything outside the schema
//! is a compile error, never a fetch. Every error is listed with the JSON pointer of the value
//! that failed and the keyword that failed it, so a model (or a person) can fix the call.

use crate::base::schema_build::{self, build_error};
use serde_json::Value;
#[cfg(test)]
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

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
#[derive(Debug, Clone)]
pub struct Schema(Arc<jsonschema::Validator>);

/// How many compiled schemas a process keeps (then it starts again).
pub const COMPILED_KEPT: usize = 256;

/// A schema's compile in this process: empty until the first to need it has compiled it;
/// `None` when it does not compile.
type Kept = OnceLock<Option<Schema>>;

/// The schemas compiled in this process, by [`schema_build::key`].
static COMPILED: Mutex<Option<HashMap<[u8; 32], Arc<Kept>>>> = Mutex::new(None);

impl Schema {
    /// Compile `schema` (or take the same schema compiled before); `what` names it in errors
    /// ("argSchema", "outputSchema"). Calls that need one schema at once (a batch's calls to
    /// one tool) wait for the first of them to compile it.
    pub fn compile(schema: &Value, what: &str) -> Result<Self, CompileError> {
        let Some(key) = schema_build::key(schema) else {
            return Self::build(schema, what);
        };
        let cell = {
            let mut all = COMPILED
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let all = all.get_or_insert_default();
            if all.len() >= COMPILED_KEPT && !all.contains_key(&key) {
                all.clear();
            }
            Arc::clone(all.entry(key).or_default())
        };
        match cell.get_or_init(|| Self::build(schema, what).ok()) {
            Some(kept) => Ok(kept.clone()),
            // Compiled again for its error, which names `what`: rare, and never kept.
            None => Self::build(schema, what),
        }
    }

    fn build(schema: &Value, what: &str) -> Result<Self, CompileError> {
        jsonschema::options()
            .build(schema)
            .map(|validator| Self(Arc::new(validator)))
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
    fn a_schema_compiled_again_is_the_one_kept_and_a_bad_one_is_refused_each_time() {
        let schema = json!({ "type": "object", "required": ["kept"] });
        let first = Schema::compile(&schema, "argSchema").unwrap();
        let again = Schema::compile(&schema.clone(), "outputSchema").unwrap();
        assert!(Arc::ptr_eq(&first.0, &again.0));
        assert_eq!(again.errors(&json!({}))[0].keyword, "required");
        let bad = json!({ "type": "object", "properties": { "a": { "pattern": "(" } } });
        for what in ["argSchema", "outputSchema"] {
            let failure = Schema::compile(&bad, what).unwrap_err();
            assert_eq!(failure.schema, what);
            assert!(failure.message.starts_with(&format!("the tool's {what}")));
        }
        // Needed at once by many calls, a schema is compiled by the first of them only.
        let shared = json!({ "type": "object", "required": ["compiled_once"] });
        let all: Vec<Schema> = std::thread::scope(|threads| {
            let started: Vec<_> = (0..8)
                .map(|_| threads.spawn(|| Schema::compile(&shared, "argSchema").unwrap()))
                .collect();
            started.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert!(all.iter().all(|s| Arc::ptr_eq(&s.0, &all[0].0)));
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
