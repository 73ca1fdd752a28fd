//! `toolctl search` (SPEC §3, README "Search"): the four tiers (name prefix > whole words >
//! fuzzy > some words), BM25 with field weights inside a tier, recency last; identifiers split,
//! diacritics folded, English stemmed; typos corrected and reported; any text a safe query;
//! disabled, unavailable and soft-deleted tools left out unless asked; bundle and tag filters;
//! position paging with tokens bound to the query and filters; the built-in tools; the table.
//!
//! Every catalog here is small and built for the test, so the expected orders are exact.
//!
//! Over 1,000 lines on purpose: `search`, one ranking whose cases share the fixture catalogs; test
//! files are split by topic past ~1,500 lines.

use crate::common::{
    ProblemItem, TestEnv, ToolItem, read_json, tool_doc_with, tool_view, write_file,
};
use serde::Deserialize;
use serde_json::{Value, json};

/// `search --json`, pinned (items are split by [`tool_view`] into the tool list view and the
/// four search fields).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SearchDoc {
    query: String,
    items: Vec<Value>,
    next_page_token: Option<String>,
    corrections: Vec<Correction>,
    problems: Vec<ProblemItem>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Correction {
    typed: String,
    found: String,
}

/// One search result.
#[derive(Debug)]
struct Hit {
    tool: ToolItem,
    rank: u64,
    score: f64,
    tier: String,
    why: String,
}

/// One page of search results.
#[derive(Debug)]
struct Found {
    query: String,
    hits: Vec<Hit>,
    next_page_token: Option<String>,
    corrections: Vec<(String, String)>,
}

impl Found {
    fn refs(&self) -> Vec<String> {
        self.hits.iter().map(|h| h.tool.reference.clone()).collect()
    }

    /// The refs, sorted (for results whose order a test does not pin).
    fn sorted_refs(&self) -> Vec<String> {
        let mut refs = self.refs();
        refs.sort();
        refs
    }

    fn tiers(&self) -> Vec<&str> {
        self.hits.iter().map(|h| h.tier.as_str()).collect()
    }

    fn whys(&self) -> Vec<&str> {
        self.hits.iter().map(|h| h.why.as_str()).collect()
    }

    fn corrections(&self) -> Vec<(&str, &str)> {
        self.corrections
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect()
    }
}

/// The arguments of `toolctl --json search FLAGS -- QUERY` (`--` so a query may start with `-`).
fn search_args<'a>(query: &'a str, flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--json", "search"];
    args.extend_from_slice(flags);
    args.extend(["--", query]);
    args
}

/// Parse a `search --json` document.
#[track_caller]
fn parse_found(run: &crate::common::Run) -> Found {
    let doc: SearchDoc = run.parse();
    assert!(doc.problems.is_empty(), "{:?}", doc.problems);
    let hits = doc
        .items
        .into_iter()
        .map(|item| {
            let (tool, extra) = tool_view(item, &["rank", "score", "tier", "why"]);
            Hit {
                tool,
                rank: extra["rank"].as_u64().unwrap(),
                score: extra["score"].as_f64().unwrap(),
                tier: extra["tier"].as_str().unwrap().to_owned(),
                why: extra["why"].as_str().unwrap().to_owned(),
            }
        })
        .collect();
    Found {
        query: doc.query,
        hits,
        next_page_token: doc.next_page_token,
        corrections: doc
            .corrections
            .into_iter()
            .map(|c| (c.typed, c.found))
            .collect(),
    }
}

/// `toolctl --json search FLAGS -- QUERY`: must succeed, with nothing on stderr.
#[track_caller]
fn search(env: &TestEnv, query: &str, flags: &[&str]) -> Found {
    let run = env.run(&search_args(query, flags));
    run.success();
    assert_eq!(
        run.stderr, "",
        "a search that works says nothing on stderr\n{run}"
    );
    let found = parse_found(&run);
    assert_eq!(found.query, query);
    found
}

/// The refs `search QUERY FLAGS` finds, in order (one page of up to 1000).
#[track_caller]
fn refs(env: &TestEnv, query: &str, flags: &[&str]) -> Vec<String> {
    let mut all = vec!["--page-size", "1000"];
    all.extend_from_slice(flags);
    let found = search(env, query, &all);
    assert_eq!(found.next_page_token, None);
    found.refs()
}

/// Put tool `slug@v1` into `bundle`, with `extra` fields.
#[track_caller]
fn put(env: &TestEnv, bundle: &str, slug: &str, extra: Value) {
    env.put_tool(bundle, &tool_doc_with(slug, "v1", extra));
}

/// Put tool `slug@v1` into `bundle` with this description.
#[track_caller]
fn put_described(env: &TestEnv, bundle: &str, slug: &str, description: &str) {
    put(env, bundle, slug, json!({ "description": description }));
}

/// An argSchema with one string argument `name` described as `description`.
fn one_argument(name: &str, description: &str) -> Value {
    json!({
        "type": "object",
        "properties": { name: { "type": "string", "description": description } }
    })
}

/// Rewrite a tool file's `modifiedAt` as a person with an editor would.
fn set_modified_at(env: &TestEnv, bundle_id: &str, slug: &str, version: &str, when: &str) {
    let path = env.tool_file(bundle_id, slug, version);
    let mut doc = read_json(&path);
    doc["modifiedAt"] = when.into();
    write_file(&path, &serde_json::to_string_pretty(&doc).unwrap());
}

/// Strings owned, for comparing with `Vec<String>`.
fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

// ---------------------------------------------------------------------------------------------
// Ranking
// ---------------------------------------------------------------------------------------------

/// The weather/alert catalog: one tool per tier for "weather alert", put in the reverse of the
/// expected order so that recency alone would rank them backwards.
fn alert_catalog() -> TestEnv {
    let env = TestEnv::new();
    env.bundle("w");
    put_described(&env, "w", "unrelated", "Nothing to see here.");
    // Only "alert": some words.
    put_described(&env, "w", "siren", "Sound an alert.");
    // "alert" as a word, "weather" only as a word start: fuzzy.
    put_described(&env, "w", "lights", "Weatherproof alert lights.");
    // Both, as whole words, outside the name: whole words.
    put_described(&env, "w", "notify", "Send an alert when the weather turns.");
    // The name starts with both: name prefix.
    put_described(&env, "w", "weather-alerts", "List warnings for a region.");
    env
}

