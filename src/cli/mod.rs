//! The `toolctl` command line: argument parsing, the context commands run in, and `main`.
//!
//! Each subcommand lives in its own file under `cmd/`; they call the library and return an
//! [`Output`](output::Output) that [`output`] prints.

pub mod cmd;
pub mod complete;
pub mod error;
pub mod output;
pub mod shared;
pub mod values;
pub mod watcher;

use clap::{Args, Parser};
use error::CliError;
use output::Ui;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use toolctl_lib::base::error_code::{ErrorCode, exit};
use toolctl_lib::catalog::{self, Catalog, Location};

/// Manage the tools your LLM agents use: a catalog of plain JSON files you keep in git.
///
/// The catalog is --catalog DIR, else $TOOLCTL_CATALOG, else the nearest folder above the
/// working folder holding toolctl.json, else $XDG_DATA_HOME/toolctl (~/.local/share/toolctl).
/// The built-in tools (builtin/readfile, builtin/file-search, builtin/now, builtin/exec) are
/// always there.
#[derive(Debug, Parser)]
#[command(name = "toolctl", version, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: cmd::Command,
}

/// Flags every command takes, listed under their own heading in every command's help.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = GLOBAL_OPTIONS)]
pub struct GlobalArgs {
    /// Use the catalog in DIR
    #[arg(long, global = true, env = "TOOLCTL_CATALOG", value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub catalog: Option<PathBuf>,
    /// Print one JSON document on stdout, errors included
    #[arg(long, global = true)]
    pub json: bool,
    /// Print no status lines or warnings on stderr
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Never show progress bars
    #[arg(long, global = true)]
    pub no_progress: bool,
    /// When to color output
    #[arg(long, global = true, value_name = "WHEN", value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// Wait at most this long for the catalog's write lock (e.g. 500ms, 10s)
    #[arg(long, global = true, value_name = "DURATION", default_value = "10s", value_parser = toolctl_lib::base::time::parse_duration)]
    pub lock_timeout: Duration,
}

/// The help heading of [`GlobalArgs`], apart from each command's own options.
pub const GLOBAL_OPTIONS: &str = "Global options";

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// Make every later write to stdout and stderr follow this choice.
    fn apply(self) {
        let choice = match self {
            Self::Auto => anstream::ColorChoice::Auto,
            Self::Always => anstream::ColorChoice::Always,
            Self::Never => anstream::ColorChoice::Never,
        };
        choice.write_global();
    }
}

/// What a command runs with.
#[derive(Debug)]
pub struct Ctx {
    pub global: GlobalArgs,
    pub ui: Ui,
    pub cwd: PathBuf,
    /// Shared with every catalog the command opens: what its index checks met.
    pub checks: catalog::CheckNote,
}

impl Ctx {
    /// Where the catalog is. A catalog named explicitly (`--catalog`, `$TOOLCTL_CATALOG`)
    /// must exist and hold `toolctl.json`: a mistyped path is `CATALOG_NOT_FOUND`, never an
    /// empty catalog that checks nothing (`init` does not come here).
    pub fn location(&self) -> Result<Location, CliError> {
        let location = catalog::locate(self.global.catalog.as_deref(), &self.cwd, |name| {
            std::env::var(name).ok()
        })?;
        // Any toolctl.json there (a FIFO or a folder too, refused by name when read) makes a
        // catalog; only a missing one is no catalog.
        if let Location::Explicit(dir) = &location
            && !dir.join(catalog::CONFIG_FILE).exists()
        {
            let what = if dir.is_dir() {
                "has no toolctl.json"
            } else {
                "does not exist"
            };
            return Err(CliError::new(
                ErrorCode::CatalogNotFound,
                format!("no catalog in {}: the folder {what}", dir.display()),
            )
            .with_details(serde_json::json!({ "path": dir }))
            .with_hint(format!(
                "check --catalog and $TOOLCTL_CATALOG, or create the catalog with `toolctl init {}`",
                dir.display()
            )));
        }
        Ok(location)
    }

