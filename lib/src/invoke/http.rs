//! HTTP tools: a request built from the tool's templates, sent with reqwest.
//!
//! **Templates cannot be injected into.** A `${name}` is a secret the tool declares in
//! `"secrets"` ([`crate::base::secrets`]), else the argument `name`, else its `default` in
//! `argSchema` — decided when the tool is put ([`crate::catalog::templates`]), never by the
//! environment. An argument without a value leaves out what holds it (a query or form pair, a
//! header, a JSON member or element). Where a value lands decides how it is written:
//! - the URL: the host is literal (checked when the tool is loaded: no placeholder before the
//!   path), and a value is percent-encoded as one component (every byte but `A–Z a–z 0–9 - . _
//!   ~`), so it cannot add a path segment, a query parameter or a fragment;
//! - a JSON body: the template is parsed as JSON first (one that does not parse is refused,
//!   never spliced as text) and placeholders are replaced inside the parsed tree — a string
//!   that is exactly `"${name}"` becomes the argument's JSON value, placeholders inside a
//!   longer string become text — and the tree is serialised again, so a value can only ever
//!   be a value;
//! - a text body: the value as text; a form body (`application/x-www-form-urlencoded`): the
//!   value percent-encoded;
//! - a header: the value as text, refused if it holds CR, LF or NUL (a new header line).
//!
//! **Where requests go:** the host must be in `allowedHosts`, checked before the request and
//! again on every redirect (at most 10, followed here), on the URL as parsed
//! (`http://allowed@evil/` goes to `evil`). A redirect to another origin drops the headers
//! that may carry a secret; no `Referer` is sent.
//!
//! **Retries** (`maxRetries`, default 2, at most 10) only for idempotent methods (GET, HEAD,
//! PUT, DELETE, OPTIONS), on connection errors, 429 and 5xx: exponential back-off from 100 ms
//! with ±50% jitter, or the server's `Retry-After` (seconds or an HTTP date), each wait at most
//! 10 s. `timeoutMs` (default 10 s) bounds the whole call, retries and the body included. The
//! response is read up to `maxResponseBytes` (default 1 MiB) and the call fails as soon as it
//! would go past it.
//!
//! The request building, sending, retries and reading are one path, kept in one file to be
//! read top to bottom; auth, limits and SSE are modules of their own.

use super::{Failure, Options, auth, limits, sse};
use crate::base::error_code::ErrorCode;
use crate::base::http::{Blocked, CappedRead, GuardedDns, encode_component};
use crate::base::redact::Redactor;
use crate::base::secrets::{Secrets, Unset};
use crate::catalog::ToolEntry;
use crate::catalog::model::{ErrorMode, HttpImpl, ResponseEncoding};
use crate::catalog::rules::{HostPolicy, check_url_template};
use crate::catalog::rules::{PLACEHOLDER, placeholder_names};
use crate::catalog::templates::{BodyKind, MAX_RETRIES};
use crate::catalog::tool_rules::Extract;
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

/// What `${name}` stands for in one call: a secret the tool declares, else the argument, else
/// the argument's `default` in `argSchema`; nothing when none of these is there.
pub(super) struct Values<'a> {
    args: &'a Map<String, Value>,
    /// `argSchema`'s properties, for their defaults.
    properties: Option<&'a Map<String, Value>>,
    /// The tool's `"secrets"`: the only names read from the catalog secrets.
    declared: &'a [String],
    secrets: Option<Secrets>,
    pub(super) redactor: Redactor,
}

