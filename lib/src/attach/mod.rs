//! `attach`: keep an agent's tool set fitted to its task and under limits, as the attach
//! contract (the Tool Selector API's `POST /api/v1/tools/attach`) describes.
//!
//! One run, under the agent's lock:
//! 1. **Search**: with a query, every usable tool of the catalog is scored by a `pick` scorer
//!    (the caller chooses; `toolctl attach` takes the best one available) and the best
//!    `limit` tools with a score above 0 are the candidates (`processed_count`). A match
//!    score is absolute: the scorer's 0..1 score × 100 (for the default `bm25` scorer on a
//!    sentence, `100 × (1 − e^(−2 × bm25 / scale))`, 86 when a tool holds every content word
//!    of the request once; see [`pick::relevance_score`]; for `hybrid`, whose ranking is
//!    normalised per request, `100 × (0.4 × bm25's + 0.6 × cosine)`, see
//!    [`pick::absolute_hybrid`]), so `min_score` means the same for every request and a
//!    request that matches nothing well passes nothing; the candidates
//!    whose match score reaches `min_score` pass (`passed_filter_count`). When none passes,
//!    the query prunes nothing (phases 3, 4 and 6 are skipped; the limits still hold). The
//!    first candidates bring the tools their required arguments name ([`pick::helpers`]) as
//!    candidates, at the score of the tool that needs them (or their own, if higher): a
//!    helper passes with that tool or on its own, never below `min_score` otherwise. Before
//!    them, the first candidates lift their siblings ([`pick::siblings`]: tools of their
//!    bundle whose names begin with the same word, that match the request a little), each
//!    at the key `pick` gives it, worked out from the absolute scores: a sibling passes only
//!    with its anchor (its key stays below the anchor's) or on its own.
//! 2. **Processing**: the agent's tools are checked against the catalog. A tool follows its
//!    slug to the version that stands for it now (a new version, or another after one was
//!    disabled); a tool whose slug has no usable version left leaves the agent (reported as
//!    detached in this phase, protected or not: an agent cannot hold what cannot be called).
//!    Passed tools the agent holds already are kept; the others are to attach.
//! 3. to 6. **Pre-attach pruning, detachment, attachment, post-attach pruning** and the
//!    limits: [`plan`], a pure function whose module comment states each rule.
//!
//! Built-in tools are the contract's "core" tools; every other tool is "external" (its "MCP"
//! tools). Agents live in files ([`agent`]) or on a Letta server ([`on_letta`], over
//! [`letta`]). On files an attachment cannot fail, so `failed_attachments` holds only the
//! matched tools a limit left out and `failed_detachments` is empty; on Letta each call can
//! fail on its own.

pub mod agent;
pub mod contract;
pub mod letta;
pub mod on_letta;
pub mod plan;
pub mod request;
#[cfg(test)]
mod tests;

pub use agent::{AgentFile, AgentId, AttachedTool};
pub use plan::{Kind, Limits, Phase};

use crate::catalog::config::AttachConfig;
use crate::catalog::config::PickConfig;
use crate::catalog::{self, Catalog, ToolRef};
use crate::index::default_tools::DefaultTool;
use crate::index::{self, Index, ToolRow};
use crate::pick::endpoints::{EndpointOverrides, Endpoints};
use crate::pick::{self, Endpoint, PickError, PickRequest, Scorer};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The contract's defaults and ranges.
pub const DEFAULT_LIMIT: i64 = 10;
pub const DEFAULT_MIN_SCORE: f64 = 35.0;
pub const DEFAULT_MAX_TOTAL: usize = 30;
pub const DEFAULT_MAX_EXTERNAL: usize = 20;
pub const DEFAULT_MIN_EXTERNAL: usize = 7;
pub const DEFAULT_DROP_RATE: f64 = 0.6;
pub const DEFAULT_MAX_LIMIT: usize = 25;

