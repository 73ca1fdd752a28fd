//! `toolctl invoke --batch` and usage metrics: the three request shapes (toolctl's own
//! `{"calls":[…]}`, an OpenAI or Ollama `tool_calls` array, an
//! assistant message), the `{ok, results, tool_messages, mode}` answer with every call's result
//! bound to its `call_id`, per-call errors embedded (exit 0), request-level errors
//! (`VALIDATION_ERROR` with a JSON pointer, exit 3), concurrency, `wait_ms` and the `TIMEOUT`
//! that cancels a call, the 12,000-byte truncation, and `callCount`/`lastCalledAt` kept in
//! `.toolctl/usage.sqlite`.

use crate::common::{ErrorDoc, TestEnv, keys, ordered, timestamp, tool_doc, write_file};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const READFILE_ID: &str = "0190a000-0000-7000-8000-000000000001";

// --- helpers ----------------------------------------------------------------------------------

/// Check the whole answer of a batch against the calls it was sent (`(call_id, name)` in
/// request order): `{ok:true, results, tool_messages, mode:"sync"}`, each result
/// `{call_id,name,ok:true,value}` or `{call_id,name,ok:false,error:{code,message[,details]}}`,
/// each tool message `{role:"tool", tool_call_id, name, content}` (Ollama's: `{role:"tool",
/// tool_name, content}`) whose content is exactly the
/// JSON text of `{"ok":true,"value":value}` or `{"ok":false,"error":error}` (a call's value is
/// under `value` everywhere, as `invoke --json` prints it).
#[track_caller]
fn check_answer(doc: &Value, calls: &[(&str, &str)]) {
    assert_eq!(
        keys(doc),
        ["ok", "results", "tool_messages", "mode"],
        "{doc:#}"
    );
    assert_eq!(doc["ok"], true, "{doc:#}");
    assert_eq!(doc["mode"], "sync", "{doc:#}");
    let results = doc["results"].as_array().unwrap();
    let messages = doc["tool_messages"].as_array().unwrap();
    assert_eq!(results.len(), calls.len(), "{doc:#}");
    assert_eq!(messages.len(), calls.len(), "{doc:#}");
    for ((result, message), (call_id, name)) in results.iter().zip(messages).zip(calls) {
        assert_eq!(result["call_id"], *call_id, "request order: {doc:#}");
        assert_eq!(result["name"], *name, "{result:#}");
        let content = if result["ok"] == true {
            assert_eq!(
                keys(result),
                ["call_id", "name", "ok", "value"],
                "{result:#}"
            );
            format!(r#"{{"ok":true,"value":{}}}"#, ordered(&result["value"]))
        } else {
            assert_eq!(result["ok"], false, "{result:#}");
            assert_eq!(
                keys(result),
                ["call_id", "name", "ok", "error"],
                "{result:#}"
            );
            let error = &result["error"];
            let error_keys = keys(error);
            assert!(
                error_keys == ["code", "message"] || error_keys == ["code", "message", "details"],
                "{error:#}"
            );
            assert!(error["code"].is_string(), "{error:#}");
            assert!(
                error["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{error:#}"
            );
            if let Some(details) = error.get("details") {
                assert!(
                    details.as_object().is_some_and(|d| !d.is_empty()),
                    "details only when there are some: {error:#}"
                );
            }
            format!(r#"{{"ok":false,"error":{}}}"#, ordered(error))
        };
        assert_eq!(message["role"], "tool");
        if message.get("tool_name").is_some() {
            // Ollama's: no ids, the tool's name as `tool_name`.
            assert_eq!(
                keys(message),
                ["role", "tool_name", "content"],
                "{message:#}"
            );
            assert_eq!(message["tool_name"], *name);
        } else {
            assert_eq!(
                keys(message),
                ["role", "tool_call_id", "name", "content"],
                "{message:#}"
            );
            assert_eq!(message["tool_call_id"], *call_id, "call_id binding");
            assert_eq!(message["name"], *name);
        }
        assert_eq!(
            message["content"].as_str().unwrap(),
            content,
            "tool message content agrees with the result"
        );
    }
}

/// `--json invoke --batch FILE` with `request` in FILE: must exit 0 with nothing on stderr;
/// the answer is checked against `calls` (see [`check_answer`]).
#[track_caller]
fn batch(env: &TestEnv, request: &Value, calls: &[(&str, &str)]) -> Value {
    let file = env.input(request);
    let run = env.run(&["--json", "invoke", "--batch", &file]);
    run.success();
    assert_eq!(run.stderr, "", "{run}");
    let doc = run.json();
    check_answer(&doc, calls);
    doc
}

/// `--json invoke --batch -` with `text` on stdin; must fail with exit 3 and a
/// `VALIDATION_ERROR`.
#[track_caller]
fn refused(env: &TestEnv, text: &str) -> ErrorDoc {
    let run = env.run_stdin(&["--json", "invoke", "--batch", "-"], text);
    run.failure(3);
    assert_eq!(run.stderr, "", "--json errors go to stdout only\n{run}");
    let doc: ErrorDoc = run.parse();
    assert!(!doc.ok);
    assert_eq!(doc.error.code, "VALIDATION_ERROR", "{text}\n{run}");
    doc
}

/// The result of `call_id`.
#[track_caller]
fn result<'a>(doc: &'a Value, call_id: &str) -> &'a Value {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no result for {call_id}: {doc:#}"))
}

/// The error code of `call_id`'s result (which must have failed).
#[track_caller]
fn code_of(doc: &Value, call_id: &str) -> String {
    let result = result(doc, call_id);
    assert_eq!(result["ok"], false, "{result:#}");
    result["error"]["code"].as_str().unwrap().to_owned()
}

fn enable_exec(env: &TestEnv) {
    env.run(&["tool", "enable", "builtin/exec"]).success();
}

/// `tool get TOOL --json`'s `usage`.
#[track_caller]
fn usage(env: &TestEnv, tool: &str) -> Value {
    let got = env.json(&["tool", "get", tool]);
    let usage = got["usage"].clone();
    assert_eq!(keys(&usage), ["callCount", "lastCalledAt"], "{usage}");
    usage
}

/// Every file of the catalog outside `.toolctl/`, with its bytes.
fn catalog_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".toolctl") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// toolctl's own batch request, against a workspace with README.md and test.txt.
fn toolctl_request() -> Value {
    json!({
        "calls": [
            { "call_id": "call-abc-123", "name": "readfile", "arguments": { "path": "README.md" } },
            { "call_id": "call-def-456", "name": "file-search", "arguments": { "query": "test" } }
        ],
        "mode": "sync",
        "wait_ms": 15000,
        "queue": "default"
    })
}

fn toolctl_request_workspace(env: &TestEnv) {
    write_file(&env.work().join("README.md"), "# My Project\n...");
    write_file(&env.work().join("test.txt"), "t");
}

const TOOLCTL_REQUEST_CALLS: &[(&str, &str)] = &[
    ("call-abc-123", "readfile"),
    ("call-def-456", "file-search"),
];

// --- toolctl's own request ----------------------------------------------------------------------

