//! `toolctl attach`: fit an agent's tool set to its task, under limits.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{self, Human, Output};
use crate::cli::shared::{
    BackendArgs, EndpointArgs, letta_error, n_tools, pick_error, plural, read_document,
};
use crate::cli::values;
use clap::Args;
use serde_json::json;
use toolctl_lib::attach::contract;
use toolctl_lib::attach::on_letta::Remote;
use toolctl_lib::attach::request::ContractRequest;
use toolctl_lib::attach::{self, AgentId, AttachError, Outcome, Settings};
use toolctl_lib::pick::Scorer;

/// What `--help` shows after the options: command lines that work (a test runs them on a copy
/// of fixtures/catalog).
const EXAMPLES: &str = "\
Examples:
  # Give an agent the tools for its task (its file is made on first use)
  toolctl attach agent-123e4567-e89b-12d3-a456-426614174000 --query \"weather in Oslo\"
  # Another task, never detaching builtin/now
  toolctl attach agent-123e4567-e89b-12d3-a456-426614174000 --query issues --keep builtin/now
  # Only enforce the limits
  toolctl attach agent-123e4567-e89b-12d3-a456-426614174000";

/// Attach the tools an agent needs for a task, under limits
///
/// Runs the attach contract's phases: search (the best --limit tools for --query, kept when
/// their match score reaches --min-score), processing, pre-attach pruning, detachment of the
/// external tools the query did not match, attachment, and post-attach pruning (unless
/// --no-auto-prune). Protected tools never leave: --keep tools, the tools matched now, the
/// names in attach.protectedTools (or NEVER_DETACH_TOOLS / PROTECTED_TOOLS), and built-in
/// tools unless EXCLUDE_LETTA_CORE_TOOLS=false. Limits come from toolctl.json's "attach"
/// settings, overridden by MAX_TOTAL_TOOLS, MAX_MCP_TOOLS, MIN_MCP_TOOLS and
/// DEFAULT_DROP_RATE. Without --query nothing is searched; only the limits are enforced.
/// On files, the agent's file (agents/agent-<uuid>.json) is created on first use; on a Letta
/// server (--backend letta, or agents.backend in toolctl.json) the agent must exist, and a
/// catalog tool Letta lacks is registered as a tool of toolctl's MCP server
/// (agents.letta.mcpServer).
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct AttachArgs {
    /// The agent: a UUID, bare or with the agent- prefix
    #[arg(value_name = "AGENT", add = crate::cli::complete::agents(), required_unless_present = "request")]
    pub agent: Option<String>,
    /// The attach contract's JSON request (agent_id, query, limit, min_score, keep_tools,
    /// auto_prune) from FILE, or - for stdin, instead of AGENT and the flags it holds
    #[arg(long, value_name = "FILE", conflicts_with_all = ["agent", "query", "limit", "min_score", "keep", "no_auto_prune"])]
    pub request: Option<String>,
    /// What the agent is about to do, in any words
    #[arg(long, value_name = "Q")]
    pub query: Option<String>,
    /// Consider the best N matches (1 to FIND_TOOLS_MAX_LIMIT, 25 unless set)
    #[arg(long, value_name = "N", default_value_t = attach::DEFAULT_LIMIT, allow_negative_numbers = true)]
    pub limit: i64,
    /// Attach only matches scoring X or more (0 to 100)
    #[arg(long, value_name = "X", default_value_t = attach::DEFAULT_MIN_SCORE, allow_negative_numbers = true)]
    pub min_score: f64,
    /// Never detach TOOL: [bundle/]slug[@version], toolID or exported name (can be repeated)
    #[arg(long, value_name = "TOOL", add = crate::cli::complete::tools())]
    pub keep: Vec<String>,
    /// Skip the post-attach pruning (the limits still hold)
    #[arg(long)]
    pub no_auto_prune: bool,
    /// Do not attach with the first matches the tools their required arguments name as their
    /// source
    #[arg(long)]
    pub no_helpers: bool,
    /// Lift the first matches' siblings: tools of their bundle whose names begin with the
    /// same word (off by default: it helps some catalogs and costs others)
    #[arg(long, overrides_with = "no_siblings")]
    pub siblings: bool,
    /// Do not lift the first matches' siblings (the default)
    #[arg(long, hide = true, overrides_with = "siblings")]
    pub no_siblings: bool,
    /// How to score relevance [default: hybrid when an embeddings endpoint is set, else bm25]
    #[arg(long, value_name = "NAME", value_parser = values::scorer())]
    pub scorer: Option<Scorer>,
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    #[command(flatten)]
    pub agents: BackendArgs,
}

