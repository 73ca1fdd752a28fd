//! The CLI's error: a stable code, a message, the causes, hints, and details for JSON.
//!
//! Every failure of every command becomes one of these; [`CliError::exit_code`] is the only
//! place an error turns into a process exit code (through [`ErrorCode::exit_code`]).

use super::output::Ui;
use crate::base::error_code::{ErrorCode, exit};
use crate::catalog;
use serde_json::{Value, json};

#[derive(Debug)]
pub struct CliError {
    pub code: ErrorCode,
    /// A command-line usage error (exit 2), not a rejected value.
    pub usage: bool,
    /// A tool `invoke` ran failed (exit 7, whatever the code).
    pub tool_failed: bool,
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
}

impl CliError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            usage: false,
            tool_failed: false,
            attach_shape: false,
            body: Box::new(Body {
                message: message.into(),
                details: json!({}),
                causes: Vec::new(),
                hints: Vec::new(),
            }),
        }
    }

    /// Bad input in an argument or a document.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ValidationError, message)
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.body.hints.push(hint.into());
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
        self.tool_failed = true;
        self
    }

    /// Print the error in the attach contract's shape under `--json`.
    pub fn in_attach_shape(mut self) -> Self {
        self.attach_shape = true;
        self
    }

    pub fn exit_code(&self) -> u8 {
        if self.usage {
            exit::USAGE
        } else if self.tool_failed {
            exit::TOOL_FAILED
        } else {
            self.code.exit_code()
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
        let mut causes = Vec::new();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            causes.push(cause.to_string());
            source = cause.source();
        }
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
        Self {
            code: error.code(),
            usage: false,
            tool_failed: false,
            attach_shape: false,
            body: Box::new(Body {
                message: error.to_string(),
                details: error.details(),
                causes,
                hints: error.hint().into_iter().collect(),
            }),
        }
    }
}

impl From<crate::index::Error> for CliError {
    fn from(error: crate::index::Error) -> Self {
        use crate::index::Error;
        match error {
            Error::Catalog(e) => e.into(),
            Error::Query { message, hint } => CliError::invalid(message).with_hint(hint),
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
