//! The Gemini form of argument schemas: what it keeps, changes and refuses.

use super::*;
use crate::schema::strict::tests::{FIXTURES, arb_schema, fixture, problems};
use proptest::prelude::*;

/// Asserts that `schema` has exactly the problems `expected` (keyword, pointer).
#[track_caller]
fn fails(schema: Value, expected: &[(&str, &str)]) {
    let expected: Vec<_> = expected
        .iter()
        .map(|(k, p)| (k.to_string(), p.to_string()))
        .collect();
    assert_eq!(problems(gemini_schema, &schema), expected);
}

/// The Gemini view of a root object with the one property `p`.
fn prop(schema: Value) -> Result<Value, Vec<Unexpressible>> {
    gemini_schema(&json!({"type": "object", "properties": {"p": schema}}))
        .map(|v| v["properties"]["p"].clone())
}

fn obj(p: Value) -> Value {
    json!({"type": "object", "properties": {"p": p}})
}

#[test]
fn refs_are_inlined_and_defs_dropped() {
    let schema = json!({"type": "object", "$defs": {"a~/b": {"type": "string",
        "description": "inner", "title": "A"}},
        "definitions": {"n": {"type": "integer"}},
        "properties": {"x": {"$ref": "#/$defs/a~0~1b", "description": "outer"},
            "y": {"$ref": "#/definitions/n"},
            "z": {"$ref": "#/properties/y"}, "w": {"$ref": "#/%24defs/a~0~1b"}}});
    let view = gemini_schema(&schema).unwrap();
    assert_eq!(
        view,
        json!({"type": "object", "properties": {
        "x": {"type": "string", "description": "outer", "title": "A"}, "y": {"type": "integer"},
        "z": {"type": "integer"}, "w": {"type": "string", "description": "inner",
            "title": "A"}}})
    );
}

#[test]
fn refs_that_cannot_be_inlined_are_refused() {
    let recursive = json!({"type": "object", "$defs": {"node": {"type": "object",
        "properties": {"next": {"$ref": "#/$defs/node"}}}},
        "properties": {"head": {"$ref": "#/$defs/node"}}});
    fails(recursive, &[("$ref", "/$defs/node/properties/next")]);
    fails(obj(json!({"$ref": "#"})), &[("$ref", "/properties/p")]);
    fails(
        obj(json!({"$ref": "https://example.com/s.json"})),
        &[("$ref", "/properties/p")],
    );
    fails(
        obj(json!({"$ref": "#/$defs/missing"})),
        &[("$ref", "/properties/p")],
    );
    let sibling = json!({"type": "object", "$defs": {"s": {"type": "string"}},
        "properties": {"p": {"$ref": "#/$defs/s", "maxLength": 3}}});
    fails(sibling, &[("$ref", "/properties/p")]);
    // A problem in a target used twice is reported once, where it is.
    let twice = json!({"type": "object", "$defs": {"u": {"type": "array",
        "items": {"type": "string"}, "not": {"maxItems": 0}}},
        "properties": {"a": {"$ref": "#/$defs/u"}, "b": {"$ref": "#/$defs/u"}}});
    fails(twice, &[("not", "/$defs/u")]);
}

#[test]
fn const_becomes_a_one_value_enum() {
    assert_eq!(
        prop(json!({"const": "ecb", "description": "d"})).unwrap(),
        json!({"type": "string", "enum": ["ecb"], "description": "d"})
    );
    assert_eq!(
        prop(json!({"type": "string", "const": "x"})).unwrap(),
        json!({"type": "string", "enum": ["x"]})
    );
    for value in [json!(1), json!(true), json!(null), json!({"a": 1})] {
        fails(obj(json!({"const": value})), &[("const", "/properties/p")]);
    }
}

