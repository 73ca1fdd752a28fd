//! Helper tools: the tools a picked tool's own documentation says it needs.
//!
//! A required argument often says which tool its value comes from: NESTFUL's `Search_Flights`
//! documents `fromId` as "can be retrieved from api/v1/flights/searchDestination (Search
//! Flight Location) endpoint". A model handed `Search_Flights` alone cannot fill `fromId`;
//! handed `Search_Flight_Location` too, it can. The request never mentions that tool, so no
//! ranking of the request finds it. After the ranking, each of the first [`CONSUMERS`] picks
//! (the consumers) brings up to [`PER_CONSUMER`] of the tools its required arguments name:
//! those the scorer ranks higher first, then in registration order. A helper takes its
//! consumer's score and comes right after it, ahead of everything the consumer outranks; one
//! already ranked above its consumer stays where it is. A helper is a consumer too: its own
//! helpers come right after it (NESTFUL's `Get_Hotel_Details` needs a `hotel_id` from
//! `Search_Hotels`, which needs a `dest_id` from `Search_Hotel_Destination`), each tool's helpers
//! added once, and none past the cut.
//!
//! **What names a tool.** An argument's description names a tool when it holds, as
//! consecutive whole words, the words of the tool's slug: all of them, or those after the
//! first words it shares with the consumer's slug (a vendor's prefix:
//! `TripadvisorSearchHotels` names `TripadvisorSearchLocation` by "search location"), at least
//! [`MIN_WORDS`] either way (`weather` is named by nothing: one word is no name; and
//! `add-issue-comment`'s "issue or pull request number" does not name `get-pull-request`). Both sides are split as the index splits text
//! ([`words`]: at `_`, `-`, `.`, spaces and camelCase, folded). Words compare whole and as
//! written, without stemming: "search flight locations" does not name `search-flight-location`
//! (a plural names a kind of thing more often than a tool). A name inside a longer name at the
//! same place does not count: "search hotels by coordinates" names
//! `Search_Hotels_By_Coordinates`, not `Search_Hotels` too; but NESTFUL's `hotel_id` "can be
//! retrieved from (Search Hotels) or (Search Hotels By Coordinates)" names both.
//!
//! **What returns an argument.** A required argument no description names a tool for may
//! come from a sibling ([`producers`]: a tool of the same bundle and family word,
//! [`siblings::family_word`]) whose `outputSchema` has a property of the argument's name that
//! it does not need itself. Only the first pick brings them, after its named ones, within
//! [`PER_CONSUMER`].
//!
//! **Which tools.** Only required arguments (an optional one can be left out, so its tool is
//! not needed), only tools of the consumer's own bundle folder (a name means a tool of the API
//! that uses it; another bundle's `search-flight-location` is another API's), and only tools
//! `pick` may return anyway: usable, the version that stands for its slug, safe unless unsafe
//! ones are allowed.
//!
//! **Cost.** The consumers' own `tool.json` (the first three picks' and those of the helpers
//! before the cut, so never more files than picks; read as JSON, not checked again) and the
//! slugs of their bundles, an indexed read of those bundles alone (shared with the siblings,
//! [`Bundles`]): never a pass over the catalog.

use super::{Bundles, Matches, siblings};
use crate::catalog::Catalog;
use crate::index::text::words;
use crate::index::{self, Index, Registration};
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};

/// How many of the first picks bring their helpers.
pub const CONSUMERS: usize = 3;
/// The most helpers one consumer brings.
pub const PER_CONSUMER: usize = 2;
/// The fewest words of a tool's name that name it.
pub const MIN_WORDS: usize = 2;

/// Why a helper was added.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    /// The index row of the pick that needs it.
    pub consumer: i64,
    /// The consumer's ranking key (its score), which the helper takes.
    pub key: f64,
    /// The required argument whose value the helper gives.
    pub argument: String,
    /// The words of the argument's description that name it, space separated; `None` when
    /// it is a sibling that returns the argument ([`producers`]).
    pub phrase: Option<String>,
}

