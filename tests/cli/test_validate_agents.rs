//! `validate` reads agent files (`agents/<agentID>.json`) as attach and `agent` read them: a
//! file attach cannot read fails validate (so CI catches what would break the next attach),
//! a file it reads passes, and anything else in `agents/` is a stray. `agent list` names the
//! files it cannot read under `problems`.

use crate::common::{Run, TestEnv, read_json};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const AGENT: &str = "agent-00000000-0000-4000-8000-000000000222";

/// A catalog with one agent made by attach, and its file.
fn with_agent() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    env.run(&["attach", AGENT, "--query", "read a file"])
        .success();
    let file = env.catalog().join("agents").join(format!("{AGENT}.json"));
    assert!(file.is_file());
    (env, file)
}

/// `(rule, severity, file name, pointer, line, column)` of each finding of `--json validate`.
fn findings(run: &Run) -> Vec<(String, String, String, Value, Value, Value)> {
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = Path::new(f["file"].as_str().unwrap());
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["severity"].as_str().unwrap().to_owned(),
                file.file_name().unwrap().to_string_lossy().into_owned(),
                f["pointer"].clone(),
                f["line"].clone(),
                f["column"].clone(),
            )
        })
        .collect()
}

#[test]
fn an_agent_file_attach_reads_passes_validate_whole_or_by_path() {
    let (env, file) = with_agent();
    let run = env.run(&["validate", "--strict"]);
    run.success();
    assert_eq!(run.stdout, "2 files checked: no problems\n", "{run}");
    // By path it is read as an agent file, not as a toolctl.json (no unknown-field warnings).
    let by_path = file.to_str().unwrap();
    let run = env.run(&["validate", "--strict", by_path]);
    run.success();
    assert_eq!(run.stdout, "1 file checked: no problems\n", "{run}");
    // The agents folder as a path: its agent files.
    let folder = env.catalog().join("agents");
    let run = env.run(&["validate", "--strict", folder.to_str().unwrap()]);
    run.success();
    assert_eq!(run.stdout, "1 file checked: no problems\n", "{run}");
    // On standard input, told apart by its agentID.
    let text = std::fs::read_to_string(&file).unwrap();
    let run = env.run_stdin(&["validate", "--strict", "-"], &text);
    run.success();
    assert_eq!(run.stdout, "1 file checked: no problems\n", "{run}");
}

/// Regression: a merge left a conflict marker in an agent file. validate passed it
/// while attach failed on it.
#[test]
fn regression_a_conflict_marker_in_an_agent_file_fails_validate_as_attach_fails() {
    let (env, file) = with_agent();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("<<<<<<< HEAD\n{text}")).unwrap();
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    let name = format!("{AGENT}.json");
    assert_eq!(
        findings(&run),
        vec![(
            "parse".into(),
            "error".into(),
            name,
            Value::Null,
            json!(1),
            json!(1)
        )],
        "{run}"
    );
    env.run(&["attach", AGENT, "--query", "x"]).failure(3);
    env.run(&["agent", "show", AGENT]).failure(3);
}

