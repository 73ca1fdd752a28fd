//! `toolctl mcp serve`: the catalog as an MCP server, on the official SDK (`rmcp`).
//!
//! - `tools/list` pages through what `export --provider mcp` prints, with an opaque cursor:
//!   the offset of the next page among the candidates (the tools the index says the list is
//!   made of), checked against them. The list is kept in `.toolctl/` ([`cache`]); a start
//!   without it answers each page from its own candidates while the whole list is made, the
//!   candidates read from the index as toolctl left it when it can be trusted so
//!   ([`Index::open_unchecked`]): its change check is the server's first, right after the
//!   first answer, which announces what the files moved since.
//! - `tools/call` runs [`view::call`] (what `invoke` does). A call that fails, arguments
//!   refused by the schema included, is a result with `isError: true` so that a model can
//!   correct itself; only a tool the client was not shown is a protocol error (-32602).
//! - In search mode the list is two tools, `search_tools` (`pick` over the catalog) and
//!   `call_tool` (any tool the list would have shown, by exported name): a model sees a few
//!   tools of a catalog of thousands. `auto` lists every tool up to [`AUTO_LIMIT`] and searches
//!   above it.
//! - Once a second (the first time after the first `tools/list` answer, or a second after
//!   the start) the index's change check runs (it finds hand edits and `git pull`s); when
//!   the index file moved (that check, or another `toolctl`, wrote it) the list is made again,
//!   and a list that differs is announced with `notifications/tools/list_changed`: to every
//!   handshake-era session, and to every `subscriptions/listen` stream (2026-07-28).
//!
//! - Over HTTP a request must name a loopback host (or the `--public` address) in `Host`, and
//!   one with an `Origin` must come from such a host: the SDK's DNS rebinding check, plus the
//!   `Origin` check it leaves off by default ([`allowed_origins`]). With a token, every
//!   request must carry it before the SDK sees it; sessions and connections are capped, a
//!   client that is slow to send a request (its headers or its body) or that keeps a connection
//!   idle is cut off, and a request's body is bounded ([`guard`]).
//!
//! The catalog is read and tools run on tokio's blocking threads: the SDK's tasks never wait
//! for SQLite, files or an HTTP tool.

use super::cache::{self, Listed, Stamp};
use super::guard::{self, Token};
use super::view::{self, Candidate, Filters, Survey, Translated};
use crate::base::error_code::ErrorCode;
use crate::catalog::Catalog;
use crate::index::Index;
use crate::invoke::{Cancel, Failure, Options};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::watch;

/// `--mode auto` lists every tool up to this many, and switches to search mode above.
pub const AUTO_LIMIT: usize = 64;

/// Tools per `tools/list` page, unless `--page-size` says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// How often the catalog is checked for changes.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The search mode's two tools.
pub const SEARCH_TOOLS: &str = "search_tools";
pub const CALL_TOOL: &str = "call_tool";

/// How many tools `search_tools` returns when `max` is not given.
pub const DEFAULT_SEARCH_MAX: usize = 5;

/// What the client is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every tool.
    All,
    /// `search_tools` and `call_tool`.
    Search,
    /// Every tool up to [`AUTO_LIMIT`], search mode above.
    Auto,
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "all" => Ok(Self::All),
            "search" => Ok(Self::Search),
            "auto" => Ok(Self::Auto),
            other => Err(format!(
                "unknown mode '{other}': expected all, search or auto"
            )),
        }
    }
}

/// How the server runs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The catalog's folder.
    pub root: PathBuf,
    /// How long a write (usage counts) waits for the catalog's lock.
    pub lock_timeout: Duration,
    pub filters: Filters,
    pub mode: Mode,
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// The folder file tools work in.
    pub workspace: PathBuf,
    /// Streamable HTTP instead of stdio.
    pub http: Option<Http>,
}

/// Streamable HTTP: where, and how it is guarded.
#[derive(Debug, Clone)]
pub struct Http {
    pub addr: SocketAddr,
    /// The bearer token every request must carry.
    pub token: Option<Token>,
    /// Live MCP sessions at most ([`guard::DEFAULT_MAX_SESSIONS`]).
    pub max_sessions: usize,
    /// Open connections at most ([`guard::DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// How long a client may take to send a request's headers, then its body, and how long a
    /// kept-alive connection may stay idle ([`guard::DEFAULT_CLIENT_TIMEOUT`]).
    pub client_timeout: Duration,
}

