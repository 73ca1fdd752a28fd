//! Tests of [`embed`](super).

use super::*;
use sha2::{Digest, Sha256};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn candidate(name: &str, text: &str) -> Candidate {
    Candidate {
        name: name.to_owned(),
        reference: format!("b/{name}@1.0.0"),
        text: text.to_owned(),
        content_hash: hash(text),
    }
}

fn endpoint(server: &MockServer, model: &str, key: Option<&str>) -> Endpoint {
    Endpoint {
        base_url: format!("{}/v1", server.uri()),
        model: model.to_owned(),
        api_key: key.map(str::to_owned),
        timeout: Duration::from_secs(5),
    }
}

/// A vector from the letters of a text: [a − z, b, c].
fn vector(text: &str) -> Vec<f64> {
    let n = |letter: char| text.matches(letter).count() as f64;
    vec![n('a') - n('z'), n('b'), n('c')]
}

/// An embeddings endpoint that answers [`vector`]s, listed in reverse with their index.
struct Embedder;

impl Respond for Embedder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap();
        let inputs = body["input"].as_array().unwrap();
        let mut data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, text)| {
                json!({ "object": "embedding", "index": i,
                            "embedding": vector(text.as_str().unwrap()) })
            })
            .collect();
        data.reverse();
        ResponseTemplate::new(200)
            .set_body_json(json!({ "object": "list", "data": data, "model": body["model"] }))
    }
}

async fn embedder() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(Embedder)
        .mount(&server)
        .await;
    server
}

/// A server that answers every request with `response`.
async fn answering(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

struct Run {
    result: Result<Vec<f64>, ScorerError>,
    progress: Vec<(usize, usize)>,
}

async fn run(
    state_dir: &Path,
    endpoint: Endpoint,
    query: &str,
    candidates: &[Candidate],
    batch_size: usize,
    limit: Duration,
) -> Run {
    let (state_dir, query, candidates) =
        (state_dir.to_owned(), query.to_owned(), candidates.to_vec());
    tokio::task::spawn_blocking(move || {
        let mut progress = Vec::new();
        let result = scores(
            &state_dir,
            &endpoint,
            &query,
            &candidates,
            batch_size,
            Instant::now() + limit,
            &mut |done, total| progress.push((done, total)),
        );
        Run { result, progress }
    })
    .await
    .unwrap()
}

/// The `input` of each request the server received.
async fn inputs(server: &MockServer) -> Vec<Vec<String>> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let body: Value = r.body_json().unwrap();
            serde_json::from_value(body["input"].clone()).unwrap()
        })
        .collect()
}

fn assert_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{got:?} vs {want:?}");
    }
}

fn upstream(result: Result<Vec<f64>, ScorerError>) -> String {
    match result {
        Err(ScorerError::Upstream(message)) => message,
        other => panic!("expected an upstream error, got {other:?}"),
    }
}

