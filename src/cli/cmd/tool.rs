//! `toolctl tool …`: create, inspect, toggle and remove tools.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::clip;
use crate::cli::output::{self, Human, Output};
use crate::cli::shared::{PageArgs, next_page_note, read_document, tool_lookup_error};
use clap::{Args, Subcommand};
use serde_json::json;
use toolctl_lib::catalog::skeleton::{self, Skeleton};
use toolctl_lib::catalog::view::ToolView;
use toolctl_lib::catalog::{ToolEntry, ToolFilter, VersionChoice};
use toolctl_lib::ops::Toggle;

const GET_EXAMPLES: &str = "\
Examples:
  # The version that stands (the newest enabled one)
  toolctl tool get weather/forecast
  # One version, as JSON
  toolctl tool get weather/forecast@v2 --json";

const PUT_EXAMPLES: &str = "\
Examples:
  # A tool from a file, into a bundle
  toolctl tool put --bundle files docs/examples/forecast.json
  # A new version from the same file, on standard input
  sed 's/\"v1\"/\"v2\"/' docs/examples/forecast.json | toolctl tool put --bundle files -";

/// Manage tools: create, show, list, enable, disable, delete
#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    Put(PutArgs),
    /// Show a tool: its fields, status, schemas and where it is stored
    #[command(after_long_help = GET_EXAMPLES)]
    Get(ToolArg),
    List(ListArgs),
    /// Enable a tool (only its isEnabled flag changes)
    Enable(ToolArg),
    /// Disable a tool (only its isEnabled flag changes)
    Disable(ToolArg),
    /// Delete a tool version for good (built-in tools cannot be deleted)
    Delete(ToolArg),
    New(NewArgs),
}

/// Write a new tool.json to start from, valid as it is, and print its path
///
/// The tool is created disabled, with placeholder descriptions and one example argument, and
/// "$schema" pointing at the catalog's schemas/tool.schema.json (written with it) so editors
/// check the file as you type. Edit it, check it with `toolctl validate FILE`, then enable it
/// with `toolctl tool enable`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The bundle to create the tool in, by slug or ID
    #[arg(value_name = "BUNDLE", add = crate::cli::complete::bundles())]
    pub bundle: String,
    /// The new tool's slug (letters, digits and -)
    #[arg(value_name = "SLUG")]
    pub slug: String,
    /// How the tool runs
    #[arg(long = "type", value_enum, default_value_t = NewType::Http)]
    pub kind: NewType,
    /// The version to create
    #[arg(long, value_name = "V", default_value = "v1")]
    pub version: String,
    /// HTTP tools: the URL template (default: one on the first host of allowedHosts)
    #[arg(long, value_name = "URL", conflicts_with = "func")]
    pub url: Option<String>,
    /// Native tools: the function to run (default: now)
    #[arg(long, value_name = "NAME")]
    pub func: Option<String>,
    /// HTTP tools: how calls authenticate (impl.auth, with the secrets it names declared)
    #[arg(long, value_enum, value_name = "KIND", conflicts_with = "func")]
    pub auth: Option<NewAuth>,
}

/// The `impl.auth` kinds `tool new --auth` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NewAuth {
    /// Authorization: Bearer <secret>
    Bearer,
    /// A header holding the HMAC of the request
    Hmac,
    /// An OAuth2 client-credentials token, fetched and cached
    Oauth2,
}

/// The kinds of tool `tool new` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NewType {
    /// An HTTP request
    Http,
    /// A function compiled into toolctl
    Native,
}

/// Create a tool from a tool.json file (or - for stdin)
///
/// toolID, bundleID, createdAt and modifiedAt are filled in when absent. A version never
/// changes once written: putting an existing <slug, version> is a conflict (exit 5) and leaves
/// the stored file as it was.
#[derive(Debug, Args)]
#[command(after_long_help = PUT_EXAMPLES)]
pub struct PutArgs {
    /// The bundle to put the tool into, by slug or ID (default: the file's bundleID)
    #[arg(long, value_name = "BUNDLE", add = crate::cli::complete::bundles())]
    pub bundle: Option<String>,
    /// The tool.json to read; - reads standard input
    #[arg(value_name = "FILE|-")]
    pub file: String,
}

/// A tool: [bundle/]slug[@version] or a toolID
#[derive(Debug, Args)]
pub struct ToolArg {
    /// [bundle/]slug[@version] or a toolID
    #[arg(value_name = "TOOL", add = crate::cli::complete::tools())]
    pub tool: String,
}

