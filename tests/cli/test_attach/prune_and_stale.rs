//! 6. Post-attach pruning; 7. stale tools.

use super::*;

#[test]
fn post_attach_pruning_removes_what_no_auto_prune_keeps() {
    let env = TestEnv::new();
    env.bundle("p");
    let held: Vec<Made> = ["umber", "violet", "walnut", "xanadu", "yellow"]
        .iter()
        .enumerate()
        .map(|(i, w)| make(&env, "p", &format!("u{}", i + 1), w))
        .collect();
    let x = make(&env, "p", "x", "kiwi");
    let y = make(&env, "p", "y", "mango");
    let hold = |a: &str| {
        let entries: Vec<Value> = held
            .iter()
            .enumerate()
            .map(|(i, t)| entry(t, &at(i as u32 + 1)))
            .collect();
        write_agent(&env, a, &entries);
    };
    let query = ["--query", "kiwi mango", "--min-score", "0"];
    let min = [("MIN_MCP_TOOLS", "3")];

    // Default: detachment takes u1, u2 (down to 3), x and y arrive, and post-attach pruning
    // keeps max(⌊5 × 0.4⌋, 3) = 3 external tools: u3 and u4 leave.
    let a = agent(1);
    hold(&a);
    let out = attach_ok(&env, &a, &query, &min);
    assert_eq!(
        out.attached(),
        BTreeSet::from([x.tool_id.clone(), y.tool_id.clone()])
    );
    let phases: Vec<(String, String)> = out
        .resp
        .details
        .detachments
        .iter()
        .map(|d| (d.reference.clone(), d.phase.clone()))
        .collect();
    assert_eq!(
        phases,
        [
            (held[0].reference.clone(), "detachment".to_owned()),
            (held[1].reference.clone(), "detachment".to_owned()),
            (held[2].reference.clone(), "post-attach".to_owned()),
            (held[3].reference.clone(), "post-attach".to_owned()),
        ],
        "{}",
        out.run
    );
    assert_eq!(refs_of(&out.after), refs(&[&held[4], &x, &y]));

    // --no-auto-prune: the post-attach pruning is skipped.
    let b = agent(2);
    hold(&b);
    let mut args = query.to_vec();
    args.push("--no-auto-prune");
    let out = attach_ok(&env, &b, &args, &min);
    assert_eq!(
        refs_of(&out.after),
        refs(&[&held[2], &held[3], &held[4], &x, &y]),
        "{}",
        out.run
    );

    // DEFAULT_DROP_RATE=0 drops nothing either.
    let c = agent(3);
    hold(&c);
    let out = attach_ok(
        &env,
        &c,
        &query,
        &[("MIN_MCP_TOOLS", "3"), ("DEFAULT_DROP_RATE", "0")],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&held[2], &held[3], &held[4], &x, &y])
    );

    // --no-auto-prune still obeys the limits: MAX_MCP_TOOLS=4 takes u3.
    let d = agent(4);
    hold(&d);
    let out = attach_ok(
        &env,
        &d,
        &args,
        &[("MIN_MCP_TOOLS", "3"), ("MAX_MCP_TOOLS", "4")],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&held[3], &held[4], &x, &y]),
        "{}",
        out.run
    );
    // (pre-attach pruning made the room before the arrivals)
    assert!(
        out.resp
            .details
            .detachments
            .iter()
            .any(|d| d.phase == "pre-attach"),
        "{}",
        out.run
    );
}

#[test]
fn tools_disabled_or_deleted_since_attaching_leave_in_processing() {
    let env = TestEnv::new();
    env.bundle("b");
    env.bundle("c");
    env.bundle("d");
    let alpha = make(&env, "b", "alpha", "aurora");
    let beta = make(&env, "b", "beta", "borealis");
    let gamma = make(&env, "c", "gamma", "galaxy");
    let eps = make(&env, "d", "epsilon", "eclipse");
    let keep = make(&env, "b", "steady", "solstice");
    let a = agent(1);
    let vars = [("MIN_MCP_TOOLS", "0")];
    let out = attach_ok(
        &env,
        &a,
        &[
            "--query",
            "aurora borealis galaxy eclipse solstice",
            "--min-score",
            "0",
        ],
        &vars,
    );
    assert_eq!(out.after.tools.len(), 5, "{}", out.run);
    let statuses0 = statuses(&env, &a);
    assert!(statuses0.values().all(|s| s == "ok"), "{statuses0:?}");

    env.run(&["tool", "disable", "b/alpha"]).success();
    env.run(&["bundle", "delete", "c"]).success();
    env.run(&["bundle", "disable", "d"]).success();
    let s = statuses(&env, &a);
    assert_eq!(s[&alpha.reference], "gone: disabled");
    assert_eq!(s[&gamma.reference], "gone: its bundle c is deleted");
    assert_eq!(s[&eps.reference], "gone: its bundle is disabled");
    assert_eq!(s[&beta.reference], "ok");
    assert_eq!(s[&keep.reference], "ok");
    let human = env.run(&["agent", "show", &a]);
    human.success();
    assert!(human.stdout.contains("gone: disabled"), "{human}");

    // Protection does not keep what cannot be called; the next attach (any) removes them.
    let out = attach_ok(
        &env,
        &a,
        &["--keep", "b/alpha"],
        &[("MIN_MCP_TOOLS", "5"), ("NEVER_DETACH_TOOLS", "epsilon")],
    );
    assert_eq!(
        out.phases(),
        [&alpha, &gamma, &eps]
            .iter()
            .map(|t| (t.reference.clone(), "processing".to_owned()))
            .collect::<BTreeMap<_, _>>(),
        "{}",
        out.run
    );
    let w = &out.resp.details.warnings;
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w.contains(&format!("{} left the agent: disabled", alpha.reference)),
        "{w:?}"
    );
    assert!(
        w.contains(&format!(
            "{} left the agent: its bundle c is deleted",
            gamma.reference
        )),
        "{w:?}"
    );
    assert!(
        w.contains(&format!(
            "{} left the agent: its bundle is disabled",
            eps.reference
        )),
        "{w:?}"
    );
    assert_eq!(refs_of(&out.after), refs(&[&beta, &keep]));
    assert!(statuses(&env, &a).values().all(|s| s == "ok"));
    // Enabled again, a tool does not come back by itself.
    env.run(&["tool", "enable", "b/alpha"]).success();
    let out = attach_ok(&env, &a, &[], &vars);
    assert_eq!(refs_of(&out.after), refs(&[&beta, &keep]));
}

