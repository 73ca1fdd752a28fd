//! `bundle reap` for cron: removes bundles soft-deleted longer ago than the grace period whose
//! folders hold no tools, reports (keeps) the others, says nothing when there is nothing to
//! do, and is safe to run twice at once.

use crate::common::{ReapReport, Run, TestEnv, tool_doc};
use std::process::Stdio;

/// A catalog with a soft-deleted empty bundle, a soft-deleted bundle holding a tool and a
/// live bundle. Returns (env, empty ID, full ID, live ID).
fn setup() -> (TestEnv, String, String, String) {
    let env = TestEnv::new();
    let empty = env.bundle("empty");
    let full = env.bundle("full");
    let live = env.bundle("live");
    env.put_tool("full", &tool_doc("t", "v1"));
    env.run(&["bundle", "delete", "empty"]).success();
    env.run(&["bundle", "delete", "full"]).success();
    (env, empty, full, live)
}

#[test]
fn reap_removes_only_empty_deleted_bundles() {
    let (env, empty, full, live) = setup();
    let run = env.run(&["bundle", "reap", "--older-than", "0s"]);
    run.success();
    // stdout says what was removed; what was kept is on stderr, so cron mails only for removals.
    let lines: Vec<_> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{run}");
    assert!(
        lines[0].starts_with(&format!("reaped bundle empty ({empty}), deleted at ")),
        "{run}"
    );
    let kept: Vec<_> = run.stderr.lines().collect();
    assert_eq!(kept.len(), 1, "{run}");
    assert!(
        kept[0].starts_with(&format!("kept bundle full ({full}), deleted at ")),
        "{run}"
    );
    assert!(kept[0].ends_with("it still holds 1 tool"), "{run}");

    // Only kept bundles: nothing on stdout, and -q mutes stderr too.
    let run = env.run(&["bundle", "reap", "--older-than", "0s"]);
    assert_eq!(run.success().stdout, "", "{run}");
    assert!(run.stderr.starts_with("kept bundle full"), "{run}");
    let quiet = env.run(&["-q", "bundle", "reap", "--older-than", "0s"]);
    assert_eq!(
        (quiet.success().stdout.as_str(), quiet.stderr.as_str()),
        ("", "")
    );

    assert!(
        !env.bundle_dir(&empty).exists(),
        "the empty bundle's folder is gone"
    );
    assert!(env.bundle_dir(&full).join("bundle.json").is_file());
    assert!(env.bundle_dir(&live).join("bundle.json").is_file());
    let slugs: Vec<_> = env
        .bundle_list(&["--include-deleted"])
        .items
        .into_iter()
        .map(|b| b.slug)
        .collect();
    assert_eq!(slugs, ["builtin", "full", "live"]);
    // The reaped bundle's slug is free again.
    env.run(&["bundle", "put", "--slug", "empty"]).success();

    // Once emptied (deleting tools of a deleted bundle is allowed), it goes too.
    env.run(&["tool", "delete", "full/t@v1"]).success();
    let report: ReapReport = env
        .run(&["--json", "bundle", "reap", "--older-than", "0s"])
        .success()
        .parse();
    assert_eq!(report.reaped.len(), 1);
    assert_eq!(report.reaped[0].bundle_id, full);
    assert!(report.kept.is_empty());
    assert!(!env.bundle_dir(&full).exists());
}

#[test]
fn dry_run_removes_nothing() {
    let (env, empty, full, _) = setup();
    let run = env.run(&["bundle", "reap", "--older-than", "0s", "--dry-run"]);
    run.success();
    assert!(
        run.stdout
            .starts_with(&format!("would reap bundle empty ({empty})")),
        "{run}"
    );
    assert!(
        run.stderr.contains(&format!("kept bundle full ({full})")),
        "{run}"
    );
    assert!(env.bundle_dir(&empty).join("bundle.json").is_file());
    assert!(env.bundle_dir(&full).join("bundle.json").is_file());

    let report: ReapReport = env
        .run(&[
            "--json",
            "bundle",
            "reap",
            "--older-than",
            "0s",
            "--dry-run",
        ])
        .success()
        .parse();
    assert!(report.dry_run);
    assert_eq!(report.reaped.len(), 1);
    assert!(env.bundle_dir(&empty).exists());
}

#[test]
fn json_summary() {
    let (env, empty, full, _) = setup();
    let report: ReapReport = env
        .run(&["--json", "bundle", "reap", "--older-than", "0s"])
        .success()
        .parse();
    assert!(!report.dry_run);
    assert_eq!(report.older_than_secs, 0);
    assert_eq!(report.reaped.len(), 1);
    assert_eq!(report.reaped[0].bundle_id, empty);
    assert_eq!(report.reaped[0].slug, "empty");
    assert_eq!(report.reaped[0].kept_because, None);
    crate::common::timestamp(&report.reaped[0].soft_deleted_at);
    assert_eq!(report.kept.len(), 1);
    assert_eq!(report.kept[0].bundle_id, full);
    assert_eq!(
        report.kept[0].kept_because.as_deref(),
        Some("it still holds 1 tool")
    );
}

