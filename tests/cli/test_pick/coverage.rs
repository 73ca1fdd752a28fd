//! Coverage: a sentence that asks for two things gets a tool for each among its
//! first picks, not only tools for the first thing.

use super::*;

/// Asks for flights (three tools match it well) and for a taxi (one tool, which matches
/// less of the request than each flight tool).
const TRIP: &str = "find cheap flights from the Boston airport to the Oslo airport and then a taxi";

/// Flight tools that match "cheap", "flights" and "airport"; a ride tool whose long
/// description holds "taxi" once; and unrelated tools, so the words' IDF is a catalog's.
fn trip() -> TestEnv {
    trip_with((
        "ride-booking",
        "Book a ride in a city: a car, a bus, a taxi or a shuttle from a hotel, a station or a port to an address.",
    ))
}

/// [`trip`] with another ride tool (its slug and description) in the fourth place.
fn trip_with(ride: (&str, &str)) -> TestEnv {
    let env = TestEnv::new();
    without_builtins(&env);
    env.bundle("travel");
    let tools = [
        (
            "flight-search",
            "Search cheap flights from an airport to an airport.",
        ),
        (
            "flight-prices",
            "Cheap prices of flights from an airport to an airport.",
        ),
        (
            "flight-status",
            "Whether flights from an airport to an airport leave on time.",
        ),
        ride,
        ("weather-now", "The weather in a city."),
        ("stock-quote", "The price of a share."),
        ("translate-text", "Translate text into another language."),
        ("send-email", "Send an email message."),
        ("convert-units", "Convert a quantity between units."),
        ("news-headlines", "The latest news headlines."),
    ];
    for (n, (slug, description)) in tools.iter().enumerate() {
        env.put_tool(
            "travel",
            &native(slug, n as u32 + 1, json!({ "description": description })),
        );
    }
    env
}

fn bm25(env: &TestEnv, query: &str, args: &[&str]) -> Vec<Pick> {
    let mut all = vec![query, "--scorer", "bm25", "--coverage"];
    all.extend_from_slice(args);
    picks(env, &all)
}

#[test]
fn a_sentence_asking_for_two_things_gets_a_tool_for_each_among_its_first_picks() {
    let env = trip();
    let by_relevance = bm25(
        &env,
        TRIP,
        &["--no-coverage", "--no-siblings", "--max", "4"],
    );
    assert_eq!(
        refs(&by_relevance),
        [
            "travel/flight-search@v1",
            "travel/flight-prices@v1",
            "travel/flight-status@v1",
            "travel/ride-booking@v1"
        ],
        "each flight tool is more relevant than the ride tool"
    );
    // Coverage is not among the default steps: without `--coverage`, relevance alone.
    let default = picks(&env, &[TRIP, "--scorer", "bm25", "--max", "4"]);
    assert_eq!(refs(&default), refs(&by_relevance));

    // Coverage alone: the three flight tools are one family (`flight-…`), so with siblings on
    // the first two lift `flight-status` back above the ride tool (see test_pick::siblings).
    let got = bm25(&env, TRIP, &["--debug", "--no-siblings"]);
    assert_eq!(
        refs(&got),
        [
            "travel/flight-search@v1",
            "travel/flight-prices@v1",
            "travel/ride-booking@v1"
        ]
    );
    // The scores still fall: the tool coverage moved takes the score of its place, says so,
    // and keeps its own and its place by relevance in the provenance.
    assert_eq!(scores(&got), scores(&by_relevance[..3]));
    let ride = &got[2];
    assert!(
        ride.reason
            .ends_with("placed before more relevant tools (relevance rank 4) for words of the task the picks above do not hold"),
        "{}",
        ride.reason
    );
    let provenance = ride.provenance.as_ref().unwrap();
    assert_eq!(
        provenance["coverage"],
        json!({ "relevanceRank": 4, "ownScore": by_relevance[3].score })
    );
    assert!(by_relevance[3].score < ride.score);
    for unmoved in &got[..2] {
        assert!(
            unmoved
                .provenance
                .as_ref()
                .unwrap()
                .get("coverage")
                .is_none()
        );
        assert!(
            !unmoved.reason.contains("placed before"),
            "{}",
            unmoved.reason
        );
    }
}

