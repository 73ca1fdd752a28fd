//! Tests of [`strict`](super).

use super::*;
use proptest::prelude::*;

macro_rules! fixtures {
        ($($bundle:literal => [$($slug:literal $version:literal),*]),*) => {
            &[$($((
                concat!($slug, "@", $version),
                include_str!(concat!("../../../../fixtures/catalog/bundles/", $bundle, "/tools/", $slug,
                    "/", $version, "/tool.json")),
            )),*),*]
        };
    }

/// Every tool of the fixture catalog: `slug@version` and its `tool.json`.
pub(in crate::schema) const FIXTURES: &[(&str, &str)] = fixtures!(
    "018dc13c-be00-7417-99be-151ab8bd2a38" => ["define-word" "v1", "image-search" "v1",
        "news-search" "v1", "web-search" "v1"],
    "018e2cbd-7e80-7dc2-87bd-2676e9d1e07b" => ["air-quality" "v1", "current-conditions" "v1",
        "forecast" "v1", "forecast" "v2.1", "forecast" "v2", "weather-alerts" "v1"],
    "018ebdcb-4880-7011-9c9d-509e4b4ca457" => ["add-issue-comment" "v1", "create-issue" "v1",
        "get-pull-request" "v1", "get-repo" "v1", "list-pull-requests" "v1",
        "search-issues" "v1"],
    "018f94cc-c980-7c0f-9366-203297a31cb7" => ["currency-convert" "v1", "exchange-rates" "v1",
        "stock-quote" "v1"],
    "018fdd1c-c000-71a2-8984-bdae7c57cc6b" => ["create-event" "v1", "delete-event" "v1",
        "find-free-time" "v1", "list-events" "v1", "update-event" "v1"],
    "01910d2a-e280-7ab0-bdbb-95b4e14b395b" => ["current-time" "v1", "find-docs" "v1",
        "read-config" "v1", "read-notes" "v1"]
);

/// The `argSchema` of the fixture tool `name` (`slug@version`).
pub(in crate::schema) fn fixture(name: &str) -> Value {
    let (_, text) = FIXTURES.iter().find(|(n, _)| *n == name).unwrap();
    serde_json::from_str::<Value>(text).unwrap()["argSchema"].clone()
}

/// The (keyword, pointer) of each problem `view` finds in `schema`; empty when it succeeds.
pub(in crate::schema) fn problems(
    view: fn(&Value) -> Result<Value, Vec<Unexpressible>>,
    schema: &Value,
) -> Vec<(String, String)> {
    match view(schema) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| (e.keyword, e.pointer)).collect(),
    }
}

fn errs(schema: Value) -> Vec<(String, String)> {
    problems(openai_strict, &schema)
}

/// Asserts that `schema` has exactly one problem: `keyword` at `pointer`.
#[track_caller]
fn fails(schema: Value, keyword: &str, pointer: &str) {
    assert_eq!(errs(schema), [(keyword.to_owned(), pointer.to_owned())]);
}

/// Asserts that the property `p` with the schema `p` has one problem, `keyword`, at itself.
#[track_caller]
fn fails_p(p: Value, keyword: &str) {
    fails(obj(json!({ "p": p })), keyword, "/properties/p");
}

fn obj(props: Value) -> Value {
    json!({"type": "object", "properties": props, "required": ["p"]})
}

#[test]
fn objects_get_properties_and_additional_properties_false() {
    let schema = json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"x": {"type": "string"}},
                "additionalProperties": true},
            "b": {"type": "object", "additionalProperties": false},
            "c": {"type": "object", "properties": {}, "additionalProperties": {}}}});
    let view = openai_strict(&schema).unwrap();
    assert_eq!(view["additionalProperties"], false);
    assert_eq!(view["required"], json!(["a", "b", "c"]));
    assert_eq!(view["properties"]["a"]["additionalProperties"], false);
    assert_eq!(view["properties"]["a"]["required"], json!(["x"]));
    assert_eq!(view["properties"]["b"]["properties"], json!({}));
    assert_eq!(view["properties"]["c"]["additionalProperties"], false);
    let root = openai_strict(&json!({"type": "object"})).unwrap();
    assert_eq!(
        root,
        json!({"type": "object", "properties": {}, "required": [],
                "additionalProperties": false})
    );
}

