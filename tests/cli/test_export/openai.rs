//! OpenAI: Chat Completions and Responses, the tool limit, and strict mode (a transformed copy of the schema).

use super::*;

#[test]
fn openai_chat_wraps_each_tool_in_a_function_object() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = weather_schema();
    env.put_tool("b", &with_schema("weather", "Weather for a city.", &schema));
    let list = export(&env, &["--provider", "openai", "--bundle", "b"]);
    let expected = json!([{
        "type": "function",
        "function": { "name": "weather", "description": "Weather for a city.", "parameters": schema }
    }]);
    assert_eq!(ordered(&list), ordered(&expected));
}

#[test]
fn openai_responses_is_flat_and_says_strict() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = weather_schema();
    env.put_tool("b", &with_schema("weather", "Weather for a city.", &schema));
    let list = export(&env, &["--provider", "openai-responses", "--bundle", "b"]);
    // Responses turns strict mode on unless told otherwise: `strict: false` is written out.
    let expected = json!([{
        "type": "function",
        "name": "weather",
        "description": "Weather for a city.",
        "parameters": schema,
        "strict": false
    }]);
    assert_eq!(ordered(&list), ordered(&expected));

    let strict = export(
        &env,
        &[
            "--provider",
            "openai-responses",
            "--bundle",
            "b",
            "--strict",
        ],
    );
    let entry = &strict[0];
    assert_eq!(
        keys(entry),
        ["type", "name", "description", "parameters", "strict"]
    );
    assert_eq!(entry["strict"], true);
    assert_eq!(entry["parameters"], weather_schema_strict());
    // Chat Completions with --strict: the same view, inside `function`.
    let chat = export(&env, &["--provider", "openai", "--bundle", "b", "--strict"]);
    assert_eq!(
        keys(&chat[0]["function"]),
        ["name", "description", "parameters", "strict"]
    );
    assert_eq!(chat[0]["function"]["strict"], true);
    assert_eq!(chat[0]["function"]["parameters"], weather_schema_strict());
}

#[test]
fn a_tool_that_asks_for_strict_mode_gets_it_from_openai_and_anthropic() {
    let env = TestEnv::new();
    env.bundle("b");
    let mut doc = with_schema("weather", "Weather for a city.", &weather_schema());
    doc["strict"] = json!(true);
    env.put_tool("b", &doc);
    let chat = export(&env, &["--provider", "openai", "--bundle", "b"]);
    assert_eq!(chat[0]["function"]["strict"], true);
    assert_eq!(chat[0]["function"]["parameters"], weather_schema_strict());
    let responses = export(&env, &["--provider", "openai-responses", "--bundle", "b"]);
    assert_eq!(responses[0]["strict"], true);
    assert_eq!(responses[0]["parameters"], weather_schema_strict());
    // Providers without a strict mode send the canonical schema.
    let ollama = export(&env, &["--provider", "ollama", "--bundle", "b"]);
    assert_eq!(
        keys(&ollama[0]["function"]),
        ["name", "description", "parameters"]
    );
    assert_eq!(
        ordered(&ollama[0]["function"]["parameters"]),
        ordered(&weather_schema())
    );
    // Anthropic's strict tool use takes the strict copy too.
    let anthropic = export(&env, &["--provider", "anthropic", "--bundle", "b"]);
    assert_eq!(anthropic[0]["strict"], true);
    assert_eq!(anthropic[0]["input_schema"], weather_schema_strict());
}

#[test]
fn openai_takes_at_most_128_tools_unless_forced() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("many");
    // With the 3 built-ins enabled by default: 125 + 3 = 128, the most one request takes.
    for n in 0..125 {
        write_tool_file(
            &env,
            &bundle_id,
            n,
            &format!("tool-{n:03}"),
            Some(json!({"type": "object"})),
        );
    }
    for provider in ["openai", "openai-responses"] {
        assert_eq!(
            export(&env, &["--provider", provider])
                .as_array()
                .unwrap()
                .len(),
            128
        );
    }
    write_tool_file(
        &env,
        &bundle_id,
        125,
        "tool-125",
        Some(json!({"type": "object"})),
    );
    for provider in ["openai", "openai-responses"] {
        let error = env.json_error(&["export", "--provider", provider], 3);
        assert_eq!(error.error.code, "VALIDATION_ERROR");
        assert_eq!(
            error.error.message,
            format!("129 tools is more than {provider} takes in one request (128)")
        );
        assert_eq!(
            error.error.details,
            json!({"provider": provider, "count": 129, "max": 128})
        );
        let hint = error.error.hint.unwrap();
        // The hint names the provider asked for, not always `--emit openai`.
        assert!(
            hint.contains(&format!("`toolctl pick \"<task>\" --emit {provider}`")),
            "{hint}"
        );
        assert!(hint.contains("--force"), "{hint}");
        let forced = export(&env, &["--provider", provider, "--force"]);
        assert_eq!(forced.as_array().unwrap().len(), 129);
        // Narrowing the export is the other way out.
        assert_eq!(
            export(&env, &["--provider", provider, "--bundle", "many"])
                .as_array()
                .unwrap()
                .len(),
            126
        );
    }
    // The other providers have no such limit.
    for provider in ["anthropic", "ollama", "mcp"] {
        assert_eq!(
            export(&env, &["--provider", provider])
                .as_array()
                .unwrap()
                .len(),
            129
        );
    }
    let gemini = export(&env, &["--provider", "gemini"]);
    assert_eq!(
        gemini[0]["functionDeclarations"].as_array().unwrap().len(),
        129
    );
}