/// List tools in bundle, slug and version order
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only tools of this bundle, by slug or ID (can be repeated)
    #[arg(long, value_name = "BUNDLE", add = crate::cli::complete::bundles())]
    pub bundle: Vec<String>,
    /// Only tools with this tag (can be repeated: all must match)
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
    /// Also list disabled tools and tools of disabled bundles
    #[arg(long)]
    pub include_disabled: bool,
    /// Also list tools of soft-deleted bundles
    #[arg(long)]
    pub include_deleted: bool,
    #[command(flatten)]
    pub page: PageArgs,
}

pub fn run(ctx: &Ctx, command: &ToolCommand) -> Result<Output, CliError> {
    match command {
        ToolCommand::Put(args) => put(ctx, args),
        ToolCommand::Get(args) => get(ctx, args),
        ToolCommand::List(args) => list(ctx, args),
        ToolCommand::Enable(args) => toggle(ctx, args, true),
        ToolCommand::Disable(args) => toggle(ctx, args, false),
        ToolCommand::Delete(args) => delete(ctx, args),
        ToolCommand::New(args) => new(ctx, args),
    }
}

fn new(ctx: &Ctx, args: &NewArgs) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let how = match args.kind {
        NewType::Native => {
            let func = args.func.clone().unwrap_or_else(|| "now".to_owned());
            if !toolctl_lib::catalog::builtin::has_function(&func) {
                return Err(CliError::invalid(format!(
                    "--func {func}: this toolctl has no native function of that name"
                ))
                .with_hint(format!(
                    "one of: {}",
                    toolctl_lib::catalog::builtin::FUNCTIONS.join(", ")
                )));
            }
            Skeleton::Native { func }
        }
        NewType::Http => match &args.url {
            Some(url) => Skeleton::Http { url: url.clone() },
            None => {
                let config = catalog.config();
                let url = skeleton::example_url(&config.hosts, &config.allowed_hosts)
                    .ok_or_else(|| {
                        CliError::invalid("no host to call: allowedHosts in toolctl.json is empty")
                            .with_hint("add the API's host to allowedHosts in toolctl.json, or pass --url with a host that is there")
                    })?;
                Skeleton::Http { url }
            }
        },
    };
    let mut doc = skeleton::tool(&args.slug, &args.version, &how);
    if let Some(auth) = args.auth {
        if args.kind != NewType::Http {
            return Err(CliError::invalid("--auth is for HTTP tools (--type http)"));
        }
        use toolctl_lib::catalog::auth::{SkeletonAuth, add_to_skeleton};
        let kind = match auth {
            NewAuth::Bearer => SkeletonAuth::Bearer,
            NewAuth::Hmac => SkeletonAuth::Hmac,
            NewAuth::Oauth2 => SkeletonAuth::OAuth2,
        };
        add_to_skeleton(&mut doc, kind);
    }
    let entry = ctx.write(|catalog| {
        // A `schemas` that leads out of the catalog is refused before the tool is written.
        toolctl_lib::catalog::store::refuse_link_out(
            &catalog
                .root()
                .join(toolctl_lib::catalog::skeleton::SCHEMAS_DIR),
        )?;
        let entry = catalog.put_tool(doc, "tool new", Some(&args.bundle))?;
        catalog.write_schemas()?;
        Ok(entry)
    })?;
    let path = entry.path.clone().unwrap_or_default();
    ctx.ui.status(&format!(
        "Created tool {} (disabled) in {}\nhint: edit it, check it with `toolctl validate {}`, then `toolctl tool enable {}`",
        entry.reference(),
        path.display(),
        path.display(),
        entry.reference()
    ));
    let mut json = ToolView::with_document(&entry);
    json["path"] = json!(path);
    Ok(Output::new(json, Human::Text(path.display().to_string())))
}

fn put(ctx: &Ctx, args: &PutArgs) -> Result<Output, CliError> {
    let (doc, source_name) = read_document(&args.file)?;
    let entry = ctx.write(|catalog| catalog.put_tool(doc, &source_name, args.bundle.as_deref()))?;
    if let Some(reason) = &entry.unavailable {
        ctx.ui
            .warn(&format!("{} is unavailable: {reason}", entry.reference()));
    }
    let line = format!(
        "Created tool {} ({})",
        entry.reference(),
        entry.tool.tool_id
    );
    Ok(Output::new(
        ToolView::with_document(&entry),
        Human::Status(line),
    ))
}