#[test]
fn tiers_rank_name_prefix_then_whole_words_then_fuzzy_then_some_words() {
    let env = alert_catalog();
    let found = search(&env, "weather alert", &[]);
    assert_eq!(
        found.refs(),
        [
            "w/weather-alerts@v1",
            "w/notify@v1",
            "w/lights@v1",
            "w/siren@v1"
        ]
    );
    assert_eq!(
        found.tiers(),
        ["prefix", "whole-word", "fuzzy", "some-words"]
    );
    assert_eq!(
        found.whys(),
        [
            "name starts with: weather alert",
            "whole words: weather alert",
            "words or word starts: weather alert",
            "some of: weather alert",
        ]
    );
    assert_eq!(
        found.hits.iter().map(|h| h.rank).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    assert!(found.hits.iter().all(|h| h.score > 0.0), "{found:?}");
    assert_eq!(found.corrections(), []);
    assert_eq!(found.next_page_token, None);

    // Each hit is the tool as `tool list` shows it (read from the file).
    let listed = env.tool_list(&["--bundle", "w"]);
    for hit in &found.hits {
        let item = listed
            .items
            .iter()
            .find(|t| t.reference == hit.tool.reference)
            .unwrap();
        assert_eq!(&hit.tool, item);
    }

    // The query is the words joined: several arguments or one quoted argument are the same.
    let run = env.run(&["--json", "search", "weather", "alert"]);
    run.success();
    let split = parse_found(&run);
    assert_eq!(split.query, "weather alert");
    assert_eq!(split.refs(), found.refs());

    // A typo (a word that matches nothing as typed) cannot be in the first two tiers, which
    // need every word as typed: the corrected matches come first, as fuzzy, then the tools
    // that have "alert" only.
    let found = search(&env, "wether alert", &[]);
    assert_eq!(found.corrections(), [("wether", "weather")]);
    assert_eq!(
        found.tiers(),
        ["fuzzy", "fuzzy", "some-words", "some-words"]
    );
    // Inside the fuzzy tier, the name match first (BM25).
    assert_eq!(found.refs()[..2], ["w/weather-alerts@v1", "w/notify@v1"]);
    let mut rest = found.refs()[2..].to_vec();
    rest.sort();
    assert_eq!(rest, ["w/lights@v1", "w/siren@v1"]);
    assert_eq!(
        found.whys(),
        [
            "typo-tolerant: wether→weather",
            "typo-tolerant: wether→weather",
            "some of: wether alert",
            "some of: wether alert",
        ]
    );
}

#[test]
fn inside_a_tier_a_name_match_beats_a_description_match() {
    let env = TestEnv::new();
    env.bundle("w");
    // The same words, in swapped fields; the description match is the newer one, so only
    // BM25 can put the name match first.
    put_described(&env, "w", "weather", "report");
    put_described(&env, "w", "report", "weather");

    // Fuzzy tier (a typo).
    let found = search(&env, "wether", &[]);
    assert_eq!(found.refs(), ["w/weather@v1", "w/report@v1"]);
    assert_eq!(found.tiers(), ["fuzzy", "fuzzy"]);
    assert!(found.hits[0].score > found.hits[1].score, "{found:?}");

    // Some-words tier (one word of two).
    let found = search(&env, "weather umbrella", &[]);
    assert_eq!(found.refs(), ["w/weather@v1", "w/report@v1"]);
    assert_eq!(found.tiers(), ["some-words", "some-words"]);
    assert!(found.hits[0].score > found.hits[1].score, "{found:?}");
}

#[test]
fn inside_a_tier_bm25_weighs_tags_then_description_then_arguments_then_bundle() {
    let env = TestEnv::new();
    env.bundle("w");
    env.bundle("forecast");
    // Every tool holds one word in each field; only where "forecast" is differs. Put in the
    // reverse of the expected order, so recency alone would rank them backwards.
    let tool = |bundle: &str, slug: &str, tag: &str, description: &str, argument: &str| {
        put(
            &env,
            bundle,
            slug,
            json!({
                "tags": [tag],
                "description": description,
                "argSchema": one_argument("city", argument),
            }),
        );
    };
    // Tools without the word, so that it is rare enough for BM25 to score (a word in half of
    // the tools or more scores about 0, which JSON rounds to 0).
    for slug in ["f1", "f2", "f3", "f4", "f5", "f6"] {
        tool("w", slug, "daily", "daily", "daily");
    }
    tool("forecast", "bundled", "daily", "daily", "daily");
    tool("w", "argued", "daily", "daily", "forecast");
    tool("w", "described", "daily", "forecast", "daily");
    tool("w", "tagged", "forecast", "daily", "daily");

    let found = search(&env, "forecast", &[]);
    assert_eq!(
        found.refs(),
        [
            "w/tagged@v1",
            "w/described@v1",
            "w/argued@v1",
            "forecast/bundled@v1"
        ]
    );
    assert_eq!(found.tiers(), ["whole-word"; 4]);
    for pair in found.hits.windows(2) {
        assert!(pair[0].score > pair[1].score, "{found:?}");
    }
}

#[test]
fn recency_breaks_ties_between_equal_matches() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    // Two versions of one tool: the same text, so the same tier and BM25.
    for (version, modified) in [("a", "2025-02-01T00:00:00Z"), ("b", "2025-03-01T00:00:00Z")] {
        let doc = tool_doc_with(
            "echo",
            version,
            json!({
                "description": "Repeat the zebra.",
                "createdAt": "2025-01-01T00:00:00Z",
                "modifiedAt": modified,
            }),
        );
        env.put_tool_dated("w", &doc);
    }
    let found = search(&env, "zebra", &[]);
    assert_eq!(found.refs(), ["w/echo@b", "w/echo@a"]);
    assert_eq!(found.tiers(), ["whole-word", "whole-word"]);
    assert_eq!(found.hits[0].score, found.hits[1].score);

    // Edited by hand so that a is the newer: the order follows.
    set_modified_at(&env, &bundle_id, "echo", "b", "2025-01-15T00:00:00Z");
    assert_eq!(refs(&env, "zebra", &[]), ["w/echo@a", "w/echo@b"]);
    set_modified_at(&env, &bundle_id, "echo", "b", "2025-02-01T00:00:01Z");
    assert_eq!(refs(&env, "zebra", &[]), ["w/echo@b", "w/echo@a"]);
}

/// Recency compares instants, not their text: `00.5Z` is after `00Z`, and `00.55Z` after
/// `00.5Z`, whatever the number of fraction digits (toolctl writes milliseconds and drops
/// trailing zeros when it prints, so this is not only about hand-written files).
#[test]
fn recency_compares_times_not_their_text() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    for version in ["a", "b"] {
        let doc = tool_doc_with(
            "echo",
            version,
            json!({
                "description": "Repeat the zebra.",
                "createdAt": "2025-01-01T00:00:00Z",
                "modifiedAt": "2025-01-01T00:00:00Z",
            }),
        );
        env.put_tool_dated("w", &doc);
    }
    set_modified_at(&env, &bundle_id, "echo", "a", "2025-01-01T00:00:00.500Z");
    assert_eq!(
        refs(&env, "zebra", &[]),
        ["w/echo@a", "w/echo@b"],
        "a (00.500) is newer than b (00.000)"
    );
    set_modified_at(&env, &bundle_id, "echo", "b", "2025-01-01T00:00:00.550Z");
    assert_eq!(
        refs(&env, "zebra", &[]),
        ["w/echo@b", "w/echo@a"],
        "b (00.550) is newer than a (00.500)"
    );
}

