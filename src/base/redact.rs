//! Keeping secret values out of what leaves a call: messages, bodies, errors, values.
//!
//! A server may echo a secret in whatever encoding it likes, so each secret is matched by one
//! pattern that takes every character in any of the forms it may come back in, mixed freely:
//! as it is; JSON/JavaScript-escaped (`\/`, `\uXXXX` in either case, `\n`…, escaped again
//! inside another JSON string: `\\u002f`); percent-encoded (either case, `+` for a space);
//! as an HTML character reference. Its base64 forms (standard and URL-safe, also as the
//! middle of a longer base64 text, which is how `user:secret` of basic auth comes back) are
//! matched too.
//!
//! **Short secrets.** A secret of fewer than [`SHORT`] characters is replaced only where it
//! stands as a whole token — no letter or digit right before or after it (`Bearer x`, `"x"`,
//! `k=x&`) — so a one-character secret does not shred every word holding that letter; where
//! it stands inside a word nobody can tell it from the word.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use regex::Regex;
use serde_json::Value;

/// What a secret becomes.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this (in characters) are redacted as whole tokens only.
pub const SHORT: usize = 8;

/// Removes secret values, in every form a server may echo them, from text that leaves a call.
#[derive(Default, Clone)]
pub struct Redactor {
    secrets: Vec<Secret>,
}

#[derive(Clone)]
struct Secret {
    pattern: Regex,
    whole_token: bool,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} values)", self.secrets.len())
    }
}

impl Redactor {
    pub fn add(&mut self, value: &str) {
        if value.is_empty() {
            return;
        }
        let short = value.chars().count() < SHORT;
        let mut forms: Vec<String> = vec![value.chars().map(char_pattern).collect()];
        let bytes = value.as_bytes();
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            forms.push(regex::escape(&engine.encode(bytes)));
            if !short {
                // Inside a longer base64 text the secret's bytes start at any of three
                // alignments; the characters that depend on its bytes alone are the same.
                for offset in 1..3 {
                    if let Some(core) = base64_core(&engine, bytes, offset) {
                        forms.push(regex::escape(&core));
                    }
                }
            }
        }
        // A base64 secret (a basic-auth token) echoed decoded: `user:password`.
        if let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(value)
            && let Ok(text) = String::from_utf8(decoded)
            && text.chars().count() >= SHORT
            && !text.chars().any(char::is_control)
        {
            forms.push(text.chars().map(char_pattern).collect());
        }
        let pattern = regex::RegexBuilder::new(&format!("(?:{})", forms.join("|")))
            .size_limit(64 << 20)
            .build()
            // A secret too long for one pattern: as it is and JSON-escaped at least.
            .or_else(|_| {
                let quoted = serde_json::to_string(value).unwrap_or_default();
                let escaped = quoted.trim_matches('"');
                Regex::new(&format!(
                    "{}|{}",
                    regex::escape(value),
                    regex::escape(escaped)
                ))
            });
        if let Ok(pattern) = pattern {
            self.secrets.push(Secret {
                pattern,
                whole_token: short,
            });
        }
    }

    pub fn text(&self, text: &str) -> String {
        self.secrets
            .iter()
            .fold(text.to_owned(), |out, secret| secret.redact(&out))
    }

    /// Redact every string inside a JSON value.
    pub fn value(&self, value: Value) -> Value {
        if self.secrets.is_empty() {
            return value;
        }
        match value {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (self.text(&k), self.value(v)))
                    .collect(),
            ),
            other => other,
        }
    }
}

impl Secret {
    fn redact(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for found in self.pattern.find_iter(text) {
            if self.whole_token {
                let before = text[..found.start()].chars().next_back();
                let after = text[found.end()..].chars().next();
                if before.is_some_and(char::is_alphanumeric)
                    || after.is_some_and(char::is_alphanumeric)
                {
                    continue;
                }
            }
            out.push_str(&text[last..found.start()]);
            out.push_str(REDACTED);
            last = found.end();
        }
        out.push_str(&text[last..]);
        out
    }
}

