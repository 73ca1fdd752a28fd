//! `toolctl index`: look at or rebuild the search index (it maintains itself otherwise).

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{self, Human, Output};
use crate::index::Index;
use clap::Subcommand;

/// Look at or rebuild the search index in .toolctl/ (kept up to date automatically)
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Bring the index up to date and show what it holds
    Status,
    /// Delete the index and build it again from the files
    Rebuild,
}

pub fn run(ctx: &Ctx, command: &IndexCommand) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let mut progress = ctx.ui.progress(0, "indexing");
    let mut update = |done, total| progress.update(done, total);
    let (index, report) = match command {
        IndexCommand::Status => Index::open(&catalog, &mut update)?,
        IndexCommand::Rebuild => Index::rebuild(&catalog, &mut update)?,
    };
    drop(progress);
    let status = index.status(report)?;
    ctx.warn_problems(&index.problems(&catalog)?);
    let mut table = output::table(["FIELD", "VALUE"]);
    let path = status.path.as_ref().map_or_else(
        || "(in memory: the catalog does not exist yet)".to_owned(),
        |p| p.display().to_string(),
    );
    table.add_row(["path", &path]);
    table.add_row(["format", &status.format_version.to_string()]);
    table.add_row(["tools", &status.tools.to_string()]);
    table.add_row(["bundles", &status.bundles.to_string()]);
    table.add_row(["problems", &status.problems.to_string()]);
    table.add_row(["size", &format!("{} bytes", status.size_bytes)]);
    let sync = &status.last_sync;
    table.add_row([
        "last check",
        &format!(
            "{} ms, {} files read, {} removed{}",
            sync.millis,
            sync.read,
            sync.removed,
            if sync.rebuilt { ", rebuilt" } else { "" }
        ),
    ]);
    Ok(Output::new(
        serde_json::to_value(&status).unwrap_or_default(),
        Human::Text(table.trim_fmt()),
    ))
}
