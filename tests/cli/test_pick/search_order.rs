//! `search` for a sentence orders its hits as `pick` does with its default steps: the tools
//! the first hits' required arguments name right after them, then the rest of the relevance
//! order; pages still follow one another, filters still hold, and a name-like query keeps its
//! tiers.

use super::*;

/// "forecast and current weather for Paris": a sentence.
const WEATHER: &str = "forecast and current weather for Paris";

/// A native (safe) tool of `bundle` with a description and more fields.
fn put(env: &TestEnv, bundle: &str, slug: &str, n: u32, description: &str, extra: Value) {
    let mut doc = native(slug, n, extra);
    doc["description"] = json!(description);
    env.put_tool(bundle, &doc);
}

/// Bundle `weatherapi`: `weatherapi-forecast` (tag `weather`; its required `q` names
/// `weatherapi-location-lookup`, which matches no word of [`WEATHER`]) and its sibling
/// `weatherapi-realtime` (matches "current" only); neither of those two has the tag. Bundle
/// `city`: three tools about Paris (tag `weather`) that outrank the real-time tool.
fn trip() -> TestEnv {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("weatherapi");
    put(
        &env,
        "weatherapi",
        "weatherapi-forecast",
        1,
        "Weather forecast for a city: the forecast of the next days.",
        json!({
            "tags": ["weather"],
            "argSchema": {
                "type": "object",
                "properties": {
                    "q": { "type": "string", "description": "The place, as location lookup gives it." }
                },
                "required": ["q"]
            }
        }),
    );
    put(
        &env,
        "weatherapi",
        "weatherapi-realtime",
        2,
        "The current conditions, as observed.",
        json!({}),
    );
    put(
        &env,
        "weatherapi",
        "weatherapi-location-lookup",
        3,
        "Places by name.",
        json!({}),
    );
    env.bundle("city");
    for (n, slug, description) in [
        (4, "sights-of-paris", "What to see in Paris."),
        (5, "events-in-paris", "What is on in Paris this week."),
        (
            6,
            "metro-of-paris",
            "Lines and stations of the Paris metro.",
        ),
    ] {
        put(
            &env,
            "city",
            slug,
            n,
            description,
            json!({ "tags": ["weather"] }),
        );
    }
    env
}

/// One hit as `search --json` prints it.
#[derive(Debug, Clone, PartialEq)]
struct Found {
    reference: String,
    rank: u64,
    score: f64,
    tier: String,
    why: String,
}

/// `toolctl --json search ARGS`: its hits and its next page token; it must succeed with
/// nothing on stderr.
#[track_caller]
fn search(env: &TestEnv, args: &[&str]) -> (Vec<Found>, Option<String>) {
    let mut all = vec!["--json", "search"];
    all.extend_from_slice(args);
    let run = env.run(&all);
    run.success();
    assert_eq!(run.stderr, "", "{run}");
    let doc = run.json();
    let hits = doc["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{doc}"))
        .iter()
        .map(|item| Found {
            reference: item["ref"].as_str().unwrap().to_owned(),
            rank: item["rank"].as_u64().unwrap(),
            score: item["score"].as_f64().unwrap(),
            tier: item["tier"].as_str().unwrap().to_owned(),
            why: item["why"].as_str().unwrap().to_owned(),
        })
        .collect();
    (hits, doc["nextPageToken"].as_str().map(str::to_owned))
}

fn found_refs(hits: &[Found]) -> Vec<&str> {
    hits.iter().map(|h| h.reference.as_str()).collect()
}

/// Every hit once, ranks 1, 2, 3, …, scores never rising.
#[track_caller]
fn assert_one_ordered_list(hits: &[Found]) {
    let refs: BTreeSet<&str> = hits.iter().map(|h| h.reference.as_str()).collect();
    assert_eq!(refs.len(), hits.len(), "a hit twice: {hits:#?}");
    for (i, hit) in hits.iter().enumerate() {
        assert_eq!(hit.rank, i as u64 + 1, "{hits:#?}");
    }
    assert!(
        hits.windows(2).all(|w| w[0].score >= w[1].score),
        "scores rise: {hits:#?}"
    );
}

