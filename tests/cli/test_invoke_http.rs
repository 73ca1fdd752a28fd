//! `toolctl invoke` on HTTP tools (SPEC §5, §7), against a wiremock server on 127.0.0.1:
//! templates that cannot be injected into (URL components, JSON, form and text bodies,
//! headers), `allowedHosts` on the template and on every redirect, retries with back-off and
//! `Retry-After`, `timeoutMs`, `maxResponseBytes`, `successCodes`, `responseEncoding`,
//! `extractExpr`, `errorMode`, and catalog secrets that never show in any output.
//!
//! Every server listens on the loopback interface; nothing reaches the internet. The tests run
//! the real binary (blocking) from inside a multi-threaded tokio runtime; wiremock serves from
//! its own thread, so blocking the test's thread is harmless.

use crate::common::{ErrorDoc, Run, TestEnv, ordered, tool_doc_with, write_file};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// A mock server on 127.0.0.1 and a catalog whose `allowedHosts` holds it (and nothing else),
/// with a bundle `h` for the tools.
struct World {
    env: TestEnv,
    server: MockServer,
    port: u16,
}

impl World {
    async fn new() -> Self {
        Self::with_server(MockServer::start().await)
    }

    fn with_server(server: MockServer) -> Self {
        let port = server.address().port();
        let env = TestEnv::new();
        env.edit_config(|config| {
            config["allowedHosts"] = json!([format!("127.0.0.1:{port}")]);
        });
        env.bundle("h");
        Self { env, server, port }
    }

    /// `http://127.0.0.1:<port><rest>`.
    fn url(&self, rest: &str) -> String {
        format!("http://127.0.0.1:{}{rest}", self.port)
    }

    /// Put HTTP tool `h/<slug>@v1` with this `impl` and an argSchema that takes any object.
    fn tool(&self, slug: &str, imp: Value) {
        self.tool_with(slug, imp, json!({}));
    }

    /// [`Self::tool`] with more top-level fields (`maxRetries`, `argSchema`, …).
    fn tool_with(&self, slug: &str, imp: Value, extra: Value) {
        self.env.put_tool("h", &http_doc(slug, imp, extra));
    }

    /// The `invoke --json` command of `h/<tool>` with `args`.
    fn command(&self, tool: &str, args: &Value) -> std::process::Command {
        self.env.command(&[
            "--json",
            "invoke",
            &format!("h/{tool}"),
            "--args",
            &args.to_string(),
        ])
    }

    /// `invoke --json h/<tool>` with `args`, whatever the outcome.
    fn run(&self, tool: &str, args: &Value) -> Run {
        Run::of(self.command(tool, args), None)
    }

    /// A call that must succeed: its value (the envelope holds nothing else).
    #[track_caller]
    fn value(&self, tool: &str, args: &Value) -> Value {
        let run = self.run(tool, args);
        run.success();
        assert_eq!(run.stderr, "", "{run}");
        let doc = run.json();
        assert_eq!(doc["ok"], true, "{run}");
        assert_eq!(
            doc.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["ok", "value"],
            "{run}"
        );
        doc["value"].clone()
    }

    /// A call that must fail with exit code `exit`: the error document.
    #[track_caller]
    fn failure(&self, tool: &str, args: &Value, exit: i32) -> ErrorDoc {
        error_doc(&self.run(tool, args), exit)
    }

    /// Every request the server received so far.
    async fn requests(&self) -> Vec<Request> {
        self.server.received_requests().await.unwrap()
    }

    /// Mount `GET path` answering `reply`.
    async fn get(&self, at: &str, reply: impl Respond + 'static) {
        Mock::given(method("GET"))
            .and(path(at))
            .respond_with(reply)
            .mount(&self.server)
            .await;
    }
}

/// An HTTP tool document.
fn http_doc(slug: &str, imp: Value, extra: Value) -> Value {
    // Every placeholder that is not a declared secret is an argument (put refuses others).
    let secrets = extra.get("secrets").cloned().unwrap_or(json!([]));
    let mut properties = serde_json::Map::new();
    for name in placeholders(&imp) {
        if !secrets.as_array().unwrap().contains(&json!(name)) {
            properties.insert(name, json!({}));
        }
    }
    let mut doc = tool_doc_with(
        slug,
        "v1",
        json!({ "type": "http", "impl": imp, "argSchema": { "type": "object", "properties": properties } }),
    );
    for (key, value) in extra.as_object().unwrap() {
        doc[key] = value.clone();
    }
    doc
}

