//! `pick`: the few right tools for a task (being written).

pub mod embed;
pub mod llm;

use std::time::{Duration, Instant};

/// A tool as a scorer sees it.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The exported provider name (`^[a-zA-Z0-9_-]{1,64}$`, unique in the catalog).
    pub name: String,
    /// `bundle/slug@version`.
    pub reference: String,
    /// What the tool is about: slug, display name, description and tags, space separated.
    pub text: String,
    /// Hex SHA-256 of `text`: the key of cached embeddings.
    pub content_hash: String,
}

/// An OpenAI-compatible endpoint (`/v1/embeddings` or `/v1/chat/completions` under `base_url`).
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// E.g. `http://127.0.0.1:11434/v1`; the path (`/embeddings`, `/chat/completions`) is
    /// appended.
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer …` when present. Never printed.
    pub api_key: Option<String>,
    /// The longest one request may take.
    pub timeout: Duration,
}

/// Why a network scorer gave no answer. Messages never hold the API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScorerError {
    /// The pick's overall deadline passed.
    #[error("the scorer ran past the pick's time limit")]
    Deadline,
    /// The endpoint could not be reached, timed out, refused the key or answered nonsense.
    #[error("{0}")]
    Upstream(String),
    /// The cache under `.toolctl/` could not be read or written.
    #[error("{0}")]
    Cache(String),
}

/// The time left before `deadline`, or [`ScorerError::Deadline`].
pub fn time_left(deadline: Instant) -> Result<Duration, ScorerError> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|left| !left.is_zero())
        .ok_or(ScorerError::Deadline)
}