impl<'a> Values<'a> {
    fn new(args: &'a Map<String, Value>, tool: &'a crate::catalog::model::Tool) -> Self {
        Self {
            args,
            properties: tool
                .arg_schema
                .as_ref()
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object),
            declared: &tool.secrets,
            secrets: None,
            redactor: Redactor::default(),
        }
    }

    /// The value of the declared secret `name` (an auth block's), redacted from then on; set
    /// but empty is "" for a basic password (an API key as the user, `-u key:`), and an error
    /// anywhere else.
    pub(super) fn password(&mut self, name: &str) -> Result<String, Failure> {
        if self.declared.iter().any(|d| d == name)
            && let Err(Unset::EmptyVariable(_) | Unset::EmptyInFile) = self.secrets()?.get(name)
        {
            return Ok(String::new());
        }
        self.secret(name)
    }

    /// The secrets file and variables, read the first time a secret is asked for.
    fn secrets(&mut self) -> Result<&Secrets, Failure> {
        let secrets = match self.secrets.take() {
            Some(secrets) => secrets,
            None => Secrets::load()?,
        };
        Ok(self.secrets.insert(secrets))
    }

    /// The value of the declared secret `name` (an auth block's), redacted from then on.
    pub(super) fn secret(&mut self, name: &str) -> Result<String, Failure> {
        if !self.declared.iter().any(|d| d == name) {
            return Err(invalid(format!(
                "auth names the secret '{name}', which the tool does not declare in \"secrets\""
            )));
        }
        match self.get(name)? {
            Some(Value::String(secret)) => Ok(secret),
            _ => Err(invalid(format!("the secret '{name}' has no value"))),
        }
    }

    fn get(&mut self, name: &str) -> Result<Option<Value>, Failure> {
        if self.declared.iter().any(|d| d == name) {
            let secret = self.secrets()?.get(name);
            return match secret {
                Ok(secret) => {
                    self.redactor.add(&secret);
                    Ok(Some(Value::String(secret)))
                }
                Err(unset) => Err(Failure::new(
                    ErrorCode::ValidationError,
                    format!("${{{name}}} has no value: the tool's secret '{name}' {unset}"),
                )
                .with_hint(format!(
                    "set TOOLCTL_SECRET_{name}, or add \"{name}\" to the secrets file (secrets.json)"
                ))),
            };
        }
        let given = self.args.get(name);
        if given.is_some_and(|v| !v.is_null()) {
            return Ok(given.cloned());
        }
        let default = self
            .properties
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("default"))
            .cloned();
        Ok(default.or_else(|| given.cloned()))
    }

    /// The value as text; `None` when there is none (absent, or `null` without a default).
    fn text(&mut self, name: &str) -> Result<Option<String>, Failure> {
        Ok(match self.get(name)? {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(other) => Some(other.to_string()),
        })
    }

    /// `template` with every placeholder replaced by `write(value text)`; `None` when one of
    /// them has no value.
    fn fill(
        &mut self,
        template: &str,
        write: &impl Fn(&str) -> Result<String, Failure>,
    ) -> Result<Option<String>, Failure> {
        let mut out = String::with_capacity(template.len());
        let mut last = 0;
        for found in PLACEHOLDER.captures_iter(template) {
            let Some(whole) = found.get(0) else { continue };
            out.push_str(&template[last..whole.start()]);
            match self.text(&found[1])? {
                Some(text) => out.push_str(&write(&text)?),
                None => return Ok(None),
            }
            last = whole.end();
        }
        out.push_str(&template[last..]);
        Ok(Some(out))
    }

    /// [`Self::fill`] where a placeholder without a value is an error (a URL path).
    fn render(
        &mut self,
        template: &str,
        write: impl Fn(&str) -> Result<String, Failure>,
    ) -> Result<String, Failure> {
        if let Some(out) = self.fill(template, &write)? {
            return Ok(out);
        }
        let missing = placeholder_names(template)
            .find(|name| self.args.get(*name).is_none_or(Value::is_null))
            .unwrap_or_default();
        Err(invalid(format!(
            "${{{missing}}} has no value: the argument '{missing}' was not given"
        ))
        .with_hint(format!("pass the argument '{missing}'")))
    }

    /// [`Self::fill`] where a placeholder without a value is empty text (a text body).
    fn render_or_empty(
        &mut self,
        template: &str,
        write: impl Fn(&str) -> Result<String, Failure>,
    ) -> Result<String, Failure> {
        let mut out = String::with_capacity(template.len());
        let mut last = 0;
        for found in PLACEHOLDER.captures_iter(template) {
            let Some(whole) = found.get(0) else { continue };
            out.push_str(&template[last..whole.start()]);
            if let Some(text) = self.text(&found[1])? {
                out.push_str(&write(&text)?);
            }
            last = whole.end();
        }
        out.push_str(&template[last..]);
        Ok(out)
    }

    /// `a=${x}&b=${y}` (a query, a form body): each `&`-separated pair filled in, and a pair
    /// whose placeholder has no value left out.
    fn render_pairs(&mut self, template: &str) -> Result<String, Failure> {
        let mut pairs = Vec::new();
        for pair in template.split('&') {
            if let Some(filled) = self.fill(pair, &|v| Ok(encode_component(v)))? {
                pairs.push(filled);
            }
        }
        Ok(pairs.join("&"))
    }

    /// A JSON body template with its placeholders replaced inside the parsed tree: a string
    /// that is exactly `"${name}"` becomes the value as JSON (a member or an element without
    /// a value is left out); placeholders inside a longer string become text (none: empty).
    fn render_json(&mut self, template: &Value) -> Result<Option<Value>, Failure> {
        Ok(Some(match template {
            Value::String(s) => match PLACEHOLDER.captures(s) {
                Some(found) if found.get(0).is_some_and(|m| m.as_str() == s) => {
                    return self.get(&found[1]);
                }
                Some(_) => Value::String(self.render_or_empty(s, verbatim)?),
                None => template.clone(),
            },
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.extend(self.render_json(item)?);
                }
                Value::Array(out)
            }
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, item) in map {
                    if let Some(value) = self.render_json(item)? {
                        out.insert(key.clone(), value);
                    }
                }
                Value::Object(out)
            }
            other => other.clone(),
        }))
    }
}

