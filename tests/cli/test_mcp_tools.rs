//! Tools of MCP servers in the catalog (`type: "mcp"`, `mcpServers` in `toolctl.json`):
//! `invoke`, `--batch`, `validate` and `mcp import`, against real servers the tests start — the
//! tests' own Python SDK server (tests/fixtures/mcp/server.py) over stdio and Streamable HTTP,
//! and `@modelcontextprotocol/server-everything` over stdio.

use crate::common::{TestEnv, mcp_clients};
use serde_json::{Value, json};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn fixture_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/server.py")
}

/// An `mcpServers` entry starting the fixture server in `mode` over stdio.
fn stdio_server(mode: &str) -> Value {
    json!({ "command": [mcp_clients::python(), fixture_server(), mode] })
}

/// Declare `servers` in the catalog's `toolctl.json`.
pub(crate) fn declare(env: &TestEnv, servers: Value) {
    env.edit_config(|config| config["mcpServers"] = servers);
}

/// A tool of server `server` named `tool` on it, put in bundle `mcp` as `slug@1`.
pub(crate) fn mcp_tool(env: &TestEnv, slug: &str, server: &str, tool: &str, arg_schema: Value) {
    env.put_tool(
        "mcp",
        &json!({
            "slug": slug, "version": "1", "type": "mcp",
            "impl": { "server": server, "tool": tool },
            "argSchema": arg_schema,
        }),
    );
}

pub(crate) fn any_object() -> Value {
    json!({ "type": "object" })
}

/// `invoke REF --args ARGS --json`: exit code and the printed document.
fn invoke(env: &TestEnv, reference: &str, args: Value) -> (i32, Value) {
    invoke_with(env, reference, args, &[])
}

fn invoke_with(env: &TestEnv, reference: &str, args: Value, vars: &[(&str, &str)]) -> (i32, Value) {
    let mut command = env.command(&["--json", "invoke", reference, "--args", &args.to_string()]);
    for (name, value) in vars {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap(), doc)
}

/// `invoke` that must fail with exit `exit` and error `code`; returns the printed document.
#[track_caller]
fn fails(env: &TestEnv, reference: &str, args: Value, exit: i32, code: &str) -> Value {
    let (got, doc) = invoke(env, reference, args);
    assert_eq!(
        (got, doc["error"]["code"].as_str()),
        (exit, Some(code)),
        "{doc}"
    );
    doc
}

/// The processes running now whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if !zombie
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
        {
            found.push(pid);
        }
    }
    found
}

#[test]
fn an_mcp_tool_over_stdio_returns_structured_content_or_text_and_fails_as_upstream() {
    let env = TestEnv::new();
    env.bundle("mcp");
    declare(&env, json!({ "fx": stdio_server("stdio") }));
    let sum = json!({
        "type": "object",
        "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
        "required": ["a", "b"]
    });
    mcp_tool(&env, "add", "fx", "add", sum);
    mcp_tool(&env, "echo", "fx", "echo", any_object());
    mcp_tool(&env, "fail", "fx", "fail", any_object());
    mcp_tool(&env, "nope", "fx", "no-such-tool", any_object());

    let (code, doc) = invoke(&env, "mcp/add", json!({ "a": 2, "b": 40 }));
    assert_eq!(
        (code, &doc["value"]),
        (0, &json!({ "result": 42 })),
        "{doc}"
    );

    let (code, doc) = invoke(&env, "mcp/echo", json!({ "text": "hello there" }));
    assert_eq!((code, &doc["value"]), (0, &json!("hello there")), "{doc}");

    // The tool's own failure (isError: true): UPSTREAM_ERROR, exit 7, naming server and tool.
    let (code, doc) = invoke(&env, "mcp/fail", json!({ "reason": "no coffee" }));
    assert_eq!(code, 7, "{doc}");
    assert_eq!(doc["error"]["code"], "UPSTREAM_ERROR");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("MCP server 'fx': tool 'fail' failed:"),
        "{message}"
    );
    assert!(message.contains("no coffee"), "{message}");
    assert_eq!(doc["error"]["details"]["server"], "fx");

    // A tool the server does not have.
    let doc = fails(&env, "mcp/nope", json!({}), 7, "UPSTREAM_ERROR");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MCP server 'fx'"),
        "{doc}"
    );

    // The arguments are checked against argSchema before the server is reached.
    fails(
        &env,
        "mcp/add",
        json!({ "a": "two" }),
        3,
        "VALIDATION_ERROR",
    );
}

#[test]
fn a_server_that_exits_at_once_or_never_answers_fails_fast_and_leaves_no_process() {
    let env = TestEnv::new();
    env.bundle("mcp");
    let pidfile = env.root().join("pids");
    let mut hang = stdio_server("hang");
    hang["env"] = json!({ "PIDFILE": pidfile });
    hang["timeoutMs"] = json!(1500);
    declare(
        &env,
        json!({ "dead": stdio_server("exit"), "hung": hang, "missing": { "command": ["/no/such/program"] } }),
    );
    mcp_tool(&env, "dead", "dead", "add", any_object());
    mcp_tool(&env, "hung", "hung", "add", any_object());
    mcp_tool(&env, "missing", "missing", "add", any_object());

    let doc = fails(&env, "mcp/dead", json!({}), 7, "UPSTREAM_ERROR");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("MCP server 'dead' did not start a session"),
        "{message}"
    );
    assert!(
        message.contains("refusing to start"),
        "its stderr is shown: {message}"
    );
    assert!(message.contains("exit status: 3"), "{message}");

    let doc = fails(&env, "mcp/missing", json!({}), 7, "UPSTREAM_ERROR");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("MCP server 'missing' did not start: cannot run '/no/such/program'"),
        "{doc}"
    );

    let started = Instant::now();
    let (code, doc) = invoke(&env, "mcp/hung", json!({}));
    let took = started.elapsed();
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (7, Some("TIMEOUT")),
        "{doc}"
    );
    assert_eq!(
        doc["error"]["message"],
        "MCP server 'hung' did not answer initialize within 1500 ms"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
    // The server and the child it started are gone.
    let pids: Vec<u32> = std::fs::read_to_string(&pidfile)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let gone = stat.is_empty()
            || stat
                .rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
        assert!(gone, "process {pid} still runs: {stat}");
    }
}

