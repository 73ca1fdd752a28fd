//! `toolctl export`: the tools in one provider's format, ready to send.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use crate::cli::shared::{export_error, warn_left_out};
use crate::cli::values;
use clap::Args;
use toolctl_lib::provider::Provider;
use toolctl_lib::provider::export::{self, ExportError, ExportRequest};

/// What `--help` shows after the options: command lines that work (a test runs them on a copy
/// of fixtures/catalog).
const EXAMPLES: &str = "\
Examples:
  # Every enabled tool for OpenAI Chat Completions
  toolctl export --provider openai
  # One bundle for Anthropic, leaving out (with a warning) what it cannot take
  toolctl export --provider anthropic --bundle weather --lenient
  # Two tools for Gemini
  toolctl export --provider gemini --tool weather/forecast --tool builtin/now";

/// Print the tools as a provider's request takes them (a JSON array)
///
/// One version per tool slug (the enabled one with the newest createdAt), enabled and usable
/// tools only unless --include-disabled. Names are the exported names (letters, digits, _ and
/// -, at most 64), which `toolctl invoke` accepts back. A schema the provider cannot take with
/// the same meaning is an error naming the tool, keyword and JSON pointer (--lenient: a warning,
/// and the tool is left out).
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct ExportArgs {
    /// The provider whose format to print
    #[arg(long, value_name = "PROVIDER", value_parser = values::provider())]
    pub provider: Provider,
    /// Only tools of this bundle, by slug or ID (can be repeated)
    #[arg(long, value_name = "BUNDLE", add = crate::cli::complete::bundles())]
    pub bundle: Vec<String>,
    /// Only tools with this tag (can be repeated: all must match)
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
    /// Only this tool: bundle/slug[@version], slug, toolID or exported name (can be repeated)
    #[arg(long, value_name = "TOOL", add = crate::cli::complete::tools(), visible_alias = "name")]
    pub tool: Vec<String>,
    /// Also disabled and unavailable tools, and tools of disabled bundles
    #[arg(long)]
    pub include_disabled: bool,
    /// OpenAI strict mode for every tool (openai, openai-responses)
    #[arg(long)]
    pub strict: bool,
    /// Leave out, with a warning, tools the provider cannot take
    #[arg(long)]
    pub lenient: bool,
    /// Export more tools than the provider takes in one request
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &Ctx, args: &ExportArgs) -> Result<Output, CliError> {
    if args.strict && !matches!(args.provider, Provider::Openai | Provider::OpenaiResponses) {
        return Err(CliError::invalid(format!(
            "--strict is OpenAI's strict mode; {} has none",
            args.provider
        ))
        .with_hint("use --strict with --provider openai or openai-responses"));
    }
    let catalog = ctx.catalog()?;
    let request = ExportRequest {
        provider: args.provider,
        bundles: args.bundle.clone(),
        tags: args.tag.clone(),
        tools: args.tool.clone(),
        include_disabled: args.include_disabled,
        strict: args.strict,
        lenient: args.lenient,
        force: args.force,
    };
    let exported = ctx.read_index(&catalog, |index| {
        match export::export(&catalog, index, &request) {
            Err(ExportError::Index(e)) => Err(e),
            other => Ok(other),
        }
    })?;
    let exported = exported.map_err(export_error)?;
    ctx.warn_problems(&exported.problems);
    warn_left_out(ctx, args.provider, &exported.left_out);
    let text = serde_json::to_string_pretty(&exported.list).unwrap_or_default();
    Ok(Output::new(exported.list, Human::Text(text)))
}
