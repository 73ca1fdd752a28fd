//! `mcp serve --mode all` keeps its `tools/list` in `.toolctl/` (src/mcp/cache.rs): the next
//! start reads it back instead of exporting the catalog, while the catalog's stamp is the same;
//! any change makes it again.

use crate::common::{TestEnv, tool_doc_with};
use crate::test_mcp::drive;
use serde_json::{Value, json};
use std::path::PathBuf;

/// The list files kept in the catalog's `.toolctl/`.
fn kept(env: &TestEnv) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(env.catalog().join(".toolctl"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("mcp-tools-"))
        })
        .collect();
    files.sort();
    files
}

/// The description of tool `name` in the first `tools/list` page of `mcp serve --mode all`,
/// with time for the server's first change check (a list made while the index was being
/// written is kept only after it).
fn served_description(env: &TestEnv, name: &str) -> Value {
    let session = drive(
        env,
        "legacy",
        &["--mode", "all"],
        json!([{ "op": "list" }, { "op": "wait_changed", "seconds": 2.5 }]),
    );
    let tools = session.step(0)["tools"].as_array().unwrap().clone();
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {tools:?}"))["description"]
        .clone()
}

#[test]
fn mcp_serve_reads_its_kept_list_back_until_the_catalog_changes() {
    let env = TestEnv::new();
    env.bundle("clock");
    env.put_tool(
        "clock",
        &tool_doc_with("tick", "v1", json!({ "description": "Tell the time" })),
    );
    env.run(&["index", "rebuild"]).success();
    assert_eq!(served_description(&env, "tick"), "Tell the time");
    let files = kept(&env);
    assert_eq!(files.len(), 1, "one list kept: {files:?}");

    // The kept list is what the next start shows: a mark put in it shows up.
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("Tell the time"), "{text}");
    std::fs::write(
        &files[0],
        text.replace("Tell the time", "Read from the kept list"),
    )
    .unwrap();
    assert_eq!(served_description(&env, "tick"), "Read from the kept list");

    // Filters: a list of their own.
    drive(
        &env,
        "legacy",
        &["--mode", "all", "--bundle", "clock"],
        json!([{ "op": "list" }]),
    );
    assert_eq!(kept(&env).len(), 2);

    // A change through toolctl moves the stamp: the list is made again.
    env.put_tool(
        "clock",
        &tool_doc_with(
            "tick",
            "v2",
            json!({ "description": "Tell the time, again" }),
        ),
    );
    assert_eq!(served_description(&env, "tick"), "Tell the time, again");
    let again = std::fs::read_to_string(&files[0]).unwrap();
    assert!(again.contains("Tell the time, again"), "{again}");

    // So does an edit of toolctl.json (builtin tools switched off here).
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(false));
    let session = drive(
        &env,
        "legacy",
        &["--mode", "all"],
        json!([{ "op": "list" }]),
    );
    let names: Vec<&str> = session.step(0)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["tick"], "no built-in tools once they are off");
}
