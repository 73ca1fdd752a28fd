//! Sibling tools: the tools of a first pick's own API, named alike, that match the request a
//! little.
//!
//! The tools of one API often share the first word of their names: NESTFUL's
//! `Spotify_Scraper_Get_Artist_ID_By_Name` and `Spotify_Scraper_List_Artist_Albums_Singles`,
//! `WeatherAPI.com_Forecast_Weather_API` and `WeatherAPI.com_Realtime_Weather_Api`, sgd's
//! `Flights.ReserveRoundtripFlights` and `Flights.SearchRoundtripFlights`. A request that needs
//! one of them often needs a sibling: for "forecast and current weather for Paris" the forecast
//! tool ranks first, while "current weather" matches the real-time tool too little to rank
//! among the first picks (it is usually 6th to 40th), but it matches a little. So each of the
//! first [`ANCHORS`] picks (the anchors, taken before [`helpers`](super::helpers) run, which
//! then see the new order) lifts its siblings that match the request at all: a sibling scoring
//! `own` gets the ranking key `max(own, min(anchor − ε, own + BETA × anchor))` ([`key`],
//! [`BETA`] = 0.4; of several anchors, the highest key), which keeps it below its anchor, and
//! is placed by it (equal keys keep the earlier order); one already ranked above that key
//! stays. The key is its score as shown, and what `min_score` is compared with.
//!
//! **Family word.** The first word of a tool's slug, split as the index splits names
//! ([`words`]: at `_`, `-`, `.`, spaces and camelCase, folded): `WeatherAPI.com_…` →
//! `weather`, `Real-Time_Product_Search` → `real`, `Flights.ReserveRoundtripFlights` →
//! `flights`. A tool whose name begins with a verb ([`VERBS`]) has no family: `Search_Flights`
//! and `Search_Taxi` are two tools that search, not one API's (`Vehicle_Details` and
//! `Vehicle_Supplier_Ratings` are). The list holds the verbs tools' names begin with, those
//! of the measured data sets and the obvious others (`is`, `do`, `new`, `download`, `edit`,
//! …).
//!
//! **Which tools.** The other tools of the anchor's own bundle folder (another bundle's
//! `weather-…` is another API's) with the same family word, that score above 0 for the
//! request (a sibling that matches nothing is not brought), and only tools `pick` may return
//! anyway: usable, the version that stands for its slug, safe unless unsafe ones are allowed.
//!
//! **Measured** (`bm25`, NESTFUL's four data sets among 10,000 distractors, `python3
//! bench/quality.py --no-alone --methods bm25,bm25-no-siblings`): mean capped recall@5 0.739
//! → 0.776 after coverage (sgd 0.928 → 0.986, executable 0.475 → 0.603, glaive 0.904 →
//! 0.895, cfb 0.648 → 0.619); 0.727 → 0.757 before it, as a Python prototype on `pick`'s
//! scores gave (0.722 → 0.756; there, choosing [`BETA`] and [`ANCHORS`] on three data sets and
//! measuring on the fourth gave 0.752). Two anchors instead of three give the same mean
//! (0.776).
//!
//! **Cost.** The slugs of the anchors' bundles (an indexed read of those bundles alone, shared
//! with the helpers, [`Bundles`]) and the scores of the siblings ([`Matches::settle`]): never a
//! pass over the catalog, and the ranking is not read deeper.

use super::{Bundles, Matches};
use crate::index::text::words;
use crate::index::{self, Index, Registration};
use std::collections::HashMap;

/// How many of the first picks bring their siblings.
pub const ANCHORS: usize = 3;
/// The share of its anchor's key a sibling gains.
pub const BETA: f64 = 0.4;
/// How far below its anchor a sibling stays at most.
const EPSILON: f64 = 1e-9;

