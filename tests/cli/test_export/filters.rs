//! Schema fidelity (the canonical schema is sent as it is, never changed), filters and which tools go out.

use super::*;

#[test]
fn verbatim_providers_keep_the_schema_byte_for_byte() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("b");
    // Keys in no alphabetical order anywhere, `$defs`, an enum in its own order, nested arrays.
    let schema = json!({
        "type": "object",
        "required": ["zeta", "alpha"],
        "properties": {
            "zeta": { "type": "string", "enum": ["c", "a", "b"], "description": "Z first." },
            "alpha": { "$ref": "#/$defs/matrix" },
            "mid": { "maxLength": 9, "type": "string", "minLength": 1 }
        },
        "$defs": {
            "matrix": {
                "type": "array",
                "items": { "type": "array", "items": { "type": "object", "properties": { "y": { "type": "number" }, "x": { "type": "number" } } } }
            }
        },
        "additionalProperties": false,
        "description": "Order matters to nobody but us."
    });
    env.put_tool("b", &with_schema("ordered", "Ordered.", &schema));
    let stored = std::fs::read_to_string(env.tool_file(&bundle_id, "ordered", "v1")).unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(
        ordered(&stored["argSchema"]),
        ordered(&schema),
        "tool put kept the order"
    );
    let canonical = ordered(&schema);
    for provider in VERBATIM {
        let run = env.run(&["export", "--provider", provider, "--bundle", "b"]);
        run.success();
        assert!(
            squeeze(&run.stdout).contains(&canonical),
            "{provider}: the schema is not in the output as written\n{canonical}\n{}",
            run.stdout
        );
    }
}

#[test]
fn export_never_changes_the_catalog_files() {
    let env = TestEnv::fixture();
    let before = catalog_files(env.catalog());
    assert!(before.keys().filter(|p| p.ends_with("tool.json")).count() >= 28);
    for provider in PROVIDERS {
        for extra in [&[][..], &["--include-disabled"][..]] {
            let mut args = vec!["export", "--provider", provider, "--lenient"];
            args.extend_from_slice(extra);
            env.run(&args).success();
        }
    }
    for provider in ["openai", "openai-responses"] {
        env.run(&["export", "--provider", provider, "--strict", "--lenient"])
            .success();
    }
    let after = catalog_files(env.catalog());
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &before {
        assert!(after[path] == *bytes, "{} changed", path.display());
    }
}

#[test]
fn bundle_filter_takes_slugs_and_ids() {
    let env = TestEnv::fixture();
    // The weather bundle, whole: OpenAI takes every tool of it.
    let weather = [
        "current-conditions",
        "air-quality",
        "weather-alerts",
        "forecast",
    ];
    let (by_slug, left_out) = export_lenient(
        &env,
        &["--provider", "openai", "--bundle", "weather", "--lenient"],
    );
    assert_eq!(names_of("openai", &by_slug), weather);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
    let (by_id, left_out) = export_lenient(
        &env,
        &[
            "--provider",
            "openai",
            "--bundle",
            "018e2cbd-7e80-7dc2-87bd-2676e9d1e07b",
            "--lenient",
        ],
    );
    assert_eq!(names_of("openai", &by_id), weather);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
    // Ollama takes all four.
    let all_weather = export(&env, &["--provider", "ollama", "--bundle", "weather"]);
    assert_eq!(
        names_of("ollama", &all_weather),
        [
            "current-conditions",
            "air-quality",
            "weather-alerts",
            "forecast"
        ]
    );
    let two = export(
        &env,
        &[
            "--provider",
            "mcp",
            "--bundle",
            "files",
            "--bundle",
            "builtin",
        ],
    );
    assert_eq!(
        names_of("mcp", &two),
        [
            "readfile",
            "file-search",
            "now",
            "read-notes",
            "find-docs",
            "current-time",
            "read-config"
        ]
    );
    let run = env.run(&[
        "--json",
        "export",
        "--provider",
        "openai",
        "--bundle",
        "nope",
    ]);
    run.failure(4);
    assert_eq!(run.json()["error"]["code"], "NOT_FOUND");
}

