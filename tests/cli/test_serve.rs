//! `toolctl serve`: the agent-tools API, jobs and the attach contract over HTTP, driven by
//! real clients (reqwest; Python's `httpx` with `httpx-sse` for the event stream, in a venv of
//! their own; curl), and the `job` commands on the jobs it keeps.

use crate::common::served::Served;
use crate::common::{TestEnv, mcp_clients};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const READ_KEY: &str = "read-key-for-tests-0123456789";
const ADMIN_KEY: &str = "admin-key-for-tests-0123456789";

/// `toolctl serve` on a free loopback port, with `vars` in its environment.
fn serve(env: &TestEnv, vars: &[(&str, &str)]) -> Served {
    let mut command = env.command(&["serve", "--listen", "127.0.0.1:0"]);
    command.current_dir(env.work());
    for (name, value) in vars {
        command.env(name, value);
    }
    Served::spawn(command)
}

/// A catalog whose server asks for keys: `reader` (read) and `ops` (admin).
fn with_keys(env: &TestEnv) -> [(&'static str, &'static str); 2] {
    env.edit_config(|config| {
        config["serve"] = json!({ "apiKeys": [
            { "name": "reader", "role": "read", "secret": "SERVE_READ" },
            { "name": "ops", "role": "admin", "secret": "SERVE_ADMIN" },
        ] });
    });
    [
        ("TOOLCTL_SECRET_SERVE_READ", READ_KEY),
        ("TOOLCTL_SECRET_SERVE_ADMIN", ADMIN_KEY),
    ]
}

struct Answer {
    status: u16,
    body: Value,
}

fn client() -> reqwest::blocking::Client {
    toolctl_lib::base::http::client(reqwest::redirect::Policy::none(), None).unwrap()
}

