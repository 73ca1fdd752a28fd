//! What makes `mcp serve --http` safe to reach from other machines: a bearer token checked on
//! every request before the MCP service sees it, a cap on live MCP sessions, the limits on
//! connections ([`DEFAULT_MAX_CONNECTIONS`], [`DEFAULT_CLIENT_TIMEOUT`]) that `serve` applies
//! where it accepts them, the bound on a request's body ([`read_body`]), and warnings about
//! turned-away clients told at most once every [`WARN_EVERY`] ([`Throttled`]).
//!
//! The SDK's session manager has no cap of its own, so [`CappedSessions`] wraps it: a session
//! past the cap is refused where the SDK creates it, and the request that asked for it (an
//! `initialize`) is answered 503 by [`with_session_refusal`]'s caller, so the count is exact
//! however many clients initialize at once.
//!
//! `Gate` puts these before the SDK's service: each request meets the token, then the bound on
//! its body, then the session cap, and each client turned away is told in a throttled warning.
//! `serve` makes one per HTTP server; it closes connections past their cap itself, before a
//! request is read, and tells that through the gate's warnings too.

use super::serve::Log;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Bytes;
use hyper::header::{
    AUTHORIZATION, CONNECTION, CONTENT_TYPE, HeaderMap, HeaderValue, WWW_AUTHENTICATE,
};
use hyper::{Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use std::cell::Cell;
use std::collections::HashSet;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Live MCP sessions (handshake-era clients: one per `initialize`) unless `--max-sessions`
/// says otherwise. A session the client never closes ends after the SDK's idle expiry
/// ([`SESSION_IDLE_EXPIRY`]).
pub const DEFAULT_MAX_SESSIONS: usize = 100;

/// How long a session may go without a request before the SDK closes it (the SDK's default,
/// set here so that the manual's figure (docs/mcp.md) cannot drift from it).
pub const SESSION_IDLE_EXPIRY: Duration = Duration::from_secs(300);

/// Open HTTP connections unless `--max-connections` says otherwise: a client holds one per
/// request in flight and one per open event stream. Below the usual limit of 1,024 open files,
/// which the catalog's files, SQLite and the tools' processes share.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// How long a client may take to send a request's headers (from connecting, or from the end
/// of the last answer on a kept-alive connection: an idle connection is closed then), and then
/// its body, unless `--client-timeout` says otherwise.
pub const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest request body read (the SDK's own default, set here so that the README's figure
/// and the SDK's cap cannot drift apart): a JSON-RPC message, whose arguments may hold a file.
/// Each connection holds at most one such body at a time, so `--max-connections` bounds them
/// together (1 GiB at the default 256, reachable only by clients that hold the token when
/// there is one).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// [`MAX_BODY_BYTES`] in words ("4 MiB").
pub fn max_body() -> String {
    format!("{} MiB", MAX_BODY_BYTES / (1024 * 1024))
}

/// Warnings of one kind about turned-away clients are told at most once this often.
pub const WARN_EVERY: Duration = Duration::from_secs(10);

/// The shortest token accepted (in characters).
pub const MIN_TOKEN_LEN: usize = 16;

/// The bearer token every request must carry. Its `Debug` form does not show it.
#[derive(Clone)]
pub struct Token(Box<[u8]>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token([redacted])")
    }
}

/// Why a token was not accepted (the text never holds the token).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("it is empty")]
    Empty,
    #[error("it is {0} characters long; a token must have at least {MIN_TOKEN_LEN}")]
    Short(usize),
    #[error(
        "it holds a character other than visible ASCII (letters, digits, punctuation): clients could not send it in a header"
    )]
    Character,
}

impl Token {
    /// A token from its text: at least [`MIN_TOKEN_LEN`] visible ASCII characters (what a
    /// header carries as it is: no spaces, no control or non-ASCII characters).
    pub fn new(text: &str) -> Result<Self, TokenError> {
        if text.is_empty() {
            return Err(TokenError::Empty);
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::Character);
        }
        if text.len() < MIN_TOKEN_LEN {
            return Err(TokenError::Short(text.len()));
        }
        Ok(Self(text.as_bytes().into()))
    }

    /// Whether the request's headers carry this token as `Authorization: Bearer <token>` (the
    /// scheme in any case); if not, why, in words that do not hold what was sent.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), &'static str> {
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let value = match (values.next(), values.next()) {
            (Some(value), None) => value.as_bytes(),
            (None, _) => return Err("no Authorization header"),
            (Some(_), Some(_)) => return Err("more than one Authorization header"),
        };
        let Some((scheme, given)) = value
            .iter()
            .position(|b| *b == b' ')
            .map(|space| (&value[..space], &value[space + 1..]))
        else {
            return Err("the Authorization header is not \"Bearer <token>\"");
        };
        if !scheme.eq_ignore_ascii_case(b"bearer") {
            return Err("the Authorization header is not a Bearer token");
        }
        let given = given.trim_ascii_start();
        // In constant time: how much of a guess matched must not show in how long the answer
        // takes (a wrong length is answered at once; the length is not the secret).
        if bool::from(given.ct_eq(&self.0)) {
            Ok(())
        } else {
            Err("wrong bearer token")
        }
    }
}