#[test]
fn tag_filter_needs_every_tag() {
    let env = TestEnv::fixture();
    assert_eq!(
        names_of(
            "openai",
            &export(&env, &["--provider", "openai", "--tag", "write"])
        ),
        [
            "create-issue",
            "create-event",
            "update-event",
            "delete-event",
            "add-issue-comment"
        ]
    );
    assert_eq!(
        names_of(
            "openai",
            &export(
                &env,
                &[
                    "--provider",
                    "openai",
                    "--tag",
                    "write",
                    "--tag",
                    "calendar"
                ]
            )
        ),
        ["create-event", "update-event", "delete-event"]
    );
    assert_eq!(
        export(&env, &["--provider", "openai", "--tag", "no-such-tag"]),
        json!([])
    );
    // With --bundle: both filters apply.
    assert_eq!(
        names_of(
            "openai",
            &export(
                &env,
                &[
                    "--provider",
                    "openai",
                    "--tag",
                    "write",
                    "--bundle",
                    "github"
                ]
            )
        ),
        ["create-issue", "add-issue-comment"]
    );
}

#[test]
fn tool_filter_takes_refs_ids_and_exported_names() {
    let env = TestEnv::fixture();
    let one = |tool: &str| export(&env, &["--provider", "openai", "--tool", tool]);
    // bundle/slug and the bare slug mean the newest enabled version; @version names one.
    for tool in [
        "weather/forecast",
        "forecast",
        "0195189b-8440-7aa9-af42-ed08a234ca69",
    ] {
        let list = one(tool);
        assert_eq!(names_of("openai", &list), ["forecast"], "{tool}");
        assert!(
            list[0]["function"]["parameters"]["properties"]
                .get("hours")
                .is_some(),
            "{tool}: not v2.1"
        );
    }
    let v2 = one("weather/forecast@v2");
    assert_eq!(names_of("openai", &v2), ["forecast"]);
    assert!(
        v2[0]["function"]["parameters"]["properties"]
            .get("days")
            .is_some(),
        "not v2"
    );
    // Several tools, in the order asked; a tool named twice goes out once.
    let list = export(
        &env,
        &[
            "--provider",
            "anthropic",
            "--tool",
            "now",
            "--tool",
            "github/get-repo",
            "--name",
            "now",
        ],
    );
    assert_eq!(names_of("anthropic", &list), ["now", "get-repo"]);
    // Still within the other filters.
    let list = export(
        &env,
        &[
            "--provider",
            "anthropic",
            "--tool",
            "now",
            "--tool",
            "github/get-repo",
            "--bundle",
            "github",
        ],
    );
    assert_eq!(names_of("anthropic", &list), ["get-repo"]);
    // A disabled or unusable tool named explicitly is an error, unless --include-disabled.
    for (tool, status) in [
        (
            "search/image-search",
            "search/image-search@v1 cannot be exported: disabled",
        ),
        (
            "finance/stock-quote",
            "finance/stock-quote@v1 cannot be exported: bundle disabled",
        ),
    ] {
        let error = env.json_error(&["export", "--provider", "openai", "--tool", tool], 6);
        assert_eq!(error.error.code, "TOOL_DISABLED");
        assert_eq!(error.error.message, status);
        assert_eq!(
            error.error.hint.as_deref(),
            Some("--include-disabled exports disabled and unavailable tools too")
        );
    }
    let list = export(
        &env,
        &[
            "--provider",
            "openai",
            "--tool",
            "search/image-search",
            "--tool",
            "finance/stock-quote",
            "--include-disabled",
        ],
    );
    assert_eq!(names_of("openai", &list), ["image-search", "stock-quote"]);
    let error = env.json_error(&["export", "--provider", "openai", "--tool", "nope"], 4);
    assert_eq!(error.error.code, "NOT_FOUND");
}