/// The `${name}` placeholders in every string of `value`.
fn placeholders(value: &Value) -> Vec<String> {
    match value {
        Value::String(text) => text
            .split("${")
            .skip(1)
            .filter_map(|rest| rest.split_once('}').map(|(name, _)| name.to_owned()))
            .collect(),
        Value::Array(items) => items.iter().flat_map(placeholders).collect(),
        Value::Object(fields) => fields.values().flat_map(placeholders).collect(),
        _ => Vec::new(),
    }
}

/// The `--json` error document of a failed run, which must have ended with `exit`.
#[track_caller]
fn error_doc(run: &Run, exit: i32) -> ErrorDoc {
    run.failure(exit);
    assert_eq!(run.stderr, "", "--json errors go to stdout only\n{run}");
    let doc: ErrorDoc = run.parse();
    assert!(!doc.ok);
    doc
}

/// Two mock servers on the same port: one on 127.0.0.1 (the allowed one, in the [`World`]) and
/// one on 127.0.0.2 (not allowed), so a redirect between them changes the host and nothing else.
async fn two_hosts() -> (World, MockServer) {
    for _ in 0..50 {
        let other = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
        let port = other.local_addr().unwrap().port();
        let Ok(main) = std::net::TcpListener::bind(("127.0.0.1", port)) else {
            continue;
        };
        let main = MockServer::builder().listener(main).start().await;
        let other = MockServer::builder().listener(other).start().await;
        return (World::with_server(main), other);
    }
    panic!("no port free on both 127.0.0.1 and 127.0.0.2");
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
fn dead_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// When each request a responder answered arrived.
#[derive(Clone, Default)]
struct Times(Arc<Mutex<Vec<Instant>>>);

impl Times {
    /// A responder that notes the time, then answers `reply`.
    fn reply(&self, reply: ResponseTemplate) -> impl Respond + 'static {
        let times = self.clone();
        move |_: &Request| {
            times.0.lock().unwrap().push(Instant::now());
            reply.clone()
        }
    }

    /// The times between consecutive requests.
    fn gaps(&self) -> Vec<Duration> {
        let times = self.0.lock().unwrap();
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A permissive JSON reply.
fn ok_json(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

// --- the URL ----------------------------------------------------------------------------------

/// Every URL-special character, a space and a non-ASCII letter.
const NASTY: &str = "a/b?c=d&e#f g é";
/// [`NASTY`] as one percent-encoded component.
const NASTY_ENCODED: &str = "a%2Fb%3Fc%3Dd%26e%23f%20g%20%C3%A9";

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
        Some(format!("q={NASTY_ENCODED}&n=42&b=true&f=2.5&z=").as_str())
    );
    assert_eq!(url.fragment(), None);
    let segments: Vec<String> = url.path_segments().unwrap().map(percent_decode).collect();
    assert_eq!(segments, ["items", NASTY, "detail"]);
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let expected: Vec<(String, String)> = [
        ("q", NASTY),
        ("n", "42"),
        ("b", "true"),
        ("f", "2.5"),
        ("z", ""),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    assert_eq!(pairs, expected);
}

fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .unwrap()
        .into_owned()
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

// --- bodies -----------------------------------------------------------------------------------

/// An argument that tries to close its JSON string and add a field.
const BREAKOUT: &str = "he said \"hi\" \\ back\\slash\nnew line\t\"}, \"admin\": true, \"x\": \"";

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

// --- headers ----------------------------------------------------------------------------------

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

// --- allowedHosts and redirects ---------------------------------------------------------------

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

// --- retries ----------------------------------------------------------------------------------

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

// --- timeoutMs --------------------------------------------------------------------------------

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

// --- maxResponseBytes -------------------------------------------------------------------------

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

// --- successCodes, responseEncoding, extractExpr, errorMode -----------------------------------

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

// --- secrets ----------------------------------------------------------------------------------

/// A secret with characters that percent-encoding changes.
const SECRET: &str = "sk-live-Zq9/x+y=z&w";

/// The secrets file of the test environment.
fn secrets_file(env: &TestEnv) -> std::path::PathBuf {
    env.root().join("xdg-config/toolctl/secrets.json")
}

fn write_secrets(env: &TestEnv, secrets: &Value, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let file = secrets_file(env);
    write_file(&file, &secrets.to_string());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The tool that sends `${API_KEY}` in the path, the query and two headers.
fn keyed_tool(w: &World, slug: &str, base: &str) {
    w.tool_with(
        slug,
        json!({
            "urlTemplate": format!("{base}/k/${{API_KEY}}?key=${{API_KEY}}&q=${{q}}"),
            "headers": { "X-Api-Key": "${API_KEY}", "Authorization": "Bearer ${API_KEY}" },
        }),
        json!({ "maxRetries": 1 }),
    );
}

#[track_caller]
fn assert_no_secret(run: &Run, secret: &str) {
    let encoded = percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC)
        .to_string();
    for form in [secret, encoded.as_str(), &http_encoded(secret)] {
        assert!(
            !run.stdout.contains(form) && !run.stderr.contains(form),
            "leaked the secret ({form})\n{run}"
        );
    }
}

/// The form toolctl's URL encoding gives (unreserved characters kept).
fn http_encoded(text: &str) -> String {
    const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(text, COMPONENT).to_string()
}

/// Every file under `dir` holding `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
            {
                found.push(path);
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_comes_from_a_toolctl_secret_variable() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!({ "fine": true })))
        .mount(&w.server)
        .await;
    keyed_tool(&w, "keyed", &w.url(""));
    let mut cmd = w.command("keyed", &json!({ "q": "x" }));
    cmd.env("TOOLCTL_SECRET_API_KEY", SECRET);
    let run = Run::of(cmd, None);
    run.success();
    assert_eq!(run.json(), json!({ "ok": true, "value": { "fine": true } }));

    let requests = w.requests().await;
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    let encoded = http_encoded(SECRET);
    assert_eq!(request.url.path(), format!("/k/{encoded}"));
    assert_eq!(
        request.url.query(),
        Some(format!("key={encoded}&q=x").as_str())
    );
    assert_eq!(request.headers["x-api-key"], SECRET);
    assert_eq!(request.headers["authorization"], format!("Bearer {SECRET}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_comes_from_the_secrets_file_only_when_others_cannot_read_it() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("fine")))
        .mount(&w.server)
        .await;
    keyed_tool(&w, "keyed", &w.url(""));
    write_secrets(&w.env, &json!({ "API_KEY": SECRET, "OTHER": "x" }), 0o600);
    assert_eq!(w.value("keyed", &json!({ "q": "1" })), json!("fine"));
    let requests = w.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].headers["x-api-key"], SECRET);

    // The variable wins over the file.
    let mut cmd = w.command("keyed", &json!({ "q": "2" }));
    cmd.env("TOOLCTL_SECRET_API_KEY", "from-the-variable");
    Run::of(cmd, None).success();
    let requests = w.requests().await;
    assert_eq!(requests[1].headers["x-api-key"], "from-the-variable");

    // Readable by others: refused, nothing sent.
    for mode in [0o644, 0o640, 0o604] {
        w.server.reset().await;
        write_secrets(&w.env, &json!({ "API_KEY": SECRET }), mode);
        let err = w.failure("keyed", &json!({ "q": "3" }), 6);
        assert_eq!(err.error.code, "FORBIDDEN", "{mode:o}: {err:?}");
        let file = secrets_file(&w.env);
        assert!(
            err.error.message.contains(file.to_str().unwrap()),
            "{err:?}"
        );
        assert_eq!(
            err.error.hint.as_deref(),
            Some(format!("chmod 600 {}", file.display()).as_str()),
            "{err:?}"
        );
        assert!(!format!("{err:?}").contains(SECRET));
        assert!(w.requests().await.is_empty(), "{mode:o}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_is_never_read_from_other_environment_variables() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("fine")))
        .mount(&w.server)
        .await;
    keyed_tool(&w, "keyed", &w.url(""));
    let mut cmd = w.command("keyed", &json!({ "q": "x" }));
    cmd.env("API_KEY", SECRET)
        .env("toolctl_secret_API_KEY", SECRET)
        .env("TOOLCTL_API_KEY", SECRET);
    let run = Run::of(cmd, None);
    let err = error_doc(&run, 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert!(err.error.message.contains("${API_KEY}"), "{err:?}");
    assert!(err.error.message.contains("has no value"), "{err:?}");
    assert_no_secret(&run, SECRET);
    assert!(w.requests().await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_never_shows_even_when_the_server_echoes_it() {
    let w = World::new().await;
    // Answers 500 with everything it received that could carry the secret.
    let echo = |request: &Request| {
        let header = |name: &str| {
            request
                .headers
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default()
        };
        let decoded = percent_decode(request.url.path());
        ResponseTemplate::new(500).set_body_string(format!(
            "url={} path={decoded} x-api-key={} auth={}",
            request.url,
            header("x-api-key"),
            header("authorization")
        ))
    };
    Mock::given(method("GET"))
        .respond_with(echo)
        .mount(&w.server)
        .await;
    keyed_tool(&w, "keyed", &w.url(""));

    for json_mode in [true, false] {
        w.server.reset().await;
        Mock::given(method("GET"))
            .respond_with(echo)
            .mount(&w.server)
            .await;
        let args = json!({ "q": "x" }).to_string();
        let mut cmd = if json_mode {
            w.env
                .command(&["--json", "invoke", "h/keyed", "--args", &args])
        } else {
            w.env.command(&["invoke", "h/keyed", "--args", &args])
        };
        cmd.env("TOOLCTL_SECRET_API_KEY", SECRET);
        let run = Run::of(cmd, None);
        run.failure(7);
        assert_no_secret(&run, SECRET);
        if json_mode {
            let err = error_doc(&run, 7);
            assert_eq!(err.error.code, "UPSTREAM_ERROR");
            assert_eq!(err.error.details["status"], 500);
            let body = err.error.details["body"].as_str().unwrap();
            assert!(body.contains("x-api-key=[redacted]"), "{body}");
            assert!(body.contains("auth=Bearer [redacted]"), "{body}");
            assert!(body.contains("path=/k/[redacted]"), "{body}");
        }
        // The server did get the secret (and was asked twice: maxRetries 1).
        let requests = w.requests().await;
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].headers["x-api-key"], SECRET);
    }

    // A success whose value echoes the secret: redacted too.
    w.server.reset().await;
    Mock::given(method("GET"))
        .respond_with(|request: &Request| {
            ResponseTemplate::new(200).set_body_json(json!({
                "key": request.headers["x-api-key"].to_str().unwrap(),
                "url": request.url.to_string(),
            }))
        })
        .mount(&w.server)
        .await;
    let mut cmd = w.command("keyed", &json!({ "q": "x" }));
    cmd.env("TOOLCTL_SECRET_API_KEY", SECRET);
    let run = Run::of(cmd, None);
    run.success();
    assert_no_secret(&run, SECRET);
    assert_eq!(run.json()["value"]["key"], "[redacted]");

    // Nothing toolctl keeps (usage metrics, index) holds it.
    for dir in [w.env.catalog().to_owned(), w.env.xdg_data(), w.env.home()] {
        assert_eq!(
            files_holding(&dir, SECRET),
            Vec::<std::path::PathBuf>::new()
        );
        assert_eq!(
            files_holding(&dir, &http_encoded(SECRET)),
            Vec::<std::path::PathBuf>::new()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_never_shows_when_the_connection_fails() {
    let w = World::new().await;
    let port = dead_port();
    w.env.edit_config(|config| {
        config["allowedHosts"] = json!([format!("127.0.0.1:{port}")]);
    });
    keyed_tool(&w, "dead", &format!("http://127.0.0.1:{port}"));
    for json_mode in [true, false] {
        let args = json!({ "q": "x" }).to_string();
        let mut cmd = if json_mode {
            w.env
                .command(&["--json", "invoke", "h/dead", "--args", &args])
        } else {
            w.env.command(&["invoke", "h/dead", "--args", &args])
        };
        cmd.env("TOOLCTL_SECRET_API_KEY", SECRET);
        let run = Run::of(cmd, None);
        run.failure(7);
        assert_no_secret(&run, SECRET);
        // The error names the URL, with the secret redacted.
        let url = format!("http://127.0.0.1:{port}/k/[redacted]?key=[redacted]&q=x");
        if json_mode {
            let err = error_doc(&run, 7);
            assert_eq!(err.error.code, "UPSTREAM_ERROR");
            assert!(err.error.message.contains(&url), "{err:?}");
        } else {
            assert_eq!(run.stdout, "");
            assert!(run.stderr.contains(&url), "{run}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_in_a_json_body_never_shows_when_the_server_echoes_the_body() {
    // A secret with a quote and a backslash is written escaped in a JSON body; an echo of that
    // body must not show it either.
    let w = World::new().await;
    Mock::given(method("POST"))
        .respond_with(|request: &Request| {
            ResponseTemplate::new(500).set_body_bytes(request.body.clone())
        })
        .mount(&w.server)
        .await;
    w.tool(
        "body",
        json!({
            "method": "POST",
            "urlTemplate": w.url("/b"),
            "bodyTemplate": { "key": "${API_KEY}", "q": "${q}" },
        }),
    );
    let secret = r#"pa"ss\wo"rd-42"#;
    let mut cmd = w.command("body", &json!({ "q": "x" }));
    cmd.env("TOOLCTL_SECRET_API_KEY", secret);
    let run = Run::of(cmd, None);
    let err = error_doc(&run, 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    let body = err.error.details["body"].as_str().unwrap();
    let escaped = serde_json::to_string(secret).unwrap();
    let escaped = &escaped[1..escaped.len() - 1];
    assert!(
        !body.contains(secret) && !body.contains(escaped),
        "the echoed body shows the secret: {body}"
    );
    assert_no_secret(&run, secret);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_cut_by_the_error_excerpt_never_shows_in_part() {
    // An error shows the first 2048 characters of the body; a secret the server echoes across
    // that limit must not show in part either.
    let w = World::new().await;
    let secret = "Q7vK2mX9pL4wR8tZ";
    Mock::given(method("GET"))
        .respond_with(|request: &Request| {
            let key = request.headers["x-api-key"].to_str().unwrap();
            ResponseTemplate::new(500)
                .set_body_string(format!("{}{key} trailing", ".".repeat(2048 - 8)))
        })
        .mount(&w.server)
        .await;
    keyed_tool(&w, "keyed", &w.url(""));
    let mut cmd = w.command("keyed", &json!({ "q": "x" }));
    cmd.env("TOOLCTL_SECRET_API_KEY", secret);
    let run = Run::of(cmd, None);
    let err = error_doc(&run, 7);
    assert_eq!(err.error.details["status"], 500);
    let body = err.error.details["body"].as_str().unwrap();
    assert!(body.starts_with("...."), "{body}");
    assert!(
        !body.contains(&secret[..8]),
        "the excerpt shows the first half of the secret: …{}",
        &body[body.len() - 20..]
    );
    assert_no_secret(&run, secret);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secrets_file_that_is_not_an_object_of_strings_is_refused() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("fine")))
        .mount(&w.server)
        .await;
    keyed_tool(&w, "keyed", &w.url(""));
    let file = secrets_file(&w.env);
    write_file(&file, "{ not json");
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let err = w.failure("keyed", &json!({ "q": "x" }), 6);
    assert_eq!(err.error.code, "FORBIDDEN");
    assert!(
        err.error.message.contains(file.to_str().unwrap()),
        "{err:?}"
    );
    write_secrets(&w.env, &json!(["API_KEY"]), 0o600);
    assert_eq!(
        w.failure("keyed", &json!({ "q": "x" }), 6).error.code,
        "FORBIDDEN"
    );

    // A name whose value is not a string has no value.
    write_secrets(&w.env, &json!({ "API_KEY": 12345 }), 0o600);
    let err = w.failure("keyed", &json!({ "q": "x" }), 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert!(err.error.message.contains("has no value"), "{err:?}");
    assert!(w.requests().await.is_empty());
}

// --- arguments are checked before any request ---------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn invalid_arguments_are_refused_before_any_request() {
    let w = World::new().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ok_json(json!("sent")))
        .mount(&w.server)
        .await;
    w.tool_with(
        "strict",
        json!({
            "method": "POST",
            "urlTemplate": w.url("/items/${id}"),
            "bodyTemplate": { "id": "${id}", "name": "${name}" },
        }),
        json!({ "argSchema": {
            "type": "object",
            "properties": {
                "id": { "type": "integer", "minimum": 1 },
                "name": { "type": "string", "maxLength": 5 },
            },
            "required": ["id", "name"],
            "additionalProperties": false,
        }}),
    );
    for args in [
        json!({ "id": "1", "name": "a" }),
        json!({ "id": 0, "name": "a" }),
        json!({ "id": 1 }),
        json!({ "id": 1, "name": "toolong" }),
        json!({ "id": 1, "name": "a", "extra": true }),
        json!([1]),
        json!("{not json"),
    ] {
        let err = w.failure("strict", &args, 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{args}");
    }
    let run = w
        .env
        .run(&["--json", "invoke", "h/strict", "--args", "{oops"]);
    assert_eq!(error_doc(&run, 3).error.code, "VALIDATION_ERROR");

    // A placeholder with neither an argument nor a secret.
    w.tool(
        "unfilled",
        json!({ "urlTemplate": w.url("/u?x=${missing}") }),
    );
    let err = w.failure("unfilled", &json!({}), 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert!(err.error.message.contains("${missing}"), "{err:?}");

    assert!(w.requests().await.is_empty(), "nothing may be sent");

    // And valid arguments are sent.
    assert_eq!(
        w.value("strict", &json!({ "id": 7, "name": "ok" })),
        json!("sent")
    );
    let requests = w.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].url.path(), "/items/7");
    assert_eq!(
        requests[0].body_json::<Value>().unwrap(),
        json!({ "id": 7, "name": "ok" })
    );
}