#[test]
fn the_toolctl_request_from_a_file_answers_every_call_bound_to_its_call_id() {
    let env = TestEnv::new();
    toolctl_request_workspace(&env);
    let doc = batch(&env, &toolctl_request(), TOOLCTL_REQUEST_CALLS);
    // The answer, each call's value under `value` in results and tool messages alike (one
    // name everywhere, docs/JSON.md rule 5).
    assert_eq!(
        ordered(&doc),
        ordered(&json!({
            "ok": true,
            "results": [
                {
                    "call_id": "call-abc-123",
                    "name": "readfile",
                    "ok": true,
                    "value": {
                        "path": "README.md",
                        "content_text": "# My Project\n...",
                        "bytes": 16,
                        "truncated": false
                    }
                },
                {
                    "call_id": "call-def-456",
                    "name": "file-search",
                    "ok": true,
                    "value": { "results": [{ "path": "test.txt", "type": "file" }], "truncated": false }
                }
            ],
            "tool_messages": [
                {
                    "role": "tool",
                    "tool_call_id": "call-abc-123",
                    "name": "readfile",
                    "content": "{\"ok\":true,\"value\":{\"path\":\"README.md\",\"content_text\":\"# My Project\\n...\",\"bytes\":16,\"truncated\":false}}"
                },
                {
                    "role": "tool",
                    "tool_call_id": "call-def-456",
                    "name": "file-search",
                    "content": "{\"ok\":true,\"value\":{\"results\":[{\"path\":\"test.txt\",\"type\":\"file\"}],\"truncated\":false}}"
                }
            ],
            "mode": "sync"
        }))
    );
}

#[test]
fn the_toolctl_request_from_stdin_answers_the_same() {
    let env = TestEnv::new();
    toolctl_request_workspace(&env);
    let from_file = batch(&env, &toolctl_request(), TOOLCTL_REQUEST_CALLS);
    let run = env.run_stdin(
        &["--json", "invoke", "--batch", "-"],
        &toolctl_request().to_string(),
    );
    run.success();
    assert_eq!(run.stderr, "");
    let from_stdin = run.json();
    check_answer(&from_stdin, TOOLCTL_REQUEST_CALLS);
    assert_eq!(ordered(&from_stdin), ordered(&from_file));
}

#[test]
fn calls_name_tools_by_slug_ref_or_tool_id_and_the_answer_echoes_the_name() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "x");
    let names = [
        "readfile",
        "builtin/readfile",
        "builtin/readfile@v1",
        READFILE_ID,
    ];
    let calls: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            json!({ "call_id": format!("c{i}"), "name": name, "arguments": { "path": "a.txt" } })
        })
        .collect();
    let ids: Vec<String> = (0..names.len()).map(|i| format!("c{i}")).collect();
    let expected: Vec<(&str, &str)> = ids.iter().map(String::as_str).zip(names).collect();
    let doc = batch(&env, &json!({ "calls": calls }), &expected);
    for id in &ids {
        assert_eq!(result(&doc, id)["value"]["content_text"], "x", "{doc:#}");
    }
}

#[test]
fn arguments_may_be_absent_null_or_a_json_string_holding_an_object() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "x");
    let doc = batch(
        &env,
        &json!({ "calls": [
            { "call_id": "absent", "name": "now" },
            { "call_id": "null", "name": "now", "arguments": null },
            { "call_id": "string", "name": "readfile", "arguments": "{\"path\":\"a.txt\"}" },
            { "call_id": "empty-string", "name": "now", "arguments": "" }
        ], "wait_ms": null, "mode": null }),
        &[
            ("absent", "now"),
            ("null", "now"),
            ("string", "readfile"),
            ("empty-string", "now"),
        ],
    );
    for id in ["absent", "null", "empty-string"] {
        assert!(result(&doc, id)["value"]["unix_ms"].is_i64(), "{doc:#}");
    }
    assert_eq!(result(&doc, "string")["value"]["content_text"], "x");
}

// --- the shapes models send -------------------------------------------------------------------

#[test]
fn an_openai_tool_calls_array_keeps_its_ids() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "from a");
    let request = json!([
        {
            "id": "call_Xy12",
            "type": "function",
            "function": { "name": "readfile", "arguments": "{\"path\":\"a.txt\"}" }
        },
        {
            "id": "call_Zz34",
            "type": "function",
            "function": { "name": "now", "arguments": "{}" }
        },
        {
            "id": "call_bad",
            "type": "function",
            "function": { "name": "readfile", "arguments": "{\"path\":\n  ]" }
        }
    ]);
    let doc = batch(
        &env,
        &request,
        &[
            ("call_Xy12", "readfile"),
            ("call_Zz34", "now"),
            ("call_bad", "readfile"),
        ],
    );
    assert_eq!(
        ordered(&result(&doc, "call_Xy12")["value"]),
        ordered(
            &json!({ "path": "a.txt", "content_text": "from a", "bytes": 6, "truncated": false })
        )
    );
    assert!(result(&doc, "call_Zz34")["value"]["unix_ms"].is_i64());
    // Arguments that are not JSON: that call's own VALIDATION_ERROR, with the position.
    let bad = &result(&doc, "call_bad")["error"];
    assert_eq!(bad["code"], "VALIDATION_ERROR", "{bad:#}");
    assert_eq!(bad["details"]["line"], 2, "{bad:#}");
    assert_eq!(bad["details"]["column"], 3, "{bad:#}");
}

#[test]
fn an_ollama_tool_calls_array_numbers_its_calls() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "from a");
    let request = json!([
        { "function": { "name": "now", "arguments": {} } },
        { "function": { "name": "readfile", "arguments": { "path": "a.txt" } } },
        { "function": { "name": "nope", "arguments": {} } }
    ]);
    let doc = batch(
        &env,
        &request,
        &[
            ("call_0", "now"),
            ("call_1", "readfile"),
            ("call_2", "nope"),
        ],
    );
    assert!(result(&doc, "call_0")["value"]["unix_ms"].is_i64());
    assert_eq!(result(&doc, "call_1")["value"]["content_text"], "from a");
    assert_eq!(code_of(&doc, "call_2"), "UNKNOWN_TOOL");
    // Answered as Ollama takes tool results: `tool_name`, in the calls' order.
    let names: Vec<&Value> = doc["tool_messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["tool_name"])
        .collect();
    assert_eq!(names, [&json!("now"), &json!("readfile"), &json!("nope")]);
}

#[test]
fn an_assistant_message_with_tool_calls() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "from a");
    let message = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [
            {
                "id": "first",
                "type": "function",
                "function": { "name": "readfile", "arguments": "{\"path\":\"a.txt\"}" }
            },
            { "function": { "name": "now", "arguments": {} } }
        ]
    });
    let doc = batch(&env, &message, &[("first", "readfile"), ("call_1", "now")]);
    assert_eq!(result(&doc, "first")["value"]["content_text"], "from a");
    assert!(result(&doc, "call_1")["value"]["unix_ms"].is_i64());
}

// --- per-call errors --------------------------------------------------------------------------

