//! 1. The contract's example; 2. agents as files.

use super::*;

#[test]
fn the_seed_example_request_gives_the_contract_response() {
    let env = TestEnv::fixture();
    let agent = "agent-123e4567-e89b-12d3-a456-426614174000";
    // The agent holds weather and GitHub tools from an earlier task.
    let first = attach_ok(
        &env,
        agent,
        &[
            "--query",
            "weather forecast air quality alerts github pull requests issues repository",
            "--limit",
            "25",
            "--min-score",
            "0",
        ],
        &[],
    );
    assert!(first.after.tools.len() >= 9, "{}", first.run);
    let forecast = listed(&env, "weather/forecast@v2.1");
    let repo = listed(&env, "github/get-repo@v1");
    let held = ids(&first.after);
    assert!(held.contains(&forecast.tool_id) && held.contains(&repo.tool_id));

    // The contract's example request: a new task, limit 15, min_score 50, two tools kept by toolID.
    let out = attach_ok(
        &env,
        agent,
        &[
            "--query",
            "I need tools to search documents and create charts",
            "--limit",
            "15",
            "--min-score",
            "50",
            "--keep",
            &forecast.tool_id,
            "--keep",
            &repo.tool_id,
        ],
        &[],
    );
    let d = &out.resp.details;
    assert!(d.processed_count > 0 && d.success_count > 0, "{}", out.run);
    assert_eq!(
        d.preserved_tools.iter().cloned().collect::<BTreeSet<_>>(),
        BTreeSet::from([forecast.tool_id.clone(), repo.tool_id.clone()]),
        "the kept tools are the preserved ones\n{}",
        out.run
    );
    assert!(
        !d.detached_tools.is_empty(),
        "the old task's tools leave\n{}",
        out.run
    );
    for x in &d.detachments {
        assert_ne!(x.tool_id, forecast.tool_id);
        assert_ne!(x.tool_id, repo.tool_id);
        assert!(matches!(
            x.phase.as_str(),
            "pre-attach" | "detachment" | "post-attach"
        ));
    }
    // Default MIN_MCP_TOOLS=7: the detachments never take the agent below 7 external tools.
    let external = out
        .after
        .tools
        .iter()
        .filter(|t| t.kind == "external")
        .count();
    assert!(external >= 7, "{}", out.run);
    // find-docs is the best match for "search documents".
    let best = &d.successful_attachments[0];
    assert_eq!(best.name, "find-docs");
    assert!(best.match_score >= 50.0 && best.match_score < 100.0);
    assert_eq!(d.scorer.as_deref(), Some("fused"));
    assert!(d.warnings.is_empty());
}

#[test]
fn match_scores_are_absolute_and_min_score_and_limit_filter_them() {
    let env = TestEnv::fixture();
    let task = [
        "--query",
        "weather forecast for Oslo tomorrow with air quality",
    ];
    // Everything that scores: the ranking the filters cut.
    let all = attach_ok(
        &env,
        &agent(1),
        &[task[0], task[1], "--min-score", "0", "--limit", "25"],
        &[],
    );
    let scores: Vec<(String, f64)> = all
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| (a.tool_id.clone(), a.match_score))
        .collect();
    assert!(scores.len() >= 4, "{}", all.run);
    assert!(scores.iter().any(|(_, s)| *s < 100.0 && *s > 0.0));

    // --min-score keeps exactly the candidates at or above it.
    let cut = 60.0;
    let out = attach_ok(
        &env,
        &agent(2),
        &[task[0], task[1], "--min-score", "60", "--limit", "25"],
        &[],
    );
    let want: Vec<&(String, f64)> = scores.iter().filter(|(_, s)| *s >= cut).collect();
    assert_eq!(out.resp.details.processed_count, scores.len());
    assert_eq!(
        out.resp.details.passed_filter_count,
        want.len(),
        "{}",
        out.run
    );
    let got: Vec<(String, f64)> = out
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| (a.tool_id.clone(), a.match_score))
        .collect();
    assert_eq!(got, want.into_iter().cloned().collect::<Vec<_>>());

    // --limit takes the best N candidates before the filter.
    let out = attach_ok(
        &env,
        &agent(3),
        &[task[0], task[1], "--min-score", "0", "--limit", "2"],
        &[],
    );
    assert_eq!(out.resp.details.processed_count, 2);
    let got: Vec<&str> = out
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| a.tool_id.as_str())
        .collect();
    assert_eq!(got, [scores[0].0.as_str(), scores[1].0.as_str()]);

    // Scores are absolute: the best match is not rescaled to 100, and a minimum above it
    // passes nothing.
    let best = scores[0].1;
    assert!(best < 100.0, "{scores:?}");
    let above = format!("{}", (best + 1.0).min(100.0));
    let out = attach_ok(
        &env,
        &agent(4),
        &[task[0], task[1], "--min-score", &above],
        &[],
    );
    assert_eq!(out.resp.details.success_count, 0, "{}", out.run);
    assert_eq!(out.resp.details.passed_filter_count, 0, "{}", out.run);

    // Another scorer is named in the response; its scores are absolute too.
    let out = attach_ok(
        &env,
        &agent(5),
        &[task[0], task[1], "--scorer", "keyword"],
        &[],
    );
    assert_eq!(out.resp.details.scorer.as_deref(), Some("keyword"));
    assert!(out.resp.details.success_count >= 1);

    // A query nothing matches: nothing processed, nothing attached, an empty agent.
    let out = attach_ok(&env, &agent(6), &["--query", "xyzzy plugh"], &[]);
    assert_eq!(out.resp.details.processed_count, 0);
    assert!(out.after.tools.is_empty());
}

