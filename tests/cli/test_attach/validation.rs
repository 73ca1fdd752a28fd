//! 3. Validation.

use super::*;

#[test]
fn bad_requests_are_validation_errors_and_leave_the_agent_file_alone() {
    let env = TestEnv::fixture();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "weather forecast"], &[]);
    let path = agent_path(&env, &a);
    let bytes = std::fs::read(&path).unwrap();

    // Agent IDs that are not UUIDs: nothing is created.
    for bad in [
        "not-a-uuid",
        "agent-",
        "agent-xyz",
        "123e4567e89b12d3a456426614174000",
        "{123e4567-e89b-12d3-a456-426614174000}",
        "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
        "agent-123e4567-e89b-12d3-a456-42661417400",
        "agent_123e4567-e89b-12d3-a456-426614174000",
        "",
    ] {
        let doc = attach_fails(&env, bad, &["--query", "weather"], &[], 3);
        assert_eq!(doc.code, "VALIDATION_ERROR", "{bad:?}: {doc:?}");
        assert!(doc.error.contains("not an agent ID"), "{doc:?}");
    }
    let files = std::fs::read_dir(env.catalog().join("agents"))
        .unwrap()
        .count();
    assert_eq!(files, 1, "a bad ID creates no file");

    let q = ["--query", "github issues"];
    let cases: &[(&[&str], &str)] = &[
        (&["--limit", "0"], "--limit 0"),
        (&["--limit", "26"], "--limit 26"),
        (&["--limit", "-1"], "--limit -1"),
        (&["--min-score", "-1"], "--min-score -1"),
        (&["--min-score", "101"], "--min-score 101"),
        (&["--min-score", "100.5"], "--min-score 100.5"),
        (&["--min-score", "NaN"], "--min-score NaN"),
        (&["--keep", "no-such-tool"], "--keep 'no-such-tool'"),
        (
            &["--keep", "weather/forecast@v9"],
            "--keep 'weather/forecast@v9'",
        ),
    ];
    for (extra, says) in cases {
        let mut args = q.to_vec();
        args.extend_from_slice(extra);
        let doc = attach_fails(&env, &a, &args, &[], 3);
        assert_eq!(doc.code, "VALIDATION_ERROR", "{extra:?}");
        assert!(doc.error.contains(says), "{extra:?}: {doc:?}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "{extra:?} changed the file"
        );
    }
    // The same without a query: the request is checked all the same.
    let doc = attach_fails(&env, &a, &["--limit", "0"], &[], 3);
    assert_eq!(doc.code, "VALIDATION_ERROR");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // The bounds themselves are fine.
    attach_ok(
        &env,
        &a,
        &[
            "--query",
            "github issues",
            "--limit",
            "25",
            "--min-score",
            "100",
        ],
        &[],
    );
    attach_ok(
        &env,
        &a,
        &[
            "--query",
            "github issues",
            "--limit",
            "1",
            "--min-score",
            "0",
        ],
        &[],
    );
}

#[test]
fn bad_settings_are_validation_errors_and_leave_the_agent_file_alone() {
    let env = TestEnv::fixture();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "weather forecast"], &[]);
    let path = agent_path(&env, &a);
    let bytes = std::fs::read(&path).unwrap();
    let q = ["--query", "github issues"];
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("MAX_MCP_TOOLS", "abc")], "MAX_MCP_TOOLS"),
        (&[("MAX_MCP_TOOLS", "-3")], "MAX_MCP_TOOLS"),
        (&[("MAX_MCP_TOOLS", "")], "MAX_MCP_TOOLS"),
        (&[("MAX_TOTAL_TOOLS", "1.5")], "MAX_TOTAL_TOOLS"),
        (&[("MIN_MCP_TOOLS", "many")], "MIN_MCP_TOOLS"),
        (
            &[("MIN_MCP_TOOLS", "9"), ("MAX_MCP_TOOLS", "5")],
            "MIN_MCP_TOOLS=9 (environment) is above MAX_MCP_TOOLS=5 (environment)",
        ),
        // The default minimum (7) is above a maximum of 5 set alone.
        (
            &[("MAX_MCP_TOOLS", "5")],
            "MIN_MCP_TOOLS=7 (default) is above MAX_MCP_TOOLS=5 (environment)",
        ),
        (
            &[("MIN_MCP_TOOLS", "8"), ("MAX_TOTAL_TOOLS", "4")],
            "MIN_MCP_TOOLS=8 (environment) is above MAX_TOTAL_TOOLS=4 (environment)",
        ),
        (&[("DEFAULT_DROP_RATE", "2")], "DEFAULT_DROP_RATE"),
        (&[("DEFAULT_DROP_RATE", "-0.1")], "DEFAULT_DROP_RATE"),
        (&[("DEFAULT_DROP_RATE", "half")], "DEFAULT_DROP_RATE"),
        (
            &[("EXCLUDE_LETTA_CORE_TOOLS", "maybe")],
            "EXCLUDE_LETTA_CORE_TOOLS",
        ),
        (&[("FIND_TOOLS_MAX_LIMIT", "0")], "FIND_TOOLS_MAX_LIMIT"),
        (&[("FIND_TOOLS_MAX_LIMIT", "x")], "FIND_TOOLS_MAX_LIMIT"),
    ];
    for (vars, says) in cases {
        let doc = attach_fails(&env, &a, &q, vars, 3);
        assert_eq!(doc.code, "VALIDATION_ERROR", "{vars:?}");
        assert!(doc.error.contains(says), "{vars:?}: {doc:?}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "{vars:?} changed the file"
        );
    }

    // FIND_TOOLS_MAX_LIMIT moves the largest --limit, both ways.
    attach_ok(
        &env,
        &a,
        &["--query", "github", "--limit", "26"],
        &[("FIND_TOOLS_MAX_LIMIT", "30")],
    );
    let doc = attach_fails(
        &env,
        &a,
        &["--query", "github", "--limit", "6"],
        &[("FIND_TOOLS_MAX_LIMIT", "5")],
        3,
    );
    assert!(doc.error.contains("between 1 and 5"), "{doc:?}");

    // The same settings in toolctl.json, and the environment over them.
    env.edit_config(|c| c["attach"] = json!({ "defaultDropRate": 1.5 }));
    let doc = attach_fails(&env, &a, &q, &[], 3);
    assert!(doc.error.contains("defaultDropRate"), "{doc:?}");
    attach_ok(
        &env,
        &a,
        &["--query", "github issues"],
        &[("DEFAULT_DROP_RATE", "0.5")],
    );
    let bytes_after = std::fs::read(&path).unwrap();
    env.edit_config(|c| c["attach"] = json!({ "minMcpTools": 10, "maxMcpTools": 8 }));
    let doc = attach_fails(&env, &a, &q, &[], 3);
    assert!(
        doc.error
            .contains("MIN_MCP_TOOLS=10 (toolctl.json) is above MAX_MCP_TOOLS=8 (toolctl.json)"),
        "{doc:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes_after);
    attach_ok(&env, &a, &q, &[("MIN_MCP_TOOLS", "3")]);
}