// ---------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------

#[test]
fn identifiers_are_split_into_words() {
    let env = TestEnv::new();
    env.bundle("w");
    put(&env, "w", "getWeather", json!({}));
    put(&env, "w", "get-weather", json!({}));
    // Slugs have no underscore; a display name can.
    put(&env, "w", "gw", json!({ "displayName": "get_weather" }));
    // An argument name in camelCase.
    put(
        &env,
        "w",
        "station",
        json!({ "argSchema": one_argument("weatherStation", "which one") }),
    );
    put(
        &env,
        "w",
        "unrelated",
        json!({ "description": "Nothing here." }),
    );

    let found = search(&env, "weather", &[]);
    assert_eq!(
        found.sorted_refs(),
        [
            "w/get-weather@v1",
            "w/getWeather@v1",
            "w/gw@v1",
            "w/station@v1"
        ]
    );
    assert_eq!(found.tiers(), ["prefix", "prefix", "prefix", "whole-word"]);
    assert_eq!(found.hits[3].tool.reference, "w/station@v1");

    // Every form of the name finds the three, by name.
    for query in [
        "get weather",
        "getWeather",
        "get_weather",
        "get-weather",
        "GET WEATHER",
    ] {
        let found = search(&env, query, &[]);
        assert_eq!(
            found.sorted_refs()[..3],
            ["w/get-weather@v1", "w/getWeather@v1", "w/gw@v1"],
            "{query}"
        );
        assert_eq!(found.tiers()[..3], ["prefix"; 3], "{query}");
    }
    // The identifier as one word finds the camelCase one (indexed whole, too).
    assert_eq!(refs(&env, "getweather", &[]), ["w/getWeather@v1"]);
    // The argument by its name's other word.
    assert_eq!(refs(&env, "station", &[])[0], "w/station@v1");
}

#[test]
fn diacritics_are_folded_both_ways() {
    let env = TestEnv::new();
    env.bundle("w");
    put_described(&env, "w", "météo", "Prévisions locales.");
    put_described(&env, "w", "coffee", "Find a café nearby.");
    put_described(&env, "w", "tea", "Find a cafe nearby.");

    for query in ["café", "cafe", "CAFÉ", "Cafe"] {
        let found = search(&env, query, &[]);
        assert_eq!(found.sorted_refs(), ["w/coffee@v1", "w/tea@v1"], "{query}");
        assert_eq!(found.tiers(), ["whole-word"; 2], "{query}");
    }
    for query in ["meteo", "météo", "MÉTÉO", "Meteo"] {
        let found = search(&env, query, &[]);
        assert_eq!(found.refs(), ["w/météo@v1"], "{query}");
        assert_eq!(found.tiers(), ["prefix"], "{query}");
        assert_eq!(found.whys(), ["name starts with: meteo"], "{query}");
    }
    assert_eq!(refs(&env, "previsions", &[]), ["w/météo@v1"]);
}

/// A query typed in decomposed form (NFD: `e` + U+0301, as macOS file names and some input
/// methods produce) finds what the composed form (NFC) finds.
#[test]
fn decomposed_queries_find_what_composed_ones_do() {
    let env = TestEnv::new();
    env.bundle("w");
    put_described(&env, "w", "météo", "Prévisions locales.");
    put_described(&env, "w", "coffee", "Find a café nearby.");

    let composed = search(&env, "météo", &[]);
    assert_eq!(composed.refs(), ["w/météo@v1"]);
    assert_eq!(composed.tiers(), ["prefix"]);
    let decomposed = search(&env, "me\u{301}te\u{301}o", &[]);
    assert_eq!(decomposed.refs(), composed.refs());
    assert_eq!(decomposed.tiers(), composed.tiers());
    assert_eq!(decomposed.whys(), composed.whys());

    assert_eq!(refs(&env, "cafe\u{301}", &[]), ["w/coffee@v1"]);
}

#[test]
fn english_words_are_stemmed() {
    let env = TestEnv::new();
    env.bundle("w");
    put_described(&env, "w", "outlook", "Daily weather forecast for a city.");
    put_described(&env, "w", "almanac", "Past forecasts, archived.");
    put_described(&env, "w", "unrelated", "Nothing here.");

    for query in ["forecast", "forecasts", "forecasting", "forecasted"] {
        let found = search(&env, query, &[]);
        assert_eq!(
            found.sorted_refs(),
            ["w/almanac@v1", "w/outlook@v1"],
            "{query}"
        );
        assert_eq!(found.tiers(), ["whole-word"; 2], "{query}");
        assert_eq!(found.corrections(), [], "{query}");
    }
    assert_eq!(refs(&env, "cities", &[]), ["w/outlook@v1"]);
    assert_eq!(refs(&env, "archive", &[]), ["w/almanac@v1"]);
}

// ---------------------------------------------------------------------------------------------
// Typos
// ---------------------------------------------------------------------------------------------

fn typo_catalog() -> TestEnv {
    let env = TestEnv::new();
    env.bundle("w");
    put_described(&env, "w", "current", "Current weather in a city.");
    put_described(&env, "w", "outlook", "Weather forecast for the next days.");
    put_described(&env, "w", "web-search", "Search the web.");
    // "whether" is as close to "wether" as "weather" is, but rarer: not the correction.
    put_described(&env, "w", "decide", "Decide whether to go.");
    env
}

#[test]
fn a_sentence_finds_what_a_tool_returns_but_a_name_like_query_does_not() {
    // Two tools about countries alike; only `country-details` says (in its outputSchema) that
    // it returns the dialling code. `country-facts` comes later, so it wins a tie.
    let env = TestEnv::new();
    env.bundle("geo");
    put(
        &env,
        "geo",
        "country-details",
        json!({
            "description": "Details about a country, by its name.",
            "outputSchema": {
                "type": "object",
                "properties": {
                    "dial_code": { "type": "string", "description": "Dialling code of the country." },
                    "flag": { "type": "string", "description": "The flag, as an emoji." }
                }
            }
        }),
    );
    put_described(
        &env,
        "geo",
        "country-facts",
        "Facts about a country, by its name.",
    );
    let sentence = "what is the dialling code of a country";
    let found = refs(&env, sentence, &[]);
    assert_eq!(
        found.first().map(String::as_str),
        Some("geo/country-details@v1"),
        "{found:?}"
    );
    assert!(
        found.contains(&"geo/country-facts@v1".to_owned()),
        "{found:?}"
    );
    let pick = env.run(&["--json", "pick", sentence, "--max", "1"]);
    pick.success();
    assert_eq!(
        pick.json()["items"][0]["ref"],
        "geo/country-details@v1",
        "{pick}"
    );
    // A name-like query looks for what tools are, not what they return.
    assert!(
        refs(&env, "dialling", &[]).is_empty(),
        "{:?}",
        refs(&env, "dialling", &[])
    );
    assert_eq!(refs(&env, "country", &[]).len(), 2);
}

