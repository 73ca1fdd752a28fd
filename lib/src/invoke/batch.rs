//! `invoke --batch`: several calls at once, taken and answered as one document.
//!
//! The request is toolctl's own `{"calls":[{call_id, name, arguments}], "wait_ms", "mode"}`
//! (1–20 calls, `call_id` at most 120 characters and unique, `wait_ms` 100–60000, default
//! 15000, `mode` "sync"), or what a model sends: an OpenAI `tool_calls` array (`id`,
//! `function.name`, `function.arguments` as a JSON string), Ollama's (`arguments` as an object,
//! no id: the call's position, `call_<n>`, stands in), an assistant message holding
//! `tool_calls`, or any other provider's calls ([`shapes`]: Anthropic `tool_use`, Gemini
//! `functionCall`, Responses `function_call`), each answered in its provider's shape. A request
//! that is none of these is one `VALIDATION_ERROR` naming what is wrong and where (a JSON
//! pointer).
//!
//! Calls run concurrently, each on its own thread; each result is bound to its `call_id`. A call
//! still running at `wait_ms` is reported `TIMEOUT` and cancelled: its deadline reaches the
//! running tool (an HTTP request or a program is stopped), and nothing of it outlives the
//! command. Per-call failures (`UNKNOWN_TOOL`, `TOOL_DISABLED`, `VALIDATION_ERROR`, …) are
//! embedded in the results, so a model's tool loop gets an answer for every call.
//!
//! Outputs whose JSON is longer than [`TRUNCATE_AT`] bytes are replaced, in `results` and in
//! `tool_messages` alike, by `{"truncated": true, "bytes": <length>, "preview": <the first
//! 12000 bytes of the JSON>}`. The cap and the preview are counted in UTF-8 bytes, what a
//! caller budgets (characters would agree with bytes only for ASCII), and the preview ends at
//! the last whole character within them (so it may be up to 3 bytes shorter). A preview is
//! thus always shorter than the value it replaces.

use super::{Failure, Options};
use crate::base::error_code::ErrorCode;
use crate::catalog::{Catalog, ToolEntry};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

pub const MAX_CALLS: usize = 20;
/// The largest batch document taken, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
pub const MAX_CALL_ID: usize = 120;
pub const WAIT_DEFAULT_MS: u64 = 15_000;
pub const WAIT_RANGE_MS: std::ops::RangeInclusive<u64> = 100..=60_000;
/// Outputs longer than this (as JSON text, in UTF-8 bytes) are truncated, and a truncated
/// output's `preview` holds at most this many bytes of it.
pub const TRUNCATE_AT: usize = 12_000;

pub mod shapes;

pub use shapes::Shape;

/// One call of a batch.
#[derive(Debug, Clone)]
pub struct Call {
    pub call_id: String,
    /// Whether `call_id` came with the call (else it is `call_<n>`, its place in the batch).
    pub given_id: bool,
    pub name: String,
    /// As sent: an object, or a string holding one.
    pub arguments: Value,
}

/// How a batch is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// With every call's result (or, past `wait_ms`, the job still running).
    Sync,
    /// At once, with the job each call became.
    Async,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sync => "sync",
            Self::Async => "async",
        }
    }
}

/// The queue calls wait in unless the request names one.
pub const DEFAULT_QUEUE: &str = "default";

/// A parsed batch request.
#[derive(Debug, Clone)]
pub struct Request {
    pub calls: Vec<Call>,
    pub wait_ms: u64,
    /// `sync` (answer with the results) or `async` (answer with the jobs queued).
    pub mode: Mode,
    /// The queue the calls' jobs wait in (`default` unless named).
    pub queue: String,
    /// Whose calls these are, and so whose messages answer them.
    pub shape: Shape,
}

fn invalid(message: impl Into<String>, pointer: &str) -> Failure {
    Failure::new(ErrorCode::ValidationError, message).with_details(json!({ "pointer": pointer }))
}

/// Refuse a batch document of `bytes` bytes when it is over [`MAX_DOCUMENT_BYTES`].
pub fn check_size(bytes: usize) -> Result<(), Failure> {
    if bytes > MAX_DOCUMENT_BYTES {
        return Err(invalid(
            format!(
                "the batch document is {bytes} bytes; a batch may be at most 1 MiB ({MAX_DOCUMENT_BYTES} bytes)"
            ),
            "",
        ));
    }
    Ok(())
}

