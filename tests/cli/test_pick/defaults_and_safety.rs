//! The defaults, safety, determinism.

use super::*;

#[test]
fn the_defaults_pick_three_tools_best_first_with_a_reason_and_no_provenance() {
    let env = nato();
    let got = picks(&env, &[NATO]);
    assert_eq!(
        refs(&got),
        [
            "n/golf-hotel-india@v1",
            "n/alpha-bravo@v1",
            "n/lima-lamp@v1"
        ]
    );
    assert_eq!(
        names(&got),
        ["golf-hotel-india", "alpha-bravo", "lima-lamp"]
    );
    assert_eq!(
        scores(&got),
        [
            round4(3.0 * nato_share(1.0)),
            round4(2.6 * nato_share(1.0)),
            round4(nato_share(1.0))
        ]
    );
    assert_eq!(
        got.iter().map(|p| p.reason.as_str()).collect::<Vec<_>>(),
        [
            "matched keywords in golf-hotel-india: golf, hotel, india",
            "matched keywords in alpha-bravo: alpha, bravo, charlie",
            "matched keywords in lima-lamp: lima",
        ]
    );
    assert!(got.iter().all(|p| p.provenance.is_none()));
    // The toolID is the tool's.
    let listed = env.tool_list(&["--bundle", "n"]);
    for p in &got {
        let tool = listed
            .items
            .iter()
            .find(|t| t.reference == p.reference)
            .unwrap();
        assert_eq!(p.tool_id, tool.tool_id);
    }

    // --max: more, in the same order; every score in 0..1, descending.
    let more = picks(&env, &[NATO, "--max", "10"]);
    assert_eq!(
        refs(&more),
        [
            "n/golf-hotel-india@v1",
            "n/alpha-bravo@v1",
            "n/lima-lamp@v1",
            "n/tagged@v1"
        ]
    );
    assert_eq!(more[3].score, round4(nato_share(0.8)));
    assert_eq!(more[..3], got[..]);
    assert!(more.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(more.iter().all(|p| (0.0..=1.0).contains(&p.score)));
    assert_eq!(
        refs(&picks(&env, &[NATO, "--max", "1"])),
        ["n/golf-hotel-india@v1"]
    );
}

#[test]
fn min_score_leaves_out_tools_under_it_and_zero_lets_every_tool_in() {
    let env = nato();
    // "described" scores 0.0395: under the default 0.05, in at 0.035.
    let default = picks(&env, &[NATO, "--max", "128"]);
    assert!(!refs(&default).contains(&"n/described@v1"));
    assert_eq!(default.len(), 4);
    let lower = picks(&env, &[NATO, "--max", "128", "--min-score", "0.035"]);
    assert_eq!(
        refs(&lower),
        [
            "n/golf-hotel-india@v1",
            "n/alpha-bravo@v1",
            "n/lima-lamp@v1",
            "n/tagged@v1",
            "n/described@v1"
        ]
    );
    assert_eq!(lower[4].score, round4(nato_share(0.6)));
    assert_eq!(
        lower[4].reason, "matched keywords in described: kilo",
        "{lower:?}"
    );

    // 0: the tool with nothing in common comes in too, with score 0 and a reason.
    let all = picks(&env, &[NATO, "--max", "128", "--min-score", "0"]);
    assert_eq!(all.len(), 6);
    assert_eq!(all[..5], lower[..]);
    assert_eq!(all[5].reference, "n/plain@v1");
    assert_eq!(all[5].score, 0.0);
    assert_eq!(all[5].reason, "no keyword in common");

    // Higher bars.
    assert_eq!(
        refs(&picks(&env, &[NATO, "--min-score", "0.19"])),
        ["n/golf-hotel-india@v1"]
    );
    assert_eq!(picks(&env, &[NATO, "--min-score", "0.1974"]), []);
    // The bar is inclusive: a perfect match passes --min-score 1.
    let perfect = picks(&env, &["lamp", "--min-score", "1"]);
    assert_eq!(refs(&perfect), ["n/lima-lamp@v1"]);
    assert_eq!(perfect[0].score, 1.0);
}

/// `value` with each number that is not an integer as the double it denotes, `-0.0` as `0.0`:
/// sub-scores compare by value (one of no match is printed `-0.0`), as numbers that keep their
/// text no longer do through `Value`'s `==`.
fn by_value(value: Value) -> Value {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => json!(n.as_f64().unwrap() + 0.0),
        Value::Array(items) => items.into_iter().map(by_value).collect(),
        Value::Object(fields) => fields.into_iter().map(|(k, v)| (k, by_value(v))).collect(),
        other => other,
    }
}