    /// Open the catalog (it need not exist yet: it is created on the first write).
    pub fn catalog(&self) -> Result<Catalog, CliError> {
        self.open_with(Catalog::open)
    }

    /// Open the catalog with its `toolctl.json` as it is, even when toolctl refuses it: for the
    /// `config` commands, which show and repair it.
    pub fn catalog_as_is(&self) -> Result<Catalog, CliError> {
        self.open_with(Catalog::open_as_is)
    }

    fn open_with(
        &self,
        open: fn(PathBuf) -> catalog::Result<Catalog>,
    ) -> Result<Catalog, CliError> {
        let location = self.location()?;
        let root = location.path().to_owned();
        Ok(open(root.clone())
            .map_err(|e| config_error(&root, e))?
            .with_lock_timeout(self.global.lock_timeout)
            .with_check_note(self.checks.clone()))
    }

    /// Run a write on the catalog, telling the user when the write created the catalog.
    pub fn write<T>(
        &self,
        op: impl FnOnce(&mut Catalog) -> catalog::Result<T>,
    ) -> Result<T, CliError> {
        self.write_on(self.catalog()?, op)
    }

    /// [`write`](Self::write) on a catalog opened already (e.g. [`catalog_as_is`](Self::catalog_as_is)).
    pub fn write_on<T>(
        &self,
        mut catalog: Catalog,
        op: impl FnOnce(&mut Catalog) -> catalog::Result<T>,
    ) -> Result<T, CliError> {
        let existed = catalog.exists();
        let value = op(&mut catalog)?;
        if !existed && catalog.exists() {
            self.ui.status(&format!(
                "Created a new catalog in {}",
                catalog.root().display()
            ));
        }
        Ok(value)
    }

    /// Read the catalog's search index, brought up to date with the files (a progress bar
    /// shows when that takes more than a second); a damaged index is rebuilt, see
    /// [`Index::read`](toolctl_lib::index::Index::read).
    pub fn read_index<T>(
        &self,
        catalog: &Catalog,
        read: impl FnMut(&toolctl_lib::index::Index) -> toolctl_lib::index::Result<T>,
    ) -> Result<T, CliError> {
        let mut progress = self.ui.progress(0, "indexing");
        Ok(toolctl_lib::index::Index::read(
            catalog,
            &mut |done, total| progress.update(done, total),
            read,
        )?)
    }

    /// Report files the catalog could not use, as warnings.
    pub fn warn_problems(&self, problems: &[catalog::Problem]) {
        for problem in problems {
            self.ui.warn(&format!(
                "skipped {}: {}",
                problem.path.display(),
                problem.message
            ));
        }
    }
}

