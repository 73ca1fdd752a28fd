//! `pick`: the few right tools for a task.
//!
//! 1. The candidates are the [`DefaultTools`]'s usable tools (one version per slug); unsafe ones
//!    ([`Tool::is_safe`](crate::catalog::model::Tool::is_safe)) are left out unless allowed.
//! 2. A scorer gives each a score in 0..1:
//!    - `keyword`: IDF-weighted word overlap with name, tags, arguments and description
//!      ([`keyword`]);
//!    - `fused` (default): for a sentence, `bm25`'s relevance fused with closeness in meaning
//!      under the built-in model ([`fused`]); a name-like task as `bm25` ranks it;
//!    - `bm25`: the search index's ranking ([`crate::index`]): for a task that
//!      reads like a sentence, BM25F relevance mapped by [`relevance_score`]; for a short
//!      name-like one, the tiers mapped into 0..1 so its order is the search order: name
//!      prefix 0.75–1, whole words 0.5–0.75, typos 0.25–0.5, some words 0–0.25, each band
//!      filled by `bm25 / (bm25 + 10)`;
//!    - `embed`: cosine similarity of embeddings from an OpenAI-compatible endpoint ([`embed`]);
//!    - `hybrid`: `bm25` and `embed` fused, each min-max normalised over the candidates,
//!      `0.4 × lexical + 0.6 × semantic` ([`fuse`]); the lexical run's term shares are kept
//!      for coverage;
//!    - `llm`: a chat model chooses from the names ([`llm`]); the tool it lists first scores 1,
//!      the others less by their place (`1 − i / 2n`). On any failure of the model the keyword
//!      scorer answers instead and the provenance says why.
//! 3. Tools under the minimum score are dropped; the rest are ranked by score (ties: the
//!    registration order, `createdAt`) and the first `max` returned. With `--coverage`, for
//!    `bm25` and `hybrid` and a task that reads like a sentence, the first `max` are chosen
//!    from the 40 best to cover the task's words between them ([`cover`]; for `hybrid`,
//!    BM25F's term shares say what a tool adds, its fused score how relevant it is).
//! 4. With `--siblings`, the first picks lift the tools of their bundle whose names begin with
//!    the same word and that match the request a little, to just below them ([`siblings`]);
//!    then, unless the request says not to, the first picks (of that ranking) bring the tools
//!    their required arguments name, right after them, with their score ([`helpers`]); then
//!    the ranking is cut to `max` again. Which steps run by default, and why:
//!    [`HELPERS_BY_DEFAULT`].
//!
//! With a time limit, a scorer that runs past it is abandoned and the first `max` candidates
//! in registration order are returned instead, marked as such.
//!
//! The local scorers look words up in the index, so they see only the tools that match
//! ([`Matches`]); ranking then asks the index about the best of those alone ([`rank`]), and
//! only the tools shown are read and named. A pick costs what it matches and shows, not the
//! size of the catalog. The network scorers read every candidate's words.
//!
//! About 1,000 lines on purpose: the pick pipeline (candidates, scorer dispatch, fusion, ranking)
//! in one place; each scorer's own code is in its module.

pub mod cover;
pub mod embed;
pub mod endpoints;
pub mod fused;
pub mod helpers;
pub mod keyword;
pub mod llm;
pub mod search;
pub mod siblings;

use crate::catalog::Catalog;
use crate::index::default_tools::{DefaultTool, DefaultTools};
use crate::index::{self, Hit, Index, Registration, SearchRequest, Tier, Tiers, text};
use keyword::KeywordScore;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// A tool as a scorer sees it.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The exported provider name (`^[a-zA-Z0-9_-]{1,64}$`, unique in the catalog).
    pub name: String,
    /// `bundle/slug@version`.
    pub reference: String,
    /// What the tool is about, as it is embedded ([`index::vectors::embedding_text`]).
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
    Fused,
    Hybrid,
    Embed,
    Llm,
}

impl Scorer {
    pub const ALL: [Self; 6] = [
        Self::Keyword,
        Self::Bm25,
        Self::Fused,
        Self::Hybrid,
        Self::Embed,
        Self::Llm,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keyword => "keyword",
            Self::Bm25 => "bm25",
            Self::Fused => "fused",
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

/// Which steps after the ranking run unless a request says otherwise, for `pick`, `search`,
/// `attach` and MCP's `search_tools`.
///
/// A step is on by default only if it lowers neither Recall@5 nor Recall@1 by more than 0.005
/// on any development split (NESTFUL's four, BFCL's six; `bench/quality.py`, figures in
/// docs/QUALITY.md). Helper tools pass. Coverage and sibling tools lift some data sets and
/// lower others (siblings by up to 0.045 Recall@5), so they run only when asked for.
pub const HELPERS_BY_DEFAULT: bool = true;
/// See [`HELPERS_BY_DEFAULT`].
pub const SIBLINGS_BY_DEFAULT: bool = false;
/// See [`HELPERS_BY_DEFAULT`].
pub const COVERAGE_BY_DEFAULT: bool = false;

/// The agent-tools API's defaults.
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
    /// Add the tools the first picks' required arguments name ([`helpers`]).
    pub helpers: bool,
    /// Lift the first picks' siblings: tools of their bundle named alike ([`siblings`]).
    pub siblings: bool,
    /// Choose a sentence's first picks to cover its words between them ([`cover`]).
    pub coverage: bool,
    /// The lexical share of `fused`'s and `hybrid`'s fusion ([`fuse`]), 0..=1; `None`: the
    /// scorer's own ([`fused::FUSED_LEXICAL_WEIGHT`], [`LEXICAL_WEIGHT`]).
    pub lexical_weight: Option<f64>,
    /// The index rows the picks are ranked among (the tools of a filtered list, so that the
    /// best of them are found however the rest of the catalog scores); `None`: every tool.
    pub among: Option<HashSet<i64>>,
}

/// One picked tool.
#[derive(Debug, Clone)]
pub struct Picked {
    pub member: DefaultTool,
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
    pub fallback: Option<Fallback>,
}

/// Why a pick's result is not the requested scorer's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// Scoring ran past the request's time limit (ms): the first tools in registration order
    /// are the picks instead.
    PastTimeLimit { limit_ms: u128 },
    /// The scorer failed and another gave the scores; why, in words.
    Scorer(String),
}

