//! The credentials of `impl.auth` on one request ([`crate::catalog::auth`] says the shapes).
//!
//! - `bearer`, `basic`, `header`, `query`: the secret (basic: `base64(user:password)`) in the
//!   `Authorization` header, a header of its own, or one more query pair (percent-encoded).
//! - `hmac`: the HMAC (SHA-256 or SHA-512, hex or base64) of the `sign` template, `${body}` by
//!   default, over the request exactly as it is sent: `${method}` (upper case), `${path}` and
//!   `${query}` (as encoded in the URL, the query without `?`), `${body}` (the bytes of the
//!   body), `${timestamp}` (Unix seconds) and `${nonce}` (32 random hex digits). The header
//!   holds the `value` template, `${signature}` by default (`t=${timestamp},v1=${signature}`
//!   for a Stripe-style header); `timestampHeader` and `nonceHeader` carry those two.
//! - `oauth2-client-credentials`: a token from `tokenUrl` (RFC 6749 §4.4: a form POST with
//!   the client's id and secret in HTTP Basic, or in the form with `clientAuth: "body"`),
//!   fetched on first use and kept in `.toolctl/oauth2/<hash>.json` (mode 0600; the hash is
//!   of the token URL, the client id, the scopes and the audience; the file holds the token
//!   and its times, never the client's secret). Processes share it: one that needs a new
//!   token takes `.toolctl/oauth2/<hash>.lock`, looks again (another may have fetched one
//!   meanwhile) and fetches only if it must, so concurrent calls make one token request. A
//!   token is renewed before `expires_in` runs out (a tenth of it early, at most a minute; an
//!   hour when the server gives no `expires_in` or 0, a year at most), and once more when the
//!   API answers 401 to it. An answer whose token cannot be sent (empty, a space, a control
//!   character, a byte outside ASCII) or whose `expires_in` is not a number of seconds is
//!   `UPSTREAM_ERROR` and is not kept. The token URL's host must be in `allowedHosts`; no
//!   redirect is followed there.
//!
//! Every secret, and every value made from one (the basic token, the signature, the OAuth2
//! token), goes to the call's redactor before anything is sent, and every header set here is
//! dropped on a redirect to another origin.

use super::http::{Clock, Request, Timed, Values, invalid, transport_error};
use super::{Failure, Options};
use crate::base::error_code::ErrorCode;
use crate::base::http::encode_component;
use crate::base::redact::Redactor;
use crate::catalog::auth::{Auth, ClientAuth, Hmac, HmacAlgorithm, OAuth2, SignatureEncoding};
use crate::catalog::rules::{HostPolicy, PLACEHOLDER};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::Mac;
use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::Path;

/// Put `auth`'s credentials on `request`. With OAuth2, `refused` is a token the API just
/// answered 401 to (a new one is fetched); the token used is returned.
pub(super) fn apply(
    auth: &Auth,
    request: &mut Request,
    values: &mut Values,
    options: &Options,
    clock: &Clock,
    refused: Option<&str>,
) -> Result<Option<String>, Failure> {
    match auth {
        Auth::Bearer { secret } => {
            let secret = values.secret(secret)?;
            set(request, AUTHORIZATION, &format!("Bearer {secret}"))?;
        }
        Auth::Basic {
            user_secret,
            password_secret,
        } => {
            let user = values.secret(user_secret)?;
            let password = values.password(password_secret)?;
            let token = STANDARD.encode(format!("{user}:{password}"));
            values.redactor.add(&token);
            set(request, AUTHORIZATION, &format!("Basic {token}"))?;
        }
        Auth::Header { name, secret } => {
            let secret = values.secret(secret)?;
            set(request, header_name(name)?, &secret)?;
        }
        Auth::Query { name, secret } => {
            let secret = values.secret(secret)?;
            let pair = format!("{}={}", encode_component(name), encode_component(&secret));
            let query = match request.url.query() {
                Some(query) if !query.is_empty() => format!("{query}&{pair}"),
                _ => pair,
            };
            request.url.set_query(Some(&query));
        }
        Auth::Hmac(hmac) => sign(hmac, request, values)?,
        Auth::OAuth2(oauth) => {
            let token = oauth2_token(oauth, values, options, clock, refused)?;
            set(request, AUTHORIZATION, &format!("Bearer {token}"))?;
            return Ok(Some(token));
        }
    }
    Ok(None)
}

fn header_name(name: &str) -> Result<HeaderName, Failure> {
    HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| invalid(format!("auth: '{name}' is not a header name")))
}

