//! `toolctl validate`: every problem in the catalog, for CI and for people editing files.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{Human, Output, Painted};
use crate::cli::shared::plural;
use crate::cli::values;
use anstyle::{AnsiColor, Style};
use clap::{Args, ValueEnum};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use toolctl_lib::base::error_code::{ErrorCode, exit};
use toolctl_lib::provider::Provider;
use toolctl_lib::validate::{self, About, Finding, Report, Request, Severity};

/// What `--help` shows after the options: command lines that work (a test runs them on a copy
/// of fixtures/catalog).
const EXAMPLES: &str = "\
Examples:
  # The whole catalog (exit 3 when it finds errors)
  toolctl validate
  # In GitHub Actions: annotations, and warnings fail too
  toolctl validate --format github --strict
  # Also what Gemini would refuse
  toolctl validate --provider gemini";

/// Check the catalog (or the files and folders given) and report every problem
///
/// Errors: files that do not parse or break their JSON Schema, argSchema/outputSchema that are
/// not JSON Schema or use a remote $ref, slug and version rules, IDs (UUIDv7, matching their
/// folders), duplicates, createdAt after modifiedAt, HTTP tools' URLs, hosts and ${…}
/// placeholders, native functions this toolctl lacks, exported names that collide, tools
/// without a schema, agent files (agents/*.json) attach cannot read. Warnings: missing or long
/// descriptions, HTTP tools that change things without an explicit "safe", unknown fields,
/// files nobody reads, tools an agent file lists that attach would remove, and with --provider what that provider would refuse. Exit 0 when clean, 3 when errors were found (with --strict: warnings too).
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct ValidateArgs {
    /// Files or folders to check (default: the whole catalog); - reads one file from standard
    /// input (a toolctl.json, bundle.json, tool.json or agent file, told apart by its
    /// fields). A tool file outside a catalog's bundles/ tree (or on standard input) is
    /// checked as `tool put` reads it: toolID, bundleID, schemaVersion, createdAt and
    /// modifiedAt may be left out
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// How to print the findings
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Treat warnings as errors
    #[arg(long)]
    pub strict: bool,
    /// Also warn of what this provider would refuse, and of more enabled tools than it takes
    /// (can be repeated)
    #[arg(long, value_name = "PROVIDER", value_parser = values::provider())]
    pub provider: Vec<Provider>,
}

/// Output formats of `validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per finding: file:line:column: severity[rule]: message
    Human,
    /// One JSON document (as --json)
    Json,
    /// GitHub Actions annotations (::error file=…,line=…::message)
    Github,
}

/// `validate -`: standard input, saved where the checks can read it as the file its content
/// says it is (`toolctl.json`, `bundle.json` or `tool.json`), outside any catalog.
struct Stdin {
    _dir: tempfile::TempDir,
    file: PathBuf,
}

fn stdin_file(args: &ValidateArgs) -> Result<Option<Stdin>, CliError> {
    if !args.paths.iter().any(|p| p.as_os_str() == "-") {
        return Ok(None);
    }
    if args.paths.len() > 1 {
        return Err(
            CliError::invalid("- (standard input) is checked alone, without other paths").usage(),
        );
    }
    let text = toolctl_lib::catalog::read_stdin()?;
    let name = serde_json::from_str::<serde_json::Value>(&text)
        .map_or(toolctl_lib::catalog::TOOL_FILE, |doc| {
            validate::file_name_for(&doc)
        });
    let dir = tempfile::tempdir().map_err(|e| {
        CliError::new(
            ErrorCode::Internal,
            format!("cannot make a temporary folder: {e}"),
        )
    })?;
    let file = dir.path().join(name);
    toolctl_lib::catalog::store::write_atomic(&file, text.as_bytes())?;
    Ok(Some(Stdin { _dir: dir, file }))
}

pub fn run(ctx: &Ctx, args: &ValidateArgs) -> Result<Output, CliError> {
    let location = ctx.location()?;
    if args.paths.is_empty()
        && let toolctl_lib::catalog::Location::UserDefault(dir) = &location
        && !dir.join(toolctl_lib::catalog::CONFIG_FILE).is_file()
    {
        // A CI job run in the wrong folder must not pass on nothing: other commands read an
        // absent default catalog as empty, but "no problems" in nothing is no answer.
        return Err(CliError::new(
            ErrorCode::CatalogNotFound,
            format!(
                "no catalog here: no toolctl.json in {} or above it, and the default catalog {} does not exist; nothing was checked",
                ctx.cwd.display(),
                dir.display()
            ),
        )
        .with_details(serde_json::json!({ "cwd": ctx.cwd, "default": dir }))
        .with_hint("run it in the catalog's folder, name one with --catalog DIR, or give the files to check as paths"));
    }
    let stdin = stdin_file(args)?;
    let request = Request {
        paths: stdin
            .as_ref()
            .map_or_else(|| args.paths.clone(), |s| vec![s.file.clone()]),
        providers: args.provider.clone(),
    };
    let progress = Mutex::new(ctx.ui.progress(0, "validating"));
    let mut report = validate::validate(location.path(), &request, &|done, total| {
        if let Ok(mut bar) = progress.lock() {
            bar.update(done, total);
        }
    })
    .map_err(|e| {
        if e.missing {
            return CliError::from(toolctl_lib::catalog::Error::NotFound {
                what: "file",
                name: e.path.display().to_string(),
                hint: None,
            });
        }
        CliError::invalid(e.to_string())
            .with_details(json!({ "path": e.path }))
            .with_hint(
                "give catalog files (toolctl.json, bundle.json, tool.json, agents/*.json) or folders holding them",
            )
    })?;
    drop(progress);
    if args.strict {
        for finding in &mut report.findings {
            finding.severity = Severity::Error;
        }
    }
    for finding in &mut report.findings {
        finding.file = match &stdin {
            Some(_) => PathBuf::from("<stdin>"),
            None => shown(&finding.file, &ctx.cwd),
        };
        if let Some(message) = finding.about.as_ref().map(message_of) {
            finding.message = message;
        }
    }
    let errors = report.count(Severity::Error);
    let warnings = report.count(Severity::Warning);
    let format = if ctx.ui.json {
        Format::Json
    } else {
        args.format
    };
    let document = json!({
        "ok": errors == 0,
        "files": report.files,
        "errors": errors,
        "warnings": warnings,
        "strict": args.strict,
        "findings": report.findings,
    });
    let human = match format {
        Format::Human => Human::Painted(human(&report, errors, warnings)),
        Format::Github => Human::Text(github(&report, errors, warnings)),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
            text.push('\n');
            Human::Text(text)
        }
    };
    let code = if errors > 0 {
        exit::INVALID_INPUT
    } else {
        exit::SUCCESS
    };
    Ok(Output::new(document, human).with_exit(code))
}