/// Where the server's lines go (stderr: stdout is the protocol).
pub trait Log: Send + Sync {
    fn status(&self, line: &str);
    fn warn(&self, line: &str);
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Catalog(#[from] crate::catalog::Error),
    #[error(transparent)]
    View(Box<view::Error>),
    #[error("{0}")]
    Io(String),
}

impl From<view::Error> for Error {
    fn from(error: view::Error) -> Self {
        Self::View(Box::new(error))
    }
}

/// Serve until the client goes (stdin closes) or SIGTERM/SIGINT.
pub fn serve(settings: Settings, log: Arc<dyn Log>) -> Result<(), Error> {
    // SIGTERM and SIGINT stop the server (below); the cgroups of `exec` calls and of the MCP
    // servers its tools started go on either (and with `sessions.close()` at the end).
    #[cfg(unix)]
    crate::invoke::native::cgroup::signals_handled_elsewhere();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::Io(format!("cannot start the async runtime: {e}")))?;
    let sessions = Arc::new(crate::invoke::mcp::Sessions::new());
    let pooled = Arc::clone(&sessions);
    let shared = Arc::new(Shared::new(settings, log, pooled));
    let serving = shared.clone();
    let served = runtime.block_on(async move {
        let shared = serving;
        let first = shared.clone();
        tokio::task::spawn_blocking(move || first.start())
            .await
            .map_err(|e| Error::Io(e.to_string()))??;
        shared.log.status(&shared.describe());
        if shared.settings.mode != Mode::Search {
            tokio::spawn(poll(shared.clone()));
        }
        match shared.settings.http.clone() {
            None => serve_stdio(shared).await,
            Some(http) => serve_http(shared, http).await,
        }
    });
    // A call still running has nobody to answer: an `exec` program goes now, with what it
    // started (the process ends before the call's own thread would), and any other tool is
    // not waited for long.
    shared.cancel_calls();
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    // The MCP servers its tools' calls started end with it.
    sessions.close();
    served
}

/// How long the end of `serve` waits for calls still running.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

async fn serve_stdio(shared: Arc<Shared>) -> Result<(), Error> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let stdin = EofSignal {
        inner: stdin,
        closed: shared.closed.clone(),
    };
    let running = match Server(shared.clone()).serve((stdin, stdout)).await {
        Ok(running) => running,
        // The client went away before it asked for anything but discovery.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            shared.log.status("the client closed the connection");
            return Ok(());
        }
        Err(e) => return Err(Error::Io(format!("MCP session did not start: {e}"))),
    };
    let token = running.cancellation_token();
    tokio::select! {
        quit = running.waiting() => {
            if let Err(e) = quit {
                shared.log.warn(&format!("the MCP session ended badly: {e}"));
            }
            keep_before_leaving(&shared).await;
        }
        signal = stop_signal() => {
            shared.log.status(&format!("{signal}: stopping"));
            token.cancel();
        }
    }
    Ok(())
}

/// At the end of a stdio session that ended before the first change check made the whole
/// list (a client that starts the server, lists and leaves, as a health check does): make it
/// and keep it now, so that the next start reads it back.
async fn keep_before_leaving(shared: &Arc<Shared>) {
    if shared.settings.mode != Mode::All || shared.snapshot().pending.is_none() {
        return;
    }
    let checked = shared.clone();
    let check = tokio::task::spawn_blocking(move || checked.check());
    if let Ok(Ok(Err(e))) = tokio::time::timeout(SHUTDOWN_GRACE, check).await {
        shared.log.warn(&format!("catalog check: {e}"));
    }
}

/// Standard input that says when it reaches its end: the SDK waits for running handlers
/// before it ends a session, and a `subscriptions/listen` stream runs until told to stop.
struct EofSignal<R> {
    inner: R,
    closed: watch::Sender<bool>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(read) = &polled
            && (read.is_err() || buf.filled().len() == before)
        {
            self.closed.send_replace(true);
        }
        polled
    }
}

type McpService =
    rmcp::transport::streamable_http_server::StreamableHttpService<Server, guard::CappedSessions>;

/// The Streamable HTTP endpoint on its own, for another server to route requests to
/// (`toolctl serve` answers it at `/mcp`, behind its keys): the server `mcp serve --http`
/// runs, with its guards (body size and time, the session cap, `Host` and `Origin`).
pub struct Endpoint {
    shared: Arc<Shared>,
    gate: Arc<guard::Gate>,
    mcp: Arc<McpService>,
    /// Ends the SDK's sessions and their streams.
    cancel: Box<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("settings", &self.shared.settings)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// What it serves, in a line ("12 tools …").
    pub fn describe(&self) -> String {
        self.shared.describe()
    }

    /// Start it on the caller's runtime: the list made (or read back), then checked for
    /// changes every [`POLL_INTERVAL`]. `hosts` are the names a request's `Host` and
    /// `Origin` may give; `http.addr` and `http.token` are not used (the caller listens and
    /// checks who calls).
    pub async fn start(
        settings: Settings,
        log: Arc<dyn Log>,
        hosts: Vec<String>,
        http: &Http,
    ) -> Result<Self, Error> {
        let sessions = Arc::new(crate::invoke::mcp::Sessions::new());
        let shared = Arc::new(Shared::new(settings, log, sessions));
        let first = shared.clone();
        tokio::task::spawn_blocking(move || first.start())
            .await
            .map_err(|e| Error::Io(e.to_string()))??;
        if shared.settings.mode != Mode::Search {
            tokio::spawn(poll(shared.clone()));
        }
        Ok(Self::new(shared, hosts, http))
    }

