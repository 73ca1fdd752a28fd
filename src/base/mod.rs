//! The bottom layer: small pieces every other layer may use and that know nothing of the
//! catalog — stable error codes, time, and the shared plumbing (redaction, the state-database
//! opener, the HTTP client builder).

pub mod capped;
pub mod error_code;
pub mod http;
pub mod pointer;
pub mod redact;
pub mod same_json;
pub mod secrets;
pub mod state_db;
pub mod suggest;
pub mod syntax;
pub mod time;

/// The causes of an error, outermost first: its `source()`, then that one's, and so on (the
/// error itself not included). Every report of a chain walks it with this.
pub fn causes<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(error.source(), |e| e.source())
}