impl std::fmt::Display for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::PastTimeLimit { limit_ms } => write!(
                f,
                "scoring ran past its time limit ({limit_ms} ms); the first tools in registration order instead"
            ),
            Self::Scorer(why) => f.write_str(why),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PickError {
    #[error(transparent)]
    Index(#[from] index::Error),
    /// The request's task is empty.
    #[error("the task is empty")]
    EmptyTask,
    /// The request's number of tools is not in 1..=[`MAX_PICKS`].
    #[error("the number of tools to pick, {max}, is out of range")]
    Max { max: usize },
    /// The request's minimum score is not in 0..=1.
    #[error("the minimum score {min_score} is out of range")]
    MinScore { min_score: f64 },
    /// A network scorer without its endpoint: `endpoint` is its `pick` setting (`embed`,
    /// `llm`).
    #[error("the {} scorer needs {} endpoint", .scorer.as_str(), endpoint_kind(.endpoint))]
    NoEndpoint {
        scorer: Scorer,
        endpoint: &'static str,
    },
    #[error("{message}")]
    Invalid { message: String, hint: String },
    /// The `embed` endpoint gave no answer (`embed` and `hybrid` have no fallback).
    #[error("the embeddings endpoint failed: {0}")]
    Upstream(String),
    /// The secrets file holding an endpoint's key cannot be used.
    #[error(transparent)]
    Secrets(#[from] crate::base::secrets::SecretsError),
}

impl PickError {
    /// The request itself is wrong (the caller's to fix), not the index or an endpoint.
    pub fn is_bad_request(&self) -> bool {
        matches!(
            self,
            Self::EmptyTask
                | Self::Max { .. }
                | Self::MinScore { .. }
                | Self::NoEndpoint { .. }
                | Self::Invalid { .. }
        )
    }
}

/// "an embeddings", "a chat": the kind of endpoint a `pick` setting names.
fn endpoint_kind(endpoint: &str) -> &'static str {
    if endpoint == "llm" {
        "a chat"
    } else {
        "an embeddings"
    }
}

impl PickRequest {
    /// Refuse a request out of range, or a network scorer without its endpoint.
    pub fn check(&self) -> Result<(), PickError> {
        if self.query.trim().is_empty() {
            return Err(PickError::EmptyTask);
        }
        if !(1..=MAX_PICKS).contains(&self.max) {
            return Err(PickError::Max { max: self.max });
        }
        if !(0.0..=1.0).contains(&self.min_score) {
            return Err(PickError::MinScore {
                min_score: self.min_score,
            });
        }
        if let Some(weight) = self.lexical_weight.filter(|w| !(0.0..=1.0).contains(w)) {
            return Err(PickError::Invalid {
                message: format!("the lexical weight {weight} is out of range"),
                hint: "give a weight from 0 (meaning alone) to 1 (words alone)".to_owned(),
            });
        }
        let needs = |endpoint: &Option<Endpoint>, name: &'static str| match endpoint {
            None => Err(PickError::NoEndpoint {
                scorer: self.scorer,
                endpoint: name,
            }),
            Some(_) => Ok(()),
        };
        match self.scorer {
            Scorer::Embed | Scorer::Hybrid => needs(&self.embed, "embed"),
            Scorer::Llm => needs(&self.llm, "llm"),
            Scorer::Keyword | Scorer::Bm25 | Scorer::Fused => Ok(()),
        }
    }
}

/// A scorer's verdict on one candidate.
#[derive(Debug, Clone, Default)]
pub struct Scored {
    /// 0..=1.
    pub score: f64,
    /// For people; `{name}` stands for the tool's exported name.
    pub reason: String,
    /// The scorer's provenance; `null` for a keyword non-match (built when shown).
    pub details: Value,
}

/// A scorer's verdicts, by the index row of each tool, handed to the ranking a score at a
/// time, best first ([`next_group`](Self::next_group)).
#[derive(Debug)]
pub struct Matches {
    verdicts: Verdicts,
    /// `hybrid`'s absolute scores, by index row (see [`absolute_hybrid`]); empty for the
    /// other scorers, whose scores are absolute themselves.
    absolute: HashMap<i64, f64>,
    /// `hybrid`'s lexical run (`bm25`'s tiers), for its terms' shares ([`Self::shares`]):
    /// coverage weighs what a tool adds by BM25F ([`cover::Relevance::Fused`]). `None` for
    /// the other scorers.
    lexical: Option<Tiers>,
    /// Rows with a verdict not yet handed out, in groups of equal score, best first.
    groups: Groups,
}

#[derive(Debug)]
enum Verdicts {
    /// `keyword`: the tools that hold a token of the task; the others score 0.
    Keyword {
        weights: keyword::Weights,
        found: HashMap<i64, KeywordScore>,
    },
    /// `bm25`: the search hits; the others score 0.
    Bm25(Box<Bm25>),
    /// `fused`: a sentence's fused score of every tool.
    Fused(Box<fused::Fused>),
    /// A network scorer: a verdict on every candidate.
    Each(HashMap<i64, Scored>),
}

/// The search index's hits, read a tier at a time: every hit of a tier scores above every hit
/// of the next (its band; bm25 stays far below the 10^16 at which `r / (r + 10)` would round
/// to 1), so the best tools are found without reading the tiers below them, which for a
/// question in plain language ("some words") hold most of the catalog.
#[derive(Debug)]
struct Bm25 {
    tiers: Option<Tiers>,
    /// How many tiers were read whole.
    read: usize,
    /// The hits of those tiers, with their scores.
    hits: HashMap<i64, (f64, Hit)>,
    /// Hits of later tiers read for a few rows only ([`Matches::settle`]).
    settled: HashMap<i64, (f64, Hit)>,
    /// A sentence's relevance tier while it is read.
    relevance: Option<Batches>,
}

/// A sentence's relevance tier while it is read: its tools best first, how many of them were
/// read, and how many the next batch takes.
#[derive(Debug)]
struct Batches {
    order: Vec<(f64, i64)>,
    start: usize,
    batch: usize,
}

impl Bm25 {
    /// The score of a hit; see the module comment for the mapping.
    fn score(hit: &Hit, scale: Option<f64>) -> f64 {
        let relevance = hit.score.max(0.0);
        let band = match hit.tier {
            Tier::Relevance => return relevance_score(relevance, scale.unwrap_or(1.0)),
            Tier::Prefix => 0.75,
            Tier::WholeWord => 0.5,
            Tier::Fuzzy => 0.25,
            Tier::SomeWords => 0.0,
        };
        band + 0.25 * relevance / (relevance + 10.0)
    }