#[test]
fn enums_hold_strings_and_null_becomes_nullable() {
    assert_eq!(
        prop(json!({"type": "string", "enum": ["a", "b"]})).unwrap(),
        json!({"type": "string", "enum": ["a", "b"]})
    );
    let nullable = json!({"type": ["string", "null"], "enum": ["a", null]});
    assert_eq!(
        prop(nullable).unwrap(),
        json!({"type": "string", "nullable": true, "enum": ["a"]})
    );
    assert_eq!(
        prop(json!({"enum": [null, "a"]})).unwrap(),
        json!({"type": "string", "nullable": true, "enum": ["a"]})
    );
    // Null is refused by the type, or by the enum: no `nullable`.
    let refused = json!({"type": ["string", "null"], "enum": ["a"]});
    assert_eq!(
        prop(refused).unwrap(),
        json!({"type": "string", "enum": ["a"]})
    );
    let constant = json!({"type": ["string", "null"], "const": "a"});
    assert_eq!(
        prop(constant).unwrap(),
        json!({"type": "string", "enum": ["a"]})
    );
    assert_eq!(
        prop(json!({"type": "string", "enum": ["a", null]})).unwrap(),
        json!({"type": "string", "enum": ["a"]})
    );
    fails(
        obj(json!({"type": "integer", "enum": [1, 2]})),
        &[("enum", "/properties/p")],
    );
    fails(obj(json!({"enum": [null]})), &[("enum", "/properties/p")]);
    fails(
        obj(json!({"enum": ["a"], "const": "a"})),
        &[("const", "/properties/p")],
    );
}