/// The request of one call, before it is sent.
#[derive(Clone)]
pub(super) struct Request {
    pub(super) method: reqwest::Method,
    pub(super) url: url::Url,
    pub(super) headers: reqwest::header::HeaderMap,
    /// The headers whose template names a secret: dropped on a redirect to another origin.
    pub(super) secret_headers: Vec<reqwest::header::HeaderName>,
    pub(super) body: Option<Vec<u8>>,
}

pub(super) fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(ErrorCode::ValidationError, message)
}

/// The longest URL a request is sent with: the HTTP stack's own limit (`http::Uri`), so a
/// longer one is the caller's error, named, rather than the client's "builder error".
const MAX_URL_BYTES: usize = 65_534;

fn build(spec: &HttpImpl, values: &mut Values, hosts: &HostPolicy) -> Result<Request, Failure> {
    use reqwest::header::{HeaderName, HeaderValue};
    let method = reqwest::Method::from_bytes(spec.method.to_ascii_uppercase().as_bytes())
        .map_err(|_| invalid(format!("method '{}' is not an HTTP method", spec.method)))?;

    // The URL: a literal authority, then the rest with encoded values.
    let template = &spec.url_template;
    check_url_template(template, hosts).map_err(|m| Failure::new(ErrorCode::HostNotAllowed, m))?;
    let scheme_end = template.find("://").map_or(0, |i| i + 3);
    let authority_end = template[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(template.len(), |i| scheme_end + i);
    // The path, the query and the fragment apart: a value alone in a path segment may not be
    // `.` or `..` (the URL parser would resolve it: `/users/${id}/profile` with `..` is
    // `/profile`); a query pair whose value is absent is left out.
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
    let after_path = &rest[path_end..];
    let query_end = after_path.find('#').unwrap_or(after_path.len());
    let mut rest = path;
    if let Some(query) = after_path[..query_end].strip_prefix('?') {
        let query = values.render_pairs(query)?;
        if !query.is_empty() {
            rest.push('?');
            rest.push_str(&query);
        }
    }
    let fragment = &after_path[query_end..];
    rest.push_str(&values.render_or_empty(fragment, |v| Ok(encode_component(v)))?);
    let url = url::Url::parse(&format!("{}{rest}", &template[..authority_end]))
        .map_err(|e| invalid(format!("urlTemplate gives no URL: {e}")))?;
    if url.as_str().len() > MAX_URL_BYTES {
        return Err(invalid(format!(
            "the URL filled in is {} bytes, over the {MAX_URL_BYTES} a request line can carry; send large values in the body",
            url.as_str().len()
        )));
    }
    if !hosts.allows(&url) {
        return Err(Failure::new(
            ErrorCode::HostNotAllowed,
            hosts.refusal(&url, None),
        ));
    }

    let mut headers = reqwest::header::HeaderMap::new();
    let mut secret_headers = Vec::new();
    for (name, template) in &spec.headers {
        let template = match template {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        // A header whose placeholder has no value is not sent.
        let Some(value) = values.fill(&template, &verbatim)? else {
            continue;
        };
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
        if placeholder_names(&template).any(|p| values.declared.iter().any(|d| d == p)) {
            secret_headers.push(name.clone());
        }
        headers.insert(name, value);
    }

    // Never raw text spliced into JSON: a JSON template is parsed and filled in as a tree (a
    // template that does not parse is refused when the tool is put, and here again).
    let body = match &spec.body_template {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => match BodyKind::of(spec) {
            BodyKind::Json => {
                let tree = serde_json::from_str::<Value>(s).map_err(|e| {
                    invalid(format!(
                        "bodyTemplate is not valid JSON ({e}); a JSON body template must be JSON with every placeholder inside a string"
                    ))
                })?;
                Some(json_body(values.render_json(&tree)?, &mut headers))
            }
            BodyKind::Form => Some(values.render_pairs(s)?.into_bytes()),
            BodyKind::Text => Some(values.render_or_empty(s, verbatim)?.into_bytes()),
        },
        Some(tree) => Some(json_body(values.render_json(tree)?, &mut headers)),
    };
    Ok(Request {
        method,
        url,
        headers,
        secret_headers,
        body,
    })
}

fn json_body(tree: Option<Value>, headers: &mut reqwest::header::HeaderMap) -> Vec<u8> {
    headers.entry(reqwest::header::CONTENT_TYPE).or_insert(
        reqwest::header::HeaderValue::from_static("application/json"),
    );
    serde_json::to_vec(&tree.unwrap_or_default()).unwrap_or_default()
}

fn extractor(spec: &HttpImpl) -> Result<Extract, Failure> {
    crate::catalog::tool_rules::extractor(spec).map_err(invalid)
}

/// Call the HTTP tool `entry` with checked arguments: its value as the server gave it, with
/// the secrets the call used, for the caller to redact (a failure comes redacted).
pub fn call(
    entry: &ToolEntry,
    args: &Map<String, Value>,
    options: &Options,
) -> Result<(Value, Redactor), Failure> {
    let hosts = &options.hosts;
    let Some(spec) = entry.tool.http_impl() else {
        return Err(invalid(format!(
            "{}: its impl is not an HTTP one",
            entry.reference()
        )));
    };
    let mut values = Values::new(args, &entry.tool);
    let request = build(&spec, &mut values, hosts)
        .and_then(|request| {
            limits::check_size(&entry.tool, &request, options)?;
            Ok(request)
        })
        .map_err(|f| f.redacted(&values.redactor))?;
    let extract = extractor(&spec)?;
    let timeout = spec
        .timeout_ms
        .or(options.http.timeout_ms)
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    let clock = Clock::new(timeout, options);
    let result = run(
        entry,
        &spec,
        &extract,
        &request,
        &mut values,
        &clock,
        options,
    );
    match result {
        // Redacted by the caller, once the output schema has checked what the tool returned.
        Ok(value) => Ok((value, std::mem::take(&mut values.redactor))),
        Err(failure) => Err(failure.redacted(&values.redactor)),
    }
}

/// The call once its request is built: the credentials of `impl.auth`, a slot under
/// `maxCallsPerMinute`, the exchange, and (with an OAuth2 token the server refused) once again
/// with a new token, in a slot of its own.
fn run(
    entry: &ToolEntry,
    spec: &HttpImpl,
    extract: &Extract,
    request: &Request,
    values: &mut Values,
    clock: &Clock,
    options: &Options,
) -> Result<Value, Failure> {
    // Redirects are followed here ([`follow`]), not by reqwest, so secret-bearing headers can
    // be dropped when one leads to another origin (reqwest would keep `X-Api-Key`).
    let client = crate::base::http::shared_client(guarded_dns(&options.hosts)).map_err(|e| {
        Failure::new(
            ErrorCode::Internal,
            format!("cannot make an HTTP client: {e}"),
        )
    })?;
    let mut refused_token: Option<String> = None;
    loop {
        let mut request = request.clone();
        let token = match &spec.auth {
            Some(how) => auth::apply(
                how,
                &mut request,
                values,
                options,
                clock,
                refused_token.as_deref(),
            )?,
            None => None,
        };
        // The slot is taken right before sending, so the server sees the calls as spaced.
        limits::acquire(entry, options, clock)?;
        let response = send(
            &client,
            &entry.tool,
            request,
            options,
            clock,
            &values.redactor,
        )
        .map_err(Failure::ran)?;
        if response.status() == reqwest::StatusCode::UNAUTHORIZED
            && refused_token.is_none()
            && let Some(token) = token
        {
            refused_token = Some(token);
            continue;
        }
        return answer(&entry.tool, spec, extract, response, clock, values, options)
            .map_err(Failure::ran);
    }
}

/// The value of a response: an event stream read as it comes, any other body read whole.
fn answer(
    tool: &crate::catalog::model::Tool,
    spec: &HttpImpl,
    extract: &Extract,
    response: reqwest::blocking::Response,
    clock: &Clock,
    values: &Values,
    options: &Options,
) -> Result<Value, Failure> {
    let status = response.status().as_u16();
    let cap = tool
        .max_response_bytes
        .or(options.http.max_response_bytes)
        .unwrap_or(DEFAULT_MAX_RESPONSE);
    let redactor = &values.redactor;
    if spec.response_encoding == Some(ResponseEncoding::Sse) && is_success(spec, status) {
        let body = Timed {
            inner: response,
            clock,
        };
        let mut pieces = String::new();
        let mut on_event = |event: &sse::Event| {
            if let Some(tell) = options.on_event {
                tell(&redactor.value(event.to_json()));
            }
            let found = match extract {
                Extract::None => Some(Value::String(event.data.clone())),
                _ => {
                    let decoded = match extract {
                        Extract::Path(_) => serde_json::from_str(&event.data)
                            .unwrap_or_else(|_| Value::String(event.data.clone())),
                        _ => Value::Null,
                    };
                    extracted(extract, &decoded, &event.data)
                }
            };
            match found {
                Some(Value::String(text)) => pieces.push_str(&text),
                Some(other) => pieces.push_str(&other.to_string()),
                None => {}
            }
        };
        sse::read(body, cap, spec.sse_terminal.as_deref(), &mut on_event)
            .map_err(|failed| read_failure(failed, cap, clock))?;
        return Ok(Value::String(pieces));
    }
    let body = read_capped(response, cap, clock)?;
    respond(spec, extract, status, &body, redactor)
}

/// Send with retries: the last answer. `timeoutMs` bounds the whole call: every attempt,
/// redirect, wait between attempts and the reading of the body.
fn send(
    client: &reqwest::blocking::Client,
    tool: &crate::catalog::model::Tool,
    request: Request,
    options: &Options,
    clock: &Clock,
    redactor: &Redactor,
) -> Result<reqwest::blocking::Response, Failure> {
    let idempotent = matches!(
        request.method.as_str(),
        "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS"
    );
    let retries = if idempotent {
        // Put refuses more; a file edited by hand gets no more either.
        tool.max_retries
            .or(options.http.max_retries)
            .unwrap_or(DEFAULT_RETRIES)
            .min(MAX_RETRIES)
    } else {
        0
    };
    let mut attempt = 0;
    loop {
        let waited = match follow(client, &request, &options.hosts, clock)? {
            Ok(response) => {
                let status = response.status().as_u16();
                if attempt < retries && (status == 429 || status >= 500) {
                    let wait = retry_after(&response).unwrap_or_else(|| backoff(attempt));
                    // No time left for the wait and another attempt: this answer is the last.
                    if clock.wait(wait) {
                        None
                    } else {
                        Some(response)
                    }
                } else {
                    Some(response)
                }
            }
            // A name the resolver refused ([`GuardedDns`]) is not a connection error: it is
            // not retried.
            Err(e)
                if e.is_connect()
                    && crate::base::http::blocked_in(&e).is_none()
                    && attempt < retries
                    && clock.wait(backoff(attempt)) =>
            {
                None
            }
            Err(e) => return Err(transport_error(&e, redactor, clock)),
        };
        if let Some(response) = waited {
            return Ok(response);
        }
        attempt += 1;
    }
}

/// The time a call has: `timeoutMs` from its start, or less when a batch's `wait_ms` ends
/// sooner.
pub(super) struct Clock {
    deadline: std::time::Instant,
    timeout: Duration,
    /// The batch's `wait_ms` ends before `timeoutMs` would.
    batch_first: bool,
}

impl Clock {
    fn new(timeout: Duration, options: &Options) -> Self {
        let limit = options.bounded(timeout);
        Self {
            deadline: std::time::Instant::now() + limit,
            timeout,
            batch_first: limit < timeout,
        }
    }

    pub(super) fn left(&self) -> Duration {
        self.deadline
            .saturating_duration_since(std::time::Instant::now())
    }

    /// Sleep `wait` (at most [`MAX_WAIT`]) when an attempt still fits after it; `false` (and
    /// no sleep) when it does not.
    fn wait(&self, wait: Duration) -> bool {
        let wait = wait.min(MAX_WAIT);
        if wait >= self.left() {
            return false;
        }
        std::thread::sleep(wait);
        true
    }

    /// The failure of a call that ran out of time, `what` saying what did not happen.
    pub(super) fn timed_out(&self, what: &str) -> Failure {
        let ms = self.timeout.as_millis();
        let limit = if self.batch_first {
            "the batch's wait_ms".to_owned()
        } else {
            format!("timeoutMs ({ms} ms)")
        };
        Failure::new(ErrorCode::Timeout, format!("{what} within {limit}"))
            .with_details(json!({ "timeoutMs": ms }))
    }
}

/// Send `request`, following redirects (at most [`MAX_REDIRECTS`]) to allowed hosts only.
/// Crossing to another origin drops the headers that may carry a secret (`Authorization`,
/// `Cookie`, `Proxy-Authorization`, and every header whose template names a secret) for the
/// rest of the chain; no `Referer` is ever sent. The outer error is a refusal, the inner one
/// the transport's.
fn follow(
    client: &reqwest::blocking::Client,
    request: &Request,
    hosts: &HostPolicy,
    clock: &Clock,
) -> Result<Result<reqwest::blocking::Response, reqwest::Error>, Failure> {
    use reqwest::StatusCode;
    use reqwest::header::{
        AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, COOKIE, LOCATION, PROXY_AUTHORIZATION,
    };
    let origin = request.url.origin();
    let mut method = request.method.clone();
    let mut url = request.url.clone();
    let mut headers = request.headers.clone();
    let mut body = request.body.clone();
    for hop in 0..=MAX_REDIRECTS {
        let left = clock.left();
        if left.is_zero() {
            return Err(clock.timed_out("no answer came"));
        }
        let mut builder = client
            .request(method.clone(), url.clone())
            .timeout(left)
            .headers(headers.clone());
        if let Some(body) = &body {
            builder = builder.body(body.clone());
        }
        let response = match builder.send() {
            Ok(response) => response,
            Err(e) => return Ok(Err(e)),
        };
        let status = response.status();
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| url.join(v).ok());
        let Some(next) = location.filter(|_| status.is_redirection()) else {
            return Ok(Ok(response));
        };
        if hop == MAX_REDIRECTS {
            return Err(Failure::new(
                ErrorCode::UpstreamError,
                format!("more than {MAX_REDIRECTS} redirects"),
            ));
        }
        if !hosts.allows(&next) {
            let host = next.host_str().unwrap_or_default();
            return Err(Failure::new(
                ErrorCode::HostNotAllowed,
                format!("redirect to host '{host}', which is not in allowedHosts"),
            ));
        }
        if next.origin() != origin {
            for name in [AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION]
                .iter()
                .chain(&request.secret_headers)
            {
                headers.remove(name);
            }
        }
        // As browsers and reqwest do: 303 (and 301/302 after a POST) go on as a GET.
        let to_get = status == StatusCode::SEE_OTHER && method != reqwest::Method::HEAD
            || matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                && method == reqwest::Method::POST;
        if to_get {
            method = reqwest::Method::GET;
            body = None;
            headers.remove(CONTENT_TYPE);
            headers.remove(CONTENT_LENGTH);
        }
        url = next;
    }
    Err(Failure::new(
        ErrorCode::UpstreamError,
        format!("more than {MAX_REDIRECTS} redirects"),
    ))
}

pub(super) fn transport_error(e: &reqwest::Error, redactor: &Redactor, clock: &Clock) -> Failure {
    if let Some(blocked) = crate::base::http::blocked_in(e) {
        return blocked_failure(blocked);
    }
    if e.is_timeout() {
        return clock.timed_out("no answer came");
    }
    // The whole chain, without the URL (it may hold a secret; redacted anyway).
    let mut message = e.to_string();
    for cause in crate::base::causes(e) {
        message.push_str(&format!(": {cause}"));
    }
    Failure::new(ErrorCode::UpstreamError, redactor.text(&message))
}

/// A connection the resolver refused ([`GuardedDns`]): the host name allowed resolved only to
/// this machine or its link.
pub(super) fn blocked_failure(blocked: &Blocked) -> Failure {
    Failure::new(ErrorCode::HostNotAllowed, blocked_message(blocked))
        .with_details(json!({ "host": blocked.host, "address": blocked.address.to_string() }))
}

/// What [`blocked_failure`] says: the host, the address, and the `allowedHosts` entry that
/// would allow it.
pub(super) fn blocked_message(blocked: &Blocked) -> String {
    let address = match blocked.address {
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        ip => ip.to_string(),
    };
    format!(
        "{blocked} (a DNS answer must not send a call to this machine or to its network's \
            metadata service); if the host is meant to be reached there, add '{address}' (the \
            address without a port) to allowedHosts of toolctl.json"
    )
}

/// The resolver of clients whose destinations `allowedHosts` decides: a host name in it may
/// not lead to this machine or its link, unless the address itself is listed too.
pub(super) fn guarded_dns(hosts: &HostPolicy) -> GuardedDns {
    GuardedDns {
        allowed: hosts.addresses(),
    }
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

/// The body, read while it arrives, failing as soon as it passes `cap` bytes, or when the
/// call's time is spent (a server that drips its body slowly is a `TIMEOUT`).
fn read_capped(
    response: reqwest::blocking::Response,
    cap: u64,
    clock: &Clock,
) -> Result<Vec<u8>, Failure> {
    let body = Timed {
        inner: response,
        clock,
    };
    crate::base::http::read_capped(body, cap).map_err(|failed| read_failure(failed, cap, clock))
}

/// Why a body could not be read: the call's time ran out, the transport failed, or the body
/// passed `cap` bytes.
fn read_failure(failed: CappedRead, cap: u64, clock: &Clock) -> Failure {
    let timed_out = || clock.timed_out("the response did not arrive whole");
    match failed {
        CappedRead::Failed(_) if clock.left().is_zero() => timed_out(),
        CappedRead::Failed(e) if e.kind() == std::io::ErrorKind::TimedOut => timed_out(),
        CappedRead::Failed(e) => Failure::new(
            ErrorCode::UpstreamError,
            format!("reading the response failed: {e}"),
        ),
        CappedRead::TooLarge => Failure::new(
            ErrorCode::UpstreamError,
            format!("the response is larger than maxResponseBytes ({cap} bytes)"),
        )
        .with_details(json!({ "maxResponseBytes": cap })),
    }
}

/// A body that stops with a `TimedOut` error once the call's time is spent, however steadily
/// its bytes drip in.
pub(super) struct Timed<'a, R> {
    pub(super) inner: R,
    pub(super) clock: &'a Clock,
}

impl<R: std::io::Read> std::io::Read for Timed<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.clock.left().is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.inner.read(buf)
    }
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
        ResponseEncoding::Text | ResponseEncoding::Sse => Value::String(String::new()),
    };
    let fail = |failure: Failure| match spec.error_mode.unwrap_or(ErrorMode::Fail) {
        ErrorMode::Fail => Err(failure),
        ErrorMode::Empty => Ok(empty.clone()),
    };
    let text = String::from_utf8_lossy(body);
    if !is_success(spec, status) {
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
        ResponseEncoding::Text | ResponseEncoding::Sse => Value::String(text.clone().into_owned()),
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
    match extracted(extract, &decoded, &text) {
        Some(value) => Ok(value),
        None => fail(nothing()),
    }
}

