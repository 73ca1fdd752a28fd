//! Schema analysis below the provider views: what OpenAI strict mode ([`strict`]) and Gemini's
//! OpenAPI subset ([`gemini`]) can express of a tool's JSON Schema, and how a strict-mode
//! model's "not given" nulls are read back ([`strict::drop_unset_nulls`]), and the checks of a
//! value against a schema ([`check`]: a call's arguments, a tool's output).
//!
//! Nothing here knows of tools or providers' wire formats; `provider` builds its views on it and
//! `invoke` uses the null handling.

pub mod check;
pub mod gemini;
pub mod strict;

use serde::Serialize;

/// Something in a schema a provider view cannot express with the same meaning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unexpressible {
    /// The JSON Schema keyword at fault (`patternProperties`, `$ref`, `format`, …).
    pub keyword: String,
    /// Where it is in the canonical schema, as a JSON pointer (`""` for the root).
    pub pointer: String,
    /// What is wrong, in a sentence a user can act on.
    pub message: String,
}

impl Unexpressible {
    pub fn new(
        keyword: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            keyword: keyword.into(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Unexpressible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "the root"
        } else {
            &self.pointer
        };
        write!(f, "{} at {at}: {}", self.keyword, self.message)
    }
}
