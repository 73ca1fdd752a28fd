//! The `embed` scorer: how close a task is in meaning to each tool, as the cosine similarity of
//! their embeddings from any OpenAI-compatible `POST {base_url}/embeddings` endpoint (OpenAI,
//! Ollama's `/v1`, llama.cpp's server, vLLM).
//!
//! Embedding a whole catalog is the slow part and its result only changes when a tool's text
//! does, so tool vectors are cached in `.toolctl/embeddings.sqlite`, keyed by the model and the
//! tool's content hash: a pick embeds the task and only the tools it has never seen. The task's
//! vector is never cached (tasks rarely repeat).
//!
//! The cache is derived state and must never be the reason a pick fails: a database that
//! cannot be opened as one, or is damaged, is deleted and made again; one that cannot be used
//! at all (a read-only folder, a lock held too long) is skipped and the vectors are computed
//! without it. So [`scores`] never returns [`ScorerError::Cache`]: with a working endpoint
//! there is always an answer, and without one the endpoint's error is the one worth showing.
//!
//! The HTTP part ([`Client`]) is shared with the `llm` scorer: both speak to an
//! OpenAI-compatible endpoint under the pick's deadline and turn every failure into one
//! readable [`ScorerError::Upstream`] that names the URL and never the key.

use super::{Candidate, Endpoint, ScorerError, time_left};
use crate::base::http::CappedRead;
use crate::base::redact::Redactor;
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The cache of tool vectors, in the catalog's state folder.
pub const CACHE_FILE: &str = "embeddings.sqlite";

/// The layout of [`CACHE_FILE`] (`PRAGMA user_version`); a file of another layout is
/// made again.
const CACHE_VERSION: i64 = 1;

/// How long the cache may wait for another process's lock before it is skipped.
const CACHE_BUSY: Duration = Duration::from_secs(2);

/// The largest response read: a batch of 1000 vectors of 3072 dimensions is about 60 MB of
/// JSON; anything larger is a misbehaving server, not an answer.
const MAX_RESPONSE: u64 = 128 * 1024 * 1024;

/// How much of a response an error shows.
const EXCERPT_CHARS: usize = 200;

