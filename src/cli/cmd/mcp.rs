//! `toolctl mcp`: the catalog for MCP clients (Claude Desktop and Code, Cursor, VS Code…).

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use crate::cli::shared::{StderrLog, parse_cap, parse_seconds};
use clap::{Args, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use toolctl_lib::mcp::guard::{self, Token};
use toolctl_lib::mcp::serve::{self, Http, Mode, Settings};
use toolctl_lib::mcp::view::Filters;

const SERVE_EXAMPLES: &str = "\
Examples:
  # Every tool over stdio: the command an MCP client starts
  toolctl mcp serve
  # One bundle, as search_tools and call_tool
  toolctl mcp serve --bundle weather --mode search";

/// Serve the catalog to MCP clients, or import an MCP server's tools into it
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    Serve(ServeArgs),
    Import(ImportArgs),
}

/// Bring an MCP server's tools into the catalog, one tool.json each (type "mcp")
///
/// The server must be declared in mcpServers of toolctl.json. Its tools (every tools/list page)
/// become tools of the bundle (default: one named after the server, created if needed), with
/// their input and output schemas and annotations as the server gives them, and safe from the
/// annotations. Run again later: new tools are added, changed ones get a new version, and tools
/// the server no longer lists are reported (not deleted).
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The server's name in mcpServers of toolctl.json
    #[arg(value_name = "SERVER", add = crate::cli::complete::servers())]
    pub server: String,
    /// The bundle the tools go in, by slug (default: the server's name)
    #[arg(long, value_name = "SLUG")]
    pub bundle: Option<String>,
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
#[command(after_long_help = SERVE_EXAMPLES)]
pub struct ServeArgs {
    /// What the client is shown
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = crate::cli::values::mode())]
    pub mode: Mode,
    /// Only tools of this bundle, by slug or ID (can be repeated)
    #[arg(long, value_name = "BUNDLE", add = crate::cli::complete::bundles())]
    pub bundle: Vec<String>,
    /// Only tools with this tag (can be repeated: all must match)
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
    /// Only this tool: bundle/slug[@version], slug, toolID or exported name (can be repeated)
    #[arg(long, value_name = "TOOL", add = crate::cli::complete::tools())]
    pub tool: Vec<String>,
    /// Tools per tools/list page
    #[arg(long, value_name = "N", default_value_t = serve::DEFAULT_PAGE_SIZE, value_parser = parse_page_size)]
    pub page_size: usize,
    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:8765) instead of stdio
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Listen on an address other than loopback with --http (needs --token-env)
    #[arg(long, requires = "http")]
    pub public: bool,
    /// Require "Authorization: Bearer <token>" on every HTTP request, the token read from the
    /// environment variable VAR (at least 16 characters)
    #[arg(long, value_name = "VAR", requires = "http")]
    pub token_env: Option<String>,
    /// Live MCP sessions at most with --http; past it, a new session is refused (503)
    #[arg(long, value_name = "N", default_value_t = guard::DEFAULT_MAX_SESSIONS, value_parser = parse_cap, requires = "http")]
    pub max_sessions: usize,
    /// Open HTTP connections at most with --http; past it, a new connection is closed at once
    #[arg(long, value_name = "N", default_value_t = guard::DEFAULT_MAX_CONNECTIONS, value_parser = parse_cap, requires = "http")]
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers, then its body, with --http; a
    /// kept-alive connection idle that long is closed
    #[arg(long, value_name = "SECS", default_value_t = guard::DEFAULT_CLIENT_TIMEOUT.as_secs(), value_parser = parse_seconds, requires = "http")]
    pub client_timeout: u64,
    /// The folder file tools work in (default: the current folder); they cannot leave it
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
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
        McpCommand::Import(args) => run_import(ctx, args),
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
        .with_hint("use 127.0.0.1:PORT, or add --public --token-env VAR if that is what you want"));
    }
    if args.public && args.token_env.is_none() {
        return Err(CliError::invalid(
            "--public needs --token-env: without a token, anyone who reaches the address could list and run the catalog's tools",
        )
        .with_hint("put a token of at least 16 characters in an environment variable (export TOOLCTL_MCP_TOKEN=$(openssl rand -hex 32)) and add --token-env TOOLCTL_MCP_TOKEN; clients send it as \"Authorization: Bearer <token>\"")
        .usage());
    }
    let token = args.token_env.as_deref().map(read_token).transpose()?;
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
        http: args.http.map(|addr| Http {
            addr,
            token,
            max_sessions: args.max_sessions,
            max_connections: args.max_connections,
            client_timeout: std::time::Duration::from_secs(args.client_timeout),
        }),
    };
    serve::serve(
        settings,
        Arc::new(StderrLog::new(ctx.ui.clone(), "toolctl mcp")),
    )
    .map_err(|e| match e {
        serve::Error::Catalog(e) => CliError::from(e),
        other => CliError::new(
            toolctl_lib::base::error_code::ErrorCode::Internal,
            other.to_string(),
        ),
    })?;
    Ok(Output::new(serde_json::Value::Null, Human::Nothing))
}