    /// Read the next tier: its new hits, with their scores; `None` after the last. A tier is
    /// read whole, but a sentence's relevance tier, which holds every tool with one of its
    /// words (most of a catalog for a long request), is read best first in growing batches,
    /// each asked of the index's filters, and counts as read after its last batch.
    fn read_tier(&mut self, index: &Index) -> index::Result<Option<Vec<(f64, i64)>>> {
        let Some(tiers) = self.tiers.as_ref().filter(|t| self.read < t.len()) else {
            return Ok(None);
        };
        let tier = self.read;
        if self.relevance.is_none() {
            self.relevance = tiers.relevance_order(tier).map(|order| Batches {
                order,
                start: 0,
                batch: RELEVANCE_BATCH,
            });
        }
        let (only, last) = match &mut self.relevance {
            Some(b) => {
                // A batch ends after a change of relevance, so equal scores are read together.
                let order = &b.order;
                let mut end = (b.start + b.batch).min(order.len());
                while end < order.len() && order[end].0.total_cmp(&order[end - 1].0).is_eq() {
                    end += 1;
                }
                let ids: Vec<i64> = order[b.start..end].iter().map(|(_, id)| *id).collect();
                let last = end == order.len();
                (b.start, b.batch) = (end, b.batch * 4);
                (Some(ids), last)
            }
            None => (None, true),
        };
        if last {
            self.relevance = None;
            self.read += 1;
        }
        let hits = index.tier_hits(tiers, tier, only.as_deref())?;
        let mut found = Vec::new();
        for hit in hits {
            if let std::collections::hash_map::Entry::Vacant(slot) = self.hits.entry(hit.id) {
                let score = Self::score(&hit, tiers.relevance_scale());
                found.push((score, hit.id));
                slot.insert((score, hit));
            }
        }
        Ok(Some(found))
    }

    /// The hit of index row `id`, if it is one.
    fn hit(&self, id: i64) -> Option<&(f64, Hit)> {
        self.hits.get(&id).or_else(|| self.settled.get(&id))
    }
}

/// How many of a sentence's most relevant tools the first batch of its relevance tier asks of
/// the filters (then four times more each batch).
const RELEVANCE_BATCH: usize = 64;

/// A sentence's BM25 `relevance` as a score in 0..1: `1 − e^(−2 × relevance / scale)`, where
/// `scale` is the BM25 of a tool that holds each content word of the query once in a tool of
/// average length ([`Tiers::relevance_scale`]). So a score says how much of the query a tool
/// matches, the same for every query and catalog: 0.86 for every word once, 0.63 for words
/// worth half of the query's IDF, 0.33 for a fifth, near 0 for words most tools hold; more
/// occurrences and shorter tools score higher. It keeps BM25's order.
pub fn relevance_score(relevance: f64, scale: f64) -> f64 {
    if scale <= 0.0 || relevance <= 0.0 {
        return 0.0;
    }
    1.0 - (-2.0 * relevance / scale).exp()
}

/// The lexical share of `hybrid`'s fusion (the semantic one is the rest).
pub const LEXICAL_WEIGHT: f64 = 0.4;

/// The fusion of one query's lexical (`bm25`) and semantic (embedding) scores of the same
/// tools, for `fused` and `hybrid`: each list min-max normalised over the tools (its best 1,
/// its worst 0; all 0 when all are equal), then `weight × lexical + (1 − weight) × semantic`.
/// Normalising first puts the two on one scale: raw cosines crowd into a narrow band while
/// BM25 spreads widely.
pub fn fuse(lexical: &[f64], semantic: &[f64], weight: f64) -> Vec<f64> {
    let (lexical, semantic) = (min_max(lexical), min_max(semantic));
    lexical
        .iter()
        .zip(&semantic)
        .map(|(l, s)| weight * l + (1.0 - weight) * s)
        .collect()
}

/// `hybrid`'s score of one tool on a scale that is the same for every query (what `attach`'s
/// `min_score` is compared with): the same weights as [`fuse`], over the two scores as they
/// are, unnormalised: `0.4 × lexical + 0.6 × semantic`, where the lexical score is `bm25`'s
/// absolute 0..1 ([`relevance_score`] for a sentence) and the semantic one the cosine (0 when
/// negative). Min-max normalisation makes the best tool of every query score 1, however poor
/// a match it is; this does not.
pub fn absolute_hybrid(lexical: f64, semantic: f64) -> f64 {
    LEXICAL_WEIGHT * lexical.clamp(0.0, 1.0) + (1.0 - LEXICAL_WEIGHT) * semantic.clamp(0.0, 1.0)
}

/// `scores` mapped onto 0..1 by their minimum and maximum; all 0 when those are equal.
fn min_max(scores: &[f64]) -> Vec<f64> {
    let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let range = max - min;
    scores
        .iter()
        .map(|s| if range > 0.0 { (s - min) / range } else { 0.0 })
        .collect()
}

/// Scored rows handed out in groups of equal score, best first: sorted when first asked (a
/// search that reads scores alone never sorts), each group made as it is handed out (one
/// allocation a group asked for, not one a distinct score).
#[derive(Debug, Default)]
struct Groups {
    rows: Vec<(f64, i64)>,
    /// The first row not handed out.
    at: usize,
    sorted: bool,
}

impl Groups {
    fn new(rows: Vec<(f64, i64)>) -> Self {
        Self {
            rows,
            at: 0,
            sorted: false,
        }
    }

    fn pop_front(&mut self) -> Option<(f64, Vec<i64>)> {
        if !self.sorted {
            self.rows.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            self.sorted = true;
        }
        let (score, _) = *self.rows.get(self.at)?;
        let start = self.at;
        let rest = &self.rows[start..];
        let len = rest
            .iter()
            .position(|(s, _)| !s.total_cmp(&score).is_eq())
            .unwrap_or(rest.len());
        self.at += len;
        Some((score, rest[..len].iter().map(|(_, id)| *id).collect()))
    }
}

impl Matches {
    fn new(verdicts: Verdicts) -> Self {
        let mut matches = Self {
            verdicts,
            absolute: HashMap::new(),
            lexical: None,
            groups: Groups::default(),
        };
        if !matches!(matches.verdicts, Verdicts::Bm25(_)) {
            let scored = matches
                .ids()
                .into_iter()
                .map(|id| (matches.score(id), id))
                .collect();
            matches.groups = Groups::new(scored);
        }
        matches
    }