    fn new(shared: Arc<Shared>, hosts: Vec<String>, http: &Http) -> Self {
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        let config = StreamableHttpServerConfig::default()
            .with_allowed_origins(allowed_origins(&hosts))
            .with_allowed_hosts(hosts)
            .with_max_request_body_bytes(guard::MAX_BODY_BYTES);
        let token = config.cancellation_token.clone();
        let cancel = Box::new(move || token.cancel());
        let factory = shared.clone();
        let mcp = Arc::new(StreamableHttpService::new(
            move || Ok(Server(factory.clone())),
            Arc::new(guard::CappedSessions::new(http.max_sessions)),
            config,
        ));
        let gate = Arc::new(guard::Gate {
            token: http.token.clone(),
            max_sessions: http.max_sessions,
            client_timeout: http.client_timeout,
            log: shared.log.clone(),
            warnings: guard::Warnings::new(http.max_sessions, http.max_connections),
        });
        tokio::spawn(guard::tell_overdue(gate.clone()));
        Self {
            shared,
            gate,
            mcp,
            cancel,
        }
    }

    /// Answer one request from `peer`.
    pub async fn answer<B>(&self, peer: SocketAddr, request: hyper::Request<B>) -> guard::Answer
    where
        B: hyper::body::Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.gate.answer(peer, request, &self.mcp).await
    }

    /// Stop: the sessions' streams end and the calls under way are cancelled; then, once the
    /// runtime is down, [`close`](Self::close).
    pub fn stop(&self) {
        (self.cancel)();
        self.shared.cancel_calls();
    }

    /// End the MCP servers its tools' calls started.
    pub fn close(&self) {
        self.shared.sessions.close();
    }
}

async fn serve_http(shared: Arc<Shared>, http: Http) -> Result<(), Error> {
    let addr = http.addr;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Io(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener.local_addr().unwrap_or(addr);
    let endpoint = Arc::new(Endpoint::new(shared.clone(), allowed_hosts(bound), &http));
    shared
        .log
        .status(&format!("listening on http://{bound}/ (Streamable HTTP)"));
    if bound.ip().is_unspecified() {
        shared.log.warn(&format!(
            "on {bound}, only requests naming localhost, 127.0.0.1 or ::1 as their Host are served (DNS rebinding protection); listen on the address clients use (192.0.2.7:{}) to serve them",
            bound.port()
        ));
    }
    let full = endpoint.gate.clone();
    let max_connections = http.max_connections;
    let serving = endpoint.clone();
    let signal =
        guard::accept_connections(
            listener,
            guard::Accept {
                max_connections,
                client_timeout: http.client_timeout,
            },
            &shared.log,
            move |peer| {
                full.warn(&full.warnings.connections_full, peer, || {
                format!(
                    "closed a connection from {peer}: all {max_connections} connections are open"
                )
            });
            },
            move |peer| {
                let endpoint = serving.clone();
                hyper::service::service_fn(move |request| {
                    let endpoint = endpoint.clone();
                    async move {
                        Ok::<_, std::convert::Infallible>(endpoint.answer(peer, request).await)
                    }
                })
            },
        )
        .await;
    shared.log.status(&format!("{signal}: stopping"));
    (endpoint.cancel)();
    Ok(())
}

/// The hosts a request may name in its `Host` header: the loopback names, and the address
/// served when it is another one (`--public`, or another loopback address such as
/// 127.0.0.2). A web page whose DNS name an attacker points at this machine (DNS rebinding)
/// names its own host there, and is refused (403).
pub(crate) fn allowed_hosts(bound: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).into();
    let ip = bound.ip().to_string();
    if !bound.ip().is_unspecified() && !hosts.contains(&ip) {
        hosts.push(ip);
    }
    hosts
}

/// The `Origin`s a request may carry (one without an `Origin`, as non-browser clients send, is
/// served): `http` or `https` on one of `hosts`, any port. The SDK checks none by default, so
/// any web page the user opens could otherwise drive the server from the browser.
fn allowed_origins(hosts: &[String]) -> Vec<String> {
    hosts
        .iter()
        .flat_map(|host| {
            let host = if host.contains(':') {
                format!("[{host}]")
            } else {
                host.clone()
            };
            ["http", "https"].map(|scheme| format!("{scheme}://{host}:*"))
        })
        .collect()
}

/// The first of SIGTERM and SIGINT, by name.
pub(crate) async fn stop_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = tokio::signal::ctrl_c() => "SIGINT",
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "interrupt"
    }
}