/// Read a batch request (see the module comment and [`shapes`]); `forced` chooses the shape of
/// the answer, else the calls' own shape does.
pub fn parse(doc: &Value, forced: Option<Shape>) -> Result<Request, Failure> {
    let located = shapes::locate(doc)?;
    let (wait_ms, mode, queue) = match doc {
        Value::Object(map) if located.shape == Some(Shape::Toolctl) => {
            (wait_ms(map)?, mode(map)?, queue(map)?)
        }
        _ => (WAIT_DEFAULT_MS, Mode::Sync, DEFAULT_QUEUE.to_owned()),
    };
    let base = located.base.as_str();
    let found: Vec<(usize, Shape)> = located
        .items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| shapes::shape_of(item).map(|shape| (i, shape)))
        .collect();
    if found.is_empty() || found.len() > MAX_CALLS {
        return Err(invalid(
            format!("a batch holds 1 to {MAX_CALLS} calls, not {}", found.len()),
            base,
        ));
    }
    // One provider's calls per batch; toolctl's own calls, OpenAI's and Ollama's are one family
    // (a `{"calls"}` request may hold OpenAI-style ones).
    let family = |shape: Shape| match shape {
        Shape::Toolctl | Shape::Openai | Shape::Ollama => Shape::Toolctl,
        other => other,
    };
    let first = found[0].1;
    let mut calls = Vec::with_capacity(found.len());
    for &(i, shape) in &found {
        let at = format!("{base}/{i}");
        if family(shape) != family(first) {
            return Err(invalid(
                format!(
                    "one batch holds one provider's calls: this call is shaped as {}'s, the first as {}'s",
                    shapes::provider_name(shape),
                    shapes::provider_name(first)
                ),
                &at,
            ));
        }
        calls.push(shapes::parse_one(
            &located.items[i],
            shape,
            calls.len(),
            &at,
        )?);
    }
    for (n, call) in calls.iter().enumerate() {
        if calls[..n].iter().any(|c| c.call_id == call.call_id) {
            return Err(invalid(
                format!(
                    "call_id '{}' is used twice: results could not be told apart",
                    call.call_id
                ),
                &format!("{base}/{}", found[n].0),
            ));
        }
    }
    let shape = forced.or(located.shape).unwrap_or(first);
    Ok(Request {
        calls,
        wait_ms,
        mode,
        queue,
        shape,
    })
}

fn mode(map: &Map<String, Value>) -> Result<Mode, Failure> {
    match map.get("mode") {
        None | Some(Value::Null) => Ok(Mode::Sync),
        Some(Value::String(mode)) if mode == "sync" => Ok(Mode::Sync),
        Some(Value::String(mode)) if mode == "async" => Ok(Mode::Async),
        Some(other) => Err(invalid(
            format!(
                "'mode' must be \"sync\" or \"async\", not {}",
                crate::base::schema_build::shorten(&other.to_string())
            ),
            "/mode",
        )),
    }
}

/// `queue` names where the calls' jobs wait: `^[a-z0-9._:-]{1,80}$`.
fn queue(map: &Map<String, Value>) -> Result<String, Failure> {
    match map.get("queue") {
        None | Some(Value::Null) => Ok(DEFAULT_QUEUE.to_owned()),
        Some(Value::String(queue))
            if (1..=80).contains(&queue.len())
                && queue.bytes().all(|b| {
                    b.is_ascii_lowercase()
                        || b.is_ascii_digit()
                        || matches!(b, b'.' | b'_' | b':' | b'-')
                }) =>
        {
            Ok(queue.clone())
        }
        Some(other) => Err(invalid(
            format!(
                "'queue' must be 1 to 80 of a-z, 0-9, '.', '_', ':' and '-', not {}",
                crate::base::schema_build::shorten(&other.to_string())
            ),
            "/queue",
        )),
    }
}

fn wait_ms(map: &Map<String, Value>) -> Result<u64, Failure> {
    match map.get("wait_ms") {
        None | Some(Value::Null) => Ok(WAIT_DEFAULT_MS),
        Some(value) => value
            .as_u64()
            .filter(|n| WAIT_RANGE_MS.contains(n))
            .ok_or_else(|| {
                invalid(
                    format!(
                        "'wait_ms' must be an integer from {} to {}, not {value}",
                        WAIT_RANGE_MS.start(),
                        WAIT_RANGE_MS.end()
                    ),
                    "/wait_ms",
                )
            }),
    }
}

/// One call's answer, as `results[]` shows it: the call's value under `value`, as `invoke
/// --json` prints it (docs/JSON.md rule 5), or its error.
pub fn result(call: &Call, outcome: &Result<Value, Failure>) -> Value {
    match outcome {
        Ok(value) => json!({
            "call_id": call.call_id,
            "name": call.name,
            "ok": true,
            "value": truncate(value),
        }),
        Err(failure) => json!({
            "call_id": call.call_id,
            "name": call.name,
            "ok": false,
            "error": error(failure),
        }),
    }
}

