//! Ranked search over the index.
//!
//! A query is cut into tokens (see [`text`](super::text)). A query that reads like a sentence
//! ([`text::is_sentence`]: a word that says what it is about and either 4 or more such words,
//! or a stop word or chat phrase beside them) is ranked by **relevance** alone: BM25F over the
//! fields of a tool (name, tags, argument names, argument descriptions, argument values such as
//! `enum`s, description; the bundle not at all) for its content words
//! ([`text::content_tokens`]: without stop words, chat phrasing, pure numbers, each word once),
//! a tool matching any of them, typos corrected as below when no word matches as typed; see
//! [`super::bm25f`] for the formula (each field's counts normalised by its own length,
//! saturated once over the fields). Then by recency (`modifiedAt`). The `search` command then
//! orders a sentence's first hits as `pick` orders its picks, through
//! [`Index::search_by`] (the pick layer's coverage, sibling and helper tools).
//!
//! Any other query (a short, name-like one) matches in the best of four tiers, and inside a
//! tier by BM25 (field weights: name 10, tags 5, description 3, argument names, descriptions
//! and values 2, bundle 1, so a name match beats a description match), then by recency:
//!
//! 1. **prefix**: every token starts a word of the tool's name (slug or display name), as when
//!    typing a name: `wea` → `weather`, `get weath` → `getWeather`;
//! 2. **whole word**: every token is a whole word (after stemming: `forecasts` = `forecast`)
//!    somewhere: name, tags, description, argument names or descriptions, bundle;
//! 3. **fuzzy**: every token matches somewhere as a word, a word prefix or within a small edit
//!    distance of a word (`wether` → `weather`, `serch` → `search`);
//! 4. **some words**: at least one token matches in one of those ways — what a question in
//!    plain language ("what will the weather be tomorrow in Oslo") mostly is. Stop words
//!    ("what", "will", "the") do not count here unless the query holds nothing else.
//!
//! Fuzzy mechanism: Damerau–Levenshtein distance between the token and the index's own
//! vocabulary (FTS5's `fts5vocab` table), at most 1 for tokens of 4–7 characters and 2 for
//! longer ones, keeping the closest word (the most common of equally close ones), among the
//! words that start with the token's first or second letter (so the vocabulary is read for
//! one or two letters, not whole; a typo in the first letter alone is not corrected). The
//! vocabulary holds Porter stems, so the token is compared both as typed and stemmed
//! ("tempreture" → "tempretur" is two edits from "temperatur"). Tokens of 3 characters or
//! fewer are matched as prefixes instead (a trigram index cannot match them, and an edit of a
//! short word is another word). The vocabulary is only scanned for tokens that match nothing
//! as they are, so an ordinary query costs no extra work. Why not an FTS5 trigram table: it
//! doubles the index, needs 3+ characters, and ranks substrings, not typos; the vocabulary is
//! small (tens of thousands of words at 100,000 tools) and a distance over it is exact.

use super::bm25f::{Shares, idf};
use super::text::{self, quoted};
use super::{Error, Index, Result};
use crate::catalog::page;
use rusqlite::types::Value as SqlValue;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

thread_local! {
    /// English stemmer for typo correction (the index's own stemmer is FTS5's Porter; the two
    /// agree on common endings, and a correction only needs to come close).
    static STEMMER: rust_stemmers::Stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
}

/// The tier a hit matched in; lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// A sentence, ranked by relevance alone (no tiers).
    Relevance,
    Prefix,
    WholeWord,
    Fuzzy,
    SomeWords,
}

impl Tier {
    pub fn label(self) -> &'static str {
        match self {
            Self::Relevance => "relevance",
            Self::Prefix => "name prefix",
            Self::WholeWord => "whole words",
            Self::Fuzzy => "fuzzy",
            Self::SomeWords => "some words",
        }
    }
}

/// What to search for.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchRequest {
    pub query: String,
    /// Bundles to search in, by slug or ID; empty: all.
    pub bundles: Vec<String>,
    /// Tags a tool must all have.
    pub tags: Vec<String>,
    /// Also disabled and unavailable tools.
    pub include_disabled: bool,
    /// Also tools of soft-deleted bundles.
    pub include_deleted: bool,
}