    /// The keyword scorer's matches for `query`.
    /// A query without content words matches as [`bm25`](Self::bm25)'s does: the tools whose
    /// name holds its words.
    pub fn keyword(index: &Index, query: &str) -> index::Result<Self> {
        if text::content_tokens(query).is_empty() {
            return Self::bm25(index, query);
        }
        let tokens = keyword::tokens(query);
        let (weights, found) = keyword::scores(index, &tokens)?;
        Ok(Self::new(Verdicts::Keyword { weights, found }))
    }

    /// The search index's hits for `query`, scored as the module comment says. They are read
    /// as the ranking asks for them.
    /// A query without content words (see [`keyword::tokens`]) matches only the tools whose
    /// name holds its words ([`Index::name_tiers`]: "now" is the built-in `now`): the tiers
    /// would otherwise rank "the" as a word of every tool.
    pub fn bm25(index: &Index, query: &str) -> index::Result<Self> {
        if text::content_tokens(query).is_empty() {
            let request = SearchRequest {
                query: query.to_owned(),
                ..SearchRequest::default()
            };
            return Ok(Self::of_tiers(index.name_tiers(&request)?));
        }
        let request = SearchRequest {
            query: query.to_owned(),
            ..SearchRequest::default()
        };
        Ok(Self::of_tiers(index.search_tiers(&request)?))
    }

    /// The hits of a query the index has planned ([`Index::search_tiers`]; `None`: a query
    /// without tokens, which matches nothing), scored as [`bm25`](Self::bm25) scores them.
    pub fn of_tiers(tiers: Option<Tiers>) -> Self {
        Self::new(Verdicts::Bm25(Box::new(Bm25 {
            tiers,
            read: 0,
            hits: HashMap::new(),
            settled: HashMap::new(),
            relevance: None,
        })))
    }

    /// `fused`'s scores of a sentence `query`, with lexical weight `weight`: `bm25`'s hits
    /// for a name-like query, or when the built-in model holds none of its words (see
    /// [`fused`]).
    pub fn fused(index: &Index, query: &str, weight: f64) -> index::Result<Self> {
        if text::content_tokens(query).is_empty() {
            return Self::bm25(index, query);
        }
        let request = SearchRequest {
            query: query.to_owned(),
            ..SearchRequest::default()
        };
        let Some(tiers) = index.search_tiers(&request)? else {
            return Ok(Self::of_tiers(None));
        };
        Ok(match fused::Fused::new(index, tiers, query, weight)? {
            Ok(fused) => Self::new(Verdicts::Fused(Box::new(fused))),
            Err(tiers) => Self::of_tiers(Some(tiers)),
        })
    }

    /// For `search`: a sentence's first `n` hits that its filters let through, best first:
    /// by fused score for `fused` (each hit with that score), else by BM25F relevance.
    fn best_hits(&self, index: &Index, n: usize) -> index::Result<Vec<Hit>> {
        match (&self.verdicts, self.tiers()) {
            (Verdicts::Fused(fused), _) => fused.best_hits(index, n),
            (_, Some(tiers)) => index.best_hits(tiers, n),
            (_, None) => Ok(Vec::new()),
        }
    }

    /// For `bm25` and `fused`: the planned query.
    pub fn tiers(&self) -> Option<&Tiers> {
        match &self.verdicts {
            Verdicts::Bm25(bm25) => bm25.tiers.as_ref(),
            Verdicts::Fused(fused) => Some(fused.tiers()),
            _ => None,
        }
    }

    /// The verdicts of a network scorer on `candidates`, in their order.
    fn each(candidates: &[DefaultTool], verdicts: Vec<Scored>) -> Self {
        let verdicts = candidates.iter().map(|m| m.row.id).zip(verdicts);
        Self::new(Verdicts::Each(verdicts.collect()))
    }

    /// The next rows with a verdict, of equal score, and that score: below those handed out
    /// before.
    pub fn next_group(&mut self, index: &Index) -> index::Result<Option<(f64, Vec<i64>)>> {
        loop {
            if let Some(group) = self.groups.pop_front() {
                return Ok(Some(group));
            }
            let Verdicts::Bm25(bm25) = &mut self.verdicts else {
                return Ok(None);
            };
            match bm25.read_tier(index)? {
                Some(found) => self.groups = Groups::new(found),
                None => return Ok(None),
            }
        }
    }

    /// Make [`score`](Self::score) exact for the rows `ids` whatever the ranking has read.
    pub fn settle(&mut self, index: &Index, ids: &[i64]) -> index::Result<()> {
        let bm25 = match &mut self.verdicts {
            Verdicts::Bm25(bm25) => bm25,
            Verdicts::Fused(fused) => return fused.settle(index, ids),
            _ => return Ok(()),
        };
        let Some(tiers) = &bm25.tiers else {
            return Ok(());
        };
        let mut unknown: Vec<i64> = ids
            .iter()
            .copied()
            .filter(|id| bm25.hit(*id).is_none())
            .collect();
        // A row's tier is the first it is found in.
        for tier in bm25.read..tiers.len() {
            if unknown.is_empty() {
                break;
            }
            for hit in index.tier_hits(tiers, tier, Some(&unknown))? {
                unknown.retain(|id| *id != hit.id);
                let score = Bm25::score(&hit, tiers.relevance_scale());
                bm25.settled.insert(hit.id, (score, hit));
            }
        }
        Ok(())
    }

    /// For `bm25`, `fused` and `hybrid` and a sentence: what each of its terms adds to a
    /// tool's BM25F relevance.
    pub fn shares(&self) -> Option<&index::Shares> {
        match &self.verdicts {
            Verdicts::Bm25(bm25) => bm25.tiers.as_ref()?.shares(),
            Verdicts::Fused(fused) => fused.tiers().shares(),
            _ => self.lexical.as_ref()?.shares(),
        }
    }

    /// What relevance coverage weighs: `fused`'s and `hybrid`'s fused score, or `bm25`'s BM25F
    /// relevance.
    pub fn cover_relevance(&self) -> cover::Relevance {
        if self.lexical.is_some() || matches!(self.verdicts, Verdicts::Fused(_)) {
            cover::Relevance::Fused
        } else {
            cover::Relevance::Lexical
        }
    }

