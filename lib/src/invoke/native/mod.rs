//! The native functions compiled into this binary, by the name a `tool.json` gives in
//! `impl.func` (or `impl.goFunc` for a legacy `go` tool).
//!
//! A tool naming a function that is not here is listed as unavailable, with this module's
//! reason, and its file is left alone.
//!
//! File functions work inside a workspace folder ([`workspace`]) and can never reach outside
//! it. Each function gets arguments its tool's `argSchema` has already checked, but checks
//! again what it relies on: a user's native tool may name one of these functions with a
//! looser schema (or none, with `allowNoSchema`).

pub mod cgroup;
pub(crate) mod exec;
mod files;
mod workspace;

use super::{Failure, Options};
use crate::base::error_code::ErrorCode;
use serde_json::{Map, Value, json};

/// Run the native function `name`.
pub fn call(name: &str, args: Map<String, Value>, options: &Options) -> Result<Value, Failure> {
    let args = Args(args);
    match name {
        "readfile" => files::readfile(&args, &options.workspace),
        "file-search" => files::file_search(&args, &options.workspace),
        "now" => Ok(now()),
        "exec" => exec::exec(&args, options),
        other => Err(Failure::new(
            ErrorCode::Internal,
            format!("this toolctl has no native function '{other}'"),
        )),
    }
}

/// The current time.
fn now() -> Value {
    let now = jiff::Timestamp::now();
    json!({ "utc": now.to_string(), "unix_ms": now.as_millisecond() })
}

/// A call's arguments, read with the types a function needs.
struct Args(Map<String, Value>);

impl Args {
    fn invalid(name: &str, wanted: &str) -> Failure {
        Failure::new(
            ErrorCode::ValidationError,
            format!("argument '{name}' must be {wanted}"),
        )
        .with_details(json!({ "pointer": format!("/{name}") }))
    }

    fn string(&self, name: &str) -> Result<Option<&str>, Failure> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(Self::invalid(name, "a string")),
        }
    }

    fn required_string(&self, name: &str) -> Result<&str, Failure> {
        self.string(name)?
            .ok_or_else(|| Self::invalid(name, "given (a string)"))
    }

    /// An integer in `min..=max`, `default` when absent.
    fn integer(&self, name: &str, default: u64, min: u64, max: u64) -> Result<u64, Failure> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(value) => value
                .as_u64()
                .filter(|n| (min..=max).contains(n))
                .ok_or_else(|| Self::invalid(name, &format!("an integer from {min} to {max}"))),
        }
    }

    fn boolean(&self, name: &str) -> Result<bool, Failure> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Self::invalid(name, "true or false")),
        }
    }

    fn strings(&self, name: &str) -> Result<Vec<String>, Failure> {
        match self.0.get(name) {
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| Self::invalid(name, "an array of strings"))
                })
                .collect(),
            _ => Err(Self::invalid(name, "an array of strings")),
        }
    }
}
