//! The CLI's error: a kind, a stable code, a message, the causes, hints, details for JSON, and
//! the library error it came from.
//!
//! Every failure of every command becomes one of these; [`CliError::exit_code`] is the only
//! place an error turns into a process exit code (through [`ErrorCode::exit_code`]). The
//! library's errors name no command-line flag or command: the hints that do are added here,
//! when a library error becomes a `CliError` (as jj's `command_error.rs` does).

use super::output::Ui;
use serde_json::{Value, json};
use toolctl_lib::base::error_code::{ErrorCode, exit};
use toolctl_lib::catalog;

/// What kind of failure an error is, which decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The command line itself is wrong (exit 2), not a value it gives.
    Usage,
    /// Bad input, a missing or conflicting thing, a refusal: the exit code of its
    /// [`ErrorCode`].
    User,
    /// A tool `invoke` ran failed (exit 7, whatever the code).
    ToolFailed,
    /// toolctl itself failed (`INTERNAL`).
    Internal,
}

#[derive(Debug)]
pub struct CliError {
    pub kind: ErrorKind,
    pub code: ErrorCode,
    /// Under `--json`, printed in the attach contract's shape (`{"success": false, "error",
    /// "code"}`) rather than §2's error document.
    pub attach_shape: bool,
    body: Box<Body>,
}

/// The text of an error, boxed so `Result<_, CliError>` stays small.
#[derive(Debug)]
struct Body {
    message: String,
    details: Value,
    causes: Vec<String>,
    hints: Vec<String>,
    /// The library error this one reports, if any.
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl CliError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            kind: Self::kind_of(code),
            code,
            attach_shape: false,
            body: Box::new(Body {
                message: message.into(),
                details: json!({}),
                causes: Vec::new(),
                hints: Vec::new(),
                source: None,
            }),
        }
    }

    fn kind_of(code: ErrorCode) -> ErrorKind {
        if code == ErrorCode::Internal {
            ErrorKind::Internal
        } else {
            ErrorKind::User
        }
    }

    /// A command-line usage error (exit 2).
    pub fn usage(mut self) -> Self {
        self.kind = ErrorKind::Usage;
        self
    }

    /// Keep the library error this one reports.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.body.source = Some(Box::new(source));
        self
    }

    /// The library error this one reports, if any.
    pub fn source(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.body.source.as_deref()
    }

    /// Bad input in an argument or a document.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ValidationError, message)
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.body.hints.push(hint.into());
        self
    }

    /// A hint that goes before the others (the likeliest fix).
    pub fn with_first_hint(mut self, hint: impl Into<String>) -> Self {
        self.body.hints.insert(0, hint.into());
        self
    }

    /// Lines listed under the message (`caused by: …`), e.g. every problem found.
    pub fn with_causes(mut self, causes: impl IntoIterator<Item = String>) -> Self {
        self.body.causes.extend(causes);
        self
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.body.details = details;
        self
    }

    /// Mark the error as a tool's own failure (it ran): exit 7.
    pub fn tool_failed(mut self) -> Self {
        self.kind = ErrorKind::ToolFailed;
        self
    }

    /// Print the error in the attach contract's shape under `--json`.
    pub fn in_attach_shape(mut self) -> Self {
        self.attach_shape = true;
        self
    }

    pub fn exit_code(&self) -> u8 {
        match self.kind {
            ErrorKind::Usage => exit::USAGE,
            ErrorKind::ToolFailed => exit::TOOL_FAILED,
            ErrorKind::User | ErrorKind::Internal => self.code.exit_code(),
        }
    }

    /// The `{"ok":false,"error":{…}}` document (attach: `{"success":false,"error","code"}`).
    pub fn to_json(&self) -> Value {
        if self.attach_shape {
            return json!({
                "success": false,
                "error": self.body.message,
                "code": self.code,
            });
        }
        let mut error = json!({
            "code": self.code,
            "message": self.body.message,
            "details": self.body.details,
        });
        if !self.body.hints.is_empty() {
            error["hint"] = self.body.hints.join("\n").into();
        }
        json!({ "ok": false, "error": error })
    }

    /// Print the error: JSON on stdout with `--json`, else `error:`/`caused by:`/`hint:` on
    /// stderr.
    pub fn report(&self, ui: &Ui) {
        if ui.json {
            let output = super::output::Output::new(self.to_json(), super::output::Human::Nothing);
            let _ = ui.emit(&output);
        } else {
            ui.error(&self.body.message, &self.body.causes, &self.body.hints);
        }
    }
}

impl From<catalog::Error> for CliError {
    fn from(error: catalog::Error) -> Self {
        let error = with_flag_names(error);
        let mut causes: Vec<String> = toolctl_lib::base::causes(&error)
            .map(|c| c.to_string())
            .collect();
        // Several problems: list every one after the summary.
        let violations = error.violations();
        if violations.len() > 1 {
            causes.extend(violations.iter().map(ToString::to_string));
        }
        if let catalog::Error::Ambiguous { candidates, .. } = &error {
            causes.extend(candidates.iter().map(|c| format!("candidate: {c}")));
        }
        // Several conflicts (an import): list every one after the summary.
        if let catalog::Error::Conflict { details, .. } = &error
            && let Some(conflicts) = details.get("conflicts").and_then(|c| c.as_array())
            && conflicts.len() > 1
        {
            causes.extend(
                conflicts
                    .iter()
                    .filter_map(|c| c.get("message").and_then(|m| m.as_str()))
                    .map(str::to_owned),
            );
        }
        let code = error.code();
        Self {
            kind: Self::kind_of(code),
            code,
            attach_shape: false,
            body: Box::new(Body {
                message: error.to_string(),
                details: error.details(),
                causes,
                hints: hint_of(&error).into_iter().collect(),
                source: Some(Box::new(error)),
            }),
        }
    }
}

