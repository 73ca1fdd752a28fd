//! `toolctl search`: find tools by what they do, ranked.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::clip;
use crate::cli::output::{self, Human, Output};
use crate::cli::shared::{PageArgs, next_page_note};
use clap::Args;
use serde_json::json;
use toolctl_lib::index::SearchRequest;
use toolctl_lib::pick;

/// What `--help` shows after the options: command lines that work (a test runs them on a copy
/// of fixtures/catalog).
const EXAMPLES: &str = "\
Examples:
  # Tools that read files
  toolctl search read a file
  # Only the weather bundle, as JSON for a script
  toolctl search forecast --bundle weather --json
  # Every match, not one page
  toolctl search weather --all";

/// Search tools by name, description, tags and arguments
///
/// Ranking: tools whose name starts with the words first, then tools that have all the words,
/// then matches allowing typos ("wether" finds "weather"), then tools with some of the words;
/// by relevance (BM25) inside each group, then the most recently modified first. A query that
/// reads like a sentence is ranked by relevance alone, then ordered as `pick` orders its picks
/// (the tools a hit's required arguments name right after it). Any text is a valid query. Disabled, unavailable and soft-deleted tools are left out
/// unless asked for.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct SearchArgs {
    /// What the tool should do, in any words
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,
    /// Only tools of this bundle, by slug or ID (can be repeated)
    #[arg(long, value_name = "BUNDLE", add = crate::cli::complete::bundles())]
    pub bundle: Vec<String>,
    /// Only tools with this tag (can be repeated: all must match)
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
    /// Also disabled and unavailable tools, and tools of disabled bundles
    #[arg(long)]
    pub include_disabled: bool,
    /// Also tools of soft-deleted bundles
    #[arg(long)]
    pub include_deleted: bool,
    #[command(flatten)]
    pub page: PageArgs,
}

pub fn run(ctx: &Ctx, args: &SearchArgs) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let request = SearchRequest {
        query: args.query.join(" "),
        bundles: args.bundle.clone(),
        tags: args.tag.clone(),
        include_disabled: args.include_disabled,
        include_deleted: args.include_deleted,
    };
    let (mut problems, results) = ctx.read_index(&catalog, |index| {
        let problems = index.problems(&catalog)?;
        // A sentence's hits ordered as `pick` orders them (pick::search); --all: every hit
        // from the token on, the order computed once.
        let token = args.page.page_token.as_deref();
        let results = if args.page.all {
            pick::search::search_all(&catalog, index, &request, token)?
        } else {
            pick::search::search(&catalog, index, &request, args.page.page_size, token)?
        };
        Ok((problems, results))
    })?;

    let mut table = output::table(["#", "TOOL", "SCORE", "WHY", "DESCRIPTION"]);
    let found = pick::search::found(&catalog, &results, args.include_disabled, &mut problems);
    for hit in &found {
        table.add_row([
            hit.rank.to_string(),
            hit.entry.reference(),
            format!("{:.2}", hit.hit.score),
            clip(&hit.hit.why, 40),
            hit.entry.tool.description.clone(),
        ]);
    }
    let items: Vec<_> = found.iter().map(pick::search::Found::to_json).collect();
    ctx.warn_problems(&problems);
    let corrections: Vec<_> = results
        .corrections
        .iter()
        .map(|(typed, found)| json!({ "typed": typed, "found": found }))
        .collect();
    let json = json!({
        "query": request.query,
        "items": items,
        "nextPageToken": results.next_page_token,
        "corrections": corrections,
        "problems": problems,
    });
    let text = if items.is_empty() {
        format!("no tool matches '{}'", request.query)
    } else {
        output::render_list(table)
    };
    let note = next_page_note(results.next_page_token.as_ref());
    Ok(Output::new(json, Human::Text(text)).with_note(note))
}