/// Each rule attach reads an agent file by, broken by hand: validate reports it under rule
/// `agent` at its pointer, and attach refuses the file (one set of rules).
#[test]
fn each_rule_attach_reads_by_is_a_validate_error_at_its_pointer() {
    let (env, file) = with_agent();
    let good = read_json(&file);
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit); 5] = [
        ("/agentID", |d| {
            d["agentID"] = "agent-10000000-0000-4000-8000-000000000222".into()
        }),
        ("/agentID", |d| d["agentID"] = "robot-7".into()),
        ("/tools/1/toolID", |d| {
            let first = d["tools"][0].clone();
            d["tools"][1] = first;
        }),
        ("/tools/0/matchScore", |d| {
            d["tools"][0]["matchScore"] = json!(120)
        }),
        ("/tools/0/kind", |d| d["tools"][0]["kind"] = json!(7)),
    ];
    assert_eq!(good["tools"].as_array().unwrap().len(), 2, "{good}");
    for (pointer, edit) in cases {
        let mut doc = good.clone();
        edit(&mut doc);
        std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let run = env.run(&["--json", "validate"]);
        run.failure(3);
        let found = findings(&run);
        assert_eq!(found.len(), 1, "{pointer}: {run}");
        let (rule, severity, name, at, line, column) = &found[0];
        assert_eq!(
            (rule.as_str(), severity.as_str(), name.as_str(), at),
            (
                "agent",
                "error",
                format!("{AGENT}.json").as_str(),
                &json!(pointer)
            ),
            "{run}"
        );
        assert!(
            line.as_u64().unwrap() > 1 && column.as_u64().unwrap() >= 1,
            "{run}"
        );
        let attach = env.run(&["attach", AGENT]);
        attach.failure(3);
        assert!(attach.stderr.contains(pointer), "{pointer}: {attach}");
    }
    // Put back, all is well again.
    std::fs::write(&file, serde_json::to_string_pretty(&good).unwrap()).unwrap();
    env.run(&["validate", "--strict"]).success();
    env.run(&["attach", AGENT]).success();
}

/// What in `agents/` no command reads: a warning (rule `stray`), naming the agent file name it
/// may have meant; hidden files are not mentioned. `agents` that is not a folder is an error.
#[test]
fn stray_files_in_agents_are_warnings_and_agents_must_be_a_folder() {
    let (env, _) = with_agent();
    let dir = env.catalog().join("agents");
    let upper = "AGENT-00000000-0000-4000-8000-000000000333.json";
    let bare = "00000000-0000-4000-8000-000000000444.json";
    for name in [upper, bare, "README.md", ".DS_Store"] {
        std::fs::write(dir.join(name), "{}").unwrap();
    }
    let run = env.run(&["--json", "validate"]);
    run.success();
    let mut strays: Vec<(String, String)> = findings(&run)
        .into_iter()
        .map(|(rule, severity, name, ..)| (format!("{severity}[{rule}]"), name))
        .collect();
    strays.sort();
    assert_eq!(
        strays,
        vec![
            ("warning[stray]".into(), bare.into()),
            ("warning[stray]".into(), upper.into()),
            ("warning[stray]".into(), "README.md".into()),
        ],
        "{run}"
    );
    let run = env.run(&["validate"]);
    run.success()
        .stdout_has("rename it to agent-00000000-0000-4000-8000-000000000444.json");
    env.run(&["validate", "--strict"]).failure(3);

    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::write(&dir, "agents").unwrap();
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    assert_eq!(
        findings(&run)
            .into_iter()
            .map(|(rule, severity, name, ..)| (rule, severity, name))
            .collect::<Vec<_>>(),
        vec![("folder".into(), "error".into(), "agents".into())],
        "{run}"
    );
}

/// `agent list` with a file it cannot read: the file is under `problems` (as `tool list`
/// does), and the text does not claim there are no agents.
#[test]
fn agent_list_names_unreadable_agent_files_under_problems() {
    let (env, file) = with_agent();
    std::fs::write(&file, "<<<<<<< HEAD\n{}").unwrap();
    let run = env.run(&["--json", "agent", "list"]);
    run.success();
    let doc = run.json();
    assert_eq!(doc["items"], json!([]), "{run}");
    let problems = doc["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{run}");
    assert_eq!(problems[0]["path"], json!(file), "{run}");
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains("line 1 column 1"),
        "{run}"
    );

    let run = env.run(&["-q", "agent", "list"]);
    run.success();
    assert!(!run.stdout.contains("no agents yet"), "{run}");
    assert!(
        run.stdout
            .starts_with("no agent could be read: 1 file in agents/ could not be"),
        "{run}"
    );
    // With none at all, it says so.
    std::fs::remove_file(&file).unwrap();
    let run = env.run(&["--json", "agent", "list"]);
    assert_eq!(run.json(), json!({ "items": [], "problems": [] }), "{run}");
    env.run(&["agent", "list"])
        .success()
        .stdout_has("no agents yet");
}

