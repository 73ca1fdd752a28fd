//! What `invoke` must never do, whatever a tool file, an argument, the environment or a server
//! tries: splice raw text into a JSON body, read a secret the tool did not declare,
//! show a secret in any encoding, retry without end, run past its timeout, leave processes
//! behind, or answer "nothing found" when it could not look.
//!
//! Servers listen on 127.0.0.1 only (wiremock, or a std listener where the test needs to
//! control the bytes on the wire); nothing reaches the internet.

use crate::common::{Run, TestEnv, write_file};
use crate::test_invoke_http::{World, error_doc, http_doc, ok_json};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::time::{Duration, Instant};
use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

/// A tool put by hand into bundle `h` (bypassing `tool put`), as a person with an editor (or
/// a `git pull`) would: returns the file's path.
fn hand_written(w: &World, slug: &str, doc: &Value) -> std::path::PathBuf {
    let bundle_id = w.env.bundle_list(&[]).items[0].bundle_id.clone();
    let mut doc = doc.clone();
    doc["toolID"] = json!("0190c000-0000-7000-8000-00000000abcd");
    doc["bundleID"] = json!(bundle_id);
    doc["createdAt"] = json!("2026-01-01T00:00:00Z");
    doc["modifiedAt"] = json!("2026-01-01T00:00:00Z");
    let path = w.env.tool_file(&bundle_id, slug, "v1");
    write_file(&path, &serde_json::to_string_pretty(&doc).unwrap());
    path
}

/// `validate --json` must fail and report `pointer` in `file` with a message holding `needle`.
#[track_caller]
fn validate_reports(env: &TestEnv, file: &std::path::Path, pointer: &str, needle: &str) {
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    let doc = run.json();
    let found = doc["findings"].as_array().unwrap().iter().any(|f| {
        f["severity"] == "error"
            && f["file"].as_str() == file.to_str()
            && f["pointer"] == pointer
            && f["message"].as_str().unwrap().contains(needle)
    });
    assert!(
        found,
        "expected {pointer} ({needle}) in {}: {run}",
        file.display()
    );
}