#[test]
fn nothing_to_do_prints_nothing() {
    let env = TestEnv::new();
    env.bundle("live");
    let run = env.run(&["bundle", "reap", "--older-than", "0s"]);
    run.success();
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
    let run = env.run(&["bundle", "reap"]);
    run.success();
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));

    let report: ReapReport = env.run(&["--json", "bundle", "reap"]).success().parse();
    assert!(report.reaped.is_empty() && report.kept.is_empty());
    assert_eq!(report.older_than_secs, 48 * 3600);

    // No catalog at all: nothing to do, and none is created.
    let bare = TestEnv::uninit_default();
    let run = bare.run(&["bundle", "reap", "--older-than", "0s"]);
    run.success();
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
    assert!(!bare.catalog().exists());
}

#[test]
fn the_grace_period_protects_recent_deletes() {
    let env = TestEnv::new();
    let id = env.bundle("recent");
    env.run(&["bundle", "delete", "recent"]).success();

    for args in [
        &["bundle", "reap"][..],
        &["bundle", "reap", "--older-than", "1h"][..],
        &["bundle", "reap", "--older-than", "48h"][..],
    ] {
        let run = env.run(args);
        run.success();
        assert_eq!(run.stdout, "", "{run}");
        assert!(env.bundle_dir(&id).join("bundle.json").is_file(), "{run}");
    }

    // The grace period comes from toolctl.json.
    env.edit_config(|c| c["reap"]["gracePeriod"] = "0s".into());
    let report: ReapReport = env.run(&["--json", "bundle", "reap"]).success().parse();
    assert_eq!(report.older_than_secs, 0);
    assert_eq!(report.reaped.len(), 1);
    assert!(!env.bundle_dir(&id).exists());
}

#[test]
fn bad_durations_are_rejected() {
    let env = TestEnv::new();
    env.run(&["bundle", "reap", "--older-than", "soon"])
        .failure(2)
        .stderr_has("soon");
    env.run(&["bundle", "reap", "--older-than=-5s"])
        .failure(2)
        .stderr_has("negative");
    env.edit_config(|c| c["reap"]["gracePeriod"] = "whenever".into());
    env.run(&["bundle", "reap"])
        .failure(3)
        .stderr_has("gracePeriod");
}

/// Years and months have no fixed length: refused with the argument named and the units to
/// use instead, not jiff's own words (`SpanRelativeTo::days_are_24_hours()`).
#[test]
fn regression_years_and_months_are_refused_in_words() {
    let env = TestEnv::new();
    for (text, unit) in [("1y", "years"), ("2mo", "months"), ("P1Y", "years")] {
        let run = env.run(&["bundle", "reap", "--older-than", text]);
        run.failure(2)
            .stderr_has(&format!(
                "invalid value '{text}' for '--older-than <DURATION>'"
            ))
            .stderr_has(&format!("is in {unit}, which have no fixed length"))
            .stderr_has("weeks, days, hours, minutes or seconds");
        assert!(!run.stderr.contains("jiff"), "{run}");
    }
    env.run(&["bundle", "reap", "--older-than", "2w", "--dry-run"])
        .success();
    env.edit_config(|c| c["reap"]["gracePeriod"] = "1y".into());
    let run = env.run(&["bundle", "reap"]);
    run.failure(3)
        .stderr_has("/reap/gracePeriod")
        .stderr_has("is in years");
    assert!(!run.stderr.contains("jiff"), "{run}");
}

/// Files an operating system leaves in folders (`.DS_Store` and `._*` from a Mac, `Thumbs.db`
/// and `desktop.ini` from Windows) do not keep a bundle from being reaped for good; any other
/// file still does.
#[test]
fn regression_os_junk_files_do_not_stop_a_reap() {
    let (env, empty, full, _) = setup();
    let dir = env.bundle_dir(&empty);
    std::fs::create_dir_all(dir.join("tools")).unwrap();
    for name in [
        ".DS_Store",
        "._bundle.json",
        "Thumbs.db",
        "tools/desktop.ini",
        "tools/._x",
    ] {
        std::fs::write(dir.join(name), "junk").unwrap();
    }
    let notes = env.bundle_dir(&full).join("tools/.DS_Store");
    std::fs::write(notes, "junk").unwrap();
    let run = env.run(&["--json", "bundle", "reap", "--older-than", "0s"]);
    run.success();
    let report: ReapReport = run.parse();
    let reaped: Vec<&str> = report.reaped.iter().map(|b| b.bundle_id.as_str()).collect();
    assert_eq!(reaped, [empty.as_str()], "{run}");
    assert!(!dir.exists(), "{run}");

    // Another file keeps the bundle, junk beside it or not.
    env.run(&["tool", "delete", "full/t"]).success();
    std::fs::write(env.bundle_dir(&full).join("notes.txt"), "mine").unwrap();
    let run = env.run(&["bundle", "reap", "--older-than", "0s"]);
    run.success().stderr_has("it holds the file notes.txt");
    assert!(env.bundle_dir(&full).join("notes.txt").is_file());
}

