//! The `fused` scorer, the default: for a task that reads like a sentence, its BM25F relevance
//! ([`crate::index`]) fused with how close it is in meaning to each tool under the built-in
//! model ([`crate::index::static_model`], each tool's vector stored in the index,
//! [`crate::index::vectors`]). Both are min-max normalised over every tool of the catalog and
//! weighed `FUSED_LEXICAL_WEIGHT × lexical + (1 − FUSED_LEXICAL_WEIGHT) × semantic`
//! ([`fuse`](super::fuse), as `hybrid` fuses an endpoint's embeddings). Words find the tools that
//! name what a task asks for; meaning finds those that say it otherwise ("forecast" for
//! "weather", "send" for "email"), and ranks among the many tools a common word matches.
//!
//! A name-like task ("get_weather", "weather") is ranked by `bm25`'s tiers alone, as `search`
//! ranks it: there the name is the signal. So is any task when the model holds none of its
//! words.
//!
//! Cost: the request is embedded in-process (microseconds) and compared with every stored
//! vector (a read of 260 bytes per tool and a dot product), so a pick reads the whole vector
//! table, about 2.6 MB at 10,000 tools; the lexical side is `bm25`'s own.

use super::{Scored, fuse, relevance_score, round};
use crate::index::{self, Hit, Index, Tiers};
use serde_json::json;
use std::collections::HashMap;

/// The lexical share of `fused`'s fusion (the semantic one is the rest), measured on the ten
/// development splits (`bench/quality.py`, docs/QUALITY.md): from 0.2 to 0.8, 0.7 gives the
/// best mean Recall@5 of both sets (BFCL 0.939, NESTFUL 0.751) with Recall@1 above `bm25`'s on
/// each; 0.4, `hybrid`'s weight with MiniLM, loses 0.13 on NESTFUL's glaive and sgd, whose
/// requests ask for several tools at once.
pub const FUSED_LEXICAL_WEIGHT: f64 = 0.7;

/// The cosine under which closeness in meaning says nothing: static embeddings put most texts
/// close (`bench/attach_scores.py`: among the first 10 tools of a 10,000-tool catalog with no
/// right one, the best cosine is 0.49 at p10 and 0.63 at the median; a right tool's is 0.69 at
/// the median). A tool that shares no word with a sentence is a candidate only above it, so an
/// unrelated task matches nothing, and the absolute score ([`absolute_fused`]) counts only what
/// a cosine has above it.
pub const SEMANTIC_FLOOR: f64 = 0.5;

/// One tool's parts of its fused score.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Parts {
    /// The fused score, 0..1 (1: the best of the catalog on both sides).
    fused: f64,
    /// BM25F relevance (0 without a word of the task).
    relevance: f64,
    /// Cosine with the task under the built-in model (`None`: the tool has no vector).
    cosine: Option<f64>,
}

/// A sentence's fused scores of every tool.
#[derive(Debug)]
pub struct Fused {
    tiers: Tiers,
    scale: f64,
    weight: f64,
    scores: HashMap<i64, Parts>,
    /// The lexical hits of the rows settled, for their reasons.
    hits: HashMap<i64, Hit>,
}

impl Fused {
    /// The fused scores of `tiers` (a planned `query`) with lexical weight `weight`; `tiers`
    /// back when the query is name-like or the model holds none of its words.
    pub fn new(
        index: &Index,
        tiers: Tiers,
        query: &str,
        weight: f64,
    ) -> index::Result<Result<Self, Tiers>> {
        let (Some(scale), Some(relevance)) = (tiers.relevance_scale(), tiers.relevance()) else {
            return Ok(Err(tiers));
        };
        let parts = parts(query);
        let Some(cosines) = index.similarity(&parts)? else {
            return Ok(Err(tiers));
        };
        // Every tool with a vector (ordered by row), then those with words of the task alone.
        let with_vector = |id: &i64| cosines.binary_search_by_key(id, |(row, _)| *row).is_ok();
        let mut ids: Vec<i64> = Vec::with_capacity(cosines.len() + relevance.len());
        ids.extend(cosines.iter().map(|(id, _)| *id));
        ids.extend(relevance.keys().filter(|id| !with_vector(id)));
        let lexical: Vec<f64> = ids
            .iter()
            .map(|id| relevance.get(id).copied().unwrap_or(0.0))
            .collect();
        // A tool without a vector counts as the least similar.
        let least = cosines
            .iter()
            .map(|(_, c)| *c)
            .fold(f64::INFINITY, f64::min);
        let cosine = |at: usize| cosines.get(at).map(|(_, c)| *c);
        let semantic: Vec<f64> = (0..ids.len())
            .map(|at| cosine(at).unwrap_or(least))
            .collect();
        let fused = fuse(&lexical, &semantic, weight);
        // Sized once: growing a table of thousands of rows costs more in fresh pages than in
        // copies.
        let mut scores = HashMap::with_capacity(ids.len());
        scores.extend(
            ids.iter()
                .zip(lexical.iter().zip(fused))
                .enumerate()
                .map(|(at, (id, (relevance, fused)))| {
                    let parts = Parts {
                        fused,
                        relevance: *relevance,
                        cosine: cosine(at),
                    };
                    (*id, parts)
                })
                .filter(|(_, p)| {
                    p.relevance > 0.0 || p.cosine.is_some_and(|c| c >= SEMANTIC_FLOOR)
                }),
        );
        Ok(Ok(Self {
            tiers,
            scale,
            weight,
            scores,
            hits: HashMap::new(),
        }))
    }