#[test]
fn typos_are_corrected_and_reported() {
    let env = typo_catalog();

    let found = search(&env, "wether", &[]);
    assert_eq!(found.corrections(), [("wether", "weather")]);
    assert_eq!(found.sorted_refs(), ["w/current@v1", "w/outlook@v1"]);
    assert_eq!(found.tiers(), ["fuzzy"; 2]);
    assert_eq!(found.whys(), ["typo-tolerant: wether→weather"; 2]);

    let found = search(&env, "serch", &[]);
    assert_eq!(found.corrections(), [("serch", "search")]);
    assert_eq!(
        found.sorted_refs(),
        ["builtin/file-search@v1", "w/web-search@v1"]
    );
    assert_eq!(found.tiers(), ["fuzzy"; 2]);
    assert_eq!(found.whys(), ["typo-tolerant: serch→search"; 2]);

    // Up to 7 characters, one edit; from 8, two.
    let found = search(&env, "frecast", &[]);
    assert_eq!(found.corrections(), [("frecast", "forecast")]);
    assert_eq!(found.refs(), ["w/outlook@v1"]);
    let found = search(&env, "forcasst", &[]);
    assert_eq!(found.corrections(), [("forcasst", "forecast")]);
    assert_eq!(found.refs(), ["w/outlook@v1"]);
    let found = search(&env, "frcast", &[]);
    assert_eq!(found.corrections(), [], "two edits of a 6-letter word");
    assert_eq!(found.refs(), Vec::<String>::new());

    // Two typos in one query: both corrected; the tool with both first.
    let found = search(&env, "wether frecast", &[]);
    assert_eq!(
        found.corrections(),
        [("wether", "weather"), ("frecast", "forecast")]
    );
    assert_eq!(found.refs(), ["w/outlook@v1", "w/current@v1"]);
    assert_eq!(found.tiers(), ["fuzzy", "some-words"]);
    assert_eq!(
        found.whys(),
        [
            "typo-tolerant: wether→weather, frecast→forecast",
            "some of: wether frecast"
        ]
    );

    // Candidates start with the typed word's first or second letter: the first two letters
    // swapped or a letter typed before the word are corrected, the first letter alone is not.
    let found = search(&env, "ewather", &[]);
    assert_eq!(found.corrections(), [("ewather", "weather")]);
    let found = search(&env, "sweather", &[]);
    assert_eq!(found.corrections(), [("sweather", "weather")]);
    let found = search(&env, "eather", &[]);
    assert_eq!(found.corrections(), [], "the first letter left out");
    let found = search(&env, "qeather", &[]);
    assert_eq!(found.corrections(), [], "the first letter mistyped");

    // The table says which correction was made.
    let run = env.run(&["search", "wether"]);
    run.success();
    assert!(
        run.stdout.contains("typo-tolerant: wether→weather"),
        "{run}"
    );
}

#[test]
fn words_that_match_as_typed_or_are_short_are_not_corrected() {
    let env = typo_catalog();

    // A word start is no typo.
    let found = search(&env, "weat", &[]);
    assert_eq!(found.corrections(), []);
    assert_eq!(found.sorted_refs(), ["w/current@v1", "w/outlook@v1"]);
    assert_eq!(found.tiers(), ["fuzzy"; 2]);
    assert_eq!(found.whys(), ["words or word starts: weat"; 2]);

    // Three characters or fewer: word starts, never corrected.
    let found = search(&env, "wea", &[]);
    assert_eq!(found.corrections(), []);
    assert_eq!(found.sorted_refs(), ["w/current@v1", "w/outlook@v1"]);
    let found = search(&env, "cur", &[]);
    assert_eq!(found.refs()[0], "w/current@v1");
    assert_eq!(found.tiers()[0], "prefix");
    assert_eq!(found.whys()[0], "name starts with: cur");
    assert_eq!(refs(&env, "web", &[])[0], "w/web-search@v1");
    let found = search(&env, "wez", &[]);
    assert_eq!(found.corrections(), []);
    assert_eq!(found.refs(), Vec::<String>::new());
    // Several short words, as a name is typed.
    let found = search(&env, "we se", &[]);
    assert_eq!(found.refs()[0], "w/web-search@v1");
    assert_eq!(found.tiers()[0], "prefix");
}

// ---------------------------------------------------------------------------------------------
// Any text is a safe query
// ---------------------------------------------------------------------------------------------

#[test]
fn any_text_is_a_safe_query() {
    let env = TestEnv::new();
    env.bundle("w");
    put_described(&env, "w", "weather", "Weather forecast for a city.");
    put_described(
        &env,
        "w",
        "colon",
        "Parse a:b pairs NEAR the (start) -- or NOT.",
    );

    let long_repeat = "weather ".repeat(1280);
    let long_words: String = (0..2000).map(|i| format!("w{i} ")).collect();
    let long_word = "x".repeat(10 * 1024);
    assert!(long_repeat.len() >= 10 * 1024 && long_words.len() >= 10 * 1024);
    let finds_weather = [
        "-weather",
        "🌦️ weather",
        "weather\"",
        "\"weather",
        &long_repeat,
    ];
    let others = [
        "\"",
        "*",
        "-",
        ":",
        "(",
        ")",
        "NEAR",
        "AND",
        "OR",
        "NOT",
        "\"unbalanced",
        "a:b",
        "NEAR(a b)",
        "NEAR(a b, 2)",
        "weather NOT forecast",
        "weather AND OR",
        "^weather",
        "name:weather",
        "{name}: weather",
        "'; DROP TABLE tool; --",
        "?!",
        "\\",
        "%_",
        "\u{1}\u{1b}[31m red \u{1b}[0m",
        "🌦️",
        &long_words,
        &long_word,
    ];
    for query in finds_weather.iter().chain(others.iter()) {
        let shown: String = query.chars().take(40).collect();
        let run = env.run(&search_args(query, &[]));
        assert_eq!(run.status, Some(0), "{shown:?}\n{run}");
        let lower = run.stderr.to_lowercase();
        for word in ["sqlite", "fts5", "syntax", "malformed", "panicked"] {
            assert!(!lower.contains(word), "{shown:?}: {word} on stderr\n{run}");
        }
        assert_eq!(run.stderr, "", "{shown:?}");
        let found = parse_found(&run);
        assert_eq!(&found.query, query, "{shown:?}");
        if finds_weather.contains(query) {
            assert_eq!(found.refs(), ["w/weather@v1"], "{shown:?}");
            assert_eq!(found.tiers(), ["prefix"], "{shown:?}");
        }

        // The table too.
        let mut args = vec!["search", "--"];
        args.push(query);
        let run = env.run(&args);
        assert_eq!(run.status, Some(0), "{shown:?}\n{run}");
        assert_eq!(run.stderr, "", "{shown:?}\n{run}");
    }

    // Operators are words: "NEAR" finds the tool that says "near", and nothing breaks.
    assert_eq!(refs(&env, "NEAR", &[]), ["w/colon@v1"]);
    assert_eq!(refs(&env, "a:b", &[])[0], "w/colon@v1");
    // Words past the first 64 content words are cut, not refused: the 65th is not searched,
    // however long the query; stop words before it do not count.
    let query: String = (0..64).map(|i| format!("zz{i} ")).collect::<String>() + "forecast";
    assert_eq!(refs(&env, &query, &[]), Vec::<String>::new());
    let query = format!("forecast {query}");
    assert_eq!(refs(&env, &query, &[]), ["w/weather@v1"]);
    let query = "the of and to a in ".repeat(10) + "please show the forecast";
    assert_eq!(refs(&env, &query, &[]), ["w/weather@v1"]);

    // Without `--`, a query starting with `-` is taken as an option (clap's usage error).
    env.run(&["search", "-weather"]).failure(2);
}

