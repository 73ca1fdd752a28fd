//! Anthropic, Gemini (an OpenAPI 3.0 subset in `functionDeclarations`), Ollama and MCP.

use super::*;

#[test]
fn anthropic_takes_the_schema_verbatim_as_input_schema() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema("weather", "Weather for a city.", &weather_schema()),
    );
    let list = export(&env, &["--provider", "anthropic", "--bundle", "b"]);
    let expected = json!([{
        "name": "weather",
        "description": "Weather for a city.",
        "input_schema": weather_schema()
    }]);
    assert_eq!(ordered(&list), ordered(&expected));
}

#[test]
fn anthropic_refuses_a_root_that_is_not_an_object() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema("text", "Text.", &json!({ "type": "string" })),
    );
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));
    let error = env.json_error(&["export", "--provider", "anthropic", "--bundle", "b"], 3);
    assert_eq!(
        error.error.message,
        "anthropic cannot take 1 of the tools as they are"
    );
    let refused = refused_problems(&error);
    assert_eq!(refused.keys().collect::<Vec<_>>(), ["b/text@v1"]);
    // The root holds the wrong `type`: the keyword, and the pointer of the schema holding it.
    assert_eq!(refused["b/text@v1"].len(), 1, "{refused:#?}");
    let (keyword, pointer, message) = &refused["b/text@v1"][0];
    assert_eq!((keyword.as_str(), pointer.as_str()), ("type", "/argSchema"));
    assert!(message.contains("\"object\""), "{message}");
    // --lenient leaves it out.
    let run = env.run(&[
        "export",
        "--provider",
        "anthropic",
        "--bundle",
        "b",
        "--lenient",
    ]);
    run.success();
    assert_eq!(names_of("anthropic", &run.json()), ["fine"]);
    assert_eq!(left_out_refs(&run.stderr), ["b/text@v1"]);
}

#[test]
fn anthropic_refuses_a_schema_that_is_not_valid_draft_2020_12() {
    let env = TestEnv::new();
    env.bundle("b");
    let typo = with_schema(
        "typo",
        "Typo.",
        &json!({
            "type": "object",
            "properties": { "x": { "type": "strin" } }
        }),
    );
    // `tool put` refuses it (the rules of validate); a hand edit can still bring it in.
    env.try_put_tool("b", &typo).failure(3);
    env.put_tool_by_hand("b", &typo);
    // Listed unavailable, so left out of a plain export…
    let run = env.run(&[
        "--json",
        "export",
        "--provider",
        "anthropic",
        "--bundle",
        "b",
    ]);
    run.success();
    assert_eq!(run.json(), json!([]), "{run}");
    // …and `--include-disabled` still says why Anthropic would refuse it.
    let error = env.json_error(
        &[
            "export",
            "--provider",
            "anthropic",
            "--bundle",
            "b",
            "--include-disabled",
        ],
        3,
    );
    let refused = refused_problems(&error);
    let problems = &refused["b/typo@v1"];
    // The keyword holding the bad value, and the pointer of the schema holding that keyword
    // (as the strict and Gemini checks say it).
    assert!(
        problems
            .iter()
            .any(|(keyword, pointer, message)| keyword == "type"
                && pointer == "/argSchema/properties/x"
                && message.contains("2020-12")),
        "{problems:#?}"
    );
}