#[test]
fn a_sentence_asking_for_one_thing_keeps_the_relevance_order() {
    let env = trip();
    let query = "find cheap flights from the Boston airport to Oslo";
    let covered = bm25(&env, query, &["--max", "5"]);
    let plain = bm25(&env, query, &["--max", "5", "--no-coverage"]);
    assert_eq!(
        refs(&covered),
        [
            "travel/flight-search@v1",
            "travel/flight-prices@v1",
            "travel/flight-status@v1"
        ]
    );
    assert_eq!(refs(&covered), refs(&plain));
}

#[test]
fn a_name_like_query_is_not_covered() {
    let env = trip();
    // Two words: the search tiers rank them, and coverage leaves them be.
    let covered = bm25(&env, "flight taxi", &["--debug", "--max", "4"]);
    let plain = bm25(&env, "flight taxi", &["--no-coverage", "--max", "4"]);
    assert!(!covered.is_empty());
    assert_eq!(refs(&covered), refs(&plain));
    assert!(
        covered
            .iter()
            .all(|p| p.provenance.as_ref().unwrap().get("coverage").is_none())
    );
}

/// `hybrid` covers a sentence too: its ranking fuses BM25F with the embeddings, and the
/// first picks are chosen from its 40 best for what they add of the task's words (BM25F's
/// shares) and their fused score. The taxi tool is short, so BM25F alone puts it second; the
/// (bag-of-words) embeddings find it far from a request about flights and put it fourth.
#[tokio::test(flavor = "multi_thread")]
async fn hybrid_covers_a_sentence_asking_for_two_things() {
    let server = embeddings_server().await;
    let env = trip_with(("taxi-booking", "Book a taxi."));
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag" }),
    );
    let hybrid = |query: &str, args: &[&str]| {
        let mut all = vec![query, "--scorer", "hybrid", "--coverage", "--debug"];
        all.extend_from_slice(args);
        picks(&env, &all)
    };
    let by_relevance = hybrid(TRIP, &["--no-coverage", "--max", "4"]);
    assert_eq!(
        refs(&by_relevance),
        [
            "travel/flight-search@v1",
            "travel/flight-prices@v1",
            "travel/flight-status@v1",
            "travel/taxi-booking@v1"
        ],
        "by the fused score each flight tool comes before the ride tool"
    );
    assert!(
        by_relevance
            .iter()
            .all(|p| p.provenance.as_ref().unwrap().get("coverage").is_none())
    );

    let got = hybrid(TRIP, &[]);
    assert_eq!(
        refs(&got),
        [
            "travel/flight-search@v1",
            "travel/flight-prices@v1",
            "travel/taxi-booking@v1"
        ]
    );
    // As with bm25: the moved tool takes the score of its place and says why; its own fused
    // score and its place by the fused score are in the provenance, beside hybrid's details.
    assert_eq!(scores(&got), scores(&by_relevance[..3]));
    let taxi = &got[2];
    assert_eq!(
        taxi.reason,
        "hybrid (search relevance + semantic); placed before more relevant tools (relevance rank 4) for words of the task the picks above do not hold"
    );
    let provenance = taxi.provenance.as_ref().unwrap();
    assert_eq!(provenance["scorer"], "hybrid");
    assert_eq!(
        provenance["coverage"],
        json!({ "relevanceRank": 4, "ownScore": by_relevance[3].score })
    );
    assert_eq!(
        provenance["details"],
        by_relevance[3].provenance.as_ref().unwrap()["details"]
    );

    // A name-like query asks for one thing: the fused order stands.
    let covered = hybrid("flight taxi", &["--max", "4"]);
    let plain = hybrid("flight taxi", &["--max", "4", "--no-coverage"]);
    assert_eq!(covered, plain);
}
