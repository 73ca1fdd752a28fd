//! `attach` and `agent` on a Letta agent: the phases of [`super`] on the tools Letta says the
//! agent holds, with Letta told of each change.
//!
//! A Letta tool stands for the catalog tool whose exported name it has (the name `mcp serve`
//! gives it, so a tool registered through toolctl's MCP server keeps it). Tools Letta has that
//! the catalog does not (its own core tools, tools made in Letta) are the agent's as well:
//! Letta's `letta_*` tools are core, the others external, with no relevance to any query.
//! Catalog tools are external on Letta whatever their type: Letta calls them through MCP.
//!
//! Nothing changes on the agent until the search and the listing of its tools have both
//! succeeded. Each change is one call: a tool Letta does not let go, or one it has not and
//! cannot register, is one entry of `failed_detachments` or `failed_attachments`, and the
//! others go on.

use super::letta::{Letta, LettaError, LettaTool, McpServer};
use super::plan::{self, Kind};
use super::{
    AttachError, AttachRequest, Attachment, Detachment, Failure, Outcome, Searched, Settings,
    Warning, keep_error, over_limit_reason, percent, search,
};
use crate::catalog::{self, Catalog};
use crate::index::Index;
use crate::index::default_tools::{DefaultTool, DefaultTools};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// A tool on a Letta agent: its key for the planner is its name (the catalog tool's exported
/// name), or its ID when a second tool of the agent has the same name.
type Key = String;

/// How Letta is reached for an attach run.
#[derive(Debug, Clone, Copy)]
pub struct Remote<'a> {
    pub letta: &'a Letta,
    /// toolctl's MCP server as Letta reaches it: where catalog tools Letta lacks are
    /// registered. Without it only the tools Letta has already are attached.
    pub server: Option<&'a McpServer>,
}

/// One of the agent's tools, with the catalog tool it stands for.
#[derive(Debug)]
pub struct HeldTool<'a> {
    pub tool: LettaTool,
    pub member: Option<&'a DefaultTool>,
}

impl HeldTool<'_> {
    /// `bundle/slug@version` of the catalog tool, else the Letta name.
    pub fn reference(&self) -> String {
        self.member
            .map_or_else(|| self.tool.name.clone(), DefaultTool::reference)
    }
}

/// The catalog's tools by exported name.
#[derive(Debug)]
pub struct Names {
    defaults: DefaultTools,
}

impl Names {
    pub fn read(index: &Index) -> crate::index::Result<Self> {
        Ok(Self {
            defaults: DefaultTools::read(index, false)?,
        })
    }

    fn by_name(&self) -> HashMap<&str, &DefaultTool> {
        self.defaults
            .members
            .iter()
            .map(|m| (m.name.as_str(), m))
            .collect()
    }

    fn by_row(&self) -> HashMap<i64, &DefaultTool> {
        self.defaults
            .members
            .iter()
            .map(|m| (m.row.id, m))
            .collect()
    }

    /// `tools` with the catalog tools they stand for.
    pub fn held(&self, tools: Vec<LettaTool>) -> Vec<HeldTool<'_>> {
        let by_name = self.by_name();
        tools
            .into_iter()
            .map(|tool| {
                let member = by_name.get(tool.name.as_str()).copied();
                HeldTool { tool, member }
            })
            .collect()
    }
}

/// Counts of `tools`: all, external, core.
pub fn counts(kinds: impl IntoIterator<Item = Kind>) -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    for kind in kinds {
        counts.0 += 1;
        match kind {
            Kind::External => counts.1 += 1,
            Kind::Core => counts.2 += 1,
        }
    }
    counts
}