/// Set a credential header: marked sensitive, and dropped on a redirect to another origin.
fn set(request: &mut Request, name: HeaderName, value: &str) -> Result<(), Failure> {
    let mut value = HeaderValue::from_str(value).map_err(|_| {
        invalid(format!(
            "auth: the value of header '{name}' is not valid in a header"
        ))
    })?;
    value.set_sensitive(true);
    request.secret_headers.push(name.clone());
    request.headers.insert(name, value);
    Ok(())
}

/// `hmac`: sign the request as it will be sent.
fn sign(hmac: &Hmac, request: &mut Request, values: &mut Values) -> Result<(), Failure> {
    let key = values.secret(&hmac.secret)?;
    let timestamp = jiff::Timestamp::now().as_second().to_string();
    let nonce = format!("{:032x}", fastrand::u128(..));
    let mut message = Vec::new();
    let template = hmac.sign.as_deref().unwrap_or("${body}");
    let mut last = 0;
    for found in PLACEHOLDER.captures_iter(template) {
        let Some(whole) = found.get(0) else { continue };
        message.extend_from_slice(&template.as_bytes()[last..whole.start()]);
        let part: &[u8] = match &found[1] {
            "method" => request.method.as_str().as_bytes(),
            "path" => request.url.path().as_bytes(),
            "query" => request.url.query().unwrap_or_default().as_bytes(),
            "body" => request.body.as_deref().unwrap_or_default(),
            "timestamp" => timestamp.as_bytes(),
            "nonce" => nonce.as_bytes(),
            other => {
                return Err(invalid(format!(
                    "auth.sign: ${{{other}}} is not part of a request"
                )));
            }
        };
        message.extend_from_slice(part);
        last = whole.end();
    }
    message.extend_from_slice(&template.as_bytes()[last..]);
    let mac = match hmac.algorithm {
        HmacAlgorithm::Sha256 => digest::<hmac::Hmac<sha2::Sha256>>(key.as_bytes(), &message)?,
        HmacAlgorithm::Sha512 => digest::<hmac::Hmac<sha2::Sha512>>(key.as_bytes(), &message)?,
    };
    let signature = match hmac.encoding {
        SignatureEncoding::Hex => hex::encode(&mac),
        SignatureEncoding::Base64 => STANDARD.encode(&mac),
    };
    values.redactor.add(&signature);
    let value = fill(
        hmac.value.as_deref().unwrap_or("${signature}"),
        &[
            ("signature", &signature),
            ("timestamp", &timestamp),
            ("nonce", &nonce),
        ],
    )?;
    set(request, header_name(&hmac.header)?, &value)?;
    if let Some(name) = &hmac.timestamp_header {
        set(request, header_name(name)?, &timestamp)?;
    }
    if let Some(name) = &hmac.nonce_header {
        set(request, header_name(name)?, &nonce)?;
    }
    Ok(())
}

/// The MAC of `message` under `key`. HMAC takes a key of any length, so the error cannot
/// happen; it is still an error, never a signature under some other key.
fn digest<M: Mac + hmac::digest::KeyInit>(key: &[u8], message: &[u8]) -> Result<Vec<u8>, Failure> {
    let mut mac = <M as hmac::digest::KeyInit>::new_from_slice(key)
        .map_err(|e| Failure::new(ErrorCode::Internal, format!("cannot make the HMAC: {e}")))?;
    mac.update(message);
    Ok(mac.finalize().into_bytes().to_vec())
}

/// `template` with each `${name}` of `parts` replaced.
fn fill(template: &str, parts: &[(&str, &str)]) -> Result<String, Failure> {
    let mut out = String::new();
    let mut last = 0;
    for found in PLACEHOLDER.captures_iter(template) {
        let Some(whole) = found.get(0) else { continue };
        out.push_str(&template[last..whole.start()]);
        let Some((_, value)) = parts.iter().find(|(name, _)| *name == &found[1]) else {
            return Err(invalid(format!(
                "auth.value: ${{{}}} is not the signature, the timestamp or the nonce",
                &found[1]
            )));
        };
        out.push_str(value);
        last = whole.end();
    }
    out.push_str(&template[last..]);
    Ok(out)
}

/// The folder of cached OAuth2 tokens inside `.toolctl/`.
pub const TOKEN_DIR: &str = "oauth2";

/// How much of a token's life is cut off (renewed early), at most.
const EARLY_AT_MOST: f64 = 60.0;

/// The life of a token whose server gave no `expires_in`.
const UNSAID_LIFE: f64 = 3600.0;

/// The longest a token is kept, whatever `expires_in` says (a year).
const LONGEST_LIFE: f64 = 365.0 * 24.0 * 3600.0;

/// Whether `token` can be sent as `Authorization: Bearer <token>`: printable ASCII without
/// spaces (RFC 6750's b64token and what servers send beyond it), never empty.
fn is_bearer_token(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic())
}