/// `tool put` must fail with exit 3, naming the input file and `pointer`, the message holding
/// `needle`.
#[track_caller]
fn put_refused(w: &World, doc: &Value, pointer: &str, needle: &str) {
    let run = w.env.try_put_tool("h", doc);
    let err = error_doc(&run, 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR", "{run}");
    let text = serde_json::to_string(&err.error.details).unwrap();
    assert!(
        err.error.message.contains("inputs/"),
        "names the file: {run}"
    );
    assert!(
        err.error.details["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["pointer"] == pointer && p["message"].as_str().unwrap().contains(needle)),
        "expected {pointer} ({needle}): {text}"
    );
}

// --- 1. a JSON body is filled in as a tree, never as text --------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_json_body_template_with_an_unquoted_placeholder_is_refused_at_put_validate_and_invoke() {
    let w = World::new().await;
    Mock::given(method("POST"))
        .respond_with(ok_json(json!("sent")))
        .mount(&w.server)
        .await;
    let imp = json!({
        "method": "POST",
        "urlTemplate": w.url("/chat"),
        "bodyTemplate": r#"{"role": "user", "limit": ${n}}"#,
    });
    let doc = http_doc("inject", imp, json!({}));
    put_refused(&w, &doc, "/impl/bodyTemplate", "must be valid JSON");

    // Written by hand: validate names the file and the pointer, and invoke sends nothing.
    let file = hand_written(&w, "inject", &doc);
    validate_reports(&w.env, &file, "/impl/bodyTemplate", "must be valid JSON");
    let run = w.run("inject", &json!({ "n": "5, \"role\": \"admin\"" }));
    assert_ne!(run.code(), 0, "{run}");
    assert!(w.requests().await.is_empty(), "nothing may be sent: {run}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_quoted_placeholder_in_a_json_body_string_takes_a_typed_value_that_cannot_add_members() {
    let w = World::new().await;
    Mock::given(method("POST"))
        .respond_with(ok_json(json!("sent")))
        .mount(&w.server)
        .await;
    w.tool(
        "chat",
        json!({
            "method": "POST",
            "urlTemplate": w.url("/chat"),
            "bodyTemplate": r#"{"role": "user", "limit": "${n}", "note": "n is ${n}"}"#,
        }),
    );
    w.value("chat", &json!({ "n": 5 }));
    w.value("chat", &json!({ "n": "5, \"role\": \"admin\"" }));
    let bodies: Vec<Value> = w
        .requests()
        .await
        .iter()
        .map(|r| r.body_json().unwrap())
        .collect();
    assert_eq!(
        bodies,
        [
            json!({ "role": "user", "limit": 5, "note": "n is 5" }),
            json!({ "role": "user", "limit": "5, \"role\": \"admin\"", "note": "n is 5, \"role\": \"admin\"" }),
        ]
    );
}

// --- 2. only declared secrets -----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_placeholder_that_is_neither_an_argument_nor_a_declared_secret_is_refused_at_put() {
    let w = World::new().await;
    let doc = http_doc(
        "sneaky",
        json!({ "urlTemplate": w.url("/x"), "headers": { "X-Key": "${API_KEY}" } }),
        json!({ "argSchema": { "type": "object", "properties": {} } }),
    );
    put_refused(
        &w,
        &doc,
        "/impl/headers/X-Key",
        "${API_KEY} is neither an argument",
    );

    // A name both an argument and a secret is ambiguous: refused too.
    let doc = http_doc(
        "both",
        json!({ "urlTemplate": w.url("/x?k=${KEY}") }),
        json!({ "argSchema": { "type": "object", "properties": { "KEY": {} } }, "secrets": ["KEY"] }),
    );
    put_refused(&w, &doc, "/secrets/0", "both an argument");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_absent_optional_argument_never_takes_a_secret_of_the_same_name() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("fine")))
        .mount(&w.server)
        .await;
    w.tool_with(
        "forecast",
        json!({ "urlTemplate": w.url("/f?q=${city}&days=${days}") }),
        json!({ "argSchema": { "type": "object", "properties": {
            "city": { "type": "string" }, "days": { "type": "integer" } }, "required": ["city"] } }),
    );
    let mut cmd = w.command("forecast", &json!({ "city": "Oslo" }));
    cmd.env("TOOLCTL_SECRET_days", "X")
        .env("TOOLCTL_SECRET_city", "Y");
    Run::of(cmd, None).success();
    let requests = w.requests().await;
    assert_eq!(requests[0].url.query(), Some("q=Oslo"));
}

