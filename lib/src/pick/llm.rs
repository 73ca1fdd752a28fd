//! The `llm` scorer: a chat model reads the task and the catalog's tool names and says which
//! tools the task needs (`llm-tool-selection.md`).
//!
//! Names only, not descriptions, keep the prompt small enough for a catalog of thousands of
//! tools and the answer fast. Models answer loosely — in code fences, wrapped in an object,
//! cut off mid-array, with names re-cased or re-spelled — so the reply is read tolerantly and
//! every name is mapped back to a candidate or dropped.
//!
//! Selections are cached in `.toolctl/pick-cache/<key>.json` (`CacheEntry`), so the
//! same task over the same catalog with the same model and `k` gets the same tools in every
//! run (reproducible agent benchmarks) without asking again. A cache entry that no longer fits
//! the candidates is asked again; an empty selection is a failure and is never cached.

use super::embed::{Client, endpoint_url, ensure_state_dir, excerpt};
use super::{Candidate, Endpoint, ScorerError, time_left};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The most tools one selection holds: OpenAI accepts at most 128 tools in one request, and
/// a selection is meant to be sent as one. A larger `k` is lowered to this.
pub const MAX_TOOLS: usize = 128;

/// The folder of cached selections, in the catalog's state folder.
pub const CACHE_DIR: &str = "pick-cache";

/// The tools a model selected for a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Candidate names, best first, no duplicates, at most `k`.
    pub names: Vec<String>,
    /// Read from the cache, not asked.
    pub cached: bool,
    /// The model's message as it answered (`--debug` provenance); `None` on a cache hit.
    pub raw_reply: Option<String>,
}

/// A cached selection (`pick-cache/<key>.json`): its fields in this order.
#[derive(Debug, Serialize, Deserialize)]
struct CacheEntry {
    query: String,
    selected_tools: Vec<String>,
    model: String,
    max_tools: usize,
}

/// Ask the chat model at `endpoint` which of `candidates` the task `query` needs: at most `k`
/// (at most [`MAX_TOOLS`]) candidate names, the most relevant first.
///
/// A selection cached for the same query, model, `k` and `catalog_fingerprint` is returned
/// without a request if it still names only current candidates; otherwise the model is asked
/// (`temperature` 0) and a non-empty selection is cached. A cache that cannot be read or
/// written is ignored: this never returns [`ScorerError::Cache`]. `k` of 0 or no candidates is
/// an empty selection, without a request.
///
/// The request may take `endpoint.timeout`, and never past `deadline`
/// ([`ScorerError::Deadline`], also when the deadline has passed before the call). An
/// unreachable endpoint, a refused key, an error status, an answer without a message, or a
/// message naming no candidate is a [`ScorerError::Upstream`] saying why.
pub fn select(
    state_dir: &Path,
    endpoint: &Endpoint,
    query: &str,
    candidates: &[Candidate],
    k: usize,
    catalog_fingerprint: &str,
    deadline: Instant,
) -> Result<Selection, ScorerError> {
    time_left(deadline)?;
    let k = k.min(MAX_TOOLS);
    if k == 0 || candidates.is_empty() {
        return Ok(Selection {
            names: Vec::new(),
            cached: false,
            raw_reply: None,
        });
    }
    let index = NameIndex::new(candidates);
    let file = cache_file(state_dir, query, &endpoint.model, k, catalog_fingerprint);
    if let Some(names) = read_cache(&file, query, &endpoint.model, k, &index) {
        return Ok(Selection {
            names,
            cached: true,
            raw_reply: None,
        });
    }

    let reply = ask(endpoint, query, candidates, k, deadline)?;
    let names = index.pick(&reply_names(&reply), k);
    if names.is_empty() {
        return Err(ScorerError::Upstream(format!(
            "the model selected no known tool (it answered: {})",
            excerpt(&reply)
        )));
    }
    let entry = CacheEntry {
        query: query.to_owned(),
        selected_tools: names.clone(),
        model: endpoint.model.clone(),
        max_tools: k,
    };
    write_cache(state_dir, &file, &entry);
    Ok(Selection {
        names,
        cached: false,
        raw_reply: Some(reply),
    })
}

