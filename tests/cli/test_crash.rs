//! Crash safety: writers killed with SIGKILL at any moment leave every file whole,
//! old or new, never half; the lock dies with its holder; and the temporary files a killed
//! writer may leave behind are never seen by lists.
//!
//! The kill delays follow a fixed sequence over 0–30 ms (a debug `tool put` takes about
//! 10 ms), so the kills land before, during and after the write, the same way on every run.

use crate::common::{TestEnv, find_files, read_json, tool_doc_with};
use serde_json::json;
use std::process::Stdio;
use std::time::Duration;

/// The i-th kill delay: 0 to 30 ms, spread over the range by a fixed stride.
fn delay(i: usize) -> Duration {
    Duration::from_millis(((i * 13) % 31) as u64)
}

/// Run `args` and SIGKILL it after `delay` (if it is still running).
fn run_and_kill(env: &TestEnv, args: &[&str], delay: Duration) {
    let mut child = env
        .command(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    let _ = child.kill(); // already gone is fine
    child.wait().unwrap();
}

#[test]
fn killed_puts_leave_every_file_whole() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    // A large description makes the write itself take a while, widening the window.
    let filler = "lorem ipsum ".repeat(4000);
    let mut slugs = Vec::new();
    for i in 0..30 {
        let slug = format!("k{i:02}");
        let doc = tool_doc_with(&slug, "v1", json!({ "description": filler }));
        let input = env.input(&doc);
        run_and_kill(&env, &["tool", "put", "--bundle", "w", &input], delay(i));
        slugs.push((slug, input));
    }

    // Every tool.json on disk parses, and holds all of what was written.
    let files = find_files(env.catalog(), "tool.json");
    for file in &files {
        let doc = read_json(file);
        assert_eq!(doc["description"], filler.as_str(), "{}", file.display());
        assert!(doc["toolID"].is_string());
    }
    // Lists see exactly those files, report no problem, and no temporary file.
    let list = env.tool_list(&["--bundle", "w", "--include-disabled", "--page-size", "1000"]);
    assert!(list.problems.is_empty(), "{:?}", list.problems);
    assert_eq!(list.items.len(), files.len());
    for item in &list.items {
        assert!(!item.slug.starts_with('.'), "{item:?}");
        assert!(!item.version.starts_with('.'), "{item:?}");
    }
    for args in [&["tool", "list"][..], &["--json", "tool", "list"][..]] {
        let run = env.run(args);
        run.success();
        assert!(!run.stdout.contains(".toolctl-tmp"), "{run}");
        assert!(!run.stderr.contains(".toolctl-tmp"), "{run}");
    }

    // No lock was left held, and each put either happened whole or not at all: putting it
    // again conflicts exactly when its file exists.
    for (slug, input) in &slugs {
        let existed = env.tool_file(&bundle_id, slug, "v1").is_file();
        let run = env.run(&[
            "--lock-timeout",
            "2s",
            "tool",
            "put",
            "--bundle",
            "w",
            input,
        ]);
        run.failure(if existed { 5 } else { 0 });
    }
    assert_eq!(env.refs(&["--bundle", "w"]).len(), 30);
}

#[test]
fn killed_toggles_leave_the_tool_file_whole() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let doc = tool_doc_with(
        "t",
        "v1",
        json!({ "description": "lorem ipsum ".repeat(4000), "x-extra": { "z": 1, "a": 2 } }),
    );
    env.put_tool("w", &doc);
    let file = env.tool_file(&bundle_id, "t", "v1");
    let mut original = read_json(&file);
    original.as_object_mut().unwrap().shift_remove("isEnabled");

    for i in 0..20 {
        let action = if i % 2 == 0 { "disable" } else { "enable" };
        run_and_kill(&env, &["tool", action, "w/t@v1"], delay(i + 5));
        let mut now = read_json(&file);
        assert!(now["isEnabled"].is_boolean() || now.get("isEnabled").is_none());
        now.as_object_mut().unwrap().shift_remove("isEnabled");
        assert_eq!(
            serde_json::to_string(&now).unwrap(),
            serde_json::to_string(&original).unwrap(),
            "after kill {i}"
        );
    }
    let list = env.tool_list(&["--bundle", "w", "--include-disabled"]);
    assert!(list.problems.is_empty(), "{:?}", list.problems);
    assert_eq!(list.items.len(), 1);
    env.run(&["--lock-timeout", "2s", "tool", "enable", "w/t@v1"])
        .success();
}

