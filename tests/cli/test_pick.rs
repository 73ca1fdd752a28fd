//! `toolctl pick` (issue 5; the seed's `pickTools`, `llm-tool-selection.md`): the real binary
//! on temporary catalogs and, for the network scorers, OpenAI-compatible servers that the tests
//! start on 127.0.0.1 with wiremock. Nothing reaches the internet.
//!
//! - **The seed's defaults**: `--max 3`, `--min-score 0.05` (inclusive; `0` lets zero-score
//!   tools in), scores in 0..1 best first, a `reason` always, `provenance` only under `--debug`
//!   (scorer, matched terms, sub-scores), the `--json` shape pinned by [`Pick`].
//! - **Safety**: explicit `safe`, then MCP annotations (read-only, or not destructive), then the
//!   HTTP method (GET/HEAD); built-in `exec` unsafe and `readfile` safe; disabled tools, tools of
//!   disabled bundles and unavailable tools never picked, whatever the flags.
//! - **Determinism**: `keyword` and `bm25` print the same bytes for the same query (also on a
//!   second copy of the catalog, whose index is built afresh); equal scores keep registration
//!   order (`createdAt`, not file or slug order).
//! - **Validation**: bad requests are `VALIDATION_ERROR` (exit 3) with a hint; an unknown scorer
//!   is a usage error (exit 2).
//! - **`--timeout-ms`**: a scorer stuck on a slow endpoint is abandoned; the first tools in
//!   registration order come back quickly, with a warning and `registration-order` provenance.
//! - **`--emit PROVIDER`**: the picked tools, in pick order, exactly as `export` prints them.
//! - **`embed`** against [`BagOfWords`], a wiremock responder that turns each text into a hashed
//!   bag of its lower-case words (deterministic, so cosine similarity means "shares words"):
//!   ranking by cosine, the vector cache (only new or changed texts are sent; another model
//!   re-embeds all; `batchSize`), the API key from catalog secrets (sent as a bearer token,
//!   never printed), and every endpoint failure a quick, clear `UPSTREAM_ERROR`.
//! - **`llm`** against a chat-completions responder: names-only prompt at temperature 0,
//!   tolerant reply parsing in the model's order, the cache in the seed's format (hit, stale
//!   entries regenerated, empty selections never cached), and the keyword fallback on any
//!   failure, with its reason.
//! - **Names and purity**: a pick's `name` is the exported name (bundle-prefixed when slugs
//!   collide) that `invoke` takes back; no pick changes a catalog file, only `.toolctl/`.
//! - **Regressions**: `regression_*` tests pin bugs found while writing these (see each one's
//!   comment for the fix).
//! - **Quality** ([`test_pick_quality`]): the labelled queries of `fixtures/queries.json` over
//!   a copy of `fixtures/catalog`, Recall@1/@3/@5 and MRR for `keyword`, `bm25` and `hybrid`,
//!   held above floors. `hybrid`'s "semantic" half comes from [`BagOfWords`], so it measures
//!   the blend with a bag-of-words stand-in, not with a real embeddings model.
//!
//! Tests with a server run the binary (blocking) inside a multi-threaded tokio runtime, as
//! `test_invoke_http` does: wiremock serves from its own tasks, so blocking one thread is fine.

use crate::common::{Metrics, Run, TestEnv, keys, read_json, tool_doc_with, write_file};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

// --- the output, and helpers -----------------------------------------------------------------

/// One picked tool as `pick --json` prints it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Pick {
    #[serde(rename = "ref")]
    reference: String,
    name: String,
    #[serde(rename = "toolID")]
    tool_id: String,
    score: f64,
    reason: String,
    #[serde(default)]
    provenance: Option<Value>,
}

/// `toolctl --json pick ARGS`, whatever the outcome.
fn pick_run(env: &TestEnv, args: &[&str]) -> Run {
    let mut all = vec!["--json", "pick"];
    all.extend_from_slice(args);
    env.run(&all)
}

/// `toolctl --json pick ARGS` with more environment variables.
fn pick_run_with(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut all = vec!["--json", "pick"];
    all.extend_from_slice(args);
    let mut cmd = env.command(&all);
    for (name, value) in vars {
        cmd.env(name, value);
    }
    Run::of(cmd, None)
}

/// A pick that must succeed with nothing on stderr.
#[track_caller]
fn picks(env: &TestEnv, args: &[&str]) -> Vec<Pick> {
    let run = pick_run(env, args);
    run.success();
    assert_eq!(run.stderr, "", "{run}");
    run.parse()
}

fn refs(picks: &[Pick]) -> Vec<&str> {
    picks.iter().map(|p| p.reference.as_str()).collect()
}

fn names(picks: &[Pick]) -> Vec<&str> {
    picks.iter().map(|p| p.name.as_str()).collect()
}

fn scores(picks: &[Pick]) -> Vec<f64> {
    picks.iter().map(|p| p.score).collect()
}

/// The score toolctl prints for `x` (rounded to 4 decimals).
fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[track_caller]
fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() < 1e-9,
        "{what}: got {got}, expected {want}"
    );
}

/// The n-th registration time of a test (minutes after 2025-01-01, so after the built-ins'
/// 2024-07-01): the `createdAt` that fixes the order of equal scores.
fn at(n: u32) -> String {
    format!("2025-01-01T{:02}:{:02}:00Z", n / 60, n % 60)
}

/// A native tool `slug@v1` registered at [`at`]`(n)`, with more fields.
fn native(slug: &str, n: u32, extra: Value) -> Value {
    let mut doc = tool_doc_with(
        slug,
        "v1",
        json!({ "createdAt": at(n), "modifiedAt": at(n) }),
    );
    for (key, value) in extra.as_object().unwrap() {
        doc[key] = value.clone();
    }
    doc
}

/// An HTTP tool `slug@v1` calling `https://api.example.com/widgets` with `method`.
fn http(slug: &str, n: u32, method: &str, extra: Value) -> Value {
    let mut doc = native(
        slug,
        n,
        json!({
            "type": "http",
            "impl": { "method": method, "urlTemplate": "https://api.example.com/widgets" },
        }),
    );
    for (key, value) in extra.as_object().unwrap() {
        doc[key] = value.clone();
    }
    doc
}

/// Switch the built-in bundle off, so the candidates are the test's tools only.
fn without_builtins(env: &TestEnv) {
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(false));
}

/// The catalog's derived-state folder.
fn state_dir(env: &TestEnv) -> PathBuf {
    env.catalog().join(".toolctl")
}

/// `bundle/slug` of a `bundle/slug@version` ref.
fn slug_of(reference: &str) -> &str {
    reference.split_once('@').map_or(reference, |(s, _)| s)
}

// --- the local servers -----------------------------------------------------------------------

/// Dimensions of a [`BagOfWords`] vector.
const DIMS: usize = 512;

/// Words a bag of words leaves out.
const STOP: &[&str] = &[
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "its",
    "me", "my", "of", "on", "or", "the", "to", "with",
];

/// The words of a text as [`BagOfWords`] counts them: runs of letters and digits, lower-cased,
/// without stop words, a plural `s` dropped.
fn bag_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP.contains(&w.as_str()))
        .map(|w| {
            if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                w[..w.len() - 1].to_owned()
            } else {
                w
            }
        })
        .collect()
}

/// FNV-1a: a hash that is the same on every machine and every run.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The vector [`BagOfWords`] gives `text`: the count of each word, at its hashed position.
fn bag_of_words(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0f32; DIMS];
    for word in bag_words(text) {
        vector[(fnv1a(&word) % DIMS as u64) as usize] += 1.0;
    }
    vector
}

/// Cosine similarity, clamped to 0..1 as toolctl does.
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        (dot / (na * nb)).clamp(0.0, 1.0)
    }
}

/// An OpenAI-compatible embeddings model stand-in: each input text becomes
/// [`bag_of_words`]`(text)`, so texts sharing words are close and the answer is deterministic.
struct BagOfWords;

impl Respond for BagOfWords {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return ResponseTemplate::new(400).set_body_string("not JSON");
        };
        let texts: Vec<String> = match &body["input"] {
            Value::String(one) => vec![one.clone()],
            Value::Array(many) => many
                .iter()
                .map(|t| t.as_str().unwrap_or_default().to_owned())
                .collect(),
            _ => return ResponseTemplate::new(400).set_body_string("no input"),
        };
        let data: Vec<Value> = texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                json!({ "object": "embedding", "index": i, "embedding": bag_of_words(text) })
            })
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": { "prompt_tokens": 0, "total_tokens": 0 },
        }))
    }
}

/// A server answering `POST /v1/embeddings` with [`BagOfWords`].
pub(crate) async fn embeddings_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(BagOfWords)
        .mount(&server)
        .await;
    server
}

/// A server answering every `POST` on any path with `reply`.
async fn server_answering(reply: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply)
        .mount(&server)
        .await;
    server
}

/// The base URL of a server's OpenAI-compatible API.
pub(crate) fn v1(server: &MockServer) -> String {
    format!("{}/v1", server.uri())
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
fn dead_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Set `pick.embed` (or `pick.llm`) of `toolctl.json` to these fields.
pub(crate) fn set_endpoint(env: &TestEnv, which: &str, fields: Value) {
    env.edit_config(|config| config["pick"][which] = fields);
}

/// The input texts of every embeddings request the server received, one list per request.
async fn embedded(server: &MockServer) -> Vec<Vec<String>> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r.url.path(), "/v1/embeddings");
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            body["input"]
                .as_array()
                .unwrap_or_else(|| panic!("input is not an array: {body}"))
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

/// The requests after the first `before`.
fn since<T: Clone>(all: &[T], before: usize) -> Vec<T> {
    all[before..].to_vec()
}

/// A chat completion whose message is `content`.
fn chat_answer(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "chooser",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content },
            "finish_reason": "stop",
        }],
    }))
}

/// A chat model stand-in that answers each task with the reply listed for it: the first
/// whose task the request's user message holds (anything else: an empty array).
struct Replies(Vec<(&'static str, String)>);

impl Respond for Replies {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let user = user_message(&body);
        let reply = self
            .0
            .iter()
            .find(|(task, _)| user.contains(&format!("{task}\n")))
            .map_or("[]", |(_, reply)| reply.as_str());
        chat_answer(reply)
    }
}

/// A server answering `POST /v1/chat/completions` with `reply`.
async fn chat_server(reply: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(reply)
        .mount(&server)
        .await;
    server
}

/// The bodies of every request a server received.
async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// The text of the user message of a chat request.
fn user_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect()
}

// --- the shop: a small catalog for the network scorers ---------------------------------------

/// `(slug, description, tags, safe)`, in registration order.
const SHOP: &[(&str, &str, &[&str], bool)] = &[
    (
        "paint-fence",
        "Paint a wooden fence or gate in any colour.",
        &["garden"],
        true,
    ),
    (
        "mow-lawn",
        "Cut the grass of a lawn to an even height.",
        &["garden"],
        true,
    ),
    (
        "fix-sink",
        "Repair a leaking kitchen sink or a dripping tap.",
        &["plumbing"],
        true,
    ),
    (
        "bake-bread",
        "Bake a loaf of sourdough bread in the oven.",
        &["kitchen"],
        true,
    ),
    (
        "demolish-wall",
        "Knock down a brick wall with a sledgehammer.",
        &["building"],
        false,
    ),
    (
        "water-plants",
        "Water the thirsty plants in the garden and on the balcony.",
        &["garden"],
        true,
    ),
];