#[test]
fn unusable_tools_are_never_attached() {
    let env = TestEnv::fixture_with_legacy_tool();
    // Disabled tools, tools of the disabled bundle, the unavailable Go tool, disabled exec.
    let unusable: BTreeMap<String, String> = env
        .tool_list(&["--include-disabled", "--page-size", "1000"])
        .items
        .into_iter()
        .filter(|t| !(t.is_enabled && t.bundle_enabled && t.available))
        .map(|t| (t.tool_id, t.reference))
        .collect();
    assert!(unusable.len() >= 6, "{unusable:?}");
    let out = attach_ok(
        &env,
        &agent(1),
        &[
            "--query",
            "convert currency exchange rate stock quote image search photos weather report run shell command",
            "--min-score",
            "0",
            "--limit",
            "25",
        ],
        &[],
    );
    assert!(out.resp.details.success_count > 0);
    for a in &out.resp.details.successful_attachments {
        assert!(
            !unusable.contains_key(&a.tool_id),
            "attached {}, which cannot be called",
            unusable[&a.tool_id]
        );
    }
}

#[test]
fn a_repeated_attach_changes_nothing() {
    let env = TestEnv::fixture();
    let args = [
        "--query",
        "open a github issue about a bug",
        "--min-score",
        "40",
    ];
    let vars = [("MIN_MCP_TOOLS", "0")];
    let first = attach_ok(&env, &agent(1), &args, &vars);
    assert!(first.resp.details.success_count > 0);
    let bytes = std::fs::read(agent_path(&env, &agent(1))).unwrap();
    let again = attach_ok(&env, &agent(1), &args, &vars);
    assert_eq!(again.after, first.after);
    assert!(again.resp.details.detached_tools.is_empty());
    assert_eq!(
        again.attached(),
        first.attached(),
        "the same tools match again (already attached)"
    );
    assert_eq!(std::fs::read(agent_path(&env, &agent(1))).unwrap(), bytes);
}

#[test]
fn an_agent_is_created_on_first_use_under_any_spelling_of_its_id() {
    let env = TestEnv::new();
    let a = agent(0xabc);
    // No agents folder before the first attach.
    assert!(!env.catalog().join("agents").exists());
    let out = attach_as(&env, bare(&a), &a, &[], &[]);
    assert!(out.before.is_none());
    assert!(out.after.tools.is_empty());
    assert_eq!(
        out.resp.message,
        format!(
            "Successfully processed 0 candidates (0 passed min_score=35.0%), attached 0 tool(s) to agent {a}"
        )
    );
    let files: Vec<_> = std::fs::read_dir(env.catalog().join("agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, [format!("{a}.json")]);

    // The prefixed, upper-case and mixed spellings all name the same file.
    let upper = a.to_uppercase();
    let upper_bare = bare(&a).to_uppercase();
    let mixed = format!("Agent-{}", bare(&a).to_uppercase());
    for spelled in [
        a.as_str(),
        upper.as_str(),
        upper_bare.as_str(),
        mixed.as_str(),
    ] {
        let out = attach_as(&env, spelled, &a, &["--query", "what time is it"], &[]);
        assert!(out.before.is_some(), "{spelled} made a new agent");
        assert_eq!(out.resp.details.target_agent, a);
    }
    let files: Vec<_> = std::fs::read_dir(env.catalog().join("agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, [format!("{a}.json")], "one file for every spelling");
    let list: Vec<ListItem> = env
        .run(&["--json", "agent", "list"])
        .success()
        .parse::<AgentList>()
        .items;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].agent_id, a);

    // "what time is it" matches the built-in `now`: a core tool.
    let now = read_agent(&env, &a).unwrap();
    assert!(
        now.tools
            .iter()
            .any(|t| t.reference == "builtin/now@v1" && t.kind == "core"),
        "{now:?}"
    );
    // Unknown fields of a hand-edited agent file survive a rewrite.
    let path = agent_path(&env, &a);
    let mut raw = read_json(&path);
    raw["x-note"] = json!("owned by team platform");
    std::fs::write(&path, serde_json::to_vec_pretty(&raw).unwrap()).unwrap();
    env.run(&["attach", &a, "--query", "read a file", "--min-score", "0"])
        .success();
    let raw = read_json(&path);
    assert_eq!(raw["x-note"], "owned by team platform");
}