/// One result.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// The tool's row in the index.
    #[serde(skip)]
    pub id: i64,
    /// The tool's file relative to the catalog, or `builtin:<slug>`.
    pub path: String,
    pub tier: Tier,
    /// BM25 relevance inside the tier; higher is better.
    pub score: f64,
    /// Why it matched, for people.
    pub why: String,
}

/// A page of results.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    pub hits: Vec<Hit>,
    pub next_page_token: Option<String>,
    /// Typo corrections used: (typed, found).
    pub corrections: Vec<(String, String)>,
    /// How many results come before this page.
    pub offset: usize,
}

/// What a search lets through apart from its query (`--bundle`, `--tag`, `--include-disabled`,
/// `--include-deleted`): see [`Tiers::filters`] and [`Index::admitted`].
#[derive(Debug, Clone)]
pub struct Filters(SearchRequest);

/// A query planned into its tiers; see [`Index::search_tiers`].
#[derive(Debug)]
pub struct Tiers {
    /// The request, bundles named by folder.
    request: SearchRequest,
    plan: Plan,
}

impl Tiers {
    /// For a sentence: the BM25 a tool scores when it holds each content word of the query
    /// once, in a tool of average length (the sum of the words' IDF, an unknown word counted
    /// as a word of one tool); `None` for tiers.
    pub fn relevance_scale(&self) -> Option<f64> {
        self.plan.scale
    }

    /// The query as asked.
    pub fn query(&self) -> &str {
        &self.request.query
    }

    /// The search's filters, to ask of tools it did not find ([`Index::admitted`]).
    pub fn filters(&self) -> Filters {
        Filters(self.request.clone())
    }

    /// How many tiers there are.
    pub fn len(&self) -> usize {
        self.plan.tiers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.plan.tiers.is_empty()
    }

    /// For a sentence: what each of its terms adds to a tool's relevance ([`Shares::of`]);
    /// `None` for tiers.
    pub fn shares(&self) -> Option<&Shares> {
        self.plan.scale.map(|_| &self.plan.shares)
    }

    /// For a sentence: the BM25F relevance of every tool that holds one of its words, by index
    /// row (unfiltered); `None` for tiers.
    pub fn relevance(&self) -> Option<&HashMap<i64, f64>> {
        self.plan.scale.map(|_| &self.plan.relevance)
    }

    /// For a sentence's tier `i` (relevance): every tool that holds one of its words with its
    /// relevance, best first, equal relevance by row; `None` for any other tier.
    pub fn relevance_order(&self, i: usize) -> Option<Vec<(f64, i64)>> {
        let (tier, _, _) = self.plan.tiers.get(i)?;
        (*tier == Tier::Relevance).then(|| self.plan.relevance_order())
    }
}

impl Plan {
    /// See [`Tiers::relevance_order`].
    fn relevance_order(&self) -> Vec<(f64, i64)> {
        let mut ranked: Vec<(f64, i64)> = self.relevance.iter().map(|(id, s)| (*s, *id)).collect();
        ranked.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked
    }
}

/// The conditions on a tool row `t` and its bundle `bu` (after `WHERE …`, each starting with
/// ` AND`) for a search hit of `request`; their values are pushed to `params`.
fn filters(request: &SearchRequest, params: &mut Vec<SqlValue>) -> String {
    let mut sql = String::from(
        " AND t.tool_id IS NOT NULL AND bu.problem IS NULL AND bu.bundle_id IS NOT NULL",
    );
    if !request.include_disabled {
        sql.push_str(" AND t.is_enabled = 1 AND bu.is_enabled = 1 AND t.unavailable IS NULL");
    }
    if !request.include_deleted {
        sql.push_str(" AND bu.is_deleted = 0");
    }
    if !request.bundles.is_empty() {
        let marks: Vec<String> = request
            .bundles
            .iter()
            .map(|dir| {
                params.push(SqlValue::Text(dir.clone()));
                format!("?{}", params.len())
            })
            .collect();
        sql.push_str(&format!(" AND t.bundle_dir IN ({})", marks.join(", ")));
    }
    for tag in &request.tags {
        params.push(SqlValue::Text(tag.clone()));
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM json_each(t.tags) WHERE json_each.value = ?{})",
            params.len()
        ));
    }
    sql
}