/// Parse the command line, run the command, print its output or error, and say how to exit.
pub fn main() -> ExitCode {
    complete::answer_if_asked();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let wants_json = args.iter().any(|a| a == "--json");
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return ExitCode::from(report_parse_error(&e, wants_json, &args)),
    };
    cli.global.color.apply();
    let ui = Ui {
        json: cli.global.json,
        quiet: cli.global.quiet,
        no_progress: cli.global.no_progress,
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            let error = CliError::new(
                ErrorCode::Internal,
                format!("cannot read the working folder: {e}"),
            );
            error.report(&ui);
            return ExitCode::from(error.exit_code());
        }
    };
    if let Err(message) = toolctl_lib::index::watch::check_env() {
        let error = CliError::invalid(message);
        error.report(&ui);
        return ExitCode::from(error.exit_code());
    }
    let ctx = Ctx {
        global: cli.global,
        ui,
        cwd,
        checks: catalog::CheckNote::default(),
    };
    let result = cmd::run(&ctx, &cli.command);
    // A check that had to walk the catalog may start a watcher for the next commands.
    let started = ctx.checks.take_walk().and_then(|entries| {
        let catalog = ctx.catalog().ok()?;
        let started = watcher::maybe_start(&catalog, entries, ctx.ui.can_confirm());
        Some((catalog, started))
    });
    if let Some((_, watcher::Started::TooFewWatches(advice))) = &started {
        ctx.ui.warn(&format!("no index watcher started: {advice}"));
    }
    if let Some((catalog, watcher::Started::Watcher(pid))) = started {
        let idle = catalog.config().watch_idle.as_secs();
        let idle = if idle % 60 == 0 {
            format!("{} min", idle / 60)
        } else {
            format!("{idle} s")
        };
        // The stop command must find this catalog from wherever it is typed: it names the
        // catalog unless that is the user's default one.
        let stop = match ctx.location() {
            Ok(Location::UserDefault(_)) => "toolctl index watch --stop".to_owned(),
            _ => format!(
                "toolctl --catalog {} index watch --stop",
                shell_word(&catalog.root().display().to_string())
            ),
        };
        ctx.ui.status(&format!(
            "Started an index watcher for {} (pid {pid}) so the next commands need not check every file; it exits after {idle} without a command.\nStop it: {stop}. Turn this off: \"index\": {{\"watch\": \"never\"}} in toolctl.json, or TOOLCTL_WATCH=never.",
            catalog.root().display(),
        ));
    }
    if let Some((index, why)) = ctx.checks.take_in_cache() {
        ctx.ui.warn(&format!(
            "{why}: its search index is kept in {} instead",
            index.display()
        ));
    }
    for (path, why) in ctx.checks.take_remade() {
        ctx.ui.warn(&format!(
            "{} could not be used ({why}); it was made again",
            path.display()
        ));
    }
    if let Some(why) = ctx.checks.take_in_memory() {
        ctx.ui.warn(&format!(
            "{why}: its search index was built in memory for this command (slower on big catalogs; nothing is written)"
        ));
    }
    let result = result.and_then(|output| {
        ctx.ui.emit(&output)?;
        Ok(output.exit)
    });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(mut error) => {
            // A bundle or tool not found in a catalog whose `bundles` is no folder: that is
            // why (readers warn of it too, but a lookup that fails prints no warnings).
            if matches!(error.code, ErrorCode::NotFound | ErrorCode::UnknownTool)
                && let Ok(location) = ctx.location()
                && let Some(problem) =
                    catalog::not_a_folder(&location.path().join(catalog::BUNDLES_DIR))
            {
                error = error.with_first_hint(format!(
                    "{}: {}",
                    problem.path.display(),
                    problem.message
                ));
            }
            error.report(&ctx.ui);
            ExitCode::from(error.exit_code())
        }
    }
}

/// Print a clap error (or help/version) and return the exit code.
fn report_parse_error(e: &clap::Error, json: bool, args: &[std::ffi::OsString]) -> u8 {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            exit::USAGE
        } else {
            exit::SUCCESS
        };
    }
    // An empty $TOOLCTL_CATALOG reaches clap as an empty --catalog: say which it was.
    if e.kind() == ErrorKind::InvalidValue
        && std::env::var_os("TOOLCTL_CATALOG").is_some_and(|v| v.is_empty())
        && !args
            .iter()
            .any(|a| a.to_str().is_some_and(|a| a.starts_with("--catalog")))
    {
        let error = CliError::invalid("$TOOLCTL_CATALOG is set but empty: it must name a catalog folder")
            .with_hint("unset it (unset TOOLCTL_CATALOG) to use the default catalog, or set it to a folder holding toolctl.json")
            .usage();
        error.report(&Ui {
            json,
            quiet: false,
            no_progress: true,
        });
        return exit::USAGE;
    }
    let with_tip = dash_value_tip(e, args);
    let e = with_tip.as_ref().unwrap_or(e);
    if json {
        let rendered = e.render().to_string();
        // clap's first paragraph is "error: <what is wrong>", with what it lists on the lines
        // below (the arguments not provided); then tips and usage.
        let message = rendered
            .lines()
            .take_while(|line| !line.trim().is_empty())
            .map(|line| line.trim().trim_start_matches("error: "))
            .collect::<Vec<_>>()
            .join(" ");
        let mut message = if message.is_empty() {
            e.kind().to_string()
        } else {
            message
        };
        let mut details = serde_json::json!({ "usage": rendered });
        // A value outside a closed set: the message names the set, as the human form does
        // (clap's first paragraph often lists it already).
        if let Some(ContextValue::Strings(values)) = e.get(ContextKind::ValidValue)
            && !values.is_empty()
        {
            if !message.contains("possible values") {
                message.push_str(&format!("; possible values: {}", values.join(", ")));
            }
            details["possibleValues"] = serde_json::json!(values);
        }
        let mut error = CliError::invalid(message).with_details(details);
        // clap's tips ("to pass '-x' as a value, use '-- -x'") as hints, as the human form
        // shows them.
        if let Some(ContextValue::StyledStrs(tips)) = e.get(ContextKind::Suggested) {
            for tip in tips {
                error = error.with_hint(tip.to_string());
            }
        }
        error = error.usage();
        // attach answers in the attach contract's shape, usage errors included.
        if subcommand(args) == Some("attach") {
            error = error.in_attach_shape();
        }
        let ui = Ui {
            json: true,
            quiet: false,
            no_progress: true,
        };
        error.report(&ui);
    } else {
        let _ = e.print();
    }
    exit::USAGE
}