/// Check the catalog once a [`POLL_INTERVAL`], and tell the sessions when the list changed.
async fn poll(shared: Arc<Shared>) {
    // The first check waits for the first `tools/list` answer (at most a POLL_INTERVAL): a
    // client that just started the server waits for that answer, and the check (a stat of
    // every tool's folder, then the whole list made when none was kept) would take the
    // cores from it.
    let answered = shared.answered.subscribe();
    let _ = tokio::time::timeout(POLL_INTERVAL, until_set(answered)).await;
    let mut ticks = tokio::time::interval(POLL_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let checked = shared.clone();
        match tokio::task::spawn_blocking(move || checked.check()).await {
            Ok(Ok(true)) => {
                shared
                    .log
                    .status(&format!("catalog changed: {}", shared.describe()));
                shared.changes.send_modify(|n| *n += 1);
            }
            Ok(Ok(false)) => {}
            Ok(Err(e)) => shared.log.warn(&format!("catalog check: {e}")),
            Err(e) => shared.log.warn(&format!("catalog check: {e}")),
        }
    }
}

/// What a session sees of the list now.
struct Snapshot {
    search: bool,
    listed: Arc<Listed>,
    pending: Option<Arc<Vec<Candidate>>>,
}

/// What every session shares: the settings, the current list and the change signal.
struct Shared {
    settings: Settings,
    log: Arc<dyn Log>,
    state: RwLock<State>,
    /// Counts the changes of the list; sessions wait on it to notify their clients.
    changes: watch::Sender<u64>,
    /// Set when standard input closed (stdio): listen streams end.
    closed: watch::Sender<bool>,
    /// Set once a `tools/list` was answered: the first change check waits for it.
    answered: watch::Sender<bool>,
    /// Held by a change check: one at a time.
    checking: std::sync::Mutex<()>,
    /// The stdio MCP servers `mcp` tools' calls started, kept for the next calls.
    sessions: Arc<crate::invoke::mcp::Sessions>,
    /// The calls under way, by a number of their own: cancelled when the server stops.
    calls: std::sync::Mutex<(u64, std::collections::HashMap<u64, Cancel>)>,
}

#[derive(Default)]
struct State {
    search: bool,
    /// The usable tools (none in search mode), as `tools/list` gives them (as JSON: a page is
    /// made into the SDK's tools when it is asked for).
    listed: Arc<Listed>,
    /// `--mode all` started without a kept list: the candidates the list is made of (from the
    /// index alone), of which each page translates its own when asked for, until the first
    /// change check (at once) has made the whole list and `listed` replaces them. A page is a
    /// range of candidates either way, so a client walking the pages meanwhile sees one list.
    pending: Option<Arc<Vec<Candidate>>>,
    /// `pending` came from the index as toolctl last left it, without its change check (the
    /// first check, after the first answer, finds what the files moved since).
    unchecked: bool,
    /// How many tools the catalog offers (search mode: as counted).
    count: usize,
    /// The catalog's stamp when the list was made.
    stamp: Stamp,
    /// `--mode all`: `listed` is the list kept in `.toolctl/` for `stamp` (read back, or kept
    /// when made). A list made while the catalog moved is not kept: the next check makes it
    /// again, even when the stamp is then back where it was (another process's write-ahead
    /// log, there while it had the index open, is gone).
    kept: bool,
}

impl Shared {
    fn new(
        settings: Settings,
        log: Arc<dyn Log>,
        sessions: Arc<crate::invoke::mcp::Sessions>,
    ) -> Self {
        Self {
            sessions,
            settings,
            log,
            state: RwLock::new(State::default()),
            changes: watch::Sender::new(0),
            closed: watch::Sender::new(false),
            answered: watch::Sender::new(false),
            checking: std::sync::Mutex::new(()),
            calls: std::sync::Mutex::default(),
        }
    }

    /// A call under way until the guard is dropped, which cancels it (its handler was
    /// dropped, or it is over).
    fn running(self: &Arc<Self>, cancel: Cancel) -> Running {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.0 += 1;
        let id = calls.0;
        calls.1.insert(id, cancel.clone());
        Running {
            shared: self.clone(),
            id,
            cancel,
        }
    }

    /// Cancel every call under way (the server is stopping).
    fn cancel_calls(&self) {
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.1.values().for_each(Cancel::cancel);
    }

    fn catalog(&self) -> Result<Catalog, Error> {
        Ok(Catalog::open(&self.settings.root)?.with_lock_timeout(self.settings.lock_timeout))
    }

    fn snapshot(&self) -> Snapshot {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        Snapshot {
            search: state.search,
            listed: state.listed.clone(),
            pending: state.pending.clone(),
        }
    }

    /// One line on what is served.
    fn describe(&self) -> String {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        let filtered = if self.settings.filters.is_empty() {
            ""
        } else {
            " (filtered)"
        };
        match (state.search, self.settings.mode) {
            (false, _) if state.pending.is_some() => format!(
                "mode all: listing up to {} tools{filtered} (each page made when asked for, until the whole list is made{})",
                state.count,
                if state.unchecked {
                    "; from the index as toolctl left it, checked against the files after the first answer"
                } else {
                    ""
                }
            ),
            (false, _) => format!(
                "mode all: listing {} tools{filtered}",
                state.listed.names.len()
            ),
            (true, Mode::Auto) => format!(
                "mode search: {} tools{filtered} is more than {AUTO_LIMIT}, so the list is {SEARCH_TOOLS} and {CALL_TOOL}",
                state.count
            ),
            (true, _) => format!("mode search: the list is {SEARCH_TOOLS} and {CALL_TOOL}"),
        }
    }

