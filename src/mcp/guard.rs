//! What makes `mcp serve --http` safe to reach from other machines: a bearer token checked on
//! every request before the MCP service sees it, a cap on live MCP sessions, and the limits on
//! connections ([`DEFAULT_MAX_CONNECTIONS`], [`HEADER_READ_TIMEOUT`]) that `serve` applies
//! where it accepts them.
//!
//! The SDK's session manager has no cap of its own, so [`CappedSessions`] wraps it: a session
//! past the cap is refused where the SDK creates it, and the request that asked for it (an
//! `initialize`) is answered 503 by [`with_session_refusal`]'s caller, so the count is exact
//! however many clients initialize at once.

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
use std::convert::Infallible;
use std::time::Duration;
use subtle::ConstantTimeEq;

/// Live MCP sessions (handshake-era clients: one per `initialize`) unless `--max-sessions`
/// says otherwise. A session the client never closes ends after the SDK's idle expiry
/// ([`SESSION_IDLE_EXPIRY`]).
pub const DEFAULT_MAX_SESSIONS: usize = 100;

/// How long a session may go without a request before the SDK closes it (the SDK's default,
/// set here so that the README's figure cannot drift from it).
pub const SESSION_IDLE_EXPIRY: Duration = Duration::from_secs(300);

/// Open HTTP connections unless `--max-connections` says otherwise: a client holds one per
/// request in flight and one per open event stream. Below the usual limit of 1,024 open files,
/// which the catalog's files, SQLite and the tools' processes share.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// How long a client may take to send a request's headers, and how long a kept-alive
/// connection may stay idle between requests, before the connection is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

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
