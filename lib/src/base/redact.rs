//! Keeping secret values out of what leaves a call: messages, bodies, errors, values.
//!
//! A server may echo a secret in whatever encoding it likes, so each secret is matched by one
//! pattern that takes every character in any of the forms it may come back in, mixed freely:
//! as it is; JSON/JavaScript-escaped (`\/`, `\uXXXX` in either case, `\n`…, escaped again
//! inside another JSON string: `\\u002f`); percent-encoded (either case, `+` for a space),
//! and percent-encoded twice (`%252F`: a value encoded again by a server that builds a URL
//! of a URL); as an HTML character reference. Its UTF-8 bytes in hex (either case) are
//! matched too. Its base64 forms (standard and URL-safe, also as part of
//! a longer base64 text at any of the three byte alignments, which is how `user:secret` of
//! basic auth comes back) are matched too; a secret that is itself base64 (a basic token) is
//! matched in the other alphabet and decoded as well.
//!
//! **One pass.** Every secret is matched against the text as it came, and the union of what
//! they match is replaced: replacing one secret after another would let the first replacement
//! break a longer match of the next (a basic token whose password was redacted first, leaving
//! the base64 of `user:` in sight).
//!
//! **Values.** In a JSON value every string is redacted, and so is a number whose JSON text
//! holds a secret of [`SHORT`] characters or more (also by its integer value, `4.0961234e7` as
//! `40961234`): it becomes the string `"[redacted]"`, since part of a number is no number.
//! Booleans and null are too short to hold such a secret. Only a secret with a form made of a
//! number's characters (digits, `.`, `e`, `+`, `-`) is looked for in numbers: for any other (an
//! API key, a basic token) a response of many numbers costs nothing more.
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
    /// The length of its shortest form that can stand in a number's JSON text (one of
    /// [`NUMBER_CHARS`] alone); `None` for a secret of letters (an API key, a basic token),
    /// for which numbers are not looked at: no text made and matched per number.
    number_len: Option<usize>,
}

/// The length of an integer's JSON text (its digits and sign), counted without writing it;
/// `None` for a number with a fraction or an exponent.
fn integer_len(n: &serde_json::Number) -> Option<usize> {
    let digits = |u: u64| u.checked_ilog10().map_or(1, |l| l as usize + 1);
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => Some(digits(u)),
        (None, Some(i)) => Some(digits(i.unsigned_abs()) + 1),
        _ => None,
    }
}

/// The characters of a JSON number's text (and of the integer it stands for).
const NUMBER_CHARS: &str = "0123456789.eE+-";

