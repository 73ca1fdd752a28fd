//! Where newer Letta servers answer otherwise than the 0.11.7 server the other Letta tests run
//! (`letta.rs`): a small stand-in written from the 0.16.8 OpenAPI document
//! (`../shared/letta/openapi-0.16.8.json`) pages an agent's tools (`after`, `limit`, at most
//! 10 a page whatever `limit` asks) and answers attach and detach with `null`. It also
//! answers a token it does not expect with 401 (echoing it, as a careless server might), and
//! can be slow.

use super::attach_run;
use crate::common::TestEnv;
use serde_json::{Value, json};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};

/// The stand-in: `python3 -c STAND_IN PORT_FILE TOKEN MODE`.
const STAND_IN: &str = r#"
import json, sys, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
token, mode = sys.argv[2], sys.argv[3]
AGENT = "agent-11111111-2222-4333-8444-555555555555"
tools = [{"id": "tool-%08d-0000-4000-8000-000000000000" % i, "name": "custom_%02d" % i,
          "tool_type": "custom"} for i in range(25)]
tools.insert(0, {"id": "tool-core-0000", "name": "send_message", "tool_type": "letta_core"})
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def guard(self):
        got = self.headers.get("Authorization", "")
        if got != "Bearer " + token:
            self.answer(401, {"detail": "bad credentials: " + got})
            return False
        if mode == "slow":
            time.sleep(3)
        if mode == "html":
            data = b"<html>502 Bad Gateway</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return False
        return True
    def do_GET(self):
        if not self.guard(): return
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        if url.path == "/v1/agents/" + AGENT + "/tools":
            limit = min(int(q.get("limit", ["10"])[0]), 10)
            start = 0
            after = q.get("after", [None])[0]
            if after is not None and mode != "ignore-after":
                start = [t["id"] for t in tools].index(after) + 1
            self.answer(200, tools[start:start + limit])
        elif url.path == "/v1/agents/" + AGENT:
            self.answer(200, {"id": AGENT, "name": "stand-in", "tools": tools[:10]})
        elif url.path == "/v1/agents/":
            self.answer(200, [] if "after" in q else [{"id": AGENT, "tools": tools[:10]}])
        elif url.path == "/v1/tools/":
            self.answer(200, [])
        else:
            self.answer(404, {"detail": "not found"})
    def do_PATCH(self):
        if not self.guard(): return
        parts = self.path.split("/")
        if len(parts) == 7 and parts[4] == "tools" and parts[5] == "detach":
            global tools
            tools = [t for t in tools if t["id"] != parts[6]]
            self.answer(200, None)
        else:
            self.answer(404, {"detail": "not found"})
server = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

const AGENT: &str = "agent-11111111-2222-4333-8444-555555555555";
const TOKEN: &str = "stand-in-token-0123456789";

struct StandIn {
    child: Child,
    port: u16,
}

