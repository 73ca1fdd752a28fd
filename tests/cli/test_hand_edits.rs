//! Files written by hand (or by `git pull`) are first-class: a file that does not
//! parse is reported with its path and where the syntax error is while everything else keeps
//! working; a tool this binary cannot run is listed as unavailable with the reason; and toolctl
//! never rewrites a file just because it read it.

use crate::common::{TestEnv, read_json, tool_doc, write_file};
use serde_json::json;
use std::path::PathBuf;

/// A hand-written, complete tool.json for bundle `bundle_id`.
fn hand_written(env: &TestEnv, bundle_id: &str, slug: &str, body: serde_json::Value) -> PathBuf {
    let mut doc = json!({
        "schemaVersion": "1",
        "toolID": uuid::Uuid::now_v7().to_string(),
        "bundleID": bundle_id,
        "slug": slug,
        "version": "v1",
        "description": "written by hand",
        "argSchema": { "type": "object", "properties": {} },
        "createdAt": "2025-01-01T00:00:00Z",
        "modifiedAt": "2025-01-01T00:00:00Z"
    });
    for (key, value) in body.as_object().unwrap() {
        doc[key] = value.clone();
    }
    let path = env.tool_file(bundle_id, slug, "v1");
    // Hand-formatted on purpose (not toolctl's layout) so any rewrite shows in the bytes.
    write_file(&path, &serde_json::to_string(&doc).unwrap());
    path
}

#[test]
fn a_tool_file_with_a_syntax_error_is_reported_and_skipped() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    env.put_tool("w", &tool_doc("good", "v1"));
    env.put_tool("w", &tool_doc("broken", "v1"));
    let broken = env.tool_file(&bundle_id, "broken", "v1");
    let text = "{\n  \"slug\": \"broken\",\n  \"version\": \n}\n";
    std::fs::write(&broken, text).unwrap();

    let run = env.run(&["tool", "list"]);
    run.success();
    assert!(run.stdout.contains("w/good@v1"), "{run}");
    assert!(!run.stdout.contains("broken"), "{run}");
    assert!(run.stdout.contains("builtin/now@v1"), "{run}");
    run.stderr_has("warning:")
        .stderr_has(broken.to_str().unwrap())
        .stderr_has("line 4 column 1");

    let list = env.tool_list(&["--bundle", "w"]);
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].reference, "w/good@v1");
    assert_eq!(list.problems.len(), 1);
    assert_eq!(list.problems[0].path, broken);
    assert!(list.problems[0].message.contains("line 4 column 1"));

    // Other commands keep working; nothing touched the broken file.
    env.run(&["tool", "get", "w/good"]).success();
    env.run(&["tool", "disable", "w/good@v1"]).success();
    env.put_tool("w", &tool_doc("more", "v1"));
    // Its <slug, version> is still taken: a put does not overwrite it.
    env.try_put_tool("w", &tool_doc("broken", "v1")).failure(5);
    assert_eq!(std::fs::read_to_string(&broken).unwrap(), text);

    // --quiet mutes the warning, not the data.
    let quiet = env.run(&["-q", "tool", "list", "--bundle", "w", "--include-disabled"]);
    quiet.success();
    assert_eq!(quiet.stderr, "");
    assert!(quiet.stdout.contains("w/more@v1"));
}

#[test]
fn getting_a_broken_tool_names_the_parse_error() {
    // Asking for the very tool whose file is broken must say what is wrong with it (its path
    // and the syntax error), not merely "not found".
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    env.put_tool("w", &tool_doc("broken", "v1"));
    let broken = env.tool_file(&bundle_id, "broken", "v1");
    std::fs::write(&broken, "{\n  \"slug\": \"broken\",\n  \"version\": \n}\n").unwrap();

    let run = env.run(&["tool", "get", "w/broken@v1"]);
    assert_ne!(run.code(), 0, "{run}");
    run.stderr_has(broken.to_str().unwrap())
        .stderr_has("line 4 column 1");
}