#[test]
fn strict_is_refused_for_providers_without_strict_mode() {
    let env = TestEnv::new();
    for provider in ["anthropic", "ollama", "gemini", "mcp"] {
        let error = env.json_error(&["export", "--provider", provider, "--strict"], 3);
        assert_eq!(error.error.code, "VALIDATION_ERROR");
        assert_eq!(
            error.error.message,
            format!("--strict is OpenAI's strict mode; {provider} has none")
        );
        assert_eq!(
            error.error.hint.as_deref(),
            Some("use --strict with --provider openai or openai-responses")
        );
    }
}

#[test]
fn an_unknown_provider_is_a_usage_error() {
    let env = TestEnv::new();
    let run = env.run(&["export", "--provider", "openia"]);
    run.failure(2);
    // clap's words: the value, the flag, every value, and the close one.
    run.stderr_has("invalid value 'openia' for '--provider <PROVIDER>'")
        .stderr_has("[possible values: openai, openai-responses, anthropic, ollama, gemini, mcp]")
        .stderr_has("a similar value exists: 'openai'");
    assert_eq!(run.stdout, "");
}

#[test]
fn the_output_is_the_same_with_or_without_json() {
    let env = TestEnv::fixture();
    for provider in PROVIDERS {
        let plain = env.run(&["export", "--provider", provider, "--lenient", "--quiet"]);
        plain.success();
        let json = env.run(&[
            "--json",
            "export",
            "--provider",
            provider,
            "--lenient",
            "--quiet",
        ]);
        json.success();
        assert_eq!(plain.stdout, json.stdout, "{provider}");
        assert!(
            plain.stdout.trim_start().starts_with('['),
            "{provider}: {}",
            plain.stdout
        );
    }
}

/// OpenAI (Chat and Responses, strict or not) answers a root `oneOf`/`anyOf`/`allOf` with 400
/// "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top
/// level", and a root that is not an object with "schema must be a JSON Schema of 'type:
/// \"object\"'"; Anthropic answers the alternatives with "input_schema does not support oneOf,
/// allOf, or anyOf at the top level". Either fails the whole request, every tool with it, so
/// export must refuse such a tool (naming keyword and pointer) rather than send it. MCP
/// clients pass `inputSchema` on to such APIs, so MCP refuses them too. Known
/// from many public bug reports (e.g. langchain-ai/langchainjs#9804,
/// anthropics/claude-code#5319). The fixture's `weather/air-quality` is such a tool.
#[test]
fn openai_anthropic_and_mcp_refuse_alternatives_at_the_root() {
    let env = TestEnv::new();
    env.bundle("b");
    let properties = json!({ "city": { "type": "string" }, "lat": { "type": "number" }, "lon": { "type": "number" } });
    for (slug, keyword) in [("either", "oneOf"), ("any", "anyOf"), ("all", "allOf")] {
        let schema = json!({
            "type": "object",
            "properties": properties,
            keyword: [{ "required": ["city"] }, { "required": ["lat", "lon"] }]
        });
        env.put_tool("b", &with_schema(slug, slug, &schema));
    }
    // `not` and `enum` at the root are refused the same way.
    env.put_tool(
        "b",
        &with_schema(
            "never",
            "never",
            &json!({ "type": "object", "properties": properties, "not": { "required": ["city"] } }),
        ),
    );
    env.put_tool(
        "b",
        &with_schema(
            "listed",
            "listed",
            &json!({ "type": "object", "enum": [{ "city": "Oslo" }, { "city": "Bergen" }] }),
        ),
    );
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));
    let expected = BTreeMap::from([
        ("b/all@v1".to_owned(), "allOf"),
        ("b/any@v1".to_owned(), "anyOf"),
        ("b/either@v1".to_owned(), "oneOf"),
        ("b/listed@v1".to_owned(), "enum"),
        ("b/never@v1".to_owned(), "not"),
    ]);
    for provider in ["openai", "openai-responses", "anthropic", "mcp"] {
        let run = env.run(&["--json", "export", "--provider", provider, "--bundle", "b"]);
        assert_eq!(
            run.status,
            Some(3),
            "{provider} sent schemas it answers with 400\n{run}"
        );
        let error: ErrorDoc = run.parse();
        let refused = refused_problems(&error);
        assert_eq!(
            refused.keys().cloned().collect::<Vec<_>>(),
            expected.keys().cloned().collect::<Vec<_>>(),
            "{provider}"
        );
        for (reference, keyword) in &expected {
            assert!(
                refused[reference]
                    .iter()
                    .any(|(k, p, _)| k == keyword && p == "/argSchema"),
                "{provider} {reference}: {:#?}",
                refused[reference]
            );
        }
        // --lenient leaves them out, each with a warning, and sends the fine one.
        let run = env.run(&[
            "export",
            "--provider",
            provider,
            "--bundle",
            "b",
            "--lenient",
        ]);
        run.success();
        assert_eq!(names_of(provider, &run.json()), ["fine"], "{provider}");
        assert_eq!(
            left_out_refs(&run.stderr),
            [
                "b/either@v1",
                "b/any@v1",
                "b/all@v1",
                "b/never@v1",
                "b/listed@v1"
            ],
            "{provider}"
        );
    }
    // A root that is not an object (or says no type), the same for each of them.
    env.bundle("t");
    env.put_tool(
        "t",
        &with_schema("text", "Text.", &json!({ "type": "string" })),
    );
    env.put_tool(
        "t",
        &with_schema(
            "untyped",
            "Untyped.",
            &json!({ "properties": { "city": { "type": "string" } } }),
        ),
    );
    for provider in ["openai", "openai-responses", "anthropic", "mcp"] {
        let run = env.run(&["--json", "export", "--provider", provider, "--bundle", "t"]);
        assert_eq!(
            run.status,
            Some(3),
            "{provider} sent a non-object root\n{run}"
        );
        let error: ErrorDoc = run.parse();
        let refused = refused_problems(&error);
        for reference in ["t/text@v1", "t/untyped@v1"] {
            let problems: Vec<(&str, &str)> = refused[reference]
                .iter()
                .map(|(k, p, _)| (k.as_str(), p.as_str()))
                .collect();
            assert_eq!(problems, [("type", "/argSchema")], "{provider} {reference}");
        }
    }
    // Ollama takes any JSON Schema and sends them as they are.
    let list = export(&env, &["--provider", "ollama", "--bundle", "b"]);
    assert_eq!(
        names_of("ollama", &list),
        ["either", "any", "all", "never", "listed", "fine"]
    );
    let list = export(&env, &["--provider", "ollama", "--bundle", "t"]);
    assert_eq!(names_of("ollama", &list), ["text", "untyped"]);
}

