//! 8. `agent list` / `show` / `detach`; 9. concurrency.

use super::*;

#[test]
fn agent_list_show_and_detach() {
    let env = TestEnv::fixture();
    let list: Vec<ListItem> = env
        .run(&["--json", "agent", "list"])
        .success()
        .parse::<AgentList>()
        .items;
    assert!(list.is_empty());
    let human = env.run(&["agent", "list"]);
    human.success();
    assert!(human.stdout.contains("no agents yet"), "{human}");

    let (a, b) = (agent(2), agent(1));
    attach_ok(
        &env,
        &a,
        &["--query", "what time is it", "--min-score", "0"],
        &[],
    );
    attach_ok(
        &env,
        &b,
        &[
            "--query",
            "weather forecast github issues",
            "--min-score",
            "0",
        ],
        &[],
    );
    let list: Vec<ListItem> = env
        .run(&["--json", "agent", "list"])
        .success()
        .parse::<AgentList>()
        .items;
    assert_eq!(
        list.iter().map(|l| l.agent_id.as_str()).collect::<Vec<_>>(),
        [b.as_str(), a.as_str()],
        "in agentID order"
    );
    for item in &list {
        let file = read_agent(&env, &item.agent_id).unwrap();
        let core = file.tools.iter().filter(|t| t.kind == "core").count();
        assert_eq!(
            (item.tools, item.external, item.core),
            (file.tools.len(), file.tools.len() - core, core)
        );
        assert_eq!(timestamp(&item.modified_at), timestamp(&file.modified_at));
    }
    assert!(
        list[1].core >= 1,
        "'what time is it' attaches the built-in now"
    );

    // show: the file's entries with a status, under any spelling of the ID.
    let file = read_agent(&env, &a).unwrap();
    for spelled in [a.clone(), bare(&a).to_uppercase()] {
        let doc = show(&env, &spelled);
        assert_eq!(doc.agent_id, a);
        assert_eq!(doc.created_at, file.created_at);
        assert_eq!(doc.modified_at, file.modified_at);
        let entries: Vec<AgentTool> = doc
            .tools
            .iter()
            .map(|t| {
                assert_eq!(t.status, "ok");
                AgentTool {
                    tool_id: t.tool_id.clone(),
                    reference: t.reference.clone(),
                    name: t.name.clone(),
                    kind: t.kind.clone(),
                    attached_at: t.attached_at.clone(),
                    match_score: t.match_score,
                }
            })
            .collect();
        assert_eq!(entries, file.tools);
    }

    // detach by each way of naming a tool; a tool named twice leaves once.
    let held = read_agent(&env, &b).unwrap();
    assert!(held.tools.len() >= 4, "{held:?}");
    let (t0, t1, t2) = (&held.tools[0], &held.tools[1], &held.tools[2]);
    let t0_bundle_slug = slug_key(&t0.reference).to_owned();
    let detach: DetachDoc = env
        .run(&[
            "--json",
            "agent",
            "detach",
            bare(&b),
            &t0_bundle_slug,
            &t0.tool_id,
            &t1.reference,
            &t2.name,
        ])
        .success()
        .parse();
    assert_eq!(detach.agent_id, b);
    assert_eq!(
        detach
            .detached
            .iter()
            .map(|d| (d.tool_id.as_str(), d.reference.as_str(), d.name.as_str()))
            .collect::<Vec<_>>(),
        [t0, t1, t2]
            .iter()
            .map(|t| (t.tool_id.as_str(), t.reference.as_str(), t.name.as_str()))
            .collect::<Vec<_>>()
    );
    let now = read_agent(&env, &b).unwrap();
    // The agent as it is now, as `agent show` prints it.
    let show: ShowDoc = env.run(&["--json", "agent", "show", &b]).success().parse();
    assert_eq!(
        (&detach.created_at, &detach.modified_at),
        (&show.created_at, &show.modified_at)
    );
    assert_eq!(detach.modified_at, now.modified_at);
    assert_eq!(
        detach
            .tools
            .iter()
            .map(|t| (t.reference.as_str(), t.status.as_str()))
            .collect::<Vec<_>>(),
        show.tools
            .iter()
            .map(|t| (t.reference.as_str(), t.status.as_str()))
            .collect::<Vec<_>>()
    );
    assert_eq!(detach.tools.len(), now.tools.len());
    assert_eq!(now.tools, held.tools[3..].to_vec());
    assert!(timestamp(&now.modified_at) > timestamp(&held.modified_at));

    // Errors: unknown agent, tool not attached, bad ID, nothing named.
    let unknown = agent(9);
    let err = env.json_error(&["agent", "show", &unknown], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    let err = env.json_error(&["agent", "detach", &unknown, "--all"], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    assert!(!agent_path(&env, &unknown).exists());
    let bytes = std::fs::read(agent_path(&env, &b)).unwrap();
    let err = env.json_error(&["agent", "detach", &b, &t0.tool_id], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    let err = env.json_error(&["agent", "detach", &b, "weather/no-such"], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    // One unknown among known tools: nothing is detached.
    let err = env.json_error(&["agent", "detach", &b, &now.tools[0].tool_id, "nope"], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    assert_eq!(std::fs::read(agent_path(&env, &b)).unwrap(), bytes);
    let err = env.json_error(&["agent", "show", "agent-123"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    let err = env.json_error(&["agent", "detach", "nope", "--all"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    env.run(&["--json", "agent", "detach", &b]).failure(2);
    env.run(&["--json", "agent", "detach", &b, "x", "--all"])
        .failure(2);
    env.run(&["--json", "agent", "show"]).failure(2);
    assert_eq!(std::fs::read(agent_path(&env, &b)).unwrap(), bytes);

    // --all empties the agent; once more there is nothing to detach and nothing is written.
    let detach: DetachDoc = env
        .run(&["--json", "agent", "detach", &b, "--all"])
        .success()
        .parse();
    assert_eq!(detach.detached.len(), now.tools.len());
    assert!(detach.tools.is_empty());
    assert!(read_agent(&env, &b).unwrap().tools.is_empty());
    let bytes = std::fs::read(agent_path(&env, &b)).unwrap();
    let detach: DetachDoc = env
        .run(&["--json", "agent", "detach", &b, "--all"])
        .success()
        .parse();
    assert!(detach.detached.is_empty());
    assert_eq!(std::fs::read(agent_path(&env, &b)).unwrap(), bytes);
    // The emptied agent is still listed.
    let list: Vec<ListItem> = env
        .run(&["--json", "agent", "list"])
        .success()
        .parse::<AgentList>()
        .items;
    assert_eq!(list.len(), 2);
    assert_no_temp_files(&env);
}

#[test]
fn a_protected_tool_can_be_detached_by_hand() {
    let o = Orchard::new();
    let env = &o.env;
    let a = o.agent(1);
    // cfg-protected (toolctl.json), env-protected (environment), readfile (core).
    let mut cmd = env.command(&[
        "--json",
        "agent",
        "detach",
        &a,
        "cfg-protected",
        "south/env-protected",
        "readfile",
    ]);
    cmd.env("NEVER_DETACH_TOOLS", "env-protected");
    let run = Run::of(cmd, None);
    run.success();
    let doc: DetachDoc = run.parse();
    assert_eq!(
        doc.detached
            .iter()
            .map(|d| d.reference.clone())
            .collect::<BTreeSet<_>>(),
        refs(&[&o.cfg, &o.envp, &o.readfile])
    );
    assert_eq!(
        refs_of(&read_agent(env, &a).unwrap()),
        refs(&[&o.keep_me, &o.old_a, &o.old_b, &o.old_c])
    );
}

#[test]
fn agent_list_reports_unreadable_files_and_skips_temporary_ones() {
    let env = TestEnv::fixture();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "weather forecast"], &[]);
    let dir = env.catalog().join("agents");
    std::fs::write(dir.join(format!("{}.json", agent(2))), "{ broken").unwrap();
    std::fs::write(dir.join("agent-nope.json"), "{}").unwrap();
    std::fs::write(dir.join(".toolctl-tmp-abc123.json"), "{}").unwrap();
    // A hidden file is no agent file (validate does not name it either).
    std::fs::write(dir.join(".hidden.json"), "{ broken").unwrap();
    std::fs::write(dir.join("README.md"), "notes").unwrap();
    let run = env.run(&["--json", "agent", "list"]);
    run.success();
    let doc = run.parse::<AgentList>();
    let list: Vec<ListItem> = doc.items;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].agent_id, a);
    let mut problems: Vec<(String, String)> = doc
        .problems
        .into_iter()
        .map(|p| (p.path, p.message))
        .collect();
    problems.sort();
    let path = |name: &str| dir.join(name).display().to_string();
    assert_eq!(
        problems,
        vec![
            (
                path(&format!("{}.json", agent(2))),
                "key must be a string at line 1 column 3".to_owned()
            ),
            (
                path("agent-nope.json"),
                "the file name is not an agent ID (agent-<uuid>.json)".to_owned()
            ),
        ],
        "{run}"
    );
    let run = env.run(&["agent", "list"]);
    run.success();
    assert!(run.stderr.contains(&agent(2)), "{run}");
    assert!(run.stderr.contains("agent-nope.json"), "{run}");
    assert!(!run.stderr.contains(".toolctl-tmp-"), "{run}");
    assert!(!run.stderr.contains(".hidden"), "{run}");
    let validated = env.run(&["validate"]);
    validated.failure(3);
    assert!(!validated.stdout.contains(".hidden"), "{validated}");
}

#[test]
fn tools_sharing_a_slug_are_told_apart_by_exported_name() {
    let env = TestEnv::new();
    env.bundle("one");
    env.bundle("two");
    let one = make(&env, "one", "dup", "walrus");
    let a = agent(1);
    let out = attach_ok(&env, &a, &["--query", "walrus"], &[]);
    assert_eq!(out.after.tools[0].name, "dup");
    // A second bundle with the slug renames the first tool's exported name: show says so and
    // the next attach records the new name.
    let two = make(&env, "two", "dup", "walrus");
    let status = &statuses(&env, &a)[&one.reference];
    assert!(
        status.starts_with("now named ") && status != "now named dup",
        "{status}"
    );
    let renamed = status.trim_start_matches("now named ").to_owned();
    let out = attach_ok(&env, &a, &[], &[]);
    assert_eq!(out.after.tools[0].name, renamed);
    assert_eq!(statuses(&env, &a)[&one.reference], "ok");
    let out = attach_ok(&env, &a, &["--query", "walrus"], &[]);
    let names: BTreeSet<String> = out.after.tools.iter().map(|t| t.name.clone()).collect();
    assert_eq!(names.len(), 2, "{}", out.run);
    assert!(
        names.iter().all(|n| n != "dup"),
        "bundle-prefixed names: {names:?}"
    );
    let one_name = out
        .after
        .tools
        .iter()
        .find(|t| t.tool_id == one.tool_id)
        .unwrap()
        .name
        .clone();

    // A protected exported name protects that tool only (the query matches another tool: a
    // query that matches nothing prunes nothing).
    let other = make(&env, "one", "other", "something else entirely");
    let out = attach_ok(
        &env,
        &a,
        &["--query", "something else entirely"],
        &[("MIN_MCP_TOOLS", "0"), ("NEVER_DETACH_TOOLS", &one_name)],
    );
    assert_eq!(
        ids(&out.after),
        BTreeSet::from([one.tool_id.clone(), other.tool_id.clone()]),
        "{}",
        out.run
    );
    assert_eq!(
        out.resp.details.detached_tools,
        std::slice::from_ref(&two.tool_id)
    );

    // `agent detach dup` is ambiguous once both are attached; bundle/slug is not.
    attach_ok(&env, &a, &["--query", "walrus"], &[]);
    let bytes = std::fs::read(agent_path(&env, &a)).unwrap();
    let err = env.json_error(&["agent", "detach", &a, "dup"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(std::fs::read(agent_path(&env, &a)).unwrap(), bytes);
    let doc: DetachDoc = env
        .run(&["--json", "agent", "detach", &a, "two/dup"])
        .success()
        .parse();
    assert_eq!(doc.detached.len(), 1);
    assert_eq!(doc.detached[0].tool_id, two.tool_id);
    let doc: DetachDoc = env
        .run(&["--json", "agent", "detach", &a, &one_name])
        .success()
        .parse();
    assert_eq!(doc.detached[0].tool_id, one.tool_id);
    assert_eq!(doc.tools.len(), 1, "other is left");
}

#[test]
fn a_blank_query_searches_nothing_and_a_missing_endpoint_fails_in_the_contract_shape() {
    let env = TestEnv::fixture();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "weather forecast"], &[]);
    let out = attach_ok(&env, &a, &["--query", "   "], &[("MIN_MCP_TOOLS", "0")]);
    assert_eq!(out.resp.details.scorer, None);
    assert!(
        out.resp.details.detached_tools.is_empty(),
        "a blank query detaches nothing"
    );
    let bytes = std::fs::read(agent_path(&env, &a)).unwrap();
    for scorer in ["embed", "hybrid"] {
        let run = attach_run(&env, &a, &["--query", "github", "--scorer", scorer], &[]);
        assert_ne!(run.status, Some(0), "{run}");
        assert_eq!(keys(&run.json()), ["success", "error", "code"], "{run}");
        let doc: AttachError = run.parse();
        assert!(!doc.success);
        assert!(doc.error.contains("endpoint"), "{doc:?}");
        assert_eq!(std::fs::read(agent_path(&env, &a)).unwrap(), bytes);
    }
}

/// Regression: the summary said "1 candidates".
#[test]
fn the_human_summary_counts_candidates_in_the_singular_and_the_plural() {
    let env = TestEnv::fixture();
    for (n, limit, counted) in [(1, "1", "1 candidate,"), (2, "2", "2 candidates,")] {
        let a = agent(n);
        let run = env.run(&[
            "attach",
            &a,
            "--query",
            "weather forecast",
            "--limit",
            limit,
        ]);
        run.success();
        assert!(
            run.stdout.contains(&format!(
                "(fused scores; {counted} 1 passed --min-score 35)\n"
            )),
            "{run}"
        );
    }
}

#[test]
fn the_human_summary_says_what_arrived_and_what_left() {
    let (env, t, now) = limits_world();
    let a = agent(1);
    hold_all(&env, &a, &t, &now);
    let mut cmd = env.command(&["attach", &a, "--query", "alpha", "--no-auto-prune"]);
    cmd.env("MIN_MCP_TOOLS", "4");
    let run = Run::of(cmd, None);
    run.success();
    let text = &run.stdout;
    assert!(
        text.contains(&format!(
            "{a}: attached 0, 1 already attached, detached 2 (fused scores"
        )),
        "{run}"
    );
    assert!(text.contains("already attached"), "{run}");
    assert!(
        text.contains("detachment: not matched by the query"),
        "{run}"
    );
    assert!(
        text.contains(&format!(
            "{a} holds 5 tools (4 external, 1 built-in); limits: 30 in all, 20 external, at least 4 external"
        )),
        "{run}"
    );
    let run = env.run(&["attach", &a]);
    run.success();
    assert!(
        run.stdout.contains(&format!(
            "{a}: no --query, nothing searched or attached; detached 0"
        )),
        "{run}"
    );
}

#[test]
fn racing_attaches_on_one_agent_all_land() {
    let (env, tools) = zoo();
    // The index is built once before the race (see the cold-index test below).
    env.run(&["tool", "list"]).success();
    let a = agent(1);
    // MIN_MCP_TOOLS = MAX_MCP_TOOLS: no run may detach another's tools.
    let vars = [
        ("MIN_MCP_TOOLS", "50"),
        ("MAX_MCP_TOOLS", "50"),
        ("MAX_TOTAL_TOOLS", "60"),
    ];
    for round in 0..3 {
        if round > 0 {
            // Again on an existing agent.
            env.run(&["agent", "detach", &a, "--all"]).success();
        }
        let runs: Vec<(String, String)> =
            WORDS.iter().map(|w| (a.clone(), (*w).to_owned())).collect();
        for run in race(&env, &runs, &vars) {
            run.success();
            let resp: AttachResponse = run.parse();
            assert_eq!(resp.details.success_count, 1, "{run}");
            assert!(resp.details.detached_tools.is_empty(), "{run}");
        }
        let file = read_agent(&env, &a).unwrap();
        assert_eq!(
            ids(&file),
            tools
                .iter()
                .map(|t| t.tool_id.clone())
                .collect::<BTreeSet<_>>(),
            "round {round}: every racing run's tool is on the agent"
        );
        assert_no_temp_files(&env);
    }
}

#[test]
fn racing_attaches_on_a_fresh_catalog_all_succeed() {
    // No command has read the catalog since its tools were put, so the search index does not
    // exist yet: the racing attaches all build it at once. Three fresh catalogs, sixteen
    // processes each (two per word), make the race on the index's creation near certain.
    let vars = [
        ("MIN_MCP_TOOLS", "50"),
        ("MAX_MCP_TOOLS", "50"),
        ("MAX_TOTAL_TOOLS", "60"),
    ];
    let a = agent(1);
    let mut failed = Vec::new();
    for attempt in 0..3 {
        let (env, tools) = zoo();
        assert!(!env.catalog().join(".toolctl/index.sqlite").exists());
        let runs: Vec<(String, String)> = WORDS
            .iter()
            .chain(WORDS.iter())
            .map(|w| (a.clone(), (*w).to_owned()))
            .collect();
        let before = failed.len();
        failed.extend(
            race(&env, &runs, &vars)
                .into_iter()
                .filter(|r| r.status != Some(0))
                .map(|r| format!("catalog {attempt}: {}", r.stdout.replace('\n', " "))),
        );
        if failed.len() == before {
            assert_eq!(
                ids(&read_agent(&env, &a).unwrap()),
                tools
                    .iter()
                    .map(|t| t.tool_id.clone())
                    .collect::<BTreeSet<_>>()
            );
        }
    }
    assert!(
        failed.is_empty(),
        "{} of 48 racing attaches failed on fresh catalogs:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn racing_attaches_on_many_agents_each_land() {
    let (env, tools) = zoo();
    env.run(&["tool", "list"]).success();
    let runs: Vec<(String, String)> = WORDS
        .iter()
        .enumerate()
        .flat_map(|(i, w)| {
            [
                (agent(i as u32), (*w).to_owned()),
                (agent(100 + (i as u32 % 2)), (*w).to_owned()),
            ]
        })
        .collect();
    let vars = [("MIN_MCP_TOOLS", "20"), ("MAX_MCP_TOOLS", "20")];
    for run in race(&env, &runs, &vars) {
        run.success();
    }
    for (i, t) in tools.iter().enumerate() {
        assert_eq!(
            ids(&read_agent(&env, &agent(i as u32)).unwrap()),
            BTreeSet::from([t.tool_id.clone()])
        );
    }
    for parity in 0..2 {
        let want: BTreeSet<String> = tools
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == parity)
            .map(|(_, t)| t.tool_id.clone())
            .collect();
        assert_eq!(
            ids(&read_agent(&env, &agent(100 + parity as u32)).unwrap()),
            want
        );
    }
    let list: Vec<ListItem> = env
        .run(&["--json", "agent", "list"])
        .success()
        .parse::<AgentList>()
        .items;
    assert_eq!(list.len(), 10);
    assert_no_temp_files(&env);
}

#[test]
fn a_held_agent_lock_times_out_while_other_agents_go_on() {
    let (env, _) = zoo();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "aardvark"], &[]);
    let bytes = std::fs::read(agent_path(&env, &a)).unwrap();
    let lock_path = env
        .catalog()
        .join(".toolctl/locks")
        .join(format!("{a}.lock"));
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&lock_path)
        .unwrap();
    lock.lock().unwrap();
    let started = std::time::Instant::now();
    let doc = attach_fails(
        &env,
        &a,
        &["--query", "bobcat", "--lock-timeout", "300ms"],
        &[],
        8,
    );
    assert_eq!(doc.code, "LOCK_TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(20));
    let err = env.json_error(
        &["agent", "detach", &a, "--all", "--lock-timeout", "200ms"],
        8,
    );
    assert_eq!(err.error.code, "LOCK_TIMEOUT");
    assert_eq!(std::fs::read(agent_path(&env, &a)).unwrap(), bytes);
    // Another agent does not wait; nor does reading this one.
    attach_ok(
        &env,
        &agent(2),
        &["--query", "bobcat", "--lock-timeout", "300ms"],
        &[],
    );
    assert_eq!(show(&env, &a).tools.len(), 1);
    drop(lock);
    attach_ok(&env, &a, &["--query", "bobcat"], &[("MIN_MCP_TOOLS", "5")]);
    assert_eq!(read_agent(&env, &a).unwrap().tools.len(), 2);
}
