//! `toolctl invoke`: the `{ok,value}` / `{ok:false,error}` envelope and its exit
//! codes, tool references, argument parsing and schema checks, the no-schema policy, the
//! native built-ins (`readfile`, `file-search`, `now`, `exec`), the workspace they can never
//! leave, and the output check.

use crate::common::{ErrorDoc, Run, TestEnv, timestamp, tool_doc, tool_doc_with, write_file};
use serde_json::{Value, json};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

const READFILE_ID: &str = "0190a000-0000-7000-8000-000000000001";

/// What a file outside every workspace holds; no output may ever show it.
const SECRET: &str = "TOP-SECRET-OUTSIDE-THE-WORKSPACE";

/// `invoke --json ARGS` that must succeed: the whole envelope.
#[track_caller]
fn envelope(env: &TestEnv, args: &[&str]) -> Value {
    let mut all = vec!["invoke"];
    all.extend_from_slice(args);
    let doc = env.json(&all);
    assert_eq!(doc["ok"], true, "{doc:#}");
    doc
}

/// `invoke --json ARGS` that must succeed with a checked call: the value (the envelope holds
/// nothing else).
#[track_caller]
fn value(env: &TestEnv, args: &[&str]) -> Value {
    let doc = envelope(env, args);
    let keys: Vec<_> = doc.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["ok", "value"], "{doc:#}");
    doc["value"].clone()
}

/// `invoke --json ARGS` that must fail with `exit`: the error document.
#[track_caller]
fn failure(env: &TestEnv, args: &[&str], exit: i32) -> ErrorDoc {
    let mut all = vec!["invoke"];
    all.extend_from_slice(args);
    env.json_error(&all, exit)
}