#[test]
fn strict_closes_every_object_requires_every_property_and_makes_optional_ones_nullable() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = json!({
        "type": "object",
        "properties": {
            "city": { "type": "string", "description": "City." },
            "days": { "type": "integer", "minimum": 1 },
            "units": { "type": "string", "enum": ["metric", "imperial"] },
            "window": {
                "type": "object",
                "properties": {
                    "from": { "type": "string", "format": "date" },
                    "to": { "type": "string", "format": "date" }
                },
                "required": ["from"]
            },
            "stops": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": { "name": { "type": "string" } },
                    "required": ["name"]
                }
            }
        },
        "required": ["city"]
    });
    env.put_tool("b", &with_schema("trip", "Plan a trip.", &schema));
    let list = export(&env, &["--provider", "openai", "--bundle", "b", "--strict"]);
    let expected = json!({
        "type": "object",
        "properties": {
            "city": { "type": "string", "description": "City." },
            "days": { "type": ["integer", "null"], "minimum": 1 },
            "units": { "type": ["string", "null"], "enum": ["metric", "imperial", null] },
            "window": {
                "type": ["object", "null"],
                "properties": {
                    "from": { "type": "string", "format": "date" },
                    "to": { "type": ["string", "null"], "format": "date" }
                },
                "required": ["from", "to"],
                "additionalProperties": false
            },
            "stops": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "properties": { "name": { "type": "string" } },
                    "required": ["name"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["city", "days", "units", "window", "stops"],
        "additionalProperties": false
    });
    assert_eq!(list[0]["function"]["parameters"], expected);
    assert_eq!(list[0]["function"]["strict"], true);
    assert_eq!(
        strict_violations(&list[0]["function"]["parameters"]),
        Vec::<String>::new()
    );
}

#[test]
fn strict_turns_exclusive_one_of_into_any_of_and_puts_ref_alone() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = json!({
        "type": "object",
        "$defs": {
            "place": {
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"]
            }
        },
        "properties": {
            "target": { "oneOf": [{ "type": "string" }, { "type": "integer" }] },
            "home": { "$ref": "#/$defs/place", "description": "Where you live." }
        },
        "required": ["target", "home"]
    });
    env.put_tool("b", &with_schema("shapes", "Shapes.", &schema));
    let list = export(&env, &["--provider", "openai", "--bundle", "b", "--strict"]);
    let expected = json!({
        "type": "object",
        "$defs": {
            "place": {
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"],
                "additionalProperties": false
            }
        },
        "properties": {
            "target": { "anyOf": [{ "type": "string" }, { "type": "integer" }] },
            "home": { "$ref": "#/$defs/place" }
        },
        "required": ["target", "home"],
        "additionalProperties": false
    });
    assert_eq!(list[0]["function"]["parameters"], expected);
}

