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
    // A year or a month has no one length (a day here is always 24 hours), so neither is
    // guessed: the user says what they mean in the units that have one.
    let calendar = [
        (i64::from(span.get_years()), "years"),
        (i64::from(span.get_months()), "months"),
    ]
    .into_iter()
    .find(|(n, _)| *n != 0)
    .map(|(_, unit)| unit);
    if let Some(unit) = calendar {
        return Err(format!(
            "'{text}' is in {unit}, which have no fixed length; give weeks, days, hours, minutes or seconds (e.g. 365d, 8w, 48h)"
        ));
    }
    let signed = span
        .to_duration(SpanRelativeTo::days_are_24_hours())
        .map_err(|_| {
            format!(
                "'{text}' is not a usable duration: give weeks, days, hours, minutes or seconds (e.g. 48h, 2d)"
            )
        })?;
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
        assert_eq!(parse_duration("1w"), Ok(Duration::from_secs(7 * 24 * 3600)));
        for (text, unit) in [("1y", "years"), ("2mo", "months"), ("P1Y", "years")] {
            let error = parse_duration(text).unwrap_err();
            assert!(error.contains(&format!("is in {unit}")), "{error}");
            assert!(!error.contains("jiff"), "{error}");
        }
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .contains("not a duration")
        );
    }
}
