//! The `embed` and `hybrid` scorers against a local embeddings server.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn embed_ranks_tools_by_cosine_similarity() {
    let server = embeddings_server().await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag" }),
    );
    let task = "paint the garden fence";
    let got = picks(
        &env,
        &[
            task,
            "--scorer",
            "embed",
            "--max",
            "128",
            "--min-score",
            "0",
            "--debug",
        ],
    );

    let sent = embedded(&server).await;
    assert_eq!(sent.len(), 2, "the task, then one batch of tools: {sent:?}");
    assert_eq!(sent[0], [task]);
    // Every safe tool once, with its words; the unsafe one is not a candidate.
    let texts = &sent[1];
    assert_eq!(
        texts
            .iter()
            .map(|t| slug_of_text(t))
            .collect::<BTreeSet<_>>(),
        SAFE_SHOP.into_iter().collect::<BTreeSet<_>>()
    );
    assert_eq!(texts.len(), SAFE_SHOP.len());
    for text in texts {
        let (_, description, tags, _) = SHOP
            .iter()
            .find(|(slug, ..)| *slug == slug_of_text(text))
            .unwrap();
        assert!(text.contains(description), "{text:?}");
        assert!(text.contains(tags[0]), "{text:?}");
    }

    // Each score is the cosine of the task's vector and the tool's.
    let query = bag_of_words(task);
    let expected: BTreeMap<String, f64> = texts
        .iter()
        .map(|t| {
            (
                shop_ref(slug_of_text(t)),
                round4(cosine(&query, &bag_of_words(t))),
            )
        })
        .collect();
    assert_eq!(got.len(), SAFE_SHOP.len());
    for p in &got {
        assert_close(p.score, expected[&p.reference], &p.reference);
        assert_eq!(p.reason, "semantic similarity (embeddings)");
        assert_eq!(
            p.provenance,
            Some(json!({ "scorer": "embed", "details": { "cosine": p.score } }))
        );
    }
    assert!(got.windows(2).all(|w| w[0].score >= w[1].score), "{got:?}");
    assert_eq!(got[0].reference, shop_ref("paint-fence"));
    assert!(got[0].score > got[1].score && got[1].score > 0.0, "{got:?}");
    assert_eq!(got[4].score, 0.0, "bread shares no word with the task");

    // With the defaults: the first three that reach 0.05.
    let default = picks(&env, &[task, "--scorer", "embed"]);
    let want: Vec<Pick> = got
        .iter()
        .filter(|p| p.score >= 0.05)
        .take(3)
        .map(|p| Pick {
            provenance: None,
            ..p.clone()
        })
        .collect();
    assert_eq!(default, want);
}