    /// The change check: bring the index up to date with the files, and make the list again
    /// when the index moved since it was last made. True when what a client sees changed.
    fn check(&self) -> Result<bool, Error> {
        let _one = self.checking.lock().unwrap_or_else(|e| e.into_inner());
        let catalog = self.catalog()?;
        Index::open(&catalog, &mut |_, _| {}).map_err(view::Error::from)?;
        let stamp = cache::stamp(catalog.root());
        let moved = self
            .state
            .read()
            .map(|state| {
                state.stamp != stamp
                    || state.pending.is_some()
                    || (self.settings.mode == Mode::All && !state.kept)
            })
            .unwrap_or(true);
        if !moved {
            return Ok(false);
        }
        self.refresh()
    }

    /// The first list: in `--mode all`, the one kept in `.toolctl/` when it was made at the
    /// catalog's stamp now (the first change check, a moment later, finds what the index has
    /// not taken in yet); else, without `--tag`/`--tool`, the candidates alone (the first
    /// change check, at once, makes the whole list); else made.
    fn start(&self) -> Result<(), Error> {
        if self.settings.mode == Mode::All {
            let root = &self.settings.root;
            let stamp = cache::stamp(root);
            if let Some(listed) = cache::load(root, &self.settings.filters, &stamp) {
                let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
                *state = State {
                    search: false,
                    count: listed.names.len(),
                    listed: Arc::new(listed),
                    pending: None,
                    unchecked: false,
                    stamp,
                    kept: true,
                };
                return Ok(());
            }
            let catalog = self.catalog()?;
            let filters = &self.settings.filters;
            // The index as toolctl left it, unchecked: its change check (a stat of every
            // tool's folder) is the first check's, after the first answer. `stamp` was taken
            // before: that check sees what moved since.
            let (found, unchecked, stamp) = match view::candidates_unchecked(&catalog, filters) {
                Some(found) => (Some(found), true, stamp),
                // Read after the index's change check, which may have built the index (a
                // fresh catalog) or taken in what the files moved: the pages are made from
                // the index as it is now, and that is no change of the list to announce.
                None => {
                    let found = view::candidates(&catalog, filters)?;
                    (found, false, cache::stamp(root))
                }
            };
            if let Some((candidates, _)) = found {
                let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
                *state = State {
                    search: false,
                    count: candidates.len(),
                    listed: Arc::default(),
                    pending: Some(Arc::new(candidates)),
                    unchecked,
                    stamp,
                    kept: false,
                };
                return Ok(());
            }
        }
        self.refresh().map(|_| ())
    }

    /// The whole list of `--mode all`: every candidate translated (or, with `--tag`/`--tool`,
    /// the filtered export).
    fn whole(&self, catalog: &Catalog) -> Result<Listed, Error> {
        let translated = match view::candidates(catalog, &self.settings.filters)? {
            Some((candidates, problems)) => {
                let mut translated = view::translate(catalog, &candidates);
                translated.problems.extend(problems);
                translated
            }
            None => view::list(catalog, &self.settings.filters)?.into(),
        };
        Ok(self.listed_of(translated, true))
    }

    /// The tools of `page` (a range of the candidates), as the whole list shows them.
    fn page(&self, page: &[Candidate]) -> Result<Vec<Tool>, Error> {
        let catalog = self.catalog()?;
        let listed = self.listed_of(view::translate(&catalog, page), false);
        Ok(listed
            .tools
            .iter()
            .filter_map(|tool| serde_json::from_str(tool).ok())
            .collect())
    }

    /// Make the list again. True when what a client sees changed.
    fn refresh(&self) -> Result<bool, Error> {
        let catalog = self.catalog()?;
        let root = catalog.root();
        let before = cache::stamp(root);
        let filters = &self.settings.filters;
        let (search, listed) = match self.settings.mode {
            Mode::Search => (true, Listed::default()),
            Mode::All => (false, self.whole(&catalog)?),
            Mode::Auto => match view::survey(&catalog, filters, AUTO_LIMIT)? {
                Survey::TooMany(count) => (
                    true,
                    Listed {
                        candidates: count,
                        ..Listed::default()
                    },
                ),
                Survey::Listed(listing) => (false, self.listed_of(listing.into(), true)),
            },
        };
        let count = if search {
            listed.candidates
        } else {
            listed.names.len()
        };
        // Kept for the next start when nothing moved while it was made (the list's own
        // change check may have written the index: the first check then makes it again).
        let kept = self.settings.mode == Mode::All && cache::stamp(root) == before;
        if kept {
            cache::store(root, filters, &before, &listed);
        }
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let changed = state.search != search
            || match state.pending {
                // The pages shown were made from the catalog at that stamp: the same list.
                Some(_) => state.stamp != before,
                None => state.listed.fingerprint != listed.fingerprint,
            };
        *state = State {
            search,
            listed: Arc::new(listed),
            pending: None,
            unchecked: false,
            count,
            stamp: before,
            kept,
        };
        Ok(changed)
    }