    /// `bm25`'s tiers, whose shares `hybrid` keeps.
    fn into_tiers(self) -> Option<Tiers> {
        match self.verdicts {
            Verdicts::Bm25(bm25) => bm25.tiers,
            Verdicts::Fused(fused) => Some(fused.into_tiers()),
            _ => None,
        }
    }

    /// The score of the tool in index row `id`.
    pub fn score(&self, id: i64) -> f64 {
        match &self.verdicts {
            Verdicts::Keyword { found, .. } => found.get(&id).map_or(0.0, |k| k.score),
            Verdicts::Bm25(bm25) => bm25.hit(id).map_or(0.0, |(score, _)| *score),
            Verdicts::Fused(fused) => fused.score(id),
            Verdicts::Each(verdicts) => verdicts.get(&id).map_or(0.0, |s| s.score),
        }
    }

    /// The score of the tool in index row `id` on a scale that means the same for every
    /// query: [`score`](Self::score), but for `hybrid`, whose ranking score is normalised per
    /// query, its [`absolute_hybrid`] score. What `attach`'s `min_score` compares with.
    pub fn absolute(&self, id: i64) -> f64 {
        if let Verdicts::Fused(fused) = &self.verdicts {
            fused.absolute(id)
        } else if self.absolute.is_empty() {
            self.score(id)
        } else {
            self.absolute.get(&id).copied().unwrap_or(0.0)
        }
    }

    /// The verdict on the tool in index row `id`, with its reason and provenance.
    pub fn verdict(&self, id: i64) -> Scored {
        match &self.verdicts {
            Verdicts::Keyword { weights, found } => match found.get(&id) {
                Some(k) => Scored {
                    score: k.score,
                    reason: format!(
                        "matched keywords in {{name}}: {}",
                        k.terms(&weights.tokens).join(", ")
                    ),
                    details: k.details(weights),
                },
                // Most of a large catalog: nothing built per tool that is not shown.
                None => Scored {
                    score: 0.0,
                    reason: "no keyword in common".to_owned(),
                    details: Value::Null,
                },
            },
            Verdicts::Bm25(bm25) => match bm25.hit(id) {
                Some((score, hit)) => Scored {
                    score: *score,
                    reason: format!("search match: {}", hit.why),
                    details: json!({ "tier": hit.tier, "bm25": round(hit.score), "why": hit.why }),
                },
                None => Scored {
                    score: 0.0,
                    reason: "no search match".to_owned(),
                    details: json!({}),
                },
            },
            Verdicts::Fused(fused) => fused.verdict(id),
            Verdicts::Each(verdicts) => verdicts.get(&id).cloned().unwrap_or_default(),
        }
    }

    /// The verdicts on `candidates`, in their order.
    fn verdicts(&self, candidates: &[DefaultTool]) -> Vec<Scored> {
        candidates.iter().map(|m| self.verdict(m.row.id)).collect()
    }

    /// Whether the tools without a verdict are candidates that score 0 (a local scorer sees
    /// only what matches), rather than tools that are no candidates.
    fn is_sparse(&self) -> bool {
        !matches!(self.verdicts, Verdicts::Each(_))
    }

    /// The rows with a verdict (of the tiers read, for `bm25`).
    fn ids(&self) -> HashSet<i64> {
        match &self.verdicts {
            Verdicts::Keyword { found, .. } => found.keys().copied().collect(),
            Verdicts::Bm25(bm25) => bm25.hits.keys().copied().collect(),
            Verdicts::Fused(fused) => fused.ids().collect(),
            Verdicts::Each(verdicts) => verdicts.keys().copied().collect(),
        }
    }
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
    let state_dir = catalog.root().join(crate::catalog::STATE_DIR);

    let Scoring {
        scored,
        scorer,
        fallback,
    } = score(&state_dir, index, request, deadline, progress)?;
    let mut matches = match scored {
        Ok(matches) if Instant::now() <= deadline => matches,
        Ok(_) | Err(ScorerError::Deadline) => {
            let limit_ms = request.timeout.unwrap_or_default().as_millis();
            let first = index.first_usable(request.max, request.allow_unsafe, &HashSet::new())?;
            let picks = registration_order(index, &first)?;
            return Ok(PickOutcome {
                picks,
                scorer,
                fallback: Some(Fallback::PastTimeLimit { limit_ms }),
            });
        }
        Err(failure) => return Err(PickError::Upstream(failure.to_string())),
    };

