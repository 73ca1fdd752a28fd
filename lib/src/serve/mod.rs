//! `toolctl serve`: the catalog's HTTP contracts on one listener.
//!
//! - `GET /v1/agent-tools` and `POST /v1/agent-tools/invoke-batch` ([`agent_tools`]): the
//!   tools in OpenAI's shape, and batches of calls run as jobs, answered in sync or async mode;
//!   `GET /v1/jobs`, `GET /v1/jobs/{id}`, `GET /v1/jobs/{id}/stream` (Server-Sent Events) and
//!   `POST /v1/jobs/{id}/cancel` follow a job.
//! - `POST /api/v1/tools/attach` ([`attach_route`]): the attach contract, on the catalog's
//!   agents backend.
//! - the catalog routes under `/tools` ([`catalog_routes`]): bundles and tool versions
//!   written, toggled, deleted, read and invoked; the catalog listed and searched.
//!
//! Each route runs the operation its command runs (`export`, `invoke`, `attach`, `bundle`,
//! `tool`, `search`); this layer
//! only reads requests and words answers, as the command line does.
//!
//! **Keys and roles.** With `serve.apiKeys` in `toolctl.json`, every request carries one in
//! `x-api-key` ([`keys`]): none or an unknown one is `401`; a `read` key may GET, an `admin`
//! key may also POST, PUT, PATCH and DELETE (invoke, attach, cancel, catalog writes); a read
//! key on a write is `403 FORBIDDEN`.
//! Without keys the server serves only loopback addresses, every caller being an admin, and
//! it then checks `Host` (DNS rebinding) as `mcp serve --http` does; with keys it may listen on
//! any address. A request with an `Origin` must come from a page of an allowed host, with or
//! without keys (a web page the user opens cannot drive the server).
//!
//! **Limits.** A body is at most 1 MiB (`413` past it) and must arrive within the client
//! timeout (`408`); connections are capped and a connection whose request head is slow, or
//! that idles, is closed ([`crate::mcp::guard::accept_connections`], shared with `mcp serve`).
//!
//! **Jobs** live in `.toolctl/jobs.db` ([`crate::jobs`]): a restarted server resumes the jobs
//! left queued, and marks failed those left running by a process that is gone.

pub mod keys;

mod agent_tools;
mod attach_route;
mod catalog_routes;