#[test]
fn type_lists_become_nullable_or_any_of() {
    assert_eq!(
        prop(json!({"type": ["number", "null"], "minimum": 0})).unwrap(),
        json!({"type": "number", "nullable": true, "minimum": 0})
    );
    assert_eq!(
        prop(json!({"type": ["string", "integer"]})).unwrap(),
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    assert_eq!(
        prop(json!({"type": ["null", "string", "boolean"]})).unwrap(),
        json!({"anyOf": [{"type": "string", "nullable": true}, {"type": "boolean",
            "nullable": true}]})
    );
    fails(obj(json!({"type": ["null"]})), &[("type", "/properties/p")]);
    fails(obj(json!({"type": "null"})), &[("type", "/properties/p")]);
    fails(
        obj(json!({"type": "decimal"})),
        &[("type", "/properties/p")],
    );
    fails(
        obj(json!({"type": ["string", "integer"], "anyOf": [{"type": "string"}]})),
        &[("type", "/properties/p")],
    );
}

/// Regression: pydantic writes `Optional[T]` as `anyOf: [T, {"type": "null"}]`,
/// which Gemini refused ("accepts only null") although it takes `type: [T, "null"]`.
#[test]
fn null_branches_become_nullable() {
    let optional = json!({"anyOf": [{"type": "string", "maxLength": 10}, {"type": "null"}],
        "default": null, "title": "Note", "description": "A note."});
    let view = prop(optional).unwrap();
    assert_eq!(
        view,
        json!({"type": "string", "nullable": true, "maxLength": 10, "default": null,
            "title": "Note", "description": "A note."})
    );
    assert_eq!(
        view.as_object().unwrap().keys().take(2).collect::<Vec<_>>(),
        ["type", "nullable"]
    );
    assert_eq!(
        prop(json!({"oneOf": [{"type": "null", "description": "none"}, {"type": "integer"}]}))
            .unwrap(),
        json!({"type": "integer", "nullable": true})
    );
    assert_eq!(
        prop(json!({"anyOf": [{"type": ["null"]}, {"enum": ["a", "b"]}]})).unwrap(),
        json!({"type": "string", "nullable": true, "enum": ["a", "b"]})
    );
    // Several others: an `anyOf` of them, each nullable (nothing beside the `anyOf`).
    assert_eq!(
        prop(json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}))
            .unwrap(),
        json!({"anyOf": [{"type": "string", "nullable": true},
            {"type": "integer", "nullable": true}]})
    );
    assert_eq!(
        prop(
            json!({"anyOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]},
            {"type": "null"}]})
        )
        .unwrap(),
        json!({"anyOf": [{"type": "string", "nullable": true},
            {"type": "integer", "nullable": true}]})
    );
    // A `type` beside refuses null: the null branch never matches, and nothing is nullable.
    assert_eq!(
        prop(json!({"type": "string",
            "anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]}))
        .unwrap(),
        json!({"type": "string", "maxLength": 3})
    );
    // Both descriptions are kept, the branch's rules included.
    assert_eq!(
        prop(json!({"description": "Tags.", "anyOf": [{"type": "array",
            "items": {"type": "string"}, "uniqueItems": true}, {"type": "null"}]}))
        .unwrap(),
        json!({"type": "array", "nullable": true, "items": {"type": "string"},
            "description": "Tags. Items must be unique."})
    );
}

#[test]
fn null_branches_that_cannot_become_nullable_are_refused() {
    // Null alone is still nothing Gemini can say.
    fails(
        obj(json!({"anyOf": [{"type": "null"}]})),
        &[("type", "/properties/p/anyOf/0")],
    );
    // A keyword both beside and in the one branch left: both apply, one field cannot say so.
    fails(
        obj(json!({"maxLength": 5,
            "anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]})),
        &[("maxLength", "/properties/p")],
    );
    // A null branch with a rule of its own is not "only null"; two null branches in a `oneOf`
    // overlap.
    fails(
        obj(json!({"anyOf": [{"type": "string"}, {"type": "null", "maxLength": 1}]})),
        &[("type", "/properties/p/anyOf/1")],
    );
    fails(
        obj(json!({"oneOf": [{"type": "string"}, {"type": "null"}, {"type": "null"}]})),
        &[("oneOf", "/properties/p")],
    );
    // Errors in the branch left keep its pointer.
    fails(
        obj(json!({"anyOf": [{"type": "null"}, {"type": "string", "not": {"const": "x"}}]})),
        &[("not", "/properties/p/anyOf/1")],
    );
}

#[test]
fn one_of_becomes_any_of_only_when_exclusive() {
    let tagged = json!({"oneOf": [{"type": "object", "properties": {"k": {"const": "a"}},
        "required": ["k"]},
        {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]}]});
    let view = prop(tagged).unwrap();
    assert_eq!(
        view["anyOf"][1],
        json!({"type": "object", "properties": {"k": {"type": "string", "enum": ["b"]}},
            "required": ["k"]})
    );
    fails(
        obj(json!({"oneOf": [{"type": "number"}, {"type": "integer"}]})),
        &[("oneOf", "/properties/p")],
    );
    fails(
        obj(json!({"oneOf": [{"type": "string"}], "anyOf": [{"type": "string"}]})),
        &[("oneOf", "/properties/p")],
    );
}

#[test]
fn exclusive_bounds_on_integers_become_inclusive() {
    assert_eq!(
        prop(json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10})).unwrap(),
        json!({"type": "integer", "minimum": 1, "maximum": 9})
    );
    assert_eq!(
        prop(json!({"type": ["integer", "null"], "exclusiveMaximum": 5.0})).unwrap(),
        json!({"type": "integer", "nullable": true, "maximum": 4})
    );
    // With both bounds the stricter one stays, at the place of the first.
    assert_eq!(
        prop(json!({"type": "integer", "minimum": 3, "exclusiveMinimum": 0})).unwrap(),
        json!({"type": "integer", "minimum": 3})
    );
    assert_eq!(
        prop(json!({"type": "integer", "exclusiveMinimum": 5, "minimum": 3})).unwrap(),
        json!({"type": "integer", "minimum": 6})
    );
    assert_eq!(
        prop(json!({"type": "integer", "maximum": 3, "exclusiveMaximum": 3})).unwrap(),
        json!({"type": "integer", "maximum": 2})
    );
    // On a number only the bound itself is widened: the rule goes to the description.
    assert_eq!(
        prop(json!({"type": "number", "exclusiveMinimum": 0})).unwrap(),
        json!({"type": "number", "minimum": 0, "description": "Must be greater than 0."})
    );
    fails(
        obj(json!({"type": "integer", "exclusiveMaximum": 0.5})),
        &[("exclusiveMaximum", "/properties/p")],
    );
    fails(
        obj(json!({"type": "integer", "exclusiveMinimum": true})),
        &[("exclusiveMinimum", "/properties/p")],
    );
}

#[test]
fn annotations_gemini_lacks_are_dropped() {
    let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:x", "$comment": "c", "type": "object",
        "properties": {"p": {"type": "string", "examples": ["e1", "e2"], "deprecated": true,
            "readOnly": true, "writeOnly": false},
            "q": {"type": "string", "example": "kept", "examples": ["dropped"]}}});
    let view = gemini_schema(&schema).unwrap();
    assert_eq!(
        view,
        json!({"type": "object", "properties": {"p": {"type": "string", "example": "e1"},
            "q": {"type": "string", "example": "kept"}}})
    );
    fails(
        obj(json!({"type": "string", "$id": "urn:inner"})),
        &[("$id", "/properties/p")],
    );
}

