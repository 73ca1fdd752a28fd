//! HTTP tools: a request built from the tool's templates, sent with reqwest.
//!
//! **Templates cannot be injected into.** A `${name}` takes the argument `name`, else the
//! catalog secret `name` ([`crate::base::secrets`]), never an environment variable. Where it lands
//! decides how it is written:
//! - the URL: the host is literal (checked when the tool is loaded: no placeholder before the
//!   path), and a value is percent-encoded as one component (every byte but `A–Z a–z 0–9 - . _
//!   ~`), so it cannot add a path segment, a query parameter or a fragment;
//! - a JSON body: the template is parsed as JSON first and placeholders are replaced inside
//!   the parsed tree — a string that is exactly `"${name}"` becomes the argument's JSON value,
//!   placeholders inside a longer string become text — and the tree is serialised again, so a
//!   value can only ever be a value;
//! - a text body: the value as text; a form body (`application/x-www-form-urlencoded`): the
//!   value percent-encoded;
//! - a header: the value as text, refused if it holds CR, LF or NUL (a new header line).
//!
//! **Where requests go:** the host must be in `allowedHosts`, checked before the request and
//! again on every redirect (at most 10), on the URL as parsed (`http://allowed@evil/` goes to
//! `evil`).
//!
//! **Retries** (`maxRetries`, default 2) only for idempotent methods (GET, HEAD, PUT, DELETE,
//! OPTIONS), on connection errors, 429 and 5xx: exponential back-off from 100 ms with ±50%
//! jitter, or the server's `Retry-After` (seconds or an HTTP date), each wait at most 10 s.
//! `timeoutMs` (default 10 s) bounds each attempt. The response is read up to
//! `maxResponseBytes` (default 1 MiB) and the call fails as soon as it would go past it.

use super::{Failure, Options};
use crate::base::error_code::ErrorCode;
use crate::base::http::{CappedRead, encode_component};
use crate::base::redact::Redactor;
use crate::base::secrets::Secrets;
use crate::catalog::ToolEntry;
use crate::catalog::model::{ErrorMode, HttpImpl, ResponseEncoding};
use crate::catalog::rules::PLACEHOLDER;
use crate::catalog::rules::{HostPolicy, check_url_template};
use regex::Regex;
use serde_json::{Map, Value, json};

use std::time::Duration;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_RETRIES: u32 = 2;
const DEFAULT_MAX_RESPONSE: u64 = 1024 * 1024;
const MAX_REDIRECTS: usize = 10;
const BACKOFF_BASE: Duration = Duration::from_millis(100);
const MAX_WAIT: Duration = Duration::from_secs(10);
/// How much of an error response's body an error shows.
const BODY_EXCERPT: usize = 2048;

/// A value as it is (bodies and headers as text).
fn verbatim(value: &str) -> Result<String, Failure> {
    Ok(value.to_owned())
}

/// What `${name}` stands for in one call.
struct Values<'a> {
    args: &'a Map<String, Value>,
    secrets: Option<Secrets>,
    redactor: Redactor,
}

