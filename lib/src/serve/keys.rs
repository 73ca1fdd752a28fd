//! API keys: `serve.apiKeys` of `toolctl.json` names each key's secret; the values are read
//! where secrets live (the secrets file, `TOOLCTL_SECRET_<NAME>`) when the server starts.
//! A request's `x-api-key` is compared with every key in constant time; a key's value is
//! never printed, logged or put in an error.

use crate::base::secrets::Secrets;
use crate::catalog::config::{Role, ServeConfig};
use subtle::ConstantTimeEq;

/// The header a key comes in.
pub const HEADER: &str = "x-api-key";

/// A key with its value.
pub struct ApiKey {
    pub name: String,
    pub role: Role,
    value: Box<[u8]>,
}

/// Names and roles only.
impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("name", &self.name)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl ApiKey {
    pub fn new(name: impl Into<String>, role: Role, value: &str) -> Self {
        Self {
            name: name.into(),
            role,
            value: value.as_bytes().into(),
        }
    }
}

/// Why the keys cannot be read: names the key and its secret, never a value.
#[derive(Debug, thiserror::Error)]
#[error("serve.apiKeys: key '{name}': {why}")]
pub struct KeyError {
    pub name: String,
    pub why: String,
    pub hint: String,
}

/// The fewest bytes a key may have: shorter ones are guessed.
pub const MIN_KEY_LEN: usize = 16;

/// The keys `config` names, with their values from `secrets`.
pub fn resolve(config: &ServeConfig, secrets: &Secrets) -> Result<Vec<ApiKey>, KeyError> {
    let mut keys = Vec::with_capacity(config.api_keys.len());
    for key in &config.api_keys {
        let value = secrets.get(&key.secret).map_err(|unset| KeyError {
            name: key.name.clone(),
            why: format!("the secret '{}' {unset}", key.secret),
            hint: format!(
                "set TOOLCTL_SECRET_{0}, or {0} in ~/.config/toolctl/secrets.json",
                key.secret
            ),
        })?;
        if value.len() < MIN_KEY_LEN {
            return Err(KeyError {
                name: key.name.clone(),
                why: format!(
                    "the secret '{}' holds {} bytes; a key needs at least {MIN_KEY_LEN}",
                    key.secret,
                    value.len()
                ),
                hint: "make one with `openssl rand -hex 32`".to_owned(),
            });
        }
        if keys.iter().any(|k: &ApiKey| *k.value == *value.as_bytes()) {
            return Err(KeyError {
                name: key.name.clone(),
                why: "its value is another key's too: a request could not be told apart".to_owned(),
                hint: "give each key its own secret value".to_owned(),
            });
        }
        keys.push(ApiKey::new(key.name.clone(), key.role, &value));
    }
    Ok(keys)
}

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The key's name; `None` when the server has no keys (loopback only).
    pub key: Option<String>,
    pub role: Role,
}

/// Why a request's key was refused (401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Missing,
    Unknown,
}

impl Refusal {
    pub fn message(self) -> &'static str {
        match self {
            Self::Missing => "This operation requires an API key in the x-api-key header.",
            Self::Unknown => "The API key in the x-api-key header is not one of this server's.",
        }
    }

    /// The refusal in a log line's words (never the key sent).
    pub fn reason(self) -> &'static str {
        match self {
            Self::Missing => "no API key",
            Self::Unknown => "an unknown API key",
        }
    }
}

/// The caller `sent` (the `x-api-key` value) names among `keys`. Every key is compared, each
/// in constant time, so how long this takes says nothing of which key came close. With no
/// keys, every caller is an admin: the server then listens on loopback only.
pub fn caller(keys: &[ApiKey], sent: Option<&[u8]>) -> Result<Caller, Refusal> {
    if keys.is_empty() {
        return Ok(Caller {
            key: None,
            role: Role::Admin,
        });
    }
    let sent = sent.ok_or(Refusal::Missing)?;
    let mut found = None;
    for key in keys {
        if bool::from(key.value.as_ref().ct_eq(sent)) {
            found = Some(key);
        }
    }
    found
        .map(|key| Caller {
            key: Some(key.name.clone()),
            role: key.role,
        })
        .ok_or(Refusal::Unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_known_by_its_value_and_gives_its_role() {
        let keys = [
            ApiKey::new("reader", Role::Read, "read-key-0123456789"),
            ApiKey::new("ops", Role::Admin, "admin-key-0123456789"),
        ];
        let caller = caller(&keys, Some(b"admin-key-0123456789")).unwrap();
        assert_eq!(caller.role, Role::Admin);
        assert_eq!(caller.key.as_deref(), Some("ops"));
        assert_eq!(
            super::caller(&keys, Some(b"read-key-0123456789"))
                .unwrap()
                .role,
            Role::Read
        );
        assert_eq!(super::caller(&keys, None), Err(Refusal::Missing));
        assert_eq!(
            super::caller(&keys, Some(b"read-key-012345678")),
            Err(Refusal::Unknown)
        );
        assert_eq!(super::caller(&[], None).unwrap().role, Role::Admin);
    }

    #[test]
    fn a_key_prints_without_its_value() {
        let key = ApiKey::new("reader", Role::Read, "read-key-0123456789");
        let printed = format!("{key:?}");
        assert!(printed.contains("reader"), "{printed}");
        assert!(!printed.contains("0123456789"), "{printed}");
    }
}