#[test]
fn debug_adds_provenance_with_the_scorer_matched_terms_and_sub_scores() {
    let env = nato();
    let got = picks(&env, &[NATO, "--debug", "--max", "10", "--min-score", "0"]);
    let tokens: Vec<&str> = NATO.split(' ').collect();
    let weights = json!({ "name": 1.0, "tags": 0.8, "argumentNames": 0.7, "description": 0.6,
                          "argumentDescriptions": 0.5, "argumentValues": 0.5 });
    let idf: Vec<f64> = tokens
        .iter()
        .map(|t| {
            if ["delta", "echo", "foxtrot", "juliet"].contains(t) {
                3.091
            } else {
                1.992
            }
        })
        .collect();
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let sub = |name: f64, tags: f64, description: f64| {
        json!({ "name": round3(name), "tags": round3(tags), "argumentNames": 0.0,
                "description": round3(description), "argumentDescriptions": 0.0,
                "argumentValues": 0.0 })
    };
    let no_args = |name: &[&str], tags: &[&str], description: &[&str]| {
        json!({ "name": name, "tags": tags, "argumentNames": [], "description": description,
                "argumentDescriptions": [], "argumentValues": [] })
    };
    let by_ref = |r: &str| {
        got.iter()
            .find(|p| p.reference == r)
            .unwrap_or_else(|| panic!("{r} not picked: {got:?}"))
            .provenance
            .clone()
            .map(by_value)
            .unwrap()
    };
    assert_eq!(
        by_ref("n/alpha-bravo@v1"),
        json!({
            "scorer": "keyword",
            "details": {
                "queryTokens": tokens,
                "idf": idf,
                "matchedTerms": ["alpha", "bravo", "charlie"],
                "matched": no_args(&["alpha", "bravo"], &[], &["charlie"]),
                "fieldWeights": weights,
                "subScores": sub(2.0 * nato_share(1.0), 0.0, nato_share(0.6)),
            },
        })
    );
    assert_eq!(
        by_ref("n/tagged@v1"),
        json!({
            "scorer": "keyword",
            "details": {
                "queryTokens": tokens,
                "idf": idf,
                "matchedTerms": ["mike"],
                "matched": no_args(&[], &["mike"], &[]),
                "fieldWeights": weights,
                "subScores": sub(0.0, nato_share(0.8), 0.0),
            },
        })
    );
    assert_eq!(
        by_ref("n/plain@v1"),
        json!({ "scorer": "keyword", "details": { "queryTokens": tokens, "matchedTerms": [] } })
    );
    // --debug changes nothing else.
    let plain = picks(&env, &[NATO, "--max", "10", "--min-score", "0"]);
    let stripped: Vec<Pick> = got
        .into_iter()
        .map(|p| Pick {
            provenance: None,
            ..p
        })
        .collect();
    assert_eq!(stripped, plain);

    // bm25 says which tier and how much.
    let bm25 = picks(&env, &["lamp", "--scorer", "bm25", "--debug"]);
    assert_eq!(refs(&bm25), ["n/lima-lamp@v1"]);
    let provenance = bm25[0].provenance.as_ref().unwrap();
    assert_eq!(provenance["scorer"], "bm25");
    assert!(provenance["details"]["tier"].is_string(), "{provenance}");
    assert!(
        provenance["details"]["bm25"].as_f64().unwrap() > 0.0,
        "{provenance}"
    );
    assert!((0.0..=1.0).contains(&bm25[0].score));
}