/// `path` relative to the working folder when it is under it.
fn shown(path: &Path, cwd: &Path) -> PathBuf {
    path.strip_prefix(cwd)
        .map_or_else(|_| path.to_owned(), Path::to_owned)
}

fn summary(report: &Report, errors: usize, warnings: usize) -> String {
    let files = plural(report.files, "file");
    if errors == 0 && warnings == 0 {
        return format!("{files} checked: no problems\n");
    }
    format!(
        "{} and {} in {files}\n",
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();

fn human(report: &Report, errors: usize, warnings: usize) -> Painted {
    let mut text = Painted::default();
    for finding in &report.findings {
        let (label, style) = match finding.severity {
            Severity::Error => ("error", ERROR),
            Severity::Warning => ("warning", WARNING),
        };
        let at = match (finding.line, finding.column) {
            (Some(line), Some(column)) => format!(":{line}:{column}"),
            _ => String::new(),
        };
        let pointer = match finding.pointer.as_deref() {
            Some(pointer) if !pointer.is_empty() => format!(" (at {})", one_line(pointer)),
            _ => String::new(),
        };
        text.plain(format!(
            "{}{at}: ",
            one_line(&finding.file.display().to_string())
        ));
        text.styled(style, format!("{label}[{}]", finding.rule));
        text.plain(format!(": {}{pointer}\n", one_line(&finding.message)));
    }
    text.plain(summary(report, errors, warnings));
    text
}

/// `text` on one line: a newline or carriage return in it (an argument name of a tool.json) is
/// written `\n` / `\r`. A finding is one line, so nothing a file holds can start a line of its
/// own (`::error file=…::` is a workflow command to GitHub Actions, whatever the format); and
/// the runner's older form is defused ([`no_older_command`]).
fn one_line(text: &str) -> String {
    no_older_command(&text.replace('\n', "\\n").replace('\r', "\\r"))
}

/// `text` with `##[`, which GitHub's runner reads anywhere in a line as its older form of a
/// workflow command (`##[error]…`), written `#\u0023[`: in every format, so what a file holds
/// never becomes a command of its own.
fn no_older_command(text: &str) -> String {
    text.replace("##[", "#\\u0023[")
}

/// GitHub Actions workflow commands: one annotation per finding, shown on the file's line in
/// a pull request.
fn github(report: &Report, errors: usize, warnings: usize) -> String {
    let mut text = String::new();
    for finding in &report.findings {
        text.push_str(&annotation(finding));
        text.push('\n');
    }
    text.push_str(&summary(report, errors, warnings));
    text
}

fn annotation(finding: &Finding) -> String {
    let command = match finding.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut properties = vec![format!(
        "file={}",
        property(&finding.file.display().to_string())
    )];
    if let (Some(line), Some(column)) = (finding.line, finding.column) {
        properties.push(format!("line={line}"));
        properties.push(format!("col={column}"));
    }
    properties.push(format!(
        "title={}",
        property(&format!("toolctl validate: {}", finding.rule))
    ));
    let message = match finding.pointer.as_deref() {
        Some(pointer) if !pointer.is_empty() => format!("{} (at {pointer})", finding.message),
        _ => finding.message.clone(),
    };
    format!("::{command} {}::{}", properties.join(","), data(&message))
}

/// A workflow command's message, escaped as GitHub's toolkit does (`escapeData`), and with
/// the runner's older form defused as in the human format ([`no_older_command`]).
fn data(text: &str) -> String {
    no_older_command(
        &text
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A"),
    )
}

/// A workflow command's property value, escaped as GitHub's toolkit does (`escapeProperty`).
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A finding's message in the command line's words (its remedy names flags and commands).
fn message_of(about: &About) -> String {
    match about {
        About::UnsafeMethod { method } => format!(
            "a {method} tool is taken to change things, so pick hides it without --allow-unsafe; say so with \"safe\": false (or true if it is harmless)"
        ),
        About::ProviderLimit {
            enabled,
            provider,
            max,
        } => format!(
            "{enabled} tools are enabled, more than {provider} takes in one request ({max}); send a few with `toolctl pick` or export a subset (--bundle, --tag)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_escape_as_the_github_toolkit_does() {
        let finding = Finding {
            severity: Severity::Error,
            rule: "parse",
            file: PathBuf::from("a,b:c%.json"),
            line: Some(3),
            column: Some(7),
            pointer: Some("/x".to_owned()),
            message: "50% bad\nreally: yes, really".to_owned(),
            about: None,
        };
        assert_eq!(
            annotation(&finding),
            "::error file=a%2Cb%3Ac%25.json,line=3,col=7,title=toolctl validate%3A parse::50%25 bad%0Areally: yes, really (at /x)"
        );
    }
}