/// Whether `status` is a success: one of `successCodes`, else 2xx.
fn is_success(spec: &HttpImpl, status: u16) -> bool {
    match &spec.success_codes {
        Some(codes) if !codes.is_empty() => codes.contains(&status),
        _ => (200..300).contains(&status),
    }
}

/// What `extract` takes from a response (`decoded` as its encoding reads it, `text` as it
/// came); `None` when it matches nothing.
fn extracted(extract: &Extract, decoded: &Value, text: &str) -> Option<Value> {
    match extract {
        Extract::None => Some(decoded.clone()),
        Extract::Path(path) => {
            let tree = match decoded {
                Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
                other => other.clone(),
            };
            let mut found: Vec<Value> = path.query(&tree).all().into_iter().cloned().collect();
            match found.len() {
                0 => None,
                1 => found.pop(),
                _ => Some(Value::Array(found)),
            }
        }
        Extract::Regex(regex) => regex.captures(text).map(|found| {
            Value::String(
                found
                    .get(1)
                    .or_else(|| found.get(0))
                    .map_or_else(String::new, |m| m.as_str().to_owned()),
            )
        }),
    }
}

/// The request a call of `tool` with `args` would send (its URL and body), built as [`call`]
/// builds it but not sent: for the fuzz targets ([`crate::fuzzing`]).
pub(crate) fn dry_request(
    tool: &crate::catalog::model::Tool,
    args: &Map<String, Value>,
    hosts: &HostPolicy,
) -> Result<(url::Url, Option<Vec<u8>>), Failure> {
    let spec = tool
        .http_impl()
        .ok_or_else(|| invalid("the impl is not an HTTP one"))?;
    let mut values = Values::new(args, tool);
    let request = build(&spec, &mut values, hosts)?;
    Ok((request.url, request.body))
}