/// Regression: a draft-07 tuple (`items: [..]`) broke one rule of the 2020-12 meta-schema
/// along 8 paths, and the same problem was listed 8 times: in the error, in
/// `details.tools[].problems` and in `validate --provider anthropic`. Each is said once.
#[test]
fn anthropic_lists_each_problem_once() {
    let env = TestEnv::new();
    env.bundle("b");
    let tuple = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "point": { "type": "array", "items": [{ "type": "number" }, { "type": "number" }] }
        }
    });
    env.put_tool("b", &with_schema("tuple", "A point.", &tuple));
    let args = ["export", "--provider", "anthropic", "--bundle", "b"];
    let error = env.json_error(&args, 3);
    let refused = refused_problems(&error);
    let [(keyword, pointer, message)] = refused["b/tuple@v1"].as_slice() else {
        panic!("{refused:#?}");
    };
    assert_eq!(
        (keyword.as_str(), pointer.as_str()),
        ("items", "/argSchema/properties/point")
    );
    assert!(message.contains("draft 2020-12"), "{message}");

    let run = env.run(&args);
    run.failure(3);
    assert_eq!(run.stderr.matches("caused by: ").count(), 1, "{run}");
    run.stderr_has("caused by: b/tuple@v1: items at /argSchema/properties/point: not valid JSON Schema draft 2020-12");

    let run = env.run(&["validate", "--provider", "anthropic"]);
    run.success();
    let said = "warning[provider]: anthropic would refuse this tool (items)";
    assert_eq!(run.stdout.matches(said).count(), 1, "{run}");
}

/// Regression: Anthropic's Messages API (and Claude behind Bedrock's Converse)
/// answers a whole request with a 400 (`Property keys should match pattern
/// '^[a-zA-Z0-9_.-]{1,64}$'`) when one tool has a top-level argument name outside that pattern,
/// so every tool sent with it is lost. Such a tool is unexpressible for Anthropic, named with
/// the key's pointer, as the other limits are; the other providers still take it, nested keys
/// are not checked (the API does not), and the tool's own strict mode does not hide it.
#[test]
fn anthropic_refuses_argument_names_outside_its_pattern() {
    let env = TestEnv::new();
    env.bundle("b");
    let long = "a".repeat(65);
    let longest = "b".repeat(64);
    let string = json!({ "type": "string", "description": "A value." });
    let mut properties = serde_json::Map::new();
    for name in [
        "filter[id]",
        "$top",
        "with space",
        "ключ",
        long.as_str(),
        "a/b",
        "",
        "ok.name-x_1",
        longest.as_str(),
    ] {
        properties.insert(name.to_owned(), string.clone());
    }
    properties.insert(
        "nested".to_owned(),
        json!({ "type": "object", "description": "Nested.", "properties": { "in[ner]": string } }),
    );
    let schema = json!({ "type": "object", "properties": properties });
    env.put_tool("b", &with_schema("keys", "Odd argument names.", &schema));
    let mut own_strict = with_schema(
        "strict-keys",
        "Strict.",
        &json!({
            "type": "object",
            "properties": { "$top": string },
            "required": ["$top"],
            "additionalProperties": false
        }),
    );
    own_strict["strict"] = json!(true);
    env.put_tool("b", &own_strict);
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));

    let error = env.json_error(&["export", "--provider", "anthropic", "--bundle", "b"], 3);
    assert_eq!(
        error.error.message,
        "anthropic cannot take 2 of the tools as they are"
    );
    let refused = refused_problems(&error);
    assert_eq!(
        refused.keys().collect::<Vec<_>>(),
        ["b/keys@v1", "b/strict-keys@v1"]
    );
    let pointers: Vec<(&str, &str)> = refused["b/keys@v1"]
        .iter()
        .map(|(keyword, pointer, _)| (keyword.as_str(), pointer.as_str()))
        .collect();
    let long_pointer = format!("/argSchema/properties/{long}");
    assert_eq!(
        pointers,
        [
            ("properties", "/argSchema/properties/filter[id]"),
            ("properties", "/argSchema/properties/$top"),
            ("properties", "/argSchema/properties/with space"),
            ("properties", "/argSchema/properties/ключ"),
            ("properties", long_pointer.as_str()),
            ("properties", "/argSchema/properties/a~1b"),
            ("properties", "/argSchema/properties/"),
        ]
    );
    let (_, _, message) = &refused["b/keys@v1"][0];
    assert_eq!(
        message,
        "the argument name 'filter[id]' does not match ^[a-zA-Z0-9_.-]{1,64}$, which Anthropic \
            requires (one such tool makes it refuse the whole request); rename the argument (such \
            as 'filter_id_')"
    );
    let (_, _, message) = &refused["b/keys@v1"][3];
    assert!(
        message.ends_with("rename the argument (such as 'klyuch')"),
        "{message}"
    );
    assert_eq!(
        refused["b/strict-keys@v1"]
            .iter()
            .map(|(keyword, pointer, _)| (keyword.as_str(), pointer.as_str()))
            .collect::<Vec<_>>(),
        [("properties", "/argSchema/properties/$top")]
    );

    // --lenient leaves them out; the tool that is fine goes.
    let (list, left_out) = export_lenient(
        &env,
        &["--provider", "anthropic", "--bundle", "b", "--lenient"],
    );
    assert_eq!(names_of("anthropic", &list), ["fine"]);
    assert_eq!(left_out, ["b/keys@v1", "b/strict-keys@v1"]);

    // Only Anthropic has the rule: the others take the tool, its schema verbatim.
    for provider in ["openai", "ollama", "mcp"] {
        let list = export(
            &env,
            &["--provider", provider, "--bundle", "b", "--tool", "b/keys"],
        );
        assert_eq!(
            schema_of(provider, &entries(provider, &list)[0]),
            Some(&schema)
        );
    }

    // validate --provider anthropic says it, at the key's line.
    let run = env.run(&["validate", "--provider", "anthropic"]);
    run.success();
    let said = "warning[provider]: anthropic would refuse this tool (properties): the argument \
        name '$top' does not match ^[a-zA-Z0-9_.-]{1,64}$";
    assert_eq!(run.stdout.matches(said).count(), 2, "{run}");
    assert!(
        run.stdout.contains("(at /argSchema/properties/a~1b)"),
        "{run}"
    );
    assert!(!run.stdout.contains("in[ner]' does not match"), "{run}");
    assert!(!run.stdout.contains("ok.name-x_1' does not match"), "{run}");
}