#[test]
fn extra_keys_with_a_schema_or_a_free_form_map_are_refused() {
    let map = obj(json!({"p": {"type": "object", "additionalProperties": {"type": "string"}}}));
    fails(map, "additionalProperties", "/properties/p");
    let free = obj(json!({"p": {"type": "object"}}));
    fails(free, "additionalProperties", "/properties/p");
}

#[test]
fn every_property_is_required_and_optional_ones_nullable() {
    let schema = json!({"type": "object", "$defs": {"d": {"type": "string"}}, "properties": {
            "req": {"type": "string"},
            "s": {"type": "string", "minLength": 1},
            "arr": {"type": ["integer", "boolean"]},
            "e": {"type": "string", "enum": ["a", "b"]},
            "bare_enum": {"enum": ["a", 1]},
            "r": {"$ref": "#/$defs/d", "description": "kept on the wrapper"},
            "c": {"const": "x", "description": "d"},
            "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
            "required": ["req"]});
    let view = openai_strict(&schema).unwrap();
    let p = &view["properties"];
    assert_eq!(
        view["required"],
        json!(["req", "s", "arr", "e", "bare_enum", "r", "c", "any"])
    );
    assert_eq!(p["req"], json!({"type": "string"}));
    assert_eq!(p["s"], json!({"type": ["string", "null"], "minLength": 1}));
    assert_eq!(p["arr"], json!({"type": ["integer", "boolean", "null"]}));
    assert_eq!(
        p["e"],
        json!({"type": ["string", "null"], "enum": ["a", "b", null]})
    );
    assert_eq!(p["bare_enum"], json!({"enum": ["a", 1, null]}));
    assert_eq!(
        p["r"],
        json!({"anyOf": [{"$ref": "#/$defs/d"}, {"type": "null"}],
                "description": "kept on the wrapper"})
    );
    assert_eq!(
        p["c"],
        json!({"anyOf": [{"const": "x"}, {"type": "null"}], "description": "d"})
    );
    assert_eq!(p["any"]["anyOf"][1], json!({"type": "null"}));
}

#[test]
fn optional_properties_that_accept_null_are_refused() {
    let schema = json!({"type": "object", "$defs": {"n": {"type": "null"}}, "properties": {
            "t": {"type": ["string", "null"]}, "e": {"enum": ["a", null]},
            "any": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "r": {"$ref": "#/$defs/n"},
            "ok": {"type": ["string", "null"]}}, "required": ["ok"]});
    let expected: Vec<_> = ["t", "e", "any", "r"]
        .iter()
        .map(|p| ("required".to_owned(), format!("/properties/{p}")))
        .collect();
    assert_eq!(errs(schema), expected);
}

#[test]
fn the_root_must_be_a_plain_object() {
    fails(
        json!({"type": "object", "anyOf": [{"type": "object"}]}),
        "anyOf",
        "",
    );
    fails(
        json!({"type": "object", "oneOf": [{"required": ["a"]}]}),
        "oneOf",
        "",
    );
    fails(json!({"type": "string"}), "type", "");
    fails(json!({"properties": {}}), "type", "");
    fails(json!(true), "type", "");
    fails(json!([1]), "type", "");
}

#[test]
fn exclusive_one_of_becomes_any_of() {
    let tagged = json!({"type": "object", "properties": {"p": {"oneOf": [
            {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
            {"type": "object", "properties": {"k": {"enum": ["b", "c"]}, "n": {"type": "integer"}},
                "required": ["k"]}]}},
            "required": ["p"]});
    let view = openai_strict(&tagged).unwrap();
    let branches = &view["properties"]["p"]["anyOf"];
    assert_eq!(branches[1]["required"], json!(["k", "n"]));
    assert_eq!(
        branches[1]["properties"]["n"]["type"],
        json!(["integer", "null"])
    );
    let typed = obj(json!({"p": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}));
    assert!(openai_strict(&typed).unwrap()["properties"]["p"]["anyOf"].is_array());
    let values = obj(json!({"p": {"oneOf": [{"enum": [1, 2]}, {"enum": [3]}]}}));
    assert!(openai_strict(&values).is_ok());
}

#[test]
fn overlapping_one_of_is_refused() {
    for branches in [
        json!([{"type": "number"}, {"type": "integer"}]),
        json!([{"enum": [1, 2]}, {"enum": [2.0]}]),
        json!([{"type": "string"}, {"type": "string", "minLength": 3}]),
        // The tag is optional in both, so `{}` matches both.
        json!([{"type": "object", "properties": {"k": {"const": "a"}}}, {"type": "object",
                "properties": {"k": {"const": "b"}}}]),
        // The tag is required, but a string would match both branches.
        json!([{"properties": {"k": {"const": "a"}}, "required": ["k"]},
                {"properties": {"k": {"const": "b"}}, "required": ["k"]}]),
    ] {
        fails_p(json!({"oneOf": branches}), "oneOf");
    }
}

#[test]
fn exclusivity_follows_refs_and_closed_objects() {
    let root = json!({"$defs": {"a": {"type": "object", "properties": {"k": {"const": 1}},
            "required": ["k"]}, "b": {"type": "object", "properties": {"k": {"const": 2}}}}});
    assert!(exclusive(
        &[json!({"$ref": "#/$defs/a"}), json!({"$ref": "#/$defs/b"})],
        &root
    ));
    let closed = [
        json!({"type": "object", "properties": {"x": {}}, "required": ["x"]}),
        json!({"type": "object", "properties": {"y": {}}, "additionalProperties": false}),
    ];
    assert!(exclusive(&closed, &Value::Null));
    assert!(!exclusive(
        &[json!({"$ref": "#/nowhere"}), json!({"type": "string"})],
        &root
    ));
    assert!(exclusive(&[json!(false), json!(true)], &root));
}

#[test]
fn ref_stands_alone() {
    let schema = json!({"type": "object", "$defs": {"d": {"type": "string"}}, "properties": {
            "p": {"$ref": "#/$defs/d", "description": "x", "title": "y", "default": "z"}},
                "required": ["p"]});
    assert_eq!(
        openai_strict(&schema).unwrap()["properties"]["p"],
        json!({"$ref": "#/$defs/d"})
    );
    let sibling = json!({"type": "object", "$defs": {"d": {"type": "string"}}, "properties": {
            "p": {"$ref": "#/$defs/d", "maxLength": 3}}, "required": ["p"]});
    fails(sibling, "$ref", "/properties/p");
    for bad in ["https://example.com/s.json", "#/$defs/missing", "#anchor"] {
        fails_p(json!({"$ref": bad}), "$ref");
    }
    assert!(
        openai_strict(&obj(
            json!({"p": {"type": "array", "items": {"$ref": "#"}}})
        ))
        .is_ok()
    );
    // An optional property with a dangling `$ref` is refused for the `$ref` alone.
    let dangling = json!({"type": "object", "properties": {"p": {"$ref": "#/nowhere"}}});
    fails(dangling, "$ref", "/properties/p");
}

#[test]
fn annotations_are_dropped_and_description_kept() {
    let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "urn:x", "title": "T",
            "description": "D", "$comment": "c", "type": "object",
                "properties": {"p": {"type": "string", "default": "a",
            "title": "t", "examples": ["e"], "deprecated": true, "readOnly": false,
                "writeOnly": false, "discriminator": {},
            "description": "kept"}}, "required": ["p"]});
    let view = openai_strict(&schema).unwrap();
    assert_eq!(
        view,
        json!({"description": "D", "type": "object", "properties": {"p": {"type": "string",
                "description": "kept"}},
            "required": ["p"], "additionalProperties": false})
    );
    fails_p(json!({"type": "string", "$id": "urn:inner"}), "$id");
}

