//! Catalog secrets: values a template may name (`${WEATHER_API_KEY}`) that are not arguments.
//!
//! They never live in the catalog (which is kept in git) and never come from arbitrary
//! environment variables. Two sources, the first that has the name wins:
//! - `TOOLCTL_SECRET_<NAME>` environment variables (for CI);
//! - `$XDG_CONFIG_HOME/toolctl/secrets.json` (else `~/.config/toolctl/secrets.json`): an object
//!   of strings, refused unless only its owner can read it (mode 0600 or stricter), and
//!   refused whole (naming the place) when it is not JSON or holds a value that is not a
//!   string: a number is not taken as its digits (`0042`, `1e3` would not be what was meant).
//!
//! An empty value counts as not set: an empty variable falls through to the file, and a call
//! that needs a secret set nowhere but empty says so.
//!
//! Every secret value used by a call is redacted from what the call prints ([`Redactor`](super::redact::Redactor)).

use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// The secrets file.
pub fn file() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config.join("toolctl").join("secrets.json"))
}

/// The secrets a call may use, read once per call.
#[derive(Default)]
pub struct Secrets {
    file: Option<Map<String, Value>>,
}

/// Why a secret has no value; `Display` ends "the secret 'K' …".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unset {
    Missing,
    /// `TOOLCTL_SECRET_<NAME>` is set to the empty string (and the file has no value).
    EmptyVariable(String),
    /// The secrets file holds `""` for it.
    EmptyInFile,
}

impl std::fmt::Display for Unset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing => write!(f, "is not set"),
            Self::EmptyVariable(var) => {
                write!(
                    f,
                    "is empty ({var} is set to an empty value), as good as not set"
                )
            }
            Self::EmptyInFile => {
                write!(f, "is empty (\"\" in the secrets file), as good as not set")
            }
        }
    }
}

/// Names only: a secret's value never reaches a debug print or a panic message.
impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field(
                "names",
                &self.file.as_ref().map(|m| m.keys().collect::<Vec<_>>()),
            )
            .finish()
    }
}

impl Secrets {
    /// Read the secrets file, if there is one. A file others can read, or that is not a JSON
    /// object of strings, is an error: better no call than a leaked or misread key.
    pub fn load() -> Result<Self, SecretsError> {
        let Some(path) = file() else {
            return Ok(Self::default());
        };
        // Read as every file toolctl did not write ([`super::capped`]): a FIFO, a device or
        // a file over 4 MiB is refused, not read for ever; the mode is checked on the open
        // file, so what is read is what was checked.
        let (file, len) = match super::capped::open_regular(&path) {
            Ok(open) => open,
            Err(super::capped::ReadError::Missing) => return Ok(Self::default()),
            Err(e) => return Err(problem(&path, format!("cannot read it: {e}"))),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let meta = file
                .metadata()
                .map_err(|e| problem(&path, format!("cannot read it: {e}")))?;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(SecretsError {
                    hint: Some(format!("chmod 600 {}", path.display())),
                    ..problem(&path, format!("its mode is {mode:o}: others can read it"))
                });
            }
        }
        let text = super::capped::read_open(file, len)
            .and_then(|bytes| {
                String::from_utf8(bytes)
                    .map_err(|e| super::capped::ReadError::NotUtf8(e.utf8_error().valid_up_to()))
            })
            .map_err(|e| problem(&path, format!("cannot read it: {e}")))?;
        let map = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(problem(
                    &path,
                    format!(
                        "it is {}, not a JSON object of names to strings",
                        super::json_kind(&other)
                    ),
                ));
            }
            Err(e) => {
                return Err(problem(
                    &path,
                    format!(
                        "it is not valid JSON: {}",
                        super::syntax::SyntaxError::of(&e)
                    ),
                ));
            }
        };
        // Never the value itself in the message: it may be a secret, if of the wrong type.
        if let Some((name, value)) = map.iter().find(|(_, v)| !v.is_string()) {
            let at = super::pointer::join("", name);
            let hint = match value {
                Value::Number(_) => format!("write it as a string: {{{}: \"…\"}}", json!(name)),
                _ => format!("give {} a string value, or remove it", json!(name)),
            };
            return Err(SecretsError {
                hint: Some(hint),
                ..problem(
                    &path,
                    format!(
                        "the value at {at} is {}, not a string",
                        super::json_kind(value)
                    ),
                )
            });
        }
        Ok(Self { file: Some(map) })
    }

    /// The value of secret `name`; an empty one counts as not set.
    pub fn get(&self, name: &str) -> Result<String, Unset> {
        let var = format!("TOOLCTL_SECRET_{name}");
        let from_env = std::env::var_os(&var);
        if let Some(value) = &from_env
            && !value.is_empty()
        {
            return Ok(value.to_string_lossy().into_owned());
        }
        match self.file.as_ref().and_then(|file| file.get(name)) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
            _ if from_env.is_some() => Err(Unset::EmptyVariable(var)),
            Some(Value::String(_)) => Err(Unset::EmptyInFile),
            _ => Err(Unset::Missing),
        }
    }
}

fn problem(path: &std::path::Path, why: String) -> SecretsError {
    SecretsError {
        path: path.to_owned(),
        why,
        hint: None,
    }
}

/// A secrets file toolctl refuses to use (the caller's error says how it fails: a call is
/// `FORBIDDEN`).
#[derive(Debug, Clone, thiserror::Error)]
#[error("secrets file {}: {why}", path.display())]
pub struct SecretsError {
    pub path: PathBuf,
    pub why: String,
    pub hint: Option<String>,
}