    /// The translated tools as the SDK's tools (as JSON); warnings for what was left out
    /// when `warn`.
    fn listed_of(&self, listing: Translated, warn: bool) -> Listed {
        for problem in listing.problems.iter().filter(|_| warn) {
            self.log.warn(&format!(
                "skipped {}: {}",
                problem.path.display(),
                problem.message
            ));
        }
        for error in listing.errors.iter().filter(|_| warn) {
            self.log.warn(&format!("left out a tool: {error}"));
        }
        for refused in listing.left_out.iter().filter(|_| warn) {
            for problem in &refused.problems {
                self.log.warn(&format!(
                    "left out {} (MCP cannot take it): {problem}",
                    refused.reference
                ));
            }
        }
        let mut listed = Listed {
            candidates: listing.candidates,
            ..Listed::default()
        };
        let mut hasher = DefaultHasher::new();
        listing.candidates.hash(&mut hasher);
        for (slot, entry) in listing.tools {
            let name = entry["name"].as_str().unwrap_or_default().to_owned();
            match serde_json::from_value::<Tool>(entry)
                .and_then(|tool| serde_json::to_string(&tool))
            {
                Ok(json) => {
                    (slot, &json).hash(&mut hasher);
                    listed.names.push(name);
                    listed.tools.push(json);
                    listed.slots.push(slot);
                }
                Err(e) if warn => self.log.warn(&format!("left out {name}: {e}")),
                Err(_) => {}
            }
        }
        listed.fingerprint = hasher.finish();
        listed
    }

    /// The listed tool of this name; the catalog is looked at again when there is none (the
    /// tool may be newer than the last check).
    fn listed(&self, name: &str) -> Option<Tool> {
        let find = |snapshot: Snapshot| match snapshot.pending {
            Some(pending) => {
                let at = pending.iter().position(|c| c.name == name)?;
                self.page(&pending[at..=at]).ok()?.pop()
            }
            None => {
                let listed = snapshot.listed;
                let at = listed.names.iter().position(|n| n == name)?;
                serde_json::from_str(listed.tools.get(at)?).ok()
            }
        };
        if let Some(tool) = find(self.snapshot()) {
            return Some(tool);
        }
        if self.refresh().ok()? {
            self.changes.send_modify(|n| *n += 1);
        }
        find(self.snapshot())
    }

    fn options(&self, catalog: &Catalog, cancel: &Cancel) -> Options<'static> {
        Options {
            mcp_sessions: Some(Arc::clone(&self.sessions)),
            cancel: Some(cancel.clone()),
            ..Options::new(catalog, self.settings.workspace.clone())
        }
    }

    /// Call a catalog tool as `invoke` does.
    fn call(&self, name: &str, arguments: Value, cancel: &Cancel) -> CallToolResult {
        let catalog = match self.catalog() {
            Ok(catalog) => catalog,
            Err(e) => return failure(Failure::new(ErrorCode::Internal, e.to_string())),
        };
        match view::call(&catalog, name, arguments, &self.options(&catalog, cancel)) {
            Ok(value) => success(value),
            Err(e) => failure(e),
        }
    }

    /// `search_tools`: the tools that fit a query.
    fn search_tools(&self, arguments: &Map<String, Value>) -> CallToolResult {
        let Some(query) = arguments.get("query").and_then(Value::as_str) else {
            return invalid("search_tools needs \"query\", a string");
        };
        let max = match arguments.get("max") {
            None | Some(Value::Null) => DEFAULT_SEARCH_MAX,
            Some(max) => match max.as_u64() {
                Some(n) if (1..=crate::pick::MAX_PICKS as u64).contains(&n) => n as usize,
                _ => {
                    return invalid(format!(
                        "\"max\" must be an integer from 1 to {}",
                        crate::pick::MAX_PICKS
                    ));
                }
            },
        };
        let found = self
            .catalog()
            .and_then(|catalog| Ok(view::search(&catalog, &self.settings.filters, query, max)?));
        match found {
            Ok(tools) => {
                let tools: Vec<Value> = tools
                    .into_iter()
                    .map(|t| {
                        json!({
                            "name": t["name"],
                            "description": t["description"],
                            "inputSchema": t["inputSchema"],
                        })
                    })
                    .collect();
                CallToolResult::structured(json!({ "tools": tools }))
            }
            // A query pick refuses (no words to look for) is the caller's to fix.
            Err(Error::View(e)) if matches!(&*e, view::Error::Pick(p) if p.is_bad_request()) => {
                invalid(e.to_string())
            }
            Err(e) => failure(Failure::new(ErrorCode::Internal, e.to_string())),
        }
    }

    /// `call_tool`: any tool the list would show, by its exported name.
    fn call_tool(&self, arguments: &Map<String, Value>, cancel: &Cancel) -> CallToolResult {
        let Some(name) = arguments.get("name").and_then(Value::as_str) else {
            return invalid("call_tool needs \"name\", the exported name of a tool");
        };
        let inner = match arguments.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(inner @ Value::Object(_)) => inner.clone(),
            Some(_) => return invalid("call_tool's \"arguments\" must be an object"),
        };
        if !self.settings.filters.is_empty() {
            let listed = self
                .catalog()
                .map_err(|e| e.to_string())
                .and_then(|catalog| {
                    view::list(&catalog, &self.settings.filters).map_err(|e| e.to_string())
                });
            match listed {
                Ok(listing) if listing.tools.iter().any(|t| t["name"] == name) => {}
                Ok(_) => {
                    return failure(Failure::new(
                        ErrorCode::UnknownTool,
                        format!("no tool '{name}' is served here; find tools with {SEARCH_TOOLS}"),
                    ));
                }
                Err(e) => return failure(Failure::new(ErrorCode::Internal, e)),
            }
        }
        self.call(name, inner, cancel)
    }
}

