//! Timestamps and durations as toolctl reads and writes them.
//!
//! Files carry RFC 3339 UTC timestamps; durations on the command line and in `toolctl.json`
//! use jiff's friendly format (`48h`, `2d`, `90s`, `1h 30m`) or ISO 8601 (`PT48H`). A day is
//! always 24 hours here: durations measure age, not calendar arithmetic.

use jiff::{SpanRelativeTo, Timestamp};
use std::time::Duration;

/// The current time, cut to milliseconds so written files stay readable.
pub fn now() -> Timestamp {
    let now = Timestamp::now();
    Timestamp::from_millisecond(now.as_millisecond()).unwrap_or(now)
}

/// Parse a non-negative duration such as `48h`, `2d`, `0s` or `PT10S`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let span: jiff::Span = text
        .trim()
        .parse()
        .map_err(|e| format!("'{text}' is not a duration (try 48h, 2d, 30s): {e}"))?;
    let signed = span
        .to_duration(SpanRelativeTo::days_are_24_hours())
        .map_err(|e| format!("'{text}' is not a usable duration: {e}"))?;
    Duration::try_from(signed)
        .map_err(|_| format!("'{text}' is negative; a duration must be 0 or more"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_friendly_and_iso_form() {
        assert_eq!(parse_duration("48h"), Ok(Duration::from_secs(48 * 3600)));
        assert_eq!(parse_duration("2d"), Ok(Duration::from_secs(48 * 3600)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("PT10S"), Ok(Duration::from_secs(10)));
        assert!(parse_duration("-5s").unwrap_err().contains("negative"));
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .contains("not a duration")
        );
    }
}
