//! `toolctl pick`: the few right tools for a task.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{self, Human, Output};
use crate::cli::shared::{EndpointArgs, export_error, pick_error, warn_left_out};
use crate::cli::values;
use clap::Args;
use serde_json::json;
use std::time::Duration;
use toolctl_lib::index::text;
use toolctl_lib::pick::{self, PickError, PickRequest, Scorer};
use toolctl_lib::provider::Provider;
use toolctl_lib::provider::export::translate;

/// What `--help` shows after the options: command lines that work (a test runs them on a copy
/// of fixtures/catalog).
const EXAMPLES: &str = "\
Examples:
  # The best tools for a task
  toolctl pick \"weather in Oslo tomorrow\"
  # Tools that change things too, at most 2, with why each was picked
  toolctl pick \"comment on a GitHub issue\" --allow-unsafe --max 2 --debug
  # The picked tools ready for an OpenAI request (or anthropic, gemini, ollama, mcp)
  toolctl pick \"weather in Oslo tomorrow\" --emit openai";

/// Pick the few tools that fit a task, best first
///
/// Scores are between 0 and 1. Unsafe tools (they change things: safe: false, destructive
/// annotations, HTTP methods other than GET/HEAD) are left out unless --allow-unsafe. Prints
/// {items: [{ref, name, toolID, score, reason}]} (with provenance under --debug), or with --emit the
/// picked tools ready to send to a provider.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct PickArgs {
    /// The task, in any words
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,
    /// Pick at most N tools (1 to 128)
    #[arg(long, value_name = "N", default_value_t = pick::DEFAULT_MAX)]
    pub max: usize,
    /// Leave out tools scoring under X (0 to 1)
    #[arg(long, value_name = "X", default_value_t = pick::DEFAULT_MIN_SCORE)]
    pub min_score: f64,
    /// Also pick tools that are not safe
    #[arg(long)]
    pub allow_unsafe: bool,
    /// How to score the tools
    #[arg(long, value_name = "NAME", default_value = "fused", value_parser = values::scorer())]
    pub scorer: Scorer,
    /// Give up scoring after MS milliseconds and return the first tools in registration order
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Do not add the tools the first picks' required arguments name as their source
    #[arg(long)]
    pub no_helpers: bool,
    /// Lift the first picks' siblings: tools of their bundle whose names begin with the same
    /// word (off by default: it helps some catalogs and costs others)
    #[arg(long, overrides_with = "no_siblings")]
    pub siblings: bool,
    /// Do not lift the first picks' siblings (the default)
    #[arg(long, hide = true, overrides_with = "siblings")]
    pub no_siblings: bool,
    /// Choose a sentence's first picks to cover its words between them instead of by
    /// relevance alone (off by default: it helps some catalogs and costs others)
    #[arg(long, overrides_with = "no_coverage")]
    pub coverage: bool,
    /// Rank a sentence by relevance alone (the default)
    #[arg(long, hide = true, overrides_with = "coverage")]
    pub no_coverage: bool,
    /// The lexical share of the fused and hybrid scorers' fusion, 0 (meaning alone) to 1
    /// (words alone); for measuring a catalog's best balance
    #[arg(long, value_name = "W", hide = true)]
    pub lexical_weight: Option<f64>,
    /// Show why each tool was picked: scorer, matched terms, sub-scores
    #[arg(long)]
    pub debug: bool,
    /// Print the picked tools in this provider's format instead (as `export` does)
    #[arg(long, value_name = "PROVIDER", value_parser = values::provider())]
    pub emit: Option<Provider>,
    /// With --emit openai or openai-responses: strict mode
    #[arg(long, requires = "emit")]
    pub strict: bool,
    /// With --emit: leave out, with a warning, tools the provider cannot take
    #[arg(long, requires = "emit")]
    pub lenient: bool,
    #[command(flatten)]
    pub endpoints: EndpointArgs,
}