#[test]
fn strict_drops_default_title_schema_and_discriminator() {
    let env = TestEnv::new();
    env.bundle("b");
    let kind = |k: &str| {
        json!({
            "type": "object",
            "title": format!("A {k}"),
            "properties": { "kind": { "const": k } },
            "required": ["kind"]
        })
    };
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Arguments",
        "type": "object",
        "properties": {
            "n": { "type": "integer", "default": 3, "title": "N", "description": "How many." },
            "pet": { "anyOf": [kind("cat"), kind("dog")], "discriminator": { "propertyName": "kind" } }
        },
        "required": ["n", "pet"]
    });
    env.put_tool("b", &with_schema("annotated", "Annotated.", &schema));
    let list = export(
        &env,
        &[
            "--provider",
            "openai-responses",
            "--bundle",
            "b",
            "--strict",
        ],
    );
    let closed = |k: &str| {
        json!({
            "type": "object",
            "properties": { "kind": { "const": k } },
            "required": ["kind"],
            "additionalProperties": false
        })
    };
    let expected = json!({
        "type": "object",
        "properties": {
            "n": { "type": "integer", "description": "How many." },
            "pet": { "anyOf": [closed("cat"), closed("dog")] }
        },
        "required": ["n", "pet"],
        "additionalProperties": false
    });
    assert_eq!(list[0]["parameters"], expected);
}

#[test]
fn strict_refuses_what_it_cannot_say_naming_tool_keyword_and_pointer() {
    let env = TestEnv::new();
    env.bundle("b");
    let object = |extra: Value| {
        let mut p = json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"] });
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    };
    let array = |extra: Value| {
        let mut p = json!({ "type": "array", "items": { "type": "string" } });
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    };
    // (the keyword refused, the schema of property `p` holding it): tool `b/case-<i>`.
    let cases: Vec<(&str, Value)> = vec![
        (
            "patternProperties",
            object(json!({"patternProperties": {"^x": {"type": "string"}}})),
        ),
        (
            "unevaluatedProperties",
            object(json!({"unevaluatedProperties": false})),
        ),
        (
            "propertyNames",
            object(json!({"propertyNames": {"maxLength": 3}})),
        ),
        ("minProperties", object(json!({"minProperties": 1}))),
        ("maxProperties", object(json!({"maxProperties": 2}))),
        (
            "unevaluatedItems",
            array(json!({"unevaluatedItems": false})),
        ),
        ("contains", array(json!({"contains": {"const": "x"}}))),
        (
            "minContains",
            array(json!({"contains": {"const": "x"}, "minContains": 2})),
        ),
        (
            "maxContains",
            array(json!({"contains": {"const": "x"}, "maxContains": 2})),
        ),
        ("uniqueItems", array(json!({"uniqueItems": true}))),
        (
            "pattern",
            json!({"type": "string", "pattern": "^(?!admin).*$"}),
        ),
        ("pattern", json!({"type": "string", "pattern": "(?<=x)y"})),
        ("items", json!({"type": "array"})),
        ("$ref", json!({"$ref": "#/$defs/word", "minLength": 2})),
        ("format", json!({"type": "string", "format": "uri"})),
        (
            "oneOf",
            json!({"oneOf": [{"type": "string"}, {"type": "string", "minLength": 3}]}),
        ),
    ];
    let with_p = |p: &Value| {
        json!({
            "type": "object",
            "$defs": { "word": { "type": "string" } },
            "properties": { "p": p },
            "required": ["p"]
        })
    };
    for (i, (_, p)) in cases.iter().enumerate() {
        let slug = format!("case-{i}");
        env.put_tool("b", &with_schema(&slug, &slug, &with_p(p)));
    }
    // Nesting deeper than 5 levels, and an anyOf at the root.
    env.put_tool("b", &with_schema("too-deep", "deep", &with_p(&nested(6))));
    let root_any_of = json!({
        "type": "object",
        "properties": { "a": { "type": "string" }, "b": { "type": "string" } },
        "anyOf": [{ "required": ["a"] }, { "required": ["b"] }]
    });
    env.put_tool("b", &with_schema("root-any-of", "root", &root_any_of));
    env.put_tool("b", &with_schema("fine", "fine", &weather_schema()));
    let mut expected: Vec<(String, &str, &str)> = cases
        .iter()
        .enumerate()
        .map(|(i, (keyword, _))| {
            (
                format!("b/case-{i}@v1"),
                *keyword,
                "/argSchema/properties/p",
            )
        })
        .collect();
    expected.push((
        "b/too-deep@v1".to_owned(),
        "properties",
        "/argSchema/properties/p/properties/l2/properties/l3/properties/l4/properties/l5",
    ));
    expected.push(("b/root-any-of@v1".to_owned(), "anyOf", "/argSchema"));

    let args = [
        "export",
        "--provider",
        "openai",
        "--bundle",
        "b",
        "--strict",
    ];
    let error = env.json_error(&args, 3);
    assert_eq!(error.error.code, "VALIDATION_ERROR");
    assert_eq!(
        error.error.message,
        format!(
            "openai cannot take {} of the tools as they are",
            expected.len()
        )
    );
    assert_eq!(error.error.details["provider"], "openai");
    let refused = refused_problems(&error);
    let expected_refs: BTreeSet<String> = expected.iter().map(|(r, ..)| r.clone()).collect();
    assert_eq!(
        refused.keys().cloned().collect::<BTreeSet<_>>(),
        expected_refs
    );
    for (reference, keyword, pointer) in &expected {
        let problems = &refused[reference];
        assert!(
            problems
                .iter()
                .any(|(k, p, _)| k == keyword && p == pointer),
            "{reference}: expected {keyword} at {pointer}, got {problems:#?}"
        );
        assert!(problems.iter().all(|(_, _, message)| !message.is_empty()));
    }
    let hint = error.error.hint.unwrap();
    assert!(
        hint.contains("--lenient leaves them out with a warning"),
        "{hint}"
    );
    assert!(
        hint.contains("without --strict, OpenAI takes the schemas as they are"),
        "{hint}"
    );

    // --lenient: every refused tool left out with a warning naming it; the fine one exported.
    let run = env.run(&[
        "export",
        "--provider",
        "openai",
        "--bundle",
        "b",
        "--strict",
        "--lenient",
    ]);
    run.success();
    let list = run.json();
    assert_eq!(names_of("openai", &list), ["fine"]);
    assert_eq!(list[0]["function"]["strict"], true);
    let left: BTreeSet<String> = left_out_refs(&run.stderr).into_iter().collect();
    assert_eq!(left, expected_refs);
    run.stderr_has("warning: left out b/case-9@v1 (openai cannot take it): uniqueItems at /argSchema/properties/p: ");
}

