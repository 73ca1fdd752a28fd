//! `invoke --batch` with every provider's tool calls, as each provider's own Python SDK
//! serialises a model's answer (OpenAI Chat and Responses, Anthropic, Gemini in camelCase and
//! snake_case, Ollama), answered in that provider's shape (or `--provider`'s) — and the answers
//! judged by the same SDKs' typed models (`common/sdk_models.py`).

use crate::common::sdk_models;
use crate::common::{ErrorDoc, TestEnv, keys, write_file};
use serde_json::{Value, json};

/// Each SDK input (by its name in `sdk_models.py inputs`), the kind of answer it must get, and
/// the ids that answer must carry for its two calls (`readfile` of a.txt, then the unknown
/// `nope`): `None` where the provider's answers carry no id.
const CASES: &[(&str, &str, [Option<&str>; 2])] = &[
    (
        "openai",
        "openai-messages",
        [Some("call_read"), Some("call_nope")],
    ),
    (
        "openai-message",
        "openai-messages",
        [Some("call_read"), Some("call_nope")],
    ),
    (
        "openai-responses",
        "openai-responses-items",
        [Some("call_read"), Some("call_nope")],
    ),
    (
        "anthropic",
        "anthropic-messages",
        [Some("toolu_read"), Some("toolu_nope")],
    ),
    (
        "anthropic-blocks",
        "anthropic-messages",
        [Some("toolu_read"), Some("toolu_nope")],
    ),
    // Gemini sends an id only sometimes: the answer carries it back only when it came.
    ("gemini", "gemini-contents", [Some("fc_read"), None]),
    ("gemini-snake", "gemini-contents", [Some("fc_read"), None]),
    ("gemini-content", "gemini-contents", [Some("fc_read"), None]),
    ("ollama", "ollama-messages", [None, None]),
];

fn env_with_file() -> TestEnv {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "from a");
    env
}

/// `--json invoke --batch FILE [extra]`: exit 0, nothing on stderr.
#[track_caller]
fn batch(env: &TestEnv, request: &Value, extra: &[&str]) -> Value {
    let file = env.input(request);
    let mut args = vec!["--json", "invoke", "--batch", &file];
    args.extend(extra);
    let run = env.run(&args);
    run.success();
    assert_eq!(run.stderr, "", "{run}");
    run.json()
}

/// One answer as the tool messages of `kind` say it: (id, is it an error, the payload).
#[derive(Debug)]
struct Answer {
    id: Option<String>,
    name: Option<String>,
    error: bool,
    payload: Value,
}

/// The answers in `messages` of `kind`, in order, read the way each provider reads them.
#[track_caller]
fn answers(kind: &str, messages: &Value) -> Vec<Answer> {
    let messages = messages.as_array().unwrap();
    let text = |v: &Value| -> Value { serde_json::from_str(v.as_str().unwrap()).unwrap() };
    let from_body = |id: Option<&Value>, name: Option<&Value>, content: &Value| {
        let body = text(content);
        Answer {
            id: id.map(|v| v.as_str().unwrap().to_owned()),
            name: name.map(|v| v.as_str().unwrap().to_owned()),
            error: body["ok"] == false,
            payload: body,
        }
    };
    match kind {
        "openai-messages" => messages
            .iter()
            .map(|m| {
                assert_eq!(m["role"], "tool");
                from_body(Some(&m["tool_call_id"]), Some(&m["name"]), &m["content"])
            })
            .collect(),
        "ollama-messages" => messages
            .iter()
            .map(|m| {
                assert_eq!(keys(m), ["role", "tool_name", "content"], "{m:#}");
                from_body(None, Some(&m["tool_name"]), &m["content"])
            })
            .collect(),
        "openai-responses-items" => messages
            .iter()
            .map(|m| {
                assert_eq!(m["type"], "function_call_output");
                from_body(Some(&m["call_id"]), None, &m["output"])
            })
            .collect(),
        "anthropic-messages" => {
            // One user message holding every result: Anthropic wants them together.
            assert_eq!(messages.len(), 1, "{messages:#?}");
            assert_eq!(messages[0]["role"], "user");
            messages[0]["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|block| {
                    assert_eq!(block["type"], "tool_result");
                    let answer = from_body(Some(&block["tool_use_id"]), None, &block["content"]);
                    assert_eq!(block["is_error"], answer.error, "{block:#}");
                    answer
                })
                .collect()
        }
        "gemini-contents" => {
            assert_eq!(messages.len(), 1, "{messages:#?}");
            assert_eq!(messages[0]["role"], "user");
            messages[0]["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|part| {
                    assert_eq!(keys(part), ["functionResponse"], "{part:#}");
                    let response = &part["functionResponse"];
                    let answer = &response["response"];
                    let error = answer.get("error").is_some();
                    assert_eq!(
                        keys(answer),
                        [if error { "error" } else { "output" }],
                        "Gemini's output/error keys: {answer:#}"
                    );
                    Answer {
                        id: response.get("id").map(|v| v.as_str().unwrap().to_owned()),
                        name: Some(response["name"].as_str().unwrap().to_owned()),
                        error,
                        payload: answer.clone(),
                    }
                })
                .collect()
        }
        other => panic!("unknown kind {other}"),
    }
}