/// Whether `c`'s [`char_pattern`] has a form made of [`NUMBER_CHARS`] alone: the character
/// itself, or `+` for a space (a form body's); its other forms hold `\`, `%` or `&`.
fn in_number(c: char) -> bool {
    NUMBER_CHARS.contains(c) || c == ' '
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
        // Each character of a form that can stand in a number is one character there.
        let mut number_len = None;
        let mut numeric = |text: &str, fits: fn(char) -> bool| {
            if text.chars().all(fits) {
                let len = text.chars().count();
                number_len = Some(number_len.map_or(len, |n: usize| n.min(len)));
            }
        };
        numeric(value, in_number);
        let mut literal = |forms: &mut Vec<String>, text: &str| {
            numeric(text, |c| NUMBER_CHARS.contains(c));
            forms.push(regex::escape(text));
        };
        let bytes = value.as_bytes();
        // Hex of its bytes, either case (a digest-like echo, a hex dump).
        let hex = hex::encode(bytes);
        literal(&mut forms, &hex);
        if let Some(last) = forms.last_mut() {
            *last = format!("(?i:{last})");
        }
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            literal(&mut forms, &engine.encode(bytes));
            if !short {
                // Inside a longer base64 text the secret's bytes start at any of three
                // alignments; the characters that depend on its bytes alone are the same.
                // At offset 0 too: the whole encoding's last character may mix in the
                // next byte (`user:` of basic auth), so it cannot be relied on.
                for offset in 0..3 {
                    if let Some(core) = base64_core(&engine, bytes, offset) {
                        literal(&mut forms, &core);
                    }
                }
            }
        }
        // A base64 secret (a basic-auth token) echoed in the other alphabet, or decoded:
        // `user:password`.
        if let Some(decoded) = [
            base64::engine::general_purpose::STANDARD,
            base64::engine::general_purpose::URL_SAFE,
        ]
        .iter()
        .find_map(|engine| engine.decode(value).ok())
        {
            for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
                literal(&mut forms, &engine.encode(&decoded));
            }
            if let Ok(text) = String::from_utf8(decoded)
                && text.chars().count() >= SHORT
                && !text.chars().any(char::is_control)
            {
                numeric(&text, in_number);
                forms.push(text.chars().map(char_pattern).collect());
            }
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
                number_len,
            });
        }
    }

    pub fn text(&self, text: &str) -> String {
        let mut found: Vec<(usize, usize)> = self
            .secrets
            .iter()
            .flat_map(|secret| secret.matches(text))
            .collect();
        if found.is_empty() {
            return text.to_owned();
        }
        found.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        let mut spans = found.into_iter().peekable();
        while let Some((start, mut end)) = spans.next() {
            // Overlapping or touching matches (of one secret or several) are one redaction.
            while let Some(&(next, next_end)) = spans.peek()
                && next <= end
            {
                end = end.max(next_end);
                spans.next();
            }
            out.push_str(&text[last..start]);
            out.push_str(REDACTED);
            last = end;
        }
        out.push_str(&text[last..]);
        out
    }

    /// Redact every string inside a JSON value, and every number whose text holds a secret of
    /// [`SHORT`] characters or more (it becomes the string `"[redacted]"`). A shorter secret
    /// leaves numbers alone: a PIN `7` or `2024` equal to a count or a year is
    /// indistinguishable from it, as a short secret inside a word is, and turning every `7`
    /// into a string would break outputs their schema checks.
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
            Value::Number(n) => {
                let long: Vec<&Secret> = self
                    .secrets
                    .iter()
                    .filter(|s| !s.whole_token && s.number_len.is_some())
                    .collect();
                let Some(shortest) = long.iter().filter_map(|s| s.number_len).min() else {
                    return Value::Number(n);
                };
                // An integer's digits are counted, not written out: one shorter than every
                // form that could stand in it holds none.
                if integer_len(&n).is_some_and(|len| len < shortest) {
                    return Value::Number(n);
                }
                let mut texts = vec![n.to_string()];
                // The integer a number stands for, however it is written (`40961234.0`,
                // `4.0961234e7`), up to where f64 still holds every integer exactly.
                if let Some(f) = n.as_f64()
                    && f.fract() == 0.0
                    && f.abs() < 9.007_199_254_740_992e15
                {
                    texts.push(format!("{f:.0}"));
                }
                let holds = |t: &String| long.iter().any(|s| s.matches(t).next().is_some());
                if texts.iter().any(holds) {
                    Value::String(REDACTED.to_owned())
                } else {
                    Value::Number(n)
                }
            }
            // `true`, `false` and `null` are shorter than any secret that redacts a scalar.
            other => other,
        }
    }
}