/// The phrases by which the tool with slug `by` names the tool with slug `name`: `name`'s
/// words, then its words after the first ones `by` begins with too, longest first, none
/// shorter than [`MIN_WORDS`].
pub fn name_phrases(name: &str, by: &str) -> Vec<Vec<String>> {
    let (words, by) = (words(name), words(by));
    let shared = words.iter().zip(&by).take_while(|(a, b)| a == b).count();
    (MIN_WORDS..=words.len())
        .rev()
        .filter(|n| *n == words.len() || words.len() - n <= shared)
        .map(|n| words[words.len() - n..].to_vec())
        .collect()
}

/// The required arguments of a tool's `argSchema`, each with its description's words, in the
/// schema's order. Those without a description name nothing and are left out.
pub fn required_arguments(arg_schema: &Value) -> Vec<(String, Vec<String>)> {
    let Some(required) = arg_schema.get("required").and_then(Value::as_array) else {
        return Vec::new();
    };
    let properties = arg_schema.get("properties");
    required
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|name| {
            let description = properties?.get(name)?.get("description")?.as_str()?;
            Some((name.to_owned(), words(description)))
        })
        .collect()
}

/// The names of the required arguments of a tool's `argSchema`, in the schema's order.
pub fn required_names(arg_schema: &Value) -> Vec<&str> {
    arg_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether a tool of `argSchema` `arg_schema` and `outputSchema` `output_schema` returns a
/// value named `argument` without needing one: a property of its output, not a required
/// argument of its own.
pub fn returns(arg_schema: &Value, output_schema: &Value, argument: &str) -> bool {
    let out = output_schema
        .get("properties")
        .is_some_and(|p| p.get(argument).is_some());
    out && !required_names(arg_schema).contains(&argument)
}

/// The `argSchema` and `outputSchema` (`null` when absent) of the tool stored at `path` (as
/// the index names it), if it can be read. Read as JSON only: loading a tool
/// ([`Catalog::tool_at`]) checks it whole, compiling its JSON Schemas, which costs more than
/// the pick (the index checked it when it listed it).
fn schemas(catalog: &Catalog, path: &str) -> Option<(Value, Value)> {
    if path.starts_with("builtin:") {
        let tool = catalog.tool_at(path).ok()??.tool;
        let or_null = |v: Option<Value>| v.unwrap_or(Value::Null);
        return Some((or_null(tool.arg_schema), or_null(tool.output_schema)));
    }
    let root = catalog.root();
    let text = crate::catalog::read_tool_text(&root.join(path), root).ok()??;
    let mut doc: Value = serde_json::from_str(&text).ok()?;
    let mut take = |key: &str| doc.get_mut(key).map_or(Value::Null, Value::take);
    Some((take("argSchema"), take("outputSchema")))
}

/// A tool named by a consumer's argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub slug: String,
    pub argument: String,
    /// `None`: the tool returns the argument rather than being named by it.
    pub phrase: Option<String>,
}

/// A place where an argument's description names a tool.
#[derive(Debug, Clone, Copy)]
struct Place {
    /// Which of the slugs.
    slug: usize,
    /// Which argument, and the words of its description the name spans.
    argument: usize,
    start: usize,
    len: usize,
}

impl Place {
    /// Whether `self` lies inside `other`, a longer name at the same place.
    fn inside(&self, other: &Place) -> bool {
        self.argument == other.argument
            && other.start <= self.start
            && self.start + self.len <= other.start + other.len
            && other.len > self.len
    }
}

/// The slugs of `slugs` (other than `own`) that `arguments` name (see the module comment), in
/// the order of `slugs`; each with the argument and phrase of the longest place that names
/// it (of equal ones, the first argument's). A name inside a longer name at the same place
/// does not count.
pub fn named_slugs<'a>(
    arguments: &[(String, Vec<String>)],
    own: &str,
    slugs: impl IntoIterator<Item = &'a str>,
) -> Vec<Named> {
    let slugs: Vec<&str> = slugs.into_iter().filter(|s| *s != own).collect();
    let mut places = Vec::new();
    for (slug, name) in slugs.iter().enumerate() {
        let phrases = name_phrases(name, own);
        for (argument, (_, text)) in arguments.iter().enumerate() {
            for start in 0..text.len() {
                // The longest of its phrases that starts here (they come longest first).
                if let Some(phrase) = phrases.iter().find(|p| text[start..].starts_with(p)) {
                    places.push(Place {
                        slug,
                        argument,
                        start,
                        len: phrase.len(),
                    });
                }
            }
        }
    }
    let mut best: Vec<Option<Place>> = vec![None; slugs.len()];
    for place in &places {
        if places.iter().any(|other| place.inside(other)) {
            continue;
        }
        let slot = &mut best[place.slug];
        if slot.is_none_or(|b| place.len > b.len) {
            *slot = Some(*place);
        }
    }
    best.into_iter()
        .flatten()
        .map(|place| {
            let (argument, text) = &arguments[place.argument];
            Named {
                slug: slugs[place.slug].to_owned(),
                argument: argument.clone(),
                phrase: Some(text[place.start..place.start + place.len].join(" ")),
            }
        })
        .collect()
}

