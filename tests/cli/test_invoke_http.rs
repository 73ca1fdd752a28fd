//! `toolctl invoke` on HTTP tools, against a wiremock server on 127.0.0.1:
//! templates that cannot be injected into (URL components, JSON, form and text bodies,
//! headers), `allowedHosts` on the template and on every redirect, retries with back-off and
//! `Retry-After`, `timeoutMs`, `maxResponseBytes`, `successCodes`, `responseEncoding`,
//! `extractExpr`, `errorMode`, and catalog secrets that never show in any output.
//!
//! Every server listens on the loopback interface; nothing reaches the internet. The tests run
//! the real binary (blocking) from inside a multi-threaded tokio runtime; wiremock serves from
//! its own thread, so blocking the test's thread is harmless.

use crate::common::{ErrorDoc, Run, TestEnv, ordered, tool_doc_with, write_file};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// A mock server on 127.0.0.1 and a catalog whose `allowedHosts` holds it (and nothing else),
/// with a bundle `h` for the tools.
pub struct World {
    pub env: TestEnv,
    pub server: MockServer,
    pub port: u16,
}

impl World {
    pub async fn new() -> Self {
        Self::with_server(MockServer::start().await)
    }

    pub fn with_server(server: MockServer) -> Self {
        let port = server.address().port();
        let env = TestEnv::new();
        env.edit_config(|config| {
            config["allowedHosts"] = json!([format!("127.0.0.1:{port}")]);
        });
        env.bundle("h");
        Self { env, server, port }
    }

    /// `http://127.0.0.1:<port><rest>`.
    pub fn url(&self, rest: &str) -> String {
        format!("http://127.0.0.1:{}{rest}", self.port)
    }

    /// Put HTTP tool `h/<slug>@v1` with this `impl` and an argSchema that takes any object.
    pub fn tool(&self, slug: &str, imp: Value) {
        self.tool_with(slug, imp, json!({}));
    }

    /// [`Self::tool`] with more top-level fields (`maxRetries`, `argSchema`, …).
    pub fn tool_with(&self, slug: &str, imp: Value, extra: Value) {
        self.env.put_tool("h", &http_doc(slug, imp, extra));
    }

    /// The `invoke --json` command of `h/<tool>` with `args`.
    pub fn command(&self, tool: &str, args: &Value) -> std::process::Command {
        self.env.command(&[
            "--json",
            "invoke",
            &format!("h/{tool}"),
            "--args",
            &args.to_string(),
        ])
    }

    /// `invoke --json h/<tool>` with `args`, whatever the outcome.
    pub fn run(&self, tool: &str, args: &Value) -> Run {
        Run::of(self.command(tool, args), None)
    }

    /// A call that must succeed: its value (the envelope holds nothing else).
    #[track_caller]
    pub fn value(&self, tool: &str, args: &Value) -> Value {
        let run = self.run(tool, args);
        run.success();
        assert_eq!(run.stderr, "", "{run}");
        let doc = run.json();
        assert_eq!(doc["ok"], true, "{run}");
        assert_eq!(
            doc.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["ok", "value"],
            "{run}"
        );
        doc["value"].clone()
    }

    /// A call that must fail with exit code `exit`: the error document.
    #[track_caller]
    pub fn failure(&self, tool: &str, args: &Value, exit: i32) -> ErrorDoc {
        error_doc(&self.run(tool, args), exit)
    }

    /// Every request the server received so far.
    pub async fn requests(&self) -> Vec<Request> {
        self.server.received_requests().await.unwrap()
    }

    /// Mount `GET path` answering `reply`.
    pub async fn get(&self, at: &str, reply: impl Respond + 'static) {
        Mock::given(method("GET"))
            .and(path(at))
            .respond_with(reply)
            .mount(&self.server)
            .await;
    }
}

/// An HTTP tool document.
pub fn http_doc(slug: &str, imp: Value, extra: Value) -> Value {
    let mut doc = tool_doc_with(
        slug,
        "v1",
        json!({ "type": "http", "impl": imp, "argSchema": { "type": "object" } }),
    );
    for (key, value) in extra.as_object().unwrap() {
        doc[key] = value.clone();
    }
    declare_placeholders(&mut doc);
    doc
}