/// An error as a batch shows it: its message at most [`TRUNCATE_AT`] bytes (a longer one is
/// cut at a character and says how long it was), its details truncated as an output is.
pub fn error(failure: &Failure) -> Value {
    let message = failure.message();
    let message = if message.len() > TRUNCATE_AT {
        format!(
            "{}… (cut: {} bytes in all)",
            &message[..message.floor_char_boundary(TRUNCATE_AT)],
            message.len()
        )
    } else {
        message.to_owned()
    };
    let mut error = json!({ "code": failure.code, "message": message });
    let details = failure.details();
    if details.as_object().is_none_or(|m| !m.is_empty()) {
        error["details"] = truncate(details);
    }
    error
}

/// What a tool message says of one call: `{"ok":true,"value":…}` or `{"ok":false,"error":…}`
/// (sent as JSON text where the provider takes text), the value under the name `invoke --json`
/// gives it.
pub fn body(outcome: &Result<Value, Failure>) -> Value {
    match outcome {
        Ok(value) => json!({ "ok": true, "value": truncate(value) }),
        Err(failure) => json!({ "ok": false, "error": error(failure) }),
    }
}

/// The messages answering every call, in `request`'s shape ([`shapes::tool_messages`]).
pub fn tool_messages(request: &Request, outcomes: &[Result<Value, Failure>]) -> Vec<Value> {
    shapes::tool_messages(request.shape, &request.calls, outcomes)
}

/// An output as a batch shows it: whole, or truncated when its JSON is too long.
pub fn truncate(output: &Value) -> Value {
    let text = output.to_string();
    if text.len() <= TRUNCATE_AT {
        return output.clone();
    }
    json!({
        "truncated": true,
        "bytes": text.len(),
        "preview": &text[..text.floor_char_boundary(TRUNCATE_AT)],
    })
}

/// The `TIMEOUT` of a call that did not finish within `wait_ms` (`details.wait_ms` says it).
pub fn timed_out(wait_ms: u64) -> Failure {
    Failure::new(
        ErrorCode::Timeout,
        format!("the call did not finish within wait_ms ({wait_ms} ms) and was cancelled"),
    )
    .with_details(json!({ "wait_ms": wait_ms }))
}

/// How a batch finds the tool a call names (the index resolves references, above this layer).
pub type Resolve = dyn Fn(&Catalog, &str) -> Result<ToolEntry, Failure> + Send + Sync;

/// How long a batch waits, after `wait_ms`, for calls that are being stopped.
const STRAGGLER_GRACE: Duration = Duration::from_secs(2);

