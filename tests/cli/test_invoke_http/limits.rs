//! Where requests go and how long: allowedHosts and redirects, retries, timeoutMs, maxResponseBytes.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_another_host_is_refused() {
    let (w, other) = two_hosts().await;
    let port = w.port;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("other host reached")))
        .mount(&other)
        .await;
    w.get("/landing", ok_json(json!("landing"))).await;
    let targets = [
        format!("http://127.0.0.2:{port}/landing"),
        format!("http://localhost:{port}/landing"),
        // Userinfo that looks like the allowed host: the host is 127.0.0.2.
        format!("http://127.0.0.1:{port}@127.0.0.2:{port}/landing"),
        format!("http://127.0.0.1%3A{port}@127.0.0.2:{port}/landing"),
    ];
    for (i, target) in targets.iter().enumerate() {
        let from = format!("/start{i}");
        w.get(
            &from,
            ResponseTemplate::new(302).insert_header("Location", target.as_str()),
        )
        .await;
        w.tool(&format!("r{i}"), json!({ "urlTemplate": w.url(&from) }));
        let err = w.failure(&format!("r{i}"), &json!({}), 7);
        assert_eq!(err.error.code, "HOST_NOT_ALLOWED", "{target}: {err:?}");
        assert!(err.error.message.contains("allowedHosts"), "{err:?}");
        let host = url::Url::parse(target).unwrap();
        assert!(
            err.error.message.contains(host.host_str().unwrap()),
            "names the refused host: {err:?}"
        );
    }
    assert_eq!(other.received_requests().await.unwrap().len(), 0);
    // The allowed server saw each first request, and never /landing (which `localhost` would
    // have reached).
    let paths: Vec<String> = w
        .requests()
        .await
        .iter()
        .map(|r| r.url.path().to_owned())
        .collect();
    assert_eq!(paths, ["/start0", "/start1", "/start2", "/start3"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_on_the_allowed_host_is_followed() {
    let w = World::new().await;
    let absolute = w.url("/new");
    w.get("/new", ok_json(json!({ "at": "new" }))).await;
    w.get(
        "/relative",
        ResponseTemplate::new(302).insert_header("Location", "/new"),
    )
    .await;
    w.get(
        "/absolute",
        ResponseTemplate::new(301).insert_header("Location", absolute.as_str()),
    )
    .await;
    w.get(
        "/temporary",
        ResponseTemplate::new(307).insert_header("Location", "new"),
    )
    .await;
    for from in ["/relative", "/absolute", "/temporary"] {
        let slug = format!("from-{}", &from[1..]);
        w.tool(&slug, json!({ "urlTemplate": w.url(from) }));
        assert_eq!(w.value(&slug, &json!({})), json!({ "at": "new" }), "{from}");
    }
    let paths: Vec<String> = w
        .requests()
        .await
        .iter()
        .map(|r| r.url.path().to_owned())
        .collect();
    assert_eq!(
        paths,
        [
            "/relative",
            "/new",
            "/absolute",
            "/new",
            "/temporary",
            "/new"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn at_most_ten_redirects_are_followed() {
    // /r/N redirects to /r/N+1 until /r/<end>, which answers.
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(|request: &Request| {
            let n: u32 = request.url.path()["/r/".len()..].parse().unwrap();
            let end: u32 = request.url.query().unwrap()["end=".len()..]
                .parse()
                .unwrap();
            if n == end {
                ResponseTemplate::new(200).set_body_json(json!({ "hops": n }))
            } else {
                let next = format!("/r/{}?end={end}", n + 1);
                ResponseTemplate::new(302).insert_header("Location", next.as_str())
            }
        })
        .mount(&w.server)
        .await;
    w.tool("chain", json!({ "urlTemplate": w.url("/r/0?end=${end}") }));

    assert_eq!(
        w.value("chain", &json!({ "end": 10 })),
        json!({ "hops": 10 })
    );
    assert_eq!(w.requests().await.len(), 11, "10 redirects followed");
    w.server.reset().await;

    Mock::given(method("GET"))
        .respond_with(|request: &Request| {
            let n: u32 = request.url.path()["/r/".len()..].parse().unwrap();
            ResponseTemplate::new(302).insert_header("Location", format!("/r/{}", n + 1).as_str())
        })
        .mount(&w.server)
        .await;
    let err = w.failure("chain", &json!({ "end": 1000 }), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR", "{err:?}");
    assert!(err.error.message.contains("redirect"), "{err:?}");
    assert_eq!(w.requests().await.len(), 11, "the 11th redirect is refused");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_whose_host_is_not_allowed_is_refused_before_any_request() {
    let (w, other) = two_hosts().await;
    let port = w.port;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("reached")))
        .mount(&other)
        .await;
    w.get("/x", ok_json(json!("reached"))).await;

    // `tool put` refuses such a tool.
    for template in [
        format!("http://127.0.0.2:{port}/x"),
        format!("http://localhost:{port}/x"),
        format!("http://127.0.0.1:{}/x", dead_port()),
        format!("http://127.0.0.1:{port}@127.0.0.2:{port}/x"),
        format!("http://${{host}}:{port}/x"),
    ] {
        let run = w.env.try_put_tool(
            "h",
            &http_doc("far", json!({ "urlTemplate": template }), json!({})),
        );
        let err = error_doc(&run, 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{template}: {err:?}");
        let problems = err.error.details["problems"].as_array().unwrap();
        assert_eq!(problems.len(), 1, "{template}: {err:?}");
        assert_eq!(problems[0]["pointer"], "/impl/urlTemplate", "{template}");
    }
    assert_eq!(w.env.refs(&["--bundle", "h"]), Vec::<String>::new());

    // A tool put while its host was allowed, then allowedHosts changed: refused as such.
    w.tool("near", json!({ "urlTemplate": w.url("/x") }));
    assert_eq!(w.value("near", &json!({})), json!("reached"));
    w.server.reset().await;
    w.env.edit_config(|config| {
        config["allowedHosts"] = json!([format!("127.0.0.2:{port}"), "127.0.0.1:1"]);
    });
    let err = w.failure("near", &json!({}), 6);
    assert_eq!(err.error.code, "HOST_NOT_ALLOWED", "{err:?}");
    assert!(err.error.message.contains("allowedHosts"), "{err:?}");
    assert!(
        err.error
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("allowedHosts")),
        "{err:?}"
    );

    // A tool file edited by hand to point elsewhere: the same.
    w.env.edit_config(|config| {
        config["allowedHosts"] = json!([format!("127.0.0.1:{port}")]);
    });
    let tool = w.env.json(&["tool", "get", "h/near"]);
    let file = tool["path"].as_str().unwrap().to_owned();
    for template in [
        format!("http://127.0.0.2:{port}/x"),
        format!("http://127.0.0.1:{port}@127.0.0.2:{port}/x"),
    ] {
        let mut doc = crate::common::read_json(Path::new(&file));
        doc["impl"]["urlTemplate"] = json!(template);
        std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
        let err = w.failure("near", &json!({}), 6);
        assert_eq!(err.error.code, "HOST_NOT_ALLOWED", "{template}: {err:?}");
    }
    assert!(w.requests().await.is_empty());
    assert!(other.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_get_is_retried_on_503_with_back_off_then_succeeds() {
    let w = World::new().await;
    let times = Times::default();
    Mock::given(method("GET"))
        .respond_with(times.reply(ResponseTemplate::new(503)))
        .up_to_n_times(2)
        .mount(&w.server)
        .await;
    Mock::given(method("GET"))
        .respond_with(times.reply(ok_json(json!({ "third": "time" }))))
        .mount(&w.server)
        .await;
    w.tool("flaky", json!({ "urlTemplate": w.url("/f") }));
    assert_eq!(w.value("flaky", &json!({})), json!({ "third": "time" }));
    assert_eq!(w.requests().await.len(), 3);
    // Back-off from 100 ms with ±50% jitter: 50–150 ms, then 100–300 ms.
    let gaps = times.gaps();
    assert_eq!(gaps.len(), 2);
    assert!(gaps[0] >= ms(50) && gaps[0] < ms(1000), "{gaps:?}");
    assert!(gaps[1] >= ms(100) && gaps[1] < ms(1500), "{gaps:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn retries_stop_at_max_retries_and_the_last_answer_is_the_error() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503).set_body_string("busy"))
        .mount(&w.server)
        .await;
    w.tool_with(
        "none",
        json!({ "urlTemplate": w.url("/a") }),
        json!({ "maxRetries": 0 }),
    );
    let err = w.failure("none", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert_eq!(err.error.details["status"], 503);
    assert_eq!(err.error.details["body"], "busy");
    assert_eq!(w.requests().await.len(), 1);

    w.server.reset().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503).set_body_string("busy"))
        .mount(&w.server)
        .await;
    w.tool("default", json!({ "urlTemplate": w.url("/b") }));
    let err = w.failure("default", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert_eq!(err.error.details["status"], 503);
    assert_eq!(w.requests().await.len(), 3, "maxRetries defaults to 2");

    w.server.reset().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&w.server)
        .await;
    w.tool_with(
        "four",
        json!({ "urlTemplate": w.url("/c") }),
        json!({ "maxRetries": 4 }),
    );
    let err = w.failure("four", &json!({}), 7);
    assert_eq!(err.error.details["status"], 500);
    assert_eq!(w.requests().await.len(), 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn only_idempotent_methods_are_retried() {
    let w = World::new().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(503))
        .mount(&w.server)
        .await;
    for (verb, attempts) in [
        ("GET", 3),
        ("HEAD", 3),
        ("PUT", 3),
        ("DELETE", 3),
        ("OPTIONS", 3),
        ("POST", 1),
        ("PATCH", 1),
    ] {
        let slug = verb.to_ascii_lowercase();
        w.tool(
            &slug,
            json!({
                "method": verb,
                "urlTemplate": w.url(&format!("/{slug}")),
                "bodyTemplate": if matches!(verb, "POST" | "PATCH" | "PUT") { json!({ "a": 1 }) } else { Value::Null },
            }),
        );
        let err = w.failure(&slug, &json!({}), 7);
        assert_eq!(err.error.code, "UPSTREAM_ERROR", "{verb}");
        assert_eq!(err.error.details["status"], 503, "{verb}");
        let requests = w.requests().await;
        assert_eq!(requests.len(), attempts, "{verb}");
        assert!(requests.iter().all(|r| r.method.as_str() == verb), "{verb}");
        w.server.reset().await;
        Mock::given(wiremock::matchers::any())
            .respond_with(ResponseTemplate::new(503))
            .mount(&w.server)
            .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_error_is_not_retried() {
    let w = World::new().await;
    w.get(
        "/missing",
        ResponseTemplate::new(404).set_body_string("no such thing"),
    )
    .await;
    w.tool("missing", json!({ "urlTemplate": w.url("/missing") }));
    let err = w.failure("missing", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert_eq!(
        err.error.details,
        json!({ "status": 404, "body": "no such thing" })
    );
    assert_eq!(w.requests().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_waits_for_retry_after() {
    let w = World::new().await;
    let times = Times::default();
    Mock::given(method("GET"))
        .respond_with(times.reply(ResponseTemplate::new(429).insert_header("Retry-After", "1")))
        .up_to_n_times(1)
        .mount(&w.server)
        .await;
    Mock::given(method("GET"))
        .respond_with(times.reply(ok_json(json!("after the wait"))))
        .mount(&w.server)
        .await;
    w.tool("limited", json!({ "urlTemplate": w.url("/l") }));
    let started = Instant::now();
    assert_eq!(w.value("limited", &json!({})), json!("after the wait"));
    assert!(started.elapsed() >= ms(1000));
    let gaps = times.gaps();
    assert_eq!(gaps.len(), 1);
    assert!(gaps[0] >= ms(1000) && gaps[0] < ms(3000), "{gaps:?}");

    // Without Retry-After, a 429 is retried after the usual back-off.
    w.server.reset().await;
    let times = Times::default();
    Mock::given(method("GET"))
        .respond_with(times.reply(ResponseTemplate::new(429)))
        .up_to_n_times(1)
        .mount(&w.server)
        .await;
    Mock::given(method("GET"))
        .respond_with(times.reply(ok_json(json!("soon"))))
        .mount(&w.server)
        .await;
    assert_eq!(w.value("limited", &json!({})), json!("soon"));
    let gaps = times.gaps();
    assert!(gaps[0] >= ms(50) && gaps[0] < ms(1000), "{gaps:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_may_be_an_http_date() {
    let w = World::new().await;
    let times = Times::default();
    let first = times.reply(ResponseTemplate::new(503));
    Mock::given(method("GET"))
        .respond_with(move |request: &Request| {
            // Two seconds from now, to the second: a wait of 1–2 s.
            let when = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(2);
            let date = jiff::fmt::rfc2822::DateTimePrinter::new()
                .timestamp_to_rfc9110_string(&when)
                .unwrap();
            first
                .respond(request)
                .insert_header("Retry-After", date.as_str())
        })
        .up_to_n_times(1)
        .mount(&w.server)
        .await;
    Mock::given(method("GET"))
        .respond_with(times.reply(ok_json(json!("later"))))
        .mount(&w.server)
        .await;
    w.tool("dated", json!({ "urlTemplate": w.url("/d") }));
    assert_eq!(w.value("dated", &json!({})), json!("later"));
    let gaps = times.gaps();
    assert_eq!(gaps.len(), 1);
    assert!(gaps[0] >= ms(900) && gaps[0] < ms(3000), "{gaps:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_connection_is_retried_then_an_upstream_error() {
    let w = World::new().await;
    let port = dead_port();
    w.env.edit_config(|config| {
        config["allowedHosts"] =
            json!([format!("127.0.0.1:{}", w.port), format!("127.0.0.1:{port}")]);
    });
    w.tool_with(
        "dead",
        json!({ "urlTemplate": format!("http://127.0.0.1:{port}/x") }),
        json!({ "maxRetries": 3 }),
    );
    let started = Instant::now();
    let err = w.failure("dead", &json!({}), 7);
    let elapsed = started.elapsed();
    assert_eq!(err.error.code, "UPSTREAM_ERROR", "{err:?}");
    // Three waits of at least 50, 100 and 200 ms.
    assert!(elapsed >= ms(350), "{elapsed:?}");
    assert!(elapsed < ms(10_000), "{elapsed:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_answer_is_a_timeout_and_is_not_retried() {
    let w = World::new().await;
    w.get(
        "/slow",
        ok_json(json!("late")).set_delay(Duration::from_secs(2)),
    )
    .await;
    w.tool(
        "slow",
        json!({ "urlTemplate": w.url("/slow"), "timeoutMs": 300 }),
    );
    let started = Instant::now();
    let err = w.failure("slow", &json!({}), 7);
    let elapsed = started.elapsed();
    assert_eq!(err.error.code, "TIMEOUT", "{err:?}");
    // The message names the field to raise.
    assert!(
        err.error.message.contains("within timeoutMs (300 ms)"),
        "{err:?}"
    );
    assert!(elapsed >= ms(300), "{elapsed:?}");
    assert!(elapsed < ms(1500), "{elapsed:?}");
    assert_eq!(w.requests().await.len(), 1, "a timeout is not retried");

    // The same server within the time: fine.
    w.tool(
        "patient",
        json!({ "urlTemplate": w.url("/slow"), "timeoutMs": 5000 }),
    );
    assert_eq!(w.value("patient", &json!({})), json!("late"));
}

/// Regression: in a batch, a call stopped by `wait_ms` said one thing when the batch noticed
/// first and another ("no answer came within the batch's wait_ms", with the tool's
/// `timeoutMs` in details) when the HTTP call did. Whoever notices, one message, and details
/// naming `wait_ms`.
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_call_stopped_by_wait_ms_always_says_so_the_same_way() {
    let w = World::new().await;
    w.get(
        "/slow",
        ok_json(json!("late")).set_delay(Duration::from_secs(3)),
    )
    .await;
    w.tool(
        "slow",
        json!({ "urlTemplate": w.url("/slow"), "timeoutMs": 5000 }),
    );
    let ids: Vec<String> = (0..8).map(|i| format!("c{i}")).collect();
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| json!({ "call_id": id, "name": "h/slow", "arguments": {} }))
        .collect();
    let file = w.env.input(&json!({ "calls": calls, "wait_ms": 300 }));
    let expected = json!({
        "code": "TIMEOUT",
        "message": "the call did not finish within wait_ms (300 ms) and was cancelled",
        "details": { "wait_ms": 300 }
    });
    for _ in 0..3 {
        let run = w.env.run(&["--json", "invoke", "--batch", &file]);
        run.success();
        let doc = run.json();
        let results = doc["results"].as_array().unwrap();
        assert_eq!(results.len(), ids.len(), "{doc:#}");
        for result in results {
            assert_eq!(ordered(&result["error"]), ordered(&expected), "{doc:#}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_response_over_the_default_cap_of_1_mib_fails() {
    let w = World::new().await;
    w.get(
        "/huge",
        ResponseTemplate::new(200).set_body_bytes(vec![b'a'; 10 * 1024 * 1024]),
    )
    .await;
    w.get(
        "/mib",
        ResponseTemplate::new(200).set_body_bytes(vec![b'b'; 1024 * 1024]),
    )
    .await;
    w.tool(
        "huge",
        json!({ "urlTemplate": w.url("/huge"), "responseEncoding": "text" }),
    );
    w.tool(
        "mib",
        json!({ "urlTemplate": w.url("/mib"), "responseEncoding": "text" }),
    );
    let err = w.failure("huge", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert!(err.error.message.contains("maxResponseBytes"), "{err:?}");
    assert_eq!(err.error.details, json!({ "maxResponseBytes": 1_048_576 }));

    let value = w.value("mib", &json!({}));
    assert_eq!(value.as_str().unwrap().len(), 1024 * 1024);
}

#[tokio::test(flavor = "multi_thread")]
async fn max_response_bytes_is_the_exact_limit() {
    let w = World::new().await;
    let hundred = "x".repeat(100);
    w.get(
        "/100",
        ResponseTemplate::new(200).set_body_string(hundred.clone()),
    )
    .await;
    w.get(
        "/101",
        ResponseTemplate::new(200).set_body_string("x".repeat(101)),
    )
    .await;
    for n in ["100", "101"] {
        w.tool_with(
            &format!("b{n}"),
            json!({ "urlTemplate": w.url(&format!("/{n}")), "responseEncoding": "text" }),
            json!({ "maxResponseBytes": 100 }),
        );
    }
    assert_eq!(w.value("b100", &json!({})), json!(hundred));
    let err = w.failure("b101", &json!({}), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert!(err.error.message.contains("maxResponseBytes"), "{err:?}");
    assert_eq!(err.error.details, json!({ "maxResponseBytes": 100 }));
}
