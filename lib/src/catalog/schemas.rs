//! The JSON Schemas of `toolctl.json`, `bundle.json` and `tool.json`.
//!
//! They live in the repository (`schemas/*.schema.json`, where editors and other tools can use
//! them), are compiled into the binary, printed by `toolctl schema`, and used by `validate`.
//! They state the shape of each file; what a schema cannot say (folders, hosts, duplicates,
//! placeholders, the order of timestamps) `validate` checks in code. A test runs every fixture
//! through both the schemas and the store's own checks and requires them to agree.

use crate::catalog::Violation;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;
use std::sync::LazyLock;

/// Which file a schema is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `toolctl.json`
    Config,
    /// `bundle.json`
    Bundle,
    /// `tool.json`
    Tool,
}

impl Kind {
    pub const ALL: [Self; 3] = [Self::Config, Self::Bundle, Self::Tool];

    /// The name `toolctl schema` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::Bundle => "bundle",
            Self::Tool => "tool",
        }
    }

    /// The schema's file name in `schemas/`.
    pub fn file_name(self) -> &'static str {
        match self {
            Self::Config => "toolctl.schema.json",
            Self::Bundle => "bundle.schema.json",
            Self::Tool => "tool.schema.json",
        }
    }

    /// The schema, as kept in the repository.
    pub fn text(self) -> &'static str {
        match self {
            Self::Config => include_str!("../../../schemas/toolctl.schema.json"),
            Self::Bundle => include_str!("../../../schemas/bundle.schema.json"),
            Self::Tool => include_str!("../../../schemas/tool.schema.json"),
        }
    }

    /// The schema as a document.
    pub fn document(self) -> &'static Value {
        &compiled(self).0
    }

    /// The top-level fields the schema names (others are kept, and `validate` warns of them).
    pub fn known_fields(self) -> impl Iterator<Item = &'static str> {
        self.document()
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|properties| properties.keys().map(String::as_str))
    }
}

type Compiled = (Value, jsonschema::Validator);

#[allow(
    clippy::expect_used,
    reason = "the schemas are part of the binary; a unit test compiles each"
)]
fn compile(kind: Kind) -> Compiled {
    let document: Value = serde_json::from_str(kind.text()).expect("an embedded schema parses");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&document)
        .expect("an embedded schema compiles");
    (document, validator)
}

fn compiled(kind: Kind) -> &'static Compiled {
    static CONFIG: LazyLock<Compiled> = LazyLock::new(|| compile(Kind::Config));
    static BUNDLE: LazyLock<Compiled> = LazyLock::new(|| compile(Kind::Bundle));
    static TOOL: LazyLock<Compiled> = LazyLock::new(|| compile(Kind::Tool));
    match kind {
        Kind::Config => &CONFIG,
        Kind::Bundle => &BUNDLE,
        Kind::Tool => &TOOL,
    }
}

/// `text` is a date-time as the schemas' `"format": "date-time"` reads it (RFC 3339: seconds
/// and an offset required), so the store's typed timestamps, which read more, take no more
/// than `validate` does (the fuzzer found `2024-10-14T15:30Z` taken by one, refused by the other).
#[allow(clippy::expect_used, reason = "a literal schema; a unit test runs it")]
pub fn is_date_time(text: &str) -> bool {
    static DATE_TIME: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
        jsonschema::options()
            .should_validate_formats(true)
            .build(&serde_json::json!({ "type": "string", "format": "date-time" }))
            .expect("a literal schema compiles")
    });
    DATE_TIME.is_valid(&Value::from(text))
}

/// Every way `doc` breaks the schema of `kind`, each at the JSON pointer of the value at fault
/// (a missing field: where it should be).
pub fn violations(kind: Kind, doc: &Value) -> Vec<Violation> {
    compiled(kind)
        .1
        .iter_errors(doc)
        .map(|error| {
            let at = error.instance_path().as_str().to_owned();
            match error.kind() {
                ValidationErrorKind::Required { property } => {
                    let name = property.as_str().unwrap_or_default();
                    let message = if kind == Kind::Tool
                        && matches!(name, "allowNoSchema" | "noSchemaMode")
                    {
                        // Required only because argSchema is missing (the schema's if/then).
                        format!("required field '{name}' is missing: a tool without argSchema needs allowNoSchema: true and a noSchemaMode")
                    } else {
                        format!("required field '{name}' is missing")
                    };
                    Violation::new(
                        crate::base::pointer::join(&at, name),
                        message,
                    )
                }
                _ => Violation::new(at, error.to_string()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_times_are_rfc_3339() {
        assert!(is_date_time("2026-01-31T12:00:00Z"));
        assert!(is_date_time("2026-01-31T12:00:00.123+02:00"));
        assert!(!is_date_time("2024-10-14T15:30Z"), "seconds are required");
        assert!(
            !is_date_time("2026-01-31T12:00:00"),
            "an offset is required"
        );
        assert!(!is_date_time("yesterday"));
    }
    use serde_json::json;

    #[test]
    fn every_schema_compiles_and_is_valid_2020_12() {
        for kind in Kind::ALL {
            let document = kind.document();
            assert!(jsonschema::meta::is_valid(document), "{}", kind.name());
            assert_eq!(
                document["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
            assert!(
                kind.known_fields().any(|f| f == "$schema"),
                "{}",
                kind.name()
            );
        }
    }

    #[test]
    fn a_missing_field_is_reported_where_it_belongs() {
        let found = violations(Kind::Bundle, &json!({ "slug": "x" }));
        let pointers: Vec<&str> = found.iter().map(|v| v.pointer.as_str()).collect();
        assert_eq!(pointers, ["/bundleID", "/createdAt", "/modifiedAt"]);
        assert_eq!(found[0].message, "required field 'bundleID' is missing");
    }

    #[test]
    fn slugs_follow_the_store_rules() {
        let bundle = |slug: &str| {
            json!({ "bundleID": "0190a000-0000-7000-8000-000000000000", "slug": slug,
                    "createdAt": "2024-01-01T00:00:00Z", "modifiedAt": "2024-01-01T00:00:00Z" })
        };
        for good in ["météo", "天気", "a-1"] {
            assert!(violations(Kind::Bundle, &bundle(good)).is_empty(), "{good}");
        }
        let long = "a".repeat(65);
        for bad in ["a_b", "a.b", "", long.as_str(), "builtin"] {
            assert!(!violations(Kind::Bundle, &bundle(bad)).is_empty(), "{bad}");
        }
    }
}
