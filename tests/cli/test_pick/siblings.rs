//! Sibling tools: a first pick lifts the tools of its bundle whose names begin with
//! the same word and that match the request a little, to just below it.

use super::*;

/// The forecast tool matches it strongly; the real-time tool by "current" only, less than
/// the sights and events tools (which hold "paris" in their names).
const WEATHER: &str = "forecast and current weather for Paris";

/// A tool of `bundle` with a description: native (safe), or an HTTP POST (unsafe).
fn put(env: &TestEnv, bundle: &str, slug: &str, n: u32, description: &str, safe: bool) {
    let extra = json!({ "description": description });
    let doc = if safe {
        native(slug, n, extra)
    } else {
        http(slug, n, "POST", extra)
    };
    env.put_tool(bundle, &doc);
}

/// Bundle `other`, registered first, with `{family}-current` (another API's tool of the same
/// first word, matching "current"); bundle `weatherapi` with `{family}-forecast`,
/// `{family}-realtime` (matches "current"), `{family}-astronomy` (matches nothing),
/// `{family}-alerts` (unsafe, matches "current"); bundle `city` with three tools about Paris
/// whose names begin with three different words.
fn weather(family: &str) -> TestEnv {
    let env = TestEnv::new();
    without_builtins(&env);
    env.edit_config(|config| config["allowedHosts"] = json!(["api.example.com"]));
    env.bundle("other");
    put(
        &env,
        "other",
        &format!("{family}-current"),
        1,
        "The current of a river.",
        true,
    );
    env.bundle("weatherapi");
    for (n, slug, description, safe) in [
        (
            2,
            "forecast",
            "Weather forecast for a city: the forecast of the next days.",
            true,
        ),
        (3, "realtime", "The current conditions, as observed.", true),
        (4, "astronomy", "Sunrise, sunset and moon phases.", true),
        (5, "alerts", "Warnings in force for the current day.", false),
    ] {
        put(
            &env,
            "weatherapi",
            &format!("{family}-{slug}"),
            n,
            description,
            safe,
        );
    }
    env.bundle("city");
    for (n, slug, description) in [
        (6, "sights-of-paris", "What to see in Paris."),
        (7, "events-in-paris", "What is on in Paris this week."),
        (
            8,
            "metro-of-paris",
            "Lines and stations of the Paris metro.",
        ),
    ] {
        put(&env, "city", slug, n, description, true);
    }
    env
}

/// `pick WEATHER --siblings ARGS` with the lexical scorer (`--no-siblings` in ARGS wins).
fn weather_picks(env: &TestEnv, args: &[&str]) -> Vec<Pick> {
    let mut all = vec![WEATHER, "--scorer", "bm25", "--siblings"];
    all.extend_from_slice(args);
    picks(env, &all)
}

#[test]
fn a_first_pick_lifts_its_sibling_right_after_it() {
    let env = weather("weatherapi");
    // By relevance alone: the scorer's own scores.
    let relevance = weather_picks(&env, &["--no-siblings", "--no-coverage", "--max", "10"]);
    assert_eq!(refs(&relevance)[0], "weatherapi/weatherapi-forecast@v1");
    let realtime = refs(&relevance)
        .iter()
        .position(|r| *r == "weatherapi/weatherapi-realtime@v1")
        .unwrap_or_else(|| panic!("{relevance:#?}"));
    assert!(realtime >= 3, "the distractors outrank it: {relevance:#?}");
    let own = relevance[realtime].score;
    assert!(own > 0.0);

    let without = weather_picks(&env, &["--no-siblings"]);
    assert!(
        !refs(&without).contains(&"weatherapi/weatherapi-realtime@v1"),
        "{without:#?}"
    );
    let got = weather_picks(&env, &["--debug"]);
    assert_eq!(
        refs(&got),
        [
            "weatherapi/weatherapi-forecast@v1",
            "weatherapi/weatherapi-realtime@v1",
            without[1].reference.as_str(),
        ]
    );
    let (anchor, sibling) = (&got[0], &got[1]);
    // Its key: own + 0.4 × the anchor's, below the anchor (from the rounded scores shown).
    let key = (own + 0.4 * anchor.score).min(anchor.score);
    assert!((sibling.score - key).abs() < 2e-4, "{key} {got:#?}");
    assert!(sibling.score < anchor.score, "{got:#?}");
    assert!(sibling.score > got[2].score, "{got:#?}");
    assert_eq!(
        sibling.reason,
        format!(
            "sibling of weatherapi-forecast (same bundle, name begins with 'weatherapi'); own score {own}"
        )
    );
    let provenance = sibling.provenance.as_ref().unwrap();
    assert_eq!(
        provenance["sibling"],
        json!({ "of": "weatherapi-forecast", "word": "weatherapi", "ownScore": own })
    );
    assert_eq!(provenance["scorer"], "bm25");
    // The others are as the pick without siblings left them.
    assert_eq!(
        (&got[0].reference, got[0].score, &got[0].reason),
        (&without[0].reference, without[0].score, &without[0].reason)
    );
    assert!(anchor.provenance.as_ref().unwrap().get("sibling").is_none());
    assert_eq!(
        (got[2].score, &got[2].reason),
        (without[1].score, &without[1].reason)
    );
}