/// The two calls every SDK input holds were answered: a.txt read, `nope` unknown.
#[track_caller]
fn check_the_two_answers(case: &str, kind: &str, ids: &[Option<&str>; 2], doc: &Value) {
    let got = answers(kind, &doc["tool_messages"]);
    assert_eq!(got.len(), 2, "{case}: {doc:#}");
    for (answer, id) in got.iter().zip(ids) {
        assert_eq!(answer.id.as_deref(), *id, "{case}: {answer:?}");
    }
    let (read, nope) = (&got[0], &got[1]);
    assert!(!read.error, "{case}: {read:?}");
    assert!(nope.error, "{case}: {nope:?}");
    let content = if kind == "gemini-contents" {
        &read.payload["output"]["content_text"]
    } else {
        &read.payload["value"]["content_text"]
    };
    assert_eq!(content, "from a", "{case}: {read:?}");
    assert_eq!(
        nope.payload["error"]["code"], "UNKNOWN_TOOL",
        "{case}: {nope:?}"
    );
    for (answer, name) in got.iter().zip(["readfile", "nope"]) {
        if let Some(got) = &answer.name {
            assert_eq!(got, name, "{case}");
        }
    }
    // `results` binds the same ids (a stand-in `call_<n>` where the provider sent none).
    let results: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["call_id"].as_str().unwrap())
        .collect();
    for (n, (result, id)) in results.iter().zip(ids).enumerate() {
        let standin = format!("call_{n}");
        assert_eq!(*result, id.unwrap_or(&standin), "{case}: {doc:#}");
    }
}