/// The (pointer, keyword) pairs of a schema failure's `details.errors`, sorted.
#[track_caller]
fn schema_errors(details: &Value) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = details["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no details.errors: {details:#}"))
        .iter()
        .map(|e| {
            assert!(
                e["message"].as_str().is_some_and(|m| !m.is_empty()),
                "every error has a message: {e}"
            );
            (
                e["pointer"].as_str().unwrap().to_owned(),
                e["keyword"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    found.sort();
    found
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut pairs: Vec<_> = expected
        .iter()
        .map(|(p, k)| ((*p).to_owned(), (*k).to_owned()))
        .collect();
    pairs.sort();
    pairs
}

/// A tool document without an `argSchema`.
fn schemaless(slug: &str, extra: Value) -> Value {
    let mut doc = tool_doc_with(slug, "v1", extra);
    doc.as_object_mut().unwrap().shift_remove("argSchema");
    doc
}

/// The paths `file-search` found.
fn found(value: &Value) -> Vec<String> {
    value["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results: {value:#}"))
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect()
}

/// A workspace (`work/`) with a file and a folder in it, and beside it (outside) a secret file
/// and a secret folder, reachable from inside only through symlinks.
fn escape_world(env: &TestEnv) -> std::path::PathBuf {
    let work = env.work();
    write_file(&work.join("a.txt"), "inside a\n");
    write_file(&work.join("sub/b.txt"), "inside b\n");
    write_file(&env.root().join("secret.txt"), SECRET);
    write_file(&env.root().join("outside/secret.md"), SECRET);
    symlink("../secret.txt", work.join("link-file")).unwrap();
    symlink(env.root().join("secret.txt"), work.join("abs-link")).unwrap();
    symlink("../outside", work.join("link-dir")).unwrap();
    symlink("/proc/self/root", work.join("proc-root")).unwrap();
    symlink("../secret.txt", work.join("leak.md")).unwrap();
    // A chain of symlinks that ends outside, and links in a subfolder going up.
    symlink("link-file", work.join("chain")).unwrap();
    symlink("..", work.join("sub/up")).unwrap();
    symlink("../..", work.join("sub/up2")).unwrap();
    work
}

#[track_caller]
fn assert_no_secret(run: &Run) {
    assert!(
        !run.stdout.contains(SECRET) && !run.stderr.contains(SECRET),
        "leaked the secret\n{run}"
    );
}

// --- the envelope, exit codes and references ---------------------------------------------------

#[test]
fn readfile_prints_the_ok_envelope_with_json_and_the_bare_value_without() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "hello\n");
    let read = value(&env, &["readfile", "--args", r#"{"path":"a.txt"}"#]);
    assert_eq!(
        read,
        json!({ "path": "a.txt", "content_text": "hello\n", "bytes": 6, "truncated": false })
    );

    let run = env.run(&["invoke", "readfile", "--args", r#"{"path":"a.txt"}"#]);
    run.success();
    assert_eq!(run.stderr, "");
    let printed: Value = run.json();
    assert_eq!(printed, read, "without --json the value alone is printed");
    assert_eq!(
        run.stdout.trim_end(),
        serde_json::to_string_pretty(&read).unwrap(),
        "as pretty JSON"
    );
}

#[test]
fn errors_go_to_stderr_without_json() {
    let env = TestEnv::new();
    let run = env.run(&["invoke", "no-such-tool"]);
    run.failure(4).stderr_has("no-such-tool");
    assert_eq!(run.stdout, "");

    let run = env.run(&["invoke", "readfile", "--args", r#"{"path":"missing.txt"}"#]);
    run.failure(7).stderr_has("missing.txt");
    assert_eq!(run.stdout, "");

    let run = env.run(&["invoke", "readfile", "--args", "{"]);
    run.failure(3);
    assert_eq!(run.stdout, "");
}

#[test]
fn a_tool_is_found_by_ref_slug_and_tool_id() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "x");
    for name in [
        "builtin/readfile@v1",
        "builtin/readfile",
        "readfile",
        READFILE_ID,
    ] {
        let read = value(&env, &[name, "--args", r#"{"path":"a.txt"}"#]);
        assert_eq!(read["content_text"], "x", "{name}");
    }

    // Two versions of a user tool: @version picks one, no version the newest.
    env.bundle("w");
    let v1 = env.put_tool("w", &tool_doc("clock", "v1"));
    env.put_tool(
        "w",
        &tool_doc_with("clock", "v2", json!({ "impl": { "func": "file-search" } })),
    );
    let args = r#"{"query":"zzz-nothing"}"#;
    let now = value(&env, &["w/clock@v1", "--args", args]);
    assert!(now["unix_ms"].is_i64(), "v1 is `now`: {now}");
    let id = v1["toolID"].as_str().unwrap();
    let by_id = value(&env, &[id, "--args", args]);
    assert!(
        by_id["unix_ms"].is_i64() && by_id["utc"].is_string(),
        "{by_id}"
    );
    for name in ["w/clock@v2", "w/clock", "clock"] {
        let search = value(&env, &[name, "--args", args]);
        assert_eq!(
            search,
            json!({ "results": [], "truncated": false }),
            "{name}"
        );
    }
}

#[test]
fn an_unknown_tool_is_unknown_tool_exit_4() {
    let env = TestEnv::new();
    for name in [
        "nope",
        "builtin/nope",
        "builtin/readfile@v9",
        "nope/readfile",
        "0190a000-0000-7000-8000-0000000000ff",
    ] {
        let err = failure(&env, &[name], 4);
        assert_eq!(err.error.code, "UNKNOWN_TOOL", "{name}");
    }
}

#[test]
fn disabled_tools_and_bundles_are_tool_disabled_exit_6() {
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool("w", &tool_doc("t", "v1"));
    assert!(value(&env, &["w/t"])["unix_ms"].is_i64());

    env.run(&["tool", "disable", "w/t@v1"]).success();
    let err = failure(&env, &["w/t"], 6);
    assert_eq!(err.error.code, "TOOL_DISABLED");
    assert!(err.error.message.contains("disabled"), "{err:?}");
    env.run(&["tool", "enable", "w/t@v1"]).success();

    env.run(&["bundle", "disable", "w"]).success();
    assert_eq!(failure(&env, &["w/t"], 6).error.code, "TOOL_DISABLED");
    env.run(&["bundle", "enable", "w"]).success();
    assert!(value(&env, &["w/t"])["unix_ms"].is_i64());

    // A built-in turned off in toolctl.json.
    env.run(&["tool", "disable", "builtin/now"]).success();
    assert_eq!(failure(&env, &["now"], 6).error.code, "TOOL_DISABLED");

    // A native function this binary does not have (copied in by hand: `tool put` refuses it).
    env.put_tool_by_hand(
        "w",
        &tool_doc_with("ghost", "v1", json!({ "impl": { "func": "nope" } })),
    );
    let err = failure(&env, &["w/ghost"], 6);
    assert_eq!(err.error.code, "TOOL_DISABLED");
    assert!(err.error.message.contains("nope"), "{err:?}");
}

#[test]
fn a_refused_call_says_the_command_that_lets_it_run() {
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool("w", &tool_doc("t", "v1"));
    env.run(&["tool", "disable", "w/t@v1"]).success();
    let err = failure(&env, &["w/t"], 6);
    assert_eq!(
        err.error.hint.as_deref(),
        Some("enable it with `toolctl tool enable w/t@v1`")
    );
    env.run(&["tool", "enable", "w/t@v1"]).success();
    env.run(&["bundle", "disable", "w"]).success();
    let err = failure(&env, &["w/t"], 6);
    assert_eq!(
        err.error.hint.as_deref(),
        Some("enable it with `toolctl bundle enable w`")
    );
}

// --- arguments ------------------------------------------------------------------------------

#[test]
fn arguments_come_from_args_a_file_or_stdin_as_an_object_or_a_string_holding_one() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "text");
    let object = r#"{"path":"a.txt"}"#;
    let openai = serde_json::to_string(object).unwrap();

    for args in [object, openai.as_str()] {
        assert_eq!(
            value(&env, &["readfile", "--args", args])["content_text"],
            "text"
        );
        let file = env.root().join("inputs/args.json");
        std::fs::write(&file, args).unwrap();
        assert_eq!(
            value(&env, &["readfile", "--args-file", file.to_str().unwrap()])["content_text"],
            "text"
        );
        let run = env.run_stdin(&["--json", "invoke", "readfile", "-"], args);
        run.success();
        assert_eq!(run.json()["value"]["content_text"], "text");
    }

    // No arguments at all is `{}`.
    assert!(value(&env, &["now"])["unix_ms"].is_i64());
    assert!(value(&env, &["now", "--args", "{}"])["unix_ms"].is_i64());
}

#[test]
fn unparsable_arguments_are_a_validation_error_with_the_position() {
    let env = TestEnv::new();
    let err = failure(&env, &["readfile", "--args", "{\n  \"path\": \n}"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(err.error.details["line"], 3, "{err:?}");
    assert_eq!(err.error.details["column"], 1, "{err:?}");

    // The same inside a JSON string (OpenAI style).
    let inner = serde_json::to_string("{\"path\":\n  ]").unwrap();
    let err = failure(&env, &["readfile", "--args", &inner], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(err.error.details["line"], 2, "{err:?}");
    assert_eq!(err.error.details["column"], 3, "{err:?}");

    // From a file and from stdin too.
    let file = env.root().join("inputs/bad.json");
    std::fs::write(&file, "{\"path\": tru }").unwrap();
    let err = failure(
        &env,
        &["readfile", "--args-file", file.to_str().unwrap()],
        3,
    );
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(err.error.details["line"], 1);
    let run = env.run_stdin(&["--json", "invoke", "readfile", "-"], "{oops");
    run.failure(3);
    let doc: ErrorDoc = run.parse();
    assert_eq!(doc.error.code, "VALIDATION_ERROR");
    assert_eq!(doc.error.details["line"], 1);
    assert_eq!(doc.error.details["column"], 2);
}

#[test]
fn arguments_that_are_not_an_object_are_refused() {
    let env = TestEnv::new();
    for args in ["[1,2]", "42", "true", r#""[1]""#, r#""\"double\"""#] {
        let err = failure(&env, &["now", "--args", args], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{args}");
    }
}

#[test]
fn arguments_are_checked_against_the_arg_schema_with_every_error_listed() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "x");
    let err = failure(
        &env,
        &["readfile", "--args", r#"{"max_bytes":100,"x":1}"#],
        3,
    );
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(
        schema_errors(&err.error.details),
        pairs(&[
            ("", "required"),
            ("", "additionalProperties"),
            ("/max_bytes", "minimum")
        ])
    );

    let err = failure(&env, &["now", "--args", r#"{"extra":true}"#], 3);
    assert_eq!(
        schema_errors(&err.error.details),
        pairs(&[("", "additionalProperties")])
    );

    // Nested values and keys that need escaping in a JSON pointer.
    env.bundle("w");
    env.put_tool(
        "w",
        &tool_doc_with(
            "nested",
            "v1",
            json!({ "argSchema": {
                "type": "object",
                "properties": {
                    "opts": { "type": "object", "properties": { "n": { "type": "integer" } } },
                    "a/b": { "type": "integer" },
                    "list": { "type": "array", "items": { "enum": ["x", "y"] } }
                }
            }}),
        ),
    );
    let err = failure(
        &env,
        &[
            "w/nested",
            "--args",
            r#"{"opts":{"n":"1"},"a/b":"2","list":["x","z"]}"#,
        ],
        3,
    );
    assert_eq!(
        schema_errors(&err.error.details),
        pairs(&[("/opts/n", "type"), ("/a~1b", "type"), ("/list/1", "enum")])
    );
    // Arguments that pass run.
    let ok = value(
        &env,
        &[
            "w/nested",
            "--args",
            r#"{"opts":{"n":1},"a/b":2,"list":["y"]}"#,
        ],
    );
    assert!(ok["unix_ms"].is_i64());
}

#[test]
fn a_remote_ref_in_a_schema_is_never_fetched() {
    let env = TestEnv::new();
    env.bundle("w");
    // Something to fetch from, if anything tried.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!(
        "http://127.0.0.1:{}/schema.json",
        listener.local_addr().unwrap().port()
    );
    env.put_tool_by_hand(
        "w",
        &tool_doc_with("remote", "v1", json!({ "argSchema": { "$ref": url } })),
    );
    env.put_tool_by_hand(
        "w",
        &tool_doc_with(
            "deep-remote",
            "v1",
            json!({ "argSchema": {
                "type": "object",
                "properties": { "city": { "$ref": format!("{url}#/city") } }
            }}),
        ),
    );
    env.put_tool(
        "w",
        &tool_doc_with(
            "local",
            "v1",
            json!({ "argSchema": {
                "$defs": { "unit": { "enum": ["c", "f"] } },
                "type": "object",
                "properties": { "unit": { "$ref": "#/$defs/unit" } }
            }}),
        ),
    );

    // `tool put` refuses such schemas; written by hand, the tool is unavailable, and the
    // reason names the $ref.
    for name in ["w/remote", "w/deep-remote"] {
        let err = failure(&env, &[name, "--args", r#"{"city":"Oslo"}"#], 6);
        assert_eq!(err.error.code, "TOOL_DISABLED", "{name}");
        assert!(err.error.message.contains("argSchema"), "{err:?}");
        assert!(err.error.message.contains(&url), "names the $ref: {err:?}");
    }
    // An outputSchema with a remote $ref: refused before the tool runs (it could never be
    // checked, and the tool's effects would already have happened).
    env.put_tool_by_hand(
        "w",
        &tool_doc_with(
            "remote-out",
            "v1",
            json!({ "outputSchema": { "$ref": url } }),
        ),
    );
    let err = failure(&env, &["w/remote-out"], 6);
    assert_eq!(err.error.code, "TOOL_DISABLED");
    assert!(err.error.message.contains("outputSchema"), "{err:?}");

    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("toolctl connected to the $ref's host: {other:?}"),
    }

    // A local $ref works.
    assert!(value(&env, &["w/local", "--args", r#"{"unit":"c"}"#])["unix_ms"].is_i64());
    let err = failure(&env, &["w/local", "--args", r#"{"unit":"k"}"#], 3);
    assert_eq!(
        schema_errors(&err.error.details),
        pairs(&[("/unit", "enum")])
    );
}

// --- no schema ------------------------------------------------------------------------------

#[test]
fn a_tool_without_a_schema_fails_closed() {
    // `tool put` refuses such a tool, so it is written by hand.
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let mut doc = schemaless("bare", json!({}));
    for (key, value) in [
        ("schemaVersion", json!("1")),
        ("toolID", json!(uuid::Uuid::now_v7().to_string())),
        ("bundleID", json!(bundle_id)),
        ("createdAt", json!("2025-01-01T00:00:00Z")),
        ("modifiedAt", json!("2025-01-01T00:00:00Z")),
    ] {
        doc[key] = value;
    }
    write_file(
        &env.tool_file(&bundle_id, "bare", "v1"),
        &serde_json::to_string(&doc).unwrap(),
    );
    let err = failure(&env, &["w/bare"], 6);
    assert_eq!(
        err.error.code, "FORBIDDEN",
        "no schema fails closed with FORBIDDEN, exit 6: {err:?}"
    );
    assert!(err.error.message.contains("argSchema"), "{err:?}");
}

#[test]
fn no_schema_mode_full_runs_unvalidated() {
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool(
        "w",
        &schemaless(
            "free",
            json!({ "allowNoSchema": true, "noSchemaMode": "full" }),
        ),
    );
    let doc = envelope(&env, &["w/free", "--args", r#"{"anything":[1,2]}"#]);
    assert_eq!(
        doc["details"],
        json!({ "validated": false, "noSchemaMode": "full" })
    );
    assert!(doc["value"]["unix_ms"].is_i64());
}

#[test]
fn no_schema_mode_read_only_runs_only_read_only_tools() {
    let env = TestEnv::new();
    write_file(&env.work().join("a.txt"), "read me");
    env.bundle("w");
    env.put_tool(
        "w",
        &schemaless(
            "reader",
            json!({
                "impl": { "func": "readfile" },
                "allowNoSchema": true,
                "noSchemaMode": "read-only",
                "annotations": { "readOnlyHint": true }
            }),
        ),
    );
    env.put_tool(
        "w",
        &schemaless(
            "unmarked",
            json!({ "allowNoSchema": true, "noSchemaMode": "read-only" }),
        ),
    );
    env.put_tool(
        "w",
        &schemaless(
            "writer",
            json!({
                "allowNoSchema": true,
                "noSchemaMode": "read-only",
                "annotations": { "readOnlyHint": false }
            }),
        ),
    );

    let doc = envelope(&env, &["w/reader", "--args", r#"{"path":"a.txt"}"#]);
    assert_eq!(doc["value"]["content_text"], "read me");
    assert_eq!(
        doc["details"],
        json!({ "validated": false, "noSchemaMode": "read-only" })
    );

    for name in ["w/unmarked", "w/writer"] {
        let err = failure(&env, &[name], 6);
        assert_eq!(err.error.code, "FORBIDDEN", "{name}");
        assert!(err.error.message.contains("read-only"), "{err:?}");
    }
}

#[test]
fn no_schema_mode_human_approval_needs_approve_without_a_terminal() {
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool(
        "w",
        &schemaless(
            "asks",
            json!({ "allowNoSchema": true, "noSchemaMode": "human-approval" }),
        ),
    );
    let err = failure(&env, &["w/asks"], 6);
    assert_eq!(err.error.code, "FORBIDDEN");
    assert!(
        err.error
            .hint
            .as_deref()
            .unwrap_or("")
            .contains("--approve")
            || err.error.message.contains("--approve"),
        "{err:?}"
    );
    let run = env.run(&["invoke", "w/asks"]);
    run.failure(6).stderr_has("--approve");
    assert_eq!(run.stdout, "");

    let doc = envelope(&env, &["w/asks", "--approve"]);
    assert_eq!(
        doc["details"],
        json!({ "validated": false, "noSchemaMode": "human-approval" })
    );
    assert!(doc["value"]["unix_ms"].is_i64());
}

// --- now -----------------------------------------------------------------------------------

#[test]
fn now_tells_utc_and_unix_ms() {
    let env = TestEnv::new();
    let before = jiff::Timestamp::now().as_millisecond();
    let now = value(&env, &["builtin/now"]);
    let after = jiff::Timestamp::now().as_millisecond();
    let ms = now["unix_ms"].as_i64().unwrap();
    assert!((before..=after).contains(&ms), "{now}");
    let utc = now["utc"].as_str().unwrap();
    assert!(utc.ends_with('Z'), "{utc}");
    assert_eq!(timestamp(utc).as_millisecond(), ms);
}

// --- readfile ------------------------------------------------------------------------------

#[test]
fn readfile_caps_at_max_bytes_and_says_so() {
    let env = TestEnv::new();
    write_file(&env.work().join("big.txt"), &"x".repeat(1000));
    write_file(&env.work().join("exact.txt"), &"y".repeat(512));

    let capped = value(
        &env,
        &[
            "readfile",
            "--args",
            r#"{"path":"big.txt","max_bytes":600}"#,
        ],
    );
    assert_eq!(capped["content_text"], "x".repeat(600));
    assert_eq!(capped["truncated"], true);
    assert_eq!(capped["bytes"], 1000);

    let whole = value(&env, &["readfile", "--args", r#"{"path":"big.txt"}"#]);
    assert_eq!(whole["content_text"], "x".repeat(1000));
    assert_eq!(whole["truncated"], false);

    let exact = value(
        &env,
        &[
            "readfile",
            "--args",
            r#"{"path":"exact.txt","max_bytes":512}"#,
        ],
    );
    assert_eq!(exact["content_text"], "y".repeat(512));
    assert_eq!(exact["truncated"], false, "exactly max_bytes is not cut");
}

#[test]
fn readfile_drops_a_character_cut_by_max_bytes() {
    let env = TestEnv::new();
    // 511 bytes, then a 2-byte 'é' across the 512th byte, then a 4-byte emoji.
    let text = format!("{}é🦀tail", "a".repeat(511));
    write_file(&env.work().join("mb.txt"), &text);
    let cut = value(
        &env,
        &["readfile", "--args", r#"{"path":"mb.txt","max_bytes":512}"#],
    );
    assert_eq!(cut["content_text"], "a".repeat(511));
    assert_eq!(cut["truncated"], true);

    let whole = value(
        &env,
        &["readfile", "--args", r#"{"path":"mb.txt","max_bytes":513}"#],
    );
    assert_eq!(whole["content_text"], format!("{}é", "a".repeat(511)));

    // Cut inside the emoji (after 1, 2 and 3 of its 4 bytes).
    for max in [514, 515, 516] {
        let args = json!({ "path": "mb.txt", "max_bytes": max }).to_string();
        let cut = value(&env, &["readfile", "--args", &args]);
        assert_eq!(
            cut["content_text"],
            format!("{}é", "a".repeat(511)),
            "max_bytes {max}"
        );
        assert_eq!(cut["truncated"], true);
    }
    let crab = value(
        &env,
        &["readfile", "--args", r#"{"path":"mb.txt","max_bytes":517}"#],
    );
    assert_eq!(crab["content_text"], format!("{}é🦀", "a".repeat(511)));
}

#[test]
fn readfile_refuses_binary_files() {
    let env = TestEnv::new();
    std::fs::write(env.work().join("nul.bin"), b"text\0more text").unwrap();
    std::fs::write(env.work().join("latin1.txt"), b"caf\xe9 au lait").unwrap();
    std::fs::write(env.work().join("png.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    for name in ["nul.bin", "latin1.txt", "png.png"] {
        let args = json!({ "path": name }).to_string();
        let run = env.run(&["--json", "invoke", "readfile", "--args", &args]);
        run.failure(7);
        let doc: ErrorDoc = run.parse();
        assert_eq!(doc.error.code, "VALIDATION_ERROR", "{name}");
        assert!(!run.stdout.contains("more text") && !run.stdout.contains("au lait"));
    }
}

#[test]
fn readfile_of_a_missing_file_or_a_folder_fails_as_the_tool() {
    let env = TestEnv::new();
    std::fs::create_dir(env.work().join("dir")).unwrap();
    let err = failure(
        &env,
        &["readfile", "--args", r#"{"path":"missing.txt"}"#],
        7,
    );
    assert_eq!(err.error.code, "NOT_FOUND");
    let err = failure(&env, &["readfile", "--args", r#"{"path":"dir"}"#], 7);
    assert_eq!(err.error.code, "VALIDATION_ERROR");

    // A FIFO would block a reader forever: refused, promptly.
    crate::common::mkfifo(&env.work().join("fifo"));
    let started = Instant::now();
    let err = failure(&env, &["readfile", "--args", r#"{"path":"fifo"}"#], 7);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn file_tools_work_in_the_given_workspace() {
    let env = TestEnv::new();
    let ws = env.root().join("elsewhere");
    write_file(&ws.join("only-here.txt"), "elsewhere");
    write_file(&env.work().join("only-here.txt"), "work");
    let args = r#"{"path":"only-here.txt"}"#;
    assert_eq!(
        value(&env, &["readfile", "--args", args])["content_text"],
        "work",
        "the current folder by default"
    );
    let ws_arg = ws.to_str().unwrap();
    assert_eq!(
        value(&env, &["readfile", "--workspace", ws_arg, "--args", args])["content_text"],
        "elsewhere"
    );
    let search = value(
        &env,
        &[
            "file-search",
            "--workspace",
            ws_arg,
            "--args",
            r#"{"query":"only"}"#,
        ],
    );
    assert_eq!(
        search,
        json!({ "results": [{ "path": "only-here.txt", "type": "file" }], "truncated": false })
    );
}

// --- the workspace boundary ---------------------------------------------------------------

#[test]
fn readfile_never_reaches_outside_the_workspace() {
    let env = TestEnv::new();
    escape_world(&env);
    let outside = env.root().join("secret.txt");
    for path in [
        "../secret.txt",
        outside.to_str().unwrap(),
        "/etc/hostname",
        "link-file",
        "abs-link",
        "link-dir/secret.md",
        "link-dir",
        "proc-root/etc/hostname",
        &format!("proc-root{}", outside.display()),
        "sub/../../secret.txt",
        "sub/../link-file",
        "./../secret.txt",
        "chain",
        "sub/up2/secret.txt",
        "sub/up/../secret.txt",
        "sub/up/link-file",
    ] {
        let args = json!({ "path": path }).to_string();
        let run = env.run(&["--json", "invoke", "readfile", "--args", &args]);
        run.failure(7);
        assert_no_secret(&run);
        let doc: ErrorDoc = run.parse();
        assert_eq!(doc.error.code, "FORBIDDEN", "{path}\n{run}");
    }

    // Staying inside is fine, however it is spelled.
    for path in [
        "sub/../a.txt",
        "./a.txt",
        "sub/./../sub/b.txt",
        "sub/up/a.txt",
    ] {
        let args = json!({ "path": path }).to_string();
        let read = value(&env, &["readfile", "--args", &args]);
        assert!(
            read["content_text"].as_str().unwrap().starts_with("inside"),
            "{path}: {read}"
        );
    }
    // A symlink that stays inside is followed.
    symlink("sub/b.txt", env.work().join("in-link.txt")).unwrap();
    assert_eq!(
        value(&env, &["readfile", "--args", r#"{"path":"in-link.txt"}"#])["content_text"],
        "inside b\n"
    );
}

#[test]
fn file_search_never_lists_or_enters_anything_outside_the_workspace() {
    let env = TestEnv::new();
    escape_world(&env);
    symlink("sub", env.work().join("in-dir")).unwrap();
    symlink("a.txt", env.work().join("in-link.txt")).unwrap();

    for query in ["*", "secret", "*.md", "**/*.md"] {
        let args = json!({ "query": query, "include_hidden": true, "max_results": 200 });
        let run = env.run(&[
            "--json",
            "invoke",
            "file-search",
            "--args",
            &args.to_string(),
        ]);
        run.success();
        assert_no_secret(&run);
        let paths = found(&run.json()["value"]);
        for path in &paths {
            assert!(
                ![
                    "link-file",
                    "abs-link",
                    "link-dir",
                    "proc-root",
                    "leak.md",
                    "chain",
                    "sub/up2",
                ]
                .iter()
                .any(|bad| path == bad || path.starts_with(&format!("{bad}/"))),
                "{query}: listed {path}: {paths:?}"
            );
            assert!(!path.contains("secret"), "{query}: {paths:?}");
            assert!(
                !path.starts_with("sub/up/"),
                "never descends a symlink: {paths:?}"
            );
            assert!(
                !path.starts_with("in-dir/"),
                "never descends a symlink: {paths:?}"
            );
        }
        if query == "*" {
            assert!(paths.contains(&"a.txt".to_owned()), "{paths:?}");
            assert!(paths.contains(&"sub/b.txt".to_owned()), "{paths:?}");
            assert!(
                paths.contains(&"in-link.txt".to_owned()),
                "a symlink to a file inside is listed: {paths:?}"
            );
        }
    }

    for path in [
        "..",
        "../outside",
        "link-dir",
        "proc-root",
        "proc-root/etc",
        "sub/../..",
        "sub/up2",
        "/",
    ] {
        let args = json!({ "query": "*", "path": path }).to_string();
        let run = env.run(&["--json", "invoke", "file-search", "--args", &args]);
        run.failure(7);
        assert_no_secret(&run);
        let doc: ErrorDoc = run.parse();
        assert_eq!(doc.error.code, "FORBIDDEN", "{path}\n{run}");
    }
}

// --- file-search --------------------------------------------------------------------------

fn search_tree(env: &TestEnv) -> &'static [&'static str] {
    let files: &[&str] = &[
        "README.md",
        "notes.txt",
        "docs/guide.md",
        "docs/api/ref.md",
        "src/main.rs",
        "src/lib.rs",
        "src/deep/x.rs",
        "src/deep/er/y.rs",
        ".hidden.md",
        ".git/config.md",
    ];
    for file in files {
        write_file(&env.work().join(file), file);
    }
    files
}

#[track_caller]
fn search(env: &TestEnv, args: Value) -> Value {
    value(env, &["file-search", "--args", &args.to_string()])
}

#[test]
fn file_search_by_substring() {
    let env = TestEnv::new();
    search_tree(&env);
    let result = search(&env, json!({ "query": "DEEP" }));
    assert_eq!(
        found(&result),
        [
            "src/deep",
            "src/deep/er",
            "src/deep/x.rs",
            "src/deep/er/y.rs"
        ]
    );
    assert_eq!(result["truncated"], false);
    assert_eq!(
        result["results"][0],
        json!({ "path": "src/deep", "type": "dir" })
    );
    assert_eq!(
        result["results"][2],
        json!({ "path": "src/deep/x.rs", "type": "file" })
    );
    assert_eq!(
        found(&search(&env, json!({ "query": "nothing-matches" }))),
        Vec::<String>::new()
    );
}

#[test]
fn file_search_by_glob() {
    let env = TestEnv::new();
    search_tree(&env);
    assert_eq!(
        found(&search(&env, json!({ "query": "*.md" }))),
        ["README.md", "docs/guide.md", "docs/api/ref.md"]
    );
    assert_eq!(
        found(&search(&env, json!({ "query": "src/**/*.rs" }))),
        [
            "src/lib.rs",
            "src/main.rs",
            "src/deep/x.rs",
            "src/deep/er/y.rs"
        ]
    );
    assert_eq!(
        found(&search(&env, json!({ "query": "**/*.md" }))),
        ["README.md", "docs/guide.md", "docs/api/ref.md"]
    );
}

#[test]
fn file_search_glob_star_does_not_cross_a_slash() {
    // Shell and gitignore semantics: `src/*.rs` is the files directly in src/, which is what
    // makes `src/**/*.rs` mean something different.
    let env = TestEnv::new();
    search_tree(&env);
    assert_eq!(
        found(&search(&env, json!({ "query": "docs/*.md" }))),
        ["docs/guide.md"],
        "`*` does not cross a `/`"
    );
    assert_eq!(
        found(&search(&env, json!({ "query": "src/*.rs" }))),
        ["src/lib.rs", "src/main.rs"],
        "`*` does not cross a `/`"
    );
    assert_eq!(
        found(&search(&env, json!({ "query": "src/deep/*.rs" }))),
        ["src/deep/x.rs"],
        "`*` does not cross a `/`"
    );
}

#[test]
fn file_search_hides_dot_files_unless_asked() {
    let env = TestEnv::new();
    search_tree(&env);
    let all = found(&search(
        &env,
        json!({ "query": "*.md", "include_hidden": true }),
    ));
    assert_eq!(
        all,
        [
            ".hidden.md",
            "README.md",
            ".git/config.md",
            "docs/guide.md",
            "docs/api/ref.md"
        ]
    );
    let config = found(&search(&env, json!({ "query": "config" })));
    assert_eq!(
        config,
        Vec::<String>::new(),
        "not inside hidden folders either"
    );
}

#[test]
fn file_search_in_a_subfolder() {
    let env = TestEnv::new();
    search_tree(&env);
    assert_eq!(
        found(&search(
            &env,
            json!({ "query": "*.rs", "path": "src/deep" })
        )),
        ["src/deep/x.rs", "src/deep/er/y.rs"]
    );
    let err = failure(
        &env,
        &["file-search", "--args", r#"{"query":"*","path":"nope"}"#],
        7,
    );
    assert_eq!(err.error.code, "NOT_FOUND");
}

#[test]
fn file_search_caps_at_max_results_and_says_so() {
    let env = TestEnv::new();
    for i in 0..5 {
        write_file(&env.work().join(format!("f{i}.txt")), "x");
    }
    let capped = search(&env, json!({ "query": "*.txt", "max_results": 3 }));
    assert_eq!(found(&capped), ["f0.txt", "f1.txt", "f2.txt"]);
    assert_eq!(capped["truncated"], true);
    let exact = search(&env, json!({ "query": "*.txt", "max_results": 5 }));
    assert_eq!(found(&exact).len(), 5);
    assert_eq!(
        exact["truncated"], false,
        "exactly max_results is all of them"
    );
    let err = failure(
        &env,
        &["file-search", "--args", r#"{"query":"*","max_results":0}"#],
        3,
    );
    assert_eq!(
        schema_errors(&err.error.details),
        pairs(&[("/max_results", "minimum")])
    );
}

#[test]
fn file_search_order_is_stable() {
    let env = TestEnv::new();
    // Created in an order that is neither sorted nor reversed.
    for name in ["m/2.txt", "b.txt", "z/1.txt", "a/3.txt", "c.txt", "a/0.txt"] {
        write_file(&env.work().join(name), "x");
    }
    let first = found(&search(&env, json!({ "query": ".txt" })));
    assert_eq!(
        first,
        ["b.txt", "c.txt", "a/0.txt", "a/3.txt", "m/2.txt", "z/1.txt"]
    );
    for _ in 0..3 {
        assert_eq!(found(&search(&env, json!({ "query": ".txt" }))), first);
    }
}

// --- output check ---------------------------------------------------------------------------

#[test]
fn output_that_breaks_the_output_schema_is_output_invalid() {
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool(
        "w",
        &tool_doc_with(
            "bad-out",
            "v1",
            json!({ "outputSchema": {
                "type": "object",
                "required": ["nope"],
                "properties": { "unix_ms": { "type": "string" } }
            }}),
        ),
    );
    let err = failure(&env, &["w/bad-out"], 7);
    assert_eq!(err.error.code, "OUTPUT_INVALID");
    assert_eq!(
        schema_errors(&err.error.details),
        pairs(&[("", "required"), ("/unix_ms", "type")])
    );
    let run = env.run(&["invoke", "w/bad-out"]);
    run.failure(7);
    assert_eq!(run.stdout, "");

    // The same tool with an outputSchema its output meets.
    env.put_tool(
        "w",
        &tool_doc_with(
            "good-out",
            "v1",
            json!({ "outputSchema": {
                "type": "object",
                "required": ["utc", "unix_ms"],
                "additionalProperties": false,
                "properties": { "utc": { "type": "string" }, "unix_ms": { "type": "integer" } }
            }}),
        ),
    );
    assert!(value(&env, &["w/good-out"])["unix_ms"].is_i64());
}

// --- exec ----------------------------------------------------------------------------------

fn enable_exec(env: &TestEnv) {
    env.run(&["tool", "enable", "builtin/exec"]).success();
}

#[track_caller]
fn exec(env: &TestEnv, args: Value) -> Value {
    value(env, &["exec", "--args", &args.to_string()])
}

#[test]
fn exec_is_disabled_by_default() {
    let env = TestEnv::new();
    let err = failure(&env, &["exec", "--args", r#"{"argv":["touch","ran"]}"#], 6);
    assert_eq!(err.error.code, "TOOL_DISABLED");
    assert!(!env.work().join("ran").exists(), "nothing ran");
    let err = failure(
        &env,
        &["builtin/exec@v1", "--args", r#"{"argv":["true"]}"#],
        6,
    );
    assert_eq!(err.error.code, "TOOL_DISABLED");

    enable_exec(&env);
    let out = exec(&env, json!({ "argv": ["touch", "ran"] }));
    assert_eq!(out["exit_code"], 0);
    assert!(env.work().join("ran").exists());
}

#[test]
fn exec_runs_argv_without_a_shell() {
    let env = TestEnv::new();
    enable_exec(&env);
    let out = exec(
        &env,
        json!({ "argv": ["echo", "a;b", "$HOME", "*", "`id`"] }),
    );
    assert_eq!(
        out,
        json!({
            "exit_code": 0,
            "stdout": "a;b $HOME * `id`\n",
            "stderr": "",
            "timed_out": false,
            "truncated": false
        })
    );
}

#[test]
fn exec_reports_the_exit_code_and_both_streams() {
    let env = TestEnv::new();
    enable_exec(&env);
    let out = exec(
        &env,
        json!({ "argv": ["sh", "-c", "echo out; echo err >&2; exit 3"] }),
    );
    assert_eq!(out["exit_code"], 3);
    assert_eq!(out["stdout"], "out\n");
    assert_eq!(out["stderr"], "err\n");
    assert_eq!(out["timed_out"], false);

    let err = failure(
        &env,
        &["exec", "--args", r#"{"argv":["no-such-program-anywhere"]}"#],
        7,
    );
    assert_eq!(err.error.code, "NOT_FOUND");
    let err = failure(&env, &["exec", "--args", r#"{"argv":[]}"#], 3);
    assert_eq!(
        schema_errors(&err.error.details),
        pairs(&[("/argv", "minItems")])
    );
}

#[test]
fn exec_runs_in_a_cwd_inside_the_workspace_only() {
    let env = TestEnv::new();
    enable_exec(&env);
    let work = escape_world(&env);
    let out = exec(&env, json!({ "argv": ["pwd"] }));
    assert_eq!(out["stdout"], format!("{}\n", work.display()));
    let out = exec(&env, json!({ "argv": ["pwd"], "cwd": "sub" }));
    assert_eq!(out["stdout"], format!("{}\n", work.join("sub").display()));
    symlink("sub", work.join("in-dir")).unwrap();
    let out = exec(&env, json!({ "argv": ["pwd"], "cwd": "in-dir" }));
    assert_eq!(out["stdout"], format!("{}\n", work.join("sub").display()));

    for cwd in [
        "..",
        "link-dir",
        "proc-root",
        "sub/../..",
        "sub/up2",
        "/tmp",
    ] {
        let args = json!({ "argv": ["touch", "escaped"], "cwd": cwd }).to_string();
        let err = failure(&env, &["exec", "--args", &args], 7);
        assert_eq!(err.error.code, "FORBIDDEN", "{cwd}");
    }
    assert!(!env.root().join("escaped").exists());
    assert!(!env.root().join("outside/escaped").exists());
    assert!(!Path::new("/tmp/escaped").exists());
}

#[test]
fn exec_timeout_kills_the_program_and_its_children() {
    let env = TestEnv::new();
    enable_exec(&env);
    let started = Instant::now();
    let out = exec(
        &env,
        json!({ "argv": ["sh", "-c", "sleep 30 & echo $!; sleep 30"], "timeout_ms": 300 }),
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}: {out}");
    assert_eq!(out["timed_out"], true);
    assert_eq!(out["exit_code"], Value::Null);

    // The background sleep went too (gone, or a zombie waiting to be reaped).
    let pid: u32 = out["stdout"].as_str().unwrap().trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let alive = !stat.is_empty() && !stat.contains(") Z ");
        if !alive {
            break;
        }
        assert!(Instant::now() < deadline, "child {pid} still runs: {stat}");
        std::thread::sleep(Duration::from_millis(50));
    }

    // A program that ends in time is not marked.
    let out = exec(&env, json!({ "argv": ["true"], "timeout_ms": 5000 }));
    assert_eq!(out["timed_out"], false);
    assert_eq!(out["exit_code"], 0);
}

#[test]
fn exec_timeout_bounds_the_call_even_when_a_child_leaves_the_process_group() {
    // A daemon (setsid) that keeps stdout open must not hold the call past its timeout.
    let env = TestEnv::new();
    enable_exec(&env);
    let started = Instant::now();
    let out = exec(
        &env,
        json!({ "argv": ["sh", "-c", "setsid sleep 8 & sleep 30"], "timeout_ms": 300 }),
    );
    let took = started.elapsed();
    assert_eq!(out["timed_out"], true);
    assert!(
        took < Duration::from_secs(4),
        "timeout_ms 300 but the call took {took:?}"
    );
}

#[test]
fn exec_caps_its_output() {
    let env = TestEnv::new();
    enable_exec(&env);
    let out = exec(&env, json!({ "argv": ["seq", "1", "100000"] }));
    let stdout = out["stdout"].as_str().unwrap();
    assert_eq!(stdout.len(), 64 * 1024);
    assert!(stdout.starts_with("1\n2\n3\n"));
    assert_eq!(out["truncated"], true);
    assert_eq!(out["exit_code"], 0);

    let out = exec(&env, json!({ "argv": ["sh", "-c", "seq 1 100000 >&2"] }));
    assert_eq!(out["stderr"].as_str().unwrap().len(), 64 * 1024);
    assert_eq!(out["stdout"], "");
    assert_eq!(out["truncated"], true);

    let out = exec(&env, json!({ "argv": ["seq", "1", "10"] }));
    assert_eq!(out["truncated"], false);
}

#[test]
fn exec_does_not_pass_secrets_in_the_environment() {
    let env = TestEnv::new();
    enable_exec(&env);
    let mut cmd = env.command(&["--json", "invoke", "exec", "--args", r#"{"argv":["env"]}"#]);
    cmd.env("TOOLCTL_SECRET_X", "hunter2-secret")
        .env("AWS_SECRET_ACCESS_KEY", "aws-secret-value");
    let run = Run::of(cmd, None);
    run.success();
    let stdout = run.json()["value"]["stdout"].as_str().unwrap().to_owned();
    assert!(!stdout.contains("TOOLCTL_SECRET_X"), "{stdout}");
    assert!(!stdout.contains("hunter2-secret"), "{stdout}");
    assert!(!stdout.contains("aws-secret-value"), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("PATH=")),
        "PATH is kept: {stdout}"
    );
}

// --- command line -------------------------------------------------------------------------

#[test]
fn invoke_command_line_mistakes_are_usage_errors() {
    let env = TestEnv::new();
    env.run(&["invoke", "now", "extra"]).failure(2);
    env.run(&["invoke", "now", "-", "--args", "{}"]).failure(2);
    env.run(&["invoke", "now", "--args", "{}", "--args-file", "x.json"])
        .failure(2);
    env.run(&["invoke"]).failure(2);
}
