//! `toolctl bundle …`: create, inspect, toggle, soft-delete, restore, reap, export and import
//! bundles.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{self, Human, Output};
use crate::cli::shared::{PageArgs, next_page_note, read_document};
use clap::{Args, Subcommand};
use serde_json::json;
use std::time::Duration;
use toolctl_lib::base::error_code::exit;
use toolctl_lib::catalog::BundleFilter;
use toolctl_lib::catalog::view::BundleView;
use toolctl_lib::ops::archive::{self, ImportOptions};
use toolctl_lib::ops::{BundleInput, Toggle};
use uuid::Uuid;

/// Manage bundles: named groups of tools with one on/off switch
#[derive(Debug, Subcommand)]
pub enum BundleCommand {
    Put(PutArgs),
    /// Show a bundle: its fields, status, number of tools and where it is stored
    Get(BundleArg),
    List(ListArgs),
    /// Enable a bundle and with it its enabled tools
    Enable(BundleArg),
    /// Disable a bundle and with it all its tools
    Disable(BundleArg),
    Delete(DeleteArgs),
    /// Undo a soft delete
    Restore(BundleArg),
    Reap(ReapArgs),
    Export(ExportArgs),
    Import(ImportArgs),
}

/// Create a bundle, or replace one (with --id, or a file holding its bundleID)
///
/// From flags, a replace changes only the given fields of the bundle. From a file (or - for
/// stdin), the file replaces the whole bundle.json. A slug already used by another bundle is a
/// conflict (exit 5).
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["slug", "file"])))]
pub struct PutArgs {
    /// The bundle's slug (letters, digits and '-')
    #[arg(long)]
    pub slug: Option<String>,
    /// The bundle's ID (a UUIDv7); made when creating without it
    #[arg(long, value_name = "UUID", conflicts_with = "file")]
    pub id: Option<Uuid>,
    /// A human-readable name
    #[arg(long, value_name = "NAME", conflicts_with = "file")]
    pub display_name: Option<String>,
    /// What the bundle's tools are for
    #[arg(long, value_name = "TEXT", conflicts_with = "file")]
    pub description: Option<String>,
    /// Create (or set) the bundle disabled
    #[arg(long, conflicts_with = "file")]
    pub disabled: bool,
    /// Read the whole bundle.json from FILE (- for stdin)
    #[arg(long, value_name = "FILE", conflicts_with = "slug")]
    pub file: Option<String>,
}

/// A bundle by slug or ID
#[derive(Debug, Args)]
pub struct BundleArg {
    /// The bundle's slug or bundleID
    #[arg(add = crate::cli::complete::bundles())]
    pub bundle: String,
}

/// Soft-delete a bundle: it is hidden, and reaped once empty and past the grace period
///
/// With --with-tools its tools are removed for good in the same write, so `bundle reap` can
/// finish the job once the grace period is over. Run it again to finish an interrupted run.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The bundle's slug or bundleID
    #[arg(add = crate::cli::complete::bundles())]
    pub bundle: String,
    /// Also delete the bundle's tools, every version (this cannot be undone)
    #[arg(long)]
    pub with_tools: bool,
}

/// List bundles in slug order
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this bundle, by slug or ID (can be repeated)
    #[arg(long, value_name = "BUNDLE", add = crate::cli::complete::bundles())]
    pub bundle: Vec<String>,
    /// Also list disabled bundles
    #[arg(long)]
    pub include_disabled: bool,
    /// Also list soft-deleted bundles
    #[arg(long)]
    pub include_deleted: bool,
    #[command(flatten)]
    pub page: PageArgs,
}

/// Remove soft-deleted bundles whose grace period is over and that hold no tools
///
/// Each reaped bundle is a line on stdout; bundles that still hold tools are kept and reported
/// on stderr (muted by -q), so stdout is empty unless something was removed: cron mails only
/// when something happened. Safe to run twice at once.
#[derive(Debug, Args)]
pub struct ReapArgs {
    /// Reap bundles deleted longer ago than this (default: reap.gracePeriod of toolctl.json, 48h)
    #[arg(long, value_name = "DURATION", value_parser = toolctl_lib::base::time::parse_duration)]
    pub older_than: Option<Duration>,
    /// Say what would be reaped without removing anything
    #[arg(long)]
    pub dry_run: bool,
}