/// One test for both directions, so that the SDKs are imported once (they take seconds).
#[test]
fn every_providers_calls_are_answered_in_its_own_shape_or_providers_as_its_sdk_types_it() {
    let inputs = sdk_models::inputs();
    let env = env_with_file();
    let mut judged = Vec::new();
    for (case, kind, ids) in CASES {
        let doc = batch(&env, &inputs[case], &[]);
        check_the_two_answers(case, kind, ids, &doc);
        judged.push((*kind, doc["tool_messages"].clone()));
    }
    // `--provider` answers in its shape whatever shape the calls came in.
    for (provider, kind) in [
        ("openai", "openai-messages"),
        ("openai-responses", "openai-responses-items"),
        ("anthropic", "anthropic-messages"),
        ("gemini", "gemini-contents"),
        ("ollama", "ollama-messages"),
    ] {
        for case in ["anthropic", "gemini", "ollama", "openai"] {
            let doc = batch(&env, &inputs[case], &["--provider", provider]);
            let got = answers(kind, &doc["tool_messages"]);
            assert_eq!(got.len(), 2, "{case} → {provider}: {doc:#}");
            assert!(
                !got[0].error && got[1].error,
                "{case} → {provider}: {got:?}"
            );
            judged.push((kind, doc["tool_messages"].clone()));
        }
    }
    let problems = sdk_models::problems(&judged);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_judge_catches_what_a_provider_would_refuse() {
    // The SDK check is no rubber stamp: a key the model lacks, or a wrong type, is reported.
    let problems = sdk_models::problems(&[
        (
            "anthropic-messages",
            json!([{ "role": "user", "content": [{ "type": "tool_result", "tool_call_id": "x", "content": "{}" }] }]),
        ),
        (
            "gemini-contents",
            json!([{ "role": "user", "parts": [{ "functionResponse": { "name": "x", "result": {} } }] }]),
        ),
        (
            "ollama-messages",
            json!([{ "role": "tool", "tool_call_id": "x", "content": "{}" }]),
        ),
    ]);
    for needle in ["tool_call_id", "result", "/2 (ollama-messages)"] {
        assert!(
            problems.iter().any(|p| p.contains(needle)),
            "{needle}: {problems:#?}"
        );
    }
}

/// `--json invoke --batch - [extra]` with `doc` on stdin: exit 3, a `VALIDATION_ERROR`.
#[track_caller]
fn refused(env: &TestEnv, doc: &Value, extra: &[&str]) -> ErrorDoc {
    let mut args = vec!["--json", "invoke", "--batch", "-"];
    args.extend(extra);
    let run = env.run_stdin(&args, &doc.to_string());
    run.failure(3);
    let doc: ErrorDoc = run.parse();
    assert_eq!(doc.error.code, "VALIDATION_ERROR", "{run}");
    doc
}

#[test]
fn calls_that_cannot_be_answered_are_refused_naming_the_place() {
    let env = TestEnv::new();
    let use_block = json!({ "type": "tool_use", "id": "toolu_1", "name": "now", "input": {} });
    let gemini_part = json!({ "functionCall": { "name": "now", "args": {} } });
    for (doc, pointer, words) in [
        // Two providers' calls in one batch.
        (
            json!([use_block, gemini_part]),
            "/1",
            "one provider's calls",
        ),
        // An assistant message that calls nothing.
        (
            json!({ "role": "assistant", "content": [{ "type": "text", "text": "Hello" }] }),
            "/content",
            "not 0",
        ),
        // Anthropic's input is an object; its id is required.
        (
            json!([{ "type": "tool_use", "id": "toolu_1", "name": "now", "input": "{}" }]),
            "/0/input",
            "must be an object",
        ),
        (
            json!({ "content": [{ "type": "tool_use", "name": "now", "input": {} }] }),
            "/content/0/id",
            "'id' is required",
        ),
        // Gemini's args too; the pointer follows the wrapper down.
        (
            json!({ "candidates": [{ "content": { "parts": [{ "functionCall": { "name": "now", "args": [1] } }] } }] }),
            "/candidates/0/content/parts/0/functionCall/args",
            "must be an object",
        ),
        (
            json!([{ "function_call": { "args": {} } }]),
            "/0/function_call/name",
            "name",
        ),
        // Responses items need their call_id.
        (
            json!([{ "type": "function_call", "name": "now", "arguments": "{}" }]),
            "/0/call_id",
            "'call_id' is required",
        ),
    ] {
        let error = refused(&env, &doc, &[]);
        assert_eq!(error.error.details["pointer"], pointer, "{doc}: {error:?}");
        assert!(error.error.message.contains(words), "{doc}: {error:?}");
    }
    // MCP clients call through `mcp serve`.
    let error = refused(&env, &json!([use_block]), &["--provider", "mcp"]);
    assert!(error.error.message.contains("mcp serve"), "{error:?}");
}

#[test]
fn provider_goes_with_batch_only() {
    let env = TestEnv::new();
    env.run(&["invoke", "now", "--provider", "anthropic"])
        .failure(2)
        .stderr_has("--provider");
}