/// The token in the environment variable `var`: never from the command line, where other
/// users see it (`ps`).
fn read_token(var: &str) -> Result<Token, CliError> {
    let refused = |why: String| {
        CliError::invalid(format!("--token-env {var}: {why}"))
            .with_hint(format!(
                "set it to a random token of at least {} characters: export {var}=$(openssl rand -hex 32)",
                guard::MIN_TOKEN_LEN
            ))
            .usage()
    };
    let Some(value) = std::env::var_os(var) else {
        return Err(refused(format!("${var} is not set")));
    };
    let Some(text) = value.to_str() else {
        return Err(refused(format!("${var} is not UTF-8")));
    };
    Token::new(text).map_err(|e| refused(format!("${var} is not a usable token: {e}")))
}

fn run_import(ctx: &Ctx, args: &ImportArgs) -> Result<Output, CliError> {
    use toolctl_lib::mcp::import::{self, Error};
    let mut catalog = ctx.catalog()?;
    let prepared =
        import::prepare(&catalog, &args.server, args.bundle.as_deref()).map_err(|e| match e {
            Error::Catalog(e) => CliError::from(e),
            Error::Server(failure) => CliError::from(failure),
        })?;
    let (server, slug) = (prepared.server.as_str(), prepared.bundle.as_str());
    let (listing, plan) = (&prepared.listing, &prepared.plan);
    for skipped in &listing.skipped {
        ctx.ui.warn(&format!(
            "MCP server '{server}': skipped {}",
            skipped.describe()
        ));
    }
    for refused in &plan.refused {
        for v in &refused.violations {
            ctx.ui.warn(&format!(
                "MCP server '{server}': refused tool '{}' ({}): {}",
                refused.name,
                if v.pointer.is_empty() {
                    "/"
                } else {
                    &v.pointer
                },
                v.message
            ));
        }
    }
    catalog.write_import(
        &prepared,
        format!("The tools of MCP server '{server}' (toolctl mcp import {server})"),
    )?;
    let json = serde_json::json!({
        "server": server,
        "bundle": slug,
        "listed": prepared.listed(),
        "added": plan.added.iter().map(|p| serde_json::json!({ "ref": prepared.reference(p), "name": p.name })).collect::<Vec<_>>(),
        "changed": plan.changed.iter().map(|p| serde_json::json!({ "ref": prepared.reference(p), "name": p.name, "previous": p.previous })).collect::<Vec<_>>(),
        "unchanged": plan.unchanged.iter().map(|r| format!("{slug}/{r}")).collect::<Vec<_>>(),
        "vanished": plan.vanished.iter().map(|r| format!("{slug}/{r}")).collect::<Vec<_>>(),
        "skipped": listing.skipped.iter().map(|s| serde_json::json!({
            "name": s.name,
            "page": s.page,
            "pointer": s.pointer,
            "message": s.message,
        })).collect::<Vec<_>>(),
        "refused": plan.refused.iter().map(|r| serde_json::json!({
            "name": r.name,
            "problems": r.violations.iter().map(|v| serde_json::json!({
                "pointer": v.pointer,
                "message": v.message,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    let mut lines = vec![format!(
        "Imported MCP server '{server}' into bundle {slug}: {} listed, {} added, {} changed, {} unchanged, {} vanished, {} skipped, {} refused",
        prepared.listed(),
        plan.added.len(),
        plan.changed.len(),
        plan.unchanged.len(),
        plan.vanished.len(),
        listing.skipped.len(),
        plan.refused.len()
    )];
    lines.extend(
        plan.added
            .iter()
            .map(|p| format!("  added     {}", prepared.reference(p))),
    );
    lines.extend(plan.changed.iter().map(|p| {
        format!(
            "  changed   {} (was @{})",
            prepared.reference(p),
            p.previous.as_deref().unwrap_or("?")
        )
    }));
    lines.extend(
        plan.vanished
            .iter()
            .map(|r| format!("  vanished  {slug}/{r} (no longer listed by the server; kept)")),
    );
    Ok(Output::new(json, Human::Text(lines.join("\n"))))
}
