//! What can go wrong in the catalog, with enough context (file, JSON pointer, candidates, hint)
//! for the CLI to tell a user exactly what to fix.

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

/// Errors of catalog operations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{what} '{name}' not found")]
    NotFound {
        what: &'static str,
        name: String,
        hint: Option<String>,
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
        hint: Option<String>,
    },
    #[error("{message}")]
    Forbidden {
        message: String,
        hint: Option<String>,
    },
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
    #[error("could not lock the catalog within {}", in_words(*.waited))]
    LockTimeout { path: PathBuf, waited: Duration },
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{message}")]
    Config {
        message: String,
        hint: Option<String>,
    },
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

    pub fn forbidden(message: impl Into<String>, hint: impl Into<Option<String>>) -> Self {
        Self::Forbidden {
            message: message.into(),
            hint: hint.into(),
        }
    }

    /// The stable code this error is reported under.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotFound { .. } => ErrorCode::NotFound,
            Self::Ambiguous { .. }
            | Self::Invalid { .. }
            | Self::Parse { .. }
            | Self::Unreadable { .. } => ErrorCode::ValidationError,

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
            Self::Parse {
                path, line, column, ..
            } => json!({ "file": path, "line": line, "column": column }),
            Self::Unreadable {
                what,
                name,
                problems,
            } => json!({ "kind": what, "name": name, "problems": problems }),
            Self::LockTimeout { path, waited } => {
                json!({ "lock": path, "waitedMs": waited.as_millis() as u64 })
            }
            Self::Io { path, source, .. } => {
                json!({ "path": path, "cause": source.to_string() })
            }
            Self::Forbidden { .. } | Self::Config { .. } => json!({}),
        }
    }

    /// What the user can do about it, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::NotFound { hint, .. }
            | Self::Conflict { hint, .. }
            | Self::Forbidden { hint, .. }
            | Self::Config { hint, .. } => hint.clone(),
            Self::Ambiguous { hint, .. } => Some(hint.clone()),
            // The command line says how to wait longer.
            Self::LockTimeout { .. } => None,
            Self::Unreadable { .. } => {
                Some("fix the file (toolctl never rewrites a file it cannot read)".to_owned())
            }
            Self::Invalid { .. } | Self::Parse { .. } | Self::Io { .. } => None,
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
            waited: Duration::from_millis(ms),
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