fn send(
    served: &Served,
    method: reqwest::Method,
    path: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> Answer {
    let mut request = client()
        .request(method, served.url(path))
        .timeout(Duration::from_secs(60));
    if let Some(key) = key {
        request = request.header("x-api-key", key);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().unwrap();
    let status = response.status().as_u16();
    let text = response.text().unwrap();
    let body =
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"));
    Answer { status, body }
}

fn get(served: &Served, path: &str, key: Option<&str>) -> Answer {
    send(served, reqwest::Method::GET, path, key, None)
}

fn post(served: &Served, path: &str, key: Option<&str>, body: &Value) -> Answer {
    send(served, reqwest::Method::POST, path, key, Some(body))
}

/// The job `id` once it is over (or the test fails after 30 s).
fn finished_job(served: &Served, id: &str, key: Option<&str>) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = get(served, &format!("/v1/jobs/{id}"), key);
        assert_eq!(answer.status, 200, "{}", answer.body);
        let job = answer.body["job"].clone();
        if ["succeeded", "failed", "cancelled"].contains(&job["status"].as_str().unwrap()) {
            return job;
        }
        assert!(Instant::now() < deadline, "job {id} is still {job}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn enable_exec(env: &TestEnv) {
    env.run(&["tool", "enable", "builtin/exec"]).success();
}

/// An `exec` call of `sh -c script`.
fn shell(call_id: &str, script: &str) -> Value {
    json!({
        "call_id": call_id,
        "name": "exec",
        "arguments": { "argv": ["sh", "-c", script], "timeout_ms": 600000 },
    })
}

/// A server with one worker, running `script` as the job `long` while the job `next` (a call
/// of `now`) waits behind it: the server and the two job ids.
fn one_running_one_queued(env: &TestEnv, script: &str) -> (Served, String, String) {
    enable_exec(env);
    env.edit_config(|config| config["serve"] = json!({ "workers": 1 }));
    let served = serve(env, &[]);
    let answer = post(
        &served,
        "/v1/agent-tools/invoke-batch",
        None,
        &json!({
            "calls": [shell("long", script), { "call_id": "next", "name": "now" }],
            "mode": "async",
        }),
    );
    let long = answer.body["results"][0]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let next = answer.body["results"][1]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    while get(&served, &format!("/v1/jobs/{long}"), None).body["job"]["status"] != "running" {
        assert!(Instant::now() < deadline, "the job never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    (served, long, next)
}

#[test]
fn the_registry_is_the_openai_export_and_a_sync_batch_answers_in_the_contracts_shape() {
    let env = TestEnv::new();
    let served = serve(&env, &[]);
    let listed = get(&served, "/v1/agent-tools", None);
    assert_eq!(listed.status, 200);
    let exported = env.json(&["export", "--provider", "openai"]);
    assert_eq!(listed.body["ok"], true);
    assert_eq!(
        listed.body["tools"], exported,
        "the registry is what export prints"
    );
    assert_eq!(
        listed.body["count"],
        listed.body["tools"].as_array().unwrap().len()
    );
    let names: Vec<&str> = exported
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"readfile"), "{names:?}");
    assert!(
        !names.contains(&"exec"),
        "a disabled tool is not listed: {names:?}"
    );

    std::fs::write(env.work().join("note.txt"), "hello").unwrap();
    let answer = post(
        &served,
        "/v1/agent-tools/invoke-batch",
        None,
        &json!({
            "calls": [
                { "call_id": "read-1", "name": "readfile", "arguments": { "path": "note.txt" } },
                { "call_id": "call-unknown", "name": "nonexistent_tool" },
                { "call_id": "call-y", "name": "exec", "arguments": {} },
            ],
            "mode": "sync",
            "wait_ms": 15000,
        }),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let body = &answer.body;
    assert_eq!(body["ok"], true);
    assert_eq!(body["mode"], "sync");
    let read = &body["results"][0];
    assert_eq!(read["call_id"], "read-1");
    assert_eq!(read["name"], "readfile");
    assert_eq!(read["ok"], true);
    assert_eq!(read["output"]["content_text"], "hello", "{read}");
    assert_eq!(
        body["results"][1],
        json!({
            "call_id": "call-unknown",
            "name": "nonexistent_tool",
            "ok": false,
            "error": { "code": "UNKNOWN_TOOL", "message": "Tool 'nonexistent_tool' not found in registry" },
        })
    );
    assert_eq!(
        body["results"][2]["error"],
        json!({ "code": "JOB_TYPE_DISABLED", "message": "Job type 'builtin/exec@v1' is disabled" })
    );
    let messages = body["tool_messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0]["role"], "tool");
    assert_eq!(messages[0]["tool_call_id"], "read-1");
    assert_eq!(messages[0]["name"], "readfile");
    let content: Value = serde_json::from_str(messages[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content, json!({ "ok": true, "result": read["output"] }));
    let content: Value = serde_json::from_str(messages[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        content,
        json!({ "ok": false, "error": body["results"][1]["error"] })
    );
    // A batch's call is a job, kept after the answer.
    let jobs = env.json(&["job", "list"]);
    let jobs = jobs["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "only the call that ran is a job: {jobs:?}");
    assert_eq!(jobs[0]["status"], "succeeded");
    assert_eq!(jobs[0]["name"], "builtin/readfile@v1");
    assert_eq!(jobs[0]["call_id"], "read-1");
}

#[test]
fn a_sync_call_past_wait_ms_is_pending_with_its_job_id_and_goes_on_to_finish() {
    let env = TestEnv::new();
    enable_exec(&env);
    let served = serve(&env, &[]);
    let started = Instant::now();
    let answer = post(
        &served,
        "/v1/agent-tools/invoke-batch",
        None,
        &json!({
            "calls": [
                { "call_id": "quick", "name": "now" },
                shell("slow", "sleep 1.5; echo done > slow.marker; echo finished"),
            ],
            "wait_ms": 300,
        }),
    );
    let took = started.elapsed();
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(
        took < Duration::from_millis(1400),
        "answered at wait_ms, took {took:?}"
    );
    let results = &answer.body["results"];
    assert_eq!(results[0]["ok"], true, "{results}");
    let slow = &results[1];
    let job_id = slow["job_id"].as_str().unwrap().to_owned();
    assert_eq!(
        *slow,
        json!({
            "call_id": "slow",
            "name": "exec",
            "ok": false,
            "pending": true,
            "job_id": job_id,
            "error": { "code": "TIMEOUT", "message": "Job did not complete within wait_ms" },
        })
    );
    let content: Value =
        serde_json::from_str(answer.body["tool_messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["pending"], true);
    assert_eq!(content["job_id"], job_id.as_str());
    // The job was not cancelled: it finishes, and its result is kept.
    let job = finished_job(&served, &job_id, None);
    assert_eq!(job["status"], "succeeded", "{job}");
    assert_eq!(job["result"]["ok"], true);
    assert_eq!(job["result"]["output"]["stdout"], "finished\n", "{job}");
    assert!(env.work().join("slow.marker").is_file());
    // And the command line reads the same job.
    let waited = env.json(&["job", "wait", &job_id]);
    assert_eq!(waited["jobs"][0]["result"], job["result"]);
}

#[test]
fn async_mode_answers_with_the_jobs_at_once_and_their_stream_tells_status_then_result() {
    let env = TestEnv::new();
    enable_exec(&env);
    // The client is made first, so that the stream begins while the job runs.
    let python = mcp_clients::http_python();
    let served = serve(&env, &[]);
    let answer = post(
        &served,
        "/v1/agent-tools/invoke-batch",
        None,
        &json!({
            "calls": [shell("search-files", "sleep 1.5; echo streamed")],
            "mode": "async",
            "queue": "tools.batch:1",
        }),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let result = &answer.body["results"][0];
    let job_id = result["job_id"].as_str().unwrap().to_owned();
    assert_eq!(
        answer.body,
        json!({
            "ok": true,
            "results": [{
                "call_id": "search-files",
                "name": "exec",
                "ok": true,
                "job_id": job_id,
                "job_type": "builtin/exec@v1",
            }],
            "tool_messages": [],
            "mode": "async",
        })
    );
    // A real SSE client reads the stream to its end.
    let script = r#"
import json, sys, httpx, httpx_sse
events = []
with httpx.Client(timeout=30) as client:
    with httpx_sse.connect_sse(client, "GET", sys.argv[1]) as source:
        for event in source.iter_sse():
            events.append({"event": event.event, "data": json.loads(event.data)})
print(json.dumps(events))
"#;
    let output = std::process::Command::new(python)
        .args([
            "-c",
            script,
            &served.url(&format!("/v1/jobs/{job_id}/stream")),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events: Value = serde_json::from_slice(&output.stdout).unwrap();
    let events = events.as_array().unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.last(), Some(&"result"), "{events:?}");
    let statuses: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "status")
        .map(|e| e["data"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.last(), Some(&"succeeded"), "{events:?}");
    assert!(
        statuses.len() >= 2,
        "the stream began before the job ended: {statuses:?}"
    );
    let last = &events.last().unwrap()["data"];
    assert_eq!(last["id"], job_id.as_str());
    assert_eq!(last["queue"], "tools.batch:1");
    assert_eq!(last["result"]["output"]["stdout"], "streamed\n");
    // curl reads the same job.
    let curl = std::process::Command::new("curl")
        .args(["-s", &served.url(&format!("/v1/jobs/{job_id}"))])
        .output()
        .unwrap();
    let read: Value = serde_json::from_slice(&curl.stdout).unwrap();
    assert_eq!(read["job"]["status"], "succeeded");
    assert_eq!(read["job"]["result"], last["result"]);
}

#[test]
fn keys_give_roles_a_read_key_may_only_read_and_no_key_or_a_wrong_one_is_refused() {
    let env = TestEnv::new();
    let vars = with_keys(&env);
    let served = serve(&env, &vars);
    assert!(
        served.stderr().contains("2 API key(s)"),
        "{}",
        served.stderr()
    );
    let batch = json!({ "calls": [{ "call_id": "c", "name": "now" }] });
    for key in [None, Some("not-a-key-of-this-server-000")] {
        let refused = get(&served, "/v1/agent-tools", key);
        assert_eq!(refused.status, 401, "{key:?}: {}", refused.body);
        assert_eq!(refused.body["ok"], false);
        assert_eq!(refused.body["error"]["code"], "UNAUTHORIZED");
        let refused = post(&served, "/v1/agent-tools/invoke-batch", key, &batch);
        assert_eq!(refused.status, 401);
    }
    let read = get(&served, "/v1/agent-tools", Some(READ_KEY));
    assert_eq!(read.status, 200);
    let admin = get(&served, "/v1/agent-tools", Some(ADMIN_KEY));
    assert_eq!(admin.body, read.body, "both roles see the same registry");
    let forbidden = post(
        &served,
        "/v1/agent-tools/invoke-batch",
        Some(READ_KEY),
        &batch,
    );
    assert_eq!(forbidden.status, 403);
    assert_eq!(
        forbidden.body,
        json!({ "ok": false, "error": { "code": "FORBIDDEN", "message": "This operation requires an admin API key." } })
    );
    let attach = post(
        &served,
        "/api/v1/tools/attach",
        Some(READ_KEY),
        &json!({ "agent_id": "agent-123e4567-e89b-12d3-a456-426614174000" }),
    );
    assert_eq!(attach.status, 403);
    assert_eq!(attach.body["success"], false);
    assert!(
        env.json(&["job", "list"])["jobs"]
            .as_array()
            .unwrap()
            .is_empty(),
        "nothing refused ran"
    );
    let ran = post(
        &served,
        "/v1/agent-tools/invoke-batch",
        Some(ADMIN_KEY),
        &batch,
    );
    assert_eq!(ran.status, 200);
    assert_eq!(ran.body["results"][0]["ok"], true);
    // Neither key's value is ever said, nor a refused one; four refusals in a moment are one
    // line (the others counted for the next).
    let said = served.stderr();
    assert!(
        !said.contains(READ_KEY)
            && !said.contains(ADMIN_KEY)
            && !said.contains("not-a-key-of-this-server"),
        "{said}"
    );
    let refusals: Vec<&str> = said
        .lines()
        .filter(|line| line.contains("refused a request from 127.0.0.1:"))
        .collect();
    assert_eq!(refusals.len(), 1, "{said}");
    assert!(
        refusals[0].ends_with("to /v1/agent-tools: no API key"),
        "{said}"
    );
}

#[test]
fn serve_refuses_to_start_unguarded_on_a_public_address_or_with_a_key_it_cannot_read() {
    let env = TestEnv::new();
    let run = env.run(&["serve", "--listen", "0.0.0.0:0"]);
    run.failure(3).stderr_has("without API keys");
    env.edit_config(|config| {
        config["serve"] =
            json!({ "apiKeys": [{ "name": "ops", "role": "admin", "secret": "SERVE_ADMIN" }] });
    });
    let run = env.run(&["serve", "--listen", "127.0.0.1:0"]);
    run.failure(3)
        .stderr_has("key 'ops'")
        .stderr_has("SERVE_ADMIN");
    let mut short = env.command(&["serve", "--listen", "127.0.0.1:0"]);
    short.env("TOOLCTL_SECRET_SERVE_ADMIN", "short");
    let run = crate::common::Run::of(short, None);
    run.failure(3).stderr_has("at least 16");
    assert!(!run.stderr.contains("short\""), "{}", run.stderr);
    env.edit_config(|config| {
        config["serve"] = json!({ "apiKeys": [{ "name": "ops", "role": "root", "secret": "S" }] });
    });
    env.run(&["validate"])
        .failure(3)
        .stdout_has("/serve/apiKeys/0/role");
}

#[test]
fn bad_requests_are_refused_with_their_status_and_place() {
    let env = TestEnv::new();
    let served = serve(&env, &[]);
    let batch = "/v1/agent-tools/invoke-batch";
    for (body, pointer) in [
        (json!({ "calls": 3 }), "/calls"),
        (json!({ "calls": [] }), "/calls"),
        (json!({ "calls": [{ "name": "now" }] }), "/calls/0/call_id"),
        (
            json!({ "calls": [{ "call_id": "a", "name": "now" }], "wait_ms": 99 }),
            "/wait_ms",
        ),
        (
            json!({ "calls": [{ "call_id": "a", "name": "now" }], "mode": "later" }),
            "/mode",
        ),
        (
            json!({ "calls": [{ "call_id": "a", "name": "now" }], "queue": "Not Valid" }),
            "/queue",
        ),
        (
            json!({ "calls": [{ "call_id": "a", "name": "now" }], "queue": "q".repeat(81) }),
            "/queue",
        ),
    ] {
        let answer = post(&served, batch, None, &body);
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        assert_eq!(answer.body["ok"], false);
        assert_eq!(answer.body["error"]["code"], "VALIDATION_ERROR");
        assert_eq!(
            answer.body["error"]["details"]["pointer"], pointer,
            "{body}"
        );
    }
    let too_many: Vec<Value> = (0..21)
        .map(|i| json!({ "call_id": format!("c{i}"), "name": "now" }))
        .collect();
    let answer = post(&served, batch, None, &json!({ "calls": too_many }));
    assert_eq!(answer.status, 400);

    let raw = |body: String| {
        let response = client()
            .post(served.url(batch))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json::<Value>().unwrap())
    };
    let (status, body) = raw("{\"calls\": [".to_owned());
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{body}"
    );
    assert_eq!(body["error"]["details"]["line"], 1);
    let big = format!(
        "{{\"calls\":[{{\"call_id\":\"a\",\"name\":\"now\",\"arguments\":{{\"x\":\"{}\"}}}}]}}",
        "x".repeat(1024 * 1024)
    );
    let (status, body) = raw(big);
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE");

    let unknown = get(&served, "/v1/jobs/no-such-job", None);
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.body["error"]["code"], "NOT_FOUND");
    let route = get(&served, "/v1/nothing-here", None);
    assert_eq!(route.status, 404);
    // Without keys, a request must name this server as its Host, and a page elsewhere is no
    // caller.
    let rebound = client()
        .get(served.url("/v1/agent-tools"))
        .header("host", "attacker.example")
        .send()
        .unwrap();
    assert_eq!(rebound.status().as_u16(), 403);
    let page = client()
        .get(served.url("/v1/agent-tools"))
        .header("origin", "http://attacker.example")
        .send()
        .unwrap();
    assert_eq!(page.status().as_u16(), 403);
}

#[test]
fn the_attach_route_runs_the_attach_contract_on_the_agents_files() {
    let env = TestEnv::fixture();
    let served = serve(&env, &[]);
    let agent = "agent-123e4567-e89b-12d3-a456-426614174000";
    let answer = post(
        &served,
        "/api/v1/tools/attach",
        None,
        &json!({ "agent_id": agent, "query": "weather in Oslo", "limit": 5 }),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let body = &answer.body;
    assert_eq!(body["success"], true);
    assert_eq!(body["details"]["target_agent"], agent);
    let attached = body["details"]["successful_attachments"]
        .as_array()
        .unwrap();
    assert!(!attached.is_empty(), "{body}");
    // What the command prints for the same agent now: the same tools, already attached.
    let file = env.catalog().join("agents").join(format!("{agent}.json"));
    assert!(file.is_file(), "the agent's file was made");
    let request = env.input(&json!({ "agent_id": agent, "query": "weather in Oslo", "limit": 5 }));
    let cli = env.json(&["attach", "--request", &request]);
    assert_eq!(
        cli["details"]["successful_attachments"],
        body["details"]["successful_attachments"]
    );
    for (request, needle) in [
        (json!({ "agent_idd": agent }), "agent_id is required"),
        (json!({ "agent_id": "nope" }), "/agent_id"),
        (
            json!({ "agent_id": agent, "limit": 0 }),
            "limit 0 is out of range",
        ),
        (
            json!({ "agent_id": agent, "min_score": 101 }),
            "min_score 101",
        ),
    ] {
        let answer = post(&served, "/api/v1/tools/attach", None, &request);
        assert_eq!(answer.status, 400, "{request}: {}", answer.body);
        assert_eq!(answer.body["success"], false);
        let error = answer.body["error"].as_str().unwrap();
        assert!(error.contains(needle), "{request}: {error}");
    }
}

#[test]
fn a_job_left_running_by_a_killed_server_is_failed_and_queued_ones_resume_after_a_restart() {
    let env = TestEnv::new();
    // One worker: the long job runs, the other waits behind it.
    let (mut served, long, after) = one_running_one_queued(&env, "sleep 3; echo late");
    assert_eq!(
        get(&served, &format!("/v1/jobs/{after}"), None).body["job"]["status"],
        "queued"
    );
    served.child.kill().unwrap();
    served.child.wait().unwrap();
    assert_eq!(env.json(&["job", "get", &long])["status"], "running");

    let served = serve(&env, &[]);
    let said = served.said("resumed");
    assert!(
        said.contains(&format!("job {long} was left running")),
        "{said}"
    );
    assert!(said.contains("resumed 1 queued job"), "{said}");
    let lost = finished_job(&served, &long, None);
    assert_eq!(lost["status"], "failed");
    assert_eq!(lost["result"]["error"]["code"], "WORKER_LOST", "{lost}");
    let resumed = finished_job(&served, &after, None);
    assert_eq!(resumed["status"], "succeeded", "{resumed}");
    // `job wait` says one of them did not succeed.
    let run = env.run(&["job", "wait", &long, &after]);
    run.failure(7).stderr_has(&format!("job {long} failed"));
}

#[test]
fn a_queued_job_cancelled_never_runs_and_old_jobs_are_pruned() {
    let env = TestEnv::new();
    enable_exec(&env);
    env.edit_config(|config| config["serve"] = json!({ "workers": 1 }));
    let served = serve(&env, &[]);
    let answer = post(
        &served,
        "/v1/agent-tools/invoke-batch",
        None,
        &json!({
            "calls": [
                shell("first", "sleep 1"),
                shell("second", "touch second.marker"),
                shell("third", "sleep 30; touch third.marker"),
            ],
            "mode": "async",
        }),
    );
    let ids: Vec<String> = (0..3)
        .map(|i| {
            answer.body["results"][i]["job_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    // From the command line while the server runs the first.
    let cancelled = env.json(&["job", "cancel", &ids[1]]);
    assert_eq!(cancelled["status"], "cancelled");
    // Over HTTP: the third, once it runs, is stopped.
    let deadline = Instant::now() + Duration::from_secs(20);
    while get(&served, &format!("/v1/jobs/{}", ids[2]), None).body["job"]["status"] != "running" {
        assert!(Instant::now() < deadline, "the third job never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let stop = post(
        &served,
        &format!("/v1/jobs/{}/cancel", ids[2]),
        None,
        &json!({}),
    );
    assert_eq!(stop.status, 200, "{}", stop.body);
    let third = finished_job(&served, &ids[2], None);
    assert_eq!(third["status"], "cancelled", "{third}");
    assert!(
        !env.work().join("second.marker").exists(),
        "a cancelled job never ran"
    );
    assert!(!env.work().join("third.marker").exists());
    let again = post(
        &served,
        &format!("/v1/jobs/{}/cancel", ids[2]),
        None,
        &json!({}),
    );
    assert_eq!(again.status, 409, "{}", again.body);
    env.run(&["job", "cancel", &ids[0]]).failure(5);
    env.run(&["job", "get", "no-such-job"]).failure(4);

    let listed = get(&served, "/v1/jobs?status=cancelled", None);
    assert_eq!(listed.body["count"], 2, "{}", listed.body);
    assert_eq!(
        env.json(&["job", "prune"])["removed"],
        0,
        "nothing is old yet"
    );
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(
        env.json(&["job", "prune", "--older-than", "1s"])["removed"],
        3
    );
    assert!(
        env.json(&["job", "list"])["jobs"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_stopped_server_stops_its_running_jobs_and_leaves_queued_ones_for_the_next_start() {
    let env = TestEnv::new();
    let (mut served, long, next) = one_running_one_queued(&env, "sleep 30; touch long.marker");
    let stopped = Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &served.child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = served.child.wait().unwrap();
    assert!(status.success(), "{status:?}\n{}", served.stderr());
    assert!(
        stopped.elapsed() < Duration::from_secs(8),
        "stopping took {:?}",
        stopped.elapsed()
    );
    let ended = env.json(&["job", "get", &long]);
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(env.json(&["job", "get", &next])["status"], "queued");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!env.work().join("long.marker").exists());
}

#[test]
fn a_body_that_does_not_arrive_in_time_is_refused_with_408() {
    use std::io::{Read, Write};
    let env = TestEnv::new();
    let mut command = env.command(&["serve", "--listen", "127.0.0.1:0", "--client-timeout", "1"]);
    command.current_dir(env.work());
    let served = Served::spawn(command);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", served.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "POST /v1/agent-tools/invoke-batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{{\"calls\""
    )
    .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("REQUEST_TIMEOUT"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

fn put(served: &Served, path: &str, key: Option<&str>, body: &Value) -> Answer {
    send(served, reqwest::Method::PUT, path, key, Some(body))
}

fn patch(served: &Served, path: &str, key: Option<&str>, body: &Value) -> Answer {
    send(served, reqwest::Method::PATCH, path, key, Some(body))
}

fn delete(served: &Served, path: &str, key: Option<&str>) -> Answer {
    send(served, reqwest::Method::DELETE, path, key, None)
}

/// A bundleID the tests create bundles under (a UUID v7).
const NEW_BUNDLE: &str = "0193a000-0000-7000-8000-00000000c0de";

#[test]
fn the_catalog_routes_run_the_commands_and_answer_with_their_json() {
    let env = TestEnv::fixture();
    let served = serve(&env, &[]);
    let bundle = format!("/tools/bundles/{NEW_BUNDLE}");
    let fields = json!({
        "slug": "clock",
        "displayName": "Clock",
        "isEnabled": true,
        "description": "What time it is.",
    });
    let created = put(&served, &bundle, None, &fields);
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["created"], true);
    assert_eq!(created.body["bundleID"], NEW_BUNDLE);
    let replaced = put(&served, &bundle, None, &fields);
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(replaced.body["created"], false);
    assert_eq!(
        env.json(&["bundle", "get", "clock"])["description"],
        "What time it is."
    );
    // The lists are the commands' lists, field for field.
    let listed = get(&served, "/tools/bundles?pageSize=2", None);
    assert_eq!(listed.status, 200);
    assert_eq!(
        listed.body,
        env.json(&["bundle", "list", "--page-size", "2"])
    );
    let token = listed.body["nextPageToken"].as_str().unwrap().to_owned();
    let next = get(
        &served,
        &format!("/tools/bundles?pageSize=2&pageToken={token}"),
        None,
    );
    assert_eq!(
        next.body,
        env.json(&["bundle", "list", "--page-size", "2", "--page-token", &token])
    );

    // A tool version: slug and version from the path.
    let version = "/tools/bundles/clock/tools/tick/version/1.0.0";
    let doc = crate::common::tool_doc_with(
        "tick",
        "1.0.0",
        json!({
            "description": "The time now, in UTC.",
            "argSchema": {
                "type": "object",
                "properties": { "format": { "type": "string" } },
                "additionalProperties": false,
            },
        }),
    );
    let mut bare = doc.clone();
    bare.as_object_mut().unwrap().remove("slug");
    bare.as_object_mut().unwrap().remove("version");
    let made = put(&served, version, None, &bare);
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.body["ref"], "clock/tick@1.0.0");
    assert_eq!(
        made.body["document"]["description"],
        "The time now, in UTC."
    );
    let again = put(&served, version, None, &doc);
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(again.body["error"]["code"], "CONFLICT");
    let got = get(&served, version, None);
    assert_eq!(got.status, 200);
    assert_eq!(got.body, env.json(&["tool", "get", "clock/tick@1.0.0"]));

    // Invoked: the value, or the failure with its status; the call counted.
    let invoke = format!("{version}/invoke");
    let ran = post(&served, &invoke, None, &json!({ "args": {} }));
    assert_eq!(ran.status, 200, "{}", ran.body);
    assert_eq!(ran.body["ok"], true);
    assert!(
        ran.body["value"].is_object() || ran.body["value"].is_string(),
        "{}",
        ran.body
    );
    let refused = post(&served, &invoke, None, &json!({ "args": { "zone": 1 } }));
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.body["ok"], false);
    assert_eq!(refused.body["error"]["code"], "VALIDATION_ERROR");
    assert_eq!(get(&served, version, None).body["usage"]["callCount"], 1);
    let unknown = post(
        &served,
        "/tools/bundles/clock/tools/tick/version/9.9.9/invoke",
        None,
        &json!({}),
    );
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert_eq!(unknown.body["error"]["code"], "UNKNOWN_TOOL");

    // Toggled: changed once, then not; a disabled tool leaves the list and the search.
    let off = patch(&served, version, None, &json!({ "isEnabled": false }));
    assert_eq!(off.status, 200, "{}", off.body);
    assert_eq!(off.body["changed"], true);
    assert_eq!(off.body["isEnabled"], false);
    let still = patch(&served, version, None, &json!({ "isEnabled": false }));
    assert_eq!(still.body["changed"], false);
    let tools = get(&served, "/tools/tools?bundleIDs=clock", None);
    assert_eq!(tools.body["items"], json!([]));
    let all = get(
        &served,
        "/tools/tools?bundleIDs=clock,weather&includeDisabled=true&recommendedPageSize=5",
        None,
    );
    assert_eq!(
        all.body,
        env.json(&[
            "tool",
            "list",
            "--bundle",
            "clock",
            "--bundle",
            "weather",
            "--include-disabled",
            "--page-size",
            "5",
        ])
    );
    assert!(
        all.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["ref"] == "clock/tick@1.0.0")
    );
    let found = get(
        &served,
        "/tools/tools/search?q=weather%20forecast&pageSize=3",
        None,
    );
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(
        found.body,
        env.json(&["search", "weather", "forecast", "--page-size", "3"])
    );
    assert!(!found.body["items"].as_array().unwrap().is_empty());
    let hidden = get(&served, "/tools/tools/search?q=time%20now%20utc", None);
    assert!(
        hidden.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["ref"] != "clock/tick@1.0.0"),
        "{}",
        hidden.body
    );
    let shown = get(
        &served,
        "/tools/tools/search?q=time%20now%20utc&includeDisabled=true",
        None,
    );
    assert!(
        shown.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["ref"] == "clock/tick@1.0.0"),
        "{}",
        shown.body
    );

    // Deleted: the version's folder goes; the bundle is soft-deleted and leaves the list.
    let gone = delete(&served, version, None);
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert_eq!(gone.body["deleted"], true);
    assert_eq!(get(&served, version, None).status, 404);
    let disabled = patch(&served, &bundle, None, &json!({ "isEnabled": false }));
    assert_eq!(disabled.body["changed"], true, "{}", disabled.body);
    let soft = delete(&served, &bundle, None);
    assert_eq!(soft.status, 200, "{}", soft.body);
    assert!(soft.body["softDeletedAt"].is_string(), "{}", soft.body);
    let left = get(&served, "/tools/bundles?includeDisabled=true", None);
    assert!(
        left.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["slug"] != "clock")
    );
    let kept = get(
        &served,
        "/tools/bundles?includeDisabled=true&includeDeleted=true",
        None,
    );
    assert!(
        kept.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["slug"] == "clock")
    );
}

#[test]
fn catalog_writes_need_an_admin_key_and_the_built_in_bundle_stays_read_only() {
    let env = TestEnv::new();
    let vars = with_keys(&env);
    let served = serve(&env, &vars);
    let bundle = format!("/tools/bundles/{NEW_BUNDLE}");
    let body = json!({ "slug": "clock" });
    assert_eq!(put(&served, &bundle, None, &body).status, 401);
    let read = put(&served, &bundle, Some(READ_KEY), &body);
    assert_eq!(read.status, 403, "{}", read.body);
    assert_eq!(read.body["error"]["code"], "FORBIDDEN");
    assert_eq!(
        get(&served, "/tools/bundles", Some(READ_KEY)).body["items"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "nothing was written"
    );
    let now = "/tools/bundles/builtin/tools/now/version/v1";
    for (answer, what) in [
        (
            post(
                &served,
                &format!("{now}/invoke"),
                Some(READ_KEY),
                &json!({}),
            ),
            "invoke",
        ),
        (
            patch(&served, now, Some(READ_KEY), &json!({ "isEnabled": false })),
            "patch",
        ),
        (delete(&served, now, Some(READ_KEY)), "delete"),
    ] {
        assert_eq!(answer.status, 403, "{what}: {}", answer.body);
    }
    assert_eq!(get(&served, now, Some(READ_KEY)).status, 200);
    assert_eq!(put(&served, &bundle, Some(ADMIN_KEY), &body).status, 201);

    // The built-in bundle: only its tools' enabled flag changes.
    let builtin = env.json(&["bundle", "get", "builtin"]);
    let id = builtin["bundleID"].as_str().unwrap();
    let replaced = put(
        &served,
        &format!("/tools/bundles/{id}"),
        Some(ADMIN_KEY),
        &json!({ "slug": "mine" }),
    );
    assert_eq!(replaced.status, 403, "{}", replaced.body);
    let added = put(
        &served,
        "/tools/bundles/builtin/tools/mine/version/1.0.0",
        Some(ADMIN_KEY),
        &crate::common::tool_doc("mine", "1.0.0"),
    );
    assert_eq!(added.status, 403, "{}", added.body);
    assert_eq!(delete(&served, now, Some(ADMIN_KEY)).status, 403);
    let off = patch(
        &served,
        now,
        Some(ADMIN_KEY),
        &json!({ "isEnabled": false }),
    );
    assert_eq!(off.status, 200, "{}", off.body);
    let ran = post(
        &served,
        &format!("{now}/invoke"),
        Some(ADMIN_KEY),
        &json!({}),
    );
    assert_eq!(ran.status, 403, "{}", ran.body);
    assert_eq!(ran.body["error"]["code"], "TOOL_DISABLED");
}

#[test]
fn bad_catalog_requests_name_the_parameter_or_field() {
    let env = TestEnv::fixture();
    let served = serve(&env, &[]);
    for (path, parameter) in [
        ("/tools/bundles?pagesize=5", "pagesize"),
        ("/tools/bundles?pageSize=0", "pageSize"),
        ("/tools/bundles?pageSize=ten", "pageSize"),
        ("/tools/tools?includeDisabled=yes", "includeDisabled"),
        ("/tools/tools?pageSize=2&recommendedPageSize=2", "pageSize"),
        ("/tools/tools/search", "q"),
        ("/tools/tools/search?q=%20", "q"),
        ("/tools/tools/search?q=a&q=b", "q"),
    ] {
        let answer = get(&served, path, None);
        assert_eq!(answer.status, 400, "{path}: {}", answer.body);
        assert_eq!(answer.body["error"]["code"], "VALIDATION_ERROR", "{path}");
        assert_eq!(
            answer.body["error"]["details"]["parameter"], parameter,
            "{path}: {}",
            answer.body
        );
    }
    let token = get(&served, "/tools/tools?pageToken=not-a-token", None);
    assert_eq!(token.status, 400, "{}", token.body);

    let version = "/tools/bundles/weather/tools/tick/version/1.0.0";
    for (body, pointer) in [
        (crate::common::tool_doc("tock", "1.0.0"), "/slug"),
        (crate::common::tool_doc("tick", "2.0.0"), "/version"),
        (json!({ "type": "native" }), "/impl"),
    ] {
        let answer = put(&served, version, None, &body);
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        let details = &answer.body["error"]["details"];
        assert!(
            details.to_string().contains(pointer),
            "{body}: {}",
            answer.body
        );
    }
    assert!(
        env.json(&["tool", "list", "--bundle", "weather"])["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["slug"] != "tick"),
        "nothing was written"
    );
    for (body, pointer) in [
        (json!({ "isEnabled": "no" }), "/isEnabled"),
        (json!({ "isEnabled": true, "slug": "x" }), "/slug"),
        (json!({}), "/isEnabled"),
    ] {
        let answer = patch(&served, "/tools/bundles/weather", None, &body);
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        assert_eq!(answer.body["error"]["details"]["pointer"], pointer);
    }
    let not_uuid = put(
        &served,
        "/tools/bundles/weather",
        None,
        &json!({ "slug": "weather" }),
    );
    assert_eq!(not_uuid.status, 400, "{}", not_uuid.body);
    assert_eq!(not_uuid.body["error"]["details"]["parameter"], "bundleID");
    let other_id = put(
        &served,
        &format!("/tools/bundles/{NEW_BUNDLE}"),
        None,
        &json!({ "slug": "x", "bundleID": "0193a000-0000-7000-8000-000000000001" }),
    );
    assert_eq!(other_id.body["error"]["details"]["pointer"], "/bundleID");
    let missing = patch(
        &served,
        "/tools/bundles/nope",
        None,
        &json!({ "isEnabled": true }),
    );
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert_eq!(missing.body["error"]["code"], "NOT_FOUND");
    let wrong_verb = post(&served, "/tools/bundles", None, &json!({}));
    assert_eq!(wrong_verb.status, 405, "{}", wrong_verb.body);
    assert_eq!(wrong_verb.body["error"]["code"], "METHOD_NOT_ALLOWED");
    let invoke = post(
        &served,
        "/tools/bundles/weather/tools/forecast/version/1.0.0/invoke",
        None,
        &json!({ "arguments": {} }),
    );
    assert_eq!(invoke.status, 400, "{}", invoke.body);
    assert_eq!(invoke.body["error"]["details"]["pointer"], "/arguments");
}

#[test]
fn the_mcp_endpoint_is_served_on_the_same_listener_for_admin_keys() {
    use crate::test_mcp::{exported, run_driver};
    let env = TestEnv::new();
    let vars = with_keys(&env);
    let served = serve(&env, &vars);
    assert!(
        served.said("MCP at http://").contains("/mcp: "),
        "{}",
        served.stderr()
    );
    let session = run_driver(
        &env,
        &json!({
            "url": served.url("/mcp"),
            "headers": { "x-api-key": ADMIN_KEY },
            "mode": "auto",
            "steps": [
                {"op": "list_all"},
                {"op": "call", "name": "now", "arguments": {}},
            ],
        }),
    );
    assert_eq!(session.step(0)["tools"], json!(exported(&env, &[])));
    assert_eq!(session.step(1)["isError"], false, "{:?}", session.steps);
    // Its tools run: a read key cannot start a session, nor can a caller without a key.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}},
    });
    for (key, status) in [(Some(READ_KEY), 403), (None, 401)] {
        let mut request = client()
            .post(served.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(initialize.to_string());
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        assert_eq!(request.send().unwrap().status().as_u16(), status, "{key:?}");
    }
}

#[test]
fn the_openapi_document_holds_every_route_and_passes_a_validator() {
    let env = TestEnv::new();
    let vars = with_keys(&env);
    let served = serve(&env, &vars);
    assert_eq!(get(&served, "/openapi.json", None).status, 401);
    let document = get(&served, "/openapi.json", Some(READ_KEY));
    assert_eq!(document.status, 200, "{}", document.body);
    let document = document.body;
    assert_eq!(document["openapi"], "3.1.0");
    let mut routes: Vec<String> = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |method| format!("{} {path}", method.to_uppercase()))
        })
        .collect();
    routes.sort();
    let version = "/tools/bundles/{bundle}/tools/{slug}/version/{version}";
    let mut expected = vec![
        "GET /v1/agent-tools".to_owned(),
        "POST /v1/agent-tools/invoke-batch".to_owned(),
        "GET /v1/jobs".to_owned(),
        "GET /v1/jobs/{id}".to_owned(),
        "GET /v1/jobs/{id}/stream".to_owned(),
        "POST /v1/jobs/{id}/cancel".to_owned(),
        "POST /api/v1/tools/attach".to_owned(),
        "GET /tools/bundles".to_owned(),
        "PUT /tools/bundles/{bundle}".to_owned(),
        "PATCH /tools/bundles/{bundle}".to_owned(),
        "DELETE /tools/bundles/{bundle}".to_owned(),
        format!("PUT {version}"),
        format!("PATCH {version}"),
        format!("DELETE {version}"),
        format!("GET {version}"),
        format!("POST {version}/invoke"),
        "GET /tools/tools".to_owned(),
        "GET /tools/tools/search".to_owned(),
        "GET /mcp".to_owned(),
        "POST /mcp".to_owned(),
        "DELETE /mcp".to_owned(),
        "GET /openapi.json".to_owned(),
    ];
    expected.sort();
    assert_eq!(routes, expected);
    assert_eq!(
        document["components"]["securitySchemes"]["apiKey"],
        json!({ "type": "apiKey", "in": "header", "name": "x-api-key" })
    );
    let file = env.input(&document);
    let output = std::process::Command::new(mcp_clients::http_python())
        .args([
            "-c",
            "import json, sys\n\
             from openapi_spec_validator import validate\n\
             validate(json.load(open(sys.argv[1])))\n\
             print('valid')",
            &file,
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && said.trim() == "valid",
        "{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_catalog_routes_answer_httpx_and_curl_with_keys() {
    let env = TestEnv::new();
    let python = mcp_clients::http_python();
    let vars = with_keys(&env);
    let served = serve(&env, &vars);
    // curl, as docs/serve.md shows it (with the admin key).
    let curl = |args: &[&str]| -> (u16, Value) {
        let output = std::process::Command::new("curl")
            .args([
                "-s",
                "-w",
                "\n%{http_code}",
                "-H",
                &format!("x-api-key: {ADMIN_KEY}"),
            ])
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let (body, status) = text.rsplit_once('\n').unwrap();
        (status.parse().unwrap(), serde_json::from_str(body).unwrap())
    };
    let (status, bundle) = curl(&[
        "-X",
        "PUT",
        &served.url(&format!("/tools/bundles/{NEW_BUNDLE}")),
        "-d",
        r#"{"slug":"clock","displayName":"Clock","isEnabled":true,"description":"What time it is."}"#,
    ]);
    assert_eq!(status, 201, "{bundle}");
    assert_eq!(bundle["slug"], "clock");
    // httpx: a version put, read, invoked and deleted; a read key refused on each write.
    let script = r#"
import json, sys, httpx
base, admin, read = sys.argv[1], sys.argv[2], sys.argv[3]
path = "/tools/bundles/clock/tools/tick/version/1.0.0"
doc = {"type": "native", "impl": {"func": "now"},
       "argSchema": {"type": "object", "properties": {}},
       "description": "The time now, in UTC."}
out = []
with httpx.Client(base_url=base, timeout=30) as c:
    for key in (read, admin):
        h = {"x-api-key": key}
        out.append(["put", c.put(path, json=doc, headers=h).status_code])
    h = {"x-api-key": read}
    got = c.get(path, headers=h)
    out.append(["get", got.status_code, got.json()["ref"]])
    ran = c.post(path + "/invoke", json={"args": {}}, headers={"x-api-key": admin})
    out.append(["invoke", ran.status_code, ran.json()["ok"]])
    found = c.get("/tools/tools/search", params={"q": "time now utc"}, headers=h)
    out.append(["search", found.status_code,
                "clock/tick@1.0.0" in [i["ref"] for i in found.json()["items"]]])
    out.append(["delete", c.delete(path, headers=h).status_code])
    out.append(["delete", c.delete(path, headers={"x-api-key": admin}).status_code])
print(json.dumps(out))
"#;
    let output = std::process::Command::new(python)
        .args(["-c", script, &served.url(""), ADMIN_KEY, READ_KEY])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let steps: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        steps,
        json!([
            ["put", 403],
            ["put", 201],
            ["get", 200, "clock/tick@1.0.0"],
            ["invoke", 200, true],
            ["search", 200, true],
            ["delete", 403],
            ["delete", 200],
        ])
    );
    let (status, found) =
        curl(&[&served.url("/tools/tools/search?q=current%20weather&pageSize=3")]);
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["query"], "current weather");
}

#[test]
fn a_running_server_runs_the_jobs_the_shell_queues_and_no_worker_starts() {
    let env = TestEnv::new();
    let served = serve(&env, &[]);
    let elsewhere = env.work().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("note.txt"), "from the shell's folder\n").unwrap();
    let batch = json!({ "calls": [
        { "call_id": "r", "name": "readfile", "arguments": { "path": "note.txt" } },
    ] });
    let mut command = env.command(&["--json", "invoke", "--batch", &env.input(&batch), "--async"]);
    command.current_dir(&elsewhere);
    let run = crate::common::Run::of(command, None);
    let answer = run.success().json();
    assert_eq!(
        answer["worker"],
        json!({ "started": false, "pid": null }),
        "{answer}"
    );
    let id = answer["results"][0]["job_id"].as_str().unwrap().to_owned();
    let waited = env.json(&["job", "wait", "--timeout", "30", &id]);
    let job = &waited["jobs"][0];
    assert_eq!(job["status"], "succeeded", "{waited}");
    assert_eq!(
        job["result"]["output"]["content_text"], "from the shell's folder\n",
        "the job works in the folder of the command that queued it"
    );
    // The server ran it: it is in the server's list, and no worker log was begun.
    let listed = get(&served, "/v1/jobs", None);
    assert_eq!(listed.body["jobs"][0]["id"], id.as_str());
    assert!(
        !env.catalog().join(".toolctl/jobs-worker.log").exists(),
        "a worker was started"
    );
}

#[test]
fn the_registry_follows_every_change_of_the_catalog_between_requests() {
    let env = TestEnv::fixture();
    let served = serve(&env, &[]);
    let names = |answer: &Answer| -> Vec<String> {
        answer.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = get(&served, "/v1/agent-tools", None);
    assert_eq!(first.body, get(&served, "/v1/agent-tools", None).body);
    assert!(!names(&first).contains(&"exec".to_owned()));
    // A change through the command line (enabling a built-in tool)...
    env.run(&["tool", "enable", "builtin/exec"]).success();
    let enabled = get(&served, "/v1/agent-tools", None);
    assert!(
        names(&enabled).contains(&"exec".to_owned()),
        "{:?}",
        names(&enabled)
    );
    assert_eq!(
        enabled.body["tools"],
        env.json(&["export", "--provider", "openai"])
    );
    // ... and edits of the tools' files in place, which only the change check sees.
    for bundle in std::fs::read_dir(env.catalog().join("bundles")).unwrap() {
        let tools = bundle.unwrap().path().join("tools");
        for slug in std::fs::read_dir(&tools).into_iter().flatten() {
            for version in std::fs::read_dir(slug.unwrap().path()).unwrap() {
                let path = version.unwrap().path().join("tool.json");
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let mut doc: Value = serde_json::from_str(&text).unwrap();
                doc["description"] = json!("A description edited in place by hand.");
                std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
            }
        }
    }
    let edited = get(&served, "/v1/agent-tools", None);
    assert_eq!(
        edited.body["tools"],
        env.json(&["export", "--provider", "openai"])
    );
    assert!(
        edited.body.to_string().contains("edited in place by hand"),
        "{}",
        edited.body
    );
}