    pub fn tiers(&self) -> &Tiers {
        &self.tiers
    }

    pub fn into_tiers(self) -> Tiers {
        self.tiers
    }

    /// The rows with a score.
    pub fn ids(&self) -> impl Iterator<Item = i64> + '_ {
        self.scores.keys().copied()
    }

    /// The fused score of row `id` (0 for a row without one).
    pub fn score(&self, id: i64) -> f64 {
        self.scores.get(&id).map_or(0.0, |p| p.fused)
    }

    /// Row `id`'s score on a scale that is the same for every task ([`absolute_fused`]).
    pub fn absolute(&self, id: i64) -> f64 {
        self.scores.get(&id).map_or(0.0, |p| {
            absolute_fused(
                relevance_score(p.relevance, self.scale),
                p.cosine,
                self.weight,
            )
        })
    }

    /// For `search`: its first `n` hits by fused score, best first (equal scores by row), each
    /// with its fused score: the tools that hold a word of the task and that its filters let
    /// through, read in growing batches of the fused order.
    pub fn best_hits(&self, index: &Index, n: usize) -> index::Result<Vec<Hit>> {
        let Some(relevance) = self.tiers.relevance() else {
            return Ok(Vec::new());
        };
        let mut order: Vec<(f64, i64)> =
            relevance.keys().map(|id| (self.score(*id), *id)).collect();
        order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut found: Vec<Hit> = Vec::new();
        let (mut start, mut batch) = (0, 64);
        while found.len() < n && start < order.len() {
            let end = (start + batch).min(order.len());
            let ids: Vec<i64> = order[start..end].iter().map(|(_, id)| *id).collect();
            let mut hits = index.sentence_hits(&self.tiers, &ids)?;
            for hit in &mut hits {
                hit.score = self.score(hit.id);
            }
            hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
            found.extend(hits);
            (start, batch) = (end, batch * 4);
        }
        found.truncate(n);
        Ok(found)
    }

    /// Read the lexical hits of rows `ids` not read yet, for their reasons.
    pub fn settle(&mut self, index: &Index, ids: &[i64]) -> index::Result<()> {
        let unknown: Vec<i64> = ids
            .iter()
            .copied()
            .filter(|id| !self.hits.contains_key(id))
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        for hit in index.sentence_hits(&self.tiers, &unknown)? {
            self.hits.insert(hit.id, hit);
        }
        Ok(())
    }

    /// The verdict on row `id`, with its reason and provenance.
    pub fn verdict(&self, id: i64) -> Scored {
        let Some(p) = self.scores.get(&id) else {
            return Scored {
                score: 0.0,
                reason: "no search match, no vector".to_owned(),
                details: json!({}),
            };
        };
        let lexical = relevance_score(p.relevance, self.scale);
        let meaning = match p.cosine {
            Some(c) => format!("similar in meaning (cosine {:.2})", c),
            None => "no vector".to_owned(),
        };
        let hit = self.hits.get(&id).filter(|h| h.score > 0.0);
        let reason = match hit {
            Some(hit) => format!("search match: {}; {meaning}", hit.why),
            None => format!("{meaning}; no search match"),
        };
        Scored {
            score: p.fused,
            reason,
            details: json!({
                "weights": { "lexical": self.weight, "semantic": round(1.0 - self.weight) },
                "subScores": { "lexical": round(lexical), "semantic": p.cosine.map(round) },
                "absolute": round(absolute_fused(lexical, p.cosine, self.weight)),
                "lexical": hit.map(|h| json!({ "tier": h.tier, "bm25": round(h.score), "why": h.why })),
                "model": index::static_model::MODEL_ID,
            }),
        }
    }
}

