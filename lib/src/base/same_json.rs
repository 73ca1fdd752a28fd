//! Whether two JSON documents say the same thing, for the checks that decide whether a file
//! changed (an archive's version against the catalog's, an MCP server's tool against the one
//! imported, a config value already set).
//!
//! Numbers keep the text they were read with (`serde_json`'s `arbitrary_precision`), so
//! `Value`'s own `==` tells `1.1` from `1.10`. Those checks compare numbers by value instead:
//! integers (no fraction, no exponent) by their digits, exactly however long; other numbers by
//! the double they denote, so `1.1`, `1.10` and `11e-1` are the same. An integer and a number
//! written with a fraction or exponent are never the same (`1` and `1.0`), as `Value`'s `==`
//! held before numbers kept their text. Object keys compare in any order.

use serde_json::{Number, Value};

/// Whether `a` and `b` are the same document (see the module comment).
pub fn same_json(a: &Value, b: &Value) -> bool {
    equal_by(a, b, same_number)
}

/// Whether `a` and `b` are equal with numbers compared by `numbers`: arrays item by item,
/// objects key by key in any order, anything else as `Value`'s `==` compares it.
pub fn equal_by(a: &Value, b: &Value, numbers: fn(&Number, &Number) -> bool) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal_by(x, y, numbers))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equal_by(v, w, numbers)))
        }
        _ => a == b,
    }
}

/// [`same_json`] of two optional documents (a field present in one only differs).
pub fn same_json_opt(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same_json(a, b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

fn same_number(x: &Number, y: &Number) -> bool {
    match (is_integer(x), is_integer(y)) {
        (true, true) => x.as_str() == y.as_str(),
        (false, false) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            // Past the doubles (`1e400`): only the same text is surely the same number.
            _ => x.as_str() == y.as_str(),
        },
        _ => false,
    }
}

/// An integer literal: digits with an optional minus. `-0` counts as a float, as serde_json
/// reads it without `arbitrary_precision` (its sign survives only as a double).
fn is_integer(n: &Number) -> bool {
    let text = n.as_str();
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && text != "-0"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) -> bool {
        let (a, b): (Value, Value) = (
            serde_json::from_str(a).unwrap(),
            serde_json::from_str(b).unwrap(),
        );
        same_json(&a, &b)
    }

    #[test]
    fn numbers_compare_by_value_and_integers_by_every_digit() {
        assert!(same("1.1", "1.10"));
        assert!(same("1e2", "100.0"));
        assert!(same("1E2", "1e+2"));
        assert!(same("-0", "-0.0"));
        assert!(same("12345678901234567890123", "12345678901234567890123"));
        assert!(same("1e400", "1e400"));
        assert!(!same("1", "1.0"));
        assert!(!same("0", "-0"));
        assert!(!same("1e400", "2e400"));
        // Both round to the same double: only the digits tell them apart.
        assert!(!same("12345678901234567890123", "12345678901234567890124"));
        assert!(!same(
            "-12345678901234567890123",
            "-12345678901234567890124"
        ));
    }

    #[test]
    fn documents_compare_member_by_member_in_any_order() {
        assert!(same(
            r#"{"a": [1.50, {"b": 2}], "c": null}"#,
            r#"{"c": null, "a": [1.5, {"b": 2}]}"#
        ));
        assert!(!same(r#"{"a": 1}"#, r#"{"a": 1, "b": 1}"#));
        assert!(!same(r#"{"a": 1}"#, r#"{"b": 1}"#));
        assert!(!same("[1, 2]", "[1]"));
        assert!(!same(r#""1""#, "1"));
        assert!(same_json_opt(None, None));
        assert!(!same_json_opt(Some(&Value::Null), None));
    }
}
