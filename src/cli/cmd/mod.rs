//! The subcommands: one file each, and the one place they are dispatched.

pub mod agent;
pub mod attach;
pub mod bundle;
pub mod completions;
pub mod export;
pub mod index;
pub mod init;
pub mod invoke;
pub mod pick;
pub mod schema;
pub mod search;
pub mod tool;
pub mod validate;

use super::Ctx;
use super::error::CliError;
use super::output::Output;
use crate::catalog::{model, page};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Subcommand)]
pub enum Command {
    Init(init::InitArgs),
    #[command(subcommand)]
    Bundle(bundle::BundleCommand),
    #[command(subcommand)]
    Tool(tool::ToolCommand),
    Search(search::SearchArgs),
    Pick(pick::PickArgs),
    Attach(attach::AttachArgs),
    #[command(subcommand)]
    Agent(agent::AgentCommand),
    Invoke(invoke::InvokeArgs),
    Export(export::ExportArgs),
    Validate(validate::ValidateArgs),
    Schema(schema::SchemaArgs),
    #[command(subcommand)]
    Index(index::IndexCommand),
    Completions(completions::CompletionsArgs),
}

/// Run one command.
pub fn run(ctx: &Ctx, command: &Command) -> Result<Output, CliError> {
    match command {
        Command::Init(args) => init::run(ctx, args),
        Command::Bundle(command) => bundle::run(ctx, command),
        Command::Tool(command) => tool::run(ctx, command),
        Command::Search(args) => search::run(ctx, args),
        Command::Pick(args) => pick::run(ctx, args),
        Command::Attach(args) => attach::run(ctx, args),
        Command::Agent(command) => agent::run(ctx, command),
        Command::Invoke(args) => invoke::run(ctx, args),
        Command::Export(args) => export::run(ctx, args),
        Command::Validate(args) => validate::run(ctx, args),
        Command::Schema(args) => schema::run(args),
        Command::Index(command) => index::run(ctx, command),
        Command::Completions(args) => completions::run(args),
    }
}

/// Paging flags of list commands.
#[derive(Debug, Clone, Args)]
pub struct PageArgs {
    /// Show at most N items (1 to 1000)
    #[arg(long, value_name = "N", default_value_t = page::DEFAULT_PAGE_SIZE)]
    pub page_size: usize,
    /// Continue after the page that printed this token (nextPageToken)
    #[arg(long, value_name = "TOKEN")]
    pub page_token: Option<String>,
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
        let text = crate::catalog::capped::read_stdin()?;
        Ok((text, "<stdin>".to_owned()))
    } else {
        let text = crate::catalog::capped::read_input(Path::new(path))?;
        Ok((text, path.to_owned()))
    }
}

/// The "next page" hint printed under a table.
fn next_page_note(token: Option<&String>) -> String {
    match token {
        Some(token) => format!("\nmore: --page-token {token}"),
        None => String::new(),
    }
}
