//! `toolctl mcp serve --http` made safe to reach from elsewhere: the bearer token
//! (`--token-env`), `--public` refused without one, the caps on sessions (`--max-sessions`) and
//! connections (`--max-connections`), and the header-read timeout. Raw HTTP over TCP where the
//! exact status and headers matter; the official Python SDK's client for whole sessions.

use crate::common::{Run, TestEnv};
use crate::test_mcp::{run_driver, try_driver};
use base64::Engine;
use serde_json::{Value, json};
use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// The token the tests' servers read from `$TOOLCTL_TEST_TOKEN`.
const TOKEN: &str = "t0ken-for-tests-0123456789abcdef";
const TOKEN_VAR: &str = "TOOLCTL_TEST_TOKEN";

/// A server a test started: killed however the test ends, its stderr kept by a thread.
struct Served {
    child: Child,
    port: u16,
    said: Arc<Mutex<String>>,
}

impl Served {
    /// `toolctl mcp serve --mode all ARGS` with `$TOOLCTL_TEST_TOKEN` set to [`TOKEN`], once it
    /// listens.
    fn start(env: &TestEnv, args: &[&str]) -> Self {
        let mut child = env
            .command(&["mcp", "serve", "--mode", "all"])
            .args(args)
            .env(TOKEN_VAR, TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let said = Arc::new(Mutex::new(String::new()));
        let (tell, listening) = mpsc::channel();
        let kept = said.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let address = rest.split('/').next().unwrap_or_default();
                    let _ = tell.send(address.rsplit(':').next().unwrap_or_default().to_owned());
                }
                let mut said = kept.lock().unwrap();
                said.push_str(&line);
                said.push('\n');
            }
        });
        let mut served = Self {
            child,
            port: 0,
            said,
        };
        let port = listening.recv_timeout(Duration::from_secs(30));
        served.port = port
            .ok()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the server did not listen:\n{}", served.stderr()));
        served
    }

    fn stderr(&self) -> String {
        self.said.lock().unwrap().clone()
    }

    /// Its stderr once it holds `needle` (it is read by another thread: wait a little).
    fn said(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let said = self.stderr();
            if said.contains(needle) || Instant::now() > deadline {
                return said;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer as read off the socket.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message in the body: the body itself, or an event stream's `data:` line.
    fn message(&self) -> Value {
        serde_json::from_str(&self.body)
            .ok()
            .or_else(|| {
                self.body
                    .lines()
                    .filter_map(|line| line.strip_prefix("data: "))
                    .find_map(|data| serde_json::from_str(data).ok())
            })
            .unwrap_or_else(|| panic!("no JSON-RPC message in {self:?}"))
    }
}

/// One request on a connection of its own (`Connection: close`), the answer read to its end.
fn request(port: u16, method: &str, headers: &[(&str, &str)], body: Option<&Value>) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    head.push_str("Accept: application/json, text/event-stream\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    write!(stream, "{head}\r\n{body}").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {raw:?}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

fn initialize_request() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    })
}

/// A handshake-era session (initialize, then initialized), sending `auth` as `Authorization`:
/// its id.
fn open_session(port: u16, auth: Option<&str>) -> String {
    let auth: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
    let answer = request(port, "POST", &auth, Some(&initialize_request()));
    assert_eq!(answer.status, 200, "{answer:?}");
    let session = answer.header("mcp-session-id").unwrap().to_owned();
    let mut headers = auth.clone();
    headers.extend([
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ]);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = request(port, "POST", &headers, Some(&initialized));
    assert_eq!(answer.status, 202, "{answer:?}");
    session
}

/// How many times `builtin/now` ran (its usage count).
fn calls_of_now(env: &TestEnv) -> u64 {
    env.json(&["tool", "get", "builtin/now"])["usage"]["callCount"]
        .as_u64()
        .unwrap()
}

