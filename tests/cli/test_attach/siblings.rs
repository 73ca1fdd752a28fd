//! Sibling tools: a match lifts the tools of its bundle whose names begin with the
//! same word and that match the request a little, at the key `pick` gives them, worked out
//! from the absolute scores: a sibling passes `--min-score` only with its match or on its own.

use super::*;

/// The forecast tool matches it strongly; the real-time tool by "current" only, less than
/// the three tools about Paris (which hold "paris" in their names).
const QUERY: &str = "forecast and current weather for Paris";

/// No built-in tools; bundle `river` with a tool matching "current" too; bundle `weatherapi`
/// with `weatherapi-forecast` and `weatherapi-realtime`; bundle `city` with three tools about
/// Paris whose names begin with three different words.
fn weather() -> (TestEnv, Made, Made) {
    let env = TestEnv::new();
    env.edit_config(|config| config["builtin"]["isEnabled"] = json!(false));
    env.bundle("river");
    make(&env, "river", "river-current", "The current of a river.");
    env.bundle("weatherapi");
    let forecast = make(
        &env,
        "weatherapi",
        "weatherapi-forecast",
        "Weather forecast for a city: the forecast of the next days.",
    );
    let realtime = make(
        &env,
        "weatherapi",
        "weatherapi-realtime",
        "The current conditions, as observed.",
    );
    env.bundle("city");
    for (slug, words) in [
        ("sights-of-paris", "What to see in Paris."),
        ("events-in-paris", "What is on in Paris this week."),
        ("metro-of-paris", "Lines and stations of the Paris metro."),
    ] {
        make(&env, "city", slug, words);
    }
    (env, forecast, realtime)
}

/// The real-time tool's own score × 100, as `pick` gives it without siblings and coverage
/// (which attach does not use).
fn own_score(env: &TestEnv, realtime: &Made) -> f64 {
    let picked = env.json(&[
        "pick",
        QUERY,
        "--no-siblings",
        "--no-coverage",
        "--max",
        "10",
        "--min-score",
        "0.000001",
        "--debug",
    ]);
    let items = picked["items"].as_array().unwrap();
    let item = items
        .iter()
        .find(|p| p["ref"] == realtime.reference.as_str())
        .unwrap_or_else(|| panic!("{picked}"));
    // What attach compares: the absolute score (`fused` ranks by one normalised per request).
    let details = &item["provenance"]["details"];
    100.0
        * details["absolute"]
            .as_f64()
            .unwrap_or_else(|| panic!("{picked}"))
}

#[test]
fn a_match_attaches_with_its_sibling_and_not_with_no_siblings() {
    let (env, forecast, realtime) = weather();
    let args = [
        "--siblings",
        "--query",
        QUERY,
        "--limit",
        "3",
        "--min-score",
        "1",
    ];
    let out = attach_ok(&env, &agent(1), &args, &[]);
    let anchor = score_of(&out, &forecast).expect("the match attaches");
    let key = score_of(&out, &realtime).unwrap_or_else(|| panic!("{}", out.run));
    let own = own_score(&env, &realtime);
    assert!(own < key && key < anchor, "{own} {key} {anchor}");
    // Its key: own + 0.4 × the match's (both × 100).
    assert!(
        (key - (own + 0.4 * anchor)).abs() < 0.02,
        "{own} {key} {anchor}"
    );
    assert!(refs_of(&out.after).contains(&realtime.reference));

    let out = attach_ok(
        &env,
        &agent(2),
        &[&args[..], &["--no-siblings"]].concat(),
        &[],
    );
    assert!(score_of(&out, &forecast).is_some());
    assert_eq!(score_of(&out, &realtime), None, "{}", out.run);

    // Sibling tools are off by default: without `--siblings`, the match attaches alone.
    let out = attach_ok(&env, &agent(3), &args[1..], &[]);
    assert!(score_of(&out, &forecast).is_some());
    assert_eq!(score_of(&out, &realtime), None, "{}", out.run);
}

#[test]
fn a_sibling_passes_min_score_at_its_key_never_above_its_match() {
    let (env, forecast, realtime) = weather();
    let out = attach_ok(
        &env,
        &agent(1),
        &["--siblings", "--query", QUERY, "--min-score", "1"],
        &[],
    );
    let anchor = score_of(&out, &forecast).unwrap();
    let key = score_of(&out, &realtime).unwrap();
    let own = own_score(&env, &realtime);
    // Between its own score and its key: it passes.
    let between = format!("{}", (own + key) / 2.0);
    let out = attach_ok(
        &env,
        &agent(2),
        &["--siblings", "--query", QUERY, "--min-score", &between],
        &[],
    );
    assert!(score_of(&out, &realtime).is_some(), "{}", out.run);
    // Between its key and its match's: the match passes alone.
    let between = format!("{}", (key + anchor) / 2.0);
    let out = attach_ok(
        &env,
        &agent(3),
        &["--siblings", "--query", QUERY, "--min-score", &between],
        &[],
    );
    assert!(score_of(&out, &forecast).is_some(), "{}", out.run);
    assert_eq!(score_of(&out, &realtime), None, "{}", out.run);
    // Above its match's: neither.
    let above = format!("{}", (anchor + 1.0).min(100.0));
    let out = attach_ok(
        &env,
        &agent(4),
        &["--siblings", "--query", QUERY, "--min-score", &above],
        &[],
    );
    assert_eq!(out.resp.details.passed_filter_count, 0, "{}", out.run);
}
