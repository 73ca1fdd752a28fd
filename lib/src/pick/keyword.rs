//! The `keyword` scorer (the first default, now `bm25`'s runner-up): token overlap between
//! the task and a tool's fields, each word weighed by its rarity.
//!
//! The task is cut into its content words ([`text::content_tokens`]: no stop words, chat
//! phrasing, pure numbers or lone letters, each word once; all its tokens when it holds
//! nothing else). A word counts when it is a word of one of the tool's fields, compared as
//! the search index compares words (case and diacritics folded, English stems: "forecasts" =
//! "forecast"). The score is the share of the task's information found: each word weighs its
//! IDF (`ln(1 + (N − n + 0.5) / (n + 0.5))` for a word `n` of the `N` tools hold, so "the
//! city" counts less than "forecast"), times the best field it was found in — name 1.0, tags
//! 0.8, argument names 0.7, description 0.6, argument descriptions and values 0.5 — over the
//! sum of the words' IDF. So it stays in 0..1, and a tool whose name says what the task asks
//! for comes before one whose description mentions it. It is deterministic: the same catalog
//! and task always give the same scores.
//!
//! The words are looked up in the full-text index (one query per token and field), so the
//! cost follows the number of matches, not the size of the catalog.

use crate::index::{self, Field, Index, text};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// Field weights; see the module comment.
const FIELDS: [(Field, &str, f64); 6] = [
    (Field::Name, "name", 1.0),
    (Field::Tags, "tags", 0.8),
    (Field::ArgNames, "argumentNames", 0.7),
    (Field::Description, "description", 0.6),
    (Field::ArgText, "argumentDescriptions", 0.5),
    (Field::ArgValues, "argumentValues", 0.5),
];

/// The score of one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct KeywordScore {
    pub score: f64,
    /// Tokens found, per field (in [`FIELDS`] order).
    pub matched: [Vec<String>; 6],
}

/// The task's tokens and what each weighs.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    pub tokens: Vec<String>,
    /// The IDF of each token, in `tokens` order.
    pub idf: Vec<f64>,
}

impl Weights {
    fn total(&self) -> f64 {
        self.idf.iter().sum()
    }
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
    pub fn details(&self, weights: &Weights) -> Value {
        let total = weights.total().max(f64::MIN_POSITIVE);
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        let mut matched = serde_json::Map::new();
        let mut field_weights = serde_json::Map::new();
        let mut sub_scores = serde_json::Map::new();
        for (f, (_, label, weight)) in FIELDS.iter().enumerate() {
            matched.insert((*label).to_owned(), json!(self.matched[f]));
            field_weights.insert((*label).to_owned(), json!(weight));
            let idf: f64 = weights
                .tokens
                .iter()
                .zip(&weights.idf)
                .filter(|(t, _)| self.matched[f].contains(t))
                .map(|(_, idf)| idf)
                .sum();
            sub_scores.insert((*label).to_owned(), json!(round(idf * weight / total)));
        }
        json!({
            "queryTokens": weights.tokens,
            "idf": weights.idf.iter().map(|x| round(*x)).collect::<Vec<_>>(),
            "matchedTerms": self.terms(&weights.tokens),
            "matched": matched,
            "fieldWeights": field_weights,
            "subScores": sub_scores,
        })
    }
}

/// The tokens the keyword scorer looks for in `task`: its content words. A task of stop
/// words, numbers and lone letters alone ("the", "do it", "42") says nothing of what it is
/// about, so it has none (`pick` then matches it against tools' names alone).
pub fn tokens(task: &str) -> Vec<String> {
    text::content_tokens(task)
}

/// The score of every tool (by index row id) that holds at least one token, and the tokens'
/// weights; the other tools score 0.
pub fn scores(
    index: &Index,
    tokens: &[String],
) -> index::Result<(Weights, HashMap<i64, KeywordScore>)> {
    let mut found: HashMap<i64, KeywordScore> = HashMap::new();
    let tools = index.fts_rows()?;
    let mut idf = Vec::with_capacity(tokens.len());
    for token in tokens {
        let mut holders = HashSet::new();
        for (f, (field, _, _)) in FIELDS.iter().enumerate() {
            for id in index.tools_with_word(*field, token)? {
                holders.insert(id);
                let entry = found.entry(id).or_insert_with(|| KeywordScore {
                    score: 0.0,
                    matched: Default::default(),
                });
                entry.matched[f].push(token.clone());
            }
        }
        idf.push(index::idf(tools, holders.len() as i64));
    }
    let weights = Weights {
        tokens: tokens.to_vec(),
        idf,
    };
    let total = weights.total().max(f64::MIN_POSITIVE);
    for score in found.values_mut() {
        let sum: f64 = tokens
            .iter()
            .zip(&weights.idf)
            .map(|(t, idf)| {
                let best = FIELDS
                    .iter()
                    .enumerate()
                    .filter(|(f, _)| score.matched[*f].contains(t))
                    .map(|(_, (_, _, weight))| *weight)
                    .fold(0.0, f64::max);
                best * idf
            })
            .sum();
        score.score = (sum / total).clamp(0.0, 1.0);
    }
    Ok((weights, found))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_the_content_words() {
        assert_eq!(
            tokens("please find 3 hotels in Paris"),
            ["find", "hotels", "paris"]
        );
        // Nothing but stop words: nothing to look for (before, every word, so "the" matched
        // every tool that holds it).
        assert!(tokens("what is it").is_empty());
    }
}