/// The most bytes of a token endpoint's answer read.
const TOKEN_RESPONSE_CAP: u64 = 64 * 1024;

/// A token as `.toolctl/oauth2/<hash>.json` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cached {
    access_token: String,
    /// Unix seconds: renewed from then on.
    refresh_at: f64,
    /// Unix seconds, as the server said.
    expires_at: f64,
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// The cached token at `path` when it is still good and not the one refused. A cache file
/// that cannot be used is a miss, and the token fetched replaces it: one that is not a
/// regular file or is too large ([`crate::base::capped`]: never a hang on a FIFO or memory
/// without end on `/dev/zero`), not JSON, or not a token.
fn cached(path: &Path, refused: Option<&str>) -> Option<Cached> {
    let text = crate::base::capped::read_bytes(path, None).ok()?;
    let token: Cached = serde_json::from_slice(&text).ok()?;
    (token.refresh_at > unix_now() && Some(token.access_token.as_str()) != refused).then_some(token)
}

/// `oauth2-client-credentials`: a good token, from the cache or fetched (see the module
/// comment).
fn oauth2_token(
    oauth: &OAuth2,
    values: &mut Values,
    options: &Options,
    clock: &Clock,
    refused: Option<&str>,
) -> Result<String, Failure> {
    let url = crate::catalog::auth::token_url(oauth).map_err(invalid)?;
    if !options.hosts.allows(&url) {
        return Err(Failure::new(
            ErrorCode::HostNotAllowed,
            format!("auth.tokenUrl: {}", options.hosts.refusal(&url, None)),
        ));
    }
    let client_id = values.secret(&oauth.client_id_secret)?;
    let client_secret = values.secret(&oauth.client_secret_secret)?;
    let key = {
        use sha2::Digest;
        let scopes = oauth.scopes.join(" ");
        let audience = oauth.audience.as_deref().unwrap_or_default();
        let text = [url.as_str(), &client_id, &scopes, audience].join("\n");
        hex::encode(&sha2::Sha256::digest(text.as_bytes())[..16])
    };
    let dir = options.state_dir.join(TOKEN_DIR);
    let path = dir.join(format!("{key}.json"));
    if let Some(token) = cached(&path, refused) {
        values.redactor.add(&token.access_token);
        return Ok(token.access_token);
    }
    let state_failed = |e: crate::catalog::Error| {
        Failure::new(
            ErrorCode::Internal,
            format!("cannot keep the OAuth2 token: {e}"),
        )
        .with_hint(format!(
            "toolctl keeps OAuth2 tokens in {}: make it a folder this user can write, or remove what is in the way there",
            dir.display()
        ))
    };
    crate::catalog::store::create_state_dir(&dir).map_err(state_failed)?;
    let _lock = crate::catalog::lock::acquire(&dir.join(format!("{key}.lock")), clock.left())
        .map_err(|e| match e {
            crate::catalog::Error::LockTimeout { .. } => {
                clock.timed_out("no OAuth2 token came (another call was fetching one)")
            }
            other => state_failed(other),
        })?;
    // Another process may have fetched one while this one waited for the lock.
    if let Some(token) = cached(&path, refused) {
        values.redactor.add(&token.access_token);
        return Ok(token.access_token);
    }
    let token = fetch(
        oauth,
        url,
        &options.hosts,
        &client_id,
        &client_secret,
        clock,
        &mut values.redactor,
    )?;
    let bytes = serde_json::to_vec(&token).unwrap_or_default();
    crate::catalog::store::write_private(&path, &bytes).map_err(state_failed)?;
    Ok(token.access_token)
}