#[test]
fn mcp_serve_over_http_with_a_token_refuses_every_request_without_it_before_a_tool_runs() {
    let env = TestEnv::new();
    let server = Served::start(&env, &["--http", "127.0.0.1:0", "--token-env", TOKEN_VAR]);
    let port = server.port;
    let bearer = format!("Bearer {TOKEN}");
    // A session opened with the token, then a call in it: the session's id alone (as someone
    // who saw it would send) does not run the tool.
    let session = open_session(port, Some(&bearer));
    let now = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "now", "arguments": {}}});
    let call = |auth: Option<&str>| {
        let mut headers = vec![
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        headers.extend(auth.map(|a| ("Authorization", a)));
        request(port, "POST", &headers, Some(&now))
    };
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("user:{TOKEN}"))
    );
    let wrong: Vec<Option<String>> = vec![
        None,
        Some("Bearer wrong-token-0123456789abcdef".to_owned()),
        Some(basic),
        Some(format!("Basic {TOKEN}")),
        Some(format!("Bearer {TOKEN}x")),
        Some(format!("Bearer {}", &TOKEN[..TOKEN.len() - 1])),
        Some(TOKEN.to_owned()),
        Some("Bearer".to_owned()),
    ];
    for auth in &wrong {
        let answer = call(auth.as_deref());
        assert_eq!(answer.status, 401, "{auth:?}: {answer:?}");
        assert_eq!(
            answer.header("www-authenticate"),
            Some("Bearer"),
            "{auth:?}"
        );
        assert!(answer.body.starts_with("Unauthorized"), "{answer:?}");
        assert!(!answer.body.contains(TOKEN), "{answer:?}");
    }
    // Two Authorization headers, the right one among them: which one counts would be a
    // guess between the server and a proxy before it, so neither does.
    let both = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
        ("Authorization", bearer.as_str()),
        ("Authorization", "Bearer wrong-token-0123456789abcdef"),
    ];
    let answer = request(port, "POST", &both, Some(&now));
    assert_eq!(answer.status, 401, "{answer:?}");
    // Nor does the session's event stream open (GET), nor does it end (DELETE), without it.
    for method in ["GET", "DELETE"] {
        let headers = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let answer = request(port, method, &headers, None);
        assert_eq!(answer.status, 401, "{method}: {answer:?}");
    }
    assert_eq!(
        call(Some(&bearer)).status,
        200,
        "the session was ended without the token"
    );
    // A refusal ends its connection: a second request sent on it is not read (so a client
    // without the token can neither hold a connection nor flood stderr on one).
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let get = format!("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    write!(stream, "{get}{get}").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw);
    assert_eq!(raw.matches("HTTP/1.1 401").count(), 1, "{raw}");
    assert!(raw.contains("connection: close"), "{raw}");
    // Nor does a new session start without it.
    let answer = request(port, "POST", &[], Some(&initialize_request()));
    assert_eq!(answer.status, 401, "{answer:?}");
    assert_eq!(answer.header("mcp-session-id"), None);
    // (One call ran: the one with the token, after GET and DELETE.)
    assert_eq!(calls_of_now(&env), 1, "a refused request ran the tool");

    // With the token (the scheme in any case) the call runs.
    for auth in [bearer.clone(), format!("bearer {TOKEN}")] {
        let answer = call(Some(&auth));
        assert_eq!(answer.status, 200, "{answer:?}");
        let message = answer.message();
        assert_eq!(message["id"], 2, "{message}");
        assert_eq!(message["result"]["isError"], false, "{message}");
    }
    assert_eq!(calls_of_now(&env), 3);

    // The SDK's client sending the header lists and calls, in both protocol eras.
    for mode in ["auto", "legacy"] {
        let session = run_driver(
            &env,
            &json!({
                "url": server.url(),
                "headers": {"Authorization": bearer},
                "mode": mode,
                "steps": [{"op": "list_all"}, {"op": "call", "name": "now", "arguments": {}}],
            }),
        );
        let names: Vec<&str> = session.step(0)["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(names.contains(&"now"), "{mode}: {names:?}");
        assert_eq!(session.step(1)["isError"], false, "{mode}");
    }
    assert_eq!(calls_of_now(&env), 5);
    // Without it, it fails to connect.
    let refused = try_driver(
        &env,
        &json!({"url": server.url(), "mode": "legacy", "steps": [{"op": "list_all"}]}),
    );
    assert!(!refused.status.success());
    assert_eq!(String::from_utf8_lossy(&refused.stdout), "");

    // Each refusal is told on stderr with the client's address; the token never is.
    let said = server.said("not a Bearer token");
    let refusals: Vec<&str> = said.lines().filter(|l| l.contains("(401)")).collect();
    assert!(refusals.len() > wrong.len(), "{said}");
    for line in &refusals {
        assert!(
            ["POST", "GET", "DELETE"]
                .iter()
                .any(|m| line.starts_with(&format!("warning: refused {m} /mcp from 127.0.0.1:"))),
            "{line}"
        );
    }
    assert!(said.contains("wrong bearer token"), "{said}");
    assert!(said.contains("no Authorization header"), "{said}");
    assert!(said.contains("not a Bearer token"), "{said}");
    assert!(
        said.contains("more than one Authorization header"),
        "{said}"
    );
    assert!(!said.contains(TOKEN), "{said}");
}

#[test]
fn mcp_serve_refuses_to_start_public_without_a_token_or_with_an_unusable_one() {
    let env = TestEnv::new();
    let start = |token: Option<&str>, args: &[&str]| {
        let mut command = env.command(&["mcp", "serve"]);
        command.args(args);
        if let Some(token) = token {
            command.env(TOKEN_VAR, token);
        }
        let run = Run::of(command, None);
        assert_eq!(run.stdout, "", "{run}");
        run
    };
    start(None, &["--http", "0.0.0.0:0", "--public"])
        .failure(2)
        .stderr_has("error: --public needs --token-env: without a token, anyone who reaches the address could list and run the catalog's tools")
        .stderr_has("hint: put a token of at least 16 characters in an environment variable");
    let with_token = ["--http", "127.0.0.1:0", "--token-env", TOKEN_VAR];
    start(None, &with_token)
        .failure(2)
        .stderr_has("error: --token-env TOOLCTL_TEST_TOKEN: $TOOLCTL_TEST_TOKEN is not set")
        .stderr_has("hint: set it to a random token of at least 16 characters: export TOOLCTL_TEST_TOKEN=$(openssl rand -hex 32)");
    start(Some(""), &with_token)
        .failure(2)
        .stderr_has("$TOOLCTL_TEST_TOKEN is not a usable token: it is empty");
    let short = "0123456789abcde";
    let run = start(Some(short), &with_token);
    run.failure(2).stderr_has(
        "$TOOLCTL_TEST_TOKEN is not a usable token: it is 15 characters long; a token must have at least 16",
    );
    assert!(!run.stderr.contains(short), "{run}");
    start(Some("0123456789 abcdef"), &with_token)
        .failure(2)
        .stderr_has("it holds a character other than visible ASCII");
    let mut public = vec!["--public"];
    public.extend(with_token);
    public[2] = "0.0.0.0:0";
    start(Some(short), &public)
        .failure(2)
        .stderr_has("is 15 characters long");
    // The token needs HTTP.
    start(Some(TOKEN), &["--token-env", TOKEN_VAR])
        .failure(2)
        .stderr_has("--http <ADDR>");

    // With a token it starts on every interface, and serves those who send it.
    let server = Served::start(
        &env,
        &["--http", "0.0.0.0:0", "--public", "--token-env", TOKEN_VAR],
    );
    let answer = request(server.port, "POST", &[], Some(&initialize_request()));
    assert_eq!(answer.status, 401, "{answer:?}");
    open_session(server.port, Some(&format!("Bearer {TOKEN}")));
}

#[test]
fn mcp_serve_over_http_refuses_a_session_past_max_sessions_until_one_closes() {
    let env = TestEnv::new();
    let server = Served::start(&env, &["--http", "127.0.0.1:0", "--max-sessions", "2"]);
    let port = server.port;
    let first = open_session(port, None);
    let second = open_session(port, None);
    assert_ne!(first, second);
    let answer = request(port, "POST", &[], Some(&initialize_request()));
    assert_eq!(answer.status, 503, "{answer:?}");
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(answer.header("mcp-session-id"), None);
    let message = answer.message();
    assert_eq!(message["jsonrpc"], "2.0");
    assert_eq!(message["id"], Value::Null);
    assert_eq!(message["error"]["code"], -32000);
    assert_eq!(message["error"]["data"], json!({"maxSessions": 2}));
    assert_eq!(
        message["error"]["message"],
        "this server allows 2 MCP sessions at a time and all are in use: close one (HTTP DELETE) or try again later"
    );
    let said = server.said("(503)");
    assert!(
        said.contains("warning: refused a new MCP session from 127.0.0.1:"),
        "{said}"
    );
    // The sessions open still answer.
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let in_second = [
        ("Mcp-Session-Id", second.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let answer = request(port, "POST", &in_second, Some(&list));
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.message()["result"]["tools"].is_array());
    // One closed, a new one starts.
    let in_first = [
        ("Mcp-Session-Id", first.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let answer = request(port, "DELETE", &in_first, None);
    assert_eq!(answer.status, 202, "{answer:?}");
    open_session(port, None);
    let answer = request(port, "POST", &[], Some(&initialize_request()));
    assert_eq!(answer.status, 503, "{answer:?}");
}

#[test]
fn mcp_serve_over_http_closes_a_connection_past_max_connections_at_once() {
    let env = TestEnv::new();
    let server = Served::start(&env, &["--http", "127.0.0.1:0", "--max-connections", "2"]);
    let port = server.port;
    let open: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // The third is closed without a word, well before the header timeout would close it.
    let mut third = TcpStream::connect(("127.0.0.1", port)).unwrap();
    third
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let started = Instant::now();
    let mut read = Vec::new();
    let closed = third.read_to_end(&mut read);
    assert!(
        closed.is_ok()
            || closed
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "{closed:?}"
    );
    assert!(read.is_empty(), "{:?}", String::from_utf8_lossy(&read));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "closed after {:?}",
        started.elapsed()
    );
    let said = server.said(": all 2 connections are open");
    assert!(
        said.contains("warning: closed a connection from 127.0.0.1:")
            && said.contains(": all 2 connections are open"),
        "{said}"
    );
    // One of the two closed, the next is served.
    drop(open);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        write!(
            stream,
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        if answer.starts_with("HTTP/1.1 ") {
            break;
        }
        assert!(Instant::now() < deadline, "no connection served again");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn mcp_serve_over_http_closes_a_connection_whose_request_head_does_not_come_in_time() {
    // A client that sends half a request line (or nothing at all) and waits is cut off after
    // the header-read timeout (10 s), instead of holding the connection for ever.
    let env = TestEnv::new();
    let server = Served::start(&env, &["--http", "127.0.0.1:0"]);
    let port = server.port;
    let started = Instant::now();
    let clients: Vec<_> = [&b"POST /mcp HTT"[..], b"PR", b""]
        .into_iter()
        .map(|sent| {
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(25)))
                    .unwrap();
                stream.write_all(sent).unwrap();
                let mut read = Vec::new();
                let outcome = stream.read_to_end(&mut read);
                let closed = outcome.is_ok()
                    || outcome
                        .as_ref()
                        .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset);
                (String::from_utf8_lossy(sent).into_owned(), closed, outcome)
            })
        })
        .collect();
    for client in clients {
        let (sent, closed, outcome) = client.join().unwrap();
        assert!(closed, "{sent:?}: not closed ({outcome:?})");
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(8) && took < Duration::from_secs(20),
        "closed after {took:?}"
    );
}
