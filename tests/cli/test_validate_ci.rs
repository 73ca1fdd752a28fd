//! `validate` as a CI job runs it: in a folder with no catalog above it and no default catalog,
//! it checks nothing (an absent default catalog reads as empty, exit 0) and says so on stderr,
//! so a job run in the wrong folder is not a silent pass.

use crate::common::TestEnv;

const SAID: &str = "nothing was checked";

#[test]
fn validate_with_no_catalog_found_fails_as_catalog_not_found() {
    let env = TestEnv::uninit_default();
    let run = env.run(&["validate"]);
    run.failure(4)
        .stderr_has(SAID)
        .stderr_has("no catalog here");
    assert_eq!(run.stdout, "", "{run}");
    let json = env.run(&["--json", "validate"]);
    json.failure(4);
    assert_eq!(json.json()["error"]["code"], "CATALOG_NOT_FOUND", "{json}");
    // With a catalog (here the default, once created) it checks it.
    env.run(&["init"]).success();
    let run = env.run(&["validate"]);
    run.success();
    assert!(!run.stderr.contains(SAID), "{run}");
}

/// `bundles`, or a bundle's `tools`, that is not a folder (a symlink that git checked out as a
/// small text file where `core.symlinks` is false, or a dangling symlink): readers see nothing
/// there, so `validate` reports it (rule `folder`) instead of passing on an empty catalog.
#[test]
fn a_catalog_folder_that_is_a_file_or_a_dangling_symlink_is_an_error() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    env.put_tool("b", &crate::common::tool_doc("hello", "v1"));
    let tools = env.bundle_dir(&id).join("tools");
    std::fs::rename(&tools, env.root().join("moved-tools")).unwrap();
    std::os::unix::fs::symlink("../../../elsewhere/tools", &tools).unwrap();
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    let report = run.json();
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report}");
    assert_eq!(findings[0]["rule"], "folder", "{report}");
    let file = findings[0]["file"].as_str().unwrap();
    assert!(file.ends_with(&format!("bundles/{id}/tools")), "{report}");

    let bundles = env.catalog().join("bundles");
    std::fs::rename(&bundles, env.root().join("moved-bundles")).unwrap();
    std::fs::write(&bundles, "../shared/bundles").unwrap();
    env.run(&["validate"])
        .failure(3)
        .stdout_has("bundles: error[folder]: must be a folder of the catalog, and is a file (git");
}

/// A bundle folder without `bundle.json` is filed under rule `folder`, as the README's rule
/// table says (CI jobs filter on it); it was `read`.
#[test]
fn regression_a_bundle_folder_without_bundle_json_is_rule_folder() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    env.put_tool("b", &crate::common::tool_doc("hello", "v1"));
    std::fs::remove_file(env.bundle_dir(&id).join("bundle.json")).unwrap();
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    let report = run.json();
    let missing: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["message"] == "the bundle folder has no bundle.json")
        .collect();
    assert_eq!(missing.len(), 1, "{run}");
    assert_eq!(missing[0]["rule"], "folder", "{run}");
    assert_eq!(missing[0]["severity"], "error", "{run}");
    assert!(
        !report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "read"),
        "{run}"
    );
}

/// serde_json says column 0 for an error at the start of a line (here the end of the file
/// after its newline); columns count from 1 in every report: validate's three formats and a
/// command's error details.
#[test]
fn regression_a_parse_error_at_the_end_of_a_file_is_at_column_1() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    let dir = env.bundle_dir(&id).join("tools/cut/v1");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tool.json");
    std::fs::write(&file, "{\n  \"slug\": \"cut\",\n").unwrap();
    let run = env.run(&["validate"]);
    run.failure(3)
        .stdout_has("tool.json:3:1: error[parse]: not JSON: EOF while parsing a value\n");
    env.run(&["validate", "--format", "github"])
        .failure(3)
        .stdout_has(",line=3,col=1,title=toolctl validate%3A parse::");
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    let finding = &run.json()["findings"][0];
    assert_eq!(
        (&finding["line"], &finding["column"]),
        (&3.into(), &1.into()),
        "{run}"
    );
    // tool put reads it with the same positions.
    let put = env.json_error(&["tool", "put", "--bundle", "b", file.to_str().unwrap()], 3);
    assert_eq!(put.error.details["column"], 1, "{put:?}");
    assert!(put.error.message.contains("at line 3 column 1"), "{put:?}");
}
