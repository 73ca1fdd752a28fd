//! `toolctl agent`: see and correct the tools attached to agents.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{self, Human, Output};
use crate::cli::shared::{BackendArgs, letta_error, n_tools};
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use toolctl_lib::attach::letta::{Letta, LettaAgent};
use toolctl_lib::attach::on_letta::{self, HeldTool, Names};
use toolctl_lib::attach::{self, AgentFile, AgentId, AttachedTool, Kind, ToolStatus};
use toolctl_lib::catalog::{self, Catalog};

/// See and correct the tools attached to agents (agents/<agentID>.json, or a Letta server's)
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// List the agents that have tools attached (on Letta: every agent)
    List(ListArgs),
    /// Show an agent's tools, and whether each can still be called
    Show(AgentArg),
    /// Detach tools from an agent by hand (protection is for attach runs, not for you)
    Detach(DetachArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub agents: BackendArgs,
}

#[derive(Debug, Args)]
pub struct AgentArg {
    /// The agent: a UUID, bare or with the agent- prefix
    #[arg(value_name = "AGENT", add = crate::cli::complete::agents())]
    pub agent: String,
    #[command(flatten)]
    pub agents: BackendArgs,
}

#[derive(Debug, Args)]
pub struct DetachArgs {
    /// The agent: a UUID, bare or with the agent- prefix
    #[arg(value_name = "AGENT", add = crate::cli::complete::agents())]
    pub agent: String,
    /// A tool the agent holds: ref, bundle/slug, slug, exported name or toolID (can be
    /// repeated)
    #[arg(value_name = "TOOL", add = crate::cli::complete::tools(), required_unless_present = "all")]
    pub tools: Vec<String>,
    /// Detach every tool
    #[arg(long, conflicts_with = "tools")]
    pub all: bool,
    #[command(flatten)]
    pub agents: BackendArgs,
}

pub fn run(ctx: &Ctx, command: &AgentCommand) -> Result<Output, CliError> {
    match command {
        AgentCommand::List(args) => list(ctx, args),
        AgentCommand::Show(args) => show(ctx, args),
        AgentCommand::Detach(args) => detach(ctx, args),
    }
}

fn list(ctx: &Ctx, args: &ListArgs) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    if let Some((letta, _)) = args.agents.connect(catalog.config(), false)? {
        return list_letta(&letta);
    }
    let (agents, problems) = attach::agent::list(catalog.root())?;
    ctx.warn_problems(&problems);
    let mut table = output::table(["AGENT", "TOOLS", "EXTERNAL", "BUILT-IN", "MODIFIED"]);
    let mut items = Vec::new();
    for agent in &agents {
        let (total, external, core) = agent.counts();
        table.add_row([
            agent.agent_id.clone(),
            total.to_string(),
            external.to_string(),
            core.to_string(),
            agent.modified_at.to_string(),
        ]);
        items.push(json!({
            "agentID": agent.agent_id,
            "tools": total,
            "external": external,
            "core": core,
            "modifiedAt": agent.modified_at,
        }));
    }
    let text = match (agents.is_empty(), problems.len()) {
        (true, 0) => "no agents yet: `toolctl attach AGENT --query TASK` creates one".to_owned(),
        // Files that could not be read are not "no agents": say so on stdout too, which
        // `--quiet` leaves (the warnings name each file).
        (true, n) => format!(
            "no agent could be read: {} in agents/ could not be; `toolctl validate` says what is wrong",
            if n == 1 {
                "1 file".to_owned()
            } else {
                format!("{n} files")
            }
        ),
        (false, _) => table.trim_fmt(),
    };
    Ok(Output::new(
        json!({ "items": items, "problems": problems }),
        Human::Text(text),
    ))
}

/// Agent `text`'s file, which must exist.
fn load(catalog: &Catalog, text: &str) -> Result<(AgentId, AgentFile), CliError> {
    let id = AgentId::parse(text).map_err(CliError::invalid)?;
    match AgentFile::load(catalog.root(), id)? {
        Some(file) => Ok((id, file)),
        None => Err(catalog::Error::NotFound {
            what: "agent",
            name: id.to_string(),
            hint: Some(
                "`toolctl agent list` shows the agents; `toolctl attach` creates one".into(),
            ),
        }
        .into()),
    }
}