#[test]
fn gemini_puts_declarations_in_one_tools_object() {
    let env = TestEnv::new();
    env.bundle("b");
    let plain = json!({
        "type": "object",
        "properties": { "city": { "type": "string", "description": "City." } },
        "required": ["city"]
    });
    env.put_tool("b", &with_schema("weather", "Weather.", &plain));
    env.put_tool(
        "b",
        &with_schema(
            "clock",
            "Clock.",
            &json!({ "type": "object", "properties": {} }),
        ),
    );
    let list = export(&env, &["--provider", "gemini", "--bundle", "b"]);
    // A tool that takes nothing is declared without parameters (Gemini refuses an empty OBJECT).
    let expected = json!([{ "functionDeclarations": [
        { "name": "weather", "description": "Weather.", "parameters": plain },
        { "name": "clock", "description": "Clock." }
    ]}]);
    assert_eq!(ordered(&list), ordered(&expected));
}

#[test]
fn gemini_inlines_refs() {
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
            "from": { "$ref": "#/$defs/place", "description": "Start." },
            "stops": { "type": "array", "items": { "$ref": "#/$defs/place" } }
        },
        "required": ["from"]
    });
    env.put_tool("b", &with_schema("route", "Route.", &schema));
    let parameters = gemini_parameters(&env, "route");
    let place = json!({
        "type": "object",
        "properties": { "name": { "type": "string" } },
        "required": ["name"]
    });
    let mut from = place.clone();
    from["description"] = json!("Start.");
    let expected = json!({
        "type": "object",
        "properties": {
            "from": from,
            "stops": { "type": "array", "items": place }
        },
        "required": ["from"]
    });
    assert_eq!(parameters, expected);
}

#[test]
fn gemini_turns_const_into_a_one_value_enum() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema(
            "convert",
            "Convert.",
            &json!({
                "type": "object",
                "properties": {
                    "to": { "const": "EUR" },
                    "from": { "type": "string", "const": "USD" }
                },
                "required": ["to", "from"]
            }),
        ),
    );
    let expected = json!({
        "type": "object",
        "properties": {
            "to": { "type": "string", "enum": ["EUR"] },
            "from": { "type": "string", "enum": ["USD"] }
        },
        "required": ["to", "from"]
    });
    assert_eq!(gemini_parameters(&env, "convert"), expected);
}