fn get(ctx: &Ctx, args: &ToolArg) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let (entry, problems) = catalog
        .resolve_tool(&args.tool, VersionChoice::Default)
        .map_err(|e| tool_lookup_error(&catalog, &args.tool, e))?;
    ctx.warn_problems(&problems);
    let usage = toolctl_lib::invoke::usage::for_tool(&catalog, &entry.tool.tool_id.to_string());
    let mut json = ToolView::with_document(&entry);
    json["usage"] = serde_json::to_value(&usage).unwrap_or_default();
    Ok(Output::new(json, Human::Text(describe(&entry, &usage))))
}

/// The human form of `tool get`.
fn describe(entry: &ToolEntry, usage: &toolctl_lib::invoke::usage::Usage) -> String {
    let view = ToolView::new(entry);
    let mut table = output::table(["FIELD", "VALUE"]);
    table.add_row(["ref", &view.reference]);
    table.add_row(["toolID", &view.tool_id]);
    table.add_row(["displayName", &view.display_name]);
    table.add_row(["description", &view.description]);
    table.add_row(["type", view.kind]);
    table.add_row(["status", &view.status]);
    table.add_row(["tags", &view.tags.join(", ")]);
    table.add_row(["createdAt", &view.created_at]);
    table.add_row(["modifiedAt", &view.modified_at]);
    let calls = match &usage.last_called_at {
        Some(at) => format!("{} (last {at})", usage.call_count),
        None => "0".to_owned(),
    };
    table.add_row(["calls", &calls]);
    let location = view
        .path
        .as_ref()
        .map_or_else(|| "(built in)".to_owned(), |p| p.display().to_string());
    table.add_row(["path", &location]);
    let mut text = table.trim_fmt();
    for (label, key) in [
        ("argSchema", "argSchema"),
        ("outputSchema", "outputSchema"),
        ("impl", "impl"),
    ] {
        if let Some(value) = entry.doc.get(key) {
            let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
            text.push_str(&format!("\n\n{label}:\n{pretty}"));
        }
    }
    text
}

fn list(ctx: &Ctx, args: &ListArgs) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let filter = ToolFilter {
        bundles: args.bundle.clone(),
        tags: args.tag.clone(),
        include_disabled: args.include_disabled,
        include_deleted: args.include_deleted,
    };
    let page = ctx.read_index(&catalog, |index| {
        args.page
            .fetch(|size, token| index.list_tools(&catalog, &filter, size, token))
    })?;
    ctx.warn_problems(&page.problems);
    let mut table = output::table(["TOOL", "TYPE", "STATUS", "DESCRIPTION"]);
    for entry in &page.items {
        table.add_row([
            entry.reference(),
            entry.tool.kind.label().to_owned(),
            // The whole reason is in `tool get` and in JSON; a table keeps to one screen.
            clip(&entry.status(), 40),
            entry.tool.description.clone(),
        ]);
    }
    let items: Vec<ToolView> = page.items.iter().map(ToolView::new).collect();
    let json = json!({
        "items": items,
        "nextPageToken": page.next_page_token,
        "problems": page.problems,
    });
    let note = next_page_note(page.next_page_token.as_ref());
    Ok(Output::new(json, Human::Text(output::render_list(table))).with_note(note))
}

fn toggle(ctx: &Ctx, args: &ToolArg, enabled: bool) -> Result<Output, CliError> {
    let (entry, toggle) = ctx.write(|catalog| catalog.set_tool_enabled(&args.tool, enabled))?;
    let state = if enabled { "enabled" } else { "disabled" };
    let line = match toggle {
        Toggle::Changed => format!("Tool {} {state}", entry.reference()),
        Toggle::Unchanged => format!(
            "Tool {} was already {state}; nothing changed",
            entry.reference()
        ),
    };
    let mut json = serde_json::to_value(ToolView::new(&entry)).unwrap_or_default();
    json["changed"] = (toggle == Toggle::Changed).into();
    Ok(Output::new(json, Human::Status(line)))
}

fn delete(ctx: &Ctx, args: &ToolArg) -> Result<Output, CliError> {
    let entry = ctx.write(|catalog| catalog.delete_tool(&args.tool))?;
    let line = format!(
        "Deleted tool {} ({})",
        entry.reference(),
        entry.tool.tool_id
    );
    let mut json = serde_json::to_value(ToolView::new(&entry)).unwrap_or_default();
    json["deleted"] = true.into();
    Ok(Output::new(json, Human::Status(line)))
}
