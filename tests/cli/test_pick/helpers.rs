//! Helper tools: the tools a pick's required arguments name come right after it.

use super::*;

/// What the flights request ranks, by the keyword scorer: `search-flights` first (both words
/// in its name), `flight-status` (a word in its name and description), `search-hotels` (one
/// in its name).
/// `find-airport-code` shares no word with the request: only `search-flights`'s `fromId`
/// brings it.
const FLIGHTS: &str = "search flights from Oslo to Rome";

/// An HTTP GET tool (safe) with a description and an argument schema.
fn get(slug: &str, n: u32, description: &str, args: Value) -> Value {
    http(
        slug,
        n,
        "GET",
        json!({ "description": description, "argSchema": args }),
    )
}

/// Bundle `flights` with a consumer naming `find-airport-code` in a required argument and
/// `get-cabin-classes` in an optional one, `flight-status` naming an unsafe helper; bundle
/// `other`, registered first, with a `find-airport-code` of its own.
fn flights() -> TestEnv {
    let env = TestEnv::new();
    without_builtins(&env);
    env.edit_config(|config| config["allowedHosts"] = json!(["api.example.com"]));
    env.bundle("other");
    env.put_tool(
        "other",
        &get(
            "find-airport-code",
            1,
            "Another API's airport codes.",
            json!({ "type": "object" }),
        ),
    );
    env.bundle("flights");
    for doc in [
        get(
            "find-airport-code",
            2,
            "Codes of airports and cities by name.",
            json!({
                "type": "object",
                "properties": { "name": { "type": "string", "description": "A city." } },
                "required": ["name"]
            }),
        ),
        get(
            "get-cabin-classes",
            3,
            "The cabin classes an airline sells.",
            json!({ "type": "object" }),
        ),
        http(
            "departure-number-lookup",
            4,
            "POST",
            json!({ "description": "Numbers of scheduled departures." }),
        ),
        get(
            "search-flights",
            5,
            "Between two places on a date.",
            json!({
                "type": "object",
                "properties": {
                    "fromId": {
                        "type": "string",
                        "description": "The origin's id: `fromId` can be retrieved from api/v1/searchDestination (Find Airport Code) endpoint."
                    },
                    "date": { "type": "string", "description": "The day." },
                    "cabin": {
                        "type": "string",
                        "description": "One of those that getCabinClasses gives."
                    }
                },
                "required": ["fromId", "date"]
            }),
        ),
        get(
            "flight-status",
            6,
            "Whether flights leave on time.",
            json!({
                "type": "object",
                "properties": {
                    "number": {
                        "type": "string",
                        "description": "As the departure_number_lookup tool gives it."
                    }
                },
                "required": ["number"]
            }),
        ),
        get(
            "search-hotels",
            7,
            "Hotels in a city.",
            json!({ "type": "object" }),
        ),
    ] {
        env.put_tool("flights", &doc);
    }
    env
}

#[test]
fn a_required_argument_naming_a_tool_of_its_bundle_brings_it_right_after_its_pick() {
    let env = flights();
    let without = picks(&env, &[FLIGHTS, "--no-helpers"]);
    assert_eq!(
        refs(&without),
        [
            "flights/search-flights@v1",
            "flights/flight-status@v1",
            "flights/search-hotels@v1"
        ]
    );

    let got = picks(&env, &[FLIGHTS, "--debug"]);
    // Not `other`'s tool of the same name (registered first), not the tool only an optional
    // argument names, not the unsafe one `flight-status` names.
    assert_eq!(
        refs(&got),
        [
            "flights/search-flights@v1",
            "flights/find-airport-code@v1",
            "flights/flight-status@v1"
        ]
    );
    let (consumer, helper) = (&got[0], &got[1]);
    assert_eq!(
        helper.score, consumer.score,
        "a helper takes its pick's score"
    );
    assert_eq!(
        helper.reason,
        "needed by search-flights: its argument fromId names it"
    );
    let provenance = helper.provenance.as_ref().unwrap();
    assert_eq!(
        provenance["helper"],
        json!({
            "neededBy": "search-flights",
            "argument": "fromId",
            "phrase": "find airport code",
            "ownScore": 0.0
        })
    );
    assert_eq!(provenance["scorer"], "keyword");
    // The others are as the scorer left them.
    assert_eq!(
        (&got[0].reference, got[0].score, &got[0].reason),
        (&without[0].reference, without[0].score, &without[0].reason)
    );
    assert!(got[2].provenance.as_ref().unwrap().get("helper").is_none());
    assert_eq!(got[2].score, without[1].score);
}