// --- 8. optional arguments in urlTemplate -----------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_forecast_example_runs_with_absent_null_and_default_days() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!({ "forecast": ["sun"] })))
        .mount(&w.server)
        .await;
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/forecast.json"),
    )
    .unwrap()
    .replace("https://api.weather.example", &w.url(""));
    let mut doc: Value = serde_json::from_str(&example).unwrap();
    w.env.put_tool("h", &doc);
    // As the README writes it: a JSON string holding the object.
    let run = w.env.run(&[
        "--json",
        "invoke",
        "h/forecast",
        "--args",
        r#""{\"city\":\"Oslo\"}""#,
    ]);
    run.success();
    assert_eq!(run.json()["value"], json!(["sun"]), "{run}");
    // null, as an OpenAI strict-mode model sends an optional argument it leaves out.
    w.value("forecast", &json!({ "city": "Oslo", "days": null }));
    w.value("forecast", &json!({ "city": "Oslo", "days": 4 }));

    // With a default in the schema, the default is sent.
    doc["version"] = json!("v2");
    doc["argSchema"]["properties"]["days"]["default"] = json!(3);
    w.env.put_tool("h", &doc);
    w.value("forecast", &json!({ "city": "Oslo" }));

    let queries: Vec<String> = w
        .requests()
        .await
        .iter()
        .map(|r| r.url.query().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        queries,
        ["q=Oslo", "q=Oslo", "q=Oslo&days=4", "q=Oslo&days=3"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_placeholder_must_be_a_required_argument() {
    let w = World::new().await;
    let doc = http_doc(
        "user",
        json!({ "urlTemplate": w.url("/users/${id}/profile") }),
        json!({ "argSchema": { "type": "object", "properties": { "id": { "type": "string" } } } }),
    );
    put_refused(&w, &doc, "/impl/urlTemplate", "must be a required argument");
    let file = hand_written(&w, "user", &doc);
    validate_reports(
        &w.env,
        &file,
        "/impl/urlTemplate",
        "must be a required argument",
    );
    // A `\` ends the host as `/` does (URL parsers read `http://h\x` as `http://h/x`), so the
    // placeholder after it is in the path too (found by the `templates` fuzz target).
    let after_backslash = format!("{}\\${{id}}/profile", w.url("/").trim_end_matches('/'));
    let doc = http_doc(
        "user",
        json!({ "urlTemplate": after_backslash }),
        json!({ "argSchema": { "type": "object", "properties": { "id": { "type": "string" } } } }),
    );
    put_refused(&w, &doc, "/impl/urlTemplate", "must be a required argument");
}

// --- 4. retries are bounded -------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn max_retries_is_capped_at_put_and_in_validate() {
    let w = World::new().await;
    let doc = http_doc(
        "storm",
        json!({ "urlTemplate": w.url("/x") }),
        json!({ "maxRetries": 1_000_000 }),
    );
    put_refused(&w, &doc, "/maxRetries", "at most 10");
    let file = hand_written(&w, "storm", &doc);
    validate_reports(&w.env, &file, "/maxRetries", "");
}

#[tokio::test(flavor = "multi_thread")]
async fn retries_stop_when_the_tools_timeout_is_spent() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503).insert_header("Retry-After", "1"))
        .mount(&w.server)
        .await;
    w.tool_with(
        "flaky",
        json!({ "urlTemplate": w.url("/x"), "timeoutMs": 1500 }),
        json!({ "maxRetries": 10 }),
    );
    let started = Instant::now();
    let err = w.failure("flaky", &json!({}), 7);
    let took = started.elapsed();
    assert_eq!(err.error.code, "UPSTREAM_ERROR", "{err:?}");
    // Waits of 1 s: the attempt at 0 s and at 1 s; one at 2 s would be past the 1.5 s.
    assert_eq!(w.requests().await.len(), 2, "{err:?}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

// --- 16. a body that drips past timeoutMs is a TIMEOUT ----------------------------------------

/// A server on 127.0.0.1 that answers each connection with `head`, then `body` one byte every
/// `every`, then holds the connection open; returns its port. The thread ends when the test's process does.
fn dripping_server(head: &'static str, body: &'static [u8], every: Duration) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request);
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                for byte in body {
                    std::thread::sleep(every);
                    if stream.write_all(&[*byte]).is_err() {
                        return;
                    }
                }
                // Held open: the client must give up by itself.
                std::thread::sleep(Duration::from_secs(5));
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_drips_past_timeout_ms_is_a_timeout_that_names_timeout_ms() {
    let port = dripping_server(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n",
        b"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
        Duration::from_millis(100),
    );
    let env = TestEnv::new();
    env.edit_config(|c| c["allowedHosts"] = json!([format!("127.0.0.1:{port}")]));
    env.bundle("h");
    env.put_tool(
        "h",
        &http_doc(
            "drip",
            json!({ "urlTemplate": format!("http://127.0.0.1:{port}/"), "timeoutMs": 700 }),
            json!({ "maxRetries": 0 }),
        ),
    );
    let started = Instant::now();
    let run = env.run(&["--json", "invoke", "h/drip"]);
    let took = started.elapsed();
    let err = error_doc(&run, 7);
    assert_eq!(err.error.code, "TIMEOUT", "{run}");
    assert!(err.error.message.contains("timeoutMs"), "{run}");
    assert!(took < Duration::from_secs(3), "took {took:?}");

    // Headers that never come: TIMEOUT too, naming timeoutMs.
    let port = dripping_server("", b"", Duration::ZERO);
    env.edit_config(|c| c["allowedHosts"] = json!([format!("127.0.0.1:{port}")]));
    env.put_tool(
        "h",
        &http_doc(
            "silent",
            json!({ "urlTemplate": format!("http://127.0.0.1:{port}/"), "timeoutMs": 300 }),
            json!({ "maxRetries": 0 }),
        ),
    );
    let run = env.run(&["--json", "invoke", "h/silent"]);
    let err = error_doc(&run, 7);
    assert_eq!(err.error.code, "TIMEOUT", "{run}");
    assert!(err.error.message.contains("timeoutMs"), "{run}");
}

// --- 3. redaction everywhere ------------------------------------------------------------------

/// A secret with characters that JSON, URLs and HTML each write differently.
const SECRET: &str = "sk-Live/Zq9+é=&x";