    let min_score = request.min_score;
    let covering = request.coverage && matches.shares().is_some();
    let mut ranked = rank(
        index,
        &mut matches,
        if covering {
            request.max.max(cover::POOL)
        } else {
            request.max
        },
        request.allow_unsafe,
        request.among.as_ref(),
        |score, _| (score >= min_score).then_some(score),
    )?
    .top;
    let moved = match matches.shares().filter(|_| covering) {
        Some(shares) => cover_ranked(shares, matches.cover_relevance(), &mut ranked, request.max),
        None => HashMap::new(),
    };
    if matches.is_sparse() && min_score <= 0.0 && ranked.len() < request.max {
        // The tools the scorer did not match score 0, and pass a minimum of 0 too: in
        // registration order, among those that matched with a score of 0. (The ranking
        // stopped short of `max`, so it read every verdict.)
        let zeros = ranked
            .iter()
            .position(|(_, score)| *score <= 0.0)
            .unwrap_or(ranked.len());
        let mut unmatched =
            index.first_usable(request.max - zeros, request.allow_unsafe, &matches.ids())?;
        if let Some(among) = &request.among {
            unmatched.retain(|r| among.contains(&r.id));
        }
        ranked.extend(unmatched.into_iter().map(|r| (r, 0.0)));
        ranked[zeros..].sort_by(|a, b| a.0.cmp(&b.0));
        ranked.truncate(request.max);
    }
    let Added { kin, needs } = Related {
        siblings: request.siblings,
        helpers: request.helpers,
        allow_unsafe: request.allow_unsafe,
        min_key: min_score,
        within: None,
    }
    .add(catalog, index, &mut matches, &mut ranked, request.max)?;
    let ids: Vec<i64> = ranked.iter().map(|(r, _)| r.id).collect();
    matches.settle(index, &ids)?;
    let members = DefaultTool::named(index, index.rows_by_id(&ids, false)?)?;
    let names: HashMap<i64, String> = members.iter().map(|m| (m.row.id, m.name.clone())).collect();
    let picks: Vec<Picked> = members
        .into_iter()
        .map(|member| {
            let s = matches.verdict(member.row.id);
            // The keyword scorer leaves the details of tools without a match to be written
            // here, for the few shown.
            let details = if s.details.is_null() {
                no_keyword_details(&request.query)
            } else {
                s.details
            };
            let mut provenance = json!({ "scorer": scorer.as_str(), "details": details });
            if let Some(m) = moved.get(&member.row.id) {
                provenance["coverage"] =
                    json!({ "relevanceRank": m.rank, "ownScore": round(s.score) });
            }
            let (score, reason) = match needs.get(&member.row.id) {
                Some(need) => {
                    // The consumer comes before its helper, so it is among the picks.
                    let consumer = names.get(&need.consumer).map_or("a pick", String::as_str);
                    provenance["helper"] = json!({
                        "neededBy": consumer,
                        "argument": need.argument,
                        "phrase": need.phrase,
                        "ownScore": round(s.score),
                    });
                    (need.key, helper_reason(consumer, need))
                }
                None => {
                    let reason = s.reason.replace("{name}", &member.name);
                    match (kin.get(&member.row.id), moved.get(&member.row.id)) {
                        (Some(why), _) => {
                            // The anchor comes before its sibling, so it is among the picks.
                            let anchor = names.get(&why.anchor).map_or("a pick", String::as_str);
                            (why.key, sibling_reason(anchor, why, why.own))
                        }
                        (None, Some(m)) => (m.key, cover::reason(&reason, m.rank, m.is_up())),
                        (None, None) => (s.score, reason),
                    }
                }
            };
            if let Some(why) = kin.get(&member.row.id) {
                let anchor = names.get(&why.anchor).map_or("a pick", String::as_str);
                provenance["sibling"] = json!({
                    "of": anchor,
                    "word": why.word,
                    "ownScore": round(why.own),
                });
            }
            Picked {
                score: round(score),
                reason,
                provenance,
                member,
            }
        })
        .collect();
    Ok(PickOutcome {
        picks,
        scorer,
        fallback: fallback.map(Fallback::Scorer),
    })
}

/// A tool coverage moved ([`cover_ranked`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moved {
    /// Its place by relevance, from 1.
    pub rank: usize,
    /// The place it took, from 1.
    pub place: usize,
    /// The key of that place, which it took.
    pub key: f64,
}

impl Moved {
    /// Whether it moved up, before more relevant tools.
    pub fn is_up(&self) -> bool {
        self.rank > self.place
    }
}

/// Coverage ([`cover`]): the first `n` of `ranked` (best first by relevance, each with its
/// key; `shares` gives each tool's term shares; `relevance` says what relevance the gain
/// weighs) in the order that covers the task's words between them, each with the key of its
/// place; the rest of `ranked` is dropped. Returns the tools it moved, by index row.
pub fn cover_ranked(
    shares: &index::Shares,
    relevance: cover::Relevance,
    ranked: &mut Vec<(Registration, f64)>,
    n: usize,
) -> HashMap<i64, Moved> {
    let each: Vec<Vec<f64>> = ranked.iter().map(|(r, _)| shares.of(r.id)).collect();
    let mut moved = HashMap::new();
    *ranked = cover::place_by(ranked, &each, relevance, n)
        .into_iter()
        .enumerate()
        .map(|(place, p)| {
            if let Some(rank) = p.moved_from {
                let place = place + 1;
                moved.insert(
                    p.row.id,
                    Moved {
                        rank,
                        place,
                        key: p.key,
                    },
                );
            }
            (p.row, p.key)
        })
        .collect();
    moved
}

/// The reason of a helper tool ([`helpers`]): `consumer` names the tool that needs it.
pub fn helper_reason(consumer: &str, need: &helpers::Need) -> String {
    match need.phrase {
        Some(_) => format!(
            "needed by {consumer}: its argument {} names it",
            need.argument
        ),
        None => format!(
            "needed by {consumer}: returns its argument {}",
            need.argument
        ),
    }
}

/// The reason of a sibling tool [`siblings`] lifted: `anchor` names the tool that lifted it,
/// `own` is its own score as shown.
pub fn sibling_reason(anchor: &str, kin: &siblings::Kin, own: f64) -> String {
    format!(
        "sibling of {anchor} (same bundle, name begins with '{}'); own score {}",
        kin.word,
        round(own)
    )
}

/// How many tools a pick considers: usable tools that stand for their slug, safe ones only
/// unless `allow_unsafe`. A pass over the catalog, which a pick itself does not make.
pub fn considered(index: &Index, allow_unsafe: bool) -> index::Result<usize> {
    index.count_usable(allow_unsafe)
}

/// The steps after the ranking that add tools to it, as `pick` and `attach` take them.
#[derive(Debug, Clone, Copy)]
pub struct Related<'a> {
    /// Lift the first picks' siblings ([`siblings`]).
    pub siblings: bool,
    /// Then add the tools the first picks' required arguments name ([`helpers`]).
    pub helpers: bool,
    pub allow_unsafe: bool,
    /// No sibling is lifted to a key under this.
    pub min_key: f64,
    /// Only tools these filters let through are added (`search`'s own); any when `None`. A
    /// tool left out takes no place: a consumer's next helper takes it.
    pub within: Option<&'a index::Filters>,
}

/// Why each tool the steps after the ranking added is there, by index row.
#[derive(Debug, Default)]
pub struct Added {
    pub kin: HashMap<i64, siblings::Kin>,
    pub needs: HashMap<i64, helpers::Need>,
}

impl Related<'_> {
    /// Lift the siblings, then add the helpers (which see the new order), each step when
    /// asked for, into `ranked` (best first, each with its key), reading each bundle's slugs
    /// once; the ranking is cut to `n`.
    pub fn add(
        &self,
        catalog: &Catalog,
        index: &Index,
        matches: &mut Matches,
        ranked: &mut Vec<(Registration, f64)>,
        n: usize,
    ) -> index::Result<Added> {
        let mut bundles = Bundles {
            within: self.within,
            ..Bundles::default()
        };
        let mut added = Added::default();
        if self.siblings {
            added.kin = siblings::add(
                index,
                matches,
                &mut bundles,
                ranked,
                n,
                self.allow_unsafe,
                self.min_key,
            )?;
        }
        if self.helpers {
            added.needs = helpers::add(
                catalog,
                index,
                matches,
                &mut bundles,
                ranked,
                n,
                self.allow_unsafe,
            )?;
        }
        Ok(added)
    }
}

