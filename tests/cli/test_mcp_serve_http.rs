//! `toolctl mcp serve --http` made safe to reach from elsewhere: the bearer token
//! (`--token-env`), `--public` refused without one, the caps on sessions (`--max-sessions`) and
//! connections (`--max-connections`), and the header-read timeout. Raw HTTP over TCP where the
//! exact status and headers matter; the official Python SDK's client for whole sessions.

use crate::common::served::Served;
use crate::common::{Run, TestEnv};
use crate::test_mcp::{run_driver, try_driver};
use base64::Engine;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The token the tests' servers read from `$TOOLCTL_TEST_TOKEN`.
const TOKEN: &str = "t0ken-for-tests-0123456789abcdef";
const TOKEN_VAR: &str = "TOOLCTL_TEST_TOKEN";

/// `toolctl mcp serve --mode all ARGS` with `$TOOLCTL_TEST_TOKEN` set to [`TOKEN`], once it
/// listens.
fn serve_http(env: &TestEnv, args: &[&str]) -> Served {
    let mut command = env.command(&["mcp", "serve", "--mode", "all"]);
    command.args(args).env(TOKEN_VAR, TOKEN);
    Served::spawn(command)
}

/// The MCP endpoint of `served`.
fn mcp_url(served: &Served) -> String {
    served.url("/mcp")
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
    let server = serve_http(&env, &["--http", "127.0.0.1:0", "--token-env", TOKEN_VAR]);
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
                "url": mcp_url(&server),
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
        &json!({"url": mcp_url(&server), "mode": "legacy", "steps": [{"op": "list_all"}]}),
    );
    assert!(!refused.status.success());
    assert_eq!(String::from_utf8_lossy(&refused.stdout), "");

    // The first refusal is told on stderr with the client's address and why (the reasons are
    // pinned by guard's unit tests), the others counted and the count told once they stop
    // (at most one line every 10 s); the token never is.
    let summary =
        "more requests refused without the token (401) since the last warning, from 1 address";
    let said = server.said_within(summary, Duration::from_secs(15));
    let refusals: Vec<&str> = said.lines().filter(|l| l.contains("(401)")).collect();
    assert_eq!(refusals.len(), 2, "{said}");
    assert!(
        refusals[0].starts_with("warning: refused POST /mcp from 127.0.0.1:")
            && refusals[0].ends_with(": no Authorization header (401)"),
        "{said}"
    );
    let counted: usize = refusals[1]
        .strip_prefix("warning: ")
        .and_then(|line| line.strip_suffix(summary))
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!(counted > wrong.len() + 3, "{said}");
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
    // So does the client timeout, a whole number of seconds from 1 to 3600.
    start(None, &["--client-timeout", "5"])
        .failure(2)
        .stderr_has("--http <ADDR>");
    for secs in ["0", "3601", "1.5", "ten"] {
        start(None, &["--http", "127.0.0.1:0", "--client-timeout", secs])
            .failure(2)
            .stderr_has(&format!(
                "'{secs}' is not a number of seconds from 1 to 3600"
            ));
    }

    // With a token it starts on every interface, and serves those who send it.
    let server = serve_http(
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
    let server = serve_http(&env, &["--http", "127.0.0.1:0", "--max-sessions", "2"]);
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
    let server = serve_http(&env, &["--http", "127.0.0.1:0", "--max-connections", "2"]);
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
    let server = serve_http(&env, &["--http", "127.0.0.1:0"]);
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

/// A raw connection to the server, reading with a timeout of `secs`.
fn connect(port: u16, secs: u64) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(secs)))
        .unwrap();
    stream
}

/// Everything the server sends until it closes the connection (a reset counts as closing),
/// and how long that took.
fn read_until_closed(stream: &mut TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut raw = Vec::new();
    let mut buf = [0; 8192];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "not closed after {:?} ({e}); read {:?}",
                started.elapsed(),
                String::from_utf8_lossy(&raw)
            ),
        }
    }
    (
        String::from_utf8_lossy(&raw).into_owned(),
        started.elapsed(),
    )
}

/// The head of a POST to `/mcp` with a JSON body, without its `Content-Length` (or with it).
fn post_head(port: u16, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}\r\n"
    )
}

