//! The bottom layer: small pieces every other layer may use and that know nothing of the
//! catalog — stable error codes, time, and the shared plumbing (redaction, the state-database
//! opener, the HTTP client builder).

pub mod capped;
pub mod error_code;
pub mod http;
pub mod pointer;
pub mod redact;
pub mod same_json;
pub mod schema_build;
pub mod secrets;
pub mod state_db;
pub mod suggest;
pub mod syntax;
pub mod time;

/// The causes of an error, outermost first: its `source()`, then that one's, and so on (the
/// error itself not included). Every report of a chain walks it with this.
pub fn causes<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(error.source(), |e| e.source())
}

/// What kind of JSON value `value` is, with its article, for a message ("must be an object,
/// and is a string").
pub fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
