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
            Err(e) if is_damaged(&e) => cache = Cache::recreate(state_dir, deadline),
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
        let http = crate::base::http::client(reqwest::redirect::Policy::none()).map_err(|e| {
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
        serde_json::from_slice(&bytes)
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
        if is_damaged(&e) {
            Self::Damaged
        } else {
            Self::Unusable
        }
    }
}

fn is_damaged(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
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
        for suffix in ["", "-wal", "-shm"] {
            let mut file = path.clone().into_os_string();
            file.push(suffix);
            // A file already gone is what is wanted; one that cannot go fails the open below.
            let _ = std::fs::remove_file(file);
        }
        Self::open_at(&path, deadline).ok()
    }

    fn open_at(path: &Path, deadline: Instant) -> Result<Self, OpenFailure> {
        // Waiting for a lock is bounded by the pick's deadline too. WAL: a pick reading
        // vectors never waits for another writing them. Derived data: a power cut may lose
        // the last vectors, never corrupt the file.
        let wait = CACHE_BUSY.min(time_left(deadline).unwrap_or_default());
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
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

    fn hash(text: &str) -> String {
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn candidate(name: &str, text: &str) -> Candidate {
        Candidate {
            name: name.to_owned(),
            reference: format!("b/{name}@1.0.0"),
            text: text.to_owned(),
            content_hash: hash(text),
        }
    }

    fn endpoint(server: &MockServer, model: &str, key: Option<&str>) -> Endpoint {
        Endpoint {
            base_url: format!("{}/v1", server.uri()),
            model: model.to_owned(),
            api_key: key.map(str::to_owned),
            timeout: Duration::from_secs(5),
        }
    }

    /// A vector from the letters of a text: [a − z, b, c].
    fn vector(text: &str) -> Vec<f64> {
        let n = |letter: char| text.matches(letter).count() as f64;
        vec![n('a') - n('z'), n('b'), n('c')]
    }

    /// An embeddings endpoint that answers [`vector`]s, listed in reverse with their index.
    struct Embedder;

    impl Respond for Embedder {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let body: Value = request.body_json().unwrap();
            let inputs = body["input"].as_array().unwrap();
            let mut data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .map(|(i, text)| {
                    json!({ "object": "embedding", "index": i,
                            "embedding": vector(text.as_str().unwrap()) })
                })
                .collect();
            data.reverse();
            ResponseTemplate::new(200)
                .set_body_json(json!({ "object": "list", "data": data, "model": body["model"] }))
        }
    }

    async fn embedder() -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/embeddings"))
            .respond_with(Embedder)
            .mount(&server)
            .await;
        server
    }

    /// A server that answers every request with `response`.
    async fn answering(response: ResponseTemplate) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/embeddings"))
            .respond_with(response)
            .mount(&server)
            .await;
        server
    }

    struct Run {
        result: Result<Vec<f64>, ScorerError>,
        progress: Vec<(usize, usize)>,
    }

    async fn run(
        state_dir: &Path,
        endpoint: Endpoint,
        query: &str,
        candidates: &[Candidate],
        batch_size: usize,
        limit: Duration,
    ) -> Run {
        let (state_dir, query, candidates) =
            (state_dir.to_owned(), query.to_owned(), candidates.to_vec());
        tokio::task::spawn_blocking(move || {
            let mut progress = Vec::new();
            let result = scores(
                &state_dir,
                &endpoint,
                &query,
                &candidates,
                batch_size,
                Instant::now() + limit,
                &mut |done, total| progress.push((done, total)),
            );
            Run { result, progress }
        })
        .await
        .unwrap()
    }

    /// The `input` of each request the server received.
    async fn inputs(server: &MockServer) -> Vec<Vec<String>> {
        server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .map(|r| {
                let body: Value = r.body_json().unwrap();
                serde_json::from_value(body["input"].clone()).unwrap()
            })
            .collect()
    }

    fn assert_close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{got:?} vs {want:?}");
        }
    }

    fn upstream(result: Result<Vec<f64>, ScorerError>) -> String {
        match result {
            Err(ScorerError::Upstream(message)) => message,
            other => panic!("expected an upstream error, got {other:?}"),
        }
    }

    fn tools() -> Vec<Candidate> {
        vec![
            candidate("same", "aaaa"),
            candidate("half", "ab"),
            candidate("other", "bbb"),
            candidate("opposite", "zz"),
            candidate("nothing", "xy"),
        ]
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn scores_are_cosines_in_candidate_order() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".toolctl");
        let out = run(
            &state,
            endpoint(&server, "m1", Some("sk-test-key")),
            "a",
            &tools(),
            10,
            Duration::from_secs(10),
        )
        .await;
        // Negative cosine (opposite) and a zero vector (nothing) score 0.
        assert_close(
            &out.result.unwrap(),
            &[1.0, std::f64::consts::FRAC_1_SQRT_2, 0.0, 0.0, 0.0],
        );
        assert_eq!(out.progress, vec![(5, 5)]);
        let requests = server.received_requests().await.unwrap();
        assert_eq!(requests.len(), 2);
        for request in &requests {
            assert_eq!(
                request.headers.get("authorization").unwrap(),
                "Bearer sk-test-key"
            );
            let body: Value = request.body_json().unwrap();
            assert_eq!(body["model"], "m1");
        }
        assert_eq!(
            inputs(&server).await,
            vec![vec!["a"], vec!["aaaa", "ab", "bbb", "zz", "xy"]]
        );
        assert!(state.join(CACHE_FILE).is_file());
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn no_key_sends_no_authorization_and_a_trailing_slash_is_fine() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let mut endpoint = endpoint(&server, "m1", None);
        endpoint.base_url.push('/');
        let out = run(
            dir.path(),
            endpoint,
            "b",
            &[candidate("t", "bb")],
            4,
            Duration::from_secs(10),
        )
        .await;
        assert_close(&out.result.unwrap(), &[1.0]);
        let requests = server.received_requests().await.unwrap();
        assert_eq!(requests.len(), 2);
        assert!(
            requests
                .iter()
                .all(|r| r.headers.get("authorization").is_none())
        );
        assert!(requests.iter().all(|r| r.url.path() == "/v1/embeddings"));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn missing_vectors_are_computed_in_batches() {
        let server = MockServer::start().await;
        // The task alone, then 5 tools in batches of 2.
        Mock::given(method("POST"))
            .and(path("/v1/embeddings"))
            .and(|r: &Request| r.body_json::<Value>().unwrap()["input"] == json!(["a"]))
            .respond_with(Embedder)
            .expect(1)
            .named("task")
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/v1/embeddings"))
            .and(|r: &Request| r.body_json::<Value>().unwrap()["input"] != json!(["a"]))
            .respond_with(Embedder)
            .expect(3)
            .named("tool batches")
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools(),
            2,
            Duration::from_secs(10),
        )
        .await;
        assert_close(
            &out.result.unwrap(),
            &[1.0, std::f64::consts::FRAC_1_SQRT_2, 0.0, 0.0, 0.0],
        );
        assert_eq!(out.progress, vec![(2, 5), (4, 5), (5, 5)]);
        assert_eq!(
            inputs(&server).await,
            vec![vec!["a"], vec!["aaaa", "ab"], vec!["bbb", "zz"], vec!["xy"]]
        );
        server.verify().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_same_text_is_embedded_once() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &[candidate("one", "ab"), candidate("two", "ab")],
            8,
            Duration::from_secs(10),
        )
        .await;
        let s = std::f64::consts::FRAC_1_SQRT_2;
        assert_close(&out.result.unwrap(), &[s, s]);
        assert_eq!(out.progress, vec![(1, 1)]);
        assert_eq!(inputs(&server).await, vec![vec!["a"], vec!["ab"]]);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn cached_vectors_are_not_asked_again() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let first = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools(),
            2,
            Duration::from_secs(10),
        )
        .await;
        let first = first.result.unwrap();

        // A fresh server: only the task may be asked for.
        let fresh = embedder().await;
        let second = run(
            dir.path(),
            endpoint(&fresh, "m1", None),
            "a",
            &tools(),
            2,
            Duration::from_secs(10),
        )
        .await;
        assert_close(&second.result.unwrap(), &first);
        assert!(second.progress.is_empty());
        assert_eq!(inputs(&fresh).await, vec![vec!["a"]]);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn another_model_misses_the_cache() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let tools = [candidate("t1", "ab"), candidate("t2", "bc")];
        for model in ["m1", "m2", "m1"] {
            run(
                dir.path(),
                endpoint(&server, model, None),
                "a",
                &tools,
                8,
                Duration::from_secs(10),
            )
            .await
            .result
            .unwrap();
        }
        // m1 computed, m2 computed, m1 again from the cache.
        assert_eq!(
            inputs(&server).await,
            vec![
                vec!["a"],
                vec!["ab", "bc"],
                vec!["a"],
                vec!["ab", "bc"],
                vec!["a"]
            ]
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_changed_text_is_the_only_one_computed_again() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let mut tools = tools();
        run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools,
            10,
            Duration::from_secs(10),
        )
        .await
        .result
        .unwrap();
        tools[2] = candidate("other", "abc");
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools,
            10,
            Duration::from_secs(10),
        )
        .await;
        assert_close(
            &out.result.unwrap(),
            &[
                1.0,
                std::f64::consts::FRAC_1_SQRT_2,
                1.0 / 3f64.sqrt(),
                0.0,
                0.0,
            ],
        );
        assert_eq!(out.progress, vec![(1, 1)]);
        let asked = inputs(&server).await;
        assert_eq!(&asked[2..], &[vec!["a"], vec!["abc"]]);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_cached_vector_of_another_length_is_computed_again() {
        let dir = tempfile::tempdir().unwrap();
        let tool = candidate("t", "ab");
        let cache = Cache::open(dir.path(), Instant::now() + Duration::from_secs(5)).unwrap();
        cache
            .put_all("m1", &[tool.content_hash.as_str()], &[vec![1.0, 2.0]])
            .unwrap();
        drop(cache);
        let server = embedder().await;
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &[tool],
            10,
            Duration::from_secs(10),
        )
        .await;
        assert_close(&out.result.unwrap(), &[std::f64::consts::FRAC_1_SQRT_2]);
        assert_eq!(inputs(&server).await, vec![vec!["a"], vec!["ab"]]);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_damaged_cache_is_made_again() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CACHE_FILE);
        std::fs::File::create(&file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &[b'x'; 8192]))
            .unwrap();
        let tools = [candidate("t", "ab")];
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools,
            10,
            Duration::from_secs(10),
        )
        .await;
        assert_close(&out.result.unwrap(), &[std::f64::consts::FRAC_1_SQRT_2]);
        // The new cache works: the tool is not asked for again.
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools,
            10,
            Duration::from_secs(10),
        )
        .await;
        assert_close(&out.result.unwrap(), &[std::f64::consts::FRAC_1_SQRT_2]);
        assert_eq!(
            inputs(&server).await,
            vec![vec!["a"], vec!["ab"], vec!["a"]]
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_cache_of_another_layout_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join(CACHE_FILE)).unwrap();
        conn.execute_batch("PRAGMA user_version = 99; CREATE TABLE vectors (x);")
            .unwrap();
        drop(conn);
        let server = embedder().await;
        let tools = [candidate("t", "ab")];
        for _ in 0..2 {
            let out = run(
                dir.path(),
                endpoint(&server, "m1", None),
                "a",
                &tools,
                10,
                Duration::from_secs(10),
            )
            .await;
            assert_close(&out.result.unwrap(), &[std::f64::consts::FRAC_1_SQRT_2]);
        }
        assert_eq!(
            inputs(&server).await,
            vec![vec!["a"], vec!["ab"], vec!["a"]]
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_state_dir_that_cannot_be_made_is_no_error() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        // A file where the state folder should be; and a folder in a missing catalog.
        let blocked = dir.path().join("file");
        std::fs::File::create(&blocked).unwrap();
        let missing = dir.path().join("no-catalog").join(".toolctl");
        for state in [&blocked, &missing] {
            let out = run(
                state,
                endpoint(&server, "m1", None),
                "a",
                &[candidate("t", "aa")],
                10,
                Duration::from_secs(10),
            )
            .await;
            assert_close(&out.result.unwrap(), &[1.0]);
        }
        assert!(!dir.path().join("no-catalog").exists());
        assert_eq!(inputs(&server).await.len(), 4);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn concurrent_picks_share_one_cache() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".toolctl");
        let picks: Vec<_> = (0..4)
            .map(|_| {
                let (state, endpoint) = (state.clone(), endpoint(&server, "m1", None));
                tokio::task::spawn_blocking(move || {
                    let deadline = Instant::now() + Duration::from_secs(10);
                    scores(
                        &state,
                        &endpoint,
                        "a",
                        &tools(),
                        2,
                        deadline,
                        &mut |_, _| {},
                    )
                })
            })
            .collect();
        for pick in picks {
            assert_close(
                &pick.await.unwrap().unwrap(),
                &[1.0, std::f64::consts::FRAC_1_SQRT_2, 0.0, 0.0, 0.0],
            );
        }
        let cache = Cache::open(&state, Instant::now() + Duration::from_secs(5)).unwrap();
        let hashes: Vec<String> = tools().into_iter().map(|c| c.content_hash).collect();
        let hashes: Vec<&str> = hashes.iter().map(String::as_str).collect();
        let cached = cache.get_all("m1", &hashes).unwrap();
        assert_eq!(cached[0], Some(vec![4.0, 0.0, 0.0]));
        assert_eq!(cached[3], Some(vec![-2.0, 0.0, 0.0]));
        assert!(cached.iter().all(Option::is_some));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn no_candidates_need_no_request() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &[],
            10,
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(out.result.unwrap(), Vec::<f64>::new());
        assert!(inputs(&server).await.is_empty());
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_refused_key_says_where_keys_come_from() {
        let server = answering(ResponseTemplate::new(401).set_body_string(
            r#"{"error":{"message":"Incorrect API key provided: sk-secret-123"}}"#,
        ))
        .await;
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", Some("sk-secret-123")),
            "a",
            &tools(),
            10,
            Duration::from_secs(10),
        )
        .await;
        let message = upstream(out.result);
        assert!(
            message.contains(&format!(
                "{}/v1/embeddings refused the API key (HTTP 401)",
                server.uri()
            )),
            "{message}"
        );
        assert!(message.contains("catalog secrets"), "{message}");
        assert!(message.contains("Incorrect API key provided"), "{message}");
        assert!(!message.contains("sk-secret-123"), "{message}");

        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools(),
            10,
            Duration::from_secs(10),
        )
        .await;
        let message = upstream(out.result);
        assert!(
            message.contains("wants an API key (HTTP 401) and none was given"),
            "{message}"
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn an_error_status_shows_a_short_excerpt() {
        let server =
            answering(ResponseTemplate::new(500).set_body_string("boom ".repeat(100))).await;
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools(),
            10,
            Duration::from_secs(10),
        )
        .await;
        let message = upstream(out.result);
        let prefix = format!(
            "{}/v1/embeddings answered HTTP 500: boom boom",
            server.uri()
        );
        assert!(message.starts_with(&prefix), "{message}");
        assert!(message.ends_with('…'), "{message}");
        assert!(message.len() < prefix.len() + 220, "{message}");
        assert_eq!(server.received_requests().await.unwrap().len(), 1);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_body_that_is_not_json_is_an_upstream_error() {
        let server =
            answering(ResponseTemplate::new(200).set_body_string("<html>hello</html>")).await;
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools(),
            10,
            Duration::from_secs(10),
        )
        .await;
        let message = upstream(out.result);
        assert!(
            message.contains("/v1/embeddings did not answer JSON"),
            "{message}"
        );
        assert!(message.ends_with(": <html>hello</html>"), "{message}");
    }

    /// The error for an answer of `data` to the task.
    async fn bad_answer(data: Value) -> String {
        let server =
            answering(ResponseTemplate::new(200).set_body_json(json!({ "data": data }))).await;
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools(),
            10,
            Duration::from_secs(10),
        )
        .await;
        let message = upstream(out.result);
        assert!(
            message.starts_with(&format!("{}/v1/embeddings ", server.uri())),
            "{message}"
        );
        message
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn malformed_vectors_are_upstream_errors() {
        let one = |e: Value| json!({ "index": 0, "embedding": e });
        assert!(
            bad_answer(json!([]))
                .await
                .ends_with("returned 0 vectors for 1 texts")
        );
        assert!(
            bad_answer(json!([one(json!([1.0])), one(json!([1.0]))]))
                .await
                .ends_with("returned 2 vectors for 1 texts")
        );
        assert!(
            bad_answer(json!([one(json!([]))]))
                .await
                .ends_with("returned an empty vector (item 0)")
        );
        assert!(
            bad_answer(json!([one(json!([1.0, "x"]))]))
                .await
                .contains("something other than a finite number")
        );
        // Too large for an f32.
        assert!(
            bad_answer(json!([one(json!([1e39]))]))
                .await
                .contains("something other than a finite number")
        );
        assert!(
            bad_answer(json!([{ "index": 3, "embedding": [1.0] }]))
                .await
                .contains("index 3")
        );
        assert!(
            bad_answer(json!([{ "vector": [1.0] }]))
                .await
                .contains("without an `embedding` array")
        );
        assert!(
            bad_answer(json!("nope"))
                .await
                .contains("without a `data` array")
        );
    }

    #[test]
    fn vectors_are_ordered_by_index_and_of_one_length() {
        let answer = json!({ "data": [
            { "index": 1, "embedding": [0.0, 2.0] },
            { "index": 0, "embedding": [1.0, 0.0] },
        ] });
        assert_eq!(
            parse_vectors("u", &answer, 2).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 2.0]]
        );
        // Without indexes: as listed.
        let answer =
            json!({ "data": [ { "embedding": [0.0, 2.0] }, { "embedding": [1.0, 0.0] } ] });
        assert_eq!(
            parse_vectors("u", &answer, 2).unwrap(),
            vec![vec![0.0, 2.0], vec![1.0, 0.0]]
        );
        let answer = json!({ "data": [
            { "index": 0, "embedding": [1.0, 0.0] },
            { "index": 0, "embedding": [1.0, 0.0] },
        ] });
        assert!(
            matches!(parse_vectors("u", &answer, 2), Err(ScorerError::Upstream(m)) if m.contains("repeated"))
        );
        let answer = json!({ "data": [
            { "index": 0, "embedding": [1.0, 0.0] },
            { "index": 1, "embedding": [1.0, 0.0, 3.0] },
        ] });
        assert_eq!(
            parse_vectors("u", &answer, 2),
            Err(ScorerError::Upstream(
                "u returned vectors of different dimensions (2 and 3)".into()
            ))
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn tool_vectors_of_another_length_than_the_task_are_refused() {
        struct Lengths;
        impl Respond for Lengths {
            fn respond(&self, request: &Request) -> ResponseTemplate {
                let body: Value = request.body_json().unwrap();
                let n = body["input"].as_array().unwrap().len();
                let width = if body["input"] == json!(["a"]) { 3 } else { 2 };
                let data: Vec<Value> = (0..n)
                    .map(|i| json!({ "index": i, "embedding": vec![1.0; width] }))
                    .collect();
                ResponseTemplate::new(200).set_body_json(json!({ "data": data }))
            }
        }
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Lengths)
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools(),
            10,
            Duration::from_secs(10),
        )
        .await;
        assert!(
            upstream(out.result)
                .ends_with("returned vectors of 2 dimensions for tools but of 3 for the task")
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_refused_connection_is_an_upstream_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let endpoint = Endpoint {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            model: "m1".into(),
            api_key: Some("sk-secret-123".into()),
            timeout: Duration::from_secs(5),
        };
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = run(
            dir.path(),
            endpoint,
            "a",
            &tools(),
            10,
            Duration::from_secs(10),
        )
        .await;
        let message = upstream(out.result);
        assert!(
            message.starts_with(&format!(
                "cannot reach http://127.0.0.1:{port}/v1/embeddings: "
            )),
            "{message}"
        );
        assert!(message.to_lowercase().contains("refused"), "{message}");
        assert!(!message.contains("sk-secret"), "{message}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_past_deadline_sends_nothing() {
        let server = embedder().await;
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools(),
            10,
            Duration::ZERO,
        )
        .await;
        assert_eq!(out.result, Err(ScorerError::Deadline));
        assert!(server.received_requests().await.unwrap().is_empty());
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_slow_server_times_out_quickly() {
        let server = answering(ResponseTemplate::new(200).set_delay(Duration::from_secs(10))).await;
        let dir = tempfile::tempdir().unwrap();
        let mut slow = endpoint(&server, "m1", None);
        slow.timeout = Duration::from_millis(300);
        let started = Instant::now();
        let out = run(dir.path(), slow, "a", &tools(), 10, Duration::from_secs(10)).await;
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(
            upstream(out.result),
            format!(
                "{}/v1/embeddings did not answer within 300 ms",
                server.uri()
            )
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_slow_server_past_the_deadline_is_a_deadline() {
        let server = answering(ResponseTemplate::new(200).set_delay(Duration::from_secs(10))).await;
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools(),
            10,
            Duration::from_millis(300),
        )
        .await;
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(out.result, Err(ScorerError::Deadline));
    }

    #[test]
    fn cosine_is_clamped_to_zero_and_one() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-12);
        assert_eq!(cosine(&[1.0, 0.0], &[-1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
        assert!((cosine(&[1.0, 1.0], &[1.0, 0.0]) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-7);
    }

    #[test]
    fn excerpts_are_short_and_on_one_line() {
        assert_eq!(excerpt("a\n  b\t c"), "a b c");
        assert_eq!(excerpt("  "), "(empty body)");
        let long = excerpt(&"é".repeat(500));
        assert_eq!(long.chars().count(), EXCERPT_CHARS + 1);
    }

    proptest::proptest! {
        #[test]
        fn vectors_round_trip_through_blobs(v in proptest::collection::vec(-1e30f32..1e30f32, 1..64)) {
            let blob = encode(&v);
            proptest::prop_assert_eq!(blob.len(), v.len() * 4);
            proptest::prop_assert_eq!(decode(&blob), Some(v));
        }
    }

    #[test]
    fn blobs_that_are_not_vectors_are_refused() {
        assert_eq!(decode(&[]), None);
        assert_eq!(decode(&[0, 0, 0]), None);
        assert_eq!(decode(&f32::NAN.to_le_bytes()), None);
    }
}