#[test]
fn arrays_need_typed_items() {
    fails_p(json!({"type": "array"}), "items");
    fails_p(json!({"type": "array", "items": {"minLength": 1}}), "items");
    fails_p(
        json!({"type": "array", "items": [{"type": "string"}]}),
        "items",
    );
    fails_p(json!({"type": "array", "items": true}), "items");
    for items in [
        json!({"type": "string"}),
        json!({"enum": ["a"]}),
        json!({"const": 1}),
        json!({"anyOf": [{"type": "string"}]}),
    ] {
        assert!(openai_strict(&obj(json!({"p": {"type": "array", "items": items}}))).is_ok());
    }
}

#[test]
fn unsupported_keywords_are_refused() {
    for (keyword, value) in [
        ("patternProperties", json!({"^x": {"type": "string"}})),
        ("unevaluatedProperties", json!(false)),
        ("propertyNames", json!({"pattern": "^x"})),
        ("minProperties", json!(1)),
        ("maxProperties", json!(1)),
        ("unevaluatedItems", json!(false)),
        ("contains", json!({"type": "string"})),
        ("minContains", json!(1)),
        ("maxContains", json!(1)),
        ("uniqueItems", json!(true)),
        ("dependentRequired", json!({})),
        ("dependentSchemas", json!({})),
        ("if", json!({})),
        ("then", json!({})),
        ("else", json!({})),
        ("not", json!({})),
        ("allOf", json!([{"type": "object"}])),
        ("prefixItems", json!([])),
        ("nullable", json!(true)),
        ("$defs", json!({})),
        ("x-vendor", json!(1)),
    ] {
        let mut schema = json!({"type": "object", "properties": {"p": {"type": "object",
                "properties": {}}}, "required": ["p"]});
        schema["properties"]["p"][keyword] = value;
        let errors = openai_strict(&schema).unwrap_err();
        assert_eq!(errors.len(), 1, "{keyword}: {errors:?}");
        assert_eq!(
            (errors[0].keyword.as_str(), errors[0].pointer.as_str()),
            (keyword, "/properties/p")
        );
        assert!(
            errors[0].message.contains("without strict mode"),
            "{}",
            errors[0].message
        );
    }
}

