//! `toolctl init`: make a folder a catalog.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use clap::Args;
use std::path::PathBuf;
use toolctl_lib::catalog::Catalog;

/// Create a catalog: toolctl.json, bundles/ and .toolctl/.gitignore
///
/// DIR defaults to --catalog (or $TOOLCTL_CATALOG) when given, else the working folder. A
/// folder that already is a catalog is left as it is.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The folder to make a catalog
    pub dir: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, args: &InitArgs) -> Result<Output, CliError> {
    let dir = args
        .dir
        .clone()
        .or_else(|| ctx.global.catalog.clone())
        .unwrap_or_else(|| PathBuf::from("."));
    let dir = if dir.is_absolute() {
        dir
    } else {
        ctx.cwd.join(dir)
    };
    let report = Catalog::init(&dir)?;
    let line = if report.created {
        format!("Initialised a toolctl catalog in {}", report.root.display())
    } else {
        format!(
            "{} already is a toolctl catalog; nothing changed",
            report.root.display()
        )
    };
    Ok(Output::new(
        serde_json::to_value(&report).unwrap_or_default(),
        Human::Status(line),
    ))
}
