//! `pick`: the few right tools for a task, as the seed's `pickTools` does it.
//!
//! 1. The candidates are the [`Lineup`]'s usable tools (one version per slug); unsafe ones
//!    ([`Tool::is_safe`](crate::catalog::model::Tool::is_safe)) are left out unless allowed.
//! 2. A scorer gives each a score in 0..1:
//!    - `keyword` (default): token overlap with name, description and tags ([`keyword`]);
//!    - `bm25`: the search index's ranking ([`crate::index`]), mapped into 0..1 by tier so
//!      its order is the search order: name prefix 0.75–1, whole words 0.5–0.75, typos
//!      0.25–0.5, some words 0–0.25, each band filled by `bm25 / (bm25 + 10)`;
//!    - `embed`: cosine similarity of embeddings from an OpenAI-compatible endpoint ([`embed`]);
//!    - `hybrid`: `0.4 × keyword + 0.6 × embed`, the seed's weights;
//!    - `llm`: a chat model chooses from the names ([`llm`]); the tool it lists first scores 1,
//!      the others less by their place (`1 − i / 2n`). On any failure of the model the keyword
//!      scorer answers instead and the provenance says why.
//! 3. Tools under the minimum score are dropped; the rest are ranked by score (ties: the
//!    registration order, `createdAt`) and the first `max` returned.
//!
//! With a time limit, a scorer that runs past it is abandoned and the first `max` candidates
//! in registration order are returned instead, marked as such (the seed's fallback).

pub mod embed;
pub mod keyword;
pub mod llm;

use crate::catalog::Catalog;
use crate::index::{self, Index, SearchRequest, Tier};
use crate::provider::lineup::{Lineup, Member};
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
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
#[derive(Clone)]
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

/// Everything but the key: a debug print must not leak it.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("timeout", &self.timeout)
            .finish()
    }
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

/// The scorers of `pick --scorer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scorer {
    Keyword,
    Bm25,
    Hybrid,
    Embed,
    Llm,
}

impl Scorer {
    pub const ALL: [Self; 5] = [
        Self::Keyword,
        Self::Bm25,
        Self::Hybrid,
        Self::Embed,
        Self::Llm,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keyword => "keyword",
            Self::Bm25 => "bm25",
            Self::Hybrid => "hybrid",
            Self::Embed => "embed",
            Self::Llm => "llm",
        }
    }
}

impl std::str::FromStr for Scorer {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|s| s.as_str()).collect();
                format!("unknown scorer '{text}'; one of: {}", names.join(", "))
            })
    }
}

/// The seed's defaults.
pub const DEFAULT_MAX: usize = 3;
pub const DEFAULT_MIN_SCORE: f64 = 0.05;
/// The most tools one pick returns: OpenAI's limit for one request.
pub const MAX_PICKS: usize = 128;
/// Texts per embeddings request unless configured.
pub const DEFAULT_EMBED_BATCH: usize = 64;

/// What to pick.
#[derive(Debug, Clone)]
pub struct PickRequest {
    pub query: String,
    pub max: usize,
    pub min_score: f64,
    pub allow_unsafe: bool,
    pub scorer: Scorer,
    /// The time limit of the whole scoring.
    pub timeout: Option<Duration>,
    /// The embeddings endpoint (`embed`, `hybrid`).
    pub embed: Option<Endpoint>,
    pub embed_batch: usize,
    /// The chat endpoint (`llm`).
    pub llm: Option<Endpoint>,
}

/// One picked tool.
#[derive(Debug, Clone)]
pub struct Picked {
    pub member: Member,
    pub score: f64,
    pub reason: String,
    /// For `--debug`: the scorer and what it saw.
    pub provenance: Value,
}