#[test]
fn patterns_without_lookaround_pass() {
    for pattern in ["(?=a)", "x(?!a)", "(?<=a)b", "(?<!a)b"] {
        fails_p(json!({"type": "string", "pattern": pattern}), "pattern");
    }
    for pattern in [r"^\(?=$", "[(?=]", "(?<name>a)", "(?:a)", "^[A-Za-z'-]+$"] {
        assert!(
            openai_strict(&obj(json!({"p": {"type": "string", "pattern": pattern}}))).is_ok(),
            "{pattern}"
        );
    }
}

#[test]
fn only_known_formats_pass() {
    for format in FORMATS {
        assert!(openai_strict(&obj(json!({"p": {"type": "string", "format": format}}))).is_ok());
    }
    for format in [json!("uri"), json!("regex"), json!(1)] {
        fails_p(json!({"type": "string", "format": format}), "format");
    }
}

/// An object nested `levels` deep (the root is level 1) under properties `p`, `p`, ….
fn nested(levels: usize) -> Value {
    (1..levels).fold(json!({"type": "object", "properties": {}}), |inner, _| {
        obj(json!({"p": inner}))
    })
}

#[test]
fn nesting_deeper_than_five_objects_is_refused() {
    assert!(openai_strict(&nested(5)).is_ok());
    fails(
        nested(6),
        "properties",
        "/properties/p/properties/p/properties/p/properties/p/properties/p",
    );
    // Arrays add no level; objects reached through `$ref` count where they are used.
    let items = obj(json!({"p": {"type": "array", "items": nested(4)}}));
    assert!(openai_strict(&items).is_ok());
    let mut via_ref = obj(json!({"p": {"$ref": "#/$defs/d"}}));
    via_ref["$defs"] = json!({"d": nested(5)});
    fails(
        via_ref,
        "properties",
        "/$defs/d/properties/p/properties/p/properties/p/properties/p",
    );
    let recursive = json!({"type": "object",
            "$defs": {"n": obj(json!({"p": {"$ref": "#/$defs/n"}}))},
            "properties": {"p": {"$ref": "#/$defs/n"}}, "required": ["p"]});
    assert!(openai_strict(&recursive).is_ok());
}

