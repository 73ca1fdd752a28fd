//! `toolctl index`: look at or rebuild the search index (it maintains itself otherwise).

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{self, Human, Output};
use clap::{Args, Subcommand};
use toolctl_lib::base::error_code::ErrorCode;
use toolctl_lib::catalog::Catalog;
use toolctl_lib::index::Index;
use toolctl_lib::index::watch;

/// Look at or rebuild the search index in .toolctl/ (kept up to date automatically)
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Bring the index up to date and show what it holds
    Status,
    /// Delete the index and build it again from the files
    Rebuild,
    /// Watch the catalog's files so commands need not check each one (Linux)
    ///
    /// Every command first checks which files changed since the index last saw them: one stat
    /// per tool file and slug folder (about 35 ms at 10,000 tools). A watcher (inotify) tells
    /// it instead. Commands run at a terminal start one by themselves on big catalogs on a local
    /// filesystem and say so (index.watch in toolctl.json, or $TOOLCTL_WATCH: auto, always or
    /// never; only always starts one from scripts). It stops
    /// after 30 minutes without a command (index.watchIdle in toolctl.json), or with --stop.
    Watch(WatchArgs),
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Run in the background and return once it answers
    #[arg(long, conflicts_with = "stop")]
    detach: bool,
    /// Stop the catalog's watcher
    #[arg(long)]
    stop: bool,
}

pub fn run(ctx: &Ctx, command: &IndexCommand) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    if let IndexCommand::Watch(args) = command {
        return watch(ctx, &catalog, args);
    }
    let mut progress = ctx.ui.progress(0, "indexing");
    let mut update = |done, total| progress.update(done, total);
    let (index, report) = match command {
        IndexCommand::Rebuild => Index::rebuild(&catalog, &mut update)?,
        _ => Index::open(&catalog, &mut update)?,
    };
    drop(progress);
    if matches!(command, IndexCommand::Rebuild) {
        // A rebuild reads every file because it was asked to: no sign that the next commands
        // need a watcher, so none is started for it.
        ctx.checks.take_walk();
    }
    let status = index.status(&catalog, report)?;
    ctx.warn_problems(&index.problems(&catalog)?);
    let mut table = output::table(["FIELD", "VALUE"]);
    let path = status.path.as_ref().map_or_else(
        || "(in memory, for this command only)".to_owned(),
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
            "{} ms, {} entries compared{}, {} files read, {} removed{}",
            sync.millis,
            sync.checked,
            if sync.watcher { " (watcher)" } else { "" },
            sync.read,
            sync.removed,
            if sync.rebuilt { ", rebuilt" } else { "" }
        ),
    ]);
    table.add_row(["watcher", &describe(status.watcher.as_ref())]);
    Ok(Output::new(
        serde_json::to_value(&status).unwrap_or_default(),
        Human::Text(table.trim_fmt()),
    ))
}

/// A watcher's status in a line.
fn describe(watcher: Option<&watch::Status>) -> String {
    watcher.map_or_else(
        || "not running".to_owned(),
        |w| {
            format!(
                "running (pid {}, {} folders, {} events since {})",
                w.pid, w.folders, w.events, w.started_at
            )
        },
    )
}

/// `index watch [--detach | --stop]`.
fn watch(ctx: &Ctx, catalog: &Catalog, args: &WatchArgs) -> Result<Output, CliError> {
    let root = catalog.root();
    let done = |message: String, status: Option<watch::Status>| {
        Output::new(
            serde_json::json!({ "watcher": status, "message": message }),
            Human::Text(message),
        )
    };
    if args.stop {
        let stopped = watch::stop(root);
        let message = if stopped {
            format!("Stopped the watcher of {}", root.display())
        } else {
            format!("No watcher was running for {}", root.display())
        };
        return Ok(done(message, None));
    }
    // Refused before it starts: a watcher past the inotify limit would fail after watching
    // most of the catalog.
    crate::cli::watcher::refuse_too_few_watches(catalog).map_err(CliError::invalid)?;
    if args.detach {
        let program = std::env::current_exe().map_err(|e| {
            CliError::new(
                ErrorCode::Internal,
                format!("cannot find this program: {e}"),
            )
        })?;
        let status = crate::cli::watcher::detach(&program, root).map_err(CliError::invalid)?;
        let message = format!("Watching {}: {}", root.display(), describe(Some(&status)));
        return Ok(done(message, Some(status)));
    }
    watch::run(root, catalog.config().watch_idle, |status| {
        ctx.ui.status(&format!(
            "Watching {} ({} folders); Ctrl-C stops it",
            root.display(),
            status.folders
        ));
    })
    .map_err(|e| match e {
        watch::RunError::AlreadyWatched(root) => CliError::invalid(format!(
            "another watcher already watches {} (toolctl index status shows it)",
            root.display()
        )),
        watch::RunError::Failed(message) => CliError::invalid(message),
    })?;
    // A watcher in the foreground ends without a word (stopped, idle, or its catalog gone).
    Ok(Output::nothing())
}