impl Values<'_> {
    fn get(&mut self, name: &str) -> Result<Value, Failure> {
        if let Some(value) = self.args.get(name) {
            return Ok(value.clone());
        }
        if self.secrets.is_none() {
            self.secrets = Some(Secrets::load()?);
        }
        match self.secrets.as_ref().and_then(|s| s.get(name)) {
            Some(secret) => {
                self.redactor.add(&secret);
                Ok(Value::String(secret))
            }
            None => Err(Failure::new(
                ErrorCode::ValidationError,
                format!("${{{name}}} has no value: no argument and no catalog secret of that name"),
            )
            .with_hint(format!(
                "pass the argument '{name}', or set the secret (TOOLCTL_SECRET_{name}, or secrets.json)"
            ))),
        }
    }

    fn text(&mut self, name: &str) -> Result<String, Failure> {
        Ok(match self.get(name)? {
            Value::String(s) => s,
            Value::Null => String::new(),
            other => other.to_string(),
        })
    }

    /// `template` with every placeholder replaced by `write(value text)`.
    fn render(
        &mut self,
        template: &str,
        write: impl Fn(&str) -> Result<String, Failure>,
    ) -> Result<String, Failure> {
        let mut out = String::with_capacity(template.len());
        let mut last = 0;
        for found in PLACEHOLDER.captures_iter(template) {
            let Some(whole) = found.get(0) else { continue };
            out.push_str(&template[last..whole.start()]);
            out.push_str(&write(&self.text(&found[1])?)?);
            last = whole.end();
        }
        out.push_str(&template[last..]);
        Ok(out)
    }

    /// A JSON body template with its placeholders replaced inside the parsed tree.
    fn render_json(&mut self, template: &Value) -> Result<Value, Failure> {
        Ok(match template {
            Value::String(s) => match PLACEHOLDER.captures(s) {
                Some(found) if found.get(0).is_some_and(|m| m.as_str() == s) => {
                    self.get(&found[1])?
                }
                Some(_) => Value::String(self.render(s, verbatim)?),
                None => template.clone(),
            },
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.render_json(item))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), self.render_json(v)?)))
                    .collect::<Result<_, Failure>>()?,
            ),
            other => other.clone(),
        })
    }
}

/// The request of one call, before it is sent.
struct Request {
    method: reqwest::Method,
    url: url::Url,
    headers: reqwest::header::HeaderMap,
    body: Option<Vec<u8>>,
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(ErrorCode::ValidationError, message)
}

fn build(spec: &HttpImpl, values: &mut Values, hosts: &HostPolicy) -> Result<Request, Failure> {
    use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue};
    let method = reqwest::Method::from_bytes(spec.method.to_ascii_uppercase().as_bytes())
        .map_err(|_| invalid(format!("method '{}' is not an HTTP method", spec.method)))?;

    // The URL: a literal authority, then the rest with encoded values.
    let template = &spec.url_template;
    check_url_template(template, hosts).map_err(|m| Failure::new(ErrorCode::HostNotAllowed, m))?;
    let scheme_end = template.find("://").map_or(0, |i| i + 3);
    let authority_end = template[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(template.len(), |i| scheme_end + i);
    // The path and the query apart: a value alone in a path segment may not be `.` or `..`
    // (the URL parser would resolve it: `/users/${id}/profile` with `..` is `/profile`).
    let rest = &template[authority_end..];
    let path_end = rest.find(['?', '#']).unwrap_or(rest.len());
    let path = values.render(&rest[..path_end], |value| {
        if value == "." || value == ".." {
            return Err(invalid(format!(
                "'{value}' cannot stand in a URL path: it would leave its segment"
            )));
        }
        Ok(encode_component(value))
    })?;
    let query = values.render(&rest[path_end..], |v| Ok(encode_component(v)))?;
    let rest = format!("{path}{query}");
    let url = url::Url::parse(&format!("{}{rest}", &template[..authority_end]))
        .map_err(|e| invalid(format!("urlTemplate gives no URL: {e}")))?;
    if !hosts.allows(&url) {
        return Err(host_refused(&url));
    }

    let mut headers = reqwest::header::HeaderMap::new();
    for (name, template) in &spec.headers {
        let template = match template {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let value = values.render(&template, verbatim)?;
        if value.contains(['\r', '\n', '\0']) {
            return Err(invalid(format!(
                "header '{name}': a value holds a line break (CR/LF/NUL), which would start a new header"
            )));
        }
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid(format!("'{name}' is not a header name")))?;
        let value = HeaderValue::from_str(&value).map_err(|_| {
            invalid(format!(
                "header '{name}': the value is not valid in a header"
            ))
        })?;
        headers.insert(name, value);
    }

    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let body = match &spec.body_template {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(tree) if !content_type.starts_with("text/") && !is_form(&content_type) => {
                Some(json_body(values.render_json(&tree)?, &mut headers))
            }
            _ if is_form(&content_type) => {
                Some(values.render(s, |v| Ok(encode_component(v)))?.into_bytes())
            }
            _ => Some(values.render(s, verbatim)?.into_bytes()),
        },
        Some(tree) => Some(json_body(values.render_json(tree)?, &mut headers)),
    };
    Ok(Request {
        method,
        url,
        headers,
        body,
    })
}

