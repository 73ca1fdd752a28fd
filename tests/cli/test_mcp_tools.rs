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

fn fixture_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/server.py")
}

/// An `mcpServers` entry starting the fixture server in `mode` over stdio.
fn stdio_server(mode: &str) -> Value {
    json!({ "command": [mcp_clients::python(), fixture_server(), mode] })
}

/// Declare `servers` in the catalog's `toolctl.json`.
fn declare(env: &TestEnv, servers: Value) {
    env.edit_config(|config| config["mcpServers"] = servers);
}

/// A tool of server `server` named `tool` on it, put in bundle `mcp` as `slug@1`.
fn mcp_tool(env: &TestEnv, slug: &str, server: &str, tool: &str, arg_schema: Value) {
    env.put_tool(
        "mcp",
        &json!({
            "slug": slug, "version": "1", "type": "mcp",
            "impl": { "server": server, "tool": tool },
            "argSchema": arg_schema,
        }),
    );
}

fn any_object() -> Value {
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
    let (code, doc) = invoke(&env, "mcp/nope", json!({}));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (7, Some("UPSTREAM_ERROR")),
        "{doc}"
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MCP server 'fx'"),
        "{doc}"
    );

    // The arguments are checked against argSchema before the server is reached.
    let (code, doc) = invoke(&env, "mcp/add", json!({ "a": "two" }));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (3, Some("VALIDATION_ERROR")),
        "{doc}"
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

    let (code, doc) = invoke(&env, "mcp/dead", json!({}));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (7, Some("UPSTREAM_ERROR")),
        "{doc}"
    );
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

    let (code, doc) = invoke(&env, "mcp/missing", json!({}));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (7, Some("UPSTREAM_ERROR")),
        "{doc}"
    );
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
    let (code, doc) = invoke(&env, "mcp/slow", json!({ "seconds": 60 }));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (7, Some("TIMEOUT")),
        "{doc}"
    );
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

    let (code, doc) = invoke(&env, "mcp/env", json!({ "name": "TOKEN" }));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (3, Some("VALIDATION_ERROR")),
        "{doc}"
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
    // toolctl's own secrets never reach the server's environment.
    let (_, doc) = invoke_with(
        &env,
        "mcp/env",
        json!({ "name": "TOOLCTL_SECRET_FX_TOKEN" }),
        &[("TOOLCTL_SECRET_FX_TOKEN", secret)],
    );
    assert_eq!(doc["value"], "<unset>");
}

/// The fixture server over Streamable HTTP on 127.0.0.1, killed when dropped.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    fn start(variant: &str) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(mcp_clients::python())
            .arg(fixture_server())
            .args(["http", &port.to_string()])
            .env("VARIANT", variant)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
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

    fn url(&self) -> String {
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
    let (code, doc) = invoke(&env, "mcp/add", json!({ "a": 1, "b": 2 }));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (6, Some("HOST_NOT_ALLOWED")),
        "{doc}"
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
    let (code, doc) = invoke(&env, "mcp/fail", json!({ "reason": "over http" }));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (7, Some("UPSTREAM_ERROR")),
        "{doc}"
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over http")
    );

    // A server that is not there (any more).
    drop(server);
    let (code, doc) = invoke(&env, "mcp/add", json!({ "a": 1, "b": 2 }));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (7, Some("UPSTREAM_ERROR")),
        "{doc}"
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
    declare(
        &env,
        json!({ "fx": stdio_server("stdio"), "both": { "command": ["x"], "url": "http://127.0.0.1/" } }),
    );
    mcp_tool(&env, "ok", "fx", "add", any_object());
    // A tool naming an undeclared server is put (the config may come later) but unavailable.
    mcp_tool(&env, "ghost", "ghost", "add", any_object());
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
    let (code, doc) = invoke(&env, "mcp/ghost", json!({}));
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (6, Some("TOOL_DISABLED")),
        "{doc}"
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'ghost' is not declared"),
        "{doc}"
    );
}