/// A value as a call result: the text (a string as it is, anything else as JSON), and the
/// value itself as `structuredContent` when it is an object.
fn success(value: Value) -> CallToolResult {
    match value {
        Value::Object(_) => CallToolResult::structured(value),
        Value::String(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        other => CallToolResult::success(vec![ContentBlock::text(other.to_string())]),
    }
}

/// A failed call as a result with `isError: true`: "CODE: message" as text, and the error
/// (code, message, details, hint) as `structuredContent`.
fn failure(failure: Failure) -> CallToolResult {
    let code = failure.code.as_str();
    let text = failure.into_text();
    let mut error = json!({ "code": code, "message": text.message });
    if text.details.as_object().is_some_and(|d| !d.is_empty()) {
        error["details"] = text.details;
    }
    if let Some(hint) = &text.hint {
        error["hint"] = json!(hint);
    }
    let mut line = format!("{code}: {}", text.message);
    if let Some(hint) = text.hint {
        line.push_str(&format!("\nhint: {hint}"));
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(line)]);
    result.structured_content = Some(json!({ "error": error }));
    result
}

fn invalid(message: impl Into<String>) -> CallToolResult {
    failure(Failure::new(ErrorCode::ValidationError, message))
}

/// The search mode's tools.
fn search_mode_tools() -> Vec<Tool> {
    let search = json!({
        "name": SEARCH_TOOLS,
        "title": "Search the tool catalog",
        "description": "Find the tools that fit a task. Returns the best tools first, each with its name, description and inputSchema; run one with call_tool.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The task, in any words"},
                "max": {"type": "integer", "minimum": 1, "maximum": crate::pick::MAX_PICKS, "description": format!("How many tools at most (default {DEFAULT_SEARCH_MAX})")}
            },
            "required": ["query"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
    });
    let call = json!({
        "name": CALL_TOOL,
        "title": "Run a tool of the catalog",
        "description": "Run a tool found with search_tools: give its name and its arguments (an object matching its inputSchema).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as search_tools gave it"},
                "arguments": {"type": "object", "description": "The tool's arguments"}
            },
            "required": ["name"],
            "additionalProperties": false
        }
    });
    [search, call]
        .into_iter()
        .filter_map(|t| serde_json::from_value(t).ok())
        .collect()
}

/// The cursor of the page that starts at `offset`.
fn cursor(offset: usize) -> String {
    format!("offset:{offset}")
}

fn parse_cursor(cursor: &str, len: usize) -> Result<usize, ErrorData> {
    cursor
        .strip_prefix("offset:")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n <= len)
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!("invalid cursor '{cursor}': not one this server gave (the list may have changed: list again from the start)"),
                None,
            )
        })
}

/// One client session (one for stdio; one per session over HTTP).
#[derive(Clone)]
struct Server(Arc<Shared>);