/// A tool is embedded as a model reads it best: its name's words, description and
/// tags, then its arguments' names and accepted values, nested ones too (not their
/// descriptions: long ones drown the tool's own words). So a task that names only a value a
/// tool's arguments take finds it: "in fahrenheit on the thermometer" shares no word with
/// either tool's name, description or tags.
#[tokio::test(flavor = "multi_thread")]
async fn embed_reads_the_arguments_names_and_values() {
    let server = embeddings_server().await;
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("units");
    env.put_tool_dated(
        "units",
        &native(
            "convert",
            1,
            json!({
                "description": "Converts a reading.",
                "tags": ["measure"],
                "argSchema": {
                    "type": "object",
                    "properties": {
                        "reading": {
                            "type": "object",
                            "properties": {
                                "targetUnit": {
                                    "type": "string",
                                    "description": "the scale of the thermometer",
                                    "enum": ["celsius", "fahrenheit"],
                                },
                            },
                        },
                    },
                },
                "safe": true,
            }),
        ),
    );
    env.put_tool_dated(
        "units",
        &native(
            "translate",
            2,
            json!({
                "description": "Converts a text.",
                "argSchema": {
                    "type": "object",
                    "properties": {
                        "language": { "type": "string", "description": "the target language" },
                    },
                },
                "safe": true,
            }),
        ),
    );
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag" }),
    );
    let got = picks(
        &env,
        &[
            "in fahrenheit on the thermometer",
            "--scorer",
            "embed",
            "--min-score",
            "0",
        ],
    );
    assert_eq!(got[0].reference, "units/convert@v1", "{got:?}");
    assert!(got[0].score > 0.0 && got[1].score == 0.0, "{got:?}");

    let sent = embedded(&server).await;
    let mut texts = sent[1].clone();
    texts.sort();
    assert_eq!(
        texts,
        [
            "convert. Converts a reading. Tags: measure. Arguments: reading target unit. \
             Values: celsius fahrenheit.",
            "translate. Converts a text. Arguments: language.",
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn embed_caches_tool_vectors_and_embeds_only_what_is_new() {
    let server = embeddings_server().await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag-1" }),
    );
    let first = picks(&env, &["paint the fence", "--scorer", "embed"]);
    assert_eq!(first[0].reference, shop_ref("paint-fence"));
    let sent = embedded(&server).await;
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1].len(), 5);
    assert!(state_dir(&env).join("embeddings.sqlite").is_file());

    // Again, and another task: only the task is sent.
    assert_eq!(
        picks(&env, &["paint the fence", "--scorer", "embed"]),
        first
    );
    let second = picks(&env, &["water the balcony plants", "--scorer", "embed"]);
    assert_eq!(second[0].reference, shop_ref("water-plants"));
    let sent = embedded(&server).await;
    assert_eq!(
        since(&sent, 2),
        [vec!["paint the fence"], vec!["water the balcony plants"]]
    );

    // One description edited by hand: that tool only.
    let file = crate::common::find_files(env.catalog(), "tool.json")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("/fix-sink/"))
        .unwrap();
    let mut doc = read_json(&file);
    doc["description"] = json!("Repair a leaking bathroom sink or a dripping shower.");
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let after = picks(&env, &["repair the bathroom shower", "--scorer", "embed"]);
    assert_eq!(after[0].reference, shop_ref("fix-sink"));
    let sent = embedded(&server).await;
    assert_eq!(sent.len(), 6, "{sent:?}");
    assert_eq!(sent[4], ["repair the bathroom shower"]);
    assert_eq!(sent[5].len(), 1, "{sent:?}");
    assert_eq!(slug_of_text(&sent[5][0]), "fix-sink");
    assert!(sent[5][0].contains("bathroom"), "{sent:?}");

    // --allow-unsafe adds a candidate: only it is sent.
    let unsafe_pick = picks(
        &env,
        &[
            "knock down the brick wall",
            "--scorer",
            "embed",
            "--allow-unsafe",
        ],
    );
    assert_eq!(unsafe_pick[0].reference, shop_ref("demolish-wall"));
    let sent = embedded(&server).await;
    assert_eq!(sent.len(), 8, "{sent:?}");
    assert_eq!(sent[7].len(), 1);
    assert_eq!(slug_of_text(&sent[7][0]), "demolish-wall");

    // Another model: every candidate again, in batches of batchSize.
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag-2", "batchSize": 2 }),
    );
    let other = picks(&env, &["paint the fence", "--scorer", "embed"]);
    assert_eq!(other, first, "the same vectors under another name");
    let sent = embedded(&server).await;
    let batches = since(&sent, 8);
    assert_eq!(
        batches.iter().map(Vec::len).collect::<Vec<_>>(),
        [1, 2, 2, 1],
        "{batches:?}"
    );
    assert_eq!(
        batches[1..]
            .iter()
            .flatten()
            .map(|t| slug_of_text(t))
            .collect::<BTreeSet<_>>(),
        SAFE_SHOP.into_iter().collect::<BTreeSet<_>>()
    );
    let models: Vec<Value> = bodies(&server).await[8..]
        .iter()
        .map(|b| b["model"].clone())
        .collect();
    assert_eq!(models, vec![json!("bag-2"); 4]);

    // The first model's vectors are still there.
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag-1" }),
    );
    assert_eq!(
        picks(&env, &["paint the fence", "--scorer", "embed"]),
        first
    );
    assert_eq!(embedded(&server).await.len(), 13);
}