/// The cache key (see [`cache_file`]).
fn cache_key(query: &str, model: &str, k: usize, catalog_fingerprint: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [query, model, &k.to_string(), catalog_fingerprint] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// The cached selection in `file`, if it is one for this query, model and `k` that names only
/// current candidates, at most `k`, without duplicates; anything else is a miss.
fn read_cache(
    file: &Path,
    query: &str,
    model: &str,
    k: usize,
    index: &NameIndex,
) -> Option<Vec<String>> {
    let bytes = crate::base::capped::read_bytes(file, None).ok()?;
    let entry: CacheEntry = serde_json::from_slice(&bytes).ok()?;
    let names = entry.selected_tools;
    let mut seen = HashSet::new();
    let valid = entry.query == query
        && entry.model == model
        && entry.max_tools == k
        && !names.is_empty()
        && names.len() <= k
        && names
            .iter()
            .all(|n| index.exact.contains_key(n.as_str()) && seen.insert(n.as_str()));
    valid.then_some(names)
}

/// Cache a selection, atomically (a concurrent reader sees the old file or the new one).
/// Best effort: a selection that cannot be cached is still the answer.
fn write_cache(state_dir: &Path, file: &Path, entry: &CacheEntry) {
    if !ensure_state_dir(state_dir) {
        return;
    }
    let Ok(mut bytes) = serde_json::to_vec_pretty(entry) else {
        return;
    };
    bytes.push(b'\n');
    let _ = crate::catalog::store::write_atomic(file, &bytes);
}

/// The file that caches the selection for these parts (`k` lowered to [`MAX_TOOLS`]):
/// `pick-cache/<key>.json` in `state_dir`, the key being the hex SHA-256 of the query, the
/// model, `k` (decimal) and the catalog fingerprint, each preceded by its length in bytes (8
/// bytes, little-endian) so no two different sets of parts give the same bytes.
pub fn cache_file(
    state_dir: &Path,
    query: &str,
    model: &str,
    k: usize,
    catalog_fingerprint: &str,
) -> PathBuf {
    state_dir.join(CACHE_DIR).join(format!(
        "{}.json",
        cache_key(query, model, k.min(MAX_TOOLS), catalog_fingerprint)
    ))
}

/// Ask the model; its message.
fn ask(
    endpoint: &Endpoint,
    query: &str,
    candidates: &[Candidate],
    k: usize,
    deadline: Instant,
) -> Result<String, ScorerError> {
    let most = k.min(candidates.len());
    let system = format!(
        "You choose tools for an AI agent. Given a task and a list of tool names, choose the \
         tools the agent most likely needs for the task: at most {most}, the most relevant \
         first. Answer with a JSON array of tool names copied exactly from the list, and \
         nothing else, for example [\"first_tool\", \"second_tool\"]."
    );
    let mut user = format!("Task:\n{query}\n\nTools (one name per line):\n");
    for candidate in candidates {
        user.push_str(&candidate.name);
        user.push('\n');
    }
    let body = json!({
        "model": endpoint.model,
        "temperature": 0,
        "messages": [
            { "role": "system", "content": system },
            { "role": "user", "content": user },
        ],
    });
    let answer = Client::new(endpoint)?.post_json("/chat/completions", &body, deadline)?;
    let url = endpoint_url(endpoint, "/chat/completions");
    let choice = answer
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| ScorerError::Upstream(format!("{url} answered without choices")))?;
    let content = match choice
        .pointer("/message/content")
        .or_else(|| choice.get("text"))
    {
        Some(Value::String(text)) => text.clone(),
        // Content as parts (`[{"type": "text", "text": …}]`).
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    if content.trim().is_empty() {
        return Err(ScorerError::Upstream(format!(
            "{url} answered without a message"
        )));
    }
    Ok(content)
}

/// The names a reply holds, as written (trimmed of whitespace and quotes), in its order.
///
/// Read in turn as: JSON (an array of names, or of objects with a `name`; an object holding
/// such an array, e.g. `{"tools": […]}` or `{"selected_tools": […]}`), also inside code
/// fences or after some prose; a JSON array cut off (the complete strings of it); and last,
/// one name per line or comma (lists a small model writes despite the prompt — anything
/// that is not a name is dropped when names are mapped to candidates). A reasoning model's
/// `<think>…</think>` is skipped.
fn reply_names(reply: &str) -> Vec<String> {
    let text = unfence(without_thinking(reply));
    if let Some(names) = json_names(text).filter(|n| !n.is_empty()) {
        return names;
    }
    let names = truncated_names(text);
    if !names.is_empty() {
        return names;
    }
    text.lines()
        .flat_map(|line| line.split(','))
        .map(|item| clean(without_bullet(item)))
        .filter(|name| !name.is_empty())
        .collect()
}

/// A list item without its bullet (`- `, `* `, `• `, `1. `, `2) `).
fn without_bullet(item: &str) -> &str {
    let item = item.trim_start();
    let digits = item.len() - item.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let marker = match item[digits..].chars().next() {
        Some('.' | ')') if digits > 0 => digits + 1,
        Some('-' | '*' | '•') if digits == 0 => item.chars().next().map_or(0, char::len_utf8),
        _ => return item,
    };
    match item[marker..].strip_prefix(char::is_whitespace) {
        Some(rest) => rest,
        None => item,
    }
}

/// A reply without a reasoning model's thoughts.
fn without_thinking(reply: &str) -> &str {
    let mut text = reply;
    if let Some(end) = text.rfind("</think>") {
        text = &text[end + "</think>".len()..];
    }
    if let Some(start) = text.find("<think>") {
        text = &text[..start];
    }
    text
}

/// The inside of the first code fence (to its end, or the end of the text when cut off), or
/// the text itself.
fn unfence(text: &str) -> &str {
    let Some(start) = text.find("```") else {
        return text;
    };
    let inside = &text[start + 3..];
    // The fence's language tag (`json`) runs to the end of its line.
    let inside = inside.find('\n').map_or("", |nl| &inside[nl + 1..]);
    inside.find("```").map_or(inside, |end| &inside[..end])
}

/// The names of the first JSON value in `text` that holds some.
fn json_names(text: &str) -> Option<Vec<String>> {
    if let Ok(value) = serde_json::from_str::<Value>(text.trim()) {
        return Some(value_names(&value));
    }
    // After some prose: each `[` or `{` in turn, reading one value and ignoring what follows.
    text.char_indices()
        .filter(|&(_, c)| c == '[' || c == '{')
        .take(32)
        .find_map(|(at, _)| {
            let value = serde_json::Deserializer::from_str(&text[at..])
                .into_iter::<Value>()
                .next()?
                .ok()?;
            Some(value_names(&value)).filter(|names| !names.is_empty())
        })
}

/// The names a JSON value holds.
fn value_names(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(name) => Some(clean(name)),
                Value::Object(map) => ["name", "tool", "tool_name"]
                    .iter()
                    .find_map(|key| map.get(*key).and_then(Value::as_str))
                    .map(clean),
                _ => None,
            })
            .filter(|name| !name.is_empty())
            .collect(),
        Value::Object(map) => ["tools", "selected_tools", "selected", "tool_names", "names"]
            .iter()
            .find_map(|key| map.get(*key).filter(|v| v.is_array()))
            .or_else(|| map.values().find(|v| v.is_array()))
            .map(value_names)
            .unwrap_or_default(),
        // A JSON document inside a JSON string, or one name.
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(inner) if !inner.is_string() => value_names(&inner),
            _ => vec![clean(text)]
                .into_iter()
                .filter(|n| !n.is_empty())
                .collect(),
        },
        _ => Vec::new(),
    }
}

