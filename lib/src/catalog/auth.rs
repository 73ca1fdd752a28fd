//! `impl.auth` of an HTTP tool: how a call proves who it is, without templates.
//!
//! One of `bearer`, `basic`, `header`, `query`, `hmac` or `oauth2-client-credentials`. Each
//! names catalog secrets (never values), and every name must be declared in the tool's
//! `"secrets"` like any secret a template reads. The token URL of `oauth2-client-credentials`
//! must be an `http(s)` URL with a literal host; that host must be in `allowedHosts` (checked
//! where the configuration is known: `validate`, the catalog's availability, the call).
//!
//! The call side (signing, fetching and caching tokens) is [`crate::invoke::auth`].

use super::error::Violation;
use super::model::Tool;
use serde::Deserialize;

/// `impl.auth`.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum Auth {
    /// `Authorization: Bearer <secret>`.
    Bearer { secret: String },
    /// `Authorization: Basic base64(<user>:<password>)`.
    Basic {
        user_secret: String,
        password_secret: String,
    },
    /// `<name>: <secret>`.
    Header { name: String, secret: String },
    /// `?<name>=<secret>` added to the query.
    Query { name: String, secret: String },
    /// A header carrying the HMAC of a template over the request.
    Hmac(Hmac),
    /// An OAuth2 client-credentials token, fetched and cached (see `invoke::auth`).
    #[serde(rename = "oauth2-client-credentials")]
    OAuth2(OAuth2),
}

/// `{"type": "hmac", …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Hmac {
    pub secret: String,
    #[serde(default)]
    pub algorithm: HmacAlgorithm,
    pub header: String,
    #[serde(default)]
    pub encoding: SignatureEncoding,
    /// What is signed; `${body}` by default. Placeholders: [`SIGN_PLACEHOLDERS`].
    #[serde(default)]
    pub sign: Option<String>,
    /// The header's value; `${signature}` by default (`t=${timestamp},v1=${signature}`).
    #[serde(default)]
    pub value: Option<String>,
    /// A header that carries `${timestamp}` (Unix seconds).
    #[serde(default)]
    pub timestamp_header: Option<String>,
    /// A header that carries `${nonce}`.
    #[serde(default)]
    pub nonce_header: Option<String>,
}

/// What an HMAC `sign` template may name.
pub const SIGN_PLACEHOLDERS: &[&str] = &["method", "path", "query", "body", "timestamp", "nonce"];