use crate::catalog::config::Role;
use crate::jobs::runner::{self, Runner};
use crate::jobs::{self, Store};
use crate::mcp::guard;
use crate::mcp::serve::Log;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The largest request body taken, in bytes (the agent-tools contract's 1 MB).
pub const MAX_BODY_BYTES: usize = crate::invoke::batch::MAX_DOCUMENT_BYTES;

/// Workers per queue unless `serve.workers` says.
pub const DEFAULT_WORKERS: usize = 4;

/// How the server runs.
#[derive(Debug)]
pub struct Settings {
    /// The catalog's folder.
    pub root: PathBuf,
    pub addr: SocketAddr,
    /// The keys requests may carry (empty: loopback only, no key asked).
    pub keys: Vec<keys::ApiKey>,
    /// The folder file tools work in.
    pub workspace: PathBuf,
    /// How long a write waits for the catalog's lock.
    pub lock_timeout: Duration,
    /// How long a client may take to send a request's head, then its body, and stay idle.
    pub client_timeout: Duration,
    pub max_connections: usize,
    /// Jobs of one queue that run at once.
    pub workers: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Io(String),
    #[error(
        "refusing to serve {addr} without API keys: anyone who reaches it could run the catalog's tools"
    )]
    Unguarded { addr: SocketAddr },
    #[error(transparent)]
    Jobs(#[from] jobs::Error),
    #[error(transparent)]
    Mcp(#[from] crate::mcp::serve::Error),
}

/// What every route shares.
struct App {
    settings: Settings,
    runner: Arc<Runner>,
    /// The names a request's `Host` (without keys) and `Origin` may give.
    hosts: Vec<String>,
    /// `/mcp`: what `mcp serve --http` serves.
    mcp: crate::mcp::serve::Endpoint,
    log: Arc<dyn Log>,
    /// The last `GET /v1/agent-tools` answer, for as long as the catalog stays the same.
    registry: agent_tools::Registry,
    /// Requests refused for their key, and connections closed at the cap: told throttled, so
    /// a client that keeps knocking cannot fill the log.
    refused: guard::Throttled,
    full: guard::Throttled,
}

impl App {
    /// Tell `line` about `peer` unless a warning of its `kind` was told a moment ago.
    fn warn(&self, kind: &guard::Throttled, peer: SocketAddr, line: impl FnOnce() -> String) {
        if let Some(line) = kind.note(peer, line) {
            self.log.warn(&line);
        }
    }

    /// Once a second, what the warnings left untold when their clients stopped.
    async fn tell_overdue(self: Arc<Self>) {
        let mut ticks = tokio::time::interval(Duration::from_secs(1));
        loop {
            ticks.tick().await;
            for kind in [&self.refused, &self.full] {
                if let Some(line) = kind.overdue() {
                    self.log.warn(&line);
                }
            }
        }
    }
}

/// The address a request came from (for the MCP endpoint's warnings).
#[derive(Debug, Clone, Copy)]
struct Peer(SocketAddr);

/// Serve until SIGTERM or SIGINT.
pub fn serve(settings: Settings, log: Arc<dyn Log>) -> Result<(), Error> {
    if settings.keys.is_empty() && !settings.addr.ip().is_loopback() {
        return Err(Error::Unguarded {
            addr: settings.addr,
        });
    }
    #[cfg(unix)]
    crate::invoke::native::cgroup::signals_handled_elsewhere();
    let store = Arc::new(Store::open(&crate::catalog::state::dir(&settings.root))?);
    for id in store.recover()? {
        log.warn(&format!(
            "job {id} was left running by a process that is gone: marked failed"
        ));
    }
    let runner = Runner::new(
        store,
        settings.root.clone(),
        settings.workspace.clone(),
        settings.workers,
    );
    let resumed = runner::resume(&runner)?;
    if resumed > 0 {
        log.status(&format!("resumed {resumed} queued job(s)"));
    }
    // The jobs the shell queues meanwhile (`invoke --batch --async`) run here too.
    let follower = jobs::worker::Follower::start(
        Arc::clone(&runner),
        &crate::catalog::state::dir(&settings.root),
    )?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::Io(format!("cannot start the async runtime: {e}")))?;
    let stopping = Arc::clone(&runner);
    let app = runtime.block_on(async move {
        let addr = settings.addr;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Io(format!("cannot listen on {addr}: {e}")))?;
        let bound = listener.local_addr().unwrap_or(addr);
        let accept = guard::Accept {
            max_connections: settings.max_connections,
            client_timeout: settings.client_timeout,
        };
        let guarded = if settings.keys.is_empty() {
            "no API keys: loopback only, every caller an admin".to_owned()
        } else {
            format!("{} API key(s)", settings.keys.len())
        };
        let hosts = crate::mcp::serve::allowed_hosts(bound);
        let mcp = crate::mcp::serve::Endpoint::start(
            crate::mcp::serve::Settings {
                root: settings.root.clone(),
                lock_timeout: settings.lock_timeout,
                filters: crate::mcp::view::Filters::default(),
                mode: crate::mcp::serve::Mode::Auto,
                page_size: crate::mcp::serve::DEFAULT_PAGE_SIZE,
                workspace: settings.workspace.clone(),
                http: None,
            },
            log.clone(),
            hosts.clone(),
            &crate::mcp::serve::Http {
                addr: bound,
                token: None,
                max_sessions: guard::DEFAULT_MAX_SESSIONS,
                max_connections: settings.max_connections,
                client_timeout: settings.client_timeout,
            },
        )
        .await?;
        log.status(&format!("MCP at http://{bound}/mcp: {}", mcp.describe()));
        let app = Arc::new(App {
            hosts,
            full: guard::Throttled::new(format!(
                "connections closed at once, all {} being open",
                settings.max_connections
            )),
            settings,
            runner,
            mcp,
            log: log.clone(),
            registry: agent_tools::Registry::default(),
            refused: guard::Throttled::new("requests refused for their API key (401)"),
        });
        tokio::spawn(Arc::clone(&app).tell_overdue());
        let router = routes(app.clone());
        log.status(&format!("listening on http://{bound}/ ({guarded})"));
        let full = Arc::clone(&app);
        let signal = guard::accept_connections(
            listener,
            accept,
            &log,
            move |peer| {
                full.warn(&full.full, peer, || {
                    format!("closed a connection from {peer}: all connections are open")
                });
            },
            move |peer| {
                let router = router.clone();
                hyper::service::service_fn(
                    move |mut request: hyper::Request<hyper::body::Incoming>| {
                        request.extensions_mut().insert(Peer(peer));
                        let mut router = router.clone();
                        tower_service::Service::call(&mut router, request)
                    },
                )
            },
        )
        .await;
        log.status(&format!("{signal}: stopping"));
        app.mcp.stop();
        Ok::<_, Error>(app)
    })?;
    // A running `exec` program is killed with what it started, and each job records its end;
    // queued jobs wait for the next start.
    drop(follower);
    stopping.stop(Duration::from_secs(2));
    runtime.shutdown_timeout(Duration::from_secs(2));
    app.mcp.close();
    Ok(())
}