/// What the server answers a request without the token: 401 with `WWW-Authenticate: Bearer`.
pub fn unauthorized() -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = text_response(
        StatusCode::UNAUTHORIZED,
        "Unauthorized: send the server's token as \"Authorization: Bearer <token>\"\n",
    );
    response
        .headers_mut()
        .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    // The connection ends with the answer: a client without the token cannot keep one (it
    // counts against `--max-connections`) by sending refused requests, nor fill stderr with
    // refusals on one connection.
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// What the server answers an `initialize` past the session cap: 503 with a JSON-RPC error
/// naming the cap (`id` null: the request's id is not known where the session is refused, and
/// clients take a null id as the answer to the request they sent).
pub fn sessions_full(cap: usize) -> Response<BoxBody<Bytes, Infallible>> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!("this server allows {cap} MCP sessions at a time and all are in use: close one (HTTP DELETE) or try again later"),
            "data": { "maxSessions": cap },
        },
    });
    let mut response = text_response(StatusCode::SERVICE_UNAVAILABLE, body.to_string());
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Why a request's body was not read whole.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyRefusal {
    /// It did not come whole in time (408).
    Late,
    /// It is longer than [`MAX_BODY_BYTES`], by its `Content-Length` or as it came (413).
    TooLarge,
    /// The client ended it badly (closed the connection, broke the chunked encoding): 400.
    Broken,
}

impl BodyRefusal {
    /// What the server answers: the connection ends with it, as the rest of the body (if the
    /// client is still sending it) is not read.
    pub fn response(&self, timeout: Duration) -> Response<BoxBody<Bytes, Infallible>> {
        let mut response = match self {
            Self::Late => text_response(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the request's body did not arrive whole within {} s of its headers\n",
                    timeout.as_secs()
                ),
            ),
            Self::TooLarge => text_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "Payload Too Large: a request's body may hold at most {} ({MAX_BODY_BYTES} bytes)\n",
                    max_body()
                ),
            ),
            Self::Broken => text_response(
                StatusCode::BAD_REQUEST,
                "Bad Request: the request's body ended badly\n",
            ),
        };
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        response
    }
}

/// A request's body read whole, at most [`MAX_BODY_BYTES`] of it and within `timeout` (from
/// now, that is from the end of its headers), so that a client trickling a body (or announcing
/// a body it never sends) does not hold its connection, and a huge one is refused by its
/// `Content-Length` before a byte of it is read. Only the request is bounded: the answer (an
/// event stream, a slow tool's result) takes as long as it takes.
pub async fn read_body<B>(
    request: hyper::Request<B>,
    timeout: Duration,
) -> Result<hyper::Request<Full<Bytes>>, BodyRefusal>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = request.into_parts();
    let bytes = read_bytes(&parts.headers, body, MAX_BODY_BYTES, timeout).await?;
    Ok(hyper::Request::from_parts(parts, Full::new(bytes)))
}