#[test]
fn strict_refusal_reads_well_without_json() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool("b", &with_schema("tags", "Tags.", &json!({
        "type": "object",
        "properties": { "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true } },
        "required": ["tags"]
    })));
    let run = env.run(&[
        "export",
        "--provider",
        "openai",
        "--bundle",
        "b",
        "--strict",
    ]);
    run.failure(3);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("error: openai cannot take 1 of the tools as they are\n"),
        "{run}"
    );
    run.stderr_has("caused by: b/tags@v1: uniqueItems at /argSchema/properties/tags: strict mode has no `uniqueItems`");
    run.stderr_has("hint: --lenient leaves them out with a warning");
}

#[test]
fn strict_takes_the_listed_formats_and_no_other() {
    let env = TestEnv::new();
    env.bundle("b");
    let mut properties = Map::new();
    for (i, format) in STRICT_FORMATS.iter().enumerate() {
        properties.insert(
            format!("f{i}"),
            json!({ "type": "string", "format": format }),
        );
    }
    let names: Vec<&String> = properties.keys().collect();
    let schema = json!({ "type": "object", "properties": properties, "required": names });
    env.put_tool("b", &with_schema("formats", "Formats.", &schema));
    let list = export(&env, &["--provider", "openai", "--bundle", "b", "--strict"]);
    let mut expected = schema.clone();
    expected["additionalProperties"] = json!(false);
    assert_eq!(list[0]["function"]["parameters"], expected);

    for bad in ["uri", "regex", "iri", "json-pointer"] {
        let env = TestEnv::new();
        env.bundle("b");
        env.put_tool(
            "b",
            &with_schema(
                "link",
                "Link.",
                &json!({
                    "type": "object",
                    "properties": { "link": { "type": "string", "format": bad } },
                    "required": ["link"]
                }),
            ),
        );
        let error = env.json_error(
            &[
                "export",
                "--provider",
                "openai",
                "--bundle",
                "b",
                "--strict",
            ],
            3,
        );
        let refused = refused_problems(&error);
        let problems: Vec<(&str, &str)> = refused["b/link@v1"]
            .iter()
            .map(|(k, p, _)| (k.as_str(), p.as_str()))
            .collect();
        assert_eq!(
            problems,
            [("format", "/argSchema/properties/link")],
            "{bad}"
        );
    }
}