#[test]
fn additional_properties_is_dropped_unless_a_schema() {
    for extra in [json!(false), json!(true), json!({})] {
        let view = gemini_schema(
            &json!({"type": "object", "properties": {}, "additionalProperties": extra}),
        )
        .unwrap();
        assert_eq!(view, json!({"type": "object", "properties": {}}));
    }
    fails(
        obj(json!({"type": "object", "additionalProperties": {"type": "string"}})),
        &[("additionalProperties", "/properties/p")],
    );
}

#[test]
fn required_names_must_be_defined() {
    fails(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a",
            "b"]}),
        &[("required", "")],
    );
    fails(
        json!({"type": "object", "required": ["a"]}),
        &[("required", "")],
    );
    fails(
        json!({"type": "object", "properties": {}, "required": "a"}),
        &[("required", "")],
    );
}

#[test]
fn keywords_that_change_meaning_are_refused() {
    for keyword in [
        "patternProperties",
        "propertyNames",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "prefixItems",
        "unevaluatedProperties",
        "unevaluatedItems",
        "nullable",
        "$anchor",
        "x-unknown",
        "discriminatorx",
    ] {
        let mut schema = obj(json!({"type": "array", "items": {"type": "string"}}));
        schema["properties"]["p"][keyword] = json!(1);
        let errors = gemini_schema(&schema).unwrap_err();
        assert_eq!(errors.len(), 1, "{keyword}: {errors:?}");
        assert_eq!(
            (errors[0].keyword.as_str(), errors[0].pointer.as_str()),
            (keyword, "/properties/p")
        );
        assert!(
            errors[0].message.contains(keyword) && errors[0].message.contains("provider"),
            "{}",
            errors[0].message
        );
    }
}

#[test]
fn keywords_that_only_narrow_are_dropped_with_their_rule_in_the_description() {
    let schema = json!({"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true,
            "description": "Labels.", "contains": {"const": "x"}, "minContains": 2},
        "step": {"type": "integer", "multipleOf": 5},
        "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 10},
        "lat": {"type": "number"}, "lon": {"type": "number"},
        "plain": {"type": "array", "items": {"type": "string"}, "uniqueItems": false}},
        "dependentRequired": {"lat": ["lon"]}});
    let view = gemini_schema(&schema).unwrap();
    let props = &view["properties"];
    assert_eq!(
        props["tags"]["description"],
        "Labels. Items must be unique. Must contain at least one item matching the JSON Schema {\"const\":\"x\"}. At least 2 items must match `contains`."
    );
    assert!(props["tags"].get("uniqueItems").is_none());
    assert_eq!(props["step"]["description"], "Must be a multiple of 5.");
    assert_eq!(props["amount"]["minimum"], 0);
    assert_eq!(props["amount"]["description"], "Must be greater than 0.");
    assert_eq!(
        view["description"],
        "When lat is given, lon must be given too."
    );
    // `uniqueItems: false` narrows nothing: nothing to say.
    assert!(props["plain"].get("description").is_none());
    // A value that is not the keyword's is still refused.
    fails(
        obj(json!({"type": "array", "items": {"type": "string"}, "uniqueItems": 1})),
        &[("uniqueItems", "/properties/p")],
    );
    fails(
        obj(json!({"type": "array", "items": {"type": "string"}, "contains": 1})),
        &[("contains", "/properties/p")],
    );
}

