//! A stdio server's stdout, each line checked on its way to the SDK, so that an answer the SDK
//! cannot parse fails the call at once rather than at its timeout.

use serde_json::Value;
use std::sync::Arc;

/// Why a stdio server's line could not be read, once one could not.
pub(super) type Unreadable = Arc<std::sync::Mutex<Option<String>>>;

/// The longest line [`Lines`] checks; a longer one is passed on unchecked.
const MAX_CHECKED_LINE: usize = 16 << 20;

/// A stdio server's stdout as the SDK reads it, each line checked on the way: the SDK drops a
/// line that is not JSON (`rmcp` 3.11, `transport/async_rw.rs`, so as not to answer a server's
/// log lines), so an answer it cannot parse — 100,000 nested arrays pass serde_json's depth
/// limit — would leave the request waiting for the whole timeout. A line that reads as a
/// JSON-RPC message (see [`unreadable`]) and does not parse is kept in `unreadable` and ends
/// the stream, so the call fails at once and says why.
pub(super) struct Lines<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line is past [`MAX_CHECKED_LINE`]: passed on unchecked up to its end.
    skipping: bool,
    unreadable: Unreadable,
    ended: bool,
}

impl<R> Lines<R> {
    pub(super) fn new(inner: R, unreadable: Unreadable) -> Self {
        Self {
            inner,
            line: Vec::new(),
            skipping: false,
            unreadable,
            ended: false,
        }
    }

    /// Takes `bytes` read; whether a line in them could not be read.
    fn check(&mut self, bytes: &[u8]) -> bool {
        for part in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, end) = match part.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (part, false),
            };
            if !self.skipping {
                self.line.extend_from_slice(body);
                if self.line.len() > MAX_CHECKED_LINE {
                    self.line = Vec::new();
                    self.skipping = true;
                }
            }
            if end {
                let line = std::mem::take(&mut self.line);
                let skipped = std::mem::replace(&mut self.skipping, false);
                if !skipped && let Some(e) = unreadable(&line) {
                    if let Ok(mut kept) = self.unreadable.lock() {
                        *kept = Some(e);
                    }
                    return true;
                }
            }
        }
        false
    }
}

/// Why `line` (a JSON-RPC message) cannot be parsed, if it cannot. Only a line that reads as
/// a message is checked: an object with a quoted key that names `"jsonrpc"`. A server's log
/// line (Python's `{'debug': True}`, Node's `{ a: 1 }`) is left for the SDK to drop, as it
/// drops any line it cannot read.
fn unreadable(line: &[u8]) -> Option<String> {
    let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
    if line[start] != b'{' {
        return None;
    }
    let key = line[start + 1..]
        .iter()
        .position(|b| !b.is_ascii_whitespace())?;
    if line[start + 1 + key] != b'"' || !line.windows(9).any(|w| w == b"\"jsonrpc\"") {
        return None;
    }
    // Parsed as the SDK parses it, depth limit included (`IgnoredAny` skips without one).
    match serde_json::from_slice::<Value>(line) {
        Err(e) if e.is_syntax() || e.is_eof() => Some(e.to_string()),
        _ => None,
    }
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Lines<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if self.ended {
            return std::task::Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = polled {
            let this = &mut *self;
            if this.check(&buf.filled()[before..]) {
                // The line is still handed on (the SDK drops it); the end of the stream after
                // it fails the call waiting for an answer.
                this.ended = true;
            }
        }
        polled
    }
}