/// A body read whole as [`read_body`] reads one, at most `limit` bytes (by its
/// `Content-Length` in `headers`, or as it came).
pub async fn read_bytes<B>(
    headers: &HeaderMap,
    body: B,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyRefusal>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let announced = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|length| length > limit as u64) {
        return Err(BodyRefusal::TooLarge);
    }
    let limited = http_body_util::Limited::new(body, limit);
    match tokio::time::timeout(timeout, limited.collect()).await {
        Err(_) => Err(BodyRefusal::Late),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(BodyRefusal::TooLarge),
        Ok(Err(_)) => Err(BodyRefusal::Broken),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// Warnings of one kind about turned-away clients (refused without the token, closed past
/// the connection cap…): the first is told, then at most one every [`WARN_EVERY`], each
/// saying how many were not told since the one before and from how many addresses; what is
/// left untold when they stop is told by [`Throttled::overdue`], which the server asks every
/// second. A client that sends refused request after refused request cannot fill the log, and
/// no refusal goes uncounted.
#[derive(Debug)]
pub struct Throttled {
    /// What the warnings are about, as a plural noun phrase ("requests refused without the
    /// token (401)").
    kind: String,
    pending: std::sync::Mutex<Pending>,
}

#[derive(Debug, Default)]
struct Pending {
    last_told: Option<Instant>,
    last_noted: Option<Instant>,
    untold: usize,
    /// The addresses of the untold ones, at most [`MAX_ADDRESSES_COUNTED`].
    peers: HashSet<IpAddr>,
}

/// How many addresses a summary counts one by one (past it: "10000 or more").
const MAX_ADDRESSES_COUNTED: usize = 10_000;

impl Throttled {
    pub fn new(kind: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            pending: std::sync::Mutex::new(Pending::default()),
        }
    }

    /// One more of this kind, from `peer`: the line to tell now (`line()`, with the count of
    /// those not told since the last), or `None` when one was told less than [`WARN_EVERY`]
    /// ago (it is counted).
    pub fn note(&self, peer: SocketAddr, line: impl FnOnce() -> String) -> Option<String> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        pending.last_noted = Some(now);
        if pending
            .last_told
            .is_some_and(|told| now.duration_since(told) < WARN_EVERY)
        {
            pending.untold += 1;
            if pending.peers.len() < MAX_ADDRESSES_COUNTED {
                pending.peers.insert(peer.ip());
            }
            return None;
        }
        let mut told = line();
        if let Some((more, addresses)) = pending.take() {
            told.push_str(&format!(
                "; {more} more since the last warning, from {addresses}"
            ));
        }
        pending.last_told = Some(now);
        Some(told)
    }

    /// The count of those not told, once none came for a second and [`WARN_EVERY`] passed
    /// since the last line told: what would otherwise never be said when they stop.
    pub fn overdue(&self) -> Option<String> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let quiet = pending
            .last_noted
            .is_none_or(|noted| now.duration_since(noted) >= Duration::from_secs(1));
        let due = pending
            .last_told
            .is_none_or(|told| now.duration_since(told) >= WARN_EVERY);
        if !(quiet && due) {
            return None;
        }
        let (more, addresses) = pending.take()?;
        pending.last_told = Some(now);
        Some(format!(
            "{more} more {} since the last warning, from {addresses}",
            self.kind
        ))
    }
}

impl Pending {
    /// How many were not told and from how many addresses (in words), then none are; or
    /// `None`.
    fn take(&mut self) -> Option<(usize, String)> {
        if self.untold == 0 {
            return None;
        }
        let addresses = match self.peers.len() {
            1 => "1 address".to_owned(),
            n if n >= MAX_ADDRESSES_COUNTED => format!("{n} or more addresses"),
            n => format!("{n} addresses"),
        };
        let more = self.untold;
        self.untold = 0;
        self.peers.clear();
        Some((more, addresses))
    }
}

fn text_response(
    status: StatusCode,
    body: impl Into<Bytes>,
) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(body.into()).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

tokio::task_local! {
    /// Set when [`CappedSessions`] refused a session for the request being handled.
    static REFUSED: Cell<bool>;
}

/// Run `handle` (one request through the SDK's service), and say whether the session cap
/// refused a session on its way.
pub async fn with_session_refusal<T>(handle: impl Future<Output = T>) -> (T, bool) {
    REFUSED
        .scope(Cell::new(false), async {
            let answer = handle.await;
            (answer, REFUSED.with(Cell::get))
        })
        .await
}

/// The SDK's in-memory sessions, at most `cap` of them at a time.
#[derive(Debug)]
pub struct CappedSessions {
    inner: LocalSessionManager,
    cap: usize,
    /// Held while a session is counted and made, so that two at once cannot both take the
    /// last place.
    creating: tokio::sync::Mutex<()>,
}