/// Ask the token endpoint for a token (RFC 6749 §4.4).
fn fetch(
    oauth: &OAuth2,
    url: url::Url,
    hosts: &HostPolicy,
    client_id: &str,
    client_secret: &str,
    clock: &Clock,
    redactor: &mut Redactor,
) -> Result<Cached, Failure> {
    use reqwest::header::{ACCEPT, CONTENT_TYPE};
    let scopes = oauth.scopes.join(" ");
    let mut form = vec![("grant_type", "client_credentials")];
    if !scopes.is_empty() {
        form.push(("scope", &scopes));
    }
    if let Some(audience) = &oauth.audience {
        form.push(("audience", audience));
    }
    if oauth.client_auth == ClientAuth::Body {
        form.push(("client_id", client_id));
        form.push(("client_secret", client_secret));
    }
    let body = form
        .iter()
        .map(|(k, v)| format!("{k}={}", encode_component(v)))
        .collect::<Vec<_>>()
        .join("&");
    let client = crate::base::http::client(
        reqwest::redirect::Policy::none(),
        Some(super::http::guarded_dns(hosts)),
    )
    .map_err(|e| {
        Failure::new(
            ErrorCode::Internal,
            format!("cannot make an HTTP client: {e}"),
        )
    })?;
    let mut builder = client
        .post(url)
        .timeout(clock.left())
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(ACCEPT, "application/json")
        .body(body);
    if oauth.client_auth == ClientAuth::Basic {
        // RFC 6749 §2.3.1: each form-encoded, then HTTP Basic.
        let basic = STANDARD.encode(format!(
            "{}:{}",
            encode_component(client_id),
            encode_component(client_secret)
        ));
        redactor.add(&basic);
        let mut value = HeaderValue::from_str(&format!("Basic {basic}"))
            .map_err(|_| invalid("the client credentials do not fit in a header"))?;
        value.set_sensitive(true);
        builder = builder.header(AUTHORIZATION, value);
    }
    let response = builder
        .send()
        .map_err(|e| transport_error(&e, redactor, clock))?;
    let status = response.status().as_u16();
    let body = crate::base::http::read_capped(
        Timed {
            inner: response,
            clock,
        },
        TOKEN_RESPONSE_CAP,
    )
    .map_err(|_| {
        Failure::new(
            ErrorCode::UpstreamError,
            "the token endpoint's answer could not be read whole",
        )
    })?;
    let text = String::from_utf8_lossy(&body);
    let upstream = |redactor: &Redactor, message: String| {
        let excerpt: String = redactor.text(&text).chars().take(512).collect();
        Failure::new(ErrorCode::UpstreamError, message)
            .with_details(json!({ "status": status, "body": excerpt }))
    };
    if !(200..300).contains(&status) {
        return Err(upstream(
            redactor,
            format!("the OAuth2 token endpoint answered HTTP {status}"),
        ));
    }
    let answer: Value = serde_json::from_slice(&body).map_err(|e| {
        upstream(
            redactor,
            format!("the OAuth2 token answer is not JSON: {e}"),
        )
    })?;
    let Some(token) = answer.get("access_token").and_then(Value::as_str) else {
        return Err(upstream(
            redactor,
            "the OAuth2 token answer holds no access_token".to_owned(),
        ));
    };
    redactor.add(token);
    // Checked before it is kept: a token that cannot be sent would fail every call of its life.
    if !is_bearer_token(token) {
        return Err(upstream(
            redactor,
            "the OAuth2 token answer's access_token cannot be sent as a bearer token (empty, or holding a space, a control character or a byte outside ASCII)".to_owned(),
        ));
    }
    if let Some(kind) = answer.get("token_type").and_then(Value::as_str)
        && !kind.eq_ignore_ascii_case("bearer")
    {
        return Err(upstream(
            redactor,
            format!("the OAuth2 token is of type '{kind}'; toolctl sends bearer tokens only"),
        ));
    }
    let life = match answer.get("expires_in") {
        None | Some(Value::Null) => UNSAID_LIFE,
        Some(value) => value
            .as_f64()
            .or_else(|| value.as_str()?.trim().parse().ok())
            .filter(|life: &f64| life.is_finite() && *life >= 0.0)
            // 0: said, but no life at all; read as unsaid.
            .map(|life| if life == 0.0 { UNSAID_LIFE } else { life })
            .ok_or_else(|| {
                upstream(
                    redactor,
                    format!(
                        "the OAuth2 token answer's expires_in ({value}) is not a number of seconds"
                    ),
                )
            })?
            .min(LONGEST_LIFE),
    };
    let now = unix_now();
    Ok(Cached {
        access_token: token.to_owned(),
        refresh_at: now + life - (life / 10.0).min(EARLY_AT_MOST),
        expires_at: now + life,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's two recipes (their vectors are checked with Python's hmac by the CLI
    /// tests).
    #[test]
    fn the_readme_vectors_come_out_of_digest_and_fill() {
        let mac =
            digest::<hmac::Hmac<sha2::Sha256>>(b"It's a Secret to Everybody", b"Hello, World!")
                .unwrap();
        assert_eq!(
            fill("sha256=${signature}", &[("signature", &hex::encode(&mac))]).unwrap(),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
        let mac = digest::<hmac::Hmac<sha2::Sha256>>(
            b"whsec_test_secret",
            br#"1700000000.{"id":"evt_1"}"#,
        )
        .unwrap();
        assert_eq!(
            fill(
                "t=${timestamp},v1=${signature}",
                &[
                    ("signature", &hex::encode(&mac)),
                    ("timestamp", "1700000000")
                ]
            )
            .unwrap(),
            "t=1700000000,v1=248a374f50f943a28b0f6ab50faf9a7e7e29b710fa26df9fb1618b9bf8ea9c9a"
        );
        assert!(fill("${secret}", &[("signature", "x")]).is_err());
    }
}