#[test]
fn a_slow_call_times_out_with_the_tools_timeout() {
    let env = TestEnv::new();
    env.bundle("mcp");
    // A mark of this test's server on its command line (the server ignores it).
    let mark = format!("slow-call-mark-{}", std::process::id());
    let mut server = stdio_server("stdio");
    server["command"].as_array_mut().unwrap().push(json!(mark));
    declare(&env, json!({ "fx": server }));
    env.put_tool(
        "mcp",
        &json!({
            "slug": "slow", "version": "1", "type": "mcp",
            "impl": { "server": "fx", "tool": "slow", "timeoutMs": 8000 },
            "argSchema": any_object(),
        }),
    );
    let doc = fails(&env, "mcp/slow", json!({ "seconds": 60 }), 7, "TIMEOUT");
    let message = doc["error"]["message"].as_str().unwrap();
    // Either stage may run out on a loaded machine; both name the server and the limit.
    assert!(
        message.starts_with("MCP server 'fx' did not answer"),
        "{message}"
    );
    assert!(message.ends_with("within 8000 ms"), "{message}");
    assert_eq!(
        processes_with(&mark),
        Vec::<u32>::new(),
        "the server is killed"
    );
}

#[test]
fn secrets_reach_the_server_through_env_and_never_come_back() {
    let env = TestEnv::new();
    env.bundle("mcp");
    let mut server = stdio_server("stdio");
    server["env"] = json!({ "TOKEN": "Bearer ${FX_TOKEN}" });
    server["secrets"] = json!(["FX_TOKEN"]);
    declare(&env, json!({ "fx": server }));
    mcp_tool(&env, "env", "fx", "env", any_object());

    let doc = fails(
        &env,
        "mcp/env",
        json!({ "name": "TOKEN" }),
        3,
        "VALIDATION_ERROR",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'FX_TOKEN' is not set")
    );

    let secret = "s3cr3t-value-for-the-test";
    let (code, doc) = invoke_with(
        &env,
        "mcp/env",
        json!({ "name": "TOKEN" }),
        &[("TOOLCTL_SECRET_FX_TOKEN", secret)],
    );
    assert_eq!(code, 0, "{doc}");
    // The server got it (its answer is the value, redacted on the way out).
    assert_eq!(doc["value"], "Bearer [redacted]");
    assert!(!doc.to_string().contains(secret));
    // A failure that echoes the secret where its message is cut to an excerpt (2048
    // characters): redacted before the cut, so no part of the secret shows.
    mcp_tool(&env, "fail", "fx", "fail", any_object());
    let vars = [("TOOLCTL_SECRET_FX_TOKEN", secret)];
    let (_, marked) = invoke_with(&env, "mcp/fail", json!({ "reason": "MARK" }), &vars);
    let message = marked["error"]["message"].as_str().unwrap();
    let header = message.find("failed: ").unwrap() + "failed: ".len();
    let before = message[header..].find("MARK").unwrap();
    let reason = format!("{}{secret}", "x".repeat(2048 - 6 - before));
    let (code, doc) = invoke_with(&env, "mcp/fail", json!({ "reason": reason }), &vars);
    assert_eq!(code, 7, "{doc}");
    let message = doc["error"]["message"].as_str().unwrap();
    // The cut falls in the secret's place: what shows of it is the mark (cut too).
    assert!(
        message.ends_with('…') && message.contains("x[redac"),
        "{message}"
    );
    assert!(!doc.to_string().contains(&secret[..6]), "{doc}");
    // toolctl's own secrets never reach the server's environment.
    let (_, doc) = invoke_with(
        &env,
        "mcp/env",
        json!({ "name": "TOOLCTL_SECRET_FX_TOKEN" }),
        &[("TOOLCTL_SECRET_FX_TOKEN", secret)],
    );
    assert_eq!(doc["value"], "<unset>");
    // The environment is reduced to PATH, HOME, USER, LANG, LC_ALL, LC_CTYPE, TZ, TMPDIR
    // plus `env` (README, MCP servers' tools): others toolctl got stay behind.
    for (name, value, seen) in [
        ("EDITOR", "vi", "<unset>"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret", "<unset>"),
        ("LC_MESSAGES", "C", "<unset>"),
        ("LC_CTYPE", "C.UTF-8", "C.UTF-8"),
        ("TZ", "UTC", "UTC"),
    ] {
        let vars = [(name, value), ("TOOLCTL_SECRET_FX_TOKEN", secret)];
        let (_, doc) = invoke_with(&env, "mcp/env", json!({ "name": name }), &vars);
        assert_eq!(doc["value"], seen, "{name}: {doc}");
    }
}

/// The fixture server over Streamable HTTP on 127.0.0.1, killed when dropped.
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) port: u16,
}

impl HttpServer {
    fn start(variant: &str) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_on(variant, port, None)
    }

    /// The server on `port`, its stderr (the SDK's log) appended to `log` when given.
    pub(crate) fn start_on(variant: &str, port: u16, log: Option<&Path>) -> Self {
        let stderr = match log {
            Some(path) => Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .unwrap(),
            ),
            None => Stdio::null(),
        };
        let child = Command::new(mcp_clients::python())
            .arg(fixture_server())
            .args(["http", &port.to_string()])
            .env("VARIANT", variant)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let server = Self { child, port };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the HTTP server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_mcp_tool_over_streamable_http_needs_an_allowed_host() {
    let server = HttpServer::start("1");
    let env = TestEnv::new();
    env.bundle("mcp");
    declare(&env, json!({ "web": { "url": server.url() } }));
    mcp_tool(&env, "add", "web", "add", any_object());
    mcp_tool(&env, "fail", "web", "fail", any_object());

    // Not in allowedHosts: refused before any request, and listed as unavailable.
    fails(
        &env,
        "mcp/add",
        json!({ "a": 1, "b": 2 }),
        6,
        "HOST_NOT_ALLOWED",
    );
    let validated = env.run(&["--json", "validate"]);
    assert!(
        validated.stdout.contains("/mcpServers/web/url"),
        "{}",
        validated.stdout
    );

    env.edit_config(|config| {
        config["allowedHosts"] = json!([format!("127.0.0.1:{}", server.port)])
    });
    let (code, doc) = invoke(&env, "mcp/add", json!({ "a": 1, "b": 2 }));
    assert_eq!((code, &doc["value"]), (0, &json!({ "result": 3 })), "{doc}");
    let doc = fails(
        &env,
        "mcp/fail",
        json!({ "reason": "over http" }),
        7,
        "UPSTREAM_ERROR",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over http")
    );

    // A server that is not there (any more).
    drop(server);
    let doc = fails(
        &env,
        "mcp/add",
        json!({ "a": 1, "b": 2 }),
        7,
        "UPSTREAM_ERROR",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("MCP server 'web'"),
        "{doc}"
    );
}