/// Run a batch: every call on its own thread (resolve its name, invoke, count the call), each
/// told the deadline `wait_ms` from now. Returns each call's outcome in order; a call still
/// running at the deadline is [`timed_out`]. `progress` hears (done, total) as calls end.
pub fn run(
    request: &Request,
    catalog: Arc<Catalog>,
    resolve: Arc<Resolve>,
    workspace: PathBuf,
    approved: bool,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<Result<Value, Failure>> {
    let deadline = Instant::now() + Duration::from_millis(request.wait_ms);
    // One session per stdio MCP server for the whole batch, ended with it.
    let sessions = Arc::new(super::mcp::Sessions::new());
    let (tell, answers) = mpsc::channel();
    let resolve = Arc::new(ResolveOnce::new(resolve));
    for (i, call) in request.calls.iter().enumerate() {
        let (tell, catalog, call) = (tell.clone(), Arc::clone(&catalog), call.clone());
        let resolve = Arc::clone(&resolve);
        let options = Options {
            approved,
            deadline: Some(deadline),
            mcp_sessions: Some(Arc::clone(&sessions)),
            ..Options::new(&catalog, workspace.clone())
        };
        // Not scoped: a call still running at the deadline is left behind (its tool stops at
        // the deadline, and the process ends after printing).
        std::thread::spawn(move || {
            let resolve = move |catalog: &Catalog, name: &str| resolve.resolve(catalog, name);
            let _ = tell.send((i, call_one(&catalog, &resolve, &call, &options)));
        });
    }
    drop(tell);
    let total = request.calls.len();
    let mut outcomes: Vec<Option<Result<Value, Failure>>> = vec![None; total];
    let mut done = 0;
    while done < total {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((i, outcome)) = answers.recv_timeout(left) else {
            break;
        };
        outcomes[i] = Some(settled(outcome, Instant::now(), deadline, request.wait_ms));
        done += 1;
        progress(done, total);
    }
    // Calls still running were told the deadline and stop at it (an HTTP attempt's timeout,
    // exec's kill); wait a moment for them so that nothing they started outlives the command.
    // Their answers are late all the same: they stay TIMEOUT.
    let grace = Instant::now() + STRAGGLER_GRACE;
    let mut late = done;
    while late < total {
        let left = grace.saturating_duration_since(Instant::now());
        if answers.recv_timeout(left).is_err() {
            break;
        }
        late += 1;
    }
    sessions.close();
    outcomes
        .into_iter()
        .map(|outcome| outcome.unwrap_or_else(|| Err(timed_out(request.wait_ms))))
        .collect()
}

/// A batch's [`Resolve`] that resolves each tool name once, however many calls name it: the
/// calls of one batch name the tools of one moment, and a name's lookup may read every
/// bundle.json. Calls naming one tool wait for the first of them to look it up; calls naming
/// other tools look theirs up at the same time.
struct ResolveOnce {
    resolve: Arc<Resolve>,
    found: Mutex<HashMap<String, Arc<Lookup>>>,
}

/// A name's lookup: empty until the first call naming it has looked it up.
type Lookup = OnceLock<Result<ToolEntry, Failure>>;

impl ResolveOnce {
    fn new(resolve: Arc<Resolve>) -> Self {
        Self {
            resolve,
            found: Mutex::new(HashMap::new()),
        }
    }

    fn resolve(&self, catalog: &Catalog, name: &str) -> Result<ToolEntry, Failure> {
        let cell = Arc::clone(
            self.found
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry(name.to_owned())
                .or_default(),
        );
        cell.get_or_init(|| (self.resolve)(catalog, name)).clone()
    }
}

/// A call's outcome as the batch reports it, `at` the time it came: a `TIMEOUT` that came at
/// or after the deadline is the batch's (its tool was told the deadline), whichever of the two
/// noticed first, so it is the same [`timed_out`] as a call still running then.
fn settled(
    outcome: Result<Value, Failure>,
    at: Instant,
    deadline: Instant,
    wait_ms: u64,
) -> Result<Value, Failure> {
    match outcome {
        Err(failure) if failure.code == ErrorCode::Timeout && at >= deadline => {
            Err(timed_out(wait_ms))
        }
        outcome => outcome,
    }
}

/// One call of a batch: resolve its name, invoke, count the call.
fn call_one(
    catalog: &Catalog,
    resolve: &Resolve,
    call: &Call,
    options: &Options,
) -> Result<Value, Failure> {
    let entry = resolve(catalog, &call.name)?;
    super::call_and_record(catalog, &entry, call.arguments.clone(), options)
        .map(|success| success.value)
}

/// A call's name that names no one tool, as the call's failure: several tools (the
/// candidates listed), else `UNKNOWN_TOOL`.
pub fn not_resolved(name: &str, error: crate::catalog::Error) -> Failure {
    match error {
        crate::catalog::Error::Ambiguous { ref candidates, .. } => {
            Failure::new(ErrorCode::ValidationError, error.to_string())
                .with_details(json!({ "candidates": candidates }))
        }
        _ => Failure::new(
            ErrorCode::UnknownTool,
            format!("Tool '{name}' not found in the catalog"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_resolves_each_tool_name_once() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(dir.path()).unwrap();
        let lookups = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&lookups);
        let resolve: Arc<Resolve> = Arc::new(move |catalog: &Catalog, name: &str| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // A lookup slow enough that the other threads ask meanwhile.
            std::thread::sleep(Duration::from_millis(50));
            let mut problems = Vec::new();
            catalog
                .tool_versions(&catalog.builtin_bundle(), name, &mut problems)
                .pop()
                .ok_or_else(|| Failure::new(ErrorCode::UnknownTool, format!("no {name}")))
        });
        let once = ResolveOnce::new(resolve);
        // All at once, as a batch's calls start: the first lookup of a name is the only one.
        std::thread::scope(|threads| {
            for _ in 0..8 {
                threads.spawn(|| {
                    assert_eq!(once.resolve(&catalog, "now").unwrap().tool.slug, "now");
                    assert!(once.resolve(&catalog, "no-such-tool").is_err());
                });
            }
        });
        assert_eq!(lookups.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    /// A call that stops itself at the batch's deadline says what a call the batch stopped
    /// says (the race behind the two messages the end-to-end test sees only now and then); a
    /// tool's own timeout before the deadline stays its own.
    #[test]
    fn a_timeout_at_the_deadline_is_the_batchs() {
        let deadline = Instant::now();
        let own = || {
            Err(Failure::new(
                ErrorCode::Timeout,
                "no answer came within timeoutMs",
            ))
        };
        let late = settled(own(), deadline + Duration::from_millis(1), deadline, 300);
        let at = settled(own(), deadline, deadline, 300);
        for outcome in [late, at] {
            let failure = outcome.unwrap_err();
            assert_eq!(failure.message(), timed_out(300).message());
            assert_eq!(failure.details(), &json!({ "wait_ms": 300 }));
        }
        let early = settled(own(), deadline - Duration::from_millis(1), deadline, 300);
        assert_eq!(
            early.unwrap_err().message(),
            "no answer came within timeoutMs"
        );
        let ok = settled(Ok(json!(1)), deadline, deadline, 300);
        assert_eq!(ok.unwrap(), json!(1));
    }

    #[test]
    fn the_three_shapes_give_the_same_calls() {
        let toolctl = parse(
            &json!({ "calls": [{ "call_id": "a", "name": "now", "arguments": {} }] }),
            None,
        )
        .unwrap();
        let openai = parse(&json!([{ "id": "a", "type": "function", "function": { "name": "now", "arguments": "{}" } }]), None).unwrap();
        let ollama = parse(
            &json!([{ "function": { "name": "now", "arguments": {} } }]),
            None,
        )
        .unwrap();
        assert_eq!(toolctl.calls[0].name, "now");
        assert_eq!(openai.calls[0].call_id, "a");
        assert_eq!(openai.calls[0].arguments, json!("{}"));
        assert_eq!(ollama.calls[0].call_id, "call_0");
        assert_eq!(toolctl.wait_ms, WAIT_DEFAULT_MS);
    }

    #[test]
    fn bad_requests_name_the_place() {
        let too_many: Vec<Value> = (0..21)
            .map(|i| json!({ "call_id": format!("c{i}"), "name": "now" }))
            .collect();
        for (doc, pointer) in [
            (json!({ "calls": too_many }), "/calls"),
            (json!({ "calls": [] }), "/calls"),
            (json!({ "calls": [{ "name": "now" }] }), "/calls/0/call_id"),
            (
                json!({ "calls": [{ "call_id": "a", "name": "now" }], "wait_ms": 99 }),
                "/wait_ms",
            ),
            (
                json!({ "calls": [{ "call_id": "a", "name": "now" }], "wait_ms": 60001 }),
                "/wait_ms",
            ),
            (
                json!({ "calls": [{ "call_id": "a", "name": "now", "arguments": 3 }] }),
                "/calls/0/arguments",
            ),
            (
                json!({ "calls": [{ "call_id": "a", "name": "x" }, { "call_id": "a", "name": "y" }] }),
                "/calls/1",
            ),
            (
                json!({ "calls": [{ "call_id": "a".repeat(121), "name": "now" }] }),
                "/calls/0/call_id",
            ),
        ] {
            let failure = parse(&doc, None).unwrap_err();
            assert_eq!(failure.code, ErrorCode::ValidationError, "{doc}");
            assert_eq!(failure.details()["pointer"], pointer, "{doc}");
        }
    }

    #[test]
    fn truncation_starts_past_twelve_thousand_bytes() {
        // A JSON string of n characters is n + 2 bytes with its quotes.
        let at_limit = Value::String("x".repeat(TRUNCATE_AT - 2));
        assert_eq!(truncate(&at_limit), at_limit);
        let over = Value::String("x".repeat(TRUNCATE_AT - 1));
        let cut = truncate(&over);
        assert_eq!(cut["truncated"], true);
        assert_eq!(cut["bytes"], TRUNCATE_AT + 1);
        assert_eq!(cut["preview"].as_str().unwrap().len(), TRUNCATE_AT);
    }

    #[test]
    fn a_preview_ends_at_the_last_whole_character_within_twelve_thousand_bytes() {
        // `"` then 11,998 bytes of `x`, then 日 over bytes 11,999..12,002: cut before it.
        let across = Value::String(format!("{}日日", "x".repeat(TRUNCATE_AT - 2)));
        let cut = truncate(&across);
        assert_eq!(cut["preview"].as_str().unwrap().len(), TRUNCATE_AT - 1);
        // 2-byte characters throughout: a preview of 12,000 bytes is 6,000 characters or so.
        let wide = Value::String("é".repeat(9_000));
        let preview = truncate(&wide)["preview"].as_str().unwrap().to_owned();
        assert_eq!(preview.len(), TRUNCATE_AT - 1);
        assert_eq!(preview.chars().count(), 1 + (TRUNCATE_AT - 2) / 2);
    }
}