/// The server's OpenAPI document: every route's own annotation, gathered by the router that
/// serves it.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "toolctl server",
        description = "The catalog's HTTP contracts: the agent-tools API and its jobs, the attach contract, the catalog routes under /tools, and the MCP endpoint. With serve.apiKeys in toolctl.json, every request carries a key in x-api-key: a read key may GET, an admin key may also write and run tools.",
        license(name = "MIT OR Apache-2.0"),
    ),
    modifiers(&ApiKeys),
    security(("apiKey" = [])),
)]
struct Document;

struct ApiKeys;

impl utoipa::Modify for ApiKeys {
    fn modify(&self, document: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
        document
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "apiKey",
                SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new(keys::HEADER))),
            );
    }
}

/// The routes, and the OpenAPI document made from their annotations.
fn routes(app: Arc<App>) -> axum::Router {
    use catalog_routes as catalog;
    use utoipa::OpenApi;
    use utoipa_axum::{router::OpenApiRouter, routes};
    let (router, document) = OpenApiRouter::with_openapi(Document::openapi())
        .routes(routes!(agent_tools::list))
        .routes(routes!(agent_tools::invoke_batch))
        .routes(routes!(agent_tools::jobs))
        .routes(routes!(agent_tools::job))
        .routes(routes!(agent_tools::stream))
        .routes(routes!(agent_tools::cancel))
        .routes(routes!(attach_route::attach))
        .routes(routes!(catalog::list_bundles))
        .routes(routes!(
            catalog::put_bundle,
            catalog::patch_bundle,
            catalog::delete_bundle
        ))
        .routes(routes!(
            catalog::put_tool,
            catalog::patch_tool,
            catalog::delete_tool,
            catalog::get_tool
        ))
        .routes(routes!(catalog::invoke_tool))
        .routes(routes!(catalog::list_tools))
        .routes(routes!(catalog::search))
        .routes(routes!(mcp_post, mcp_get, mcp_delete))
        .routes(routes!(openapi))
        .split_for_parts();
    router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::Extension(Arc::new(document)))
        .with_state(app)
}

/// `GET /openapi.json`: the document of every route (OpenAPI 3.1).
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "serve",
    responses(
        (status = 200, description = "this document", body = Object),
        (status = 401, description = "no API key, or an unknown one", body = Object)
    )
)]
async fn openapi(
    _caller: Caller,
    axum::Extension(document): axum::Extension<Arc<utoipa::openapi::OpenApi>>,
) -> axum::Json<utoipa::openapi::OpenApi> {
    axum::Json(document.as_ref().clone())
}

/// `/mcp`: the MCP endpoint, for admin keys (its tools run).
async fn mcp(
    app: Arc<App>,
    caller: Caller,
    peer: Peer,
    request: Request,
) -> Result<Response, ApiError> {
    caller.admin()?;
    Ok(app.mcp.answer(peer.0, request).await.into_response())
}

/// `POST /mcp`: an MCP message (Streamable HTTP).
#[utoipa::path(
    post,
    path = "/mcp",
    tag = "mcp",
    request_body(content = Object, description = "a JSON-RPC message of MCP"),
    responses(
        (status = 200, description = "the answer, as JSON or as an event stream"),
        (status = 202, description = "a notification or response taken"),
        (status = 401, description = "no API key, or an unknown one", body = Object),
        (status = 403, description = "a read key: the endpoint runs tools", body = Object)
    )
)]
async fn mcp_post(
    axum::extract::State(app): axum::extract::State<Arc<App>>,
    caller: Caller,
    axum::Extension(peer): axum::Extension<Peer>,
    request: Request,
) -> Result<Response, ApiError> {
    mcp(app, caller, peer, request).await
}

