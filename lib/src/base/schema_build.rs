//! Why a JSON Schema does not compile, in words: jsonschema reports a `pattern` it cannot
//! compile as `"<the whole pattern>" is not a "regex"`, which for a pattern over the regex size
//! limit echoes tens of kilobytes and names the wrong cause. Every place that compiles a schema
//! words its error with [`build_error`].

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// The key a compiled schema is remembered by: the SHA-256 of its JSON text. Whether a schema
/// compiles, and what it accepts, depend on nothing else (no schema is ever fetched).
pub fn key(schema: &Value) -> Option<[u8; 32]> {
    use sha2::Digest as _;
    let text = serde_json::to_vec(schema).ok()?;
    Some(sha2::Sha256::digest(&text).into())
}

/// How many characters of a pattern a message shows.
const SHOWN: usize = 80;

/// The message for `error`, returned by building a JSON Schema validator: jsonschema's own,
/// except for a regular expression (`pattern`, a `patternProperties` key) that does not
/// compile, which is shown cut to 80 characters and said to be too large when it is.
pub fn build_error(error: &ValidationError) -> String {
    let ValidationErrorKind::Format { format } = error.kind() else {
        return error.to_string();
    };
    let Value::String(pattern) = error.instance().as_ref() else {
        return error.to_string();
    };
    if format != "regex" {
        return error.to_string();
    }
    let shown = shorten(pattern);
    // jsonschema keeps the regex engine's error to itself; the same engine's default limit
    // (the `regex` crate's) tells a pattern too large from one that is not a regex at all.
    match regex::Regex::new(pattern) {
        Err(regex::Error::CompiledTooBig(limit)) => format!(
            "the regular expression \"{shown}\" ({} characters) is too large: compiled, it \
             exceeds the regex size limit of {limit} bytes; simplify it (fewer or smaller \
             counted repetitions such as {{1000}})",
            pattern.chars().count()
        ),
        _ => format!("\"{shown}\" is not a regular expression toolctl can use"),
    }
}

/// Why `pattern` is not a regular expression, on one line: the `regex` crate's syntax error
/// draws the pattern with carets under the fault over several lines (`regex parse
/// error:\n    (\n    ^\nerror: unclosed group`), which a one-line message (validate's
/// findings, an error's first line) would show as literal `\n`s. This asks the parser `regex`
/// uses (`regex-syntax`) for the fault and its place: `unclosed group at character 1` (of a
/// duplicate group name, the duplicate's place; in a pattern of several lines, its line too).
pub fn regex_error(pattern: &str, error: &regex::Error) -> String {
    let place = |span: &regex_syntax::ast::Span| {
        let at = span.start;
        if pattern.contains('\n') {
            format!("at line {}, character {}", at.line, at.column)
        } else {
            format!("at character {}", pattern[..at.offset].chars().count() + 1)
        }
    };
    match (error, regex_syntax::Parser::new().parse(pattern)) {
        (regex::Error::Syntax(_), Err(regex_syntax::Error::Parse(e))) => {
            format!("{} {}", e.kind(), place(e.span()))
        }
        (regex::Error::Syntax(_), Err(regex_syntax::Error::Translate(e))) => {
            format!("{} {}", e.kind(), place(e.span()))
        }
        // Anything else (a limit of the compiled program): the crate's words, on one line.
        _ => error
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// `text` cut to its first 80 characters and "…" when longer.
pub fn shorten(text: &str) -> String {
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(schema: Value) -> String {
        let error = jsonschema::options().build(&schema).unwrap_err();
        build_error(&error)
    }

    #[test]
    fn a_pattern_over_the_size_limit_is_cut_and_said_too_large() {
        let pattern = "(?:a{1000}){1000}".repeat(3000);
        let said = message(json!({"type": "string", "pattern": pattern}));
        assert!(said.len() < 400, "{} bytes: {said}", said.len());
        assert!(
            said.starts_with("the regular expression \"(?:a{1000}){1000}(?:a{1000})")
                && said.contains("…\" (51000 characters) is too large")
                && said.contains("regex size limit of 10485760 bytes"),
            "{said}"
        );
        let said = message(json!({"patternProperties": {"(?:a{1000}){1000}": {}}}));
        assert!(
            said.contains("\"(?:a{1000}){1000}\" (17 characters) is too large"),
            "{said}"
        );
    }

    #[test]
    fn a_regex_syntax_error_is_one_line_with_its_place() {
        let words = |pattern: &str| regex_error(pattern, &regex::Regex::new(pattern).unwrap_err());
        assert_eq!(words("("), "unclosed group at character 1");
        assert_eq!(
            words("ab[z-a]"),
            "invalid character class range, the start must be <= the end at character 4"
        );
        assert_eq!(words("a\n("), "unclosed group at line 2, character 1");
        // The duplicate's place, not the first name's.
        assert_eq!(
            words("(?P<n>a)(?P<n>b)"),
            "duplicate capture group name at character 13"
        );
        assert_eq!(words("é("), "unclosed group at character 2");
        assert!(!words("x{2,1}").contains('\n'), "{}", words("x{2,1}"));
    }

    #[test]
    fn a_pattern_that_is_no_regex_is_said_so() {
        let said = message(json!({"type": "string", "pattern": "([a-z"}));
        assert_eq!(
            said,
            "\"([a-z\" is not a regular expression toolctl can use"
        );
        let said = message(json!({"type": "string", "minLength": -1}));
        assert!(!said.contains("regular expression"), "{said}");
    }
}
