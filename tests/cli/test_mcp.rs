//! `toolctl mcp serve`, driven by the official MCP Python SDK client (tests/fixtures/mcp/
//! driver.py): the client starts the server over stdio as an MCP host would, and prints what
//! it saw, step by step, as JSON lines.

use crate::common::{TestEnv, bin, mcp_clients, tool_doc_with};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the client saw (one value per step) and what the server said on stderr.
pub(crate) struct Session {
    pub(crate) steps: Vec<Value>,
    pub(crate) stderr: String,
}

impl Session {
    pub(crate) fn step(&self, i: usize) -> &Value {
        &self.steps[i]
    }
}

/// The longest a driven session may take; it is killed past that (and its server with it:
/// the server ends when its stdin closes).
const SESSION_LIMIT: Duration = Duration::from_secs(90);

/// The environment the server runs with (TestEnv's: HOME and XDG inside the test folder).
pub(crate) fn server_env(env: &TestEnv) -> Value {
    json!({
        "PATH": std::env::var("PATH").unwrap_or_default(),
        "HOME": env.home(),
        "XDG_DATA_HOME": env.xdg_data(),
        "XDG_CONFIG_HOME": env.root().join("xdg-config"),
        "TOOLCTL_WATCH": "never",
        "NO_COLOR": "1",
    })
}

/// Drive `toolctl --catalog … mcp serve ARGS` through `steps`, connecting as `mode` says
/// ("legacy": the initialize handshake; "auto": the newest revision both speak).
pub(crate) fn drive(env: &TestEnv, mode: &str, args: &[&str], steps: Value) -> Session {
    let mut command = vec![
        json!(bin()),
        json!("--catalog"),
        json!(env.catalog()),
        json!("mcp"),
        json!("serve"),
    ];
    command.extend(args.iter().map(|a| json!(a)));
    let plan = json!({
        "command": command,
        "env": server_env(env),
        "cwd": env.work(),
        "mode": mode,
        "steps": steps,
    });
    run_driver(env, &plan)
}

pub(crate) fn run_driver(env: &TestEnv, plan: &Value) -> Session {
    let output = try_driver(env, plan);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "the MCP client failed ({:?}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    let steps = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    Session { steps, stderr }
}