/// The safe shop tools, in registration order.
const SAFE_SHOP: [&str; 5] = [
    "paint-fence",
    "mow-lawn",
    "fix-sink",
    "bake-bread",
    "water-plants",
];

/// A catalog holding the [`SHOP`] tools in bundle `shop`, and no built-ins.
fn shop() -> TestEnv {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("shop");
    for (i, (slug, description, tags, safe)) in SHOP.iter().enumerate() {
        env.put_tool_dated(
            "shop",
            &native(
                slug,
                u32::try_from(i).unwrap() + 1,
                json!({ "description": description, "tags": tags, "safe": safe }),
            ),
        );
    }
    env
}

fn shop_ref(slug: &str) -> String {
    format!("shop/{slug}@v1")
}

fn shop_refs(slugs: &[&str]) -> Vec<String> {
    slugs.iter().map(|s| shop_ref(s)).collect()
}

/// The shop tool a text sent to the embeddings endpoint stands for (its first word is the
/// slug).
fn slug_of_text(text: &str) -> &str {
    text.split_whitespace().next().unwrap()
}

// --- the seed's defaults ---------------------------------------------------------------------

/// The thirteen-word task of the defaults tests: a word found in a tool's name is worth
/// 1/13 = 0.0769, in its tags 0.8/13 = 0.0615, in its description only 0.6/13 = 0.0462 (under
/// the default minimum of 0.05).
const NATO: &str = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike";

/// Tools scoring every kind of match against [`NATO`], and no built-ins.
fn nato() -> TestEnv {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("n");
    for doc in [
        native("lima-lamp", 1, json!({ "description": "A lamp." })),
        native(
            "tagged",
            2,
            json!({ "description": "Tagged only.", "tags": ["mike"] }),
        ),
        native(
            "described",
            3,
            json!({ "description": "Mentions kilo once." }),
        ),
        native("plain", 4, json!({ "description": "Nothing in common." })),
        native(
            "alpha-bravo",
            5,
            json!({ "description": "Says charlie in its description." }),
        ),
        native(
            "golf-hotel-india",
            6,
            json!({ "description": "Three words." }),
        ),
    ] {
        env.put_tool("n", &doc);
    }
    env
}

#[test]
fn the_defaults_pick_three_tools_best_first_with_a_reason_and_no_provenance() {
    let env = nato();
    let got = picks(&env, &[NATO]);
    assert_eq!(
        refs(&got),
        [
            "n/golf-hotel-india@v1",
            "n/alpha-bravo@v1",
            "n/lima-lamp@v1"
        ]
    );
    assert_eq!(
        names(&got),
        ["golf-hotel-india", "alpha-bravo", "lima-lamp"]
    );
    assert_eq!(
        scores(&got),
        [round4(3.0 / 13.0), round4(2.6 / 13.0), 0.0769]
    );
    assert_eq!(
        got.iter().map(|p| p.reason.as_str()).collect::<Vec<_>>(),
        [
            "matched keywords in golf-hotel-india: golf, hotel, india",
            "matched keywords in alpha-bravo: alpha, bravo, charlie",
            "matched keywords in lima-lamp: lima",
        ]
    );
    assert!(got.iter().all(|p| p.provenance.is_none()));
    // The toolID is the tool's.
    let listed = env.tool_list(&["--bundle", "n"]);
    for p in &got {
        let tool = listed
            .items
            .iter()
            .find(|t| t.reference == p.reference)
            .unwrap();
        assert_eq!(p.tool_id, tool.tool_id);
    }

    // --max: more, in the same order; every score in 0..1, descending.
    let more = picks(&env, &[NATO, "--max", "10"]);
    assert_eq!(
        refs(&more),
        [
            "n/golf-hotel-india@v1",
            "n/alpha-bravo@v1",
            "n/lima-lamp@v1",
            "n/tagged@v1"
        ]
    );
    assert_eq!(more[3].score, 0.0615);
    assert_eq!(more[..3], got[..]);
    assert!(more.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(more.iter().all(|p| (0.0..=1.0).contains(&p.score)));
    assert_eq!(
        refs(&picks(&env, &[NATO, "--max", "1"])),
        ["n/golf-hotel-india@v1"]
    );
}

#[test]
fn min_score_leaves_out_tools_under_it_and_zero_lets_every_tool_in() {
    let env = nato();
    // "described" scores 0.0462: under the default 0.05, in at 0.04.
    let default = picks(&env, &[NATO, "--max", "128"]);
    assert!(!refs(&default).contains(&"n/described@v1"));
    assert_eq!(default.len(), 4);
    let lower = picks(&env, &[NATO, "--max", "128", "--min-score", "0.04"]);
    assert_eq!(
        refs(&lower),
        [
            "n/golf-hotel-india@v1",
            "n/alpha-bravo@v1",
            "n/lima-lamp@v1",
            "n/tagged@v1",
            "n/described@v1"
        ]
    );
    assert_eq!(lower[4].score, 0.0462);
    assert_eq!(
        lower[4].reason, "matched keywords in described: kilo",
        "{lower:?}"
    );

    // 0: the tool with nothing in common comes in too, with score 0 and a reason.
    let all = picks(&env, &[NATO, "--max", "128", "--min-score", "0"]);
    assert_eq!(all.len(), 6);
    assert_eq!(all[..5], lower[..]);
    assert_eq!(all[5].reference, "n/plain@v1");
    assert_eq!(all[5].score, 0.0);
    assert_eq!(all[5].reason, "no keyword in common");

    // Higher bars.
    assert_eq!(
        refs(&picks(&env, &[NATO, "--min-score", "0.23"])),
        ["n/golf-hotel-india@v1"]
    );
    assert_eq!(picks(&env, &[NATO, "--min-score", "0.2308"]), []);
    // The bar is inclusive: a perfect match passes --min-score 1.
    let perfect = picks(&env, &["lamp", "--min-score", "1"]);
    assert_eq!(refs(&perfect), ["n/lima-lamp@v1"]);
    assert_eq!(perfect[0].score, 1.0);
}

#[test]
fn debug_adds_provenance_with_the_scorer_matched_terms_and_sub_scores() {
    let env = nato();
    let got = picks(&env, &[NATO, "--debug", "--max", "10", "--min-score", "0"]);
    let tokens: Vec<&str> = NATO.split(' ').collect();
    let weights = json!({ "name": 1.0, "tags": 0.8, "description": 0.6 });
    let by_ref = |r: &str| {
        got.iter()
            .find(|p| p.reference == r)
            .unwrap_or_else(|| panic!("{r} not picked: {got:?}"))
            .provenance
            .clone()
            .unwrap()
    };
    assert_eq!(
        by_ref("n/alpha-bravo@v1"),
        json!({
            "scorer": "keyword",
            "details": {
                "queryTokens": tokens,
                "matchedTerms": ["alpha", "bravo", "charlie"],
                "matched": { "name": ["alpha", "bravo"], "tags": [], "description": ["charlie"] },
                "fieldWeights": weights,
                "subScores": { "name": 0.154, "tags": 0.0, "description": 0.046 },
            },
        })
    );
    assert_eq!(
        by_ref("n/tagged@v1"),
        json!({
            "scorer": "keyword",
            "details": {
                "queryTokens": tokens,
                "matchedTerms": ["mike"],
                "matched": { "name": [], "tags": ["mike"], "description": [] },
                "fieldWeights": weights,
                "subScores": { "name": 0.0, "tags": 0.062, "description": 0.0 },
            },
        })
    );
    assert_eq!(
        by_ref("n/plain@v1"),
        json!({ "scorer": "keyword", "details": { "queryTokens": tokens, "matchedTerms": [] } })
    );
    // --debug changes nothing else.
    let plain = picks(&env, &[NATO, "--max", "10", "--min-score", "0"]);
    let stripped: Vec<Pick> = got
        .into_iter()
        .map(|p| Pick {
            provenance: None,
            ..p
        })
        .collect();
    assert_eq!(stripped, plain);

    // bm25 says which tier and how much.
    let bm25 = picks(&env, &["lamp", "--scorer", "bm25", "--debug"]);
    assert_eq!(refs(&bm25), ["n/lima-lamp@v1"]);
    let provenance = bm25[0].provenance.as_ref().unwrap();
    assert_eq!(provenance["scorer"], "bm25");
    assert!(provenance["details"]["tier"].is_string(), "{provenance}");
    assert!(
        provenance["details"]["bm25"].as_f64().unwrap() > 0.0,
        "{provenance}"
    );
    assert!((0.0..=1.0).contains(&bm25[0].score));
}

#[test]
fn human_output_is_a_table_or_says_why_nothing_was_picked() {
    let env = nato();
    let run = env.run(&["pick", NATO]);
    run.success();
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "\
#  TOOL                   NAME              SCORE  REASON
1  n/golf-hotel-india@v1  golf-hotel-india  0.23   matched keywords in golf-hotel-india: golf, hotel, india
2  n/alpha-bravo@v1       alpha-bravo       0.20   matched keywords in alpha-bravo: alpha, bravo, charlie
3  n/lima-lamp@v1         lima-lamp         0.08   matched keywords in lima-lamp: lima
"
    );
    // --debug: the table, then each pick's provenance on a line of its own.
    let run = env.run(&["pick", NATO, "--debug"]);
    run.success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 7, "{run}");
    for (line, reference) in lines[4..].iter().zip([
        "n/golf-hotel-india@v1",
        "n/alpha-bravo@v1",
        "n/lima-lamp@v1",
    ]) {
        let (head, provenance) = line.split_once(": ").unwrap();
        assert_eq!(head, reference);
        let provenance: Value = serde_json::from_str(provenance).unwrap();
        assert_eq!(provenance["scorer"], "keyword", "{line}");
        assert!(provenance["details"]["matchedTerms"].is_array(), "{line}");
    }
    let run = env.run(&["pick", "zebra", "crossing"]);
    run.success();
    assert_eq!(
        run.stdout,
        "no tool scores 0.05 or more for 'zebra crossing' (6 considered; --min-score lowers the bar, --allow-unsafe adds unsafe tools)\n"
    );
    // The words of the task may come as one argument or several.
    assert_eq!(
        pick_run(&env, &["golf", "hotel"]).stdout,
        pick_run(&env, &["golf hotel"]).stdout
    );
    assert_eq!(picks(&env, &["zebra"]), []);
}

#[test]
fn one_version_per_slug_is_picked_the_newest_enabled_one() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("v");
    let doc = |version: &str, n: u32| {
        let mut doc = native("kettle", n, json!({ "description": "Boil water." }));
        doc["version"] = json!(version);
        doc
    };
    env.put_tool("v", &doc("v1", 1));
    env.put_tool("v", &doc("v2", 2));
    env.put_tool("v", &doc("v3", 3));
    let got = picks(&env, &["kettle", "--max", "10"]);
    assert_eq!(refs(&got), ["v/kettle@v3"]);
    env.run(&["tool", "disable", "v/kettle@v3"]).success();
    assert_eq!(
        refs(&picks(&env, &["kettle", "--max", "10"])),
        ["v/kettle@v2"]
    );
}

// --- safety ----------------------------------------------------------------------------------