#[test]
fn boolean_subschemas_are_refused() {
    fails_p(json!(true), "properties");
    fails_p(json!(false), "properties");
    fails(
        obj(json!({"p": {"anyOf": [{"type": "string"}, true]}})),
        "anyOf",
        "/properties/p/anyOf/1",
    );
    fails_p(json!({"description": "anything"}), "type");
}

#[test]
fn definitions_are_transformed_in_place() {
    let schema = json!({"type": "object", "definitions": {"x": {"type": "object",
            "properties": {"a": {"type": "integer", "default": 1}}}},
            "properties": {"p": {"$ref": "#/definitions/x"}}, "required": ["p"]});
    let view = openai_strict(&schema).unwrap();
    assert_eq!(
        view["definitions"]["x"],
        json!({"type": "object", "properties": {"a": {"type": ["integer", "null"]}},
                "required": ["a"], "additionalProperties": false})
    );
    let bad = json!({"type": "object", "$defs": {"x": {"type": "string", "format": "uri"}},
            "properties": {}});
    fails(bad, "format", "/$defs/x");
}

#[test]
fn required_names_must_be_properties() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": ["a", "b"]});
    fails(schema, "required", "");
}

#[test]
fn key_order_enum_and_nested_arrays_are_kept() {
    // `Value`'s `==` ignores key order; the serialised text does not.
    let schema = json!({"required": ["z"], "type": "object", "properties": {
            "z": {"type": "array", "items": {"type": "array",
                "items": {"enum": ["b", "a"], "type": "string"}}},
            "a": {"maxLength": 2, "type": "string"}}});
    let expected = json!({"required": ["z", "a"], "type": "object", "properties": {
            "z": {"type": "array", "items": {"type": "array",
                "items": {"enum": ["b", "a"], "type": "string"}}},
            "a": {"maxLength": 2, "type": ["string", "null"]}}, "additionalProperties": false});
    let view = openai_strict(&schema).unwrap();
    assert_eq!(view.to_string(), expected.to_string());
}

#[test]
fn pointers_are_escaped_and_every_problem_reported() {
    let schema = json!({"type": "object", "properties": {"a/b": {"type": "string",
            "format": "uri"}, "c~d": {"type": "array"}, "ok": {"type": "string"}},
            "required": ["a/b", "c~d", "ok"], "uniqueItems": true});
    let expected = [
        ("format", "/properties/a~1b"),
        ("items", "/properties/c~0d"),
        ("uniqueItems", ""),
    ];
    assert_eq!(
        errs(schema),
        expected.map(|(k, p)| (k.to_owned(), p.to_owned())).to_vec()
    );
    let errors = openai_strict(&json!({"type": "object", "minProperties": 1})).unwrap_err();
    assert!(errors[0].message.contains("minProperties"));
}