#[test]
fn a_pick_of_one_stays_one_and_more_room_keeps_the_rest_in_order() {
    let env = flights();
    assert_eq!(
        refs(&picks(&env, &[FLIGHTS, "--max", "1"])),
        ["flights/search-flights@v1"]
    );
    assert_eq!(
        refs(&picks(&env, &[FLIGHTS, "--max", "4"])),
        [
            "flights/search-flights@v1",
            "flights/find-airport-code@v1",
            "flights/flight-status@v1",
            "flights/search-hotels@v1"
        ]
    );
}

#[test]
fn an_unsafe_helper_comes_only_with_allow_unsafe() {
    let env = flights();
    let got = picks(&env, &[FLIGHTS, "--allow-unsafe", "--max", "5"]);
    assert_eq!(
        refs(&got),
        [
            "flights/search-flights@v1",
            "flights/find-airport-code@v1",
            "flights/flight-status@v1",
            "flights/departure-number-lookup@v1",
            "flights/search-hotels@v1"
        ]
    );
    assert_eq!(
        got[3].reason,
        "needed by flight-status: its argument number names it"
    );
    let safe = picks(&env, &[FLIGHTS, "--max", "5"]);
    assert!(
        !refs(&safe).contains(&"flights/departure-number-lookup@v1"),
        "{safe:?}"
    );
}

#[test]
fn a_helper_ranked_above_its_pick_stays_there() {
    let env = flights();
    // The request is in the helper's name; `search-flights` has it in `fromId` only.
    let got = picks(&env, &["find airport code", "--max", "4"]);
    let at = |reference: &str| refs(&got).iter().position(|r| *r == reference);
    let helper = at("flights/find-airport-code@v1").unwrap();
    let consumer = at("flights/search-flights@v1").unwrap();
    assert!(helper < consumer, "{got:?}");
    assert!(!got[helper].reason.starts_with("needed by"), "{got:?}");
    assert_eq!(
        got.len(),
        refs(&got).iter().collect::<BTreeSet<_>>().len(),
        "no tool twice: {got:?}"
    );
}

#[test]
fn a_tool_of_another_bundle_or_one_an_optional_argument_names_is_never_brought() {
    let env = flights();
    let got = picks(&env, &[FLIGHTS, "--max", "10", "--min-score", "0.000001"]);
    let refs = refs(&got);
    assert!(!refs.contains(&"other/find-airport-code@v1"), "{refs:?}");
    assert!(!refs.contains(&"flights/get-cabin-classes@v1"), "{refs:?}");
    assert!(refs.contains(&"flights/find-airport-code@v1"), "{refs:?}");
}

#[test]
fn mcp_search_tools_ranks_through_pick_and_brings_the_helpers_too() {
    let env = flights();
    let found = search_tools(&env, FLIGHTS, 2);
    let picked = picks(&env, &[FLIGHTS, "--max", "2", "--allow-unsafe"]);
    assert_eq!(
        refs(&picked),
        ["flights/search-flights@v1", "flights/find-airport-code@v1"]
    );
    assert_eq!(found, names(&picked));
}