/// `bm25()` weights of the full-text columns (name, tags, args, arg_text, arg_values,
/// description, bundle, ident, output) in the tiers: a name match beats a description match.
/// The tiers do not look at the output ([`UNLESS_OUTPUT`]), though `bm25()` normalises by the
/// length of the whole row, output included: a long `outputSchema` lowers a tier's score a
/// little (the fixture's `current-conditions` for "wether": 2.62 → 2.60).
const TIER_WEIGHTS: &str = "10.0, 5.0, 2.0, 2.0, 2.0, 3.0, 1.0, 10.0, 0.0";

/// The column filter that keeps a tier's words out of what a tool returns: a name-like query
/// ("status", "user id") is about what tools are and do, and thousands return a `status`.
const UNLESS_OUTPUT: &str = "- {output} : ";

/// The query for the tools an FTS5 `expression` matches among what `request` asks for: their
/// rows, paths and BM25 ranks; only the rows `only`, when given. With `limit`: the best that
/// many, by rank, then the most recently modified, then by row.
fn tier_query(
    request: &SearchRequest,
    expression: &str,
    only: Option<&[i64]>,
    limit: Option<usize>,
) -> (String, Vec<SqlValue>) {
    let mut params = vec![SqlValue::Text(expression.to_owned())];
    // The full-text table first (CROSS JOIN keeps it outside), so bm25() has its match.
    let mut sql = format!(
        "SELECT tool_fts.rowid, t.path, bm25(tool_fts, {TIER_WEIGHTS}) AS rank
         FROM tool_fts CROSS JOIN tool t ON t.id = tool_fts.rowid
         JOIN bundle bu ON bu.dir = t.bundle_dir
         WHERE tool_fts MATCH ?1"
    );
    sql.push_str(&filters(request, &mut params));
    if let Some(ids) = only {
        params.push(SqlValue::Text(
            serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned()),
        ));
        sql.push_str(&format!(
            " AND tool_fts.rowid IN (SELECT value FROM json_each(?{}))",
            params.len()
        ));
    }
    if let Some(limit) = limit {
        params.push(SqlValue::Integer(limit as i64));
        sql.push_str(&format!(
            " ORDER BY rank, t.modified_ns DESC, t.id LIMIT ?{}",
            params.len()
        ));
    }
    (sql, params)
}

/// How each tier is written as an FTS5 query, and why it matches.
#[derive(Debug)]
struct Plan {
    tiers: Vec<(Tier, String, String)>,
    corrections: Vec<(String, String)>,
    /// See [`Tiers::relevance_scale`].
    scale: Option<f64>,
    /// A sentence's BM25F relevance of every tool that holds one of its words, by index row.
    relevance: HashMap<i64, f64>,
    /// What each of a sentence's terms adds to those (empty for tiers).
    shares: Shares,
}

impl Index {
    /// Search the index; see the module comment for the ranking.
    pub fn search(
        &self,
        request: &SearchRequest,
        page_size: usize,
        page_token: Option<&str>,
    ) -> Result<SearchResults> {
        self.search_by(request, page_size, page_token, |index, tiers, wanted| {
            index.best_hits(&tiers, wanted)
        })
    }

    /// [`search`](Self::search), with the hits in the order `order` gives:
    /// `order(index, tiers, n)` returns the first `n` hits of the planned query `tiers`, best
    /// first (the pick layer orders a sentence's first hits as `pick` does). A page is the
    /// `offset`th to the `offset + size`th of those, so `order` must give the same list every
    /// time for the same query and catalog, for a page to follow from the one before it.
    pub fn search_by(
        &self,
        request: &SearchRequest,
        page_size: usize,
        page_token: Option<&str>,
        order: impl FnOnce(&Self, Tiers, usize) -> Result<Vec<Hit>>,
    ) -> Result<SearchResults> {
        self.search_from(request, Some(page_size), page_token, order)
    }

    /// [`search_by`](Self::search_by) without a page size (`--all`): every hit from
    /// `page_token` on (from the first without one), the same as the pages from there on
    /// joined, in one call of `order` — which then computes its order once, not once a page —
    /// and no next page token.
    pub fn search_all_by(
        &self,
        request: &SearchRequest,
        page_token: Option<&str>,
        order: impl FnOnce(&Self, Tiers, usize) -> Result<Vec<Hit>>,
    ) -> Result<SearchResults> {
        self.search_from(request, None, page_token, order)
    }