/// The complete strings of a JSON array cut off (`["a", "b", "c` gives `a`, `b`), from the
/// first `[` to its `]` or the end; object keys (a string before `:`) are skipped.
fn truncated_names(text: &str) -> Vec<String> {
    let Some(start) = text.find('[') else {
        return Vec::new();
    };
    let rest = &text[start + 1..];
    let bytes = rest.as_bytes();
    let mut names = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b']' => break,
            b'"' => {
                let mut end = at + 1;
                while end < bytes.len() && bytes[end] != b'"' {
                    end += if bytes[end] == b'\\' { 2 } else { 1 };
                }
                if end >= bytes.len() {
                    break; // cut off inside this string
                }
                let is_key = rest[end + 1..].trim_start().starts_with(':');
                if !is_key && let Ok(name) = serde_json::from_str::<String>(&rest[at..=end]) {
                    let name = clean(&name);
                    if !name.is_empty() {
                        names.push(name);
                    }
                }
                at = end + 1;
            }
            _ => at += 1,
        }
    }
    names
}

/// A name without surrounding whitespace, quotes or backticks.
fn clean(name: &str) -> String {
    name.trim_matches(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`'))
        .to_owned()
}

/// `name` transliterated to ASCII as exported names are, every character outside
/// `[A-Za-z0-9_-]` as `_`, lower-cased: how a provider or a model may have rewritten a name or a
/// reference.
fn loose(name: &str) -> String {
    crate::catalog::names::ascii(name)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Every form a model may name `candidate` by: its exported name, its reference
/// (`bundle/slug@version`), `bundle/slug`, `slug@version`, `bundle__slug` and the slug itself
/// (in its own script: `loose` transliterates).
fn forms(candidate: &Candidate) -> Vec<String> {
    let mut forms = vec![candidate.name.clone(), candidate.reference.clone()];
    if let Some((path, version)) = candidate.reference.rsplit_once('@')
        && let Some((bundle, slug)) = path.split_once('/')
    {
        forms.extend([
            path.to_owned(),
            format!("{slug}@{version}"),
            format!("{bundle}__{slug}"),
            slug.to_owned(),
        ]);
    }
    forms
}

/// The candidates by every form a reply may name them in.
struct NameIndex<'a> {
    candidates: &'a [Candidate],
    exact: HashMap<&'a str, usize>,
    reference: HashMap<&'a str, usize>,
    /// `None` when two candidates share the loose form: such a name is not guessed.
    loose: HashMap<String, Option<usize>>,
}

impl<'a> NameIndex<'a> {
    fn new(candidates: &'a [Candidate]) -> Self {
        let mut index = Self {
            candidates,
            exact: HashMap::new(),
            reference: HashMap::new(),
            loose: HashMap::new(),
        };
        for (i, candidate) in candidates.iter().enumerate() {
            index.exact.entry(&candidate.name).or_insert(i);
            index.reference.entry(&candidate.reference).or_insert(i);
            for form in forms(candidate) {
                let slot = index.loose.entry(loose(&form)).or_insert(Some(i));
                if *slot != Some(i) {
                    *slot = None;
                }
            }
        }
        index
    }

    /// The candidate `name` stands for: by exact name, then by reference, then by loose form.
    fn resolve(&self, name: &str) -> Option<usize> {
        self.exact
            .get(name)
            .or_else(|| self.reference.get(name))
            .copied()
            .or_else(|| self.loose.get(&loose(name)).copied().flatten())
    }

    /// The candidate names of `names`, in order, unknown ones and repeats dropped, at most `k`.
    fn pick(&self, names: &[String], k: usize) -> Vec<String> {
        let mut seen = HashSet::new();
        names
            .iter()
            .filter_map(|name| self.resolve(name))
            .filter(|&i| seen.insert(i))
            .take(k)
            .map(|i| self.candidates[i].name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests;