#[test]
fn on_the_fixture_catalog_update_event_brings_list_events_and_no_loose_phrase_brings_anything() {
    let env = TestEnv::fixture();
    // update-event's event_id: "ID of the event, as returned by list-events."
    let got = picks(
        &env,
        &[
            "move the standup to another time",
            "--scorer",
            "bm25",
            "--max",
            "2",
        ],
    );
    assert_eq!(
        refs(&got),
        ["calendar/update-event@v1", "calendar/list-events@v1"]
    );
    assert_eq!(
        got[1].reason,
        "needed by update-event: its argument event_id names it"
    );
    // add-issue-comment's number (an unsafe tool): "Issue or pull request number." names no tool:
    // `get-pull-request`'s last words follow no prefix the two share.
    let got = picks(
        &env,
        &[
            "leave review feedback on a pull request",
            "--scorer",
            "bm25",
            "--max",
            "10",
            "--allow-unsafe",
        ],
    );
    assert_eq!(refs(&got)[0], "github/add-issue-comment@v1");
    assert!(
        got.iter().all(|p| !p.reason.starts_with("needed by")),
        "{got:?}"
    );
}

/// Bundle `hotels`: `get-hotel-details` needs a `hotel_id` from `search-hotels`, which needs a
/// `dest_id` from `search-hotel-destination`; `get-hotel-photos` and `hotel-chains` match the
/// request better than either helper. `hotel-chains` and `hotel-brands` name each other.
fn hotels() -> TestEnv {
    let env = TestEnv::new();
    without_builtins(&env);
    env.edit_config(|config| config["allowedHosts"] = json!(["api.example.com"]));
    env.bundle("hotels");
    let needs = |argument: &str, tool: &str| {
        json!({
            "type": "object",
            "properties": { argument: {
                "type": "string",
                "description": format!("`{argument}` can be retrieved from the ({tool}) endpoint.")
            } },
            "required": [argument]
        })
    };
    for doc in [
        get(
            "get-hotel-details",
            1,
            "Details of one hotel: rooms, facilities.",
            needs("hotel_id", "Search Hotels"),
        ),
        get(
            "search-hotels",
            2,
            "Places to stay for a destination and dates.",
            needs("dest_id", "Search Hotel Destination"),
        ),
        get(
            "search-hotel-destination",
            3,
            "Destination ids by place name.",
            json!({ "type": "object" }),
        ),
        get(
            "get-hotel-photos",
            4,
            "Photos of one hotel, with details of each.",
            json!({ "type": "object" }),
        ),
        get(
            "hotel-chains",
            5,
            "Hotel chains and the details of their hotels.",
            needs("brand", "Hotel Brands"),
        ),
        get(
            "hotel-brands",
            6,
            "Brands of hotels.",
            needs("chain", "Hotel Chains"),
        ),
    ] {
        env.put_tool("hotels", &doc);
    }
    env
}

#[test]
fn a_helper_brings_its_own_helpers_right_after_it_each_once() {
    let env = hotels();
    let query = ["details of a hotel", "--max", "4"];
    let without = picks(&env, &[&query[..], &["--no-helpers"]].concat());
    assert_eq!(refs(&without)[0], "hotels/get-hotel-details@v1");
    assert!(
        !refs(&without).contains(&"hotels/search-hotel-destination@v1"),
        "{without:?}"
    );

    let got = picks(&env, &query);
    assert_eq!(
        refs(&got)[..3],
        [
            "hotels/get-hotel-details@v1",
            "hotels/search-hotels@v1",
            "hotels/search-hotel-destination@v1",
        ],
        "{got:?}"
    );
    assert_eq!(
        got[2].reason,
        "needed by search-hotels: its argument dest_id names it"
    );
    assert_eq!(got[2].score, got[0].score, "the first consumer's score");
    // Cut at --max: the helper's helper past it is not there, nor does it push anything out.
    let two = picks(&env, &["details of a hotel", "--max", "2"]);
    assert_eq!(
        refs(&two),
        ["hotels/get-hotel-details@v1", "hotels/search-hotels@v1"]
    );

    // Two tools that name each other: each comes once, and the pick ends.
    let got = picks(&env, &["hotel chains", "--max", "6"]);
    let refs = refs(&got);
    assert_eq!(
        refs[..2],
        ["hotels/hotel-chains@v1", "hotels/hotel-brands@v1"],
        "{got:?}"
    );
    assert_eq!(
        refs.len(),
        refs.iter().collect::<BTreeSet<_>>().len(),
        "no tool twice: {got:?}"
    );
}