    /// A page of `page_size` hits from `page_token` on, or (`None`) every hit from there on.
    fn search_from(
        &self,
        request: &SearchRequest,
        page_size: Option<usize>,
        page_token: Option<&str>,
        order: impl FnOnce(&Self, Tiers, usize) -> Result<Vec<Hit>>,
    ) -> Result<SearchResults> {
        if request.query.trim().is_empty() {
            return Err(Error::EmptyQuery);
        }
        let size = page_size.map(page::check_size).transpose()?;
        // Bundles by folder, so a token holds whether a bundle was named by slug or by ID.
        let request = &SearchRequest {
            bundles: self.bundle_dirs(&request.bundles)?,
            ..request.clone()
        };
        let fingerprint = page::fingerprint(request);
        // A search token carries the offset and a fingerprint of the hits before it, in order;
        // anything else was not made here.
        let (offset, shown) = match page_token {
            None => (0, None),
            Some(token) => match page::decode(token, &fingerprint)?.as_slice() {
                [n, shown] => (n.parse().map_err(|_| page::forged())?, Some(shown.clone())),
                _ => return Err(page::forged().into()),
            },
        };
        let tokens = text::query_tokens(&request.query);
        if tokens.is_empty() {
            // Only punctuation or symbols: nothing can match, and that is not an error.
            return Ok(SearchResults {
                hits: Vec::new(),
                next_page_token: None,
                corrections: Vec::new(),
                offset,
            });
        }
        let plan = self.plan(&request.query, &tokens)?;
        let corrections = plan.corrections.clone();
        let tiers = Tiers {
            request: request.clone(),
            plan,
        };
        // One more than the page, to know whether another follows; every hit: no query finds
        // more than the index has tools.
        let wanted = match size {
            Some(size) => offset + size + 1,
            None => offset + self.tool_count()?,
        };
        let mut hits: Vec<Hit> = order(self, tiers, wanted)?;
        // Pages are stretches of one order by position. A change to the catalog can reorder
        // the hits (a new tool, or new word weights), and a page after it would then repeat
        // or skip hits: the token holds the hits before its page, and a page whose earlier
        // hits are no longer those is refused rather than served wrong.
        let before = |hits: &[Hit], n: usize| {
            page::fingerprint(&hits.iter().take(n).map(|h| &h.path).collect::<Vec<_>>())
        };
        if let Some(shown) = shown
            && (hits.len() < offset || before(&hits, offset) != shown)
        {
            return Err(page::reordered().into());
        }
        let next_page_token = size.filter(|&size| hits.len() > offset + size).map(|size| {
            let next = offset + size;
            page::encode(&[next.to_string(), before(&hits, next)], &fingerprint)
        });
        let mut hits: Vec<Hit> = hits.drain(offset.min(hits.len())..).collect();
        if let Some(size) = size {
            hits.truncate(size);
        }
        Ok(SearchResults {
            hits,
            next_page_token,
            corrections,
            offset,
        })
    }