/// A warning of an attach run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// Said as it is (names no command or flag).
    Text(String),
    /// A limit the agent stays over (it names the request's keep list: see
    /// [`OverLimit::describe`]).
    OverLimit(plan::OverLimit),
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Text(text) => f.write_str(text),
            Self::OverLimit(over) => over.fmt(f),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// The request's limit is not in 1..=`max`; nothing was changed.
    #[error("the limit {limit} is out of range: it must be between 1 and {max}")]
    Limit { limit: i64, max: usize },
    /// The request's minimum score is not in 0..=100; nothing was changed.
    #[error("the minimum score {min_score} is out of range: it must be between 0 and 100")]
    MinScore { min_score: f64 },
    /// A request or setting out of range; nothing was changed.
    #[error("{message}")]
    Invalid {
        message: String,
        hint: Option<String>,
    },
    /// A tool to keep (`keep` of the request) that names no tool attach can keep.
    #[error("the tool to keep '{tool}': {why}")]
    Keep {
        tool: String,
        why: String,
        hint: Option<String>,
    },
    #[error(transparent)]
    Catalog(#[from] catalog::Error),
    #[error(transparent)]
    Index(#[from] index::Error),
    #[error(transparent)]
    Pick(#[from] PickError),
    /// Letta could not be asked (nothing was changed when the listing failed).
    #[error(transparent)]
    Letta(letta::LettaError),
}

impl AttachError {
    fn invalid(message: impl Into<String>, hint: impl Into<Option<String>>) -> Self {
        Self::Invalid {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

/// The limits and protected names in force: `toolctl.json`'s `attach` settings, each
/// overridden by the environment variable of the contract's name.
#[derive(Debug, Clone)]
pub struct Settings {
    pub limits: Limits,
    /// Names never detached (`NEVER_DETACH_TOOLS`, `PROTECTED_TOOLS`), matched
    /// case-insensitively against a tool's exported name, its slug and `bundle/slug`.
    pub protected: Vec<String>,
    /// `FIND_TOOLS_MAX_LIMIT`: the largest `--limit`.
    pub max_limit: usize,
}

/// The environment variable `name` read by `parse`: `None` when unset, an error naming the
/// variable when its value is not `what`.
fn from_env<T>(
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
    parse: impl Fn(&str) -> Option<T>,
    what: &str,
) -> Result<Option<T>, AttachError> {
    match env(name) {
        None => Ok(None),
        Some(text) => parse(text.trim()).map(Some).ok_or_else(|| {
            AttachError::invalid(
                format!("{name}={text:?} (environment) is not {what}"),
                Some(format!(
                    "set {name} to {what}, or unset it to use toolctl.json"
                )),
            )
        }),
    }
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn names(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Settings {
    /// The settings of `config`, overridden by `env` (a lookup of environment variables).
    pub fn resolve(
        config: &AttachConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, AttachError> {
        let count = |name: &str, configured: Option<usize>, default: usize| {
            Ok::<_, AttachError>(
                from_env(env, name, |t| t.parse::<usize>().ok(), "a whole number")?
                    .map(|n| (n, "environment"))
                    .or(configured.map(|n| (n, "toolctl.json")))
                    .unwrap_or((default, "default")),
            )
        };
        let max_total = count("MAX_TOTAL_TOOLS", config.max_total_tools, DEFAULT_MAX_TOTAL)?;
        let max_external = count("MAX_MCP_TOOLS", config.max_mcp_tools, DEFAULT_MAX_EXTERNAL)?;
        let min_external = count("MIN_MCP_TOOLS", config.min_mcp_tools, DEFAULT_MIN_EXTERNAL)?;
        let max_limit = count(
            "FIND_TOOLS_MAX_LIMIT",
            config.find_tools_max_limit,
            DEFAULT_MAX_LIMIT,
        )?;
        let rate = |t: &str| t.parse::<f64>().ok().filter(|r| (0.0..=1.0).contains(r));
        let drop_rate = match from_env(env, "DEFAULT_DROP_RATE", rate, "a number from 0 to 1")? {
            Some(rate) => rate,
            None => match config.default_drop_rate {
                Some(r) if (0.0..=1.0).contains(&r) => r,
                Some(r) => {
                    return Err(AttachError::invalid(
                        format!(
                            "toolctl.json: /attach/defaultDropRate: {r} is not between 0 and 1"
                        ),
                        None,
                    ));
                }
                None => DEFAULT_DROP_RATE,
            },
        };
        let exclude_core = from_env(env, "EXCLUDE_LETTA_CORE_TOOLS", parse_bool, "true or false")?
            .or(config.exclude_core_tools)
            .unwrap_or(true);
        // Either variable, when set (even empty), replaces the configured list.
        let vars: Vec<String> = ["NEVER_DETACH_TOOLS", "PROTECTED_TOOLS"]
            .iter()
            .filter_map(|name| env(name))
            .collect();
        let protected = if vars.is_empty() {
            config.protected_tools.clone().unwrap_or_default()
        } else {
            vars.iter().flat_map(|text| names(text)).collect()
        };

        let setting =
            |name: &str, (value, source): (usize, &str)| format!("{name}={value} ({source})");
        if min_external.0 > max_external.0 {
            return Err(AttachError::invalid(
                format!(
                    "{} is above {}",
                    setting("MIN_MCP_TOOLS", min_external),
                    setting("MAX_MCP_TOOLS", max_external)
                ),
                Some("the minimum of external tools cannot be above their maximum".to_owned()),
            ));
        }
        if min_external.0 > max_total.0 {
            return Err(AttachError::invalid(
                format!(
                    "{} is above {}",
                    setting("MIN_MCP_TOOLS", min_external),
                    setting("MAX_TOTAL_TOOLS", max_total)
                ),
                Some("the minimum of external tools cannot be above the total".to_owned()),
            ));
        }
        if max_limit.0 == 0 {
            return Err(AttachError::invalid(
                format!(
                    "{} leaves no room for a search",
                    setting("FIND_TOOLS_MAX_LIMIT", max_limit)
                ),
                Some("set it to 1 or more (25 by default)".to_owned()),
            ));
        }
        Ok(Self {
            limits: Limits {
                max_total: max_total.0,
                max_external: max_external.0,
                min_external: min_external.0,
                drop_rate,
                exclude_core,
            },
            protected,
            max_limit: max_limit.0,
        })
    }

    /// Whether `member` is protected by name.
    fn protects(&self, member: &DefaultTool) -> bool {
        self.protected.iter().any(|p| {
            p.eq_ignore_ascii_case(&member.name)
                || p.eq_ignore_ascii_case(&member.row.slug)
                || p.eq_ignore_ascii_case(&format!(
                    "{}/{}",
                    member.row.bundle_slug, member.row.slug
                ))
        })
    }
}

/// The scorer attach uses when none is asked for: the best there is — embeddings with
/// keywords when an endpoint is set (no labelled set can say how good a given model is, but
/// semantic matching finds what words miss), else the search ranking, which scores best of the
/// local scorers on the fixture queries.
pub fn default_scorer(config: &PickConfig, overrides: &EndpointOverrides) -> Scorer {
    if overrides.has_embed(config) {
        Scorer::Hybrid
    } else {
        Scorer::Fused
    }
}

/// The endpoints an attach with `query` needs: none when the query is empty (nothing is
/// searched), else those `scorer` needs.
pub fn endpoints(
    query: &str,
    config: &PickConfig,
    overrides: &EndpointOverrides,
    scorer: Scorer,
) -> Result<Endpoints, PickError> {
    if query.trim().is_empty() {
        Ok(Endpoints::none())
    } else {
        Endpoints::resolve(config, overrides, scorer)
    }
}

/// One `attach` request: the contract's request fields, and how to score.
#[derive(Debug, Clone)]
pub struct AttachRequest {
    pub agent: AgentId,
    /// Empty: no search, nothing attached; only the limits are enforced.
    pub query: String,
    /// 1..=`FIND_TOOLS_MAX_LIMIT`.
    pub limit: i64,
    /// 0..=100.
    pub min_score: f64,
    /// Tools never detached: references, toolIDs or exported names.
    pub keep: Vec<String>,
    pub auto_prune: bool,
    pub scorer: Scorer,
    pub embed: Option<Endpoint>,
    pub embed_batch: usize,
    pub llm: Option<Endpoint>,
    /// Attach with the first candidates the tools their required arguments name
    /// ([`pick::helpers`]), at their score.
    pub helpers: bool,
    /// Lift the first candidates' siblings ([`pick::siblings`]).
    pub siblings: bool,
}

impl AttachRequest {
    fn check(&self, settings: &Settings) -> Result<(), AttachError> {
        let max = settings.max_limit;
        if self.limit < 1 || self.limit as u64 > max as u64 {
            return Err(AttachError::Limit {
                limit: self.limit,
                max,
            });
        }
        if !(0.0..=100.0).contains(&self.min_score) {
            return Err(AttachError::MinScore {
                min_score: self.min_score,
            });
        }
        Ok(())
    }
}

/// A tool the request matched, now on the agent.
#[derive(Debug, Clone)]
pub struct Attachment {
    /// The catalog's toolID on files; Letta's tool ID on Letta.
    pub tool_id: String,
    pub name: String,
    pub reference: String,
    /// 0–100.
    pub match_score: f64,
    /// The agent held it before this run.
    pub already_attached: bool,
}

/// A tool that left the agent.
#[derive(Debug, Clone)]
pub struct Detachment {
    /// As in [`Attachment::tool_id`].
    pub tool_id: String,
    pub name: String,
    pub reference: String,
    pub phase: Phase,
    pub reason: String,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub agent: AgentId,
    /// Candidates from the search (`processed_count`).
    pub processed: usize,
    /// Candidates that reached `min_score` (`passed_filter_count`).
    pub passed: usize,
    /// The passed tools, best first.
    pub attachments: Vec<Attachment>,
    pub detachments: Vec<Detachment>,
    /// IDs of the agent's tools protected by `--keep` or by name.
    pub preserved: Vec<String>,
    /// Tools to attach that could not be (Letta refused, or has no such tool to register).
    pub failed_attachments: Vec<Failure>,
    /// Tools to detach that Letta did not let go; they stay on the agent.
    pub failed_detachments: Vec<Failure>,
    /// The scorer that gave the scores (none without a query).
    pub scorer: Option<Scorer>,
    /// Why the requested scorer did not give the scores, when it did not; what protection
    /// keeps over a limit; tools that left because they can no longer be called.
    pub warnings: Vec<Warning>,
    /// The agent file was created by this run (files only).
    pub created: bool,
    /// The agent was changed (its file created or written, or Letta told).
    pub written: bool,
    /// The agent's tools now: all, external, core.
    pub counts: (usize, usize, usize),
    pub settings: Settings,
}

/// A tool an attach run could not attach or detach.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Letta's tool ID, when the tool has one.
    pub tool_id: Option<String>,
    pub name: String,
    /// `bundle/slug@version`, for a catalog tool.
    pub reference: Option<String>,
    pub reason: String,
}

/// A tool slug of a bundle: what an agent holds, whatever the version.
type Key = (String, String);

fn key_of(member: &DefaultTool) -> Key {
    key_of_row(&member.row)
}

fn key_of_row(row: &ToolRow) -> Key {
    (row.bundle_dir.clone(), row.slug.clone())
}

fn kind_of(member: &DefaultTool) -> Kind {
    if member.row.is_builtin() {
        Kind::Core
    } else {
        Kind::External
    }
}

/// Run `request` on the catalog whose index is `index`.
pub fn attach(
    catalog: &Catalog,
    index: &Index,
    settings: &Settings,
    request: &AttachRequest,
    lock_timeout: Duration,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome, AttachError> {
    request.check(settings)?;
    let query = request.query.trim();
    let has_query = !query.is_empty();
    let root = catalog.root();

    let lookup = Lookup { index };

    let mut kept_keys = HashSet::new();
    for text in &request.keep {
        let (entry, _) = catalog
            .resolve_tool(text, catalog::VersionChoice::Default)
            .map_err(|e| keep_error(text, &e))?;
        let key = lookup
            .key_of_id(&entry.tool.tool_id.to_string())?
            .ok_or_else(|| AttachError::Keep {
                tool: text.clone(),
                why: format!("{} is not in a live bundle", entry.reference()),
                hint: None,
            })?;
        kept_keys.insert(key);
    }

    // Score before taking the lock: a network scorer can take seconds, and the agent's
    // state does not change the scores.
    let Searched {
        processed,
        passed,
        mut matches,
        scorer: used_scorer,
        fallback,
    } = search(catalog, index, request, progress)?;
    let passed_ids: Vec<i64> = passed.iter().map(|(id, _)| *id).collect();

    let _guard = request.agent.lock(root, lock_timeout)?;
    let now = crate::base::time::now();
    let existing = AgentFile::load(root, request.agent)?;
    let created = existing.is_none();
    let mut file = existing.unwrap_or_else(|| AgentFile::new(request.agent, now));
    let before = file.tools.clone();

    // Processing: follow each held tool to the version that stands for its slug now.
    let found = lookup.follow(&file.tools, index.rows_by_id(&passed_ids, false)?)?;
    let (held, mut detachments) = follow_held(&found, std::mem::take(&mut file.tools));
    if let Some(matches) = &mut matches {
        // The held tools' relevance, which the ranking may not have read.
        let ids: Vec<i64> = held.iter().map(|(_, _, m)| m.row.id).collect();
        matches.settle(index, &ids)?;
    }
    // The score of a candidate that matched; 0 for the others.
    let relevance = |member: &DefaultTool| match &matches {
        Some(matches) if member.is_usable() => matches.absolute(member.row.id).max(0.0),
        _ => 0.0,
    };
    let passed: Vec<(&DefaultTool, f64)> = passed
        .iter()
        .filter_map(|(id, score)| Some((found.by_id(*id)?, *score)))
        .collect();

    let input = plan::Input {
        held: held
            .iter()
            .map(|(key, tool, member)| plan::Held {
                key: key.clone(),
                kind: kind_of(member),
                pinned: kept_keys.contains(key) || settings.protects(member),
                relevance: relevance(member),
                attached_at: tool.attached_at.as_millisecond(),
            })
            .collect(),
        matched: passed
            .iter()
            .map(|(member, score)| plan::Matched {
                key: key_of(member),
                kind: kind_of(member),
                score: *score,
            })
            .collect(),
        // A query that passes no tool says nothing about the agent's task (scores are
        // absolute: nothing matched it well), so it prunes nothing: only the limits hold.
        has_query: has_query && !passed.is_empty(),
        auto_prune: request.auto_prune,
        limits: settings.limits.clone(),
    };
    let decided = plan::plan(&input);

    // The planner never detaches a pinned tool.
    let preserved = input
        .held
        .iter()
        .zip(&held)
        .filter(|(h, _)| h.pinned)
        .map(|(_, (_, tool, _))| tool.tool_id.to_string())
        .collect();
    let score_of: HashMap<Key, f64> = passed.iter().map(|(m, s)| (key_of(m), *s)).collect();
    let mut by_key: HashMap<Key, (AttachedTool, &DefaultTool)> = held
        .into_iter()
        .map(|(key, tool, member)| (key, (tool, member)))
        .collect();
    for (key, phase) in &decided.detached {
        if let Some((tool, _)) = by_key.remove(key) {
            detachments.push(Detachment {
                tool_id: tool.tool_id.to_string(),
                name: tool.name,
                reference: tool.reference,
                phase: *phase,
                reason: phase.reason().to_owned(),
            });
        }
    }
    let mut attachments = Vec::new();
    let mut failed_attachments = Vec::new();
    let refused: HashMap<&Key, &String> = decided.refused.iter().map(|(k, l)| (k, l)).collect();
    for (member, score) in &passed {
        let key = key_of(member);
        if let Some(limit) = refused.get(&key) {
            failed_attachments.push(Failure {
                tool_id: Some(member.row.tool_id.clone()),
                name: member.name.clone(),
                reference: Some(member.reference()),
                reason: over_limit_reason(limit),
            });
            continue;
        }
        attachments.push(Attachment {
            tool_id: member.row.tool_id.clone(),
            name: member.name.clone(),
            reference: member.reference(),
            match_score: percent(*score),
            already_attached: by_key.contains_key(&key),
        });
    }
    for key in &decided.kept {
        let tool = match by_key.remove(key) {
            Some((mut tool, _)) => {
                if let Some(score) = score_of.get(key) {
                    tool.match_score = Some(percent(*score));
                }
                tool
            }
            None => {
                let Some(member) = found.members.get(key) else {
                    continue;
                };
                AttachedTool {
                    tool_id: parse_id(&member.row.tool_id),
                    reference: member.reference(),
                    name: member.name.clone(),
                    kind: kind_of(member),
                    attached_at: now,
                    match_score: score_of.get(key).map(|s| percent(*s)),
                }
            }
        };
        file.tools.push(tool);
    }

    let written = created || file.tools != before;
    if written {
        file.modified_at = now;
        file.save(root)?;
    }
    let mut warnings: Vec<Warning> = fallback.into_iter().map(Warning::Text).collect();
    warnings.extend(decided.warnings.into_iter().map(Warning::OverLimit));
    for d in detachments.iter().filter(|d| d.phase == Phase::Processing) {
        warnings.push(Warning::Text(format!(
            "{} left the agent: {}",
            d.reference,
            d.reason.trim_start_matches("processing: ")
        )));
    }
    Ok(Outcome {
        agent: request.agent,
        processed,
        passed: passed.len(),
        attachments,
        detachments,
        preserved,
        failed_attachments,
        failed_detachments: Vec::new(),
        scorer: used_scorer,
        warnings,
        created,
        written,
        counts: file.counts(),
        settings: settings.clone(),
    })
}

/// The search phase's result.
struct Searched {
    /// Candidates from the search (`processed_count`).
    processed: usize,
    /// The candidates that reached `min_score` (index rows), with their absolute scores,
    /// best first.
    passed: Vec<(i64, f64)>,
    /// The scores, when there was a query.
    matches: Option<pick::Matches>,
    scorer: Option<Scorer>,
    /// Why the requested scorer did not give the scores, when it did not.
    fallback: Option<String>,
}

/// The search phase: the best `limit` tools for the query, and those whose absolute score
/// reaches `min_score` (see the module comment).
fn search(
    catalog: &Catalog,
    index: &Index,
    request: &AttachRequest,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Searched, AttachError> {
    let query = request.query.trim();
    let has_query = !query.is_empty();
    let root = catalog.root();
    let mut ranked = pick::Ranked::default();
    let mut matches = None;
    let mut used_scorer = None;
    let mut fallback = None;
    let mut added = pick::Added::default();
    if has_query {
        let pick_request = PickRequest {
            query: query.to_owned(),
            max: pick::MAX_PICKS,
            min_score: 0.0,
            allow_unsafe: true,
            scorer: request.scorer,
            timeout: None,
            embed: request.embed.clone(),
            embed_batch: request.embed_batch,
            llm: request.llm.clone(),
            // Attach ranks with `pick::rank` itself and adds siblings and helpers below.
            helpers: false,
            siblings: false,
            // Attach's candidates are the best by their own score (see the module comment).
            coverage: false,
            lexical_weight: None,
            among: None,
        };
        pick_request.check()?;
        // No time limit of attach's own: a network scorer is bounded by its endpoint's.
        let deadline = Instant::now() + Duration::from_secs(24 * 3600);
        let scoring = pick::score(
            &root.join(catalog::STATE_DIR),
            index,
            &pick_request,
            deadline,
            progress,
        )?;
        // Without a time limit, any failure is the endpoint's.
        let mut scored = scoring
            .scored
            .map_err(|e| PickError::Upstream(e.to_string()))?;
        used_scorer = Some(scoring.scorer);
        fallback = scoring.fallback;
        // Absolute scores (see the module comment): a request that matches nothing well
        // attaches nothing, whatever the best of the catalog is. Best first; equal scores in
        // registration order.
        ranked = pick::rank(
            index,
            &mut scored,
            request.limit as usize,
            true,
            None,
            |score, _| (score > 0.0).then_some(score),
        )?;
        added = pick::Related {
            siblings: request.siblings,
            helpers: request.helpers,
            allow_unsafe: true,
            min_key: 0.0,
            within: None,
        }
        .add(
            catalog,
            index,
            &mut scored,
            &mut ranked.top,
            request.limit as usize,
        )?;
        matches = Some(scored);
    }
    let processed = ranked.top.len();
    // Candidates, each with its absolute score (`fused` and `hybrid` rank by a score
    // normalised per query; what passes is decided on one that is not).
    let passed: Vec<(i64, f64)> = ranked
        .top
        .iter()
        .map(|(r, score)| {
            let absolute = matches.as_ref().map_or(*score, |m| {
                // A helper passes with the tool that needs it, or on its own.
                let consumer = added
                    .needs
                    .get(&r.id)
                    .map_or(0.0, |n| m.absolute(n.consumer));
                // A sibling at its key, on absolute scores.
                let own = m.absolute(r.id);
                let sibling = added
                    .kin
                    .get(&r.id)
                    .map_or(0.0, |k| pick::siblings::key(own, m.absolute(k.anchor)));
                own.max(consumer).max(sibling)
            });
            (r.id, absolute)
        })
        .filter(|(_, score)| score * 100.0 >= request.min_score)
        .collect();
    // Best first by the score shown: `fused` and `hybrid` chose the candidates by their
    // ranking score, which orders a few of them otherwise (a stable sort: a helper stays
    // after the tool that needs it, whose score it takes).
    let mut passed = passed;
    passed.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok(Searched {
        processed,
        passed,
        matches,
        scorer: used_scorer,
        fallback,
    })
}

/// Finding, in the index, the tools an agent's entries stand for.
struct Lookup<'a> {
    index: &'a Index,
}

/// The tools an agent's entries stand for, and the tools that matched a query, as members.
struct Found {
    /// For each entry, in order: its slug (a key of `members`) when the version standing for
    /// it now can be called, otherwise why not.
    entries: Vec<Result<Key, String>>,
    members: HashMap<Key, DefaultTool>,
}

/// Why an entry whose slug has no version left cannot be followed.
const GONE: &str = "no longer in the catalog";

impl Found {
    /// The member of index row `id`, if it is one of them.
    fn by_id(&self, id: i64) -> Option<&DefaultTool> {
        self.members.values().find(|m| m.row.id == id)
    }

    /// For each entry, in order: its slug and the usable member that stands for it, or why
    /// there is none.
    fn followed(&self) -> impl Iterator<Item = Result<(&Key, &DefaultTool), String>> {
        self.entries.iter().map(|entry| {
            let key = entry.as_ref().map_err(Clone::clone)?;
            let member = self.members.get(key).ok_or_else(|| GONE.to_owned())?;
            Ok((key, member))
        })
    }
}

impl Lookup<'_> {
    /// The slug of the live tool with this toolID (any version).
    fn key_of_id(&self, tool_id: &str) -> index::Result<Option<Key>> {
        self.index.slug_of_tool_id(tool_id)
    }

    /// The version that stands for `tool`'s slug now, usable or not: found by its toolID, else
    /// (the version was deleted) by its `ref`.
    fn standing(&self, tool: &AttachedTool) -> index::Result<Option<ToolRow>> {
        if let Some((dir, slug)) = self.key_of_id(&tool.tool_id.to_string())? {
            return self.index.default_version_in_folder(&dir, &slug);
        }
        match ToolRef::parse(&tool.reference) {
            Ok(ToolRef {
                bundle: Some(bundle),
                slug,
                ..
            }) => self.index.default_version_of(&bundle, &slug),
            _ => Ok(None),
        }
    }

    /// Follow `tools` to the versions that stand for their slugs, and name those and the
    /// members of `rows` together.
    fn follow(&self, tools: &[AttachedTool], rows: Vec<ToolRow>) -> index::Result<Found> {
        let standing = tools
            .iter()
            .map(|tool| self.standing(tool))
            .collect::<index::Result<Vec<_>>>()?;
        let keys: Vec<Option<Key>> = standing
            .iter()
            .map(|row| row.as_ref().map(key_of_row))
            .collect();
        let rows = rows.into_iter().chain(standing.into_iter().flatten());
        let members: HashMap<Key, DefaultTool> = DefaultTool::named(self.index, rows.collect())?
            .into_iter()
            .map(|m| (key_of(&m), m))
            .collect();
        let entries = keys
            .into_iter()
            .zip(tools)
            .map(
                |(key, tool)| match key.and_then(|k| members.get(&k).map(|m| (k, m))) {
                    Some((key, member)) if member.is_usable() => Ok(Ok(key)),
                    Some((_, member)) => Ok(Err(unusable_reason(member))),
                    None => self.gone_reason(tool).map(Err),
                },
            )
            .collect::<index::Result<_>>()?;
        Ok(Found { entries, members })
    }

    /// Why `tool`, whose slug no live bundle has, is gone: its bundle was deleted (soft, so it
    /// can be restored), or it is no longer in the catalog at all.
    fn gone_reason(&self, tool: &AttachedTool) -> index::Result<String> {
        let deleted = self.index.deleted_bundle_of(&tool.tool_id.to_string())?;
        Ok(deleted.map_or_else(
            || GONE.to_owned(),
            |slug| format!("its bundle {slug} is deleted"),
        ))
    }
}

/// What became of an attached tool in the catalog, for `agent show`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolStatus {
    /// Usable, at the version the agent file names.
    Ok,
    /// Usable at another version (or under another exported name) now.
    Moved { reference: String, name: String },
    /// It cannot be called; the next `attach` removes it.
    Gone(String),
}

/// The status of each of `file`'s tools, in order.
pub fn inspect(index: &Index, file: &AgentFile) -> index::Result<Vec<ToolStatus>> {
    let found = Lookup { index }.follow(&file.tools, Vec::new())?;
    Ok(file
        .tools
        .iter()
        .zip(found.followed())
        .map(|(tool, followed)| match followed {
            Ok((_, m)) if m.reference() == tool.reference && m.name == tool.name => ToolStatus::Ok,
            Ok((_, m)) => ToolStatus::Moved {
                reference: m.reference(),
                name: m.name.clone(),
            },
            Err(why) => ToolStatus::Gone(why),
        })
        .collect())
}

/// The status of each tool of each of `files` in `catalog` ([`inspect`] on its index, which is
/// opened and brought up to date first): for `validate`, which reads agent files without an
/// index of its own.
pub fn inspect_files(
    catalog: &Catalog,
    files: &[&AgentFile],
) -> index::Result<Vec<Vec<ToolStatus>>> {
    Index::read(catalog, &mut |_, _| {}, |index| {
        files.iter().map(|file| inspect(index, file)).collect()
    })
}

/// The processing phase on the agent's tools: each follows its slug to the version that
/// stands for it now; those that can no longer be called, and second versions of one slug (a
/// hand edit), leave.
fn follow_held(
    found: &Found,
    tools: Vec<AttachedTool>,
) -> (Vec<(Key, AttachedTool, &DefaultTool)>, Vec<Detachment>) {
    let mut detachments = Vec::new();
    let mut held: Vec<(Key, AttachedTool, &DefaultTool)> = Vec::new();
    // Each held entry as the file had it.
    let mut originals: Vec<AttachedTool> = Vec::new();
    for (tool, followed) in tools.into_iter().zip(found.followed()) {
        match followed {
            Ok((key, member)) => {
                let key = key.clone();
                if let Some(i) = held.iter().position(|(k, _, _)| *k == key) {
                    // The entry of the version that stands for the slug stays (else the first,
                    // moved to it); the other is reported gone.
                    let gone = if tool.tool_id == parse_id(&member.row.tool_id) {
                        held[i].1 = tool.clone();
                        refresh(&mut held[i].1, member);
                        std::mem::replace(&mut originals[i], tool)
                    } else {
                        tool
                    };
                    detachments.push(Detachment {
                        reason: format!(
                            "processing: another version, {}, is attached (one version per tool)",
                            member.reference()
                        ),
                        tool_id: gone.tool_id.to_string(),
                        name: gone.name,
                        reference: gone.reference,
                        phase: Phase::Processing,
                    });
                    continue;
                }
                originals.push(tool.clone());
                let mut tool = tool;
                refresh(&mut tool, member);
                held.push((key, tool, member));
            }
            Err(why) => detachments.push(Detachment {
                tool_id: tool.tool_id.to_string(),
                name: tool.name.clone(),
                reference: tool.reference.clone(),
                phase: Phase::Processing,
                reason: format!("processing: {why}"),
            }),
        }
    }
    (held, detachments)
}

/// Point an attached tool at `member`, the version that stands for its slug now.
fn refresh(tool: &mut AttachedTool, member: &DefaultTool) {
    tool.tool_id = parse_id(&member.row.tool_id);
    tool.reference = member.reference();
    tool.name.clone_from(&member.name);
    tool.kind = kind_of(member);
}

fn unusable_reason(member: &DefaultTool) -> String {
    if !member.row.bundle_enabled {
        "its bundle is disabled".to_owned()
    } else if !member.row.is_enabled {
        "disabled".to_owned()
    } else if let Some(reason) = &member.row.unavailable {
        format!("unavailable: {reason}")
    } else {
        "not usable".to_owned()
    }
}

/// Why a matched tool was not attached: `limit` (`MAX_MCP_TOOLS=5`) was reached.
fn over_limit_reason(limit: &str) -> String {
    format!("over {limit}: the tools the agent keeps and better matches fill it")
}

/// A score in 0..=1 as a match score in 0–100, to two decimals.
fn percent(score: f64) -> f64 {
    (score * 10_000.0).round() / 100.0
}

/// The index keeps toolIDs as their text; they were checked as UUIDs when the file was read.
fn parse_id(text: &str) -> Uuid {
    Uuid::try_parse(text).unwrap_or_default()
}

fn keep_error(text: &str, error: &catalog::Error) -> AttachError {
    AttachError::Keep {
        tool: text.to_owned(),
        why: error.to_string(),
        hint: Some(
            "name a tool of the catalog by [bundle/]slug[@version], toolID or exported name"
                .to_owned(),
        ),
    }
}