#[test]
fn usage_errors_take_the_contract_shape_with_exit_2() {
    let env = TestEnv::fixture();
    let run = env.run(&["--json", "attach"]);
    run.failure(2);
    assert_eq!(keys(&run.json()), ["success", "error", "code"], "{run}");
    let doc: AttachError = run.parse();
    assert!(!doc.success);
    assert_eq!(doc.code, "VALIDATION_ERROR");
    // Every usage error of attach, not only a missing AGENT: the command's own promise is
    // "attach answers in the attach contract's shape, usage errors included".
    let mut wrong = Vec::new();
    for args in [
        &["--no-such-flag"][..],
        &["extra-argument"][..],
        &["--limit", "ten"][..],
        &["--min-score", "high"][..],
        &["--scorer", "magic"][..],
        &["--query"][..],
        &["--keep"][..],
    ] {
        let mut all = vec!["--json", "attach", "3f2b8c1e-9d4a-4e6b-8a7c-000000000001"];
        all.extend_from_slice(args);
        let run = env.run(&all);
        run.failure(2);
        assert_eq!(run.stderr, "", "{run}");
        if keys(&run.json()) != ["success", "error", "code"] {
            wrong.push(format!("{args:?} → {}", run.stdout.replace('\n', " ")));
        } else {
            let doc: AttachError = run.parse();
            assert_eq!(doc.code, "VALIDATION_ERROR", "{run}");
        }
    }
    assert!(
        wrong.is_empty(),
        "usage errors of attach not in the contract's shape:\n{}",
        wrong.join("\n")
    );
    assert!(!env.catalog().join("agents").exists());
    // Without --json, a usage error is text on stderr.
    let run = env.run(&["attach"]);
    run.failure(2);
    run.stderr_has("Usage: toolctl attach");
}

