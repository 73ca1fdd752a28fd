//! What several commands share: paging flags, reading a document argument, the provider and
//! scorer flags, the endpoint flags of the network scorers, and how export and pick failures
//! read on the command line. Command modules never use each other; they use this.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use clap::Args;
use serde_json::{Value, json};
use std::path::Path;
use toolctl_lib::attach::letta::{self, Letta, LettaError, McpServer};
use toolctl_lib::base::error_code::ErrorCode;
use toolctl_lib::catalog::config::{AgentBackend, PickConfig};
use toolctl_lib::catalog::{Page, model, page};
use toolctl_lib::pick::endpoints::{EndpointOverrides, Endpoints};
use toolctl_lib::pick::{PickError, Scorer};
use toolctl_lib::provider::Provider;
use toolctl_lib::provider::export::{ExportError, Refused};

/// Paging flags of list commands.
#[derive(Debug, Clone, Args)]
pub struct PageArgs {
    /// Show at most N items (1 to 1000)
    #[arg(long, value_name = "N", default_value_t = page::DEFAULT_PAGE_SIZE)]
    pub page_size: usize,
    /// Continue after the page that printed this token (nextPageToken)
    #[arg(long, value_name = "TOKEN")]
    pub page_token: Option<String>,
    /// Every item, not one page (read 1000 at a time)
    #[arg(long, conflicts_with = "page_size")]
    pub all: bool,
}

impl PageArgs {
    /// The page asked for; with `--all`, every page from there on as one.
    pub fn fetch<T, E>(
        &self,
        mut page: impl FnMut(usize, Option<&str>) -> Result<Page<T>, E>,
    ) -> Result<Page<T>, E> {
        if !self.all {
            return page(self.page_size, self.page_token.as_deref());
        }
        let mut all = page(page::MAX_PAGE_SIZE, self.page_token.as_deref())?;
        while let Some(token) = all.next_page_token.take() {
            let next = page(page::MAX_PAGE_SIZE, Some(&token))?;
            all.items.extend(next.items);
            for problem in next.problems {
                if !all.problems.contains(&problem) {
                    all.problems.push(problem);
                }
            }
            all.next_page_token = next.next_page_token;
        }
        Ok(all)
    }

    /// The page size to ask for: with `--all`, the largest.
    pub fn size(&self) -> usize {
        if self.all {
            page::MAX_PAGE_SIZE
        } else {
            self.page_size
        }
    }
}

/// Read a JSON document from a file, or from stdin when `path` is `-`. Returns it with the
/// name to report problems under.
pub fn read_document(path: &str) -> Result<(Value, String), CliError> {
    let (text, name) = read_text(path)?;
    let doc = model::parse_doc(&text, Path::new(&name))?;
    Ok((doc, name))
}

/// Read a file, or stdin when `path` is `-`. Returns the text with the name to report
/// problems under.
pub fn read_text(path: &str) -> Result<(String, String), CliError> {
    if path == "-" {
        let text = toolctl_lib::catalog::read_stdin()?;
        Ok((text, "<stdin>".to_owned()))
    } else {
        let text = toolctl_lib::catalog::read_input(Path::new(path))?;
        Ok((text, path.to_owned()))
    }
}

/// The "next page" hint, for stderr after the table (stdout keeps to the table, for pipes):
/// muted by `-q`, and left out with `--json`, whose document holds `nextPageToken`.
pub fn next_page_note(token: Option<&String>) -> Option<String> {
    token.map(|token| format!("more: --page-token {token} (or --all)"))
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
            // Strict mode comes from --strict, or from a tool's own `"strict": true`: the hint
            // names whichever of them made each refusal.
            let by_strict = |r: &&Refused| r.problems.iter().any(|p| p.message.contains("strict"));
            let by_flag = matches!(provider, Provider::Openai | Provider::OpenaiResponses)
                && refused.iter().filter(by_strict).any(|r| !r.own_strict);
            let by_own: Vec<&str> = refused
                .iter()
                .filter(by_strict)
                .filter(|r| r.own_strict)
                .map(|r| r.reference.as_str())
                .collect();
            let mut error = CliError::invalid(format!(
                "{provider} cannot take {} of the tools as they are",
                refused.len()
            ))
            .with_causes(causes.collect::<Vec<_>>())
            .with_details(json!({ "provider": provider, "tools": refused }))
            .with_hint("--lenient leaves them out with a warning");
            if by_flag {
                error = error.with_hint("without --strict, OpenAI takes the schemas as they are");
            }
            if !by_own.is_empty() {
                let (tools, file) = match by_own.as_slice() {
                    [one] => (format!("{one} asks"), "its tool.json"),
                    many => (format!("{} ask", many.join(", ")), "their tool.json files"),
                };
                error = error.with_hint(format!(
                    "{tools} for strict mode itself (`\"strict\": true` in {file}); set it to \
                        false, or remove it, to export the schema as it is"
                ));
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
        // The provider asked for, as the user typed it (`openai-responses`, not `openai`).
        .with_hint(format!(
            "choose the few tools a task needs: `toolctl pick \"<task>\" --emit {}`; narrow \
                with --bundle/--tag/--tool; or --force",
            provider.as_str()
        )),
    }
}

