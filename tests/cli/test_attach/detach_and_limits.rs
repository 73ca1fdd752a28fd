//! 4. The detachment phase and protection; 5. limits.

use super::*;

#[test]
fn the_detachment_phase_detaches_unmatched_unprotected_external_tools() {
    let o = Orchard::new();
    let env = &o.env;
    let query = ["--query", "kiwi mango smoothie"];

    // --keep and protectedTools (toolctl.json) protect; core tools stay; MIN_MCP_TOOLS=0.
    let a = o.agent(1);
    let out = attach_ok(
        env,
        &a,
        &[query[0], query[1], "--keep", "north/keep-me"],
        &[("MIN_MCP_TOOLS", "0")],
    );
    assert_eq!(out.attached(), BTreeSet::from([o.new_x.tool_id.clone()]));
    assert_eq!(
        out.phases(),
        [&o.envp, &o.old_a, &o.old_b, &o.old_c]
            .iter()
            .map(|t| (t.reference.clone(), "detachment".to_owned()))
            .collect::<BTreeMap<_, _>>(),
        "{}",
        out.run
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.keep_me, &o.cfg, &o.readfile, &o.new_x])
    );
    assert_eq!(
        out.resp
            .details
            .preserved_tools
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([o.keep_me.tool_id.clone(), o.cfg.tool_id.clone()]),
        "preserved: the held tools protected by --keep or by name"
    );

    // NEVER_DETACH_TOOLS (any case, bundle/slug) replaces protectedTools: cfg-protected leaves.
    let a = o.agent(2);
    let out = attach_ok(
        env,
        &a,
        &query,
        &[
            ("MIN_MCP_TOOLS", "0"),
            ("NEVER_DETACH_TOOLS", " South/ENV-Protected , nothing-here"),
        ],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.envp, &o.readfile, &o.new_x]),
        "{}",
        out.run
    );
    assert!(out.phases().contains_key(&o.cfg.reference));

    // PROTECTED_TOOLS and NEVER_DETACH_TOOLS add up; a name is the exported name or slug.
    let a = o.agent(3);
    let out = attach_ok(
        env,
        &a,
        &query,
        &[
            ("MIN_MCP_TOOLS", "0"),
            ("NEVER_DETACH_TOOLS", "OLD-A"),
            ("PROTECTED_TOOLS", "old-c,cfg-protected"),
        ],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.old_a, &o.old_c, &o.cfg, &o.readfile, &o.new_x]),
        "{}",
        out.run
    );

    // Set but empty, the variables protect nothing: not even protectedTools.
    let a = o.agent(4);
    let out = attach_ok(
        env,
        &a,
        &query,
        &[("MIN_MCP_TOOLS", "0"), ("NEVER_DETACH_TOOLS", "")],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.readfile, &o.new_x]),
        "{}",
        out.run
    );

    // A name must match whole: a prefix protects nothing.
    let a = o.agent(5);
    let out = attach_ok(
        env,
        &a,
        &query,
        &[("MIN_MCP_TOOLS", "0"), ("NEVER_DETACH_TOOLS", "old,keep")],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.readfile, &o.new_x]),
        "{}",
        out.run
    );

    // Without a query nothing is detached (all under the limits).
    let a = o.agent(6);
    let out = attach_ok(env, &a, &[], &[("MIN_MCP_TOOLS", "0")]);
    assert!(out.resp.details.detached_tools.is_empty());
    assert_eq!(out.after.tools, out.before.unwrap().tools);
}