#[test]
fn a_batch_runs_mcp_tools_beside_native_ones() {
    let env = TestEnv::new();
    env.bundle("mcp");
    declare(&env, json!({ "fx": stdio_server("stdio") }));
    mcp_tool(&env, "add", "fx", "add", any_object());
    mcp_tool(&env, "fail", "fx", "fail", any_object());
    let batch = json!({ "calls": [
        { "call_id": "1", "name": "mcp/add", "arguments": { "a": 1, "b": 1 } },
        { "call_id": "2", "name": "mcp/fail", "arguments": { "reason": "batch" } },
        { "call_id": "3", "name": "builtin/now", "arguments": {} },
    ]});
    let run = env.run_stdin(&["--json", "invoke", "--batch", "-"], &batch.to_string());
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|_| panic!("{}{}", run.stdout, run.stderr));
    let text = doc.to_string();
    assert!(text.contains("{\"result\":2}"), "{text}");
    assert!(text.contains("UPSTREAM_ERROR"), "{text}");
}

#[test]
fn validate_knows_mcp_tools_and_servers() {
    let env = TestEnv::new();
    env.bundle("mcp");
    declare(&env, json!({ "fx": stdio_server("stdio") }));
    mcp_tool(&env, "ok", "fx", "add", any_object());
    // `tool put` refuses a tool naming an undeclared server, as validate reports it
    // (test_hand_edits); one whose server toolctl.json no longer declares is unavailable.
    declare(
        &env,
        json!({ "fx": stdio_server("stdio"), "ghost": stdio_server("stdio") }),
    );
    mcp_tool(&env, "ghost", "ghost", "add", any_object());
    declare(
        &env,
        json!({ "fx": stdio_server("stdio"), "both": { "command": ["x"], "url": "http://127.0.0.1/" } }),
    );
    let run = env.try_put_tool(
        "mcp",
        &json!({ "slug": "bad", "version": "1", "type": "mcp", "impl": { "server": "fx", "tool": "" }, "argSchema": any_object() }),
    );
    assert_ne!(run.code(), 0);
    assert!(run.stdout.contains("/impl/tool"), "{}", run.stdout);

    let run = env.run(&["--json", "validate"]);
    let text = &run.stdout;
    assert!(
        text.contains(
            "MCP server 'ghost' is not declared in mcpServers of toolctl.json (it has both, fx)"
        ),
        "{text}"
    );
    assert!(text.contains("/mcpServers/both"), "{text}");
    assert!(text.contains("has both command and url"), "{text}");
    let doc = fails(&env, "mcp/ghost", json!({}), 6, "TOOL_DISABLED");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'ghost' is not declared"),
        "{doc}"
    );
}

/// `mcp import SERVER ARGS --json`.
fn import(env: &TestEnv, server: &str, args: &[&str]) -> Value {
    let mut all = vec!["mcp", "import", server];
    all.extend_from_slice(args);
    env.json(&all)
}

fn refs(list: &Value) -> Vec<String> {
    let mut refs: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.get("ref").unwrap_or(v).as_str().unwrap().to_owned())
        .collect();
    refs.sort();
    refs
}

/// The stored `tool.json` of `bundle/slug@version`.
fn stored(env: &TestEnv, bundle_id: &str, slug: &str, version: &str) -> Value {
    crate::common::read_json(&env.tool_file(bundle_id, slug, version))
}

#[test]
fn mcp_import_writes_one_tool_each_then_adds_versions_and_reports_vanished_tools() {
    let env = TestEnv::new();
    let mut server = stdio_server("stdio");
    server["env"] = json!({ "VARIANT": "1" });
    declare(&env, json!({ "fx": server }));

    let first = import(&env, "fx", &[]);
    assert_eq!(first["bundle"], "fx");
    assert_eq!(
        refs(&first["added"]),
        [
            "fx/add@1",
            "fx/echo@1",
            "fx/env@1",
            "fx/fail@1",
            "fx/slow@1"
        ]
    );
    let bundle_id = env
        .bundle_list(&[])
        .items
        .iter()
        .find(|b| b.slug == "fx")
        .unwrap()
        .bundle_id
        .clone();
    let add = stored(&env, &bundle_id, "add", "1");
    assert_eq!(add["type"], "mcp");
    assert_eq!(add["impl"], json!({ "server": "fx", "tool": "add" }));
    assert_eq!(add["description"], "Add two integers.");
    assert_eq!(add["argSchema"]["required"], json!(["a", "b"]));
    assert_eq!(add["argSchema"]["properties"]["a"]["type"], "integer");
    assert_eq!(
        add["outputSchema"]["properties"]["result"]["type"],
        "integer"
    );
    assert_eq!(add["annotations"]["readOnlyHint"], true);
    assert_eq!(add["safe"], true);
    assert_eq!(stored(&env, &bundle_id, "fail", "1")["safe"], false);
    assert_eq!(stored(&env, &bundle_id, "env", "1")["safe"], false);
    // The imported tools run.
    let (code, doc) = invoke(&env, "fx/add", json!({ "a": 20, "b": 22 }));
    assert_eq!(
        (code, &doc["value"]),
        (0, &json!({ "result": 42 })),
        "{doc}"
    );

    // Again: nothing changed.
    let again = import(&env, "fx", &[]);
    assert_eq!(refs(&again["added"]), Vec::<String>::new());
    assert_eq!(refs(&again["changed"]), Vec::<String>::new());
    assert_eq!(refs(&again["unchanged"]).len(), 5);

    // The server changes: echo's description, fail gone, shout new.
    env.edit_config(|config| config["mcpServers"]["fx"]["env"]["VARIANT"] = json!("2"));
    let third = import(&env, "fx", &[]);
    assert_eq!(refs(&third["added"]), ["fx/shout@1"]);
    assert_eq!(refs(&third["changed"]), ["fx/echo@2"]);
    assert_eq!(third["changed"][0]["previous"], "1");
    assert_eq!(refs(&third["vanished"]), ["fx/fail@1"]);
    assert_eq!(
        stored(&env, &bundle_id, "echo", "2")["description"],
        "Say the text back, unchanged."
    );
    // Nothing is deleted, and the new version is the default.
    let listed = env.refs(&["--bundle", "fx"]);
    assert!(listed.contains(&"fx/fail@1".to_owned()), "{listed:?}");
    assert!(listed.contains(&"fx/echo@1".to_owned()), "{listed:?}");
    let (code, doc) = invoke(&env, "fx/shout", json!({ "text": "hey" }));
    assert_eq!((code, &doc["value"]), (0, &json!("HEY")), "{doc}");
}