#[test]
fn schemas_gemini_cannot_say_are_refused() {
    fails(obj(json!(true)), &[("properties", "/properties/p")]);
    fails(
        obj(json!({"type": "array", "items": false})),
        &[("items", "/properties/p")],
    );
    fails(
        obj(json!({"anyOf": [{"type": "string"}, true]})),
        &[("anyOf", "/properties/p/anyOf/1")],
    );
    fails(obj(json!({"type": "array"})), &[("items", "/properties/p")]);
    fails(
        obj(json!({"type": "array", "items": [{"type": "string"}]})),
        &[("items", "/properties/p")],
    );
    fails(
        obj(json!({"description": "anything"})),
        &[("type", "/properties/p")],
    );
    fails(json!({"type": "string"}), &[("type", "")]);
    fails(json!(true), &[("type", "")]);
}

#[test]
fn allowed_keywords_key_order_and_nested_arrays_are_kept() {
    // `Value`'s `==` ignores key order; the serialised text does not.
    let schema = json!({"type": "object", "description": "d", "minProperties": 1,
        "maxProperties": 3, "propertyOrdering": ["z", "a"], "properties": {
            "z": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "array",
                "items": {"type": "string", "enum": ["b", "a"], "format": "enum"}}},
            "a": {"title": "A", "pattern": "^a", "minLength": 1, "maxLength": 9,
                "type": "string", "default": "a", "example": "ab", "format": "date-time"},
            "n": {"maximum": 9, "type": "number", "minimum": 0}},
        "required": ["z"]});
    assert_eq!(
        gemini_schema(&schema).unwrap().to_string(),
        schema.to_string()
    );
}

#[test]
fn pointers_are_escaped_and_every_problem_reported() {
    let schema = json!({"type": "object", "properties": {"a/b": {"type": "number",
        "allOf": []}, "c~d": {"const": 1}}, "required": ["x"]});
    fails(
        schema,
        &[
            ("allOf", "/properties/a~1b"),
            ("const", "/properties/c~0d"),
            ("required", ""),
        ],
    );
}

#[test]
fn fixture_catalog() {
    let failing: &[(&str, &[(&str, &str)])] = &[];
    for (name, _) in FIXTURES {
        let expected = failing
            .iter()
            .find(|(n, _)| n == name)
            .map_or(&[][..], |(_, e)| e);
        let expected: Vec<_> = expected
            .iter()
            .map(|(k, p)| (k.to_string(), p.to_string()))
            .collect();
        assert_eq!(problems(gemini_schema, &fixture(name)), expected, "{name}");
    }
    let event = gemini_schema(&fixture("create-event@v1")).unwrap();
    assert!(event.get("$defs").is_none());
    let attendee = &event["properties"]["attendees"]["items"];
    assert_eq!(attendee["required"], json!(["email"]));
    assert!(attendee.get("additionalProperties").is_none());
    let recurrence = &event["properties"]["recurrence"];
    assert_eq!(
        recurrence["description"],
        "How the event repeats; omit for a one-off."
    );
    assert_eq!(
        recurrence["anyOf"][0]["properties"]["frequency"],
        json!({"type": "string", "enum": ["once"]})
    );
    assert_eq!(
        recurrence["anyOf"][1]["properties"]["until"]["format"],
        "date-time"
    );
    let update = gemini_schema(&fixture("update-event@v1")).unwrap();
    assert_eq!(
        update["properties"]["location"],
        json!({"type": "string", "nullable": true, "description": "New location, or null to \
            remove it."})
    );
    let issue = gemini_schema(&fixture("stock-quote@v1")).unwrap();
    assert_eq!(issue["properties"]["exchange"]["nullable"], true);
}

