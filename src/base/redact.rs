//! Keeping secret values out of what leaves a call: messages, bodies, errors.

use serde_json::Value;

/// Removes secret values (and their percent-encoded forms) from text that leaves a call.
#[derive(Default, Clone)]
pub struct Redactor {
    values: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} values)", self.values.len())
    }
}

impl Redactor {
    pub fn add(&mut self, value: &str) {
        // Very short values would redact ordinary text and protect nothing.
        if value.len() < 4 {
            return;
        }
        let encoded = super::http::encode_component(value);
        // As it appears inside a JSON string (a server echoing a JSON body).
        let quoted = serde_json::to_string(value).unwrap_or_default();
        let json = quoted
            .strip_prefix('"')
            .and_then(|q| q.strip_suffix('"'))
            .unwrap_or(&quoted)
            .to_owned();
        for form in [value.to_owned(), encoded, json] {
            if !self.values.contains(&form) {
                self.values.push(form);
            }
        }
        // Longest first, so a value that contains another is redacted whole.
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    pub fn text(&self, text: &str) -> String {
        self.values.iter().fold(text.to_owned(), |out, secret| {
            out.replace(secret, "[redacted]")
        })
    }

    /// Redact every string inside a JSON value.
    pub fn value(&self, value: Value) -> Value {
        if self.values.is_empty() {
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