#[test]
fn two_reaps_at_once_both_succeed() {
    let env = TestEnv::new();
    let mut ids = Vec::new();
    for i in 0..4 {
        let slug = format!("gone{i}");
        ids.push(env.bundle(&slug));
        env.run(&["bundle", "delete", &slug]).success();
    }
    let children: Vec<_> = (0..2)
        .map(|_| {
            env.command(&["--json", "bundle", "reap", "--older-than", "0s"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let runs: Vec<Run> = children
        .into_iter()
        .map(|c| Run::from_output("bundle reap (twice at once)", c.wait_with_output().unwrap()))
        .collect();
    let mut reaped = Vec::new();
    for run in &runs {
        run.success();
        assert_eq!(run.stderr, "", "{run}");
        let report: ReapReport = run.parse();
        reaped.extend(report.reaped.into_iter().map(|r| r.bundle_id));
    }
    reaped.sort();
    ids.sort();
    assert_eq!(reaped, ids, "each bundle reaped exactly once");
    for id in &ids {
        assert!(!env.bundle_dir(id).exists());
    }
    let hidden = crate::common::find_prefixed(&env.catalog().join("bundles"), ".");
    assert!(hidden.is_empty(), "{hidden:?}");
}

#[test]
fn delete_with_tools_leaves_reap_the_rest() {
    let env = TestEnv::new();
    let id = env.bundle("w");
    env.put_tool("w", &tool_doc("a", "v1"));
    env.put_tool("w", &tool_doc("a", "v2"));
    env.put_tool("w", &tool_doc("b", "v1"));
    let other = env.bundle("other");
    env.put_tool("other", &tool_doc("a", "v1"));

    let json = env.json(&["bundle", "delete", "w", "--with-tools"]);
    assert_eq!(json["changed"], true);
    assert_eq!(
        json["deletedTools"],
        serde_json::json!(["w/a@v1", "w/a@v2", "w/b@v1"])
    );
    crate::common::timestamp(json["softDeletedAt"].as_str().unwrap());
    assert!(!env.bundle_dir(&id).join("tools/a").exists());
    assert!(!env.bundle_dir(&id).join("tools/b").exists());
    assert_eq!(
        env.refs(&["--include-deleted"]),
        [
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1",
            "other/a@v1"
        ]
    );

    // Again: nothing left to do, and it says so.
    env.run(&["bundle", "delete", "w", "--with-tools"])
        .success()
        .stderr_has("was already deleted; deleted its 0 tools");
    let run = env.run(&["bundle", "reap", "--older-than", "0s"]);
    assert!(
        run.success()
            .stdout
            .starts_with(&format!("reaped bundle w ({id})")),
        "{run}"
    );
    assert!(!env.bundle_dir(&id).exists());
    assert!(
        env.bundle_dir(&other)
            .join("tools/a/v1/tool.json")
            .is_file()
    );

    // The built-in bundle is refused before anything is removed.
    env.run(&["bundle", "delete", "builtin", "--with-tools"])
        .failure(6);
    assert_eq!(env.refs(&[]).len(), 4);
}

/// A bundle whose folder cannot be moved (immutable, which stops root too) is reported and left
/// in place; the other due bundles are still reaped, and the exit code says not all went.
#[test]
fn a_bundle_that_cannot_be_removed_does_not_stop_the_others() {
    let env = TestEnv::new();
    let stuck = env.bundle("stuck");
    let gone = env.bundle("gone");
    env.run(&["bundle", "delete", "stuck"]).success();
    env.run(&["bundle", "delete", "gone"]).success();
    let dir = env.bundle_dir(&stuck);
    let chattr = |flag: &str| {
        std::process::Command::new("chattr")
            .arg(flag)
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success())
    };
    assert!(chattr("+i"), "chattr +i is needed for this test");
    let run = env.run(&["-q", "--json", "bundle", "reap", "--older-than", "0s"]);
    let report = run.json();
    chattr("-i");
    assert_eq!(run.code(), 1, "{run}");
    assert_eq!(report["reaped"][0]["bundleID"], gone.as_str(), "{report:#}");
    assert_eq!(report["reaped"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        report["failed"][0]["bundleID"],
        stuck.as_str(),
        "{report:#}"
    );
    let error = report["failed"][0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("cannot move away"), "{report:#}");
    // Said on stderr even with -q: cron mails it.
    assert!(
        run.stderr
            .contains(&format!("could not reap bundle stuck ({stuck})")),
        "{run}"
    );
    assert!(!env.bundle_dir(&gone).exists());
    assert!(dir.join("bundle.json").is_file());
    // Once it can be removed, the next reap does it.
    env.run(&["bundle", "reap", "--older-than", "0s"]).success();
    assert!(!dir.exists());
}