impl Secret {
    /// Where this secret stands in `text` (byte ranges).
    fn matches<'t>(&'t self, text: &'t str) -> impl Iterator<Item = (usize, usize)> + 't {
        self.pattern
            .find_iter(text)
            .filter(move |found| {
                !self.whole_token || {
                    let before = text[..found.start()].chars().next_back();
                    let after = text[found.end()..].chars().next();
                    !before.is_some_and(char::is_alphanumeric)
                        && !after.is_some_and(char::is_alphanumeric)
                }
            })
            .map(|found| (found.start(), found.end()))
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
    // Percent-encoding of its UTF-8 bytes (either case), once or twice (`%2541`); a form
    // body's space.
    forms.push(
        c.encode_utf8(&mut [0; 4])
            .bytes()
            .map(|byte| format!("%(?:25)?(?i:{byte:02x})"))
            .collect(),
    );
    if c == ' ' {
        forms.push(r"\+".to_owned());
    }
    // HTML character references.
    let code = c as u32;
    forms.push(format!("&#(?:(?i:x0*{code:x})|0*{code});"));
    match c {
        // A JSON pointer's escapes: a secret that is an object's key shows in the pointer of
        // an output-schema failure (`/sk~1live`).
        '/' => forms.push("~1".to_owned()),
        '~' => forms.push("~0".to_owned()),
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

    /// An output-schema failure names a secret that is an object's key by its JSON pointer,
    /// where `/` is `~1` and `~` is `~0`: `/sk~1live~0abcdefgh` is redacted as
    /// `/sk/live~abcdefgh` is.
    #[test]
    fn a_secret_in_a_json_pointer_is_redacted() {
        let r = redactor("sk/live~abcdefgh");
        let out = r.text("failed at /sk~1live~0abcdefgh: 1 is not of type \"string\"");
        assert_eq!(
            out,
            format!("failed at /{REDACTED}: 1 is not of type \"string\"")
        );
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
        let double_percent: String = secret.bytes().map(|b| format!("%25{b:02X}")).collect();
        let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
        let hex_upper = hex.to_uppercase();
        let double = serde_json::to_string(&json).unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("user:{secret}"));
        for text in [
            secret.to_owned(),
            json,
            escaped_slash,
            all_u,
            percent,
            double_percent,
            hex,
            hex_upper,
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

    /// Every byte string a reader could decode from `text`: each run of base64 characters
    /// (either alphabet) outside the redactions, read from each of the four alignments.
    fn decodings(text: &str) -> Vec<Vec<u8>> {
        let sextet = |c: char| match c {
            'A'..='Z' => Some(c as u8 - b'A'),
            'a'..='z' => Some(c as u8 - b'a' + 26),
            '0'..='9' => Some(c as u8 - b'0' + 52),
            '+' | '-' => Some(62),
            '/' | '_' => Some(63),
            _ => None,
        };
        let mut out = Vec::new();
        for piece in text.split(REDACTED) {
            for run in piece.split(|c: char| sextet(c).is_none()) {
                let bits: Vec<u8> = run.chars().filter_map(sextet).collect();
                for align in 0..4.min(bits.len()) {
                    let mut bytes = Vec::new();
                    let (mut acc, mut held) = (0u32, 0);
                    for &b in &bits[align..] {
                        acc = (acc << 6) | u32::from(b);
                        held += 6;
                        if held >= 8 {
                            held -= 8;
                            bytes.push((acc >> held) as u8);
                            acc &= (1 << held) - 1;
                        }
                    }
                    out.push(bytes);
                }
            }
        }
        out
    }

    fn leaks(out: &str, secret: &str) -> bool {
        out.split(REDACTED).any(|piece| piece.contains(secret))
            || decodings(out)
                .iter()
                .any(|bytes| bytes.windows(secret.len()).any(|w| w == secret.as_bytes()))
    }

    const USER: &str = "alice_user.name-of-24chr";
    const PASSWORD: &str = "correct-horse-battery-st";

    /// Basic auth as `impl.auth` makes it: the user, the password and the token are each
    /// a secret; the server echoes the header, or the pair re-encoded in base64url.
    #[test]
    fn no_basic_token_leaks_its_user_or_password_whatever_their_lengths() {
        for user_len in 1..=24 {
            for password_len in 1..=24 {
                let (user, password) = (&USER[..user_len], &PASSWORD[..password_len]);
                let pair = format!("{user}:{password}");
                let token = base64::engine::general_purpose::STANDARD.encode(&pair);
                let mut r = Redactor::default();
                r.add(user);
                r.add(password);
                r.add(&token);
                for echo in [
                    token.clone(),
                    base64::engine::general_purpose::URL_SAFE.encode(&pair),
                    URL_SAFE_NO_PAD.encode(&pair),
                ] {
                    let out = r.text(&format!("Basic {echo}"));
                    let out = out.trim_start_matches("Basic ");
                    for secret in [user, password] {
                        assert!(!leaks(out, secret), "{secret:?} of {pair:?}: {out}");
                    }
                }
            }
        }
    }

    /// The user and the password alone (no token among the secrets), inside a longer base64
    /// text at every alignment: each is matched by its own base64 forms.
    #[test]
    fn a_secret_inside_a_longer_base64_text_is_redacted_at_every_alignment() {
        for user_len in SHORT..=24 {
            for password_len in SHORT..=24 {
                let (user, password) = (&USER[..user_len], &PASSWORD[..password_len]);
                let pair = format!("{user}:{password}");
                let mut r = Redactor::default();
                r.add(user);
                r.add(password);
                for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
                    let out = r.text(&engine.encode(&pair));
                    for secret in [user, password] {
                        assert!(!leaks(&out, secret), "{secret:?} of {pair:?}: {out}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_check_sees_a_secret_in_base64_at_any_alignment() {
        for prefix in ["", "a", "ab", "abc"] {
            let text = STANDARD_NO_PAD.encode(format!("{prefix}alice_user:x"));
            assert!(leaks(&text, "alice_user"), "{text}");
        }
    }

    #[test]
    fn a_number_or_boolean_holding_a_secret_becomes_the_redacted_string() {
        let r = redactor("40961234");
        let value: Value = serde_json::from_str(
            r#"{"v": 40961234, "f": 40961234.0, "e": 4.0961234e7, "in": 1409612345,
                "neg": -40961234, "other": 40961235, "s": "40961234", "t": true}"#,
        )
        .unwrap();
        assert_eq!(
            r.value(value).to_string(),
            r#"{"v":"[redacted]","f":"[redacted]","e":"[redacted]","in":"[redacted]","neg":"[redacted]","other":40961235,"s":"[redacted]","t":true}"#
        );
        // A short secret leaves numbers and booleans alone (a count of 7, a year, `true`
        // are indistinguishable from it); in a string it stands as a whole token, as ever.
        let r = redactor("7");
        let value: Value = serde_json::from_str(r#"[7, 7.0, 17, 70, true, "7"]"#).unwrap();
        assert_eq!(
            r.value(value).to_string(),
            r#"[7,7.0,17,70,true,"[redacted]"]"#
        );
        let r = redactor("true");
        let value: Value = serde_json::from_str(r#"[true, false, "true"]"#).unwrap();
        assert_eq!(r.value(value).to_string(), r#"[true,false,"[redacted]"]"#);
    }

    #[test]
    fn numbers_are_looked_at_only_for_secrets_that_can_stand_in_one() {
        let lens = |secret: &str| -> Vec<Option<usize>> {
            redactor(secret)
                .secrets
                .iter()
                .map(|s| s.number_len)
                .collect()
        };
        // Letters (an API key) cannot stand in a number's text, in any form.
        assert_eq!(lens("sk_live_abcdefgh123"), [None]);
        assert_eq!(lens("40961234"), [Some(8)]);
        assert_eq!(lens("-4.5e+10"), [Some(8)]);
        // A space may come back as `+` (a form body).
        assert_eq!(lens("4096 1234"), [Some(9)]);
        // A base64 secret whose decoded text is digits: the number is redacted as ever.
        assert_eq!(lens("MTIzNDU2Nzg5MA=="), [Some(10)]);
        let r = redactor("MTIzNDU2Nzg5MA==");
        assert_eq!(
            r.value(serde_json::json!([1234567890, 123456789]))
                .to_string(),
            r#"["[redacted]",123456789]"#
        );
        // An integer is matched only when it has as many characters as the secret's form:
        // its sign counts, and so does an integer written with a fraction.
        let r = redactor("-4096123");
        assert_eq!(
            r.value(serde_json::json!([
                -4096123, 4096123, -40961230, -4096123.0, 9
            ]))
            .to_string(),
            r#"["[redacted]",4096123,"[redacted]","[redacted]",9]"#
        );
    }
}