/// Write a bundle and all its tools to a ZIP archive
///
/// The archive holds bundle.json and tools/<slug>/<version>/tool.json for every version,
/// disabled ones included, byte for byte as on disk. Exporting an unchanged bundle twice gives
/// the same bytes. A file that would not import (it does not parse or breaks a rule) stops the
/// export and is named (exit 3). An existing FILE is a conflict (exit 5) unless --force. The
/// built-in bundle cannot be exported (exit 6).
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The bundle's slug or bundleID
    #[arg(add = crate::cli::complete::bundles())]
    pub bundle: String,
    /// Write the archive to FILE (- for standard output)
    #[arg(short, long, value_name = "FILE")]
    pub output: String,
    /// Replace FILE if it exists
    #[arg(long)]
    pub force: bool,
}

/// Add a bundle and its tools from a ZIP archive made by `bundle export`
///
/// Everything is checked before anything is written: entry names and sizes (at most 20,000
/// entries, 4 MiB per file, 256 MiB in all), then every file as the catalog reads it. A
/// bundleID, bundle slug or toolID the catalog already has is a conflict (exit 5) that lists
/// each; nothing is overwritten. --as-new imports a copy with new IDs; --slug renames it.
///
/// --update takes a newer archive of a bundle the catalog holds: the tool versions it lacks are
/// added, identical ones reported unchanged, and a version whose content differs (isEnabled
/// aside) is a conflict (exit 5) with nothing written. The catalog's bundle.json is kept.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The archive (- for standard input)
    pub file: String,
    /// Import a copy: a new bundleID and new toolIDs, the bundle's createdAt and modifiedAt now
    #[arg(long)]
    pub as_new: bool,
    /// Give the imported bundle this slug (letters, digits and '-')
    #[arg(long, value_name = "SLUG")]
    pub slug: Option<String>,
    /// Add the versions the catalog's copy of the bundle lacks (see above)
    #[arg(long, conflicts_with_all = ["as_new", "slug"])]
    pub update: bool,
}

pub fn run(ctx: &Ctx, command: &BundleCommand) -> Result<Output, CliError> {
    match command {
        BundleCommand::Put(args) => put(ctx, args),
        BundleCommand::Get(args) => get(ctx, args),
        BundleCommand::List(args) => list(ctx, args),
        BundleCommand::Enable(args) => {
            toggle(ctx, args, "enabled", |c, b| c.set_bundle_enabled(b, true))
        }
        BundleCommand::Disable(args) => {
            toggle(ctx, args, "disabled", |c, b| c.set_bundle_enabled(b, false))
        }
        BundleCommand::Delete(args) => delete(ctx, args),
        BundleCommand::Restore(args) => toggle(ctx, args, "restored", |c, b| c.restore_bundle(b)),
        BundleCommand::Reap(args) => reap(ctx, args),
        BundleCommand::Export(args) => export(ctx, args),
        BundleCommand::Import(args) => import(ctx, args),
    }
}

fn tools_text(count: usize) -> String {
    match count {
        1 => "1 tool".to_owned(),
        n => format!("{n} tools"),
    }
}

fn export(ctx: &Ctx, args: &ExportArgs) -> Result<Output, CliError> {
    let to_stdout = args.output == "-";
    if to_stdout && ctx.ui.json {
        let mut error = CliError::invalid(
            "--json and -o - cannot be used together: both write to standard output",
        )
        .with_hint("write the archive to a file with -o FILE");
        error = error.usage();
        return Err(error);
    }
    if to_stdout && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(CliError::invalid(
            "-o - writes a ZIP archive to standard output, which is a terminal here",
        )
        .with_hint("redirect it (-o - > weather.zip), pipe it, or write a file with -o FILE")
        .usage());
    }
    let catalog = ctx.catalog()?;
    let exported = catalog.export_bundle(&args.bundle)?;
    for path in &exported.left_out {
        ctx.ui.warn(&format!(
            "left out {}: not part of a bundle (only bundle.json and tools/<slug>/<version>/tool.json are)",
            path.display()
        ));
    }
    let slug = &exported.bundle.bundle.slug;
    let tools = tools_text(exported.tools);
    if to_stdout {
        ctx.ui.status(&format!(
            "Exported bundle {slug} ({tools}) to standard output"
        ));
        return Ok(Output::new(
            serde_json::Value::Null,
            Human::Raw(exported.bytes),
        ));
    }
    let path = ctx.cwd.join(&args.output);
    archive::write_archive_file(&path, &exported.bytes, args.force)?;
    let json = json!({
        "bundle": BundleView::with_document(&exported.bundle, exported.tools),
        "file": path,
        "tools": exported.tools,
        "bytes": exported.bytes.len(),
    });
    let line = format!("Exported bundle {slug} ({tools}) to {}", args.output);
    Ok(Output::new(json, Human::Status(line)))
}

