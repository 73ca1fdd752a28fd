//! Agents as files: `agents/<agentID>.json` holds the tools attached to one agent.
//!
//! Like the rest of the catalog they are plain JSON kept in git. An agent is named by a UUID,
//! bare or with Letta's `agent-` prefix; both name the same agent, whose file and `agentID`
//! use the canonical form `agent-<lowercase uuid>`. Writers hold the agent's own lock
//! (`.toolctl/locks/<agentID>.lock`), so two runs on one agent never lose each other's
//! changes while runs on different agents never wait for each other; files are replaced
//! atomically, so a crash leaves the previous file whole.

use super::plan::Kind;
use crate::catalog::error::{Error, Result, Violation};
use crate::catalog::{STATE_DIR, lock, model, store};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;
use uuid::Uuid;

/// The folder of agent files in a catalog.
pub const AGENTS_DIR: &str = "agents";

/// The `validate` rule an agent file that cannot be read as one breaks.
pub const AGENT_RULE: &str = "agent";

/// An agent's ID: a UUID, written `agent-<uuid>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(Uuid);

impl AgentId {
    /// Read `agent-<uuid>` or a bare UUID (any case).
    pub fn parse(text: &str) -> Result<Self, String> {
        let bare = text
            .get(..6)
            .filter(|prefix| prefix.eq_ignore_ascii_case("agent-"))
            .map_or(text, |_| &text[6..]);
        // Only the hyphenated form: the braced, URN and 32-digit forms uuid also reads are not
        // how anyone writes an agent ID, and accepting them would make two spellings of one
        // file name look different in a shell history.
        match Uuid::try_parse(bare) {
            Ok(id) if bare.len() == 36 => Ok(Self(id)),
            _ => Err(format!(
                "'{text}' is not an agent ID: write a UUID, bare or with the agent- prefix \
                 (e.g. agent-123e4567-e89b-12d3-a456-426614174000)"
            )),
        }
    }

    /// The agent whose file is named `name` (`agent-<lowercase uuid>.json`, as [`file`](Self::file)
    /// writes it); `None` for any other name, which no command reads as an agent.
    pub fn from_file_name(name: &str) -> Option<Self> {
        let stem = name.strip_suffix(".json")?;
        AgentId::parse(stem)
            .ok()
            .filter(|id| id.to_string() == stem)
    }

    /// The agent's file in the catalog at `root`.
    pub fn file(&self, root: &Path) -> PathBuf {
        root.join(AGENTS_DIR).join(format!("{self}.json"))
    }

    /// Take this agent's write lock.
    pub fn lock(&self, root: &Path, timeout: Duration) -> Result<lock::LockGuard> {
        lock::acquire(
            &root
                .join(STATE_DIR)
                .join("locks")
                .join(format!("{self}.lock")),
            timeout,
        )
    }
}

impl std::fmt::Display for AgentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "agent-{}", self.0.hyphenated())
    }
}

/// `agents/<agentID>.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentFile {
    pub schema_version: String,
    #[serde(rename = "agentID")]
    pub agent_id: String,
    pub created_at: Timestamp,
    pub modified_at: Timestamp,
    pub tools: Vec<AttachedTool>,
    /// Fields toolctl does not know (a note, a team's own data): kept as they are.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One tool attached to an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttachedTool {
    /// The version of the tool that stands for its slug (SPEC §2), as of the last attach.
    #[serde(rename = "toolID")]
    pub tool_id: Uuid,
    /// `bundle/slug@version`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The exported provider name.
    pub name: String,
    pub kind: Kind,
    pub attached_at: Timestamp,
    /// The relevance (0–100) that matched it; `null` when none did (attached by hand).
    pub match_score: Option<f64>,
}

impl AgentFile {
    /// A new agent without tools.
    pub fn new(id: AgentId, now: Timestamp) -> Self {
        Self {
            schema_version: model::SCHEMA_VERSION.to_owned(),
            agent_id: id.to_string(),
            created_at: now,
            modified_at: now,
            tools: Vec::new(),
            other: Map::new(),
        }
    }

    /// Read agent `id`'s file; `None` when the agent has none yet.
    pub fn load(root: &Path, id: AgentId) -> Result<Option<Self>> {
        let path = id.file(root);
        // A catalog file like any other: a regular file inside the catalog, at most 4 MiB.
        let text = match crate::base::capped::read_text(&path, Some(root)) {
            Ok(text) => text,
            Err(crate::base::capped::ReadError::Missing) => return Ok(None),
            Err(e) => return Err(Error::unreadable(&path, e)),
        };
        Self::parse(&text, &path, Some(id)).map(Some)
    }