#[test]
fn human_output_is_a_table_or_says_why_nothing_was_picked() {
    let env = nato();
    let run = env.run(&["pick", NATO, "--scorer", "keyword"]);
    run.success();
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "\
#  TOOL                   NAME              SCORE  REASON
1  n/golf-hotel-india@v1  golf-hotel-india  0.20   matched keywords in golf-hotel-india: golf, hotel, india
2  n/alpha-bravo@v1       alpha-bravo       0.17   matched keywords in alpha-bravo: alpha, bravo, charlie
3  n/lima-lamp@v1         lima-lamp         0.07   matched keywords in lima-lamp: lima
"
    );
    // --debug: the table, then each pick's provenance on a line of its own.
    let run = env.run(&["pick", NATO, "--debug", "--scorer", "keyword"]);
    run.success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 7, "{run}");
    for (line, reference) in lines[4..].iter().zip([
        "n/golf-hotel-india@v1",
        "n/alpha-bravo@v1",
        "n/lima-lamp@v1",
    ]) {
        let (head, provenance) = line.split_once(": ").unwrap();
        assert_eq!(head, reference);
        let provenance: Value = serde_json::from_str(provenance).unwrap();
        assert_eq!(provenance["scorer"], "keyword", "{line}");
        assert!(provenance["details"]["matchedTerms"].is_array(), "{line}");
    }
    let run = env.run(&["pick", "zebra", "crossing", "--scorer", "keyword"]);
    run.success();
    assert_eq!(
        run.stdout,
        "no tool scores 0.05 or more for 'zebra crossing' (6 considered; --min-score lowers the bar, --allow-unsafe adds unsafe tools)\n"
    );
    // The words of the task may come as one argument or several.
    assert_eq!(
        pick_run(&env, &["golf", "hotel"]).stdout,
        pick_run(&env, &["golf hotel"]).stdout
    );
    assert_eq!(picks(&env, &["zebra"]), []);
}

#[test]
fn one_version_per_slug_is_picked_the_newest_enabled_one() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("v");
    let doc = |version: &str, n: u32| {
        let mut doc = native("kettle", n, json!({ "description": "Boil water." }));
        doc["version"] = json!(version);
        doc
    };
    env.put_tool("v", &doc("v1", 1));
    env.put_tool("v", &doc("v2", 2));
    env.put_tool("v", &doc("v3", 3));
    let got = picks(&env, &["kettle", "--max", "10"]);
    assert_eq!(refs(&got), ["v/kettle@v3"]);
    env.run(&["tool", "disable", "v/kettle@v3"]).success();
    assert_eq!(
        refs(&picks(&env, &["kettle", "--max", "10"])),
        ["v/kettle@v2"]
    );
}