#[tokio::test(flavor = "multi_thread")]
async fn embed_sends_the_api_key_of_a_catalog_secret_and_never_prints_it() {
    let server = embeddings_server().await;
    let env = shop();
    let secret = [("TOOLCTL_SECRET_SHOP_KEY", KEY)];
    // Without apiKeySecret, no key goes out, whatever the environment holds.
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m" }),
    );
    pick_run_with(&env, &["paint", "--scorer", "embed"], &secret).success();
    assert_eq!(authorizations(&server).await, [None, None]);

    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m2", "apiKeySecret": "SHOP_KEY" }),
    );
    // Named but not set: a validation error that says where keys come from.
    let err = env.json_error(&["pick", "paint", "--scorer", "embed"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(
        err.error.message,
        "pick.embed.apiKeySecret names the secret 'SHOP_KEY', which is not set"
    );
    assert!(
        err.error
            .hint
            .as_deref()
            .unwrap()
            .starts_with("set TOOLCTL_SECRET_SHOP_KEY, or add \"SHOP_KEY\" to the secrets file"),
        "{err:?}"
    );

    set_endpoint(
        &env,
        "llm",
        json!({ "baseUrl": v1(&server), "model": "m", "apiKeySecret": "CHAT_KEY" }),
    );
    let err = env.json_error(&["pick", "paint", "--scorer", "llm"], 3);
    assert_eq!(
        err.error.message,
        "pick.llm.apiKeySecret names the secret 'CHAT_KEY', which is not set"
    );
    // Other scorers do not need it.
    picks(&env, &["paint"]);

    // Set: a bearer token on every request (new tools, and the task), in no output.
    for args in [
        &[
            "--json",
            "pick",
            "paint the fence",
            "--scorer",
            "embed",
            "--debug",
        ][..],
        &["pick", "sink", "--scorer", "hybrid", "--debug"],
    ] {
        let mut cmd = env.command(args);
        cmd.env(secret[0].0, secret[0].1);
        let run = Run::of(cmd, None);
        run.success();
        assert_no_key(&run, KEY);
    }
    let auth = authorizations(&server).await;
    // Under another model: the task and the tools, then the task of the second pick.
    assert_eq!(auth.len(), 5, "{auth:?}");
    assert!(
        auth[2..]
            .iter()
            .all(|a| a.as_deref() == Some(&*format!("Bearer {KEY}"))),
        "{auth:?}"
    );

    // A server that refuses the key and quotes it back: the error names the URL, not the key.
    let refusing = server_answering(ResponseTemplate::new(401).set_body_string(format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}","type":"invalid_request_error"}}}}"#
    )))
    .await;
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&refusing), "model": "m", "apiKeySecret": "SHOP_KEY" }),
    );
    set_endpoint(
        &env,
        "llm",
        json!({ "baseUrl": v1(&refusing), "model": "m", "apiKeySecret": "SHOP_KEY" }),
    );
    let json_run = pick_run_with(&env, &["paint", "--scorer", "embed"], &secret);
    json_run.failure(7);
    assert_no_key(&json_run, KEY);
    let message = json_run.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.starts_with(&format!(
            "the embeddings endpoint failed: {}/embeddings refused the API key (HTTP 401): ",
            v1(&refusing)
        )),
        "{message}"
    );
    assert!(message.contains("Incorrect API key provided"), "{message}");
    let mut human = env.command(&["pick", "paint", "--scorer", "embed"]);
    human.env(secret[0].0, secret[0].1);
    let human = Run::of(human, None);
    human.failure(7);
    assert_no_key(&human, KEY);
    assert!(
        human.stderr.contains("refused the API key (HTTP 401)"),
        "{human}"
    );
    // The llm scorer falls back, and says why, without the key either.
    let llm = pick_run_with(&env, &["paint", "--scorer", "llm", "--debug"], &secret);
    llm.success();
    assert_no_key(&llm, KEY);
    assert!(
        llm.stderr.contains(&format!(
            "{}/chat/completions refused the API key (HTTP 401)",
            v1(&refusing)
        )),
        "{llm}"
    );
    assert_eq!(
        authorizations(&refusing).await,
        vec![Some(format!("Bearer {KEY}")); 3]
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn embed_reads_the_api_key_from_the_secrets_file() {
    use std::os::unix::fs::PermissionsExt;
    let server = embeddings_server().await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m", "apiKeySecret": "FILE_KEY" }),
    );
    let file = env.root().join("xdg-config/toolctl/secrets.json");
    write_file(
        &file,
        &json!({ "FILE_KEY": "sk-from-file-93a1" }).to_string(),
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let run = pick_run(&env, &["paint", "--scorer", "embed", "--debug"]);
    run.success();
    assert_no_key(&run, "sk-from-file-93a1");
    assert_eq!(
        authorizations(&server).await,
        vec![Some("Bearer sk-from-file-93a1".to_owned()); 2]
    );
    // The environment comes first.
    pick_run_with(
        &env,
        &["paint", "--scorer", "embed"],
        &[("TOOLCTL_SECRET_FILE_KEY", "sk-from-env-55")],
    )
    .success();
    assert_eq!(
        authorizations(&server).await[2..],
        [Some("Bearer sk-from-env-55".to_owned())]
    );
    // A file others can read is refused, and nothing is sent.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = env.json_error(&["pick", "paint", "--scorer", "embed"], 6);
    assert_eq!(err.error.code, "FORBIDDEN");
    assert!(
        err.error
            .message
            .contains("its mode is 644: others can read it"),
        "{err:?}"
    );
    assert!(!format!("{err:?}").contains("sk-from-file-93a1"));
    assert_eq!(authorizations(&server).await.len(), 3);
}

/// Regression: a secrets file others can read failed `pick` without the hint (`chmod 600
/// <file>`) and details (`path`) the same failure has under `invoke`: `endpoint()` in
/// `src/cli/cmd/pick.rs` rebuilt the error from the code and message only. Fixed by passing the
/// failure on as `invoke` does (`From<Failure> for CliError`), hint and details kept.
#[cfg(unix)]
#[test]
fn regression_pick_keeps_the_hint_of_a_secrets_file_others_can_read() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": format!("http://127.0.0.1:{}/v1", dead_port()), "model": "m", "apiKeySecret": "FILE_KEY" }),
    );
    let file = env.root().join("xdg-config/toolctl/secrets.json");
    write_file(
        &file,
        &json!({ "FILE_KEY": "sk-from-file-93a1" }).to_string(),
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = env.json_error(&["pick", "paint", "--scorer", "embed"], 6);
    assert_eq!(err.error.code, "FORBIDDEN");
    assert_eq!(
        err.error.hint.as_deref(),
        Some(&*format!("chmod 600 {}", file.display())),
        "{err:?}"
    );
    assert_eq!(err.error.details, json!({ "path": file }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn embed_endpoint_failures_are_quick_clear_errors() {
    let env = shop();
    let refused =
        server_answering(ResponseTemplate::new(401).set_body_string(r#"{"error":"unauthorized"}"#))
            .await;
    let broken = server_answering(ResponseTemplate::new(500).set_body_string("boom")).await;
    let html =
        server_answering(ResponseTemplate::new(200).set_body_string("<html>hello</html>")).await;
    let no_data =
        server_answering(ResponseTemplate::new(200).set_body_json(json!({ "object": "list" })))
            .await;
    let no_vectors =
        server_answering(ResponseTemplate::new(200).set_body_json(json!({ "data": [] }))).await;
    let dead = format!("http://127.0.0.1:{}/v1", dead_port());
    let cases = [
        (
            v1(&refused),
            format!(
                "{}/embeddings wants an API key (HTTP 401) and none was given",
                v1(&refused)
            ),
        ),
        (
            v1(&broken),
            format!("{}/embeddings answered HTTP 500: boom", v1(&broken)),
        ),
        (
            v1(&html),
            format!("{}/embeddings did not answer JSON", v1(&html)),
        ),
        (
            v1(&no_data),
            format!(
                "{}/embeddings answered without a `data` array of embeddings",
                v1(&no_data)
            ),
        ),
        (
            v1(&no_vectors),
            format!(
                "{}/embeddings returned 0 vectors for 1 texts",
                v1(&no_vectors)
            ),
        ),
        (dead.clone(), format!("cannot reach {dead}/embeddings")),
    ];
    for (url, what) in &cases {
        // The endpoint's failure, after what failed (embed and hybrid have no fallback).
        let expected = format!("the embeddings endpoint failed: {what}");
        set_endpoint(&env, "embed", json!({ "baseUrl": url, "model": "m" }));
        for scorer in ["embed", "hybrid"] {
            let started = Instant::now();
            let err = env.json_error(&["pick", "paint", "--scorer", scorer], 7);
            assert!(started.elapsed() < Duration::from_secs(5), "{expected}");
            assert_eq!(err.error.code, "UPSTREAM_ERROR");
            assert!(
                err.error.message.starts_with(expected.as_str()),
                "{scorer}: {err:?}"
            );
            assert_eq!(
                err.error.hint.as_deref(),
                Some(
                    "check pick.embed in toolctl.json (baseUrl, model, apiKeySecret) or --embed-url/--embed-model"
                )
            );
        }
        let run = env.run(&["pick", "paint", "--scorer", "embed"]);
        run.failure(7);
        assert_eq!(run.stdout, "");
        assert!(
            run.stderr.starts_with(&format!("error: {expected}")),
            "{run}"
        );
        assert!(!run.stderr.contains("panicked"), "{run}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn flags_override_the_endpoints_of_toolctl_json() {
    let embeddings = embeddings_server().await;
    let chat = chat_server(Replies(vec![("bake bread", r#"["bake-bread"]"#.into())])).await;
    let env = shop();
    let dead = format!("http://127.0.0.1:{}/v1", dead_port());
    set_endpoint(&env, "embed", json!({ "baseUrl": dead, "model": "config" }));
    set_endpoint(&env, "llm", json!({ "baseUrl": dead, "model": "config" }));
    // A trailing slash is fine.
    let url = format!("{}/", v1(&embeddings));
    let got = picks(
        &env,
        &[
            "bake bread",
            "--scorer",
            "embed",
            "--embed-url",
            &url,
            "--embed-model",
            "flag",
        ],
    );
    assert_eq!(got[0].reference, shop_ref("bake-bread"));
    let sent = bodies(&embeddings).await;
    assert!(sent.iter().all(|b| b["model"] == "flag"), "{sent:?}");
    assert!(
        embeddings
            .received_requests()
            .await
            .unwrap()
            .iter()
            .all(|r| r.url.path() == "/v1/embeddings")
    );
    // The model alone by flag: the URL from toolctl.json.
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&embeddings), "model": "config" }),
    );
    picks(
        &env,
        &["bake bread", "--scorer", "embed", "--embed-model", "flag-2"],
    );
    assert_eq!(bodies(&embeddings).await.last().unwrap()["model"], "flag-2");

    let got = picks(
        &env,
        &[
            "bake bread",
            "--scorer",
            "llm",
            "--llm-url",
            &v1(&chat),
            "--llm-model",
            "flag",
        ],
    );
    assert_eq!(refs(&got), [shop_ref("bake-bread")]);
    assert_eq!(got[0].reason, "chosen by flag (place 1)");
    assert_eq!(bodies(&chat).await[0]["model"], "flag");
}

#[tokio::test(flavor = "multi_thread")]
async fn hybrid_fuses_min_max_normalised_bm25_and_semantic_by_0_4_and_0_6() {
    let server = embeddings_server().await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag" }),
    );
    let task = "garden fence";
    let run = |scorer: &str| {
        picks(
            &env,
            &[
                task,
                "--scorer",
                scorer,
                "--max",
                "128",
                "--min-score",
                "0",
                "--debug",
            ],
        )
    };
    let lexical = run("bm25");
    let embed = run("embed");
    let hybrid = run("hybrid");
    let score_of = |list: &[Pick], r: &str| list.iter().find(|p| p.reference == r).unwrap().clone();
    assert_eq!(hybrid.len(), SAFE_SHOP.len());
    // Each list min-max normalised over the candidates, then 0.4 lexical + 0.6 semantic.
    let range = |list: &[Pick]| {
        let scores = list.iter().map(|p| p.score);
        let min = scores.clone().fold(f64::INFINITY, f64::min);
        (min, scores.fold(f64::NEG_INFINITY, f64::max) - min)
    };
    let ((l_min, l_range), (e_min, e_range)) = (range(&lexical), range(&embed));
    assert!(l_range > 0.0 && e_range > 0.0);
    for h in &hybrid {
        let l = score_of(&lexical, &h.reference);
        let e = score_of(&embed, &h.reference);
        let want = 0.4 * (l.score - l_min) / l_range + 0.6 * (e.score - e_min) / e_range;
        assert!(
            (h.score - want).abs() < 1e-3,
            "{}: {} vs 0.4 × norm({}) + 0.6 × norm({})",
            h.reference,
            h.score,
            l.score,
            e.score
        );
        assert_eq!(h.reason, "hybrid (search relevance + semantic)");
        let provenance = h.provenance.clone().unwrap();
        assert_eq!(provenance["scorer"], "hybrid");
        assert_eq!(
            provenance["details"]["weights"],
            json!({ "lexical": 0.4, "semantic": 0.6 })
        );
        assert_eq!(
            provenance["details"]["subScores"],
            json!({ "lexical": l.score, "semantic": e.score })
        );
    }
    assert!(hybrid.windows(2).all(|w| w[0].score >= w[1].score));
    assert_eq!(hybrid[0].reference, shop_ref("paint-fence"));
}
