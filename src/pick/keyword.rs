//! The `keyword` scorer (the seed's default): token overlap between the task and a tool's
//! name, description and tags.
//!
//! The task is cut into the index's query tokens (stop words and lone letters left out unless
//! the task holds nothing else). A token counts when it is a word of one of the tool's fields, compared as the
//! search index compares words (case and diacritics folded, English stems: "forecasts" =
//! "forecast"). The score is the share of tokens found, each weighted by the best field it
//! was found in — name 1.0, tags 0.8, description 0.6 — so it stays in 0..1 and a tool whose
//! name says what the task asks for comes before one whose description mentions it. It is
//! deterministic: the same catalog and task always give the same scores.
//!
//! The words are looked up in the full-text index (one query per token and field), so the
//! cost follows the number of matches, not the size of the catalog.

use crate::index::{self, Field, Index, text};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Field weights; see the module comment.
const FIELDS: [(Field, &str, f64); 3] = [
    (Field::Name, "name", 1.0),
    (Field::Tags, "tags", 0.8),
    (Field::Description, "description", 0.6),
];

/// The score of one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct KeywordScore {
    pub score: f64,
    /// Tokens found, per field (name, tags, description).
    pub matched: [Vec<String>; 3],
}

impl KeywordScore {
    /// The tokens found anywhere, in task order.
    pub fn terms(&self, tokens: &[String]) -> Vec<String> {
        tokens
            .iter()
            .filter(|t| self.matched.iter().any(|m| m.contains(t)))
            .cloned()
            .collect()
    }

    /// Provenance for `--debug`.
    pub fn details(&self, tokens: &[String]) -> Value {
        let sub = |i: usize| {
            let weight = FIELDS[i].2;
            (self.matched[i].len() as f64 * weight / tokens.len().max(1) as f64 * 1000.0).round()
                / 1000.0
        };
        json!({
            "queryTokens": tokens,
            "matchedTerms": self.terms(tokens),
            "matched": {
                "name": self.matched[0],
                "tags": self.matched[1],
                "description": self.matched[2],
            },
            "fieldWeights": { "name": FIELDS[0].2, "tags": FIELDS[1].2, "description": FIELDS[2].2 },
            "subScores": { "name": sub(0), "tags": sub(1), "description": sub(2) },
        })
    }
}

/// The tokens the keyword scorer looks for in `task`.
pub fn tokens(task: &str) -> Vec<String> {
    // A lone letter ("s" of "what's") says nothing about a tool.
    let all: Vec<String> = text::query_tokens(task)
        .into_iter()
        .filter(|t| t.chars().count() > 1 || t.chars().all(|c| c.is_numeric()))
        .collect();
    let content: Vec<String> = all
        .iter()
        .filter(|t| !text::is_stop_word(t))
        .cloned()
        .collect();
    if content.is_empty() { all } else { content }
}

/// The score of every tool (by index row id) that holds at least one token; the others score 0.
pub fn scores(index: &Index, tokens: &[String]) -> index::Result<HashMap<i64, KeywordScore>> {
    let mut found: HashMap<i64, KeywordScore> = HashMap::new();
    for token in tokens {
        for (f, (field, _, _)) in FIELDS.iter().enumerate() {
            for id in index.tools_with_word(*field, token)? {
                let entry = found.entry(id).or_insert_with(|| KeywordScore {
                    score: 0.0,
                    matched: Default::default(),
                });
                entry.matched[f].push(token.clone());
            }
        }
    }
    let count = tokens.len().max(1) as f64;
    for score in found.values_mut() {
        let total: f64 = tokens
            .iter()
            .map(|t| {
                FIELDS
                    .iter()
                    .enumerate()
                    .filter(|(f, _)| score.matched[*f].contains(t))
                    .map(|(_, (_, _, weight))| *weight)
                    .fold(0.0, f64::max)
            })
            .sum();
        score.score = total / count;
    }
    Ok(found)
}
