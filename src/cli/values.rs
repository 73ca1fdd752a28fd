//! The flags whose values are a closed set the library defines (`--provider`, `--emit`,
//! `--scorer`, `--mode`), as clap `ValueEnum`s: `--help` lists the values with what each means,
//! completions offer them, and a bad value is clap's "invalid value … [possible values: …]" with
//! a "did you mean" when one is close.
//!
//! The library stays free of clap: each enum here names the library type's values, converts into
//! it, and a test checks that both list the same values under the same names. Arguments keep the
//! library type (`value_parser = values::provider()`), so commands never see these enums.

use clap::ValueEnum;
use clap::builder::{EnumValueParser, TypedValueParser};
use toolctl_lib::mcp::serve::Mode;
use toolctl_lib::pick::Scorer;
use toolctl_lib::provider::Provider;

/// `--provider` / `--emit`: a provider's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderName {
    /// OpenAI Chat Completions (tools as {"type":"function","function":{…}})
    Openai,
    /// OpenAI Responses API (flat {"type":"function","name",…})
    OpenaiResponses,
    /// Anthropic Messages ({"name","description","input_schema"})
    Anthropic,
    /// Ollama /api/chat (the OpenAI Chat shape)
    Ollama,
    /// Gemini functionDeclarations entries
    Gemini,
    /// MCP tools/list entries
    Mcp,
}

impl From<ProviderName> for Provider {
    fn from(name: ProviderName) -> Self {
        match name {
            ProviderName::Openai => Self::Openai,
            ProviderName::OpenaiResponses => Self::OpenaiResponses,
            ProviderName::Anthropic => Self::Anthropic,
            ProviderName::Ollama => Self::Ollama,
            ProviderName::Gemini => Self::Gemini,
            ProviderName::Mcp => Self::Mcp,
        }
    }
}

/// `--scorer`: how `pick` and `attach` score tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScorerName {
    /// Words of the task found in the tool's name, description and tags
    Keyword,
    /// The search index's relevance (BM25F) alone
    Bm25,
    /// bm25 fused with the built-in semantic model, offline (the default)
    Fused,
    /// bm25 and embed together (needs an embeddings endpoint)
    Hybrid,
    /// Cosine similarity of embeddings (needs an embeddings endpoint)
    Embed,
    /// A chat model chooses from the tools' names (needs a chat endpoint)
    Llm,
}

impl From<ScorerName> for Scorer {
    fn from(name: ScorerName) -> Self {
        match name {
            ScorerName::Keyword => Self::Keyword,
            ScorerName::Bm25 => Self::Bm25,
            ScorerName::Fused => Self::Fused,
            ScorerName::Hybrid => Self::Hybrid,
            ScorerName::Embed => Self::Embed,
            ScorerName::Llm => Self::Llm,
        }
    }
}

/// `mcp serve --mode`: what the client is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeName {
    /// Every tool up to 64, search above
    Auto,
    /// Every tool
    All,
    /// Two tools: search_tools and call_tool
    Search,
}

impl From<ModeName> for Mode {
    fn from(name: ModeName) -> Self {
        match name {
            ModeName::Auto => Self::Auto,
            ModeName::All => Self::All,
            ModeName::Search => Self::Search,
        }
    }
}

/// The value parser of `--provider` and `--emit`.
pub fn provider() -> impl TypedValueParser<Value = Provider> {
    EnumValueParser::<ProviderName>::new().map(Provider::from)
}

/// The value parser of `--scorer`.
pub fn scorer() -> impl TypedValueParser<Value = Scorer> {
    EnumValueParser::<ScorerName>::new().map(Scorer::from)
}

/// The value parser of `mcp serve --mode`.
pub fn mode() -> impl TypedValueParser<Value = Mode> {
    EnumValueParser::<ModeName>::new().map(Mode::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name clap accepts for a value.
    fn name(value: &impl ValueEnum) -> String {
        value.to_possible_value().unwrap().get_name().to_owned()
    }

    /// Each enum names every value of the library's type, under the library's own name (what
    /// JSON and messages say), and converts to that value.
    #[test]
    fn the_enums_name_the_library_values() {
        let providers: Vec<(String, Provider)> = ProviderName::value_variants()
            .iter()
            .map(|v| (name(v), Provider::from(*v)))
            .collect();
        let library: Vec<(String, Provider)> = Provider::ALL
            .iter()
            .map(|p| (p.as_str().to_owned(), *p))
            .collect();
        assert_eq!(providers, library);

        let scorers: Vec<(String, Scorer)> = ScorerName::value_variants()
            .iter()
            .map(|v| (name(v), Scorer::from(*v)))
            .collect();
        let library: Vec<(String, Scorer)> = Scorer::ALL
            .iter()
            .map(|s| (s.as_str().to_owned(), *s))
            .collect();
        assert_eq!(scorers, library);

        for mode in ModeName::value_variants() {
            assert_eq!(name(mode).parse::<Mode>(), Ok(Mode::from(*mode)));
        }
        assert_eq!(ModeName::value_variants().len(), 3);
    }
}
