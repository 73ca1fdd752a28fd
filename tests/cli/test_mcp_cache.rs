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
/// with time for the server's first change checks (a list made while the index was being
/// written is kept only after it; a start without a kept list, within the index's racy window
/// after a write, may announce a change at once: the second wait gives the checks after it
/// their time).
fn served_description(env: &TestEnv, name: &str) -> Value {
    let session = drive(
        env,
        "legacy",
        &["--mode", "all"],
        json!([
            { "op": "list" },
            { "op": "wait_changed", "seconds": 2.5 },
            { "op": "wait_changed", "seconds": 2.5 },
        ]),
    );
    let tools = session.step(0)["tools"].as_array().unwrap().clone();
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {tools:?}"))["description"]
        .clone()
}

/// A catalog with one tool, `tick` ("Tell the time"), served once by `mcp serve --mode all`,
/// which keeps its list.
fn clock_served() -> TestEnv {
    let env = TestEnv::new();
    env.bundle("clock");
    env.put_tool(
        "clock",
        &tool_doc_with("tick", "v1", json!({ "description": "Tell the time" })),
    );
    env.run(&["index", "rebuild"]).success();
    assert_eq!(served_description(&env, "tick"), "Tell the time");
    env
}

#[test]
fn mcp_serve_reads_its_kept_list_back_until_the_catalog_changes() {
    let env = clock_served();
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

#[test]
fn a_kept_list_that_is_a_fifo_or_endless_is_made_again_not_read() {
    let env = clock_served();
    let file = kept(&env).remove(0);
    type Make = fn(&std::path::Path);
    let kinds: [(&str, Make); 2] = [
        ("a FIFO", |path| crate::common::mkfifo(path)),
        ("a link to /dev/zero", |path| {
            std::os::unix::fs::symlink("/dev/zero", path).unwrap();
        }),
    ];
    for (what, make) in kinds {
        std::fs::remove_file(&file).unwrap();
        make(&file);
        // The server answers (it would wait on the FIFO, or fill memory from /dev/zero) with
        // the catalog's tools.
        assert_eq!(served_description(&env, "tick"), "Tell the time", "{what}");
    }
}

/// The names of a `tools/list` step's tools.
fn names(step: &Value) -> Vec<String> {
    step["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools in {step}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_start_without_a_kept_list_pages_as_the_whole_list_does_while_it_is_made() {
    let env = TestEnv::new();
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(false));
    env.bundle("b");
    for slug in ["t1", "t2", "t3", "t4", "t5"] {
        let extra = if slug == "t2" {
            // MCP cannot take alternatives at the root: left out of the list.
            json!({ "argSchema": { "type": "object", "oneOf": [{ "required": ["a"] }, { "required": ["b"] }] } })
        } else {
            json!({})
        };
        env.put_tool("b", &tool_doc_with(slug, "1", extra));
    }
    // Past the index's racy window, so that the server's first check writes nothing (a write
    // would be a change, announced).
    std::thread::sleep(std::time::Duration::from_millis(2200));
    env.run(&["index", "rebuild"]).success();
    assert!(kept(&env).is_empty());

    // No list kept: the first pages are made alone; the first change check makes the whole
    // list (and keeps it) without announcing a change; the pages stay the same after it.
    let page = |cursor: Value| json!({ "op": "list", "cursor": cursor });
    let cold = drive(
        &env,
        "legacy",
        &["--mode", "all", "--page-size", "2"],
        json!([
            page(Value::Null),
            page(json!("offset:2")),
            { "op": "wait_changed", "seconds": 2.5 },
            page(Value::Null),
            page(json!("offset:2")),
            page(json!("offset:4")),
            { "op": "list_all" },
            { "op": "call", "name": "t3", "arguments": {} },
            { "op": "call", "name": "t2", "arguments": {} },
        ]),
    );
    assert!(
        cold.stderr.contains("each page made when asked for") && cold.stderr.contains(UNCHECKED),
        "{}",
        cold.stderr
    );
    assert_eq!(
        names(cold.step(0)),
        ["t1"],
        "t2 is left out of the first page"
    );
    assert_eq!(cold.step(0)["nextCursor"], "offset:2");
    assert_eq!(names(cold.step(1)), ["t3", "t4"]);
    assert_eq!(
        cold.step(2)["changed"],
        false,
        "the whole list is the same list: {:?}",
        cold.steps
    );
    assert_eq!(
        cold.step(3),
        cold.step(0),
        "the first page, from the whole list"
    );
    assert_eq!(
        cold.step(4),
        cold.step(1),
        "the second page, from the whole list"
    );
    assert_eq!(names(cold.step(5)), ["t5"]);
    assert_eq!(cold.step(5)["nextCursor"], Value::Null);
    assert_eq!(names(cold.step(6)), ["t1", "t3", "t4", "t5"]);
    assert_eq!(cold.step(7)["isError"], false, "{}", cold.step(7));
    assert!(
        cold.step(8)["protocolError"].is_object(),
        "a tool left out is not served: {}",
        cold.step(8)
    );
    assert_eq!(kept(&env).len(), 1, "the whole list is kept");

    // The next start reads it back, and pages it the same way.
    let warm = drive(
        &env,
        "legacy",
        &["--mode", "all", "--page-size", "2"],
        json!([page(Value::Null), page(json!("offset:2")), { "op": "list_all" }]),
    );
    assert!(
        !warm.stderr.contains("each page made when asked for"),
        "{}",
        warm.stderr
    );
    assert_eq!(warm.step(0), cold.step(0));
    assert_eq!(warm.step(1), cold.step(1));
    assert_eq!(warm.step(2), cold.step(6));
}

/// `mcp serve --mode all`: the first page, a wait for `list_changed` (the first change
/// check's), the first page again, then time for the checks after it (should the index still
/// move, the list is kept only once it stands still).
fn list_check_list(env: &TestEnv) -> crate::test_mcp::Session {
    drive(
        env,
        "legacy",
        &["--mode", "all"],
        json!([
            { "op": "list" },
            { "op": "wait_changed", "seconds": 4 },
            { "op": "list" },
            { "op": "wait_changed", "seconds": 2.5 },
        ]),
    )
}

#[test]
fn a_tool_added_by_hand_before_a_start_without_a_kept_list_is_listed_or_announced() {
    let env = TestEnv::new();
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(false));
    env.bundle("b");
    env.put_tool("b", &tool_doc_with("old", "1", json!({})));
    env.run(&["index", "rebuild"]).success();
    // Put, then its file rewritten by hand: the index may not have taken the new text in
    // when the server starts (the first change check does).
    env.put_tool_by_hand("b", &tool_doc_with("fresh", "1", json!({})));
    assert!(kept(&env).is_empty());
    let session = list_check_list(&env);
    let first = names(session.step(0));
    let last = names(session.step(2));
    assert_eq!(last, ["old", "fresh"], "{:?}", session.steps);
    if first != last {
        assert_eq!(
            session.step(1)["changed"],
            true,
            "a list without the new tool is followed by list_changed: {:?}",
            session.steps
        );
    }
}