#[test]
fn per_call_errors_are_embedded_in_the_results_with_exit_0() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "x");
    let request = json!({
        "calls": [
            { "call_id": "unknown", "name": "nonexistent_tool", "arguments": {} },
            { "call_id": "disabled", "name": "exec", "arguments": { "argv": ["touch", "ran"] } },
            { "call_id": "ok", "name": "readfile", "arguments": { "path": "a.txt" } },
            { "call_id": "invalid", "name": "readfile", "arguments": { "max_bytes": 0 } },
            {
                "call_id": "ran-and-failed",
                "name": "readfile",
                "arguments": { "path": "missing.txt" }
            },
            { "call_id": "not-an-object", "name": "now", "arguments": "[1,2]" }
        ],
        "mode": "sync"
    });
    let doc = batch(
        &env,
        &request,
        &[
            ("unknown", "nonexistent_tool"),
            ("disabled", "exec"),
            ("ok", "readfile"),
            ("invalid", "readfile"),
            ("ran-and-failed", "readfile"),
            ("not-an-object", "now"),
        ],
    );

    let unknown = &result(&doc, "unknown")["error"];
    assert_eq!(keys(unknown), ["code", "message"], "{unknown:#}");
    assert_eq!(unknown["code"], "UNKNOWN_TOOL");
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("'nonexistent_tool'"),
        "{unknown:#}"
    );

    let disabled = &result(&doc, "disabled")["error"];
    assert_eq!(disabled["code"], "TOOL_DISABLED", "{disabled:#}");
    assert!(
        disabled["message"].as_str().unwrap().contains("disabled"),
        "{disabled:#}"
    );
    assert!(
        !env.work().join("ran").exists(),
        "a disabled tool never runs"
    );

    assert_eq!(result(&doc, "ok")["value"]["content_text"], "x");

    let invalid = &result(&doc, "invalid")["error"];
    assert_eq!(invalid["code"], "VALIDATION_ERROR", "{invalid:#}");
    let mut errors: Vec<(String, String)> = invalid["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["pointer"].as_str().unwrap().to_owned(),
                e["keyword"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    errors.sort();
    assert_eq!(
        errors,
        [
            ("".to_owned(), "required".to_owned()),
            ("/max_bytes".to_owned(), "minimum".to_owned())
        ]
    );

    let failed = &result(&doc, "ran-and-failed")["error"];
    assert_eq!(failed["code"], "NOT_FOUND", "{failed:#}");
    assert!(
        failed["message"].as_str().unwrap().contains("missing.txt"),
        "{failed:#}"
    );

    assert_eq!(code_of(&doc, "not-an-object"), "VALIDATION_ERROR");
}

#[test]
fn a_batch_whose_calls_all_fail_still_exits_0() {
    let env = TestEnv::new();
    let doc = batch(
        &env,
        &json!({ "calls": [
            { "call_id": "a", "name": "nope" },
            { "call_id": "b", "name": "exec", "arguments": { "argv": ["true"] } }
        ] }),
        &[("a", "nope"), ("b", "exec")],
    );
    assert_eq!(code_of(&doc, "a"), "UNKNOWN_TOOL");
    assert_eq!(code_of(&doc, "b"), "TOOL_DISABLED");
}

// --- request-level errors ---------------------------------------------------------------------

#[test]
fn a_request_that_is_not_json_is_a_validation_error_with_the_position() {
    let env = TestEnv::new();
    let err = refused(&env, "{\n  \"calls\": [\n    {\"call_id\": }\n]}");
    assert_eq!(err.error.details["line"], 3, "{err:?}");
    assert_eq!(err.error.details["column"], 17, "{err:?}");
    assert!(err.error.message.contains("not valid JSON"), "{err:?}");

    // From a file too: the file is named.
    let file = env.root().join("inputs/broken.json");
    std::fs::write(&file, "[{\"function\": tru }]").unwrap();
    let err = env.json_error(&["invoke", "--batch", file.to_str().unwrap()], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(err.error.details["line"], 1, "{err:?}");
    assert_eq!(err.error.details["file"], file.to_str().unwrap(), "{err:?}");
    assert!(err.error.details["column"].is_u64(), "{err:?}");

    // An empty input is not JSON either.
    let err = refused(&env, "");
    assert_eq!(err.error.details["line"], 1, "{err:?}");
}

#[test]
fn bad_requests_are_a_validation_error_naming_the_place() {
    let env = TestEnv::new();
    enable_exec(&env);
    let touch =
        json!({ "call_id": "t", "name": "exec", "arguments": { "argv": ["touch", "ran"] } });
    let call = |id: &str| json!({ "call_id": id, "name": "now" });
    let many = |n: usize| -> Vec<Value> { (0..n).map(|i| call(&format!("c{i}"))).collect() };
    let openai = |id: Value| json!({ "id": id, "type": "function", "function": { "name": "now", "arguments": "{}" } });
    let with_wait = |wait: Value| json!({ "calls": [touch.clone()], "wait_ms": wait });
    let cases: Vec<(Value, &str, &str)> = vec![
        // (request, details.pointer, something the message says)
        (json!({ "calls": [] }), "/calls", "not 0"),
        (json!([]), "", "not 0"),
        (json!({ "tool_calls": [] }), "/tool_calls", "not 0"),
        (
            json!({ "calls": ([many(20), vec![touch.clone()]].concat()) }),
            "/calls",
            "not 21",
        ),
        (
            Value::Array({
                let mut c: Vec<Value> = (0..20).map(|i| openai(json!(format!("o{i}")))).collect();
                c.push(touch.clone());
                c
            }),
            "",
            "not 21",
        ),
        (
            json!({ "calls": [touch.clone(), { "name": "now" }] }),
            "/calls/1/call_id",
            "call_id",
        ),
        (
            json!({ "calls": [touch.clone(), { "call_id": 7, "name": "now" }] }),
            "/calls/1/call_id",
            "call_id",
        ),
        (
            json!({ "calls": [touch.clone(), call("")] }),
            "/calls/1/call_id",
            "120",
        ),
        (
            json!({ "calls": [touch.clone(), call(&"x".repeat(121))] }),
            "/calls/1/call_id",
            "120",
        ),
        (
            json!({ "calls": [touch.clone(), call(&"é".repeat(121))] }),
            "/calls/1/call_id",
            "120",
        ),
        (json!([openai(json!("x".repeat(121)))]), "/0/id", "120"),
        (json!([openai(json!(5))]), "/0/id", "id"),
        (
            json!({ "calls": [touch.clone(), call("a"), call("t")] }),
            "/calls/2",
            "'t' is used twice",
        ),
        (
            json!([openai(json!("same")), openai(json!("same"))]),
            "/1",
            "'same' is used twice",
        ),
        // An Ollama call's stand-in id (its position) may collide with a given one.
        (
            json!([openai(json!("call_1")), { "function": { "name": "now" } }]),
            "/1",
            "'call_1' is used twice",
        ),
        (with_wait(json!(99)), "/wait_ms", "100"),
        (with_wait(json!(60001)), "/wait_ms", "60000"),
        (with_wait(json!("abc")), "/wait_ms", "integer"),
        (with_wait(json!(-1)), "/wait_ms", "integer"),
        (with_wait(json!(1500.5)), "/wait_ms", "integer"),
        (with_wait(json!("15000")), "/wait_ms", "integer"),
        (
            json!({ "calls": [touch.clone(), { "call_id": "a", "name": "now", "arguments": 3 }] }),
            "/calls/1/arguments",
            "arguments",
        ),
        (
            json!({ "calls": [touch.clone(), { "call_id": "a", "name": "now", "arguments": [] }] }),
            "/calls/1/arguments",
            "arguments",
        ),
        (
            json!({ "calls": [touch.clone(), { "call_id": "a", "name": "now", "arguments": true }] }),
            "/calls/1/arguments",
            "arguments",
        ),
        (
            json!([{ "id": "a", "function": { "name": "now", "arguments": 3 } }]),
            "/0/function/arguments",
            "arguments",
        ),
        (
            json!({ "calls": [touch.clone(), { "call_id": "a" }] }),
            "/calls/1/name",
            "name",
        ),
        (
            json!({ "calls": [touch.clone(), { "call_id": "a", "name": "" }] }),
            "/calls/1/name",
            "name",
        ),
        (
            json!([{ "id": "a", "function": { "arguments": "{}" } }]),
            "/0/function/name",
            "name",
        ),
        (
            json!([{ "id": "a", "function": "now" }]),
            "/0/function",
            "function",
        ),
        (json!({ "calls": [touch.clone(), 3] }), "/calls/1", "object"),
        (json!({ "calls": { "a": 1 } }), "/calls", "array"),
        (json!({ "calls": "x" }), "/calls", "array"),
        (json!({ "tool_calls": {} }), "/tool_calls", "array"),
        (
            json!({ "calls": [touch.clone()], "mode": "batch" }),
            "/mode",
            "sync",
        ),
        (
            json!({ "calls": [touch.clone()], "mode": 1 }),
            "/mode",
            "sync",
        ),
        (
            json!({ "calls": [touch.clone()], "queue": "Default" }),
            "/queue",
            "a-z",
        ),
        (
            json!({ "calls": [touch.clone()], "queue": "" }),
            "/queue",
            "1 to 80",
        ),
        (
            json!({ "calls": [touch.clone()], "queue": "q".repeat(81) }),
            "/queue",
            "1 to 80",
        ),
        (
            json!({ "calls": [touch.clone()], "queue": "a b" }),
            "/queue",
            "a-z",
        ),
        (
            json!({ "calls": [touch.clone()], "queue": 7 }),
            "/queue",
            "a-z",
        ),
        (json!("calls"), "", "tool_calls"),
        (json!(3), "", "tool_calls"),
        (json!(null), "", "tool_calls"),
        (json!(true), "", "tool_calls"),
        (json!({ "foo": [] }), "", "tool_calls"),
        (json!({}), "", "tool_calls"),
    ];
    for (request, pointer, says) in cases {
        let text = request.to_string();
        let err = refused(&env, &text);
        assert_eq!(
            err.error.details,
            json!({ "pointer": pointer }),
            "{text}\n{err:?}"
        );
        assert!(
            err.error.message.contains(says),
            "{text}: the message should say {says:?}: {err:?}"
        );
    }
    assert!(
        !env.work().join("ran").exists(),
        "a refused request runs none of its calls"
    );
}

#[test]
fn a_good_queue_name_is_taken() {
    let env = TestEnv::new();
    let request =
        json!({ "calls": [{ "call_id": "a", "name": "now" }], "queue": "jobs.eu-1:fast_2" });
    batch(&env, &request, &[("a", "now")]);
}

/// An error is cut as an output is: a call whose argument makes a 1 MB URL is refused before
/// anything is sent (`VALIDATION_ERROR`, not the HTTP client's "builder error"), and its
/// message, in `results` and in `tool_messages`, stays within the 12,000-byte cap.
#[test]
fn a_call_error_is_cut_to_the_cap_and_an_over_long_url_is_the_callers_error() {
    let env = TestEnv::new();
    env.edit_config(|c| c["allowedHosts"] = json!(["127.0.0.1:9"]));
    env.bundle("h");
    env.put_tool(
        "h",
        &crate::common::tool_doc_with(
            "get",
            "v1",
            json!({
                "type": "http",
                "impl": { "method": "GET", "urlTemplate": "http://127.0.0.1:9/x?q=${q}" },
                "argSchema": { "type": "object", "properties": { "q": { "type": "string" } } },
            }),
        ),
    );
    let big = "é".repeat(300_000);
    let request =
        json!({ "calls": [{ "call_id": "a", "name": "h/get", "arguments": { "q": big } }] });
    let doc = batch(&env, &request, &[("a", "h/get")]);
    let error = &result(&doc, "a")["error"];
    assert_eq!(error["code"], "VALIDATION_ERROR", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("URL"), "{message}");
    let content = doc["tool_messages"][0]["content"].as_str().unwrap();
    assert!(content.len() <= 13_000, "{} bytes", content.len());
    // A failure whose message is long (a schema refusal quoting the value) is cut and says so.
    env.put_tool(
        "h",
        &crate::common::tool_doc_with(
            "short",
            "v1",
            json!({
                "type": "http",
                "impl": { "method": "GET", "urlTemplate": "http://127.0.0.1:9/x?q=${q}" },
                "argSchema": { "type": "object", "properties": { "q": { "type": "string", "maxLength": 1 } } },
            }),
        ),
    );
    let request = json!({ "calls": [{ "call_id": "b", "name": "h/short", "arguments": { "q": "y".repeat(200_000) } }] });
    let doc = batch(&env, &request, &[("b", "h/short")]);
    let error = &result(&doc, "b")["error"];
    assert_eq!(error["code"], "VALIDATION_ERROR", "{error}");
    let text = error.to_string();
    assert!(text.len() <= 26_000, "{} bytes", text.len());
    let content = doc["tool_messages"][0]["content"].as_str().unwrap();
    assert!(content.len() <= 26_000, "{} bytes", content.len());
}

/// The ids of the queued jobs of an async answer, in call order.
fn job_ids(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["job_id"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn mode_async_queues_jobs_that_a_background_worker_runs_in_the_callers_workspace() {
    let env = TestEnv::new();
    std::fs::write(env.work().join("note.txt"), "from the workspace\n").unwrap();
    let doc = r#"{"calls":[
        {"call_id":"a","name":"now"},
        {"call_id":"b","name":"readfile","arguments":{"path":"note.txt"}},
        {"call_id":"c","name":"nope"}
    ],"mode":"async"}"#;
    let mut command = env.command(&["--json", "invoke", "--batch", "-"]);
    command.current_dir(env.work());
    let run = crate::common::Run::of(command, Some(doc));
    let answer = run.success().json();
    assert_eq!(answer["mode"], "async");
    assert_eq!(answer["tool_messages"], json!([]));
    assert_eq!(answer["results"][0]["job_type"], "builtin/now@v1");
    assert_eq!(answer["results"][2]["error"]["code"], "UNKNOWN_TOOL");
    assert!(answer["worker"]["pid"].as_u64().is_some(), "{answer}");
    let ids = job_ids(&answer);
    assert_eq!(ids.len(), 2);
    let mut wait = vec!["job", "wait", "--timeout", "30"];
    wait.extend(ids.iter().map(String::as_str));
    let waited = env.json(&wait);
    let jobs = waited["jobs"].as_array().unwrap();
    assert!(jobs.iter().all(|j| j["status"] == "succeeded"), "{waited}");
    assert_eq!(
        jobs[1]["result"]["output"]["content_text"], "from the workspace\n",
        "{waited}"
    );
    // The worker is gone once the queue is empty.
    let pid = answer["worker"]["pid"].as_u64().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "worker {pid} still runs"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn async_from_the_flag_and_a_second_worker_leaves_the_jobs_to_the_first() {
    let env = TestEnv::new();
    env.run(&["tool", "enable", "builtin/exec"]).success();
    let slow = json!({ "calls": [{
        "call_id": "slow", "name": "exec",
        "arguments": { "argv": ["sh", "-c", "sleep 1; echo slow"] },
    }] });
    let first = env.json(&["invoke", "--batch", &env.input(&slow), "--async"]);
    let quick = json!({ "calls": [
        { "call_id": "q1", "name": "now" },
        { "call_id": "q2", "name": "now" },
    ] });
    let second = env.json(&["invoke", "--batch", &env.input(&quick), "--async"]);
    let mut ids = job_ids(&first);
    ids.extend(job_ids(&second));
    let mut wait = vec!["job", "wait", "--timeout", "30"];
    wait.extend(ids.iter().map(String::as_str));
    let waited = env.json(&wait);
    let jobs = waited["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    assert!(jobs.iter().all(|j| j["status"] == "succeeded"), "{waited}");
    assert_eq!(jobs[0]["result"]["output"]["stdout"], "slow\n");
    // Without --batch, --async is a usage error.
    env.run(&["invoke", "now", "--async"]).failure(2);
}

#[test]
fn a_worker_killed_mid_job_leaves_it_failed_for_the_next_worker_to_say() {
    let env = TestEnv::new();
    env.run(&["tool", "enable", "builtin/exec"]).success();
    let long = json!({ "calls": [{
        "call_id": "long", "name": "exec",
        "arguments": { "argv": ["sh", "-c", "sleep 30"], "timeout_ms": 600000 },
    }] });
    let answer = env.json(&["invoke", "--batch", &env.input(&long), "--async"]);
    let id = job_ids(&answer).remove(0);
    let pid = answer["worker"]["pid"].as_u64().unwrap().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while env.json(&["job", "get", &id])["status"] != "running" {
        assert!(
            std::time::Instant::now() < deadline,
            "the job never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        std::process::Command::new("kill")
            // The worker with what it started (its own process group), as a reboot would.
            .args(["-KILL", "--", &format!("-{pid}")])
            .status()
            .unwrap()
            .success()
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    // The next async batch's worker finds it and marks it failed.
    let next = json!({ "calls": [{ "call_id": "n", "name": "now" }] });
    let again = env.json(&["invoke", "--batch", &env.input(&next), "--async"]);
    let next_id = job_ids(&again).remove(0);
    // One job did not succeed: exit 7, the jobs printed still.
    let run = env.run(&["--json", "job", "wait", "--timeout", "30", &id, &next_id]);
    run.failure(7);
    let refused: Value = serde_json::from_str(&run.stdout).unwrap();
    let waited = &refused["error"]["details"];
    let lost = &waited["jobs"][0];
    assert_eq!(lost["status"], "failed", "{waited}");
    assert_eq!(lost["result"]["error"]["code"], "WORKER_LOST", "{waited}");
    assert_eq!(waited["jobs"][1]["status"], "succeeded");
}

#[test]
fn a_refused_request_without_json_goes_to_stderr_with_exit_3() {
    let env = TestEnv::new();
    let run = env.run_stdin(&["invoke", "--batch", "-"], r#"{"calls":[]}"#);
    run.failure(3).stderr_has("1 to 20 calls");
    assert_eq!(run.stdout, "");
}

#[test]
fn the_limits_themselves_are_accepted() {
    let env = TestEnv::new();
    let long = "x".repeat(120);
    let wide = "é".repeat(120);
    for wait in [json!(100), json!(60000)] {
        batch(
            &env,
            &json!({ "calls": [
                { "call_id": long, "name": "now" },
                { "call_id": wide, "name": "now" }
            ], "wait_ms": wait }),
            &[(long.as_str(), "now"), (wide.as_str(), "now")],
        );
    }
    let ids: Vec<String> = (0..20).map(|i| format!("c{i}")).collect();
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| json!({ "call_id": id, "name": "now" }))
        .collect();
    let expected: Vec<(&str, &str)> = ids.iter().map(|id| (id.as_str(), "now")).collect();
    let doc = batch(&env, &json!({ "calls": calls }), &expected);
    for id in &ids {
        assert!(result(&doc, id)["value"]["unix_ms"].is_i64());
    }
}

#[test]
fn batch_and_a_tool_or_arguments_together_are_a_usage_error() {
    let env = TestEnv::new();
    let file = env.input(&json!({ "calls": [{ "call_id": "a", "name": "now" }] }));
    env.run(&["invoke", "now", "--batch", &file]).failure(2);
    env.run(&["invoke", "--batch", &file, "--args", "{}"])
        .failure(2);
    env.run(&["invoke", "--batch"]).failure(2);
}

// --- concurrency and binding ------------------------------------------------------------------

#[test]
fn calls_that_finish_out_of_order_are_each_bound_to_their_call_id() {
    let env = TestEnv::new();
    enable_exec(&env);
    // Call i sleeps (20 - i) × 40 ms: the first call finishes last. 8.4 s of sleeps in all.
    let ids: Vec<String> = (0..20).map(|i| format!("id-{i:02}")).collect();
    let calls: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let script = format!(
                "sleep {:.2}; echo {id} >> order.txt; echo {id}",
                (20 - i) as f64 * 0.04
            );
            json!({ "call_id": id, "name": "exec", "arguments": { "argv": ["sh", "-c", script] } })
        })
        .collect();
    let expected: Vec<(&str, &str)> = ids.iter().map(|id| (id.as_str(), "exec")).collect();
    let started = Instant::now();
    let doc = batch(
        &env,
        &json!({ "calls": calls, "wait_ms": 20000 }),
        &expected,
    );
    let took = started.elapsed();
    for id in &ids {
        assert_eq!(
            ordered(&result(&doc, id)["value"]),
            ordered(&json!({
                "exit_code": 0,
                "stdout": format!("{id}\n"),
                "stderr": "",
                "timed_out": false,
                "truncated": false
            })),
            "{id}'s output is its own"
        );
    }
    let finished = std::fs::read_to_string(env.work().join("order.txt")).unwrap();
    let finished: Vec<&str> = finished.lines().collect();
    assert_eq!(finished.len(), 20, "{finished:?}");
    assert_ne!(
        finished,
        ids.iter().map(String::as_str).collect::<Vec<_>>(),
        "they finished out of request order"
    );
    assert_ne!(
        finished[0], "id-00",
        "the longest sleep finished first? {finished:?}"
    );
    assert!(
        took < Duration::from_secs(4),
        "8.4 s of sleeps took {took:?}: the calls do not run concurrently"
    );
}

#[test]
fn twenty_calls_run_concurrently() {
    let env = TestEnv::new();
    enable_exec(&env);
    // The usage file exists before the batch (its concurrent creation is tested on its own).
    env.json(&["invoke", "now"]);
    let ids: Vec<String> = (0..20).map(|i| format!("s{i}")).collect();
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| {
            let argv = json!(["sh", "-c", format!("sleep 0.3; echo {id}")]);
            json!({ "call_id": id, "name": "exec", "arguments": { "argv": argv } })
        })
        .collect();
    let expected: Vec<(&str, &str)> = ids.iter().map(|id| (id.as_str(), "exec")).collect();
    let started = Instant::now();
    let doc = batch(&env, &json!({ "calls": calls }), &expected);
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "20 calls of 0.3 s took {took:?}"
    );
    for id in &ids {
        assert_eq!(result(&doc, id)["value"]["stdout"], format!("{id}\n"));
    }
    assert_eq!(usage(&env, "builtin/exec")["callCount"], 20);
}

// --- wait_ms ----------------------------------------------------------------------------------

/// Whether process `pid` still runs (a zombie waiting to be reaped does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.is_empty() && !stat.contains(") Z "))
}

#[test]
fn a_call_still_running_at_wait_ms_is_a_timeout_and_is_cancelled() {
    let env = TestEnv::new();
    enable_exec(&env);
    write_file(&env.work().join("a.txt"), "x");
    let work = env.work();
    // Five programs that sleep 5 s (and then write a marker), between two quick calls.
    let slow: Vec<String> = (0..5).map(|i| format!("slow-{i}")).collect();
    let mut calls = vec![json!({ "call_id": "quick", "name": "now" })];
    for id in &slow {
        calls.push(json!({
            "call_id": id,
            "name": "exec",
            "arguments": {
                "argv": ["sh", "-c", format!("echo $$ > {id}.pid; sleep 5; touch {id}.marker")],
                "timeout_ms": 600000
            }
        }));
    }
    calls.push(json!({ "call_id": "read", "name": "readfile", "arguments": { "path": "a.txt" } }));
    let mut expected = vec![("quick", "now")];
    expected.extend(slow.iter().map(|id| (id.as_str(), "exec")));
    expected.push(("read", "readfile"));
    let started = Instant::now();
    let doc = batch(
        &env,
        &json!({ "calls": calls, "wait_ms": 300, "mode": "sync" }),
        &expected,
    );
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "wait_ms 300 but took {took:?}"
    );
    assert!(
        result(&doc, "quick")["value"]["unix_ms"].is_i64(),
        "{doc:#}"
    );
    assert_eq!(result(&doc, "read")["value"]["content_text"], "x");
    for id in &slow {
        let error = &result(&doc, id)["error"];
        assert_eq!(
            ordered(error),
            ordered(&json!({
                "code": "TIMEOUT",
                "message": "the call did not finish within wait_ms (300 ms) and was cancelled",
                "details": { "wait_ms": 300 }
            })),
            "{id}"
        );
    }

    // The programs were cancelled: they are gone soon after the command returned, and the
    // markers they write after their sleep never appear.
    let pids: Vec<u32> = slow
        .iter()
        .map(|id| {
            std::fs::read_to_string(work.join(format!("{id}.pid")))
                .unwrap_or_else(|e| panic!("{id} never started: {e}"))
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    let gone_by = Instant::now() + Duration::from_millis(1500);
    while pids.iter().any(|pid| alive(*pid)) && Instant::now() < gone_by {
        std::thread::sleep(Duration::from_millis(50));
    }
    let still_alive: Vec<u32> = pids.iter().copied().filter(|pid| alive(*pid)).collect();
    // Wait out the sleeps either way, so no process of this test outlives it.
    while started.elapsed() < Duration::from_millis(6500) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let markers: Vec<&String> = slow
        .iter()
        .filter(|id| work.join(format!("{id}.marker")).exists())
        .collect();
    assert!(
        still_alive.is_empty() && markers.is_empty(),
        "timed-out programs outlived `invoke --batch`: of pids {pids:?}, {still_alive:?} still \
         ran 1.5 s after the command returned; markers written after `sleep 5`: {markers:?}"
    );
}

// --- truncation -------------------------------------------------------------------------------

/// readfile's output for a file `path` holding `content`, as it prints it.
fn readfile_output(path: &str, content: &str) -> Value {
    json!({ "path": path, "content_text": content, "bytes": content.len(), "truncated": false })
}

/// Content for `path` whose readfile output is exactly `target` bytes of compact JSON:
/// `unit` repeated (escapes and all), then plain `x`s to the exact length.
fn content_for(path: &str, unit: &str, target: usize) -> String {
    let length = |content: &str| ordered(&readfile_output(path, content)).len();
    let mut content = String::new();
    while length(&format!("{content}{unit}")) < target - 50 {
        content.push_str(unit);
    }
    while length(&content) < target {
        content.push('x');
    }
    assert_eq!(length(&content), target, "cannot size {path} exactly");
    content
}

#[test]
fn outputs_over_12000_bytes_of_json_are_truncated_in_results_and_tool_messages() {
    let env = TestEnv::new();
    // Quotes, backslashes and newlines are escaped in JSON: the length counted is the JSON's.
    let unit = "line \"q\" \\ é\tend\n";
    let cases = [
        ("at.txt", 12_000_usize),
        ("over.txt", 12_001),
        ("ascii.txt", 12_000),
        ("ascii-over.txt", 12_001),
        ("far-over.txt", 30_000),
    ];
    let mut contents = Vec::new();
    for (path, target) in cases {
        let unit = if path.starts_with("ascii") {
            "abc "
        } else {
            unit
        };
        let content = content_for(path, unit, target);
        write_file(&env.work().join(path), &content);
        contents.push(content);
    }
    let calls: Vec<Value> = cases
        .iter()
        .map(|(path, _)| {
            let arguments = json!({ "path": path, "max_bytes": 1048576 });
            json!({ "call_id": path, "name": "readfile", "arguments": arguments })
        })
        .collect();
    let expected: Vec<(&str, &str)> = cases.iter().map(|(path, _)| (*path, "readfile")).collect();
    let doc = batch(&env, &json!({ "calls": calls }), &expected);

    for ((path, target), content) in cases.iter().zip(&contents) {
        let whole = readfile_output(path, content);
        let text = ordered(&whole);
        assert_eq!(text.len(), *target);
        let output = &result(&doc, path)["value"];
        if *target <= 12_000 {
            assert_eq!(
                ordered(output),
                text,
                "{path}: {target} bytes of JSON are kept whole"
            );
        } else {
            // The longest prefix of at most 12,000 bytes that ends between two characters.
            let cut = (0..=12_000)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap();
            let preview = &text[..cut];
            assert_eq!(
                ordered(output),
                ordered(&json!({ "truncated": true, "bytes": target, "preview": preview })),
                "{path}: {target} bytes of JSON are truncated"
            );
        }
        // check_answer compared tool_messages[].content with the result; once more, whole:
        let message = doc["tool_messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["tool_call_id"] == *path)
            .unwrap();
        let content: Value = serde_json::from_str(message["content"].as_str().unwrap()).unwrap();
        assert_eq!(
            ordered(&content),
            ordered(&json!({ "ok": true, "value": output })),
            "{path}"
        );
    }
    // The multi-byte preview is cut by bytes, not characters.
    let far = result(&doc, "far-over.txt")["value"]["preview"]
        .as_str()
        .unwrap();
    assert!((11_997..=12_000).contains(&far.len()), "{}", far.len());
    assert!(far.chars().count() < 12_000);

    // A single invoke is never truncated.
    let single = env.json(&["invoke", "readfile", "--args", r#"{"path":"over.txt"}"#]);
    assert_eq!(single["value"]["content_text"], contents[1].as_str());
}

/// Regression: the preview was the first 12,000 *characters*, so multi-byte text gave a
/// preview of up to 48,000 bytes, and a value of 12,001–48,000 bytes came back "truncated"
/// with all of it in the preview. The cap is 12,000 bytes, cut where a character ends.
#[test]
fn a_truncated_preview_is_at_most_12000_bytes_cut_between_characters() {
    let env = TestEnv::new();
    // `(file, character, bytes of JSON before it)`: the character is repeated from that byte
    // on, after ASCII padding, so the 12,000th byte falls where the case says.
    let cases = [
        // A 3-byte character over bytes 11,999..12,002: cut before it.
        ("cjk-across.txt", "日", 11_999, 11_999),
        // A 3-byte character ending exactly at byte 12,000: kept.
        ("cjk-ends.txt", "日", 11_997, 12_000),
        // 2-byte characters, one over bytes 11,999..12,001.
        ("e-across.txt", "é", 11_999, 11_999),
        ("e-ends.txt", "é", 11_998, 12_000),
        // A 4-byte character over bytes 11,998..12,002.
        ("emoji-across.txt", "🦀", 11_998, 11_998),
    ];
    let mut calls = Vec::new();
    let mut texts = BTreeMap::new();
    for (path, character, start, _) in cases {
        let head = ordered(&readfile_output(path, "")).find("\"\",").unwrap() + 1;
        let content = format!("{}{}", "x".repeat(start - head), character.repeat(5_000));
        write_file(&env.work().join(path), &content);
        let text = ordered(&readfile_output(path, &content));
        assert_eq!(&text[start..start + character.len()], character, "{path}");
        texts.insert(path, text);
        let arguments = json!({ "path": path, "max_bytes": 1048576 });
        calls.push(json!({ "call_id": path, "name": "readfile", "arguments": arguments }));
    }
    // 9,000 × "é" is over 18,000 bytes of JSON but under 12,000
    // characters.
    let wide = "é".repeat(9_000);
    write_file(&env.work().join("wide.txt"), &wide);
    calls.push(json!({ "call_id": "wide", "name": "readfile",
        "arguments": { "path": "wide.txt", "max_bytes": 1048576 } }));
    let mut expected: Vec<(&str, &str)> = cases.iter().map(|c| (c.0, "readfile")).collect();
    expected.push(("wide", "readfile"));
    let doc = batch(&env, &json!({ "calls": calls }), &expected);

    for (path, _, _, kept) in cases {
        let text = &texts[path];
        let output = &result(&doc, path)["value"];
        assert_eq!(
            ordered(output),
            ordered(&json!({ "truncated": true, "bytes": text.len(), "preview": &text[..kept] })),
            "{path}: the preview is the first {kept} bytes"
        );
    }
    let text = ordered(&readfile_output("wide.txt", &wide));
    assert!(text.len() > 18_000);
    let output = &result(&doc, "wide")["value"];
    assert_eq!(output["truncated"], true);
    assert_eq!(output["bytes"], text.len());
    let preview = output["preview"].as_str().unwrap();
    assert!(
        (11_999..=12_000).contains(&preview.len()),
        "{} bytes",
        preview.len()
    );
    assert!(text.starts_with(preview));
    assert!(
        !preview.contains(wide.as_str()),
        "the preview holds the whole value"
    );
}

// --- usage metrics ----------------------------------------------------------------------------

#[test]
fn usage_counts_the_calls_of_invoke_and_of_batches() {
    let env = TestEnv::new();
    assert_eq!(
        ordered(&usage(&env, "builtin/now")),
        r#"{"callCount":0,"lastCalledAt":null}"#
    );
    let before = jiff::Timestamp::now();
    env.json(&["invoke", "now"]);
    env.json(&["invoke", "builtin/now"]);
    assert_eq!(usage(&env, "builtin/now")["callCount"], 2);

    // One more call in a batch; the calls refused before they ran are not counted.
    write_file(&env.work().join("a.txt"), "x");
    batch(
        &env,
        &json!({ "calls": [
            { "call_id": "counted", "name": "now" },
            { "call_id": "refused", "name": "now", "arguments": { "extra": 1 } },
            { "call_id": "not-json", "name": "now", "arguments": "{" },
            { "call_id": "disabled", "name": "exec", "arguments": { "argv": ["true"] } },
            {
                "call_id": "ran-and-failed",
                "name": "readfile",
                "arguments": { "path": "missing.txt" }
            }
        ] }),
        &[
            ("counted", "now"),
            ("refused", "now"),
            ("not-json", "now"),
            ("disabled", "exec"),
            ("ran-and-failed", "readfile"),
        ],
    );
    // A single invoke refused before running is not counted either.
    env.json_error(&["invoke", "now", "--args", r#"{"extra":1}"#], 3);
    let after = jiff::Timestamp::now();

    let now = usage(&env, "builtin/now");
    assert_eq!(now["callCount"], 3, "{now}");
    let last = timestamp(now["lastCalledAt"].as_str().unwrap());
    assert!(
        before <= last && last <= after,
        "{last} not in {before}..{after}"
    );
    assert_eq!(usage(&env, "builtin/exec")["callCount"], 0, "never ran");
    let readfile = usage(&env, READFILE_ID);
    assert_eq!(readfile["callCount"], 1, "it ran (and failed): {readfile}");
    assert_eq!(usage(&env, "builtin/file-search")["callCount"], 0);

    // The human form of `tool get` tells it too.
    let run = env.run(&["tool", "get", "builtin/now"]);
    run.success();
    let calls = run
        .stdout
        .lines()
        .find(|l| l.starts_with("calls"))
        .unwrap_or_else(|| panic!("no calls row\n{run}"));
    assert!(
        calls.contains(&format!(
            "3 (last {})",
            now["lastCalledAt"].as_str().unwrap()
        )),
        "{calls}"
    );
}

#[test]
fn usage_is_counted_per_tool_version() {
    let env = TestEnv::new();
    env.bundle("w");
    let v1 = env.put_tool("w", &tool_doc("t", "v1"));
    let v2 = env.put_tool("w", &tool_doc("t", "v2"));
    let v1_id = v1["toolID"].as_str().unwrap();
    // The usage file exists before the batch (its concurrent creation is tested below).
    env.json(&["invoke", "now"]);
    let doc = batch(
        &env,
        &json!({ "calls": [
            { "call_id": "a", "name": "w/t@v1" },
            { "call_id": "b", "name": v1_id },
            { "call_id": "c", "name": "w/t" }
        ] }),
        &[("a", "w/t@v1"), ("b", v1_id), ("c", "w/t")],
    );
    for id in ["a", "b", "c"] {
        assert_eq!(result(&doc, id)["ok"], true, "{doc:#}");
    }
    assert_eq!(usage(&env, "w/t@v1")["callCount"], 2);
    assert_eq!(usage(&env, v2["toolID"].as_str().unwrap())["callCount"], 1);
    assert_eq!(usage(&env, "builtin/now")["callCount"], 1);
}

#[test]
fn the_first_calls_on_a_catalog_are_all_counted() {
    // The calls of a batch on a catalog without a usage file yet create it concurrently;
    // every one of them must still be counted ("concurrent calls update counts safely").
    // The race does not lose a count every time: a hundred fresh starts, the usage file removed
    // before each (as in a catalog where nothing was called yet).
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool("w", &tool_doc("t", "v1"));
    let state = env.catalog().join(".toolctl");
    let request = json!({ "calls": [
        { "call_id": "a", "name": "w/t" },
        { "call_id": "b", "name": "w/t" }
    ] });
    let mut counted = Vec::new();
    for _ in 0..100 {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(state.join(format!("usage.sqlite{suffix}")));
        }
        let doc = batch(&env, &request, &[("a", "w/t"), ("b", "w/t")]);
        for id in ["a", "b"] {
            assert_eq!(result(&doc, id)["ok"], true, "{doc:#}");
        }
        counted.push(usage(&env, "w/t")["callCount"].as_u64().unwrap());
    }
    let lost = counted.iter().filter(|n| **n != 2).count();
    assert_eq!(
        lost, 0,
        "fresh batches of 2 successful calls that did not count 2: {lost} of 100: {counted:?}"
    );
}

#[test]
fn concurrent_batches_count_every_call() {
    let env = TestEnv::new();
    // The usage file exists before the batches (its concurrent creation is tested on its own).
    env.json(&["invoke", "now"]);
    let ids: Vec<String> = (0..20).map(|i| format!("c{i}")).collect();
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| json!({ "call_id": id, "name": "now" }))
        .collect();
    let file = env.input(&json!({ "calls": calls }));
    let children: Vec<_> = (0..4)
        .map(|_| {
            env.command(&["--json", "invoke", "--batch", &file])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(usage(&env, "builtin/now")["callCount"], 81);
}

#[test]
fn usage_lives_in_the_state_folder_and_tool_files_stay_byte_identical() {
    let env = TestEnv::new();
    env.bundle("w");
    let put = env.put_tool("w", &tool_doc("t", "v1"));
    let bundle_id = put["bundleID"].as_str().unwrap();
    let tool_file = env.tool_file(bundle_id, "t", "v1");
    let files = catalog_files(env.catalog());
    assert!(files.contains_key(&tool_file), "{:?}", files.keys());

    env.json(&["invoke", "w/t"]);
    env.json(&["invoke", "now"]);
    batch(
        &env,
        &json!({ "calls": [
            { "call_id": "a", "name": "w/t" },
            { "call_id": "b", "name": "now" }
        ] }),
        &[("a", "w/t"), ("b", "now")],
    );
    assert_eq!(usage(&env, "w/t")["callCount"], 2);
    assert_eq!(usage(&env, "builtin/now")["callCount"], 2);

    assert!(
        catalog_files(env.catalog()) == files,
        "calls changed catalog files outside .toolctl/"
    );
    assert!(
        env.catalog().join(".toolctl/usage.sqlite").is_file(),
        "the metrics live in .toolctl/usage.sqlite"
    );
    let tool_json = std::fs::read_to_string(&tool_file).unwrap();
    assert!(!tool_json.contains("callCount"), "{tool_json}");
    assert!(!tool_json.contains("lastCalledAt"), "{tool_json}");
}

#[test]
fn invoking_on_a_catalog_that_does_not_exist_creates_nothing() {
    let env = TestEnv::uninit_default();
    let listing = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let file = env.input(&json!({ "calls": [
        { "call_id": "a", "name": "now" },
        { "call_id": "b", "name": "readfile", "arguments": { "path": "missing.txt" } }
    ] }));
    let before = listing(env.root());
    env.json(&["invoke", "now"]);
    let run = env.run(&["--json", "invoke", "--batch", &file]);
    run.success();
    check_answer(&run.json(), &[("a", "now"), ("b", "readfile")]);
    assert!(!env.catalog().exists(), "the catalog was created");
    assert_eq!(listing(env.root()), before, "something was created");
    assert_eq!(listing(&env.work()), Vec::<String>::new());
    assert_eq!(
        ordered(&usage(&env, "builtin/now")),
        r#"{"callCount":0,"lastCalledAt":null}"#
    );
    assert!(!env.catalog().exists());
}

#[test]
fn a_usage_write_failure_does_not_fail_the_call() {
    let env = TestEnv::new();
    let usage_file = env.catalog().join(".toolctl/usage.sqlite");
    std::fs::create_dir_all(&usage_file).unwrap();

    let doc = env.json(&["invoke", "now"]);
    assert_eq!(doc["ok"], true);
    assert!(doc["value"]["unix_ms"].is_i64());
    let doc = batch(
        &env,
        &json!({ "calls": [{ "call_id": "a", "name": "now" }] }),
        &[("a", "now")],
    );
    assert_eq!(result(&doc, "a")["ok"], true);
    let run = env.run(&["invoke", "now"]);
    run.success();
    assert_eq!(run.stderr, "", "a failed count is not the user's problem");
    assert_eq!(usage(&env, "builtin/now")["callCount"], 0);
    assert!(usage_file.is_dir());

    // A file that is not a database: the same.
    std::fs::remove_dir(&usage_file).unwrap();
    std::fs::write(
        &usage_file,
        "this is not a database, just text\n".repeat(100),
    )
    .unwrap();
    assert_eq!(env.json(&["invoke", "now"])["ok"], true);
    let doc = batch(
        &env,
        &json!({ "calls": [{ "call_id": "a", "name": "now" }] }),
        &[("a", "now")],
    );
    assert_eq!(result(&doc, "a")["ok"], true);
    assert_eq!(usage(&env, "builtin/now")["callCount"], 0);
}

// --- human output -----------------------------------------------------------------------------

#[test]
fn without_json_a_batch_prints_a_table_of_calls() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "x");
    let file = env.input(&json!({ "calls": [
        { "call_id": "read-a", "name": "readfile", "arguments": { "path": "a.txt" } },
        { "call_id": "ghost", "name": "nonexistent_tool" },
        {
            "call_id": "long",
            "name": "now",
            "arguments": { "a_very_long_argument_name_that_is_not_allowed_here": 1 }
        }
    ] }));
    let run = env.run(&["invoke", "--batch", &file]);
    run.success();
    assert_eq!(run.stderr, "", "{run}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{run}");
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["CALL", "TOOL", "RESULT"],
        "{run}"
    );
    let result_at = lines[0].find("RESULT").unwrap();
    let tool_at = lines[0].find("TOOL").unwrap();
    let cells = |line: &str| -> (String, String, String) {
        (
            line[..tool_at].trim().to_owned(),
            line[tool_at..result_at].trim().to_owned(),
            line[result_at..].trim().to_owned(),
        )
    };
    assert_eq!(
        cells(lines[1]),
        ("read-a".into(), "readfile".into(), "ok".into())
    );
    let (call, tool, outcome) = cells(lines[2]);
    assert_eq!(
        (call.as_str(), tool.as_str()),
        ("ghost", "nonexistent_tool")
    );
    assert!(outcome.starts_with("UNKNOWN_TOOL: "), "{outcome}");
    assert!(outcome.contains("nonexistent_tool"), "{outcome}");
    let (call, tool, outcome) = cells(lines[3]);
    assert_eq!((call.as_str(), tool.as_str()), ("long", "now"));
    assert!(outcome.starts_with("VALIDATION_ERROR: "), "{outcome}");
    assert!(outcome.chars().count() <= 80, "clipped: {outcome}");
}