/// A task as its meaning is compared: the whole, then each of its clauses when it has more
/// than one (of two content words or more) — its sentences and comma-separated parts, and the
/// steps "and", "then", "after that", "finally" begin.
/// A task that asks for several things ("find the song's lyrics, then convert the price to
/// euros") is an average of them as a whole, close to none; each clause is close to its own
/// tool.
fn parts(task: &str) -> Vec<&str> {
    let mut parts = vec![task];
    let mut clauses: Vec<&str> = Vec::new();
    for sentence in sentences(task) {
        clauses.extend(steps(sentence));
    }
    clauses.retain(|c| crate::index::text::content_tokens(c).len() >= 2);
    if clauses.len() > 1 {
        parts.extend(clauses);
    }
    parts
}

/// `text` cut after each `.`, `!`, `?`, `;` or `,` that ends a sentence or a part of one
/// (followed by whitespace or the end: "1.7" and "a.b@c.com" stay whole) and at each line
/// break.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next_blank = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if c == '\n' || (matches!(c, '.' | '!' | '?' | ';' | ',') && next_blank) {
            out.push(&text[start..at]);
            start = at + c.len_utf8();
        }
    }
    out.push(&text[start..]);
    out.retain(|s| !s.trim().is_empty());
    out
}

/// The words that begin a new step of a task.
const STEP_WORDS: [&str; 6] = [
    "and then",
    "after that",
    "afterwards",
    "finally",
    "then",
    "and",
];

/// `sentence` cut before each of [`STEP_WORDS`] (as whole words, any case).
fn steps(sentence: &str) -> Vec<&str> {
    // ASCII lower case keeps every byte where it was.
    let lower = sentence.to_ascii_lowercase();
    let mut out = Vec::new();
    let (mut start, mut before) = (0, None::<char>);
    for (at, c) in lower.char_indices() {
        let begins_word = c.is_alphanumeric() && !before.is_some_and(char::is_alphanumeric);
        before = Some(c);
        if !begins_word || at == start {
            continue;
        }
        let rest = &lower[at..];
        let step = STEP_WORDS
            .iter()
            .any(|w| rest.starts_with(w) && !rest[w.len()..].starts_with(char::is_alphanumeric));
        if step {
            out.push(&sentence[start..at]);
            start = at;
        }
    }
    out.push(&sentence[start..]);
    out
}

/// `fused`'s score of one tool on a scale that is the same for every task (what `attach`'s
/// `min_score` is compared with): the fusion's weights over the two scores unnormalised,
/// `weight × lexical + (1 − weight) × semantic`, where the lexical score is `bm25`'s absolute
/// 0..1 ([`relevance_score`]) and the semantic one the cosine's part above
/// [`SEMANTIC_FLOOR`], `(cosine − floor) / (1 − floor)` (0 under it or without a vector).
/// Min-max normalisation makes the best tool of every task score 1, however poor a match it
/// is; this does not.
pub fn absolute_fused(lexical: f64, cosine: Option<f64>, weight: f64) -> f64 {
    let semantic = cosine.map_or(0.0, |c| (c - SEMANTIC_FLOOR) / (1.0 - SEMANTIC_FLOOR));
    weight * lexical.clamp(0.0, 1.0) + (1.0 - weight) * semantic.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_of_several_steps_is_compared_clause_by_clause() {
        let task = "Find the lyrics of 'Bohemian Rhapsody'. Then convert 1.5 USD to EUR, \
                    and then send it to a.b@c.com; finally record audio for 10 seconds";
        assert_eq!(
            parts(task),
            [
                task,
                "Find the lyrics of 'Bohemian Rhapsody'",
                "Then convert 1.5 USD to EUR",
                "then send it to a.b@c.com",
                "finally record audio for 10 seconds",
            ]
        );
    }

    #[test]
    fn a_task_of_one_step_is_compared_whole() {
        for task in [
            "what is the weather in Paris",
            "strengthen the authentication of 1.7 users",
            "get the weather. Thanks!",
            "",
        ] {
            assert_eq!(parts(task), [task], "{task}");
        }
    }
}