pub fn run(ctx: &Ctx, args: &PickArgs) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let config = &catalog.config().pick;
    let endpoints = args.endpoints.resolve(config, args.scorer)?;
    let request = PickRequest {
        query: args.query.join(" "),
        max: args.max,
        min_score: args.min_score,
        allow_unsafe: args.allow_unsafe,
        scorer: args.scorer,
        timeout: args.timeout_ms.map(Duration::from_millis),
        embed: endpoints.embed,
        embed_batch: endpoints.embed_batch,
        llm: endpoints.llm,
        helpers: !args.no_helpers,
        siblings: args.siblings,
        coverage: args.coverage,
        lexical_weight: args.lexical_weight,
        among: None,
    };
    let mut progress = ctx.ui.progress(0, "embedding tools");
    let outcome = ctx.read_index(&catalog, |index| {
        let outcome = match pick::pick(&catalog, index, &request, &mut |done, total| {
            progress.update(done, total)
        }) {
            Err(PickError::Index(e)) => return Err(e),
            other => other,
        };
        // Only an empty answer shown to a person tells how many tools were considered:
        // counting them is a pass over the catalog.
        let considered = match &outcome {
            Ok(o) if o.picks.is_empty() && args.emit.is_none() && !ctx.ui.json => {
                pick::considered(index, request.allow_unsafe)?
            }
            _ => 0,
        };
        // `bundles`, or a bundle's `tools`, that is not a folder: tools left out unseen.
        let unread = index.folder_problems(&catalog)?;
        Ok(outcome.map(|outcome| (outcome, considered, unread)))
    });
    drop(progress);
    let (outcome, considered, unread) = outcome?.map_err(pick_error)?;
    ctx.warn_problems(&unread);
    match &outcome.fallback {
        Some(pick::Fallback::PastTimeLimit { limit_ms }) => ctx.ui.warn(&format!(
            "scoring ran past --timeout-ms {limit_ms}; the first tools in registration order instead"
        )),
        Some(other) => ctx.ui.warn(&other.to_string()),
        None => {}
    }

    if let Some(provider) = args.emit {
        let mut tools = Vec::new();
        let mut reader = catalog.tool_reader();
        for picked in &outcome.picks {
            match reader.tool_at(&picked.member.row.path) {
                Ok(Some(entry)) => tools.push((picked.member.name.clone(), entry)),
                Ok(None) => {}
                Err(problem) => ctx.warn_problems(&[problem]),
            }
        }
        let (list, _, left_out) =
            translate(provider, &tools, args.strict, args.lenient).map_err(export_error)?;
        warn_left_out(ctx, provider, &left_out);
        let text = serde_json::to_string_pretty(&list).unwrap_or_default();
        return Ok(Output::new(list, Human::Text(text)));
    }

    let mut table = output::table(["#", "TOOL", "NAME", "SCORE", "REASON"]);
    let mut items = Vec::new();
    let mut debug_lines = Vec::new();
    for (i, picked) in outcome.picks.iter().enumerate() {
        let reference = picked.member.reference();
        table.add_row([
            (i + 1).to_string(),
            reference.clone(),
            picked.member.name.clone(),
            format!("{:.2}", picked.score),
            picked.reason.clone(),
        ]);
        let mut item = json!({
            "ref": reference,
            "name": picked.member.name,
            "toolID": picked.member.row.tool_id,
            "score": picked.score,
            "reason": picked.reason,
        });
        if args.debug {
            item["provenance"] = picked.provenance.clone();
            debug_lines.push(format!("{reference}: {}", picked.provenance));
        }
        items.push(item);
    }
    let lexical = matches!(
        request.scorer,
        Scorer::Keyword | Scorer::Bm25 | Scorer::Fused
    );
    let text = if items.is_empty() && lexical && text::content_tokens(&request.query).is_empty() {
        format!(
            "no tool matches '{}': it holds no word that says what the task is about (stop words, numbers and single letters are left out), and no tool's name holds it",
            request.query
        )
    } else if items.is_empty() {
        format!(
            "no tool scores {} or more for '{}' ({} considered; --min-score lowers the bar{})",
            args.min_score,
            request.query,
            considered,
            if args.allow_unsafe {
                ""
            } else {
                ", --allow-unsafe adds unsafe tools"
            }
        )
    } else {
        let mut text = output::render_list(table);
        for line in debug_lines {
            text.push('\n');
            text.push_str(&line);
        }
        text
    };
    Ok(Output::new(json!({ "items": items }), Human::Text(text)))
}