#[test]
fn a_sibling_matching_nothing_of_another_bundle_or_unsafe_is_not_lifted() {
    let env = weather("weatherapi");
    // By relevance (no coverage), so the places below are the scorer's.
    let got = weather_picks(&env, &["--max", "10", "--min-score", "0", "--no-coverage"]);
    let lifted: Vec<&str> = got
        .iter()
        .filter(|p| p.reason.starts_with("sibling of"))
        .map(|p| p.reference.as_str())
        .collect();
    assert_eq!(lifted, ["weatherapi/weatherapi-realtime@v1"], "{got:#?}");
    // Another bundle's tool of the same first word keeps its own place: after the distractors.
    let place = |reference: &str| refs(&got).iter().position(|r| *r == reference);
    let other = place("other/weatherapi-current@v1").expect("it matches 'current'");
    assert!(other > place("city/metro-of-paris@v1").unwrap(), "{got:#?}");
    // The tool matching nothing scores 0: it comes last, as the scorer left it.
    let astronomy = place("weatherapi/weatherapi-astronomy@v1").unwrap();
    assert_eq!(got[astronomy].score, 0.0, "{got:#?}");
    // The unsafe one is no candidate.
    assert_eq!(place("weatherapi/weatherapi-alerts@v1"), None, "{got:#?}");

    let unsafe_too = weather_picks(&env, &["--allow-unsafe", "--max", "3"]);
    assert_eq!(
        refs(&unsafe_too)[..2],
        [
            "weatherapi/weatherapi-forecast@v1",
            "weatherapi/weatherapi-realtime@v1",
        ]
    );
    assert_eq!(
        refs(&unsafe_too)[2],
        "weatherapi/weatherapi-alerts@v1",
        "allowed, the unsafe sibling is lifted too: {unsafe_too:#?}"
    );
    assert!(
        unsafe_too[2]
            .reason
            .starts_with("sibling of weatherapi-forecast")
    );
}

#[test]
fn names_beginning_with_a_verb_are_no_family() {
    let env = weather("get");
    let got = weather_picks(&env, &["--max", "3"]);
    let without = weather_picks(&env, &["--max", "3", "--no-siblings"]);
    assert_eq!(got, without);
    assert_eq!(refs(&got)[0], "weatherapi/get-forecast@v1");
    assert!(
        !refs(&got).contains(&"weatherapi/get-realtime@v1"),
        "{got:#?}"
    );
}

#[test]
fn min_score_is_compared_with_the_siblings_key() {
    let env = weather("weatherapi");
    let got = weather_picks(&env, &[]);
    let key = got[1].score;
    let own = weather_picks(&env, &["--no-siblings", "--no-coverage", "--max", "10"])
        .into_iter()
        .find(|p| p.reference == "weatherapi/weatherapi-realtime@v1")
        .unwrap()
        .score;
    // Between its own score and its key: lifted.
    let between = format!("{}", (own + key) / 2.0);
    let got = weather_picks(&env, &["--min-score", &between]);
    assert_eq!(
        refs(&got)[1],
        "weatherapi/weatherapi-realtime@v1",
        "{got:#?}"
    );
    // Above its key: not.
    let above = format!("{}", key + 0.0002);
    let got = weather_picks(&env, &["--min-score", &above, "--max", "10"]);
    assert!(
        !refs(&got).contains(&"weatherapi/weatherapi-realtime@v1"),
        "{got:#?}"
    );
}

#[test]
fn a_pick_of_one_stays_one() {
    let env = weather("weatherapi");
    assert_eq!(
        refs(&weather_picks(&env, &["--max", "1"])),
        ["weatherapi/weatherapi-forecast@v1"]
    );
}

#[test]
fn mcp_search_tools_ranks_through_pick_with_its_default_steps() {
    let env = weather("weatherapi");
    let found = search_tools(&env, WEATHER, 2);
    // `search_tools` ranks as `pick` does by default: the fused scorer.
    let picked = picks(
        &env,
        &[WEATHER, "--max", "2", "--allow-unsafe", "--scorer", "fused"],
    );
    assert_eq!(found, names(&picked));
    // Sibling tools are not among `pick`'s default steps, so `search_tools` lifts none either.
    let lifted = picks(
        &env,
        &[
            WEATHER,
            "--max",
            "2",
            "--allow-unsafe",
            "--scorer",
            "fused",
            "--siblings",
        ],
    );
    assert_eq!(refs(&lifted)[1], "weatherapi/weatherapi-realtime@v1");
    assert_ne!(refs(&picked)[1], "weatherapi/weatherapi-realtime@v1");
}

#[test]
fn the_helpers_run_after_the_siblings_are_lifted_so_a_sibling_brings_its_helper() {
    let env = weather("weatherapi");
    // `weatherapi-location-lookup` matches nothing; the real-time tool's required `q` names
    // it (by "location lookup", after the `weatherapi` both begin with).
    put(
        &env,
        "weatherapi",
        "weatherapi-location-lookup",
        9,
        "Places by name.",
        true,
    );
    let mut realtime = native(
        "weatherapi-realtime",
        10,
        json!({
            "description": "The current conditions, as observed.",
            "argSchema": {
                "type": "object",
                "properties": {
                    "q": { "type": "string", "description": "The place, as location lookup gives it." }
                },
                "required": ["q"]
            }
        }),
    );
    realtime["version"] = json!("v2");
    env.put_tool("weatherapi", &realtime);

    let got = weather_picks(&env, &[]);
    assert_eq!(
        refs(&got),
        [
            "weatherapi/weatherapi-forecast@v1",
            "weatherapi/weatherapi-realtime@v2",
            "weatherapi/weatherapi-location-lookup@v1",
        ]
    );
    assert!(got[1].reason.starts_with("sibling of weatherapi-forecast"));
    assert_eq!(
        got[2].reason,
        "needed by weatherapi-realtime: its argument q names it"
    );
    assert_eq!(
        got[2].score, got[1].score,
        "the helper takes its pick's score"
    );
    // Without siblings, the real-time tool is no first pick: neither comes.
    let without = weather_picks(&env, &["--no-siblings"]);
    assert!(
        !refs(&without).contains(&"weatherapi/weatherapi-location-lookup@v1"),
        "{without:#?}"
    );
}