#[test]
fn mcp_serve_over_http_refuses_a_request_body_too_large_or_too_slow_and_frees_its_connection() {
    let env = TestEnv::new();
    let server = serve_http(&env, &["--http", "127.0.0.1:0", "--client-timeout", "2"]);
    let port = server.port;
    let body = initialize_request().to_string();

    // A 1 GiB body is refused by its Content-Length, before it is sent.
    let mut stream = connect(port, 20);
    let head = post_head(port, "Content-Length: 1073741824\r\n");
    write!(stream, "{head}{{").unwrap();
    let (raw, took) = read_until_closed(&mut stream);
    assert!(raw.starts_with("HTTP/1.1 413 "), "{raw}");
    assert!(raw.contains("connection: close"), "{raw}");
    assert!(
        raw.ends_with(
            "Payload Too Large: a request's body may hold at most 4 MiB (4194304 bytes)\n"
        ),
        "{raw}"
    );
    assert!(took < Duration::from_secs(2), "answered after {took:?}");

    // So is one that says nothing of its length and grows past 4 MiB as it comes (chunked).
    let mut stream = connect(port, 20);
    write!(
        stream,
        "{}",
        post_head(port, "Transfer-Encoding: chunked\r\n")
    )
    .unwrap();
    let chunk = format!("10000\r\n{}\r\n", " ".repeat(0x10000));
    for _ in 0..80 {
        // 5 MiB: the server may close before all of it is written.
        if stream.write_all(chunk.as_bytes()).is_err() {
            break;
        }
    }
    let (raw, _) = read_until_closed(&mut stream);
    assert!(raw.starts_with("HTTP/1.1 413 "), "{raw}");
    assert!(raw.contains("connection: close"), "{raw}");
    assert!(raw.contains("at most 4 MiB"), "{raw}");

    // A body that trickles (or never comes whole) gets 408 once the client timeout has passed
    // since its headers, and its connection ends.
    let mut stream = connect(port, 20);
    let head = post_head(port, &format!("Content-Length: {}\r\n", body.len()));
    write!(stream, "{head}").unwrap();
    let started = Instant::now();
    let trickle = body.as_bytes()[..body.len() - 1].to_vec();
    let mut writer = stream.try_clone().unwrap();
    let trickler = std::thread::spawn(move || {
        for byte in trickle {
            if writer.write_all(&[byte]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let (raw, _) = read_until_closed(&mut stream);
    let took = started.elapsed();
    assert!(raw.starts_with("HTTP/1.1 408 "), "{raw}");
    assert!(raw.contains("connection: close"), "{raw}");
    assert!(
        raw.ends_with(
            "Request Timeout: the request's body did not arrive whole within 2 s of its headers\n"
        ),
        "{raw}"
    );
    assert!(
        took >= Duration::from_millis(1800) && took < Duration::from_secs(6),
        "answered after {took:?}"
    );
    trickler.join().unwrap();

    // A body that comes in pieces, whole within the time, is served.
    let mut stream = connect(port, 20);
    let head = post_head(
        port,
        &format!("Content-Length: {}\r\nConnection: close\r\n", body.len()),
    );
    let (first, second) = body.split_at(body.len() / 2);
    write!(stream, "{head}{first}").unwrap();
    std::thread::sleep(Duration::from_secs(1));
    write!(stream, "{second}").unwrap();
    let (raw, _) = read_until_closed(&mut stream);
    assert!(raw.starts_with("HTTP/1.1 200 "), "{raw}");
    open_session(port, None);

    // The refusals are told on stderr with the client's address (the first of a kind at once,
    // the others counted: the 408 came less than 10 s after the first 413).
    let said = server.said("(413)");
    assert!(
        said.contains("warning: refused POST /mcp from 127.0.0.1:")
            && said.contains(": its body is over 4 MiB (413)"),
        "{said}"
    );
    let said = server.said_within(
        "more requests refused for their body",
        Duration::from_secs(15),
    );
    assert!(
        said.contains(
            "warning: 2 more requests refused for their body (408 or 413) since the last warning, from 1 address"
        ),
        "{said}"
    );
}

#[test]
fn mcp_serve_over_http_closes_an_idle_connection_but_not_a_long_answer() {
    // A local HTTP tool that answers after 5 s: a call to it through the server is an answer
    // that takes longer than the client timeout (2 s).
    let slow = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let slow_port = slow.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in slow.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = Vec::new();
            let mut byte = [0];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            std::thread::sleep(Duration::from_secs(5));
            let body = r#"{"slept":5}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let env = TestEnv::new();
    env.edit_config(|config| {
        config["allowedHosts"] = json!([format!("127.0.0.1:{slow_port}")]);
    });
    env.bundle("h");
    let imp = json!({"method": "GET", "urlTemplate": format!("http://127.0.0.1:{slow_port}/slow"), "timeoutMs": 20000});
    env.put_tool(
        "h",
        &crate::test_invoke_http::http_doc("slow", imp, json!({})),
    );
    let server = serve_http(&env, &["--http", "127.0.0.1:0", "--client-timeout", "2"]);
    let port = server.port;
    let session = open_session(port, None);
    let in_session = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n");

    // A kept-alive connection is closed once it has been idle for the client timeout after
    // its answer.
    let mut stream = connect(port, 20);
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}).to_string();
    let head = post_head(
        port,
        &format!("{in_session}Content-Length: {}\r\n", ping.len()),
    );
    write!(stream, "{head}{ping}").unwrap();
    let (raw, idle) = read_until_closed(&mut stream);
    assert!(raw.starts_with("HTTP/1.1 200 "), "{raw}");
    assert!(raw.contains(r#""id":7"#), "{raw}");
    assert!(
        idle >= Duration::from_millis(1800) && idle < Duration::from_secs(6),
        "closed after {idle:?}"
    );

    // The session's event stream (GET) stays open past it: its answer is still being sent.
    let mut events = connect(port, 4);
    write!(
        events,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n{in_session}\r\n"
    )
    .unwrap();
    let mut buf = [0; 4096];
    let n = events.read(&mut buf).unwrap();
    let start = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(start.starts_with("HTTP/1.1 200 "), "{start}");
    let opened = Instant::now();
    let mut more = Vec::new();
    let outcome = events.read_to_end(&mut more);
    assert!(
        outcome.as_ref().is_err_and(|e| matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        )),
        "the event stream ended after {:?}: {outcome:?} {:?}",
        opened.elapsed(),
        String::from_utf8_lossy(&more)
    );

    // So does a call whose tool takes longer than it, answered when the tool is done.
    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "slow", "arguments": {}}});
    let started = Instant::now();
    let answer = request(
        port,
        "POST",
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        Some(&call),
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    let message = answer.message();
    assert_eq!(message["id"], 8, "{message}");
    assert_eq!(message["result"]["isError"], false, "{message}");
    assert_eq!(
        message["result"]["structuredContent"],
        json!({"slept": 5}),
        "{message}"
    );
    assert!(started.elapsed() >= Duration::from_secs(5), "{message}");
    drop(events);
}

#[test]
fn mcp_serve_over_http_tells_refusals_without_the_token_at_most_once_every_ten_seconds() {
    // A client without the token opening connection after connection does not fill stderr:
    // the first refusal is told, the others counted, and the count told once they stop.
    let env = TestEnv::new();
    let server = serve_http(&env, &["--http", "127.0.0.1:0", "--token-env", TOKEN_VAR]);
    let port = server.port;
    for _ in 0..30 {
        let answer = request(port, "POST", &[], Some(&initialize_request()));
        assert_eq!(answer.status, 401, "{answer:?}");
    }
    let said = server.said_within("29 more requests refused", Duration::from_secs(15));
    let refusals: Vec<&str> = said.lines().filter(|l| l.contains("(401)")).collect();
    assert_eq!(refusals.len(), 2, "{said}");
    assert!(
        refusals[0].starts_with("warning: refused POST /mcp from 127.0.0.1:")
            && refusals[0].ends_with(": no Authorization header (401)"),
        "{said}"
    );
    assert_eq!(
        refusals[1],
        "warning: 29 more requests refused without the token (401) since the last warning, from 1 address",
        "{said}"
    );
    // Meanwhile a client with the token is served.
    open_session(port, Some(&format!("Bearer {TOKEN}")));
}