/// What `pick` found.
#[derive(Debug, Clone)]
pub struct PickOutcome {
    pub picks: Vec<Picked>,
    /// The scorer that gave the scores (`keyword` when `llm` fell back to it).
    pub scorer: Scorer,
    /// Why the requested scorer did not give the result, when it did not.
    pub fallback: Option<String>,
    /// How many tools were considered (usable, and safe unless unsafe ones were allowed).
    pub considered: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum PickError {
    #[error(transparent)]
    Index(#[from] index::Error),
    #[error("{message}")]
    Invalid { message: String, hint: String },
    /// The `embed` endpoint gave no answer (`embed` and `hybrid` have no fallback).
    #[error("the embeddings endpoint failed: {0}")]
    Upstream(String),
}

impl PickRequest {
    /// Refuse a request out of range, or a network scorer without its endpoint.
    pub fn check(&self) -> Result<(), PickError> {
        let invalid = |message: String, hint: &str| {
            Err(PickError::Invalid {
                message,
                hint: hint.to_owned(),
            })
        };
        if self.query.trim().is_empty() {
            return invalid(
                "the task is empty".to_owned(),
                "say what the tools are for, e.g. `toolctl pick \"weather in Oslo tomorrow\"`",
            );
        }
        if !(1..=MAX_PICKS).contains(&self.max) {
            return invalid(
                format!("--max {} is out of range", self.max),
                "pick 1 to 128 tools (128 is the most OpenAI takes in one request)",
            );
        }
        if !(0.0..=1.0).contains(&self.min_score) {
            return invalid(
                format!("--min-score {} is out of range", self.min_score),
                "scores are between 0 and 1",
            );
        }
        let needs = |endpoint: &Option<Endpoint>, what: &str, flag: &str| {
            if endpoint.is_none() {
                invalid(
                    format!("the {} scorer needs {what} endpoint", self.scorer.as_str()),
                    &format!(
                        "set pick.{flag}.baseUrl and model in toolctl.json, or pass --{flag}-url and --{flag}-model"
                    ),
                )
            } else {
                Ok(())
            }
        };
        match self.scorer {
            Scorer::Embed | Scorer::Hybrid => needs(&self.embed, "an embeddings", "embed"),
            Scorer::Llm => needs(&self.llm, "a chat", "llm"),
            Scorer::Keyword | Scorer::Bm25 => Ok(()),
        }
    }
}

/// A scorer's verdict on one candidate.
#[derive(Debug, Clone)]
pub struct Scored {
    /// 0..=1.
    pub score: f64,
    /// For people; `{name}` stands for the tool's exported name.
    pub reason: String,
    /// The scorer's provenance; `null` for a keyword non-match (built when shown).
    pub details: Value,
}

/// Pick tools for `request.query` from the catalog.
pub fn pick(
    catalog: &Catalog,
    index: &Index,
    request: &PickRequest,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PickOutcome, PickError> {
    request.check()?;
    let started = Instant::now();
    // Without a time limit, a network scorer is still bounded by its endpoint's timeout.
    let deadline = started + request.timeout.unwrap_or(Duration::from_secs(24 * 3600));
    let needs_text = matches!(request.scorer, Scorer::Embed | Scorer::Hybrid | Scorer::Llm);
    let lineup = Lineup::read(index, needs_text)?;
    let candidates: Vec<Member> = lineup
        .members
        .into_iter()
        .filter(|m| m.is_usable() && (request.allow_unsafe || m.row.safe))
        .collect();
    let considered = candidates.len();
    let state_dir = catalog.root().join(crate::catalog::STATE_DIR);

    let Scoring {
        scored,
        scorer,
        mut fallback,
    } = score(&state_dir, index, request, &candidates, deadline, progress)?;
    let timed_out = |fallback: &mut Option<String>| {
        let limit = request.timeout.unwrap_or_default().as_millis();
        *fallback = Some(format!(
            "scoring ran past --timeout-ms {limit}; the first tools in registration order instead"
        ));
    };
    let scored = match scored {
        Ok(scored) if Instant::now() <= deadline => scored,
        Ok(_) | Err(ScorerError::Deadline) => {
            timed_out(&mut fallback);
            return Ok(PickOutcome {
                picks: registration_order(candidates, request.max),
                scorer,
                fallback,
                considered,
            });
        }
        Err(failure) => return Err(PickError::Upstream(failure.to_string())),
    };

    let mut ranked: Vec<(usize, Scored)> = scored
        .into_iter()
        .enumerate()
        .filter(|(_, s)| s.score >= request.min_score)
        .collect();
    // Highest score first; equal scores in registration order (the candidates' order).
    ranked.sort_by(|(i, a), (j, b)| b.score.total_cmp(&a.score).then(i.cmp(j)));
    ranked.truncate(request.max);
    let mut slots: Vec<Option<Member>> = candidates.into_iter().map(Some).collect();
    let picks = ranked
        .into_iter()
        .filter_map(|(i, s)| {
            let member = slots[i].take()?;
            // The keyword scorer leaves the details of tools without a match to be written
            // here, for the few shown.
            let details = if s.details.is_null() {
                no_keyword_details(&request.query)
            } else {
                s.details
            };
            Some(Picked {
                score: round(s.score),
                reason: s.reason.replace("{name}", &member.name),
                provenance: json!({ "scorer": scorer.as_str(), "details": details }),
                member,
            })
        })
        .collect();
    Ok(PickOutcome {
        picks,
        scorer,
        fallback,
        considered,
    })
}

/// What a scorer made of the candidates.
#[derive(Debug)]
pub struct Scoring {
    /// One verdict per candidate, in their order; the scorer's failure (the deadline passed,
    /// the endpoint failed) otherwise. `llm` falls back to `keyword` instead of failing.
    pub scored: Result<Vec<Scored>, ScorerError>,
    /// The scorer that gave the scores.
    pub scorer: Scorer,
    /// Why the requested scorer did not give the result, when it did not.
    pub fallback: Option<String>,
}

/// Score `candidates` for `request.query` with `request.scorer`.
pub fn score(
    state_dir: &std::path::Path,
    index: &Index,
    request: &PickRequest,
    candidates: &[Member],
    deadline: Instant,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Scoring, PickError> {
    let mut scorer = request.scorer;
    let mut fallback = None;
    let scored = match request.scorer {
        Scorer::Keyword => Ok(keyword_scores(index, &request.query, candidates)?),
        Scorer::Bm25 => Ok(bm25_scores(index, &request.query, candidates)?),
        Scorer::Embed => {
            embed_scores(state_dir, request, candidates, deadline, progress).map(|scores| {
                scores
                    .into_iter()
                    .map(|s| Scored {
                        score: s,
                        reason: "semantic similarity (embeddings)".to_owned(),
                        details: json!({ "cosine": round(s) }),
                    })
                    .collect()
            })
        }
        Scorer::Hybrid => {
            let keyword = keyword_scores(index, &request.query, candidates)?;
            embed_scores(state_dir, request, candidates, deadline, progress).map(|semantic| {
                keyword
                    .into_iter()
                    .zip(semantic)
                    .map(|(k, s)| Scored {
                        score: 0.4 * k.score + 0.6 * s,
                        reason: "hybrid (keyword + semantic)".to_owned(),
                        details: json!({
                            "weights": { "keyword": 0.4, "semantic": 0.6 },
                            "subScores": { "keyword": round(k.score), "semantic": round(s) },
                            "keyword": if k.details.is_null() {
                                no_keyword_details(&request.query)
                            } else {
                                k.details
                            },
                        }),
                    })
                    .collect()
            })
        }
        Scorer::Llm => match llm_scores(state_dir, request, candidates, deadline) {
            Err(ScorerError::Deadline) => Err(ScorerError::Deadline),
            Err(failure) => {
                scorer = Scorer::Keyword;
                let reason = format!("the llm scorer failed ({failure}); keyword scores instead");
                let mut scores = keyword_scores(index, &request.query, candidates)?;
                for s in &mut scores {
                    s.details = json!({ "fallback": reason, "keyword": s.details });
                }
                fallback = Some(reason);
                Ok(scores)
            }
            ok => ok,
        },
    };
    Ok(Scoring {
        scored,
        scorer,
        fallback,
    })
}

/// The keyword provenance of a tool that shares no word with the task.
fn no_keyword_details(query: &str) -> Value {
    json!({ "queryTokens": keyword::tokens(query), "matchedTerms": [] })
}

fn round(score: f64) -> f64 {
    (score * 10_000.0).round() / 10_000.0
}

/// The seed's timeout fallback: the first `max` candidates in registration order.
fn registration_order(candidates: Vec<Member>, max: usize) -> Vec<Picked> {
    candidates
        .into_iter()
        .take(max)
        .enumerate()
        .map(|(i, member)| Picked {
            member,
            score: 0.0,
            reason: "time limit reached: registration order".to_owned(),
            provenance: json!({ "scorer": "registration-order", "details": { "position": i + 1 } }),
        })
        .collect()
}

fn keyword_scores(index: &Index, query: &str, candidates: &[Member]) -> index::Result<Vec<Scored>> {
    let tokens = keyword::tokens(query);
    let found = keyword::scores(index, &tokens)?;
    Ok(candidates
        .iter()
        .map(|m| match found.get(&m.row.id) {
            Some(k) => Scored {
                score: k.score,
                reason: format!(
                    "matched keywords in {{name}}: {}",
                    k.terms(&tokens).join(", ")
                ),
                details: k.details(&tokens),
            },
            // Most of a large catalog: nothing built per tool that is not shown.
            None => Scored {
                score: 0.0,
                reason: "no keyword in common".to_owned(),
                details: Value::Null,
            },
        })
        .collect())
}

/// Scores from the search index's ranking; see the module comment for the mapping.
fn bm25_scores(index: &Index, query: &str, candidates: &[Member]) -> index::Result<Vec<Scored>> {
    let by_path: HashMap<&str, usize> = candidates
        .iter()
        .enumerate()
        .map(|(i, m)| (m.row.path.as_str(), i))
        .collect();
    let mut scored: Vec<Option<Scored>> = (0..candidates.len()).map(|_| None).collect();
    let request = SearchRequest {
        query: query.to_owned(),
        ..SearchRequest::default()
    };
    let mut token = None;
    loop {
        let page = index.search(
            &request,
            crate::catalog::page::MAX_PAGE_SIZE,
            token.as_deref(),
        )?;
        for hit in &page.hits {
            let Some(&i) = by_path.get(hit.path.as_str()) else {
                continue;
            };
            if scored[i].is_some() {
                continue;
            }
            let band = match hit.tier {
                Tier::Prefix => 0.75,
                Tier::WholeWord => 0.5,
                Tier::Fuzzy => 0.25,
                Tier::SomeWords => 0.0,
            };
            let relevance = hit.score.max(0.0);
            scored[i] = Some(Scored {
                score: band + 0.25 * relevance / (relevance + 10.0),
                reason: format!("search match ({}): {}", hit.tier.label(), hit.why),
                details: json!({ "tier": hit.tier, "bm25": round(hit.score), "why": hit.why }),
            });
        }
        match page.next_page_token {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    Ok(scored
        .into_iter()
        .map(|s| {
            s.unwrap_or_else(|| Scored {
                score: 0.0,
                reason: "no search match".to_owned(),
                details: json!({}),
            })
        })
        .collect())
}

/// A candidate as the network scorers see it.
fn candidate(member: &Member) -> Candidate {
    let text = [
        member.row.text.name.as_str(),
        member.row.text.description.as_str(),
        member.row.text.tags.as_str(),
    ]
    .iter()
    .filter(|t| !t.is_empty())
    .copied()
    .collect::<Vec<_>>()
    .join(" ");
    let content_hash = hex(&Sha256::digest(text.as_bytes()));
    Candidate {
        name: member.name.clone(),
        reference: member.reference(),
        text,
        content_hash,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn embed_scores(
    state_dir: &std::path::Path,
    request: &PickRequest,
    candidates: &[Member],
    deadline: Instant,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<f64>, ScorerError> {
    let Some(endpoint) = &request.embed else {
        return Err(ScorerError::Upstream("no embeddings endpoint".to_owned()));
    };
    let candidates: Vec<Candidate> = candidates.iter().map(candidate).collect();
    embed::scores(
        state_dir,
        endpoint,
        &request.query,
        &candidates,
        request.embed_batch,
        deadline,
        progress,
    )
}

fn llm_scores(
    state_dir: &std::path::Path,
    request: &PickRequest,
    members: &[Member],
    deadline: Instant,
) -> Result<Vec<Scored>, ScorerError> {
    let Some(endpoint) = &request.llm else {
        return Err(ScorerError::Upstream("no chat endpoint".to_owned()));
    };
    let candidates: Vec<Candidate> = members.iter().map(candidate).collect();
    // The catalog as the model sees it: names and what they stand for. Any change to a tool's
    // words or to the set of tools is another fingerprint, so a cached choice is never reused
    // for a catalog it was not made for.
    let mut fingerprint = Sha256::new();
    for c in &candidates {
        fingerprint.update(c.name.as_bytes());
        fingerprint.update([0]);
        fingerprint.update(c.content_hash.as_bytes());
        fingerprint.update([0]);
    }
    let fingerprint = hex(&fingerprint.finalize());
    let selection = llm::select(
        state_dir,
        endpoint,
        &request.query,
        &candidates,
        request.max,
        &fingerprint,
        deadline,
    )?;
    let n = selection.names.len().max(1) as f64;
    let place: HashMap<&str, usize> = selection
        .names
        .iter()
        .enumerate()
        .map(|(i, name)| (name.as_str(), i))
        .collect();
    Ok(candidates
        .iter()
        .map(|c| match place.get(c.name.as_str()) {
            Some(&i) => Scored {
                score: 1.0 - i as f64 / (2.0 * n),
                reason: format!("chosen by {} (place {})", endpoint.model, i + 1),
                details: json!({
                    "model": endpoint.model,
                    "place": i + 1,
                    "cached": selection.cached,
                    "reply": selection.raw_reply,
                }),
            },
            None => Scored {
                score: 0.0,
                reason: format!("not chosen by {}", endpoint.model),
                details: json!({ "model": endpoint.model, "cached": selection.cached }),
            },
        })
        .collect())
}