/// The marker `mcp serve` writes on stderr when its first answers come from the index as
/// toolctl left it, before the index's change check.
const UNCHECKED: &str = "from the index as toolctl left it";

#[test]
fn a_tool_written_by_hand_while_serve_was_down_is_found_after_an_unchecked_start_and_kept() {
    let env = TestEnv::new();
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(false));
    let bundle = env.bundle("b");
    env.put_tool("b", &tool_doc_with("old", "1", json!({})));
    // A tool file whose folder the index has never seen: put through toolctl, its folder
    // taken away, the index made without it, then the folder written back by hand.
    env.put_tool("b", &tool_doc_with("fresh", "1", json!({})));
    let file = env.tool_file(&bundle, "fresh", "1");
    let text = std::fs::read_to_string(&file).unwrap();
    let slug_dir = file.parent().unwrap().parent().unwrap().to_owned();
    std::fs::remove_dir_all(&slug_dir).unwrap();
    env.run(&["index", "rebuild"]).success();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    // Past the index's racy window, so that the first check writes the index once.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    assert!(kept(&env).is_empty());

    let session = list_check_list(&env);
    assert!(session.stderr.contains(UNCHECKED), "{}", session.stderr);
    assert_eq!(
        names(session.step(0)),
        ["old"],
        "the first answer is the index's as it was left: {:?}",
        session.steps
    );
    assert_eq!(
        session.step(1)["changed"],
        true,
        "the first check finds the tool and says the list changed: {:?}",
        session.steps
    );
    assert_eq!(names(session.step(2)), ["old", "fresh"]);

    // The whole list, made after the check, is kept at the catalog's new stamp: the next
    // start reads it back, the hand-written tool in it.
    assert_eq!(kept(&env).len(), 1, "a list is kept: {}", session.stderr);
    let next = drive(
        &env,
        "legacy",
        &["--mode", "all"],
        json!([{ "op": "list" }]),
    );
    assert!(
        !next.stderr.contains("each page made when asked for"),
        "the kept list is read back: {}",
        next.stderr
    );
    assert_eq!(names(next.step(0)), ["old", "fresh"]);
}