impl CappedSessions {
    pub fn new(cap: usize) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(SESSION_IDLE_EXPIRY);
        Self {
            inner,
            cap,
            creating: tokio::sync::Mutex::new(()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("all {0} MCP sessions are in use")]
    Full(usize),
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

impl SessionManager for CappedSessions {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _creating = self.creating.lock().await;
        if self.inner.sessions.read().await.len() >= self.cap {
            let _ = REFUSED.try_with(|refused| refused.set(true));
            return Err(SessionError::Full(self.cap));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(self.inner.restore_session(id).await?)
    }
}

/// What stands before the SDK's service: the token, the bound on a request's body, and the
/// answer past the session cap; and the warnings about the clients turned away.
/// An HTTP response of the MCP endpoint.
pub type Answer = Response<BoxBody<Bytes, Infallible>>;

pub(super) struct Gate {
    pub(super) token: Option<Token>,
    pub(super) max_sessions: usize,
    pub(super) client_timeout: Duration,
    pub(super) log: Arc<dyn Log>,
    pub(super) warnings: Warnings,
}

/// The warnings about turned-away clients, by kind: each told at most once every
/// [`WARN_EVERY`], with the count of those not told.
pub(super) struct Warnings {
    unauthorized: Throttled,
    body_refused: Throttled,
    sessions_full: Throttled,
    pub(super) connections_full: Throttled,
}

impl Warnings {
    pub(super) fn new(max_sessions: usize, max_connections: usize) -> Self {
        Self {
            unauthorized: Throttled::new("requests refused without the token (401)"),
            body_refused: Throttled::new("requests refused for their body (408 or 413)"),
            sessions_full: Throttled::new(format!(
                "new MCP sessions refused, all {} being in use (503)",
                max_sessions
            )),
            connections_full: Throttled::new(format!(
                "connections closed at once, all {} being open",
                max_connections
            )),
        }
    }

    fn all(&self) -> [&Throttled; 4] {
        [
            &self.unauthorized,
            &self.body_refused,
            &self.sessions_full,
            &self.connections_full,
        ]
    }
}

/// How connections are taken.
pub(crate) struct Accept {
    /// Open connections at most; one past them is closed at once.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers, and stay idle between
    /// requests.
    pub client_timeout: Duration,
}

/// Accept connections on `listener` until SIGTERM or SIGINT (returned by name), serving each
/// with the service `service` makes for its peer. HTTP/1.1 only: without TLS, clients speak it
/// (HTTP/2 would need ALPN or prior knowledge), and its header-read timeout then bounds every
/// connection from its first byte, which the version sniffing of HTTP/1-or-2 does not. hyper
/// starts that timeout again when an answer ends, so it is also the idle timeout of a
/// kept-alive connection; it does not run while an answer is being sent (an event stream, a
/// slow tool's result). Past the cap a connection is closed at once (`full` is told): answering
/// it (a 503) would mean reading its request, which is what a client holding connections open
/// withholds.
pub(crate) async fn accept_connections<S, B>(
    listener: tokio::net::TcpListener,
    accept: Accept,
    log: &Arc<dyn Log>,
    full: impl Fn(SocketAddr),
    service: impl Fn(SocketAddr) -> S,
) -> &'static str
where
    S: hyper::service::Service<
            hyper::Request<hyper::body::Incoming>,
            Response = Response<B>,
            Error = Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use hyper::server::conn::http1::Builder;
    use hyper_util::rt::{TokioIo, TokioTimer};
    let mut builder = Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(accept.client_timeout);
    let builder = Arc::new(builder);
    let connections = Arc::new(tokio::sync::Semaphore::new(accept.max_connections));
    let stop = super::serve::stop_signal();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            signal = &mut stop => return signal,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors (EMFILE) stays so until a connection closes:
                    // a pause, not a loop that spins and floods stderr meanwhile.
                    log.warn(&format!("accept: {e}"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            drop(stream);
            full(peer);
            continue;
        };
        let (builder, service) = (builder.clone(), service(peer));
        tokio::spawn(async move {
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
    }
}

/// Tell, once a second, what the warnings left untold when the clients they are about
/// stopped coming.
pub(super) async fn tell_overdue(gate: Arc<Gate>) {
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    loop {
        ticks.tick().await;
        for warnings in gate.warnings.all() {
            if let Some(line) = warnings.overdue() {
                gate.log.warn(&line);
            }
        }
    }
}

impl Gate {
    pub(super) async fn answer<B, S, M>(
        &self,
        peer: SocketAddr,
        request: hyper::Request<B>,
        mcp: &rmcp::transport::streamable_http_server::StreamableHttpService<S, M>,
    ) -> Answer
    where
        B: hyper::body::Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        S: rmcp::ServerHandler + Send + 'static,
        M: SessionManager,
    {
        let (method, path) = (request.method().clone(), request.uri().path().to_owned());
        if let Some(token) = &self.token
            && let Err(why) = token.check(request.headers())
        {
            self.warn(&self.warnings.unauthorized, peer, || {
                format!("refused {method} {path} from {peer}: {why} (401)")
            });
            return unauthorized();
        }
        // The body is read here, bounded, rather than by the SDK, which waits for it as long
        // as the client takes.
        let request = match read_body(request, self.client_timeout).await {
            Ok(request) => request,
            Err(refusal) => {
                let response = refusal.response(self.client_timeout);
                if refusal != BodyRefusal::Broken {
                    let why = match refusal {
                        BodyRefusal::Late => format!(
                            "its body did not arrive whole within {} s",
                            self.client_timeout.as_secs()
                        ),
                        _ => format!("its body is over {}", max_body()),
                    };
                    self.warn(&self.warnings.body_refused, peer, || {
                        format!(
                            "refused {method} {path} from {peer}: {why} ({})",
                            response.status().as_u16()
                        )
                    });
                }
                return response;
            }
        };
        let (response, refused) = with_session_refusal(mcp.handle(request)).await;
        if refused {
            self.warn(&self.warnings.sessions_full, peer, || {
                format!(
                    "refused a new MCP session from {peer}: all {} are in use (503)",
                    self.max_sessions
                )
            });
            return sessions_full(self.max_sessions);
        }
        response
    }

    /// Tell a warning of this kind about `peer`, unless one was told a moment ago.
    pub(super) fn warn(&self, kind: &Throttled, peer: SocketAddr, line: impl FnOnce() -> String) {
        if let Some(line) = kind.note(peer, line) {
            self.log.warn(&line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn a_refused_token_is_told_why_without_what_was_sent() {
        let token = Token::new("t0ken-for-tests-0123456789abcdef").unwrap();
        let right = "Bearer t0ken-for-tests-0123456789abcdef";
        assert_eq!(token.check(&headers(&[right])), Ok(()));
        assert_eq!(
            token.check(&headers(&["bearer t0ken-for-tests-0123456789abcdef"])),
            Ok(())
        );
        for (sent, why) in [
            (&[][..], "no Authorization header"),
            (
                &[right, "Bearer x"][..],
                "more than one Authorization header",
            ),
            (
                &["t0ken-for-tests-0123456789abcdef"][..],
                "the Authorization header is not \"Bearer <token>\"",
            ),
            (
                &["Basic t0ken-for-tests-0123456789abcdef"][..],
                "the Authorization header is not a Bearer token",
            ),
            (
                &["Bearer t0ken-for-tests-0123456789abcdefx"][..],
                "wrong bearer token",
            ),
            (
                &["Bearer t0ken-for-tests-0123456789abcde"][..],
                "wrong bearer token",
            ),
        ] {
            assert_eq!(token.check(&headers(sent)), Err(why), "{sent:?}");
        }
    }

    #[test]
    fn throttled_warnings_tell_the_first_and_count_the_rest() {
        let warnings = Throttled::new("things refused");
        let a: SocketAddr = "192.0.2.1:1000".parse().unwrap();
        let b: SocketAddr = "192.0.2.2:1000".parse().unwrap();
        assert_eq!(warnings.note(a, || "first".into()), Some("first".into()));
        assert_eq!(warnings.note(a, || "second".into()), None);
        assert_eq!(warnings.note(b, || "third".into()), None);
        assert_eq!(warnings.note(a, || "fourth".into()), None);
        // Not overdue: the last line was told a moment ago.
        assert_eq!(warnings.overdue(), None);
        // Once WARN_EVERY has passed (as if), the next is told with the count...
        warnings.pending.lock().unwrap().last_told = Some(Instant::now() - WARN_EVERY);
        assert_eq!(
            warnings.note(b, || "fifth".into()),
            Some("fifth; 3 more since the last warning, from 2 addresses".into())
        );
        assert_eq!(warnings.note(b, || "sixth".into()), None);
        // ... or, when none came for a second, the count alone.
        assert_eq!(warnings.overdue(), None);
        {
            let mut pending = warnings.pending.lock().unwrap();
            pending.last_told = Some(Instant::now() - WARN_EVERY);
            pending.last_noted = Some(Instant::now() - Duration::from_secs(1));
        }
        assert_eq!(
            warnings.overdue(),
            Some("1 more things refused since the last warning, from 1 address".into())
        );
        assert_eq!(warnings.overdue(), None);
    }
}