#[test]
fn fixture_catalog() {
    let failing: &[(&str, &[(&str, &str)])] = &[
        ("air-quality@v1", &[("dependentRequired", "")]),
        (
            "create-issue@v1",
            &[
                ("uniqueItems", "/properties/labels"),
                ("required", "/properties/milestone"),
            ],
        ),
        ("stock-quote@v1", &[("required", "/properties/exchange")]),
        (
            "update-event@v1",
            &[
                ("required", "/properties/location"),
                ("required", "/properties/notes"),
            ],
        ),
    ];
    for (name, _) in FIXTURES {
        let expected = failing
            .iter()
            .find(|(n, _)| n == name)
            .map_or(&[][..], |(_, e)| e);
        let expected: Vec<_> = expected
            .iter()
            .map(|(k, p)| (k.to_string(), p.to_string()))
            .collect();
        assert_eq!(errs(fixture(name)), expected, "{name}");
    }
    let event = openai_strict(&fixture("create-event@v1")).unwrap();
    let recurrence = &event["properties"]["recurrence"];
    assert_eq!(
        recurrence["anyOf"],
        json!([{"$ref": "#/$defs/recurrence"}, {"type": "null"}])
    );
    assert_eq!(
        recurrence["description"],
        "How the event repeats; omit for a one-off."
    );
    let branches = &event["$defs"]["recurrence"]["anyOf"];
    assert_eq!(
        branches[0]["properties"]["frequency"],
        json!({"const": "once"})
    );
    assert_eq!(
        branches[1]["required"],
        json!(["frequency", "interval", "until"])
    );
    assert_eq!(
        branches[1]["properties"]["interval"],
        json!({"type": ["integer", "null"], "minimum": 1})
    );
    assert_eq!(
        event["$defs"]["attendee"]["properties"]["optional"],
        json!({"type": ["boolean", "null"], "description": "Whether attendance is optional."})
    );
    let convert = openai_strict(&fixture("currency-convert@v1")).unwrap();
    assert_eq!(convert["properties"]["amount"]["exclusiveMinimum"], 0);
    assert_eq!(
        convert["properties"]["source"]["anyOf"][0],
        json!({"const": "ecb"})
    );
    let free = openai_strict(&fixture("find-free-time@v1")).unwrap();
    let busy = &free["properties"]["participants"]["items"]["properties"]["busy"];
    assert_eq!(busy["items"]["required"], json!(["start", "end"]));
}

#[test]
fn fixtures_list_every_tool_of_the_catalog() {
    let bundles =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/catalog/bundles");
    let dirs =
        |path: std::path::PathBuf| std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path());
    let tools = dirs(bundles)
        .flat_map(|b| dirs(b.join("tools")))
        .flat_map(dirs);
    assert_eq!(
        tools.filter(|v| v.join("tool.json").is_file()).count(),
        FIXTURES.len()
    );
}

/// Small random schemas: objects, arrays, scalars and a few keywords of each kind.
pub(in crate::schema) fn arb_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": ["integer", "null"]})),
        Just(json!({"enum": ["a", "b"]})),
        Just(json!({"const": 3})),
        Just(json!({"type": "string", "format": "uri"})),
        Just(json!({"$ref": "#/$defs/d"})),
        Just(json!({"type": "integer", "exclusiveMinimum": 0})),
        Just(json!({"type": "string", "pattern": "(?=x)"})),
        Just(json!(true)),
        Just(json!({})),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (
                prop::collection::btree_map("[a-c/~]{1,2}", inner.clone(), 0..4),
                any::<bool>(),
                prop::sample::select(vec![
                    json!(null),
                    json!(false),
                    json!(true),
                    json!({"type": "string"})
                ])
            )
                .prop_map(|(props, all, extra)| {
                    let required: Vec<_> = props.keys().filter(|_| all).cloned().collect();
                    let mut schema =
                        json!({"type": "object", "properties": props, "required": required});
                    if !extra.is_null() {
                        schema["additionalProperties"] = extra;
                    }
                    schema
                }),
            inner
                .clone()
                .prop_map(|items| json!({"type": "array", "items": items})),
            prop::collection::vec(inner, 1..3).prop_map(|branches| json!({"oneOf": branches})),
        ]
    })
}

fn all_objects_closed(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            let closed = !has_type(map, "object") || {
                let props: Vec<_> = map["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(|k| json!(k))
                    .collect();
                map["additionalProperties"] == false && map["required"] == Value::Array(props)
            };
            closed && map.values().all(all_objects_closed)
        }
        Value::Array(items) => items.iter().all(all_objects_closed),
        _ => true,
    }
}

proptest! {
    #[test]
    fn strict_views_never_panic_and_close_every_object(
        props in prop::collection::btree_map("[a-d]", arb_schema(), 0..4),
        defs in arb_schema(),
    ) {
        let schema = json!({"type": "object", "$defs": {"d": defs}, "properties": props});
        if let Ok(view) = openai_strict(&schema) {
            prop_assert!(all_objects_closed(&view), "{view}");
        }
    }
}