#[test]
fn the_detachment_phase_stops_at_min_mcp_tools_oldest_first() {
    let o = Orchard::new();
    let env = &o.env;
    // Six external tools, MIN_MCP_TOOLS=5: one may leave — the oldest unprotected (old-b).
    let a = o.agent(1);
    let out = attach_ok(
        env,
        &a,
        &["--query", "kiwi mango smoothie", "--no-auto-prune"],
        &[("MIN_MCP_TOOLS", "5")],
    );
    assert_eq!(
        out.phases(),
        BTreeMap::from([(o.old_b.reference.clone(), "detachment".to_owned())]),
        "{}",
        out.run
    );
    assert_eq!(out.after.tools.len(), 7);

    // MIN_MCP_TOOLS from toolctl.json, the same way.
    env.edit_config(|c| c["attach"]["minMcpTools"] = json!(4));
    let a = o.agent(2);
    let out = attach_ok(
        env,
        &a,
        &[
            "--query",
            "kiwi mango smoothie",
            "--no-auto-prune",
            "--keep",
            "north/keep-me",
        ],
        &[],
    );
    assert_eq!(
        out.phases(),
        BTreeMap::from([
            (o.old_b.reference.clone(), "detachment".to_owned()),
            (o.envp.reference.clone(), "detachment".to_owned()),
        ]),
        "the two oldest unprotected leave\n{}",
        out.run
    );
    // A query matching a held tool protects it: old-a stays although unprotected by name.
    let a = o.agent(3);
    let out = attach_ok(
        env,
        &a,
        &["--query", "damson plum jam kiwi mango", "--min-score", "0"],
        &[("MIN_MCP_TOOLS", "0")],
    );
    assert!(ids(&out.after).contains(&o.old_a.tool_id), "{}", out.run);
    assert!(ids(&out.after).contains(&o.new_x.tool_id), "{}", out.run);
    let attached = out
        .resp
        .details
        .successful_attachments
        .iter()
        .find(|x| x.tool_id == o.old_a.tool_id)
        .unwrap()
        .clone();
    // Already attached: the entry keeps its attach time, with the new score.
    let t = out
        .after
        .tools
        .iter()
        .find(|t| t.tool_id == o.old_a.tool_id)
        .unwrap();
    assert_eq!(timestamp(&t.attached_at), timestamp(&at(5)));
    assert_eq!(t.match_score, Some(attached.match_score));

    // Least relevant first, age only among equals: old-a shares a word with the query (though
    // below --min-score, so not matched: a quarter of the query, against new-x's three) and
    // outlasts the younger old-c, which shares none.
    let a = o.agent(4);
    let out = attach_ok(
        env,
        &a,
        &[
            "--query",
            "kiwi mango smoothie damson",
            "--min-score",
            "60",
            "--no-auto-prune",
            "--keep",
            "north/keep-me",
        ],
        &[("MIN_MCP_TOOLS", "3")],
    );
    assert_eq!(
        out.attached(),
        BTreeSet::from([o.new_x.tool_id.clone()]),
        "{}",
        out.run
    );
    assert_eq!(
        out.phases(),
        [&o.old_b, &o.envp, &o.old_c]
            .iter()
            .map(|t| (t.reference.clone(), "detachment".to_owned()))
            .collect::<BTreeMap<_, _>>(),
        "{}",
        out.run
    );
    assert!(ids(&out.after).contains(&o.old_a.tool_id));
}

#[test]
fn limits_trim_the_oldest_tools_without_a_query() {
    let (env, t, now) = limits_world();
    let a = agent(1);
    hold_all(&env, &a, &t, &now);

    // MAX_MCP_TOOLS=4: t1 and t2 (the oldest) leave; the core tool does not count.
    let out = attach_ok(
        &env,
        &a,
        &[],
        &[("MAX_MCP_TOOLS", "4"), ("MIN_MCP_TOOLS", "0")],
    );
    assert_eq!(
        out.phases(),
        BTreeMap::from([
            (t[0].reference.clone(), "limits".to_owned()),
            (t[1].reference.clone(), "limits".to_owned()),
        ]),
        "{}",
        out.run
    );
    assert_eq!(
        out.resp.details.detached_tools,
        [t[0].tool_id.clone(), t[1].tool_id.clone()],
        "oldest first"
    );
    assert!(out.resp.details.warnings.is_empty());

    // MAX_TOTAL_TOOLS=3 counts the core tool too: two more externals leave (t3, t4).
    let out = attach_ok(
        &env,
        &a,
        &[],
        &[("MAX_TOTAL_TOOLS", "3"), ("MIN_MCP_TOOLS", "0")],
    );
    assert_eq!(
        out.resp.details.detached_tools,
        [t[2].tool_id.clone(), t[3].tool_id.clone()]
    );
    assert_eq!(refs_of(&out.after), refs(&[&t[4], &t[5], &now]));

    // MAX_TOTAL_TOOLS=2 with MIN_MCP_TOOLS=2: the floor and the core tool hold; a warning.
    let out = attach_ok(
        &env,
        &a,
        &[],
        &[("MAX_TOTAL_TOOLS", "2"), ("MIN_MCP_TOOLS", "2")],
    );
    assert!(out.resp.details.detached_tools.is_empty());
    assert_eq!(out.resp.details.warnings.len(), 1, "{}", out.run);
    let w = &out.resp.details.warnings[0];
    assert!(
        w.contains("MAX_TOTAL_TOOLS=2") && w.contains("MIN_MCP_TOOLS=2 keeps 2 more"),
        "{w}"
    );
    out.run.stderr_has(&format!("warning: {w}"));

    // With EXCLUDE_LETTA_CORE_TOOLS=false the core tool may go for MAX_TOTAL_TOOLS.
    let out = attach_ok(
        &env,
        &a,
        &[],
        &[
            ("MAX_TOTAL_TOOLS", "2"),
            ("MIN_MCP_TOOLS", "2"),
            ("EXCLUDE_LETTA_CORE_TOOLS", "false"),
        ],
    );
    assert_eq!(
        out.phases(),
        BTreeMap::from([(now.reference.clone(), "limits".to_owned())]),
        "{}",
        out.run
    );
    assert!(out.resp.details.warnings.is_empty());
    assert_eq!(refs_of(&out.after), refs(&[&t[4], &t[5]]));
}