/// The cosine similarity between `query` and each candidate's text, in the candidates' order,
/// clamped to 0..1 (an opposite meaning scores 0, like an unrelated one).
///
/// Vectors missing from the cache are computed in batches of `batch_size` texts (at least 1;
/// candidates with the same content hash share one), `progress(done, total)` being called
/// after each batch with counts of texts to compute; nothing is called when every vector was
/// cached. The task is embedded first, in a request of its own. A cached vector whose length
/// differs from the task's (the model behind a name changed) is computed again.
///
/// Each request may take `endpoint.timeout`, and never past `deadline`
/// ([`ScorerError::Deadline`]). An unreachable endpoint, a refused key, an error status or an
/// answer that is not one finite, non-empty vector per text, all of one length, is a
/// [`ScorerError::Upstream`]. Cache problems are never an error (see the module comment).
pub fn scores(
    state_dir: &Path,
    endpoint: &Endpoint,
    query: &str,
    candidates: &[Candidate],
    batch_size: usize,
    deadline: Instant,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<f64>, ScorerError> {
    time_left(deadline)?;
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let client = Client::new(endpoint)?;
    let url = endpoint_url(endpoint, "/embeddings");
    let query_vector = embed(&client, &url, &[query], deadline)?
        .pop()
        .ok_or_else(|| ScorerError::Upstream(format!("{url} returned no vector for the task")))?;
    let dims = query_vector.len();

    // One entry per distinct content hash, in the candidates' order.
    let mut order: Vec<&str> = Vec::new();
    let mut text_of: HashMap<&str, &str> = HashMap::new();
    for candidate in candidates {
        if text_of
            .insert(&candidate.content_hash, &candidate.text)
            .is_none()
        {
            order.push(&candidate.content_hash);
        }
    }

    let mut cache = Cache::open(state_dir, deadline);
    let mut vectors: HashMap<&str, Vec<f32>> = HashMap::new();
    if let Some(open) = &cache {
        match open.get_all(&endpoint.model, &order) {
            Ok(found) => {
                for (hash, vector) in order.iter().zip(found) {
                    if let Some(vector) = vector.filter(|v| v.len() == dims) {
                        vectors.insert(hash, vector);
                    }
                }
            }
            // A cache that cannot be read is made again for the writes below.
            Err(e) if crate::base::state_db::is_damaged(&e) => {
                cache = Cache::recreate(state_dir, deadline)
            }
            Err(_) => cache = None,
        }
    }

    let missing: Vec<&str> = order
        .iter()
        .copied()
        .filter(|hash| !vectors.contains_key(hash))
        .collect();
    let total = missing.len();
    let mut done = 0;
    for batch in missing.chunks(batch_size.max(1)) {
        let texts: Vec<&str> = batch.iter().map(|hash| text_of[hash]).collect();
        let computed = embed(&client, &url, &texts, deadline)?;
        if let Some(other) = computed.iter().map(Vec::len).find(|&n| n != dims) {
            return Err(ScorerError::Upstream(format!(
                "{url} returned vectors of {other} dimensions for tools but of {dims} for the task"
            )));
        }
        // Best effort: a cache that fails a write is not used again in this pick.
        if let Some(open) = &cache
            && open.put_all(&endpoint.model, batch, &computed).is_err()
        {
            cache = None;
        }
        vectors.extend(batch.iter().copied().zip(computed));
        done += batch.len();
        progress(done, total);
    }

    Ok(candidates
        .iter()
        .map(|c| {
            vectors
                .get(c.content_hash.as_str())
                .map_or(0.0, |v| cosine(&query_vector, v))
        })
        .collect())
}

/// The cosine similarity of two vectors of one length, clamped to 0..1 (0 for a zero vector).
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut dot, mut norm_a, mut norm_b) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        norm_a += x * x;
        norm_b += y * y;
    }
    if norm_a == 0.0 || norm_b == 0.0 {
        return 0.0;
    }
    let cos = dot / (norm_a.sqrt() * norm_b.sqrt());
    if cos.is_finite() {
        cos.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The vectors of `texts`, one per text in their order.
fn embed(
    client: &Client,
    url: &str,
    texts: &[&str],
    deadline: Instant,
) -> Result<Vec<Vec<f32>>, ScorerError> {
    let body = json!({ "model": client.endpoint.model, "input": texts });
    let answer = client.post_json("/embeddings", &body, deadline)?;
    parse_vectors(url, &answer, texts.len())
}

/// The vectors of an embeddings answer (`{"data": [{"embedding": […], "index": i}, …]}`),
/// put in order by `index` when every item has one.
fn parse_vectors(url: &str, answer: &Value, expected: usize) -> Result<Vec<Vec<f32>>, ScorerError> {
    let bad = |what: String| ScorerError::Upstream(format!("{url} {what}"));
    let data = answer
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("answered without a `data` array of embeddings".into()))?;
    if data.len() != expected {
        return Err(bad(format!(
            "returned {} vectors for {expected} texts",
            data.len()
        )));
    }
    let indexed = data
        .iter()
        .all(|item| item.get("index").and_then(Value::as_u64).is_some());
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let at = if indexed {
            item.get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(usize::MAX)
        } else {
            position
        };
        let Some(slot) = slots.get_mut(at).filter(|slot| slot.is_none()) else {
            return Err(bad(format!(
                "returned an embedding with index {at}, out of range or repeated"
            )));
        };
        let numbers = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                bad(format!(
                    "returned item {position} without an `embedding` array"
                ))
            })?;
        if numbers.is_empty() {
            return Err(bad(format!("returned an empty vector (item {position})")));
        }
        let vector = numbers
            .iter()
            // Kept as f32: a number too large for one becomes infinite and is refused.
            .map(|n| n.as_f64().map(|f| f as f32).filter(|f| f.is_finite()))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| {
                bad(format!(
                    "returned a vector holding something other than a finite number (item {position})"
                ))
            })?;
        *slot = Some(vector);
    }
    let vectors: Vec<Vec<f32>> = slots.into_iter().flatten().collect();
    if let Some(first) = vectors.first()
        && let Some(other) = vectors.iter().find(|v| v.len() != first.len())
    {
        return Err(bad(format!(
            "returned vectors of different dimensions ({} and {})",
            first.len(),
            other.len()
        )));
    }
    Ok(vectors)
}

/// `{base_url}{path}`, without a doubled `/`.
pub(super) fn endpoint_url(endpoint: &Endpoint, path: &str) -> String {
    format!("{}{path}", endpoint.base_url.trim_end_matches('/'))
}

/// An OpenAI-compatible endpoint to POST JSON to, kept for the requests of one pick so its
/// batches reuse one connection.
///
/// Each request may take `endpoint.timeout`, never past the pick's deadline; a request cut
/// short by the deadline is [`ScorerError::Deadline`]. Redirects are not followed (an API
/// answers where it is asked, and the key must not travel to another host). The key goes only
/// in the `Authorization` header, and is redacted from any text of an answer an error quotes.
pub(super) struct Client<'a> {
    endpoint: &'a Endpoint,
    http: reqwest::blocking::Client,
    redactor: Redactor,
}

/// Without the key.
impl std::fmt::Debug for Client<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.endpoint.base_url)
            .field("model", &self.endpoint.model)
            .finish_non_exhaustive()
    }
}