/// Put the helpers of the first [`CONSUMERS`] of `ranked` (best first, each with its ranking
/// key) after them, and the helpers of those helpers after them in turn, as the module comment
/// says, and cut the ranking to `n`. Returns why each helper now in the ranking is there, by
/// index row.
pub fn add(
    catalog: &Catalog,
    index: &Index,
    matches: &mut Matches,
    bundles: &mut Bundles<'_>,
    ranked: &mut Vec<(Registration, f64)>,
    n: usize,
    allow_unsafe: bool,
) -> index::Result<HashMap<i64, Need>> {
    // The tools whose helpers are to be added, in turn, each once: the first picks, then each
    // helper as it comes (a helper needs what it needs, whoever needs it).
    let mut consumers: VecDeque<(i64, f64)> = ranked
        .iter()
        .take(CONSUMERS)
        .map(|(r, key)| (r.id, *key))
        .collect();
    let mut seen: HashSet<i64> = consumers.iter().map(|(id, _)| *id).collect();
    let mut needs: HashMap<i64, Need> = HashMap::new();
    while let Some((consumer, key)) = consumers.pop_front() {
        // A consumer past the cut brings nothing that would stay; one the index no longer
        // lists live is not read.
        let Some(at) = ranked.iter().position(|(r, _)| r.id == consumer) else {
            continue;
        };
        if at >= n {
            continue;
        }
        let Some(row) = index.rows_by_id(&[consumer], false)?.pop() else {
            continue;
        };
        // Only the first pick brings the siblings that return what it needs: a request's
        // best tool is the one it most surely needs; those after it are often another API's
        // tool for the same job, whose siblings would push the right ones out.
        let first = at == 0;
        let helpers = helpers_of(catalog, index, matches, bundles, &row, first, allow_unsafe)?;
        for (helper, named) in helpers {
            let at = ranked
                .iter()
                .position(|(r, _)| r.id == consumer)
                .unwrap_or(ranked.len());
            // After the consumer and the helpers it already brought.
            let mut place = at + 1;
            while ranked
                .get(place)
                .is_some_and(|(r, _)| needs.get(&r.id).is_some_and(|n| n.consumer == consumer))
            {
                place += 1;
            }
            match ranked.iter().position(|(r, _)| r.id == helper.id) {
                Some(p) if p < at => continue,
                Some(p) => {
                    ranked.remove(p);
                    if p < place {
                        place -= 1;
                    }
                }
                None => {}
            }
            needs.insert(
                helper.id,
                Need {
                    consumer,
                    key,
                    argument: named.argument,
                    phrase: named.phrase,
                },
            );
            if seen.insert(helper.id) {
                consumers.push_back((helper.id, key));
            }
            ranked.insert(place, (helper, key));
        }
    }
    ranked.truncate(n);
    needs.retain(|id, _| ranked.iter().any(|(r, _)| r.id == *id));
    Ok(needs)
}