pub fn run(ctx: &Ctx, args: &AttachArgs) -> Result<Output, CliError> {
    attach_run(ctx, args).map_err(CliError::in_attach_shape)
}

/// What to attach: the flags, or the contract's request body.
fn asked(args: &AttachArgs) -> Result<ContractRequest, CliError> {
    let Some(path) = &args.request else {
        let agent = args.agent.as_deref().unwrap_or_default();
        return Ok(ContractRequest {
            agent: AgentId::parse(agent).map_err(CliError::invalid)?,
            query: args.query.clone().unwrap_or_default(),
            limit: args.limit,
            min_score: args.min_score,
            keep: args.keep.clone(),
            auto_prune: !args.no_auto_prune,
        });
    };
    let (doc, name) = read_document(path)?;
    let read = ContractRequest::from_doc(&doc).map_err(|problems| {
        let first = &problems[0];
        CliError::invalid(format!("{name}: {}: {}", pointer_text(&first.pointer), first.message))
            .with_causes(
                problems
                    .iter()
                    .skip(1)
                    .map(|p| format!("{}: {}", pointer_text(&p.pointer), p.message)),
            )
            .with_details(json!({
                "file": name,
                "problems": problems.iter().map(|p| json!({ "pointer": p.pointer, "message": p.message })).collect::<Vec<_>>(),
            }))
    })?;
    Ok(read)
}

/// A JSON pointer as a message shows it (the root is `/`).
fn pointer_text(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}

fn attach_run(ctx: &Ctx, args: &AttachArgs) -> Result<Output, CliError> {
    let asked = asked(args)?;
    let agent = asked.agent;
    let catalog = ctx.catalog()?;
    let config = catalog.config();
    let remote = args.agents.connect(config, true)?;
    let settings = Settings::resolve(&config.attach, &|name| std::env::var(name).ok())
        .map_err(|e| attach_error(e, args.request.is_some()))?;
    let min_score = asked.min_score;
    let scoring = contract::Scoring {
        scorer: args.scorer,
        overrides: args.endpoints.overrides(),
        no_helpers: args.no_helpers,
        siblings: args.siblings,
    };
    let request = contract::request(asked, &config.pick, &scoring).map_err(pick_error)?;
    let mut progress = ctx.ui.progress(0, "embedding tools");
    let outcome = ctx.read_index(&catalog, |index| {
        let mut progress = |done, total| progress.update(done, total);
        let remote = remote.as_ref().map(|(letta, server)| Remote {
            letta,
            server: server.as_ref(),
        });
        let run = contract::run(
            &catalog,
            index,
            &settings,
            &request,
            remote,
            ctx.global.lock_timeout,
            &mut progress,
        );
        let outcome = match run {
            Err(AttachError::Index(e)) => return Err(e),
            other => other,
        };
        // `bundles`, or a bundle's `tools`, that is not a folder: tools left out unseen.
        let unread = index.folder_problems(&catalog)?;
        Ok(outcome.map(|outcome| (outcome, unread)))
    });
    drop(progress);
    let (outcome, unread) = outcome?.map_err(|e| attach_error(e, args.request.is_some()))?;
    ctx.warn_problems(&unread);
    // The keep list as the caller named it.
    let keep_name = if args.request.is_some() {
        "keep_tools"
    } else {
        "--keep"
    };
    for warning in &outcome.warnings {
        ctx.ui.warn(&contract::warning_words(warning, keep_name));
    }
    if outcome.created {
        ctx.ui
            .status(&format!("Created {}", agent.file(catalog.root()).display()));
    }
    Ok(Output::new(
        contract::response(&outcome, min_score, keep_name),
        Human::Text(summary(&outcome, min_score)),
    ))
}

