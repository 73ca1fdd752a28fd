//! `toolctl export`: the tools in one provider's format, ready to send.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use crate::error_code::ErrorCode;
use crate::provider::Provider;
use crate::provider::export::{self, ExportError, ExportRequest, Refused};
use clap::Args;
use serde_json::json;

/// Print the tools as a provider's request takes them (a JSON array)
///
/// One version per tool slug (the enabled one with the newest createdAt), enabled and usable
/// tools only unless --include-disabled. Names are the exported names (letters, digits, _ and
/// -, at most 64), which `toolctl invoke` accepts back. A schema the provider cannot take with
/// the same meaning is an error naming the tool, keyword and JSON pointer (--lenient: a warning,
/// and the tool is left out).
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The format: openai, openai-responses, anthropic, ollama, gemini or mcp
    #[arg(long, value_name = "PROVIDER", value_parser = parse_provider)]
    pub provider: Provider,
    /// Only tools of this bundle, by slug or ID (can be repeated)
    #[arg(long, value_name = "BUNDLE")]
    pub bundle: Vec<String>,
    /// Only tools with this tag (can be repeated: all must match)
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
    /// Only this tool: bundle/slug[@version], slug, toolID or exported name (can be repeated)
    #[arg(long, value_name = "TOOL", visible_alias = "name")]
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

/// The `--provider`/`--emit` value parser.
pub fn parse_provider(text: &str) -> Result<Provider, String> {
    text.parse()
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

/// Warn about tools `--lenient` left out.
pub fn warn_left_out(ctx: &Ctx, provider: Provider, left_out: &[Refused]) {
    for refused in left_out {
        for problem in &refused.problems {
            ctx.ui.warn(&format!(
                "left out {} ({provider} cannot take it): {problem}",
                refused.reference
            ));
        }
    }
}

/// The CLI error of a failed export.
pub fn export_error(error: ExportError) -> CliError {
    match error {
        ExportError::Catalog(e) => e.into(),
        ExportError::Index(e) => e.into(),
        ExportError::Unexpressible { provider, refused } => {
            let causes = refused.iter().flat_map(|r| {
                r.problems
                    .iter()
                    .map(move |p| format!("{}: {p}", r.reference))
            });
            let strict_hint = refused
                .iter()
                .flat_map(|r| &r.problems)
                .any(|p| p.message.contains("strict"));
            let mut error = CliError::invalid(format!(
                "{provider} cannot take {} of the tools as they are",
                refused.len()
            ))
            .with_causes(causes.collect::<Vec<_>>())
            .with_details(json!({ "provider": provider, "tools": refused }))
            .with_hint("--lenient leaves them out with a warning");
            if strict_hint {
                error = error.with_hint("without --strict, OpenAI takes the schemas as they are");
            }
            error
        }
        ExportError::NotUsable { .. } => CliError::new(ErrorCode::ToolDisabled, error.to_string())
            .with_hint("--include-disabled exports disabled and unavailable tools too"),
        ExportError::TooMany {
            provider,
            count,
            max,
        } => CliError::invalid(format!(
            "{count} tools is more than {provider} takes in one request ({max})"
        ))
        .with_details(json!({ "provider": provider, "count": count, "max": max }))
        .with_hint("choose the few tools a task needs: `toolctl pick \"<task>\" --emit openai`; narrow with --bundle/--tag/--tool; or --force"),
    }
}
