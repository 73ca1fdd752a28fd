//! The bottom layer: small pieces every other layer may use and that know nothing of the
//! catalog — stable error codes, time, and the shared plumbing (redaction, the state-database
//! opener, the HTTP client builder).

pub mod error_code;
pub mod http;
pub mod pointer;
pub mod redact;
pub mod secrets;
pub mod time;