/// A failed attach as the command line reports it (`from_request`: the request body gave the
/// values, so its fields are named rather than flags).
fn attach_error(error: AttachError, from_request: bool) -> CliError {
    let (limit_name, min_score_name) = if from_request {
        ("limit", "min_score")
    } else {
        ("--limit", "--min-score")
    };
    match error {
        AttachError::Limit { limit, max } => CliError::invalid(format!(
            "{limit_name} {limit} is out of range: it must be between 1 and {max}"
        ))
        .with_hint(format!(
            "the largest limit is FIND_TOOLS_MAX_LIMIT ({max}), set in toolctl.json (attach.findToolsMaxLimit) or the environment"
        )),
        AttachError::MinScore { min_score } => CliError::invalid(format!(
            "{min_score_name} {min_score} is out of range: it must be between 0 and 100"
        ))
        .with_hint("match scores are on a 0–100 scale (35 by default)"),
        AttachError::Invalid { message, hint } => {
            let error = CliError::invalid(message);
            match hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            }
        }
        AttachError::Keep { tool, why, hint } => {
            let error = CliError::invalid(format!("--keep '{tool}': {why}"));
            match hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            }
        }
        AttachError::Catalog(e) => e.into(),
        AttachError::Index(e) => e.into(),
        AttachError::Pick(e) => pick_error(e),
        AttachError::Letta(e) => letta_error(e),
    }
}

/// What a person reads: what arrived, what stayed, what left and why, and where the agent
/// stands against its limits.
fn summary(outcome: &Outcome, min_score: f64) -> String {
    let arrived = outcome
        .attachments
        .iter()
        .filter(|a| !a.already_attached)
        .count();
    let mut text = match outcome.scorer {
        Some(scorer) => format!(
            "{}: attached {arrived}, {} already attached, detached {} ({} scores; {}, {} passed --min-score {min_score})\n",
            outcome.agent,
            outcome.attachments.len() - arrived,
            outcome.detachments.len(),
            scorer.as_str(),
            plural(outcome.processed, "candidate"),
            outcome.passed,
        ),
        None => format!(
            "{}: no --query, nothing searched or attached; detached {}\n",
            outcome.agent,
            outcome.detachments.len()
        ),
    };
    if !outcome.attachments.is_empty()
        || !outcome.detachments.is_empty()
        || !outcome.failed_attachments.is_empty()
        || !outcome.failed_detachments.is_empty()
    {
        let mut table = output::table(["", "TOOL", "NAME", "SCORE", "NOTE"]);
        for a in &outcome.attachments {
            table.add_row([
                if a.already_attached { "=" } else { "+" }.to_owned(),
                a.reference.clone(),
                a.name.clone(),
                format!("{:.2}", a.match_score),
                if a.already_attached {
                    "already attached".to_owned()
                } else {
                    "attached".to_owned()
                },
            ]);
        }
        for f in &outcome.failed_attachments {
            table.add_row([
                "!".to_owned(),
                f.reference.clone().unwrap_or_default(),
                f.name.clone(),
                String::new(),
                format!("not attached: {}", f.reason),
            ]);
        }
        for f in &outcome.failed_detachments {
            table.add_row([
                "!".to_owned(),
                f.reference.clone().unwrap_or_default(),
                f.name.clone(),
                String::new(),
                format!("not detached: {}", f.reason),
            ]);
        }
        for d in &outcome.detachments {
            table.add_row([
                "-".to_owned(),
                d.reference.clone(),
                d.name.clone(),
                String::new(),
                d.reason.clone(),
            ]);
        }
        text.push_str(&table.trim_fmt());
        text.push('\n');
    }
    let (total, external, core) = outcome.counts;
    let limits = &outcome.settings.limits;
    text.push_str(&format!(
        "{} holds {} ({external} external, {core} built-in); limits: {} in all, {} external, at least {} external",
        outcome.agent,
        n_tools(total),
        limits.max_total, limits.max_external, limits.min_external
    ));
    text
}