/// Bundle `music`: `music-play-song` needs a `song_name`, which `music-lookup-song` returns and
/// does not take; `music-queue-song` returns one too but needs one itself, and
/// `music-lookup-album` returns none. Bundle `radio`, registered first, has its own
/// `music-lookup-song`.
fn music() -> TestEnv {
    let env = TestEnv::new();
    without_builtins(&env);
    env.edit_config(|config| config["allowedHosts"] = json!(["api.example.com"]));
    let tool = |slug: &str, n: u32, description: &str, args: Value, returns: &[&str]| {
        let properties: serde_json::Map<String, Value> = returns
            .iter()
            .map(|name| ((*name).to_owned(), json!({ "description": "A field." })))
            .collect();
        let output = json!({ "type": "object", "properties": properties });
        http(
            slug,
            n,
            "GET",
            json!({ "description": description, "argSchema": args, "outputSchema": output }),
        )
    };
    let song = json!({
        "type": "object",
        "properties": { "song_name": { "type": "string", "description": "Name of the song." } },
        "required": ["song_name"]
    });
    let artist = json!({ "type": "object", "properties": { "artist": { "type": "string" } } });
    env.bundle("radio");
    env.put_tool(
        "radio",
        &tool(
            "music-lookup-song",
            1,
            "Songs on air.",
            artist.clone(),
            &["song_name"],
        ),
    );
    env.bundle("music");
    for doc in [
        tool(
            "music-play-song",
            2,
            "Play the selected song on a device.",
            song.clone(),
            &["song_name"],
        ),
        tool(
            "music-queue-song",
            3,
            "Queue a song to play after this one.",
            song,
            &["song_name"],
        ),
        tool(
            "music-lookup-album",
            4,
            "Albums by an artist.",
            artist.clone(),
            &["album"],
        ),
        tool(
            "music-lookup-song",
            5,
            "Songs by artist or genre.",
            artist,
            &["song_name", "artist"],
        ),
    ] {
        env.put_tool("music", &doc);
    }
    env
}

#[test]
fn a_sibling_that_returns_a_required_argument_comes_right_after_its_pick() {
    let env = music();
    let query = "play the song Bohemian Rhapsody on the TV";
    let without = picks(&env, &[query, "--max", "2", "--no-helpers"]);
    assert_eq!(refs(&without)[0], "music/music-play-song@v1");
    assert_ne!(
        refs(&without)[1],
        "music/music-lookup-song@v1",
        "{without:?}"
    );

    let got = picks(&env, &[query, "--max", "2", "--debug"]);
    // Not the tool that needs a song itself, not the one that returns none, not another
    // bundle's tool of the same name.
    assert_eq!(
        refs(&got),
        ["music/music-play-song@v1", "music/music-lookup-song@v1"],
        "{got:?}"
    );
    assert_eq!(
        got[1].reason,
        "needed by music-play-song: returns its argument song_name"
    );
    assert_eq!(
        got[1].score, got[0].score,
        "a helper takes its pick's score"
    );
    let helper = &got[1].provenance.as_ref().unwrap()["helper"];
    assert_eq!(
        (&helper["neededBy"], &helper["argument"], &helper["phrase"]),
        (&json!("music-play-song"), &json!("song_name"), &Value::Null)
    );
}

#[test]
fn only_the_first_pick_brings_a_sibling_that_returns_what_it_needs() {
    let env = music();
    // A tool of another family ranks first; `music-play-song`, second, brings nothing.
    env.put_tool(
        "music",
        &http(
            "speaker-play-song",
            6,
            "GET",
            json!({ "description": "Play the song Bohemian Rhapsody on a speaker." }),
        ),
    );
    let query = "play the song Bohemian Rhapsody on a speaker";
    let got = picks(&env, &[query, "--max", "4"]);
    assert_eq!(
        refs(&got)[..2],
        ["music/speaker-play-song@v1", "music/music-play-song@v1"],
        "{got:?}"
    );
    assert!(
        got.iter().all(|p| !p.reason.starts_with("needed by")),
        "{got:?}"
    );
}