impl<'a> Client<'a> {
    pub(super) fn new(endpoint: &'a Endpoint) -> Result<Self, ScorerError> {
        let mut redactor = Redactor::default();
        if let Some(key) = &endpoint.api_key {
            redactor.add(key);
        }
        // The endpoint is the user's own choice (often a model server on this machine), not
        // under allowedHosts.
        let http =
            crate::base::http::client(reqwest::redirect::Policy::none(), None).map_err(|e| {
                ScorerError::Upstream(
                    redactor.text(&format!("cannot make an HTTP client: {}", chain(&e))),
                )
            })?;
        Ok(Self {
            endpoint,
            http,
            redactor,
        })
    }

    /// POST `body` as JSON to `{base_url}{path}` and return the JSON answer.
    pub(super) fn post_json(
        &self,
        path: &str,
        body: &Value,
        deadline: Instant,
    ) -> Result<Value, ScorerError> {
        let url = endpoint_url(self.endpoint, path);
        // From connecting to the end of the body.
        let timeout = self.endpoint.timeout.min(time_left(deadline)?);
        let key = self.endpoint.api_key.as_deref().filter(|k| !k.is_empty());
        let upstream = |message: String| ScorerError::Upstream(self.redactor.text(&message));
        let mut request = self
            .http
            .post(&url)
            .timeout(timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(body).unwrap_or_default());
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let timed_out = || {
            if time_left(deadline).is_err() {
                ScorerError::Deadline
            } else {
                ScorerError::Upstream(format!(
                    "{url} did not answer within {} ms",
                    timeout.as_millis()
                ))
            }
        };
        let response = match request.send() {
            Ok(response) => response,
            Err(e) if e.is_timeout() => return Err(timed_out()),
            Err(e) if e.is_connect() => {
                return Err(upstream(format!("cannot reach {url}: {}", root_cause(&e))));
            }
            Err(e) => {
                return Err(upstream(format!(
                    "the request to {url} failed: {}",
                    chain(&e.without_url())
                )));
            }
        };
        let status = response.status().as_u16();
        let bytes = match crate::base::http::read_capped(response, MAX_RESPONSE) {
            Ok(bytes) => bytes,
            Err(CappedRead::Failed(e))
                if e.kind() == std::io::ErrorKind::TimedOut || is_timeout(&e) =>
            {
                return Err(timed_out());
            }
            Err(CappedRead::Failed(e)) => {
                return Err(upstream(format!("reading the answer of {url} failed: {e}")));
            }
            Err(CappedRead::TooLarge) => {
                return Err(upstream(format!(
                    "{url} answered more than {} MiB",
                    MAX_RESPONSE / 1024 / 1024
                )));
            }
        };
        let excerpt = || excerpt(&self.redactor.text(&String::from_utf8_lossy(&bytes)));
        if status == 401 || status == 403 {
            let what = if key.is_some() {
                format!("{url} refused the API key (HTTP {status})")
            } else {
                format!("{url} wants an API key (HTTP {status}) and none was given")
            };
            return Err(upstream(format!(
                "{what}: {}; keys come from the catalog secrets \
                 ($XDG_CONFIG_HOME/toolctl/secrets.json or a TOOLCTL_SECRET_<NAME> variable)",
                excerpt()
            )));
        }
        if !(200..300).contains(&status) {
            return Err(upstream(format!(
                "{url} answered HTTP {status}: {}",
                excerpt()
            )));
        }
        // An answer that echoes the key (a proxy quoting the request) never shows it, in a
        // warning or in `--debug`'s provenance.
        serde_json::from_slice(&bytes)
            .map(|answer| self.redactor.value(answer))
            .map_err(|e| upstream(format!("{url} did not answer JSON ({e}): {}", excerpt())))
    }
}

/// An error and its causes, `: `-separated.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    for cause in crate::base::causes(e) {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
    }
    text
}

/// The innermost cause of an error (`Connection refused (os error 111)`, a DNS or TLS
/// failure): what a user can act on.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    crate::base::causes(e).last().unwrap_or(e).to_string()
}

/// A read error that is reqwest's timeout wrapped in an I/O error.
fn is_timeout(e: &std::io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
        .is_some_and(reqwest::Error::is_timeout)
}

/// At most [`EXCERPT_CHARS`] characters of a response, on one line.
pub(super) fn excerpt(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return "(empty body)".to_owned();
    }
    let mut cut: String = flat.chars().take(EXCERPT_CHARS).collect();
    if cut.len() < flat.len() {
        cut.push('…');
    }
    cut
}

/// The vector cache: `embeddings.sqlite`, one table
/// `vectors(model, content_hash, dims, vector)` keyed by `(model, content_hash)`, `vector`
/// being `dims` f32 little-endian (4 bytes each).
struct Cache {
    conn: Connection,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cache")
    }
}

/// Why the cache file could not be opened.
enum OpenFailure {
    /// Not a database, damaged, or of another layout: delete it and make it again.
    Damaged,
    /// Cannot be used now (permissions, a lock held too long): go without.
    Unusable,
}