/// `SECRET` in every form a server may echo it in.
fn echoed_forms(secret: &str) -> Vec<String> {
    use base64::Engine;
    let json = serde_json::to_string(secret).unwrap();
    let json = json.trim_matches('"');
    vec![
        secret.to_owned(),
        json.replace('/', "\\/"),
        secret
            .encode_utf16()
            .map(|u| format!("\\u{u:04x}"))
            .collect(),
        secret.bytes().map(|b| format!("%{b:02x}")).collect(),
        secret.bytes().map(|b| format!("%{b:02X}")).collect(),
        base64::engine::general_purpose::STANDARD.encode(format!("user:{secret}")),
    ]
}

#[track_caller]
fn assert_no_form_of(run: &Run, secret: &str) {
    for form in echoed_forms(secret) {
        assert!(
            !run.stdout.contains(&form) && !run.stderr.contains(&form),
            "leaked the secret as {form}\n{run}"
        );
    }
}

/// A tool `h/<slug>` that sends `${TOKEN}` in a header, and a server answering `status` with
/// every echoed form of [`SECRET`].
async fn echoing(w: &World, slug: &str, status: u16) {
    let body = format!("echo: {}", echoed_forms(SECRET).join(" | "));
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(status).set_body_raw(body, "text/plain"))
        .mount(&w.server)
        .await;
    w.tool_with(
        slug,
        json!({ "urlTemplate": w.url("/e"), "headers": { "X-Token": "${TOKEN}" }, "responseEncoding": "text" }),
        json!({ "secrets": ["TOKEN"], "argSchema": { "type": "object", "properties": {} }, "maxRetries": 0 }),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_echoed_in_any_encoding_never_shows_in_invoke_or_batch() {
    let w = World::new().await;
    echoing(&w, "fails", 500).await;
    let mut cmd = w.command("fails", &json!({}));
    cmd.env("TOOLCTL_SECRET_TOKEN", SECRET);
    let run = Run::of(cmd, None);
    let err = error_doc(&run, 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR", "{run}");
    assert!(run.stdout.contains("[redacted]"), "{run}");
    assert_no_form_of(&run, SECRET);

    // The same in a batch, and in a value.
    w.server.reset().await;
    echoing(&w, "answers", 200).await;
    let batch = json!({ "calls": [
        { "call_id": "a", "name": "h/fails", "arguments": {} },
        { "call_id": "b", "name": "h/answers", "arguments": {} },
    ] });
    let mut cmd = w.env.command(&["--json", "invoke", "--batch", "-"]);
    cmd.env("TOOLCTL_SECRET_TOKEN", SECRET);
    let run = Run::of(cmd, Some(&batch.to_string()));
    run.success();
    assert!(run.stdout.contains("[redacted]"), "{run}");
    assert_no_form_of(&run, SECRET);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_one_character_secret_is_redacted_where_it_stands_alone_and_words_survive() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"{"pin":"7","echo":"pin=7&x","note":"route 77 at 17:00"}"#,
            "application/json",
        ))
        .mount(&w.server)
        .await;
    w.tool_with(
        "pin",
        json!({ "urlTemplate": w.url("/p"), "headers": { "X-Pin": "${PIN}" } }),
        json!({ "secrets": ["PIN"], "argSchema": { "type": "object", "properties": {} } }),
    );
    let mut cmd = w.command("pin", &json!({}));
    cmd.env("TOOLCTL_SECRET_PIN", "7");
    let run = Run::of(cmd, None);
    run.success();
    assert_eq!(
        run.json()["value"],
        json!({ "pin": "[redacted]", "echo": "pin=[redacted]&x", "note": "route 77 at 17:00" }),
        "{run}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_another_allowed_origin_drops_secret_headers_and_sends_no_referer() {
    let w = World::new().await;
    let other = wiremock::MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("landed")))
        .mount(&other)
        .await;
    let landing = format!("{}/landing", other.uri());
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(302).insert_header("Location", landing.as_str()))
        .mount(&w.server)
        .await;
    w.env.edit_config(|c| {
        c["allowedHosts"] = json!([
            format!("127.0.0.1:{}", w.port),
            format!("127.0.0.1:{}", other.address().port())
        ]);
    });
    w.tool_with(
        "hop",
        json!({ "urlTemplate": w.url("/start"), "headers": {
            "Authorization": "Bearer ${TOKEN}", "X-Api-Key": "${TOKEN}",
            "Cookie": "session=abc", "Proxy-Authorization": "Basic cHJveHk6cGFzcw==",
            "X-Trace": "t1" } }),
        json!({ "secrets": ["TOKEN"], "argSchema": { "type": "object", "properties": {} } }),
    );
    let mut cmd = w.command("hop", &json!({}));
    cmd.env("TOOLCTL_SECRET_TOKEN", SECRET);
    let run = Run::of(cmd, None);
    run.success();
    assert_eq!(run.json()["value"], "landed", "{run}");

    let first = &w.requests().await[0];
    assert_eq!(first.headers["x-api-key"], SECRET);
    assert_eq!(
        first.headers["proxy-authorization"],
        "Basic cHJveHk6cGFzcw=="
    );
    let landed = &other.received_requests().await.unwrap()[0];
    for gone in [
        "authorization",
        "x-api-key",
        "cookie",
        "proxy-authorization",
        "referer",
    ] {
        assert!(
            landed.headers.get(gone).is_none(),
            "{gone} went to the other origin: {:?}",
            landed.headers
        );
    }
    assert_eq!(landed.headers["x-trace"], "t1");
}