impl Server {
    /// Run blocking work off the async threads.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Shared) -> T + Send + 'static,
    ) -> Result<T, ErrorData> {
        let shared = self.0.clone();
        tokio::task::spawn_blocking(move || work(&shared))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the call did not finish: {e}"), None))
    }

    /// `tools/call`: the tool's result (cancelled with `cancel`).
    async fn run_call(
        &self,
        request: CallToolRequestParams,
        cancel: Cancel,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();

        let arguments = request.arguments.unwrap_or_default();
        let search = self.0.snapshot().search;
        let result = if search {
            match name.as_str() {
                SEARCH_TOOLS => self.blocking(move |s| s.search_tools(&arguments)).await?,
                CALL_TOOL => {
                    self.blocking(move |s| s.call_tool(&arguments, &cancel))
                        .await?
                }
                _ => return Err(unknown_tool(&name)),
            }
        } else {
            let called = name.clone();
            let outcome = self
                .blocking(move |s| {
                    let tool = s.listed(&called)?;
                    let mut result = s.call(&called, Value::Object(arguments), &cancel);
                    // Clients check structuredContent against the outputSchema even on an
                    // error (the TypeScript SDK does): the error is then told as text only.
                    if result.is_error == Some(true) && tool.output_schema.is_some() {
                        result.structured_content = None;
                    }
                    Some(result)
                })
                .await?;
            match outcome {
                Some(result) => result,
                None => return Err(unknown_tool(&name)),
            }
        };
        Ok(result.into())
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("toolctl", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "The tools of a toolctl catalog. Calls are checked against each tool's schema; a failed call says why (isError).",
        )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let snapshot = self.0.snapshot();
        if snapshot.search {
            self.0.answered.send_replace(true);
            return Ok(ListToolsResult::with_all_items(search_mode_tools()));
        }
        // A page is the candidates from `start` to `end`, less those MCP cannot take.
        let total = match &snapshot.pending {
            Some(pending) => pending.len(),
            None => snapshot.listed.candidates,
        };
        let start = match request.and_then(|r| r.cursor) {
            Some(cursor) => parse_cursor(&cursor, total)?,
            None => 0,
        };
        let end = (start + self.0.settings.page_size.max(1)).min(total);
        let items = match snapshot.pending {
            Some(pending) => self
                .blocking(move |s| s.page(&pending[start..end]))
                .await?
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
            None => {
                let listed = snapshot.listed;
                let first = listed.slots.partition_point(|slot| *slot < start);
                let last = listed.slots.partition_point(|slot| *slot < end);
                listed.tools[first..last]
                    .iter()
                    .filter_map(|tool| serde_json::from_str(tool).ok())
                    .collect()
            }
        };
        let mut page = ListToolsResult::with_all_items(items);
        if end < total {
            page.next_cursor = Some(cursor(end));
        }
        self.0.answered.send_replace(true);
        Ok(page)
    }

    /// A call runs until it is over, or until nobody waits for it: the client cancelled it
    /// (`notifications/cancelled`; the SDK also cancels the calls of a session that ends),
    /// standard input closed (the client left), or this handler was dropped; then it is
    /// cancelled ([`Options::cancel`]: an `exec` program is killed with what it started) and
    /// its end (soon) is waited for.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let cancel = Cancel::new();
        let _running = self.0.running(cancel.clone());
        let work = self.run_call(request, cancel.clone());
        tokio::pin!(work);
        let closed = until_set(self.0.closed.subscribe());
        tokio::select! {
            result = &mut work => return result,
            _ = context.ct.cancelled() => {}
            _ = closed => {}
        }
        cancel.cancel();
        work.await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.0.changes.subscribe();
        let closed = until_set(self.0.closed.subscribe());
        tokio::pin!(closed);
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                _ = &mut closed => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut changes = self.0.changes.subscribe();
        let peer = context.peer;
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
            }
        });
    }
}

/// A call under way ([`Shared::running`]): dropped, it is cancelled and forgotten.
struct Running {
    shared: Arc<Shared>,
    id: u64,
    cancel: Cancel,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.cancel.cancel();
        let mut calls = self.shared.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.1.remove(&self.id);
    }
}

/// Wait until the flag is set (standard input has closed, a list was answered).
async fn until_set(mut flag: watch::Receiver<bool>) {
    let _ = flag.wait_for(|set| *set).await;
}

fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("unknown tool: {name}"),
        Some(json!({ "code": ErrorCode::UnknownTool.as_str(), "name": name })),
    )
}

#[cfg(test)]
mod tests {
    use super::{allowed_hosts, allowed_origins};

    #[test]
    fn a_public_address_is_a_host_and_an_origin_beside_the_loopback_names() {
        let loopback = ["localhost", "127.0.0.1", "::1"];
        assert_eq!(allowed_hosts("127.0.0.1:8765".parse().unwrap()), loopback);
        assert_eq!(allowed_hosts("0.0.0.0:8765".parse().unwrap()), loopback);
        assert_eq!(allowed_hosts("[::]:8765".parse().unwrap()), loopback);
        assert_eq!(
            allowed_hosts("127.0.0.2:8765".parse().unwrap()),
            ["localhost", "127.0.0.1", "::1", "127.0.0.2"]
        );
        let public = allowed_hosts("192.0.2.7:8765".parse().unwrap());
        assert_eq!(public, ["localhost", "127.0.0.1", "::1", "192.0.2.7"]);
        assert_eq!(
            allowed_hosts("[2001:db8::7]:8765".parse().unwrap())[3],
            "2001:db8::7"
        );
        let origins = allowed_origins(&public);
        assert!(
            origins.contains(&"http://[::1]:*".to_owned()),
            "{origins:?}"
        );
        assert!(
            origins.contains(&"https://192.0.2.7:*".to_owned()),
            "{origins:?}"
        );
        assert_eq!(origins.len(), 8);
    }
}
