//! `toolctl tool put|get|enable|disable|delete` and tool references: a version never changes
//! once written, a toggle touches only `isEnabled`, delete is hard, and every reference form
//! finds the tool it should (or says why not).

use crate::common::{
    TestEnv, assert_uuid_v7, keys, ordered, read_json, timestamp, tool_doc, tool_doc_with,
    tool_view,
};
use serde_json::{Value, json};

#[test]
fn put_fills_ids_and_timestamps() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let input = env.input(&tool_doc("x", "v1"));

    let run = env.run(&["tool", "put", "--bundle", "w", &input]);
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(env.normalize(&run.stderr), "Created tool w/x@v1 ([UUID])\n");

    let file = env.tool_file(&bundle_id, "x", "v1");
    let doc = read_json(&file);
    assert_uuid_v7(doc["toolID"].as_str().unwrap());
    assert_eq!(doc["bundleID"], bundle_id.as_str());
    let created = timestamp(doc["createdAt"].as_str().unwrap());
    assert_eq!(doc["modifiedAt"], doc["createdAt"]);
    let age = jiff::Timestamp::now().duration_since(created);
    assert!(age.as_secs() < 60, "createdAt is now: {doc}");
    // What the user wrote is all there.
    for (key, value) in tool_doc("x", "v1").as_object().unwrap() {
        assert_eq!(&doc[key], value, "{key}");
    }

    let (view, extra) = tool_view(env.json(&["tool", "get", "w/x@v1"]), &["document", "usage"]);
    assert_eq!(extra["document"], doc);
    assert_eq!(
        extra["usage"],
        json!({ "callCount": 0, "lastCalledAt": null }),
        "never called"
    );
    assert_eq!(view.tool_id, doc["toolID"].as_str().unwrap());
    assert_eq!(view.bundle_id, bundle_id);
    assert_eq!(view.reference, "w/x@v1");
    assert_eq!(view.kind, "native");
    assert_eq!(view.status, "enabled");
    assert!(view.available && view.is_enabled && view.bundle_enabled && !view.is_built_in);
    assert_eq!(view.path.as_deref(), Some(file.as_path()));

    // --json put prints the same view and document.
    let put = env.put_tool("w", &tool_doc("y", "v1"));
    let (view, extra) = tool_view(put, &["document"]);
    assert_eq!(view.reference, "w/y@v1");
    assert_eq!(
        extra["document"],
        read_json(&env.tool_file(&bundle_id, "y", "v1"))
    );
}

#[test]
fn put_stamps_its_own_timestamps_and_takes_the_bundle_from_the_file() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let mut doc = tool_doc_with(
        "x",
        "v1",
        json!({ "createdAt": "2025-01-01T00:00:00Z", "modifiedAt": "2025-02-01T00:00:00Z" }),
    );
    doc["bundleID"] = bundle_id.clone().into();
    let input = env.input(&doc);
    env.run(&["tool", "put", &input]).success();
    // The file's dates are replaced: a new tool is created now.
    let stored = read_json(&env.tool_file(&bundle_id, "x", "v1"));
    assert_ne!(stored["createdAt"], "2025-01-01T00:00:00Z");
    assert_eq!(stored["modifiedAt"], stored["createdAt"]);

    // No bundle from either place.
    let input = env.input(&tool_doc("y", "v1"));
    env.run(&["tool", "put", &input])
        .failure(3)
        .stderr_has("--bundle");
    // The flag and the file disagree.
    let other = env.bundle("other");
    env.run(&["tool", "put", "--bundle", &other, &env.input(&doc)])
        .failure(3)
        .stderr_has("bundleID");
    // An unknown bundle.
    env.run(&[
        "tool",
        "put",
        "--bundle",
        "nope",
        &env.input(&tool_doc("z", "v1")),
    ])
    .failure(4);
}

#[test]
fn put_from_stdin() {
    let env = TestEnv::new();
    env.bundle("w");
    let run = env.run_stdin(
        &["tool", "put", "--bundle", "w", "-"],
        &tool_doc_with(
            "piped",
            "v1",
            json!({ "description": "came through a pipe" }),
        )
        .to_string(),
    );
    run.success();
    let got = env.json(&["tool", "get", "w/piped@v1"]);
    assert_eq!(got["description"], "came through a pipe");

    env.run_stdin(&["tool", "put", "--bundle", "w", "-"], "{ not json")
        .failure(3)
        .stderr_has("<stdin>");
}