/// `GET /mcp`: a session's stream of server messages.
#[utoipa::path(
    get,
    path = "/mcp",
    tag = "mcp",
    responses(
        (status = 200, description = "Server-Sent Events of the session", content_type = "text/event-stream"),
        (status = 401, description = "no API key, or an unknown one", body = Object),
        (status = 403, description = "a read key", body = Object)
    )
)]
async fn mcp_get(
    axum::extract::State(app): axum::extract::State<Arc<App>>,
    caller: Caller,
    axum::Extension(peer): axum::Extension<Peer>,
    request: Request,
) -> Result<Response, ApiError> {
    mcp(app, caller, peer, request).await
}

/// `DELETE /mcp`: end a session.
#[utoipa::path(
    delete,
    path = "/mcp",
    tag = "mcp",
    responses(
        (status = 200, description = "the session ended"),
        (status = 401, description = "no API key, or an unknown one", body = Object),
        (status = 403, description = "a read key", body = Object)
    )
)]
async fn mcp_delete(
    axum::extract::State(app): axum::extract::State<Arc<App>>,
    caller: Caller,
    axum::Extension(peer): axum::Extension<Peer>,
    request: Request,
) -> Result<Response, ApiError> {
    mcp(app, caller, peer, request).await
}

async fn not_found(request: Request) -> ApiError {
    let path = request.uri().path().to_owned();
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        format!("no route {} {path}", request.method()),
        &path,
    )
}

async fn method_not_allowed(request: Request) -> ApiError {
    let path = request.uri().path().to_owned();
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "METHOD_NOT_ALLOWED",
        format!("{path} does not take {}", request.method()),
        &path,
    )
}

/// The two ways the contracts word an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// `{"ok": false, "error": {"code", "message", "details"?}}`: the agent-tools routes and
    /// the rest.
    Ok,
    /// `{"success": false, "error": "<message>"}`: the attach contract.
    Success,
}

fn family(path: &str) -> Family {
    if path.starts_with("/api/v1/tools/attach") {
        Family::Success
    } else {
        Family::Ok
    }
}

/// A refused or failed request, worded as its route's contract words errors.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    details: Option<Value>,
    family: Family,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>, path: &str) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: None,
            family: family(path),
        }
    }

    fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    fn internal(message: impl std::fmt::Display, path: &str) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            message.to_string(),
            path,
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = match self.family {
            Family::Ok => {
                let mut error = json!({ "code": self.code, "message": self.message });
                if let Some(details) = self.details {
                    error["details"] = details;
                }
                json!({ "ok": false, "error": error })
            }
            Family::Success => json!({ "success": false, "error": self.message }),
        };
        (self.status, axum::Json(body)).into_response()
    }
}

/// Who sent a request: checked before any route runs (its key, its `Host` and `Origin`).
struct Caller {
    role: Role,
    path: String,
}

impl Caller {
    /// Refuse a write to a caller with a read key (`403 FORBIDDEN`).
    fn admin(&self) -> Result<(), ApiError> {
        if self.role == Role::Admin {
            return Ok(());
        }
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "This operation requires an admin API key.",
            &self.path,
        ))
    }
}

impl FromRequestParts<Arc<App>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        let path = parts.uri.path().to_owned();
        let keys = &app.settings.keys;
        check_origin(&parts.headers, &app.hosts, keys.is_empty(), &path)?;
        let sent = parts
            .headers
            .get(keys::HEADER)
            .map(|value| value.as_bytes());
        match keys::caller(keys, sent) {
            Ok(caller) => Ok(Self {
                role: caller.role,
                path,
            }),
            Err(refusal) => {
                if let Some(Peer(peer)) = parts.extensions.get::<Peer>().copied() {
                    app.warn(&app.refused, peer, || {
                        format!(
                            "refused a request from {peer} to {path}: {}",
                            refusal.reason()
                        )
                    });
                }
                Err(ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "UNAUTHORIZED",
                    refusal.message(),
                    &path,
                ))
            }
        }
    }
}

/// The host of a `Host` or `Origin` value, without port or brackets.
fn host_of(authority: &str) -> &str {
    let authority = authority.trim();
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    authority
        .rsplit_once(':')
        .map_or(authority, |(host, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) {
                host
            } else {
                authority
            }
        })
}