/// The endpoints of the network scorers, over `toolctl.json`'s `pick.embed` / `pick.llm`.
#[derive(Debug, Args)]
pub struct EndpointArgs {
    /// The embeddings endpoint (embed, hybrid), e.g. http://127.0.0.1:11434/v1
    #[arg(long, value_name = "URL")]
    pub embed_url: Option<String>,
    /// The embeddings model
    #[arg(long, value_name = "MODEL")]
    pub embed_model: Option<String>,
    /// The chat completions endpoint (llm), e.g. https://api.openai.com/v1
    #[arg(long, value_name = "URL")]
    pub llm_url: Option<String>,
    /// The chat model
    #[arg(long, value_name = "MODEL")]
    pub llm_model: Option<String>,
}

impl EndpointArgs {
    /// The flags as the library's overrides of `toolctl.json`.
    pub fn overrides(&self) -> EndpointOverrides {
        EndpointOverrides {
            embed_url: self.embed_url.clone(),
            embed_model: self.embed_model.clone(),
            llm_url: self.llm_url.clone(),
            llm_model: self.llm_model.clone(),
        }
    }

    /// The endpoints `scorer` needs (none for keyword and bm25): flags over `toolctl.json`.
    pub fn resolve(&self, config: &PickConfig, scorer: Scorer) -> Result<Endpoints, CliError> {
        Endpoints::resolve(config, &self.overrides(), scorer).map_err(pick_error)
    }
}

/// A failed pick as the command line reports it.
pub fn pick_error(error: PickError) -> CliError {
    match error {
        PickError::Index(e) => e.into(),
        PickError::Invalid { message, hint } => CliError::invalid(message).with_hint(hint),
        PickError::EmptyTask => CliError::invalid(error.to_string()).with_hint(
            "say what the tools are for, e.g. `toolctl pick \"weather in Oslo tomorrow\"`",
        ),
        PickError::Max { max } => CliError::invalid(format!("--max {max} is out of range"))
            .with_hint("pick 1 to 128 tools (128 is the most OpenAI takes in one request)"),
        PickError::MinScore { min_score } => {
            CliError::invalid(format!("--min-score {min_score} is out of range"))
                .with_hint("scores are between 0 and 1")
        }
        PickError::NoEndpoint { endpoint, .. } => CliError::invalid(error.to_string()).with_hint(
            format!(
                "set pick.{endpoint}.baseUrl and model in toolctl.json, or pass --{endpoint}-url and --{endpoint}-model"
            ),
        ),
        PickError::Secrets(e) => toolctl_lib::invoke::Failure::from(e).into(),
        PickError::Upstream(_) => CliError::new(ErrorCode::UpstreamError, error.to_string())
            .with_hint("check pick.embed in toolctl.json (baseUrl, model, apiKeySecret) or --embed-url/--embed-model"),
    }
}

/// "1 tool", "2 tools".
pub fn n_tools(n: usize) -> String {
    plural(n, "tool")
}

/// `n` and `noun`, in the plural unless `n` is 1 ("1 error", "2 errors", "0 candidates").
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The error of a tool lookup, with "did you mean …?" when `name` looks like a typo of a tool
/// the catalog has (`forcast` → `forecast`, `weather/forcast@v2` → `weather/forecast@v2`).
pub fn tool_lookup_error(
    catalog: &toolctl_lib::catalog::Catalog,
    name: &str,
    error: toolctl_lib::catalog::Error,
) -> CliError {
    let typo = matches!(
        &error,
        toolctl_lib::catalog::Error::NotFound { what: "tool", .. }
    );
    let mut cli = CliError::from(error);
    if typo && let Some(close) = closest_tool(catalog, name) {
        cli = cli.with_first_hint(format!("did you mean {close}?"));
    }
    cli
}