#[test]
fn unsafe_tools_are_left_out_unless_allowed() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.edit_config(|config| config["allowedHosts"] = json!(["api.example.com"]));
    env.bundle("w");
    // (slug, document, safe?) in registration order.
    let cases: Vec<(&str, Value, bool)> = vec![
        ("widget-native", native("widget-native", 1, json!({})), true),
        ("widget-get", http("widget-get", 2, "GET", json!({})), true),
        (
            "widget-head",
            http("widget-head", 3, "HEAD", json!({})),
            true,
        ),
        (
            "widget-post",
            http("widget-post", 4, "POST", json!({})),
            false,
        ),
        ("widget-put", http("widget-put", 5, "PUT", json!({})), false),
        (
            "widget-patch",
            http("widget-patch", 6, "PATCH", json!({})),
            false,
        ),
        (
            "widget-delete",
            http("widget-delete", 7, "DELETE", json!({})),
            false,
        ),
        (
            "widget-post-safe",
            http("widget-post-safe", 8, "POST", json!({ "safe": true })),
            true,
        ),
        (
            "widget-get-unsafe",
            http("widget-get-unsafe", 9, "GET", json!({ "safe": false })),
            false,
        ),
        (
            "widget-native-unsafe",
            native("widget-native-unsafe", 10, json!({ "safe": false })),
            false,
        ),
        (
            "widget-read-only",
            http(
                "widget-read-only",
                11,
                "POST",
                json!({ "annotations": { "readOnlyHint": true } }),
            ),
            true,
        ),
        (
            "widget-not-destructive",
            http(
                "widget-not-destructive",
                12,
                "DELETE",
                json!({ "annotations": { "destructiveHint": false } }),
            ),
            true,
        ),
        (
            "widget-destructive",
            http(
                "widget-destructive",
                13,
                "GET",
                json!({ "annotations": { "destructiveHint": true } }),
            ),
            false,
        ),
        (
            "widget-writes",
            http(
                "widget-writes",
                14,
                "GET",
                json!({ "annotations": { "readOnlyHint": false } }),
            ),
            false,
        ),
        (
            "widget-safe-beats-hints",
            http(
                "widget-safe-beats-hints",
                15,
                "DELETE",
                json!({ "safe": true, "annotations": { "destructiveHint": true } }),
            ),
            true,
        ),
        (
            "widget-unsafe-beats-hints",
            http(
                "widget-unsafe-beats-hints",
                16,
                "GET",
                json!({ "safe": false, "annotations": { "readOnlyHint": true } }),
            ),
            false,
        ),
    ];
    for (_, doc, _) in &cases {
        env.put_tool("w", doc);
    }
    let expect = |all: bool| -> Vec<String> {
        cases
            .iter()
            .filter(|(_, _, safe)| all || *safe)
            .map(|(slug, _, _)| format!("w/{slug}@v1"))
            .collect()
    };
    // Every tool's name holds "widget": all score 1, so the order is the registration order.
    let safe = picks(&env, &["widget", "--max", "128"]);
    assert_eq!(refs(&safe), expect(false));
    assert!(safe.iter().all(|p| p.score == 1.0));
    let all = picks(&env, &["widget", "--max", "128", "--allow-unsafe"]);
    assert_eq!(refs(&all), expect(true));
    // A hand edit of `safe` counts from the next pick on.
    let file = crate::common::find_files(env.catalog(), "tool.json")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("/widget-native/"))
        .unwrap();
    let mut doc = read_json(&file);
    doc["safe"] = json!(false);
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let now_safe = picks(&env, &["widget", "--max", "128"]);
    assert_eq!(refs(&now_safe), expect(false)[1..]);
    doc["safe"] = json!(true);
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    // Human mode says how many were considered and that --allow-unsafe adds more.
    let run = env.run(&["pick", "gizmo"]);
    assert!(
        run.stdout.contains(
            "(7 considered; --min-score lowers the bar, --allow-unsafe adds unsafe tools)"
        ),
        "{run}"
    );
    let run = env.run(&["pick", "gizmo", "--allow-unsafe"]);
    assert!(
        run.stdout
            .ends_with("(16 considered; --min-score lowers the bar)\n"),
        "{run}"
    );
}

#[test]
fn builtin_exec_is_unsafe_and_readfile_safe() {
    let env = TestEnv::new();
    env.edit_config(|config| config["builtin"]["tools"]["exec"]["isEnabled"] = json!(true));
    let task = "run a command program";
    let safe = picks(&env, &[task, "--max", "128", "--min-score", "0"]);
    assert!(!refs(&safe).contains(&"builtin/exec@v1"), "{safe:?}");
    let all = picks(&env, &[task, "--allow-unsafe"]);
    assert_eq!(all[0].reference, "builtin/exec@v1", "{all:?}");
    assert_eq!(all[0].name, "exec");

    // Switched off again in toolctl.json: never picked, even when unsafe tools are allowed.
    env.edit_config(|config| config["builtin"]["tools"]["exec"]["isEnabled"] = json!(false));
    let off = picks(
        &env,
        &[task, "--allow-unsafe", "--max", "128", "--min-score", "0"],
    );
    assert!(!refs(&off).contains(&"builtin/exec@v1"), "{off:?}");
    // And the whole built-in bundle.
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(false));
    assert_eq!(picks(&env, &["read a file", "--allow-unsafe"]), []);
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(true));

    let read = picks(&env, &["read a file"]);
    assert_eq!(read[0].reference, "builtin/readfile@v1", "{read:?}");
    // Every safe built-in can be picked; exec only when allowed.
    assert_eq!(
        refs(&safe).into_iter().collect::<BTreeSet<_>>(),
        BTreeSet::from([
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1"
        ])
    );
}

#[test]
fn disabled_unavailable_and_disabled_bundle_tools_are_never_picked() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("d");
    env.bundle("off");
    env.put_tool_dated("d", &native("gadget-on", 1, json!({})));
    env.put_tool_dated("d", &native("gadget-off", 2, json!({})));
    env.put_tool_dated(
        "d",
        &native(
            "gadget-go",
            3,
            json!({ "type": "go", "impl": { "goFunc": "NotInThisBinary" } }),
        ),
    );
    env.put_tool_dated("off", &native("gadget-elsewhere", 4, json!({})));
    env.run(&["tool", "disable", "d/gadget-off@v1"]).success();
    env.run(&["bundle", "disable", "off"]).success();
    let listed = env.tool_list(&["--include-disabled", "--bundle", "d", "--bundle", "off"]);
    assert_eq!(listed.items.len(), 4);
    assert_eq!(
        listed.items.iter().filter(|t| t.available).count(),
        3,
        "{listed:?}"
    );

    for flags in [
        &["--max", "128"][..],
        &["--max", "128", "--allow-unsafe", "--min-score", "0"],
        &[
            "--max",
            "128",
            "--scorer",
            "bm25",
            "--allow-unsafe",
            "--min-score",
            "0",
        ],
    ] {
        let mut args = vec!["gadget"];
        args.extend_from_slice(flags);
        assert_eq!(refs(&picks(&env, &args)), ["d/gadget-on@v1"], "{flags:?}");
    }
    // Even by exact name.
    assert_eq!(
        picks(&env, &["gadget-off", "gadget-go", "gadget-elsewhere"]).len(),
        1
    );
}

// --- determinism -----------------------------------------------------------------------------

#[test]
fn keyword_and_bm25_print_the_same_bytes_for_the_same_task() {
    let first = TestEnv::fixture();
    let second = TestEnv::fixture();
    for scorer in ["keyword", "bm25"] {
        for task in [
            "weather forecast for Oslo tomorrow",
            "open a github issue about a bug",
            "meeting with Anna next week",
            "what time is it",
        ] {
            let args = [
                task,
                "--scorer",
                scorer,
                "--debug",
                "--allow-unsafe",
                "--min-score",
                "0",
                "--max",
                "20",
            ];
            let once = pick_run(&first, &args);
            once.success();
            let again = pick_run(&first, &args);
            let elsewhere = pick_run(&second, &args);
            assert_eq!(once.stdout, again.stdout, "{scorer} {task:?}");
            assert_eq!(once.stdout, elsewhere.stdout, "{scorer} {task:?}");
            let human = first.run(&["pick", task, "--scorer", scorer, "--debug"]);
            assert_eq!(
                human.stdout,
                first
                    .run(&["pick", task, "--scorer", scorer, "--debug"])
                    .stdout
            );
            let picked: Vec<Pick> = once.parse();
            assert_eq!(picked.len(), 20, "{scorer} {task:?}");
            assert!(picked.windows(2).all(|w| w[0].score >= w[1].score));
        }
    }
}

#[test]
fn equal_scores_keep_the_registration_order() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("t");
    // Put in slug order, registered (createdAt) in another.
    env.put_tool_dated("t", &native("alpha-lamp", 2, json!({})));
    env.put_tool_dated("t", &native("mid-lamp", 3, json!({})));
    env.put_tool_dated("t", &native("zeta-lamp", 1, json!({})));
    let expected = ["t/zeta-lamp@v1", "t/alpha-lamp@v1", "t/mid-lamp@v1"];
    for scorer in ["keyword", "bm25"] {
        let got = picks(&env, &["lamp", "--scorer", scorer]);
        assert_eq!(refs(&got), expected, "{scorer}");
        assert!(got.iter().all(|p| p.score == got[0].score), "{got:?}");
    }
    // With a time limit the scorer cannot meet, the fallback is that order too.
    let run = pick_run(&env, &["lamp", "--timeout-ms", "0"]);
    run.success();
    assert_eq!(refs(&run.parse::<Vec<Pick>>()), expected);
}

// --- validation ------------------------------------------------------------------------------

#[test]
fn invalid_requests_are_validation_errors_with_a_hint() {
    let env = TestEnv::new();
    let cases: &[(&[&str], &str, &str)] = &[
        (&[""], "the task is empty", "say what the tools are for"),
        (
            &["  ", " "],
            "the task is empty",
            "say what the tools are for",
        ),
        (
            &["x", "--max", "0"],
            "--max 0 is out of range",
            "pick 1 to 128",
        ),
        (
            &["x", "--max", "129"],
            "--max 129 is out of range",
            "pick 1 to 128",
        ),
        (
            &["x", "--min-score", "1.5"],
            "--min-score 1.5 is out of range",
            "between 0 and 1",
        ),
        (
            &["x", "--min-score=-0.1"],
            "--min-score -0.1 is out of range",
            "between 0 and 1",
        ),
        (
            &["x", "--min-score", "NaN"],
            "--min-score NaN is out of range",
            "between 0 and 1",
        ),
        (
            &["x", "--scorer", "embed"],
            "the embed scorer needs an embeddings endpoint",
            "set pick.embed.baseUrl and model in toolctl.json, or pass --embed-url and --embed-model",
        ),
        (
            &["x", "--scorer", "hybrid"],
            "the hybrid scorer needs an embeddings endpoint",
            "set pick.embed.baseUrl and model in toolctl.json, or pass --embed-url and --embed-model",
        ),
        (
            &[
                "x",
                "--scorer",
                "embed",
                "--embed-url",
                "http://127.0.0.1:9/v1",
            ],
            "the embed scorer needs an embeddings endpoint",
            "--embed-model",
        ),
        (
            &["x", "--scorer", "llm"],
            "the llm scorer needs a chat endpoint",
            "set pick.llm.baseUrl and model in toolctl.json, or pass --llm-url and --llm-model",
        ),
    ];
    for (args, message, hint) in cases {
        let mut all = vec!["pick"];
        all.extend_from_slice(args);
        let err = env.json_error(&all, 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{args:?}");
        assert_eq!(err.error.message, *message, "{args:?}");
        let got = err.error.hint.unwrap_or_default();
        assert!(got.contains(hint), "{args:?}: hint {got:?}");
        // Human mode: the same on stderr, nothing on stdout.
        let run = env.run(&all);
        run.failure(3);
        assert_eq!(run.stdout, "");
        assert!(
            run.stderr.starts_with(&format!("error: {message}\n")),
            "{run}"
        );
        assert!(run.stderr.contains(hint), "{run}");
    }
}

#[test]
fn command_line_mistakes_are_usage_errors() {
    let env = TestEnv::new();
    let run = env.run(&["--json", "pick", "x", "--scorer", "magic"]);
    run.failure(2);
    let doc = run.json();
    assert_eq!(doc["error"]["code"], "VALIDATION_ERROR");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown scorer 'magic'; one of: keyword, bm25, hybrid, embed, llm"),
        "{run}"
    );
    let run = env.run(&["pick", "x", "--scorer", "magic"]);
    run.failure(2);
    assert!(run.stderr.contains("unknown scorer 'magic'"), "{run}");
    for args in [
        &["pick"][..],
        &["pick", "x", "--max", "-1"],
        &["pick", "x", "--max", "three"],
        &["pick", "x", "--min-score", "high"],
        &["pick", "x", "--strict"],
        &["pick", "x", "--lenient"],
        &["pick", "x", "--emit", "carrier-pigeon"],
        &["pick", "x", "--timeout-ms", "-5"],
    ] {
        env.run(args).failure(2);
    }
}