impl StandIn {
    fn start(mode: &str) -> Self {
        let mut child = Command::new("python3")
            .args(["-c", STAND_IN, "-", TOKEN, mode])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap();
        Self { child, port }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `env`'s catalog on the stand-in at `port`, its token in `LETTA_STAND_IN`.
fn on(env: &TestEnv, port: u16, timeout_ms: u64) {
    env.edit_config(|c| {
        c["allowedHosts"] = json!([format!("127.0.0.1:{port}")]);
        c["agents"] = json!({
            "backend": "letta",
            "letta": {
                "url": format!("http://127.0.0.1:{port}"),
                "tokenSecret": "LETTA_STAND_IN",
                "timeoutMs": timeout_ms
            }
        });
    });
}

fn names(doc: &Value) -> Vec<String> {
    doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_agents_tools_are_read_in_pages_and_null_answers_are_successes() {
    let stand_in = StandIn::start("pages");
    let env = TestEnv::new();
    on(&env, stand_in.port, 10_000);
    let token = [("TOOLCTL_SECRET_LETTA_STAND_IN", TOKEN)];
    let mut show = env.command(&["--json", "agent", "show", AGENT]);
    show.envs(token);
    let show = crate::common::Run::of(show, None);
    show.success();
    let shown = names(&show.json());
    assert_eq!(shown.len(), 26, "three pages of at most 10: {show}");
    assert_eq!(shown[0], "send_message");

    // Enforcing the limits detaches by one call a tool; `null` answers are successes.
    let run = attach_run(
        &env,
        AGENT,
        &[],
        &[
            token[0],
            ("MAX_TOTAL_TOOLS", "21"),
            ("MAX_MCP_TOOLS", "20"),
            ("MIN_MCP_TOOLS", "0"),
        ],
    );
    run.success();
    let d = &run.json()["details"];
    assert_eq!(d["detached_tools"].as_array().unwrap().len(), 5, "{run}");
    assert_eq!(d["failed_detachments"], json!([]), "{run}");
    let mut show = env.command(&["--json", "agent", "show", AGENT]);
    show.envs(token);
    let show = crate::common::Run::of(show, None);
    assert_eq!(names(&show.success().json()).len(), 21, "{show}");
}

#[test]
fn a_server_that_ignores_after_is_read_once() {
    let stand_in = StandIn::start("ignore-after");
    let env = TestEnv::new();
    on(&env, stand_in.port, 10_000);
    let mut show = env.command(&["--json", "agent", "show", AGENT]);
    show.env("TOOLCTL_SECRET_LETTA_STAND_IN", TOKEN);
    let show = crate::common::Run::of(show, None);
    show.success();
    // The first page again ends the reading: no endless loop, the ten tools it gave.
    assert_eq!(names(&show.json()).len(), 10, "{show}");
}

#[test]
fn a_refused_token_is_forbidden_and_never_shown_and_a_slow_server_times_out() {
    let stand_in = StandIn::start("pages");
    let env = TestEnv::new();
    on(&env, stand_in.port, 10_000);
    let wrong = "wrong-token-that-must-not-show";
    let mut list = env.command(&["--json", "agent", "list"]);
    list.env("TOOLCTL_SECRET_LETTA_STAND_IN", wrong);
    let list = crate::common::Run::of(list, None);
    list.failure(6);
    let error = list.json()["error"].clone();
    assert_eq!(error["code"], "FORBIDDEN", "{list}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("GET /v1/agents/"),
        "{list}"
    );
    assert!(
        !list.stdout.contains(wrong) && !list.stderr.contains(wrong),
        "{list}"
    );
    assert!(list.stdout.contains("[REDACTED]"), "{list}");

    // No token where one is named: the secret is named, nothing is called.
    let run = env.run(&["--json", "agent", "list"]);
    run.failure(3);
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("agents.letta.tokenSecret names the secret 'LETTA_STAND_IN'"),
        "{run}"
    );

    let slow = StandIn::start("slow");
    on(&env, slow.port, 500);
    let mut show = env.command(&["--json", "agent", "show", AGENT]);
    show.env("TOOLCTL_SECRET_LETTA_STAND_IN", TOKEN);
    let show = crate::common::Run::of(show, None);
    show.failure(7);
    let error = show.json()["error"].clone();
    assert_eq!(error["code"], "TIMEOUT", "{show}");
    assert!(
        error["message"].as_str().unwrap().contains("within 500 ms"),
        "{show}"
    );
}

#[test]
fn an_answer_that_is_not_json_is_an_upstream_error_naming_the_route() {
    let stand_in = StandIn::start("html");
    let env = TestEnv::new();
    on(&env, stand_in.port, 10_000);
    let mut show = env.command(&["--json", "agent", "show", AGENT]);
    show.env("TOOLCTL_SECRET_LETTA_STAND_IN", TOKEN);
    let show = crate::common::Run::of(show, None);
    show.failure(7);
    let error = show.json()["error"].clone();
    assert_eq!(error["code"], "UPSTREAM_ERROR", "{show}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("GET /v1/agents/{AGENT}")) && message.contains("not JSON"),
        "{show}"
    );
}