fn tools() -> Vec<Candidate> {
    vec![
        candidate("same", "aaaa"),
        candidate("half", "ab"),
        candidate("other", "bbb"),
        candidate("opposite", "zz"),
        candidate("nothing", "xy"),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn scores_are_cosines_in_candidate_order() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".toolctl");
    let out = run(
        &state,
        endpoint(&server, "m1", Some("sk-test-key")),
        "a",
        &tools(),
        10,
        Duration::from_secs(10),
    )
    .await;
    // Negative cosine (opposite) and a zero vector (nothing) score 0.
    assert_close(
        &out.result.unwrap(),
        &[1.0, std::f64::consts::FRAC_1_SQRT_2, 0.0, 0.0, 0.0],
    );
    assert_eq!(out.progress, vec![(5, 5)]);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(
            request.headers.get("authorization").unwrap(),
            "Bearer sk-test-key"
        );
        let body: Value = request.body_json().unwrap();
        assert_eq!(body["model"], "m1");
    }
    assert_eq!(
        inputs(&server).await,
        vec![vec!["a"], vec!["aaaa", "ab", "bbb", "zz", "xy"]]
    );
    assert!(state.join(CACHE_FILE).is_file());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_key_sends_no_authorization_and_a_trailing_slash_is_fine() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let mut endpoint = endpoint(&server, "m1", None);
    endpoint.base_url.push('/');
    let out = run(
        dir.path(),
        endpoint,
        "b",
        &[candidate("t", "bb")],
        4,
        Duration::from_secs(10),
    )
    .await;
    assert_close(&out.result.unwrap(), &[1.0]);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    assert!(
        requests
            .iter()
            .all(|r| r.headers.get("authorization").is_none())
    );
    assert!(requests.iter().all(|r| r.url.path() == "/v1/embeddings"));
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_vectors_are_computed_in_batches() {
    let server = MockServer::start().await;
    // The task alone, then 5 tools in batches of 2.
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .and(|r: &Request| r.body_json::<Value>().unwrap()["input"] == json!(["a"]))
        .respond_with(Embedder)
        .expect(1)
        .named("task")
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .and(|r: &Request| r.body_json::<Value>().unwrap()["input"] != json!(["a"]))
        .respond_with(Embedder)
        .expect(3)
        .named("tool batches")
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools(),
        2,
        Duration::from_secs(10),
    )
    .await;
    assert_close(
        &out.result.unwrap(),
        &[1.0, std::f64::consts::FRAC_1_SQRT_2, 0.0, 0.0, 0.0],
    );
    assert_eq!(out.progress, vec![(2, 5), (4, 5), (5, 5)]);
    assert_eq!(
        inputs(&server).await,
        vec![vec!["a"], vec!["aaaa", "ab"], vec!["bbb", "zz"], vec!["xy"]]
    );
    server.verify().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_text_is_embedded_once() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &[candidate("one", "ab"), candidate("two", "ab")],
        8,
        Duration::from_secs(10),
    )
    .await;
    let s = std::f64::consts::FRAC_1_SQRT_2;
    assert_close(&out.result.unwrap(), &[s, s]);
    assert_eq!(out.progress, vec![(1, 1)]);
    assert_eq!(inputs(&server).await, vec![vec!["a"], vec!["ab"]]);
}

#[tokio::test(flavor = "multi_thread")]
async fn cached_vectors_are_not_asked_again() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let first = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools(),
        2,
        Duration::from_secs(10),
    )
    .await;
    let first = first.result.unwrap();

    // A fresh server: only the task may be asked for.
    let fresh = embedder().await;
    let second = run(
        dir.path(),
        endpoint(&fresh, "m1", None),
        "a",
        &tools(),
        2,
        Duration::from_secs(10),
    )
    .await;
    assert_close(&second.result.unwrap(), &first);
    assert!(second.progress.is_empty());
    assert_eq!(inputs(&fresh).await, vec![vec!["a"]]);
}