#[test]
fn gemini_turns_type_arrays_into_nullable() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema(
            "update",
            "Update.",
            &json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string" },
                    "note": { "type": ["string", "null"], "maxLength": 100 },
                    "count": { "type": ["integer", "null"], "minimum": 0 }
                },
                "required": ["id"]
            }),
        ),
    );
    let expected = json!({
        "type": "object",
        "properties": {
            "id": { "type": "string" },
            "note": { "type": "string", "nullable": true, "maxLength": 100 },
            "count": { "type": "integer", "nullable": true, "minimum": 0 }
        },
        "required": ["id"]
    });
    assert_eq!(gemini_parameters(&env, "update"), expected);
}

/// Regression: pydantic's `Optional[T]` (`anyOf: [T, {"type": "null"}]`, and
/// `oneOf` likewise) was refused by the Gemini export; it says `nullable` as a type list does,
/// in a form Google's own SDK reads.
#[test]
fn gemini_turns_null_branches_into_nullable() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema(
            "update",
            "Update.",
            &json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": "Id." },
                    "note": {
                        "anyOf": [{ "type": "string", "maxLength": 100 }, { "type": "null" }],
                        "default": null, "title": "Note", "description": "A note."
                    },
                    "count": { "oneOf": [{ "type": "integer" }, { "type": "null" }] },
                    "key": { "anyOf": [{ "type": "string" }, { "type": "integer" }, { "type": "null" }] }
                },
                "required": ["id"]
            }),
        ),
    );
    let expected = json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "description": "Id." },
            "note": {
                "type": "string", "nullable": true, "maxLength": 100,
                "default": null, "title": "Note", "description": "A note."
            },
            "count": { "type": "integer", "nullable": true },
            "key": { "anyOf": [
                { "type": "string", "nullable": true },
                { "type": "integer", "nullable": true }
            ] }
        },
        "required": ["id"]
    });
    assert_eq!(gemini_parameters(&env, "update"), expected);
    let list = export(&env, &["--provider", "gemini", "--bundle", "b"]);
    let problems = crate::common::sdk_models::problems(&[("gemini-tools", list)]);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn gemini_drops_additional_properties_and_schema() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema(
            "closed",
            "Closed.",
            &json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "inner": {
                        "type": "object",
                        "properties": { "x": { "type": "number" } },
                        "additionalProperties": false
                    }
                },
                "additionalProperties": false
            }),
        ),
    );
    let expected = json!({
        "type": "object",
        "properties": {
            "inner": { "type": "object", "properties": { "x": { "type": "number" } } }
        }
    });
    assert_eq!(gemini_parameters(&env, "closed"), expected);
}

#[test]
fn gemini_drops_keywords_that_only_narrow_and_states_their_rule_while_invoke_still_checks_them() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = json!({
        "type": "object",
        "properties": {
            "labels": { "type": "array", "items": { "type": "string" }, "uniqueItems": true, "description": "Labels." },
            "step": { "type": "integer", "multipleOf": 5 },
            "amount": { "type": "number", "exclusiveMinimum": 0 }
        }
    });
    env.put_tool("b", &with_schema("narrow", "Narrow.", &schema));
    let params = gemini_parameters(&env, "narrow");
    let props = &params["properties"];
    assert_eq!(
        props["labels"]["description"],
        "Labels. Items must be unique."
    );
    assert!(props["labels"].get("uniqueItems").is_none(), "{params:#}");
    assert_eq!(props["step"]["description"], "Must be a multiple of 5.");
    assert_eq!(props["amount"]["minimum"], 0);
    assert_eq!(props["amount"]["description"], "Must be greater than 0.");
    // The canonical schema is untouched, and a call breaking a dropped rule is still refused.
    let got = env.json(&["tool", "get", "b/narrow"]);
    assert_eq!(ordered(&got["document"]["argSchema"]), ordered(&schema));
    for args in [
        r#"{"labels":["a","a"]}"#,
        r#"{"step":7}"#,
        r#"{"amount":0}"#,
    ] {
        let error = env.json_error(&["invoke", "b/narrow", "--args", args], 3);
        assert_eq!(error.error.code, "VALIDATION_ERROR", "{args}");
    }
}