/// Whether `view` holds only what Gemini accepts.
fn only_gemini(view: &Value) -> bool {
    match view {
        Value::Object(map) => map.iter().all(|(key, value)| {
            let allowed = KEPT.contains(&key.as_str())
                || [
                    "type",
                    "nullable",
                    "enum",
                    "minimum",
                    "maximum",
                    "properties",
                    "required",
                    "items",
                    "anyOf",
                ]
                .contains(&key.as_str());
            let sound = match key.as_str() {
                "type" => value.as_str().is_some_and(|t| TYPES.contains(&t)),
                "enum" => value
                    .as_array()
                    .is_some_and(|e| e.iter().all(Value::is_string)),
                "properties" => value
                    .as_object()
                    .is_some_and(|p| p.values().all(only_gemini)),
                "items" => only_gemini(value),
                "anyOf" => value.as_array().is_some_and(|b| b.iter().all(only_gemini)),
                _ => true,
            };
            allowed && sound
        }),
        _ => false,
    }
}

proptest! {
    #[test]
    fn gemini_views_never_panic_and_hold_only_gemini_keywords(
        props in prop::collection::btree_map("[a-d]", arb_schema(), 0..4),
        defs in arb_schema(),
    ) {
        let schema = json!({"type": "object", "$defs": {"d": defs}, "properties": props});
        if let Ok(view) = gemini_schema(&schema) {
            prop_assert!(only_gemini(&view), "{view}");
        }
    }
}

/// Gemini refuses the whole request for a string `format` other than `date-time`/`enum` (and
/// numbers' other than `float`/`double`, `int32`/`int64`). Those it has are kept; any other is said
/// in the description, as the other narrowing keywords are.
#[test]
fn formats_gemini_lacks_are_said_in_words() {
    assert_eq!(
        prop(json!({"type": "string", "format": "email", "description": "Who to write to."}))
            .unwrap(),
        json!({"type": "string", "description": "Who to write to. Format: email."})
    );
    assert_eq!(
        prop(json!({"type": "string", "format": "uri"})).unwrap(),
        json!({"type": "string", "description": "Format: uri."})
    );
    assert_eq!(
        prop(json!({"type": "integer", "format": "date-time"})).unwrap(),
        json!({"type": "integer", "description": "Format: date-time."})
    );
    for (t, f) in [
        ("string", "date-time"),
        ("number", "float"),
        ("number", "double"),
        ("integer", "int32"),
        ("integer", "int64"),
    ] {
        let kept = json!({"type": t, "format": f});
        assert_eq!(prop(kept.clone()).unwrap(), kept);
    }
}

/// A refusal says the problem, then its fix, then another provider: "…and this `enum` has 1,
/// or export this tool for a provider that takes JSON Schema" once offered another provider as
/// if a fix had come before.
#[test]
fn a_refusal_reads_problem_then_fix_then_other_provider() {
    let errors = prop(json!({"type": "integer", "enum": [1, 2]})).unwrap_err();
    assert_eq!(
        errors[0].message,
        "Gemini's enums hold only strings, and this `enum` holds the number `1`; make the \
         values strings, or export this tool for a provider that takes JSON Schema"
    );
    let long = json!({"enum": ["a", {"k": "x".repeat(100)}]});
    let errors = prop(long).unwrap_err();
    assert!(
        errors[0]
            .message
            .contains("holds the object `{\"k\":\"xxxx")
            && errors[0]
                .message
                .contains("…`; make the values strings, or export"),
        "{}",
        errors[0].message
    );
    // Every refusal has a fix between its problem and the other provider.
    for schema in [
        json!({"type": "null"}),
        json!({"enum": [null]}),
        json!(true),
        json!({"type": "array", "items": [{"type": "string"}]}),
        json!({"type": "string", "nullable": true}),
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
    ] {
        for error in prop(schema.clone()).unwrap_err() {
            let (problem, rest) = error.message.split_once("; ").unwrap_or_default();
            let fix = rest
                .strip_suffix(", or export this tool for a provider that takes JSON Schema")
                .unwrap_or_default();
            assert!(
                !problem.is_empty() && !fix.is_empty() && !fix.contains("; "),
                "{schema}: {}",
                error.message
            );
        }
    }
}
