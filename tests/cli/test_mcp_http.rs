//! Streamable HTTP MCP servers' sessions, kept for a process that makes many calls (`invoke
//! --batch`, `mcp serve`): initialized once, used by every call, initialized again when the
//! server lost the session (a restart). The tests' own Python SDK server counts the sessions
//! it made: its log says "Created new transport" for each initialization.

use crate::common::TestEnv;
use crate::test_mcp_tools::{HttpServer, any_object, declare, mcp_tool, served_name};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Lines, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

/// How many sessions the server (all its runs) made, as its log says.
fn initializations(log: &Path) -> usize {
    logged(log, "Created new transport")
}

/// How many times the server's log holds `line`.
fn logged(log: &Path, line: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .matches(line)
        .count()
}

/// A catalog with tool `mcp/echo` of the fixture server over HTTP on `server`.
fn http_env(server: &HttpServer) -> TestEnv {
    let env = TestEnv::new();
    env.bundle("mcp");
    declare(&env, json!({ "web": { "url": server.url() } }));
    env.edit_config(|config| {
        config["allowedHosts"] = json!([format!("127.0.0.1:{}", server.port)])
    });
    mcp_tool(&env, "echo", "web", "echo", any_object());
    env
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_batch_initializes_one_http_session_for_all_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    let log: PathBuf = dir.path().join("server.log");
    let server = HttpServer::start_on("1", free_port(), Some(&log));
    let env = http_env(&server);
    let calls: Vec<Value> = (0..6)
        .map(|i| {
            json!({ "call_id": format!("{i}"), "name": "mcp/echo", "arguments": { "text": format!("n{i}") } })
        })
        .collect();
    let run = env.run_stdin(
        &["--json", "invoke", "--batch", "-"],
        &json!({ "calls": calls }).to_string(),
    );
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|_| panic!("{}{}", run.stdout, run.stderr));
    for i in 0..6 {
        let found = doc["results"]
            .as_array()
            .and_then(|items| items.iter().find(|c| c["call_id"] == format!("{i}")))
            .unwrap_or_else(|| panic!("call {i} in {doc}"));
        assert_eq!(found["value"], format!("n{i}"), "{doc}");
    }
    assert_eq!(initializations(&log), 1, "one session for six calls");

    // A single invoke stays one-shot: a session of its own.
    let single = env.run(&["--json", "invoke", "mcp/echo", "--args", r#"{"text":"x"}"#]);
    assert!(single.stdout.contains("\"x\""), "{}", single.stdout);
    assert_eq!(initializations(&log), 2);
}

/// `mcp serve --mode all` spoken to directly (JSON-RPC lines on its stdin and stdout).
struct Serve {
    child: Child,
    /// None once closed.
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Serve {
    fn start(env: &TestEnv) -> Self {
        let mut child = env
            .command(&["mcp", "serve", "--mode", "all", "--quiet"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut serve = Self {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        serve.request(
            "initialize",
            json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "test", "version": "0" } }),
        );
        serve.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        serve
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("serve's stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let line = self.lines.next().expect("serve answered").unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The text a `tools/call` of `name` answered.
    fn call_text(&mut self, name: &str, arguments: Value) -> String {
        let answer = self.request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        );
        assert_ne!(answer["result"]["isError"], true, "{answer}");
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("text in {answer}"))
            .to_owned()
    }
}

impl Serve {
    /// Close its standard input and wait for it to end.
    fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "mcp serve did not end at EOF");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_serve_keeps_one_http_session_and_initializes_again_after_a_server_restart() {
    let dir = tempfile::tempdir().unwrap();
    let log: PathBuf = dir.path().join("server.log");
    let port = free_port();
    let server = HttpServer::start_on("1", port, Some(&log));
    let env = http_env(&server);
    let echo = served_name(&env, "mcp", "echo");
    let mut serve = Serve::start(&env);
    for word in ["one", "two", "three"] {
        assert_eq!(serve.call_text(&echo, json!({ "text": word })), word);
    }
    assert_eq!(initializations(&log), 1, "one session for three calls");

    // The server restarts (on the same port): it no longer knows the session.
    drop(server);
    let _server = HttpServer::start_on("1", port, Some(&log));
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server did not start again");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(serve.call_text(&echo, json!({ "text": "four" })), "four");
    let after_restart = initializations(&log);
    assert!(after_restart >= 2, "a new session after the restart");
    for word in ["five", "six"] {
        assert_eq!(serve.call_text(&echo, json!({ "text": word })), word);
    }
    assert_eq!(
        initializations(&log),
        after_restart,
        "the new session serves the calls after it"
    );
    // The client goes: serve ends, and closes the session as the protocol says (DELETE).
    serve.finish();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("Terminating session")
    {
        assert!(
            Instant::now() < deadline,
            "the session was not closed: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The times the server's log says a session was ended (DELETE).
fn terminations(log: &Path) -> usize {
    logged(log, "Terminating session")
}

#[test]
fn mcp_serve_replaces_an_http_session_whose_server_entry_changed_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let log: PathBuf = dir.path().join("server.log");
    let server = HttpServer::start_on("1", free_port(), Some(&log));
    let env = http_env(&server);
    let echo = served_name(&env, "mcp", "echo");
    let mut serve = Serve::start(&env);
    for word in ["one", "two"] {
        assert_eq!(serve.call_text(&echo, json!({ "text": word })), word);
    }
    assert_eq!(initializations(&log), 1, "one session for two calls");
    assert_eq!(terminations(&log), 0);

    // The entry changes in toolctl.json (a header added) while serve runs: the next call is
    // made on a new session, and the old one is ended.
    declare(
        &env,
        json!({ "web": { "url": server.url(), "headers": { "X-Entry": "2" } } }),
    );
    assert_eq!(serve.call_text(&echo, json!({ "text": "three" })), "three");
    assert_eq!(initializations(&log), 2, "a new session for the new entry");
    let deadline = Instant::now() + Duration::from_secs(10);
    while terminations(&log) < 1 {
        assert!(
            Instant::now() < deadline,
            "the old session was not ended: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The new session serves the calls after it.
    assert_eq!(serve.call_text(&echo, json!({ "text": "four" })), "four");
    assert_eq!(initializations(&log), 2);
    assert_eq!(terminations(&log), 1, "only the old session was ended");
    serve.finish();
}

/// Regression: an HTTP MCP server that answers `initialize` with an HTTP error was reported
/// with rmcp's Rust type names ("Send message error Transport
/// [rmcp::transport::worker::WorkerTransport<…reqwest…>] error: HTTP 500, when send initialize
/// request"). The message says the status, the URL and what was being done.
#[tokio::test(flavor = "multi_thread")]
async fn an_http_error_at_initialize_is_said_without_rust_type_names() {
    use wiremock::{Mock, MockServer, ResponseTemplate, matchers::method};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .mount(&server)
        .await;
    let url = format!("{}/mcp", server.uri());
    let env = TestEnv::new();
    declare(&env, json!({ "web": { "url": url } }));
    env.edit_config(|config| {
        config["allowedHosts"] = json!([format!("127.0.0.1:{}", server.address().port())])
    });
    let run = env.run(&["--json", "mcp", "import", "web"]);
    assert_ne!(run.code(), 0, "{run}");
    let doc = run.json();
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        message,
        format!("MCP server 'web': HTTP 500 from {url} when starting a session"),
        "{doc}"
    );
    // The human form too.
    let run = env.run(&["mcp", "import", "web"]);
    assert!(!run.stderr.contains("rmcp::"), "{run}");
    assert!(!run.stderr.contains("Transport ["), "{run}");
    assert!(
        run.stderr.contains(&format!("HTTP 500 from {url}")),
        "{run}"
    );
}
