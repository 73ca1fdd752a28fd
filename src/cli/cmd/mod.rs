//! The subcommands: one file each, and the one place they are dispatched.

pub mod agent;
pub mod attach;
pub mod bundle;
pub mod completions;
pub mod config;
pub mod export;
pub mod index;
pub mod init;
pub mod invoke;
pub mod job;
pub mod man;
pub mod mcp;
pub mod pick;
pub mod schema;
pub mod search;
pub mod serve;
pub mod tool;
pub mod validate;

use super::Ctx;
use super::error::CliError;
use super::output::Output;
use clap::Subcommand;

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
    Man(man::ManArgs),
    #[command(subcommand)]
    Config(config::ConfigCommand),
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    Serve(serve::ServeArgs),
    #[command(subcommand)]
    Job(job::JobCommand),
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
        Command::Man(args) => man::run(args),
        Command::Config(command) => config::run(ctx, command),
        Command::Mcp(command) => mcp::run(ctx, command),
        Command::Serve(args) => serve::run(ctx, args),
        Command::Job(command) => job::run(ctx, command),
    }
}