/// A pattern for `c` in any of the forms a server may write it in.
fn char_pattern(c: char) -> String {
    let mut forms = vec![regex::escape(c.encode_utf8(&mut [0; 4]))];
    // JSON and JavaScript: `\uXXXX` (UTF-16 units, either case), with any number of
    // backslashes, since a JSON string may be escaped again inside another.
    let mut units = [0u16; 2];
    forms.push(
        c.encode_utf16(&mut units)
            .iter()
            .map(|unit| format!(r"\\+u(?i:{unit:04x})"))
            .collect(),
    );
    let short_escape = match c {
        '/' => Some("/"),
        '"' => Some("\""),
        '\\' => Some(r"\\"),
        '\n' => Some("n"),
        '\r' => Some("r"),
        '\t' => Some("t"),
        '\u{8}' => Some("b"),
        '\u{c}' => Some("f"),
        _ => None,
    };
    if let Some(escape) = short_escape {
        forms.push(format!(r"\\+{escape}"));
    }
    // Percent-encoding of its UTF-8 bytes (either case); a form body's space.
    forms.push(
        c.encode_utf8(&mut [0; 4])
            .bytes()
            .map(|byte| format!("%(?i:{byte:02x})"))
            .collect(),
    );
    if c == ' ' {
        forms.push(r"\+".to_owned());
    }
    // HTML character references.
    let code = c as u32;
    forms.push(format!("&#(?:(?i:x0*{code:x})|0*{code});"));
    match c {
        '&' => forms.push("&amp;".to_owned()),
        '<' => forms.push("&lt;".to_owned()),
        '>' => forms.push("&gt;".to_owned()),
        '"' => forms.push("&quot;".to_owned()),
        '\'' => forms.push("&apos;".to_owned()),
        _ => {}
    }
    format!("(?:{})", forms.join("|"))
}

/// The base64 characters that `secret`'s bytes alone decide when it starts `offset` bytes
/// into a longer text; `None` when too few are left to mean anything.
fn base64_core(engine: &impl Engine, secret: &[u8], offset: usize) -> Option<String> {
    let mut padded = vec![0u8; offset];
    padded.extend_from_slice(secret);
    let encoded = engine.encode(&padded);
    // Character j holds bits 6j..6j+6: keep those inside the secret's bits.
    let (start_bit, end_bit) = (offset * 8, (offset + secret.len()) * 8);
    let first = start_bit.div_ceil(6);
    let last = end_bit / 6; // exclusive: characters j with 6j + 6 <= end_bit
    let core = encoded.get(first..last)?;
    (core.len() >= 6).then(|| core.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor(secret: &str) -> Redactor {
        let mut r = Redactor::default();
        r.add(secret);
        r
    }

    #[test]
    fn every_encoding_of_a_secret_is_redacted() {
        let secret = "sk/Live+é 9\"x";
        let r = redactor(secret);
        let json = serde_json::to_string(secret).unwrap();
        let escaped_slash = json.replace('/', "\\/");
        let all_u: String = secret
            .encode_utf16()
            .map(|u| format!("\\u{u:04X}"))
            .collect();
        let percent: String = secret.bytes().map(|b| format!("%{b:02x}")).collect();
        let double = serde_json::to_string(&json).unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("user:{secret}"));
        for text in [
            secret.to_owned(),
            json,
            escaped_slash,
            all_u,
            percent,
            double,
            b64,
        ] {
            let out = r.text(&format!("<{text}>"));
            assert!(out.contains(REDACTED), "{text} -> {out}");
            assert!(!out.contains("Live"), "{text} -> {out}");
        }
    }

    #[test]
    fn a_short_secret_is_redacted_as_a_whole_token_only() {
        let r = redactor("q");
        assert_eq!(
            r.text(r#"{"auth":"Bearer q","k":"\u0071","query":"quiet"}"#),
            r#"{"auth":"Bearer [redacted]","k":"[redacted]","query":"quiet"}"#
        );
    }
}
