//! The request: the URL, bodies, headers.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn url_values_are_percent_encoded_as_one_path_segment_and_one_query_value() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!({ "hit": true })))
        .mount(&w.server)
        .await;
    w.tool(
        "get",
        json!({
            "method": "GET",
            "urlTemplate": w.url("/items/${id}/detail?q=${q}&n=${n}&b=${b}&f=${f}&z=${z}"),
        }),
    );
    let args = json!({ "id": NASTY, "q": NASTY, "n": 42, "b": true, "f": 2.5, "z": null });
    assert_eq!(w.value("get", &args), json!({ "hit": true }));

    let requests = w.requests().await;
    assert_eq!(requests.len(), 1);
    let url = &requests[0].url;
    assert_eq!(url.path(), format!("/items/{NASTY_ENCODED}/detail"));
    assert_eq!(
        url.query(),
        // A null (as an OpenAI strict-mode model sends) is no value: its pair is left out.
        Some(format!("q={NASTY_ENCODED}&n=42&b=true&f=2.5").as_str())
    );
    assert_eq!(url.fragment(), None);
    let segments: Vec<String> = url.path_segments().unwrap().map(percent_decode).collect();
    assert_eq!(segments, ["items", NASTY, "detail"]);
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let expected: Vec<(String, String)> = [("q", NASTY), ("n", "42"), ("b", "true"), ("f", "2.5")]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    assert_eq!(pairs, expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dot_segment_value_cannot_leave_its_path_segment() {
    // `..` and `.` are unreserved characters, so encoding leaves them as they are; as a whole
    // path segment they are dot segments, which URL parsing removes (`/users/../profile` is
    // `/profile`). An argument must stay one segment: refused, or sent inside its segment.
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("reached")))
        .mount(&w.server)
        .await;
    w.tool(
        "user",
        json!({ "urlTemplate": w.url("/api/users/${id}/profile") }),
    );
    for id in ["..", "."] {
        let run = w.run("user", &json!({ "id": id }));
        let requests = w.requests().await;
        for request in &requests {
            let segments: Vec<&str> = request.url.path_segments().unwrap().collect();
            assert!(
                segments.len() == 4
                    && segments[..2] == ["api", "users"]
                    && segments[3] == "profile",
                "id {id:?} reached {} — outside /api/users/<id>/profile\n{run}",
                request.url.path()
            );
        }
        if requests.is_empty() {
            assert_eq!(error_doc(&run, 3).error.code, "VALIDATION_ERROR", "{id:?}");
        } else {
            assert_eq!(requests.len(), 1, "{id:?}");
            run.success();
        }
        w.server.reset().await;
        Mock::given(method("GET"))
            .respond_with(ok_json(json!("reached")))
            .mount(&w.server)
            .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_argument_holding_a_placeholder_is_sent_as_text() {
    // Values are written once: a `${…}` inside an argument is not expanded again (so it cannot
    // pull a secret into a place the caller chose).
    let w = World::new().await;
    Mock::given(method("POST"))
        .respond_with(ok_json(json!(1)))
        .mount(&w.server)
        .await;
    w.tool(
        "echo",
        json!({
            "method": "POST",
            "urlTemplate": w.url("/e?q=${q}"),
            "headers": { "X-Q": "${q}" },
            "bodyTemplate": { "q": "${q}", "note": "n ${q}" },
        }),
    );
    let mut cmd = w.command("echo", &json!({ "q": "${API_KEY}" }));
    cmd.env("TOOLCTL_SECRET_API_KEY", "must-not-be-sent");
    Run::of(cmd, None).success();
    let requests = w.requests().await;
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.url.query(), Some("q=%24%7BAPI_KEY%7D"));
    assert_eq!(request.headers["x-q"], "${API_KEY}");
    assert_eq!(
        request.body_json::<Value>().unwrap(),
        json!({ "q": "${API_KEY}", "note": "n ${API_KEY}" })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_json_body_template_object_takes_typed_values_and_cannot_be_broken_out_of() {
    let w = World::new().await;
    Mock::given(method("POST"))
        .and(path("/search"))
        .respond_with(ok_json(json!({ "found": 0 })))
        .mount(&w.server)
        .await;
    w.tool(
        "search",
        json!({
            "method": "POST",
            "urlTemplate": w.url("/search"),
            "bodyTemplate": {
                "query": "${q}",
                "limit": "${n}",
                "tags": "${tags}",
                "filter": "${filter}",
                "flag": "${flag}",
                "note": "q=${q}; n=${n}",
                "nested": { "list": ["${n}", "x-${flag}", "${q}"] },
                "${q}": "keys are literal",
                "fixed": [1, "a", null, false],
            },
        }),
    );
    let args = json!({
        "q": BREAKOUT,
        "n": 5,
        "tags": ["a", "b"],
        "filter": { "k": [1, null], "s": "t" },
        "flag": false,
    });
    assert_eq!(w.value("search", &args), json!({ "found": 0 }));

    let requests = w.requests().await;
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.headers["content-type"], "application/json");
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    let expected = json!({
        "query": BREAKOUT,
        "limit": 5,
        "tags": ["a", "b"],
        "filter": { "k": [1, null], "s": "t" },
        "flag": false,
        "note": format!("q={BREAKOUT}; n=5"),
        "nested": { "list": [5, "x-false", BREAKOUT] },
        "${q}": "keys are literal",
        "fixed": [1, "a", null, false],
    });
    assert_eq!(ordered(&body), ordered(&expected));
    assert_eq!(body.get("admin"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_json_body_template_string_is_parsed_then_filled_the_same_way() {
    let w = World::new().await;
    Mock::given(method("PUT"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&w.server)
        .await;
    let template =
        r#"{"query": "${q}", "limit": "${n}", "tags": "${tags}", "note": "q=${q}/${n}"}"#;
    w.tool(
        "put",
        json!({ "method": "PUT", "urlTemplate": w.url("/doc"), "bodyTemplate": template }),
    );
    // An empty 204 is the JSON value null.
    let args = json!({ "q": BREAKOUT, "n": 1.5, "tags": [{ "a": 1 }] });
    assert_eq!(w.value("put", &args), Value::Null);

    let requests = w.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].headers["content-type"], "application/json");
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    let expected = json!({
        "query": BREAKOUT,
        "limit": 1.5,
        "tags": [{ "a": 1 }],
        "note": format!("q={BREAKOUT}/1.5"),
    });
    assert_eq!(ordered(&body), ordered(&expected));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_json_body_keeps_the_content_type_the_tool_sets() {
    let w = World::new().await;
    Mock::given(method("POST"))
        .respond_with(ok_json(json!(true)))
        .mount(&w.server)
        .await;
    w.tool(
        "typed",
        json!({
            "method": "POST",
            "urlTemplate": w.url("/t"),
            "headers": { "Content-Type": "application/vnd.api+json; charset=utf-8" },
            "bodyTemplate": { "q": "${q}" },
        }),
    );
    assert_eq!(w.value("typed", &json!({ "q": "x" })), json!(true));
    let requests = w.requests().await;
    assert_eq!(
        requests[0].headers["content-type"],
        "application/vnd.api+json; charset=utf-8"
    );
    assert_eq!(
        requests[0].body_json::<Value>().unwrap(),
        json!({ "q": "x" })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_form_body_percent_encodes_values_and_a_text_body_takes_them_as_text() {
    let w = World::new().await;
    Mock::given(method("POST"))
        .respond_with(ok_json(json!("ok")))
        .mount(&w.server)
        .await;
    w.tool(
        "form",
        json!({
            "method": "POST",
            "urlTemplate": w.url("/form"),
            "headers": { "Content-Type": "application/x-www-form-urlencoded" },
            "bodyTemplate": "q=${q}&n=${n}&tags=${tags}",
        }),
    );
    w.tool(
        "text",
        json!({
            "method": "POST",
            "urlTemplate": w.url("/text"),
            "headers": { "Content-Type": "text/plain; charset=utf-8" },
            "bodyTemplate": "{\"q\": \"${q}\", \"n\": ${n}}",
        }),
    );
    let q = "a&b=c d+é\n%";
    let args = json!({ "q": q, "n": 5, "tags": ["x", "y"] });
    assert_eq!(w.value("form", &args), json!("ok"));
    assert_eq!(w.value("text", &args), json!("ok"));

    let requests = w.requests().await;
    assert_eq!(requests.len(), 2);
    let form = &requests[0];
    assert_eq!(form.url.path(), "/form");
    assert_eq!(
        form.headers["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(
        String::from_utf8(form.body.clone()).unwrap(),
        "q=a%26b%3Dc%20d%2B%C3%A9%0A%25&n=5&tags=%5B%22x%22%2C%22y%22%5D"
    );
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(&form.body)
        .into_owned()
        .collect();
    assert_eq!(
        pairs,
        [
            ("q".to_owned(), q.to_owned()),
            ("n".to_owned(), "5".to_owned()),
            ("tags".to_owned(), r#"["x","y"]"#.to_owned()),
        ]
    );

    // A text body: the template (even one that looks like JSON) with the values as they are.
    let text = &requests[1];
    assert_eq!(text.url.path(), "/text");
    assert_eq!(text.headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(
        String::from_utf8(text.body.clone()).unwrap(),
        format!("{{\"q\": \"{q}\", \"n\": 5}}")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn headers_are_templated() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!(null)))
        .mount(&w.server)
        .await;
    w.tool(
        "hdr",
        json!({
            "urlTemplate": w.url("/h"),
            "headers": {
                "X-Query": "q=${q}; n=${n}",
                "Authorization": "Bearer ${tok}",
                "X-Fixed": "literal",
            },
        }),
    );
    let args = json!({ "q": "a b, \"c\"; d=e", "n": 7, "tok": "abc.def" });
    assert_eq!(w.value("hdr", &args), Value::Null);
    let requests = w.requests().await;
    assert_eq!(requests.len(), 1);
    let headers = &requests[0].headers;
    assert_eq!(headers["x-query"], "q=a b, \"c\"; d=e; n=7");
    assert_eq!(headers["authorization"], "Bearer abc.def");
    assert_eq!(headers["x-fixed"], "literal");
    assert_eq!(headers.get("x-admin"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_header_value_with_a_line_break_is_refused_and_nothing_is_sent() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!(null)))
        .mount(&w.server)
        .await;
    w.tool(
        "hdr",
        json!({ "urlTemplate": w.url("/h"), "headers": { "X-Query": "q=${q}" } }),
    );
    for q in [
        "x\r\nX-Admin: true",
        "x\nX-Admin: true",
        "x\rX-Admin: true",
        "x\u{0}y",
        "\r\n\r\nGET /smuggled HTTP/1.1",
    ] {
        let err = w.failure("hdr", &json!({ "q": q }), 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{q:?}");
        assert!(err.error.message.contains("X-Query"), "{q:?}: {err:?}");
        assert!(err.error.message.contains("line break"), "{q:?}: {err:?}");
    }
    // A character a header cannot carry at all is refused the same way.
    let err = w.failure("hdr", &json!({ "q": "bell\u{7}" }), 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert!(w.requests().await.is_empty(), "nothing may be sent");
}