fn is_form(content_type: &str) -> bool {
    content_type.starts_with("application/x-www-form-urlencoded")
}

fn json_body(tree: Value, headers: &mut reqwest::header::HeaderMap) -> Vec<u8> {
    headers.entry(reqwest::header::CONTENT_TYPE).or_insert(
        reqwest::header::HeaderValue::from_static("application/json"),
    );
    serde_json::to_vec(&tree).unwrap_or_default()
}

fn host_refused(url: &url::Url) -> Failure {
    Failure::new(
        ErrorCode::HostNotAllowed,
        format!(
            "host '{}' is not in allowedHosts of toolctl.json",
            url.host_str().unwrap_or_default()
        ),
    )
}

/// What the response must become.
enum Extract {
    None,
    Path(serde_json_path::JsonPath),
    Regex(Regex),
}

fn extractor(spec: &HttpImpl) -> Result<Extract, Failure> {
    Ok(match spec.extract_expr.as_deref() {
        None | Some("") => Extract::None,
        Some(expr) if expr.starts_with('$') => Extract::Path(
            serde_json_path::JsonPath::parse(expr)
                .map_err(|e| invalid(format!("extractExpr '{expr}' is not a JSONPath: {e}")))?,
        ),
        Some(expr) => Extract::Regex(
            Regex::new(expr)
                .map_err(|e| invalid(format!("extractExpr '{expr}' is not a regex: {e}")))?,
        ),
    })
}

/// Call the HTTP tool `entry` with checked arguments.
pub fn call(
    entry: &ToolEntry,
    args: &Map<String, Value>,
    options: &Options,
) -> Result<Value, Failure> {
    let hosts = &options.hosts;
    let Some(spec) = entry.tool.http_impl() else {
        return Err(invalid(format!(
            "{}: its impl is not an HTTP one",
            entry.reference()
        )));
    };
    let mut values = Values {
        args,
        secrets: None,
        redactor: Redactor::default(),
    };
    let redact_failure = |failure: Failure, redactor: &Redactor| redact(failure, redactor);
    let request =
        build(&spec, &mut values, hosts).map_err(|f| redact_failure(f, &values.redactor))?;
    let extract = extractor(&spec)?;
    let redactor = values.redactor;
    let result = send(&entry.tool, &spec, request, options, &redactor)
        .and_then(|(status, body)| respond(&spec, &extract, status, &body, &redactor));
    match result {
        Ok(value) => Ok(redactor.value(value)),
        Err(failure) => Err(redact(failure.ran(), &redactor)),
    }
}

fn redact(failure: Failure, redactor: &Redactor) -> Failure {
    let (code, ran) = (failure.code, failure.ran);
    let text = failure.into_text();
    let mut out =
        Failure::new(code, redactor.text(&text.message)).with_details(redactor.value(text.details));
    if let Some(hint) = text.hint {
        out = out.with_hint(redactor.text(&hint));
    }
    if ran { out.ran() } else { out }
}