/// A tool attach would take off an agent — deleted, in a soft-deleted or disabled bundle,
/// disabled — is a warning of `validate` (rule `agent-tool`) at its entry, naming the tool
/// and why, as attach says it when it removes it (one resolver: `attach::inspect`). A tool
/// whose attached version was deleted while another stands for its slug is still callable
/// (attach follows it): no finding.
#[test]
fn attached_tools_attach_would_remove_are_validate_warnings_at_their_entries() {
    let env = TestEnv::new();
    for bundle in ["north", "south", "east"] {
        env.bundle(bundle);
    }
    let put = |bundle: &str, slug: &str, version: &str| {
        let doc = crate::common::tool_doc_with(
            slug,
            version,
            json!({ "description": format!("The {slug} tool of {bundle}.") }),
        );
        let put = env.put_tool(bundle, &doc);
        json!({
            "toolID": put["toolID"],
            "ref": put["ref"],
            "name": slug,
            "kind": "external",
            "attachedAt": "2025-01-01T00:00:00Z",
            "matchScore": null,
        })
    };
    let tools = [
        put("north", "kept", "v1"),
        put("north", "removed", "v1"),
        put("north", "switched-off", "v1"),
        put("south", "in-deleted", "v1"),
        put("east", "in-off", "v1"),
        put("north", "moved", "v1"),
    ];
    put("north", "moved", "v2");
    let file = env.catalog().join("agents").join(format!("{AGENT}.json"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let doc = json!({
        "schemaVersion": "1",
        "agentID": AGENT,
        "createdAt": "2025-01-01T00:00:00Z",
        "modifiedAt": "2025-01-01T00:00:00Z",
        "tools": tools,
    });
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    env.run(&["validate", "--strict"]).success();

    env.run(&["tool", "delete", "north/removed"]).success();
    env.run(&["tool", "disable", "north/switched-off"])
        .success();
    env.run(&["bundle", "delete", "south"]).success();
    env.run(&["bundle", "disable", "east"]).success();
    env.run(&["tool", "delete", "north/moved@v1"]).success();

    let run = env.run(&["--json", "validate"]);
    run.success();
    let name = format!("{AGENT}.json");
    let found: Vec<_> = findings(&run)
        .into_iter()
        .map(|(rule, severity, file, pointer, line, _)| {
            assert!(line.as_u64().is_some_and(|l| l > 1), "{run}");
            (rule, severity, file, pointer)
        })
        .collect();
    let expected: Vec<_> = (1..=4)
        .map(|i| {
            (
                "agent-tool".to_owned(),
                "warning".to_owned(),
                name.clone(),
                json!(format!("/tools/{i}")),
            )
        })
        .collect();
    assert_eq!(found, expected, "{run}");
    let messages: Vec<String> = run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap().to_owned())
        .collect();
    let why = [
        ("north/removed@v1", "no longer in the catalog"),
        ("north/switched-off@v1", "disabled"),
        ("south/in-deleted@v1", "its bundle south is deleted"),
        ("east/in-off@v1", "its bundle is disabled"),
    ];
    for (message, (reference, reason)) in messages.iter().zip(why) {
        assert!(
            message.contains(reference) && message.contains(&format!(": {reason};")),
            "{reference}: {message}"
        );
    }
    // --strict fails on them; the human format names the rule.
    let strict = env.run(&["validate", "--strict"]);
    strict.failure(3);
    strict.stdout_has("[agent-tool]");
    // Checking only the agent file still checks it against the whole catalog.
    let alone = env.run(&["--json", "validate", file.to_str().unwrap()]);
    assert_eq!(findings(&alone).len(), 4, "{alone}");

    // Attach removes the same four, for the same reasons, and then validate is clean.
    let attach = env.run(&["attach", AGENT]);
    attach.success();
    for (reference, reason) in why {
        attach.stderr_has(&format!("{reference} left the agent: {reason}"));
    }
    env.run(&["validate", "--strict"]).success();
    let left: Vec<String> = read_json(&file)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["ref"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(left, ["north/kept@v1", "north/moved@v2"]);
}