#[test]
fn killed_bundle_puts_leave_no_broken_bundle() {
    // A bundle put killed before its bundle.json is in place must not leave a folder that
    // lists then report as a broken bundle (a crash is not a hand edit gone wrong).
    let env = TestEnv::new();
    for i in 0..30 {
        let slug = format!("b{i:02}");
        run_and_kill(
            &env,
            &[
                "bundle",
                "put",
                "--slug",
                &slug,
                "--description",
                &"words ".repeat(4000),
            ],
            delay(i),
        );
    }
    for file in find_files(env.catalog(), "bundle.json") {
        read_json(&file);
    }
    let bundles = env.bundle_list(&["--page-size", "1000"]);
    assert!(bundles.problems.is_empty(), "{:?}", bundles.problems);
    let tools = env.tool_list(&[]);
    assert!(tools.problems.is_empty(), "{:?}", tools.problems);
    // Every slug is either there whole or free to take.
    for i in 0..30 {
        let slug = format!("b{i:02}");
        let listed = bundles.items.iter().any(|b| b.slug == slug);
        let run = env.run(&["--lock-timeout", "2s", "bundle", "put", "--slug", &slug]);
        run.failure(if listed { 5 } else { 0 });
    }
}

#[test]
fn leftover_temporary_files_are_invisible() {
    // What a writer killed between creating its temporary file and renaming it leaves behind,
    // made deterministically: lists must neither show it nor report it as a problem.
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    env.put_tool("w", &tool_doc_with("t", "v1", json!({})));
    let tmp = ".toolctl-tmp-AbC123";
    let half = "{\n  \"slug\": \"t\",\n  \"ver";
    // Beside a whole tool.json, in a version folder of its own, beside a bundle.json, and
    // in the folder of a bundle whose first write never finished.
    let orphan_bundle = env.bundle_dir(&uuid::Uuid::now_v7().to_string());
    for path in [
        env.tool_file(&bundle_id, "t", "v1").with_file_name(tmp),
        env.tool_file(&bundle_id, "t", "v2").with_file_name(tmp),
        env.bundle_dir(&bundle_id).join(tmp),
        orphan_bundle.join(tmp),
    ] {
        crate::common::write_file(&path, half);
    }

    let tools = env.tool_list(&["--include-disabled", "--include-deleted"]);
    assert!(tools.problems.is_empty(), "{:?}", tools.problems);
    let refs: Vec<_> = tools.items.iter().map(|t| t.reference.as_str()).collect();
    assert_eq!(
        refs,
        [
            "builtin/exec@v1",
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1",
            "w/t@v1"
        ]
    );
    let bundles = env.bundle_list(&["--include-disabled", "--include-deleted"]);
    assert!(bundles.problems.is_empty(), "{:?}", bundles.problems);
    assert_eq!(bundles.items.len(), 2);
    assert_eq!(bundles.items[1].tool_count, Some(1));
    let run = env.run(&["tool", "list"]);
    run.success();
    assert_eq!(
        run.stderr, "",
        "no warning about a crashed write's leftovers"
    );
    assert!(!run.stdout.contains(".toolctl-tmp"));
    // And writing goes on: the version whose write never finished can be put.
    env.put_tool("w", &tool_doc_with("t", "v2", json!({})));
}

#[test]
fn killed_attaches_leave_the_agent_file_whole() {
    let env = TestEnv::new();
    env.bundle("w");
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
    for (i, word) in words.iter().enumerate() {
        let doc = tool_doc_with(
            &format!("{word}-tool"),
            "v1",
            json!({ "description": format!("Does {word} things, number {i}.") }),
        );
        env.put_tool("w", &doc);
    }
    let agent = "agent-0190b000-0000-7000-8000-00000000c4a5";
    let file = env.catalog().join("agents").join(format!("{agent}.json"));
    for i in 0..24 {
        let query = words[i % words.len()];
        run_and_kill(&env, &["attach", agent, "--query", query], delay(i));
        // After every kill the file is absent (killed before the first write) or whole: it
        // parses, and agent show reads it.
        if file.is_file() {
            let doc = read_json(&file);
            assert_eq!(doc["agentID"], agent);
            assert!(doc["tools"].is_array(), "{doc}");
            env.run(&["--json", "agent", "show", agent]).success();
        }
    }
    // No lock was left held, and no temporary file left in agents/.
    env.run(&["--lock-timeout", "2s", "attach", agent, "--query", "echo"])
        .success();
    let held = read_json(&file)["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["ref"].to_string())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    assert!(
        held.iter().any(|r| r.contains("w/echo-tool@v1")),
        "{held:?}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(env.catalog().join("agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != &format!("{agent}.json"))
        .collect();
    // A kill between the temporary file and the rename may leave one behind; agent list
    // never reports it.
    let list = env.run(&["agent", "list"]);
    list.success();
    assert!(
        !list.stderr.contains(".toolctl-tmp"),
        "{list}\n{leftovers:?}"
    );
}