/// The value a call of `spec` would answer for a response with `status` and `body`
/// (`extractExpr` included): for the fuzz targets ([`crate::fuzzing`]).
pub(crate) fn dry_response(spec: &HttpImpl, status: u16, body: &[u8]) -> Result<Value, Failure> {
    respond(spec, &extractor(spec)?, status, body, &Redactor::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(args: Value) -> Map<String, Value> {
        args.as_object().cloned().unwrap_or_default()
    }

    fn filler(args: &Map<String, Value>) -> Values<'_> {
        Values {
            args,
            properties: None,
            declared: &[],
            secrets: Some(Secrets::default()),
            redactor: Redactor::default(),
        }
    }

    #[test]
    fn url_values_are_one_encoded_component() {
        let args = values(json!({ "q": "a/b?c=d&e#f g", "n": 3 }));
        let rendered = filler(&args)
            .render("/search/${q}?n=${n}", |v| Ok(encode_component(v)))
            .unwrap();
        assert_eq!(rendered, "/search/a%2Fb%3Fc%3Dd%26e%23f%20g?n=3");
    }

    #[test]
    fn json_bodies_take_values_inside_the_tree() {
        let args = values(json!({ "q": "say \"hi\"\n\\", "n": 3, "tags": ["a"] }));
        let body = filler(&args)
            .render_json(
                &json!({ "query": "${q}", "limit": "${n}", "tags": "${tags}", "note": "q=${q}", "gone": "${absent}" }),
            )
            .unwrap();
        assert_eq!(
            body,
            Some(
                json!({ "query": "say \"hi\"\n\\", "limit": 3, "tags": ["a"], "note": "q=say \"hi\"\n\\" })
            )
        );
    }

    #[test]
    fn a_pair_without_a_value_is_left_out() {
        let args = values(json!({ "q": "Oslo" }));
        let rendered = filler(&args).render_pairs("q=${q}&days=${days}").unwrap();
        assert_eq!(rendered, "q=Oslo");
    }

    #[test]
    fn a_missing_value_is_a_validation_error() {
        let args = values(json!({}));
        let failure = filler(&args)
            .render("/x/${nope}", |v| Ok(encode_component(v)))
            .unwrap_err();
        assert_eq!(failure.code, ErrorCode::ValidationError);
        assert!(failure.message().contains("${nope}"));
    }
}