/// The words a tool's name may begin with that say what it does, not whose it is: a name
/// beginning with one of them has no family.
pub const VERBS: &[&str] = &[
    "add",
    "analyze",
    "book",
    "buy",
    "calculate",
    "cancel",
    "check",
    "close",
    "compare",
    "convert",
    "create",
    "delete",
    "do",
    "download",
    "edit",
    "estimate",
    "fetch",
    "find",
    "generate",
    "get",
    "is",
    "list",
    "lookup",
    "make",
    "new",
    "open",
    "order",
    "patch",
    "play",
    "post",
    "put",
    "query",
    "read",
    "remove",
    "reserve",
    "retrieve",
    "run",
    "schedule",
    "search",
    "send",
    "set",
    "show",
    "start",
    "stop",
    "track",
    "translate",
    "update",
    "upload",
    "validate",
    "view",
    "write",
];

/// The rows among `tools` (a bundle's, as (row, slug)) of the tool at `row`'s family, other
/// than its own slug: none when it has no family word.
pub fn kin(tools: &[(i64, String)], row: &index::ToolRow) -> Vec<i64> {
    let Some(word) = family_word(&row.slug) else {
        return Vec::new();
    };
    tools
        .iter()
        .filter(|(id, slug)| {
            *id != row.id && *slug != row.slug && family_word(slug).as_ref() == Some(&word)
        })
        .map(|(id, _)| *id)
        .collect()
}

/// The family word of the tool with slug `slug`: the first word of its name, unless that is
/// a verb ([`VERBS`]) or it has none.
pub fn family_word(slug: &str) -> Option<String> {
    words(slug)
        .into_iter()
        .next()
        .filter(|word| !VERBS.contains(&word.as_str()))
}

/// The ranking key of a sibling scoring `own` brought by an anchor whose key is `anchor`.
pub fn key(own: f64, anchor: f64) -> f64 {
    own.max((anchor - EPSILON).min(own + BETA * anchor))
}

/// Why a sibling was lifted.
#[derive(Debug, Clone, PartialEq)]
pub struct Kin {
    /// The index row of the anchor that lifted it.
    pub anchor: i64,
    /// The family word both names begin with.
    pub word: String,
    /// Its own score.
    pub own: f64,
    /// Its ranking key ([`key`]).
    pub key: f64,
}