/// The helpers of the tool at index row `row`: at most [`PER_CONSUMER`] tools, first those its
/// required arguments name (ranked higher by the scorer first, then in registration order),
/// then, `with_producers`, the siblings that return an argument no description names a tool
/// for ([`producers`]), each with why.
fn helpers_of(
    catalog: &Catalog,
    index: &Index,
    matches: &mut Matches,
    bundles: &mut Bundles<'_>,
    row: &index::ToolRow,
    with_producers: bool,
    allow_unsafe: bool,
) -> index::Result<Vec<(Registration, Named)>> {
    // A file that cannot be read now brings no helper; the pick itself stands.
    let Some((arg_schema, _)) = schemas(catalog, &row.path) else {
        return Ok(Vec::new());
    };
    let required = required_names(&arg_schema);
    if required.is_empty() {
        return Ok(Vec::new());
    }
    let arguments = required_arguments(&arg_schema);
    let tools = bundles.slugs(index, &row.bundle_dir)?;
    let mut slugs: Vec<&str> = tools.iter().map(|(_, slug)| slug.as_str()).collect();
    slugs.sort_unstable();
    slugs.dedup();
    let named = named_slugs(&arguments, &row.slug, slugs);
    let mut found = Vec::new();
    if !named.is_empty() {
        let mut why: HashMap<String, Named> =
            named.into_iter().map(|n| (n.slug.clone(), n)).collect();
        let slug_of: HashMap<i64, &str> = tools
            .iter()
            .filter(|(_, slug)| why.contains_key(slug.as_str()))
            .map(|(id, slug)| (*id, slug.as_str()))
            .collect();
        // In the bundle's order, which `candidates` keeps.
        let ids: Vec<i64> = tools
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| slug_of.contains_key(id))
            .collect();
        let mut helpers = bundles.candidates(index, &ids, allow_unsafe)?;
        let helper_ids: Vec<i64> = helpers.iter().map(|r| r.id).collect();
        matches.settle(index, &helper_ids)?;
        // Ranked higher by the scorer first, then registration order (`helpers` is in it).
        helpers.sort_by(|a, b| matches.score(b.id).total_cmp(&matches.score(a.id)));
        helpers.truncate(PER_CONSUMER);
        found.extend(helpers.into_iter().filter_map(|helper| {
            let named = why.remove(*slug_of.get(&helper.id)?)?;
            Some((helper, named))
        }));
    }
    if with_producers && found.len() < PER_CONSUMER {
        let given: Vec<&str> = found.iter().map(|(_, n)| n.argument.as_str()).collect();
        let open: Vec<&str> = required
            .into_iter()
            .filter(|a| !given.contains(a))
            .collect();
        let taken: Vec<i64> = found.iter().map(|(r, _)| r.id).collect();
        let more = producers(
            catalog,
            index,
            matches,
            bundles,
            row,
            &tools,
            &open,
            allow_unsafe,
        )?;
        let room = PER_CONSUMER - found.len();
        found.extend(
            more.into_iter()
                .filter(|(r, _)| !taken.contains(&r.id))
                .take(room),
        );
    }
    Ok(found)
}

/// The most siblings whose `tool.json` one consumer reads for [`producers`].
pub const PRODUCER_READS: usize = 8;

