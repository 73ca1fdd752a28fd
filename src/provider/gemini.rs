//! Gemini's OpenAPI 3.0 schema subset: a transformed copy of a schema (being written).

use super::Unexpressible;
use serde_json::Value;

/// The Gemini view of `schema`, or everything that keeps it from having one.
pub fn gemini_schema(schema: &Value) -> Result<Value, Vec<Unexpressible>> {
    Ok(schema.clone())
}