#[test]
fn a_sentence_brings_its_first_hits_helper_right_after_it_and_lifts_no_sibling() {
    let env = trip();
    let (hits, next) = search(&env, &["--page-size", "1000", "--", WEATHER]);
    assert_eq!(next, None);
    assert_one_ordered_list(&hits);
    assert_eq!(
        found_refs(&hits)[..2],
        [
            "weatherapi/weatherapi-forecast@v1",
            "weatherapi/weatherapi-location-lookup@v1",
        ],
        "{hits:#?}"
    );
    let (forecast, helper) = (&hits[0], &hits[1]);
    assert_eq!(
        helper.why,
        "needed by weatherapi-forecast: its argument q names it"
    );
    assert_eq!(
        helper.score, forecast.score,
        "a helper shows its consumer's score"
    );
    assert_eq!(helper.tier, "relevance");
    // Sibling tools are not lifted by default: the forecast's sibling keeps its place by
    // relevance, after a Paris tool that outranks it.
    assert!(
        hits.iter().all(|h| !h.why.starts_with("sibling of")),
        "{hits:#?}"
    );
    assert_eq!(hits.len(), 6, "{hits:#?}");
    let sibling = hits
        .iter()
        .position(|h| h.reference == "weatherapi/weatherapi-realtime@v1")
        .unwrap_or_else(|| panic!("{hits:#?}"));
    assert!(hits[2].reference.starts_with("city/"), "{hits:#?}");
    assert!(sibling > 2, "{hits:#?}");
    // `pick` gives the same first tools, and lifts the sibling when asked to.
    let picked = picks(&env, &[WEATHER, "--scorer", "fused", "--max", "3"]);
    assert_eq!(refs(&picked), found_refs(&hits)[..3]);
    let lifted = picks(
        &env,
        &[WEATHER, "--scorer", "fused", "--max", "3", "--siblings"],
    );
    assert_eq!(refs(&lifted)[2], "weatherapi/weatherapi-realtime@v1");
}

#[test]
fn pages_of_a_reordered_sentence_follow_one_another_and_all_is_them_joined() {
    let env = trip();
    let (whole, _) = search(&env, &["--page-size", "1000", "--", WEATHER]);
    assert!(whole[1].why.starts_with("needed by"), "{whole:#?}");
    for size in ["1", "2", "4"] {
        let mut walked = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut args = vec!["--page-size", size];
            if let Some(token) = &token {
                args.extend(["--page-token", token.as_str()]);
            }
            args.extend(["--", WEATHER]);
            let (page, next) = search(&env, &args);
            assert!(page.len() <= size.parse().unwrap());
            walked.extend(page);
            match next {
                Some(next) => token = Some(next),
                None => break,
            }
        }
        assert_eq!(walked, whole, "page size {size}");
        // `--all` after the first page: the rest, as the pages gave it.
        let (first, next) = search(&env, &["--page-size", size, "--", WEATHER]);
        let token = next.unwrap();
        let (rest, next) = search(&env, &["--all", "--page-token", &token, "--", WEATHER]);
        assert_eq!(next, None);
        assert_eq!([first, rest].concat(), whole, "--all, page size {size}");
    }
    let (all, _) = search(&env, &["--all", "--", WEATHER]);
    assert_eq!(all, whole);
}

#[test]
fn a_tag_filter_leaves_out_the_helper_and_the_sibling_it_does_not_let_through() {
    let env = trip();
    let (hits, _) = search(
        &env,
        &["--tag", "weather", "--page-size", "1000", "--", WEATHER],
    );
    assert_one_ordered_list(&hits);
    assert_eq!(hits[0].reference, "weatherapi/weatherapi-forecast@v1");
    let mut got: Vec<&str> = found_refs(&hits)[1..].to_vec();
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "city/events-in-paris@v1",
            "city/metro-of-paris@v1",
            "city/sights-of-paris@v1"
        ],
        "{hits:#?}"
    );
    assert!(
        hits.iter().all(|h| h.why.starts_with("relevant to:")),
        "{hits:#?}"
    );
    // The bundle filter: the city tools alone, by relevance.
    let (city, _) = search(&env, &["--bundle", "city", "--", WEATHER]);
    assert_eq!(city.len(), 3);
    assert!(city.iter().all(|h| h.why.starts_with("relevant to:")));
}