    /// Parse and check an agent file's text; `named` is the agent its file name says it is,
    /// whose ID the file must hold.
    pub fn parse(text: &str, path: &Path, named: Option<AgentId>) -> Result<Self> {
        let doc = model::parse_doc(text, path)?;
        Self::from_doc(&doc, &path.display().to_string(), named)
    }

    /// Read and check an agent file's document: what attach and `agent` read, and what
    /// `validate` reports (every violation is filed under its rule `agent`). `source` names the
    /// file in errors; `named` is as for [`parse`](Self::parse).
    pub fn from_doc(doc: &Value, source: &str, named: Option<AgentId>) -> Result<Self> {
        let file: Self = model::typed(doc, source).map_err(|e| {
            Error::invalid(
                source,
                e.violations()
                    .iter()
                    .map(|v| v.clone().rule(AGENT_RULE))
                    .collect(),
            )
        })?;
        let mut violations = Vec::new();
        if AgentId::parse(&file.agent_id).map(|id| id.to_string()) != Ok(file.agent_id.clone()) {
            violations.push(Violation::new(
                "/agentID",
                format!("'{}' is not an agent ID (agent-<uuid>)", file.agent_id),
            ));
        } else if let Some(id) = named
            && file.agent_id != id.to_string()
        {
            violations.push(Violation::new(
                "/agentID",
                format!(
                    "'{}' does not match the file name (expected '{id}')",
                    file.agent_id
                ),
            ));
        }
        let mut seen = HashSet::new();
        for (i, tool) in file.tools.iter().enumerate() {
            if !seen.insert(tool.tool_id) {
                violations.push(Violation::new(
                    format!("/tools/{i}/toolID"),
                    format!("{} is attached twice", tool.tool_id),
                ));
            }
            if let Some(score) = tool.match_score
                && !(0.0..=100.0).contains(&score)
            {
                violations.push(Violation::new(
                    format!("/tools/{i}/matchScore"),
                    format!("{score} is not between 0 and 100"),
                ));
            }
        }
        if violations.is_empty() {
            Ok(file)
        } else {
            Err(Error::invalid(
                source,
                violations.into_iter().map(|v| v.rule(AGENT_RULE)).collect(),
            ))
        }
    }

    /// Write the file atomically.
    pub fn save(&self, root: &Path) -> Result<()> {
        let id = AgentId::parse(&self.agent_id)
            .map_err(|m| Error::invalid("agent", vec![Violation::new("/agentID", m)]))?;
        let doc = serde_json::to_value(self).map_err(|e| {
            Error::invalid(
                id.to_string(),
                vec![Violation::new("", format!("cannot be written: {e}"))],
            )
        })?;
        store::write_atomic(&id.file(root), &store::to_pretty_json(&doc))
    }

    /// Tools on the agent: (all, external, core).
    pub fn counts(&self) -> (usize, usize, usize) {
        let external = self
            .tools
            .iter()
            .filter(|t| t.kind == Kind::External)
            .count();
        (self.tools.len(), external, self.tools.len() - external)
    }
}

/// Every agent file of the catalog, by agent ID; files that cannot be read are returned as
/// problems beside them.
pub fn list(root: &Path) -> Result<(Vec<AgentFile>, Vec<crate::catalog::Problem>)> {
    let dir = root.join(AGENTS_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(Error::io("cannot read", dir, e)),
    };
    let mut agents = Vec::new();
    let mut problems = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("cannot read", &dir, e))?;
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| n.ends_with(".json")) else {
            continue;
        };
        // Hidden files (a write's temporary file, an editor's or a sync tool's) are no agent
        // files, as `validate` does not name them.
        if name.starts_with('.') {
            continue;
        }
        let loaded = match AgentId::from_file_name(name) {
            Some(id) => AgentFile::load(root, id),
            None => Err(Error::invalid(
                path.display().to_string(),
                vec![Violation::new(
                    "",
                    "the file name is not an agent ID (agent-<uuid>.json)",
                )],
            )),
        };
        match loaded {
            Ok(Some(agent)) => agents.push(agent),
            Ok(None) => {}
            Err(e) => problems.push(crate::catalog::Problem {
                path,
                message: e.reason(),
            }),
        }
    }
    agents.sort_by(|a, b| a.agent_id.cmp(&b.agent_id));
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((agents, problems))
}
