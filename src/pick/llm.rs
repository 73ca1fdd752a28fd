//! The `llm` scorer (being written).