#[test]
fn gemini_refuses_what_it_cannot_say_naming_tool_keyword_and_pointer() {
    let env = TestEnv::new();
    env.bundle("b");
    // (slug, schema, keyword, pointer in tool.json)
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "undefined-required",
            json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a", "ghost"] }),
            "required",
            "/argSchema",
        ),
        (
            "property-names",
            json!({ "type": "object", "properties": { "m": { "type": "object", "properties": { "k": { "type": "string" } }, "propertyNames": { "maxLength": 3 } } } }),
            "propertyNames",
            "/argSchema/properties/m",
        ),
        (
            "exclusive-minimum",
            json!({ "type": "object", "properties": { "t": { "type": "integer", "exclusiveMinimum": 0.5 } } }),
            "exclusiveMinimum",
            "/argSchema/properties/t",
        ),
        (
            "integer-enum",
            json!({ "type": "object", "properties": { "n": { "type": "integer", "enum": [1, 2, 3] } } }),
            "enum",
            "/argSchema/properties/n",
        ),
        (
            "recursive-ref",
            json!({
                "type": "object",
                "$defs": { "node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/node" } } } },
                "properties": { "head": { "$ref": "#/$defs/node" } }
            }),
            "$ref",
            "/argSchema/$defs/node/properties/next",
        ),
    ];
    for (slug, schema, _, _) in &cases {
        env.put_tool("b", &with_schema(slug, slug, schema));
    }
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));
    let error = env.json_error(&["export", "--provider", "gemini", "--bundle", "b"], 3);
    assert_eq!(
        error.error.message,
        format!(
            "gemini cannot take {} of the tools as they are",
            cases.len()
        )
    );
    let refused = refused_problems(&error);
    for (slug, _, keyword, pointer) in &cases {
        let problems = &refused[&format!("b/{slug}@v1")];
        assert!(
            problems
                .iter()
                .any(|(k, p, _)| k == keyword && p == pointer),
            "{slug}: expected {keyword} at {pointer}, got {problems:#?}"
        );
    }
    assert!(!refused.contains_key("b/fine@v1"));
    let run = env.run(&[
        "export",
        "--provider",
        "gemini",
        "--bundle",
        "b",
        "--lenient",
    ]);
    run.success();
    assert_eq!(names_of("gemini", &run.json()), ["fine"]);
    assert_eq!(left_out_refs(&run.stderr).len(), cases.len());
}

#[test]
fn gemini_turns_exclusive_integer_bounds_into_inclusive_ones() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool("b", &with_schema("bounds", "Bounds.", &json!({
        "type": "object",
        "properties": { "n": { "type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10 } }
    })));
    assert_eq!(
        gemini_parameters(&env, "bounds"),
        json!({ "type": "object", "properties": { "n": { "type": "integer", "minimum": 1, "maximum": 9 } } })
    );
}

#[test]
fn ollama_uses_the_openai_chat_wrapper_without_strict() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema("weather", "Weather for a city.", &weather_schema()),
    );
    let list = export(&env, &["--provider", "ollama", "--bundle", "b"]);
    let expected = json!([{
        "type": "function",
        "function": { "name": "weather", "description": "Weather for a city.", "parameters": weather_schema() }
    }]);
    assert_eq!(ordered(&list), ordered(&expected));
}

#[test]
fn mcp_entries_carry_title_input_schema_and_object_output_schema() {
    let env = TestEnv::new();
    env.bundle("b");
    let output = json!({ "type": "object", "properties": { "temp": { "type": "number" } }, "required": ["temp"] });
    let mut doc = with_schema("weather", "Weather for a city.", &weather_schema());
    doc["displayName"] = json!("City weather");
    doc["outputSchema"] = output.clone();
    env.put_tool("b", &doc);
    // structuredContent is always an object: an array outputSchema is not sent.
    let mut listed = with_schema("list", "A list.", &weather_schema());
    listed["outputSchema"] = json!({ "type": "array", "items": { "type": "string" } });
    env.put_tool("b", &listed);
    let list = export(&env, &["--provider", "mcp", "--bundle", "b"]);
    let expected = json!([
        {
            "name": "weather",
            "title": "City weather",
            "description": "Weather for a city.",
            "inputSchema": weather_schema(),
            "outputSchema": output
        },
        { "name": "list", "description": "A list.", "inputSchema": weather_schema() }
    ]);
    assert_eq!(ordered(&list), ordered(&expected));
}