#[test]
fn an_attached_tool_follows_its_slug_to_the_version_that_stands_for_it() {
    let env = TestEnv::new();
    env.bundle("b");
    let v1 = make_version(&env, "b", "delta", "v1", "dolphin");
    let beta1 = make_version(&env, "b", "beta", "v1", "bison");
    let a = agent(1);
    let vars = [("MIN_MCP_TOOLS", "0")];
    let out = attach_ok(
        &env,
        &a,
        &["--query", "dolphin bison", "--min-score", "0"],
        &vars,
    );
    assert_eq!(
        ids(&out.after),
        BTreeSet::from([v1.tool_id.clone(), beta1.tool_id.clone()])
    );
    let attached_at = out.after.tools[0].attached_at.clone();

    // A new version: show says where it went; the next attach follows it.
    let v2 = make_version(&env, "b", "delta", "v2", "dolphin");
    assert_eq!(
        statuses(&env, &a)[&v1.reference],
        format!("now {}", v2.reference)
    );
    let out = attach_ok(&env, &a, &[], &vars);
    assert!(out.resp.details.detached_tools.is_empty(), "{}", out.run);
    let t = out
        .after
        .tools
        .iter()
        .find(|t| t.reference.starts_with("b/delta@"))
        .unwrap();
    assert_eq!(
        (t.tool_id.as_str(), t.reference.as_str()),
        (v2.tool_id.as_str(), v2.reference.as_str())
    );
    assert_eq!(t.attached_at, attached_at, "attachedAt stays");
    assert_eq!(statuses(&env, &a)[&v2.reference], "ok");

    // The new version disabled: back to the one that stands for the slug now, v1.
    env.run(&["tool", "disable", &v2.reference]).success();
    assert_eq!(
        statuses(&env, &a)[&v2.reference],
        format!("now {}", v1.reference)
    );
    let out = attach_ok(&env, &a, &[], &vars);
    assert!(out.resp.details.detached_tools.is_empty(), "{}", out.run);
    assert!(ids(&out.after).contains(&v1.tool_id));

    // The attached version deleted for good, a newer one there: followed by its ref.
    let beta2 = make_version(&env, "b", "beta", "v2", "bison");
    env.run(&["tool", "delete", &beta1.reference]).success();
    assert_eq!(
        statuses(&env, &a)[&beta1.reference],
        format!("now {}", beta2.reference)
    );
    let out = attach_ok(&env, &a, &[], &vars);
    assert!(out.resp.details.detached_tools.is_empty(), "{}", out.run);
    assert!(ids(&out.after).contains(&beta2.tool_id));
    assert!(!ids(&out.after).contains(&beta1.tool_id));

    // A query matching the slug again keeps one entry, at the followed version.
    let out = attach_ok(&env, &a, &["--query", "dolphin"], &vars);
    assert_eq!(
        out.after
            .tools
            .iter()
            .filter(|t| t.reference.starts_with("b/delta@"))
            .count(),
        1
    );
}

/// An agent file holding v1 and v2 of one slug (a hand edit, or a merge): processing keeps one
/// entry, at the version that stands for the slug, and reports the other as detached. The
/// response must name the entry that left (v1), not the tool the agent still holds (v2).
#[test]
fn two_versions_of_one_slug_in_a_hand_edited_file_keep_one() {
    let env = TestEnv::new();
    env.bundle("b");
    let v1 = make_version(&env, "b", "delta", "v1", "dolphin");
    let v2 = make_version(&env, "b", "delta", "v2", "dolphin");
    let a = agent(1);
    write_agent(&env, &a, &[entry(&v1, &at(1)), entry(&v2, &at(2))]);
    let out = attach_ok(&env, &a, &[], &[("MIN_MCP_TOOLS", "0")]);
    assert_eq!(out.resp.details.detachments.len(), 1, "{}", out.run);
    let d = &out.resp.details.detachments[0];
    assert_eq!(d.phase, "processing");
    assert!(d.reason.contains("another version"), "{d:?}");
    assert_eq!(out.after.tools.len(), 1);
    assert_eq!(
        out.after.tools[0].tool_id, v2.tool_id,
        "the slug stands at v2"
    );
    // The entry that left is the superseded one: the response must not report as detached
    // the tool the agent still holds.
    assert_eq!(d.tool_id, v1.tool_id, "{}", out.run);
}