#[test]
fn strict_takes_5_levels_of_objects_and_refuses_6() {
    let env = TestEnv::new();
    env.bundle("b");
    // The root is level 1; `nested(n)` adds n − 1 levels below property `p` (level 2).
    let schema = |levels: usize| json!({ "type": "object", "properties": { "p": nested(levels - 1) }, "required": ["p"] });
    env.put_tool("b", &with_schema("five", "Five.", &schema(5)));
    env.put_tool("b", &with_schema("six", "Six.", &schema(6)));
    let list = export(
        &env,
        &["--provider", "openai", "--tool", "b/five", "--strict"],
    );
    assert_eq!(
        strict_violations(&list[0]["function"]["parameters"]),
        Vec::<String>::new()
    );
    assert_eq!(json_depth(&list[0]["function"]["parameters"]), 5);

    let error = env.json_error(
        &[
            "export",
            "--provider",
            "openai",
            "--tool",
            "b/six",
            "--strict",
        ],
        3,
    );
    let refused = refused_problems(&error);
    assert_eq!(
        refused["b/six@v1"]
            .iter()
            .map(|(k, p, _)| (k.as_str(), p.as_str()))
            .collect::<Vec<_>>(),
        [(
            "properties",
            "/argSchema/properties/p/properties/l2/properties/l3/properties/l4/properties/l5"
        )]
    );
    // Without strict mode the deep schema goes out as it is.
    let plain = export(&env, &["--provider", "openai", "--tool", "b/six"]);
    assert_eq!(
        ordered(&plain[0]["function"]["parameters"]),
        ordered(&schema(6))
    );
}

/// A native tool without `argSchema`, exported unchecked (`allowNoSchema`): "any object".
fn unchecked(slug: &str, extra: Value) -> Value {
    let mut doc = tool_doc_with(slug, "v1", json!({ "description": "Takes anything." }));
    let fields = doc.as_object_mut().unwrap();
    fields.shift_remove("argSchema");
    fields.insert("allowNoSchema".into(), json!(true));
    fields.insert("noSchemaMode".into(), json!("full"));
    fields.extend(extra.as_object().unwrap().clone());
    doc
}

/// Regression: a tool without `argSchema` (README: "exported as taking any object") went out
/// under `--strict` as a closed object with no properties, a tool that takes nothing; the same
/// open object one level down was refused. It is refused at the root too, naming the tool and
/// the way out. An `argSchema` of `{"type": "object"}` says "no arguments": closed as before.
#[test]
fn strict_refuses_a_tool_without_schema_and_closes_a_schema_of_no_arguments() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool("b", &unchecked("unchecked", json!({})));
    let nothing = json!({ "type": "object" });
    env.put_tool("b", &with_schema("nothing", "Takes nothing.", &nothing));
    for provider in ["openai", "openai-responses"] {
        let args = [
            "export",
            "--provider",
            provider,
            "--bundle",
            "b",
            "--strict",
        ];
        let error = env.json_error(&args, 3);
        let refused = refused_problems(&error);
        assert_eq!(
            refused.keys().collect::<Vec<_>>(),
            ["b/unchecked@v1"],
            "{provider}"
        );
        let [(keyword, pointer, message)] = refused["b/unchecked@v1"].as_slice() else {
            panic!("{provider}: {refused:#?}");
        };
        assert_eq!(
            (keyword.as_str(), pointer.as_str()),
            ("argSchema", "/argSchema")
        );
        assert!(
            message.contains("exported as taking any object"),
            "{message}"
        );
        assert!(
            message.ends_with(
                "give the tool an argSchema that declares its arguments, or export it without strict mode"
            ),
            "{message}"
        );
        let hint = error.error.hint.unwrap();
        assert!(
            hint.contains("without --strict, OpenAI takes the schemas as they are"),
            "{hint}"
        );

        // --lenient: the tool of no arguments goes out closed.
        let mut lenient = args[1..].to_vec();
        lenient.push("--lenient");
        let (list, left) = export_lenient(&env, &lenient);
        assert_eq!(left, ["b/unchecked@v1"], "{provider}");
        assert_eq!(names_of(provider, &list), ["nothing"]);
        let entry = &entries(provider, &list)[0];
        assert_eq!(
            ordered(schema_of(provider, entry).unwrap()),
            r#"{"type":"object","properties":{},"required":[],"additionalProperties":false}"#
        );

        // Without --strict the unchecked tool is any object, as the README says.
        let list = export(&env, &["--provider", provider, "--tool", "b/unchecked"]);
        let entry = &entries(provider, &list)[0];
        assert_eq!(
            schema_of(provider, entry),
            Some(&json!({ "type": "object" }))
        );
    }
}