fn closest_tool(catalog: &toolctl_lib::catalog::Catalog, name: &str) -> Option<String> {
    let (base, version) = match name.split_once('@') {
        Some((base, version)) => (base, Some(version)),
        None => (name, None),
    };
    let tools = catalog.all_tools().ok()?.items;
    let forms: Vec<String> = tools
        .iter()
        .map(|t| {
            if base.contains('/') {
                format!("{}/{}", t.bundle_slug, t.tool.slug)
            } else {
                t.tool.slug.clone()
            }
        })
        .collect();
    let close = toolctl_lib::base::suggest::closest(base, forms.iter().map(String::as_str))?;
    Some(match version {
        Some(version) => format!("{close}@{version}"),
        None => close.to_owned(),
    })
}

/// Where the agents of `attach` and `agent` live, over `toolctl.json`'s `agents`.
#[derive(Debug, Args)]
pub struct BackendArgs {
    /// Where agents live: files (agents/<agentID>.json) or letta (a Letta server) [default:
    /// agents.backend of toolctl.json, else files]
    #[arg(long, value_name = "NAME", value_enum)]
    pub backend: Option<BackendName>,
    /// The Letta server, e.g. http://127.0.0.1:8283 (means --backend letta; its host must be
    /// in allowedHosts)
    #[arg(long, value_name = "URL")]
    pub letta_url: Option<String>,
}

/// The values of `--backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendName {
    /// agents/<agentID>.json in the catalog
    Files,
    /// A Letta server's agents
    Letta,
}

impl BackendArgs {
    /// The Letta server to use and (`with_server`) toolctl's MCP server as Letta reaches it;
    /// `None` for files.
    pub fn connect(
        &self,
        config: &toolctl_lib::catalog::config::Config,
        with_server: bool,
    ) -> Result<Option<(Letta, Option<McpServer>)>, CliError> {
        if self.backend == Some(BackendName::Files) && self.letta_url.is_some() {
            return Err(CliError::invalid(
                "--letta-url names a Letta server, but --backend is files",
            )
            .with_hint("drop one of them")
            .usage());
        }
        let backend = self.backend.map(|b| match b {
            BackendName::Files => AgentBackend::Files,
            BackendName::Letta => AgentBackend::Letta,
        });
        letta::connect(config, backend, self.letta_url.as_deref(), with_server).map_err(letta_error)
    }
}

/// A failed call to Letta as the command line reports it.
pub fn letta_error(error: LettaError) -> CliError {
    let message = error.to_string();
    let cli = match &error {
        LettaError::NotFound { .. } => CliError::new(ErrorCode::NotFound, message)
            .with_hint("`toolctl agent list` shows the agents Letta has"),
        LettaError::Forbidden { .. } => CliError::new(ErrorCode::Forbidden, message).with_hint(
            "agents.letta.tokenSecret names the secret that holds the token Letta expects",
        ),
        LettaError::Timeout { .. } => CliError::new(ErrorCode::Timeout, message)
            .with_hint("agents.letta.timeoutMs of toolctl.json sets how long toolctl waits"),
        LettaError::Upstream { .. } => CliError::new(ErrorCode::UpstreamError, message)
            .with_hint("check that the Letta server runs at agents.letta.url (or --letta-url)"),
        LettaError::Config { message, hint } => CliError::invalid(message).with_hint(hint),
    };
    cli.with_details(json!({ "backend": "letta" }))
        .with_source(error)
}

/// A server's lines on stderr, its status lines after its name (`toolctl mcp: listening on …`).
#[derive(Debug)]
pub struct StderrLog {
    ui: crate::cli::output::Ui,
    name: &'static str,
}

impl StderrLog {
    pub fn new(ui: crate::cli::output::Ui, name: &'static str) -> Self {
        Self { ui, name }
    }
}

impl toolctl_lib::mcp::serve::Log for StderrLog {
    fn status(&self, line: &str) {
        self.ui.status(&format!("{}: {line}", self.name));
    }

    fn warn(&self, line: &str) {
        self.ui.warn(line);
    }
}

/// A cap on sessions or connections: 1 to 100,000.
pub fn parse_cap(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(format!("'{text}' is not a number from 1 to 100000")),
    }
}

/// A client timeout: 1 to 3,600 seconds.
pub fn parse_seconds(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if (1..=3600).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a number of seconds from 1 to 3600"
        )),
    }
}