#[tokio::test(flavor = "multi_thread")]
async fn another_model_misses_the_cache() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let tools = [candidate("t1", "ab"), candidate("t2", "bc")];
    for model in ["m1", "m2", "m1"] {
        run(
            dir.path(),
            endpoint(&server, model, None),
            "a",
            &tools,
            8,
            Duration::from_secs(10),
        )
        .await
        .result
        .unwrap();
    }
    // m1 computed, m2 computed, m1 again from the cache.
    assert_eq!(
        inputs(&server).await,
        vec![
            vec!["a"],
            vec!["ab", "bc"],
            vec!["a"],
            vec!["ab", "bc"],
            vec!["a"]
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_text_is_the_only_one_computed_again() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let mut tools = tools();
    run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools,
        10,
        Duration::from_secs(10),
    )
    .await
    .result
    .unwrap();
    tools[2] = candidate("other", "abc");
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools,
        10,
        Duration::from_secs(10),
    )
    .await;
    assert_close(
        &out.result.unwrap(),
        &[
            1.0,
            std::f64::consts::FRAC_1_SQRT_2,
            1.0 / 3f64.sqrt(),
            0.0,
            0.0,
        ],
    );
    assert_eq!(out.progress, vec![(1, 1)]);
    let asked = inputs(&server).await;
    assert_eq!(&asked[2..], &[vec!["a"], vec!["abc"]]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cached_vector_of_another_length_is_computed_again() {
    let dir = tempfile::tempdir().unwrap();
    let tool = candidate("t", "ab");
    let cache = Cache::open(dir.path(), Instant::now() + Duration::from_secs(5)).unwrap();
    cache
        .put_all("m1", &[tool.content_hash.as_str()], &[vec![1.0, 2.0]])
        .unwrap();
    drop(cache);
    let server = embedder().await;
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &[tool],
        10,
        Duration::from_secs(10),
    )
    .await;
    assert_close(&out.result.unwrap(), &[std::f64::consts::FRAC_1_SQRT_2]);
    assert_eq!(inputs(&server).await, vec![vec!["a"], vec!["ab"]]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_cache_is_made_again() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(CACHE_FILE);
    std::fs::File::create(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &[b'x'; 8192]))
        .unwrap();
    let tools = [candidate("t", "ab")];
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools,
        10,
        Duration::from_secs(10),
    )
    .await;
    assert_close(&out.result.unwrap(), &[std::f64::consts::FRAC_1_SQRT_2]);
    // The new cache works: the tool is not asked for again.
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools,
        10,
        Duration::from_secs(10),
    )
    .await;
    assert_close(&out.result.unwrap(), &[std::f64::consts::FRAC_1_SQRT_2]);
    assert_eq!(
        inputs(&server).await,
        vec![vec!["a"], vec!["ab"], vec!["a"]]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cache_of_another_layout_is_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join(CACHE_FILE)).unwrap();
    conn.execute_batch("PRAGMA user_version = 99; CREATE TABLE vectors (x);")
        .unwrap();
    drop(conn);
    let server = embedder().await;
    let tools = [candidate("t", "ab")];
    for _ in 0..2 {
        let out = run(
            dir.path(),
            endpoint(&server, "m1", None),
            "a",
            &tools,
            10,
            Duration::from_secs(10),
        )
        .await;
        assert_close(&out.result.unwrap(), &[std::f64::consts::FRAC_1_SQRT_2]);
    }
    assert_eq!(
        inputs(&server).await,
        vec![vec!["a"], vec!["ab"], vec!["a"]]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_dir_that_cannot_be_made_is_no_error() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    // A file where the state folder should be; and a folder in a missing catalog.
    let blocked = dir.path().join("file");
    std::fs::File::create(&blocked).unwrap();
    let missing = dir.path().join("no-catalog").join(".toolctl");
    for state in [&blocked, &missing] {
        let out = run(
            state,
            endpoint(&server, "m1", None),
            "a",
            &[candidate("t", "aa")],
            10,
            Duration::from_secs(10),
        )
        .await;
        assert_close(&out.result.unwrap(), &[1.0]);
    }
    assert!(!dir.path().join("no-catalog").exists());
    assert_eq!(inputs(&server).await.len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_picks_share_one_cache() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".toolctl");
    let picks: Vec<_> = (0..4)
        .map(|_| {
            let (state, endpoint) = (state.clone(), endpoint(&server, "m1", None));
            tokio::task::spawn_blocking(move || {
                let deadline = Instant::now() + Duration::from_secs(10);
                scores(
                    &state,
                    &endpoint,
                    "a",
                    &tools(),
                    2,
                    deadline,
                    &mut |_, _| {},
                )
            })
        })
        .collect();
    for pick in picks {
        assert_close(
            &pick.await.unwrap().unwrap(),
            &[1.0, std::f64::consts::FRAC_1_SQRT_2, 0.0, 0.0, 0.0],
        );
    }
    let cache = Cache::open(&state, Instant::now() + Duration::from_secs(5)).unwrap();
    let hashes: Vec<String> = tools().into_iter().map(|c| c.content_hash).collect();
    let hashes: Vec<&str> = hashes.iter().map(String::as_str).collect();
    let cached = cache.get_all("m1", &hashes).unwrap();
    assert_eq!(cached[0], Some(vec![4.0, 0.0, 0.0]));
    assert_eq!(cached[3], Some(vec![-2.0, 0.0, 0.0]));
    assert!(cached.iter().all(Option::is_some));
}