/// A tool without `argSchema` that asks for strict mode itself (`"strict": true`) is refused
/// by every provider with a strict mode that closes objects (OpenAI's two APIs, Anthropic's
/// strict tool use), the way out being its own field; the others take it as any object.
#[test]
fn a_tool_without_schema_that_asks_for_strict_mode_is_refused_where_that_closes_it() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool("b", &unchecked("unchecked", json!({ "strict": true })));
    for (provider, mode) in [
        ("openai", "and strict mode would close"),
        ("openai-responses", "and strict mode would close"),
        ("anthropic", "and Anthropic's strict tool use would close"),
    ] {
        let error = env.json_error(&["export", "--provider", provider, "--bundle", "b"], 3);
        let refused = refused_problems(&error);
        let [(keyword, pointer, message)] = refused["b/unchecked@v1"].as_slice() else {
            panic!("{provider}: {refused:#?}");
        };
        assert_eq!(
            (keyword.as_str(), pointer.as_str()),
            ("argSchema", "/argSchema")
        );
        assert!(message.contains(mode), "{provider}: {message}");
        assert!(
            message.ends_with("or remove the tool's own `\"strict\": true` (or set it to false)"),
            "{provider}: {message}"
        );
        let hint = error.error.hint.unwrap();
        assert!(
            hint.contains("b/unchecked@v1 asks for strict mode itself"),
            "{provider}: {hint}"
        );
        assert!(
            !hint.contains("without --strict, OpenAI"),
            "{provider}: {hint}"
        );
    }
    // With --strict as well, both must go.
    let error = env.json_error(
        &[
            "export",
            "--provider",
            "openai",
            "--bundle",
            "b",
            "--strict",
        ],
        3,
    );
    let (_, _, message) = &refused_problems(&error)["b/unchecked@v1"][0];
    assert!(
        message.ends_with(
            "or remove the tool's own `\"strict\": true` (or set it to false) and export it without strict mode"
        ),
        "{message}"
    );
    for provider in ["ollama", "gemini", "mcp"] {
        let list = export(&env, &["--provider", provider, "--bundle", "b"]);
        assert_eq!(names_of(provider, &list), ["unchecked"], "{provider}");
    }
    // validate says the same, once per provider asked for.
    let run = env.run(&[
        "validate",
        "--provider",
        "openai",
        "--provider",
        "anthropic",
    ]);
    run.success();
    for provider in ["openai", "anthropic"] {
        let said = format!(
            "warning[provider]: {provider} would refuse this tool (argSchema): the tool has no argSchema"
        );
        assert_eq!(run.stdout.matches(&said).count(), 1, "{run}");
    }
}

/// Regression: a tool with its own `"strict": true` that strict mode refuses was told, with
/// no `--strict` given, "without --strict, OpenAI takes the schemas as they are". The hint
/// names the tool's own field; a tool refused because of `--strict` still gets that hint.
#[test]
fn the_strict_hint_names_the_cause_the_flag_or_the_tools_own_field() {
    let env = TestEnv::new();
    env.bundle("b");
    let uri = json!({
        "type": "object",
        "properties": { "u": { "type": "string", "format": "uri" } },
        "required": ["u"]
    });
    let mut own = with_schema("own", "Fetch a URL.", &uri);
    own["strict"] = json!(true);
    env.put_tool("b", &own);
    env.put_tool("b", &with_schema("flag", "Fetch a URL.", &uri));
    let own_hint = "b/own@v1 asks for strict mode itself (`\"strict\": true` in its tool.json); set it to false, or remove it, to export the schema as it is";
    let flag_hint = "without --strict, OpenAI takes the schemas as they are";

    // No --strict: only the tool's own field can be the cause.
    let run = env.run(&["export", "--provider", "openai", "--bundle", "b"]);
    run.failure(3);
    run.stderr_has("caused by: b/own@v1: format at /argSchema/properties/u: strict mode knows only the formats");
    run.stderr_has(&format!("hint: {own_hint}\n"));
    assert!(!run.stderr.contains(flag_hint), "{run}");
    assert!(!run.stderr.contains("b/flag@v1"), "{run}");

    // With --strict both are refused, each hint naming its own cause.
    let error = env.json_error(
        &[
            "export",
            "--provider",
            "openai-responses",
            "--bundle",
            "b",
            "--strict",
        ],
        3,
    );
    let refused = refused_problems(&error);
    assert_eq!(
        refused.keys().collect::<Vec<_>>(),
        ["b/flag@v1", "b/own@v1"]
    );
    let hint = error.error.hint.unwrap();
    assert_eq!(
        hint,
        format!("--lenient leaves them out with a warning\n{flag_hint}\n{own_hint}")
    );
}