#[test]
fn mcp_import_refuses_a_tool_too_large_to_read_back_alone_and_imports_the_rest() {
    // A server describing a tool in 5 MiB: its tool.json would be over the 4 MiB every reader
    // keeps to, a file no command could read (and `validate` would fail on). The import
    // refuses that tool alone, naming it and why, and imports the server's other tools; the
    // version imported before of the refused one stays (not vanished). What is written
    // validates.
    let env = TestEnv::new();
    declare(&env, json!({ "fx": stdio_server("stdio") }));
    let first = import(&env, "fx", &[]);
    assert!(
        refs(&first["added"]).contains(&"fx/echo@1".to_owned()),
        "{first}"
    );

    let fresh = TestEnv::new();
    for (env, bundle) in [(&fresh, None), (&env, Some("fx"))] {
        let mut server = stdio_server("stdio");
        server["env"] = json!({ "VARIANT": "huge" });
        declare(env, json!({ "fx": server }));
        let run = env.run(&["--json", "mcp", "import", "fx"]);
        run.success();
        let doc = run.json();
        assert_eq!(doc["refused"].as_array().unwrap().len(), 1, "{doc}");
        assert_eq!(doc["refused"][0]["name"], "echo", "{doc}");
        let problem = &doc["refused"][0]["problems"][0];
        assert!(
            problem["message"]
                .as_str()
                .unwrap()
                .contains("over the limit of 4194304 bytes"),
            "{doc}"
        );
        assert!(
            run.stderr
                .contains("MCP server 'fx': refused tool 'echo' (/): "),
            "{run}"
        );
        let written: Vec<String> = crate::common::find_files(env.catalog(), "tool.json")
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert!(
            written
                .iter()
                .all(|p| !p.contains("/echo/") || p.ends_with("/echo/1/tool.json")),
            "{written:?}"
        );
        match bundle {
            None => {
                assert!(!refs(&doc["added"]).is_empty(), "{doc}");
                assert!(
                    !refs(&doc["added"]).iter().any(|r| r.contains("echo")),
                    "{doc}"
                );
                assert!(!written.iter().any(|p| p.contains("/echo/")), "{written:?}");
            }
            Some(_) => {
                // (The variant lists `shout` instead of `fail`.)
                assert_eq!(refs(&doc["vanished"]), ["fx/fail@1"], "{doc}");
                assert!(
                    refs(&doc["unchanged"]).contains(&"fx/add@1".to_owned()),
                    "{doc}"
                );
                assert!(
                    written.iter().any(|p| p.ends_with("/echo/1/tool.json")),
                    "{written:?}"
                );
            }
        }
        env.run(&["validate"]).success();
    }
}