/// clap's error `e` with a tip when the value of an option starts with `-` (a slug may:
/// `--bundle -ops`): clap reads such a value as a flag of its own, and says so ("unexpected
/// argument '-ops'", or "a value is required for '--bundle'") with no word of how to pass it.
/// The tip is the usual Unix way, `--bundle=-ops`. (For an argument that is not an option's
/// value, clap's own tip says to write `-- -ops`.) `None`: no such value.
fn dash_value_tip(e: &clap::Error, args: &[std::ffi::OsString]) -> Option<clap::Error> {
    use clap::CommandFactory;
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let words: Vec<&str> = args.iter().map(|a| a.to_str().unwrap_or("")).collect();
    let invalid = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => arg.as_str(),
        _ => return None,
    };
    let (option, value) = match e.kind() {
        // `--bundle -ops`, -ops no flag of toolctl: the value is the unexpected argument.
        ErrorKind::UnknownArgument => {
            let at = words.iter().skip(1).position(|w| *w == invalid)? + 1;
            (words[at - 1], invalid)
        }
        // `--bundle -q`, -q a flag: the option has no value ("--bundle <BUNDLE>").
        ErrorKind::InvalidValue | ErrorKind::NoEquals => {
            let option = invalid.split(' ').next()?;
            let at = words.iter().position(|w| *w == option)?;
            (option, *words.get(at + 1)?)
        }
        _ => return None,
    };
    if !value.starts_with('-') || value == "--" || option.contains('=') {
        return None;
    }
    fn takes_value(cmd: &clap::Command, option: &str) -> bool {
        cmd.get_arguments().any(|a| {
            let named = match option.strip_prefix("--") {
                Some(long) => a.get_long() == Some(long),
                None => option
                    .strip_prefix('-')
                    .and_then(|s| s.parse::<char>().ok())
                    .is_some_and(|short| a.get_short() == Some(short)),
            };
            named && a.get_action().takes_values()
        }) || cmd.get_subcommands().any(|sub| takes_value(sub, option))
    }
    if !option.starts_with('-') || !takes_value(&Cli::command(), option) {
        return None;
    }
    let mut tips = match e.get(ContextKind::Suggested) {
        Some(ContextValue::StyledStrs(tips)) => tips.clone(),
        _ => Vec::new(),
    };
    let joined = if option.starts_with("--") {
        format!("{option}={value}")
    } else {
        format!("{option}{value}")
    };
    tips.push(clap::builder::StyledStr::from(format!(
        "to pass '{value}' as the value of '{option}', use '{joined}'"
    )));
    // clap's errors are not Clone: a new one with the same context and the tips.
    let mut with_tip = clap::Error::new(e.kind()).with_cmd(&Cli::command());
    for (kind, value) in e.context() {
        with_tip.insert(kind, value.clone());
    }
    with_tip.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
    Some(with_tip)
}

