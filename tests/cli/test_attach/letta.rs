//! `attach` and `agent list|show|detach` on a real Letta server (`common::letta`): catalog
//! tools Letta lacks are registered as tools of toolctl's own `mcp serve --http`, which Letta
//! calls; the phases and limits act on the agent's tools as Letta lists them; every failure
//! names the agent and the route, and changes nothing.

use super::attach_run;
use crate::common::letta::{self, Letta};
use crate::common::{Run, TestEnv};
use serde_json::{Value, json};
use std::io::BufRead;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The token of the test's `mcp serve --http`.
const TOKEN: &str = "letta-test-token-0123456789abcdef";

/// `toolctl mcp serve --mode all --http 127.0.0.1:0` on `env`'s catalog, once it listens.
struct McpServe {
    child: Child,
    port: u16,
}

impl McpServe {
    fn start(env: &TestEnv) -> Self {
        let mut child = env
            .command(&[
                "mcp",
                "serve",
                "--mode",
                "all",
                "--http",
                "127.0.0.1:0",
                "--token-env",
                "LETTA_TEST_MCP_TOKEN",
            ])
            .env("LETTA_TEST_MCP_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tell, listening) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let address = rest.split('/').next().unwrap_or_default().to_owned();
                    let _ = tell.send(address.rsplit(':').next().unwrap_or_default().to_owned());
                }
            }
        });
        let port = listening
            .recv_timeout(Duration::from_secs(30))
            .unwrap()
            .parse()
            .unwrap();
        Self { child, port }
    }
}

