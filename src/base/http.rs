//! HTTP pieces every layer that talks to a server shares: the client, reading a body under a
//! cap, and URL-component encoding.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use std::io::Read;

/// The bytes a URL component keeps as they are (RFC 3986 unreserved).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A value as one percent-encoded URL component.
pub fn encode_component(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

/// A blocking HTTP client with `redirects` as its redirect policy (HTTP tools check every hop
/// against `allowedHosts`; the scorers' endpoints follow none).
pub fn client(redirects: reqwest::redirect::Policy) -> reqwest::Result<reqwest::blocking::Client> {
    reqwest::blocking::Client::builder()
        .redirect(redirects)
        .build()
}

/// Why a body could not be read under its cap.
#[derive(Debug)]
pub enum CappedRead {
    /// Reading failed (a timeout is an I/O error of kind `TimedOut`, or wraps reqwest's).
    Failed(std::io::Error),
    /// The body is longer than the cap: reading stopped one byte past it.
    TooLarge,
}

/// Read `body` while it arrives, stopping as soon as it passes `cap` bytes.
pub fn read_capped(body: impl Read, cap: u64) -> Result<Vec<u8>, CappedRead> {
    let mut bytes = Vec::new();
    body.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(CappedRead::Failed)?;
    if bytes.len() as u64 > cap {
        return Err(CappedRead::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::{CappedRead, read_capped};

    #[test]
    fn a_body_is_read_up_to_its_cap_and_refused_past_it() {
        assert_eq!(read_capped(&b"abc"[..], 3).unwrap(), b"abc");
        assert!(matches!(
            read_capped(&b"abcd"[..], 3),
            Err(CappedRead::TooLarge)
        ));
    }
}