#[test]
fn mcp_import_gives_a_name_that_differs_only_by_case_a_slug_of_its_own() {
    // A server listing `echo` and `Echo`: slug folders `echo` and `Echo` would be one folder on
    // macOS and Windows (validate's case-collision, which tool put refuses), so `Echo` becomes
    // `Echo-2`, the whole import is written, and the catalog validates without a warning.
    let env = TestEnv::new();
    let mut server = stdio_server("stdio");
    server["env"] = json!({ "VARIANT": "case" });
    declare(&env, json!({ "fx": server }));
    let imported = env.json(&["mcp", "import", "fx"]);
    let added: Vec<(String, String)> = imported["added"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_owned(),
                a["ref"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        added.contains(&("echo".to_owned(), "fx/echo@1".to_owned())),
        "{added:?}"
    );
    assert!(
        added.contains(&("Echo".to_owned(), "fx/Echo-2@1".to_owned())),
        "{added:?}"
    );
    let validated = env.run(&["validate"]);
    validated.success();
    assert!(!validated.stdout.contains("case-collision"), "{validated}");
    assert!(!validated.stderr.contains("case-collision"), "{validated}");
    // The import again: nothing new, the same slugs.
    let again = env.json(&["mcp", "import", "fx"]);
    assert_eq!(again["added"], json!([]), "{again}");
}

#[test]
fn mcp_import_keeps_clear_of_a_slug_folder_in_any_case_even_one_with_no_tool() {
    // A slug folder `ECHO` whose tool.json is gone (a killed write, a hand edit): the server's
    // `echo` would be the same folder on macOS and Windows, so it becomes `echo-2`.
    let env = TestEnv::new();
    let id = env.bundle("fx");
    std::fs::create_dir_all(env.bundle_dir(&id).join("tools/ECHO/1")).unwrap();
    declare(&env, json!({ "fx": stdio_server("stdio") }));
    let imported = env.json(&["mcp", "import", "fx"]);
    let refs: Vec<&str> = imported["added"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["ref"].as_str().unwrap())
        .collect();
    assert!(refs.contains(&"fx/echo-2@1"), "{refs:?}");
}

#[test]
fn mcp_import_refuses_a_server_whose_pages_never_end_or_that_lists_too_many_tools() {
    // A server repeating a cursor would be asked for pages (and grow memory) until the
    // timeout; one listing more than 20,000 tools is refused as a bundle archive of that many
    // files is. Both fail at once (UPSTREAM_ERROR, exit 7) and write nothing; distinct cursors
    // are followed to the end.
    let env = TestEnv::new();
    let server = pages_server;
    declare(
        &env,
        json!({
            "loop": server(&["same-cursor"]),
            "flood": server(&["many", "20001"]),
            "paged": server(&["pages", "3"]),
        }),
    );
    let started = Instant::now();
    let refused = env.json_error(&["mcp", "import", "loop"], 7);
    assert_eq!(refused.error.code, "UPSTREAM_ERROR");
    assert!(
        refused
            .error
            .message
            .contains("sent the cursor 'again' a second time"),
        "{}",
        refused.error.message
    );
    let refused = env.json_error(&["mcp", "import", "flood"], 7);
    assert!(
        refused
            .error
            .message
            .contains("listed more than 20000 tools"),
        "{}",
        refused.error.message
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "not at the timeout"
    );
    assert!(crate::common::find_files(env.catalog(), "tool.json").is_empty());
    let paged = import(&env, "paged", &[]);
    assert_eq!(paged["listed"], 3, "{paged}");
    assert_eq!(
        refs(&paged["added"]),
        ["paged/t0@1", "paged/t1@1", "paged/t2@1"]
    );
}

/// An `mcpServers` entry starting tests/fixtures/mcp/pages.py (a bare JSON-RPC server, for
/// hostile lists) with `args`.
fn pages_server(args: &[&str]) -> Value {
    let pages = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/pages.py");
    let mut command = vec![json!(mcp_clients::python()), json!(pages)];
    command.extend(args.iter().map(|a| json!(a)));
    json!({ "command": command, "timeoutMs": 60000 })
}

#[test]
fn mcp_import_reads_at_most_20000_pages_empty_ones_included() {
    // Empty pages, each with a new cursor, hold no tool for the tool cap to stop: the page cap
    // does. 20,000 pages (19,999 empty, then one tool) are read to the end; 20,001 are refused
    // at once (UPSTREAM_ERROR, exit 7) and write nothing. About 5 s each on a debug build.
    let env = TestEnv::new();
    declare(
        &env,
        json!({
            "most": pages_server(&["empty", "19999"]),
            "over": pages_server(&["empty", "20000"]),
        }),
    );
    let refused = env.json_error(&["mcp", "import", "over"], 7);
    assert_eq!(refused.error.code, "UPSTREAM_ERROR");
    assert_eq!(
        refused.error.message,
        "MCP server 'over' failed tools/list: it sent more than 20000 pages, the most toolctl reads"
    );
    assert!(crate::common::find_files(env.catalog(), "tool.json").is_empty());
    let most = import(&env, "most", &[]);
    assert_eq!(most["listed"], 1, "{most}");
    assert_eq!(refs(&most["added"]), ["most/t@1"]);
}

#[test]
fn mcp_import_takes_the_first_of_two_tools_of_one_name_and_says_so() {
    let env = TestEnv::new();
    declare(&env, json!({ "fx": pages_server(&["twins"]) }));
    let run = env.run(&["--json", "mcp", "import", "fx"]);
    run.success();
    let doc = run.json();
    assert_eq!(
        refs(&doc["added"]),
        ["fx/other0@1", "fx/other1@1", "fx/twin@1"],
        "{doc}"
    );
    assert_eq!(
        doc["skipped"],
        json!([{
            "name": "twin",
            "page": 2,
            "pointer": "/tools/0/name",
            "message": "a second tool of this name (the first, kept, is at tools/list page 1, /tools/0); a call names one tool",
        }]),
        "{doc}"
    );
    assert!(
        run.stderr
            .contains("skipped tool 'twin' (tools/list page 2"),
        "{run}"
    );
    let tool = env.json(&["tool", "get", "fx/twin@1"]);
    assert_eq!(tool["description"], "twin of page 1", "{tool}");
}

#[test]
fn mcp_import_skips_what_is_no_mcp_tool_naming_server_tool_and_field() {
    // A server listing tools the SDK cannot read (an inputSchema that is a string, an array or
    // missing, a name that is no string, …) would fail its whole page as an "unexpected
    // response type", naming nothing. Each is skipped instead, named with its page and JSON
    // pointer, and the rest imported; versions imported before of a skipped tool stay.
    let env = TestEnv::new();
    declare(&env, json!({ "fx": pages_server(&["fixed"]) }));
    let before = import(&env, "fx", &[]);
    assert_eq!(refs(&before["added"]).len(), 6, "{before}");

    declare(&env, json!({ "fx": pages_server(&["broken"]) }));
    let run = env.run(&["--json", "mcp", "import", "fx"]);
    run.success();
    let doc = run.json();
    assert_eq!(doc["listed"], 8, "{doc}");
    assert_eq!(refs(&doc["added"]), Vec::<String>::new());
    assert_eq!(refs(&doc["changed"]), Vec::<String>::new());
    assert_eq!(refs(&doc["unchanged"]), ["fx/good@1"]);
    // Imported before and listed broken now: not vanished.
    assert_eq!(refs(&doc["vanished"]), Vec::<String>::new());
    let skipped = |name: Value, page: u64, pointer: &str, message: &str| json!({ "name": name, "page": page, "pointer": pointer, "message": message });
    let string = "must be a string, and is a number";
    assert_eq!(
        doc["skipped"],
        json!([
            skipped(
                json!("str-schema"),
                1,
                "/tools/1/inputSchema",
                "must be an object, and is a string"
            ),
            skipped(
                json!("list-schema"),
                1,
                "/tools/2/inputSchema",
                "must be an object, and is an array"
            ),
            skipped(
                json!("no-schema"),
                2,
                "/tools/0/inputSchema",
                "is missing (an object)"
            ),
            skipped(Value::Null, 2, "/tools/1/name", string),
            skipped(
                Value::Null,
                2,
                "/tools/2",
                "must be an object, and is a string"
            ),
            skipped(
                json!("bad-annotations"),
                2,
                "/tools/3/annotations",
                "must be an object, and is a string"
            ),
            skipped(
                json!("bad-icons"),
                2,
                "/tools/4",
                "is no MCP tool the SDK can read: invalid type: number, expected a sequence"
            ),
        ]),
        "{doc}"
    );
    // Each is a warning on stderr naming the server, the tool and the field.
    for line in [
        "warning: MCP server 'fx': skipped tool 'str-schema' (tools/list page 1, /tools/1/inputSchema): must be an object, and is a string",
        "warning: MCP server 'fx': skipped a tool (tools/list page 2, /tools/1/name): must be a string, and is a number",
    ] {
        assert!(run.stderr.lines().any(|l| l == line), "{line}\n{run}");
    }
    assert_eq!(run.stderr.lines().count(), 7, "{run}");

    // Into a new bundle: only the tool that is one, and the summary counts the rest.
    let run = env.run(&["mcp", "import", "fx", "--bundle", "fresh"]);
    run.success();
    assert!(
        run.stdout.starts_with(
            "Imported MCP server 'fx' into bundle fresh: 8 listed, 1 added, 0 changed, 0 unchanged, 0 vanished, 7 skipped"
        ),
        "{run}"
    );
    assert_eq!(env.refs(&["--bundle", "fresh"]), ["fresh/good@1"]);
    // What `invoke` asks (tools/call) never lists tools: a tool of that server still runs.
    let (code, doc) = invoke(&env, "fx/str-schema", json!({}));
    assert_eq!(
        (code, &doc["value"]),
        (0, &json!("called str-schema")),
        "{doc}"
    );
    env.run(&["validate"]).success();
}

/// A server's argument names outside Anthropic's `^[a-zA-Z0-9_.-]{1,64}$` (OData's `$top`, a
/// `filter[id]`) are MCP's to allow: the tool is imported and runs, and only an export to
/// Anthropic refuses it.
#[test]
fn mcp_import_keeps_a_tool_whose_argument_names_only_anthropic_refuses() {
    let env = TestEnv::new();
    declare(&env, json!({ "fx": pages_server(&["keys"]) }));
    let doc = import(&env, "fx", &[]);
    assert_eq!(refs(&doc["added"]), ["fx/odata@1"], "{doc}");
    let (code, called) = invoke(&env, "fx/odata", json!({ "$top": 5, "filter[id]": "x" }));
    assert_eq!(
        (code, &called["value"]),
        (0, &json!("called odata")),
        "{called}"
    );
    let list = env.json(&["export", "--provider", "mcp", "--tool", "fx/odata"]);
    assert_eq!(
        list[0]["inputSchema"]["properties"]["$top"]["type"], "integer",
        "{list}"
    );
    let refused = env.json_error(
        &["export", "--provider", "anthropic", "--tool", "fx/odata"],
        3,
    );
    let problems = &refused.error.details["tools"][0]["problems"];
    assert_eq!(
        problems[0]["pointer"], "/argSchema/properties/$top",
        "{problems}"
    );
    assert_eq!(
        problems[1]["pointer"], "/argSchema/properties/filter[id]",
        "{problems}"
    );
}

#[test]
fn mcp_import_refuses_an_unknown_or_broken_server_and_writes_nothing() {
    let env = TestEnv::new();
    declare(&env, json!({ "dead": stdio_server("exit") }));
    let error = env.json_error(&["mcp", "import", "ghost"], 4);
    assert_eq!(error.error.code, "NOT_FOUND");
    assert!(
        error.error.message.contains("MCP server 'ghost' not found"),
        "{}",
        error.error.message
    );
    let error = env.json_error(&["mcp", "import", "dead"], 7);
    assert_eq!(error.error.code, "UPSTREAM_ERROR");
    assert!(
        error.error.message.starts_with("MCP server 'dead'"),
        "{}",
        error.error.message
    );
    assert!(env.bundle_list(&[]).items.iter().all(|b| b.slug != "dead"));
}

/// An `mcpServers` entry serving `env`'s catalog with `toolctl mcp serve ARGS` over stdio.
pub(crate) fn toolctl_server(env: &TestEnv, args: &[&str]) -> Value {
    let mut command = vec![
        json!(crate::common::bin()),
        json!("--catalog"),
        json!(env.catalog()),
        json!("mcp"),
        json!("serve"),
    ];
    command.extend(args.iter().map(|a| json!(a)));
    json!({ "command": command, "env": { "TOOLCTL_WATCH": "never", "XDG_DATA_HOME": env.xdg_data() } })
}

#[test]
fn mcp_import_follows_every_page_and_streamable_http() {
    // A server with more tools than a page: another catalog served by `toolctl mcp serve`.
    let source = TestEnv::new();
    source.bundle("clock");
    for i in 0..5 {
        source.put_tool(
            "clock",
            &crate::common::tool_doc_with(
                &format!("time-{i}"),
                "v1",
                json!({ "description": format!("Tell the time {i}") }),
            ),
        );
    }
    let exported = crate::test_mcp::exported(&source, &["--bundle", "clock"]);
    assert_eq!(exported.len(), 5);

    let http = HttpServer::start("1");
    let env = TestEnv::new();
    declare(
        &env,
        json!({
            "paged": toolctl_server(&source, &["--mode", "all", "--bundle", "clock", "--page-size", "2"]),
            "web": { "url": http.url() },
        }),
    );
    env.edit_config(|config| config["allowedHosts"] = json!([format!("127.0.0.1:{}", http.port)]));
    let paged = import(&env, "paged", &["--bundle", "served"]);
    assert_eq!(paged["listed"], 5, "three pages of two");
    assert_eq!(refs(&paged["added"]).len(), 5);
    // A tool imported from toolctl calls back through it.
    let name = exported[0]["name"].as_str().unwrap();
    let slug = refs(&paged["added"])
        .into_iter()
        .find(|r| r.contains(&name.replace('_', "-")))
        .unwrap_or_else(|| panic!("{name} in {paged}"));
    let (code, doc) = invoke(&env, slug.trim_end_matches("@1"), json!({}));
    assert_eq!(code, 0, "{doc}");
    assert!(
        doc["value"].is_object() || doc["value"].is_string(),
        "{doc}"
    );

    let web = import(&env, "web", &[]);
    assert_eq!(
        refs(&web["added"]),
        [
            "web/add@1",
            "web/echo@1",
            "web/env@1",
            "web/fail@1",
            "web/slow@1"
        ]
    );
    let (code, doc) = invoke(&env, "web/echo", json!({ "text": "over http" }));
    assert_eq!((code, &doc["value"]), (0, &json!("over http")), "{doc}");
}

/// The outcome of `tools/call` as the Python client sees it, through `command`.
/// The command line of `mcp serve --mode all` over `env`'s catalog.
fn serve_all(env: &TestEnv) -> Value {
    json!([
        crate::common::bin(),
        "--catalog",
        env.catalog(),
        "mcp",
        "serve",
        "--mode",
        "all",
        "--quiet"
    ])
}

fn call_through(env: &TestEnv, command: Value, calls: &[(&str, Value)]) -> Vec<Value> {
    let steps: Vec<Value> = calls
        .iter()
        .map(|(name, arguments)| json!({ "op": "call", "name": name, "arguments": arguments }))
        .collect();
    let plan = json!({
        "command": command,
        "env": crate::test_mcp::server_env(env),
        "cwd": env.work(),
        "mode": "legacy",
        "steps": steps,
    });
    crate::test_mcp::run_driver(env, &plan).steps
}

/// The exported name `mcp serve` gives `bundle/slug`.
pub(crate) fn served_name(env: &TestEnv, bundle: &str, slug: &str) -> String {
    let exported = crate::test_mcp::exported(env, &["--bundle", bundle]);
    exported
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .find(|n| n.ends_with(&slug.replace('-', "_")) || n.ends_with(slug))
        .unwrap_or_else(|| panic!("no exported name for {bundle}/{slug}: {exported:?}"))
}

#[test]
fn round_trip_imported_tools_served_again_answer_as_the_server_does() {
    let env = TestEnv::new();
    declare(&env, json!({ "fx": stdio_server("stdio") }));
    import(&env, "fx", &[]);
    let calls = [
        ("add", json!({ "a": 3, "b": 4 })),
        ("echo", json!({ "text": "round trip" })),
        ("fail", json!({ "reason": "both ways" })),
    ];
    let direct = call_through(
        &env,
        json!([mcp_clients::python(), fixture_server(), "stdio"]),
        &calls,
    );
    let served_calls: Vec<(String, Value)> = calls
        .iter()
        .map(|(name, args)| (served_name(&env, "fx", name), args.clone()))
        .collect();
    let served_refs: Vec<(&str, Value)> = served_calls
        .iter()
        .map(|(n, a)| (n.as_str(), a.clone()))
        .collect();
    let mut serve = vec![
        json!(crate::common::bin()),
        json!("--catalog"),
        json!(env.catalog()),
        json!("mcp"),
        json!("serve"),
        json!("--mode"),
        json!("all"),
    ];
    serve.push(json!("--quiet"));
    let served = call_through(&env, json!(serve), &served_refs);
    assert_eq!(direct.len(), 3);
    // add: the same structured content; echo: the same text; fail: an error both ways.
    assert_eq!(
        served[0]["structuredContent"], direct[0]["structuredContent"],
        "{served:?} vs {direct:?}"
    );
    assert_eq!(served[0]["isError"], false);
    assert_eq!(
        served[1]["text"], direct[1]["text"],
        "{served:?} vs {direct:?}"
    );
    assert_eq!(
        (
            served[2]["isError"].as_bool(),
            direct[2]["isError"].as_bool()
        ),
        (Some(true), Some(true))
    );
    let served_text = served[2]["text"][0].as_str().unwrap();
    let direct_text = direct[2]["text"][0].as_str().unwrap();
    assert!(
        served_text.contains(direct_text),
        "{served_text} / {direct_text}"
    );
}

#[test]
fn server_everything_over_stdio_imports_and_answers_as_directly() {
    let env = TestEnv::new();
    let everything = mcp_clients::everything();
    declare(
        &env,
        json!({ "everything": { "command": [everything, "stdio"] } }),
    );
    let imported = import(&env, "everything", &["--bundle", "ev"]);
    let added = refs(&imported["added"]);
    for expected in ["ev/echo@1", "ev/get-sum@1", "ev/get-structured-content@1"] {
        assert!(added.contains(&expected.to_owned()), "{added:?}");
    }
    let (code, doc) = invoke(&env, "ev/echo", json!({ "message": "hi" }));
    assert_eq!((code, &doc["value"]), (0, &json!("Echo: hi")), "{doc}");
    let (code, doc) = invoke(
        &env,
        "ev/get-structured-content",
        json!({ "location": "New York" }),
    );
    assert_eq!(code, 0, "{doc}");
    // Round trip: served by toolctl, called by the Python client, as the server answers.
    let calls = [
        ("get-sum", json!({ "a": 2, "b": 5 })),
        ("get-structured-content", json!({ "location": "New York" })),
    ];
    let direct = call_through(&env, json!([everything, "stdio"]), &calls);
    let named: Vec<(String, Value)> = calls
        .iter()
        .map(|(n, a)| (served_name(&env, "ev", n), a.clone()))
        .collect();
    let named: Vec<(&str, Value)> = named.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
    let serve = serve_all(&env);
    let served = call_through(&env, serve, &named);
    assert_eq!(
        served[0]["text"], direct[0]["text"],
        "{served:?} vs {direct:?}"
    );
    assert_eq!(
        served[1]["structuredContent"], direct[1]["structuredContent"],
        "{served:?} vs {direct:?}"
    );
    assert!(
        served[1]["structuredContent"]["conditions"].is_string(),
        "{served:?}"
    );
}

/// Whether process `pid` is gone (or a zombie, dead but not yet reaped), waiting up to 10 s.
fn gone_soon(pid: u32) -> bool {
    gone_soon_within(pid, Duration::from_secs(10))
}

fn gone_soon_within(pid: u32, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let gone = stat.is_empty()
            || stat
                .rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
        if gone || Instant::now() > deadline {
            return gone;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// "PID CHILD" as the pid tool says it.
fn pids_of(text: &str) -> Vec<u32> {
    let pids: Vec<u32> = text
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    assert_eq!(pids.len(), 2, "two process ids in {text:?}");
    pids
}

/// A catalog with the fixture server `fx` (its `pid` and `die` tools) as `mcp/pid`, `mcp/die`.
fn lifecycle_env() -> TestEnv {
    let env = TestEnv::new();
    env.bundle("mcp");
    let mut server = stdio_server("stdio");
    server["env"] = json!({ "LIFECYCLE": "1" });
    declare(&env, json!({ "fx": server }));
    mcp_tool(&env, "pid", "fx", "pid", any_object());
    mcp_tool(&env, "die", "fx", "die", any_object());
    env
}

#[test]
fn a_batch_starts_a_stdio_server_once_and_ends_it_with_the_batch() {
    let env = lifecycle_env();
    let calls: Vec<Value> = (0..4)
        .map(|i| json!({ "call_id": format!("{i}"), "name": "mcp/pid", "arguments": {} }))
        .collect();
    let run = env.run_stdin(
        &["--json", "invoke", "--batch", "-"],
        &json!({ "calls": calls }).to_string(),
    );
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|_| panic!("{}{}", run.stdout, run.stderr));
    let text = doc.to_string();
    // Every call's value is the server's process id: one server for the four calls.
    let pids: Vec<Vec<u32>> = (0..4)
        .map(|i| {
            let found = doc["results"]
                .as_array()
                .and_then(|items| items.iter().find(|c| c["call_id"] == format!("{i}")))
                .unwrap_or_else(|| panic!("call {i} in {text}"));
            // The call's value ("output", or "value" in the newer shape).
            let said = found["output"].as_str().or(found["value"].as_str());
            said.map(pids_of)
                .unwrap_or_else(|| panic!("process ids in {found}"))
        })
        .collect();
    assert!(pids.iter().all(|p| *p == pids[0]), "{pids:?}: {text}");
    for pid in &pids[0] {
        assert!(gone_soon(*pid), "process {pid} outlived the batch");
    }
}

#[test]
fn mcp_serve_keeps_one_server_restarts_it_once_it_died_and_ends_it_on_exit() {
    let env = lifecycle_env();
    let (pid, die) = (
        served_name(&env, "mcp", "pid"),
        served_name(&env, "mcp", "die"),
    );
    let serve = serve_all(&env);
    let steps = call_through(
        &env,
        serve,
        &[
            (&pid, json!({})),
            (&pid, json!({})),
            (&die, json!({})),
            (&pid, json!({})),
            (&pid, json!({})),
        ],
    );
    let text = |i: usize| steps[i]["text"][0].as_str().unwrap_or_default().to_owned();
    let first = pids_of(&text(0));
    assert_eq!(
        text(1),
        text(0),
        "the second call reuses the server: {steps:?}"
    );
    assert_eq!(steps[2]["isError"], true, "{steps:?}");
    assert!(
        text(2).contains("UPSTREAM_ERROR: MCP server 'fx'"),
        "{}",
        text(2)
    );
    let second = pids_of(&text(3));
    assert_ne!(second, first, "a new server after the first died");
    assert_eq!(text(4), text(3), "{steps:?}");
    // The client is gone, so is serve, and so is every process of the servers it started:
    // the one that died left its child behind, the one it kept had its own.
    for pid in first.iter().chain(&second) {
        assert!(gone_soon(*pid), "process {pid} outlived mcp serve");
    }
}

#[test]
fn mcp_serve_ends_the_servers_it_kept_on_sigterm() {
    use std::io::{BufRead, BufReader, Write};
    let env = lifecycle_env();
    let pid = served_name(&env, "mcp", "pid");
    let mut serve = env
        .command(&["mcp", "serve", "--mode", "all", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    let mut lines = BufReader::new(serve.stdout.take().unwrap()).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": pid, "arguments": {}}}),
    ];
    for message in &messages {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let answer: Value = loop {
        let line = lines.next().expect("serve answered").unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            break message;
        }
    };
    let said = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let pids = pids_of(said);
    assert!(
        !gone_soon_within(pids[0], Duration::ZERO),
        "the server runs between calls"
    );
    // SIGTERM, with standard input still open.
    let serve_pid = rustix::process::Pid::from_raw(serve.id() as i32).unwrap();
    rustix::process::kill_process(serve_pid, rustix::process::Signal::TERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while serve.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "mcp serve did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    for pid in pids {
        assert!(gone_soon(pid), "process {pid} outlived mcp serve");
    }
}

#[test]
fn a_server_that_exits_during_a_call_fails_it_at_once_even_when_its_child_holds_the_pipe() {
    let env = lifecycle_env();
    let started = Instant::now();
    let doc = fails(&env, "mcp/die", json!({}), 7, "UPSTREAM_ERROR");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains("exited"), "{message}");
    assert!(message.contains("exit status: 9"), "{message}");
    // Far below the 30 s timeout: the exit is seen, not waited out.
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_relative_cwd_and_program_path_are_taken_from_the_catalog_root() {
    let env = TestEnv::new();
    env.bundle("mcp");
    let catalog = env.catalog().canonicalize().unwrap();
    std::fs::create_dir_all(catalog.join("servers/data")).unwrap();
    // A wrapper script beside toolctl.json, named by a relative path.
    let script = catalog.join("servers/fx.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec '{}' '{}' \"$@\"\n",
            mcp_clients::python().display(),
            fixture_server().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    declare(
        &env,
        json!({ "fx": {
            "command": ["./servers/fx.sh", "stdio"],
            "cwd": "servers/data",
            "env": { "LIFECYCLE": "1" },
        }}),
    );
    mcp_tool(&env, "cwd", "fx", "cwd", any_object());
    // toolctl runs elsewhere: neither path is taken from there.
    let elsewhere = tempfile::tempdir().unwrap();
    let output = env
        .command(&["--json", "invoke", "mcp/cwd", "--args", "{}"])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&output.stderr)));
    assert_eq!(
        doc["value"].as_str().map(PathBuf::from),
        Some(catalog.join("servers/data")),
        "{doc}"
    );
}

/// Regression: an answer the SDK cannot parse (100,000 nested arrays) was dropped by it, and the
/// import waited the whole timeout to say "did not answer".
#[test]
fn an_answer_that_cannot_be_parsed_fails_at_once_and_says_why() {
    let env = TestEnv::new();
    let mut deep = pages_server(&["deep"]);
    deep["timeoutMs"] = json!(15000);
    declare(&env, json!({ "deep": deep }));
    let started = std::time::Instant::now();
    let refused = env.json_error(&["mcp", "import", "deep"], 7);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(refused.error.code, "UPSTREAM_ERROR");
    let message = &refused.error.message;
    assert!(
        message.starts_with("MCP server 'deep' failed ")
            && message.contains(
                ": its answer could not be read as JSON (recursion limit exceeded at line 1 column "
            ),
        "{message}"
    );
}

/// A server's log lines on stdout that start with `{` but are not JSON (Python's print of a
/// dict, Node's console.log of an object) are dropped as the SDK drops them, not taken for an
/// answer that cannot be read, which would fail every call of such a server.
#[test]
fn log_lines_that_start_with_a_brace_do_not_fail_the_call() {
    let env = TestEnv::new();
    let mut logs = pages_server(&["logs", "2"]);
    logs["timeoutMs"] = json!(15000);
    declare(&env, json!({ "logs": logs }));
    let imported = env.json(&["mcp", "import", "logs"]);
    assert_eq!(
        imported["added"].as_array().map(Vec::len),
        Some(2),
        "{imported}"
    );
    let called = env.json(&["invoke", "logs/t0"]);
    assert_eq!(called["value"], "called t0", "{called}");
}