#[tokio::test(flavor = "multi_thread")]
async fn pick_llm_never_prints_a_key_the_endpoint_echoes() {
    let key = "sk-Chat/Key+9é";
    let env = TestEnv::new();
    // The chat endpoint answers with the Authorization header it got, JSON-escaped (`\/`,
    // `\u00e9`): a selection whose text `--debug` shows.
    let server = wiremock::MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(|request: &wiremock::Request| {
            let auth = request.headers["authorization"].to_str().unwrap().to_owned();
            let escaped: String = auth
                .chars()
                .map(|c| match c {
                    '/' => "\\/".to_owned(),
                    c if !c.is_ascii() => format!("\\u{:04x}", c as u32),
                    c => c.to_string(),
                })
                .collect();
            let body = format!(
                r#"{{"choices":[{{"index":0,"message":{{"role":"assistant","content":"[\"now\"] you sent {escaped}"}},"finish_reason":"stop"}}]}}"#
            );
            ResponseTemplate::new(200).set_body_raw(body, "application/json")
        })
        .mount(&server)
        .await;
    env.edit_config(|c| {
        c["pick"]["llm"] =
            json!({ "baseUrl": format!("{}/v1", server.uri()), "model": "m", "apiKeySecret": "CHAT_KEY" });
    });
    let mut cmd = env.command(&[
        "--json",
        "pick",
        "what time is it",
        "--scorer",
        "llm",
        "--debug",
    ]);
    cmd.env("TOOLCTL_SECRET_CHAT_KEY", key);
    let run = Run::of(cmd, None);
    run.success();
    assert_eq!(server.received_requests().await.unwrap().len(), 1, "{run}");
    assert_no_form_of(&run, key);

    // An endpoint that fails and quotes the key escaped: the warning does not show it.
    server.reset().await;
    let escaped = key.replace('/', "\\/").replace('é', "\\u00e9");
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_raw(
            format!(r#"{{"error":"bad key Bearer {escaped}"}}"#),
            "application/json",
        ))
        .mount(&server)
        .await;
    let mut cmd = env.command(&["--json", "pick", "what time is it again", "--scorer", "llm"]);
    cmd.env("TOOLCTL_SECRET_CHAT_KEY", key);
    let run = Run::of(cmd, None);
    run.success();
    assert!(run.stderr.contains("[redacted]"), "{run}");
    assert_no_form_of(&run, key);
}

// --- 14. exec leaves nothing behind -----------------------------------------------------------

/// `invoke exec` with `args` (exec enabled first): the value.
fn exec(env: &TestEnv, args: &Value) -> Value {
    env.run(&["tool", "enable", "builtin/exec"]).success();
    let run = env.run(&["--json", "invoke", "exec", "--args", &args.to_string()]);
    run.success();
    run.json()["value"].clone()
}

