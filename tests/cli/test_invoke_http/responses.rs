//! successCodes, responseEncoding, extractExpr, errorMode.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn success_codes_decide_what_succeeds() {
    let w = World::new().await;
    w.get("/200", ok_json(json!({ "s": 200 }))).await;
    w.get(
        "/201",
        ResponseTemplate::new(201).set_body_json(json!({ "s": 201 })),
    )
    .await;
    w.get(
        "/404",
        ResponseTemplate::new(404).set_body_json(json!({ "s": 404 })),
    )
    .await;
    for n in ["200", "201", "404"] {
        w.tool(
            &format!("c{n}"),
            json!({ "urlTemplate": w.url(&format!("/{n}")), "successCodes": [201, 404] }),
        );
    }
    let err = w.failure("c200", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert_eq!(
        err.error.details,
        json!({ "status": 200, "body": r#"{"s":200}"# })
    );
    assert_eq!(w.value("c201", &json!({})), json!({ "s": 201 }));
    assert_eq!(w.value("c404", &json!({})), json!({ "s": 404 }));
}

#[tokio::test(flavor = "multi_thread")]
async fn response_encoding_json_and_text() {
    let w = World::new().await;
    w.get(
        "/bad",
        ResponseTemplate::new(200).set_body_string("{not json"),
    )
    .await;
    w.get(
        "/good",
        ResponseTemplate::new(200).set_body_string(r#" {"a": [1, 2.5, "é"]} "#),
    )
    .await;
    w.tool("bad-json", json!({ "urlTemplate": w.url("/bad") }));
    w.tool(
        "bad-text",
        json!({ "urlTemplate": w.url("/bad"), "responseEncoding": "text" }),
    );
    w.tool(
        "good-json",
        json!({ "urlTemplate": w.url("/good"), "responseEncoding": "json" }),
    );
    w.tool(
        "good-text",
        json!({ "urlTemplate": w.url("/good"), "responseEncoding": "text" }),
    );
    let err = w.failure("bad-json", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert!(err.error.message.contains("not JSON"), "{err:?}");
    assert_eq!(w.value("bad-text", &json!({})), json!("{not json"));
    assert_eq!(
        w.value("good-json", &json!({})),
        json!({ "a": [1, 2.5, "é"] })
    );
    assert_eq!(
        w.value("good-text", &json!({})),
        json!(r#" {"a": [1, 2.5, "é"]} "#)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn extract_expr_jsonpath() {
    let w = World::new().await;
    w.get(
        "/data",
        ok_json(json!({
            "a": { "b": { "deep": [1, 2] } },
            "items": [{ "id": 1 }, { "id": "two" }, { "other": 3 }],
            "one": [{ "id": 9 }],
        })),
    )
    .await;
    let cases = [
        ("p-ab", "$.a.b", json!({ "deep": [1, 2] })),
        ("p-deep", "$.a.b.deep", json!([1, 2])),
        ("p-ids", "$.items[*].id", json!([1, "two"])),
        ("p-one", "$.one[*].id", json!(9)),
    ];
    for (slug, expr, _) in &cases {
        w.tool(
            slug,
            json!({ "urlTemplate": w.url("/data"), "extractExpr": expr }),
        );
    }
    for (slug, expr, expected) in &cases {
        assert_eq!(w.value(slug, &json!({})), *expected, "{expr}");
    }

    w.tool(
        "p-none",
        json!({ "urlTemplate": w.url("/data"), "extractExpr": "$.nope" }),
    );
    let err = w.failure("p-none", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert!(err.error.message.contains("$.nope"), "{err:?}");
    assert!(err.error.message.contains("matched nothing"), "{err:?}");

    w.tool(
        "p-none-empty",
        json!({ "urlTemplate": w.url("/data"), "extractExpr": "$.nope", "errorMode": "empty" }),
    );
    assert_eq!(w.value("p-none-empty", &json!({})), Value::Null);

    // A JSONPath on a text response reads the text as JSON.
    w.tool(
        "p-text",
        json!({ "urlTemplate": w.url("/data"), "extractExpr": "$.a.b.deep[1]", "responseEncoding": "text" }),
    );
    assert_eq!(w.value("p-text", &json!({})), json!(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn extract_expr_regex_takes_the_first_group() {
    let w = World::new().await;
    w.get(
        "/page",
        ResponseTemplate::new(200).set_body_string("<p>token=abc123; token=zzz</p>\nid: 42"),
    )
    .await;
    let cases = [
        ("r-group", r"token=([a-z0-9]+)", json!("abc123")),
        ("r-two", r"id: (\d)(\d)", json!("4")),
        ("r-whole", r"id: \d+", json!("id: 42")),
    ];
    for (slug, expr, _) in &cases {
        w.tool(
            slug,
            json!({ "urlTemplate": w.url("/page"), "extractExpr": expr, "responseEncoding": "text" }),
        );
    }
    for (slug, expr, expected) in &cases {
        assert_eq!(w.value(slug, &json!({})), *expected, "{expr}");
    }
    // With responseEncoding json, a regex reads the body's text (which must be JSON).
    w.get("/json", ok_json(json!({ "token": "t-1", "n": 5 })))
        .await;
    w.tool(
        "r-json",
        json!({ "urlTemplate": w.url("/json"), "extractExpr": "\"token\":\"([^\"]+)\"" }),
    );
    assert_eq!(w.value("r-json", &json!({})), json!("t-1"));

    w.tool(
        "r-none",
        json!({ "urlTemplate": w.url("/page"), "extractExpr": "secret=(\\w+)", "responseEncoding": "text" }),
    );
    let err = w.failure("r-none", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert!(err.error.message.contains("matched nothing"), "{err:?}");
    w.tool(
        "r-none-empty",
        json!({
            "urlTemplate": w.url("/page"),
            "extractExpr": "secret=(\\w+)",
            "responseEncoding": "text",
            "errorMode": "empty",
        }),
    );
    assert_eq!(w.value("r-none-empty", &json!({})), json!(""));
}

#[tokio::test(flavor = "multi_thread")]
async fn error_mode_empty_and_fail() {
    let w = World::new().await;
    w.get("/500", ResponseTemplate::new(500).set_body_string("boom"))
        .await;
    w.get(
        "/404",
        ResponseTemplate::new(404).set_body_string("not here"),
    )
    .await;
    w.get(
        "/junk",
        ResponseTemplate::new(200).set_body_string("<html>"),
    )
    .await;
    let tools = [
        ("e-json", "/500", "json", "empty"),
        ("e-text", "/500", "text", "empty"),
        ("e-junk", "/junk", "json", "empty"),
        ("f-404", "/404", "json", "fail"),
    ];
    for (slug, at, encoding, mode) in tools {
        w.tool_with(
            slug,
            json!({
                "urlTemplate": w.url(at),
                "responseEncoding": encoding,
                "errorMode": mode,
            }),
            json!({ "maxRetries": 0 }),
        );
    }
    assert_eq!(w.value("e-json", &json!({})), Value::Null);
    assert_eq!(w.value("e-text", &json!({})), json!(""));
    assert_eq!(w.value("e-junk", &json!({})), Value::Null);
    let err = w.failure("f-404", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert!(err.error.message.contains("404"), "{err:?}");
    assert_eq!(
        err.error.details,
        json!({ "status": 404, "body": "not here" })
    );
    // errorMode defaults to fail.
    w.tool_with(
        "default-mode",
        json!({ "urlTemplate": w.url("/500") }),
        json!({ "maxRetries": 0 }),
    );
    let err = w.failure("default-mode", &json!({}), 7);
    assert_eq!(err.error.details, json!({ "status": 500, "body": "boom" }));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_value_is_checked_against_the_output_schema() {
    let w = World::new().await;
    w.get("/list", ok_json(json!([1, 2]))).await;
    w.tool_with(
        "typed",
        json!({ "urlTemplate": w.url("/list") }),
        json!({ "outputSchema": { "type": "object" } }),
    );
    let err = w.failure("typed", &json!({}), 7);
    assert_eq!(err.error.code, "OUTPUT_INVALID");
    assert_eq!(err.error.details["value"], json!([1, 2]));
}