#[test]
fn include_disabled_adds_disabled_and_unavailable_tools() {
    let env = TestEnv::fixture_with_legacy_tool();
    let (list, left_out) = export_lenient(
        &env,
        &["--provider", "openai", "--include-disabled", "--lenient"],
    );
    // Only `air-quality` is left out: none of the tools added is one OpenAI cannot take.
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
    let names = names_of("openai", &list);
    let default: BTreeSet<&str> = FIXTURE_EXPORT
        .iter()
        .filter(|(_, r)| !FIXTURE_NOT_OBJECT_ROOT.contains(r))
        .map(|(n, _)| *n)
        .collect();
    let added: BTreeSet<&str> = names
        .iter()
        .copied()
        .filter(|n| !default.contains(n))
        .collect();
    assert_eq!(
        added,
        BTreeSet::from([
            "currency-convert",
            "exchange-rates",
            "stock-quote",
            "image-search",
            "weather-report",
            "exec"
        ])
    );
    assert_eq!(names.len(), default.len() + added.len());
    // Still one version of forecast, the newest enabled one.
    assert_eq!(names.iter().filter(|n| **n == "forecast").count(), 1);
    let finance = export(&env, &["--provider", "openai", "--bundle", "finance"]);
    assert_eq!(finance, json!([]));
    let finance = export(
        &env,
        &[
            "--provider",
            "openai",
            "--bundle",
            "finance",
            "--include-disabled",
        ],
    );
    assert_eq!(
        names_of("openai", &finance),
        ["currency-convert", "stock-quote", "exchange-rates"]
    );
}

#[test]
fn one_version_per_slug_the_newest_enabled() {
    let env = TestEnv::fixture();
    let forecast = |extra: &[&str]| {
        // --lenient: the weather bundle holds `air-quality`, which OpenAI cannot take.
        let mut args = vec!["--provider", "openai", "--bundle", "weather", "--lenient"];
        args.extend_from_slice(extra);
        let (list, left_out) = export_lenient(&env, &args);
        assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
        let entries: Vec<Value> = list
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["function"]["name"] == "forecast")
            .cloned()
            .collect();
        assert_eq!(entries.len(), 1, "{list:#}");
        entries[0]["function"].clone()
    };
    let newest = forecast(&[]);
    assert!(
        newest["description"]
            .as_str()
            .unwrap()
            .starts_with("Get an hour-by-hour weather forecast")
    );
    let properties = keys(&newest["parameters"]["properties"]);
    assert_eq!(properties, ["city", "hours", "units"]);
    // With v2.1 disabled, v2 stands for the slug (with or without --include-disabled).
    env.run(&["tool", "disable", "weather/forecast@v2.1"])
        .success();
    for extra in [&[][..], &["--include-disabled"][..]] {
        let older = forecast(extra);
        assert_eq!(
            keys(&older["parameters"]["properties"]),
            ["city", "days", "units"]
        );
        assert!(
            older["description"]
                .as_str()
                .unwrap()
                .starts_with("Get the weather forecast for a city for up to 7 days")
        );
    }
}

#[test]
fn a_tool_without_arg_schema_is_refused_where_it_shows() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("b");
    // `tool put` refuses such a tool, so it is written by hand: it loads as unavailable.
    write_tool_file(&env, &bundle_id, 1, "schemaless", None);
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));
    assert_eq!(
        names_of(
            "openai",
            &export(&env, &["--provider", "openai", "--bundle", "b"])
        ),
        ["fine"]
    );
    for provider in PROVIDERS {
        let error = env.json_error(
            &[
                "export",
                "--provider",
                provider,
                "--bundle",
                "b",
                "--include-disabled",
            ],
            3,
        );
        let refused = refused_problems(&error);
        assert_eq!(
            refused.keys().collect::<Vec<_>>(),
            ["b/schemaless@v1"],
            "{provider}"
        );
        let (keyword, pointer, message) = &refused["b/schemaless@v1"][0];
        assert_eq!(
            (keyword.as_str(), pointer.as_str()),
            ("argSchema", "/argSchema"),
            "{provider}"
        );
        assert!(message.contains("allowNoSchema"), "{message}");
        let run = env.run(&[
            "export",
            "--provider",
            provider,
            "--bundle",
            "b",
            "--include-disabled",
            "--lenient",
        ]);
        run.success();
        assert_eq!(names_of(provider, &run.json()), ["fine"]);
        assert_eq!(left_out_refs(&run.stderr), ["b/schemaless@v1"]);
    }
}