/// Send with retries; the status and the body read under the cap.
fn send(
    tool: &crate::catalog::model::Tool,
    spec: &HttpImpl,
    request: Request,
    options: &Options,
    redactor: &Redactor,
) -> Result<(u16, Vec<u8>), Failure> {
    let policy_hosts = options.hosts.clone();
    let client = crate::base::http::client(reqwest::redirect::Policy::custom(move |attempt| {
        // `previous()` holds the first URL too: 10 redirects are 11 URLs.
        if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else if policy_hosts.allows(attempt.url()) {
            attempt.follow()
        } else {
            let host = attempt.url().host_str().unwrap_or_default().to_owned();
            attempt.error(RedirectRefused(host))
        }
    }))
    .map_err(|e| {
        Failure::new(
            ErrorCode::Internal,
            format!("cannot make an HTTP client: {e}"),
        )
    })?;
    let idempotent = matches!(
        request.method.as_str(),
        "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS"
    );
    let retries = if idempotent {
        tool.max_retries.unwrap_or(DEFAULT_RETRIES)
    } else {
        0
    };
    let cap = tool.max_response_bytes.unwrap_or(DEFAULT_MAX_RESPONSE);
    let timeout = spec
        .timeout_ms
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    let mut attempt = 0;
    loop {
        // Each attempt gets timeoutMs, or what is left of a batch's wait_ms.
        let limit = options.bounded(timeout);
        if limit.is_zero() {
            return Err(Failure::new(
                ErrorCode::Timeout,
                "no time was left for the request",
            ));
        }
        let mut builder = client
            .request(request.method.clone(), request.url.clone())
            .timeout(limit)
            .headers(request.headers.clone());
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let retry_after = match builder.send() {
            Ok(response) => {
                let status = response.status().as_u16();
                if attempt < retries && (status == 429 || status >= 500) {
                    Some(retry_after(&response))
                } else {
                    return read_capped(response, cap).map(|body| (status, body));
                }
            }
            Err(e) if e.is_connect() && attempt < retries => Some(None),
            Err(e) => return Err(transport_error(&e, redactor)),
        };
        let wait = retry_after
            .flatten()
            .unwrap_or_else(|| backoff(attempt))
            .min(MAX_WAIT);
        std::thread::sleep(options.bounded(wait));
        attempt += 1;
    }
}

/// A redirect to a host outside `allowedHosts`.
#[derive(Debug)]
struct RedirectRefused(String);

impl std::fmt::Display for RedirectRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "redirect to host '{}', which is not in allowedHosts",
            self.0
        )
    }
}

impl std::error::Error for RedirectRefused {}

fn transport_error(e: &reqwest::Error, redactor: &Redactor) -> Failure {
    // The whole chain, without the URL (it may hold a secret; redacted anyway).
    let mut message = e.to_string();
    for cause in crate::base::causes(e) {
        if let Some(refused) = cause.downcast_ref::<RedirectRefused>() {
            return Failure::new(ErrorCode::HostNotAllowed, refused.to_string());
        }
        message.push_str(&format!(": {cause}"));
    }
    let code = if e.is_timeout() {
        ErrorCode::Timeout
    } else {
        ErrorCode::UpstreamError
    };
    Failure::new(code, redactor.text(&message))
}

/// Exponential back-off with ±50% jitter.
fn backoff(attempt: u32) -> Duration {
    let base = BACKOFF_BASE.saturating_mul(1 << attempt.min(16));
    base.mul_f64(0.5 + fastrand::f64())
}