    /// How many tools the index holds (every version, usable or not).
    fn tool_count(&self) -> Result<usize> {
        let count: i64 = self
            .conn
            .query_row("SELECT count(*) FROM tool", [], |row| row.get(0))
            .map_err(|e| self.db_error(e))?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// The first `wanted` hits of `tiers`, best first, in the order of
    /// [`search`](Self::search).
    pub fn best_hits(&self, tiers: &Tiers, wanted: usize) -> Result<Vec<Hit>> {
        self.hits(&tiers.request, &tiers.plan, wanted, 0)
    }

    /// For a sentence: the tools among rows `ids` that its search asks for (its filters), as
    /// hits, in no order, each with its relevance (0 for a tool without a word of it). None
    /// for a name-like query.
    pub fn sentence_hits(&self, tiers: &Tiers, ids: &[i64]) -> Result<Vec<Hit>> {
        match tiers.plan.tiers.first() {
            Some((Tier::Relevance, _, why)) => {
                self.relevance_hits(&tiers.request, &tiers.plan, ids, why)
            }
            _ => Ok(Vec::new()),
        }
    }

    /// The tiers of `request`'s query, to read its hits a tier at a time ([`tier_hits`]);
    /// none for a query without tokens, which matches nothing.
    ///
    /// [`tier_hits`]: Self::tier_hits
    pub fn search_tiers(&self, request: &SearchRequest) -> Result<Option<Tiers>> {
        self.tiers_of(request, |tokens| self.plan(&request.query, tokens))
    }

    /// The tiers `plan` makes of `request`'s tokens, bundles named by folder; `None` for a
    /// query without tokens.
    fn tiers_of(
        &self,
        request: &SearchRequest,
        plan: impl FnOnce(&[String]) -> Result<Plan>,
    ) -> Result<Option<Tiers>> {
        let tokens = text::query_tokens(&request.query);
        if tokens.is_empty() {
            return Ok(None);
        }
        let request = SearchRequest {
            bundles: self.bundle_dirs(&request.bundles)?,
            ..request.clone()
        };
        let plan = plan(&tokens)?;
        Ok(Some(Tiers { request, plan }))
    }

    /// The plan of a task with no content word ([`text::content_tokens`]: "now", "the", "do
    /// it"), for `pick`: a task says what it is about, and this one names at most a tool, so
    /// one tier, the tools whose name holds each of its words whole (the built-in `now` for
    /// "now"), ranked as the name-prefix tier. `None` for a query without tokens.
    pub fn name_tiers(&self, request: &SearchRequest) -> Result<Option<Tiers>> {
        self.tiers_of(request, |tokens| {
            let words: Vec<String> = tokens.iter().map(|t| quoted(t)).collect();
            Ok(Plan {
                tiers: vec![(
                    Tier::Prefix,
                    format!("{{name ident}} : ({})", words.join(" AND ")),
                    format!("name holds: {}", tokens.join(" ")),
                )],
                corrections: Vec::new(),
                scale: None,
                relevance: HashMap::new(),
                shares: Shares::default(),
            })
        })
    }

    /// The tools of tier `i` of `tiers` that [`search`](Self::search) finds, in no order, each
    /// with its BM25 relevance in that tier; only the rows `only`, when given. A tool found in
    /// an earlier tier too is a hit of that tier (the best one), not of this one: the caller,
    /// reading the tiers in order, leaves it out.
    pub fn tier_hits(&self, tiers: &Tiers, i: usize, only: Option<&[i64]>) -> Result<Vec<Hit>> {
        let Some((tier, expression, why)) = tiers.plan.tiers.get(i) else {
            return Ok(Vec::new());
        };
        if *tier == Tier::Relevance {
            let relevance = &tiers.plan.relevance;
            let ids: Vec<i64> = match only {
                Some(only) => only
                    .iter()
                    .copied()
                    .filter(|id| relevance.contains_key(id))
                    .collect(),
                None => relevance.keys().copied().collect(),
            };
            return self.relevance_hits(&tiers.request, &tiers.plan, &ids, why);
        }
        let (sql, params) = tier_query(&tiers.request, expression, only, None);
        let mut statement = self.conn.prepare(&sql).map_err(|e| self.db_error(e))?;
        let rows = statement
            .query_map(rusqlite::params_from_iter(params), |row| {
                Ok(Hit {
                    id: row.get(0)?,
                    path: row.get(1)?,
                    tier: *tier,
                    // bm25() is negative, more negative is better.
                    score: -row.get::<_, f64>(2)?,
                    why: why.clone(),
                })
            })
            .map_err(|e| self.db_error(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.db_error(e))
    }

    /// The hits of `plan` for `request`, best first, from the `offset`th on, at most `limit`.
    ///
    /// A tier at a time, each sorted and cut short by SQLite: a later tier is read only when the
    /// earlier ones hold fewer hits than the page needs (a tool an earlier tier found is left
    /// out of a later one). A query whose first tier fills the page never runs its widest tier,
    /// "some of the words", which matches most of a big catalog for a question in plain words.
    fn hits(
        &self,
        request: &SearchRequest,
        plan: &Plan,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<Hit>> {
        let wanted = offset + limit;
        let mut found = std::collections::HashSet::new();
        let mut hits = Vec::new();
        for (tier, expression, why) in &plan.tiers {
            if hits.len() >= wanted {
                break;
            }
            if *tier == Tier::Relevance {
                hits.extend(self.best_relevance_hits(request, plan, wanted, why)?);
                continue;
            }
            // Rows an earlier tier has are skipped: read as many more. A tier that gives fewer
            // rows than asked is read whole, so `found` holds every tool of the tiers before.
            let asked = wanted - hits.len() + found.len();
            let (sql, params) = tier_query(request, expression, None, Some(asked));
            let mut statement = self.conn.prepare(&sql).map_err(|e| self.db_error(e))?;
            let mut rows = statement
                .query(rusqlite::params_from_iter(params))
                .map_err(|e| self.db_error(e))?;
            let mut tier_hits = Vec::new();
            while let Some(row) = rows.next().map_err(|e| self.db_error(e))? {
                let id: i64 = row.get(0).map_err(|e| self.db_error(e))?;
                if found.contains(&id) {
                    continue;
                }
                tier_hits.push(Hit {
                    id,
                    path: row.get(1).map_err(|e| self.db_error(e))?,
                    tier: *tier,
                    // bm25() is negative, more negative is better.
                    score: -row.get::<_, f64>(2).map_err(|e| self.db_error(e))?,
                    why: why.clone(),
                });
            }
            found.extend(tier_hits.iter().map(|hit| hit.id));
            hits.extend(tier_hits);
        }
        Ok(hits.into_iter().skip(offset).take(limit).collect())
    }

    /// The FTS5 expressions of each tier, or of relevance for a sentence. Tokens are letters
    /// and digits only, quoted.
    fn plan(&self, query: &str, tokens: &[String]) -> Result<Plan> {
        if text::is_sentence(query) {
            return self.relevance_plan(&text::content_tokens(query));
        }
        let prefix = |t: &String| {
            if t.chars().count() >= 2 {
                format!("{}*", quoted(t))
            } else {
                quoted(t)
            }
        };
        let mut corrections = Vec::new();
        let mut alternatives = Vec::new();
        // The "some words" tier leaves out stop words, unless the query holds nothing else.
        let mut content_alternatives = Vec::new();
        for token in tokens {
            let mut forms = vec![prefix(token)];
            let stop_word = text::is_stop_word(token);
            if !stop_word && token.chars().count() >= 4 && !self.matches(&prefix(token))? {
                for variant in self.typo_variants(token)? {
                    forms.push(quoted(&variant));
                    corrections.push((token.clone(), variant));
                }
            }
            let alternative = format!("({})", forms.join(" OR "));
            if !stop_word {
                content_alternatives.push(alternative.clone());
            }
            alternatives.push(alternative);
        }
        if content_alternatives.is_empty() {
            content_alternatives = alternatives.clone();
        }
        let list = |sep: &str, f: &dyn Fn(&String) -> String| {
            tokens.iter().map(f).collect::<Vec<_>>().join(sep)
        };
        let shown = tokens.join(" ");
        let mut tiers = vec![
            (
                Tier::Prefix,
                format!("{{name ident}} : ({})", list(" AND ", &prefix)),
                format!("name starts with: {shown}"),
            ),
            (
                Tier::WholeWord,
                format!("{UNLESS_OUTPUT}({})", list(" AND ", &|t| quoted(t))),
                format!("whole words: {shown}"),
            ),
        ];
        let fuzzy_why = if corrections.is_empty() {
            format!("words or word starts: {shown}")
        } else {
            let fixed: Vec<String> = corrections
                .iter()
                .map(|(a, b)| format!("{a}→{b}"))
                .collect();
            format!("typo-tolerant: {}", fixed.join(", "))
        };
        tiers.push((
            Tier::Fuzzy,
            format!("{UNLESS_OUTPUT}({})", alternatives.join(" AND ")),
            fuzzy_why,
        ));
        if tokens.len() > 1 {
            tiers.push((
                Tier::SomeWords,
                format!("{UNLESS_OUTPUT}({})", content_alternatives.join(" OR ")),
                format!("some of: {shown}"),
            ));
        }
        Ok(Plan {
            tiers,
            corrections,
            scale: None,
            relevance: HashMap::new(),
            shares: Shares::default(),
        })
    }

    /// The plan of a sentence: any of its content words (a typo corrected when the word
    /// matches nothing), ranked by BM25F relevance ([`super::bm25f`]).
    fn relevance_plan(&self, words: &[String]) -> Result<Plan> {
        let mut corrections = Vec::new();
        let mut terms = self.index_terms(words)?;
        let tools = self.fts_rows()?;
        // Each term's occurrences are read once, here (a long request's common words hold
        // thousands of them).
        let mut relevance = self.relevance(&terms)?;
        // A sentence names films, cities and words no tool uses: "corrected", such a word
        // becomes some rare word of the catalog that outweighs the words that did match
        // ("avengers" → "average"). So words are corrected only when none matches as typed.
        if relevance.scores.is_empty() {
            for (word, term) in words.iter().zip(terms.iter_mut()) {
                if word.chars().count() >= 4
                    && let Some(variant) = self.typo_variants(word)?.into_iter().next()
                {
                    corrections.push((word.clone(), variant.clone()));
                    *term = Some(variant);
                }
            }
            if !corrections.is_empty() {
                relevance = self.relevance(&terms)?;
            }
        }
        // A word no tool holds counts as a word of one tool.
        let scale = relevance
            .documents
            .iter()
            .map(|n| idf(tools, (*n).max(1)))
            .sum();
        let why = if corrections.is_empty() {
            format!("relevant to: {}", words.join(" "))
        } else {
            let fixed: Vec<String> = corrections
                .iter()
                .map(|(a, b)| format!("{a}→{b}"))
                .collect();
            format!("relevant to: {} ({})", words.join(" "), fixed.join(", "))
        };
        Ok(Plan {
            tiers: vec![(Tier::Relevance, String::new(), why)],
            corrections,
            scale: Some(scale),
            relevance: relevance.scores,
            shares: relevance.shares,
        })
    }

    /// The hits among the tools `ids` of a sentence's `plan` that `request` asks for, in no
    /// order, with their relevance.
    fn relevance_hits(
        &self,
        request: &SearchRequest,
        plan: &Plan,
        ids: &[i64],
        why: &str,
    ) -> Result<Vec<Hit>> {
        Ok(self
            .filtered(request, ids)?
            .into_iter()
            .map(|(id, path, _)| Hit {
                id,
                path,
                tier: Tier::Relevance,
                score: plan.relevance.get(&id).copied().unwrap_or(0.0),
                why: why.to_owned(),
            })
            .collect())
    }

    /// The `wanted` best hits of a sentence's `plan` that `request` asks for, best first
    /// (then the most recently modified, then by row). The tools are taken best first in
    /// growing batches, and the filters asked of each batch, until `wanted` have passed: a
    /// common word matches thousands of tools, of which a page shows ten.
    fn best_relevance_hits(
        &self,
        request: &SearchRequest,
        plan: &Plan,
        wanted: usize,
        why: &str,
    ) -> Result<Vec<Hit>> {
        let ranked = plan.relevance_order();
        let mut passed: Vec<(f64, i64, String, i64)> = Vec::new();
        let mut start = 0;
        let mut batch = wanted.max(16);
        while start < ranked.len() && passed.len() < wanted {
            // A batch ends after a change of score, so equal scores are ordered together.
            let mut end = (start + batch).min(ranked.len());
            while end < ranked.len() && ranked[end].0.total_cmp(&ranked[end - 1].0).is_eq() {
                end += 1;
            }
            let ids: Vec<i64> = ranked[start..end].iter().map(|(_, id)| *id).collect();
            for (id, path, modified) in self.filtered(request, &ids)? {
                let score = plan.relevance.get(&id).copied().unwrap_or(0.0);
                passed.push((score, id, path, modified));
            }
            start = end;
            batch *= 4;
        }
        passed.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.3.cmp(&a.3)).then(a.1.cmp(&b.1)));
        Ok(passed
            .into_iter()
            .take(wanted)
            .map(|(score, id, path, _)| Hit {
                id,
                path,
                tier: Tier::Relevance,
                score,
                why: why.to_owned(),
            })
            .collect())
    }

    /// The rows among `ids` that a search's `filters` let through, whatever their words.
    pub fn admitted(&self, filters: &Filters, ids: &[i64]) -> Result<HashSet<i64>> {
        Ok(self
            .filtered(&filters.0, ids)?
            .into_iter()
            .map(|(id, _, _)| id)
            .collect())
    }

    /// The tools among `ids` that `request` asks for: (row, path, `modifiedAt`).
    fn filtered(&self, request: &SearchRequest, ids: &[i64]) -> Result<Vec<(i64, String, i64)>> {
        let mut params = vec![SqlValue::Text(
            serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned()),
        )];
        let mut sql = String::from(
            "SELECT t.id, t.path, t.modified_ns FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE t.id IN (SELECT value FROM json_each(?1))",
        );
        sql.push_str(&filters(request, &mut params));
        let mut statement = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| self.db_error(e))?;
        let rows = statement
            .query_map(rusqlite::params_from_iter(params), |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(|e| self.db_error(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.db_error(e))
    }

    /// How many tools the full-text index holds.
    pub fn fts_rows(&self) -> Result<i64> {
        self.conn
            .query_row("SELECT count(*) FROM tool_fts_docsize", [], |r| r.get(0))
            .map_err(|e| self.db_error(e))
    }

    /// Whether any tool matches an FTS5 expression.
    fn matches(&self, expression: &str) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM tool_fts WHERE tool_fts MATCH ?1)",
                [expression],
                |r| r.get(0),
            )
            .map_err(|e| self.db_error(e))
    }

    /// The correction of a typo: the word of the index closest to `token` (within the allowed
    /// distance), the most common one when several are as close — as a spell checker picks
    /// "weather" over "whether" for "wether" in a catalog about weather. One correction only:
    /// BM25 favours rare words, so offering a rare near-miss beside the right word would rank
    /// the near-miss first.
    fn typo_variants(&self, token: &str) -> Result<Vec<String>> {
        // The vocabulary holds stems ("temperatur", "headlin"), so the token is compared as
        // typed and as stemmed ("tempreture" → "tempretur", one transposition and one letter
        // from "temperatur"); the closer form wins.
        let stemmed = STEMMER.with(|s| s.stem(token).into_owned());
        let forms: &[&str] = if stemmed == token {
            &[token]
        } else {
            &[token, &stemmed]
        };
        let length = token.chars().count();
        let max_distance = if length >= 8 { 2 } else { 1 };
        let shortest = forms
            .iter()
            .map(|f| f.chars().count())
            .min()
            .unwrap_or(length);
        let (shortest, longest) = (shortest.saturating_sub(max_distance), length + max_distance);
        // A word of the vocabulary is a candidate when it starts with the token's first letter
        // or with its second (the first two swapped, a letter typed before the word), as
        // Lucene's fuzzy queries with a prefix length of 1: the vocabulary is read for those
        // letters alone. fts5vocab counts each word's documents as it reads it, so all of it
        // costs ~25 ms at 10,000 tools and ~150 ms at 100,000; a letter, a twentieth of that.
        let mut letters: Vec<char> = token.chars().take(2).collect();
        letters.dedup();
        let mut statement = self
            .conn
            .prepare_cached("SELECT term, doc FROM tool_vocab WHERE term >= ?1 AND term < ?2")
            .map_err(|e| self.db_error(e))?;
        let mut best: Option<(usize, std::cmp::Reverse<i64>, String)> = None;
        for letter in letters {
            let after = char::from_u32(letter as u32 + 1)
                .map_or_else(|| format!("{letter}\u{10FFFF}"), String::from);
            let terms = statement
                .query_map([letter.to_string(), after], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
                })
                .map_err(|e| self.db_error(e))?;
            for term in terms {
                let (term, docs) = term.map_err(|e| self.db_error(e))?;
                if !(shortest..=longest).contains(&term.chars().count()) {
                    continue;
                }
                let distance = forms
                    .iter()
                    .map(|form| strsim::damerau_levenshtein(form, &term))
                    .min()
                    .unwrap_or(usize::MAX);
                if distance <= max_distance && term.chars().all(char::is_alphanumeric) {
                    let candidate = (distance, std::cmp::Reverse(docs), term);
                    if best.as_ref().is_none_or(|b| candidate < *b) {
                        best = Some(candidate);
                    }
                }
            }
        }
        Ok(best.into_iter().map(|(_, _, term)| term).collect())
    }
}