#[test]
fn mcp_tools_without_parameters() {
    let env = TestEnv::new();
    env.bundle("b");
    // MCP's own form for "takes nothing" goes out as it is; so does an open `properties: {}`,
    // which takes any object (closing it would change its meaning).
    let nothing = json!({ "type": "object", "additionalProperties": false });
    env.put_tool("b", &with_schema("nothing", "Takes nothing.", &nothing));
    env.put_tool(
        "b",
        &with_schema(
            "open",
            "Takes anything.",
            &json!({ "type": "object", "properties": {} }),
        ),
    );
    // No argSchema at all, deliberately (allowNoSchema): any object, unchecked.
    let mut unchecked = tool_doc_with(
        "unchecked",
        "v1",
        json!({ "description": "Unchecked.", "allowNoSchema": true, "noSchemaMode": "full" }),
    );
    unchecked.as_object_mut().unwrap().shift_remove("argSchema");
    env.put_tool("b", &unchecked);
    let list = export(&env, &["--provider", "mcp", "--bundle", "b"]);
    let schemas: BTreeMap<String, String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                ordered(&e["inputSchema"]),
            )
        })
        .collect();
    assert_eq!(
        schemas["nothing"],
        r#"{"type":"object","additionalProperties":false}"#
    );
    assert_eq!(schemas["open"], r#"{"type":"object","properties":{}}"#);
    assert_eq!(schemas["unchecked"], r#"{"type":"object"}"#);
    // The other providers send the same any-object schema for the unchecked tool.
    let openai = export(&env, &["--provider", "openai", "--tool", "b/unchecked"]);
    assert_eq!(
        openai[0]["function"]["parameters"],
        json!({ "type": "object" })
    );
}

#[test]
fn mcp_annotations_come_from_the_tool_or_its_http_method() {
    let env = http_env();
    let own = json!({ "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false });
    let mut annotated = http_tool("annotated", "POST");
    annotated["annotations"] = own.clone();
    env.put_tool("h", &annotated);
    env.put_tool(
        "h",
        &tool_doc_with("native", "v1", json!({ "description": "native" })),
    );
    // An explicit `safe` wins over the method.
    let mut safe_post = http_tool("safe-post", "POST");
    safe_post["safe"] = json!(true);
    env.put_tool("h", &safe_post);
    let mut unsafe_put = http_tool("unsafe-put", "PUT");
    unsafe_put["safe"] = json!(false);
    env.put_tool("h", &unsafe_put);
    for (slug, safe) in [("safe-native", true), ("unsafe-native", false)] {
        env.put_tool(
            "h",
            &tool_doc_with(slug, "v1", json!({ "description": slug, "safe": safe })),
        );
    }
    let list = export(&env, &["--provider", "mcp", "--bundle", "h"]);
    let annotations: BTreeMap<String, Option<Value>> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e.get("annotations").cloned(),
            )
        })
        .collect();
    let read = json!({ "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true });
    let destructive =
        json!({ "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true });
    for name in ["get", "head"] {
        assert_eq!(annotations[name], Some(read.clone()), "{name}");
    }
    // OPTIONS is idempotent, but `pick` holds it unsafe (only GET and HEAD are safe without
    // `safe`), so MCP is not told it is read-only or harmless either.
    assert_eq!(
        annotations["options"],
        Some(json!({ "readOnlyHint": false, "idempotentHint": true })),
        "options"
    );
    for name in ["put", "delete"] {
        assert_eq!(annotations[name], Some(destructive.clone()), "{name}");
    }
    // POST and PATCH: neither read-only nor idempotent; `destructiveHint` left to MCP's
    // default (true), since toolctl does not know them harmless.
    let write = json!({ "readOnlyHint": false, "idempotentHint": false });
    for name in ["post", "patch"] {
        assert_eq!(annotations[name], Some(write.clone()), "{name}");
    }
    // The tool's own annotations win; a native tool without any sends none (MCP's cautious
    // defaults apply).
    assert_eq!(annotations["annotated"], Some(own));
    assert_eq!(annotations["native"], None);
    // `safe: true` says not destructive; `safe: false` never read-only, and keeps what the
    // method says otherwise.
    assert_eq!(
        annotations["safe-post"],
        Some(json!({ "readOnlyHint": false, "idempotentHint": false, "destructiveHint": false }))
    );
    assert_eq!(annotations["unsafe-put"], Some(destructive.clone()));
    assert_eq!(
        annotations["safe-native"],
        Some(json!({ "destructiveHint": false }))
    );
    assert_eq!(
        annotations["unsafe-native"],
        Some(json!({ "readOnlyHint": false }))
    );
}

/// An unannotated POST is unsafe to toolctl (`pick` hides it), and so is a tool that says
/// `"safe": false`: the MCP annotations export writes must not tell a client otherwise
/// (`destructiveHint: false` or `readOnlyHint: true` is exactly what makes a tool "safe" by
/// toolctl's own rule).
#[test]
fn mcp_annotations_never_make_an_unsafe_tool_look_safe() {
    let env = http_env();
    let mut unsafe_get = http_tool("unsafe-get", "GET");
    unsafe_get["safe"] = json!(false);
    env.put_tool("h", &unsafe_get);
    env.put_tool(
        "h",
        &tool_doc_with(
            "unsafe-native",
            "v1",
            json!({ "description": "native", "safe": false }),
        ),
    );
    let list = export(&env, &["--provider", "mcp", "--bundle", "h"]);
    let mut harmless = Vec::new();
    for name in ["post", "patch", "unsafe-get", "unsafe-native"] {
        let entry = entry_named("mcp", &list, name);
        if let Some(annotations) = entry.get("annotations")
            && (annotations.get("readOnlyHint") == Some(&json!(true))
                || annotations.get("destructiveHint") == Some(&json!(false)))
        {
            harmless.push(format!("{name}: {annotations}"));
        }
    }
    assert_eq!(
        harmless,
        Vec::<String>::new(),
        "unsafe to toolctl, but their MCP annotations say they are harmless"
    );
    // `safe: false` on a GET: not read-only, `destructiveHint: false` removed (MCP's default,
    // destructive, applies); what the method says of idempotence stays.
    assert_eq!(
        entry_named("mcp", &list, "unsafe-get")["annotations"],
        json!({ "readOnlyHint": false, "idempotentHint": true })
    );
}

/// Gemini refuses the whole request for a string `format` it lacks (`email`, `uri`) and for a
/// function name that starts with a digit or `-`: the format is said in
/// the description, and such a slug goes out as `_` and the slug, which `invoke` resolves.
#[test]
fn gemini_gets_formats_it_has_and_names_that_start_with_a_letter() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = json!({
        "type": "object",
        "properties": {
            "to": { "type": "string", "format": "email", "description": "Who to write to." },
            "at": { "type": "string", "format": "date-time" }
        },
        "required": ["to"]
    });
    env.put_tool("b", &with_schema("3d-render", "Render in 3D.", &schema));
    let run = env.run(&["export", "--provider", "gemini", "--bundle", "b"]);
    run.success();
    let declaration = &run.json()[0]["functionDeclarations"][0];
    assert_eq!(declaration["name"], "_3d-render");
    assert_eq!(
        declaration["parameters"]["properties"],
        json!({
            "to": { "type": "string", "description": "Who to write to. Format: email." },
            "at": { "type": "string", "format": "date-time" }
        })
    );
    // The same name for every provider, and a call by it reaches the tool.
    let openai = env.run(&["export", "--provider", "openai", "--bundle", "b"]);
    assert_eq!(openai.json()[0]["function"]["name"], "_3d-render");
    env.run(&["invoke", "_3d-render", "--args", r#"{"to":"a@b.example"}"#])
        .success();
}