/// The process whose id the program wrote to `file` in the working folder ends within a few
/// seconds; if it does not, it is killed (so the test leaves nothing behind) and the test fails.
#[track_caller]
pub(crate) fn assert_gone(env: &TestEnv, file: &str) {
    let pid: u32 = std::fs::read_to_string(env.work().join(file))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            return;
        }
        if Instant::now() > deadline {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
            panic!("process {pid} ({file}) outlived the call: {stat}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn exec_timeout_kills_a_process_that_left_the_group_with_setsid() {
    let env = TestEnv::new();
    let out = exec(
        &env,
        &json!({ "argv": ["sh", "-c", "setsid sh -c 'echo $$ > daemon.pid; exec sleep 60' & while [ ! -s daemon.pid ]; do sleep 0.01; done; sleep 60"], "timeout_ms": 700 }),
    );
    assert_eq!(out["timed_out"], true, "{out}");
    assert_gone(&env, "daemon.pid");
}

#[cfg(target_os = "linux")]
#[test]
fn exec_returns_when_its_program_exits_though_a_leftover_holds_the_pipe() {
    let env = TestEnv::new();
    let started = Instant::now();
    let out = exec(
        &env,
        &json!({ "argv": ["sh", "-c", "setsid sh -c 'echo $$ > left.pid; exec sleep 60' & while [ ! -s left.pid ]; do sleep 0.01; done; echo done"], "timeout_ms": 20000 }),
    );
    let took = started.elapsed();
    assert_eq!(out["timed_out"], false, "{out}");
    assert_eq!(out["exit_code"], 0, "{out}");
    assert_eq!(out["stdout"], "done\n", "{out}");
    assert_gone(&env, "left.pid");
    // Not the 20 s of timeout_ms: the program ended at once.
    assert!(took < Duration::from_secs(8), "took {took:?}");
}

// --- 15. file-search holds one folder open at a time, and never hides a failure --------------

/// `toolctl ARGS` on `env`'s catalog, run with at most `fds` open files.
fn with_file_limit(env: &TestEnv, fds: u32, args: &[&str]) -> Run {
    let inner = env.command(args);
    let mut cmd = std::process::Command::new("sh");
    cmd.env_clear()
        .arg("-c")
        .arg(format!("ulimit -n {fds} && exec \"$0\" \"$@\""))
        .arg(inner.get_program())
        .args(inner.get_args())
        .current_dir(inner.get_current_dir().unwrap())
        .stdin(std::process::Stdio::null());
    for (name, value) in inner.get_envs() {
        if let Some(value) = value {
            cmd.env(name, value);
        }
    }
    Run::of(cmd, None)
}

#[cfg(unix)]
#[test]
fn file_search_finds_every_file_of_a_wide_tree_with_few_file_handles() {
    let env = TestEnv::new();
    for i in 0..150 {
        write_file(&env.work().join(format!("d{i:03}/needle-{i:03}.txt")), "x");
    }
    let run = with_file_limit(
        &env,
        64,
        &[
            "--json",
            "invoke",
            "file-search",
            "--args",
            r#"{"query":"needle-","max_results":200}"#,
        ],
    );
    run.success();
    let value = &run.json()["value"];
    assert_eq!(value["truncated"], false, "{run}");
    assert_eq!(value["results"].as_array().unwrap().len(), 150, "{run}");
}

#[cfg(unix)]
#[test]
fn file_search_under_any_file_limit_is_complete_or_an_error_never_a_short_answer() {
    let env = TestEnv::new();
    for i in 0..150 {
        write_file(
            &env.work().join(format!("d{i:03}/e/needle-{i:03}.txt")),
            "x",
        );
    }
    let args = [
        "--json",
        "invoke",
        "file-search",
        "--args",
        r#"{"query":"needle-","max_results":200}"#,
    ];
    let (mut complete, mut failed) = (0, 0);
    for fds in 6..=40 {
        let run = with_file_limit(&env, fds, &args);
        if run.code() == 0 {
            let value = &run.json()["value"];
            assert_eq!(value["truncated"], false, "{fds}: {run}");
            assert_eq!(
                value["results"].as_array().unwrap().len(),
                150,
                "{fds}: {run}"
            );
            complete += 1;
        } else if run.stdout.contains("cannot read the folder") {
            let err = error_doc(&run, 7);
            assert!(
                err.error.message.contains("the search stopped"),
                "{fds}: {run}"
            );
            failed += 1;
        }
    }
    // Some limits leave room for the walk, and some are hit by it and say so.
    assert!(
        complete > 0 && failed > 0,
        "complete {complete}, failed {failed}"
    );
}