fn import(ctx: &Ctx, args: &ImportArgs) -> Result<Output, CliError> {
    let mut progress = ctx.ui.progress(0, "importing");
    let mut report = |done, total| progress.update(done, total);
    let archive = if args.file == "-" {
        archive::read_archive_stream(std::io::stdin().lock(), "<stdin>", &mut report)?
    } else {
        archive::read_archive_file(&ctx.cwd.join(&args.file), &args.file, &mut report)?
    };
    let options = ImportOptions {
        as_new: args.as_new,
        slug: args.slug.clone(),
        update: args.update,
    };
    let imported = ctx.write(|catalog| catalog.import_bundle(&archive, &options, &mut report))?;
    drop(progress);
    let bundle = &imported.bundle;
    let from = if args.file == "-" {
        "standard input"
    } else {
        &args.file
    };
    if args.update {
        let list = |versions: &[String]| match versions {
            [] => String::new(),
            some => format!(" ({})", some.join(", ")),
        };
        let line = format!(
            "Updated bundle {} from {from}: added {}{}, {} unchanged{}",
            bundle.bundle.slug,
            tools_text(imported.added.len()),
            list(&imported.added),
            imported.unchanged.len(),
            list(&imported.unchanged),
        );
        let total = ctx.catalog()?.bundle_tools(bundle, &mut Vec::new()).len();
        let json = json!({
            "bundle": BundleView::with_document(bundle, total),
            "added": imported.added,
            "unchanged": imported.unchanged,
        });
        return Ok(Output::new(json, Human::Status(line)));
    }
    let mut line = format!(
        "Imported bundle {} ({}) from {from}",
        bundle.bundle.slug,
        tools_text(imported.tools),
    );
    if imported.as_new {
        line.push_str(&format!(
            " as a copy with new IDs ({})",
            bundle.bundle.bundle_id
        ));
    }
    let json = json!({
        "bundle": BundleView::with_document(bundle, imported.tools),
        "tools": imported.tools,
        "asNew": imported.as_new,
    });
    Ok(Output::new(json, Human::Status(line)))
}

fn put(ctx: &Ctx, args: &PutArgs) -> Result<Output, CliError> {
    let input = match (&args.file, &args.slug) {
        (Some(file), _) => {
            let (doc, source_name) = read_document(file)?;
            BundleInput::Document { doc, source_name }
        }
        (None, Some(slug)) => BundleInput::Fields {
            id: args.id,
            slug: slug.clone(),
            display_name: args.display_name.clone(),
            description: args.description.clone(),
            enabled: !args.disabled,
        },
        (None, None) => return Err(CliError::invalid("give --slug or --file")),
    };
    let (entry, created) = ctx.write(|catalog| catalog.put_bundle(input))?;
    let verb = if created { "Created" } else { "Replaced" };
    let line = format!(
        "{verb} bundle {} ({})",
        entry.bundle.slug, entry.bundle.bundle_id
    );
    let mut json = serde_json::to_value(BundleView::new(&entry, None)).unwrap_or_default();
    json["created"] = created.into();
    Ok(Output::new(json, Human::Status(line)))
}

fn get(ctx: &Ctx, args: &BundleArg) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let entry = catalog.find_bundle(&args.bundle)?;
    let mut problems = Vec::new();
    let tools = catalog.bundle_tools(&entry, &mut problems);
    ctx.warn_problems(&problems);
    let view = BundleView::new(&entry, Some(tools.len()));
    let mut table = output::table(["FIELD", "VALUE"]);
    table.add_row(["slug", &view.slug]);
    table.add_row(["bundleID", &view.bundle_id]);
    table.add_row(["displayName", &view.display_name]);
    table.add_row(["description", &view.description]);
    table.add_row(["status", BundleView::status(&entry)]);
    table.add_row(["tools", &tools.len().to_string()]);
    table.add_row(["createdAt", &view.created_at]);
    table.add_row(["modifiedAt", &view.modified_at]);
    if let Some(at) = &view.soft_deleted_at {
        table.add_row(["softDeletedAt", at]);
    }
    let location = view
        .path
        .as_ref()
        .map_or_else(|| "(built in)".to_owned(), |p| p.display().to_string());
    table.add_row(["path", &location]);
    let json = BundleView::with_document(&entry, tools.len());
    Ok(Output::new(json, Human::Text(table.trim_fmt())))
}

