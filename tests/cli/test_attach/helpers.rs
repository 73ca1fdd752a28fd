//! Helper tools: a match brings the tools its required arguments name, at its own
//! score, and only when it passes `--min-score` itself.

use super::*;

/// A native tool of `bundle` with a description and an argument schema; returns it as made.
fn made(env: &TestEnv, bundle: &str, slug: &str, description: &str, args: Value) -> Made {
    let put = env.put_tool(
        bundle,
        &tool_doc_with(
            slug,
            "v1",
            json!({ "description": description, "argSchema": args }),
        ),
    );
    Made {
        reference: put["ref"].as_str().unwrap().to_owned(),
        tool_id: put["toolID"].as_str().unwrap().to_owned(),
        bundle_id: put["bundleID"].as_str().unwrap().to_owned(),
        slug: slug.to_owned(),
    }
}

/// `search-flights`, whose required `fromId` names `find-airport-code`, which shares no word
/// with [`QUERY`].
fn flights() -> (TestEnv, Made, Made) {
    let env = TestEnv::new();
    env.bundle("flights");
    let helper = made(
        &env,
        "flights",
        "find-airport-code",
        "Codes of airports and cities by name.",
        json!({ "type": "object" }),
    );
    let consumer = made(
        &env,
        "flights",
        "search-flights",
        "Search flights between two places on a date.",
        json!({
            "type": "object",
            "properties": {
                "fromId": {
                    "type": "string",
                    "description": "The origin, as Find Airport Code gives it."
                }
            },
            "required": ["fromId"]
        }),
    );
    (env, consumer, helper)
}

const QUERY: &str = "search flights from Oslo to Rome";

#[test]
fn a_match_attaches_with_the_tool_its_required_argument_names() {
    let (env, consumer, helper) = flights();
    let out = attach_ok(&env, &agent(1), &["--query", QUERY], &[]);
    let score = score_of(&out, &consumer).expect("the match attaches");
    assert_eq!(score_of(&out, &helper), Some(score), "{}", out.run);
    assert!(refs_of(&out.after).contains(&helper.reference));

    let out = attach_ok(&env, &agent(2), &["--query", QUERY, "--no-helpers"], &[]);
    assert!(score_of(&out, &consumer).is_some());
    assert_eq!(score_of(&out, &helper), None, "{}", out.run);
}

#[test]
fn a_helper_does_not_attach_when_its_match_stays_under_min_score() {
    let (env, consumer, helper) = flights();
    let out = attach_ok(&env, &agent(1), &["--query", QUERY], &[]);
    let score = score_of(&out, &consumer).unwrap();
    let above = format!("{}", (score + 1.0).min(100.0));
    let out = attach_ok(
        &env,
        &agent(2),
        &["--query", QUERY, "--min-score", &above],
        &[],
    );
    assert_eq!(score_of(&out, &consumer), None, "{}", out.run);
    assert_eq!(score_of(&out, &helper), None, "{}", out.run);
    assert_eq!(out.resp.details.passed_filter_count, 0, "{}", out.run);
}