/// The live tools of the bundles a pick's additions look at ([`siblings`], [`helpers`]), by
/// bundle folder, each read once ([`Index::slugs_in_bundle`]), and which of them may be added.
#[derive(Debug, Default)]
pub struct Bundles<'a> {
    slugs: HashMap<String, std::rc::Rc<[(i64, String)]>>,
    /// See [`Related::within`].
    within: Option<&'a index::Filters>,
}

impl Bundles<'_> {
    /// The candidates among rows `ids` (see [`rank`]) that may be added, in registration order.
    pub fn candidates(
        &self,
        index: &Index,
        ids: &[i64],
        allow_unsafe: bool,
    ) -> index::Result<Vec<Registration>> {
        let mut found = first_candidates(index, ids, ids.len(), allow_unsafe)?;
        if let Some(filters) = self.within {
            let found_ids: Vec<i64> = found.iter().map(|r| r.id).collect();
            let admitted = index.admitted(filters, &found_ids)?;
            found.retain(|r| admitted.contains(&r.id));
        }
        Ok(found)
    }

    /// The live tools of the bundle in folder `dir`, every version, as (row, tool slug); read
    /// once a pick, shared (not copied) with each caller.
    pub fn slugs(
        &mut self,
        index: &Index,
        dir: &str,
    ) -> index::Result<std::rc::Rc<[(i64, String)]>> {
        Ok(match self.slugs.entry(dir.to_owned()) {
            std::collections::hash_map::Entry::Occupied(slot) => slot.get().clone(),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(index.slugs_in_bundle(dir)?.into()).clone()
            }
        })
    }
}

/// The best candidates of a ranking, and the best score among all candidates.
#[derive(Debug, Clone, Default)]
pub struct Ranked {
    /// The best candidate's score; `None` when no candidate has a verdict.
    pub best: Option<f64>,
    /// The candidates ranked first, each with its ranking key.
    pub top: Vec<(Registration, f64)>,
}

/// The `n` best candidates with a verdict in `matches`: usable tools that stand for their
/// slug, safe ones only unless `allow_unsafe`. They are ranked by `key(score, best)` (`best`:
/// the best candidate's score), highest first, equal keys in registration order; the key must
/// not rise as the score falls, and `None` ends the ranking (lower scores are not wanted
/// either).
///
/// The verdicts are taken a score at a time, best first, and the index asked only which of
/// those are candidates, until `n` are found: a common word matches thousands of tools, of
/// which a pick shows three.
pub fn rank(
    index: &Index,
    matches: &mut Matches,
    n: usize,
    allow_unsafe: bool,
    among: Option<&HashSet<i64>>,
    key: impl Fn(f64, f64) -> Option<f64>,
) -> index::Result<Ranked> {
    let mut ranked = Ranked::default();
    // The key of the candidates last added and where they start: later ones of an equal key
    // join them in registration order.
    let (mut class_key, mut class_start) = (f64::NAN, 0);
    while let Some((score, mut ids)) = matches.next_group(index)? {
        if let Some(among) = among {
            ids.retain(|id| among.contains(id));
            if ids.is_empty() {
                continue;
            }
        }
        // The first candidates found set the best score: if they are these, it is `score`.
        let Some(k) = key(score, ranked.best.unwrap_or(score)) else {
            break;
        };
        let joins = !ranked.top.is_empty() && k.total_cmp(&class_key).is_eq();
        if !joins && ranked.top.len() >= n {
            break;
        }
        let start = if joins { class_start } else { ranked.top.len() };
        let found = first_candidates(index, &ids, n - start, allow_unsafe)?;
        if found.is_empty() {
            continue;
        }
        ranked.best.get_or_insert(score);
        if !joins {
            (class_key, class_start) = (k, start);
        }
        ranked.top.extend(found.into_iter().map(|r| (r, k)));
        ranked.top[class_start..].sort_by(|a, b| a.0.cmp(&b.0));
        ranked.top.truncate(n);
    }
    Ok(ranked)
}

/// The first `n` candidates (see [`rank`]) among rows `ids`, in registration order.
fn first_candidates(
    index: &Index,
    ids: &[i64],
    n: usize,
    allow_unsafe: bool,
) -> index::Result<Vec<Registration>> {
    let mut found = Vec::new();
    if n == 0 {
        return Ok(found);
    }
    // Whether a version stands for its slug is the costly question (it looks at the slug's
    // other versions): asked of `n` tools at a time, in order, until `n` are found. Most
    // usable tools are the version that stands.
    for chunk in index.usable_among(ids, allow_unsafe)?.chunks(n) {
        let ids: Vec<i64> = chunk.iter().map(|r| r.id).collect();
        let standing = index.default_among(&ids)?;
        let wanted = n - found.len();
        found.extend(
            chunk
                .iter()
                .filter(|r| standing.contains(&r.id))
                .take(wanted)
                .cloned(),
        );
        if found.len() == n {
            break;
        }
    }
    Ok(found)
}

/// What a scorer made of the candidates.
#[derive(Debug)]
pub struct Scoring {
    /// The verdicts; the scorer's failure (the deadline passed, the endpoint failed)
    /// otherwise. `llm` falls back to `keyword` instead of failing.
    pub scored: Result<Matches, ScorerError>,
    /// The scorer that gave the scores.
    pub scorer: Scorer,
    /// Why the requested scorer did not give the result, when it did not.
    pub fallback: Option<String>,
}

