//! One set of rules for `bundle.json`: `bundle put --file` refuses what `validate` refuses
//! in the same file, at the same pointer, and what it writes passes `validate` and is read
//! back by every command (a `schemaVersion` this toolctl does not read was once written, then
//! skipped by every reader).

use crate::common::{TestEnv, write_file};
use serde_json::{Value, json};

/// The error pointers `validate --json FILE` reports (empty when it passes).
fn validate_pointers(env: &TestEnv, file: &str) -> Vec<String> {
    let run = env.run(&["--json", "validate", file]);
    let report = run.json();
    let pointers: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["pointer"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(run.code(), if pointers.is_empty() { 0 } else { 3 }, "{run}");
    pointers
}

#[test]
fn bundle_put_refuses_what_validate_refuses_in_a_bundle_file() {
    let env = TestEnv::new();
    let cases: [(Value, Option<&str>); 5] = [
        (
            json!({ "slug": "v2", "schemaVersion": "2" }),
            Some("/schemaVersion"),
        ),
        (
            json!({ "slug": "v1n", "schemaVersion": 1 }),
            Some("/schemaVersion"),
        ),
        (
            json!({ "slug": "v4", "bundleID": "3f1e7a2c-1b2d-4c3e-8f4a-5b6c7d8e9f00" }),
            Some("/bundleID"),
        ),
        (json!({ "slug": "plain", "schemaVersion": "1" }), None),
        (json!({ "slug": "extra", "x-team": "search" }), None),
    ];
    for (n, (doc, refused_at)) in cases.iter().enumerate() {
        let path = env.work().join(format!("team-{n}.json"));
        write_file(&path, &doc.to_string());
        let file = path.to_str().unwrap();
        let pointers = validate_pointers(&env, file);
        let put = env.run(&["--json", "bundle", "put", "--file", file]);
        match refused_at {
            Some(pointer) => {
                assert_eq!(pointers, [*pointer], "validate {doc}");
                put.failure(3);
                let error = put.json();
                assert_eq!(
                    error["error"]["details"]["problems"][0]["pointer"], *pointer,
                    "put {doc}: {error}"
                );
            }
            None => {
                assert!(pointers.is_empty(), "validate {doc}: {pointers:?}");
                put.success();
            }
        }
    }
    // What put wrote passes validate and is listed, nothing skipped.
    env.run(&["validate"]).success();
    let list = env.run(&["--json", "bundle", "list"]);
    list.success();
    assert_eq!(list.stderr, "", "{list}");
    let slugs: Vec<String> = list.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["slug"].as_str())
        .filter(|s| *s != "builtin")
        .map(str::to_owned)
        .collect();
    assert_eq!(slugs, ["extra", "plain"]);
}

#[test]
fn a_schema_version_that_is_a_number_is_named_as_such() {
    let env = TestEnv::new();
    let path = env.work().join("team.json");
    write_file(&path, r#"{ "slug": "team", "schemaVersion": 1 }"#);
    let file = path.to_str().unwrap();
    env.run(&["validate", file])
        .failure(3)
        .stdout_has(r#"schemaVersion must be the string "1", not 1"#);
    env.run(&["bundle", "put", "--file", file])
        .failure(3)
        .stderr_has(r#"schemaVersion must be the string "1", not 1"#);
}