/// A request with an `Origin` must come from a page of one of `hosts`; without keys, its
/// `Host` must name one of them too (DNS rebinding: a page whose name an attacker points at
/// this machine names its own host there).
fn check_origin(
    headers: &HeaderMap,
    hosts: &[String],
    check_host: bool,
    path: &str,
) -> Result<(), ApiError> {
    let allowed = |host: &str| hosts.iter().any(|h| h.eq_ignore_ascii_case(host));
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        if !authority.is_some_and(|a| allowed(host_of(a))) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                format!("requests from the page origin {origin:?} are not served"),
                path,
            ));
        }
    }
    if check_host {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        if !allowed(host_of(host)) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                format!(
                    "the Host {host:?} is not this server's: without API keys, only requests naming localhost, 127.0.0.1 or ::1 are served"
                ),
                path,
            ));
        }
    }
    Ok(())
}

/// A JSON request body: at most [`MAX_BODY_BYTES`] (`413`), arrived within the client
/// timeout (`408`), valid JSON (`400 VALIDATION_ERROR` with its line and column).
struct JsonBody(Value);

impl FromRequest<Arc<App>> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, app: &Arc<App>) -> Result<Self, ApiError> {
        let path = request.uri().path().to_owned();
        let too_large = || {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "PAYLOAD_TOO_LARGE",
                format!("the request body is over 1 MiB ({MAX_BODY_BYTES} bytes)"),
                &path,
            )
        };
        let timeout = app.settings.client_timeout;
        let (parts, body) = request.into_parts();
        let bytes = guard::read_bytes(&parts.headers, body, MAX_BODY_BYTES, timeout)
            .await
            .map_err(|refusal| match refusal {
                guard::BodyRefusal::TooLarge => too_large(),
                guard::BodyRefusal::Late => ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "REQUEST_TIMEOUT",
                    format!(
                        "the request body did not arrive whole within {} s",
                        timeout.as_secs()
                    ),
                    &path,
                ),
                guard::BodyRefusal::Broken => ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "VALIDATION_ERROR",
                    "the request body ended badly",
                    &path,
                ),
            })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self(json!({})));
        }
        serde_json::from_slice(&bytes).map(Self).map_err(|e| {
            let e = crate::base::syntax::SyntaxError::of(&e);
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "VALIDATION_ERROR",
                format!("the request body is not valid JSON: {e}"),
                &path,
            )
            .with_details(json!({ "line": e.line, "column": e.column }))
        })
    }
}

/// Run `work` (SQLite, files) on tokio's blocking threads, at most [`quick_at_once`] at a time:
/// 200 clients reading at once then queue for a few threads, rather than each holding a thread,
/// its catalog and its index connection (which took the server past a GiB and made every
/// answer slower).
async fn blocking<T: Send + 'static>(
    path: &str,
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    static QUICK: std::sync::LazyLock<tokio::sync::Semaphore> =
        std::sync::LazyLock::new(|| tokio::sync::Semaphore::new(quick_at_once()));
    let _permit = QUICK.acquire().await;
    blocking_call(path, work).await
}

/// How much quick work runs at once: four a core.
fn quick_at_once() -> usize {
    4 * std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
}

/// Run `work` that may wait on a tool or a backend (an invoke, an attach) on tokio's blocking
/// threads, without waiting for quick work's turn (it could hold it for its whole timeout).
async fn blocking_call<T: Send + 'static>(
    path: &str,
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ApiError::internal(
            format!("the request's work failed: {e}"),
            path,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_read_without_its_port_or_brackets() {
        assert_eq!(host_of("127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(host_of("localhost"), "localhost");
        assert_eq!(host_of("[::1]:80"), "::1");
        assert_eq!(host_of("evil.example:80"), "evil.example");
    }

    #[test]
    fn an_origin_from_elsewhere_is_refused_and_a_host_only_without_keys() {
        let hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, "evil.example:8080".parse().unwrap());
        assert!(check_origin(&headers, &hosts, false, "/v1/agent-tools").is_ok());
        let refused = check_origin(&headers, &hosts, true, "/v1/agent-tools").unwrap_err();
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        headers.insert(header::HOST, "127.0.0.1:8080".parse().unwrap());
        headers.insert(header::ORIGIN, "http://evil.example".parse().unwrap());
        assert!(check_origin(&headers, &hosts, false, "/v1/agent-tools").is_err());
        headers.insert(header::ORIGIN, "http://localhost:3000".parse().unwrap());
        assert!(check_origin(&headers, &hosts, true, "/v1/agent-tools").is_ok());
    }

    #[test]
    fn the_attach_route_words_errors_as_its_contract() {
        let error = ApiError::new(
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
            "no",
            "/api/v1/tools/attach",
        );
        assert_eq!(error.family, Family::Success);
        assert_eq!(family("/v1/agent-tools"), Family::Ok);
    }
}
