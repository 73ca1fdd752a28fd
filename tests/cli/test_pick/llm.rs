//! The `llm` scorer against a local chat server.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn llm_asks_with_tool_names_only_at_temperature_zero() {
    let chat = chat_server(Replies(vec![("bake bread", r#"["bake-bread"]"#.into())])).await;
    let env = shop_with_chat(&chat);
    let got = picks(&env, &["bake bread", "--scorer", "llm"]);
    assert_eq!(refs(&got), [shop_ref("bake-bread")]);
    assert_eq!(got[0].score, 1.0);
    assert_eq!(got[0].reason, "chosen by chooser (place 1)");

    let requests = chat.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].url.path(), "/v1/chat/completions");
    assert_eq!(requests[0].headers.get("authorization"), None);
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "chooser");
    assert_eq!(body["temperature"].as_f64(), Some(0.0), "{body}");
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user"]);
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("at most 3"),
        "{body}"
    );
    let user = user_message(&body);
    assert!(user.contains("bake bread"), "{user}");
    let lines: BTreeSet<&str> = user.lines().collect();
    for name in SAFE_SHOP {
        assert!(lines.contains(name), "{name} is not offered: {user}");
    }
    // Names only: no description, tag, bundle or version, and no unsafe tool.
    let text = body.to_string();
    for (slug, description, tags, _) in SHOP {
        assert!(!text.contains(description), "{text}");
        for tag in *tags {
            assert!(!text.contains(tag), "tag {tag:?} in {text}");
        }
        assert!(!text.contains(&shop_ref(slug)), "{text}");
    }
    for word in [
        "sourdough",
        "sledgehammer",
        "leaking",
        "balcony",
        "demolish-wall",
    ] {
        assert!(!text.contains(word), "{word:?} in {text}");
    }

    // --allow-unsafe offers the unsafe tool too; --max is the model's k.
    picks(
        &env,
        &[
            "bake bread",
            "--scorer",
            "llm",
            "--allow-unsafe",
            "--max",
            "2",
        ],
    );
    let sent = bodies(&chat).await;
    assert_eq!(sent.len(), 2);
    assert!(user_message(&sent[1]).lines().any(|l| l == "demolish-wall"));
    assert!(
        sent[1]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("at most 2")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_replies_are_read_tolerantly_in_the_models_order() {
    let cases: Vec<(&str, &str, Vec<&str>)> = vec![
        (
            "task plain",
            r#"["fix-sink", "paint-fence"]"#,
            vec!["fix-sink", "paint-fence"],
        ),
        (
            "task fenced",
            "```json\n[\"bake-bread\", \"mow-lawn\"]\n```",
            vec!["bake-bread", "mow-lawn"],
        ),
        (
            "task truncated",
            r#"["mow-lawn", "water-plants", "paint-fe"#,
            vec!["mow-lawn", "water-plants"],
        ),
        (
            "task in prose",
            r#"Sure! Here they are: {"tools": ["water-plants", "fix-sink"]} Good luck."#,
            vec!["water-plants", "fix-sink"],
        ),
        (
            "task rewritten names",
            r#"["shop/bake-bread@v1", "PAINT-FENCE"]"#,
            vec!["bake-bread", "paint-fence"],
        ),
        (
            "task unknown repeated and too many",
            r#"["lawn-mower", "mow-lawn", "fix-sink", "mow-lawn", "bake-bread", "paint-fence"]"#,
            vec!["mow-lawn", "fix-sink", "bake-bread"],
        ),
        (
            "task names an unsafe tool",
            r#"["demolish-wall", "fix-sink"]"#,
            vec!["fix-sink"],
        ),
        (
            "task thinks first",
            "<think>paint-fence? no.</think>\n[\"water-plants\"]",
            vec!["water-plants"],
        ),
    ];
    let chat = chat_server(Replies(
        cases
            .iter()
            .map(|(task, reply, _)| (*task, (*reply).to_owned()))
            .collect(),
    ))
    .await;
    let env = shop_with_chat(&chat);
    for (task, reply, expected) in &cases {
        let got = picks(&env, &[task, "--scorer", "llm", "--debug"]);
        assert_eq!(names(&got), *expected, "{reply}");
        let n = expected.len() as f64;
        for (i, p) in got.iter().enumerate() {
            assert_eq!(p.score, round4(1.0 - i as f64 / (2.0 * n)), "{reply}");
            assert_eq!(p.reason, format!("chosen by chooser (place {})", i + 1));
            assert_eq!(
                p.provenance,
                Some(json!({
                    "scorer": "llm",
                    "details": { "model": "chooser", "place": i + 1, "cached": false, "reply": reply },
                }))
            );
        }
        let (_, entry) = cache_entry(&env, task).expect("cached");
        assert_eq!(entry["selected_tools"], json!(expected));
    }
    assert_eq!(bodies(&chat).await.len(), cases.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_selections_are_cached_in_the_seed_format_and_reused() {
    let chat = chat_server(Replies(vec![(
        "fix the sink",
        r#"["fix-sink", "water-plants"]"#.into(),
    )]))
    .await;
    let env = shop_with_chat(&chat);
    let task = "fix the sink";
    let first = picks(&env, &[task, "--scorer", "llm", "--debug"]);
    assert_eq!(names(&first), ["fix-sink", "water-plants"]);
    assert_eq!(scores(&first), [1.0, 0.75]);
    assert_eq!(
        first[0].provenance.as_ref().unwrap()["details"],
        json!({ "model": "chooser", "place": 1, "cached": false, "reply": r#"["fix-sink", "water-plants"]"# })
    );

    let files = cache_files(&env);
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_str().unwrap();
    let stem = name.strip_suffix(".json").unwrap();
    assert!(
        stem.len() == 64
            && stem
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
        "{name} is not a SHA-256 in hex"
    );
    let entry = read_json(&files[0]);
    assert_eq!(
        keys(&entry),
        ["query", "selected_tools", "model", "max_tools"]
    );
    assert_eq!(
        entry,
        json!({
            "query": task,
            "selected_tools": ["fix-sink", "water-plants"],
            "model": "chooser",
            "max_tools": 3,
        })
    );

    // A cache hit: no request, the same picks, provenance saying so.
    let again = picks(&env, &[task, "--scorer", "llm", "--debug"]);
    assert_eq!(bodies(&chat).await.len(), 1);
    assert_eq!(refs(&again), refs(&first));
    assert_eq!(scores(&again), scores(&first));
    assert_eq!(
        again[1].provenance.as_ref().unwrap()["details"],
        json!({ "model": "chooser", "place": 2, "cached": true, "reply": null })
    );
    let plain = picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(plain.len(), 2);
    assert_eq!(bodies(&chat).await.len(), 1);

    // Another k, another model, another catalog: asked again, cached apart.
    picks(&env, &[task, "--scorer", "llm", "--max", "2"]);
    assert_eq!(bodies(&chat).await.len(), 2);
    picks(&env, &[task, "--scorer", "llm", "--llm-model", "other"]);
    assert_eq!(bodies(&chat).await.len(), 3);
    assert_eq!(cache_files(&env).len(), 3);
    let entries: BTreeSet<(String, u64)> = cache_files(&env)
        .iter()
        .map(|f| {
            let e = read_json(f);
            (
                e["model"].as_str().unwrap().to_owned(),
                e["max_tools"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        BTreeSet::from([
            ("chooser".to_owned(), 2),
            ("chooser".to_owned(), 3),
            ("other".to_owned(), 3)
        ])
    );
    env.put_tool_dated(
        "shop",
        &native(
            "unclog-drain",
            20,
            json!({ "description": "Clear a blocked drain." }),
        ),
    );
    picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(
        bodies(&chat).await.len(),
        4,
        "a new tool: the cached choice is stale"
    );
    picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(bodies(&chat).await.len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_cache_entries_that_do_not_fit_are_made_again() {
    let chat = chat_server(Replies(vec![("fix the sink", r#"["fix-sink"]"#.into())])).await;
    let env = shop_with_chat(&chat);
    let task = "fix the sink";
    let first = picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(names(&first), ["fix-sink"]);
    let (file, good) = cache_entry(&env, task).unwrap();
    let entry = |tools: Value| {
        json!({ "query": task, "selected_tools": tools, "model": "chooser", "max_tools": 3 })
            .to_string()
    };
    let bad = [
        entry(json!(["no-such-tool"])),
        entry(json!(["fix-sink", "no-such-tool"])),
        entry(json!([])),
        entry(json!(["fix-sink", "fix-sink"])),
        entry(json!(["demolish-wall"])),
        json!({ "query": "another task", "selected_tools": ["fix-sink"], "model": "chooser", "max_tools": 3 }).to_string(),
        json!({ "query": task, "selected_tools": ["fix-sink"], "model": "another", "max_tools": 3 }).to_string(),
        "{\"query\": \"fix the sink\", \"selected_tools\": [\"fix-s".to_owned(),
        String::new(),
    ];
    for (i, text) in bad.iter().enumerate() {
        std::fs::write(&file, text).unwrap();
        assert_eq!(picks(&env, &[task, "--scorer", "llm"]), first, "{text}");
        assert_eq!(bodies(&chat).await.len(), i + 2, "{text} was used");
        assert_eq!(read_json(&file), good, "{text} was not made again");
    }
    // A valid entry someone wrote is used as it is.
    std::fs::write(&file, entry(json!(["water-plants", "fix-sink"]))).unwrap();
    let hand = picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(names(&hand), ["water-plants", "fix-sink"]);
    assert_eq!(bodies(&chat).await.len(), bad.len() + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_selection_is_not_cached_and_keyword_answers() {
    let chat = chat_server(Replies(vec![
        ("fix the sink", "[]".into()),
        ("bake bread", r#"["toaster", "oven-mitt"]"#.into()),
        ("water plants", "I am not sure which tools you need.".into()),
    ]))
    .await;
    let env = shop_with_chat(&chat);
    let mut asked = 0;
    for (task, reply) in [
        ("fix the sink", "[]"),
        ("bake bread", r#"["toaster", "oven-mitt"]"#),
        ("water plants", "I am not sure which tools you need."),
    ] {
        let keyword = keyword_picks(&env, task);
        assert!(!keyword.is_empty());
        for _ in 0..2 {
            let run = pick_run(&env, &[task, "--scorer", "llm", "--debug"]);
            asked += 1;
            assert_keyword_fallback(
                &run,
                &keyword,
                &format!(
                    "the llm scorer failed (the model selected no known tool (it answered: {reply})); keyword scores instead"
                ),
            );
            assert_eq!(cache_files(&env), Vec::<PathBuf>::new());
            assert_eq!(bodies(&chat).await.len(), asked, "asked every time");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_failures_fall_back_to_keyword_with_the_reason() {
    let refused = chat_server(ResponseTemplate::new(401).set_body_string("no key")).await;
    let broken = chat_server(ResponseTemplate::new(500).set_body_string("overloaded")).await;
    let html = chat_server(ResponseTemplate::new(200).set_body_string("<html>hi</html>")).await;
    let no_choices = chat_server(
        ResponseTemplate::new(200).set_body_json(json!({ "object": "chat.completion" })),
    )
    .await;
    let no_message = chat_server(chat_answer("")).await;
    let dead = format!("http://127.0.0.1:{}/v1", dead_port());
    let cases = [
        (
            v1(&refused),
            format!(
                "{}/chat/completions wants an API key (HTTP 401) and none was given: no key; keys come from the catalog secrets ($XDG_CONFIG_HOME/toolctl/secrets.json or a TOOLCTL_SECRET_<NAME> variable)",
                v1(&refused)
            ),
        ),
        (
            v1(&broken),
            format!(
                "{}/chat/completions answered HTTP 500: overloaded",
                v1(&broken)
            ),
        ),
        (
            v1(&no_choices),
            format!(
                "{}/chat/completions answered without choices",
                v1(&no_choices)
            ),
        ),
        (
            v1(&no_message),
            format!(
                "{}/chat/completions answered without a message",
                v1(&no_message)
            ),
        ),
    ];
    let env = shop();
    let task = "fix the sink";
    let keyword = keyword_picks(&env, task);
    assert_eq!(refs(&keyword), [shop_ref("fix-sink")]);
    for (url, why) in &cases {
        set_endpoint(&env, "llm", json!({ "baseUrl": url, "model": "chooser" }));
        let started = Instant::now();
        let run = pick_run(&env, &[task, "--scorer", "llm", "--debug"]);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_keyword_fallback(
            &run,
            &keyword,
            &format!("the llm scorer failed ({why}); keyword scores instead"),
        );
    }
    // The messages of these depend on the parser or the OS: their start is enough.
    for (url, start) in [
        (
            v1(&html),
            format!("{}/chat/completions did not answer JSON (", v1(&html)),
        ),
        (
            dead.clone(),
            format!("cannot reach {dead}/chat/completions: "),
        ),
    ] {
        set_endpoint(&env, "llm", json!({ "baseUrl": url, "model": "chooser" }));
        let started = Instant::now();
        let run = pick_run(&env, &[task, "--scorer", "llm", "--debug"]);
        assert!(started.elapsed() < Duration::from_secs(5));
        run.success();
        let prefix = format!("warning: the llm scorer failed ({start}");
        assert!(run.stderr.starts_with(&prefix), "{run}");
        let reason = run.stderr["warning: ".len()..].trim_end().to_owned();
        assert!(reason.ends_with("; keyword scores instead"), "{run}");
        assert_keyword_fallback(&run, &keyword, &reason);
    }
    assert_eq!(cache_files(&env), Vec::<PathBuf>::new());
    // --quiet mutes the warning, not the answer.
    let quiet = env.run(&["--json", "-q", "pick", task, "--scorer", "llm"]);
    quiet.success();
    assert_eq!(quiet.stderr, "");
    assert_eq!(refs(&Picks::of(&quiet)), refs(&keyword));
    // Human mode: the keyword table, and the warning.
    let run = env.run(&["pick", task, "--scorer", "llm"]);
    run.success();
    assert!(run.stdout.contains("shop/fix-sink@v1"), "{run}");
    assert!(
        run.stderr
            .starts_with("warning: the llm scorer failed (cannot reach "),
        "{run}"
    );
}

/// Nothing to choose from: no request to any endpoint, an empty answer.
#[tokio::test(flavor = "multi_thread")]
async fn no_candidates_need_no_request() {
    let server = server_answering(chat_answer("[]")).await;
    let env = TestEnv::new();
    without_builtins(&env);
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m" }),
    );
    set_endpoint(&env, "llm", json!({ "baseUrl": v1(&server), "model": "m" }));
    env.bundle("u");
    env.put_tool_dated("u", &native("risky", 1, json!({ "safe": false })));
    for scorer in ["keyword", "bm25", "hybrid", "embed", "llm"] {
        assert_eq!(
            picks(&env, &["anything", "--scorer", scorer]),
            [],
            "{scorer}"
        );
        let run = env.run(&["pick", "anything", "--scorer", scorer]);
        run.success();
        assert_eq!(
            run.stdout,
            "no tool scores 0.05 or more for 'anything' (0 considered; --min-score lowers the bar, --allow-unsafe adds unsafe tools)\n"
        );
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
}
