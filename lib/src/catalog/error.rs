//! What can go wrong in the catalog, with enough context (file, JSON pointer, candidates, hint)
//! for the CLI to tell a user exactly what to fix.

use crate::base::capped::ReadError;
use crate::base::error_code::ErrorCode;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// One broken rule in a document: where (`pointer`, RFC 6901) and what.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
    /// Which of `validate`'s rules this breaks (`name`, `timestamps`, …); `None` for the shape
    /// of the document, which its JSON Schema states (`schema`).
    #[serde(skip)]
    pub rule: Option<&'static str>,
}

impl Violation {
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            message: message.into(),
            rule: None,
        }
    }

    /// The same violation, filed under `validate`'s rule `rule`.
    pub fn rule(mut self, rule: &'static str) -> Self {
        self.rule = Some(rule);
        self
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.pointer, self.message)
        }
    }
}

/// What the user can do about an error. The library says what to do, never how on the command
/// line: the CLI words each one (`cli/error.rs`), naming its commands and flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// Advice that names no command or flag, said as it is. (The texts are boxed: an error
    /// stays small enough to return.)
    Text(Box<str>),
    /// Restore the deleted bundle (slug or ID) first.
    RestoreBundle(Box<str>),
    /// Enable the disabled bundle (slug or ID) first.
    EnableBundle(Box<str>),
    /// Disable the built-in tool (its reference) instead of deleting it.
    DisableTool(Box<str>),
    /// Disable the built-in bundle instead of deleting it.
    DisableBuiltinBundle,
    /// Put the tool into a bundle of one's own (the built-in one is read-only).
    UseOwnBundle,
    /// A deleted bundle (its ID) holds the slug: restore it or reap it.
    RestoreOrReapBundle(Box<str>),
    /// Replace the bundle holding the slug by giving its ID.
    ReplaceBundle(Box<str>),
    /// Nothing of an import was written; import a copy with new IDs, under another slug, or
    /// both.
    ImportAs { new_ids: bool, new_slug: bool },
    /// The file exists; replacing it must be asked for.
    Overwrite,
    /// The built-in bundle's tools reach a model through a provider export.
    ExportBuiltin,
    /// No catalog was found: name its folder.
    NameCatalog,
    /// Bundle slugs make exported names collide: rename one of the bundles; `first` is the
    /// other way out, where there is one (it comes before).
    RenameBundle { first: Option<Box<str>> },
}

impl From<String> for Hint {
    fn from(text: String) -> Self {
        Self::Text(text.into())
    }
}

impl From<&str> for Hint {
    fn from(text: &str) -> Self {
        Self::Text(text.into())
    }
}

/// Errors of catalog operations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{what} '{name}' not found")]
    NotFound {
        what: &'static str,
        name: String,
        hint: Option<Hint>,
    },
    #[error("'{name}' is ambiguous: it matches {} {what}s", candidates.len())]
    Ambiguous {
        what: &'static str,
        name: String,
        candidates: Vec<String>,
        hint: String,
    },
    #[error("{message}")]
    Conflict {
        message: String,
        details: Value,
        hint: Option<Hint>,
    },
    #[error("{message}")]
    Forbidden { message: String, hint: Option<Hint> },
    #[error("{}", invalid_message(.source_name, .violations))]
    Invalid {
        /// The file or argument the document came from (`-` for stdin).
        source_name: String,
        violations: Vec<Violation>,
    },
    #[error("{what} '{name}' cannot be read: {}", first_problem(problems))]
    Unreadable {
        what: &'static str,
        name: String,
        problems: Vec<super::Problem>,
    },
    #[error("{path}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// Names the timeout the user set (`--lock-timeout`), not the time measured, which a busy
    /// machine makes a little longer.
    #[error("could not lock the catalog within {}", in_words(*.timeout))]
    LockTimeout {
        path: PathBuf,
        timeout: Duration,
        waited: Duration,
    },
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A new tool's bundle: neither the caller nor the file's `bundleID` names one, or the
    /// two name different bundles.
    #[error("{source_name}: /bundleID: {}", tool_bundle_message(.given.as_ref()))]
    ToolBundle {
        source_name: String,
        given: Option<GivenBundle>,
    },
    #[error("{message}")]
    Config { message: String, hint: Option<Hint> },
}

/// The bundle a caller named for a new tool whose file names another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenBundle {
    /// The file's `bundleID`.
    pub in_file: uuid::Uuid,
    /// The caller's name for the bundle (slug or ID).
    pub name: String,
    /// That bundle's ID.
    pub id: uuid::Uuid,
}

fn tool_bundle_message(given: Option<&GivenBundle>) -> String {
    match given {
        None => "no bundle given: name one or set bundleID in the file".to_owned(),
        Some(g) => format!(
            "bundleID {} is not the bundle given, {} ({})",
            g.in_file, g.name, g.id
        ),
    }
}

/// A wait as a person says it: `500 ms`, `10 s`, `1.5 s`.
fn in_words(waited: Duration) -> String {
    let ms = waited.as_millis();
    if ms < 1000 || !ms.is_multiple_of(100) {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", waited.as_secs_f64())
    }
}

fn first_problem(problems: &[super::Problem]) -> String {
    problems
        .first()
        .map(|p| format!("{}: {}", p.path.display(), p.message))
        .unwrap_or_default()
}