#[test]
fn unsafe_tools_are_left_out_unless_allowed() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.edit_config(|config| config["allowedHosts"] = json!(["api.example.com"]));
    env.bundle("w");
    // (slug, document, safe?) in registration order.
    let cases: Vec<(&str, Value, bool)> = vec![
        ("widget-native", native("widget-native", 1, json!({})), true),
        ("widget-get", http("widget-get", 2, "GET", json!({})), true),
        (
            "widget-head",
            http("widget-head", 3, "HEAD", json!({})),
            true,
        ),
        (
            "widget-post",
            http("widget-post", 4, "POST", json!({})),
            false,
        ),
        ("widget-put", http("widget-put", 5, "PUT", json!({})), false),
        (
            "widget-patch",
            http("widget-patch", 6, "PATCH", json!({})),
            false,
        ),
        (
            "widget-delete",
            http("widget-delete", 7, "DELETE", json!({})),
            false,
        ),
        (
            "widget-post-safe",
            http("widget-post-safe", 8, "POST", json!({ "safe": true })),
            true,
        ),
        (
            "widget-get-unsafe",
            http("widget-get-unsafe", 9, "GET", json!({ "safe": false })),
            false,
        ),
        (
            "widget-native-unsafe",
            native("widget-native-unsafe", 10, json!({ "safe": false })),
            false,
        ),
        (
            "widget-read-only",
            http(
                "widget-read-only",
                11,
                "POST",
                json!({ "annotations": { "readOnlyHint": true } }),
            ),
            true,
        ),
        (
            "widget-not-destructive",
            http(
                "widget-not-destructive",
                12,
                "DELETE",
                json!({ "annotations": { "destructiveHint": false } }),
            ),
            true,
        ),
        (
            "widget-destructive",
            http(
                "widget-destructive",
                13,
                "GET",
                json!({ "annotations": { "destructiveHint": true } }),
            ),
            false,
        ),
        (
            "widget-writes",
            http(
                "widget-writes",
                14,
                "GET",
                json!({ "annotations": { "readOnlyHint": false } }),
            ),
            false,
        ),
        (
            "widget-safe-beats-hints",
            http(
                "widget-safe-beats-hints",
                15,
                "DELETE",
                json!({ "safe": true, "annotations": { "destructiveHint": true } }),
            ),
            true,
        ),
        (
            "widget-unsafe-beats-hints",
            http(
                "widget-unsafe-beats-hints",
                16,
                "GET",
                json!({ "safe": false, "annotations": { "readOnlyHint": true } }),
            ),
            false,
        ),
    ];
    for (_, doc, _) in &cases {
        env.put_tool("w", doc);
    }
    let expect = |all: bool| -> Vec<String> {
        cases
            .iter()
            .filter(|(_, _, safe)| all || *safe)
            .map(|(slug, _, _)| format!("w/{slug}@v1"))
            .collect()
    };
    // Every tool's name holds "widget": all score 1, so the order is the registration order.
    let safe = picks(&env, &["widget", "--max", "128"]);
    assert_eq!(refs(&safe), expect(false));
    assert!(safe.iter().all(|p| p.score == 1.0));
    let all = picks(&env, &["widget", "--max", "128", "--allow-unsafe"]);
    assert_eq!(refs(&all), expect(true));
    // A hand edit of `safe` counts from the next pick on.
    let file = crate::common::find_files(env.catalog(), "tool.json")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("/widget-native/"))
        .unwrap();
    let mut doc = read_json(&file);
    doc["safe"] = json!(false);
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let now_safe = picks(&env, &["widget", "--max", "128"]);
    assert_eq!(refs(&now_safe), expect(false)[1..]);
    doc["safe"] = json!(true);
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    // Human mode says how many were considered and that --allow-unsafe adds more.
    let run = env.run(&["pick", "gizmo", "--scorer", "keyword"]);
    assert!(
        run.stdout.contains(
            "(7 considered; --min-score lowers the bar, --allow-unsafe adds unsafe tools)"
        ),
        "{run}"
    );
    let run = env.run(&["pick", "gizmo", "--allow-unsafe", "--scorer", "keyword"]);
    assert!(
        run.stdout
            .ends_with("(16 considered; --min-score lowers the bar)\n"),
        "{run}"
    );
}

#[test]
fn builtin_exec_is_unsafe_and_readfile_safe() {
    let env = TestEnv::new();
    env.edit_config(|config| config["builtin"]["tools"]["exec"]["isEnabled"] = json!(true));
    let task = "run a command program";
    let safe = picks(&env, &[task, "--max", "128", "--min-score", "0"]);
    assert!(!refs(&safe).contains(&"builtin/exec@v1"), "{safe:?}");
    let all = picks(&env, &[task, "--allow-unsafe"]);
    assert_eq!(all[0].reference, "builtin/exec@v1", "{all:?}");
    assert_eq!(all[0].name, "exec");

    // Switched off again in toolctl.json: never picked, even when unsafe tools are allowed.
    env.edit_config(|config| config["builtin"]["tools"]["exec"]["isEnabled"] = json!(false));
    let off = picks(
        &env,
        &[task, "--allow-unsafe", "--max", "128", "--min-score", "0"],
    );
    assert!(!refs(&off).contains(&"builtin/exec@v1"), "{off:?}");
    // And the whole built-in bundle.
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(false));
    assert_eq!(picks(&env, &["read a file", "--allow-unsafe"]), []);
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(true));

    let read = picks(&env, &["read a file"]);
    assert_eq!(read[0].reference, "builtin/readfile@v1", "{read:?}");
    // Every safe built-in can be picked; exec only when allowed.
    assert_eq!(
        refs(&safe).into_iter().collect::<BTreeSet<_>>(),
        BTreeSet::from([
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1"
        ])
    );
}

