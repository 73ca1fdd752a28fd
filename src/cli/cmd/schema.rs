//! `toolctl schema`: the JSON Schemas of the catalog's files, for editors and other tools.

use crate::cli::error::CliError;
use crate::cli::output::{Human, Output};
use clap::{Args, ValueEnum};
use toolctl_lib::catalog::schemas::Kind;

/// Print the JSON Schema of toolctl.json (config), bundle.json (bundle) or tool.json (tool)
///
/// `toolctl tool new` writes the schemas into the catalog's schemas/ folder and points each new
/// tool.json at them with "$schema", so editors check files as they are typed.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which file's schema
    #[arg(value_enum)]
    pub file: SchemaFile,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaFile {
    /// toolctl.json
    Config,
    /// bundle.json
    Bundle,
    /// tool.json
    Tool,
}

impl SchemaFile {
    fn kind(self) -> Kind {
        match self {
            Self::Config => Kind::Config,
            Self::Bundle => Kind::Bundle,
            Self::Tool => Kind::Tool,
        }
    }
}

pub fn run(args: &SchemaArgs) -> Result<Output, CliError> {
    let kind = args.file.kind();
    Ok(Output::new(
        kind.document().clone(),
        Human::Text(kind.text().to_owned()),
    ))
}