fn invalid_message(source_name: &str, violations: &[Violation]) -> String {
    match violations {
        [one] => format!("{source_name}: {one}"),
        many => format!("{source_name}: {} problems", many.len()),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The error of a command reading an input or catalog file ([`crate::base::capped`]): a
    /// missing file is `NOT_FOUND` (exit 4), a file toolctl refuses to read is
    /// `VALIDATION_ERROR` (exit 3) naming the file, an I/O failure is `INTERNAL`.
    pub fn unreadable(path: &std::path::Path, error: ReadError) -> Self {
        match error {
            ReadError::Missing => Self::NotFound {
                what: "file",
                name: path.display().to_string(),
                hint: None,
            },
            ReadError::Io(e) => Self::io("cannot read", path, e),
            other => Self::invalid(
                path.display().to_string(),
                vec![Violation::new("", other.to_string()).rule("read")],
            ),
        }
    }

    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }

    pub fn invalid(source_name: impl Into<String>, violations: Vec<Violation>) -> Self {
        Self::Invalid {
            source_name: source_name.into(),
            violations,
        }
    }

    pub fn forbidden(message: impl Into<String>, hint: Option<Hint>) -> Self {
        Self::Forbidden {
            message: message.into(),
            hint,
        }
    }

    /// The stable code this error is reported under.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotFound { .. } => ErrorCode::NotFound,
            Self::Ambiguous { .. }
            | Self::Invalid { .. }
            | Self::Parse { .. }
            | Self::Unreadable { .. }
            | Self::ToolBundle { .. } => ErrorCode::ValidationError,

            Self::Config { .. } => ErrorCode::ValidationError,
            Self::Conflict { .. } => ErrorCode::Conflict,
            Self::Forbidden { .. } => ErrorCode::Forbidden,
            Self::LockTimeout { .. } => ErrorCode::LockTimeout,
            Self::Io { .. } => ErrorCode::Internal,
        }
    }

    /// Machine-readable details for the JSON error document.
    pub fn details(&self) -> Value {
        match self {
            Self::NotFound { what, name, .. } => json!({ "kind": what, "name": name }),
            Self::Ambiguous {
                what,
                name,
                candidates,
                ..
            } => json!({ "kind": what, "name": name, "candidates": candidates }),
            Self::Conflict { details, .. } => details.clone(),
            Self::Invalid {
                source_name,
                violations,
            } => json!({ "file": source_name, "problems": violations }),
            Self::ToolBundle { source_name, given } => json!({
                "file": source_name,
                "problems": [{
                    "pointer": "/bundleID",
                    "message": tool_bundle_message(given.as_ref()),
                }],
            }),
            Self::Parse {
                path, line, column, ..
            } => json!({ "file": path, "line": line, "column": column }),
            Self::Unreadable {
                what,
                name,
                problems,
            } => json!({ "kind": what, "name": name, "problems": problems }),
            Self::LockTimeout {
                path,
                timeout,
                waited,
            } => {
                json!({
                    "lock": path,
                    "timeoutMs": timeout.as_millis() as u64,
                    "waitedMs": waited.as_millis() as u64,
                })
            }
            Self::Io { path, source, .. } => {
                json!({ "path": path, "cause": source.to_string() })
            }
            Self::Forbidden { .. } | Self::Config { .. } => json!({}),
        }
    }

    /// What the user can do about it, when there is something to say.
    pub fn hint(&self) -> Option<Hint> {
        match self {
            Self::NotFound { hint, .. }
            | Self::Conflict { hint, .. }
            | Self::Forbidden { hint, .. }
            | Self::Config { hint, .. } => hint.clone(),
            Self::Ambiguous { hint, .. } => Some(hint.as_str().into()),
            // The command line says how to wait longer.
            Self::LockTimeout { .. } => None,
            Self::Unreadable { .. } => {
                Some("fix the file (toolctl never rewrites a file it cannot read)".into())
            }
            Self::Invalid { .. } | Self::Parse { .. } | Self::Io { .. } => None,
            Self::ToolBundle { .. } => None,
        }
    }

    /// What is wrong, without the file name (for reports that name the file already).
    pub fn reason(&self) -> String {
        match self {
            Self::Parse { message, .. } => message.clone(),
            Self::Invalid { violations, .. } => violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string(),
        }
    }

    /// Every individual problem, for a multi-line report.
    pub fn violations(&self) -> &[Violation] {
        match self {
            Self::Invalid { violations, .. } => violations,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_timeout_says_how_long_in_words() {
        let error = |ms| Error::LockTimeout {
            path: PathBuf::from("/c/.toolctl/lock"),
            timeout: Duration::from_millis(ms),
            // Measured: a little longer than asked on a busy machine; the message names the
            // timeout.
            waited: Duration::from_millis(ms + 1),
        };
        assert_eq!(
            error(500).to_string(),
            "could not lock the catalog within 500 ms"
        );
        assert_eq!(
            error(10_000).to_string(),
            "could not lock the catalog within 10 s"
        );
        assert_eq!(
            error(1_500).to_string(),
            "could not lock the catalog within 1.5 s"
        );
        assert_eq!(
            error(1_234).to_string(),
            "could not lock the catalog within 1234 ms"
        );
    }
}
