//! `validate FILE` before `tool put FILE`: a tool file outside the catalog's bundles tree is
//! checked as put reads it — what put fills in (`toolID`, `bundleID`, `schemaVersion`,
//! `createdAt`, `modifiedAt`) may be left out, and whatever put refuses is reported at the
//! pointer put names.

use crate::common::{TestEnv, tool_doc_with, write_file};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// A catalog with a bundle `mine` and `doc` written by hand to `name` in the working folder
/// (outside the catalog): the file's path, as given on the command line.
fn with_input(env: &TestEnv, name: &str, doc: &Value) -> String {
    write_file(
        &env.work().join(name),
        &serde_json::to_string_pretty(doc).unwrap(),
    );
    name.to_owned()
}

/// A tool file as a person writes it before `tool put`: none of put's fill-ins.
fn hand_written() -> Value {
    tool_doc_with(
        "hello",
        "v1",
        json!({
            "description": "Say what time it is, for a person who asks politely.",
            "argSchema": { "type": "object", "properties": {
                "tz": { "type": "string", "description": "An IANA time zone." } } }
        }),
    )
}

#[test]
fn a_hand_written_tool_file_validates_clean_and_then_puts() {
    let env = TestEnv::new();
    env.run(&["bundle", "put", "--slug", "mine"]).success();
    let file = with_input(&env, "hello.json", &hand_written());
    let report = env.json(&["validate", "--strict", &file]);
    assert_eq!(report["files"], 1, "{report}");
    assert_eq!(report["findings"], json!([]), "{report}");
    // Also on standard input, as `tool put -` reads it.
    env.run_stdin(&["validate", "--strict", "-"], &hand_written().to_string())
        .success();
    let put = env.json(&["tool", "put", &file, "--bundle", "mine"]);
    assert_eq!(put["slug"], "hello", "{put}");
    // Once in the catalog the file is checked in full, and put's fill-ins are there.
    env.run(&["validate", "--strict"]).success();
    // In the bundles tree, even where no tool belongs, a file is a catalog file: checked in
    // full.
    let misplaced = env.catalog().join("bundles/stray/tool.json");
    write_file(
        &misplaced,
        &serde_json::to_string_pretty(&hand_written()).unwrap(),
    );
    let run = env.run(&["--json", "validate", misplaced.to_str().unwrap()]);
    run.failure(3);
    let report = run.json();
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["pointer"] == "/toolID"),
        "{report}"
    );
}

/// The error pointers of `validate --json FILE` (which must fail, exit 3).
fn validate_pointers(env: &TestEnv, file: &str) -> BTreeSet<String> {
    let run = env.run(&["--json", "validate", file]);
    run.failure(3);
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .filter_map(|f| f["pointer"].as_str().map(str::to_owned))
        .collect()
}