/// Score the catalog's tools for `request.query` with `request.scorer`. The network scorers
/// score every candidate (usable tools that stand for their slug, safe ones only unless
/// `request.allow_unsafe`).
pub fn score(
    state_dir: &std::path::Path,
    index: &Index,
    request: &PickRequest,
    deadline: Instant,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Scoring, PickError> {
    let mut scorer = request.scorer;
    let mut fallback = None;
    let candidates = || -> index::Result<Vec<DefaultTool>> {
        Ok(DefaultTools::read(index, true)?
            .members
            .into_iter()
            .filter(|m| m.is_usable() && (request.allow_unsafe || m.row.safe))
            .collect())
    };
    let scored = match request.scorer {
        Scorer::Keyword => Ok(Matches::keyword(index, &request.query)?),
        Scorer::Bm25 => Ok(Matches::bm25(index, &request.query)?),
        Scorer::Fused => {
            let weight = request
                .lexical_weight
                .unwrap_or(fused::FUSED_LEXICAL_WEIGHT);
            Ok(Matches::fused(index, &request.query, weight)?)
        }
        Scorer::Embed => {
            let candidates = candidates()?;
            embed_scores(state_dir, request, &candidates, deadline, progress).map(|scores| {
                let verdicts = scores
                    .into_iter()
                    .map(|s| Scored {
                        score: s,
                        reason: "semantic similarity (embeddings)".to_owned(),
                        details: json!({ "cosine": round(s) }),
                    })
                    .collect();
                Matches::each(&candidates, verdicts)
            })
        }
        Scorer::Hybrid => {
            let weight = request.lexical_weight.unwrap_or(LEXICAL_WEIGHT);
            let candidates = candidates()?;
            let mut lexical = Matches::bm25(index, &request.query)?;
            // Every tier read: each candidate's lexical score is needed.
            while lexical.next_group(index)?.is_some() {}
            let (lexical, tiers) = (lexical.verdicts(&candidates), lexical.into_tiers());
            embed_scores(state_dir, request, &candidates, deadline, progress).map(|semantic| {
                let lexical_scores: Vec<f64> = lexical.iter().map(|l| l.score).collect();
                let fused = fuse(&lexical_scores, &semantic, weight);
                let absolute: HashMap<i64, f64> = candidates
                    .iter()
                    .zip(lexical_scores.iter().zip(&semantic))
                    .map(|(m, (l, s))| (m.row.id, absolute_hybrid(*l, *s)))
                    .collect();
                let verdicts = lexical
                    .into_iter()
                    .zip(semantic)
                    .zip(fused)
                    .map(|((l, s), score)| Scored {
                        score,
                        reason: "hybrid (search relevance + semantic)".to_owned(),
                        details: json!({
                            "weights": { "lexical": weight, "semantic": 1.0 - weight },
                            "subScores": { "lexical": round(l.score), "semantic": round(s) },
                            "absolute": round(absolute_hybrid(l.score, s)),
                            "lexical": l.details,
                        }),
                    })
                    .collect();
                let mut matches = Matches::each(&candidates, verdicts);
                matches.absolute = absolute;
                matches.lexical = tiers;
                matches
            })
        }
        Scorer::Llm => {
            let candidates = candidates()?;
            match llm_scores(state_dir, request, &candidates, deadline) {
                Err(ScorerError::Deadline) => Err(ScorerError::Deadline),
                Err(failure) => {
                    scorer = Scorer::Keyword;
                    let reason =
                        format!("the llm scorer failed ({failure}); keyword scores instead");
                    let mut verdicts =
                        Matches::keyword(index, &request.query)?.verdicts(&candidates);
                    for s in &mut verdicts {
                        s.details = json!({ "fallback": reason, "keyword": s.details });
                    }
                    fallback = Some(reason);
                    Ok(Matches::each(&candidates, verdicts))
                }
                Ok(verdicts) => Ok(Matches::each(&candidates, verdicts)),
            }
        }
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

/// The fallback past the time limit: the candidates `first` (in registration order) as picks.
fn registration_order(index: &Index, first: &[Registration]) -> index::Result<Vec<Picked>> {
    let ids: Vec<i64> = first.iter().map(|r| r.id).collect();
    let members = DefaultTool::named(index, index.rows_by_id(&ids, false)?)?;
    Ok(members
        .into_iter()
        .enumerate()
        .map(|(i, member)| Picked {
            member,
            score: 0.0,
            reason: "time limit reached: registration order".to_owned(),
            provenance: json!({ "scorer": "registration-order", "details": { "position": i + 1 } }),
        })
        .collect())
}

/// A candidate as the network scorers see it.
fn candidate(member: &DefaultTool) -> Candidate {
    let text = index::vectors::embedding_text(&member.row.text);
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
    candidates: &[DefaultTool],
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
    members: &[DefaultTool],
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

#[cfg(test)]
mod fusion_tests {
    use super::*;

    #[test]
    fn fusion_normalises_each_list_before_weighing() {
        // Raw BM25 spreads widely, cosines crowd together: normalised, both count.
        let fused = fuse(&[10.0, 5.0, 0.0], &[0.80, 0.90, 0.70], 0.4);
        let want = [0.4 * 1.0 + 0.6 * 0.5, 0.4 * 0.5 + 0.6 * 1.0, 0.0];
        for (got, want) in fused.iter().zip(want) {
            assert!((got - want).abs() < 1e-9, "{fused:?}");
        }
        // A list of equal scores says nothing: all 0, the other list decides.
        assert_eq!(fuse(&[0.0, 0.0], &[0.2, 0.4], 0.4), [0.0, 0.6]);
        assert!(fuse(&[], &[], 0.4).is_empty());
        // The weight moves the balance: words alone, meaning alone.
        assert_eq!(fuse(&[1.0, 0.0], &[0.0, 1.0], 1.0), [1.0, 0.0]);
        assert_eq!(fuse(&[1.0, 0.0], &[0.0, 1.0], 0.0), [0.0, 1.0]);
    }

    #[test]
    fn absolute_hybrid_scores_are_not_normalised_per_query() {
        // A poor best match stays poor: no rescaling to 1.
        assert!((absolute_hybrid(0.02, 0.13) - (0.4 * 0.02 + 0.6 * 0.13)).abs() < 1e-12);
        assert_eq!(absolute_hybrid(0.0, -0.5), 0.0);
        assert_eq!(absolute_hybrid(1.0, 1.0), 1.0);
        assert!(absolute_hybrid(0.8, 0.6) > absolute_hybrid(0.1, 0.6));
    }

    #[test]
    fn relevance_scores_are_absolute() {
        assert_eq!(relevance_score(0.0, 5.0), 0.0);
        assert_eq!(relevance_score(3.0, 0.0), 0.0);
        let whole = relevance_score(5.0, 5.0);
        assert!((whole - (1.0 - (-2.0f64).exp())).abs() < 1e-12);
        assert!(relevance_score(1.0, 5.0) < relevance_score(2.0, 5.0));
        assert!(relevance_score(1e9, 5.0) <= 1.0);
    }
}
