//! Secrets, and arguments checked before any request.

use super::*;

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
async fn a_secrets_file_over_4_mib_or_not_a_regular_file_is_refused_naming_it() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("fine")))
        .mount(&w.server)
        .await;
    keyed_tool(&w, "keyed", &w.url(""));
    let file = secrets_file(&w.env);
    // Valid JSON holding the key, but 5 MiB: never read whole.
    let padding = "x".repeat(5 << 20);
    write_secrets(&w.env, &json!({ "API_KEY": SECRET, "PAD": padding }), 0o600);
    let err = w.failure("keyed", &json!({ "q": "1" }), 6);
    assert_eq!(err.error.code, "FORBIDDEN", "{err:?}");
    let message = &err.error.message;
    assert!(message.contains(file.to_str().unwrap()), "{err:?}");
    assert!(
        message.contains("over the limit of 4194304 bytes"),
        "{err:?}"
    );
    // A FIFO no one writes to: refused at once, not waited on.
    std::fs::remove_file(&file).unwrap();
    let status = std::process::Command::new("mkfifo")
        .args(["-m", "600"])
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success());
    let err = w.failure("keyed", &json!({ "q": "2" }), 6);
    assert_eq!(err.error.code, "FORBIDDEN", "{err:?}");
    assert!(
        err.error.message.contains("not a regular file (a FIFO)"),
        "{err:?}"
    );
    assert!(w.requests().await.is_empty());
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

    // A name whose value is not a string: the file is refused, naming the place (below).
    write_secrets(&w.env, &json!({ "API_KEY": 12345 }), 0o600);
    let err = w.failure("keyed", &json!({ "q": "x" }), 6);
    assert_eq!(err.error.code, "FORBIDDEN");
    assert!(
        err.error.message.contains("/API_KEY is a number"),
        "{err:?}"
    );
    assert!(w.requests().await.is_empty());
}

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

    // A path placeholder is a required argument: without it, nothing is sent.
    w.tool("unfilled", json!({ "urlTemplate": w.url("/u/${missing}") }));
    let err = w.failure("unfilled", &json!({}), 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert!(err.error.message.contains("missing"), "{err:?}");

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

/// A secrets file that is not JSON, not an object, or holds a value that is not a string is
/// refused whole, naming the file and the place (never the value), and nothing is sent.
#[tokio::test(flavor = "multi_thread")]
async fn a_secrets_file_with_a_wrong_value_or_bad_json_is_refused_naming_the_place() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("fine")))
        .mount(&w.server)
        .await;
    keyed_tool(&w, "keyed", &w.url(""));
    let file = secrets_file(&w.env);
    let cases = [
        (
            json!({ "API_KEY": 12345678 }).to_string(),
            "the value at /API_KEY is a number, not a string",
            Some("write it as a string: {\"API_KEY\": \"…\"}"),
        ),
        (
            json!({ "API_KEY": SECRET, "X/Y": ["arr"] }).to_string(),
            "the value at /X~1Y is an array, not a string",
            Some("give \"X/Y\" a string value, or remove it"),
        ),
        (
            // The hint's JSON is valid JSON whatever the name holds.
            json!({ "API_KEY": SECRET, "we\"ird": 7 }).to_string(),
            "the value at /we\"ird is a number, not a string",
            Some("write it as a string: {\"we\\\"ird\": \"…\"}"),
        ),
        (
            "{\"API_KEY\": \"k\",\n  oops}".to_owned(),
            "it is not valid JSON: key must be a string at line 2 column 3",
            None,
        ),
        (
            "[\"k\"]".to_owned(),
            "it is an array, not a JSON object of names to strings",
            None,
        ),
    ];
    for (text, why, hint) in cases {
        write_file(&file, &text);
        write_secrets_mode(&file);
        let err = w.failure("keyed", &json!({ "q": "1" }), 6);
        assert_eq!(err.error.code, "FORBIDDEN", "{err:?}");
        assert_eq!(
            err.error.message,
            format!("secrets file {}: {why}", file.display()),
            "{text}"
        );
        assert_eq!(err.error.hint.as_deref(), hint, "{text}");
        assert!(!format!("{err:?}").contains("12345678"), "{err:?}");
    }
    assert!(w.requests().await.is_empty());
}

fn write_secrets_mode(file: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// An empty secret counts as not set: an empty variable, or `""` in the file, is the error an
/// unset secret is (saying it is empty) and nothing is sent; an empty variable falls through
/// to the file.
#[tokio::test(flavor = "multi_thread")]
async fn an_empty_secret_counts_as_not_set() {
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ok_json(json!("fine")))
        .mount(&w.server)
        .await;
    keyed_tool(&w, "keyed", &w.url(""));
    let mut cmd = w.command("keyed", &json!({ "q": "1" }));
    cmd.env("TOOLCTL_SECRET_API_KEY", "");
    let err = error_doc(&Run::of(cmd, None), 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR", "{err:?}");
    assert_eq!(
        err.error.message,
        "${API_KEY} has no value: the tool's secret 'API_KEY' is empty \
         (TOOLCTL_SECRET_API_KEY is set to an empty value), as good as not set"
    );
    write_secrets(&w.env, &json!({ "API_KEY": "" }), 0o600);
    let err = w.failure("keyed", &json!({ "q": "2" }), 3);
    assert_eq!(
        err.error.message,
        "${API_KEY} has no value: the tool's secret 'API_KEY' is empty \
         (\"\" in the secrets file), as good as not set"
    );
    assert!(w.requests().await.is_empty());

    write_secrets(&w.env, &json!({ "API_KEY": SECRET }), 0o600);
    let mut cmd = w.command("keyed", &json!({ "q": "3" }));
    cmd.env("TOOLCTL_SECRET_API_KEY", "");
    Run::of(cmd, None).success();
    assert_eq!(w.requests().await[0].headers["x-api-key"], SECRET);
}