/// The siblings of the tool at `row` ([`siblings::kin`]: its bundle's tools named alike)
/// that return one of its required arguments `open` without taking it (an `outputSchema`
/// property of that name that is not a required argument of their own): sgd's
/// `Music.PlaySong` needs a `song_name`, which `Music.LookupSong` returns. The request names
/// the song to play, rarely the search that finds its exact name. Of the siblings the index
/// knows return something, at most [`PRODUCER_READS`] are read, those the scorer ranks higher
/// first; each found one comes with the first of `open` it returns, in that order.
#[allow(clippy::too_many_arguments)]
fn producers(
    catalog: &Catalog,
    index: &Index,
    matches: &mut Matches,
    bundles: &Bundles<'_>,
    row: &index::ToolRow,
    tools: &[(i64, String)],
    open: &[&str],
    allow_unsafe: bool,
) -> index::Result<Vec<(Registration, Named)>> {
    if open.is_empty() {
        return Ok(Vec::new());
    }
    let kin = siblings::kin(tools, row);
    if kin.is_empty() {
        return Ok(Vec::new());
    }
    // Only those that say what they return are read.
    let kin = index.with_output(&kin)?;
    let mut kin = bundles.candidates(index, &kin, allow_unsafe)?;
    let kin_ids: Vec<i64> = kin.iter().map(|r| r.id).collect();
    matches.settle(index, &kin_ids)?;
    kin.sort_by(|a, b| matches.score(b.id).total_cmp(&matches.score(a.id)));
    kin.truncate(PRODUCER_READS);
    let ids: Vec<i64> = kin.iter().map(|r| r.id).collect();
    let rows: HashMap<i64, index::ToolRow> = index
        .rows_by_id(&ids, false)?
        .into_iter()
        .map(|r| (r.id, r))
        .collect();
    let mut found = Vec::new();
    for helper in kin {
        let Some(tool) = rows.get(&helper.id) else {
            continue;
        };
        let Some((args, output)) = schemas(catalog, &tool.path) else {
            continue;
        };
        if let Some(argument) = open.iter().find(|a| returns(&args, &output, a)) {
            let named = Named {
                slug: tool.slug.clone(),
                argument: (*argument).to_owned(),
                phrase: None,
            };
            found.push((helper, named));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> Vec<String> {
        words(s)
    }

    fn phrases(name: &str, by: &str) -> Vec<String> {
        name_phrases(name, by).iter().map(|p| p.join(" ")).collect()
    }

    #[test]
    fn a_name_is_its_words_then_those_after_a_prefix_shared_with_the_namer() {
        // camelCase, `-`, `.` and spaces split as the index splits them.
        assert_eq!(
            phrases("TripadvisorSearchLocation", "TripadvisorSearchHotels"),
            ["tripadvisor search location", "search location"]
        );
        assert_eq!(
            phrases("Search_Flight_Location", "Search_Flights"),
            ["search flight location", "flight location"]
        );
        assert_eq!(
            phrases("Buses.FindBus", "Buses.BuyBusTicket"),
            ["buses find bus", "find bus"]
        );
        assert_eq!(
            phrases("get-HTTPResponse", "get_http_headers"),
            ["get http response", "http response"]
        );
        // Nothing shared: the whole name only.
        assert_eq!(
            phrases("TripadvisorSearchLocation", "SkyScrapperFlightSearch"),
            ["tripadvisor search location"]
        );
        assert_eq!(
            phrases("get-pull-request", "add-issue-comment"),
            ["get pull request"]
        );
        assert_eq!(
            phrases("search hotels", "search-flights"),
            ["search hotels"]
        );
        // One word is no name.
        assert!(phrases("weather", "weather-alerts").is_empty());
        assert!(phrases("", "x").is_empty());
    }

    fn named(description: &str, slugs: &[&str]) -> Vec<(String, String)> {
        let arguments = vec![("fromId".to_owned(), text(description))];
        named_slugs(&arguments, "Search-Flights", slugs.iter().copied())
            .into_iter()
            .map(|n| (n.slug, n.phrase.expect("a named helper has its phrase")))
            .collect()
    }

    #[test]
    fn a_tool_returns_an_argument_its_output_has_and_it_does_not_need() {
        let output = json!({ "type": "object", "properties": { "song_name": {}, "artist": {} } });
        let lookup = json!({ "type": "object", "properties": { "artist": {} } });
        let play = json!({ "properties": { "song_name": {} }, "required": ["song_name"] });
        assert!(returns(&lookup, &output, "song_name"));
        assert!(
            returns(&lookup, &output, "artist"),
            "an optional argument may be returned"
        );
        assert!(!returns(&play, &output, "song_name"), "it needs one itself");
        assert!(!returns(&lookup, &output, "album"), "not in its output");
        assert!(
            !returns(&lookup, &Value::Null, "song_name"),
            "no outputSchema"
        );
        assert_eq!(required_names(&play), ["song_name"]);
        assert!(required_names(&json!({ "required": "song_name" })).is_empty());
    }

    #[test]
    fn a_description_names_a_tool_by_consecutive_whole_words() {
        let cfb = "`fromId` can be retrieved from `api/v1/flights/searchDestination`\
                   (Search Flight Location) endpoint in `id` field";
        assert_eq!(
            named(cfb, &["Search-Flight-Location", "Search-Hotels"]),
            [(
                "Search-Flight-Location".to_owned(),
                "search flight location".to_owned()
            )]
        );
        // Words compare whole: a plural, a word's start or a longer word is another word.
        assert!(named("from search flight locations", &["Search-Flight-Location"]).is_empty());
        assert!(named("from search flight loc", &["Search-Flight-Location"]).is_empty());
        assert!(named("from research flight location", &["Search-Flight-Location"]).len() == 1);
        assert_eq!(
            named("from research flight location", &["Search-Flight-Location"])[0].1,
            "flight location"
        );
        // Consecutive: the words apart name nothing.
        assert!(named("search the flight location", &["Search-Flight-Location"]).len() == 1);
        assert!(named("search the flight, a location", &["Search-Flight-Location"]).is_empty());
        // Case and separators do not matter; camelCase splits.
        assert_eq!(
            named("see searchFlightLocation", &["search_flight_location"]).len(),
            1
        );
        // The last words name a tool only after a prefix the namer shares (not `search`).
        let arguments = vec![("number".to_owned(), text("issue or pull request number"))];
        assert!(named_slugs(&arguments, "add-issue-comment", ["get-pull-request"]).is_empty());
        // One word of a name names nothing.
        assert!(named("the weather", &["weather"]).is_empty());
        assert!(named("a location", &["Search-Flight-Location"]).is_empty());
        // A tool does not name itself.
        assert!(named("like search flights", &["Search-Flights"]).is_empty());
    }

    #[test]
    fn a_name_inside_a_longer_name_does_not_count_but_one_of_its_own_does() {
        let both = ["Search-Hotels", "Search-Hotels-By-Coordinates"];
        let description = "an id from search hotels by coordinates";
        assert_eq!(
            named(description, &both),
            [(
                "Search-Hotels-By-Coordinates".to_owned(),
                "search hotels by coordinates".to_owned()
            )]
        );
        // NESTFUL cfb's `hotel_id`: each tool is named at a place of its own.
        let cfb = "`hotel_id` can be retrieved from `api/v1/hotels/searchHotels`**(Search Hotels)** \
                   or `api/v1/hotels/searchHotelsByCoordinates`**(Search Hotels By Coordinates)** \
                   endpoint in **Hotels** collection.";
        assert_eq!(
            named(cfb, &both),
            [
                ("Search-Hotels".to_owned(), "search hotels".to_owned()),
                (
                    "Search-Hotels-By-Coordinates".to_owned(),
                    "search hotels by coordinates".to_owned()
                )
            ]
        );
        // Named by phrases of different lengths at different places: both count.
        assert_eq!(
            named(
                "from search flight location or search hotels",
                &["Search-Hotels", "Search-Flight-Location"]
            )
            .len(),
            2
        );
        // Equal phrases: both, in the order given.
        let arguments = vec![("id".to_owned(), text("search restaurants first"))];
        let found = named_slugs(
            &arguments,
            "Tripadvisor_Get_Restaurant_Details",
            [
                "TripadvisorSearchRestaurants",
                "Tripadvisor_Search_Restaurants",
            ],
        );
        let slugs: Vec<&str> = found.iter().map(|n| n.slug.as_str()).collect();
        assert_eq!(
            slugs,
            [
                "TripadvisorSearchRestaurants",
                "Tripadvisor_Search_Restaurants"
            ]
        );
    }

    #[test]
    fn only_required_arguments_with_a_description_count() {
        let schema = json!({
            "type": "object",
            "properties": {
                "fromId": { "type": "string", "description": "from Search Flight Location" },
                "toId": { "type": "string" },
                "hotel": { "type": "string", "description": "from Search Hotels" }
            },
            "required": ["fromId", "toId", "missing"]
        });
        let arguments = required_arguments(&schema);
        assert_eq!(arguments.len(), 1);
        assert_eq!(arguments[0].0, "fromId");
        assert_eq!(arguments[0].1, text("from search flight location"));
        assert!(required_arguments(&json!({ "type": "object" })).is_empty());
        assert!(required_arguments(&json!({ "required": "fromId" })).is_empty());
    }

    #[test]
    fn the_first_argument_naming_a_tool_is_the_one_given() {
        let arguments = vec![
            ("a".to_owned(), text("nothing here")),
            ("b".to_owned(), text("flight location")),
            ("c".to_owned(), text("search flight location")),
        ];
        let found = named_slugs(&arguments, "search-x", ["Search-Flight-Location"]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].argument, "c", "the longest phrase's argument");
    }
}