/// The pointers of the problems `tool put FILE` refuses the file for (exit 3).
fn put_pointers(env: &TestEnv, file: &str) -> BTreeSet<String> {
    let run = env.run(&["--json", "tool", "put", file, "--bundle", "mine"]);
    run.failure(3);
    let doc = run.json();
    assert_eq!(doc["error"]["code"], "VALIDATION_ERROR", "{doc}");
    doc["error"]["details"]["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems listed: {doc}"))
        .iter()
        .filter_map(|p| p["pointer"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn validate_reports_what_put_refuses_at_the_pointer_put_names() {
    let env = TestEnv::new();
    env.run(&["bundle", "put", "--slug", "mine"]).success();
    let http =
        |url: &str| json!({ "type": "http", "impl": { "method": "GET", "urlTemplate": url } });
    let cases = [
        ("built-in", json!({ "isBuiltIn": true })),
        ("bad-id", json!({ "toolID": "not-a-uuid" })),
        (
            "bad-schema",
            json!({ "argSchema": { "type": "object", "properties": { "tz": { "type": "strnig" } } } }),
        ),
        ("placeholder", http("https://127.0.0.1/t?q=${nothing}")),
        ("host", http("https://not-allowed.example/t?tz=${tz}")),
    ];
    for (name, change) in cases {
        let mut doc = hand_written();
        for (key, value) in change.as_object().unwrap() {
            doc[key] = value.clone();
        }
        let file = with_input(&env, &format!("{name}.json"), &doc);
        let refused = put_pointers(&env, &file);
        let reported = validate_pointers(&env, &file);
        assert!(!refused.is_empty(), "{name}");
        assert!(
            refused.is_subset(&reported),
            "{name}: put refuses at {refused:?}, validate reports {reported:?}"
        );
    }
    // Nothing was put.
    let list = env.json(&["tool", "list", "--bundle", "mine"]);
    assert_eq!(list["items"], json!([]), "{list}");
}

/// `validate FILE` before `bundle put --file FILE`: a bundle file outside the catalog's bundles
/// tree, whatever its name (known by its fields: a slug, no version or type), is checked as
/// `bundle put` reads it: what put fills in may be left out, what put refuses is reported at
/// put's pointer.
#[test]
fn a_hand_written_bundle_file_validates_as_bundle_put_reads_it() {
    let env = TestEnv::new();
    let minimal = json!({ "slug": "team-tools", "description": "Tools of the team." });
    let file = with_input(&env, "team.json", &minimal);
    let report = env.json(&["validate", "--strict", &file]);
    assert_eq!(report["findings"], json!([]), "{report}");
    env.run_stdin(&["validate", "--strict", "-"], &minimal.to_string())
        .success();
    let put = env.json(&["bundle", "put", "--file", &file]);
    assert_eq!(put["slug"], "team-tools", "{put}");
    // In the catalog it is checked in full, with put's fill-ins there.
    env.run(&["validate", "--strict"]).success();

    let cases = [
        ("built-in", json!({ "slug": "mine", "isBuiltIn": true })),
        (
            "bad-id",
            json!({ "slug": "mine", "bundleID": "not-a-uuid" }),
        ),
        ("bad-slug", json!({ "slug": "not a slug" })),
        (
            "bad-description",
            json!({ "slug": "mine", "description": 5 }),
        ),
    ];
    for (name, doc) in cases {
        let file = with_input(&env, &format!("{name}.json"), &doc);
        let run = env.run(&["--json", "bundle", "put", "--file", &file]);
        run.failure(3);
        let error = run.json();
        let refused: BTreeSet<String> = error["error"]["details"]["problems"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no problems listed: {error}"))
            .iter()
            .filter_map(|p| p["pointer"].as_str().map(str::to_owned))
            .collect();
        let reported = validate_pointers(&env, &file);
        assert!(!refused.is_empty(), "{name}: {error}");
        assert!(
            refused.is_subset(&reported),
            "{name}: put refuses at {refused:?}, validate reports {reported:?}"
        );
    }
    let bundles = env.json(&["bundle", "list"]);
    let slugs: Vec<&str> = bundles["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["slug"].as_str())
        .collect();
    assert!(!slugs.contains(&"mine"), "{bundles}");
}

/// Regression: a broken `extractExpr` (a regex that does not compile, a JSONPath that does not
/// parse) was accepted by `tool put` and `validate --strict`, and then every `invoke` failed.
/// Both now refuse it at `/impl/extractExpr`, naming the parse error invoke would have met.
#[test]
fn a_broken_extract_expr_is_refused_by_put_and_validate() {
    let env = TestEnv::new();
    env.edit_config(|c| c["allowedHosts"] = json!(["127.0.0.1:1"]));
    env.run(&["bundle", "put", "--slug", "mine"]).success();
    // The regex crate's syntax error draws the pattern over several lines; the message is its
    // one line with the fault's place (a one-line finding shows no `\n`).
    let cases = [
        (
            "regex",
            "text",
            "(unclosed",
            "is not a regex: unclosed group at character 1",
        ),
        ("jsonpath", "json", "$[bad", "is not a JSONPath"),
    ];
    for (name, encoding, expr, says) in cases {
        let mut doc = hand_written();
        doc["type"] = json!("http");
        doc["impl"] = json!({ "method": "GET", "urlTemplate": "http://127.0.0.1:1/text",
            "responseEncoding": encoding, "extractExpr": expr });
        let file = with_input(&env, &format!("{name}.json"), &doc);

        let run = env.run(&["--json", "validate", "--strict", &file]);
        run.failure(3);
        let report = run.json();
        let finding = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["pointer"] == "/impl/extractExpr")
            .unwrap_or_else(|| panic!("{name}: no finding at /impl/extractExpr: {report}"));
        assert_eq!(finding["rule"], "extract", "{finding}");
        assert_eq!(finding["severity"], "error", "{finding}");
        let message = finding["message"].as_str().unwrap();
        assert!(
            message.contains(expr) && message.contains(says) && !message.contains('\n'),
            "{message}"
        );
        let human = env.run(&["validate", "--strict", &file]);
        assert!(!human.stdout.contains("\\n"), "{}", human.stdout);

        let run = env.run(&["--json", "tool", "put", &file, "--bundle", "mine"]);
        run.failure(3);
        let doc = run.json();
        assert_eq!(doc["error"]["code"], "VALIDATION_ERROR", "{doc}");
        let problems = doc["error"]["details"]["problems"].as_array().unwrap();
        assert!(
            problems.iter().any(|p| p["pointer"] == "/impl/extractExpr"
                && p["message"].as_str().unwrap().contains(says)),
            "{name}: {doc}"
        );
    }
    let list = env.json(&["tool", "list", "--bundle", "mine"]);
    assert_eq!(list["items"], json!([]), "{list}");
}
