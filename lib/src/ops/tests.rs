//! Round trips through the real store: what a user writes is what a rewrite keeps.

use super::BundleInput;
use crate::catalog::*;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-zA-Z0-9 _\\-éü\"\\\\/\n]{0,12}".prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-z$_]{1,8}", inner), 0..5)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// A schema whose properties come in a random (not sorted) order, with `$defs` and nesting.
/// Each property is a schema holding any JSON as data (`default`): put refuses a property that
/// is not a JSON Schema.
fn schema() -> impl Strategy<Value = Value> {
    prop::collection::vec(("[a-zA-Z_][a-zA-Z0-9_]{0,10}", value()), 1..8).prop_map(|props| {
        let properties: Map<String, Value> = props
            .into_iter()
            .map(|(name, value)| (name, json!({ "default": value })))
            .collect();
        json!({ "type": "object", "properties": properties, "$defs": { "z": { "enum": [3, 1, 2] }, "a": {} } })
    })
}

fn order_sensitive(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

fn catalog_with_bundle() -> (tempfile::TempDir, Catalog) {
    let dir = tempfile::tempdir().unwrap();
    Catalog::init(dir.path()).unwrap();
    let mut catalog = Catalog::open(dir.path()).unwrap();
    let input = BundleInput::Fields {
        id: None,
        slug: "b".into(),
        display_name: None,
        description: None,
        enabled: true,
    };
    catalog.put_bundle(input).unwrap();
    (dir, catalog)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// parse → write → parse keeps unknown fields, their order, and the key order of schemas;
    /// and enable/disable rewrites nothing but `isEnabled`.
    #[test]
    fn put_then_toggle_keeps_every_field_in_order(
        arg_schema in schema(),
        output_schema in schema(),
        extras in prop::collection::vec(("x-[a-z]{1,6}", value()), 0..5),
    ) {
        let (_dir, mut catalog) = catalog_with_bundle();
        let mut doc = Map::new();
        doc.insert("slug".into(), "t".into());
        for (key, value) in &extras {
            doc.insert(key.clone(), value.clone());
        }
        doc.insert("version".into(), "v1".into());
        doc.insert("type".into(), "native".into());
        doc.insert("impl".into(), json!({ "func": "now" }));
        doc.insert("argSchema".into(), arg_schema.clone());
        doc.insert("outputSchema".into(), output_schema.clone());
        let input = Value::Object(doc.clone());

        catalog.put_tool(input, "generated", Some("b")).unwrap();
        let (stored, problems) = catalog.resolve_tool("b/t@v1", VersionChoice::Exact).unwrap();
        prop_assert!(problems.is_empty());
        // Every field given comes back, in the order given (filled fields aside).
        let kept: Map<String, Value> = stored
            .doc
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| doc.contains_key(k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        prop_assert_eq!(order_sensitive(&Value::Object(kept)), order_sensitive(&Value::Object(doc)));

        let before = stored.doc.clone();
        catalog.set_tool_enabled("b/t@v1", false).unwrap();
        let (after, _) = catalog.resolve_tool("b/t@v1", VersionChoice::Exact).unwrap();
        prop_assert!(!after.is_enabled);
        let mut after_doc = after.doc.clone();
        after_doc.as_object_mut().unwrap().shift_remove("isEnabled");
        prop_assert_eq!(order_sensitive(&after_doc), order_sensitive(&before));
    }
}

#[test]
fn put_fills_identity_and_time_fields() {
    let (_dir, mut catalog) = catalog_with_bundle();
    let doc = json!({ "slug": "t", "version": "v1", "type": "native", "impl": { "func": "now" },
                      "argSchema": { "type": "object" } });
    let entry = catalog.put_tool(doc, "inline", Some("b")).unwrap();
    let keys: Vec<&str> = entry
        .doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "schemaVersion",
            "toolID",
            "bundleID",
            "slug",
            "version",
            "type",
            "impl",
            "argSchema",
            "createdAt",
            "modifiedAt"
        ]
    );
    assert_eq!(entry.tool.tool_id.get_version_num(), 7);
    assert_eq!(entry.tool.created_at, entry.tool.modified_at);
}

#[test]
fn given_timestamps_are_replaced_by_the_time_of_the_put() {
    let (_dir, mut catalog) = catalog_with_bundle();
    let doc = json!({ "slug": "t", "version": "v1", "type": "native", "impl": { "func": "now" },
                      "argSchema": { "type": "object" },
                      "createdAt": "2025-01-02T00:00:00Z", "modifiedAt": "2025-01-01T00:00:00Z" });
    let entry = catalog.put_tool(doc, "inline", Some("b")).unwrap();
    assert_ne!(entry.doc["createdAt"], "2025-01-02T00:00:00Z");
    assert_eq!(entry.doc["modifiedAt"], entry.doc["createdAt"]);
}