impl Drop for McpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Point `env`'s catalog at `letta`, with toolctl's MCP server at `mcp` (named `server` in
/// Letta) when given.
fn use_letta(env: &TestEnv, letta: &Letta, mcp: Option<(&str, u16)>) {
    env.edit_config(|c| {
        c["allowedHosts"]
            .as_array_mut()
            .unwrap()
            .push(format!("127.0.0.1:{}", letta.port).into());
        let mut config = json!({ "url": letta.url });
        if let Some((name, port)) = mcp {
            config["mcpServer"] = json!({
                "name": name,
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "tokenSecret": "LETTA_TEST_MCP"
            });
        }
        c["agents"] = json!({ "backend": "letta", "letta": config });
    });
}

fn attach(env: &TestEnv, agent: &str, args: &[&str], vars: &[(&str, &str)]) -> (Run, Value) {
    let mut all = vec![("TOOLCTL_SECRET_LETTA_TEST_MCP", TOKEN)];
    all.extend_from_slice(vars);
    let run = attach_run(env, agent, args, &all);
    let doc = run.json();
    (run, doc)
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn attach_on_letta_registers_catalog_tools_through_mcp_serve_and_keeps_the_limits() {
    let Some(letta) = letta::server() else { return };
    let env = TestEnv::fixture();
    let mcp = McpServe::start(&env);
    let server = format!("toolctl-test-{}", std::process::id());
    use_letta(&env, letta, Some((&server, mcp.port)));
    // Letta knows the server already, with a stale URL and token: attach updates both.
    letta.call(
        reqwest::Method::PUT,
        "/v1/tools/mcp/servers",
        Some(json!({
            "server_name": server, "type": "streamable_http",
            "server_url": "http://127.0.0.1:9/mcp",
            "auth_header": "Authorization", "auth_token": "Bearer stale-token-0123456789"
        })),
    );
    let agent = letta.new_agent("weather-agent");
    let core_before = letta.tool_names(&agent);
    assert!(
        !core_before.is_empty(),
        "a new Letta agent has its core tools"
    );

    // Tools Letta lacks are registered through toolctl's MCP server and attached.
    let (run, doc) = attach(&env, &agent, &["--query", "weather forecast for Oslo"], &[]);
    run.success();
    let d = &doc["details"];
    assert_eq!(doc["success"], true, "{run}");
    assert_eq!(d["target_agent"], agent.as_str());
    assert_eq!(d["failed_attachments"], json!([]), "{run}");
    let attached = names(&d["successful_attachments"]);
    assert!(attached.contains(&"forecast".to_owned()), "{run}");
    let held = letta.tools(&agent);
    for a in d["successful_attachments"].as_array().unwrap() {
        let id = a["tool_id"].as_str().unwrap();
        assert!(id.starts_with("tool-"), "Letta's tool ID: {a}");
        let tool = held
            .iter()
            .find(|t| t["id"] == id)
            .unwrap_or_else(|| panic!("{a} is not on the Letta agent: {held:?}"));
        assert_eq!(tool["tool_type"], "external_mcp", "{tool}");
        assert_eq!(tool["name"], a["name"]);
    }
    for core in &core_before {
        assert!(letta.tool_names(&agent).contains(core), "{core} left");
    }
    assert_eq!(d["success_count"], attached.len());
    let servers = letta.call(reqwest::Method::GET, "/v1/tools/mcp/servers", None);
    assert_eq!(
        servers[&server]["server_url"],
        format!("http://127.0.0.1:{}/mcp", mcp.port)
    );
    assert_eq!(servers[&server]["auth_token"], format!("Bearer {TOKEN}"));

    // Letta calls an attached tool through toolctl's MCP server, so toolctl's invoke runs it:
    // its schema check refuses arguments the tool does not take.
    let execute = |tool: &str, args: Value| {
        letta.call(
            reqwest::Method::POST,
            &format!("/v1/tools/mcp/servers/{server}/tools/{tool}/execute"),
            Some(json!({ "args": args })),
        )
    };
    let refused = execute("forecast", json!({}));
    assert_eq!(refused["success"], false, "{refused}");
    assert!(
        refused["result"].as_str().unwrap().starts_with(
            "VALIDATION_ERROR: weather/forecast@v2.1: schema check of the arguments failed"
        ),
        "{refused}"
    );
    let now = execute("now", json!({}));
    assert_eq!(now["success"], true, "{now}");
    assert!(now["result"].as_str().unwrap().contains("\"utc\""), "{now}");

    // `agent show` and `agent list` read the agent from Letta, catalog tools by their refs.
    let show = env.json(&["agent", "show", &agent]);
    let shown: Vec<&Value> = show["tools"].as_array().unwrap().iter().collect();
    assert_eq!(shown.len(), core_before.len() + attached.len(), "{show}");
    let forecast = shown.iter().find(|t| t["name"] == "forecast").unwrap();
    assert_eq!(forecast["ref"], "weather/forecast@v2.1");
    assert_eq!(forecast["kind"], "external");
    assert_eq!(forecast["status"], "ok");
    assert!(
        shown
            .iter()
            .filter(|t| t["kind"] == "core")
            .all(|t| t["ref"].is_null()),
        "{show}"
    );
    let list = env.json(&["agent", "list"]);
    let item = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["agentID"] == agent.as_str())
        .unwrap_or_else(|| panic!("{agent} not listed: {list}"));
    assert_eq!(item["external"], attached.len());
    assert_eq!(item["core"], core_before.len());

    // Another task: what it does not match leaves (MIN_MCP_TOOLS 0), a kept tool stays, the
    // core tools stay, and the new tools arrive.
    let kept = d["successful_attachments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "current-conditions")
        .map(|a| a["tool_id"].as_str().unwrap().to_owned())
        .expect("current-conditions attached");
    let (run, doc) = attach(
        &env,
        &agent,
        &["--query", "open a github issue", "--keep", &kept],
        &[("MIN_MCP_TOOLS", "0")],
    );
    run.success();
    let d = &doc["details"];
    let now = letta.tool_names(&agent);
    assert!(!now.contains(&"forecast".to_owned()), "{run}");
    assert!(now.contains(&"current-conditions".to_owned()), "{run}");
    assert!(now.contains(&"create-issue".to_owned()), "{run}");
    for core in &core_before {
        assert!(now.contains(core), "{core} left\n{run}");
    }
    assert_eq!(d["preserved_tools"], json!([kept]), "{run}");
    let detached: Vec<&str> = d["detached_tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(!detached.is_empty() && detached.iter().all(|t| t.starts_with("tool-")));
    assert_eq!(d["failed_detachments"], json!([]));

    // Tools attached in one request count toward the limits, on Letta as on files.
    let other = letta.new_agent("limited-agent");
    let (run, doc) = attach(
        &env,
        &other,
        &["--query", "open a github issue", "--min-score", "0"],
        &[("MAX_MCP_TOOLS", "2"), ("MIN_MCP_TOOLS", "0")],
    );
    run.success();
    let d = &doc["details"];
    assert_eq!(d["success_count"], 2, "{run}");
    assert!(d["failure_count"].as_u64().unwrap() >= 1, "{run}");
    for f in d["failed_attachments"].as_array().unwrap() {
        assert_eq!(f["success"], false);
        assert!(
            f["error"]
                .as_str()
                .unwrap()
                .starts_with("over MAX_MCP_TOOLS=2"),
            "{f}"
        );
    }
    let external = letta
        .tools(&other)
        .iter()
        .filter(|t| !t["tool_type"].as_str().unwrap().starts_with("letta_"))
        .count();
    assert_eq!(external, 2);

    // A name protected by configuration stays on the agent when the task changes.
    let (run, _) = attach(
        &env,
        &agent,
        &["--query", "weather forecast for Oslo"],
        &[("MIN_MCP_TOOLS", "0")],
    );
    run.success();
    let (run, doc) = attach(
        &env,
        &agent,
        &["--query", "list pull requests"],
        &[
            ("MIN_MCP_TOOLS", "0"),
            ("NEVER_DETACH_TOOLS", "air-quality"),
        ],
    );
    run.success();
    let now = letta.tool_names(&agent);
    assert!(now.contains(&"air-quality".to_owned()), "{run}");
    assert!(!now.contains(&"forecast".to_owned()), "{run}");
    let air = letta
        .tools(&agent)
        .into_iter()
        .find(|t| t["name"] == "air-quality")
        .unwrap();
    assert!(
        doc["details"]["preserved_tools"]
            .as_array()
            .unwrap()
            .contains(&air["id"]),
        "{run}"
    );

    // By hand: `agent detach` by name.
    let run = env.run(&["--json", "agent", "detach", &agent, "list-pull-requests"]);
    run.success();
    assert_eq!(run.json()["detached"][0]["name"], "list-pull-requests");
    assert!(
        !letta
            .tool_names(&agent)
            .contains(&"list-pull-requests".to_owned())
    );
}

#[test]
fn letta_failures_name_the_agent_and_route_and_change_nothing() {
    let Some(letta) = letta::server() else { return };
    let env = TestEnv::fixture();
    use_letta(&env, letta, None);

    // An agent Letta does not have: NOT_FOUND in the contract's error shape, naming it.
    let missing = "agent-00000000-0000-4000-8000-000000000000";
    let (run, doc) = attach(&env, missing, &["--query", "weather"], &[]);
    run.failure(4);
    assert_eq!(doc["success"], false, "{run}");
    let error = doc["error"].as_str().unwrap();
    assert!(
        error.contains(missing) && error.contains("GET /v1/agents/"),
        "{error}"
    );
    let run = env.run(&["--json", "agent", "show", missing]);
    run.failure(4);
    assert_eq!(run.json()["error"]["code"], "NOT_FOUND");

    // Without toolctl's MCP server, a tool Letta lacks is one failed attachment, not an abort.
    let agent = letta.new_agent("no-server-agent");
    let before = letta.tool_names(&agent);
    let (run, doc) = attach(&env, &agent, &["--query", "weather forecast for Oslo"], &[]);
    run.success();
    let d = &doc["details"];
    assert_eq!(d["success_count"], 0, "{run}");
    let failed = d["failed_attachments"].as_array().unwrap();
    assert!(!failed.is_empty(), "{run}");
    for f in failed {
        assert!(
            f["error"]
                .as_str()
                .unwrap()
                .contains("agents.letta.mcpServer"),
            "{f}"
        );
    }
    assert_eq!(letta.tool_names(&agent), before);

    // A server that is down: UPSTREAM_ERROR naming the route; nothing is detached.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    env.edit_config(|c| {
        c["allowedHosts"]
            .as_array_mut()
            .unwrap()
            .push(format!("127.0.0.1:{closed}").into());
    });
    let down = format!("http://127.0.0.1:{closed}");
    let (run, doc) = attach(
        &env,
        &agent,
        &["--letta-url", &down, "--query", "weather"],
        &[],
    );
    run.failure(7);
    assert_eq!(doc["code"], "UPSTREAM_ERROR", "{run}");
    assert!(
        doc["error"]
            .as_str()
            .unwrap()
            .contains(&format!("GET /v1/agents/{agent}/tools")),
        "{run}"
    );
    assert_eq!(
        letta.tool_names(&agent),
        before,
        "nothing changed on the agent"
    );

    // A Letta URL whose host allowedHosts does not list is refused before any call.
    let run = env.run(&[
        "--json",
        "agent",
        "list",
        "--letta-url",
        "http://127.0.0.2:8283",
    ]);
    run.failure(3);
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("allowedHosts"),
        "{run}"
    );

    // `--backend files` still reads the catalog's agent files.
    let run = env.run(&["--json", "agent", "list", "--backend", "files"]);
    run.success();
    assert_eq!(run.json()["items"], json!([]));
}

#[test]
fn a_letta_backend_without_a_server_fails_validate() {
    let env = TestEnv::new();
    env.edit_config(|c| c["agents"] = json!({ "backend": "letta" }));
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    let findings = run.json()["findings"].clone();
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["pointer"] == "/agents/letta" && f["severity"] == "error"),
        "{findings}"
    );
    env.edit_config(|c| {
        c["agents"] = json!({ "backend": "letta", "letta": { "url": "http://letta.test:8283" } })
    });
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    assert!(
        run.stdout.contains("/agents/letta/url") && run.stdout.contains("allowedHosts"),
        "{run}"
    );
    // A Letta URL with the files backend is a contradiction on the command line.
    env.edit_config(|c| {
        c.as_object_mut().unwrap().remove("agents");
    });
    let run = env.run(&[
        "agent",
        "list",
        "--backend",
        "files",
        "--letta-url",
        "http://127.0.0.1:8283",
    ]);
    run.failure(2);
    assert!(run.stderr.contains("--backend is files"), "{run}");
}