#[test]
fn put_of_an_existing_version_conflicts_and_leaves_the_file_alone() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    env.put_tool(
        "w",
        &tool_doc_with("x", "v1", json!({ "description": "first" })),
    );
    let file = env.tool_file(&bundle_id, "x", "v1");
    let before = std::fs::read(&file).unwrap();

    let second = tool_doc_with("x", "v1", json!({ "description": "second" }));
    let run = env.run(&["tool", "put", "--bundle", "w", &env.input(&second)]);
    run.failure(5)
        .stderr_has("tool w/x@v1 already exists")
        .stderr_has("new version");
    assert_eq!(run.stdout, "");
    let err = env.json_error(&["tool", "put", "--bundle", "w", &env.input(&second)], 5);
    assert_eq!(err.error.code, "CONFLICT");
    assert_eq!(
        err.error.details["toolID"],
        read_json(&file)["toolID"],
        "the conflict names the existing tool"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before, "byte for byte");

    // A new version is fine.
    env.put_tool("w", &tool_doc("x", "v2"));
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn put_with_a_used_or_bad_tool_id() {
    let env = TestEnv::new();
    env.bundle("w");
    let first = env.put_tool("w", &tool_doc("x", "v1"));
    let id = first["toolID"].as_str().unwrap();
    let reused = tool_doc_with("y", "v1", json!({ "toolID": id }));
    env.run(&["tool", "put", "--bundle", "w", &env.input(&reused)])
        .failure(5)
        .stderr_has(id);
    let v4 = tool_doc_with(
        "z",
        "v1",
        json!({ "toolID": "9b2d3c2e-6f3a-4d55-9a51-0e3c2b1f4a77" }),
    );
    env.run(&["tool", "put", "--bundle", "w", &env.input(&v4)])
        .failure(3)
        .stderr_has("UUIDv7");
    // A v7 ID of another variant (fourth group not 8, 9, a or b): the schema refuses it, so
    // put does too (found by the tool_json fuzz target).
    let variant = tool_doc_with(
        "v",
        "v1",
        json!({ "toolID": "018f38f6-0b80-73f6-74f8-6d6f9e7221ac" }),
    );
    env.run(&["tool", "put", "--bundle", "w", &env.input(&variant)])
        .failure(3)
        .stderr_has("/toolID")
        .stderr_has("8, 9, a or b");
    assert_eq!(env.refs(&["--bundle", "w"]), ["w/x@v1"]);
}

/// Compact text of a document without `isEnabled`, keys in stored order.
fn without_enabled(mut doc: Value) -> String {
    doc.as_object_mut().unwrap().shift_remove("isEnabled");
    ordered(&doc)
}

#[test]
fn enable_disable_change_only_is_enabled() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let doc = tool_doc_with(
        "x",
        "v1",
        json!({
            "description": "A tool with many fields",
            "tags": ["b", "a"],
            "x-extra": { "z": 1, "a": 2 },
            "argSchema": {
                "type": "object",
                "properties": { "zeta": { "type": "string" }, "alpha": { "type": "integer" } },
                "required": ["zeta"]
            },
            "createdAt": "2025-01-01T00:00:00Z",
            "modifiedAt": "2025-03-01T00:00:00Z"
        }),
    );
    env.put_tool_dated("w", &doc);
    let file = env.tool_file(&bundle_id, "x", "v1");
    let before = read_json(&file);

    let run = env.run(&["tool", "disable", "w/x@v1"]);
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "Tool w/x@v1 disabled\n");
    let after = read_json(&file);
    assert_eq!(after["isEnabled"], false);
    assert_eq!(after["modifiedAt"], "2025-03-01T00:00:00Z");
    assert_eq!(
        without_enabled(after.clone()),
        without_enabled(before.clone())
    );
    assert_eq!(
        keys(&after)
            .into_iter()
            .filter(|k| k != "isEnabled")
            .collect::<Vec<_>>(),
        keys(&before)
            .into_iter()
            .filter(|k| k != "isEnabled")
            .collect::<Vec<_>>()
    );
    assert!(!env.refs(&[]).contains(&"w/x@v1".to_owned()));
    let all = env.tool_list(&["--include-disabled", "--bundle", "w"]);
    assert_eq!(all.items.len(), 1);
    assert_eq!(all.items[0].status, "disabled");

    // Disabling again changes nothing, not even the file's bytes.
    let bytes = std::fs::read(&file).unwrap();
    let (_, extra) = tool_view(env.json(&["tool", "disable", "w/x@v1"]), &["changed"]);
    assert_eq!(extra["changed"], false);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    env.run(&["tool", "disable", "w/x@v1"])
        .success()
        .stderr_has("already disabled");

    let (view, extra) = tool_view(env.json(&["tool", "enable", "w/x"]), &["changed"]);
    assert_eq!(extra["changed"], true);
    assert!(view.is_enabled);
    let enabled = read_json(&file);
    assert_eq!(enabled["isEnabled"], true);
    assert_eq!(without_enabled(enabled), without_enabled(before));
}