/// The wait a `Retry-After` header asks for (seconds, or an HTTP date).
fn retry_after(response: &reqwest::blocking::Response) -> Option<Duration> {
    let text = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = jiff::fmt::rfc2822::parse(text).ok()?.timestamp();
    let wait = when.duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// The body, read while it arrives, failing as soon as it passes `cap` bytes.
fn read_capped(response: reqwest::blocking::Response, cap: u64) -> Result<Vec<u8>, Failure> {
    crate::base::http::read_capped(response, cap).map_err(|failed| match failed {
        CappedRead::Failed(e) => {
            let code = if e.kind() == std::io::ErrorKind::TimedOut {
                ErrorCode::Timeout
            } else {
                ErrorCode::UpstreamError
            };
            Failure::new(code, format!("reading the response failed: {e}"))
        }
        CappedRead::TooLarge => Failure::new(
            ErrorCode::UpstreamError,
            format!("the response is larger than maxResponseBytes ({cap} bytes)"),
        )
        .with_details(json!({ "maxResponseBytes": cap })),
    })
}

/// The value of a response: success codes, encoding, extraction, error mode.
fn respond(
    spec: &HttpImpl,
    extract: &Extract,
    status: u16,
    body: &[u8],
    redactor: &Redactor,
) -> Result<Value, Failure> {
    let encoding = spec.response_encoding.unwrap_or(ResponseEncoding::Json);
    let empty = match encoding {
        ResponseEncoding::Json => Value::Null,
        ResponseEncoding::Text => Value::String(String::new()),
    };
    let fail = |failure: Failure| match spec.error_mode.unwrap_or(ErrorMode::Fail) {
        ErrorMode::Fail => Err(failure),
        ErrorMode::Empty => Ok(empty.clone()),
    };
    let success = match &spec.success_codes {
        Some(codes) if !codes.is_empty() => codes.contains(&status),
        _ => (200..300).contains(&status),
    };
    let text = String::from_utf8_lossy(body);
    if !success {
        // Redacted before it is cut, so a cut cannot leave part of a secret.
        let excerpt: String = redactor.text(&text).chars().take(BODY_EXCERPT).collect();
        return fail(
            Failure::new(
                ErrorCode::UpstreamError,
                format!("the server answered HTTP {status}"),
            )
            .with_details(json!({ "status": status, "body": excerpt })),
        );
    }
    let decoded = match encoding {
        // A regex reads the text as it is, whatever the encoding.
        _ if matches!(extract, Extract::Regex(_)) => Value::Null,
        ResponseEncoding::Text => Value::String(text.clone().into_owned()),
        ResponseEncoding::Json if body.is_empty() => Value::Null,
        ResponseEncoding::Json => match serde_json::from_slice(body) {
            Ok(value) => value,
            Err(e) => {
                return fail(Failure::new(
                    ErrorCode::UpstreamError,
                    format!("the response is not JSON: {e}"),
                ));
            }
        },
    };
    let nothing = || {
        Failure::new(
            ErrorCode::UpstreamError,
            format!(
                "extractExpr '{}' matched nothing in the response",
                spec.extract_expr.as_deref().unwrap_or_default()
            ),
        )
    };
    match extract {
        Extract::None => Ok(decoded),
        Extract::Path(path) => {
            let tree = match &decoded {
                Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
                other => other.clone(),
            };
            let found: Vec<Value> = path.query(&tree).all().into_iter().cloned().collect();
            match found.len() {
                0 => fail(nothing()),
                1 => Ok(found.into_iter().next().unwrap_or_default()),
                _ => Ok(Value::Array(found)),
            }
        }
        Extract::Regex(regex) => match regex.captures(&text) {
            Some(found) => Ok(Value::String(
                found
                    .get(1)
                    .or_else(|| found.get(0))
                    .map_or_else(String::new, |m| m.as_str().to_owned()),
            )),
            None => fail(nothing()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(args: Value) -> Map<String, Value> {
        args.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn url_values_are_one_encoded_component() {
        let args = values(json!({ "q": "a/b?c=d&e#f g", "n": 3 }));
        let mut v = Values {
            args: &args,
            secrets: Some(Secrets::default()),
            redactor: Redactor::default(),
        };
        let rendered = v
            .render("/search/${q}?n=${n}", |v| Ok(encode_component(v)))
            .unwrap();
        assert_eq!(rendered, "/search/a%2Fb%3Fc%3Dd%26e%23f%20g?n=3");
    }

    #[test]
    fn json_bodies_take_values_inside_the_tree() {
        let args = values(json!({ "q": "say \"hi\"\n\\", "n": 3, "tags": ["a"] }));
        let mut v = Values {
            args: &args,
            secrets: Some(Secrets::default()),
            redactor: Redactor::default(),
        };
        let body = v
            .render_json(
                &json!({ "query": "${q}", "limit": "${n}", "tags": "${tags}", "note": "q=${q}" }),
            )
            .unwrap();
        assert_eq!(
            body,
            json!({ "query": "say \"hi\"\n\\", "limit": 3, "tags": ["a"], "note": "q=say \"hi\"\n\\" })
        );
    }

    #[test]
    fn a_missing_value_is_a_validation_error() {
        let args = values(json!({}));
        let mut v = Values {
            args: &args,
            secrets: Some(Secrets::default()),
            redactor: Redactor::default(),
        };
        let failure = v
            .render("/x/${nope}", |v| Ok(encode_component(v)))
            .unwrap_err();
        assert_eq!(failure.code, ErrorCode::ValidationError);
        assert!(failure.message().contains("${nope}"));
    }
}
