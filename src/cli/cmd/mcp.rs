//! `toolctl mcp`: the catalog for MCP clients (Claude Desktop and Code, Cursor, VS Code…).

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output, Ui};
use crate::mcp::serve::{self, Log, Mode, Settings};
use crate::mcp::view::Filters;
use clap::{Args, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    Serve(ServeArgs),
}

/// Serve the catalog's tools to an MCP client, over stdio (or Streamable HTTP)
///
/// tools/list shows the tools as `export --provider mcp` prints them (paged); tools/call runs
/// them as `invoke` does, and a failed call is a result with isError: true. The client is told
/// (notifications/tools/list_changed) within about a second when the catalog changes. Logs go
/// to stderr; stdout is the protocol. Stops when stdin closes, or on SIGTERM/SIGINT.
///
/// --mode search shows two tools instead of every tool: search_tools ({"query", "max"?}: the
/// best tools for a task, from `pick`) and call_tool ({"name", "arguments"}), so a model's
/// context stays small with a catalog of thousands. --mode auto (default) lists every tool up
/// to 64 and searches above.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// What the client is shown: all, search or auto
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = parse_mode)]
    pub mode: Mode,
    /// Only tools of this bundle, by slug or ID (can be repeated)
    #[arg(long, value_name = "BUNDLE")]
    pub bundle: Vec<String>,
    /// Only tools with this tag (can be repeated: all must match)
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
    /// Only this tool: bundle/slug[@version], slug, toolID or exported name (can be repeated)
    #[arg(long, value_name = "TOOL")]
    pub tool: Vec<String>,
    /// Tools per tools/list page
    #[arg(long, value_name = "N", default_value_t = serve::DEFAULT_PAGE_SIZE, value_parser = parse_page_size)]
    pub page_size: usize,
    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:8765) instead of stdio
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Listen on an address other than loopback with --http (anyone who reaches it can run tools)
    #[arg(long, requires = "http")]
    pub public: bool,
    /// The folder file tools work in (default: the current folder); they cannot leave it
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

fn parse_mode(text: &str) -> Result<Mode, String> {
    text.parse()
}

fn parse_page_size(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("'{text}' is not a number from 1 to 1000")),
    }
}

pub fn run(ctx: &Ctx, command: &McpCommand) -> Result<Output, CliError> {
    match command {
        McpCommand::Serve(args) => run_serve(ctx, args),
    }
}

fn run_serve(ctx: &Ctx, args: &ServeArgs) -> Result<Output, CliError> {
    if ctx.global.json {
        return Err(CliError::invalid(
            "mcp serve speaks JSON-RPC on stdout: --json does not apply",
        ));
    }
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
        && !args.public
    {
        return Err(CliError::invalid(format!(
            "--http {addr} is not a loopback address: anyone who reaches it could run the catalog's tools"
        ))
        .with_hint("use 127.0.0.1:PORT, or add --public if that is what you want"));
    }
    let catalog = ctx.catalog()?;
    let settings = Settings {
        root: catalog.root().to_path_buf(),
        lock_timeout: ctx.global.lock_timeout,
        filters: Filters {
            bundles: args.bundle.clone(),
            tags: args.tag.clone(),
            tools: args.tool.clone(),
        },
        mode: args.mode,
        page_size: args.page_size,
        workspace: args.workspace.clone().unwrap_or_else(|| ctx.cwd.clone()),
        http: args.http,
    };
    serve::serve(settings, Arc::new(StderrLog(ctx.ui.clone()))).map_err(|e| match e {
        serve::Error::Catalog(e) => CliError::from(e),
        other => CliError::new(
            crate::base::error_code::ErrorCode::Internal,
            other.to_string(),
        ),
    })?;
    Ok(Output::new(serde_json::Value::Null, Human::Nothing))
}

/// The server's lines, as status lines and warnings on stderr (muted by --quiet).
struct StderrLog(Ui);

impl Log for StderrLog {
    fn status(&self, line: &str) {
        self.0.status(&format!("toolctl mcp: {line}"));
    }

    fn warn(&self, line: &str) {
        self.0.warn(line);
    }
}