#[test]
fn disabled_unavailable_and_disabled_bundle_tools_are_never_picked() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("d");
    env.bundle("off");
    env.put_tool_dated("d", &native("gadget-on", 1, json!({})));
    env.put_tool_dated("d", &native("gadget-off", 2, json!({})));
    // Copied in by hand: `tool put` refuses a function this binary lacks.
    env.put_tool_by_hand(
        "d",
        &native(
            "gadget-go",
            3,
            json!({ "type": "go", "impl": { "goFunc": "NotInThisBinary" } }),
        ),
    );
    env.put_tool_dated("off", &native("gadget-elsewhere", 4, json!({})));
    env.run(&["tool", "disable", "d/gadget-off@v1"]).success();
    env.run(&["bundle", "disable", "off"]).success();
    let listed = env.tool_list(&["--include-disabled", "--bundle", "d", "--bundle", "off"]);
    assert_eq!(listed.items.len(), 4);
    assert_eq!(
        listed.items.iter().filter(|t| t.available).count(),
        3,
        "{listed:?}"
    );

    for flags in [
        &["--max", "128"][..],
        &["--max", "128", "--allow-unsafe", "--min-score", "0"],
        &[
            "--max",
            "128",
            "--scorer",
            "bm25",
            "--allow-unsafe",
            "--min-score",
            "0",
        ],
    ] {
        let mut args = vec!["gadget"];
        args.extend_from_slice(flags);
        assert_eq!(refs(&picks(&env, &args)), ["d/gadget-on@v1"], "{flags:?}");
    }
    // Even by exact name.
    assert_eq!(
        picks(&env, &["gadget-off", "gadget-go", "gadget-elsewhere"]).len(),
        1
    );
}

#[test]
fn keyword_and_bm25_print_the_same_bytes_for_the_same_task() {
    let first = TestEnv::fixture();
    let second = TestEnv::fixture();
    for scorer in ["keyword", "bm25"] {
        for task in [
            "weather forecast for Oslo tomorrow",
            "open a github issue about a bug",
            "meeting with Anna next week",
            "what time is it",
        ] {
            let args = [
                task,
                "--scorer",
                scorer,
                "--debug",
                "--allow-unsafe",
                "--min-score",
                "0",
                "--max",
                "20",
            ];
            let once = pick_run(&first, &args);
            once.success();
            let again = pick_run(&first, &args);
            let elsewhere = pick_run(&second, &args);
            assert_eq!(once.stdout, again.stdout, "{scorer} {task:?}");
            assert_eq!(once.stdout, elsewhere.stdout, "{scorer} {task:?}");
            let human = first.run(&["pick", task, "--scorer", scorer, "--debug"]);
            assert_eq!(
                human.stdout,
                first
                    .run(&["pick", task, "--scorer", scorer, "--debug"])
                    .stdout
            );
            let picked: Vec<Pick> = Picks::of(&once);
            assert_eq!(picked.len(), 20, "{scorer} {task:?}");
            assert!(picked.windows(2).all(|w| w[0].score >= w[1].score));
        }
    }
}