#[test]
fn delete_is_hard() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    env.put_tool("w", &tool_doc("x", "v1"));
    env.put_tool("w", &tool_doc("x", "v2"));
    env.put_tool("w", &tool_doc("y", "v1"));
    let tools = env.bundle_dir(&bundle_id).join("tools");

    let run = env.run(&["tool", "delete", "w/x@v1"]);
    run.success();
    assert_eq!(env.normalize(&run.stderr), "Deleted tool w/x@v1 ([UUID])\n");
    assert!(!tools.join("x/v1").exists(), "the version folder is gone");
    assert!(tools.join("x/v2/tool.json").is_file());

    let (view, extra) = tool_view(env.json(&["tool", "delete", "w/x@v2"]), &["deleted"]);
    assert_eq!(extra["deleted"], true);
    assert_eq!(view.reference, "w/x@v2");
    assert!(!tools.join("x").exists(), "the empty slug folder is gone");
    assert!(tools.join("y/v1/tool.json").is_file());
    assert_eq!(
        env.refs(&["--bundle", "w", "--include-disabled"]),
        ["w/y@v1"]
    );
    env.run(&["tool", "get", "w/x@v2"]).failure(4);
    // Deleted for good: the version can be written again.
    env.put_tool("w", &tool_doc("x", "v2"));
}