#[test]
fn a_broken_bundle_file_is_reported_and_skipped() {
    let env = TestEnv::new();
    let good = env.bundle("good");
    let bad = env.bundle("bad");
    env.put_tool("good", &tool_doc("t", "v1"));
    env.put_tool("bad", &tool_doc("t", "v1"));
    let file = env.bundle_dir(&bad).join("bundle.json");
    std::fs::write(&file, "{ \"slug\": \"bad\", }").unwrap();

    let list = env.bundle_list(&[]);
    let slugs: Vec<_> = list.items.iter().map(|b| b.slug.as_str()).collect();
    assert_eq!(slugs, ["builtin", "good"]);
    assert_eq!(list.problems.len(), 1);
    assert_eq!(list.problems[0].path, file);
    assert!(
        list.problems[0].message.contains("line 1 column"),
        "{:?}",
        list.problems
    );
    let run = env.run(&["tool", "list"]);
    run.success()
        .stderr_has(file.to_str().unwrap())
        .stderr_has("line 1 column");
    assert!(run.stdout.contains("good/t@v1"));
    assert_eq!(env.json(&["bundle", "get", &good])["slug"], "good");
}

#[test]
fn a_tool_with_a_missing_native_function_is_unavailable_and_untouched() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let path = hand_written(
        &env,
        &bundle_id,
        "ghost",
        json!({ "type": "native", "impl": { "func": "nope" } }),
    );
    let before = std::fs::read(&path).unwrap();

    let list = env.tool_list(&["--bundle", "w"]);
    assert!(list.problems.is_empty(), "{:?}", list.problems);
    assert_eq!(list.items.len(), 1);
    let ghost = &list.items[0];
    assert_eq!(ghost.reference, "w/ghost@v1");
    assert!(!ghost.available);
    let reason = ghost.unavailable_reason.as_deref().unwrap();
    assert!(reason.contains("nope"), "{reason}");
    assert!(
        ghost.status.starts_with("unavailable: "),
        "{}",
        ghost.status
    );
    assert!(ghost.status.contains("nope"));

    let run = env.run(&["tool", "list", "--bundle", "w"]);
    run.success();
    assert!(run.stdout.contains("unavailable"), "{run}");
    let got = env.json(&["tool", "get", "w/ghost"]);
    assert_eq!(got["available"], false);
    // Listing and getting it read the file; neither writes it back.
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "a read never rewrites"
    );

    // Put through toolctl: refused as `validate` reports it, not taken with a warning (the
    // catalog's CI would fail after a put that succeeded), and nothing written.
    // An `mcp` tool naming a server toolctl.json does not declare likewise.
    let native = json!({
        "slug": "ghost2", "version": "v1", "type": "native",
        "impl": { "func": "nope" }, "argSchema": { "type": "object" }
    });
    let mcp = json!({
        "slug": "remote", "version": "v1", "type": "mcp",
        "impl": { "server": "nowhere", "tool": "x" }, "argSchema": { "type": "object" }
    });
    for (doc, pointer, rule, words) in [
        (
            &native,
            "/impl/func",
            "native",
            "native function 'nope' is not in this toolctl",
        ),
        (
            &mcp,
            "/impl/server",
            "mcp",
            "MCP server 'nowhere' is not declared in mcpServers",
        ),
    ] {
        let file = env.input(doc);
        let refused = env.json_error(&["tool", "put", "--bundle", "w", &file], 3);
        assert_eq!(refused.error.code, "VALIDATION_ERROR");
        let problems = refused.error.details["problems"].as_array().unwrap();
        assert!(
            problems
                .iter()
                .any(|p| p["pointer"] == pointer && p["message"].as_str().unwrap().contains(words)),
            "{problems:?}"
        );
        let report = env.run(&["--json", "validate", &file]);
        report.failure(3);
        let report = report.json();
        assert!(
            report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["rule"] == rule && f["pointer"] == pointer && f["severity"] == "error"),
            "{report}"
        );
    }
    assert_eq!(
        env.tool_list(&["--bundle", "w"]).items.len(),
        1,
        "nothing written"
    );
}