/// `--json` prints strings as they are: a DEL character (U+007F, which JSON need not escape)
/// in the query is in the `query` field too.
#[test]
fn json_output_keeps_every_character() {
    let env = TestEnv::new();
    for query in ["a\u{7f}b", "weather\u{7f}"] {
        let run = env.run(&search_args(query, &[]));
        run.success();
        let found = parse_found(&run);
        assert_eq!(found.query, query, "{run}");
    }
}

#[test]
fn an_empty_query_is_a_validation_error() {
    let env = TestEnv::new();
    for query in ["", " ", "   ", "\t \n"] {
        let err = env.json_error(&["search", "--", query], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{query:?}");
        assert_eq!(err.error.message, "the search query is empty");
        let hint = err.error.hint.as_deref().unwrap();
        assert!(hint.contains("toolctl search"), "{hint}");
        assert!(hint.contains("toolctl tool list"), "{hint}");
    }
    // Several empty words are an empty query too.
    env.json_error(&["search", "", " "], 3);

    let run = env.run(&["search", ""]);
    run.failure(3)
        .stderr_has("error: the search query is empty")
        .stderr_has("hint: ");
    assert_eq!(run.stdout, "");

    // No query at all is a usage error.
    let err = env.json_error(&["search"], 2);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    env.run(&["search"]).failure(2).stderr_has("<QUERY>");
}

#[test]
fn a_query_of_punctuation_alone_finds_nothing() {
    let env = TestEnv::new();
    env.bundle("w");
    put_described(&env, "w", "forecast", "Weather forecast: rain? sun!");
    // Punctuation, symbols, emoji, a lone combining mark: no word, so no match; not an error.
    for query in [
        "?!", "...", "\"\"", "*:()-", "🌦️", "«»—", "\u{301}", "$ % & |",
    ] {
        let found = search(&env, query, &[]);
        assert_eq!(found.refs(), Vec::<String>::new(), "{query:?}");
        assert_eq!(found.next_page_token, None);
        assert_eq!(found.corrections(), []);

        let run = env.run(&["search", "--", query]);
        run.success();
        assert_eq!(run.stdout, format!("no tool matches '{query}'\n"));
        assert_eq!(run.stderr, "");
    }
}

// ---------------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------------

#[test]
fn disabled_unavailable_and_deleted_tools_are_left_out_unless_asked() {
    let env = TestEnv::new();
    env.bundle("w");
    env.bundle("quiet");
    env.bundle("gone");
    for (bundle, slug) in [
        ("w", "on"),
        ("w", "off"),
        ("quiet", "hushed"),
        ("gone", "lost"),
    ] {
        put_described(&env, bundle, slug, "Weather report.");
    }
    // A native function this binary lacks (copied in by hand: `tool put` refuses it):
    // unavailable.
    let ghost = tool_doc_with(
        "ghost",
        "v1",
        json!({ "description": "Weather report.", "impl": { "func": "nope" } }),
    );
    env.put_tool_by_hand("w", &ghost);
    env.run(&["tool", "disable", "w/off"]).success();
    env.run(&["bundle", "disable", "quiet"]).success();
    env.run(&["bundle", "delete", "gone"]).success();

    assert_eq!(refs(&env, "weather", &[]), ["w/on@v1"]);

    let found = search(&env, "weather", &["--include-disabled"]);
    assert_eq!(
        found.sorted_refs(),
        ["quiet/hushed@v1", "w/ghost@v1", "w/off@v1", "w/on@v1"]
    );
    for hit in &found.hits {
        let t = &hit.tool;
        match t.slug.as_str() {
            "on" => assert!(t.is_enabled && t.bundle_enabled && t.available),
            "off" => assert!(!t.is_enabled && t.bundle_enabled && t.available),
            "hushed" => assert!(t.is_enabled && !t.bundle_enabled && t.available),
            "ghost" => {
                assert!(t.is_enabled && !t.available, "{t:?}");
                assert!(t.unavailable_reason.as_deref().unwrap().contains("nope"));
            }
            other => panic!("{other}"),
        }
    }

    // --include-deleted brings back the tools of soft-deleted bundles (enabled ones only).
    let found = search(&env, "weather", &["--include-deleted"]);
    assert_eq!(found.sorted_refs(), ["gone/lost@v1", "w/on@v1"]);
    // Both: everything.
    let found = search(
        &env,
        "weather",
        &["--include-disabled", "--include-deleted"],
    );
    assert_eq!(
        found.sorted_refs(),
        [
            "gone/lost@v1",
            "quiet/hushed@v1",
            "w/ghost@v1",
            "w/off@v1",
            "w/on@v1"
        ]
    );

    // Back on: found by default again.
    env.run(&["tool", "enable", "w/off"]).success();
    env.run(&["bundle", "enable", "quiet"]).success();
    env.run(&["bundle", "restore", "gone"]).success();
    assert_eq!(
        search(&env, "weather", &[]).sorted_refs(),
        ["gone/lost@v1", "quiet/hushed@v1", "w/off@v1", "w/on@v1"]
    );
}

#[test]
fn bundle_and_tag_filters() {
    let env = TestEnv::new();
    env.bundle("a");
    let b_id = env.bundle("b");
    let tagged = |bundle: &str, slug: &str, tags: Value| {
        put(
            &env,
            bundle,
            slug,
            json!({ "description": "Widget tool.", "tags": tags }),
        );
    };
    tagged("a", "one", json!(["red", "round"]));
    tagged("a", "two", json!(["red"]));
    tagged("b", "three", json!(["round"]));
    tagged("b", "four", json!(["Red"]));

    let all = strings(&["a/one@v1", "a/two@v1", "b/four@v1", "b/three@v1"]);
    assert_eq!(search(&env, "widget", &[]).sorted_refs(), all);

    let cases: &[(&[&str], &[&str])] = &[
        (&["--bundle", "a"], &["a/one@v1", "a/two@v1"]),
        (&["--bundle", &b_id], &["b/four@v1", "b/three@v1"]),
        (
            &["--bundle", "a", "--bundle", "b"],
            &["a/one@v1", "a/two@v1", "b/four@v1", "b/three@v1"],
        ),
        (&["--tag", "red"], &["a/one@v1", "a/two@v1"]),
        (&["--tag", "red", "--tag", "round"], &["a/one@v1"]),
        (&["--tag", "Red"], &["b/four@v1"]),
        (&["--tag", "nope"], &[]),
        (&["--bundle", "b", "--tag", "round"], &["b/three@v1"]),
        (&["--bundle", "a", "--tag", "Red"], &[]),
    ];
    for (flags, expected) in cases {
        assert_eq!(
            search(&env, "widget", flags).sorted_refs(),
            strings(expected),
            "{flags:?}"
        );
    }

    // The filters apply to the tiers alike: the tag is also a word the query can find.
    assert_eq!(
        search(&env, "round", &["--bundle", "b"]).refs(),
        ["b/three@v1"]
    );

    let err = env.json_error(&["search", "widget", "--bundle", "nope"], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
}

#[test]
fn the_bundle_filter_finds_built_in_tools() {
    let env = TestEnv::new();
    assert_eq!(refs(&env, "time", &[]), ["builtin/now@v1"]);
    assert_eq!(
        refs(&env, "time", &["--bundle", "builtin"]),
        ["builtin/now@v1"],
        "--bundle builtin keeps the built-in tools"
    );
    let builtin_id = env.json(&["bundle", "get", "builtin"])["bundleID"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        refs(&env, "time", &["--bundle", &builtin_id]),
        ["builtin/now@v1"]
    );
    // And `tool list` agrees.
    assert_eq!(
        env.refs(&["--bundle", "builtin"]),
        [
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Paging
// ---------------------------------------------------------------------------------------------

/// Seven tools that "widget" finds, with distinct scores; tagged `even` every other one.
fn widget_catalog() -> TestEnv {
    let env = TestEnv::new();
    env.bundle("w");
    for i in 0..7 {
        let description = format!("Widget{}.", " filler".repeat(i));
        let tags = if i % 2 == 0 {
            json!(["even"])
        } else {
            json!([])
        };
        put(
            &env,
            "w",
            &format!("t{i}"),
            json!({ "description": description, "tags": tags }),
        );
    }
    env
}

/// Every page of `search QUERY FLAGS --page-size SIZE`: the hits in order.
#[track_caller]
fn walk(env: &TestEnv, query: &str, size: &str, flags: &[&str]) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut token: Option<String> = None;
    for page in 0.. {
        assert!(page < 100, "paging does not end");
        let mut all = vec!["--page-size", size];
        all.extend_from_slice(flags);
        if let Some(token) = &token {
            all.extend(["--page-token", token.as_str()]);
        }
        let found = search(env, query, &all);
        assert!(found.hits.len() <= size.parse().unwrap());
        let more = found.next_page_token.is_some();
        if more {
            assert_eq!(found.hits.len(), size.parse::<usize>().unwrap());
        }
        hits.extend(found.hits);
        match found.next_page_token {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    hits
}

#[test]
fn paging_walks_every_hit_once_in_order() {
    let env = widget_catalog();
    let all = search(&env, "widget", &[]);
    assert_eq!(all.hits.len(), 7);
    assert_eq!(all.next_page_token, None);

    for size in ["1", "2", "3", "6", "7", "50"] {
        let walked: Vec<String> = walk(&env, "widget", size, &[])
            .into_iter()
            .map(|h| h.tool.reference)
            .collect();
        assert_eq!(walked, all.refs(), "page size {size}");
        let mut unique = walked.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), walked.len(), "no duplicates");
    }
    // Across tiers: six tools have both words, one only "widget"; the later tiers find the six
    // again, and they are not shown twice.
    let both = search(&env, "widget filler", &[]);
    assert_eq!(
        both.tiers(),
        [vec!["whole-word"; 6], vec!["some-words"]].concat()
    );
    assert_eq!(both.refs()[6], "w/t0@v1");
    for size in ["1", "2", "5", "6", "7"] {
        let walked = walk(&env, "widget filler", size, &[]);
        let refs: Vec<String> = walked.iter().map(|h| h.tool.reference.clone()).collect();
        assert_eq!(refs, both.refs(), "page size {size}");
        let tiers: Vec<&str> = walked.iter().map(|h| h.tier.as_str()).collect();
        assert_eq!(tiers, both.tiers(), "page size {size}");
    }

    // With a filter.
    let even = search(&env, "widget", &["--tag", "even"]);
    assert_eq!(even.hits.len(), 4);
    let walked: Vec<String> = walk(&env, "widget", "2", &["--tag", "even"])
        .into_iter()
        .map(|h| h.tool.reference)
        .collect();
    assert_eq!(walked, even.refs());

    // The last full page carries no token when nothing follows.
    assert_eq!(
        search(&env, "widget", &["--page-size", "7"]).next_page_token,
        None
    );
    // The page size may change along the way (it is not a filter).
    let first = search(&env, "widget", &["--page-size", "2"]);
    let token = first.next_page_token.unwrap();
    let second = search(
        &env,
        "widget",
        &["--page-size", "3", "--page-token", &token],
    );
    assert_eq!(second.refs(), all.refs()[2..5]);
    // A bundle named by slug or by ID is the same filter.
    let by_slug = search(&env, "widget", &["--page-size", "2", "--bundle", "w"]);
    let bundle_id = env.json(&["bundle", "get", "w"])["bundleID"]
        .as_str()
        .unwrap()
        .to_owned();
    let token = by_slug.next_page_token.unwrap();
    let by_id = search(
        &env,
        "widget",
        &[
            "--page-size",
            "2",
            "--bundle",
            &bundle_id,
            "--page-token",
            &token,
        ],
    );
    assert_eq!(by_id.refs(), all.refs()[2..4]);

    // The table says how to get the next page.
    let run = env.run(&["search", "widget", "--page-size", "2"]);
    run.success();
    let token = search(&env, "widget", &["--page-size", "2"])
        .next_page_token
        .unwrap();
    assert_eq!(
        run.stderr,
        format!("more: --page-token {token} (or --all)\n"),
        "{run}"
    );
    assert!(!run.stdout.contains("more:"), "{run}");
    let every = env.run(&["search", "widget", "--all"]);
    assert_eq!(every.success().stderr, "");
    assert_eq!(every.stdout.lines().count(), 8, "{every}");
}

/// Search pages are stretches of one order by position, and a change to the catalog can
/// reorder it: a page whose earlier hits are no longer the ones shown is refused (it would
/// repeat or skip hits), and a change that leaves them alone does not stop the paging.
#[test]
fn a_page_after_the_catalog_reordered_the_hits_before_it_is_refused() {
    let env = widget_catalog();
    let all = search(&env, "widget", &[]).refs();
    let first = search(&env, "widget", &["--page-size", "2"]);
    let token = first.next_page_token.unwrap();
    let page2 = ["--page-size", "2", "--page-token", token.as_str()];

    // A tool the query does not find changes nothing before page 2.
    put_described(&env, "w", "gadget", "Gadget.");
    assert_eq!(search(&env, "widget", &page2).refs(), all[2..4]);
    // Nor does one that ranks after page 2's hits.
    put_described(
        &env,
        "w",
        "last",
        &format!("Widget{}.", " filler".repeat(40)),
    );
    assert_eq!(
        search(&env, "widget", &["--all"]).refs().last().unwrap(),
        "w/last@v1"
    );
    assert_eq!(search(&env, "widget", &page2).refs(), all[2..4]);

    // A tool that ranks first moves page 1's last hit onto page 2.
    put_described(&env, "w", "top", "Widget widget widget.");
    assert_eq!(search(&env, "widget", &[]).refs()[0], "w/top@v1");
    let mut args = vec!["search", "widget"];
    args.extend(page2);
    env.run(&args)
        .failure(3)
        .stderr_has("--page-token: the catalog changed since this page token was made");
    let err = env.json_error(&args, 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    // `--all` from the token is refused the same way; from the start it reads the new order.
    env.run(&["search", "widget", "--all", "--page-token", &token])
        .failure(3)
        .stderr_has("hits before its page are no longer the same");
    assert_eq!(search(&env, "widget", &["--all"]).refs().len(), 9);
}

/// What a test compares of hits: each one's ref, rank, score, tier and why.
fn shown(hits: &[Hit]) -> Vec<(String, u64, f64, String, String)> {
    hits.iter()
        .map(|h| {
            (
                h.tool.reference.clone(),
                h.rank,
                h.score,
                h.tier.clone(),
                h.why.clone(),
            )
        })
        .collect()
}

/// `search QUERY --all` is the pages of each of `sizes` joined (refs, ranks, scores, tiers,
/// whys, corrections), and so is `--all` after the first page of each size (from its token
/// on); neither leaves a token.
#[track_caller]
fn assert_all_is_the_pages_joined(env: &TestEnv, query: &str, sizes: &[&str]) {
    let all = search(env, query, &["--all"]);
    assert_eq!(all.next_page_token, None, "{query}");
    assert!(!all.hits.is_empty(), "{query}");
    for size in sizes {
        let walked = walk(env, query, size, &[]);
        assert_eq!(
            shown(&all.hits),
            shown(&walked),
            "{query}, page size {size}"
        );
        let first = search(env, query, &["--page-size", size]);
        let Some(token) = &first.next_page_token else {
            continue;
        };
        let rest = search(env, query, &["--all", "--page-token", token]);
        assert_eq!(rest.next_page_token, None, "{query}, page size {size}");
        assert_eq!(rest.corrections, all.corrections, "{query}");
        let joined = [shown(&first.hits), shown(&rest.hits)].concat();
        assert_eq!(joined, shown(&all.hits), "{query}, page size {size}");
    }
}

#[test]
fn all_is_the_pages_joined_for_names_typos_and_sentences() {
    let env = widget_catalog();
    // One tier; two tiers (the six with both words again in the second, shown once); a typo,
    // corrected; a sentence (ranked by relevance, then ordered as `pick` orders its picks).
    for query in ["widget", "widget filler", "widgit", "a widget with filler"] {
        assert_all_is_the_pages_joined(&env, query, &["1", "2", "3", "7"]);
    }
    assert_eq!(
        search(&env, "widgit", &["--all"]).corrections(),
        [("widgit", "widget")]
    );
}

/// `--all` is not bounded by the largest page: 1,001 tools, all found, as the two pages of
/// 1,000 give them — for a name-like query and for a sentence.
#[test]
fn all_returns_more_hits_than_the_largest_page() {
    let env = TestEnv::new();
    let bundle = env.bundle("w");
    put_described(&env, "w", "t0", "Widget.");
    // The rest written as `git pull` would bring them (1,000 `tool put`s take too long).
    let first = env.tool_file(&bundle, "t0", "v1");
    let doc = read_json(&first);
    for i in 1..1001 {
        let mut copy = doc.clone();
        copy["slug"] = json!(format!("t{i}"));
        copy["description"] = json!(format!("Widget{}.", " filler".repeat(i % 7)));
        write_file(
            &env.tool_file(&bundle, &format!("t{i}"), "v1"),
            &serde_json::to_string_pretty(&copy).unwrap(),
        );
    }
    for query in ["widget", "a widget with filler"] {
        let all = search(&env, query, &["--all"]);
        assert_eq!(all.hits.len(), 1001, "{query}");
        assert_eq!(all.next_page_token, None, "{query}");
        let page = search(&env, query, &["--page-size", "1000"]);
        let token = page.next_page_token.clone().unwrap();
        let last = search(
            &env,
            query,
            &["--page-size", "1000", "--page-token", &token],
        );
        assert_eq!(last.next_page_token, None, "{query}");
        let joined = [shown(&page.hits), shown(&last.hits)].concat();
        assert_eq!(shown(&all.hits), joined, "{query}");
    }
}

/// `rank` is the place in the whole result, not on the page: page 2 of size 2 starts at 3.
#[test]
fn rank_counts_across_pages() {
    let env = widget_catalog();
    let all = search(&env, "widget", &[]);
    let ranks: Vec<u64> = all.hits.iter().map(|h| h.rank).collect();
    assert_eq!(ranks, [1, 2, 3, 4, 5, 6, 7]);
    let walked: Vec<(String, u64)> = walk(&env, "widget", "2", &[])
        .into_iter()
        .map(|h| (h.tool.reference, h.rank))
        .collect();
    let expected: Vec<(String, u64)> = all
        .hits
        .iter()
        .map(|h| (h.tool.reference.clone(), h.rank))
        .collect();
    assert_eq!(walked, expected);
}

#[test]
fn a_page_token_only_works_for_its_query_and_filters() {
    let env = widget_catalog();
    let token = search(&env, "widget", &["--page-size", "2"])
        .next_page_token
        .unwrap();
    // The same query and filters: fine.
    search(
        &env,
        "widget",
        &["--page-size", "2", "--page-token", &token],
    );

    let others: &[(&str, &[&str])] = &[
        ("filler", &[]),
        ("widget filler", &[]),
        ("widget", &["--tag", "even"]),
        ("widget", &["--bundle", "w"]),
        ("widget", &["--include-disabled"]),
        ("widget", &["--include-deleted"]),
    ];
    for (query, flags) in others {
        let mut args = vec!["search", "--page-size", "2", "--page-token", &token];
        args.extend_from_slice(flags);
        args.extend(["--", query]);
        env.run(&args).failure(3).stderr_has("other filters");
        let err = env.json_error(&args, 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{query} {flags:?}");
        assert!(
            err.error.details.to_string().contains("--page-token"),
            "{:?}",
            err.error
        );
    }

    // Not a token at all.
    for garbage in ["not-a-token", "!!", "e30", ""] {
        env.run(&["search", "widget", "--page-token", garbage])
            .failure(3)
            .stderr_has("page token");
        let err = env.json_error(&["search", "widget", "--page-token", garbage], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR");
    }
    // A `tool list` token is no search token.
    let list = env.tool_list(&["--page-size", "1"]);
    let list_token = list.next_page_token.unwrap();
    env.run(&["search", "widget", "--page-token", &list_token])
        .failure(3);
    // And the page size is checked as for lists.
    for size in ["0", "1001"] {
        env.run(&["search", "widget", "--page-size", size])
            .failure(3)
            .stderr_has("1 to 1000");
    }
}

// ---------------------------------------------------------------------------------------------
// Built-ins, the index, the table
// ---------------------------------------------------------------------------------------------

#[test]
fn built_in_tools_are_searchable_on_an_empty_catalog() {
    let env = TestEnv::new();
    let found = search(&env, "read file", &[]);
    let first = &found.hits[0];
    assert_eq!(first.tool.reference, "builtin/readfile@v1");
    assert_eq!(first.tier, "prefix");
    assert!(first.tool.is_built_in);
    assert_eq!(first.tool.bundle, "builtin");
    assert_eq!(first.tool.path, None);

    assert_eq!(
        search(&env, "search files", &[]).refs()[0],
        "builtin/file-search@v1"
    );
    assert_eq!(refs(&env, "current time", &[]), ["builtin/now@v1"]);

    // exec is disabled until enabled.
    assert_eq!(refs(&env, "exec", &[]), Vec::<String>::new());
    let found = search(&env, "exec", &["--include-disabled"]);
    assert_eq!(found.refs(), ["builtin/exec@v1"]);
    assert_eq!(found.hits[0].tool.status, "disabled");
    env.run(&["tool", "enable", "builtin/exec"]).success();
    assert_eq!(refs(&env, "exec", &[]), ["builtin/exec@v1"]);

    // A catalog that does not exist yet: the same, and the search creates nothing.
    let env = TestEnv::uninit_default();
    assert_eq!(
        search(&env, "read file", &[]).refs()[0],
        "builtin/readfile@v1"
    );
    assert!(!env.catalog().exists());
}

#[test]
fn search_follows_hand_edits() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    put_described(&env, "w", "echo", "Repeat what was said.");
    assert_eq!(refs(&env, "zebra", &[]), Vec::<String>::new());

    let path = env.tool_file(&bundle_id, "echo", "v1");
    let mut doc = read_json(&path);
    doc["description"] = "Repeat the zebra.".into();
    write_file(&path, &serde_json::to_string_pretty(&doc).unwrap());
    let found = search(&env, "zebra", &[]);
    assert_eq!(found.refs(), ["w/echo@v1"]);
    assert_eq!(found.hits[0].tool.description, "Repeat the zebra.");
    assert_eq!(refs(&env, "said", &[]), Vec::<String>::new());

    std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap()).unwrap();
    assert_eq!(refs(&env, "zebra", &[]), Vec::<String>::new());
}

#[test]
fn the_table_has_rank_tool_score_why_and_description() {
    let env = alert_catalog();
    let found = search(&env, "weather alert", &[]);
    let run = env.run(&["search", "weather", "alert"]);
    run.success();
    assert_eq!(run.stderr, "");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1 + found.hits.len(), "{run}");
    let header = lines[0];
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["#", "TOOL", "SCORE", "WHY", "DESCRIPTION"]
    );
    // Cut each row at the header's columns.
    let starts: Vec<usize> = ["#", "TOOL", "SCORE", "WHY", "DESCRIPTION"]
        .iter()
        .map(|name| header.find(name).unwrap())
        .collect();
    for (line, hit) in lines[1..].iter().zip(&found.hits) {
        let chars: Vec<char> = line.chars().collect();
        let cell = |i: usize| -> String {
            let end = starts.get(i + 1).copied().unwrap_or(chars.len());
            chars[starts[i]..end.min(chars.len())]
                .iter()
                .collect::<String>()
                .trim()
                .to_owned()
        };
        assert_eq!(cell(0), hit.rank.to_string(), "{line}");
        assert_eq!(cell(1), hit.tool.reference, "{line}");
        // JSON rounds to 3 decimals, the table to 2.
        let score: f64 = cell(2).parse().unwrap();
        assert!((score - hit.score).abs() <= 0.0051, "{line}: {}", hit.score);
        assert_eq!(cell(2).split('.').nth(1).map(str::len), Some(2), "{line}");
        assert_eq!(cell(3), hit.why, "{line}");
        assert_eq!(cell(4), hit.tool.description, "{line}");
    }

    // Nothing found: one line saying so, exit 0.
    let run = env.run(&["search", "zzzz"]);
    run.success();
    assert_eq!(run.stdout, "no tool matches 'zzzz'\n");
    assert_eq!(run.stderr, "");
}

/// A page of search shows tools the index lists as usable without compiling their JSON
/// Schemas again; `--include-disabled` also shows unusable ones, each checked whole, so a
/// schema broken by hand is the reason shown, and the tool is not in a plain search.
#[test]
fn a_schema_broken_by_hand_is_shown_as_the_reason_with_include_disabled_and_hidden_without() {
    let env = TestEnv::new();
    let bundle = env.bundle("shop");
    put_described(
        &env,
        "shop",
        "price-lookup",
        "Look up the price of a product.",
    );
    put_described(
        &env,
        "shop",
        "price-history",
        "The price of a product over time.",
    );
    let path = env.tool_file(&bundle, "price-history", "v1");
    let mut doc = read_json(&path);
    doc["argSchema"] = json!({ "type": "object", "properties": {
        "sku": { "type": "string", "pattern": "([unclosed" } } });
    write_file(&path, &serde_json::to_string_pretty(&doc).unwrap());

    let sentence = "what was the price of this product last year";
    let plain = env.json(&["search", sentence]);
    let shown: Vec<&str> = plain["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["slug"].as_str().unwrap())
        .collect();
    assert_eq!(shown, ["price-lookup"], "{plain}");
    assert_eq!(plain["items"][0]["available"], true, "{plain}");

    let all = env.json(&["search", sentence, "--include-disabled"]);
    let broken = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["slug"] == "price-history")
        .unwrap_or_else(|| panic!("{all}"));
    assert_eq!(broken["available"], false, "{all}");
    let reason = broken["unavailableReason"].as_str().unwrap_or_default();
    assert!(reason.contains("argSchema"), "{reason}");
}