#[test]
fn every_reference_form_finds_the_tool() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    // v1 is the newest by createdAt although "v2" sorts after it.
    let v1 = env.put_tool_dated(
        "w",
        &tool_doc_with("x", "v1", json!({ "createdAt": "2025-06-01T00:00:00Z" })),
    );
    let v2 = env.put_tool_dated(
        "w",
        &tool_doc_with("x", "v2", json!({ "createdAt": "2025-01-01T00:00:00Z" })),
    );
    let v1_id = v1["toolID"].as_str().unwrap().to_owned();
    let v2_id = v2["toolID"].as_str().unwrap().to_owned();
    let got = |reference: &str| -> String {
        env.json(&["tool", "get", reference])["toolID"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(got("x"), v1_id);
    assert_eq!(got("w/x"), v1_id);
    assert_eq!(got("w/x@v2"), v2_id);
    assert_eq!(got("x@v2"), v2_id);
    assert_eq!(got(&format!("{bundle_id}/x@v2")), v2_id);
    assert_eq!(got(&format!("{bundle_id}/x")), v1_id);
    assert_eq!(got(&v2_id), v2_id);

    // Without @version, the newest *enabled* version.
    env.run(&["tool", "disable", "w/x@v1"]).success();
    assert_eq!(got("w/x"), v2_id);
    // With none enabled, still a tool to show.
    env.run(&["tool", "disable", "w/x@v2"]).success();
    assert_eq!(got("w/x"), v1_id);
}

#[test]
fn same_slug_in_two_bundles_is_ambiguous() {
    let env = TestEnv::new();
    env.bundle("a");
    env.bundle("b");
    env.put_tool("a", &tool_doc("x", "v1"));
    env.put_tool("b", &tool_doc("x", "v1"));

    let run = env.run(&["tool", "get", "x"]);
    run.failure(3)
        .stderr_has("'x' is ambiguous")
        .stderr_has("candidate: a/x")
        .stderr_has("candidate: b/x")
        .stderr_has("bundle/slug");
    assert_eq!(run.stdout, "");
    let err = env.json_error(&["tool", "get", "x@v1"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(err.error.details["candidates"], json!(["a/x", "b/x"]));
    // Writes refuse to guess too.
    env.run(&["tool", "disable", "x@v1"]).failure(3);
    assert_eq!(env.json(&["tool", "get", "b/x"])["bundle"], "b");
}

#[test]
fn changing_one_of_several_versions_needs_the_version() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    env.put_tool("w", &tool_doc("x", "v1"));
    env.put_tool("w", &tool_doc("x", "v2"));

    let run = env.run(&["tool", "delete", "w/x"]);
    run.failure(3)
        .stderr_has("@version")
        .stderr_has("w/x@v1")
        .stderr_has("w/x@v2");
    let err = env.json_error(&["tool", "delete", "x"], 3);
    assert_eq!(err.error.details["candidates"], json!(["w/x@v1", "w/x@v2"]));
    env.run(&["tool", "disable", "w/x"]).failure(3);
    assert!(env.tool_file(&bundle_id, "x", "v1").is_file());
    assert!(env.tool_file(&bundle_id, "x", "v2").is_file());
    for version in ["v1", "v2"] {
        let doc = read_json(&env.tool_file(&bundle_id, "x", version));
        assert_ne!(
            doc["isEnabled"], false,
            "the refused disable changed nothing"
        );
    }
}

#[test]
fn unknown_tools_are_not_found() {
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool("w", &tool_doc("x", "v1"));
    for reference in [
        "nope",
        "w/nope",
        "w/x@v9",
        "nobundle/x",
        "0190a000-0000-7000-8000-0000000000ff",
    ] {
        let run = env.run(&["tool", "get", reference]);
        run.failure(4).stderr_has("not found");
        assert_eq!(run.stdout, "");
        let err = env.json_error(&["tool", "get", reference], 4);
        assert_eq!(err.error.code, "NOT_FOUND");
    }
    env.run(&["tool", "delete", "nope"]).failure(4);
    env.run(&["tool", "enable", "w/nope"]).failure(4);
    // Malformed references are invalid input, not "not found".
    for reference in ["w/", "/x", "x@"] {
        env.run(&["tool", "get", reference]).failure(3);
    }
}

#[test]
fn unknown_fields_and_key_order_survive() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let doc = tool_doc_with(
        "x",
        "v1",
        json!({
            "x-extra": { "z": 1, "a": 2 },
            "argSchema": {
                "type": "object",
                "properties": {
                    "zeta": { "type": "string", "enum": ["b", "a"] },
                    "alpha": { "type": "array", "items": { "type": "array", "items": { "$ref": "#/$defs/m" } } },
                    "mid": { "type": "integer" }
                },
                "required": ["zeta", "alpha"],
                "$defs": { "m": { "type": "number", "minimum": 0 } }
            },
            "outputSchema": { "type": "object", "properties": { "y": {}, "b": {} } },
            "x-last": [3, 1, 2]
        }),
    );
    env.put_tool("w", &doc);
    let file = env.tool_file(&bundle_id, "x", "v1");

    let check = |stored: &Value| {
        for key in ["x-extra", "argSchema", "outputSchema", "x-last"] {
            assert_eq!(ordered(&stored[key]), ordered(&doc[key]), "{key}");
        }
        assert_eq!(keys(&stored["x-extra"]), ["z", "a"]);
        assert_eq!(
            keys(&stored["argSchema"]["properties"]),
            ["zeta", "alpha", "mid"]
        );
    };
    check(&read_json(&file));
    check(&env.json(&["tool", "get", "w/x@v1"])["document"]);
    // A rewrite (toggle) keeps them too.
    env.run(&["tool", "disable", "w/x@v1"]).success();
    env.run(&["tool", "enable", "w/x@v1"]).success();
    check(&read_json(&file));
    check(&env.json(&["tool", "get", "w/x"])["document"]);
}

#[test]
fn http_tools_need_an_allowed_literal_host() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let http = |slug: &str, url: &str| {
        json!({
            "slug": slug, "version": "v1", "type": "http",
            "impl": { "method": "GET", "urlTemplate": url },
            "argSchema": { "type": "object", "properties": { "city": { "type": "string" } } }
        })
    };
    let forecast = http("forecast", "https://api.example.com/v1/forecast?q=${city}");
    let run = env.try_put_tool("w", &forecast);
    run.failure(3);
    let err: crate::common::ErrorDoc = run.parse();
    assert_eq!(
        err.error.details["problems"][0]["pointer"],
        "/impl/urlTemplate"
    );
    assert!(
        err.error.message.contains("allowedHosts"),
        "{}",
        err.error.message
    );

    env.edit_config(|c| c["allowedHosts"] = json!(["api.example.com"]));
    let put = env.put_tool("w", &forecast);
    assert_eq!(put["type"], "http");
    assert_eq!(put["available"], true);

    for (slug, url, problem) in [
        ("ftp", "ftp://api.example.com/x", "http:// or https://"),
        ("templated", "https://${host}/x", "literal"),
        ("elsewhere", "https://evil.example.net/x", "allowedHosts"),
    ] {
        env.try_put_tool("w", &http(slug, url)).failure(3);
        env.run(&["tool", "put", "--bundle", "w", &env.input(&http(slug, url))])
            .failure(3)
            .stderr_has(problem);
    }

    // Taking the host out again: the tool stays, unavailable with the reason, file untouched.
    let file = env.tool_file(&bundle_id, "forecast", "v1");
    let bytes = std::fs::read(&file).unwrap();
    env.edit_config(|c| c["allowedHosts"] = json!([]));
    let list = env.tool_list(&["--bundle", "w"]);
    assert_eq!(list.items.len(), 1);
    assert!(!list.items[0].available);
    assert!(
        list.items[0]
            .unavailable_reason
            .as_deref()
            .unwrap()
            .contains("api.example.com")
    );
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

#[test]
fn reserved_fields_cannot_be_put() {
    let env = TestEnv::new();
    env.bundle("w");
    env.try_put_tool("w", &tool_doc_with("x", "v1", json!({ "isBuiltIn": true })))
        .failure(3);
    env.try_put_tool(
        "w",
        &tool_doc_with("x", "v1", json!({ "argSchema": "not a schema" })),
    )
    .failure(3);
    // No schema is refused unless allowNoSchema says how to run without one.
    let mut bare = tool_doc("x", "v1");
    bare.as_object_mut().unwrap().shift_remove("argSchema");
    env.try_put_tool("w", &bare).failure(3);
    bare["allowNoSchema"] = true.into();
    bare["noSchemaMode"] = "read-only".into();
    env.try_put_tool("w", &bare).success();
}

/// JSON values with objects whose keys come in any order, for the round-trip property.
fn arb_json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1.0e9f64..1.0e9).prop_map(Value::from),
        "[a-zA-Zé天$ _\\-\"\\\\\n]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::vec(("[a-z$A-Zé_]{1,6}", inner), 0..5)
                .prop_map(|pairs| { Value::Object(pairs.into_iter().collect()) }),
        ]
    })
}