fn list(ctx: &Ctx, args: &ListArgs) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let filter = BundleFilter {
        bundles: args.bundle.clone(),
        include_disabled: args.include_disabled,
        include_deleted: args.include_deleted,
    };
    let page = ctx.read_index(&catalog, |index| {
        args.page
            .fetch(|size, token| index.list_bundles(&catalog, &filter, size, token))
    })?;
    ctx.warn_problems(&page.problems);
    let mut table = output::table(["SLUG", "ID", "TOOLS", "STATUS", "DESCRIPTION"]);
    for (entry, count) in &page.items {
        table.add_row([
            entry.bundle.slug.clone(),
            entry.bundle.bundle_id.to_string(),
            count.to_string(),
            BundleView::status(entry).to_owned(),
            entry.bundle.description.clone(),
        ]);
    }
    let items: Vec<BundleView> = page
        .items
        .iter()
        .map(|(entry, count)| BundleView::new(entry, Some(*count)))
        .collect();
    let json = json!({
        "items": items,
        "nextPageToken": page.next_page_token,
        "problems": page.problems,
    });
    let note = next_page_note(page.next_page_token.as_ref());
    Ok(Output::new(json, Human::Text(output::render_list(table))).with_note(note))
}

fn delete(ctx: &Ctx, args: &DeleteArgs) -> Result<Output, CliError> {
    let by_name = BundleArg {
        bundle: args.bundle.clone(),
    };
    if !args.with_tools {
        return toggle(ctx, &by_name, "deleted", |c, b| c.delete_bundle(b));
    }
    let (entry, toggle, tools, problems) =
        ctx.write(|catalog| catalog.delete_bundle_with_tools(&args.bundle))?;
    for problem in &problems {
        ctx.ui.warn(&format!(
            "kept {}: it cannot be read as a tool ({}); reap keeps the bundle until it is gone",
            problem.path.display(),
            problem.message
        ));
    }
    let slug = &entry.bundle.slug;
    let deleted = tools_text(tools.len());
    let line = match toggle {
        Toggle::Changed => format!("Bundle {slug} deleted with its {deleted}"),
        Toggle::Unchanged => format!("Bundle {slug} was already deleted; deleted its {deleted}"),
    };
    let mut json = serde_json::to_value(BundleView::new(&entry, None)).unwrap_or_default();
    json["changed"] = (toggle == Toggle::Changed || !tools.is_empty()).into();
    json["deletedTools"] = tools.iter().map(|t| t.reference()).collect();
    Ok(Output::new(json, Human::Status(line)))
}

fn toggle(
    ctx: &Ctx,
    args: &BundleArg,
    done: &str,
    action: impl FnOnce(
        &mut toolctl_lib::catalog::Catalog,
        &str,
    )
        -> toolctl_lib::catalog::Result<(toolctl_lib::catalog::BundleEntry, Toggle)>,
) -> Result<Output, CliError> {
    let (entry, toggle) = ctx.write(|catalog| action(catalog, &args.bundle))?;
    let line = match toggle {
        Toggle::Changed => format!("Bundle {} {done}", entry.bundle.slug),
        Toggle::Unchanged => format!(
            "Bundle {} was already {done}; nothing changed",
            entry.bundle.slug
        ),
    };
    let mut json = serde_json::to_value(BundleView::new(&entry, None)).unwrap_or_default();
    json["changed"] = (toggle == Toggle::Changed).into();
    Ok(Output::new(json, Human::Status(line)))
}

fn reap(ctx: &Ctx, args: &ReapArgs) -> Result<Output, CliError> {
    let mut catalog = ctx.catalog()?;
    let mut progress = ctx.ui.progress(0, "reaping");
    let report = catalog.reap(args.older_than, args.dry_run, |done, total| {
        progress.update(done, total)
    })?;
    drop(progress);
    let verb = if args.dry_run { "would reap" } else { "reaped" };
    let mut lines = Vec::new();
    for b in &report.reaped {
        lines.push(format!(
            "{verb} bundle {} ({}), deleted at {}",
            b.slug, b.bundle_id, b.soft_deleted_at
        ));
    }
    for b in &report.kept {
        let reason = b.kept_because.as_deref().unwrap_or_default();
        ctx.ui.status(&format!(
            "kept bundle {} ({}), deleted at {}: {reason}",
            b.slug, b.bundle_id, b.soft_deleted_at
        ));
    }
    for b in &report.failed {
        let error = b.error.as_deref().unwrap_or_default();
        // Never muted: cron must hear of a bundle left in place.
        ctx.ui.error(
            &format!(
                "could not reap bundle {} ({}), deleted at {}: {error}",
                b.slug, b.bundle_id, b.soft_deleted_at
            ),
            &[],
            &[],
        );
    }
    let json = serde_json::to_value(&report).unwrap_or_default();
    let code = if report.failed.is_empty() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    };
    Ok(Output::new(json, Human::Text(lines.join("\n"))).with_exit(code))
}