/// A tool with its own `"strict": true` and a schema strict mode would have to close (an
/// optional argument, no `additionalProperties: false`) goes to Anthropic as to OpenAI: the
/// strict copy (closed, every property required, optional ones nullable), with `strict: true`.
/// One strict mode cannot say (`uniqueItems`) is refused by both, naming the keyword and its
/// pointer, and `--lenient` leaves it out. Without its own strict, Anthropic gets the schema
/// as it is.
#[test]
fn anthropic_sends_a_tool_that_asks_for_strict_the_strict_copy_or_refuses_it_as_openai_does() {
    let env = TestEnv::new();
    env.bundle("b");
    let open = json!({
        "type": "object",
        "properties": {
            "city": { "type": "string", "description": "City name." },
            "days": { "type": "integer", "default": 3 }
        },
        "required": ["city"]
    });
    let closed = json!({
        "type": "object",
        "properties": {
            "city": { "type": "string", "description": "City name." },
            "days": { "type": ["integer", "null"] }
        },
        "required": ["city", "days"],
        "additionalProperties": false
    });
    let own_strict = |slug: &str, schema: &Value| {
        tool_doc_with(
            slug,
            "v1",
            json!({ "description": "Weather.", "strict": true, "argSchema": schema }),
        )
    };
    env.put_tool("b", &own_strict("open", &open));
    env.put_tool("b", &with_schema("loose", "Weather, loosely.", &open));
    let tags = json!({
        "type": "object",
        "properties": { "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true } },
        "required": ["tags"],
        "additionalProperties": false
    });
    env.put_tool("b", &own_strict("tags", &tags));

    for provider in ["anthropic", "openai"] {
        let list = export(&env, &["--provider", provider, "--tool", "b/open"]);
        let entry = entry_named(provider, &list, "open");
        assert_eq!(
            schema_of(provider, entry),
            Some(&closed),
            "{provider}: {list:#}"
        );
        assert_eq!(
            function(provider, entry)["strict"],
            true,
            "{provider}: {list:#}"
        );

        let error = env.json_error(&["export", "--provider", provider, "--tool", "b/tags"], 3);
        let refused = refused_problems(&error);
        let [(keyword, pointer, message)] = refused["b/tags@v1"].as_slice() else {
            panic!("{provider}: {refused:#?}");
        };
        assert_eq!(
            (keyword.as_str(), pointer.as_str()),
            ("uniqueItems", "/argSchema/properties/tags"),
            "{provider}"
        );
        assert!(
            message.starts_with("strict mode has no `uniqueItems`"),
            "{provider}: {message}"
        );
        let hint = error.error.hint.unwrap();
        assert!(
            hint.contains("b/tags@v1 asks for strict mode itself"),
            "{provider}: {hint}"
        );

        let (list, left) = export_lenient(
            &env,
            &["--provider", provider, "--bundle", "b", "--lenient"],
        );
        assert_eq!(left, ["b/tags@v1"], "{provider}");
        assert_eq!(names_of(provider, &list), ["open", "loose"], "{provider}");
    }
    // Not asked for: Anthropic takes the schema verbatim, and no `strict`.
    let list = export(&env, &["--provider", "anthropic", "--tool", "b/loose"]);
    let entry = entry_named("anthropic", &list, "loose");
    assert_eq!(ordered(&entry["input_schema"]), ordered(&open), "{list:#}");
    assert!(entry.get("strict").is_none(), "{list:#}");
    // The canonical schema is untouched.
    let stored = env.json(&["tool", "get", "b/open"]);
    assert_eq!(stored["document"]["argSchema"], open);
}

/// OpenAI answers 400 "array schema missing items" for an array without `items` even outside
/// strict mode, for the whole request: the tool is refused at the array's
/// pointer, for Chat Completions and Responses; an array with `items` goes out as it is, and
/// providers that take such an array (Anthropic, MCP) still get it.
#[test]
fn openai_refuses_an_array_without_items_outside_strict_mode() {
    let env = TestEnv::new();
    env.bundle("b");
    let loose = json!({
        "type": "object",
        "properties": {
            "ids": { "type": "array", "description": "Which." },
            "deep": { "type": "object", "properties": {
                "tags": { "type": ["array", "null"] },
                "fine": { "type": "array", "items": {} }
            } }
        }
    });
    env.put_tool("b", &with_schema("loose", "Loose arrays.", &loose));
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));
    for provider in ["openai", "openai-responses"] {
        let run = env.run(&["--json", "export", "--provider", provider, "--bundle", "b"]);
        assert_eq!(run.status, Some(3), "{provider}\n{run}");
        let refused = refused_problems(&run.parse());
        let problems: Vec<(&str, &str)> = refused["b/loose@v1"]
            .iter()
            .map(|(k, p, _)| (k.as_str(), p.as_str()))
            .collect();
        assert_eq!(
            problems,
            [
                ("items", "/argSchema/properties/ids"),
                ("items", "/argSchema/properties/deep/properties/tags")
            ],
            "{provider}"
        );
        assert!(
            refused["b/loose@v1"][0]
                .2
                .contains("OpenAI needs `items` on every array")
        );
        assert!(!refused.contains_key("b/fine@v1"));
    }
    for provider in ["anthropic", "mcp"] {
        let run = env.run(&["export", "--provider", provider, "--bundle", "b"]);
        run.success();
        assert_eq!(names_of(provider, &run.json()).len(), 2, "{provider}");
    }
    // validate says so as export does (a provider's refusal is a warning there).
    env.run(&["validate", "--provider", "openai"])
        .success()
        .stdout_has("warning[provider]: openai would refuse this tool (items): OpenAI needs `items` on every array");
}