/// Declare what a tool's placeholders are, as put requires: an UPPER_CASE name a secret, any
/// other an (optional) argument — unless the document says it itself.
pub fn declare_placeholders(doc: &mut Value) {
    if doc["argSchema"].get("properties").is_some() || doc.get("secrets").is_some() {
        return;
    }
    let mut texts = Vec::new();
    strings(&doc["impl"], &mut texts);
    let mut secrets: Vec<String> = Vec::new();
    let mut properties = serde_json::Map::new();
    for text in texts {
        for name in text
            .split("${")
            .skip(1)
            .filter_map(|t| t.split_once('}'))
            .map(|(n, _)| n)
        {
            if name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                if !secrets.iter().any(|s| s == name) {
                    secrets.push(name.to_owned());
                }
            } else {
                properties.insert(name.to_owned(), json!({}));
            }
        }
    }
    // A path placeholder must be a required argument.
    let url = doc["impl"]["urlTemplate"].as_str().unwrap_or("").to_owned();
    let path = url.split(['?', '#']).next().unwrap_or("");
    let required: Vec<&String> = properties
        .keys()
        .filter(|name| path.contains(&format!("${{{name}}}")))
        .collect();
    if !required.is_empty() {
        doc["argSchema"]["required"] = json!(required);
    }
    if !properties.is_empty() {
        doc["argSchema"]["properties"] = Value::Object(properties);
    }
    if !secrets.is_empty() {
        doc["secrets"] = json!(secrets);
    }
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The `--json` error document of a failed run, which must have ended with `exit`.
#[track_caller]
pub fn error_doc(run: &Run, exit: i32) -> ErrorDoc {
    run.failure(exit);
    assert_eq!(run.stderr, "", "--json errors go to stdout only\n{run}");
    let doc: ErrorDoc = run.parse();
    assert!(!doc.ok);
    doc
}

/// Two mock servers on the same port: one on 127.0.0.1 (the allowed one, in the [`World`]) and
/// one on 127.0.0.2 (not allowed), so a redirect between them changes the host and nothing else.
async fn two_hosts() -> (World, MockServer) {
    for _ in 0..50 {
        let other = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
        let port = other.local_addr().unwrap().port();
        let Ok(main) = std::net::TcpListener::bind(("127.0.0.1", port)) else {
            continue;
        };
        let main = MockServer::builder().listener(main).start().await;
        let other = MockServer::builder().listener(other).start().await;
        return (World::with_server(main), other);
    }
    panic!("no port free on both 127.0.0.1 and 127.0.0.2");
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
fn dead_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// When each request a responder answered arrived.
#[derive(Clone, Default)]
struct Times(Arc<Mutex<Vec<Instant>>>);

impl Times {
    /// A responder that notes the time, then answers `reply`.
    fn reply(&self, reply: ResponseTemplate) -> impl Respond + 'static {
        let times = self.clone();
        move |_: &Request| {
            times.0.lock().unwrap().push(Instant::now());
            reply.clone()
        }
    }

    /// The times between consecutive requests.
    fn gaps(&self) -> Vec<Duration> {
        let times = self.0.lock().unwrap();
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A permissive JSON reply.
pub fn ok_json(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

// --- the URL ----------------------------------------------------------------------------------

/// Every URL-special character, a space and a non-ASCII letter.
const NASTY: &str = "a/b?c=d&e#f g é";
/// [`NASTY`] as one percent-encoded component.
const NASTY_ENCODED: &str = "a%2Fb%3Fc%3Dd%26e%23f%20g%20%C3%A9";

fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .unwrap()
        .into_owned()
}

// --- bodies -----------------------------------------------------------------------------------

/// An argument that tries to close its JSON string and add a field.
const BREAKOUT: &str = "he said \"hi\" \\ back\\slash\nnew line\t\"}, \"admin\": true, \"x\": \"";

// --- headers ----------------------------------------------------------------------------------

// --- allowedHosts and redirects ---------------------------------------------------------------

// --- retries ----------------------------------------------------------------------------------

// --- timeoutMs --------------------------------------------------------------------------------

// --- maxResponseBytes -------------------------------------------------------------------------

// --- successCodes, responseEncoding, extractExpr, errorMode -----------------------------------

// --- secrets ----------------------------------------------------------------------------------

/// A secret with characters that percent-encoding changes.
const SECRET: &str = "sk-live-Zq9/x+y=z&w";

/// The secrets file of the test environment.
pub fn secrets_file(env: &TestEnv) -> std::path::PathBuf {
    env.root().join("xdg-config/toolctl/secrets.json")
}

pub fn write_secrets(env: &TestEnv, secrets: &Value, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let file = secrets_file(env);
    write_file(&file, &secrets.to_string());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The tool that sends `${API_KEY}` in the path, the query and two headers.
fn keyed_tool(w: &World, slug: &str, base: &str) {
    w.tool_with(
        slug,
        json!({
            "urlTemplate": format!("{base}/k/${{API_KEY}}?key=${{API_KEY}}&q=${{q}}"),
            "headers": { "X-Api-Key": "${API_KEY}", "Authorization": "Bearer ${API_KEY}" },
        }),
        json!({ "maxRetries": 1 }),
    );
}

#[track_caller]
fn assert_no_secret(run: &Run, secret: &str) {
    let encoded = percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC)
        .to_string();
    for form in [secret, encoded.as_str(), &http_encoded(secret)] {
        assert!(
            !run.stdout.contains(form) && !run.stderr.contains(form),
            "leaked the secret ({form})\n{run}"
        );
    }
}

/// The form toolctl's URL encoding gives (unreserved characters kept).
pub fn http_encoded(text: &str) -> String {
    const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(text, COMPONENT).to_string()
}

/// Every file under `dir` holding `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
            {
                found.push(path);
            }
        }
    }
    found
}

// --- arguments are checked before any request ---------------------------------------------------

mod auth;
mod dns;
mod limits;
mod requests;
mod responses;
mod secrets;
mod tls;
