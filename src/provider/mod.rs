//! What each LLM provider accepts, and the translation of catalog tools into it.
//!
//! The canonical `argSchema` of a tool is never changed. Where a provider takes JSON Schema as
//! it is (OpenAI without strict mode, Anthropic, Ollama, MCP) the schema goes out verbatim, key
//! order and all. Where it does not (OpenAI strict mode, Gemini's OpenAPI subset) the schema
//! sent is a computed copy ([`strict`], [`gemini`]), and whatever the copy cannot say with the
//! same meaning is an [`Unexpressible`] naming the keyword and its JSON pointer — never a
//! silent change. The facts behind each rule are in `PROVIDERS.md` of the project.

pub mod gemini;
pub mod names;
pub mod strict;

use serde::Serialize;

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