fn show(ctx: &Ctx, args: &AgentArg) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    if let Some((letta, _)) = args.agents.connect(catalog.config(), false)? {
        let id = AgentId::parse(&args.agent).map_err(CliError::invalid)?;
        let agent = letta.agent(&id.to_string()).map_err(letta_error)?;
        let tools = letta.agent_tools(&agent.id).map_err(letta_error)?;
        let names = ctx.read_index(&catalog, Names::read)?;
        let held = names.held(tools);
        let (doc, table) = describe_letta(&agent, &held);
        let counts = on_letta::counts(held.iter().map(|h| h.tool.kind()));
        return Ok(shown(id, counts, doc, table));
    }
    let (id, file) = load(&catalog, &args.agent)?;
    let (doc, table) = describe(ctx, &catalog, &file)?;
    Ok(shown(id, file.counts(), doc, table))
}

/// `agent show`'s output: the document, and for people a line of counts over the table.
fn shown(id: AgentId, counts: (usize, usize, usize), doc: Value, table: String) -> Output {
    let (total, external, core) = counts;
    let mut text = format!(
        "{id}: {} ({external} external, {core} built-in)",
        n_tools(total)
    );
    if total > 0 {
        text.push('\n');
        text.push_str(&table);
    }
    Output::new(doc, Human::Text(text))
}

/// An agent as `agent show --json` prints it (each tool with its status now), and its tools
/// as a table.
fn describe(ctx: &Ctx, catalog: &Catalog, file: &AgentFile) -> Result<(Value, String), CliError> {
    let statuses = ctx.read_index(catalog, |index| attach::inspect(index, file))?;
    let mut table = output::table(["#", "TOOL", "NAME", "KIND", "SCORE", "ATTACHED", "STATUS"]);
    let mut tools = Vec::new();
    for (i, (tool, status)) in file.tools.iter().zip(&statuses).enumerate() {
        let status_text = match status {
            ToolStatus::Ok => "ok".to_owned(),
            ToolStatus::Moved { reference, name } if *reference != tool.reference => {
                format!("now {reference}")
            }
            ToolStatus::Moved { name, .. } => format!("now named {name}"),
            ToolStatus::Gone(why) => format!("gone: {why}"),
        };
        table.add_row([
            (i + 1).to_string(),
            tool.reference.clone(),
            tool.name.clone(),
            kind_label(tool.kind).to_owned(),
            tool.match_score
                .map_or_else(String::new, |s| format!("{s:.2}")),
            // To the second: a column of one width (the JSON keeps the full time).
            tool.attached_at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            status_text.clone(),
        ]);
        let mut item = serde_json::to_value(tool).unwrap_or_default();
        item["status"] = status_text.into();
        tools.push(item);
    }
    let doc = json!({
        "agentID": file.agent_id,
        "createdAt": file.created_at,
        "modifiedAt": file.modified_at,
        "tools": tools,
    });
    Ok((doc, table.trim_fmt()))
}

fn kind_label(kind: Kind) -> &'static str {
    match kind {
        Kind::Core => "built-in",
        Kind::External => "external",
    }
}

fn detach(ctx: &Ctx, args: &DetachArgs) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let id = AgentId::parse(&args.agent).map_err(CliError::invalid)?;
    if let Some((letta, _)) = args.agents.connect(catalog.config(), false)? {
        return detach_letta(ctx, &catalog, &letta, id, args);
    }
    let _guard = id.lock(catalog.root(), ctx.global.lock_timeout)?;
    let (_, mut file) = load(&catalog, &args.agent)?;
    let gone: Vec<AttachedTool> = if args.all {
        std::mem::take(&mut file.tools)
    } else {
        let mut chosen = Vec::new();
        for text in &args.tools {
            let i = find(&file.tools, text)?;
            if !chosen.contains(&i) {
                chosen.push(i);
            }
        }
        let mut gone = Vec::new();
        let mut i = 0;
        file.tools.retain(|tool| {
            let keep = !chosen.contains(&i);
            if !keep {
                gone.push(tool.clone());
            }
            i += 1;
            keep
        });
        gone
    };
    if !gone.is_empty() {
        file.modified_at = toolctl_lib::base::time::now();
        file.save(catalog.root())?;
    }
    let (total, ..) = file.counts();
    let refs: Vec<String> = gone.iter().map(|t| t.reference.clone()).collect();
    let text = detached_text(id, &refs, total);
    // The agent as it is now (as `agent show` prints it), and what left it.
    let (mut doc, _) = describe(ctx, &catalog, &file)?;
    doc["detached"] = gone
        .iter()
        .map(|t| {
            json!({
                "toolID": t.tool_id.to_string(),
                "ref": t.reference,
                "name": t.name,
            })
        })
        .collect();
    Ok(Output::new(doc, Human::Status(text)))
}