// --- the time limit --------------------------------------------------------------------------

/// What a pick past `--timeout-ms 300` must look like: quick, exit 0, a warning, the first
/// three safe shop tools in registration order with `registration-order` provenance.
#[track_caller]
fn assert_registration_order_fallback(run: &Run, elapsed: Duration) {
    run.success();
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}\n{run}");
    assert_eq!(
        run.stderr,
        "warning: scoring ran past --timeout-ms 300; the first tools in registration order instead\n"
    );
    let got: Vec<Pick> = run.parse();
    assert_eq!(refs(&got), shop_refs(&SAFE_SHOP[..3]));
    for (i, p) in got.iter().enumerate() {
        assert_eq!(p.score, 0.0);
        assert_eq!(p.reason, "time limit reached: registration order");
        assert_eq!(
            p.provenance,
            Some(json!({ "scorer": "registration-order", "details": { "position": i + 1 } }))
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_past_the_time_limit_falls_back_to_registration_order() {
    let server =
        chat_server(chat_answer(r#"["bake-bread"]"#).set_delay(Duration::from_secs(15))).await;
    let env = shop();
    set_endpoint(
        &env,
        "llm",
        json!({ "baseUrl": v1(&server), "model": "chooser" }),
    );
    let started = Instant::now();
    let run = pick_run(
        &env,
        &[
            "bake bread",
            "--scorer",
            "llm",
            "--timeout-ms",
            "300",
            "--debug",
        ],
    );
    assert_registration_order_fallback(&run, started.elapsed());
    // Nothing cached: the next pick asks again (and is cut short again).
    assert_eq!(cache_files(&env), Vec::<PathBuf>::new());
    let started = Instant::now();
    let run = pick_run(
        &env,
        &[
            "bake bread",
            "--scorer",
            "llm",
            "--timeout-ms",
            "300",
            "--debug",
        ],
    );
    assert_registration_order_fallback(&run, started.elapsed());
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn embed_and_hybrid_past_the_time_limit_fall_back_to_registration_order() {
    let server = server_answering(
        ResponseTemplate::new(200)
            .set_body_json(json!({ "data": [] }))
            .set_delay(Duration::from_secs(15)),
    )
    .await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m" }),
    );
    for scorer in ["embed", "hybrid"] {
        let started = Instant::now();
        let run = pick_run(
            &env,
            &[
                "bake bread",
                "--scorer",
                scorer,
                "--timeout-ms",
                "300",
                "--debug",
            ],
        );
        assert_registration_order_fallback(&run, started.elapsed());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_timeout_bounds_every_request_without_a_time_limit() {
    // No --timeout-ms: pick.*.timeoutMs bounds each request; embed fails, llm falls back.
    let server = server_answering(chat_answer("[]").set_delay(Duration::from_secs(15))).await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m", "timeoutMs": 300 }),
    );
    set_endpoint(
        &env,
        "llm",
        json!({ "baseUrl": v1(&server), "model": "chooser", "timeoutMs": 300 }),
    );
    let started = Instant::now();
    let err = env.json_error(&["pick", "bake bread", "--scorer", "embed"], 7);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert_eq!(
        err.error.message,
        format!(
            "the embeddings endpoint failed: {}/embeddings did not answer within 300 ms",
            v1(&server)
        )
    );

    let started = Instant::now();
    let run = pick_run(&env, &["bake bread", "--scorer", "llm"]);
    assert!(started.elapsed() < Duration::from_secs(5));
    run.success();
    let reason = format!(
        "the llm scorer failed ({}/chat/completions did not answer within 300 ms); keyword scores instead",
        v1(&server)
    );
    assert_eq!(run.stderr, format!("warning: {reason}\n"));
    assert_eq!(refs(&run.parse::<Vec<Pick>>()), [shop_ref("bake-bread")]);
}

#[test]
fn a_time_limit_the_scorer_meets_changes_nothing() {
    let env = nato();
    assert_eq!(
        picks(&env, &[NATO, "--timeout-ms", "30000"]),
        picks(&env, &[NATO])
    );
}

// --- --emit ----------------------------------------------------------------------------------

const PROVIDERS: [&str; 6] = [
    "openai",
    "openai-responses",
    "anthropic",
    "ollama",
    "gemini",
    "mcp",
];

/// The items of a provider's tool array, in order, each with its name.
fn provider_items(provider: &str, list: &Value) -> Vec<(String, Value)> {
    let items: Vec<Value> = match provider {
        "gemini" => list
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|group| group["functionDeclarations"].as_array().unwrap().clone())
            .collect(),
        _ => list.as_array().unwrap().clone(),
    };
    items
        .into_iter()
        .map(|item| {
            let name = match provider {
                "openai" | "ollama" => &item["function"]["name"],
                _ => &item["name"],
            };
            let name = name
                .as_str()
                .unwrap_or_else(|| panic!("{provider}: no name in {item}"))
                .to_owned();
            (name, item)
        })
        .collect()
}

/// The fixture tools `provider` cannot take as they are (`--strict`: OpenAI's strict mode):
/// what `--lenient` leaves out. `air-quality` has a `oneOf` at the root, which only Ollama takes;
/// `create-issue` has `uniqueItems` (taken by neither Gemini nor strict mode); `create-issue`
/// and `update-event` have optional properties that are already nullable (not strict mode).
fn not_taken(provider: &str, strict: bool) -> Vec<&'static str> {
    match (provider, strict) {
        ("ollama", _) => vec![],
        (_, true) => vec![
            "github/create-issue@v1",
            "weather/air-quality@v1",
            "calendar/update-event@v1",
        ],
        ("gemini", _) => vec!["github/create-issue@v1", "weather/air-quality@v1"],
        _ => vec!["weather/air-quality@v1"],
    }
}

#[test]
fn emit_prints_the_picked_tools_in_pick_order_as_export_does() {
    let env = TestEnv::fixture();
    for (task, flags) in [
        ("weather forecast and air quality", &[][..]),
        (
            "create a calendar event or a github issue",
            &["--allow-unsafe", "--max", "5"][..],
        ),
    ] {
        let mut pick_args = vec![task];
        pick_args.extend_from_slice(flags);
        let picked = picks(&env, &pick_args);
        assert_eq!(picked.len(), flags.get(2).map_or(3, |n| n.parse().unwrap()));
        // Only Ollama takes every fixture tool as it is: the others refuse the `oneOf` at the
        // root of `air-quality`, Gemini and strict mode more ([`not_taken`]). --lenient leaves
        // those out, with a warning.
        let variants = PROVIDERS
            .iter()
            .map(|p| {
                (
                    *p,
                    if *p == "ollama" {
                        &[][..]
                    } else {
                        &["--lenient"][..]
                    },
                )
            })
            .chain([
                ("openai", &["--strict", "--lenient"][..]),
                ("openai-responses", &["--strict", "--lenient"][..]),
            ]);
        for (provider, extra) in variants {
            let label = format!("{task:?} --emit {provider} {extra:?}");
            let mut args = pick_args.clone();
            args.extend(["--emit", provider]);
            args.extend_from_slice(extra);
            let mut export = vec!["--json", "export", "--provider", provider];
            export.extend_from_slice(extra);
            for p in &picked {
                export.extend(["--tool", p.name.as_str()]);
            }
            let run = pick_run(&env, &args);
            run.success();
            let exported = env.run(&export);
            exported.success();
            // The same warnings for the tools the provider cannot take (--lenient).
            assert_eq!(run.stderr, exported.stderr, "{label}");
            let exported: BTreeMap<String, Value> = provider_items(provider, &exported.json())
                .into_iter()
                .collect();
            let emitted = provider_items(provider, &run.json());
            // The pick's names, in the pick's order (less what --lenient left out)…
            let kept: Vec<&str> = names(&picked)
                .into_iter()
                .filter(|n| exported.contains_key(*n))
                .collect();
            assert_eq!(
                emitted.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
                kept,
                "{label}"
            );
            // …and exactly what the provider cannot take is left out.
            let refused = not_taken(provider, extra.contains(&"--strict"));
            let expected: Vec<&str> = picked
                .iter()
                .filter(|p| !refused.contains(&p.reference.as_str()))
                .map(|p| p.name.as_str())
                .collect();
            assert_eq!(kept, expected, "{label}");
            if extra.is_empty() {
                assert_eq!(kept, names(&picked), "{label}");
            }
            // …each exactly as export prints it.
            for (name, item) in &emitted {
                assert_eq!(
                    crate::common::ordered(item),
                    crate::common::ordered(&exported[name]),
                    "{label}: {name}"
                );
            }
            // Human mode prints the same document.
            let mut human = vec!["pick"];
            human.extend_from_slice(&args);
            let human = env.run(&human);
            human.success();
            assert_eq!(human.json(), run.json(), "{label}");
        }
    }
    // Without --lenient: a tool the provider cannot take is an error naming it, its keyword
    // and pointer, as export's. OpenAI (strict or not), Anthropic and MCP refuse the `oneOf` at
    // the root of the picked `air-quality`.
    for (provider, extra) in [
        ("openai", &["--strict"][..]),
        ("openai", &[][..]),
        ("openai-responses", &[][..]),
        ("anthropic", &[][..]),
        ("mcp", &[][..]),
    ] {
        let label = format!("--emit {provider} {extra:?}");
        let mut args = vec![
            "pick",
            "weather forecast and air quality",
            "--emit",
            provider,
        ];
        args.extend_from_slice(extra);
        let err = env.json_error(&args, 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{label}");
        assert_eq!(
            err.error.message,
            format!("{provider} cannot take 1 of the tools as they are"),
            "{label}"
        );
        let tools = &err.error.details["tools"];
        assert_eq!(tools.as_array().map(Vec::len), Some(1), "{label}: {err:?}");
        assert_eq!(
            tools[0]["ref"], "weather/air-quality@v1",
            "{label}: {err:?}"
        );
        assert_eq!(
            tools[0]["problems"][0]["keyword"], "oneOf",
            "{label}: {err:?}"
        );
        assert_eq!(
            tools[0]["problems"][0]["pointer"], "/argSchema",
            "{label}: {err:?}"
        );
        assert_eq!(
            err.error.hint.as_deref().map(|h| h.contains("--lenient")),
            Some(true),
            "{label}: {err:?}"
        );
    }
    let lenient = pick_run(
        &env,
        &[
            "weather forecast and air quality",
            "--emit",
            "openai",
            "--strict",
            "--lenient",
        ],
    );
    assert!(lenient.stderr.contains("air-quality"), "{lenient}");
    assert_eq!(
        provider_items("openai", &lenient.json())
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>(),
        ["forecast", "current-conditions"]
    );

    // Nothing picked: an empty array.
    let run = pick_run(&env, &["zyzzyva", "--emit", "anthropic"]);
    run.success();
    assert_eq!(run.json(), json!([]));
}

#[test]
fn picked_names_are_the_exported_names_even_when_slugs_collide() {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("alpha");
    env.bundle("beta");
    env.put_tool_dated("alpha", &native("lookup", 1, json!({})));
    env.put_tool_dated("beta", &native("lookup", 2, json!({})));
    let got = picks(&env, &["lookup"]);
    assert_eq!(refs(&got), ["alpha/lookup@v1", "beta/lookup@v1"]);
    assert_eq!(names(&got), ["alpha__lookup", "beta__lookup"]);
    assert_eq!(got[0].reason, "matched keywords in alpha__lookup: lookup");
    let exported: Vec<String> = provider_items(
        "openai",
        &env.run(&["--json", "export", "--provider", "openai"])
            .success()
            .json(),
    )
    .into_iter()
    .map(|(n, _)| n)
    .collect();
    assert_eq!(exported, names(&got));
    // invoke takes each picked name back to its tool.
    for p in &got {
        let run = env.run(&["--json", "invoke", &p.name, "--args", "{}"]);
        run.success();
        assert_eq!(run.json()["ok"], true, "{run}");
    }
}

// --- embed -----------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn embed_ranks_tools_by_cosine_similarity() {
    let server = embeddings_server().await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag" }),
    );
    let task = "paint the garden fence";
    let got = picks(
        &env,
        &[
            task,
            "--scorer",
            "embed",
            "--max",
            "128",
            "--min-score",
            "0",
            "--debug",
        ],
    );

    let sent = embedded(&server).await;
    assert_eq!(sent.len(), 2, "the task, then one batch of tools: {sent:?}");
    assert_eq!(sent[0], [task]);
    // Every safe tool once, with its words; the unsafe one is not a candidate.
    let texts = &sent[1];
    assert_eq!(
        texts
            .iter()
            .map(|t| slug_of_text(t))
            .collect::<BTreeSet<_>>(),
        SAFE_SHOP.into_iter().collect::<BTreeSet<_>>()
    );
    assert_eq!(texts.len(), SAFE_SHOP.len());
    for text in texts {
        let (_, description, tags, _) = SHOP
            .iter()
            .find(|(slug, ..)| *slug == slug_of_text(text))
            .unwrap();
        assert!(text.contains(description), "{text:?}");
        assert!(text.contains(tags[0]), "{text:?}");
    }

    // Each score is the cosine of the task's vector and the tool's.
    let query = bag_of_words(task);
    let expected: BTreeMap<String, f64> = texts
        .iter()
        .map(|t| {
            (
                shop_ref(slug_of_text(t)),
                round4(cosine(&query, &bag_of_words(t))),
            )
        })
        .collect();
    assert_eq!(got.len(), SAFE_SHOP.len());
    for p in &got {
        assert_close(p.score, expected[&p.reference], &p.reference);
        assert_eq!(p.reason, "semantic similarity (embeddings)");
        assert_eq!(
            p.provenance,
            Some(json!({ "scorer": "embed", "details": { "cosine": p.score } }))
        );
    }
    assert!(got.windows(2).all(|w| w[0].score >= w[1].score), "{got:?}");
    assert_eq!(got[0].reference, shop_ref("paint-fence"));
    assert!(got[0].score > got[1].score && got[1].score > 0.0, "{got:?}");
    assert_eq!(got[4].score, 0.0, "bread shares no word with the task");

    // With the defaults: the first three that reach 0.05.
    let default = picks(&env, &[task, "--scorer", "embed"]);
    let want: Vec<Pick> = got
        .iter()
        .filter(|p| p.score >= 0.05)
        .take(3)
        .map(|p| Pick {
            provenance: None,
            ..p.clone()
        })
        .collect();
    assert_eq!(default, want);
}

#[tokio::test(flavor = "multi_thread")]
async fn embed_caches_tool_vectors_and_embeds_only_what_is_new() {
    let server = embeddings_server().await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag-1" }),
    );
    let first = picks(&env, &["paint the fence", "--scorer", "embed"]);
    assert_eq!(first[0].reference, shop_ref("paint-fence"));
    let sent = embedded(&server).await;
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1].len(), 5);
    assert!(state_dir(&env).join("embeddings.sqlite").is_file());

    // Again, and another task: only the task is sent.
    assert_eq!(
        picks(&env, &["paint the fence", "--scorer", "embed"]),
        first
    );
    let second = picks(&env, &["water the balcony plants", "--scorer", "embed"]);
    assert_eq!(second[0].reference, shop_ref("water-plants"));
    let sent = embedded(&server).await;
    assert_eq!(
        since(&sent, 2),
        [vec!["paint the fence"], vec!["water the balcony plants"]]
    );

    // One description edited by hand: that tool only.
    let file = crate::common::find_files(env.catalog(), "tool.json")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("/fix-sink/"))
        .unwrap();
    let mut doc = read_json(&file);
    doc["description"] = json!("Repair a leaking bathroom sink or a dripping shower.");
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let after = picks(&env, &["repair the bathroom shower", "--scorer", "embed"]);
    assert_eq!(after[0].reference, shop_ref("fix-sink"));
    let sent = embedded(&server).await;
    assert_eq!(sent.len(), 6, "{sent:?}");
    assert_eq!(sent[4], ["repair the bathroom shower"]);
    assert_eq!(sent[5].len(), 1, "{sent:?}");
    assert_eq!(slug_of_text(&sent[5][0]), "fix-sink");
    assert!(sent[5][0].contains("bathroom"), "{sent:?}");

    // --allow-unsafe adds a candidate: only it is sent.
    let unsafe_pick = picks(
        &env,
        &[
            "knock down the brick wall",
            "--scorer",
            "embed",
            "--allow-unsafe",
        ],
    );
    assert_eq!(unsafe_pick[0].reference, shop_ref("demolish-wall"));
    let sent = embedded(&server).await;
    assert_eq!(sent.len(), 8, "{sent:?}");
    assert_eq!(sent[7].len(), 1);
    assert_eq!(slug_of_text(&sent[7][0]), "demolish-wall");

    // Another model: every candidate again, in batches of batchSize.
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag-2", "batchSize": 2 }),
    );
    let other = picks(&env, &["paint the fence", "--scorer", "embed"]);
    assert_eq!(other, first, "the same vectors under another name");
    let sent = embedded(&server).await;
    let batches = since(&sent, 8);
    assert_eq!(
        batches.iter().map(Vec::len).collect::<Vec<_>>(),
        [1, 2, 2, 1],
        "{batches:?}"
    );
    assert_eq!(
        batches[1..]
            .iter()
            .flatten()
            .map(|t| slug_of_text(t))
            .collect::<BTreeSet<_>>(),
        SAFE_SHOP.into_iter().collect::<BTreeSet<_>>()
    );
    let models: Vec<Value> = bodies(&server).await[8..]
        .iter()
        .map(|b| b["model"].clone())
        .collect();
    assert_eq!(models, vec![json!("bag-2"); 4]);

    // The first model's vectors are still there.
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag-1" }),
    );
    assert_eq!(
        picks(&env, &["paint the fence", "--scorer", "embed"]),
        first
    );
    assert_eq!(embedded(&server).await.len(), 13);
}