#[test]
fn go_tools_load_as_native_and_are_never_rewritten() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let ok = hand_written(
        &env,
        &bundle_id,
        "clock",
        json!({ "type": "go", "impl": { "goFunc": "now" } }),
    );
    let missing = hand_written(
        &env,
        &bundle_id,
        "weather",
        json!({ "type": "go", "impl": { "goFunc": "GetWeather" } }),
    );
    let ok_bytes = std::fs::read(&ok).unwrap();
    let missing_bytes = std::fs::read(&missing).unwrap();

    let list = env.tool_list(&["--bundle", "w"]);
    assert!(list.problems.is_empty(), "{:?}", list.problems);
    let clock = list.items.iter().find(|t| t.slug == "clock").unwrap();
    assert_eq!(clock.kind, "native");
    assert!(clock.available, "{clock:?}");
    let weather = list.items.iter().find(|t| t.slug == "weather").unwrap();
    assert_eq!(weather.kind, "native");
    assert!(!weather.available);
    assert!(
        weather
            .unavailable_reason
            .as_deref()
            .unwrap()
            .contains("GetWeather")
    );
    let got = env.json(&["tool", "get", "w/clock@v1"]);
    assert_eq!(
        got["document"]["type"], "go",
        "the stored document is shown as it is"
    );

    assert_eq!(std::fs::read(&ok).unwrap(), ok_bytes);
    assert_eq!(std::fs::read(&missing).unwrap(), missing_bytes);
    assert_eq!(read_json(&ok)["type"], "go");
}

#[test]
fn a_tool_file_that_breaks_the_rules_is_reported() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    // Valid JSON, but its slug is not its folder's name.
    let path = hand_written(
        &env,
        &bundle_id,
        "here",
        json!({ "type": "native", "impl": { "func": "now" } }),
    );
    let mut doc = read_json(&path);
    doc["slug"] = "elsewhere".into();
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    // Missing a required field.
    let other = hand_written(
        &env,
        &bundle_id,
        "partial",
        json!({ "type": "native", "impl": { "func": "now" } }),
    );
    let mut doc = read_json(&other);
    doc.as_object_mut().unwrap().shift_remove("toolID");
    std::fs::write(&other, serde_json::to_string(&doc).unwrap()).unwrap();
    env.put_tool("w", &tool_doc("fine", "v1"));

    let list = env.tool_list(&["--bundle", "w"]);
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].slug, "fine");
    assert_eq!(list.problems.len(), 2, "{:?}", list.problems);
    let problem = |p: &PathBuf| {
        list.problems
            .iter()
            .find(|x| &x.path == p)
            .unwrap()
            .message
            .clone()
    };
    assert!(problem(&path).contains("elsewhere"), "{}", problem(&path));
    assert!(problem(&other).contains("toolID"), "{}", problem(&other));
}

/// `tool get bundle/slug` finds the bundle through the index only while every bundle.json is
/// as the index read it: a bundle renamed by hand (its slug edited in bundle.json, even to the
/// same length) is found by its new slug at once and no longer by its old one.
#[test]
fn a_bundle_renamed_by_hand_is_found_by_its_new_slug_at_once() {
    let env = TestEnv::new();
    let id = env.bundle("alpha");
    env.bundle("other");
    env.put_tool("alpha", &tool_doc("probe", "v1"));
    // The index now knows the bundles; the lookup goes through it.
    let got = env.json(&["tool", "get", "alpha/probe"]);
    assert_eq!(got["toolID"].as_str().map(str::len), Some(36), "{got}");
    let file = env.bundle_dir(&id).join("bundle.json");
    let mut doc = read_json(&file);
    doc["slug"] = json!("gamma");
    write_file(&file, &serde_json::to_string_pretty(&doc).unwrap());
    let renamed = env.json(&["tool", "get", "gamma/probe"]);
    assert_eq!(renamed["toolID"], got["toolID"]);
    env.run(&["tool", "get", "alpha/probe"]).failure(4);
}