/// The one tool of `tools` that `text` names.
fn find(tools: &[AttachedTool], text: &str) -> Result<usize, CliError> {
    let unversioned = |t: &AttachedTool| {
        t.reference
            .rsplit_once('@')
            .map_or(t.reference.clone(), |(r, _)| r.to_owned())
    };
    let slug = |t: &AttachedTool| {
        let r = unversioned(t);
        r.rsplit_once('/').map_or(r.clone(), |(_, s)| s.to_owned())
    };
    let matches: Vec<usize> = (0..tools.len())
        .filter(|&i| {
            let t = &tools[i];
            t.tool_id.to_string().eq_ignore_ascii_case(text)
                || t.reference == text
                || unversioned(t) == text
                || slug(t) == text
                || t.name == text
        })
        .collect();
    one_of(
        text,
        &matches,
        tools.iter().map(|t| t.reference.clone()).collect(),
        |i| tools[i].reference.clone(),
        "name one by bundle/slug or toolID",
    )
}

/// `agent list` on Letta: every agent, with its tools counted as on files.
fn list_letta(letta: &Letta) -> Result<Output, CliError> {
    let agents = letta.agents().map_err(letta_error)?;
    let mut table = output::table(["AGENT", "TOOLS", "EXTERNAL", "BUILT-IN", "MODIFIED"]);
    let mut items = Vec::new();
    for agent in &agents {
        let (total, external, core) = on_letta::counts(agent.tools.iter().map(|t| t.kind()));
        let modified = agent.updated_at.clone().unwrap_or_default();
        table.add_row([
            agent.id.clone(),
            total.to_string(),
            external.to_string(),
            core.to_string(),
            modified.clone(),
        ]);
        items.push(json!({
            "agentID": agent.id,
            "tools": total,
            "external": external,
            "core": core,
            "modifiedAt": agent.updated_at,
        }));
    }
    let text = if agents.is_empty() {
        format!("no agents on the Letta server at {}", letta.base())
    } else {
        table.trim_fmt()
    };
    Ok(Output::new(
        json!({ "items": items, "problems": [] }),
        Human::Text(text),
    ))
}

/// A Letta agent as `agent show --json` prints it (the shape of an agent file's, with Letta's
/// tool IDs; what Letta does not keep is null), and its tools as a table.
fn describe_letta(agent: &LettaAgent, held: &[HeldTool]) -> (Value, String) {
    let mut table = output::table(["#", "TOOL", "NAME", "KIND", "SCORE", "ATTACHED", "STATUS"]);
    let mut tools = Vec::new();
    for (i, h) in held.iter().enumerate() {
        let kind = h.tool.kind();
        let status = match (kind, h.member) {
            (Kind::Core, _) => "ok".to_owned(),
            (_, Some(m)) if m.is_usable() => "ok".to_owned(),
            (_, Some(_)) => "not usable in the catalog".to_owned(),
            (_, None) => "not in the catalog".to_owned(),
        };
        table.add_row([
            (i + 1).to_string(),
            h.reference(),
            h.tool.name.clone(),
            kind_label(kind).to_owned(),
            String::new(),
            String::new(),
            status.clone(),
        ]);
        tools.push(json!({
            "toolID": h.tool.id,
            "ref": h.member.map(|m| m.reference()),
            "name": h.tool.name,
            "kind": kind,
            "attachedAt": null,
            "matchScore": null,
            "status": status,
        }));
    }
    let doc = json!({
        "agentID": agent.id,
        "createdAt": agent.created_at,
        "modifiedAt": agent.updated_at,
        "tools": tools,
    });
    (doc, table.trim_fmt())
}