/// A catalog error whose source is an input the library names, renamed to the flag that gives it.
fn with_flag_names(mut error: catalog::Error) -> catalog::Error {
    use catalog::page;
    if let catalog::Error::ToolBundle { source_name, given } = error {
        let message = match given {
            None => "no bundle given: pass --bundle BUNDLE or set bundleID in the file".to_owned(),
            Some(g) => format!(
                "bundleID {} is not the bundle given by --bundle {} ({})",
                g.in_file, g.name, g.id
            ),
        };
        return catalog::Error::invalid(
            source_name,
            vec![catalog::Violation::new("/bundleID", message)],
        );
    }
    if let catalog::Error::Invalid { source_name, .. } = &mut error {
        let flag = match source_name.as_str() {
            page::SIZE_INPUT => "--page-size",
            page::TOKEN_INPUT => "--page-token",
            toolctl_lib::ops::archive::SLUG_INPUT => "--slug",
            _ => return error,
        };
        *source_name = flag.to_owned();
    }
    error
}

/// What the user can do about a catalog error, in the command line's words.
fn hint_of(error: &catalog::Error) -> Option<String> {
    use catalog::Error;
    match error {
        // A lookup that found nothing: where to see what there is.
        Error::NotFound {
            what: "bundle",
            hint: None,
            ..
        } => Some(
            "see the bundles with `toolctl bundle list --include-disabled --include-deleted`"
                .to_owned(),
        ),
        Error::NotFound {
            what: "tool",
            hint: None,
            ..
        } => Some("see the tools with `toolctl tool list --include-disabled`".to_owned()),
        Error::LockTimeout { .. } => Some(
            "another toolctl is writing to this catalog; retry, or raise --lock-timeout".to_owned(),
        ),
        other => other.hint().map(|hint| hint_words(&hint)),
    }
}

/// A library hint in the command line's words.
fn hint_words(hint: &catalog::Hint) -> String {
    use catalog::Hint;
    match hint {
        Hint::Text(text) => text.to_string(),
        Hint::RestoreBundle(bundle) => format!("restore it first: toolctl bundle restore {bundle}"),
        Hint::EnableBundle(bundle) => format!("enable it first: toolctl bundle enable {bundle}"),
        Hint::DisableTool(tool) => format!("disable it instead: toolctl tool disable {tool}"),
        Hint::DisableBuiltinBundle => {
            "disable it instead: toolctl bundle disable builtin".to_owned()
        }
        Hint::UseOwnBundle => {
            "put the tool into a bundle of your own (`toolctl bundle put --slug NAME`)".to_owned()
        }
        Hint::RestoreOrReapBundle(id) => format!(
            "bundle {id} holding this slug is deleted; restore it (`toolctl bundle restore {id}`) or reap it first"
        ),
        Hint::ReplaceBundle(id) => format!("to replace that bundle, pass --id {id}"),
        Hint::ImportAs { new_ids, new_slug } => match (new_ids, new_slug) {
            (true, true) => "nothing was written; to import a copy with new IDs and another slug, add --as-new --slug NEW",
            (true, false) => "nothing was written; to import a copy with new IDs, add --as-new",
            _ => "nothing was written; to import it under another slug, add --slug NEW",
        }
        .to_owned(),
        Hint::Overwrite => "pass --force to replace it".to_owned(),
        Hint::ExportBuiltin => {
            "to hand its tools to a model, use `toolctl export --provider P --bundle builtin`"
                .to_owned()
        }
        Hint::NameCatalog => "pass --catalog DIR or set TOOLCTL_CATALOG".to_owned(),
        Hint::RenameBundle { first } => {
            let rename = "give one of the bundles a slug that differs from the other's within \
                its first characters in ASCII (`toolctl bundle put --id <bundleID> --slug NEW`)";
            match first {
                Some(first) => format!("{first}; or {rename}"),
                None => rename.to_owned(),
            }
        }
    }
}

impl From<toolctl_lib::index::Error> for CliError {
    fn from(error: toolctl_lib::index::Error) -> Self {
        use toolctl_lib::index::Error;
        match error {
            Error::Catalog(e) => e.into(),
            Error::EmptyQuery => CliError::invalid(error.to_string()).with_hint(
                "say what the tool should do, e.g. `toolctl search \"weather forecast\"`; `toolctl tool list` lists everything",
            ),
            Error::Database {
                ref path,
                ref source,
            } if toolctl_lib::index::is_disk_full(path, source) => {
                let message = error.to_string();
                CliError::new(ErrorCode::Internal, message).with_hint(
                    "the disk is full: free some space, then run the command again",
                )
            }
            Error::Database { .. } => {
                let message = error.to_string();
                CliError::new(ErrorCode::Internal, message).with_hint(
                    "the index is derived state: `toolctl index rebuild` makes it again from the files",
                )
            }
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(error: std::io::Error) -> Self {
        Self::new(ErrorCode::Internal, format!("cannot write output: {error}"))
    }
}
