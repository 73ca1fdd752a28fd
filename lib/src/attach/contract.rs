//! The attach contract's answer, and the one way to run an attach on either backend: what
//! `toolctl attach` prints and what `toolctl serve` answers to `POST /api/v1/tools/attach`.

use super::on_letta::{self, Remote};
use super::request::ContractRequest;
use super::{AttachError, AttachRequest, Failure, Outcome, Settings, Warning};
use crate::catalog::Catalog;
use crate::catalog::config::PickConfig;
use crate::index::Index;
use crate::pick::endpoints::EndpointOverrides;
use crate::pick::{PickError, Scorer};
use serde_json::{Value, json};
use std::time::Duration;

/// How to score an attach beside what the contract's request says.
#[derive(Debug, Clone, Default)]
pub struct Scoring {
    /// The scorer; `None`: hybrid when an embeddings endpoint is set, else fused.
    pub scorer: Option<Scorer>,
    pub overrides: EndpointOverrides,
    /// Leave out the helper tools of the first matches.
    pub no_helpers: bool,
    /// Lift the first matches' siblings.
    pub siblings: bool,
}

/// The attach `asked` describes, scored as `scoring` says with the endpoints of `config`.
pub fn request(
    asked: ContractRequest,
    config: &PickConfig,
    scoring: &Scoring,
) -> Result<AttachRequest, PickError> {
    let scorer = scoring
        .scorer
        .unwrap_or_else(|| super::default_scorer(config, &scoring.overrides));
    let endpoints = super::endpoints(&asked.query, config, &scoring.overrides, scorer)?;
    Ok(AttachRequest {
        agent: asked.agent,
        query: asked.query,
        limit: asked.limit,
        min_score: asked.min_score,
        keep: asked.keep,
        auto_prune: asked.auto_prune,
        scorer,
        embed: endpoints.embed,
        embed_batch: endpoints.embed_batch,
        llm: endpoints.llm,
        helpers: !scoring.no_helpers,
        siblings: scoring.siblings,
    })
}

/// Run `request` on the agent's backend: its file in the catalog, or (`remote`) a Letta
/// server.
pub fn run(
    catalog: &Catalog,
    index: &Index,
    settings: &Settings,
    request: &AttachRequest,
    remote: Option<Remote<'_>>,
    lock_timeout: Duration,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome, AttachError> {
    match remote {
        Some(remote) => on_letta::attach(
            catalog,
            index,
            settings,
            request,
            remote,
            lock_timeout,
            progress,
        ),
        None => super::attach(catalog, index, settings, request, lock_timeout, progress),
    }
}

/// A warning of the run, naming the request's keep list as `keep` (`--keep`, `keep_tools`).
pub fn warning_words(warning: &Warning, keep: &str) -> String {
    match warning {
        Warning::OverLimit(over) => over.describe(keep),
        other => other.to_string(),
    }
}

/// The contract's message.
pub fn message(outcome: &Outcome, min_score: f64) -> String {
    format!(
        "Successfully processed {} candidates ({} passed min_score={min_score:?}%), attached {} tool(s) to agent {}",
        outcome.processed,
        outcome.passed,
        outcome.attachments.len(),
        outcome.agent
    )
}

/// The contract's response document, field for field; `scorer`, `warnings` and
/// `detachments` (why each tool left) are toolctl's additions under `details`. `keep` names
/// the keep list as the caller gave it.
pub fn response(outcome: &Outcome, min_score: f64, keep: &str) -> Value {
    let ids = |ids: Vec<String>| Value::from(ids);
    json!({
        "success": true,
        "message": message(outcome, min_score),
        "details": {
            "detached_tools": ids(outcome.detachments.iter().map(|d| d.tool_id.clone()).collect()),
            "failed_detachments": ids(outcome.failed_detachments.iter().filter_map(|f| f.tool_id.clone()).collect()),
            "processed_count": outcome.processed,
            "passed_filter_count": outcome.passed,
            "success_count": outcome.attachments.len(),
            "failure_count": outcome.failed_attachments.len(),
            "successful_attachments": outcome.attachments.iter().map(|a| json!({
                "success": true,
                "tool_id": a.tool_id,
                "name": a.name,
                "match_score": a.match_score,
            })).collect::<Vec<_>>(),
            "failed_attachments": outcome.failed_attachments.iter().map(failure).collect::<Vec<_>>(),
            "preserved_tools": ids(outcome.preserved.clone()),
            "target_agent": outcome.agent.to_string(),
            "scorer": outcome.scorer.map(Scorer::as_str),
            "warnings": outcome.warnings.iter().map(|w| warning_words(w, keep)).collect::<Vec<_>>(),
            "detachments": outcome.detachments.iter().map(|d| json!({
                "tool_id": d.tool_id,
                "name": d.name,
                "ref": d.reference,
                "phase": d.phase,
                "reason": d.reason,
            })).collect::<Vec<_>>(),
        }
    })
}

/// A tool not attached or detached, in the attach contract's attachment shape (`success`
/// false) with why.
fn failure(f: &Failure) -> Value {
    json!({
        "success": false,
        "tool_id": f.tool_id,
        "name": f.name,
        "ref": f.reference,
        "error": f.reason,
    })
}