#[test]
fn put_and_get_keep_any_document_byte_for_byte_in_meaning() {
    use proptest::prelude::*;
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let n = std::sync::atomic::AtomicUsize::new(0);
    let config = ProptestConfig {
        cases: 16,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(extra in arb_json(), props in proptest::collection::vec(("[a-z_]{1,8}", arb_json()), 0..6))| {
        let slug = format!("p{}", n.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        // Any JSON inside each property's schema, as data (`default`): a property must be a
        // JSON Schema, and put refuses one that is not.
        let properties: serde_json::Map<String, Value> = props
            .into_iter()
            .map(|(name, value)| (name, json!({ "default": value })))
            .collect();
        let doc = tool_doc_with(&slug, "v1", json!({
            "x-extra": extra,
            "argSchema": { "type": "object", "properties": properties, "$defs": { "z": {}, "a": {} } }
        }));
        env.put_tool("w", &doc);
        let stored = read_json(&env.tool_file(&bundle_id, &slug, "v1"));
        let got = env.json(&["tool", "get", &format!("w/{slug}@v1")]);
        for key in ["x-extra", "argSchema"] {
            prop_assert_eq!(ordered(&stored[key]), ordered(&doc[key]));
            prop_assert_eq!(ordered(&got["document"][key]), ordered(&doc[key]));
        }
    });
}