#[test]
fn a_helper_the_tag_filter_leaves_out_gives_its_place_to_the_next_one_named() {
    // `weatherapi-forecast`'s three required arguments name three tools of its bundle; a
    // consumer brings two (those the scorer ranks higher first). With the one left out tagged
    // `daily`, `--tag daily`, which the other two lack, brings it in their place.
    let named = [
        (2, "weatherapi-location-lookup", "Places by name."),
        (3, "weatherapi-units-table", "Units of measure."),
        (4, "weatherapi-language-list", "Languages by code."),
    ];
    let catalog = |tagged: Option<&str>| {
        let env = TestEnv::new();
        without_builtins(&env);
        env.bundle("weatherapi");
        let described = |description: &str| json!({ "type": "string", "description": description });
        put(
            &env,
            "weatherapi",
            "weatherapi-forecast",
            1,
            "Weather forecast for a city: the forecast of the next days.",
            json!({
                "tags": ["daily"],
                "argSchema": {
                    "type": "object",
                    "properties": {
                        "q": described("The place, as location lookup gives it."),
                        "units": described("A unit from units table."),
                        "lang": described("A language from language list.")
                    },
                    "required": ["q", "units", "lang"]
                }
            }),
        );
        for (n, slug, description) in named {
            let tags = if tagged == Some(slug) {
                json!(["daily"])
            } else {
                json!([])
            };
            put(
                &env,
                "weatherapi",
                slug,
                n,
                description,
                json!({ "tags": tags }),
            );
        }
        env
    };
    let (all, _) = search(&catalog(None), &["--page-size", "1000", "--", WEATHER]);
    assert_one_ordered_list(&all);
    let found = found_refs(&all);
    assert_eq!(found.len(), 3, "{all:#?}");
    assert_eq!(found[0], "weatherapi/weatherapi-forecast@v1", "{all:#?}");
    let reference = |slug: &str| format!("weatherapi/{slug}@v1");
    let (_, left_out, _) = named
        .into_iter()
        .find(|(_, slug, _)| !found.contains(&reference(slug).as_str()))
        .unwrap_or_else(|| panic!("every named tool came: {all:#?}"));
    let (tagged, _) = search(
        &catalog(Some(left_out)),
        &["--tag", "daily", "--page-size", "1000", "--", WEATHER],
    );
    assert_one_ordered_list(&tagged);
    assert_eq!(
        found_refs(&tagged),
        [
            "weatherapi/weatherapi-forecast@v1",
            reference(left_out).as_str()
        ],
        "{tagged:#?}"
    );
    assert!(
        tagged[1]
            .why
            .starts_with("needed by weatherapi-forecast: its argument "),
        "{tagged:#?}"
    );
}

#[test]
fn a_name_like_query_keeps_its_tiers_without_helpers_or_siblings() {
    let env = trip();
    let (hits, _) = search(&env, &["--page-size", "1000", "--", "weatherapi forecast"]);
    assert_eq!(hits[0].reference, "weatherapi/weatherapi-forecast@v1");
    assert_eq!(hits[0].tier, "prefix", "{hits:#?}");
    // The helper and the sibling come where the tiers put them: after every tool of a better
    // tier, with the tier's own why.
    let tier_rank = |tier: &str| {
        ["prefix", "whole-word", "fuzzy", "some-words"]
            .iter()
            .position(|t| *t == tier)
            .unwrap_or_else(|| panic!("{tier}"))
    };
    assert!(
        hits.windows(2)
            .all(|w| tier_rank(&w[0].tier) <= tier_rank(&w[1].tier)),
        "{hits:#?}"
    );
    assert!(
        hits.iter()
            .all(|h| !h.why.starts_with("needed by") && !h.why.starts_with("sibling of")),
        "{hits:#?}"
    );
    assert!(
        hits[1..].iter().all(|h| h.tier == "some-words"),
        "{hits:#?}"
    );
}

/// A pick's reason says what matched once: the search's own words name the tier ("name starts
/// with: …", "relevant to: …"), so no tier label is put before them again.
#[test]
fn a_picks_reason_names_its_match_once() {
    let env = trip();
    for task in ["weatherapi", "forecast for paris tomorrow"] {
        let got = picks(&env, &[task, "--scorer", "bm25"]);
        let matched: Vec<&str> = got
            .iter()
            .map(|p| p.reason.as_str())
            .filter(|r| r.starts_with("search match"))
            .collect();
        assert!(!matched.is_empty(), "{task}");
        for reason in matched {
            assert!(reason.starts_with("search match: "), "{task}: {reason}");
        }
    }
}