/// Run `request` on the Letta agent it names.
pub fn attach(
    catalog: &Catalog,
    index: &Index,
    settings: &Settings,
    request: &AttachRequest,
    remote: Remote<'_>,
    lock_timeout: Duration,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome, AttachError> {
    request.check(settings)?;
    let Searched {
        processed,
        passed,
        mut matches,
        scorer,
        fallback,
    } = search(catalog, index, request, progress)?;
    let has_query = !request.query.trim().is_empty();
    let agent = request.agent.to_string();
    let letta = remote.letta;
    // Two runs on one agent from this catalog do not interleave (Letta has no lock to take).
    let _guard = request.agent.lock(catalog.root(), lock_timeout)?;
    let names = Names::read(index)?;
    let held = names.held(letta.agent_tools(&agent).map_err(AttachError::Letta)?);

    // Keys: a tool's name, unless an earlier tool of the agent has it.
    let mut seen = HashSet::new();
    let keys: Vec<Key> = held
        .iter()
        .map(|h| {
            if seen.insert(h.tool.name.clone()) {
                h.tool.name.clone()
            } else {
                h.tool.id.clone()
            }
        })
        .collect();

    let mut kept_ids = HashSet::new();
    for text in &request.keep {
        if let Some(h) = held
            .iter()
            .find(|h| h.tool.id == *text || h.tool.name == *text)
        {
            kept_ids.insert(h.tool.id.clone());
            continue;
        }
        // A Letta tool ID the agent does not hold: nothing of it to keep.
        if text.starts_with("tool-") {
            continue;
        }
        let (entry, _) = catalog
            .resolve_tool(text, catalog::VersionChoice::Default)
            .map_err(|e| keep_error(text, &e))?;
        let id = entry.tool.tool_id.to_string();
        let key = index.slug_of_tool_id(&id)?;
        for h in &held {
            if let (Some(m), Some((dir, slug))) = (h.member, &key)
                && m.row.bundle_dir == *dir
                && m.row.slug == *slug
            {
                kept_ids.insert(h.tool.id.clone());
            }
        }
    }

    if let Some(matches) = &mut matches {
        let ids: Vec<i64> = held
            .iter()
            .filter_map(|h| h.member)
            .map(|m| m.row.id)
            .collect();
        matches.settle(index, &ids)?;
    }
    let relevance = |h: &HeldTool| match (&matches, h.member) {
        (Some(matches), Some(m)) if m.is_usable() => matches.absolute(m.row.id).max(0.0),
        _ => 0.0,
    };
    let protects = |h: &HeldTool| {
        settings.protected.iter().any(|p| {
            p.eq_ignore_ascii_case(&h.tool.name)
                || h.member.is_some_and(|m| {
                    p.eq_ignore_ascii_case(&m.row.slug)
                        || p.eq_ignore_ascii_case(&format!("{}/{}", m.row.bundle_slug, m.row.slug))
                })
        })
    };
    let by_row = names.by_row();
    let passed: Vec<(&DefaultTool, f64)> = passed
        .iter()
        .filter_map(|(id, score)| Some((*by_row.get(id)?, *score)))
        .collect();

    let input = plan::Input {
        held: held
            .iter()
            .zip(&keys)
            .enumerate()
            .map(|(i, (h, key))| plan::Held {
                key: key.clone(),
                kind: h.tool.kind(),
                pinned: kept_ids.contains(&h.tool.id) || protects(h),
                relevance: relevance(h),
                // Letta's order: the first listed counts as attached first.
                attached_at: i as i64,
            })
            .collect(),
        matched: passed
            .iter()
            .map(|(member, score)| plan::Matched {
                key: member.name.clone(),
                kind: Kind::External,
                score: *score,
            })
            .collect(),
        has_query: has_query && !passed.is_empty(),
        auto_prune: request.auto_prune,
        limits: settings.limits.clone(),
    };
    let decided = plan::plan(&input);
    let preserved: Vec<String> = input
        .held
        .iter()
        .zip(&held)
        .filter(|(h, _)| h.pinned)
        .map(|(_, h)| h.tool.id.clone())
        .collect();

    let at: HashMap<&Key, usize> = keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut on: Vec<bool> = vec![true; held.len()];
    let mut detachments = Vec::new();
    let mut failed_detachments = Vec::new();
    for (key, phase) in &decided.detached {
        let Some(&i) = at.get(key) else { continue };
        let h = &held[i];
        match letta.detach(&agent, &h.tool.id) {
            Ok(()) => {
                on[i] = false;
                detachments.push(Detachment {
                    tool_id: h.tool.id.clone(),
                    name: h.tool.name.clone(),
                    reference: h.reference(),
                    phase: *phase,
                    reason: phase.reason().to_owned(),
                });
            }
            Err(e) => failed_detachments.push(Failure {
                tool_id: Some(h.tool.id.clone()),
                name: h.tool.name.clone(),
                reference: h.member.map(DefaultTool::reference),
                reason: e.to_string(),
            }),
        }
    }

    let refused: HashMap<&Key, &String> = decided.refused.iter().map(|(k, l)| (k, l)).collect();
    let arriving: HashSet<&Key> = decided.attached.iter().collect();
    let mut attachments = Vec::new();
    let mut failed_attachments = Vec::new();
    let mut arrived: Vec<Kind> = Vec::new();
    let mut server_told = false;
    for (member, score) in &passed {
        let key = &member.name;
        let failure = |reason: String, tool_id: Option<String>| Failure {
            tool_id,
            name: member.name.clone(),
            reference: Some(member.reference()),
            reason,
        };
        if let Some(limit) = refused.get(key) {
            failed_attachments.push(failure(over_limit_reason(limit), None));
            continue;
        }
        if !arriving.contains(key) {
            // Held already.
            if let Some(&i) = at.get(key) {
                attachments.push(Attachment {
                    tool_id: held[i].tool.id.clone(),
                    name: member.name.clone(),
                    reference: member.reference(),
                    match_score: percent(*score),
                    already_attached: true,
                });
            }
            continue;
        }
        let found = match letta_tool(letta, remote.server, &member.name, &mut server_told) {
            Ok(tool) => tool,
            Err(reason) => {
                failed_attachments.push(failure(reason, None));
                continue;
            }
        };
        match letta.attach(&agent, &found.id) {
            Ok(()) => {
                arrived.push(Kind::External);
                attachments.push(Attachment {
                    tool_id: found.id,
                    name: member.name.clone(),
                    reference: member.reference(),
                    match_score: percent(*score),
                    already_attached: false,
                });
            }
            Err(e) => failed_attachments.push(failure(e.to_string(), Some(found.id))),
        }
    }

    let mut warnings: Vec<Warning> = fallback.into_iter().map(Warning::Text).collect();
    warnings.extend(decided.warnings.into_iter().map(Warning::OverLimit));
    let remaining = held
        .iter()
        .zip(&on)
        .filter(|(_, on)| **on)
        .map(|(h, _)| h.tool.kind());
    let written = !detachments.is_empty() || !arrived.is_empty();
    Ok(Outcome {
        agent: request.agent,
        processed,
        passed: passed.len(),
        attachments,
        detachments,
        preserved,
        failed_attachments,
        failed_detachments,
        scorer,
        warnings,
        created: false,
        written,
        counts: counts(remaining.chain(arrived)),
        settings: settings.clone(),
    })
}

/// The Letta tool of catalog tool `name`: the one Letta has, else registered as a tool of
/// toolctl's MCP server (`server`, told of once a run: `told`). The reason when there is none.
fn letta_tool(
    letta: &Letta,
    server: Option<&McpServer>,
    name: &str,
    told: &mut bool,
) -> Result<LettaTool, String> {
    if let Some(tool) = letta.tool_named(name).map_err(|e| e.to_string())? {
        return Ok(tool);
    }
    let Some(server) = server else {
        return Err(format!(
            "Letta has no tool named '{name}', and agents.letta.mcpServer (toolctl's MCP server, where attach registers catalog tools) is not set"
        ));
    };
    if !*told {
        letta.register_server(server).map_err(|e| e.to_string())?;
        *told = true;
    }
    letta
        .register_tool(&server.name, name)
        .map_err(|e| match e {
            LettaError::NotFound { .. } | LettaError::Upstream { .. } => format!(
                "{e} (Letta could not get '{name}' from MCP server '{}' at {}: is toolctl's MCP server running there, serving that tool, with the token agents.letta.mcpServer.tokenSecret names?)",
                server.name, server.url
            ),
            other => other.to_string(),
        })
}