impl From<rusqlite::Error> for OpenFailure {
    fn from(e: rusqlite::Error) -> Self {
        if crate::base::state_db::is_damaged(&e) {
            Self::Damaged
        } else {
            Self::Unusable
        }
    }
}

impl Cache {
    /// The cache of `state_dir`, made if missing, made again if damaged; `None` when it
    /// cannot be used.
    fn open(state_dir: &Path, deadline: Instant) -> Option<Self> {
        let path = cache_path(state_dir)?;
        match Self::open_at(&path, deadline) {
            Ok(cache) => Some(cache),
            Err(OpenFailure::Damaged) => Self::recreate(state_dir, deadline),
            Err(OpenFailure::Unusable) => None,
        }
    }

    /// Delete the cache of `state_dir` and make a new one.
    fn recreate(state_dir: &Path, deadline: Instant) -> Option<Self> {
        let path = cache_path(state_dir)?;
        // A file that cannot go fails the open below.
        let _ = crate::base::state_db::remove(&path);
        Self::open_at(&path, deadline).ok()
    }

    fn open_at(path: &Path, deadline: Instant) -> Result<Self, OpenFailure> {
        // Waiting for a lock is bounded by the pick's deadline too. WAL: a pick reading
        // vectors never waits for another writing them. Derived data: a power cut may lose
        // the last vectors, never corrupt the file.
        let wait = CACHE_BUSY.min(time_left(deadline).unwrap_or_default());
        // A cache that a symlink puts outside the catalog is not used (nor deleted).
        if crate::catalog::store::refuse_link_out(path).is_err() {
            return Err(OpenFailure::Unusable);
        }
        let conn = crate::base::state_db::open(path, true, wait, "NORMAL")?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version != 0 && version != CACHE_VERSION {
            return Err(OpenFailure::Damaged);
        }
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS vectors (
                model TEXT NOT NULL,
                content_hash TEXT NOT NULL,
                dims INTEGER NOT NULL,
                vector BLOB NOT NULL,
                PRIMARY KEY (model, content_hash)
            ) WITHOUT ROWID",
        )?;
        if version == 0 {
            conn.pragma_update(None, "user_version", CACHE_VERSION)?;
        }
        Ok(Self { conn })
    }

    /// The cached vector of each hash (`None` when missing or unreadable).
    fn get_all(&self, model: &str, hashes: &[&str]) -> rusqlite::Result<Vec<Option<Vec<f32>>>> {
        let mut statement = self.conn.prepare_cached(
            "SELECT dims, vector FROM vectors WHERE model = ?1 AND content_hash = ?2",
        )?;
        hashes
            .iter()
            .map(|hash| {
                let row = statement
                    .query_row((model, hash), |r| {
                        Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
                    })
                    .optional()?;
                Ok(row.and_then(|(dims, blob)| {
                    decode(&blob).filter(|v| i64::try_from(v.len()).is_ok_and(|n| n == dims))
                }))
            })
            .collect()
    }

    /// Store the vectors of `hashes`, in one transaction.
    fn put_all(&self, model: &str, hashes: &[&str], vectors: &[Vec<f32>]) -> rusqlite::Result<()> {
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut statement = tx.prepare_cached(
                "INSERT OR REPLACE INTO vectors (model, content_hash, dims, vector)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (hash, vector) in hashes.iter().zip(vectors) {
                let dims = i64::try_from(vector.len()).unwrap_or(i64::MAX);
                statement.execute((model, hash, dims, encode(vector)))?;
            }
        }
        tx.commit()
    }
}

/// The cache file of `state_dir` (see [`ensure_state_dir`]).
fn cache_path(state_dir: &Path) -> Option<PathBuf> {
    ensure_state_dir(state_dir).then(|| state_dir.join(CACHE_FILE))
}

/// Make `state_dir` if it is missing — but only inside an existing folder: a catalog that is
/// not on disk gets no cache, and no folders. Whether the folder is there now.
pub(super) fn ensure_state_dir(state_dir: &Path) -> bool {
    if state_dir.is_dir() {
        return true;
    }
    let parent = state_dir.parent().filter(|p| !p.as_os_str().is_empty());
    if parent.is_some_and(|p| !p.is_dir()) {
        return false;
    }
    crate::catalog::store::create_state_dir(state_dir).is_ok()
}

/// A vector as f32 little-endian bytes.
fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// The vector of [`encode`]d bytes; `None` when they are not whole finite f32s.
fn decode(bytes: &[u8]) -> Option<Vec<f32>> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return None;
    }
    bytes
        .chunks_exact(4)
        .map(|b| {
            let f = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            f.is_finite().then_some(f)
        })
        .collect()
}

#[cfg(test)]
mod tests;