#[test]
fn equal_scores_keep_the_registration_order() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("t");
    // Put in slug order, registered (createdAt) in another.
    env.put_tool_dated("t", &native("alpha-lamp", 2, json!({})));
    env.put_tool_dated("t", &native("mid-lamp", 3, json!({})));
    env.put_tool_dated("t", &native("zeta-lamp", 1, json!({})));
    let expected = ["t/zeta-lamp@v1", "t/alpha-lamp@v1", "t/mid-lamp@v1"];
    for scorer in ["keyword", "bm25"] {
        let got = picks(&env, &["lamp", "--scorer", scorer]);
        assert_eq!(refs(&got), expected, "{scorer}");
        assert!(got.iter().all(|p| p.score == got[0].score), "{got:?}");
    }
    // With a time limit the scorer cannot meet, the fallback is that order too.
    let run = pick_run(&env, &["lamp", "--timeout-ms", "0"]);
    run.success();
    assert_eq!(refs(&Picks::of(&run)), expected);
}

/// A sentence's relevance tier is read best first in batches, each asked of the filters
/// (the first batch: 64 tools): 80 tools of a disabled bundle that match the request better
/// fill the first batch and more, and the one tool that may be picked comes after them.
#[test]
fn a_sentence_finds_the_one_usable_tool_behind_many_better_filtered_ones() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("off");
    env.bundle("on");
    for n in 0..80 {
        let doc = native(
            &format!("city-weather-forecast-{n}"),
            n,
            json!({ "description": "Weather forecast for a city, today and tomorrow." }),
        );
        env.put_tool_dated("off", &doc);
    }
    env.put_tool_dated(
        "on",
        &native(
            "umbrella-advice",
            90,
            json!({ "description": "Whether to take an umbrella, from today's weather." }),
        ),
    );
    env.run(&["bundle", "disable", "off"]).success();
    let request = "what is the weather forecast for my city today";
    // The disabled tools do rank first (so the first batch holds no usable tool).
    let all = env.json(&[
        "search",
        request,
        "--include-disabled",
        "--page-size",
        "100",
    ]);
    let found: Vec<&str> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["ref"].as_str().unwrap())
        .collect();
    assert_eq!(found.len(), 81, "{all}");
    assert_eq!(found.last(), Some(&"on/umbrella-advice@v1"), "{all}");

    for flags in [&[][..], &["--scorer", "bm25", "--allow-unsafe"]] {
        let mut args = vec![request, "--max", "3"];
        args.extend_from_slice(flags);
        assert_eq!(
            refs(&picks(&env, &args)),
            ["on/umbrella-advice@v1"],
            "{flags:?}"
        );
    }
}

/// A task of stop words, numbers and lone letters alone says nothing of what it wants: every
/// lexical scorer matches it against tool names alone, so "now" finds the tool named `now`
/// and "the" nothing, with a word of why (before, "the" took the name-like path, where each
/// tool holding "the" anywhere scored 0.50, and the keyword scorer fell back to every word).
#[test]
fn a_task_of_stop_words_matches_tool_names_alone() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("n");
    for (n, slug) in ["ledger-keeper", "team-update", "now"]
        .into_iter()
        .enumerate()
    {
        env.put_tool_dated(
            "n",
            &native(
                slug,
                n as u32 + 1,
                json!({ "description": "Do it for the team, all of the time, now." }),
            ),
        );
    }
    for scorer in ["bm25", "keyword"] {
        for task in ["the", "do it for me", "the 2 of a"] {
            assert_eq!(
                picks(&env, &[task, "--scorer", scorer]),
                [],
                "{scorer} {task}"
            );
            let run = env.run(&["pick", task, "--scorer", scorer]);
            run.success();
            assert_eq!(
                run.stdout,
                format!(
                    "no tool matches '{task}': it holds no word that says what the task is about (stop words, numbers and single letters are left out), and no tool's name holds it\n"
                ),
                "{scorer}"
            );
        }
        // A stop word that is a tool's name finds that tool, and that tool alone.
        assert_eq!(
            refs(&picks(&env, &["now", "--scorer", scorer])),
            ["n/now@v1"],
            "{scorer}"
        );
        // A word that says what it wants still finds the tools.
        assert_eq!(
            refs(&picks(&env, &["the ledger", "--scorer", scorer])),
            ["n/ledger-keeper@v1"],
            "{scorer}"
        );
    }
}