/// Lift the siblings of the first [`ANCHORS`] of `ranked` (best first, each with its ranking
/// key) as the module comment says, none to a key under `min_key`, and cut the ranking to
/// `n`. Returns why each sibling now in the ranking above its own score is there, by index
/// row.
pub fn add(
    index: &Index,
    matches: &mut Matches,
    bundles: &mut Bundles<'_>,
    ranked: &mut Vec<(Registration, f64)>,
    n: usize,
    allow_unsafe: bool,
    min_key: f64,
) -> index::Result<HashMap<i64, Kin>> {
    let anchors: HashMap<i64, f64> = ranked
        .iter()
        .take(ANCHORS)
        .map(|(r, key)| (r.id, *key))
        .collect();
    let ids: Vec<i64> = ranked.iter().take(ANCHORS).map(|(r, _)| r.id).collect();
    let mut lifted: HashMap<i64, (Registration, Kin)> = HashMap::new();
    for row in index.rows_by_id(&ids, false)? {
        let (Some(anchor_key), Some(word)) = (anchors.get(&row.id), family_word(&row.slug)) else {
            continue;
        };
        let ids = kin(&bundles.slugs(index, &row.bundle_dir)?, &row);
        if ids.is_empty() {
            continue;
        }
        let siblings = bundles.candidates(index, &ids, allow_unsafe)?;
        let sibling_ids: Vec<i64> = siblings.iter().map(|r| r.id).collect();
        matches.settle(index, &sibling_ids)?;
        for sibling in siblings {
            let own = matches.score(sibling.id);
            if own <= 0.0 {
                continue;
            }
            let kin = Kin {
                anchor: row.id,
                word: word.clone(),
                own,
                key: key(own, *anchor_key),
            };
            if kin.key < min_key
                || lifted
                    .get(&sibling.id)
                    .is_some_and(|(_, k)| k.key >= kin.key)
            {
                continue;
            }
            lifted.insert(sibling.id, (sibling, kin));
        }
    }
    // Highest key first; equal keys in the scorer's order (own score, then registration).
    let mut lifted: Vec<(Registration, Kin)> = lifted.into_values().collect();
    lifted.sort_by(|(ra, a), (rb, b)| {
        b.key
            .total_cmp(&a.key)
            .then(b.own.total_cmp(&a.own))
            .then_with(|| ra.cmp(rb))
    });
    let mut kin = HashMap::new();
    for (sibling, why) in lifted {
        match ranked.iter().position(|(r, _)| r.id == sibling.id) {
            Some(p) if ranked[p].1 >= why.key => continue,
            Some(p) => {
                ranked.remove(p);
            }
            None => {}
        }
        // After every tool of a key as high: keys stay non-increasing.
        let at = ranked.partition_point(|(_, key)| *key >= why.key);
        ranked.insert(at, (sibling, why.key));
        kin.insert(ranked[at].0.id, why);
    }
    ranked.truncate(n);
    kin.retain(|id, _| ranked.iter().any(|(r, _)| r.id == *id));
    Ok(kin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_family_word_is_the_first_word_of_the_name_split_as_the_index_splits_it() {
        let word = |slug: &str| family_word(slug);
        assert_eq!(
            word("WeatherAPI.com_Forecast_Weather_API").as_deref(),
            Some("weather")
        );
        assert_eq!(
            word("Real-Time_Product_Search_Search").as_deref(),
            Some("real")
        );
        assert_eq!(
            word("Flights.ReserveRoundtripFlights").as_deref(),
            Some("flights")
        );
        assert_eq!(
            word("Spotify_Scraper_Get_Artist_ID_By_Name").as_deref(),
            Some("spotify")
        );
        assert_eq!(word("weatherapi-forecast").as_deref(), Some("weatherapi"));
        assert_eq!(word("Vehicle_Details").as_deref(), Some("vehicle"));
        assert_eq!(word("").as_deref(), None);
        assert_eq!(word("--").as_deref(), None);
    }

    #[test]
    fn a_name_beginning_with_a_verb_has_no_family() {
        for slug in [
            "Search_Flights",
            "Search_Taxi",
            "get_x",
            "getWeather",
            "Buy-Bus-Ticket",
            "list-events",
            "reserve_hotel",
            "isValid",
            "download-file",
        ] {
            assert_eq!(family_word(slug), None, "{slug}");
        }
        // A verb counts as a whole first word only.
        assert_eq!(family_word("getty-images").as_deref(), Some("getty"));
        assert_eq!(family_word("weather-get").as_deref(), Some("weather"));
        // The list is sorted and folded, as `words` gives words.
        assert!(VERBS.windows(2).all(|w| w[0] < w[1]));
        assert!(VERBS.iter().all(|v| words(v) == [*v]));
    }

    #[test]
    fn a_sibling_gains_a_share_of_its_anchor_and_stays_below_it() {
        // own + 0.4 × anchor when that is below the anchor.
        assert!((key(0.1, 0.5) - 0.3).abs() < 1e-12);
        // Never above the anchor: just below it.
        let k = key(0.6, 0.9);
        assert!(k < 0.9 && k > 0.9 - 1e-6, "{k}");
        // Never below its own score: one scoring above its anchor keeps its own.
        assert_eq!(key(0.95, 0.9), 0.95);
        assert_eq!(key(0.9, 0.9), 0.9);
        // Higher anchors lift more; higher own scores stay higher.
        assert!(key(0.1, 0.6) > key(0.1, 0.3));
        assert!(key(0.2, 0.6) > key(0.1, 0.6));
    }
}