#[test]
fn wrong_types_are_reported_with_their_pointer() {
    let (_dir, mut catalog) = catalog_with_bundle();
    let cases = [
        (
            json!({ "slug": "t", "version": "v1", "type": "native", "impl": { "func": "now" }, "argSchema": {}, "isEnabled": "yes" }),
            "/isEnabled",
        ),
        (
            json!({ "slug": "t", "version": "v1", "type": "native", "impl": { "func": "now" }, "argSchema": {}, "tags": ["a", 3] }),
            "/tags/1",
        ),
        (
            json!({ "slug": "t", "version": "v1", "type": "shell", "impl": {}, "argSchema": {} }),
            "/type",
        ),
        (
            json!({ "version": "v1", "type": "native", "impl": { "func": "now" }, "argSchema": {} }),
            "/slug",
        ),
        (
            json!({ "slug": "t", "version": "v1", "type": "native", "impl": { "func": "now" } }),
            "/argSchema",
        ),
        (
            json!({ "slug": "t", "version": "v1", "type": "native", "impl": { "func": "now" }, "allowNoSchema": true }),
            "/noSchemaMode",
        ),
        (
            json!({ "slug": "t", "version": "v1", "type": "http", "argSchema": {}, "impl": { "urlTemplate": "https://x.test/", "method": "FETCH" } }),
            "/impl/method",
        ),
        (
            json!({ "slug": "t", "version": "v1", "type": "http", "argSchema": {}, "impl": { "urlTemplate": "https://x.test/", "timeoutMs": "5" } }),
            "/impl/timeoutMs",
        ),
        (
            json!({ "slug": "t", "version": "v1", "type": "http", "argSchema": {}, "impl": { "urlTemplate": "https://x.test/", "headers": { "A": "b\r\nX: y" } } }),
            "/impl/headers/A",
        ),
        (
            json!({ "slug": "t", "version": "v1", "type": "native", "impl": { "func": "now" }, "argSchema": {}, "toolID": "5f8a4a8e-4b2b-4f8e-9d7a-2c1f1b2c3d4e" }),
            "/toolID",
        ),
    ];
    for (doc, pointer) in cases {
        let error = catalog
            .put_tool(doc.clone(), "inline", Some("b"))
            .unwrap_err();
        let pointers: Vec<&str> = error
            .violations()
            .iter()
            .map(|v| v.pointer.as_str())
            .collect();
        assert!(
            pointers.contains(&pointer),
            "{doc}: expected {pointer}, got {error} {pointers:?}"
        );
    }
}

/// serde_json's default float parser is off by one ulp for some numbers; the
/// `float_roundtrip` feature must stay on so a rewrite keeps numbers exactly.
#[test]
fn regression_floats_survive_a_rewrite_exactly() {
    let (_dir, mut catalog) = catalog_with_bundle();
    let doc = json!({ "slug": "t", "version": "v1", "type": "native", "impl": { "func": "now" },
                      "argSchema": { "type": "number", "maximum": 0.18591161198575257 } });
    catalog.put_tool(doc, "inline", Some("b")).unwrap();
    catalog.set_tool_enabled("b/t", false).unwrap();
    let (entry, _) = catalog.resolve_tool("b/t", VersionChoice::Exact).unwrap();
    let text = std::fs::read_to_string(entry.path.unwrap()).unwrap();
    assert!(text.contains("0.18591161198575257"), "{text}");
}

/// `mcp import`'s choice of the tools to leave out: one whose exported name a catalog tool
/// wants, and of new tools that want one name among themselves, all but the first; the rest
/// add no collision.
#[test]
fn colliding_new_tools_leaves_out_only_what_collides() {
    let (_dir, mut catalog) = catalog_with_bundle();
    let tool = |slug: &str| {
        json!({
            "slug": slug, "version": "1", "type": "native", "impl": { "func": "now" },
            "argSchema": { "type": "object", "properties": {} }
        })
    };
    catalog.put_tool(tool("weather"), "t", Some("b")).unwrap();
    let cyrillic = "w\u{435}ather";
    let left_out = catalog
        .colliding_new_tools("b", &[cyrillic, "meteo", "ok", "météo"])
        .unwrap();
    let mut slugs: Vec<(&str, &[String])> = left_out
        .iter()
        .map(|(slug, _, others)| (slug.as_str(), others.as_slice()))
        .collect();
    slugs.sort();
    assert_eq!(
        slugs,
        [
            ("météo", &["b/meteo".to_owned()][..]),
            (cyrillic, &["b/weather".to_owned()][..]),
        ]
    );
    let meteo = left_out.iter().find(|(slug, ..)| slug == "météo").unwrap();
    assert!(meteo.1.contains("would all want the exported name 'meteo'"));
    assert!(
        catalog
            .colliding_new_tools("b", &["meteo", "ok"])
            .unwrap()
            .is_empty()
    );
}