/// The subcommand named on a command line clap refused: the first word that is neither a flag
/// nor the value of a global flag.
fn subcommand(args: &[std::ffi::OsString]) -> Option<&str> {
    let mut words = args.iter().skip(1).filter_map(|a| a.to_str());
    while let Some(word) = words.next() {
        match word {
            "--catalog" | "--lock-timeout" | "--color" => {
                words.next();
            }
            flag if flag.starts_with('-') => {}
            name => return Some(name),
        }
    }
    None
}

/// A catalog error, with a hint naming the `config` command that would fix it when the
/// catalog's `toolctl.json` is what is wrong (or to edit the file, where no command can).
fn config_error(root: &std::path::Path, error: catalog::Error) -> CliError {
    let file = root.join(catalog::CONFIG_FILE);
    let hints: Vec<String> = match &error {
        catalog::Error::Parse { path, .. } if *path == file => vec![format!(
            "edit {} by hand: it is not JSON, so no `toolctl config` command can read it",
            file.display()
        )],
        // The file is a symlink out of the catalog: no edit of it helps.
        catalog::Error::Invalid { source_name, .. }
            if *source_name == file.display().to_string() && links_out(root, &file) =>
        {
            vec![format!(
                "make {} the file itself, not a symlink to one outside the catalog (e.g. `cp --remove-destination \"$(readlink -f {path})\" {path}`)",
                catalog::CONFIG_FILE,
                path = shell_word(&file.display().to_string()),
            )]
        }
        catalog::Error::Invalid {
            source_name,
            violations,
        } if *source_name == file.display().to_string() => {
            let doc = catalog::Config::load_as_is(root).map(|config| config.doc);
            // Every problem of the file, as `config get` and `validate` list them (loading
            // stops at serde's first), so that all can be fixed in one go.
            let problems = match &doc {
                Ok(doc) => catalog::config::problems(doc, &file),
                Err(_) => Vec::new(), // Not an object: the error says so as it is.
            };
            let doc = doc.unwrap_or_default();
            if !problems.is_empty() {
                let hints = config_fix_hints(&doc, &problems);
                let error = catalog::Error::invalid(source_name.clone(), problems);
                return hints
                    .into_iter()
                    .fold(CliError::from(error), CliError::with_hint);
            }
            config_fix_hints(&doc, violations)
        }
        _ => Vec::new(),
    };
    hints
        .into_iter()
        .fold(CliError::from(error), CliError::with_hint)
}

/// Whether `file`, in the catalog `root`, is a symlink out of it (or to nothing).
fn links_out(root: &std::path::Path, file: &std::path::Path) -> bool {
    catalog::store::confine(root);
    matches!(catalog::store::link_out(file), Ok(Some(_)))
}

/// Each fix of `problems` of `toolctl.json` (`doc`) as the command that makes it.
pub(crate) fn config_fix_hints(
    doc: &serde_json::Value,
    problems: &[catalog::Violation],
) -> Vec<String> {
    use toolctl_lib::ops::config::Fix;
    toolctl_lib::ops::config::fixes(doc, problems)
        .into_iter()
        .map(|fix| match fix {
            Fix::RemoveItem { key, item } => format!(
                "fix it with `toolctl config remove {} {}`",
                shell_word(&key),
                shell_word(&item)
            ),
            Fix::SetOrRemove { key } => {
                let key = shell_word(&key);
                format!(
                    "fix it with `toolctl config set {key} VALUE`, or `toolctl config remove {key}` for the default"
                )
            }
            Fix::SetOrRemoveServer { key, server } => format!(
                "fix it with `toolctl config set {} VALUE`, or `toolctl config remove {}` to drop the server",
                shell_word(&key),
                shell_word(&server)
            ),
            Fix::RenameServer { server } => format!(
                "fix it with `toolctl config remove {}`, then declare the server again under a name of letters, digits and '-'",
                shell_word(&server)
            ),
            Fix::EditFile => format!(
                "fix it by editing {}: no `toolctl config` key names that place",
                catalog::CONFIG_FILE
            ),
        })
        .collect()
}

/// `word` as a POSIX shell reads it back: as it is when it holds nothing the shell treats
/// specially, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:,=@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_app() {
        Cli::command().debug_assert();
    }
}
