//! OpenAI strict mode: a transformed copy of a schema (being written).

use super::Unexpressible;
use serde_json::Value;

/// The strict-mode view of `schema`, or everything that keeps it from having one.
pub fn openai_strict(schema: &Value) -> Result<Value, Vec<Unexpressible>> {
    Ok(schema.clone())
}
