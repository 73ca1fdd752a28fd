//! The stable error codes of toolctl's JSON output and the process exit codes they map to.
//!
//! Both are part of the public contract (scripts and CI jobs match on them), so they live in
//! this one file and nowhere else; the table of docs/exit-codes.md is a copy of [`exit`].

use serde::{Deserialize, Serialize};

/// Process exit codes. Documented in docs/exit-codes.md; never renumber.
pub mod exit {
    /// The command did what it was asked.
    pub const SUCCESS: u8 = 0;
    /// Anything not covered below (I/O failure, internal error).
    pub const FAILURE: u8 = 1;
    /// The command line itself was wrong (unknown flag, missing argument).
    pub const USAGE: u8 = 2;
    /// Invalid input: a file, an argument value or a document broke a rule (`VALIDATION_ERROR`).
    pub const INVALID_INPUT: u8 = 3;
    /// A bundle, tool, agent, input file or explicitly named catalog that does not exist
    /// (`NOT_FOUND`, `UNKNOWN_TOOL`, `CATALOG_NOT_FOUND`).
    pub const NOT_FOUND: u8 = 4;
    /// The thing already exists (`CONFLICT`).
    pub const CONFLICT: u8 = 5;
    /// Not allowed: built-in content, a disabled bundle, a policy (`FORBIDDEN`, `TOOL_DISABLED`,
    /// `HOST_NOT_ALLOWED`).
    pub const FORBIDDEN: u8 = 6;
    /// The tool ran and failed (`invoke` printed `ok:false`).
    pub const TOOL_FAILED: u8 = 7;
    /// The catalog lock could not be had within `--lock-timeout` (`LOCK_TIMEOUT`).
    pub const LOCK_TIMEOUT: u8 = 8;
}

/// The `code` of an `{"ok":false,"error":{…}}` document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    ValidationError,
    NotFound,
    Conflict,
    Forbidden,
    UnknownTool,
    ToolDisabled,
    HostNotAllowed,
    Timeout,
    /// A tool's `maxCallsPerMinute` left no slot within the call's time.
    RateLimited,
    UpstreamError,
    OutputInvalid,
    LockTimeout,
    /// `--catalog DIR` or `$TOOLCTL_CATALOG` names a folder that is not a catalog.
    CatalogNotFound,
    Internal,
}

impl ErrorCode {
    /// The exit code a command ends with when it fails with this error.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::ValidationError => exit::INVALID_INPUT,
            Self::NotFound | Self::UnknownTool | Self::CatalogNotFound => exit::NOT_FOUND,
            Self::Conflict => exit::CONFLICT,
            Self::Forbidden | Self::ToolDisabled | Self::HostNotAllowed => exit::FORBIDDEN,
            Self::Timeout | Self::RateLimited | Self::UpstreamError | Self::OutputInvalid => {
                exit::TOOL_FAILED
            }
            Self::LockTimeout => exit::LOCK_TIMEOUT,
            Self::Internal => exit::FAILURE,
        }
    }

    /// The code as it appears in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ValidationError => "VALIDATION_ERROR",
            Self::NotFound => "NOT_FOUND",
            Self::Conflict => "CONFLICT",
            Self::Forbidden => "FORBIDDEN",
            Self::UnknownTool => "UNKNOWN_TOOL",
            Self::ToolDisabled => "TOOL_DISABLED",
            Self::HostNotAllowed => "HOST_NOT_ALLOWED",
            Self::Timeout => "TIMEOUT",
            Self::RateLimited => "RATE_LIMITED",
            Self::UpstreamError => "UPSTREAM_ERROR",
            Self::OutputInvalid => "OUTPUT_INVALID",
            Self::LockTimeout => "LOCK_TIMEOUT",
            Self::CatalogNotFound => "CATALOG_NOT_FOUND",
            Self::Internal => "INTERNAL",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