#[test]
fn a_corrupt_agent_file_is_refused_and_left_byte_for_byte() {
    let env = TestEnv::fixture();
    let a = agent(1);
    let forecast = listed(&env, "weather/forecast@v2.1");
    let good = |extra: Value| {
        let mut t = entry(&forecast, &at(1));
        for (k, v) in extra.as_object().unwrap() {
            t[k] = v.clone();
        }
        json!({
            "schemaVersion": "1",
            "agentID": a,
            "createdAt": at(0),
            "modifiedAt": at(1),
            "tools": [t],
        })
    };
    let dup = {
        let mut doc = good(json!({}));
        let t = doc["tools"][0].clone();
        doc["tools"].as_array_mut().unwrap().push(t);
        doc
    };
    let wrong_id = {
        let mut doc = good(json!({}));
        doc["agentID"] = json!(agent(2));
        doc
    };
    let no_tools = {
        let mut doc = good(json!({}));
        doc.as_object_mut().unwrap().shift_remove("tools");
        doc
    };
    let texts: Vec<(String, &str)> = vec![
        ("{ not json".to_owned(), "not JSON"),
        (String::new(), "empty"),
        ("[]".to_owned(), "an array"),
        (good(json!({ "kind": "plugin" })).to_string(), "bad kind"),
        (
            good(json!({ "matchScore": 150 })).to_string(),
            "score above 100",
        ),
        (good(json!({ "toolID": "nope" })).to_string(), "bad toolID"),
        (
            good(json!({ "attachedAt": "yesterday" })).to_string(),
            "bad time",
        ),
        (
            good(json!({ "surprise": 1 })).to_string(),
            "unknown tool field",
        ),
        (dup.to_string(), "a tool twice"),
        (wrong_id.to_string(), "another agent's ID"),
        (no_tools.to_string(), "no tools"),
    ];
    let path = agent_path(&env, &a);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    for (text, what) in &texts {
        std::fs::write(&path, text).unwrap();
        for args in [
            &["--query", "weather forecast", "--min-score", "0"][..],
            &[][..],
        ] {
            let doc = attach_fails(&env, &a, args, &[("MIN_MCP_TOOLS", "0")], 3);
            assert_eq!(doc.code, "VALIDATION_ERROR", "{what}: {doc:?}");
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                *text,
                "{what}: the file was changed"
            );
        }
        // agent show and detach refuse it too, and leave it.
        let err = env.json_error(&["agent", "show", &a], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{what}");
        let err = env.json_error(&["agent", "detach", &a, "--all"], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{what}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), *text, "{what}");
        assert_no_temp_files(&env);
    }
}

#[test]
fn the_contracts_request_body_is_read_from_a_file_or_stdin() {
    let env = TestEnv::fixture();
    let a = agent(3);
    // The same run from flags and from the body: the same response.
    let body = json!({
        "agent_id": a,
        "query": "weather forecast for Oslo",
        "limit": 4,
        "min_score": 30.0,
        "keep_tools": [],
        "auto_prune": true
    });
    let file = env.input(&body);
    let from_file = env.run(&["--json", "attach", "--request", &file]);
    from_file.success();
    let flags = attach_ok(
        &env,
        &agent(4),
        &[
            "--query",
            "weather forecast for Oslo",
            "--limit",
            "4",
            "--min-score",
            "30",
        ],
        &[],
    );
    let doc = from_file.json();
    assert_eq!(doc["details"]["target_agent"], a.as_str());
    assert_eq!(
        doc["details"]["successful_attachments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["name"].clone())
            .collect::<Vec<_>>(),
        flags
            .resp
            .details
            .successful_attachments
            .iter()
            .map(|x| Value::from(x.name.clone()))
            .collect::<Vec<_>>()
    );
    let stdin = env.run_stdin(
        &["--json", "attach", "--request", "-"],
        &json!({ "agent_id": agent(5) }).to_string(),
    );
    stdin.success();
    assert_eq!(stdin.json()["details"]["processed_count"], 0, "{stdin}");

    // The contract's validation, each problem at its pointer; nothing is created.
    for (body, pointer) in [
        (json!({ "query": "x" }), "/agent_id"),
        (json!({ "agent_id": "agent-1" }), "/agent_id"),
        (json!({ "agent_id": a, "limit": "3" }), "/limit"),
        (json!({ "agent_id": a, "limit": 2.5 }), "/limit"),
        (json!({ "agent_id": a, "min_score": "high" }), "/min_score"),
        (
            json!({ "agent_id": a, "keep_tools": "tool-1" }),
            "/keep_tools",
        ),
        (json!({ "agent_id": a, "keep_tools": [1] }), "/keep_tools/0"),
        (json!({ "agent_id": a, "auto_prune": "yes" }), "/auto_prune"),
        (json!({ "agent_id": a, "min_scor": 50 }), "/min_scor"),
    ] {
        let run = env.run_stdin(&["--json", "attach", "--request", "-"], &body.to_string());
        run.failure(3);
        let doc = run.json();
        assert_eq!(doc["success"], false, "{run}");
        assert_eq!(doc["code"], "VALIDATION_ERROR", "{run}");
        assert!(
            doc["error"]
                .as_str()
                .unwrap()
                .starts_with(&format!("<stdin>: {pointer}: ")),
            "{body}: {run}"
        );
    }
    let run = env.run_stdin(
        &["--json", "attach", "--request", "-"],
        &json!([a]).to_string(),
    );
    run.failure(3);
    assert!(
        run.json()["error"]
            .as_str()
            .unwrap()
            .contains("must be a JSON object"),
        "{run}"
    );
    // Ranges are the contract's too, named by their fields.
    let run = env.run_stdin(
        &["--json", "attach", "--request", "-"],
        &json!({ "agent_id": agent(6), "limit": 26 }).to_string(),
    );
    run.failure(3);
    assert!(
        run.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("limit 26 is out of range"),
        "{run}"
    );
    assert!(!agent_path(&env, &agent(6)).exists());
    // The body replaces the agent and the flags it holds.
    let run = env.run(&["attach", "--request", &file, &a]);
    run.failure(2);
    let run = env.run(&["attach", "--request", &file, "--query", "x"]);
    run.failure(2);
}