#[tokio::test(flavor = "multi_thread")]
async fn no_candidates_need_no_request() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &[],
        10,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(out.result.unwrap(), Vec::<f64>::new());
    assert!(inputs(&server).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_says_where_keys_come_from() {
    let server =
        answering(ResponseTemplate::new(401).set_body_string(
            r#"{"error":{"message":"Incorrect API key provided: sk-secret-123"}}"#,
        ))
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", Some("sk-secret-123")),
        "a",
        &tools(),
        10,
        Duration::from_secs(10),
    )
    .await;
    let message = upstream(out.result);
    assert!(
        message.contains(&format!(
            "{}/v1/embeddings refused the API key (HTTP 401)",
            server.uri()
        )),
        "{message}"
    );
    assert!(message.contains("catalog secrets"), "{message}");
    assert!(message.contains("Incorrect API key provided"), "{message}");
    assert!(!message.contains("sk-secret-123"), "{message}");

    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools(),
        10,
        Duration::from_secs(10),
    )
    .await;
    let message = upstream(out.result);
    assert!(
        message.contains("wants an API key (HTTP 401) and none was given"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_status_shows_a_short_excerpt() {
    let server = answering(ResponseTemplate::new(500).set_body_string("boom ".repeat(100))).await;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools(),
        10,
        Duration::from_secs(10),
    )
    .await;
    let message = upstream(out.result);
    let prefix = format!(
        "{}/v1/embeddings answered HTTP 500: boom boom",
        server.uri()
    );
    assert!(message.starts_with(&prefix), "{message}");
    assert!(message.ends_with('…'), "{message}");
    assert!(message.len() < prefix.len() + 220, "{message}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_is_not_json_is_an_upstream_error() {
    let server = answering(ResponseTemplate::new(200).set_body_string("<html>hello</html>")).await;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools(),
        10,
        Duration::from_secs(10),
    )
    .await;
    let message = upstream(out.result);
    assert!(
        message.contains("/v1/embeddings did not answer JSON"),
        "{message}"
    );
    assert!(message.ends_with(": <html>hello</html>"), "{message}");
}

/// The error for an answer of `data` to the task.
async fn bad_answer(data: Value) -> String {
    let server = answering(ResponseTemplate::new(200).set_body_json(json!({ "data": data }))).await;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools(),
        10,
        Duration::from_secs(10),
    )
    .await;
    let message = upstream(out.result);
    assert!(
        message.starts_with(&format!("{}/v1/embeddings ", server.uri())),
        "{message}"
    );
    message
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_vectors_are_upstream_errors() {
    let one = |e: Value| json!({ "index": 0, "embedding": e });
    assert!(
        bad_answer(json!([]))
            .await
            .ends_with("returned 0 vectors for 1 texts")
    );
    assert!(
        bad_answer(json!([one(json!([1.0])), one(json!([1.0]))]))
            .await
            .ends_with("returned 2 vectors for 1 texts")
    );
    assert!(
        bad_answer(json!([one(json!([]))]))
            .await
            .ends_with("returned an empty vector (item 0)")
    );
    assert!(
        bad_answer(json!([one(json!([1.0, "x"]))]))
            .await
            .contains("something other than a finite number")
    );
    // Too large for an f32.
    assert!(
        bad_answer(json!([one(json!([1e39]))]))
            .await
            .contains("something other than a finite number")
    );
    assert!(
        bad_answer(json!([{ "index": 3, "embedding": [1.0] }]))
            .await
            .contains("index 3")
    );
    assert!(
        bad_answer(json!([{ "vector": [1.0] }]))
            .await
            .contains("without an `embedding` array")
    );
    assert!(
        bad_answer(json!("nope"))
            .await
            .contains("without a `data` array")
    );
}

#[test]
fn vectors_are_ordered_by_index_and_of_one_length() {
    let answer = json!({ "data": [
            { "index": 1, "embedding": [0.0, 2.0] },
            { "index": 0, "embedding": [1.0, 0.0] },
        ] });
    assert_eq!(
        parse_vectors("u", &answer, 2).unwrap(),
        vec![vec![1.0, 0.0], vec![0.0, 2.0]]
    );
    // Without indexes: as listed.
    let answer = json!({ "data": [ { "embedding": [0.0, 2.0] }, { "embedding": [1.0, 0.0] } ] });
    assert_eq!(
        parse_vectors("u", &answer, 2).unwrap(),
        vec![vec![0.0, 2.0], vec![1.0, 0.0]]
    );
    let answer = json!({ "data": [
            { "index": 0, "embedding": [1.0, 0.0] },
            { "index": 0, "embedding": [1.0, 0.0] },
        ] });
    assert!(
        matches!(parse_vectors("u", &answer, 2), Err(ScorerError::Upstream(m)) if m.contains("repeated"))
    );
    let answer = json!({ "data": [
            { "index": 0, "embedding": [1.0, 0.0] },
            { "index": 1, "embedding": [1.0, 0.0, 3.0] },
        ] });
    assert_eq!(
        parse_vectors("u", &answer, 2),
        Err(ScorerError::Upstream(
            "u returned vectors of different dimensions (2 and 3)".into()
        ))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_vectors_of_another_length_than_the_task_are_refused() {
    struct Lengths;
    impl Respond for Lengths {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let body: Value = request.body_json().unwrap();
            let n = body["input"].as_array().unwrap().len();
            let width = if body["input"] == json!(["a"]) { 3 } else { 2 };
            let data: Vec<Value> = (0..n)
                .map(|i| json!({ "index": i, "embedding": vec![1.0; width] }))
                .collect();
            ResponseTemplate::new(200).set_body_json(json!({ "data": data }))
        }
    }
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Lengths)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools(),
        10,
        Duration::from_secs(10),
    )
    .await;
    assert!(
        upstream(out.result)
            .ends_with("returned vectors of 2 dimensions for tools but of 3 for the task")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_connection_is_an_upstream_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let endpoint = Endpoint {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        model: "m1".into(),
        api_key: Some("sk-secret-123".into()),
        timeout: Duration::from_secs(5),
    };
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = run(
        dir.path(),
        endpoint,
        "a",
        &tools(),
        10,
        Duration::from_secs(10),
    )
    .await;
    let message = upstream(out.result);
    assert!(
        message.starts_with(&format!(
            "cannot reach http://127.0.0.1:{port}/v1/embeddings: "
        )),
        "{message}"
    );
    assert!(message.to_lowercase().contains("refused"), "{message}");
    assert!(!message.contains("sk-secret"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_past_deadline_sends_nothing() {
    let server = embedder().await;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools(),
        10,
        Duration::ZERO,
    )
    .await;
    assert_eq!(out.result, Err(ScorerError::Deadline));
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_server_times_out_quickly() {
    let server = answering(ResponseTemplate::new(200).set_delay(Duration::from_secs(10))).await;
    let dir = tempfile::tempdir().unwrap();
    let mut slow = endpoint(&server, "m1", None);
    slow.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let out = run(dir.path(), slow, "a", &tools(), 10, Duration::from_secs(10)).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        upstream(out.result),
        format!(
            "{}/v1/embeddings did not answer within 300 ms",
            server.uri()
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_server_past_the_deadline_is_a_deadline() {
    let server = answering(ResponseTemplate::new(200).set_delay(Duration::from_secs(10))).await;
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = run(
        dir.path(),
        endpoint(&server, "m1", None),
        "a",
        &tools(),
        10,
        Duration::from_millis(300),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(out.result, Err(ScorerError::Deadline));
}

#[test]
fn cosine_is_clamped_to_zero_and_one() {
    assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-12);
    assert_eq!(cosine(&[1.0, 0.0], &[-1.0, 0.0]), 0.0);
    assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
    assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
    assert!((cosine(&[1.0, 1.0], &[1.0, 0.0]) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-7);
}

#[test]
fn excerpts_are_short_and_on_one_line() {
    assert_eq!(excerpt("a\n  b\t c"), "a b c");
    assert_eq!(excerpt("  "), "(empty body)");
    let long = excerpt(&"é".repeat(500));
    assert_eq!(long.chars().count(), EXCERPT_CHARS + 1);
}

proptest::proptest! {
    #[test]
    fn vectors_round_trip_through_blobs(v in proptest::collection::vec(-1e30f32..1e30f32, 1..64)) {
        let blob = encode(&v);
        proptest::prop_assert_eq!(blob.len(), v.len() * 4);
        proptest::prop_assert_eq!(decode(&blob), Some(v));
    }
}

#[test]
fn blobs_that_are_not_vectors_are_refused() {
    assert_eq!(decode(&[]), None);
    assert_eq!(decode(&[0, 0, 0]), None);
    assert_eq!(decode(&f32::NAN.to_le_bytes()), None);
}
