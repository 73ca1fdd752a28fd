//! Tests of [`llm`](super).

use super::*;
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn candidate(name: &str, reference: &str) -> Candidate {
    Candidate {
        name: name.to_owned(),
        reference: reference.to_owned(),
        text: format!("{name} text"),
        content_hash: format!("hash-{name}"),
    }
}

fn tools() -> Vec<Candidate> {
    vec![
        candidate("get_weather", "weather/get-weather@1.0.0"),
        candidate("get_time", "clock/get-time@2.1.0"),
        candidate("send_mail", "mail/send-mail@0.3.0"),
        candidate("Search_Web", "web/search@1.0.0"),
    ]
}

fn endpoint(server: &MockServer, model: &str) -> Endpoint {
    Endpoint {
        base_url: format!("{}/v1", server.uri()),
        model: model.to_owned(),
        api_key: Some("sk-secret-123".to_owned()),
        timeout: Duration::from_secs(5),
    }
}

fn reply(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content },
            "finish_reason": "stop",
        }],
    }))
}

/// A chat server that answers every request with `response`.
async fn chat(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

struct Ask {
    k: usize,
    fingerprint: &'static str,
    limit: Duration,
}

const ASK: Ask = Ask {
    k: 3,
    fingerprint: "fp1",
    limit: Duration::from_secs(10),
};

async fn run(
    state_dir: &Path,
    endpoint: Endpoint,
    query: &str,
    candidates: &[Candidate],
    ask: Ask,
) -> Result<Selection, ScorerError> {
    let (state_dir, query, candidates) =
        (state_dir.to_owned(), query.to_owned(), candidates.to_vec());
    tokio::task::spawn_blocking(move || {
        select(
            &state_dir,
            &endpoint,
            &query,
            &candidates,
            ask.k,
            ask.fingerprint,
            Instant::now() + ask.limit,
        )
    })
    .await
    .unwrap()
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

fn upstream(result: Result<Selection, ScorerError>) -> String {
    match result {
        Err(ScorerError::Upstream(message)) => message,
        other => panic!("expected an upstream error, got {other:?}"),
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_array_selects_those_tools() {
    let content = r#"["get_time", "get_weather"]"#;
    let server = chat(reply(content)).await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".toolctl");
    let selection = run(
        &state,
        endpoint(&server, "gpt-x"),
        "weather now?",
        &tools(),
        ASK,
    )
    .await
    .unwrap();
    assert_eq!(
        selection,
        Selection {
            names: names(&["get_time", "get_weather"]),
            cached: false,
            raw_reply: Some(content.to_owned()),
        }
    );

    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(
        received[0].headers.get("authorization").unwrap(),
        "Bearer sk-secret-123"
    );
    let body: Value = received[0].body_json().unwrap();
    assert_eq!(body["model"], "gpt-x");
    assert_eq!(body["temperature"], 0);
    assert_eq!(body["messages"][0]["role"], "system");
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("at most 3, the most relevant first")
    );
    assert_eq!(body["messages"][1]["role"], "user");
    // Names only, one per line.
    assert_eq!(
        body["messages"][1]["content"],
        "Task:\nweather now?\n\nTools (one name per line):\n\
             get_weather\nget_time\nsend_mail\nSearch_Web\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fenced_truncated_reply_keeps_its_complete_names() {
    let content = "Here you go:\n```json\n[\"send_mail\", \"get_time\", \"get_wea";
    let server = chat(reply(content)).await;
    let dir = tempfile::tempdir().unwrap();
    let selection = run(dir.path(), endpoint(&server, "m"), "mail", &tools(), ASK)
        .await
        .unwrap();
    assert_eq!(selection.names, names(&["send_mail", "get_time"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn names_are_mapped_back_unknown_and_repeated_ones_dropped() {
    let content = r#"{"selected_tools": [" 'get-weather' ", "weather/get-weather@1.0.0",
            "nonexistent_tool", "mail/send-mail@0.3.0", "SEARCH_WEB", "get_time"]}"#;
    let server = chat(reply(content)).await;
    let dir = tempfile::tempdir().unwrap();
    let selection = run(
        dir.path(),
        endpoint(&server, "m"),
        "q",
        &tools(),
        Ask { k: 10, ..ASK },
    )
    .await
    .unwrap();
    assert_eq!(
        selection.names,
        names(&["get_weather", "send_mail", "Search_Web", "get_time"])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn at_most_k_are_kept_and_k_is_capped_at_128() {
    let content = r#"["get_weather", "get_time", "send_mail", "Search_Web"]"#;
    let server = chat(reply(content)).await;
    let dir = tempfile::tempdir().unwrap();
    let selection = run(
        dir.path(),
        endpoint(&server, "m"),
        "q",
        &tools(),
        Ask { k: 2, ..ASK },
    )
    .await
    .unwrap();
    assert_eq!(selection.names, names(&["get_weather", "get_time"]));

    // 200 candidates, k 500: the prompt asks for 128 and at most 128 are kept.
    let many: Vec<Candidate> = (0..200)
        .map(|i| candidate(&format!("t{i}"), &format!("b/t{i}@1.0.0")))
        .collect();
    let all: Vec<String> = many.iter().map(|c| c.name.clone()).collect();
    let server = chat(reply(&serde_json::to_string(&all).unwrap())).await;
    let selection = run(
        dir.path(),
        endpoint(&server, "m"),
        "q",
        &many,
        Ask { k: 500, ..ASK },
    )
    .await
    .unwrap();
    assert_eq!(selection.names, all[..128].to_vec());
    let body: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("at most 128,")
    );
    let file = cache_file(dir.path(), "q", "m", 500, "fp1");
    assert_eq!(file, cache_file(dir.path(), "q", "m", 128, "fp1"));
    let cached: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    assert_eq!(cached["max_tools"], 128);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cache_holds_the_seed_format_and_answers_without_a_request() {
    let server = chat(reply(r#"["get_weather", "get_time"]"#)).await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".toolctl");
    run(
        &state,
        endpoint(&server, "gpt-x"),
        "weather?",
        &tools(),
        ASK,
    )
    .await
    .unwrap();

    // The key, computed here independently: length-prefixed parts.
    let mut bytes = Vec::new();
    for part in ["weather?", "gpt-x", "3", "fp1"] {
        bytes.extend_from_slice(&(part.len() as u64).to_le_bytes());
        bytes.extend_from_slice(part.as_bytes());
    }
    let key: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let file = state.join("pick-cache").join(format!("{key}.json"));
    assert_eq!(file, cache_file(&state, "weather?", "gpt-x", 3, "fp1"));
    let text = std::fs::read_to_string(&file).unwrap();
    let cached: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        cached,
        json!({
            "query": "weather?",
            "selected_tools": ["get_weather", "get_time"],
            "model": "gpt-x",
            "max_tools": 3,
        })
    );
    // In the order of CacheEntry's fields.
    let order: Vec<&String> = cached.as_object().unwrap().keys().collect();
    assert_eq!(order, ["query", "selected_tools", "model", "max_tools"]);
    // Nothing but the entry in the folder (no temporary file left behind).
    assert_eq!(
        std::fs::read_dir(state.join("pick-cache")).unwrap().count(),
        1
    );

    let fresh = chat(reply("[]")).await;
    let selection = run(&state, endpoint(&fresh, "gpt-x"), "weather?", &tools(), ASK)
        .await
        .unwrap();
    assert_eq!(
        selection,
        Selection {
            names: names(&["get_weather", "get_time"]),
            cached: true,
            raw_reply: None,
        }
    );
    assert_eq!(requests(&fresh).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn another_model_k_or_catalog_misses_the_cache() {
    let server = chat(reply(r#"["get_time"]"#)).await;
    let dir = tempfile::tempdir().unwrap();
    let first = run(dir.path(), endpoint(&server, "m1"), "q", &tools(), ASK).await;
    assert!(!first.unwrap().cached);
    for (model, ask) in [
        ("m2", ASK),
        ("m1", Ask { k: 4, ..ASK }),
        (
            "m1",
            Ask {
                fingerprint: "fp2",
                ..ASK
            },
        ),
    ] {
        let selection = run(dir.path(), endpoint(&server, model), "q", &tools(), ask)
            .await
            .unwrap();
        assert!(!selection.cached);
    }
    let again = run(dir.path(), endpoint(&server, "m1"), "q", &tools(), ASK).await;
    assert!(again.unwrap().cached);
    assert_eq!(requests(&server).await, 4);

    let keys = [
        cache_key("q", "m1", 3, "fp1"),
        cache_key("q", "m2", 3, "fp1"),
        cache_key("q", "m1", 4, "fp1"),
        cache_key("q", "m1", 3, "fp2"),
        cache_key("qm", "1", 3, "fp1"),
    ];
    let distinct: HashSet<&String> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len());
    assert!(keys.iter().all(|k| k.len() == 64));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_cache_entry_is_asked_again_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let file = cache_file(dir.path(), "q", "m", 3, "fp1");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let entry = |tools: Value| {
        json!({ "query": "q", "selected_tools": tools, "model": "m", "max_tools": 3 }).to_string()
    };
    for bad in [
        entry(json!(["get_time", "removed_tool"])),
        entry(json!([])),
        entry(json!(["get_time", "get_time"])),
        r#"{"query": "q", "selected_tools": ["get_time"], "model": "other", "max_tools": 3}"#
            .to_owned(),
        "{\"query\": \"q\", \"selected_to".to_owned(),
        "garbage".to_owned(),
    ] {
        std::fs::File::create(&file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, bad.as_bytes()))
            .unwrap();
        let server = chat(reply(r#"["send_mail"]"#)).await;
        let selection = run(dir.path(), endpoint(&server, "m"), "q", &tools(), ASK)
            .await
            .unwrap();
        assert_eq!(selection.names, names(&["send_mail"]), "{bad}");
        assert!(!selection.cached);
        assert_eq!(requests(&server).await, 1, "{bad}");
        let cached: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(cached["selected_tools"], json!(["send_mail"]), "{bad}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_selection_is_an_error_and_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    for content in ["[]", r#"["no_such_tool"]"#, "I cannot help with that."] {
        let server = chat(reply(content)).await;
        let message = upstream(run(dir.path(), endpoint(&server, "m"), "q", &tools(), ASK).await);
        assert_eq!(
            message,
            format!("the model selected no known tool (it answered: {content})")
        );
    }
    assert!(!cache_file(dir.path(), "q", "m", 3, "fp1").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_candidates_or_k_zero_ask_nothing() {
    let server = chat(reply(r#"["get_time"]"#)).await;
    let dir = tempfile::tempdir().unwrap();
    let empty = Selection {
        names: Vec::new(),
        cached: false,
        raw_reply: None,
    };
    let none = run(dir.path(), endpoint(&server, "m"), "q", &[], ASK).await;
    assert_eq!(none.unwrap(), empty);
    let zero = run(
        dir.path(),
        endpoint(&server, "m"),
        "q",
        &tools(),
        Ask { k: 0, ..ASK },
    )
    .await;
    assert_eq!(zero.unwrap(), empty);
    assert_eq!(requests(&server).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_is_an_upstream_error_without_the_key() {
    let server =
        chat(ResponseTemplate::new(401).set_body_string(
            r#"{"error": {"message": "Incorrect API key provided: sk-secret-123"}}"#,
        ))
        .await;
    let dir = tempfile::tempdir().unwrap();
    let message = upstream(run(dir.path(), endpoint(&server, "m"), "q", &tools(), ASK).await);
    assert!(
        message.starts_with(&format!(
            "{}/v1/chat/completions refused the API key (HTTP 401): ",
            server.uri()
        )),
        "{message}"
    );
    assert!(message.contains("catalog secrets"), "{message}");
    assert!(message.contains("[redacted]"), "{message}");
    assert!(!message.contains("sk-secret-123"), "{message}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_answers_are_upstream_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            ResponseTemplate::new(500).set_body_string("model overloaded"),
            "/v1/chat/completions answered HTTP 500: model overloaded",
        ),
        (
            ResponseTemplate::new(200).set_body_string("not json"),
            "/v1/chat/completions did not answer JSON",
        ),
        (
            ResponseTemplate::new(200).set_body_json(json!({ "choices": [] })),
            "/v1/chat/completions answered without choices",
        ),
        (
            ResponseTemplate::new(200)
                .set_body_json(json!({ "choices": [{ "message": { "content": null } }] })),
            "/v1/chat/completions answered without a message",
        ),
    ];
    for (response, expected) in cases {
        let server = chat(response).await;
        let message = upstream(run(dir.path(), endpoint(&server, "m"), "q", &tools(), ASK).await);
        assert!(
            message.starts_with(&format!("{}{expected}", server.uri())),
            "{message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_endpoint_is_an_upstream_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let endpoint = Endpoint {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        model: "m".into(),
        api_key: None,
        timeout: Duration::from_secs(5),
    };
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let message = upstream(run(dir.path(), endpoint, "q", &tools(), ASK).await);
    assert!(
        message.starts_with(&format!(
            "cannot reach http://127.0.0.1:{port}/v1/chat/completions: "
        )),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_past_deadline_asks_nothing() {
    let server = chat(reply(r#"["get_time"]"#)).await;
    let dir = tempfile::tempdir().unwrap();
    let result = run(
        dir.path(),
        endpoint(&server, "m"),
        "q",
        &tools(),
        Ask {
            limit: Duration::ZERO,
            ..ASK
        },
    )
    .await;
    assert_eq!(result, Err(ScorerError::Deadline));
    assert_eq!(requests(&server).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_server_fails_quickly() {
    let server = chat(reply(r#"["get_time"]"#).set_delay(Duration::from_secs(10))).await;
    let dir = tempfile::tempdir().unwrap();
    let mut slow = endpoint(&server, "m");
    slow.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let message = upstream(run(dir.path(), slow, "q", &tools(), ASK).await);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        message,
        format!(
            "{}/v1/chat/completions did not answer within 300 ms",
            server.uri()
        )
    );

    let started = Instant::now();
    let result = run(
        dir.path(),
        endpoint(&server, "m"),
        "q",
        &tools(),
        Ask {
            limit: Duration::from_millis(300),
            ..ASK
        },
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(result, Err(ScorerError::Deadline));
}

#[test]
fn replies_are_read_tolerantly() {
    let cases: &[(&str, &[&str])] = &[
        (r#"["a", "b"]"#, &["a", "b"]),
        ("```json\n[\"a\", \"b\"]\n```", &["a", "b"]),
        ("```\n[\"a\"]\n```\nThese fit best.", &["a"]),
        (r#"{"tools": ["a", "b"]}"#, &["a", "b"]),
        (r#"{"selected_tools": ["a"]}"#, &["a"]),
        (r#"{"result": ["a"], "note": "x"}"#, &["a"]),
        (r#"[{"name": "a"}, {"name": "b"}]"#, &["a", "b"]),
        (r#"["a", "b", "c"#, &["a", "b"]),
        (r#"{"tools": ["a", "b\"q", "c"#, &["a", "b\"q"]),
        (r#"[" a ", "'b'", "`c`"]"#, &["a", "b", "c"]),
        (
            "The best tools are [\"a\", \"b\"] in that order.",
            &["a", "b"],
        ),
        ("<think>maybe [\"x\"]</think>\n[\"a\"]", &["a"]),
        ("\"[\\\"a\\\"]\"", &["a"]),
        (
            "- a\n- b\n1. c\n2) d\n3d_tool",
            &["a", "b", "c", "d", "3d_tool"],
        ),
        ("a, b", &["a", "b"]),
        ("[]", &["[]"]),
    ];
    for (reply, expected) in cases {
        assert_eq!(reply_names(reply), names(expected), "{reply}");
    }
}

#[test]
fn names_map_to_candidates_by_name_reference_and_loose_form() {
    let tools = tools();
    let index = NameIndex::new(&tools);
    assert_eq!(index.resolve("get_weather"), Some(0));
    assert_eq!(index.resolve("clock/get-time@2.1.0"), Some(1));
    assert_eq!(index.resolve("clock_get-time_2_1_0"), Some(1));
    assert_eq!(index.resolve("GET_WEATHER"), Some(0));
    assert_eq!(index.resolve("Get Weather"), Some(0));
    assert_eq!(index.resolve("search_web"), Some(3));
    assert_eq!(index.resolve("unknown"), None);

    // Two candidates of one loose form: not guessed, only exact names.
    let twins = [
        candidate("Foo", "b/foo@1.0.0"),
        candidate("foo", "b/foo2@1.0.0"),
    ];
    let index = NameIndex::new(&twins);
    assert_eq!(index.resolve("FOO"), None);
    assert_eq!(index.resolve("foo"), Some(1));
    assert_eq!(
        index.pick(&names(&["Foo", "foo", "Foo", "FOO"]), 5),
        names(&["Foo", "foo"])
    );
}

#[test]
fn every_form_a_model_may_answer_with_maps_back() {
    let tools = [
        candidate("RiBenYu", "docs/日本語@v1"),
        candidate("web__search", "web/search@v2"),
        candidate("news__search", "news/search@v1"),
        candidate("Omega", "greek/Ωmega@v1"),
    ];
    let index = NameIndex::new(&tools);
    for (answer, expected) in [
        ("RiBenYu", Some(0)),
        ("docs/日本語", Some(0)),
        ("日本語", Some(0)),
        ("日本語@v1", Some(0)),
        ("docs__日本語", Some(0)),
        ("DOCS/RIBENYU", Some(0)),
        ("ribenyu", Some(0)),
        ("web/search", Some(1)),
        ("Web/Search@V2", Some(1)),
        ("WEB__SEARCH", Some(1)),
        ("news/search@v1", Some(2)),
        ("Ωmega", Some(3)),
        ("ωMEGA", Some(3)),
        ("greek__Ωmega", Some(3)),
        ("omega@v1", Some(3)),
        // A bare slug two tools share is not guessed.
        ("search", None),
        ("search@v1", Some(2)),
    ] {
        assert_eq!(index.resolve(answer), expected, "{answer}");
    }
}

proptest::proptest! {
    #[test]
    fn any_reply_is_read_without_panicking(reply in "\\PC{0,200}") {
        let tools = tools();
        let index = NameIndex::new(&tools);
        let picked = index.pick(&reply_names(&reply), 3);
        proptest::prop_assert!(picked.len() <= 3);
    }

    #[test]
    fn a_cut_off_array_keeps_the_names_before_the_cut(
        list in proptest::collection::vec("[a-z_]{1,12}", 1..10),
        cut in 0usize..200,
    ) {
        let text = serde_json::to_string(&list).unwrap();
        let cut = cut.min(text.len());
        let got = truncated_names(&text[..cut]);
        // Every name read is a complete name of the list, in order.
        proptest::prop_assert!(got.len() <= list.len());
        proptest::prop_assert_eq!(&got[..], &list[..got.len()]);
    }
}
