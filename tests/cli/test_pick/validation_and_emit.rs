//! Validation, the time limit, `--emit`.

use super::*;

#[test]
fn invalid_requests_are_validation_errors_with_a_hint() {
    let env = TestEnv::new();
    let cases: &[(&[&str], &str, &str)] = &[
        (&[""], "the task is empty", "say what the tools are for"),
        (
            &["  ", " "],
            "the task is empty",
            "say what the tools are for",
        ),
        (
            &["x", "--max", "0"],
            "--max 0 is out of range",
            "pick 1 to 128",
        ),
        (
            &["x", "--max", "129"],
            "--max 129 is out of range",
            "pick 1 to 128",
        ),
        (
            &["x", "--min-score", "1.5"],
            "--min-score 1.5 is out of range",
            "between 0 and 1",
        ),
        (
            &["x", "--min-score=-0.1"],
            "--min-score -0.1 is out of range",
            "between 0 and 1",
        ),
        (
            &["x", "--min-score", "NaN"],
            "--min-score NaN is out of range",
            "between 0 and 1",
        ),
        (
            &["x", "--scorer", "embed"],
            "the embed scorer needs an embeddings endpoint",
            "set pick.embed.baseUrl and model in toolctl.json, or pass --embed-url and --embed-model",
        ),
        (
            &["x", "--scorer", "hybrid"],
            "the hybrid scorer needs an embeddings endpoint",
            "set pick.embed.baseUrl and model in toolctl.json, or pass --embed-url and --embed-model",
        ),
        (
            &[
                "x",
                "--scorer",
                "embed",
                "--embed-url",
                "http://127.0.0.1:9/v1",
            ],
            "the embed scorer needs an embeddings endpoint",
            "--embed-model",
        ),
        (
            &["x", "--scorer", "llm"],
            "the llm scorer needs a chat endpoint",
            "set pick.llm.baseUrl and model in toolctl.json, or pass --llm-url and --llm-model",
        ),
    ];
    for (args, message, hint) in cases {
        let mut all = vec!["pick"];
        all.extend_from_slice(args);
        let err = env.json_error(&all, 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{args:?}");
        assert_eq!(err.error.message, *message, "{args:?}");
        let got = err.error.hint.unwrap_or_default();
        assert!(got.contains(hint), "{args:?}: hint {got:?}");
        // Human mode: the same on stderr, nothing on stdout.
        let run = env.run(&all);
        run.failure(3);
        assert_eq!(run.stdout, "");
        assert!(
            run.stderr.starts_with(&format!("error: {message}\n")),
            "{run}"
        );
        assert!(run.stderr.contains(hint), "{run}");
    }
}

#[test]
fn command_line_mistakes_are_usage_errors() {
    let env = TestEnv::new();
    let run = env.run(&["--json", "pick", "x", "--scorer", "magic"]);
    run.failure(2);
    let doc = run.json();
    assert_eq!(doc["error"]["code"], "VALIDATION_ERROR");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("invalid value 'magic' for '--scorer <NAME>'")
            && message
                .matches("possible values: keyword, bm25, fused, hybrid, embed, llm")
                .count()
                == 1,
        "{run}"
    );
    assert_eq!(
        doc["error"]["details"]["possibleValues"],
        serde_json::json!(["keyword", "bm25", "fused", "hybrid", "embed", "llm"])
    );
    let run = env.run(&["pick", "x", "--scorer", "magic"]);
    run.failure(2);
    assert!(
        run.stderr
            .contains("invalid value 'magic' for '--scorer <NAME>'\n  [possible values: keyword, bm25, fused, hybrid, embed, llm]"),
        "{run}"
    );
    for args in [
        &["pick"][..],
        &["pick", "x", "--max", "-1"],
        &["pick", "x", "--max", "three"],
        &["pick", "x", "--min-score", "high"],
        &["pick", "x", "--strict"],
        &["pick", "x", "--lenient"],
        &["pick", "x", "--emit", "carrier-pigeon"],
        &["pick", "x", "--timeout-ms", "-5"],
    ] {
        env.run(args).failure(2);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_past_the_time_limit_falls_back_to_registration_order() {
    let server =
        chat_server(chat_answer(r#"["bake-bread"]"#).set_delay(Duration::from_secs(15))).await;
    let env = shop();
    set_endpoint(
        &env,
        "llm",
        json!({ "baseUrl": v1(&server), "model": "chooser" }),
    );
    let started = Instant::now();
    let run = pick_run(
        &env,
        &[
            "bake bread",
            "--scorer",
            "llm",
            "--timeout-ms",
            "300",
            "--debug",
        ],
    );
    assert_registration_order_fallback(&run, started.elapsed());
    // Nothing cached: the next pick asks again (and is cut short again).
    assert_eq!(cache_files(&env), Vec::<PathBuf>::new());
    let started = Instant::now();
    let run = pick_run(
        &env,
        &[
            "bake bread",
            "--scorer",
            "llm",
            "--timeout-ms",
            "300",
            "--debug",
        ],
    );
    assert_registration_order_fallback(&run, started.elapsed());
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn embed_and_hybrid_past_the_time_limit_fall_back_to_registration_order() {
    let server = server_answering(
        ResponseTemplate::new(200)
            .set_body_json(json!({ "data": [] }))
            .set_delay(Duration::from_secs(15)),
    )
    .await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m" }),
    );
    for scorer in ["embed", "hybrid"] {
        let started = Instant::now();
        let run = pick_run(
            &env,
            &[
                "bake bread",
                "--scorer",
                scorer,
                "--timeout-ms",
                "300",
                "--debug",
            ],
        );
        assert_registration_order_fallback(&run, started.elapsed());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_timeout_bounds_every_request_without_a_time_limit() {
    // No --timeout-ms: pick.*.timeoutMs bounds each request; embed fails, llm falls back.
    let server = server_answering(chat_answer("[]").set_delay(Duration::from_secs(15))).await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m", "timeoutMs": 300 }),
    );
    set_endpoint(
        &env,
        "llm",
        json!({ "baseUrl": v1(&server), "model": "chooser", "timeoutMs": 300 }),
    );
    let started = Instant::now();
    let err = env.json_error(&["pick", "bake bread", "--scorer", "embed"], 7);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert_eq!(
        err.error.message,
        format!(
            "the embeddings endpoint failed: {}/embeddings did not answer within 300 ms",
            v1(&server)
        )
    );

    let started = Instant::now();
    let run = pick_run(&env, &["bake bread", "--scorer", "llm"]);
    assert!(started.elapsed() < Duration::from_secs(5));
    run.success();
    let reason = format!(
        "the llm scorer failed ({}/chat/completions did not answer within 300 ms); keyword scores instead",
        v1(&server)
    );
    assert_eq!(run.stderr, format!("warning: {reason}\n"));
    assert_eq!(refs(&Picks::of(&run)), [shop_ref("bake-bread")]);
}

#[test]
fn a_time_limit_the_scorer_meets_changes_nothing() {
    let env = nato();
    assert_eq!(
        picks(&env, &[NATO, "--timeout-ms", "30000"]),
        picks(&env, &[NATO])
    );
}

#[test]
fn emit_prints_the_picked_tools_in_pick_order_as_export_does() {
    let env = TestEnv::fixture();
    for (task, flags) in [
        ("weather forecast and air quality", &[][..]),
        (
            "create a calendar event or a github issue",
            &["--allow-unsafe", "--max", "5"][..],
        ),
    ] {
        let mut pick_args = vec![task];
        pick_args.extend_from_slice(flags);
        let picked = picks(&env, &pick_args);
        assert_eq!(picked.len(), flags.get(2).map_or(3, |n| n.parse().unwrap()));
        // Every provider takes every fixture tool as it is; strict mode refuses some
        // ([`not_taken`]), which --lenient leaves out, with a warning.
        let variants = PROVIDERS
            .iter()
            .map(|p| {
                (
                    *p,
                    if *p == "ollama" {
                        &[][..]
                    } else {
                        &["--lenient"][..]
                    },
                )
            })
            .chain([
                ("openai", &["--strict", "--lenient"][..]),
                ("openai-responses", &["--strict", "--lenient"][..]),
            ]);
        for (provider, extra) in variants {
            let label = format!("{task:?} --emit {provider} {extra:?}");
            let mut args = pick_args.clone();
            args.extend(["--emit", provider]);
            args.extend_from_slice(extra);
            let mut export = vec!["--json", "export", "--provider", provider];
            export.extend_from_slice(extra);
            for p in &picked {
                export.extend(["--tool", p.name.as_str()]);
            }
            let run = pick_run(&env, &args);
            run.success();
            let exported = env.run(&export);
            exported.success();
            // The same warnings for the tools the provider cannot take (--lenient).
            assert_eq!(run.stderr, exported.stderr, "{label}");
            let exported: BTreeMap<String, Value> = provider_items(provider, &exported.json())
                .into_iter()
                .collect();
            let emitted = provider_items(provider, &run.json());
            // The pick's names, in the pick's order (less what --lenient left out)…
            let kept: Vec<&str> = names(&picked)
                .into_iter()
                .filter(|n| exported.contains_key(*n))
                .collect();
            assert_eq!(
                emitted.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
                kept,
                "{label}"
            );
            // …and exactly what the provider cannot take is left out.
            let refused = not_taken(provider, extra.contains(&"--strict"));
            let expected: Vec<&str> = picked
                .iter()
                .filter(|p| !refused.contains(&p.reference.as_str()))
                .map(|p| p.name.as_str())
                .collect();
            assert_eq!(kept, expected, "{label}");
            if extra.is_empty() {
                assert_eq!(kept, names(&picked), "{label}");
            }
            // …each exactly as export prints it.
            for (name, item) in &emitted {
                assert_eq!(
                    crate::common::ordered(item),
                    crate::common::ordered(&exported[name]),
                    "{label}: {name}"
                );
            }
            // Human mode prints the same document.
            let mut human = vec!["pick"];
            human.extend_from_slice(&args);
            if !args.contains(&"--scorer") {
                human.extend_from_slice(&["--scorer", "keyword"]);
            }
            let human = env.run(&human);
            human.success();
            assert_eq!(human.json(), run.json(), "{label}");
        }
    }
    // Without --lenient: a tool the provider cannot take is an error naming it, its keyword
    // and pointer, as export's. OpenAI strict mode refuses the `dependentRequired` of the picked
    // `air-quality` (every other provider takes the fixture catalog whole).
    {
        let (provider, extra) = ("openai", &["--strict"][..]);
        let label = format!("--emit {provider} {extra:?}");
        let mut args = vec![
            "pick",
            "weather forecast and air quality",
            "--emit",
            provider,
        ];
        args.extend_from_slice(extra);
        let err = env.json_error(&args, 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{label}");
        assert_eq!(
            err.error.message,
            format!("{provider} cannot take 1 of the tools as they are"),
            "{label}"
        );
        let tools = &err.error.details["tools"];
        assert_eq!(tools.as_array().map(Vec::len), Some(1), "{label}: {err:?}");
        assert_eq!(
            tools[0]["ref"], "weather/air-quality@v1",
            "{label}: {err:?}"
        );
        assert_eq!(
            tools[0]["problems"][0]["keyword"], "dependentRequired",
            "{label}: {err:?}"
        );
        assert_eq!(
            tools[0]["problems"][0]["pointer"], "/argSchema",
            "{label}: {err:?}"
        );
        assert_eq!(
            err.error.hint.as_deref().map(|h| h.contains("--lenient")),
            Some(true),
            "{label}: {err:?}"
        );
    }
    let lenient = pick_run(
        &env,
        &[
            "weather forecast and air quality",
            "--emit",
            "openai",
            "--strict",
            "--lenient",
        ],
    );
    assert!(lenient.stderr.contains("air-quality"), "{lenient}");
    assert_eq!(
        provider_items("openai", &lenient.json())
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>(),
        ["forecast", "current-conditions"]
    );

    // Nothing picked: an empty array.
    let run = pick_run(&env, &["zyzzyva", "--emit", "anthropic"]);
    run.success();
    assert_eq!(run.json(), json!([]));
}

#[test]
fn picked_names_are_the_exported_names_even_when_slugs_collide() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("alpha");
    env.bundle("beta");
    env.put_tool_dated("alpha", &native("lookup", 1, json!({})));
    env.put_tool_dated("beta", &native("lookup", 2, json!({})));
    let got = picks(&env, &["lookup"]);
    assert_eq!(refs(&got), ["alpha/lookup@v1", "beta/lookup@v1"]);
    assert_eq!(names(&got), ["alpha__lookup", "beta__lookup"]);
    assert_eq!(got[0].reason, "matched keywords in alpha__lookup: lookup");
    let exported: Vec<String> = provider_items(
        "openai",
        &env.run(&["--json", "export", "--provider", "openai"])
            .success()
            .json(),
    )
    .into_iter()
    .map(|(n, _)| n)
    .collect();
    assert_eq!(exported, names(&got));
    // invoke takes each picked name back to its tool.
    for p in &got {
        let run = env.run(&["--json", "invoke", &p.name, "--args", "{}"]);
        run.success();
        assert_eq!(run.json()["ok"], true, "{run}");
    }
}