/// `agent detach` on Letta: each tool named is detached by its own call.
fn detach_letta(
    ctx: &Ctx,
    catalog: &Catalog,
    letta: &Letta,
    id: AgentId,
    args: &DetachArgs,
) -> Result<Output, CliError> {
    let agent_id = id.to_string();
    let _guard = id.lock(catalog.root(), ctx.global.lock_timeout)?;
    let agent = letta.agent(&agent_id).map_err(letta_error)?;
    let names = ctx.read_index(catalog, Names::read)?;
    let held = names.held(letta.agent_tools(&agent_id).map_err(letta_error)?);
    let chosen: Vec<usize> = if args.all {
        (0..held.len()).collect()
    } else {
        let mut chosen = Vec::new();
        for text in &args.tools {
            let i = find_held(&held, text)?;
            if !chosen.contains(&i) {
                chosen.push(i);
            }
        }
        chosen
    };
    for (done, &i) in chosen.iter().enumerate() {
        letta.detach(&agent_id, &held[i].tool.id).map_err(|e| {
            let error = letta_error(e);
            let before: Vec<String> = chosen[..done]
                .iter()
                .map(|&j| held[j].reference())
                .collect();
            if before.is_empty() {
                error
            } else {
                error.with_causes([format!("detached before it failed: {}", before.join(", "))])
            }
        })?;
    }
    // What is left is the agent's tools but those detached: known without asking again.
    let (gone, left): (Vec<_>, Vec<_>) = held
        .into_iter()
        .enumerate()
        .partition(|(i, _)| chosen.contains(i));
    let gone: Vec<HeldTool> = gone.into_iter().map(|(_, h)| h).collect();
    let left: Vec<HeldTool> = left.into_iter().map(|(_, h)| h).collect();
    let (total, ..) = on_letta::counts(left.iter().map(|h| h.tool.kind()));
    let refs: Vec<String> = gone.iter().map(HeldTool::reference).collect();
    let text = detached_text(id, &refs, total);
    let (mut doc, _) = describe_letta(&agent, &left);
    doc["detached"] = gone
        .iter()
        .map(|h| {
            json!({
                "toolID": h.tool.id,
                "ref": h.member.map(|m| m.reference()),
                "name": h.tool.name,
            })
        })
        .collect();
    Ok(Output::new(doc, Human::Status(text)))
}

/// The one tool of a Letta agent's `held` that `text` names: Letta's tool ID, its name, or the
/// catalog tool it stands for (ref, bundle/slug, slug).
fn find_held(held: &[HeldTool], text: &str) -> Result<usize, CliError> {
    let matches: Vec<usize> = (0..held.len())
        .filter(|&i| {
            let h = &held[i];
            h.tool.id == text
                || h.tool.name == text
                || h.member.is_some_and(|m| {
                    m.reference() == text
                        || format!("{}/{}", m.row.bundle_slug, m.row.slug) == text
                        || m.row.slug == text
                })
        })
        .collect();
    one_of(
        text,
        &matches,
        held.iter().map(HeldTool::reference).collect(),
        |i| held[i].tool.id.clone(),
        "name one by its Letta tool ID",
    )
}

/// The one tool of an agent's `matches` (indexes of the tools `text` names): NOT_FOUND naming
/// `held` (the agent's tools) when there is none, a choice to make (each `candidate`, and
/// `hint`) when there are several.
fn one_of(
    text: &str,
    matches: &[usize],
    held: Vec<String>,
    candidate: impl Fn(usize) -> String,
    hint: &str,
) -> Result<usize, CliError> {
    match matches {
        [one] => Ok(*one),
        [] => Err(CliError::from(catalog::Error::NotFound {
            what: "attached tool",
            name: text.to_owned(),
            hint: Some(catalog::Hint::from(format!(
                "the agent holds: {}",
                held.join(", ")
            ))),
        })),
        many => Err(CliError::invalid(format!(
            "'{text}' names {} of the agent's tools",
            many.len()
        ))
        .with_causes(many.iter().map(|&i| format!("candidate: {}", candidate(i))))
        .with_hint(hint)),
    }
}

/// What `agent detach` says: the tools `refs` that left agent `id`, which holds `total` now.
fn detached_text(id: AgentId, refs: &[String], total: usize) -> String {
    if refs.is_empty() {
        format!("{id} had no tools to detach")
    } else {
        format!(
            "Detached {} from {id}; it holds {}",
            refs.join(", "),
            n_tools(total)
        )
    }
}