/// What an HMAC `value` template may name.
pub const VALUE_PLACEHOLDERS: &[&str] = &["signature", "timestamp", "nonce"];

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HmacAlgorithm {
    #[default]
    Sha256,
    Sha512,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignatureEncoding {
    #[default]
    Hex,
    Base64,
}

/// `{"type": "oauth2-client-credentials", …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OAuth2 {
    pub token_url: String,
    pub client_id_secret: String,
    pub client_secret_secret: String,
    #[serde(default)]
    pub scopes: Vec<String>,
    #[serde(default)]
    pub audience: Option<String>,
    /// How the client proves itself to the token endpoint: HTTP Basic (default) or the form.
    #[serde(default)]
    pub client_auth: ClientAuth,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientAuth {
    #[default]
    Basic,
    Body,
}

impl Auth {
    /// The secrets it names, with the pointer (under `/impl/auth`) of each.
    pub fn secrets(&self) -> Vec<(&'static str, &str)> {
        match self {
            Self::Bearer { secret }
            | Self::Header { secret, .. }
            | Self::Query { secret, .. }
            | Self::Hmac(Hmac { secret, .. }) => vec![("secret", secret)],
            Self::Basic {
                user_secret,
                password_secret,
            } => vec![
                ("userSecret", user_secret),
                ("passwordSecret", password_secret),
            ],
            Self::OAuth2(o) => vec![
                ("clientIdSecret", &o.client_id_secret),
                ("clientSecretSecret", &o.client_secret_secret),
            ],
        }
    }

    /// The header names it sets (dropped on a redirect to another origin).
    pub fn header_names(&self) -> Vec<&str> {
        match self {
            Self::Bearer { .. } | Self::Basic { .. } | Self::OAuth2(_) => vec!["authorization"],
            Self::Header { name, .. } => vec![name],
            Self::Query { .. } => vec![],
            Self::Hmac(h) => [Some(&h.header), h.timestamp_header.as_ref()]
                .into_iter()
                .flatten()
                .chain(&h.nonce_header)
                .map(String::as_str)
                .collect(),
        }
    }
}

/// The token URL as a URL, when it is one toolctl may call: `http(s)`, a literal host, no
/// placeholder.
pub fn token_url(oauth: &OAuth2) -> Result<url::Url, String> {
    if oauth.token_url.contains("${") {
        return Err("tokenUrl takes no placeholders".to_owned());
    }
    super::rules::check_url_shape(&oauth.token_url).map_err(|m| format!("tokenUrl: {m}"))?;
    url::Url::parse(&oauth.token_url).map_err(|e| format!("tokenUrl is not a URL: {e}"))
}

/// Why the token URL of `http`'s auth may not be called under `hosts`, if it may not.
pub fn host_problem(
    http: &super::model::HttpImpl,
    hosts: &super::rules::HostPolicy,
) -> Option<String> {
    let Some(Auth::OAuth2(oauth)) = &http.auth else {
        return None;
    };
    match token_url(oauth) {
        Err(message) => Some(message),
        Ok(url) if !hosts.allows(&url) => Some(hosts.refusal(&url, Some("auth.tokenUrl"))),
        Ok(_) => None,
    }
}

/// The rules of `impl.auth` that need no configuration (its type, algorithm and encoding
/// are known when it parsed): every secret it names is declared, its headers are header
/// names, its templates name only what they may, its token URL is one toolctl may call.
pub fn check(tool: &Tool, auth: &Auth, out: &mut Vec<Violation>) {
    for (field, name) in auth.secrets() {
        if !tool.secrets.iter().any(|s| s == name) {
            out.push(
                Violation::new(
                    format!("/impl/auth/{field}"),
                    format!(
                        "auth names the secret '{name}', which the tool does not declare (add \"{name}\" to \"secrets\")"
                    ),
                )
                .rule("auth"),
            );
        }
    }
    for name in auth.header_names() {
        if let Err(message) = super::rules::check_header_name(name) {
            out.push(Violation::new("/impl/auth", message).rule("auth"));
        }
    }
    match auth {
        Auth::Query { name, .. } if name.is_empty() => out.push(
            Violation::new("/impl/auth/name", "the query parameter needs a name").rule("auth"),
        ),
        Auth::Hmac(h) => {
            for (field, template, allowed) in [
                ("sign", h.sign.as_deref(), SIGN_PLACEHOLDERS),
                ("value", h.value.as_deref(), VALUE_PLACEHOLDERS),
            ] {
                for name in super::rules::placeholder_names(template.unwrap_or_default()) {
                    if !allowed.contains(&name) {
                        out.push(
                            Violation::new(
                                format!("/impl/auth/{field}"),
                                format!(
                                    "${{{name}}} is not something an HMAC {field} template can name: use {}",
                                    allowed
                                        .iter()
                                        .map(|a| format!("${{{a}}}"))
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                ),
                            )
                            .rule("auth"),
                        );
                    }
                }
            }
        }
        Auth::OAuth2(o) => {
            if let Err(message) = token_url(o) {
                out.push(Violation::new("/impl/auth/tokenUrl", message).rule("auth"));
            }
        }
        _ => {}
    }
}

/// The kinds of `impl.auth` `tool new --auth` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkeletonAuth {
    Bearer,
    Hmac,
    OAuth2,
}

/// Give the skeleton of an HTTP tool (`doc`, from [`super::skeleton::tool`]) an `impl.auth`
/// of `kind`, with the secrets it names declared; an OAuth2 token URL is on the tool's own
/// host (which `allowedHosts` holds).
pub fn add_to_skeleton(doc: &mut serde_json::Value, kind: SkeletonAuth) {
    use serde_json::json;
    let url = doc
        .pointer("/impl/urlTemplate")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let origin = super::rules::check_url_shape(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| "https://auth.example.com".to_owned());
    let (auth, secrets) = match kind {
        SkeletonAuth::Bearer => (
            json!({ "type": "bearer", "secret": "API_TOKEN" }),
            json!(["API_TOKEN"]),
        ),
        SkeletonAuth::Hmac => (
            json!({
                "type": "hmac",
                "secret": "SIGNING_KEY",
                "algorithm": "sha256",
                "header": "X-Signature",
                "encoding": "hex",
                "sign": "${timestamp}.${method}.${path}.${body}",
                "timestampHeader": "X-Timestamp"
            }),
            json!(["SIGNING_KEY"]),
        ),
        SkeletonAuth::OAuth2 => (
            json!({
                "type": "oauth2-client-credentials",
                "tokenUrl": format!("{origin}/oauth/token"),
                "clientIdSecret": "CLIENT_ID",
                "clientSecretSecret": "CLIENT_SECRET",
                "scopes": ["read"]
            }),
            json!(["CLIENT_ID", "CLIENT_SECRET"]),
        ),
    };
    doc["impl"]["auth"] = auth;
    doc["secrets"] = secrets;
}