#[test]
fn limits_come_from_toolctl_json_and_the_environment_wins() {
    let (env, t, now) = limits_world();
    env.edit_config(|c| c["attach"] = json!({ "maxMcpTools": 3, "minMcpTools": 1 }));
    let a = agent(1);
    hold_all(&env, &a, &t, &now);
    let out = attach_ok(&env, &a, &["-q"], &[("MAX_MCP_TOOLS", "5")]);
    assert_eq!(out.resp.details.detached_tools, [t[0].tool_id.clone()]);
    let out = attach_ok(&env, &a, &[], &[]);
    assert_eq!(
        out.resp.details.detached_tools,
        [t[1].tool_id.clone(), t[2].tool_id.clone()]
    );
    assert_eq!(refs_of(&out.after), refs(&[&t[3], &t[4], &t[5], &now]));
}

#[test]
fn protected_tools_over_a_limit_stay_with_a_warning() {
    let (env, t, now) = limits_world();
    let a = agent(1);
    hold_all(&env, &a, &t, &now);
    // t1 and t2 protected by name, t3 by --keep; MAX_MCP_TOOLS=2: the three stay, the others go.
    let out = attach_ok(
        &env,
        &a,
        &["--keep", &t[2].tool_id],
        &[
            ("MAX_MCP_TOOLS", "2"),
            ("MIN_MCP_TOOLS", "0"),
            ("NEVER_DETACH_TOOLS", "t1,lim/T2"),
        ],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&t[0], &t[1], &t[2], &now]),
        "{}",
        out.run
    );
    assert_eq!(
        out.resp.details.detached_tools,
        [
            t[3].tool_id.clone(),
            t[4].tool_id.clone(),
            t[5].tool_id.clone()
        ]
    );
    assert_eq!(
        out.resp
            .details
            .preserved_tools
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([
            t[0].tool_id.clone(),
            t[1].tool_id.clone(),
            t[2].tool_id.clone()
        ])
    );
    assert_eq!(out.resp.details.warnings.len(), 1, "{}", out.run);
    let w = &out.resp.details.warnings[0];
    assert!(
        w.contains("3 external tools, more than MAX_MCP_TOOLS=2")
            && w.contains("3 of them are protected (--keep, protected names, matched now"),
        "{w}"
    );
    out.run.stderr_has(&format!("warning: {w}"));

    // Tools attached in the request count toward the limits: a query matching five tools
    // with MAX_MCP_TOOLS=2 attaches the best two and reports the other three.
    let b = agent(2);
    let out = attach_ok(
        &env,
        &b,
        &[
            "--query",
            "alpha bravo charlie delta echo",
            "--min-score",
            "0",
        ],
        &[("MAX_MCP_TOOLS", "2"), ("MIN_MCP_TOOLS", "0")],
    );
    assert_eq!(out.resp.details.success_count, 2, "{}", out.run);
    assert_eq!(out.resp.details.failure_count, 3, "{}", out.run);
    assert_eq!(out.after.tools.len(), 2);
    let best: Vec<f64> = out
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| a.match_score)
        .collect();
    for f in &out.resp.details.failed_attachments {
        assert_eq!(
            f["error"],
            "over MAX_MCP_TOOLS=2: the tools the agent keeps and better matches fill it",
            "{}",
            out.run
        );
    }
    assert!(best.iter().all(|s| *s >= 0.0));
    assert!(out.resp.details.warnings.is_empty(), "{}", out.run);

    // With -q the warning stays in the document but not on stderr.
    let run = attach_run(
        &env,
        &a,
        &["-q"],
        &[
            ("MAX_MCP_TOOLS", "2"),
            ("MIN_MCP_TOOLS", "0"),
            ("NEVER_DETACH_TOOLS", "t1,t2,t3"),
        ],
    );
    run.success();
    let resp: AttachResponse = run.parse();
    assert_eq!(resp.details.warnings.len(), 1);
    assert_eq!(run.stderr, "");
}