/// A key that must never show in any output.
const KEY: &str = "sk-test-4f9c2a7e1b";

/// The `Authorization` header of each request a server received (`None` when absent).
async fn authorizations(server: &MockServer) -> Vec<Option<String>> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            r.headers
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_owned())
        })
        .collect()
}

#[track_caller]
fn assert_no_key(run: &Run, key: &str) {
    assert!(!run.stdout.contains(key), "the key is printed\n{run}");
    assert!(!run.stderr.contains(key), "the key is printed\n{run}");
}

#[tokio::test(flavor = "multi_thread")]
async fn embed_sends_the_api_key_of_a_catalog_secret_and_never_prints_it() {
    let server = embeddings_server().await;
    let env = shop();
    let secret = [("TOOLCTL_SECRET_SHOP_KEY", KEY)];
    // Without apiKeySecret, no key goes out, whatever the environment holds.
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m" }),
    );
    pick_run_with(&env, &["paint", "--scorer", "embed"], &secret).success();
    assert_eq!(authorizations(&server).await, [None, None]);

    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m2", "apiKeySecret": "SHOP_KEY" }),
    );
    // Named but not set: a validation error that says where keys come from.
    let err = env.json_error(&["pick", "paint", "--scorer", "embed"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(
        err.error.message,
        "pick.embed.apiKeySecret names the secret 'SHOP_KEY', which is not set"
    );
    assert!(
        err.error
            .hint
            .as_deref()
            .unwrap()
            .starts_with("set TOOLCTL_SECRET_SHOP_KEY, or add \"SHOP_KEY\" to the secrets file"),
        "{err:?}"
    );

    set_endpoint(
        &env,
        "llm",
        json!({ "baseUrl": v1(&server), "model": "m", "apiKeySecret": "CHAT_KEY" }),
    );
    let err = env.json_error(&["pick", "paint", "--scorer", "llm"], 3);
    assert_eq!(
        err.error.message,
        "pick.llm.apiKeySecret names the secret 'CHAT_KEY', which is not set"
    );
    // Other scorers do not need it.
    picks(&env, &["paint"]);

    // Set: a bearer token on every request (new tools, and the task), in no output.
    for args in [
        &[
            "--json",
            "pick",
            "paint the fence",
            "--scorer",
            "embed",
            "--debug",
        ][..],
        &["pick", "sink", "--scorer", "hybrid", "--debug"],
    ] {
        let mut cmd = env.command(args);
        cmd.env(secret[0].0, secret[0].1);
        let run = Run::of(cmd, None);
        run.success();
        assert_no_key(&run, KEY);
    }
    let auth = authorizations(&server).await;
    // Under another model: the task and the tools, then the task of the second pick.
    assert_eq!(auth.len(), 5, "{auth:?}");
    assert!(
        auth[2..]
            .iter()
            .all(|a| a.as_deref() == Some(&*format!("Bearer {KEY}"))),
        "{auth:?}"
    );

    // A server that refuses the key and quotes it back: the error names the URL, not the key.
    let refusing = server_answering(ResponseTemplate::new(401).set_body_string(format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}","type":"invalid_request_error"}}}}"#
    )))
    .await;
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&refusing), "model": "m", "apiKeySecret": "SHOP_KEY" }),
    );
    set_endpoint(
        &env,
        "llm",
        json!({ "baseUrl": v1(&refusing), "model": "m", "apiKeySecret": "SHOP_KEY" }),
    );
    let json_run = pick_run_with(&env, &["paint", "--scorer", "embed"], &secret);
    json_run.failure(7);
    assert_no_key(&json_run, KEY);
    let message = json_run.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.starts_with(&format!(
            "the embeddings endpoint failed: {}/embeddings refused the API key (HTTP 401): ",
            v1(&refusing)
        )),
        "{message}"
    );
    assert!(message.contains("Incorrect API key provided"), "{message}");
    let mut human = env.command(&["pick", "paint", "--scorer", "embed"]);
    human.env(secret[0].0, secret[0].1);
    let human = Run::of(human, None);
    human.failure(7);
    assert_no_key(&human, KEY);
    assert!(
        human.stderr.contains("refused the API key (HTTP 401)"),
        "{human}"
    );
    // The llm scorer falls back, and says why, without the key either.
    let llm = pick_run_with(&env, &["paint", "--scorer", "llm", "--debug"], &secret);
    llm.success();
    assert_no_key(&llm, KEY);
    assert!(
        llm.stderr.contains(&format!(
            "{}/chat/completions refused the API key (HTTP 401)",
            v1(&refusing)
        )),
        "{llm}"
    );
    assert_eq!(
        authorizations(&refusing).await,
        vec![Some(format!("Bearer {KEY}")); 3]
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn embed_reads_the_api_key_from_the_secrets_file() {
    use std::os::unix::fs::PermissionsExt;
    let server = embeddings_server().await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m", "apiKeySecret": "FILE_KEY" }),
    );
    let file = env.root().join("xdg-config/toolctl/secrets.json");
    write_file(
        &file,
        &json!({ "FILE_KEY": "sk-from-file-93a1" }).to_string(),
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let run = pick_run(&env, &["paint", "--scorer", "embed", "--debug"]);
    run.success();
    assert_no_key(&run, "sk-from-file-93a1");
    assert_eq!(
        authorizations(&server).await,
        vec![Some("Bearer sk-from-file-93a1".to_owned()); 2]
    );
    // The environment comes first.
    pick_run_with(
        &env,
        &["paint", "--scorer", "embed"],
        &[("TOOLCTL_SECRET_FILE_KEY", "sk-from-env-55")],
    )
    .success();
    assert_eq!(
        authorizations(&server).await[2..],
        [Some("Bearer sk-from-env-55".to_owned())]
    );
    // A file others can read is refused, and nothing is sent.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = env.json_error(&["pick", "paint", "--scorer", "embed"], 6);
    assert_eq!(err.error.code, "FORBIDDEN");
    assert!(
        err.error
            .message
            .contains("its mode is 644: others can read it"),
        "{err:?}"
    );
    assert!(!format!("{err:?}").contains("sk-from-file-93a1"));
    assert_eq!(authorizations(&server).await.len(), 3);
}

/// Regression: a secrets file others can read failed `pick` without the hint (`chmod 600
/// <file>`) and details (`path`) the same failure has under `invoke`: `endpoint()` in
/// `src/cli/cmd/pick.rs` rebuilt the error from the code and message only. Fixed by passing the
/// failure on as `invoke` does (`From<Failure> for CliError`), hint and details kept.
#[cfg(unix)]
#[test]
fn regression_pick_keeps_the_hint_of_a_secrets_file_others_can_read() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": format!("http://127.0.0.1:{}/v1", dead_port()), "model": "m", "apiKeySecret": "FILE_KEY" }),
    );
    let file = env.root().join("xdg-config/toolctl/secrets.json");
    write_file(
        &file,
        &json!({ "FILE_KEY": "sk-from-file-93a1" }).to_string(),
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = env.json_error(&["pick", "paint", "--scorer", "embed"], 6);
    assert_eq!(err.error.code, "FORBIDDEN");
    assert_eq!(
        err.error.hint.as_deref(),
        Some(&*format!("chmod 600 {}", file.display())),
        "{err:?}"
    );
    assert_eq!(err.error.details, json!({ "path": file }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn embed_endpoint_failures_are_quick_clear_errors() {
    let env = shop();
    let refused =
        server_answering(ResponseTemplate::new(401).set_body_string(r#"{"error":"unauthorized"}"#))
            .await;
    let broken = server_answering(ResponseTemplate::new(500).set_body_string("boom")).await;
    let html =
        server_answering(ResponseTemplate::new(200).set_body_string("<html>hello</html>")).await;
    let no_data =
        server_answering(ResponseTemplate::new(200).set_body_json(json!({ "object": "list" })))
            .await;
    let no_vectors =
        server_answering(ResponseTemplate::new(200).set_body_json(json!({ "data": [] }))).await;
    let dead = format!("http://127.0.0.1:{}/v1", dead_port());
    let cases = [
        (
            v1(&refused),
            format!(
                "{}/embeddings wants an API key (HTTP 401) and none was given",
                v1(&refused)
            ),
        ),
        (
            v1(&broken),
            format!("{}/embeddings answered HTTP 500: boom", v1(&broken)),
        ),
        (
            v1(&html),
            format!("{}/embeddings did not answer JSON", v1(&html)),
        ),
        (
            v1(&no_data),
            format!(
                "{}/embeddings answered without a `data` array of embeddings",
                v1(&no_data)
            ),
        ),
        (
            v1(&no_vectors),
            format!(
                "{}/embeddings returned 0 vectors for 1 texts",
                v1(&no_vectors)
            ),
        ),
        (dead.clone(), format!("cannot reach {dead}/embeddings")),
    ];
    for (url, what) in &cases {
        // The endpoint's failure, after what failed (embed and hybrid have no fallback).
        let expected = format!("the embeddings endpoint failed: {what}");
        set_endpoint(&env, "embed", json!({ "baseUrl": url, "model": "m" }));
        for scorer in ["embed", "hybrid"] {
            let started = Instant::now();
            let err = env.json_error(&["pick", "paint", "--scorer", scorer], 7);
            assert!(started.elapsed() < Duration::from_secs(5), "{expected}");
            assert_eq!(err.error.code, "UPSTREAM_ERROR");
            assert!(
                err.error.message.starts_with(expected.as_str()),
                "{scorer}: {err:?}"
            );
            assert_eq!(
                err.error.hint.as_deref(),
                Some(
                    "check pick.embed in toolctl.json (baseUrl, model, apiKeySecret) or --embed-url/--embed-model"
                )
            );
        }
        let run = env.run(&["pick", "paint", "--scorer", "embed"]);
        run.failure(7);
        assert_eq!(run.stdout, "");
        assert!(
            run.stderr.starts_with(&format!("error: {expected}")),
            "{run}"
        );
        assert!(!run.stderr.contains("panicked"), "{run}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn flags_override_the_endpoints_of_toolctl_json() {
    let embeddings = embeddings_server().await;
    let chat = chat_server(Replies(vec![("bake bread", r#"["bake-bread"]"#.into())])).await;
    let env = shop();
    let dead = format!("http://127.0.0.1:{}/v1", dead_port());
    set_endpoint(&env, "embed", json!({ "baseUrl": dead, "model": "config" }));
    set_endpoint(&env, "llm", json!({ "baseUrl": dead, "model": "config" }));
    // A trailing slash is fine.
    let url = format!("{}/", v1(&embeddings));
    let got = picks(
        &env,
        &[
            "bake bread",
            "--scorer",
            "embed",
            "--embed-url",
            &url,
            "--embed-model",
            "flag",
        ],
    );
    assert_eq!(got[0].reference, shop_ref("bake-bread"));
    let sent = bodies(&embeddings).await;
    assert!(sent.iter().all(|b| b["model"] == "flag"), "{sent:?}");
    assert!(
        embeddings
            .received_requests()
            .await
            .unwrap()
            .iter()
            .all(|r| r.url.path() == "/v1/embeddings")
    );
    // The model alone by flag: the URL from toolctl.json.
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&embeddings), "model": "config" }),
    );
    picks(
        &env,
        &["bake bread", "--scorer", "embed", "--embed-model", "flag-2"],
    );
    assert_eq!(bodies(&embeddings).await.last().unwrap()["model"], "flag-2");

    let got = picks(
        &env,
        &[
            "bake bread",
            "--scorer",
            "llm",
            "--llm-url",
            &v1(&chat),
            "--llm-model",
            "flag",
        ],
    );
    assert_eq!(refs(&got), [shop_ref("bake-bread")]);
    assert_eq!(got[0].reason, "chosen by flag (place 1)");
    assert_eq!(bodies(&chat).await[0]["model"], "flag");
}

#[tokio::test(flavor = "multi_thread")]
async fn hybrid_weighs_keyword_by_0_4_and_semantic_by_0_6() {
    let server = embeddings_server().await;
    let env = shop();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag" }),
    );
    let task = "garden fence";
    let run = |scorer: &str| {
        picks(
            &env,
            &[
                task,
                "--scorer",
                scorer,
                "--max",
                "128",
                "--min-score",
                "0",
                "--debug",
            ],
        )
    };
    let keyword = run("keyword");
    let embed = run("embed");
    let hybrid = run("hybrid");
    let score_of = |list: &[Pick], r: &str| list.iter().find(|p| p.reference == r).unwrap().clone();
    assert_eq!(hybrid.len(), SAFE_SHOP.len());
    for h in &hybrid {
        let k = score_of(&keyword, &h.reference);
        let e = score_of(&embed, &h.reference);
        assert!(
            (h.score - (0.4 * k.score + 0.6 * e.score)).abs() < 2e-4,
            "{}: {} vs 0.4 × {} + 0.6 × {}",
            h.reference,
            h.score,
            k.score,
            e.score
        );
        assert_eq!(h.reason, "hybrid (keyword + semantic)");
        assert_eq!(
            h.provenance,
            Some(json!({
                "scorer": "hybrid",
                "details": {
                    "weights": { "keyword": 0.4, "semantic": 0.6 },
                    "subScores": { "keyword": k.score, "semantic": e.score },
                    "keyword": k.provenance.unwrap()["details"],
                },
            }))
        );
    }
    assert!(hybrid.windows(2).all(|w| w[0].score >= w[1].score));
    assert_eq!(hybrid[0].reference, shop_ref("paint-fence"));
}

// --- llm -------------------------------------------------------------------------------------

/// The shop with its chat endpoint at `server`, model `chooser`.
fn shop_with_chat(server: &MockServer) -> TestEnv {
    let env = shop();
    set_endpoint(
        &env,
        "llm",
        json!({ "baseUrl": v1(server), "model": "chooser" }),
    );
    env
}

/// The files of the selection cache.
fn cache_files(env: &TestEnv) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(state_dir(env).join("pick-cache")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

/// The cached selection for `query`, if exactly one.
fn cache_entry(env: &TestEnv, query: &str) -> Option<(PathBuf, Value)> {
    let mut found: Vec<(PathBuf, Value)> = cache_files(env)
        .into_iter()
        .filter_map(|p| {
            let doc: Value = serde_json::from_slice(&std::fs::read(&p).ok()?).ok()?;
            (doc["query"] == query).then_some((p, doc))
        })
        .collect();
    assert!(found.len() <= 1, "{found:?}");
    found.pop()
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_asks_with_tool_names_only_at_temperature_zero() {
    let chat = chat_server(Replies(vec![("bake bread", r#"["bake-bread"]"#.into())])).await;
    let env = shop_with_chat(&chat);
    let got = picks(&env, &["bake bread", "--scorer", "llm"]);
    assert_eq!(refs(&got), [shop_ref("bake-bread")]);
    assert_eq!(got[0].score, 1.0);
    assert_eq!(got[0].reason, "chosen by chooser (place 1)");

    let requests = chat.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].url.path(), "/v1/chat/completions");
    assert_eq!(requests[0].headers.get("authorization"), None);
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "chooser");
    assert_eq!(body["temperature"].as_f64(), Some(0.0), "{body}");
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user"]);
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("at most 3"),
        "{body}"
    );
    let user = user_message(&body);
    assert!(user.contains("bake bread"), "{user}");
    let lines: BTreeSet<&str> = user.lines().collect();
    for name in SAFE_SHOP {
        assert!(lines.contains(name), "{name} is not offered: {user}");
    }
    // Names only: no description, tag, bundle or version, and no unsafe tool.
    let text = body.to_string();
    for (slug, description, tags, _) in SHOP {
        assert!(!text.contains(description), "{text}");
        for tag in *tags {
            assert!(!text.contains(tag), "tag {tag:?} in {text}");
        }
        assert!(!text.contains(&shop_ref(slug)), "{text}");
    }
    for word in [
        "sourdough",
        "sledgehammer",
        "leaking",
        "balcony",
        "demolish-wall",
    ] {
        assert!(!text.contains(word), "{word:?} in {text}");
    }

    // --allow-unsafe offers the unsafe tool too; --max is the model's k.
    picks(
        &env,
        &[
            "bake bread",
            "--scorer",
            "llm",
            "--allow-unsafe",
            "--max",
            "2",
        ],
    );
    let sent = bodies(&chat).await;
    assert_eq!(sent.len(), 2);
    assert!(user_message(&sent[1]).lines().any(|l| l == "demolish-wall"));
    assert!(
        sent[1]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("at most 2")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_replies_are_read_tolerantly_in_the_models_order() {
    let cases: Vec<(&str, &str, Vec<&str>)> = vec![
        (
            "task plain",
            r#"["fix-sink", "paint-fence"]"#,
            vec!["fix-sink", "paint-fence"],
        ),
        (
            "task fenced",
            "```json\n[\"bake-bread\", \"mow-lawn\"]\n```",
            vec!["bake-bread", "mow-lawn"],
        ),
        (
            "task truncated",
            r#"["mow-lawn", "water-plants", "paint-fe"#,
            vec!["mow-lawn", "water-plants"],
        ),
        (
            "task in prose",
            r#"Sure! Here they are: {"tools": ["water-plants", "fix-sink"]} Good luck."#,
            vec!["water-plants", "fix-sink"],
        ),
        (
            "task rewritten names",
            r#"["shop/bake-bread@v1", "PAINT-FENCE"]"#,
            vec!["bake-bread", "paint-fence"],
        ),
        (
            "task unknown repeated and too many",
            r#"["lawn-mower", "mow-lawn", "fix-sink", "mow-lawn", "bake-bread", "paint-fence"]"#,
            vec!["mow-lawn", "fix-sink", "bake-bread"],
        ),
        (
            "task names an unsafe tool",
            r#"["demolish-wall", "fix-sink"]"#,
            vec!["fix-sink"],
        ),
        (
            "task thinks first",
            "<think>paint-fence? no.</think>\n[\"water-plants\"]",
            vec!["water-plants"],
        ),
    ];
    let chat = chat_server(Replies(
        cases
            .iter()
            .map(|(task, reply, _)| (*task, (*reply).to_owned()))
            .collect(),
    ))
    .await;
    let env = shop_with_chat(&chat);
    for (task, reply, expected) in &cases {
        let got = picks(&env, &[task, "--scorer", "llm", "--debug"]);
        assert_eq!(names(&got), *expected, "{reply}");
        let n = expected.len() as f64;
        for (i, p) in got.iter().enumerate() {
            assert_eq!(p.score, round4(1.0 - i as f64 / (2.0 * n)), "{reply}");
            assert_eq!(p.reason, format!("chosen by chooser (place {})", i + 1));
            assert_eq!(
                p.provenance,
                Some(json!({
                    "scorer": "llm",
                    "details": { "model": "chooser", "place": i + 1, "cached": false, "reply": reply },
                }))
            );
        }
        let (_, entry) = cache_entry(&env, task).expect("cached");
        assert_eq!(entry["selected_tools"], json!(expected));
    }
    assert_eq!(bodies(&chat).await.len(), cases.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_selections_are_cached_in_the_seed_format_and_reused() {
    let chat = chat_server(Replies(vec![(
        "fix the sink",
        r#"["fix-sink", "water-plants"]"#.into(),
    )]))
    .await;
    let env = shop_with_chat(&chat);
    let task = "fix the sink";
    let first = picks(&env, &[task, "--scorer", "llm", "--debug"]);
    assert_eq!(names(&first), ["fix-sink", "water-plants"]);
    assert_eq!(scores(&first), [1.0, 0.75]);
    assert_eq!(
        first[0].provenance.as_ref().unwrap()["details"],
        json!({ "model": "chooser", "place": 1, "cached": false, "reply": r#"["fix-sink", "water-plants"]"# })
    );

    let files = cache_files(&env);
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_str().unwrap();
    let stem = name.strip_suffix(".json").unwrap();
    assert!(
        stem.len() == 64
            && stem
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
        "{name} is not a SHA-256 in hex"
    );
    let entry = read_json(&files[0]);
    assert_eq!(
        keys(&entry),
        ["query", "selected_tools", "model", "max_tools"]
    );
    assert_eq!(
        entry,
        json!({
            "query": task,
            "selected_tools": ["fix-sink", "water-plants"],
            "model": "chooser",
            "max_tools": 3,
        })
    );

    // A cache hit: no request, the same picks, provenance saying so.
    let again = picks(&env, &[task, "--scorer", "llm", "--debug"]);
    assert_eq!(bodies(&chat).await.len(), 1);
    assert_eq!(refs(&again), refs(&first));
    assert_eq!(scores(&again), scores(&first));
    assert_eq!(
        again[1].provenance.as_ref().unwrap()["details"],
        json!({ "model": "chooser", "place": 2, "cached": true, "reply": null })
    );
    let plain = picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(plain.len(), 2);
    assert_eq!(bodies(&chat).await.len(), 1);

    // Another k, another model, another catalog: asked again, cached apart.
    picks(&env, &[task, "--scorer", "llm", "--max", "2"]);
    assert_eq!(bodies(&chat).await.len(), 2);
    picks(&env, &[task, "--scorer", "llm", "--llm-model", "other"]);
    assert_eq!(bodies(&chat).await.len(), 3);
    assert_eq!(cache_files(&env).len(), 3);
    let entries: BTreeSet<(String, u64)> = cache_files(&env)
        .iter()
        .map(|f| {
            let e = read_json(f);
            (
                e["model"].as_str().unwrap().to_owned(),
                e["max_tools"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        BTreeSet::from([
            ("chooser".to_owned(), 2),
            ("chooser".to_owned(), 3),
            ("other".to_owned(), 3)
        ])
    );
    env.put_tool_dated(
        "shop",
        &native(
            "unclog-drain",
            20,
            json!({ "description": "Clear a blocked drain." }),
        ),
    );
    picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(
        bodies(&chat).await.len(),
        4,
        "a new tool: the cached choice is stale"
    );
    picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(bodies(&chat).await.len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_cache_entries_that_do_not_fit_are_made_again() {
    let chat = chat_server(Replies(vec![("fix the sink", r#"["fix-sink"]"#.into())])).await;
    let env = shop_with_chat(&chat);
    let task = "fix the sink";
    let first = picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(names(&first), ["fix-sink"]);
    let (file, good) = cache_entry(&env, task).unwrap();
    let entry = |tools: Value| {
        json!({ "query": task, "selected_tools": tools, "model": "chooser", "max_tools": 3 })
            .to_string()
    };
    let bad = [
        entry(json!(["no-such-tool"])),
        entry(json!(["fix-sink", "no-such-tool"])),
        entry(json!([])),
        entry(json!(["fix-sink", "fix-sink"])),
        entry(json!(["demolish-wall"])),
        json!({ "query": "another task", "selected_tools": ["fix-sink"], "model": "chooser", "max_tools": 3 }).to_string(),
        json!({ "query": task, "selected_tools": ["fix-sink"], "model": "another", "max_tools": 3 }).to_string(),
        "{\"query\": \"fix the sink\", \"selected_tools\": [\"fix-s".to_owned(),
        String::new(),
    ];
    for (i, text) in bad.iter().enumerate() {
        std::fs::write(&file, text).unwrap();
        assert_eq!(picks(&env, &[task, "--scorer", "llm"]), first, "{text}");
        assert_eq!(bodies(&chat).await.len(), i + 2, "{text} was used");
        assert_eq!(read_json(&file), good, "{text} was not made again");
    }
    // A valid entry someone wrote is used as it is.
    std::fs::write(&file, entry(json!(["water-plants", "fix-sink"]))).unwrap();
    let hand = picks(&env, &[task, "--scorer", "llm"]);
    assert_eq!(names(&hand), ["water-plants", "fix-sink"]);
    assert_eq!(bodies(&chat).await.len(), bad.len() + 1);
}

/// What the keyword scorer picks for `task` in `env` (with `--debug`).
fn keyword_picks(env: &TestEnv, task: &str) -> Vec<Pick> {
    picks(env, &[task, "--debug"])
}

/// A pick that fell back from llm to keyword must be the keyword pick, with `reason` given.
#[track_caller]
fn assert_keyword_fallback(run: &Run, keyword: &[Pick], reason: &str) {
    run.success();
    assert_eq!(run.stderr, format!("warning: {reason}\n"), "{run}");
    assert!(!run.stderr.contains("panicked"));
    let got: Vec<Pick> = run.parse();
    assert_eq!(refs(&got), refs(keyword));
    assert_eq!(scores(&got), scores(keyword));
    for (g, k) in got.iter().zip(keyword) {
        assert_eq!(g.reason, k.reason);
        assert_eq!(
            g.provenance,
            Some(json!({
                "scorer": "keyword",
                "details": { "fallback": reason, "keyword": k.provenance.as_ref().unwrap()["details"] },
            }))
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_selection_is_not_cached_and_keyword_answers() {
    let chat = chat_server(Replies(vec![
        ("fix the sink", "[]".into()),
        ("bake bread", r#"["toaster", "oven-mitt"]"#.into()),
        ("water plants", "I am not sure which tools you need.".into()),
    ]))
    .await;
    let env = shop_with_chat(&chat);
    let mut asked = 0;
    for (task, reply) in [
        ("fix the sink", "[]"),
        ("bake bread", r#"["toaster", "oven-mitt"]"#),
        ("water plants", "I am not sure which tools you need."),
    ] {
        let keyword = keyword_picks(&env, task);
        assert!(!keyword.is_empty());
        for _ in 0..2 {
            let run = pick_run(&env, &[task, "--scorer", "llm", "--debug"]);
            asked += 1;
            assert_keyword_fallback(
                &run,
                &keyword,
                &format!(
                    "the llm scorer failed (the model selected no known tool (it answered: {reply})); keyword scores instead"
                ),
            );
            assert_eq!(cache_files(&env), Vec::<PathBuf>::new());
            assert_eq!(bodies(&chat).await.len(), asked, "asked every time");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_failures_fall_back_to_keyword_with_the_reason() {
    let refused = chat_server(ResponseTemplate::new(401).set_body_string("no key")).await;
    let broken = chat_server(ResponseTemplate::new(500).set_body_string("overloaded")).await;
    let html = chat_server(ResponseTemplate::new(200).set_body_string("<html>hi</html>")).await;
    let no_choices = chat_server(
        ResponseTemplate::new(200).set_body_json(json!({ "object": "chat.completion" })),
    )
    .await;
    let no_message = chat_server(chat_answer("")).await;
    let dead = format!("http://127.0.0.1:{}/v1", dead_port());
    let cases = [
        (
            v1(&refused),
            format!(
                "{}/chat/completions wants an API key (HTTP 401) and none was given: no key; keys come from the catalog secrets ($XDG_CONFIG_HOME/toolctl/secrets.json or a TOOLCTL_SECRET_<NAME> variable)",
                v1(&refused)
            ),
        ),
        (
            v1(&broken),
            format!(
                "{}/chat/completions answered HTTP 500: overloaded",
                v1(&broken)
            ),
        ),
        (
            v1(&no_choices),
            format!(
                "{}/chat/completions answered without choices",
                v1(&no_choices)
            ),
        ),
        (
            v1(&no_message),
            format!(
                "{}/chat/completions answered without a message",
                v1(&no_message)
            ),
        ),
    ];
    let env = shop();
    let task = "fix the sink";
    let keyword = keyword_picks(&env, task);
    assert_eq!(refs(&keyword), [shop_ref("fix-sink")]);
    for (url, why) in &cases {
        set_endpoint(&env, "llm", json!({ "baseUrl": url, "model": "chooser" }));
        let started = Instant::now();
        let run = pick_run(&env, &[task, "--scorer", "llm", "--debug"]);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_keyword_fallback(
            &run,
            &keyword,
            &format!("the llm scorer failed ({why}); keyword scores instead"),
        );
    }
    // The messages of these depend on the parser or the OS: their start is enough.
    for (url, start) in [
        (
            v1(&html),
            format!("{}/chat/completions did not answer JSON (", v1(&html)),
        ),
        (
            dead.clone(),
            format!("cannot reach {dead}/chat/completions: "),
        ),
    ] {
        set_endpoint(&env, "llm", json!({ "baseUrl": url, "model": "chooser" }));
        let started = Instant::now();
        let run = pick_run(&env, &[task, "--scorer", "llm", "--debug"]);
        assert!(started.elapsed() < Duration::from_secs(5));
        run.success();
        let prefix = format!("warning: the llm scorer failed ({start}");
        assert!(run.stderr.starts_with(&prefix), "{run}");
        let reason = run.stderr["warning: ".len()..].trim_end().to_owned();
        assert!(reason.ends_with("; keyword scores instead"), "{run}");
        assert_keyword_fallback(&run, &keyword, &reason);
    }
    assert_eq!(cache_files(&env), Vec::<PathBuf>::new());
    // --quiet mutes the warning, not the answer.
    let quiet = env.run(&["--json", "-q", "pick", task, "--scorer", "llm"]);
    quiet.success();
    assert_eq!(quiet.stderr, "");
    assert_eq!(refs(&quiet.parse::<Vec<Pick>>()), refs(&keyword));
    // Human mode: the keyword table, and the warning.
    let run = env.run(&["pick", task, "--scorer", "llm"]);
    run.success();
    assert!(run.stdout.contains("shop/fix-sink@v1"), "{run}");
    assert!(
        run.stderr
            .starts_with("warning: the llm scorer failed (cannot reach "),
        "{run}"
    );
}

/// Nothing to choose from: no request to any endpoint, an empty answer.
#[tokio::test(flavor = "multi_thread")]
async fn no_candidates_need_no_request() {
    let server = server_answering(chat_answer("[]")).await;
    let env = TestEnv::new();
    without_builtins(&env);
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "m" }),
    );
    set_endpoint(&env, "llm", json!({ "baseUrl": v1(&server), "model": "m" }));
    env.bundle("u");
    env.put_tool_dated("u", &native("risky", 1, json!({ "safe": false })));
    for scorer in ["keyword", "bm25", "hybrid", "embed", "llm"] {
        assert_eq!(
            picks(&env, &["anything", "--scorer", scorer]),
            [],
            "{scorer}"
        );
        let run = env.run(&["pick", "anything", "--scorer", scorer]);
        run.success();
        assert_eq!(
            run.stdout,
            "no tool scores 0.05 or more for 'anything' (0 considered; --min-score lowers the bar, --allow-unsafe adds unsafe tools)\n"
        );
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
}

// --- purity --------------------------------------------------------------------------------

/// Every file of a catalog outside `.toolctl/`, with its bytes.
fn catalog_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != ".toolctl") {
                    stack.push(path);
                }
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// The seed's `pickTools` is pure: whatever the scorer, a pick changes no catalog file (its
/// caches live in `.toolctl/`, derived state).
#[tokio::test(flavor = "multi_thread")]
async fn pick_changes_nothing_but_derived_state() {
    let embeddings = embeddings_server().await;
    let chat = chat_server(Replies(vec![("fix the sink", r#"["fix-sink"]"#.into())])).await;
    let env = shop_with_chat(&chat);
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&embeddings), "model": "bag" }),
    );
    let before = catalog_files(env.catalog());
    assert!(before.len() > SHOP.len(), "{:?}", before.keys());
    for scorer in ["keyword", "bm25", "hybrid", "embed", "llm"] {
        for extra in [
            &[][..],
            &["--allow-unsafe", "--debug"],
            &["--emit", "openai"],
        ] {
            let mut args = vec!["fix the sink", "--scorer", scorer];
            args.extend_from_slice(extra);
            pick_run(&env, &args).success();
        }
    }
    assert_eq!(catalog_files(env.catalog()), before);
    assert!(state_dir(&env).join("embeddings.sqlite").is_file());
    assert_eq!(
        cache_files(&env).len(),
        2,
        "k 3 of the safe tools, and of all"
    );
}

// --- quality ---------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
struct QueryFile {
    queries: Vec<Query>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Query {
    query: String,
    relevant: Vec<String>,
    kind: String,
    #[serde(default)]
    include_disabled: bool,
}

/// Floors per scorer: (R@1, R@3, R@5, MRR), each the measured value − 0.05, rounded down.
/// Measured with 124 queries (133 less 9 `includeDisabled`):
/// - keyword: 0.653, 0.774, 0.782, 0.709
/// - bm25:    0.863, 0.952, 0.952, 0.902
/// - hybrid:  0.685, 0.782, 0.806, 0.730 (with the bag-of-words stand-in, see the module comment)
const QUALITY_FLOORS: [(&str, [f64; 4]); 3] = [
    ("keyword", [0.60, 0.72, 0.73, 0.65]),
    ("bm25", [0.81, 0.90, 0.90, 0.85]),
    ("hybrid", [0.63, 0.73, 0.75, 0.68]),
];

/// Recall@1/@3/@5 and MRR of `pick` over `fixtures/queries.json` for keyword, bm25 and hybrid
/// (one process per query and scorer); see the module comment. Read the report with
/// `cargo nextest run --test cli test_pick_quality --no-capture`.
///
/// Queries with `includeDisabled` are left out (pick never returns disabled or unavailable
/// tools). Pick returns one version per slug and leaves unsafe tools out by default, so every
/// query runs with `--allow-unsafe --min-score 0 --max 10`: the labels then name tools pick
/// can return, and the figures measure ranking alone. A tool scoring 0 is listed only because
/// of `--min-score 0` (in registration order, whatever the task): it is not a hit.
///
/// Updating: never relabel a query to make it pass. When ranking gets better, raise
/// [`QUALITY_FLOORS`] to the new measured value minus 0.05, rounded down to two decimals.
#[tokio::test(flavor = "multi_thread")]
async fn test_pick_quality() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file: QueryFile = serde_json::from_slice(
        &std::fs::read(repo.join("fixtures/queries.json")).expect("fixtures/queries.json"),
    )
    .expect("fixtures/queries.json does not have the expected shape");
    let queries: Vec<&Query> = file
        .queries
        .iter()
        .filter(|q| !q.include_disabled)
        .collect();
    assert!(queries.len() >= 70, "{} queries", queries.len());
    let server = embeddings_server().await;
    let env = TestEnv::fixture();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag-of-words" }),
    );

    let scorers = ["keyword", "bm25", "hybrid"];
    // Per scorer, per query: the position of the first relevant pick and the first pick.
    let mut outcomes: BTreeMap<&str, Vec<(Option<usize>, String)>> = BTreeMap::new();
    for scorer in scorers {
        let list = outcomes.entry(scorer).or_default();
        for q in &queries {
            let got = picks(
                &env,
                &[
                    q.query.as_str(),
                    "--scorer",
                    scorer,
                    "--allow-unsafe",
                    "--min-score",
                    "0",
                    "--max",
                    "10",
                ],
            );
            assert!(got.windows(2).all(|w| w[0].score >= w[1].score));
            let position = got
                .iter()
                .take_while(|p| p.score > 0.0)
                .position(|p| q.relevant.iter().any(|r| r == slug_of(&p.reference)))
                .map(|i| i + 1);
            let first = got
                .first()
                .map_or("nothing".to_owned(), |p| p.reference.clone());
            list.push((position, first));
        }
    }
    // Tool vectors were computed once for the whole run: one request per task, and one batch.
    assert_eq!(embedded(&server).await.len(), queries.len() + 1);

    let mut report = String::new();
    writeln!(
        report,
        "pick quality over fixtures/catalog ({} queries; --allow-unsafe --min-score 0 --max 10)",
        queries.len()
    )
    .unwrap();
    writeln!(report, "scorer       n    R@1    R@3    R@5    MRR").unwrap();
    let mut measured = BTreeMap::new();
    for scorer in scorers {
        let m = Metrics::of(outcomes[scorer].iter().map(|(p, _)| *p));
        writeln!(report, "{}", m.row(scorer)).unwrap();
        measured.insert(scorer, m);
    }
    writeln!(report, "\nMRR per kind:   keyword  bm25   hybrid").unwrap();
    let kinds: BTreeSet<&str> = queries.iter().map(|q| q.kind.as_str()).collect();
    for kind in kinds {
        let mut line = format!("  {kind:<12}");
        for scorer in scorers {
            let m = Metrics::of(
                queries
                    .iter()
                    .zip(&outcomes[scorer])
                    .filter(|(q, _)| q.kind == kind)
                    .map(|(_, (p, _))| *p),
            );
            write!(line, " {:>6.3}", m.mrr).unwrap();
        }
        writeln!(report, "{line}").unwrap();
    }
    writeln!(
        report,
        "\nnot first for some scorer (position per scorer, - when not among the top 10 scoring over 0; first pick):"
    )
    .unwrap();
    for (i, q) in queries.iter().enumerate() {
        if scorers.iter().all(|s| outcomes[s][i].0 == Some(1)) {
            continue;
        }
        let cell = |s: &str| {
            let (p, first) = &outcomes[s][i];
            format!(
                "{s} {} ({first})",
                p.map_or("-".to_owned(), |p| p.to_string())
            )
        };
        writeln!(
            report,
            "  {:<8} {:?} expected {}\n      {}\n      {}\n      {}",
            q.kind,
            q.query,
            q.relevant.join(", "),
            cell("keyword"),
            cell("bm25"),
            cell("hybrid"),
        )
        .unwrap();
    }
    println!("{report}");

    let mut failures = Vec::new();
    for (scorer, floors) in QUALITY_FLOORS {
        let m = measured[scorer];
        for (name, value, floor) in [
            ("R@1", m.at1, floors[0]),
            ("R@3", m.at3, floors[1]),
            ("R@5", m.at5, floors[2]),
            ("MRR", m.mrr, floors[3]),
        ] {
            if value < floor {
                failures.push(format!("{scorer} {name} {value:.3} < floor {floor:.2}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "pick quality regressed:\n  {}\n(the report, with --no-capture, shows the misses)",
        failures.join("\n  ")
    );
}
