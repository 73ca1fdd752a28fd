//! `toolctl serve`: the catalog's HTTP contracts (agent tools, jobs, attach) on one listener.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use crate::cli::shared::{StderrLog, parse_cap, parse_seconds};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use toolctl_lib::base::error_code::ErrorCode;
use toolctl_lib::base::secrets::Secrets;
use toolctl_lib::mcp::guard;
use toolctl_lib::serve::{self, Settings, keys};

/// What `--help` shows after the options: command lines that work (a test runs them).
const EXAMPLES: &str = "\
Examples:
  # On loopback without keys (every local caller is an admin): start, ask, stop
  toolctl serve --listen 127.0.0.1:8787 & sleep 2; curl -s 127.0.0.1:8787/v1/agent-tools; kill $!";

/// Serve the agent-tools API, jobs and the attach contract over HTTP
///
/// Routes: GET /v1/agent-tools (the tools in OpenAI's shape), POST
/// /v1/agent-tools/invoke-batch (calls run as jobs; mode sync or async), GET /v1/jobs,
/// GET /v1/jobs/ID, GET /v1/jobs/ID/stream (Server-Sent Events), POST /v1/jobs/ID/cancel,
/// and POST /api/v1/tools/attach. With serve.apiKeys in toolctl.json every request carries a
/// key in x-api-key: read keys may GET, admin keys may also POST. Without keys the server
/// listens on loopback only. Jobs are kept in .toolctl/jobs.db and survive a restart.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct ServeArgs {
    /// The address to listen on
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,
    /// Open connections at most; past it, a new connection is closed at once
    #[arg(long, value_name = "N", default_value_t = guard::DEFAULT_MAX_CONNECTIONS, value_parser = parse_cap)]
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers, then its body; a kept-alive
    /// connection idle that long is closed
    #[arg(long, value_name = "SECS", default_value_t = guard::DEFAULT_CLIENT_TIMEOUT.as_secs(), value_parser = parse_seconds)]
    pub client_timeout: u64,
    /// The folder file tools work in (default: the current folder); they cannot leave it
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, args: &ServeArgs) -> Result<Output, CliError> {
    if ctx.global.json {
        return Err(CliError::invalid(
            "serve answers over HTTP: --json does not apply",
        ));
    }
    let catalog = ctx.catalog()?;
    let config = catalog.config();
    let secrets = Secrets::load().map_err(|e| {
        let hint = e.hint.clone();
        let error = CliError::invalid(e.to_string());
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    })?;
    let keys = keys::resolve(&config.serve, &secrets).map_err(|e| {
        let hint = e.hint.clone();
        CliError::invalid(e.to_string()).with_hint(hint)
    })?;
    if keys.is_empty() && !args.listen.ip().is_loopback() {
        return Err(CliError::invalid(format!(
            "--listen {}: without API keys toolctl serves loopback addresses only; anyone who reaches {} could run the catalog's tools",
            args.listen, args.listen
        ))
        .with_hint("name keys in toolctl.json: \"serve\": {\"apiKeys\": [{\"name\": \"ops\", \"role\": \"admin\", \"secret\": \"SERVE_ADMIN_KEY\"}]}, the value in TOOLCTL_SECRET_SERVE_ADMIN_KEY"));
    }
    let settings = Settings {
        root: catalog.root().to_path_buf(),
        addr: args.listen,
        keys,
        workspace: args.workspace.clone().unwrap_or_else(|| ctx.cwd.clone()),
        lock_timeout: ctx.global.lock_timeout,
        client_timeout: std::time::Duration::from_secs(args.client_timeout),
        max_connections: args.max_connections,
        workers: config.serve.workers.unwrap_or(serve::DEFAULT_WORKERS),
    };
    serve::serve(
        settings,
        Arc::new(StderrLog::new(ctx.ui.clone(), "toolctl serve")),
    )
    .map_err(|e| CliError::new(ErrorCode::Internal, e.to_string()))?;
    Ok(Output::new(serde_json::Value::Null, Human::Nothing))
}