/// Run the driver on `plan`, whether the client succeeds or not.
pub(crate) fn try_driver(env: &TestEnv, plan: &Value) -> std::process::Output {
    let plan_file = env.input(plan);
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/driver.py");
    let mut child = Command::new(mcp_clients::python())
        .arg(&driver)
        .arg(&plan_file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > SESSION_LIMIT {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The tools `export --provider mcp --lenient ARGS` prints.
pub(crate) fn exported(env: &TestEnv, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["export", "--provider", "mcp", "--lenient"];
    all.extend_from_slice(args);
    let run = env.run(&all);
    run.success();
    serde_json::from_str::<Value>(&run.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A bundle `slug` holding `count` native tools `<prefix>-<i>` (the `now` function).
fn bundle_of(env: &TestEnv, slug: &str, prefix: &str, count: usize) -> String {
    let id = env.bundle(slug);
    for i in 0..count {
        let doc = tool_doc_with(
            &format!("{prefix}-{i}"),
            "v1",
            json!({ "description": format!("Tell the time, variant {i}") }),
        );
        env.put_tool(slug, &doc);
    }
    id
}

#[test]
fn mcp_serve_lists_pages_and_calls_over_both_protocol_eras() {
    let env = TestEnv::fixture();
    let export = exported(&env, &[]);
    assert!(
        export.len() > 4,
        "the fixture exports {} tools",
        export.len()
    );
    for (mode, version) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let session = drive(
            &env,
            mode,
            &["--mode", "all", "--page-size", "4"],
            json!([
                {"op": "info"},
                {"op": "list"},
                {"op": "list_all"},
                {"op": "call", "name": "now", "arguments": {}},
                {"op": "call", "name": "readfile", "arguments": {"path": "no-such-file.txt"}},
                {"op": "call", "name": "readfile", "arguments": {"path": 42}},
                {"op": "call", "name": "no-such-tool", "arguments": {}},
            ]),
        );
        let info = session.step(0);
        assert_eq!(info["protocolVersion"], version, "{mode}");
        assert_eq!(info["server"], "toolctl");
        assert_eq!(info["listChanged"], true);

        // One page, then a cursor; every page together is exactly what export prints.
        let first = session.step(1);
        assert_eq!(first["tools"].as_array().unwrap().len(), 4);
        assert!(first["nextCursor"].is_string());
        let all = session.step(2);
        assert_eq!(all["pages"], export.len().div_ceil(4));
        assert_eq!(
            all["tools"],
            json!(export),
            "{mode}: tools/list differs from export"
        );

        // Success: the value as text and as structuredContent.
        let now = session.step(3);
        assert_eq!(now["isError"], false, "{now}");
        assert!(now["structuredContent"]["utc"].is_string(), "{now}");
        let text: Value = serde_json::from_str(now["text"][0].as_str().unwrap()).unwrap();
        assert_eq!(text, now["structuredContent"]);

        // The tool ran and failed: a result with isError, the code and message as text
        // (readfile has an outputSchema, which an error's structuredContent would not meet).
        let failed = session.step(4);
        assert_eq!(failed["isError"], true, "{failed}");
        assert!(
            failed["text"][0]
                .as_str()
                .unwrap()
                .starts_with("NOT_FOUND: "),
            "{failed}"
        );
        assert_eq!(failed["structuredContent"], Value::Null);

        // Arguments the schema refuses: a result with isError too (the model can fix them).
        let refused = session.step(5);
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(
            refused["text"][0]
                .as_str()
                .unwrap()
                .starts_with("VALIDATION_ERROR: "),
            "{refused}"
        );

        // A tool the client was never shown: a protocol error.
        let unknown = session.step(6);
        assert_eq!(unknown["protocolError"]["code"], -32602, "{unknown}");
        assert!(
            unknown["protocolError"]["message"]
                .as_str()
                .unwrap()
                .contains("no-such-tool")
        );
        assert!(session.stderr.contains("mode all"), "{}", session.stderr);
    }
    // The calls were counted as invoke counts them (two ran per session: now and readfile).
    let now = env.json(&["tool", "get", "builtin/now"]);
    assert_eq!(now["usage"]["callCount"], 2, "{}", now["usage"]);
}

#[test]
fn mcp_serve_filters_as_export_does() {
    let env = TestEnv::fixture();
    bundle_of(&env, "clock", "tick", 2);
    let needs_x = tool_doc_with(
        "needs-x",
        "v1",
        json!({ "argSchema": {
            "type": "object",
            "properties": { "x": { "type": "string" } },
            "required": ["x"]
        } }),
    );
    env.put_tool("clock", &needs_x);
    let filtered = exported(&env, &["--bundle", "clock"]);
    let session = drive(
        &env,
        "legacy",
        &["--bundle", "clock"],
        json!([
            {"op": "list_all"},
            {"op": "call", "name": "tick-1", "arguments": {}},
            {"op": "call", "name": "now", "arguments": {}},
            {"op": "call", "name": "needs-x", "arguments": {"x": 1}},
        ]),
    );
    assert_eq!(session.step(0)["tools"], json!(filtered));
    assert_eq!(names(&session.step(0)["tools"]).len(), 3);
    assert_eq!(session.step(1)["isError"], false);
    // Outside the filter: not served.
    assert_eq!(session.step(2)["protocolError"]["code"], -32602);
    // A tool without outputSchema: the error as structuredContent too, with its pointer.
    let refused = session.step(3);
    assert_eq!(refused["isError"], true, "{refused}");
    let error = &refused["structuredContent"]["error"];
    assert_eq!(error["code"], "VALIDATION_ERROR", "{refused}");
    assert!(error["details"].to_string().contains("/x"), "{refused}");

    // Search mode searches within the filters too.
    let query = json!({"query": "current time", "max": 10});
    let steps = json!([{"op": "call", "name": "search_tools", "arguments": query}]);
    let everywhere = drive(&env, "legacy", &["--mode", "search"], steps.clone());
    let found = names(&everywhere.step(0)["structuredContent"]["tools"]);
    assert!(found.contains(&"now".to_owned()), "{found:?}");
    let within = drive(
        &env,
        "legacy",
        &["--mode", "search", "--bundle", "clock"],
        steps,
    );
    let found = names(&within.step(0)["structuredContent"]["tools"]);
    assert!(!found.is_empty());
    assert!(found.iter().all(|n| n.starts_with("tick-")), "{found:?}");
}

#[test]
fn mcp_serve_announces_a_hand_edit() {
    let env = TestEnv::new();
    let bundle = bundle_of(&env, "clock", "tick", 2);
    let file = env.tool_file(&bundle, "tick-0", "v1");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for (mode, description) in [("legacy", "Edited by hand"), ("auto", "Edited again")] {
        doc["description"] = json!(description);
        let session = drive(
            &env,
            mode,
            &[],
            json!([
                {"op": "list_all"},
                {"op": "wait_changed", "seconds": 1.5},
                {"op": "write", "path": file, "text": serde_json::to_string_pretty(&doc).unwrap()},
                {"op": "wait_changed", "seconds": 5},
                {"op": "list_all"},
            ]),
        );
        // Nothing changed: nothing announced.
        assert_eq!(session.step(1)["changed"], false, "{mode}");
        let changed = session.step(2);
        assert_eq!(changed["changed"], true, "{mode}: {}", session.stderr);
        let tools = &session.step(3)["tools"];
        let tick = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "tick-0")
            .unwrap();
        assert_eq!(tick["description"], description, "{mode}");
        assert!(
            session.stderr.contains("catalog changed"),
            "{}",
            session.stderr
        );
    }
}

#[test]
fn mcp_serve_search_mode_above_the_auto_limit() {
    let env = TestEnv::new();
    bundle_of(&env, "clock", "tick", 62);
    let weather = tool_doc_with(
        "rain-radar",
        "v1",
        json!({ "description": "Show the rain radar picture for a city", "tags": ["weather"] }),
    );
    env.put_tool("clock", &weather);
    // 62 + the weather tool + the built-in tools: more than 64.
    let session = drive(
        &env,
        "auto",
        &[],
        json!([
            {"op": "list_all"},
            {"op": "call", "name": "search_tools", "arguments": {"query": "rain radar", "max": 2}},
            {"op": "call", "name": "call_tool", "arguments": {"name": "rain-radar", "arguments": {}}},
            {"op": "call", "name": "call_tool", "arguments": {"name": "no-such-tool"}},
            {"op": "call", "name": "search_tools", "arguments": {}},
            {"op": "call", "name": "rain-radar", "arguments": {}},
            {"op": "call", "name": "search_tools", "arguments": {"query": "  "}},
        ]),
    );
    assert_eq!(
        names(&session.step(0)["tools"]),
        ["search_tools", "call_tool"]
    );
    assert!(session.stderr.contains("mode search"), "{}", session.stderr);
    let found = &session.step(1)["structuredContent"]["tools"];
    assert_eq!(found[0]["name"], "rain-radar", "{found}");
    assert!(found.as_array().unwrap().len() <= 2);
    let export = exported(&env, &["--tool", "rain-radar"]);
    assert_eq!(found[0]["inputSchema"], export[0]["inputSchema"]);
    assert_eq!(found[0]["description"], export[0]["description"]);
    assert_eq!(session.step(2)["isError"], false, "{}", session.step(2));
    assert!(session.step(2)["structuredContent"]["utc"].is_string());
    let unknown = session.step(3);
    assert_eq!(unknown["isError"], true);
    assert_eq!(
        unknown["structuredContent"]["error"]["code"],
        "UNKNOWN_TOOL"
    );
    for refused in [session.step(4), session.step(6)] {
        assert_eq!(refused["isError"], true, "{refused}");
        let code = &refused["structuredContent"]["error"]["code"];
        assert_eq!(code, "VALIDATION_ERROR", "{refused}");
    }
    // Only the two tools are served: a catalog tool by its own name is unknown here.
    assert_eq!(session.step(5)["protocolError"]["code"], -32602);

    // --mode all lists them all the same.
    let all = drive(
        &env,
        "legacy",
        &["--mode", "all"],
        json!([{"op": "list_all"}]),
    );
    assert_eq!(all.step(0)["tools"], json!(exported(&env, &[])));
}

#[test]
fn mcp_serve_refuses_json_and_a_public_address_by_default() {
    let env = TestEnv::new();
    env.run(&["--json", "mcp", "serve"])
        .failure(3)
        .stdout_has("--json does not apply");
    env.run(&["mcp", "serve", "--http", "0.0.0.0:0"])
        .failure(3)
        .stderr_has("not a loopback address");
}

#[test]
fn mcp_serve_ends_when_stdin_closes() {
    let env = TestEnv::new();
    let mut child = env
        .command(&["mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let status = wait_at_most(&mut child, Duration::from_secs(10));
    assert_eq!(status.and_then(|s| s.code()), Some(0));
}

/// The child's exit status, or `None` (and the child killed) past `limit`.
fn wait_at_most(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn mcp_serve_over_streamable_http_and_sigterm() {
    use std::io::BufRead;
    let env = TestEnv::fixture();
    let mut server = env
        .command(&["mcp", "serve", "--http", "127.0.0.1:0", "--mode", "all"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tell, lines) = std::sync::mpsc::channel();
    let stderr = server.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let _ = tell.send(line.unwrap());
        }
    });
    let url = loop {
        let line = lines.recv_timeout(Duration::from_secs(30)).unwrap();
        if let Some(rest) = line.split("listening on ").nth(1) {
            break format!("{}mcp", rest.split_whitespace().next().unwrap());
        }
    };
    let export = exported(&env, &[]);
    for mode in ["legacy", "auto"] {
        let session = run_driver(
            &env,
            &json!({
                "url": url,
                "mode": mode,
                "steps": [
                    {"op": "list_all"},
                    {"op": "call", "name": "now", "arguments": {}},
                    {"op": "call", "name": "readfile", "arguments": {}},
                ],
            }),
        );
        assert_eq!(session.step(0)["tools"], json!(export), "{mode}");
        assert_eq!(session.step(1)["isError"], false, "{mode}");
        assert_eq!(session.step(2)["isError"], true, "{mode}");
    }
    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = wait_at_most(&mut server, Duration::from_secs(10));
    reader.join().unwrap();
    let said: Vec<String> = lines.try_iter().collect();
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{said:?}");
    assert!(
        said.iter().any(|l| l.contains("SIGTERM: stopping")),
        "{said:?}"
    );
}

/// The status line of a raw `initialize` POST to `127.0.0.1:port` naming `host` in its `Host`
/// header, with an `Origin` header when given (as a browser sends one).
fn initialize_status(port: u16, host: &str, origin: Option<&str>) -> String {
    use std::io::{BufRead, Write};
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    })
    .to_string();
    let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{origin}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut status = String::new();
    std::io::BufReader::new(stream)
        .read_line(&mut status)
        .unwrap();
    status.trim_end().to_owned()
}

#[test]
fn mcp_serve_over_http_refuses_another_host_or_a_web_page_of_another_origin() {
    // DNS rebinding names the attacker's host in `Host`; a web page the user opens anywhere
    // sends its own `Origin`. Both are refused (403) before any session starts; a client
    // without an `Origin` (not a browser) or on a loopback origin is served.
    /// Kills the server however the test ends (a failed assertion included).
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let env = TestEnv::new();
    let mut server = Killed(
        env.command(&["mcp", "serve", "--http", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stderr = std::io::BufReader::new(server.0.stderr.take().unwrap());
    let port: u16 = loop {
        let mut line = String::new();
        assert!(
            std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() > 0,
            "the server ended before listening"
        );
        if let Some(rest) = line.split("listening on http://127.0.0.1:").nth(1) {
            break rest.split('/').next().unwrap().parse().unwrap();
        }
    };
    let here = format!("127.0.0.1:{port}");
    let ok = "HTTP/1.1 200 OK";
    let forbidden = "HTTP/1.1 403 Forbidden";
    let cases = [
        (here.as_str(), None, ok),
        (&here, Some(format!("http://127.0.0.1:{port}")), ok),
        (&here, Some("http://localhost:3000".to_owned()), ok),
        (&here, Some("https://[::1]".to_owned()), ok),
        (&here, Some("http://evil.example".to_owned()), forbidden),
        (
            &here,
            Some(format!("http://evil.example:{port}")),
            forbidden,
        ),
        (&here, Some("null".to_owned()), forbidden),
        (&format!("evil.example:{port}"), None, forbidden),
        (&format!("localhost:{port}"), None, ok),
    ];
    for (host, origin, expected) in cases {
        assert_eq!(
            initialize_status(port, host, origin.as_deref()),
            expected,
            "Host {host}, Origin {origin:?}"
        );
    }
}

/// Run the inspector's CLI on `toolctl mcp serve SERVE_ARGS` with `--method …` `METHOD_ARGS`:
/// its exit code and the JSON documents it printed.
fn inspect(env: &TestEnv, serve_args: &[&str], method_args: &[&str]) -> (i32, Vec<Value>) {
    let output = Command::new(mcp_clients::inspector())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .current_dir(env.work())
        .arg("--cli")
        .arg("-e")
        .arg(format!("TOOLCTL_CATALOG={}", env.catalog().display()))
        .args(["-e", "TOOLCTL_WATCH=never", "-e", "NO_COLOR=1"])
        .arg(bin())
        .args(["mcp", "serve"])
        .args(serve_args)
        .args(method_args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let docs = serde_json::Deserializer::from_str(&stdout)
        .into_iter::<Value>()
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("inspector output is not JSON ({e}):\n{stdout}"));
    (output.status.code().unwrap_or(-1), docs)
}

#[test]
fn mcp_serve_answers_the_official_inspector() {
    let env = TestEnv::fixture();
    let list = ["--method", "tools/list"];
    let (code, docs) = inspect(&env, &["--mode", "all", "--page-size", "3"], &list);
    assert_eq!(code, 0, "{docs:?}");
    assert_eq!(docs[0]["tools"], json!(exported(&env, &[])));

    let call = |tool: &str, args: &[&str]| {
        let mut method = vec!["--method", "tools/call", "--tool-name", tool];
        if !args.is_empty() {
            method.push("--tool-arg");
            method.extend_from_slice(args);
        }
        inspect(&env, &["--mode", "all"], &method)
    };
    let (code, docs) = call("now", &[]);
    assert_eq!(code, 0, "{docs:?}");
    assert!(docs[0]["structuredContent"]["utc"].is_string(), "{docs:?}");

    let (code, docs) = call("readfile", &["path=no-such-file.txt"]);
    assert_ne!(code, 0);
    assert_eq!(docs[0]["isError"], true, "{docs:?}");
    let text = docs[0]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("NOT_FOUND: "), "{text}");

    let (code, docs) = call("readfile", &["bogus=1"]);
    assert_ne!(code, 0);
    assert_eq!(docs[0]["isError"], true, "{docs:?}");
    let text = docs[0]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("VALIDATION_ERROR: "), "{text}");

    let (code, docs) = inspect(&env, &["--mode", "search"], &list);
    assert_eq!(code, 0);
    assert_eq!(names(&docs[0]["tools"]), ["search_tools", "call_tool"]);
    let (code, docs) = inspect(
        &env,
        &["--mode", "search"],
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "search_tools",
            "--tool-arg",
            "query=current time",
        ],
    );
    assert_eq!(code, 0, "{docs:?}");
    let found = names(&docs[0]["structuredContent"]["tools"]);
    assert!(found.contains(&"now".to_owned()), "{found:?}");
}

/// `search_tools` ranks as `pick` does by default (`fused`): a task that shares no word with
/// the right tool finds it by meaning, where words alone find nothing.
#[test]
fn search_tools_finds_a_tool_by_meaning_as_pick_does() {
    let env = crate::test_pick::weather_mail_money();
    let task = "send a note to my colleague by e-mail";
    let steps =
        json!([{"op": "call", "name": "search_tools", "arguments": {"query": task, "max": 3}}]);
    let session = drive(&env, "legacy", &["--mode", "search"], steps);
    let found = names(&session.step(0)["structuredContent"]["tools"]);
    assert_eq!(
        found.first().map(String::as_str),
        Some("mailer"),
        "{found:?}"
    );
    let pick = env.json(&["pick", task, "--max", "3"]);
    assert_eq!(pick["items"][0]["name"], "mailer", "{pick}");
    let words = env.json(&["pick", task, "--scorer", "bm25"]);
    assert!(
        !words["items"].to_string().contains("mailer"),
        "words alone do not find it: {words}"
    );
}
